//! `[serve]` across layers: the last layer that sets it wins, the managed
//! layer last of all, and the project layer may not set it.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;

use toolgate_policy::config::TokenSource;
use toolgate_policy::policy::Policy;
use toolgate_policy::rules::Layer;

fn policy(texts: &[(&str, Layer, &str)]) -> Result<Policy, toolgate_policy::config::ConfigError> {
    Policy::from_texts(Path::new("/ws"), Path::new("/home/u"), texts, None)
}

#[test]
fn the_last_layer_that_sets_serve_wins() {
    let user = (
        "/home/u/.config/toolgate/config.toml",
        Layer::User,
        "[serve]\ntoken_env = \"A\"\n",
    );
    let session = (
        "/tmp/s.toml",
        Layer::Session,
        "[serve]\ntoken_file = \"t\"\n",
    );
    let managed = (
        "/etc/toolgate/config.toml",
        Layer::Managed,
        "[serve]\ntoken_env = \"M\"\n",
    );
    let p = policy(&[user]).unwrap();
    assert_eq!(
        p.serve_config().unwrap().token,
        TokenSource::Env("A".into())
    );
    let p = policy(&[session, user]).unwrap();
    let s = p.serve_config().unwrap();
    assert_eq!(s.token, TokenSource::File("/tmp/t".into()));
    assert_eq!(s.origin, "/tmp/s.toml:2");
    let p = policy(&[managed, session, user]).unwrap();
    assert_eq!(
        p.serve_config().unwrap().token,
        TokenSource::Env("M".into())
    );
    assert!(policy(&[]).unwrap().serve_config().is_none());
}

#[test]
fn a_project_layer_serve_fails_the_whole_load() {
    let e = policy(&[(
        "/ws/.toolgate/config.toml",
        Layer::Project,
        "mode = \"default\"\n[serve]\ntoken_env = \"HOME\"\n",
    )])
    .unwrap_err();
    assert_eq!((e.file.as_str(), e.line), ("/ws/.toolgate/config.toml", 2));
}
