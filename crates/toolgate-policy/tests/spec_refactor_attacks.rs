//! Attacks on the move of programs' facts from table rows into their specs
//! (989b841..7ab8844): commands the analyser must not allow after the move.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use fixture::{Fixture, assert_asked, default_decision, max_risk, summary};

/// Prints the default decision of every line of `$PROBE_FILE` (a tool for
/// review, not a check).
#[test]
#[ignore = "a probe for review: PROBE_FILE=path"]
fn probe() {
    let fx = Fixture::new();
    let path = std::env::var("PROBE_FILE").unwrap();
    for line in std::fs::read_to_string(path).unwrap().lines() {
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let parts = fx.analyze(line);
        println!(
            "PROBE {:?} {:?} {}\n    {}",
            default_decision(&parts),
            max_risk(&parts),
            line,
            summary(&parts)
        );
    }
}

/// `rg --files DIR` (and `ripgrep --files DIR`, the name the refactor gave
/// the rg spec) searches for no pattern: every operand is a directory whose
/// file names it lists. Taken for the pattern, a directory outside the
/// location was never judged, so `rg --files ~` was allowed while
/// `rg x ~` is asked.
#[test]
fn rg_files_lists_a_directory_outside_the_location() {
    let fx = Fixture::new();
    for cmd in [
        "rg --files {home}",
        "ripgrep --files {home}",
        "rg --files {out}",
        "rg --files src {home}",
        "rg -l --files {home}",
        "rg --type-list {home}",
    ] {
        assert_asked(&fx, cmd);
    }
    // Listing inside the location stays allowed.
    for cmd in ["rg --files", "rg --files src", "ripgrep --files src tests"] {
        let parts = fx.analyze(cmd);
        assert_eq!(
            default_decision(&parts),
            toolgate_core::Effect::Allow,
            "{cmd}: {}",
            summary(&parts)
        );
        assert_eq!(max_risk(&parts), toolgate_core::Risk::Read, "{cmd}");
    }
}

/// The options of go and docker that take a separate value (`go -C DIR`,
/// `docker -c CONTEXT`, `docker --config DIR`, `docker -l LEVEL`) were not
/// named by their specs, so their value was taken for the subcommand:
/// `go -C list get x` was judged as `go list` (execute, not proven) while go
/// runs `get` (network), `docker -c ps rm -f x` as `docker ps` while docker
/// runs `rm -f` (destructive). The real subcommand's risk must hold.
#[test]
fn go_and_docker_option_values_hide_no_subcommand() {
    use toolgate_core::Risk;
    let fx = Fixture::new();
    for (cmd, risk) in [
        ("go -C list get example.invalid/x", Risk::Network),
        ("go -C env install example.invalid/x", Risk::Network),
        ("docker -c ps rm -f x", Risk::Destructive),
        ("docker --config ps system prune -af", Risk::Destructive),
        ("docker -l info rmi alpine", Risk::Destructive),
        ("docker --log-level info push x", Risk::Network),
        ("podman -c ps rm -f x", Risk::Destructive),
    ] {
        let parts = assert_asked(&fx, cmd);
        assert!(max_risk(&parts) >= risk, "{cmd}: {}", summary(&parts));
    }
}

/// pip (optparse) and npm (nopt) accept an abbreviation of a long option
/// that takes a value (`pip --lo FILE` is `--log FILE`, `npm --pref DIR` is
/// `--prefix DIR`): its value is not the subcommand either. Read only as
/// an option without a value, `pip --lo list install evil` was judged as
/// `pip list` (execute, not proven) while pip runs `install` (network).
#[test]
fn an_abbreviated_option_s_value_hides_no_subcommand() {
    use toolgate_core::Risk;
    let fx = Fixture::new();
    for (cmd, risk) in [
        ("pip --lo list install evil", Risk::Network),
        ("pip --cache list install evil", Risk::Network),
        ("pip3 --cache-d show download evil", Risk::Network),
        ("npm --pref ls install evil", Risk::Network),
        ("npm --workspa ls publish", Risk::Network),
        ("pnpm --pref ls install evil", Risk::Network),
    ] {
        let parts = assert_asked(&fx, cmd);
        assert!(max_risk(&parts) >= risk, "{cmd}: {}", summary(&parts));
    }
    // Read as a flag without a value, the next word is the subcommand:
    // both readings are judged, the stricter holds.
    let cmd = "pip --lo install list";
    let parts = assert_asked(&fx, cmd);
    assert!(
        max_risk(&parts) >= Risk::Network,
        "{cmd}: {}",
        summary(&parts)
    );
}
