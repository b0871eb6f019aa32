//! One mapping table per agent, as data: each of the agent's own tools and
//! what toolgate judges it as. A tool that is in no table and is not an MCP
//! tool is asked.
//!
//! Field lists name the input fields to read, first present wins (agents
//! renamed fields across versions: Gemini's `absolute_path` became
//! `file_path`).

use crate::Agent;

/// Input field names, first present wins.
pub type Fields = &'static [&'static str];

/// What an agent's tool is judged as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Map {
    /// A shell command (string, or an argv array), run in `workdir` (else
    /// the agent's cwd): through toolgate's shell analyser.
    Shell {
        /// The command.
        command: Fields,
        /// The directory it runs in.
        workdir: Fields,
    },
    /// Reads one file.
    Read {
        /// The path.
        path: Fields,
    },
    /// Reads several files (an array of paths).
    ReadMany {
        /// The paths.
        paths: Fields,
    },
    /// Writes, edits, creates or deletes one file.
    Write {
        /// The path.
        path: Fields,
    },
    /// Lists a directory.
    List {
        /// The directory (default: the working directory).
        path: Fields,
    },
    /// Finds files by a glob pattern.
    Glob {
        /// The pattern.
        pattern: Fields,
        /// The directory searched.
        path: Fields,
    },
    /// Searches file contents.
    Grep {
        /// The pattern.
        pattern: Fields,
        /// The file or directory searched.
        path: Fields,
    },
    /// Fetches a URL.
    Fetch {
        /// The URL.
        url: Fields,
    },
    /// Fetches the URLs written in a prompt (Gemini's `web_fetch`).
    FetchInPrompt {
        /// The prompt.
        prompt: Fields,
    },
    /// A web search.
    Search {
        /// The query.
        query: Fields,
    },
    /// Applies a patch (the `*** Begin Patch` format).
    Patch {
        /// The patch text.
        patch: Fields,
    },
    /// Acts only inside the agent (todo lists, questions to the person,
    /// plans, starting a sub-agent whose own tools are hooked): allowed.
    Internal,
}

/// One row: the agent's tool name and what it is judged as.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The agent's tool name, exactly as the payload carries it.
    pub tool: &'static str,
    /// What it is judged as.
    pub map: Map,
}

const fn row(tool: &'static str, map: Map) -> Row {
    Row { tool, map }
}

/// Claude Code's tools (hooks reference; file paths are absolute).
pub const CLAUDE_CODE: &[Row] = &[
    row(
        "Bash",
        Map::Shell {
            command: &["command"],
            workdir: &[],
        },
    ),
    row(
        "Read",
        Map::Read {
            path: &["file_path"],
        },
    ),
    row(
        "NotebookRead",
        Map::Read {
            path: &["notebook_path"],
        },
    ),
    row(
        "Write",
        Map::Write {
            path: &["file_path"],
        },
    ),
    row(
        "Edit",
        Map::Write {
            path: &["file_path"],
        },
    ),
    row(
        "MultiEdit",
        Map::Write {
            path: &["file_path"],
        },
    ),
    row(
        "NotebookEdit",
        Map::Write {
            path: &["notebook_path"],
        },
    ),
    row(
        "Glob",
        Map::Glob {
            pattern: &["pattern"],
            path: &["path"],
        },
    ),
    row(
        "Grep",
        Map::Grep {
            pattern: &["pattern"],
            path: &["path"],
        },
    ),
    row("LS", Map::List { path: &["path"] }),
    row("WebFetch", Map::Fetch { url: &["url"] }),
    row("WebSearch", Map::Search { query: &["query"] }),
    row("TodoWrite", Map::Internal),
    row("Task", Map::Internal),
    row("Agent", Map::Internal),
    row("ExitPlanMode", Map::Internal),
    row("AskUserQuestion", Map::Internal),
    row("BashOutput", Map::Internal),
    row("KillShell", Map::Internal),
    row("KillBash", Map::Internal),
];

/// Codex's tools (its hooks run for the shell, `apply_patch` and MCP tools).
pub const CODEX: &[Row] = &[
    row(
        "Bash",
        Map::Shell {
            command: &["command", "cmd"],
            workdir: &["workdir", "cwd"],
        },
    ),
    row(
        "shell",
        Map::Shell {
            command: &["command", "cmd"],
            workdir: &["workdir", "cwd"],
        },
    ),
    row(
        "exec_command",
        Map::Shell {
            command: &["cmd", "command"],
            workdir: &["workdir", "cwd"],
        },
    ),
    row(
        "apply_patch",
        Map::Patch {
            patch: &["patch", "input", "command"],
        },
    ),
    row("update_plan", Map::Internal),
    row("web_search", Map::Search { query: &["query"] }),
    row("view_image", Map::Read { path: &["path"] }),
];

/// Gemini CLI's tools (tools reference).
pub const GEMINI: &[Row] = &[
    row(
        "run_shell_command",
        Map::Shell {
            command: &["command"],
            workdir: &["dir_path", "directory"],
        },
    ),
    row(
        "read_file",
        Map::Read {
            path: &["file_path", "absolute_path", "path"],
        },
    ),
    row(
        "read_many_files",
        Map::ReadMany {
            paths: &["paths", "include"],
        },
    ),
    row(
        "write_file",
        Map::Write {
            path: &["file_path", "absolute_path"],
        },
    ),
    row(
        "replace",
        Map::Write {
            path: &["file_path", "absolute_path"],
        },
    ),
    row(
        "glob",
        Map::Glob {
            pattern: &["pattern"],
            path: &["dir_path", "path"],
        },
    ),
    row(
        "search_file_content",
        Map::Grep {
            pattern: &["pattern"],
            path: &["dir_path", "path"],
        },
    ),
    row(
        "grep_search",
        Map::Grep {
            pattern: &["pattern"],
            path: &["dir_path", "path"],
        },
    ),
    row(
        "list_directory",
        Map::List {
            path: &["dir_path", "path"],
        },
    ),
    row(
        "web_fetch",
        Map::FetchInPrompt {
            prompt: &["prompt", "url"],
        },
    ),
    row("google_web_search", Map::Search { query: &["query"] }),
    row("write_todos", Map::Internal),
    row("codebase_investigator", Map::Internal),
    row("cli_help", Map::Internal),
];

/// Cursor's tools (`preToolUse` names, and the `before*` events read as
/// `Shell`, `Read`).
pub const CURSOR: &[Row] = &[
    row(
        "Shell",
        Map::Shell {
            command: &["command"],
            workdir: &["cwd", "working_directory"],
        },
    ),
    row(
        "Read",
        Map::Read {
            path: &["file_path", "path", "target_file"],
        },
    ),
    row(
        "Write",
        Map::Write {
            path: &["file_path", "path", "target_file"],
        },
    ),
    row(
        "Edit",
        Map::Write {
            path: &["file_path", "path", "target_file"],
        },
    ),
    row(
        "StrReplace",
        Map::Write {
            path: &["file_path", "path", "target_file"],
        },
    ),
    row(
        "MultiEdit",
        Map::Write {
            path: &["file_path", "path", "target_file"],
        },
    ),
    row(
        "Delete",
        Map::Write {
            path: &["file_path", "path", "target_file"],
        },
    ),
    row(
        "Grep",
        Map::Grep {
            pattern: &["pattern", "query"],
            path: &["path", "target_directory"],
        },
    ),
    row(
        "Glob",
        Map::Glob {
            pattern: &["glob_pattern", "pattern"],
            path: &["target_directory", "path"],
        },
    ),
    row(
        "LS",
        Map::List {
            path: &["target_directory", "path"],
        },
    ),
    row("WebFetch", Map::Fetch { url: &["url"] }),
    row(
        "WebSearch",
        Map::Search {
            query: &["search_term", "query"],
        },
    ),
    row("TodoWrite", Map::Internal),
    row("Task", Map::Internal),
];

/// GitHub Copilot CLI's tools.
pub const COPILOT: &[Row] = &[
    row(
        "bash",
        Map::Shell {
            command: &["command"],
            workdir: &["cwd"],
        },
    ),
    row("view", Map::Read { path: &["path"] }),
    row("create", Map::Write { path: &["path"] }),
    row("edit", Map::Write { path: &["path"] }),
    row("str_replace", Map::Write { path: &["path"] }),
    row(
        "glob",
        Map::Glob {
            pattern: &["pattern"],
            path: &["path"],
        },
    ),
    row(
        "grep",
        Map::Grep {
            pattern: &["pattern"],
            path: &["path"],
        },
    ),
    row("web_fetch", Map::Fetch { url: &["url"] }),
    row("read_bash", Map::Internal),
    row("stop_bash", Map::Internal),
    row("report_intent", Map::Internal),
    row("update_todo", Map::Internal),
    row("task", Map::Internal),
];

/// OpenCode's tools, as its plugin sees them.
pub const OPENCODE: &[Row] = &[
    row(
        "bash",
        Map::Shell {
            command: &["command"],
            workdir: &["workdir"],
        },
    ),
    row(
        "read",
        Map::Read {
            path: &["filePath"],
        },
    ),
    row(
        "write",
        Map::Write {
            path: &["filePath"],
        },
    ),
    row(
        "edit",
        Map::Write {
            path: &["filePath"],
        },
    ),
    row(
        "multiedit",
        Map::Write {
            path: &["filePath"],
        },
    ),
    row(
        "patch",
        Map::Patch {
            patch: &["patchText"],
        },
    ),
    row(
        "apply_patch",
        Map::Patch {
            patch: &["patchText"],
        },
    ),
    row(
        "glob",
        Map::Glob {
            pattern: &["pattern"],
            path: &["path"],
        },
    ),
    row(
        "grep",
        Map::Grep {
            pattern: &["pattern"],
            path: &["path"],
        },
    ),
    row("list", Map::List { path: &["path"] }),
    row("webfetch", Map::Fetch { url: &["url"] }),
    row("websearch", Map::Search { query: &["query"] }),
    row("codesearch", Map::Search { query: &["query"] }),
    row("todowrite", Map::Internal),
    row("todoread", Map::Internal),
    row("task", Map::Internal),
    row("question", Map::Internal),
];

/// The mapping table of `agent`.
pub fn table(agent: Agent) -> &'static [Row] {
    match agent {
        Agent::ClaudeCode => CLAUDE_CODE,
        Agent::Codex => CODEX,
        Agent::Gemini | Agent::Agy => GEMINI,
        Agent::Cursor => CURSOR,
        Agent::Copilot => COPILOT,
        Agent::OpenCode => OPENCODE,
    }
}

/// The row of `agent`'s tool `tool`, if its table has one.
pub fn lookup(agent: Agent, tool: &str) -> Option<&'static Row> {
    table(agent).iter().find(|r| r.tool == tool)
}
