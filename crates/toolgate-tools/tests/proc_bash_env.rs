//! bash's environment: secrets withheld, pagers forced. A binary of its own,
//! with one test, because it sets variables in this process.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "proc_support/mod.rs"]
mod support;

use support::Env;
use toolgate_core::Tool;
use toolgate_tools::process_tools::{BashInput, BashTool};

#[test]
fn secret_looking_variables_are_not_passed_on() {
    // SAFETY: this binary has a single test and sets the variables before
    // starting any runtime or thread that reads the environment.
    unsafe {
        std::env::set_var("MY_SERVICE_TOKEN", "tok-value");
        std::env::set_var("OPENAI_API_KEY", "key-value");
        std::env::set_var("DB_PASSWORD", "pw-value");
        std::env::set_var("CLIENT_SECRET", "secret-value");
        std::env::set_var("AWS_ACCESS_KEY_ID", "aws-value");
        std::env::set_var("aws_lowercase", "aws-lower-value");
        std::env::set_var("PAGER", "less");
        std::env::set_var("PLAIN_SETTING", "visible-value");
    }
    let rt = tokio::runtime::Runtime::new().unwrap();
    let mut env = Env::new();
    let run = |env: &Env| {
        rt.block_on(BashTool::new(&env.config).execute(
            BashInput {
                command: "env".into(),
                workdir: None,
                timeout_ms: None,
                description: None,
                unsandboxed: false,
                reason: None,
            },
            env.ctx(),
        ))
        .unwrap()
        .output
    };
    let out = run(&env);
    for leaked in [
        "tok-value",
        "key-value",
        "pw-value",
        "secret-value",
        "aws-value",
        "aws-lower-value",
    ] {
        assert!(!out.contains(leaked), "{leaked} leaked:\n{out}");
    }
    assert!(out.contains("PLAIN_SETTING=visible-value"));
    assert!(out.lines().any(|l| l == "PAGER=cat"), "{out}");
    assert!(out.lines().any(|l| l == "GIT_PAGER=cat"), "{out}");
    assert!(out.contains("PATH="));

    // The patterns are configurable.
    env.config.secret_env_patterns = vec!["PLAIN_*".into()];
    let out = run(&env);
    assert!(!out.contains("visible-value"));
    assert!(out.contains("MY_SERVICE_TOKEN=tok-value"));
}
