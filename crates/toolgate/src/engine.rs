//! [`Toolgate`]: the front door of an embedded toolgate — the catalogue the
//! model is shown, settling a call through the whole pipeline, and checking a
//! call without running it — over one location, one policy and one data
//! directory.

use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use toolgate_core::QuestionChannel;
use toolgate_core::{
    CallIdentity, CallRequest, CallResult, Catalogue, Location, PermissionRequest,
};
use toolgate_policy::approvals::ApprovalChannel;
use toolgate_policy::check::{CheckOutcome, Judgement, explain, judge_call, outcome_for};
use toolgate_policy::config::{Mode, SandboxMode};
use toolgate_policy::people::Asking;
use toolgate_policy::policy::{Policy, PolicySources};
use toolgate_store::Durability;

use crate::builder::SandboxChoice;
use crate::checking::{IntentTools, SavedApprovals};
use crate::data_dir::DataDir;
use crate::error::{BuildError, CheckError, SettleError};
use crate::started::{Parts, Started};

/// What a [`crate::Builder`] hands over.
pub(crate) struct Settings {
    pub location: Arc<Location>,
    pub data: DataDir,
    pub sources: PolicySources,
    pub policy: Policy,
    pub durability: Durability,
    pub approvals: Option<Arc<dyn ApprovalChannel>>,
    pub questions: Option<Arc<dyn QuestionChannel>>,
    pub asking: Option<Asking>,
    pub sandbox: SandboxChoice,
    pub session_id: Option<String>,
    pub agent: Option<String>,
}

/// toolgate for one location: the built-in tools behind the policy gate, an
/// audit log and bounded output. Made by [`crate::Builder`].
///
/// Its parts are made when first needed, each once: [`Toolgate::check`] uses
/// the policy, the tools' intents and (read-only) the saved approvals;
/// [`Toolgate::catalogue`] and [`Toolgate::settle`] start the engine, which
/// opens the audit log and the approvals and detects the sandbox.
pub struct Toolgate {
    location: Arc<Location>,
    data: DataDir,
    sources: PolicySources,
    durability: Durability,
    approvals: Option<Arc<dyn ApprovalChannel>>,
    questions: Option<Arc<dyn QuestionChannel>>,
    asking: Option<Asking>,
    sandbox: SandboxChoice,
    agent: Option<String>,
    /// Made on first use (a `check` never needs one).
    session_id: OnceLock<String>,
    project_notice: Option<String>,
    project_broken: bool,
    /// The policy as loaded by the builder, until the engine or a check takes it.
    loaded: Mutex<Option<Policy>>,
    /// The policy checks judge with before the engine starts.
    checking: OnceLock<Arc<Policy>>,
    intents: OnceLock<IntentTools>,
    saved: SavedApprovals,
    started: OnceLock<Started>,
}

impl std::fmt::Debug for Toolgate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Toolgate")
            .field("location", &self.location.root())
            .field("data_dir", &self.data.root())
            .field("session_id", &self.session_id)
            .field("started", &self.started.get().is_some())
            .finish_non_exhaustive()
    }
}

/// Nobody to ask: the embedder gave no approval channel.
struct Nobody;

#[async_trait::async_trait]
impl ApprovalChannel for Nobody {
    async fn ask(
        &self,
        _prompt: &toolgate_policy::approvals::AskPrompt,
    ) -> Result<toolgate_policy::approvals::Answer, toolgate_policy::approvals::ChannelError> {
        Err(toolgate_policy::approvals::ChannelError::Unavailable(
            "no approval channel was given (Builder::approvals)".into(),
        ))
    }
}

impl Toolgate {
    pub(crate) fn new(settings: Settings) -> Toolgate {
        let Settings {
            location,
            data,
            sources,
            policy,
            durability,
            approvals,
            questions,
            asking,
            sandbox,
            session_id,
            agent,
        } = settings;
        let saved = SavedApprovals::new(&sources, &data, location.root());
        Toolgate {
            project_notice: policy.project_notice(),
            project_broken: policy.project_error().is_some(),
            session_id: session_id.map(OnceLock::from).unwrap_or_default(),
            location,
            data,
            sources,
            durability,
            approvals,
            questions,
            asking,
            sandbox,
            agent,
            loaded: Mutex::new(Some(policy)),
            checking: OnceLock::new(),
            intents: OnceLock::new(),
            saved,
            started: OnceLock::new(),
        }
    }

    /// `[store]` and `[identity]` as this toolgate's config layers set them.
    pub fn team_config(&self) -> Result<crate::team::TeamConfig, crate::team::TeamError> {
        crate::team::TeamConfig::load(&self.sources)
    }

    /// The location the tools act in.
    pub fn location(&self) -> &Arc<Location> {
        &self.location
    }

    /// The data directory.
    pub fn data_dir(&self) -> &DataDir {
        &self.data
    }

    /// The session id of the calls [`Toolgate::settle`] makes.
    pub fn session_id(&self) -> &str {
        self.session_id
            .get_or_init(|| crate::ids::new_id("session"))
    }

    /// What to tell a person at start about the project's config, in one line:
    /// a broken one ignored, or an untrusted one whose loosening entries are
    /// ignored.
    pub fn project_notice(&self) -> Option<&str> {
        self.project_notice.as_deref()
    }

    /// Whether the project's config is broken (and was ignored as a whole).
    pub fn project_config_broken(&self) -> bool {
        self.project_broken
    }

    /// The engine, started on first use: opens the audit log and the saved
    /// approvals, detects the sandbox and registers the built-in tools.
    pub fn start(&self) -> Result<&Started, BuildError> {
        if let Some(started) = self.started.get() {
            return Ok(started);
        }
        let mut loaded = self.lock_loaded();
        if let Some(started) = self.started.get() {
            return Ok(started);
        }
        // A check before the first call took the loaded policy: the engine
        // gets its own, as the sandbox it detects may differ.
        let policy = match loaded.take() {
            Some(policy) => policy,
            None => Policy::load(&self.sources)?,
        };
        let started = Started::wire(Parts {
            policy,
            sources: self.sources.clone(),
            location: &self.location,
            data: &self.data,
            durability: self.durability,
            approvals: self.approvals.clone().unwrap_or_else(|| Arc::new(Nobody)),
            questions: self.questions.clone(),
            asking: self.asking.clone(),
            sandbox: &self.sandbox,
            agent: self.agent.clone(),
        })?;
        drop(loaded);
        Ok(self.started.get_or_init(|| started))
    }

    /// The catalogue the model is shown: every tool whose action the policy
    /// does not deny wholesale. Starts the engine.
    pub fn catalogue(&self) -> Result<Catalogue, BuildError> {
        Ok(self.start()?.engine().materialize())
    }

    /// Settles one call of this session through the whole pipeline: the tool
    /// is looked up in `catalogue`, its input decoded, its intent judged (asks
    /// go to the approval channel), and only then does it run; every step is
    /// in the audit log, and the output is bounded.
    pub async fn settle(
        &self,
        catalogue: &Catalogue,
        tool: &str,
        input: Value,
    ) -> Result<CallResult, SettleError> {
        let call = CallRequest {
            name: tool.to_string(),
            input,
            identity: CallIdentity {
                session_id: self.session_id().to_string(),
                call_id: crate::ids::new_id("call"),
                ..CallIdentity::default()
            },
        };
        self.settle_call(catalogue, call, CancellationToken::new())
            .await
    }

    /// [`Toolgate::settle`] with the caller's identity and a token that
    /// cancels the call (as dropping the future does).
    pub async fn settle_call(
        &self,
        catalogue: &Catalogue,
        call: CallRequest,
        cancel: CancellationToken,
    ) -> Result<CallResult, SettleError> {
        let engine = self.start()?.engine();
        Ok(engine
            .settle(catalogue, call, Arc::clone(&self.location), cancel)
            .await?)
    }

    /// Answers allow / ask / deny for a call without running it, as a real
    /// call would be decided (saved approvals count; nothing is asked, run or
    /// recorded). Does not start the engine.
    pub fn check(&self, tool: &str, input: &Value) -> Result<CheckOutcome, CheckError> {
        let (policy, judged) = self.judge(tool, input)?;
        Ok(outcome_for(&policy, &judged))
    }

    /// Judges the paths a confined command changed where nobody can be
    /// asked (`toolgate sandbox exec`): a plain write inside the location
    /// lands; a protected path, a credential or a path outside the location
    /// lands only when a rule or a saved approval allows writing it; the
    /// rest is refused with the reason.
    ///
    /// Each path comes with whether it is a created file of certificates
    /// only ([`toolgate_core::StagedChange::certificates_only`]).
    pub fn judge_staged_unasked(
        &self,
        paths: &[(std::path::PathBuf, bool)],
    ) -> Result<Vec<toolgate_core::StagedVerdict>, CheckError> {
        let policy = self.policy()?;
        let mut out = Vec::with_capacity(paths.len());
        for (path, certificates_only) in paths {
            if toolgate_policy::gate::staged_write_lands_unasked(
                &policy,
                &self.location,
                path,
                *certificates_only,
            ) {
                out.push(toolgate_core::StagedVerdict {
                    land: true,
                    reason: "written inside the location by an allowed command".into(),
                });
                continue;
            }
            let input = serde_json::json!({"path": path, "content": ""});
            let outcome = self.check("write", &input)?;
            out.push(toolgate_core::StagedVerdict {
                land: outcome.decision == toolgate_core::Effect::Allow,
                reason: match outcome.decision {
                    toolgate_core::Effect::Allow => outcome.reason,
                    _ => format!("{} (nobody can be asked here)", outcome.reason),
                },
            });
        }
        Ok(out)
    }

    /// Judges several calls of the built-in tools and `extra` requests as
    /// one call (its decision is the strictest of all their requests), as
    /// [`Toolgate::check`] judges one: what `toolgate hook` asks of the gate
    /// for another agent's tool call. Does not start the engine.
    pub fn check_calls(
        &self,
        calls: &[(&str, &Value)],
        extra: Vec<PermissionRequest>,
    ) -> Result<CheckOutcome, CheckError> {
        let policy = self.policy()?;
        let intents = self.intents(&policy)?;
        let mut requests = extra;
        for (tool, input) in calls {
            requests.extend(intents.requests(tool, input, &self.location)?);
        }
        let judged = judge_call(&policy, requests, &self.location, &self.saved);
        Ok(outcome_for(&policy, &judged))
    }

    /// Each request of a call, its risk, and why it is allowed, asked or
    /// denied, as `toolgate policy explain` prints it.
    pub fn explain(&self, tool: &str, input: &Value) -> Result<String, CheckError> {
        let (policy, judged) = self.judge(tool, input)?;
        Ok(explain(&policy, tool, input, &judged))
    }

    /// The policy calls are judged with: the engine's current one once it has
    /// started, else the one the builder loaded.
    pub fn policy(&self) -> Result<Arc<Policy>, BuildError> {
        if let Some(started) = self.started.get() {
            return Ok(started.gate().policy());
        }
        if let Some(policy) = self.checking.get() {
            return Ok(Arc::clone(policy));
        }
        let mut loaded = self.lock_loaded();
        if let Some(started) = self.started.get() {
            return Ok(started.gate().policy());
        }
        let mut policy = match loaded.take() {
            Some(policy) => policy,
            None => match self.checking.get() {
                Some(policy) => return Ok(Arc::clone(policy)),
                None => Policy::load(&self.sources)?,
            },
        };
        // Only mode `auto` depends on the sandbox: read it only then, from
        // the data directory's record of the last detection, so that a check
        // spawns nothing.
        if policy.mode() == Mode::Auto && policy.sandbox().mode != Some(SandboxMode::Off) {
            let support = toolgate_sandbox::detect_cached(&self.data.sandbox_cache());
            policy.set_sandbox_available(support.available && support.staging);
        }
        Ok(Arc::clone(self.checking.get_or_init(|| Arc::new(policy))))
    }

    fn judge(
        &self,
        tool: &str,
        input: &Value,
    ) -> Result<(Arc<Policy>, Vec<Judgement>), CheckError> {
        let policy = self.policy()?;
        let requests = self
            .intents(&policy)?
            .requests(tool, input, &self.location)?;
        let judged = judge_call(&policy, requests, &self.location, &self.saved);
        Ok((policy, judged))
    }

    fn intents(&self, policy: &Policy) -> Result<&IntentTools, BuildError> {
        if let Some(tools) = self.intents.get() {
            return Ok(tools);
        }
        let config = crate::started::tools_config(policy, &self.location, &self.data);
        let tools = IntentTools::new(&config)?;
        Ok(self.intents.get_or_init(|| tools))
    }

    fn lock_loaded(&self) -> MutexGuard<'_, Option<Policy>> {
        // The guarded value is only ever taken whole, so a panic elsewhere
        // cannot leave it half-changed.
        self.loaded.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
