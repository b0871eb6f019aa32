//! The environment by allowlist (issue 25, point 3): a variable inherited
//! from the environment is judged by the sandbox's allowlist. Where toolgate
//! does not run the command (`check`, hooks) expanding one the allowlist does
//! not name is at least `ask`, and `credential` when its name looks secret or
//! its value is a connection string with a password; under toolgate's own
//! bash tool, confined, only allowlisted variables exist, so expanding any
//! other is harmless.
//!
//! The analyser reads the environment it runs in, so the attacks run in a
//! child process (this test binary, one test) with the variables exported.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::fixture;

use std::process::Command;

use fixture::intent::builtin_intent;
use fixture::{Fixture, assert_allowed, assert_asked, assert_denied_credential, default_decision};
use serde_json::json;
use toolgate_core::Effect;
use toolgate_policy::check::check;
use toolgate_policy::policy::NoApprovals;
use toolgate_policy::shell::analyze;

/// Set in the child: it runs the attacks instead of spawning.
const CHILD_ENV: &str = "TOOLGATE_TEST_ENV_ALLOWLIST_CHILD";

/// What a developer's shell exports.
const EXPORTED: &[(&str, &str)] = &[
    ("DATABASE_URL", "postgres://app:s3cret@db:5432/app"),
    ("PGPASSWORD", "s3cret"),
    ("MYSQL_PWD", "s3cret"),
    ("SECRET_KEY_BASE", "0123456789abcdef"),
    ("SENTRY_DSN", "https://abc@o1.ingest.sentry.io/1"),
    ("TOOLGATE_TEST_CONN", "amqp://guest:guest@localhost:5672/"),
    ("TOOLGATE_TEST_PLAIN", "just a value"),
    ("EDITOR", "vim"),
];

fn run_in_child(test: &str) -> bool {
    if std::env::var_os(CHILD_ENV).is_some() {
        return false;
    }
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args([
        fixture::harness_name(module_path!(), test).as_str(),
        "--exact",
        "--nocapture",
        "--test-threads",
        "1",
    ])
    .env(CHILD_ENV, "1");
    for (name, value) in EXPORTED {
        cmd.env(name, value);
    }
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "child failed:\n{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    true
}

#[test]
fn expanding_a_secret_variable_is_denied_as_credential() {
    if run_in_child("expanding_a_secret_variable_is_denied_as_credential") {
        return;
    }
    let fx = Fixture::new();
    for command in [
        "echo $DATABASE_URL",
        "echo \"$PGPASSWORD\"",
        "printf '%s\\n' \"${MYSQL_PWD}\"",
        "echo $SECRET_KEY_BASE",
        "echo $SENTRY_DSN > notes.txt",
        "echo $TOOLGATE_TEST_CONN",
        "cat README.md | grep \"$TEST_DATABASE_URL\"",
        "echo $REDIS_URL",
        "echo $STRIPE_API_KEY",
        "echo $SMTP_PASS",
        "curl -H \"Authorization: Bearer $GH_PAT\" https://api.github.com/user",
    ] {
        let parts = fx.analyze(command);
        assert_denied_credential(command, &parts);
    }
}

#[test]
fn expanding_an_inherited_variable_off_the_allowlist_is_asked_by_check_and_hooks() {
    if run_in_child("expanding_an_inherited_variable_off_the_allowlist_is_asked_by_check_and_hooks")
    {
        return;
    }
    let fx = Fixture::new();
    for command in [
        "echo $TOOLGATE_TEST_PLAIN",
        "echo \"${TOOLGATE_TEST_PLAIN}\"",
        "printf %s $EDITOR",
        "ls; echo $TOOLGATE_TEST_PLAIN",
    ] {
        let parts = assert_asked(&fx, command);
        assert!(
            parts
                .iter()
                .any(|p| p.reason.contains("allowlist does not name")),
            "{command}: {parts:?}"
        );
    }
    // The allowlisted ones, names the environment does not hold, and the
    // line's own variables stay read.
    for command in [
        "echo $HOME",
        "echo $PATH",
        "echo $LANG $TERM $USER",
        "echo $TOOLGATE_TEST_NOT_EXPORTED",
        "x=1; echo $x",
    ] {
        assert_allowed(&fx, command);
    }
}

#[test]
fn expanding_an_inherited_variable_is_harmless_under_toolgates_own_confined_bash() {
    if run_in_child("expanding_an_inherited_variable_is_harmless_under_toolgates_own_confined_bash")
    {
        return;
    }
    let fx = Fixture::new();
    let mut ctx = fx.ctx("");
    ctx.inherited_env = false;
    let parts = analyze("echo $TOOLGATE_TEST_PLAIN $EDITOR", &ctx);
    assert_eq!(default_decision(&parts), Effect::Allow, "{parts:?}");
    // A secret name is still a credential: the person may add it to
    // `[sandbox] env`.
    let parts = analyze("echo $DATABASE_URL", &ctx);
    assert_eq!(default_decision(&parts), Effect::Deny, "{parts:?}");
    // Through the policy: the engine that runs calls, with a sandbox.
    let mut policy = fx.policy(None);
    let input = json!({ "command": "echo $TOOLGATE_TEST_PLAIN" });
    let requests = || builtin_intent("bash", &input, &fx.location).unwrap();
    let asked = check(&policy, requests(), &fx.location, &NoApprovals);
    assert_eq!(asked.decision, Effect::Ask, "check: {}", asked.reason);
    policy.set_runs_commands(true);
    policy.set_sandbox_available(true);
    let run = check(&policy, requests(), &fx.location, &NoApprovals);
    assert_eq!(run.decision, Effect::Allow, "engine: {}", run.reason);
    // Without a sandbox, toolgate's bash tool passes the environment on.
    policy.set_sandbox_available(false);
    let unconfined = check(&policy, requests(), &fx.location, &NoApprovals);
    assert_eq!(unconfined.decision, Effect::Ask, "{}", unconfined.reason);
}
