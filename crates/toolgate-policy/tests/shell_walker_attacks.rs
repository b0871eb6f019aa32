//! Attacks on the walker, one test per class: builtins that evaluate code,
//! names redefined in the same command, working-directory and path forms,
//! secrets in expansions and `/proc/*/environ`, and inputs that would crash or
//! stall the gate. Each test holds several instances of its class.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::time::Duration;

use fixture::{Fixture, assert_allowed, assert_asked, default_decision, max_risk, summary};
use toolgate_core::{Effect, Risk};
use toolgate_policy::shell::{TOO_COMPLEX, analyze, analyze_with_budget};

fn assert_opaque(fx: &Fixture, command: &str) {
    let parts = assert_asked(fx, command);
    assert!(
        parts.iter().any(|p| p.opaque),
        "{command:?} not opaque:\n  {}",
        summary(&parts)
    );
}

fn assert_credential(fx: &Fixture, command: &str) {
    let parts = fx.analyze(command);
    fixture::assert_denied_credential(command, &parts);
}

#[test]
fn builtin_array_subscripts_run_code() {
    let fx = Fixture::new();
    for command in [
        "printf -v 'a[$(touch /tmp/p)]' x",
        "printf -v \"a[\\`id\\`]\" x",
        "read 'a[$(id)]' <<<x",
        "read -r -a 'a[$(id)]' <<<x",
        "unset 'a[$(id)]'",
        "unset -v 'x[`id`]'",
        "declare 'a[$(id)]=1'",
        "export 'a[$(id)]=1'",
        "local 'a[$(id)]'",
        "getopts ab 'o[$(id)]'",
        "mapfile 'a[$(id)]' < data.txt",
        "wait -p 'a[$(id)]'",
        "test -v 'a[$(id)]'",
        "[ -v 'a[$(id)]' ]",
        "[[ -v 'a[$(id)]' ]]",
        "[[ 1 -eq 'a[$(id)]' ]]",
        "[[ 'a[$(id)]' -lt 2 ]]",
        "read $NAME <<<x",
        "printf -v \"$NAME\" x",
    ] {
        assert_opaque(&fx, command);
    }
}

#[test]
fn arithmetic_on_unknown_values_runs_code() {
    let fx = Fixture::new();
    for command in [
        "echo $((x))",
        "x='a[$(id)]'; echo $((x))",
        "echo $(( $X + 1 ))",
        "(( y ))",
        "(( a[$i] ))",
        "let x=y",
        "let 'a[$(id)]'",
        "declare -i n=$V",
        "declare -i n='a[`id`]'",
        "echo ${arr[$i]}",
        "echo $[x]",
        "for ((i=n; i<3; i++)); do :; done",
        "while read -r n; do echo $((n + 1)); done < data.txt",
        "[[ $n -gt 3 ]]",
    ] {
        assert_opaque(&fx, command);
    }
    // Values the line set to numbers are safe.
    for command in [
        "x=1; echo $((x + 2))",
        "for ((i=0; i<3; i++)); do echo $i; done",
        "i=0; i=$((i + 1)); echo $i",
        "echo $((1 + 2))",
        "(( 3 > 2 ))",
        "for n in 1 2 3; do echo $((n * 2)); done",
        "[[ $# -eq 0 ]]",
    ] {
        assert_allowed(&fx, command);
    }
    // `let` is asked as a command, but what it evaluates is known.
    let parts = fx.analyze("let n=1+2");
    assert!(!parts.iter().any(|p| p.opaque), "{}", summary(&parts));
}

#[test]
fn builtins_that_take_code_are_judged_for_it() {
    let fx = Fixture::new();
    for command in [
        "compgen -C 'touch /tmp/p' x",
        "compgen -F f x",
        "complete -C 'touch /tmp/p' ls",
        "bind -x '\"\\C-a\": id'",
        "mapfile -C 'touch /tmp/p' -c 1 a < data.txt",
        "readarray -C id a < data.txt",
        "enable -f ./evil.so evil",
        "fc -s",
        "eval ls",
        "source build.sh",
        ". build.sh",
        "exec \"$X\"",
        "echo ${x@P}",
        "echo \"${PS1@P}\"",
        "alias ls='rm -rf src'",
    ] {
        assert_opaque(&fx, command);
    }
    // `trap` code is the code it runs.
    for command in [
        "trap -- 'rm -rf src' EXIT",
        "trap 'rm -rf src' EXIT",
        "trap -- \"git push --force\" INT",
    ] {
        let parts = assert_asked(&fx, command);
        assert_eq!(
            max_risk(&parts),
            Risk::Destructive,
            "{command:?}:\n  {}",
            summary(&parts)
        );
    }
    assert_opaque(&fx, "trap -- \"$CODE\" EXIT");
    assert_credential(&fx, "trap -- 'cat .env' EXIT");
}

#[test]
fn names_redefined_in_the_command_are_not_the_system_command() {
    let fx = Fixture::new();
    for command in [
        "hash -p ./build.sh ls; ls",
        "hash -p /tmp/x cat; cat README.md",
        "ls() { rm -rf src; }; ls",
        "function cat { id; }; cat README.md",
        "alias ls='rm -rf src'\nls",
        "git() { id; }; git status",
        "bash -c 'cat() { id; }'; cat README.md",
    ] {
        assert_asked(&fx, command);
    }
}

#[test]
fn directory_forms_fold_to_where_bash_goes() {
    let fx = Fixture::new();
    // `~+` is the working directory: `..` from it leaves the location.
    for command in [
        "cat ~+/../outside/file.txt",
        "ls ~+/..",
        "cd src && cat ~+/../../outside/file.txt",
        "cat ~-/x",
        "cat ~root/.bashrc",
        "cat ~nobody/x",
        "cd - && cat data.txt",
        "cd src; cd -; cd -; cat ../../outside/file.txt",
        "CDPATH=/tmp; cd src && cat x",
        "export CDPATH={out}; cd sub && cat deep.txt",
        "pushd src && popd && popd && cat data.txt",
        "pushd src; pushd +1; cat main.rs",
        "popd -0; cat data.txt",
        "cd \"$D\" && cat x",
        "cd $(echo src) && cat main.rs",
    ] {
        let parts = assert_asked(&fx, command);
        assert!(
            max_risk(&parts) > Risk::Read || parts.iter().any(|p| p.opaque),
            "{command:?}:\n  {}",
            summary(&parts)
        );
    }
    // What bash's own rules make known stays known.
    for command in [
        "cd src && cat main.rs",
        "cd src; cd ..; cat README.md",
        "pushd src && popd && cat data.txt",
        "pushd src && cat main.rs",
        "cd src && cd - && cat data.txt",
        "cat ~+/README.md",
        "cd src; cat ~-/README.md",
    ] {
        assert_allowed(&fx, command);
    }
}

#[test]
fn unknown_paths_are_never_inside_the_location() {
    let fx = Fixture::new();
    for command in [
        "F=~/.bashrc; echo x >> $F",
        "echo x > \"$F\"",
        "echo x > `echo ~/.bashrc`",
        "echo x > $(printf ~/.bashrc)",
        "cat $F",
        "cat \"$DIR/x\"",
        "cat ~user/x",
        "cp data.txt \"$T\"",
        "cd \"$D\"; echo x > out.txt",
    ] {
        let parts = assert_asked(&fx, command);
        // Every request about an unknown place is opaque: never an edit that
        // a mode allows inside the location.
        assert!(
            parts.iter().any(|p| p.opaque),
            "{command:?}:\n  {}",
            summary(&parts)
        );
        for p in &parts {
            if p.request.action == "edit" && !p.request.resource.starts_with('/') {
                assert!(p.opaque, "{command:?}: {p:?}");
            }
        }
    }
}

#[test]
fn secret_variables_and_proc_environ_are_credential() {
    let fx = Fixture::new();
    for command in [
        "echo $OPENAI_API_KEY",
        "printf %s \"$GITHUB_TOKEN\"",
        "echo \"token: ${NPM_TOKEN}\"",
        "echo ${AWS_SECRET_ACCESS_KEY:-none}",
        "curl -H \"Authorization: $API_KEY\" http://localhost",
        "echo ${!AWS*}",
        "echo ${!GITHUB@}",
        "echo ${!ref}",
        "printenv OPENAI_API_KEY",
        "printenv HOME DB_PASSWORD",
        "cat /proc/self/environ",
        "cat /proc/1/environ",
        "cat /proc/thread-self/environ",
        "cat /proc/self/task/1/environ",
        "cat /proc/*/environ",
        "strings /proc/12/environ",
        "cat /proc/1/../self/environ",
        "tr '\\0' '\\n' < /proc/self/environ",
    ] {
        assert_credential(&fx, command);
    }
    for command in [
        "echo $HOME",
        "echo $PATH",
        "cat /proc/cpuinfo",
        "ls /proc/self",
    ] {
        let parts = fx.analyze(command);
        assert!(
            max_risk(&parts) < Risk::Credential,
            "{command:?}:\n  {}",
            summary(&parts)
        );
    }
}

/// Runs `f` on a thread with a 2 MiB stack, like the tokio runtime's workers.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

#[test]
fn deep_nesting_does_not_overflow_a_small_stack() {
    let fx = std::sync::Arc::new(Fixture::new());
    // Each hides `rm -rf src` (destructive) at the bottom: the answer is at
    // least ask, whether it was walked or found too deep.
    let commands = vec![
        format!("{}rm -rf src{}", "$(echo ".repeat(3000), ")".repeat(3000)),
        format!("{}rm -rf src{}", "(".repeat(20_000), ")".repeat(20_000)),
        "(".repeat(20_000),
        format!(
            "echo {}$(rm -rf src){}",
            "${a:-".repeat(5000),
            "}".repeat(5000)
        ),
        format!("{}rm -rf src", "! ".repeat(5000)),
        format!(
            "echo \"{}rm -rf src{}\"",
            "$(echo \"".repeat(2000),
            "\")".repeat(2000)
        ),
        format!(
            "echo $(({}$(rm -rf src){}))",
            "(".repeat(5000),
            ")".repeat(5000)
        ),
        format!(
            "[[ {}$(rm -rf src){} ]]",
            "( ".repeat(5000),
            " )".repeat(5000)
        ),
        "ls && ".repeat(20_000) + "rm -rf src",
        "ls | ".repeat(10_000) + "rm -rf src",
        "a | b && ".repeat(5000) + "rm -rf src",
        format!("{}rm -rf src", "cat <<E && ".repeat(3000)),
        format!("{}rm -rf src{}", "{ ".repeat(5000), "; }".repeat(5000)),
        format!(
            "{}rm -rf src{}",
            "if true; then ".repeat(3000),
            "; fi".repeat(3000)
        ),
        format!("{}rm -rf src{}", "bash -c \"".repeat(50), "\"".repeat(50)),
    ];
    for command in commands {
        let fx = fx.clone();
        let parts = on_small_stack(move || fx.analyze(&command));
        assert!(!parts.is_empty());
        assert!(
            default_decision(&parts) >= Effect::Ask,
            "{}",
            summary(&parts)
        );
    }
}

#[test]
fn the_cpu_budget_ends_in_one_opaque_request() {
    let fx = Fixture::new();
    let command = "ls && ".repeat(5000) + "rm -rf src";
    let parts = analyze_with_budget(&command, &fx.ctx(""), Duration::ZERO);
    assert_eq!(parts.len(), 1, "{}", summary(&parts));
    assert!(parts[0].opaque);
    assert!(parts[0].reason.contains(TOO_COMPLEX), "{}", parts[0].reason);
    assert!(default_decision(&parts) >= Effect::Ask);
    // With the normal budget the same command is analysed.
    let parts = analyze(&command, &fx.ctx(""));
    assert!(parts.iter().any(|p| p.request.risk == Risk::Destructive));
}

#[test]
fn repeated_recursive_reads_share_one_walk() {
    let fx = Fixture::new();
    // Each repeat would walk the workspace again; the walk is shared, so the
    // repeats cost one walk and each still reports what it reads.
    let command = vec!["grep -r x ."; 300].join("; ");
    let parts = analyze(&command, &fx.ctx(""));
    assert!(
        parts
            .iter()
            .any(|p| p.request.risk == Risk::Credential && p.request.resource.ends_with(".env")),
        "{}",
        summary(&parts)
    );
    assert_eq!(default_decision(&parts), Effect::Deny);
    // 9,000 of them: denied, or too complex for the budget (asked); never
    // allowed, never a stall.
    let command = vec!["grep -r x ."; 9000].join("; ");
    let parts = analyze(&command, &fx.ctx(""));
    assert!(
        default_decision(&parts) >= Effect::Ask,
        "{}",
        summary(&parts)
    );
}

#[test]
fn include_globs_select_dotfiles_as_grep_and_rg_do() {
    let fx = Fixture::new();
    for command in [
        "grep -r --include=*.local TOKEN .",
        "grep -r --include='*.production' TOKEN .",
        "grep -rn --include='?env' TOKEN .",
        "grep -rn --include='[.]env' TOKEN config",
        "rg --hidden -g '*.local' TOKEN",
    ] {
        assert_credential(&fx, command);
    }
    for command in ["grep -rn --include='*.rs' fn src", "rg -g '*.rs' fn"] {
        assert_allowed(&fx, command);
    }
}

/// A credential stored in git's objects is printed by any command that takes
/// `REV:PATH`, not only by `git show`: the word names the credential whatever
/// the command's spec says of its operands.
#[test]
fn revision_path_of_a_credential_through_any_git_command() {
    let fx = Fixture::new();
    for command in [
        "git cat-file -p HEAD:.env",
        "git cat-file blob HEAD:.env",
        "git cat-file -p :.env",
        "git cat-file -p HEAD:config/.env.production",
        "git cat-file -p main:id_rsa",
        "git cat-file -p HEAD:.npmrc",
        "git --no-pager cat-file -p HEAD:.git-credentials",
        "git show HEAD:.env",
        "git diff HEAD:.env HEAD~1:.env",
    ] {
        assert_credential(&fx, command);
    }
    for benign in [
        "git cat-file -p HEAD",
        "git cat-file -p HEAD:README.md",
        "git show HEAD:src/main.rs",
    ] {
        assert_allowed(&fx, benign);
    }
}

/// Every object of the repository, or object names read from stdin, may be
/// a stored credential: not proven read.
#[test]
fn cat_file_batch_prints_objects_it_was_not_given() {
    let fx = Fixture::new();
    for command in [
        "git cat-file --batch-all-objects --batch",
        "echo HEAD:.env | git cat-file --batch",
        "git cat-file --batch-command < list",
        "git cat-file --batch-check=%(objectname)",
    ] {
        assert_asked(&fx, command);
    }
}

/// A glob over a directory that can be listed is judged by what it matches
/// there (with the shell's leading-dot rule), not by every name it could
/// match: `ls *` beside a `.env` reads no secret.
#[test]
fn a_glob_is_judged_by_its_matches_when_the_directory_can_be_listed() {
    let fx = Fixture::new();
    for benign in [
        "ls notes/*",
        "cat notes/*",
        "wc -l src/*",
        "head -n 3 docs/*",
        "cat config/*",
        "ls -la src/*",
    ] {
        assert_allowed(&fx, benign);
    }
    // Dotfiles with secrets that `*` does not match.
    std::fs::create_dir_all(fx.ws.join("app")).unwrap();
    std::fs::write(fx.ws.join("app/.env"), "TOKEN=x").unwrap();
    std::fs::write(fx.ws.join("app/.npmrc"), "//r/:_authToken=x").unwrap();
    std::fs::write(fx.ws.join("app/main.py"), "print(1)").unwrap();
    for glob in ["ls app/*", "cat app/*", "wc -l app/*", "cd app && cat *"] {
        assert_allowed(&fx, glob);
    }
    for secret in ["cat app/.*", "cd app && cat .*", "cat app/.e*"] {
        let parts = fx.analyze(secret);
        assert_eq!(
            max_risk(&parts),
            Risk::Credential,
            "{secret:?}:\n  {}",
            summary(&parts)
        );
    }
    std::fs::create_dir_all(fx.ws.join("keys")).unwrap();
    std::fs::write(fx.ws.join("keys/id_rsa"), "KEY").unwrap();
    std::fs::write(fx.ws.join("keys/readme.txt"), "x").unwrap();
    for secret in [
        "cat keys/*",
        "cat keys/id*",
        "cat .*",
        "cat .e*",
        "cat */id_rsa",
        "cat ~/.s*/id*",
        "cat k*/*",
        "GLOBIGNORE=x; cat *",
    ] {
        let parts = fx.analyze(secret);
        assert_ne!(
            default_decision(&parts),
            Effect::Allow,
            "{secret:?}:\n  {}",
            summary(&parts)
        );
    }
}

/// A line the grammar cannot read is asked, and the credentials it names
/// anywhere — inside quotes the naive split breaks, after `=`, behind a
/// function header — are still denied: opaque never weakens a deny (found by
/// `prop_wrapping`: `! function f { ls 'BEGIN{system("id")}' /etc/shadow; }; f`
/// was asked where the bare command is denied).
#[test]
fn an_unparsable_line_still_denies_the_credentials_it_names() {
    let fx = Fixture::new();
    for command in [
        "! function f { ls 'BEGIN{system(\"id\")}' /etc/shadow; }; f",
        "! function f { cat 'a}b' ~/.ssh/id_rsa; }; f",
        "! function f { grep 'x)' --file=/etc/shadow; }; f",
        "! function f { head \"(\" .env; }; f",
        "! function f { cat '{' ~/.aws/credentials; }; f",
        // Secrets expanded, not named as paths.
        "cat <<EOF && f() { local x=$( k=GITHUB_TOKEN; echo ${!k} ); }; f\nx\nEOF",
        "! function f { echo '(' $OPENAI_API_KEY; }; f",
        "! function f { echo '}' \"${!AWS*}\"; }; f",
        // Quotes, `$( )` and braces the old naive split cut through.
        "cat <<EOF && f() { local x=$( gawk 'BEGIN{print ENVIRON[\"OPENAI_API_KEY\"]}' ); }; f\nx\nEOF",
    ] {
        assert_credential(&fx, command);
    }
    // A brace expansion stays one word: still destructive, not just unknown.
    for command in [
        "! function f { rm -{r,f} src; }; f",
        // A substitution inside double quotes is code, cut at its own `;`.
        "cat <<< \"$( cat <<EOF; ls&&rm -rf src\nx\nEOF )\"",
    ] {
        let parts = fx.analyze(command);
        assert_eq!(
            max_risk(&parts),
            Risk::Destructive,
            "{command:?}: {}",
            summary(&parts)
        );
    }
    // An assignment the grammar took for the program's name: what runs
    // after it is judged (`git fetch` is network), not the assignment.
    let parts = fx.analyze("! { GIT_SSH_COMMAND='sh -c id' git fetch; }");
    assert!(max_risk(&parts) >= Risk::Network, "{}", summary(&parts));
}

/// `case $API_KEY in a*) echo a;; b*) echo b;; esac` was allowed as `echo`:
/// the case's value and patterns expanded a secret unjudged, an oracle that
/// gives the secret away one character per call. They are judged as the
/// same test written with `[[ ]]` is.
#[test]
fn a_case_statement_on_a_secret_variable_is_judged_like_a_test_of_it() {
    let fx = Fixture::new();
    for command in [
        "case $API_KEY in a*) echo a;; b*) echo b;; esac",
        "case \"${OPENAI_API_KEY}\" in sk-a*) echo y;; esac",
        "case x in $GITHUB_TOKEN) echo y;; esac",
        "case x in y) ;; \"${NPM_TOKEN:0:1}\") echo y;; esac",
        "case ${!AWS*} in *) echo y;; esac",
    ] {
        assert_credential(&fx, command);
    }
    // A case on a harmless value stays a read.
    let parts = fx.analyze("case $HOME in /root) echo r;; *) echo u;; esac");
    assert!(max_risk(&parts) < Risk::Credential, "{}", summary(&parts));
}

/// `cat <<EOF` with `$API_KEY` in its body was allowed as `cat`: the body's
/// expansions reach the program's input (and the model) unjudged. Each is a
/// credential read, or, where the grammar leaves it as text (`<<-` with a
/// tab before it), not allowed. A quoted delimiter expands nothing and stays
/// a read.
#[test]
fn a_heredoc_body_expanding_a_secret_variable_is_judged() {
    let fx = Fixture::new();
    for command in [
        "cat <<EOF\n$API_KEY\nEOF",
        "cat <<EOF\ntoken: ${OPENAI_API_KEY}\nEOF",
        "cat <<-EOF\n\t$GITHUB_TOKEN\n\tEOF",
        "cat <<-EOF\n$GITHUB_TOKEN\nEOF",
        "cat <<-EOF\n\tx $GITHUB_TOKEN\n\tEOF",
        "tee /dev/null <<X\n${NPM_TOKEN:0:4}\nX",
        "cat <<EOF\n${!AWS*}\nEOF",
    ] {
        let parts = fx.analyze(command);
        assert!(
            max_risk(&parts) >= Risk::Credential || default_decision(&parts) != Effect::Allow,
            "{command:?}: {}",
            summary(&parts)
        );
    }
    for command in ["cat <<'EOF'\n$API_KEY\nEOF", "cat <<EOF\n$HOME\nEOF"] {
        let parts = fx.analyze(command);
        assert!(
            max_risk(&parts) < Risk::Credential,
            "{command:?}: {}",
            summary(&parts)
        );
    }
}

/// `echo ${x:-$API_KEY}` was allowed: a secret expanded inside another
/// expansion's operand (a default, an alternative, a pattern) was dropped
/// with the operand. It prints the secret whenever `x` is unset.
#[test]
fn a_secret_variable_inside_another_expansions_operand_is_judged() {
    let fx = Fixture::new();
    for command in [
        "echo ${x:-$API_KEY}",
        "echo ${HOME:+$API_KEY}",
        "echo \"${x-${OPENAI_API_KEY}}\"",
        "echo ${HOME/#\\//$GITHUB_TOKEN}",
        "echo ${x:=${NPM_TOKEN:0:4}}",
        "echo $((16#${API_KEY:0:1}))",
    ] {
        assert_credential(&fx, command);
    }
    let parts = fx.analyze("echo ${x:-$HOME}");
    assert!(max_risk(&parts) < Risk::Credential, "{}", summary(&parts));
}
