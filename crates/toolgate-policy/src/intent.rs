//! The intents of the built-in tools, computed from their DESIGN.md inputs.
//!
//! The tools crate computes the same requests in each tool's `intent`, and
//! `toolgate check` asks the tools themselves (so it refuses exactly what they
//! refuse); this copy serves the policy crate's own tests and documentation,
//! and as an oracle for the tools' intents. It emits *base* requests, as the
//! tools do; the gate does all raising.
//!
//! ```
//! use serde_json::json;
//! use toolgate_core::{Location, Risk};
//! use toolgate_policy::intent::builtin_intent;
//! let dir = tempfile::tempdir().unwrap();
//! let loc = Location::new(dir.path()).unwrap();
//! let reqs = builtin_intent("write", &json!({"path": "a.txt", "content": "x"}), &loc).unwrap();
//! assert_eq!(reqs[0].action, "edit");
//! assert_eq!(reqs[0].risk, Risk::Write);
//! assert_eq!(reqs[0].note.as_deref(), Some("create"));
//! ```

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;
use toolgate_core::{Location, PathError, PermissionRequest, ResolvedPath, Risk};

/// Why an intent could not be computed.
#[derive(Debug, thiserror::Error)]
pub enum IntentError {
    /// Not a built-in tool.
    #[error("unknown tool {0:?}; the built-in tools are: {list}", list = BUILTIN_TOOLS.join(", "))]
    UnknownTool(String),
    /// The input does not fit the tool.
    #[error("invalid input for {tool}: {message}")]
    InvalidInput {
        /// The tool.
        tool: String,
        /// What is wrong.
        message: String,
    },
    /// A path could not be resolved.
    #[error(transparent)]
    Path(#[from] PathError),
}

/// The built-in tool names.
pub const BUILTIN_TOOLS: &[&str] = &[
    "read",
    "write",
    "edit",
    "apply_patch",
    "bash",
    "list",
    "glob",
    "grep",
    "webfetch",
    "websearch",
    "todowrite",
    "question",
    "skill",
];

#[derive(Deserialize)]
struct PathIn {
    path: String,
}
#[derive(Deserialize)]
struct OptPathIn {
    path: Option<String>,
}
#[derive(Deserialize)]
struct PatchIn {
    patch: String,
}
#[derive(Deserialize)]
struct BashIn {
    command: String,
    workdir: Option<String>,
    #[serde(default)]
    unsandboxed: bool,
    #[serde(default)]
    reason: Option<String>,
}
#[derive(Deserialize)]
struct UrlIn {
    url: String,
}
#[derive(Deserialize)]
struct QueryIn {
    query: String,
}
#[derive(Deserialize)]
struct QuestionIn {
    question: String,
}
#[derive(Deserialize)]
struct QuestionsIn {
    questions: Vec<QuestionIn>,
}
#[derive(Deserialize)]
struct NameIn {
    name: String,
}

fn decode<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, IntentError> {
    if !input.is_object() {
        return Err(IntentError::InvalidInput {
            tool: tool.into(),
            message: "the input must be a JSON object".into(),
        });
    }
    serde_json::from_value(input.clone()).map_err(|e| IntentError::InvalidInput {
        tool: tool.into(),
        message: e.to_string(),
    })
}

/// `/dir/*` for a file, the save pattern of edits (its siblings).
fn sibling_pattern(p: &ResolvedPath) -> Option<String> {
    let dir = p.path.parent()?;
    let dir = dir.display().to_string();
    Some(if dir == "/" {
        "/*".into()
    } else {
        format!("{dir}/*")
    })
}

fn path_request(action: &str, p: &ResolvedPath, risk: Risk) -> PermissionRequest {
    PermissionRequest::new(action, p.path.display().to_string(), risk)
}

fn edit_request(p: &ResolvedPath, note: &str) -> PermissionRequest {
    path_request("edit", p, Risk::Write)
        .with_save_pattern(sibling_pattern(p))
        .with_note(note)
}

/// The base requests of a built-in tool call.
pub fn builtin_intent(
    tool: &str,
    input: &Value,
    location: &Location,
) -> Result<Vec<PermissionRequest>, IntentError> {
    let root = || location.root().display().to_string();
    Ok(match tool {
        "read" => {
            let i: PathIn = decode(tool, input)?;
            vec![path_request(
                "read",
                &location.resolve(&i.path)?,
                Risk::Read,
            )]
        }
        "list" | "glob" | "grep" => {
            let i: OptPathIn = decode(tool, input)?;
            let p = location.resolve(i.path.as_deref().unwrap_or(&root()))?;
            vec![path_request(tool, &p, Risk::Read)]
        }
        "write" => {
            let i: PathIn = decode(tool, input)?;
            let p = location.resolve(&i.path)?;
            let note = if p.exists { "overwrite" } else { "create" };
            vec![edit_request(&p, note)]
        }
        "edit" => {
            let i: PathIn = decode(tool, input)?;
            vec![edit_request(&location.resolve(&i.path)?, "update")]
        }
        "apply_patch" => {
            let i: PatchIn = decode(tool, input)?;
            patch_requests(&i.patch, location)?
        }
        "bash" => {
            let i: BashIn = decode(tool, input)?;
            let cwd = location.resolve(i.workdir.as_deref().unwrap_or(&root()))?;
            let cwd = cwd.path.display().to_string();
            let mut requests = Vec::new();
            if i.unsandboxed {
                requests.push(unsandboxed_request(&i.command, i.reason.as_deref(), &cwd));
            }
            requests.insert(
                0,
                PermissionRequest::new("bash", i.command, Risk::Execute).with_cwd(cwd),
            );
            requests
        }
        "webfetch" => {
            let i: UrlIn = decode(tool, input)?;
            let pattern = url_save_pattern(&i.url);
            vec![
                PermissionRequest::new("webfetch", i.url, Risk::Network).with_save_pattern(pattern),
            ]
        }
        "websearch" => {
            let i: QueryIn = decode(tool, input)?;
            vec![PermissionRequest::new("websearch", i.query, Risk::Network)]
        }
        "skill" => {
            let i: NameIn = decode(tool, input)?;
            vec![PermissionRequest::new("skill", i.name.trim(), Risk::Read)]
        }
        "todowrite" => {
            let _: serde_json::Map<String, Value> = decode(tool, input)?;
            vec![PermissionRequest::new(
                "todowrite",
                "session todo list",
                Risk::Read,
            )]
        }
        "question" => {
            let i: QuestionsIn = decode(tool, input)?;
            let summary: Vec<&str> = i.questions.iter().map(|q| q.question.trim()).collect();
            vec![PermissionRequest::new(
                "question",
                summary.join("\n"),
                Risk::Read,
            )]
        }
        other => return Err(IntentError::UnknownTool(other.to_string())),
    })
}

/// `scheme://host/*`: an approval covers the host, never more.
fn url_save_pattern(url: &str) -> Option<String> {
    let (scheme, rest) = url.split_once("://")?;
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let host = &rest[..end];
    if host.is_empty() || host.contains('@') || host.contains(['*', '?']) {
        return None;
    }
    Some(format!("{scheme}://{host}/*"))
}

/// One request per file a patch touches, all resolved before any is judged.
fn patch_requests(patch: &str, location: &Location) -> Result<Vec<PermissionRequest>, IntentError> {
    let invalid = |message: String| IntentError::InvalidInput {
        tool: "apply_patch".into(),
        message,
    };
    let mut lines = patch.lines().map(str::trim_end);
    if lines.next().map(str::trim) != Some("*** Begin Patch") {
        return Err(invalid(
            "the patch must start with `*** Begin Patch`".into(),
        ));
    }
    let mut out = Vec::new();
    let mut ended = false;
    for line in lines {
        let (note, path) = if let Some(p) = line.strip_prefix("*** Add File: ") {
            ("add", p)
        } else if let Some(p) = line.strip_prefix("*** Update File: ") {
            ("update", p)
        } else if let Some(p) = line.strip_prefix("*** Delete File: ") {
            ("delete", p)
        } else if let Some(p) = line.strip_prefix("*** Move to: ") {
            // The file being updated moves: its source is a move-from.
            if let Some(last) = out.last_mut() {
                let last: &mut PermissionRequest = last;
                last.note = Some("move-from".into());
            }
            ("move-to", p)
        } else if line.trim() == "*** End Patch" {
            ended = true;
            break;
        } else {
            continue;
        };
        let p = location.resolve(path.trim())?;
        out.push(edit_request(&p, note));
    }
    if !ended {
        return Err(invalid("the patch must end with `*** End Patch`".into()));
    }
    if out.is_empty() {
        return Err(invalid("the patch touches no file".into()));
    }
    Ok(out)
}

/// The extra request of a bash call that asks to run outside the sandbox:
/// action `bash_unsandboxed`, which no config rule can name, at risk
/// `destructive`, so it is asked every time (even when a rule allows the
/// command) and no approval of it is saved.
pub fn unsandboxed_request(command: &str, reason: Option<&str>, cwd: &str) -> PermissionRequest {
    let why = reason
        .map(str::trim)
        .filter(|r| !r.is_empty())
        .unwrap_or("no reason given");
    PermissionRequest::new("bash_unsandboxed", command, Risk::Destructive)
        .with_cwd(cwd)
        .with_note(format!("run outside the sandbox: {why}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn patch_lists_every_file() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Location::new(dir.path()).unwrap();
        let patch = "*** Begin Patch\n*** Add File: a.txt\n+x\n*** Update File: b.txt\n*** Move to: c.txt\n@@\n-a\n+b\n*** Delete File: d.txt\n*** End Patch\n";
        let reqs = builtin_intent("apply_patch", &json!({ "patch": patch }), &loc).unwrap();
        let notes: Vec<_> = reqs.iter().map(|r| r.note.clone().unwrap()).collect();
        assert_eq!(notes, ["add", "move-from", "move-to", "delete"]);
        assert!(
            reqs.iter()
                .all(|r| r.action == "edit" && r.risk == Risk::Write)
        );
        assert!(reqs[0].resource.ends_with("/a.txt"));
    }

    #[test]
    fn bad_inputs_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let loc = Location::new(dir.path()).unwrap();
        let e = builtin_intent("read", &json!({}), &loc).unwrap_err();
        assert!(e.to_string().contains("path"), "{e}");
        let e = builtin_intent("nope", &json!({}), &loc).unwrap_err();
        assert!(e.to_string().contains("unknown tool"), "{e}");
        let e = builtin_intent("apply_patch", &json!({"patch": "hello"}), &loc).unwrap_err();
        assert!(e.to_string().contains("Begin Patch"), "{e}");
        let e = builtin_intent("read", &json!({"path": "a\u{0}b"}), &loc).unwrap_err();
        assert!(e.to_string().contains("NUL"), "{e}");
        let e = builtin_intent("bash", &json!("ls"), &loc).unwrap_err();
        assert!(e.to_string().contains("object"), "{e}");
    }

    #[test]
    fn webfetch_saves_the_host_only() {
        assert_eq!(
            url_save_pattern("https://docs.rs/regex/latest?x=1"),
            Some("https://docs.rs/*".into())
        );
        assert_eq!(url_save_pattern("https://u:p@h/x"), None);
    }
}
