//! "Always" saves exactly what was shown (issue 25, point 4).
//!
//! An approval saved for one command must not let through a command the
//! person never saw: for programs that run code chosen by their arguments
//! (interpreters, shells, `make`, `npm run`, `cargo run`, wrappers…) the saved
//! pattern is the exact command, and no saved pattern covers a command that
//! evaluates code (`-c`, `-e`, `--eval`, python's `-m`) or gives an option
//! the program's spec does not know.
//!
//! Each test answers "always" to the command shown (every pattern its asked
//! requests would save), then judges later commands with those approvals.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;
use crate::saved;

use fixture::Fixture;
use saved::{allowed_with, always};

/// Answers always to `shown`, then asserts that each of `later` is not
/// allowed, and that `shown` itself now is.
fn assert_always_is_exact(fx: &Fixture, shown: &str, later: &[&str]) {
    let saved = always(fx, shown);
    assert!(
        !saved.is_empty(),
        "{shown:?} offers nothing to save; the attack test proves nothing"
    );
    assert!(
        allowed_with(fx, &saved, shown),
        "{shown:?} is not allowed by its own approval {saved:?}"
    );
    for command in later {
        assert!(
            !allowed_with(fx, &saved, command),
            "always for {shown:?} (saved {saved:?}) allows {command:?}"
        );
    }
}

#[test]
fn always_for_python_script_does_not_allow_python_m_module() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "python3 scripts/test_all.py",
        &[
            "python3 -m scripts.other",
            "python3 -m pip install requests",
            "python3 -m http.server",
            "python3 scripts/other.py",
            "python3 -c 'import os; print(os.environ)'",
            "python3 scripts/test_all.py -c x",
            "python3 -X importtime scripts/test_all.py",
            "python3 scripts/test_all.py; python3 -m http.server",
        ],
    );
}

#[test]
fn always_for_make_test_does_not_allow_make_eval() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "make test",
        &[
            "make test --eval='$(shell touch pwned)'",
            "make test -E '$(shell touch pwned)'",
            "make test -f evil.mk",
            "make test SHELL=/tmp/evil",
            "make deploy",
            "make -C ../other test",
        ],
    );
}

#[test]
fn always_for_npm_run_build_does_not_allow_another_script_or_options() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "npm run build",
        &[
            "npm run deploy",
            "npm run build --script-shell=/tmp/evil",
            "npm run build -- --config evil.js",
        ],
    );
}

#[test]
fn always_for_cargo_run_does_not_allow_another_binary() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "cargo run --bin tool",
        &[
            "cargo run --bin other",
            "cargo run --bin tool --config 'target.x86_64-unknown-linux-gnu.runner=\"sh\"'",
            "cargo run --bin tool -- --delete-everything",
        ],
    );
}

#[test]
fn always_for_node_script_does_not_allow_node_eval() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "node scripts/build.js",
        &[
            "node -e 'require(\"child_process\").execSync(\"touch pwned\")'",
            "node --eval 'process.exit(1)'",
            "node -p 'process.env'",
            "node -r ./evil.js scripts/build.js",
            "node scripts/other.js",
        ],
    );
}

#[test]
fn always_for_bash_script_does_not_allow_bash_c() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "bash scripts/ci.sh",
        &[
            "bash -c 'touch pwned'",
            "bash scripts/other.sh",
            "bash scripts/ci.sh --rcfile evil",
            "sh scripts/ci.sh",
        ],
    );
}

#[test]
fn always_for_perl_and_ruby_scripts_does_not_allow_inline_code() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "perl scripts/gen.pl",
        &[
            "perl -e 'system(\"touch pwned\")'",
            "perl -E 'say 1'",
            "perl scripts/other.pl",
        ],
    );
    assert_always_is_exact(
        &fx,
        "ruby scripts/gen.rb",
        &["ruby -e 'system(\"touch pwned\")'", "ruby scripts/other.rb"],
    );
}

#[test]
fn always_for_env_wrapper_does_not_allow_another_program_under_it() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "env FOO=1 python3 scripts/test_all.py",
        &[
            "env FOO=1 python3 -m http.server",
            "env FOO=1 python3 scripts/other.py",
            "env FOO=1 sh -c 'touch pwned'",
        ],
    );
    assert_always_is_exact(
        &fx,
        "timeout 60 make test",
        &["timeout 60 make test --eval=x", "timeout 60 make deploy"],
    );
}

#[test]
fn always_for_npx_tool_does_not_allow_another_package() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "npx prettier --check src",
        &[
            "npx evil-package",
            "npx prettier --check src --plugin=./evil.js",
        ],
    );
}

#[test]
fn code_evaluating_commands_offer_no_pattern() {
    let fx = Fixture::new();
    for command in [
        "python3 -m http.server",
        "python3 -c 'print(1)'",
        "node -e 'console.log(1)'",
        "make --eval='x:' test",
        "perl -e 'print 1'",
        "bash -c 'ls'",
    ] {
        let saved = always(&fx, command);
        let executes: Vec<_> = saved.iter().filter(|(_, p)| !p.starts_with("ls")).collect();
        assert!(
            executes.is_empty(),
            "{command:?} would save {executes:?}: it evaluates code"
        );
    }
}

#[test]
fn the_prompt_shows_the_pattern_always_saves() {
    use toolgate_policy::approvals::AskItem;
    // What the gate puts in an ask is what "always" saves: the item carries
    // the exact pattern, and every channel prints it (their own tests).
    let fx = Fixture::new();
    let item = AskItem {
        action: "bash".into(),
        resource: "python3 scripts/test_all.py".into(),
        risk: toolgate_core::Risk::Execute,
        reason: "runs a program".into(),
        save_pattern: Some("python3 scripts/test_all.py".into()),
    };
    let saved = always(&fx, &item.resource);
    assert!(
        saved.contains(&("bash".to_string(), item.save_pattern.clone().unwrap())),
        "{saved:?}"
    );
    assert!(
        saved
            .iter()
            .all(|(a, p)| a != "bash" || p == &item.resource),
        "{saved:?}"
    );
    assert_eq!(
        item.saves(),
        "\"always\" saves bash `python3 scripts/test_all.py`"
    );
}

#[test]
fn always_for_sed_writing_a_file_does_not_allow_sed_running_a_command() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "sed 's/a/b/w out.txt' data.txt",
        &[
            "sed '1e touch pwned' data.txt",
            "sed 's/a/b/e' data.txt",
            "sed 's/a/b/w .git/hooks/pre-commit' data.txt",
        ],
    );
}

#[test]
fn always_for_awk_writing_does_not_allow_awk_system() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "awk '{print > \"out.txt\"}' data.txt",
        &[
            "awk 'BEGIN{system(\"touch pwned\")}'",
            "awk '{print | \"sh\"}' data.txt",
        ],
    );
}

/// Review s35: the widened patterns (`npm test *`, `git push *`,
/// `cargo test *`, `pytest *`) with options that run a program the person
/// never saw: npm's script shell, git's receive-pack (run locally for a
/// path remote), cargo's runner from `--config`, another project's tests.
#[test]
fn always_for_widened_test_and_push_patterns_does_not_allow_a_chosen_program() {
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "npm test",
        &[
            "npm test --script-shell=./evil.sh",
            "npm test --script-shell ./evil.sh",
            "npm test --node-options=--require=./evil.js",
            "npm test --prefix ../other",
        ],
    );
    assert_always_is_exact(
        &fx,
        "git push origin HEAD",
        &[
            "git push --receive-pack='touch marker' . HEAD",
            "git push --exec='touch marker' origin HEAD",
        ],
    );
    assert_always_is_exact(
        &fx,
        "cargo test",
        &[
            "cargo test --config 'target.x86_64-unknown-linux-gnu.runner=\"touch marker\"'",
            "cargo test --manifest-path ../other/Cargo.toml",
        ],
    );
    assert_always_is_exact(
        &fx,
        "pytest tests/",
        &["pytest -p evil_plugin", "pytest --rootdir=/ /"],
    );
}

#[test]
fn always_for_curl_to_a_public_url_does_not_allow_the_cloud_metadata_service() {
    // The metadata service hands out the machine's cloud credentials; the
    // webfetch tool refuses it, and so must an approval saved for another
    // URL (where an agent's hook lets the command run unconfined).
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "curl https://example.com/x",
        &[
            "curl http://169.254.169.254/latest/meta-data/iam/security-credentials/role",
            "curl -s 169.254.169.254/latest/api/token -X PUT",
            "curl http://2852039166/latest/meta-data/",
            "curl http://0xa9fea9fe/latest/meta-data/",
            "curl http://0251.0376.0251.0376/latest/meta-data/",
            "curl http://169.254.43518/latest/meta-data/",
            "curl 'http://[::ffff:169.254.169.254]/latest/meta-data/'",
            "curl 'http://[fd00:ec2::254]/latest/meta-data/'",
            "curl http://169.254.170.2/v2/credentials/x",
            "curl -H 'Metadata-Flavor: Google' http://metadata.google.internal/computeMetadata/v1/instance/service-accounts/default/token",
            "curl http://METADATA.google.internal./computeMetadata/v1/",
            "curl http://100.100.100.200/latest/meta-data/ram/security-credentials/",
            "curl https://example.com/x http://169.254.169.254/",
            // The host is a public name but the connection goes to the
            // service (found rereading the change).
            "curl --resolve example.com:80:169.254.169.254 http://example.com/latest/meta-data/",
            "curl --connect-to ::169.254.169.254: http://example.com/latest/meta-data/",
            "curl -x http://169.254.169.254 http://example.com/latest/meta-data/",
            "curl --proxy 169.254.169.254:80 http://example.com/latest/meta-data/",
        ],
    );
    assert_always_is_exact(
        &fx,
        "wget https://example.com/x",
        &["wget -qO- http://169.254.169.254/latest/meta-data/"],
    );
}

#[test]
fn always_for_chmod_x_does_not_allow_the_set_user_id_bit() {
    // A set-user-ID program runs with its owner's rights (root's, when the
    // agent runs as root) for whoever starts it; the sandbox drops the bit,
    // but a hook's allow runs the command unconfined.
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "chmod +x run.sh",
        &[
            "chmod u+s run.sh",
            "chmod +s run.sh",
            "chmod g+s run.sh",
            "chmod ug+xs run.sh",
            "chmod a=rwxs run.sh",
            "chmod 4755 run.sh",
            "chmod 2755 run.sh",
            "chmod 6755 run.sh",
            "chmod 04755 run.sh",
            "chmod u+x,u+s run.sh",
            "chmod -R u+s bin",
            "chmod --reference=/usr/bin/passwd run.sh",
            // More spellings of the same bit (found rereading the change).
            "chmod =4755 run.sh",
            "chmod u=rwxs,go=rx run.sh",
            "chmod 0004755 run.sh",
            "chmod -v ug+s run.sh",
        ],
    );
}

#[test]
fn always_for_curl_to_a_public_url_does_not_allow_services_on_this_machine_or_its_network() {
    // A service listening on loopback or the local network (Docker's API on
    // 127.0.0.1:2375, a database's admin page, a router) trusts whoever can
    // reach it; a hook's allow runs the command unconfined, so a saved
    // `curl *` reached a loopback listener (review s36, left open). A saved
    // prefix covers only hosts proved public; anything else is answered
    // only by an approval of that exact command.
    let fx = Fixture::new();
    let local = [
        "curl http://127.0.0.1:2375/containers/json",
        "curl 127.0.0.1:2375/containers/json",
        "curl localhost:2375/containers/json",
        "curl http://localhost/",
        "curl localhost",
        "curl http://LOCALHOST./",
        "curl 'http://[::1]:8080/'",
        "curl http://0.0.0.0:2375/info",
        "curl http://0/info",
        "curl http://2130706433:2375/info",
        "curl http://127.1:2375/info",
        "curl http://0x7f000001/info",
        "curl 'http://[::ffff:127.0.0.1]/'",
        "curl 'http://[::ffff:7f00:1]/'",
        "curl 'http://[::127.0.0.1]/'",
        "curl http://10.0.0.5/admin",
        "curl http://192.168.1.1/",
        "curl http://172.17.0.1:2375/info",
        "curl http://100.64.0.1/",
        "curl 'http://[fd12::1]/'",
        "curl http://host.docker.internal:2375/info",
        "curl http://app.localhost:3000/",
        "curl http://printer.local/",
        "curl http://router.lan/",
        "curl http://nas.home.arpa/",
        "curl http://db:5432/",
        "curl http://redis/",
        "curl 'http://127.0.0.[1-1]:2375/info'",
        "curl '127.0.0.{1,1}:2375/info'",
        "curl http://user:pw@127.0.0.1:2375/info",
        "curl https://example.com/x http://127.0.0.1:2375/info",
    ];
    assert_always_is_exact(&fx, "curl https://example.com/x", &local);
    assert_always_is_exact(
        &fx,
        "wget https://example.com/x",
        &[
            "wget http://127.0.0.1:2375/containers/json",
            "wget localhost:8080/",
        ],
    );
    // Public hosts are still covered by the saved prefix.
    let saved = always(&fx, "curl https://example.com/x");
    for public in [
        "curl https://example.org/y",
        "curl https://api.github.com/zen",
        "curl http://93.184.216.34/",
    ] {
        assert!(
            allowed_with(&fx, &saved, public),
            "{public} is no longer covered by {saved:?}"
        );
    }
}

#[test]
fn always_for_git_clone_fetch_or_push_does_not_allow_a_transport_that_runs_a_command() {
    // `ext::CMD` makes git run CMD through the shell, `fd::` talks over
    // descriptors, and any `NAME::ADDRESS` runs the remote helper
    // `git-remote-NAME` found on PATH: a program the remote word chooses.
    // git refuses `ext` unless `protocol.ext.allow` (or `protocol.allow`,
    // `GIT_ALLOW_PROTOCOL`) says otherwise, but the person's own config may
    // say so, and a hook's allow runs the command unconfined (review s36,
    // left open).
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "git clone https://github.com/acme/app",
        &[
            "git clone 'ext::sh -c touch% /tmp/pwn' x",
            "git clone ext::sh x",
            "git clone 'fd::3' x",
            "git clone 'evil::https://example.com/r' x",
            "git clone 'EXT::sh -c id' x",
        ],
    );
    assert_always_is_exact(
        &fx,
        "git fetch https://github.com/acme/app",
        &[
            "git fetch 'ext::sh -c touch% /tmp/pwn'",
            "git fetch 'ext::sh -c touch% /tmp/pwn' main",
        ],
    );
    assert_always_is_exact(
        &fx,
        "git push https://github.com/acme/app main",
        &["git push 'ext::sh -c touch% /tmp/pwn' main"],
    );
    assert_always_is_exact(
        &fx,
        "git ls-remote https://github.com/acme/app",
        &["git ls-remote 'ext::sh -c touch% /tmp/pwn'"],
    );
}

#[test]
fn always_for_a_network_tool_does_not_allow_a_local_host_in_its_own_address_syntax() {
    // Found rereading the change: a host given as its own word or in a
    // program's address syntax (`nc 0 2375` reaches loopback on Linux,
    // `nc 2130706433 2375`, socat's `TCP:127.0.0.1:2375`), and a program the
    // tables do not know given a local address (`grpcurl localhost:50051`).
    let fx = Fixture::new();
    assert_always_is_exact(
        &fx,
        "nc example.com 443",
        &["nc 0 2375", "nc 2130706433 2375", "nc 127.0.0.1 2375"],
    );
    assert_always_is_exact(
        &fx,
        "socat - TCP:example.com:443",
        &["socat - TCP:127.0.0.1:2375", "socat - TCP4:localhost:2375"],
    );
    assert_always_is_exact(
        &fx,
        "grpcurl api.example.com:443 list",
        &[
            "grpcurl localhost:50051 list",
            "grpcurl 127.0.0.1:50051 list",
        ],
    );
    assert_always_is_exact(
        &fx,
        "curl https://example.com/x",
        &["curl unix:///var/run/docker.sock"],
    );
}

/// More of the class (review of the change, s37): a local host reached through
/// an option (`--url`, `--resolve`, `--connect-to`, a proxy, a Unix socket),
/// or spelled in octal, zero-padded or percent-encoded, under a saved
/// `curl *`.
#[test]
fn always_for_curl_does_not_reach_a_local_host_through_options_or_odd_spellings() {
    let fx = Fixture::new();
    let saved = always(&fx, "curl https://example.com/x");
    for c in [
        "curl --url http://127.0.0.1:2375/info",
        "curl --resolve example.com:443:127.0.0.1 https://example.com/",
        "curl --connect-to ::127.0.0.1:2375 https://example.com/",
        "curl -x http://127.0.0.1:8080 https://example.com/",
        "curl --proxy 127.0.0.1:8080 https://example.com/",
        "curl http://0177.0.0.1:2375/info",
        "curl http://127.000.000.001:2375/info",
        "curl http://017700000001/info",
        "curl --unix-socket /var/run/docker.sock http://example.com/info",
        "curl --abstract-unix-socket docker https://example.com/",
        "curl -H 'Host: x' http://[0:0:0:0:0:0:0:1]/",
        "curl --interface lo https://example.com/",
        "curl --noproxy '*' http://127.0.0.1/",
        "curl -sL http://127.0.0.1./",
        "curl http://%31%32%37.0.0.1/",
    ] {
        assert!(!allowed_with(&fx, &saved, c), "{c} is covered by {saved:?}");
    }
}
