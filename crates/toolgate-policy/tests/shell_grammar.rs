//! The walker fails closed on the grammar: nothing the grammar puts in a node
//! is skipped (the heredoc line), every construct is walked, and a parse with
//! errors is opaque.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use fixture::{Fixture, default_decision, max_risk, summary};
use toolgate_core::{Effect, Risk};

/// Asserts the command is at least asked and as risky as `at_least`.
fn assert_caught(fx: &Fixture, command: &str, at_least: Risk) {
    let parts = fx.analyze(command);
    let opaque = parts.iter().any(|p| p.opaque);
    assert!(
        max_risk(&parts) >= at_least || (opaque && at_least <= Risk::Destructive),
        "{command:?}: expected at least {at_least:?}:\n  {}",
        summary(&parts)
    );
    assert!(
        default_decision(&parts) >= Effect::Ask,
        "{command:?} allowed:\n  {}",
        summary(&parts)
    );
}

#[test]
fn heredoc_line_rest_after_and_is_analysed() {
    let fx = Fixture::new();
    for command in [
        "cat <<EOF && cat ~/.ssh/id_ed25519\nhi\nEOF",
        "cat <<EOF && cat {home}/.aws/credentials\nhi\nEOF",
        "cat <<'EOF' && cat .env\nhi\nEOF",
        "cat <<-EOF && cat ~/.netrc\n\thi\n\tEOF",
        "cat <<EOF || cat ~/.ssh/id_ed25519\nhi\nEOF",
        "cat <<EOF && ls && cat .env\nhi\nEOF",
    ] {
        let parts = fx.analyze(command);
        fixture::assert_denied_credential(command, &parts);
    }
    for command in [
        "cat <<EOF && rm -rf src\nhi\nEOF",
        "cat <<EOF || git push --force\nhi\nEOF",
        "cat <<EOF && ls || rm -rf notes\nhi\nEOF",
    ] {
        let parts = fx.analyze(command);
        assert_eq!(
            max_risk(&parts),
            Risk::Destructive,
            "{command:?}:\n  {}",
            summary(&parts)
        );
    }
}

#[test]
fn heredoc_piped_into_a_shell_is_opaque() {
    let fx = Fixture::new();
    for command in [
        "cat <<EOF | sh\nrm -rf src\nEOF",
        "cat <<'EOF' | bash\nid\nEOF",
        "cat <<EOF | bash -s\ntouch /tmp/x\nEOF",
        "cat <<EOF | grep x | sh\nid\nEOF",
        "cat <<EOF | python3\nimport os\nEOF",
        "cat <<EOF | xargs rm -rf\nsrc\nEOF",
    ] {
        let parts = fx.analyze(command);
        assert!(
            parts.iter().any(|p| p.opaque) || max_risk(&parts) >= Risk::Destructive,
            "{command:?}:\n  {}",
            summary(&parts)
        );
        assert!(default_decision(&parts) >= Effect::Ask, "{command:?}");
    }
}

#[test]
fn heredoc_line_rest_redirects_and_arguments_are_judged() {
    let fx = Fixture::new();
    // Words after the heredoc operator are the command's arguments.
    assert_caught(
        &fx,
        "cat <<EOF ~/.ssh/id_ed25519\nhi\nEOF",
        Risk::Credential,
    );
    assert_caught(&fx, "cat <<EOF .env\nhi\nEOF", Risk::Credential);
    // More redirects after it are real redirects.
    assert_caught(&fx, "cat <<EOF >~/.bashrc\nhi\nEOF", Risk::Write);
    assert_caught(&fx, "cat <<EOF 2>{out}/log\nhi\nEOF", Risk::Write);
    assert_caught(
        &fx,
        "cat <<EOF >>{home}/.ssh/authorized_keys\nk\nEOF",
        Risk::Credential,
    );
    // A pipe after it with a writer.
    assert_caught(&fx, "cat <<EOF | tee {out}/x\nhi\nEOF", Risk::Write);
}

#[test]
fn heredoc_bodies_substitutions_are_analysed() {
    let fx = Fixture::new();
    assert_caught(&fx, "cat <<EOF\n$(rm -rf src)\nEOF", Risk::Destructive);
    assert_caught(&fx, "cat <<EOF\n`rm -rf src`\nEOF", Risk::Destructive);
    assert_caught(&fx, "cat <<EOF\n${X:-$(cat .env)}\nEOF", Risk::Credential);
    // Quoted: nothing runs.
    let parts = fx.analyze("cat <<'EOF'\n$(rm -rf src)\nEOF");
    assert!(max_risk(&parts) < Risk::Destructive, "{}", summary(&parts));
}

#[test]
fn parse_errors_and_missing_nodes_are_opaque() {
    let fx = Fixture::new();
    for command in [
        "cat <<EOF; rm -rf x\nhi\nEOF",
        "cat <<EOF & rm x\nhi\nEOF",
        "ls (",
        "if true; then ls",
        "echo $(ls",
        "for x in; do",
        "case x in",
        "ls &&",
        "echo \"unterminated",
    ] {
        let parts = fx.analyze(command);
        assert!(
            parts.iter().any(|p| p.opaque),
            "{command:?}:\n  {}",
            summary(&parts)
        );
        assert!(default_decision(&parts) >= Effect::Ask);
    }
}

#[test]
fn every_construct_of_the_grammar_is_walked() {
    let fx = Fixture::new();
    // One dangerous command hidden in each construct.
    for command in [
        "if cat .env; then :; fi",
        "if :; then :; elif cat .env; then :; fi",
        "if :; then :; else cat .env; fi",
        "while cat .env; do :; done",
        "until cat .env; do :; done",
        "for x in a; do cat .env; done",
        "for x in $(cat .env); do :; done",
        "for ((i=0; i<1; i++)); do cat .env; done",
        "select x in a; do cat .env; done",
        "case x in a) cat .env ;; esac",
        "case $(cat .env) in a) : ;; esac",
        "case x in a) : ;& b) cat .env ;;& esac",
        "f() { cat .env; }",
        "function f { cat .env; }",
        "f() ( cat .env )",
        "{ cat .env; }",
        "( cat .env )",
        "! cat .env",
        "cat .env &",
        "coproc cat .env",
        "time cat .env",
        "echo <(cat .env)",
        "diff <(ls) >(cat .env)",
        "x=$(cat .env)",
        "declare x=$(cat .env)",
        "export x=`cat .env`",
        "local x=\"$(cat .env)\"",
        "a=([0]=$(cat .env))",
        "[[ $(cat .env) == x ]]",
        "[[ -n x && $(cat .env) ]]",
        "(( $(cat .env) ))",
        "echo $(( $(cat .env) + 1 ))",
        "echo ${x:-$(cat .env)}",
        "echo ${x/$(cat .env)/y}",
        "echo \"${x[$(cat .env)]}\"",
        "echo $'a' \"$(cat .env)\"",
        "cat .env | wc -l",
        "ls |& cat .env",
        "ls > >(cat .env)",
        "echo {a,$(cat .env)}",
        "unset x $(cat .env)",
    ] {
        assert_caught(&fx, command, Risk::Credential);
    }
}
