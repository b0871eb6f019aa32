//! `todowrite`: replaces the session's todo list and returns it whole.
//!
//! The list is stored as JSON in `<data_dir>/todos/<session>.json`, written to
//! a temporary file and renamed, so a reader never sees half a list. The file
//! name is the session id when it is made of safe characters, else a hash of
//! it, so no session id can name a path elsewhere.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Location, PermissionRequest, Risk, Tool, ToolContext, ToolError, ToolTraits,
};

use super::SessionToolsConfig;

/// The most todos one list may hold.
const MAX_TODOS: usize = 200;
/// The longest todo text, in characters.
const MAX_CONTENT_CHARS: usize = 2000;
const MAX_PLAIN_SESSION_CHARS: usize = 100;

/// Where a todo stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoStatus {
    /// Not started.
    Pending,
    /// Being worked on.
    InProgress,
    /// Done.
    Completed,
    /// Dropped.
    Cancelled,
}

/// How much a todo matters.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TodoPriority {
    /// Do first.
    High,
    /// Normal.
    Medium,
    /// When there is time.
    Low,
}

/// One todo.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Todo {
    /// What to do.
    pub content: String,
    /// `pending`, `in_progress`, `completed` or `cancelled`.
    pub status: TodoStatus,
    /// `high`, `medium` or `low`.
    pub priority: TodoPriority,
}

/// Input of `todowrite`: the whole new list.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TodoWriteInput {
    /// The complete todo list; it replaces the stored one.
    pub todos: Vec<Todo>,
}

/// Output of `todowrite`: the stored list and counts.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TodoWriteOutput {
    /// The list as stored.
    pub todos: Vec<Todo>,
    /// How many are pending.
    pub pending: usize,
    /// How many are in progress.
    pub in_progress: usize,
    /// How many are completed.
    pub completed: usize,
    /// How many are cancelled.
    pub cancelled: usize,
}

/// The `todowrite` tool.
#[derive(Debug, Clone)]
pub struct TodoWriteTool {
    dir: PathBuf,
}

impl TodoWriteTool {
    /// A todowrite tool storing lists under `config.data_dir/todos`.
    pub fn new(config: &SessionToolsConfig) -> Self {
        TodoWriteTool {
            dir: config.data_dir.join("todos"),
        }
    }

    /// The file holding `session_id`'s list.
    pub fn list_path(&self, session_id: &str) -> PathBuf {
        self.dir
            .join(format!("{}.json", session_file_stem(session_id)))
    }

    /// The stored list of a session (empty when none was written).
    pub fn load(&self, session_id: &str) -> Result<Vec<Todo>, ToolError> {
        let path = self.list_path(session_id);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                ToolError::caused(format!("todo list {} is corrupt", path.display()), e)
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Vec::new()),
            Err(e) => Err(ToolError::io(format!("reading {}", path.display()), e)),
        }
    }
}

fn session_file_stem(session_id: &str) -> String {
    let plain = !session_id.is_empty()
        && session_id.len() <= MAX_PLAIN_SESSION_CHARS
        && session_id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if session_id.is_empty() {
        "s-default".to_string()
    } else if plain {
        format!("s-{session_id}")
    } else {
        format!("h-{}", blake3::hash(session_id.as_bytes()).to_hex())
    }
}

fn check_todos(todos: &[Todo]) -> Result<(), ToolError> {
    if todos.len() > MAX_TODOS {
        return Err(ToolError::InvalidInput(format!(
            "{} todos; at most {MAX_TODOS} are allowed",
            todos.len()
        )));
    }
    for (i, todo) in todos.iter().enumerate() {
        if todo.content.trim().is_empty() {
            return Err(ToolError::InvalidInput(format!(
                "todos[{i}].content is empty"
            )));
        }
        let chars = todo.content.chars().count();
        if chars > MAX_CONTENT_CHARS {
            return Err(ToolError::InvalidInput(format!(
                "todos[{i}].content is {chars} characters; the limit is {MAX_CONTENT_CHARS}"
            )));
        }
    }
    Ok(())
}

fn write_atomically(dir: &Path, path: &Path, bytes: &[u8]) -> Result<(), ToolError> {
    std::fs::create_dir_all(dir)
        .map_err(|e| ToolError::io(format!("creating {}", dir.display()), e))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| ToolError::io(format!("creating a temporary file in {}", dir.display()), e))?;
    std::io::Write::write_all(&mut tmp, bytes)
        .and_then(|()| tmp.as_file().sync_all())
        .map_err(|e| ToolError::io(format!("writing {}", tmp.path().display()), e))?;
    tmp.persist(path)
        .map_err(|e| ToolError::io(format!("saving {}", path.display()), e.error))?;
    Ok(())
}

impl Tool for TodoWriteTool {
    type Input = TodoWriteInput;
    type Output = TodoWriteOutput;

    fn traits(&self) -> ToolTraits {
        // Replaces session state only.
        ToolTraits {
            read_only: false,
            concurrency_safe: false,
            destructive: false,
            open_world: false,
        }
    }

    fn description(&self) -> String {
        "Replaces this session's todo list with `todos` (each {content, status: \
         pending|in_progress|completed|cancelled, priority: high|medium|low}) and returns it."
            .into()
    }

    fn intent(
        &self,
        input: &TodoWriteInput,
        _location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        check_todos(&input.todos)?;
        Ok(vec![PermissionRequest::new(
            "todowrite",
            "session todo list",
            Risk::Read,
        )])
    }

    async fn execute(
        &self,
        input: TodoWriteInput,
        ctx: ToolContext,
    ) -> Result<TodoWriteOutput, ToolError> {
        check_todos(&input.todos)?;
        let path = self.list_path(&ctx.identity.session_id);
        let bytes = serde_json::to_vec_pretty(&input.todos)
            .map_err(|e| ToolError::caused("encoding the todo list", e))?;
        let dir = self.dir.clone();
        tokio::task::spawn_blocking(move || write_atomically(&dir, &path, &bytes))
            .await
            .map_err(|e| ToolError::caused("saving the todo list", e))??;
        let count = |s: TodoStatus| input.todos.iter().filter(|t| t.status == s).count();
        Ok(TodoWriteOutput {
            pending: count(TodoStatus::Pending),
            in_progress: count(TodoStatus::InProgress),
            completed: count(TodoStatus::Completed),
            cancelled: count(TodoStatus::Cancelled),
            todos: input.todos,
        })
    }

    fn project(&self, output: &TodoWriteOutput) -> Vec<Content> {
        if output.todos.is_empty() {
            return vec![Content::text("Todo list is empty.")];
        }
        let lines: Vec<String> = output
            .todos
            .iter()
            .map(|t| {
                let mark = match t.status {
                    TodoStatus::Pending => "[ ]",
                    TodoStatus::InProgress => "[~]",
                    TodoStatus::Completed => "[x]",
                    TodoStatus::Cancelled => "[-]",
                };
                let priority = match t.priority {
                    TodoPriority::High => "high",
                    TodoPriority::Medium => "medium",
                    TodoPriority::Low => "low",
                };
                format!("{mark} {} ({priority})", t.content)
            })
            .collect();
        vec![Content::text(format!(
            "{}\n({} pending, {} in progress, {} completed, {} cancelled)",
            lines.join("\n"),
            output.pending,
            output.in_progress,
            output.completed,
            output.cancelled
        ))]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_ids_never_escape_the_directory() {
        assert_eq!(session_file_stem("abc-1_2"), "s-abc-1_2");
        assert_eq!(session_file_stem(""), "s-default");
        for evil in ["../../etc/passwd", "a/b", "..", "x\0y", &"a".repeat(500)] {
            let stem = session_file_stem(evil);
            assert!(
                stem.starts_with("h-") && !stem.contains('/') && stem.len() == 66,
                "{stem}"
            );
        }
        assert_ne!(session_file_stem("a/b"), session_file_stem("a/c"));
    }
}
