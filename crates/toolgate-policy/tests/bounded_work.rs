//! Inputs built to make the analyser's work blow up: it still answers, and
//! answers right.
//!
//! No test here measures time (the machine is noisy). Each one would not finish
//! within any CI limit with an exponential matcher, so finishing is the check;
//! the matcher's own unit tests count its steps.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::os::unix::fs::symlink;

use fixture::{Fixture, default_decision};
use toolgate_core::{Effect, Risk};

/// `*a*a*…*a<tail>`: `stars` stars, each followed by an `a`.
fn star_a(stars: usize, tail: &str) -> String {
    format!("{}{tail}", "*a".repeat(stars))
}

#[test]
fn backtracking_glob_against_a_long_name_is_decided() {
    let fx = Fixture::new();
    let dir = fx.ws.join("long");
    std::fs::create_dir_all(&dir).unwrap();
    // The name from the report: 40 characters that almost match.
    std::fs::write(dir.join("a".repeat(40)), "x").unwrap();
    // And one that matches, a symlink out of the location: the match has to be
    // found (not given up on) for the outside read to be seen.
    symlink(
        fx.out.join("file.txt"),
        dir.join(format!("{}c", "a".repeat(39))),
    )
    .unwrap();
    for stars in [12, 16, 20] {
        // Matches nothing: a plain read inside the location.
        let none = format!("ls long/{}", star_a(stars, "b"));
        let parts = fx.analyze(&none);
        assert_eq!(default_decision(&parts), Effect::Allow, "{none}: {parts:?}");
        // Matches the symlink: the read leaves the location.
        let out = format!("cat long/{}", star_a(stars, "c"));
        let parts = fx.analyze(&out);
        assert!(
            parts
                .iter()
                .any(|p| p.request.action == "external_directory"),
            "{out}: the outside target is not seen: {parts:?}"
        );
    }
}

#[test]
fn backtracking_glob_probed_for_secret_names_is_decided() {
    let fx = Fixture::new();
    // A pattern in a directory that does not exist is only probed against the
    // secret names; `.*e*n*v*` must still find `.env` there.
    for pattern in [
        format!(".{}", "*?".repeat(200)),
        format!(".{}*v", "*e*n".repeat(100)),
        format!(".e{}", "*".repeat(1000)),
    ] {
        let command = format!("cat nowhere/{pattern}");
        let parts = fx.analyze(&command);
        assert!(!parts.is_empty(), "{command}");
    }
    let parts = fx.analyze("cat nowhere/.*e*n*v");
    assert!(
        parts.iter().any(|p| p.request.risk == Risk::Credential),
        "{parts:?}"
    );
}
