//! Bad input to the shell analyser: it never panics, never returns nothing, and
//! never lets something it cannot read be allowed.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use fixture::{Fixture, default_decision};
use toolgate_core::{Effect, Risk};
use toolgate_policy::shell::{MAX_COMMAND_BYTES, analyze};

fn assert_opaque_ask(fx: &Fixture, command: &str, why: &str) {
    let parts = analyze(command, &fx.ctx(""));
    assert!(!parts.is_empty(), "{why}: no requests");
    assert!(
        parts
            .iter()
            .any(|p| p.opaque && p.reason.starts_with("opaque: ")),
        "{why}: not opaque: {}",
        summary(&parts)
    );
    assert!(
        parts
            .iter()
            .filter(|p| p.opaque)
            .all(|p| p.request.save_pattern.is_none()),
        "{why}: an opaque request carries a save pattern"
    );
    assert!(default_decision(&parts) >= Effect::Ask, "{why}: allowed");
}

#[test]
fn empty_and_blank_commands_are_opaque() {
    let fx = Fixture::new();
    for command in ["", " ", "\n\n", "\t"] {
        assert_opaque_ask(&fx, command, &format!("{command:?}"));
    }
    let parts = analyze("", &fx.ctx(""));
    assert!(parts[0].reason.contains("empty"), "{}", parts[0].reason);
}

#[test]
fn nul_bytes_are_opaque() {
    let fx = Fixture::new();
    for command in ["ls\0", "cat README.md\0; rm -rf src", "\0"] {
        assert_opaque_ask(&fx, command, "NUL");
    }
    let parts = analyze("ls\0", &fx.ctx(""));
    assert!(parts[0].reason.contains("NUL"), "{}", parts[0].reason);
}

#[test]
fn invalid_syntax_is_opaque_and_still_classified() {
    let fx = Fixture::new();
    for command in [
        "ls (",
        "echo 'unterminated",
        "if true; then ls",
        "for x in; do",
        "case x in",
        "(((",
        "echo $((",
        "cat <<EOF",
        "a | | b",
        ";;",
        "`",
        "$(",
        "\"",
    ] {
        assert_opaque_ask(&fx, command, command);
    }
    // The readable part is still judged: a destructive part stays destructive.
    let parts = analyze("rm -rf src (", &fx.ctx(""));
    assert!(
        parts.iter().any(|p| p.request.risk == Risk::Destructive),
        "{}",
        summary(&parts)
    );
    let parts = analyze("ls (", &fx.ctx(""));
    let opaque = parts.iter().find(|p| p.opaque).unwrap();
    assert!(
        opaque.reason.contains("does not parse"),
        "{}",
        opaque.reason
    );
}

#[test]
fn a_one_megabyte_command_is_analysed_without_panicking() {
    let fx = Fixture::new();
    // 1 MB of 1 KB commands with a destructive command at the very end.
    let line = format!("grep -n '{}' src/main.rs | sort; ", "x".repeat(1000));
    let mut command = line.repeat(1024 * 1024 / line.len() + 1);
    command.push_str("rm -rf src");
    assert!(command.len() > 1024 * 1024);
    let parts = analyze(&command, &fx.ctx(""));
    // Either the analysis reaches the end and finds `rm -rf`, or, on a
    // machine too busy to finish within the analysis budget, it gives up and
    // the whole command is opaque: asked either way, never allowed.
    assert!(
        parts.iter().any(|p| p.request.risk == Risk::Destructive)
            || parts
                .iter()
                .any(|p| p.opaque && p.reason.contains("too complex")),
        "{}",
        summary(&parts)
    );
    assert_eq!(default_decision(&parts), Effect::Ask);
    // One enormous word.
    let word = format!("echo {}", "a".repeat(1024 * 1024));
    let parts = analyze(&word, &fx.ctx(""));
    assert_eq!(parts.len(), 1);
    assert_eq!(parts[0].request.risk, Risk::Read);
}

#[test]
fn longer_than_the_limit_is_opaque() {
    let fx = Fixture::new();
    let command = "a".repeat(MAX_COMMAND_BYTES + 1);
    assert_opaque_ask(&fx, &command, "too long");
}

#[test]
fn deep_nesting_is_opaque_not_a_stack_overflow() {
    let fx = Fixture::new();
    // `find -exec find -exec …`, deeper than the analyser follows.
    let command = format!(
        "{}rm -rf {{}}{}",
        "find . -exec ".repeat(40),
        " ;".repeat(40)
    );
    let parts = analyze(&command, &fx.ctx(""));
    assert!(
        default_decision(&parts) >= Effect::Ask,
        "{}",
        summary(&parts)
    );
    assert!(parts.iter().any(|p| p.opaque), "{}", summary(&parts));
    // `bash -c` inside `bash -c`: followed while it is shallow.
    let mut command = "rm -rf src".to_string();
    for _ in 0..4 {
        command = format!("bash -c {}", shell_quote(&command));
    }
    let parts = analyze(&command, &fx.ctx(""));
    assert!(
        parts.iter().any(|p| p.request.risk == Risk::Destructive),
        "{}",
        summary(&parts)
    );
    // Nested subshells and substitutions are walked while they are shallow…
    let nested = format!("{}rm -rf src{}", "( ".repeat(30), " )".repeat(30));
    let parts = analyze(&nested, &fx.ctx(""));
    assert!(
        parts.iter().any(|p| p.request.risk == Risk::Destructive),
        "{}",
        summary(&parts)
    );
    let subst = format!("echo {}rm -rf src{}", "$(".repeat(30), ")".repeat(30));
    let parts = analyze(&subst, &fx.ctx(""));
    assert!(parts.iter().any(|p| p.request.risk == Risk::Destructive));
    // …and opaque past the nesting limit (64), never a stack overflow.
    for deep in [
        format!("{}rm -rf src{}", "( ".repeat(200), " )".repeat(200)),
        format!("echo {}rm -rf src{}", "$(".repeat(100), ")".repeat(100)),
    ] {
        assert_opaque_ask(&fx, &deep, "deep");
    }
}

#[test]
fn garbage_never_panics_and_never_yields_nothing() {
    let fx = Fixture::new();
    let samples = [
        "\u{feff}ls",
        "ls \u{202e}fr- mr",
        "\x1b[31mls",
        "échō ünïcødé",
        "ls\r\nrm -rf src",
        "$'\\",
        "$'\\x'",
        "${",
        "${!}",
        "<<<",
        ">",
        "2>&",
        "&>",
        "!",
        "{",
        "\\",
        "'\\''",
    ];
    for s in samples {
        let parts = analyze(s, &fx.ctx(""));
        assert!(!parts.is_empty(), "{s:?}");
    }
    let parts = analyze("ls\r\nrm -rf src", &fx.ctx(""));
    assert!(
        parts.iter().any(|p| p.request.risk == Risk::Destructive),
        "{}",
        summary(&parts)
    );
}

/// A bad path inside a command is opaque with the resolver's error, not allowed.
#[test]
fn unresolvable_paths_are_opaque() {
    let fx = Fixture::new();
    let long = format!(
        "cat /{}",
        "a/".repeat(toolgate_core::location::MAX_PATH_BYTES / 2 + 1)
    );
    assert_opaque_ask(&fx, &long, "path too long");
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A short description of the requests for failure messages.
fn summary(parts: &[toolgate_policy::shell::ShellRequest]) -> String {
    parts
        .iter()
        .map(|p| {
            let r: String = p.request.resource.chars().take(60).collect();
            format!(
                "{} {r:?} {} opaque={}",
                p.request.action, p.request.risk, p.opaque
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}
