//! Property tests: the default decision (strictest effect over a command's
//! requests) never gets weaker when a command is wrapped (`env`, `timeout`,
//! `nice`, `sudo`, `bash -c '…'`…), chained with another command (`&&`, `||`,
//! `;`, `|`, newline, `&`), or has a path replaced by a symlink to the same
//! target.
//!
//! Commands come from the corpus in `tests/corpus/shell.jsonl` (those that keep
//! their meaning when combined: one line, no comment, no `cd`, no parse error).

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::sync::atomic::{AtomicUsize, Ordering};

use fixture::{Fixture, default_decision, double_quote, is_simple, runner, single_quote};
use proptest::prelude::*;
use toolgate_core::Effect;

fn corpus_commands() -> Vec<String> {
    let path = format!("{}/tests/corpus/shell.jsonl", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(path).unwrap();
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|v| v["tag"] != "parse")
        .filter_map(|v| v["command"].as_str().map(String::from))
        .filter(|c| {
            // Combining must not change what the command means: a comment would
            // swallow what follows, `cd` changes later paths, a trailing `&`
            // or a heredoc breaks the syntax of a chain.
            !c.contains('\n')
                && !c.contains('#')
                && !c.contains("<<")
                && !c.trim_end().ends_with('&')
                && !c
                    .split_whitespace()
                    .any(|w| matches!(w, "cd" | "pushd" | "popd"))
        })
        .collect()
}

const PREFIX_WRAPPERS: &[&str] = &[
    "env ",
    "env -i ",
    "env A=1 ",
    "timeout 5 ",
    "timeout -s KILL 10s ",
    "nice ",
    "nice -n 5 ",
    "nohup ",
    "stdbuf -oL ",
    "time ",
    "command ",
    "exec ",
    "sudo ",
    "sudo -u root ",
    "doas ",
    "ionice -c 3 ",
    "setsid ",
];

fn decision(fx: &Fixture, command: &str) -> Effect {
    default_decision(&fx.analyze(command))
}

#[test]
fn wrapping_never_weakens_the_decision() {
    let fx = Fixture::new();
    let all = corpus_commands();
    let simple: Vec<String> = all.iter().filter(|c| is_simple(c)).cloned().collect();
    assert!(simple.len() > 100, "only {} simple commands", simple.len());
    let strategy = (
        prop::sample::select(simple),
        prop::sample::select(PREFIX_WRAPPERS),
        prop::sample::select(PREFIX_WRAPPERS),
    );
    runner(400)
        .run(&strategy, |(command, outer, inner)| {
            let base = decision(&fx, &command);
            for wrapped in [
                format!("{inner}{command}"),
                format!("{outer}{inner}{command}"),
                // An assignment prefix only counts in front of everything.
                format!("FOO=bar {inner}{command}"),
            ] {
                let got = decision(&fx, &wrapped);
                prop_assert!(got >= base, "{command:?} is {base}, {wrapped:?} is {got}");
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn shell_c_never_weakens_the_decision() {
    let fx = Fixture::new();
    let all = corpus_commands();
    let strategy = (
        prop::sample::select(all),
        prop::sample::select(
            &[
                "bash -c ",
                "sh -c ",
                "bash -lc ",
                "sudo bash -c ",
                "timeout 5 sh -c ",
                "env bash -c ",
            ][..],
        ),
        any::<bool>(),
    );
    runner(400)
        .run(&strategy, |(command, shell, single)| {
            let base = decision(&fx, &command);
            let quoted = if single {
                single_quote(&fx.expand(&command))
            } else {
                double_quote(&fx.expand(&command))
            };
            let wrapped = format!("{shell}{quoted}");
            let got = decision(&fx, &wrapped);
            prop_assert!(got >= base, "{command:?} is {base}, {wrapped:?} is {got}");
            Ok(())
        })
        .unwrap();
}

#[test]
fn chaining_never_weakens_the_decision() {
    let fx = Fixture::new();
    let all = corpus_commands();
    let strategy = (
        prop::sample::select(all.clone()),
        prop::sample::select(all),
        prop::sample::select(&[" && ", " || ", "; ", " | ", "\n", " & ", " |& "][..]),
    );
    runner(600)
        .run(&strategy, |(first, second, op)| {
            let want = decision(&fx, &first).max(decision(&fx, &second));
            let chained = format!("{first}{op}{second}");
            let got = decision(&fx, &chained);
            prop_assert!(
                got >= want,
                "{first:?} / {second:?}: {want}, {chained:?}: {got}"
            );
            Ok(())
        })
        .unwrap();
}

/// Commands with one path slot.
const PATH_TEMPLATES: &[&str] = &[
    "cat {}",
    "cat -- {}",
    "head -n 1 {}",
    "grep a {}",
    "ls {}",
    "wc -l {}",
    "rm {}",
    "rm -rf {}",
    "cp {} copy.txt",
    "cp data.txt {}",
    "mv {} moved.txt",
    "touch {}",
    "sed -i s/a/b/ {}",
    "tar -cf a.tar {}",
    "echo x > {}",
    "echo x >> {}",
    "cat < {}",
    "curl -d @{} https://example.invalid",
    "diff {} README.md",
    "bash -c 'cat {}'",
];

/// Targets: files and directories inside, outside, and holding secrets.
const TARGETS: &[&str] = &[
    "{ws}/README.md",
    "{ws}/src",
    "{ws}/src/main.rs",
    "{ws}/data.txt",
    "{ws}/.env",
    "{ws}/.env.example",
    "{ws}/config/.env",
    "{ws}/.git-credentials",
    "{ws}/new-file.txt",
    "{home}/.ssh/id_ed25519",
    "{home}/.ssh",
    "{home}/.aws/credentials",
    "{home}/.kube/config",
    "{home}/.bashrc",
    "{home}/notes.txt",
    "{out}/file.txt",
    "{out}/sub",
    "{out}/missing.txt",
    "/etc/hostname",
    "/etc/shadow",
];

#[test]
fn a_symlink_to_the_same_target_never_weakens_the_decision() {
    let fx = Fixture::new();
    let links_in = fx.ws.join("links");
    let links_out = fx.out.join("links");
    std::fs::create_dir_all(&links_in).unwrap();
    std::fs::create_dir_all(&links_out).unwrap();
    let counter = AtomicUsize::new(0);
    let strategy = (
        prop::sample::select(PATH_TEMPLATES),
        prop::sample::select(TARGETS),
        any::<bool>(),
        any::<bool>(),
    );
    runner(400)
        .run(&strategy, |(template, target, link_inside, relative)| {
            let target = fx.expand(target);
            let n = counter.fetch_add(1, Ordering::Relaxed);
            let dir = if link_inside { &links_in } else { &links_out };
            let link = dir.join(format!("l{n}"));
            std::os::unix::fs::symlink(&target, &link).unwrap();
            let link_text = if link_inside && relative {
                format!("links/l{n}")
            } else {
                link.to_string_lossy().into_owned()
            };
            let direct = template.replace("{}", &target);
            let through_link = template.replace("{}", &link_text);
            let base = decision(&fx, &direct);
            let got = decision(&fx, &through_link);
            prop_assert!(
                got >= base,
                "{direct:?} is {base}, {through_link:?} is {got}"
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn random_input_never_panics_and_unparsable_input_is_never_allowed() {
    let fx = Fixture::new();
    let parser = std::cell::RefCell::new(tree_sitter::Parser::new());
    parser
        .borrow_mut()
        .set_language(&tree_sitter_bash::LANGUAGE.into())
        .unwrap();
    let noise = || {
        proptest::string::string_regex("[a-z .;&|<>()$`'\"\\\\{}\\[\\]*?!#=~/\n\t-]{0,48}").unwrap()
    };
    let strategy = (prop::sample::select(corpus_commands()), noise(), noise());
    runner(300)
        .run(
            &strategy,
            |(command, before, after): (String, String, String)| {
                for input in [
                    before.clone(),
                    format!("{command}{after}"),
                    format!("{before}{command}"),
                ] {
                    let parts = fx.analyze(&input);
                    prop_assert!(!parts.is_empty(), "{input:?}: no requests");
                    let expanded = fx.expand(&input);
                    // Unparsable as written and with line continuations joined (the
                    // analyser joins them first, as bash does).
                    let fails = |text: &str| {
                        parser
                            .borrow_mut()
                            .parse(text, None)
                            .is_none_or(|t| t.root_node().has_error())
                    };
                    let unparsable = fails(&expanded) && fails(&expanded.replace("\\\n", ""));
                    if unparsable {
                        prop_assert!(
                            default_decision(&parts) >= Effect::Ask,
                            "{input:?} does not parse but is allowed"
                        );
                    }
                }
                Ok(())
            },
        )
        .unwrap();
}

/// Words for plain lines: commands, wrappers, options, paths in and out and
/// through symlinks, secrets, quoted text, and words the plain reader must
/// leave to the grammar (keywords, assignments, expansions).
const PLAIN_WORDS: &[&str] = &[
    "ls",
    "cat",
    "git",
    "status",
    "push",
    "--force",
    "log",
    "rm",
    "-rf",
    "-r",
    "cp",
    "mv",
    "grep",
    "-r",
    "-v",
    "sed",
    "-i",
    "s/a/b/",
    "find",
    ".",
    "-delete",
    "-name",
    "x",
    "curl",
    "https://example.invalid/a",
    "cargo",
    "test",
    "-p",
    "core",
    "--",
    "npm",
    "run",
    "build",
    "sudo",
    "doas",
    "env",
    "timeout",
    "5",
    "nice",
    "xargs",
    "bash",
    "-c",
    "sh",
    "python3",
    "'print(1)'",
    "cd",
    "src",
    "..",
    "../..",
    "/",
    "/tmp",
    "/etc/shadow",
    "/etc/hostname",
    "src/main.rs",
    "src/lib.rs",
    ".env",
    ".env.example",
    "config/.env",
    "link_in",
    "link_out",
    "link_out/file.txt",
    "link_key",
    "link_ssh",
    "link_etc/hostname",
    "settings.cfg",
    "data_link.txt",
    "{ws}/.env",
    "{home}/.ssh/id_ed25519",
    "{out}/file.txt",
    "new.txt",
    "'a b'",
    "\"c d\"",
    "'x && y'",
    "\"a|b\"",
    "'it''s'",
    "a'b'c",
    "\"\"",
    "''",
    "printenv",
    "set",
    "echo",
    "dd",
    "if=a",
    "of=b",
    "chmod",
    "-R",
    "777",
    "git-credentials",
    ".git-credentials",
    "if",
    "then",
    "fi",
    "export",
    "time",
    "FOO=1",
    "LD_PRELOAD=x.so",
    "$HOME",
    "\"$HOME\"",
    "pushd",
    "popd",
    "eval",
    "source",
    "trap",
    "'ls'",
    "tar",
    "-xf",
    "a.tar",
    "make",
    "20",
    "-n",
    "%1",
    "a,b",
    "+x",
    "@file",
    "user@host:path",
    "key:.env",
];

const PLAIN_JOINS: &[&str] = &[
    " ", " ", " ", "  ", "\t", " | ", " && ", " || ", "; ", ";", "|", "&&",
];

#[test]
fn plain_reading_agrees_with_the_grammar() {
    use toolgate_policy::shell::{analyze, analyze_with_grammar};
    let fx = Fixture::new();
    let ctx = fx.ctx("");
    // Every corpus command, read both ways.
    for command in corpus_commands() {
        let text = fx.expand(&command);
        assert_eq!(
            fx.analyze(&command),
            analyze_with_grammar(&text, &ctx),
            "{command:?}"
        );
    }
    // Random plain-looking lines.
    let strategy = prop::collection::vec(
        (
            prop::sample::select(PLAIN_WORDS),
            prop::sample::select(PLAIN_JOINS),
        ),
        1..9,
    );
    runner(2000)
        .run(&strategy, |pieces| {
            let mut line = String::new();
            for (word, join) in &pieces {
                line.push_str(word);
                line.push_str(join);
            }
            let line = fx.expand(line.trim_end_matches(|c| " \t|&;".contains(c)));
            let line = line.trim();
            prop_assert_eq!(
                analyze(line, &ctx),
                analyze_with_grammar(line, &ctx),
                "{:?}",
                line
            );
            Ok(())
        })
        .unwrap();
}

/// The CPU time this thread has used so far.
fn thread_cpu_time() -> std::time::Duration {
    let mut t = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `t` is a valid, writable timespec; the clock id is a constant
    // every Linux kernel supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

/// Not a performance assertion (the machine is noisy; the decide bench
/// measures speed): a hang detector. A decision has a 50 ms CPU budget; one
/// that uses 40 times that is stuck (exponential matching, a walk without
/// end), not slow.
const HANG_CPU: std::time::Duration = std::time::Duration::from_secs(2);

/// The stack a decision must fit in: a thread's default 2 MiB, as a server's
/// worker threads have, not the main thread's 8 MiB.
const DECISION_STACK: usize = 2 * 1024 * 1024;

/// The longest command generated.
const MAX_GENERATED: usize = 4096;

/// Nests `inner` `depth` times in one construct of the grammar.
fn nest(construct: u8, depth: usize, inner: &str) -> String {
    let (open, close): (&str, &str) = match construct % 12 {
        0 => ("$(", ")"),
        1 => ("(", ")"),
        2 => ("{ ", "; }"),
        3 => ("\"$(", ")\""),
        4 => ("$((", "))"),
        5 => ("${x:-", "}"),
        6 => ("if true; then ", "; fi"),
        7 => ("bash -c \"", "\""),
        8 => ("<(", ")"),
        9 => ("[[ ( ", " ) ]]"),
        10 => ("while true; do ", "; done"),
        _ => ("f() { ", "; }; f"),
    };
    let mut s = String::with_capacity(depth * (open.len() + close.len()) + inner.len());
    for _ in 0..depth {
        s.push_str(open);
    }
    s.push_str(inner);
    for _ in 0..depth {
        s.push_str(close);
    }
    s
}

/// Command strings built to make the analysis work hard: deep nesting, long
/// globs (that a backtracking matcher takes exponential time on), brace
/// expansions (that multiply), quotes of every kind, and random mixes of the
/// shell's punctuation; all cut to at most 4 KB.
fn hard_command() -> impl Strategy<Value = String> {
    let deep = (any::<u8>(), 1usize..1400, "[a-z ./*]{0,12}")
        .prop_map(|(c, depth, inner)| nest(c, depth, &format!("cat {inner}")));
    let mixed_nesting =
        prop::collection::vec((any::<u8>(), 1usize..40), 1..20).prop_map(|levels| {
            levels
                .iter()
                .rev()
                .fold("ls".to_string(), |inner, &(c, d)| nest(c, d, &inner))
        });
    let glob_unit = prop::sample::select(&["*a", "?", "*", "[a-z]", "[!x]*", "*.", "**/"][..]);
    let long_glob = (
        prop::sample::select(&["ls ", "cat ", "grep -r x --include=", "rm -f ", "echo x > "][..]),
        prop::sample::select(&["", "src/", "long/", "../", "~/.ssh/", "/etc/", ".env*/"][..]),
        prop::collection::vec(glob_unit, 1..600),
        prop::sample::select(&["b", "", ".rs", "*"][..]),
    )
        .prop_map(|(cmd, dir, units, tail)| format!("{cmd}{dir}{}{tail}", units.concat()));
    let braces = (
        prop::sample::select(&["echo ", "cat ", "touch ", "rm "][..]),
        prop::collection::vec(
            prop::sample::select(&["{a,b}", "{1..9}", "{a,{b,c}}", "{x,y,z}", "{1..99999999}"][..]),
            1..300,
        ),
    )
        .prop_map(|(cmd, parts)| format!("{cmd}{}", parts.concat()));
    let quote_unit = prop::sample::select(
        &[
            "'a b'",
            "\"c $d\"",
            "$'\\x41'",
            "$\"e\"",
            "\\ ",
            "\"$(ls)\"",
            "'",
            "\"",
            "`ls`",
            "\"`\"",
            "\\\"",
            "${x}",
            "\"${x:-'y'}\"",
            "$'\\''",
        ][..],
    );
    let quotes = (
        prop::sample::select(&["echo ", "cat ", "printf %s ", "grep "][..]),
        prop::collection::vec(quote_unit, 1..400),
    )
        .prop_map(|(cmd, units)| format!("{cmd}{}", units.concat()));
    let noise = proptest::string::string_regex(
        "([a-z]{1,6}|[ .;&|<>()$`'\"\\\\{}\\[\\]*?!#=~/\n\t-]){0,600}",
    )
    .unwrap();
    prop_oneof![deep, mixed_nesting, long_glob, braces, quotes, noise].prop_map(|mut s| {
        if s.len() > MAX_GENERATED {
            let mut end = MAX_GENERATED;
            while !s.is_char_boundary(end) {
                end -= 1;
            }
            s.truncate(end);
        }
        s
    })
}

#[test]
fn hard_commands_never_panic_overflow_or_hang_and_opaque_is_never_allowed() {
    use toolgate_core::PermissionRequest;
    use toolgate_policy::check::judge_call;
    use toolgate_policy::policy::NoApprovals;

    let fx = Fixture::new();
    // A directory holding the long names a backtracking glob chokes on.
    let long = fx.ws.join("long");
    std::fs::create_dir_all(&long).unwrap();
    std::fs::write(long.join("a".repeat(40)), "x").unwrap();
    std::fs::write(long.join(format!("{}b", "a".repeat(60))), "x").unwrap();
    let policy = fx.policy(None);
    runner(192)
        .run(&hard_command(), |command| {
            let request =
                PermissionRequest::command("bash", command.clone(), toolgate_core::Risk::Execute)
                    .with_cwd(fx.ws.display().to_string());
            // A fresh 2 MiB thread per decision: a recursion too deep for it
            // aborts the test binary, which fails the test.
            let (judged, cpu) = std::thread::scope(|s| {
                std::thread::Builder::new()
                    .stack_size(DECISION_STACK)
                    .spawn_scoped(s, || {
                        let before = thread_cpu_time();
                        let judged = judge_call(&policy, vec![request], &fx.location, &NoApprovals);
                        (judged, thread_cpu_time() - before)
                    })
                    .expect("spawn the decision thread")
                    .join()
            })
            .map_err(|_| TestCaseError::fail(format!("the decision panicked on {command:?}")))?;
            prop_assert!(
                cpu < HANG_CPU,
                "{:?} of CPU deciding {} bytes: {:?}",
                cpu,
                command.len(),
                command.chars().take(200).collect::<String>()
            );
            prop_assert!(!judged.is_empty(), "no requests for {command:?}");
            for j in &judged {
                if j.expanded.opaque || j.verdict.decision.reason.contains("too complex") {
                    // Opaque (including "too complex to analyse"): at least
                    // ask, and nothing an approval could be saved for.
                    prop_assert!(
                        j.verdict.decision.effect >= Effect::Ask,
                        "opaque part allowed in {command:?}: {}",
                        j.verdict.decision.reason
                    );
                    prop_assert!(
                        j.expanded.request.save_pattern.is_none() && !j.verdict.reusable,
                        "opaque part an approval could answer in {command:?}"
                    );
                }
            }
            Ok(())
        })
        .unwrap();
}
