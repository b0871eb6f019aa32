//! The requests an upstream tool call implies, found by the kinds of its
//! arguments: the call itself (`mcp`, `NAME__tool`, and the action
//! `NAME__tool` for rules that name the tool as an action), every path (`read`, and
//! `edit` unless the tool is trusted read-only), every URL (`webfetch`; one
//! naming a non-public address literally is refused before anyone is asked,
//! as the built-in `webfetch` refuses it) and every `command` (`bash`, for
//! the shell analyser).

use serde_json::{Map, Value};
use toolgate_core::{Location, PermissionRequest, Risk, ToolError};

/// The action of an upstream tool call.
pub const MCP_ACTION: &str = "mcp";

/// How deep arguments are searched.
const MAX_DEPTH: usize = 16;
/// How many strings are looked at, at most.
const MAX_STRINGS: usize = 512;

/// The requests of one call of the upstream tool exposed as `exposed`.
pub fn requests(
    exposed: &str,
    arguments: &Map<String, Value>,
    location: &Location,
    read_only: bool,
) -> Result<Vec<PermissionRequest>, ToolError> {
    let risk = if read_only { Risk::Read } else { Risk::Write };
    let mut out = vec![
        PermissionRequest::new(MCP_ACTION, exposed, risk).with_save_pattern(Some(exposed.into())),
    ];
    let mut budget = MAX_STRINGS;
    for (key, value) in arguments {
        walk(key, value, 0, location, read_only, &mut budget, &mut out)?;
    }
    Ok(out)
}

/// The request of a rule that names the tool as the action (`[permission]
/// "NAME__tool" = "deny"`): judged at `read`, so that only such a rule
/// changes anything, and judged only when the policy has one
/// ([`PreparedCall::when_named`](toolgate_core::PreparedCall::when_named)).
pub fn named_as_action(exposed: &str) -> PermissionRequest {
    PermissionRequest::new(exposed, "*", Risk::Read)
}

fn walk(
    key: &str,
    value: &Value,
    depth: usize,
    location: &Location,
    read_only: bool,
    budget: &mut usize,
    out: &mut Vec<PermissionRequest>,
) -> Result<(), ToolError> {
    if depth > MAX_DEPTH {
        return Err(ToolError::InvalidInput(
            "arguments nested too deeply to judge".into(),
        ));
    }
    match value {
        Value::String(s) => {
            if *budget == 0 {
                return Err(ToolError::InvalidInput(
                    "too many strings in the arguments to judge".into(),
                ));
            }
            *budget -= 1;
            judge_string(key, s, location, read_only, out)
        }
        Value::Array(items) => items
            .iter()
            .try_for_each(|v| walk(key, v, depth + 1, location, read_only, budget, out)),
        Value::Object(map) => map
            .iter()
            .try_for_each(|(k, v)| walk(k, v, depth + 1, location, read_only, budget, out)),
        _ => Ok(()),
    }
}

fn judge_string(
    key: &str,
    s: &str,
    location: &Location,
    read_only: bool,
    out: &mut Vec<PermissionRequest>,
) -> Result<(), ToolError> {
    let key = key.to_ascii_lowercase();
    if matches!(key.as_str(), "command" | "cmd" | "script" | "shell") && !s.trim().is_empty() {
        out.push(PermissionRequest::command("bash", s, Risk::Execute));
    } else if looks_like_url(s) {
        // The built-in web tools run with the default network settings;
        // an upstream is held to the same.
        let config = toolgate_tools::web_tools::WebToolsConfig::default();
        if let Some(refusal) = toolgate_tools::web_tools::literal_refusal(&config, s) {
            return Err(ToolError::Failed(refusal));
        }
        out.push(PermissionRequest::url("webfetch", s.trim(), Risk::Network));
    } else if looks_like_path(&key, s) {
        let resolved = location.resolve(s)?;
        let path = resolved.path.to_string_lossy().into_owned();
        out.push(PermissionRequest::path("read", path.clone(), Risk::Read));
        if !read_only {
            out.push(
                PermissionRequest::path("edit", path, Risk::Write)
                    .with_note("a path given to an upstream tool that may write it"),
            );
        }
    }
    Ok(())
}

/// A URL with a scheme that reaches something.
fn looks_like_url(s: &str) -> bool {
    let s = s.trim_start().to_ascii_lowercase();
    [
        "http://", "https://", "ws://", "wss://", "ftp://", "file://",
    ]
    .iter()
    .any(|p| s.starts_with(p))
}

/// An absolute or home path anywhere, or any short one-line string under a
/// key that names a path.
fn looks_like_path(key: &str, s: &str) -> bool {
    if s.is_empty() || s.len() > 4096 || s.contains('\n') {
        return false;
    }
    if s.starts_with('/')
        || s == "~"
        || s.starts_with("~/")
        || s.starts_with("./")
        || s.starts_with("../")
        // A secret file's name is a path under any key (`{"name": ".env"}`).
        || toolgate_core::credential::names_credential_file(s)
    {
        return true;
    }
    [
        "path",
        "file",
        "dir",
        "folder",
        "root",
        "source",
        "destination",
        "target",
        "cwd",
    ]
    .iter()
    .any(|k| key.contains(k))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn kinds_from_arguments() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let args = json!({"path": "a.txt", "url": "https://example.com/x", "command": "ls",
                          "nested": {"files": ["/etc/passwd"]}, "note": "hello", "n": 3});
        let r = requests("fs__read", args.as_object().unwrap(), &location, false).unwrap();
        let got: Vec<(String, String)> = r
            .iter()
            .map(|r| (r.action.clone(), r.resource.clone()))
            .collect();
        assert_eq!(got[0], ("mcp".into(), "fs__read".into()));
        assert!(got.iter().any(|(a, r)| a == "bash" && r == "ls"));
        assert!(got.iter().any(|(a, _)| a == "webfetch"));
        assert!(got.iter().any(|(a, r)| a == "read" && r == "/etc/passwd"));
        assert!(got.iter().any(|(a, r)| a == "edit" && r.ends_with("a.txt")));
        assert!(!got.iter().any(|(_, r)| r.contains("hello")));
        let r = requests("fs__read", args.as_object().unwrap(), &location, true).unwrap();
        assert!(!r.iter().any(|r| r.action == "edit"));
    }

    /// SSRF through an upstream: a URL argument naming a cloud metadata,
    /// loopback or private address literally is refused before anyone is
    /// asked, with the built-in `webfetch`'s message (an approval must not
    /// be able to send an upstream there).
    #[test]
    fn a_metadata_address_in_upstream_arguments_is_refused_before_anyone_is_asked() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for url in [
            "http://169.254.169.254/latest/meta-data/",
            "https://127.0.0.1:8080/admin",
            "http://[::ffff:10.0.0.1]/",
        ] {
            let args = json!({"name": "x.gz", "nested": {"data": url}});
            let err =
                requests("ev__gzip", args.as_object().unwrap(), &location, false).expect_err(url);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{url}: {err}"
            );
        }
        let public = json!({"data": "https://example.com/x"});
        let r = requests("ev__gzip", public.as_object().unwrap(), &location, false).unwrap();
        assert!(r.iter().any(|r| r.action == "webfetch"));
    }

    /// A secret file named under a key that does not say "path" is still
    /// judged as a path (review s36: `{"name": ".env"}` was not).
    #[test]
    fn a_secret_file_named_under_any_key_is_judged_as_a_path() {
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        let args =
            json!({"name": ".env", "key": "deploy/id_rsa", "glob": "**/.npmrc", "q": "README"});
        let r = requests("fs__get", args.as_object().unwrap(), &location, true).unwrap();
        for secret in [".env", "deploy/id_rsa", "**/.npmrc"] {
            assert!(
                r.iter()
                    .any(|r| r.action == "read" && r.resource.ends_with(secret)),
                "{secret}: {r:?}"
            );
        }
        assert!(!r.iter().any(|r| r.resource.ends_with("README")));
    }

    #[test]
    fn a_private_address_spelled_another_way_is_refused_too() {
        // The class: any spelling the URL parser reads as a private,
        // loopback or link-local address (IPv6 loopback, an IPv4 address
        // as one decimal or hex number, a short dotted form, a URL in an
        // array or behind a user part).
        let dir = tempfile::tempdir().unwrap();
        let location = Location::new(dir.path()).unwrap();
        for url in [
            "http://[::1]:9000/",
            "http://2130706433/",
            "http://0x7f.1/",
            "http://user@169.254.169.254/",
        ] {
            let args = json!({"urls": ["https://example.com/", url]});
            let err =
                requests("ev__gzip", args.as_object().unwrap(), &location, false).expect_err(url);
            assert!(
                err.to_string().contains("refusing to fetch"),
                "{url}: {err}"
            );
        }
    }
}
