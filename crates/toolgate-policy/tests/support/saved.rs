//! Saved approvals for tests: what answering "always" to a command saves (as
//! the gate does: the pattern of every asked request an approval may
//! answer), and the default policy's answer for a later command with those
//! approvals in place.

#![allow(dead_code)]

use serde_json::json;
use toolgate_core::{DecisionSource, Effect};
use toolgate_policy::check::{check, judge_call};
use toolgate_policy::policy::{ApprovalLookup, NoApprovals, approval_covers};

use super::fixture::Fixture;
use super::fixture::intent::builtin_intent;

/// Approvals saved for a project: `(action, pattern)`.
pub struct Saved<'a>(pub &'a [(String, String)]);

impl ApprovalLookup for Saved<'_> {
    fn covering(&self, action: &str, resource: &str) -> Option<(DecisionSource, String)> {
        self.0
            .iter()
            .find(|(a, p)| a == action && approval_covers(action, p, resource))
            .map(|(_, p)| (DecisionSource::Saved, p.clone()))
    }
}

/// What answering "always" to the bash command `shown` saves.
pub fn always(fx: &Fixture, shown: &str) -> Vec<(String, String)> {
    let policy = fx.policy(None);
    let input = json!({ "command": fx.expand(shown) });
    let requests = builtin_intent("bash", &input, &fx.location).unwrap();
    judge_call(&policy, requests, &fx.location, &NoApprovals)
        .into_iter()
        .filter(|j| j.verdict.decision.effect == Effect::Ask && j.verdict.reusable)
        .filter_map(|j| {
            let r = j.expanded.request;
            r.save_pattern.map(|p| (r.action, p))
        })
        .collect()
}

/// Whether the default policy allows the bash command `later` with `saved`.
pub fn allowed_with(fx: &Fixture, saved: &[(String, String)], later: &str) -> bool {
    let policy = fx.policy(None);
    let input = json!({ "command": fx.expand(later) });
    match builtin_intent("bash", &input, &fx.location) {
        Ok(requests) => {
            check(&policy, requests, &fx.location, &Saved(saved)).decision == Effect::Allow
        }
        Err(_) => false,
    }
}
