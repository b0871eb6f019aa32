//! Attacks on the gate's own boundary: what the repository or the model
//! writes must not loosen what the gate decided. One test per class.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/intent.rs"]
mod intent;

use std::fs;
use std::path::Path;

use serde_json::json;
use toolgate_core::{Effect, Location};
use toolgate_policy::check::check;
use toolgate_policy::policy::{NoApprovals, Policy, PolicySources};
use toolgate_policy::trust::{TrustStore, config_key, sha256_hex};

fn write(path: &Path, text: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, text).unwrap();
}

/// A project's policy sources over `root`, with the trust records in `data`.
fn project_sources(root: &Path, home: &Path, data: &Path) -> PolicySources {
    let mut s = PolicySources::bare(root, home);
    s.project = Some(root.join(".toolgate/config.toml"));
    s.trust = Some(data.join("trusted-projects.json"));
    s.data_dir = Some(data.to_path_buf());
    s
}

/// Trust is consent to one file as the policy of one project. A repository
/// whose `.toolgate` directory (or `config.toml`) is a symbolic link to the
/// trusted config of another project reads the same bytes, but what they
/// allow must not apply to it: its own (untrusted) config only tightens.
#[test]
fn a_config_linked_from_another_trusted_project_is_not_trusted() {
    let dir = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(dir.path()).unwrap();
    let (a, b, c, home, data) = (
        base.join("a"),
        base.join("b"),
        base.join("c"),
        base.join("home"),
        base.join("data"),
    );
    for d in [&a, &b, &c, &home] {
        fs::create_dir_all(d).unwrap();
    }
    let text = "[permission.bash]\n\"make *\" = \"allow\"\n";
    write(&a.join(".toolgate/config.toml"), text);
    let store = TrustStore::new(data.join("trusted-projects.json"));
    let key = config_key(&a.join(".toolgate/config.toml"));
    store.trust(&key, &sha256_hex(text.as_bytes())).unwrap();
    // The trusted project itself.
    let policy = Policy::load(&project_sources(&a, &home, &data)).unwrap();
    assert!(policy.project().unwrap().trusted);
    let make = |root: &Path, policy: &Policy| {
        let loc = Location::new(root).unwrap();
        let requests =
            intent::builtin_intent("bash", &json!({ "command": "make all" }), &loc).unwrap();
        check(policy, requests, &loc, &NoApprovals).decision
    };
    assert_eq!(make(&a, &policy), Effect::Allow);
    // `b/.toolgate` -> `a/.toolgate`, `c/.toolgate/config.toml` -> a's file.
    std::os::unix::fs::symlink(a.join(".toolgate"), b.join(".toolgate")).unwrap();
    fs::create_dir_all(c.join(".toolgate")).unwrap();
    std::os::unix::fs::symlink(
        a.join(".toolgate/config.toml"),
        c.join(".toolgate/config.toml"),
    )
    .unwrap();
    for other in [&b, &c] {
        let policy = Policy::load(&project_sources(other, &home, &data)).unwrap();
        assert!(
            !policy.project().unwrap().trusted,
            "{}: trusted through a link to {}",
            other.display(),
            a.display()
        );
        assert_eq!(make(other, &policy), Effect::Ask, "{}", other.display());
    }
}
