//! [`Builder`]: what a [`Toolgate`] is made of — the location, the config
//! layers, the data directory, who answers asks, and how bash is confined.

use std::path::PathBuf;
use std::sync::Arc;

use toolgate_core::Location;
use toolgate_core::QuestionChannel;
use toolgate_policy::approvals::ApprovalChannel;
use toolgate_policy::config::Mode;
use toolgate_policy::people::Asking;
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_store::Durability;
use toolgate_tools::process_tools::CommandSandbox;

use crate::data_dir::DataDir;
use crate::engine::Toolgate;
use crate::error::BuildError;

/// How bash commands are confined.
#[derive(Clone, Debug, Default)]
pub enum SandboxChoice {
    /// As the policy's `[sandbox]` says, on what this machine supports:
    /// detected when the engine starts (the data directory remembers the
    /// result), with the allowlisting proxy of `[sandbox] allow_domains`
    /// recording its connections in the audit log.
    #[default]
    Detect,
    /// As [`SandboxChoice::Detect`], with this executable as the sandbox's
    /// helper: the program that mounts the staging overlay and confines
    /// itself before it runs the command. By default the helper is the
    /// running program, which must then call
    /// `toolgate_sandbox::run_if_requested()` first thing in `main` (the
    /// `toolgate` command does); an embedder that does not can name the
    /// `toolgate` binary here.
    DetectWithHelper(std::path::PathBuf),
    /// Through the embedder's own sandbox.
    Custom {
        /// Confines each command (or declines to, returning `None`).
        sandbox: Arc<dyn CommandSandbox>,
        /// Whether commands really run confined: mode `auto` allows what runs
        /// confined, so a sandbox that does not confine must say `false`.
        confines: bool,
    },
}

/// Builds a [`Toolgate`]. Only [`Builder::location`] is required; everything
/// else has the defaults of the `toolgate` command.
///
/// Building is cheap: it resolves the location, creates the data directory
/// and loads the policy (so a broken config is reported here, naming its file
/// and line). The audit log, the saved approvals and the sandbox are opened
/// only when a call is first settled (or the catalogue is asked for), so a
/// `check` never touches them.
#[derive(Clone, Default)]
pub struct Builder {
    location: Option<PathBuf>,
    config_files: Vec<PathBuf>,
    user_config: Option<Option<PathBuf>>,
    managed_config: Option<Option<PathBuf>>,
    mode: Option<Mode>,
    data_dir: Option<PathBuf>,
    /// A data directory already located (and created) by the caller.
    located: Option<DataDir>,
    durability: Durability,
    approvals: Option<Arc<dyn ApprovalChannel>>,
    questions: Option<Arc<dyn QuestionChannel>>,
    asking: Option<Asking>,
    sandbox: SandboxChoice,
    session_id: Option<String>,
    agent: Option<String>,
}

impl std::fmt::Debug for Builder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builder")
            .field("location", &self.location)
            .field("config_files", &self.config_files)
            .field("user_config", &self.user_config)
            .field("managed_config", &self.managed_config)
            .field("mode", &self.mode)
            .field("data_dir", &self.data_dir)
            .field("located", &self.located)
            .field("durability", &self.durability)
            .field("approvals", &self.approvals.is_some())
            .field("questions", &self.questions.is_some())
            .field("asking", &self.asking)
            .field("sandbox", &self.sandbox)
            .field("session_id", &self.session_id)
            .field("agent", &self.agent)
            .finish()
    }
}

impl Builder {
    /// A builder with nothing set.
    pub fn new() -> Builder {
        Builder::default()
    }

    /// The workspace's root directory: the tools act inside it, and its
    /// `.toolgate/config.toml` is the project layer. Required.
    pub fn location(mut self, root: impl Into<PathBuf>) -> Builder {
        self.location = Some(root.into());
        self
    }

    /// Adds a session config file, applied after the user and project layers
    /// (the managed layer still wins). The file must exist. Repeatable.
    pub fn config_file(mut self, file: impl Into<PathBuf>) -> Builder {
        self.config_files.push(file.into());
        self
    }

    /// The user layer: `None` for none (default:
    /// `~/.config/toolgate/config.toml`, when it exists).
    pub fn user_config(mut self, file: Option<PathBuf>) -> Builder {
        self.user_config = Some(file);
        self
    }

    /// The managed layer, whose rules are final: `None` for none (default:
    /// `$TOOLGATE_MANAGED_CONFIG`, else `/etc/toolgate/config.toml`, when it
    /// exists).
    pub fn managed_config(mut self, file: Option<PathBuf>) -> Builder {
        self.managed_config = Some(file);
        self
    }

    /// The mode, beating the config's (but not the managed layer's).
    pub fn mode(mut self, mode: Mode) -> Builder {
        self.mode = Some(mode);
        self
    }

    /// Where the audit log, saved approvals, trust records and spilled outputs
    /// live; created with mode 0700 when missing (default:
    /// `$XDG_DATA_HOME/toolgate`, else `~/.local/share/toolgate`).
    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Builder {
        self.data_dir = Some(dir.into());
        self.located = None;
        self
    }

    /// A data directory the caller has located (and created) already: the
    /// same as [`Builder::data_dir`] without looking at the disk again.
    pub fn located_data_dir(mut self, data: DataDir) -> Builder {
        self.located = Some(data);
        self.data_dir = None;
        self
    }

    /// How durable each audit event is before the step goes on (default:
    /// [`Durability::Normal`], which survives a killed process).
    pub fn durability(mut self, durability: Durability) -> Builder {
        self.durability = durability;
        self
    }

    /// Who answers asks (default: nobody, so every ask is denied with "no one
    /// could be asked"). [`crate::terminal::TerminalChannel`] asks on the
    /// terminal; several channels in order are
    /// [`toolgate_policy::approvals::InOrder`].
    pub fn approvals(mut self, channel: Arc<dyn ApprovalChannel>) -> Builder {
        self.approvals = Some(channel);
        self
    }

    /// Who answers the `question` tool (default: nobody, so it fails).
    pub fn questions(mut self, channel: Arc<dyn QuestionChannel>) -> Builder {
        self.questions = Some(channel);
        self
    }

    /// The people asked, for approvals and questions alike, through one
    /// port: one channel ([`Asking::One`]), or named channels tried in the
    /// order of the policy in force at each ask ([`Asking::InPolicyOrder`],
    /// so a reloaded config reorders the next ask). Replaces
    /// [`Builder::approvals`] and [`Builder::questions`].
    pub fn asking(mut self, asking: Asking) -> Builder {
        self.asking = Some(asking);
        self
    }

    /// How bash commands are confined (default: [`SandboxChoice::Detect`]).
    pub fn sandbox(mut self, sandbox: SandboxChoice) -> Builder {
        self.sandbox = sandbox;
        self
    }

    /// The session id recorded with the calls of [`Toolgate::settle`]
    /// (default: a new one).
    pub fn session_id(mut self, id: impl Into<String>) -> Builder {
        self.session_id = Some(id.into());
        self
    }

    /// The agent whose calls these are (`claude-code`, an MCP client's
    /// name, `toolgate`), recorded with every event so that `toolgate log
    /// --agent` can find them (default: not recorded).
    pub fn agent(mut self, agent: impl Into<String>) -> Builder {
        self.agent = Some(agent.into());
        self
    }

    /// Resolves the location, creates the data directory and loads the
    /// policy. Fails on a missing or bad location, a broken config layer
    /// (naming its file and line), or a data directory that cannot be created.
    pub fn build(self) -> Result<Toolgate, BuildError> {
        let root = self.location.clone().ok_or(BuildError::NoLocation)?;
        let location = Location::new(&root).map_err(|source| BuildError::Location {
            path: root.clone(),
            source,
        })?;
        let data = match self.located.clone() {
            Some(data) => data,
            None => DataDir::locate(self.data_dir.as_deref())?,
        }
        .with_durability(self.durability);
        let sources = self.policy_sources(&location, &data);
        let policy = Policy::load(&sources)?;
        Ok(Toolgate::new(crate::engine::Settings {
            location: Arc::new(location),
            data,
            sources,
            policy,
            durability: self.durability,
            approvals: self.approvals,
            questions: self.questions,
            asking: self.asking,
            sandbox: self.sandbox,
            session_id: self.session_id,
            agent: self.agent,
        }))
    }

    /// The policy's layers for this location: the standard places, overridden
    /// as set, with the data directory's trust records.
    fn policy_sources(&self, location: &Location, data: &DataDir) -> PolicySources {
        let mut sources = PolicySources::standard(location.root());
        if let Some(user) = &self.user_config {
            sources.user = user.clone();
        }
        if let Some(managed) = &self.managed_config {
            sources.managed = managed.clone();
        }
        sources.session_files = self.config_files.clone();
        sources.mode = self.mode;
        sources.trust = Some(data.trust_file());
        sources.data_dir = Some(data.root().to_path_buf());
        sources
    }
}
