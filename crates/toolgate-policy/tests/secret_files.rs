//! Secret files the credential table knows by name, ending or shape (issue
//! 25, point 2): reading them by any tool is `credential` and denied by
//! default, in every mode; names compare without regard to case. Each test
//! is named for the attack it holds.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::intent;

use std::path::PathBuf;

use intent::builtin_intent;
use serde_json::json;
use toolgate_core::{Effect, Location, Risk};
use toolgate_policy::check::{CheckOutcome, check};
use toolgate_policy::config::Mode;
use toolgate_policy::policy::{NoApprovals, Policy};

struct Ws {
    _dir: tempfile::TempDir,
    root: PathBuf,
    home: PathBuf,
    loc: Location,
}

fn ws() -> Ws {
    let dir = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(dir.path()).unwrap();
    let (root, home) = (base.join("ws"), base.join("home"));
    std::fs::create_dir_all(root.join(".git")).unwrap();
    std::fs::create_dir_all(&home).unwrap();
    let loc = Location::new(&root).unwrap();
    Ws {
        _dir: dir,
        root,
        home,
        loc,
    }
}

fn judge(w: &Ws, mode: Mode, tool: &str, input: serde_json::Value) -> CheckOutcome {
    let mut p = Policy::from_texts(&w.root, &w.home, &[], Some(mode)).unwrap();
    p.set_sandbox_available(true);
    let requests = builtin_intent(tool, &input, &w.loc).unwrap();
    check(&p, requests, &w.loc, &NoApprovals)
}

/// Every way of reading `paths` (relative to the location, or `~/…`) is a
/// denied credential, in every mode.
fn assert_secret(paths: &[&str]) {
    let w = ws();
    for path in paths {
        let full = match path.strip_prefix("~/") {
            Some(rest) => w.home.join(rest),
            None => w.root.join(path),
        };
        for mode in [Mode::Default, Mode::AcceptEdits, Mode::Auto] {
            for (tool, input) in [
                ("read", json!({ "path": full })),
                (
                    "bash",
                    json!({ "command": format!("cat '{}'", full.display()) }),
                ),
                (
                    "bash",
                    json!({ "command": format!("head -n 1 '{}'", full.display()) }),
                ),
                ("write", json!({ "path": full, "content": "x" })),
            ] {
                let o = judge(&w, mode, tool, input);
                assert_eq!(
                    o.decision,
                    Effect::Deny,
                    "{tool} {path} in {mode}: {}",
                    o.reason
                );
                assert_eq!(o.risk, Risk::Credential, "{tool} {path} in {mode}");
            }
        }
    }
}

#[test]
fn reading_the_rails_master_key_is_denied() {
    assert_secret(&[
        "config/master.key",
        "config/credentials/production.key",
        "CONFIG/MASTER.KEY",
    ]);
}

#[test]
fn reading_a_private_key_or_key_store_is_denied() {
    assert_secret(&[
        "certs/server.pem",
        "tls/privkey.PEM",
        "keys/app.p12",
        "keys/app.pfx",
        "android/release.keystore",
        "java/store.jks",
        "putty.ppk",
    ]);
}

#[test]
fn reading_terraform_state_is_denied() {
    assert_secret(&[
        "terraform.tfstate",
        "infra/terraform.tfstate.backup",
        "envs/prod.tfstate",
    ]);
}

#[test]
fn reading_local_worker_secrets_is_denied() {
    assert_secret(&[".dev.vars", "worker/.dev.vars.staging"]);
}

#[test]
fn reading_a_service_account_key_is_denied() {
    assert_secret(&[
        "service-account.json",
        "deploy/service-account-prod.json",
        "gcp/my-project-credentials.json",
        "client_secret_1234.apps.googleusercontent.com.json",
        "credentials.json",
    ]);
}

#[test]
fn reading_agents_and_registries_tokens_in_home_is_denied() {
    assert_secret(&[
        "~/.claude/.credentials.json",
        "~/.codex/auth.json",
        "~/.config/github-copilot/hosts.json",
        "~/.cargo/credentials.toml",
        "~/.cargo/credentials",
        "~/.gem/credentials",
        "~/.m2/settings.xml",
        "~/.gradle/gradle.properties",
        "~/.terraform.d/credentials.tfrc.json",
        "~/.pgpass",
        "~/.pypirc",
        "~/_netrc",
        "~/.azure/msal_token_cache.json",
        "~/.config/gcloud/application_default_credentials.json",
        "~/.password-store/work/email.gpg",
        "~/.local/share/keyrings/login.keyring",
        "~/.vault-token",
    ]);
}

#[test]
fn reading_an_npmrc_anywhere_is_denied() {
    assert_secret(&[".npmrc", "packages/web/.npmrc", "sub/.NPMRC"]);
}

#[test]
fn look_alikes_of_secret_files_stay_readable() {
    let w = ws();
    for path in [
        "src/keys.rs",
        "docs/pem.md",
        "service-account.md",
        "key.txt",
        "monkey.rs",
    ] {
        let o = judge(
            &w,
            Mode::Default,
            "read",
            json!({ "path": w.root.join(path) }),
        );
        assert_eq!(o.decision, Effect::Allow, "{path}: {}", o.reason);
    }
}

#[test]
fn npm_config_get_of_a_registry_token_is_a_credential_read_said_as_such() {
    // `npm config get //registry.npmjs.org/:_authToken` prints the token
    // (review s36: it was asked as "outside the location", the key taken
    // for the directory `/registry.npmjs.org`). A key outside the settings
    // known to hold no credential is a credential read, and says so.
    let w = ws();
    for command in [
        "npm config get //registry.npmjs.org/:_authToken",
        "npm config get //npm.pkg.github.com/:_authToken",
        "npm config get //registry.example.com/npm/:_password",
        "npm config get _authToken",
        "npm config get _auth",
        "npm get //registry.npmjs.org/:_authToken",
        "npm config get registry //registry.npmjs.org/:_authToken",
        "pnpm config get //registry.npmjs.org/:_authToken",
        "npm config get https-proxy",
    ] {
        for mode in [Mode::Default, Mode::Auto] {
            let out = judge(&w, mode, "bash", json!({ "command": command }));
            assert_eq!(
                out.decision,
                Effect::Deny,
                "{command} ({mode:?}): {}",
                out.reason
            );
            assert_eq!(out.risk, Risk::Credential, "{command}: {}", out.reason);
            assert!(
                out.reason.contains("credential") && !out.reason.contains("outside the location"),
                "{command}: the reason does not say what it prints: {}",
                out.reason
            );
        }
    }
    // A setting that holds no credential is not denied.
    for command in ["npm config get registry", "npm config get save-exact"] {
        let out = judge(&w, Mode::Default, "bash", json!({ "command": command }));
        assert_ne!(out.decision, Effect::Deny, "{command}: {}", out.reason);
    }
}

#[test]
fn reading_documented_secret_files_of_ansible_dynaconf_azure_android_and_firebase_is_denied() {
    // Each is its tool's documented place for secrets (the table cites the
    // documentation); all were readable (review s37, on main's build).
    assert_secret(&[
        ".vault_pass",
        ".vault_pass.txt",
        "ansible/vault_pass.txt",
        ".secrets.toml",
        "config/.secrets.toml",
        "local.settings.json",
        "api/local.settings.json",
        "keystore.properties",
        "android/keystore.properties",
        "serviceAccountKey.json",
    ]);
}
