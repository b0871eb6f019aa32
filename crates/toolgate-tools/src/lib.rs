//! # toolgate-tools
//!
//! The built-in tools of toolgate. Each returns its full domain output with an
//! output schema; bounding is the pipeline's job, and no tool asks the user itself.
//!
//! File tools (read, write, edit, apply_patch, list, glob, grep) live in
//! [`file_tools`]; process, web and session tools (bash, webfetch, websearch,
//! todowrite, question, skill) in [`process_tools`].

#![deny(missing_docs)]

pub mod file_tools;
pub mod process_tools;

use serde_json::Value;
use toolgate_core::{
    Location, PermissionRequest, PrepareError, Registration, Registry, RegistryError, intent_of,
};

/// Configuration of every built-in tool.
#[derive(Clone, Debug, Default)]
pub struct BuiltinConfig {
    /// Settings of the file tools.
    pub files: file_tools::FileToolsConfig,
    /// Settings of the process, web and session tools.
    pub process: process_tools::ProcessToolsConfig,
}

/// Registers every built-in tool in `registry` under its DESIGN.md name. The
/// returned guards keep the registrations alive.
pub fn register_builtins(
    registry: &Registry,
    config: &BuiltinConfig,
) -> Result<Vec<Registration>, RegistryError> {
    let mut guards = file_tools::register(registry, &config.files)?;
    guards.extend(process_tools::register(registry, &config.process)?);
    Ok(guards)
}

/// The names of the built-in tools, as [`register_builtins`] registers them.
pub const BUILTIN_TOOL_NAMES: &[&str] = &[
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

/// What the built-in tool `name` would ask for with `input`, computed by the
/// tool itself exactly as a real call prepares it (decoding, every input
/// check, the intent), without registering anything or building any schema:
/// for answering about a call without running it (`toolgate check`). An input
/// the tool refuses is refused here with the same error. `None` when `name` is
/// not a built-in tool.
///
/// ```
/// use serde_json::json;
/// use toolgate_core::Location;
/// use toolgate_tools::{BuiltinConfig, builtin_intent};
/// let dir = tempfile::tempdir().unwrap();
/// let loc = Location::new(dir.path()).unwrap();
/// let config = BuiltinConfig::default();
/// let reqs = builtin_intent("read", &json!({"path": "a.txt"}), &loc, &config).unwrap().unwrap();
/// assert_eq!(reqs[0].action, "read");
/// let refused = builtin_intent("glob", &json!({"pattern": "/etc/*"}), &loc, &config).unwrap();
/// assert!(refused.unwrap_err().to_string().contains("absolute"));
/// assert!(builtin_intent("nope", &json!({}), &loc, &config).is_none());
/// ```
pub fn builtin_intent(
    name: &str,
    input: &Value,
    location: &Location,
    config: &BuiltinConfig,
) -> Option<Result<Vec<PermissionRequest>, PrepareError>> {
    use file_tools::*;
    use process_tools::*;
    let files = || FileState::new(config.files.clone());
    let process = &config.process;
    Some(match name {
        "read" => intent_of(&ReadTool::new(files()), input, location),
        "write" => intent_of(&WriteTool::new(files()), input, location),
        "edit" => intent_of(&EditTool::new(files()), input, location),
        "apply_patch" => intent_of(&ApplyPatchTool::new(files()), input, location),
        "list" => intent_of(&ListTool::new(files()), input, location),
        "glob" => intent_of(&GlobTool::new(files()), input, location),
        "grep" => intent_of(&GrepTool::new(files()), input, location),
        "bash" => intent_of(&BashTool::new(process), input, location),
        "webfetch" => intent_of(&WebFetchTool::new(process), input, location),
        "websearch" => intent_of(&WebSearchTool::new(process), input, location),
        "todowrite" => intent_of(&TodoWriteTool::new(process), input, location),
        "question" => intent_of(&QuestionTool::new(process), input, location),
        "skill" => intent_of(&SkillTool::new(process), input, location),
        _ => return None,
    })
}
