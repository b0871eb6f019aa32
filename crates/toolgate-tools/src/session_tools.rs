//! Tools that work with the session and its user: `todowrite` (the session's
//! todo list), `question` (asks the user) and `skill` (loads a skill's
//! instructions).
//!
//! [`register`] puts the three tools in a registry under their built-in names.
//!
//! ```
//! use toolgate_core::Registry;
//! use toolgate_tools::session_tools::{register, SessionToolsConfig};
//!
//! let registry = Registry::new();
//! let dir = tempfile::tempdir().unwrap();
//! let config = SessionToolsConfig {
//!     data_dir: dir.path().to_path_buf(),
//!     ..SessionToolsConfig::default()
//! };
//! let guards = register(&registry, &config).unwrap();
//! assert_eq!(guards.len(), 3);
//! ```

mod question;
mod skill;
mod todowrite;

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_core::{Registration, Registry, RegistryError};

pub use question::{
    Answer, Question, QuestionChannel, QuestionError, QuestionInput, QuestionOutput, QuestionTool,
};
pub use skill::{SkillInput, SkillOutput, SkillTool};
pub use todowrite::{
    Todo, TodoPriority, TodoStatus, TodoWriteInput, TodoWriteOutput, TodoWriteTool,
};

/// Settings of the session tools.
#[derive(Clone)]
pub struct SessionToolsConfig {
    /// Where todo lists (`todos/`) are kept. Default:
    /// `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`, else
    /// `<temp dir>/toolgate`.
    pub data_dir: PathBuf,
    /// How `question` reaches the user; `None` makes `question` fail with a
    /// message saying no channel is configured.
    pub question: Option<Arc<dyn QuestionChannel>>,
    /// The user's skills directory. Default: `$XDG_CONFIG_HOME/toolgate/skills`,
    /// else `~/.config/toolgate/skills`.
    pub user_skills_dir: Option<PathBuf>,
}

impl Default for SessionToolsConfig {
    fn default() -> Self {
        SessionToolsConfig {
            data_dir: crate::default_data_dir(),
            question: None,
            user_skills_dir: default_user_skills_dir(),
        }
    }
}

impl std::fmt::Debug for SessionToolsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionToolsConfig")
            .field("data_dir", &self.data_dir)
            .field("question", &self.question.as_ref().map(|_| "<channel>"))
            .field("user_skills_dir", &self.user_skills_dir)
            .finish()
    }
}

fn default_user_skills_dir() -> Option<PathBuf> {
    crate::env_dir("XDG_CONFIG_HOME")
        .map(|d| d.join("toolgate/skills"))
        .or_else(|| crate::env_dir("HOME").map(|h| h.join(".config/toolgate/skills")))
}

/// Registers `todowrite`, `question` and `skill` in `registry`. The returned
/// guards keep the registrations alive.
pub fn register(
    registry: &Registry,
    config: &SessionToolsConfig,
) -> Result<Vec<Registration>, RegistryError> {
    Ok(vec![
        registry.register("todowrite", TodoWriteTool::new(config))?,
        registry.register("question", QuestionTool::new(config))?,
        registry.register("skill", SkillTool::new(config))?,
    ])
}
