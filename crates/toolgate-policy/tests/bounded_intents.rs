//! Every tool's intent is bounded (issue 25, point 5): a patch has stated
//! limits on its size and its number of file sections, brace expansion
//! counts its words and is opaque past its limit, and the judging of a
//! call's requests stops at the decision budget and answers ask ("too
//! complex to analyse"), never allow.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::time::{Duration, Instant};

use fixture::intent::builtin_intent;
use fixture::{Fixture, assert_allowed, assert_asked};
use serde_json::json;
use toolgate_core::{Effect, PermissionRequest, Risk};
use toolgate_policy::check::check;
use toolgate_policy::expand::expand_with;
use toolgate_policy::policy::NoApprovals;
use toolgate_policy::shell::{MAX_BRACE_WORDS, TOO_COMPLEX};
use toolgate_tools::file_tools::{MAX_PATCH_BYTES, MAX_PATCH_FILES};

fn add_sections(n: usize) -> String {
    let mut patch = String::from("*** Begin Patch\n");
    for i in 0..n {
        patch.push_str(&format!("*** Add File: gen/f{i}.txt\n+x\n"));
    }
    patch.push_str("*** End Patch\n");
    patch
}

#[test]
fn apply_patch_with_20000_add_sections_is_refused_at_once() {
    let fx = Fixture::new();
    let patch = add_sections(20_000);
    let started = Instant::now();
    let err = builtin_intent("apply_patch", &json!({ "patch": patch }), &fx.location).unwrap_err();
    assert!(
        err.0.contains("20000 file sections")
            && err.0.contains(&format!("limit is {MAX_PATCH_FILES}")),
        "{err}"
    );
    // Refused before any path is resolved: far below the 4.4 s it took.
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn apply_patch_over_two_mib_is_refused_with_its_size() {
    let fx = Fixture::new();
    let mut patch = String::from("*** Begin Patch\n*** Add File: big.txt\n");
    let line = format!("+{}\n", "y".repeat(1023));
    while patch.len() <= MAX_PATCH_BYTES {
        patch.push_str(&line);
    }
    patch.push_str("*** End Patch\n");
    let err = builtin_intent("apply_patch", &json!({ "patch": patch }), &fx.location).unwrap_err();
    assert!(
        err.0.contains("2 MiB") && err.0.contains("split it"),
        "{err}"
    );
}

#[test]
fn apply_patch_at_the_section_limit_is_judged_and_asked() {
    let fx = Fixture::new();
    let patch = add_sections(MAX_PATCH_FILES);
    let requests = builtin_intent("apply_patch", &json!({ "patch": patch }), &fx.location).unwrap();
    assert_eq!(requests.len(), MAX_PATCH_FILES);
    let outcome = check(&fx.policy(None), requests, &fx.location, &NoApprovals);
    assert_eq!(outcome.decision, Effect::Ask, "{}", outcome.reason);
    let over = add_sections(MAX_PATCH_FILES + 1);
    assert!(builtin_intent("apply_patch", &json!({ "patch": over }), &fx.location).is_err());
}

#[test]
fn judging_past_the_budget_asks_too_complex_to_analyse() {
    let fx = Fixture::new();
    // Reads the default policy would allow, judged with no budget left.
    let requests: Vec<PermissionRequest> = (0..50)
        .map(|i| {
            PermissionRequest::path(
                "read",
                fx.ws.join(format!("src/f{i}.rs")).display().to_string(),
                Risk::Read,
            )
        })
        .collect();
    let expanded = expand_with(requests, &fx.location, &fx.home, Duration::ZERO, true);
    assert!(expanded.iter().all(|e| e.opaque));
    assert!(
        expanded
            .iter()
            .all(|e| e.reason.as_deref().unwrap_or("").starts_with(TOO_COMPLEX)),
        "{:?}",
        expanded[0].reason
    );
    assert!(expanded.iter().all(|e| e.request.save_pattern.is_none()));
}

#[test]
fn forty_brace_groups_are_not_allowed() {
    let fx = Fixture::new();
    let groups = "{a,b}".repeat(40);
    for command in [
        format!("echo {groups}"),
        format!("ls {groups}"),
        format!("printf %s {groups}"),
        format!("echo x{}y", "{1,2,3}".repeat(6)),
        format!("true {}", "{a,b}".repeat(9)),
    ] {
        let started = Instant::now();
        let parts = assert_asked(&fx, &command);
        assert!(
            parts
                .iter()
                .any(|p| p.opaque && p.reason.contains("brace expansion")),
            "{command}: {parts:?}"
        );
        assert!(started.elapsed() < Duration::from_secs(5), "{command}");
    }
}

#[test]
fn brace_expansion_within_its_limit_is_still_read() {
    let fx = Fixture::new();
    // 2^8 = 256 words: the limit itself.
    assert_eq!(MAX_BRACE_WORDS, 256);
    assert_allowed(&fx, &format!("echo {}", "{a,b}".repeat(8)));
    assert_allowed(&fx, "ls src/{main,util}.rs");
    // A brace expansion that builds a credential path is still judged.
    let parts = fx.analyze("cat ~/.ssh/{id_rsa,config}");
    assert!(parts.iter().any(|p| p.request.risk == Risk::Credential));
}
