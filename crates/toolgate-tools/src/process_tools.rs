//! Tools that run processes: `bash`, with what it needs to run a command — a
//! process group it can kill, output captured within a memory limit, an
//! environment without secrets, and the port through which it runs confined.
//!
//! [`register`] puts `bash` in a registry under its built-in name.
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
//! assert_eq!(guards.len(), 1);
//! ```

mod bash;
mod command_env;
mod output_capture;
mod process_group;
mod sandbox_port;

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_core::{Registration, Registry, RegistryError};

pub use bash::{BashInput, BashOutput, BashTool, DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS};
pub use command_env::{
    DEFAULT_SECRET_ENV_PATTERNS, GIT_FORCED_CONFIG, confined_env, is_secret_name,
};
pub use output_capture::MEMORY_LIMIT_BYTES;
pub use process_group::KILL_GRACE;
pub use sandbox_port::{CommandSandbox, ConfineRequest, ConfinedCommand, StagedRun};

/// Settings of the process tools.
#[derive(Clone, Debug)]
pub struct ProcessToolsConfig {
    /// Where bash spill files (`tool-output/`, shared with the pipeline's
    /// spills and swept with them) are kept. Default:
    /// `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`, else
    /// `<temp dir>/toolgate`.
    pub data_dir: PathBuf,
    /// Environment variables whose names match one of these patterns (`*` is a
    /// wildcard, case-insensitive) are removed from bash's environment.
    /// Default: [`DEFAULT_SECRET_ENV_PATTERNS`].
    pub secret_env_patterns: Vec<String>,
    /// Confines every bash command; `None`: bash runs unconfined.
    pub sandbox: Option<Arc<dyn CommandSandbox>>,
}

impl Default for ProcessToolsConfig {
    fn default() -> Self {
        ProcessToolsConfig {
            data_dir: crate::default_data_dir(),
            secret_env_patterns: DEFAULT_SECRET_ENV_PATTERNS
                .iter()
                .map(|p| (*p).to_string())
                .collect(),
            sandbox: None,
        }
    }
}

/// Registers `bash` in `registry`. The returned guard keeps the registration
/// alive.
pub fn register(
    registry: &Registry,
    config: &ProcessToolsConfig,
) -> Result<Vec<Registration>, RegistryError> {
    Ok(vec![registry.register("bash", BashTool::new(config))?])
}
