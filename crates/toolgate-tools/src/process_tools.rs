//! Process, web and session tools: `bash`, `webfetch`, `websearch`, `todowrite`,
//! `question` and `skill`.
//!
//! Each tool lives in its own module under `process_tools/`; the helpers they
//! share (process groups, output capture, the network guard, HTML conversion)
//! sit beside them. [`register`] puts every tool in a registry under its
//! DESIGN.md name.
//!
//! ```
//! use toolgate_core::Registry;
//! use toolgate_tools::process_tools::{register, ProcessToolsConfig};
//!
//! let registry = Registry::new();
//! let dir = tempfile::tempdir().unwrap();
//! let config = ProcessToolsConfig {
//!     data_dir: dir.path().to_path_buf(),
//!     ..ProcessToolsConfig::default()
//! };
//! let guards = register(&registry, &config).unwrap();
//! assert_eq!(guards.len(), 6);
//! ```

mod bash;
mod html_text;
mod net_guard;
mod output_capture;
mod process_group;
mod question;
mod sandbox_port;
mod secret_env;
mod skill;
mod todowrite;
mod webfetch;
mod websearch;

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_core::{Registration, Registry, RegistryError};

pub use bash::{BashInput, BashOutput, BashTool, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS};
pub use net_guard::forbidden_reason;
pub use output_capture::MEMORY_LIMIT_BYTES;
pub use process_group::KILL_GRACE;
pub use question::{
    Answer, Question, QuestionChannel, QuestionError, QuestionInput, QuestionOutput, QuestionTool,
};
pub use sandbox_port::{CommandSandbox, ConfineRequest, ConfinedCommand};
pub use secret_env::{DEFAULT_SECRET_ENV_PATTERNS, GIT_FORCED_CONFIG, is_secret_name};
pub use skill::{SkillInput, SkillOutput, SkillTool};
pub use todowrite::{
    Todo, TodoPriority, TodoStatus, TodoWriteInput, TodoWriteOutput, TodoWriteTool,
};
pub use webfetch::{
    FetchFormat, MAX_REDIRECTS, MAX_RESPONSE_BYTES, WebFetchInput, WebFetchOutput, WebFetchTool,
};
pub use websearch::{
    BRAVE_API_KEY_ENV, BRAVE_ENDPOINT, BraveSearch, SearchError, SearchProvider, SearchResult,
    WebSearchConfig, WebSearchInput, WebSearchOutput, WebSearchTool,
};

/// Settings of the process, web and session tools.
#[derive(Clone)]
pub struct ProcessToolsConfig {
    /// Where bash spill files (`tool-output/`, shared with the pipeline's spills and swept with them) and todo lists (`todos/`) are
    /// kept. Default: `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`,
    /// else `<temp dir>/toolgate`.
    pub data_dir: PathBuf,
    /// Environment variables whose names match one of these patterns (`*` is a
    /// wildcard, case-insensitive) are removed from bash's environment.
    /// Default: [`DEFAULT_SECRET_ENV_PATTERNS`].
    pub secret_env_patterns: Vec<String>,
    /// Lets webfetch reach loopback, private, link-local and other non-public
    /// addresses. Default `false`.
    pub allow_private_network: bool,
    /// Exact `host:port` pairs webfetch may reach even when they resolve to a
    /// non-public address (for example `127.0.0.1:8080` or `[::1]:3000`). The
    /// host is compared as written in the URL, lower-cased; the port is the
    /// URL's port or the scheme's default.
    pub allowed_hosts: Vec<String>,
    /// The search provider used by websearch.
    pub websearch: WebSearchConfig,
    /// How `question` reaches the user; `None` makes `question` fail with a
    /// message saying no channel is configured.
    pub question: Option<Arc<dyn QuestionChannel>>,
    /// The user's skills directory. Default: `$XDG_CONFIG_HOME/toolgate/skills`,
    /// else `~/.config/toolgate/skills`.
    pub user_skills_dir: Option<PathBuf>,
    /// Confines every bash command; `None`: bash runs unconfined.
    pub sandbox: Option<Arc<dyn CommandSandbox>>,
}

impl Default for ProcessToolsConfig {
    fn default() -> Self {
        ProcessToolsConfig {
            data_dir: default_data_dir(),
            secret_env_patterns: DEFAULT_SECRET_ENV_PATTERNS
                .iter()
                .map(|p| (*p).to_string())
                .collect(),
            allow_private_network: false,
            allowed_hosts: Vec::new(),
            websearch: WebSearchConfig::default(),
            question: None,
            user_skills_dir: default_user_skills_dir(),
            sandbox: None,
        }
    }
}

impl std::fmt::Debug for ProcessToolsConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessToolsConfig")
            .field("data_dir", &self.data_dir)
            .field("secret_env_patterns", &self.secret_env_patterns)
            .field("allow_private_network", &self.allow_private_network)
            .field("allowed_hosts", &self.allowed_hosts)
            .field("websearch", &self.websearch)
            .field("question", &self.question.as_ref().map(|_| "<channel>"))
            .field("user_skills_dir", &self.user_skills_dir)
            .field("sandbox", &self.sandbox)
            .finish()
    }
}

fn env_dir(var: &str) -> Option<PathBuf> {
    std::env::var_os(var)
        .map(PathBuf::from)
        .filter(|p| p.is_absolute())
}

fn default_data_dir() -> PathBuf {
    env_dir("XDG_DATA_HOME")
        .map(|d| d.join("toolgate"))
        .or_else(|| env_dir("HOME").map(|h| h.join(".local/share/toolgate")))
        .unwrap_or_else(|| std::env::temp_dir().join("toolgate"))
}

fn default_user_skills_dir() -> Option<PathBuf> {
    env_dir("XDG_CONFIG_HOME")
        .map(|d| d.join("toolgate/skills"))
        .or_else(|| env_dir("HOME").map(|h| h.join(".config/toolgate/skills")))
}

/// Registers `bash`, `webfetch`, `websearch`, `todowrite`, `question` and
/// `skill` in `registry`. The returned guards keep the registrations alive.
pub fn register(
    registry: &Registry,
    config: &ProcessToolsConfig,
) -> Result<Vec<Registration>, RegistryError> {
    Ok(vec![
        registry.register("bash", BashTool::new(config))?,
        registry.register("webfetch", WebFetchTool::new(config))?,
        registry.register("websearch", WebSearchTool::new(config))?,
        registry.register("todowrite", TodoWriteTool::new(config))?,
        registry.register("question", QuestionTool::new(config))?,
        registry.register("skill", SkillTool::new(config))?,
    ])
}
