//! [`PolicyGate`]: the policy as the settle pipeline's [`Gate`].
//!
//! `evaluate` expands and raises the call's requests and judges each with the
//! current policy, saved approvals (through the [`ApprovalStore`] port) and this
//! process's session approvals. `resolve` asks a person through the
//! [`ApprovalChannel`] port, with a timeout, honouring cancellation, and applies
//! the answer: `always` is saved per project and resolves the other pending asks of
//! the session it now covers; a reject without a message also rejects them.
//!
//! The policy is swappable: [`PolicyGate::reload`] installs a new one only when it
//! loads cleanly, so a running server keeps its last valid policy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use async_trait::async_trait;
use tokio::sync::oneshot;
use tokio_util::sync::CancellationToken;
use toolgate_core::{
    Decision, DecisionSource, Effect, Gate, GateCall, GateError, Judged, PermissionRequest,
    ResourceKind, Risk,
};

use crate::approvals::{Answer, ApprovalChannel, ApprovalStore, AskItem, AskPrompt, SavedApproval};
use crate::check::{Judgement, judge_call};
use crate::config::ConfigError;
use crate::policy::{ApprovalLookup, Policy, PolicySources, approval_covering, approval_covers};
use crate::rules::RuleEffect;
use crate::shared_policy::SharedPolicy;

/// An approval given for the rest of a session.
#[derive(Clone, Debug, PartialEq, Eq)]
struct SessionApproval {
    action: String,
    pattern: String,
}

/// What a waiting ask is told when another answer settles it.
#[derive(Debug)]
enum Cascade {
    /// Another answer now covers every request.
    Allowed(DecisionSource, String),
    /// The session's user rejected another request without a message.
    Rejected,
}

struct Pending {
    session: String,
    project: String,
    /// The requests still waiting; `None` when one of them can never be covered
    /// by an approval (forced, destructive, opaque).
    coverable: Option<Vec<PermissionRequest>>,
    tx: Option<oneshot::Sender<Cascade>>,
}

#[derive(Default)]
struct State {
    sessions: HashMap<String, Vec<SessionApproval>>,
    pending: HashMap<u64, Pending>,
    next_id: u64,
}

/// The gate: compiled policy, saved and session approvals, and the channel.
pub struct PolicyGate {
    policy: SharedPolicy,
    store: Arc<dyn ApprovalStore>,
    channel: Arc<dyn ApprovalChannel>,
    timeout: Option<Duration>,
    state: Mutex<State>,
}

impl std::fmt::Debug for PolicyGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PolicyGate")
            .field("policy", &self.policy())
            .finish_non_exhaustive()
    }
}

/// Session and saved approvals, as seen at one moment.
struct Approvals<'a> {
    session: &'a [SessionApproval],
    saved: &'a [SavedApproval],
}

impl ApprovalLookup for Approvals<'_> {
    fn covering(&self, action: &str, resource: &str) -> Option<(DecisionSource, String)> {
        covering(self.session, self.saved, action, resource)
    }
}

/// Like [`Approvals`], with the saved approvals read from the store only
/// when a request is asked: most calls are decided by rules and defaults
/// alone, and reading the store is a database transaction.
struct LazyApprovals<'a> {
    gate: &'a PolicyGate,
    call: &'a GateCall<'a>,
    session: std::cell::OnceCell<Vec<SessionApproval>>,
    saved: std::cell::OnceCell<Vec<SavedApproval>>,
}

impl<'a> LazyApprovals<'a> {
    fn new(gate: &'a PolicyGate, call: &'a GateCall<'a>) -> Self {
        LazyApprovals {
            gate,
            call,
            session: std::cell::OnceCell::new(),
            saved: std::cell::OnceCell::new(),
        }
    }
}

impl ApprovalLookup for LazyApprovals<'_> {
    fn covering(&self, action: &str, resource: &str) -> Option<(DecisionSource, String)> {
        let session = self
            .session
            .get_or_init(|| self.gate.session_approvals(self.call.session_id));
        let saved = self.saved.get_or_init(|| {
            let root = self.call.location.root();
            self.gate
                .saved(&crate::project_key::project_key(root), root)
        });
        covering(session, saved, action, resource)
    }
}

/// The approval among `session`, then `saved`, that covers `(action, resource)`.
fn covering(
    session: &[SessionApproval],
    saved: &[SavedApproval],
    action: &str,
    resource: &str,
) -> Option<(DecisionSource, String)> {
    if let Some(a) = session
        .iter()
        .find(|a| a.action == action && approval_covers(action, &a.pattern, resource))
    {
        return Some((DecisionSource::Session, a.pattern.clone()));
    }
    saved
        .iter()
        .find(|a| a.action == action && approval_covers(action, &a.pattern, resource))
        .map(|a| (DecisionSource::Saved, a.pattern.clone()))
}

impl PolicyGate {
    /// A gate over `policy`, saving approvals in `store` and asking through `channel`.
    pub fn new(
        policy: Policy,
        store: Arc<dyn ApprovalStore>,
        channel: Arc<dyn ApprovalChannel>,
    ) -> Self {
        PolicyGate::sharing(SharedPolicy::new(policy), store, channel)
    }

    /// A gate over the policy of `policy`, which other holders of the handle
    /// read too (a reload here is seen there).
    pub fn sharing(
        policy: SharedPolicy,
        store: Arc<dyn ApprovalStore>,
        channel: Arc<dyn ApprovalChannel>,
    ) -> Self {
        PolicyGate {
            policy,
            store,
            channel,
            timeout: None,
            state: Mutex::new(State::default()),
        }
    }

    /// Overrides the ask timeout of the config.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// The policy in force.
    pub fn policy(&self) -> Arc<Policy> {
        self.policy.current()
    }

    /// The handle on the policy in force, shared with this gate.
    pub fn shared_policy(&self) -> SharedPolicy {
        self.policy.clone()
    }

    /// Installs a new policy.
    pub fn replace_policy(&self, policy: Policy) {
        self.policy.replace(policy);
    }

    /// Reloads from `sources`; on error the current policy stays in force.
    /// A project config that is now broken is ignored, except that what the
    /// current policy's project layer tightened stays in force.
    pub fn reload(&self, sources: &PolicySources) -> Result<(), ConfigError> {
        let current = self.policy();
        match Policy::load_after(sources, Some(&current)) {
            Ok(p) => {
                self.replace_policy(p);
                tracing::info!("policy reloaded");
                Ok(())
            }
            Err(e) => {
                tracing::warn!(error = %e, "policy reload failed; keeping the last valid policy");
                Err(e)
            }
        }
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The project's saved approvals, their path patterns read below `root`
    /// (they are saved relative to the project's root).
    fn saved(&self, project: &str, root: &std::path::Path) -> Vec<SavedApproval> {
        let mut saved = self.store.list_project(project).unwrap_or_else(|e| {
            // Without saved approvals the gate only asks more: safe, so go on.
            tracing::warn!(error = %e, "cannot read saved approvals; asking instead");
            Vec::new()
        });
        for a in &mut saved {
            a.pattern = crate::project_key::pattern_from_store(&a.action, &a.pattern, root);
        }
        saved
    }

    fn session_approvals(&self, session: &str) -> Vec<SessionApproval> {
        self.state()
            .sessions
            .get(session)
            .cloned()
            .unwrap_or_default()
    }

    fn add_session_approvals(&self, session: &str, items: &[PermissionRequest]) {
        let mut state = self.state();
        let list = state.sessions.entry(session.to_string()).or_default();
        for r in items {
            if let Some(pattern) = &r.save_pattern {
                let a = SessionApproval {
                    action: r.action.clone(),
                    pattern: pattern.clone(),
                };
                if !list.contains(&a) {
                    list.push(a);
                }
            }
        }
    }

    /// Whether an approval may ever answer `request`.
    fn coverable(policy: &Policy, request: &PermissionRequest) -> bool {
        request.save_pattern.is_some()
            && request.risk != Risk::Destructive
            && !policy
                .deciding_rule(&request.action, &request.resource, request.risk)
                .is_some_and(|(r, _)| r.effect == RuleEffect::ForceAsk)
    }

    /// Tells the other pending asks of `session` what they now are.
    fn cascade(
        &self,
        session: &str,
        project: &str,
        root: &std::path::Path,
        own: u64,
        rejected: bool,
    ) {
        let (session_list, saved) = if rejected {
            (Vec::new(), Vec::new())
        } else {
            (self.session_approvals(session), self.saved(project, root))
        };
        let lookup = Approvals {
            session: &session_list,
            saved: &saved,
        };
        let mut state = self.state();
        for (id, p) in state.pending.iter_mut() {
            if *id == own || p.session != session {
                continue;
            }
            let message = if rejected {
                Some(Cascade::Rejected)
            } else {
                p.coverable.as_ref().and_then(|items| {
                    let sources: Option<Vec<(DecisionSource, String)>> = items
                        .iter()
                        .map(|r| {
                            if p.project != project {
                                // Saved approvals are per project.
                                return None;
                            }
                            approval_covering(r, false, &lookup)
                        })
                        .collect();
                    let sources = sources?;
                    let (source, pattern) = sources.into_iter().next()?;
                    Some(Cascade::Allowed(source, pattern))
                })
            };
            if let Some(m) = message {
                if let Some(tx) = p.tx.take() {
                    let _ = tx.send(m);
                }
            }
        }
    }
}

fn deny(d: &Decision, source: DecisionSource, reason: String) -> Decision {
    Decision {
        effect: Effect::Deny,
        risk: d.risk,
        reason,
        source,
        rule: d.rule.clone(),
        feedback: None,
    }
}

fn allow(d: &Decision, source: DecisionSource, reason: String) -> Decision {
    Decision {
        effect: Effect::Allow,
        risk: d.risk,
        reason,
        source,
        rule: d.rule.clone(),
        feedback: None,
    }
}

#[async_trait]
impl Gate for PolicyGate {
    fn evaluate(
        &self,
        call: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        let policy = self.policy();
        let lookup = LazyApprovals::new(self, call);
        Ok(judge_call(&policy, requests, call.location, &lookup)
            .iter()
            .map(Judgement::judged)
            .collect())
    }

    /// A path the command changed inside the location, neither protected
    /// nor a credential, lands: the command itself was allowed. Anything
    /// else is judged as any write (`edit`) of that path — a protected
    /// path, a credential or a path outside the location lands only by a
    /// rule that names it or a person's answer; no mode and no bare
    /// wildcard lets it through.
    fn evaluate_staged(
        &self,
        call: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        let policy = self.policy();
        let mut out = Vec::with_capacity(requests.len());
        for request in requests {
            let path = std::path::Path::new(&request.resource);
            if staged_write_lands_unasked(&policy, call.location, path, request.certificates_only) {
                let decision = Decision::new(
                    Effect::Allow,
                    Risk::Write,
                    DecisionSource::Sandbox,
                    "written inside the location by a command that was allowed; neither protected nor a credential",
                );
                out.push(Judged { request, decision });
                continue;
            }
            let judged = self.evaluate(call, vec![request.clone()])?;
            // A write may be judged as several requests (the path, and
            // `external_directory` outside the location): the strictest.
            let decision = judged
                .into_iter()
                .map(|j| j.decision)
                .max_by_key(|d| match d.effect {
                    Effect::Allow => 0,
                    Effect::Ask => 1,
                    Effect::Deny => 2,
                })
                .ok_or_else(|| GateError::Invalid("a changed path was not judged".into()))?;
            out.push(Judged { request, decision });
        }
        Ok(out)
    }

    fn names_action(&self, action: &str) -> bool {
        self.policy().names_action(action)
    }

    /// Paths, URLs and plain actions are judged by matching rules and
    /// looking up a few files; only a shell command is analysed, which can
    /// take up to its CPU budget.
    fn judges_quickly(&self, requests: &[PermissionRequest]) -> bool {
        requests.iter().all(|r| r.kind != ResourceKind::Command)
    }

    async fn resolve(
        &self,
        call: &GateCall<'_>,
        judged: &[Judged],
        cancel: &CancellationToken,
    ) -> Result<Vec<Decision>, GateError> {
        let policy = self.policy();
        let mut finals: Vec<Decision> = judged.iter().map(|j| j.decision.clone()).collect();
        let asks: Vec<usize> = (0..judged.len())
            .filter(|&i| finals[i].effect == Effect::Ask)
            .collect();
        if asks.is_empty() {
            return Ok(finals);
        }
        if finals.iter().any(|d| d.effect == Effect::Deny) {
            // Asking is pointless when the call is refused anyway.
            for &i in &asks {
                finals[i] = deny(
                    &finals[i],
                    finals[i].source,
                    format!(
                        "{}; not asked because another request of this call is denied",
                        finals[i].reason
                    ),
                );
            }
            return Ok(finals);
        }
        let project = crate::project_key::project_key(call.location.root());
        // Approvals given since evaluate (another ask may have been answered).
        let session_list = self.session_approvals(call.session_id);
        let saved = self.saved(&project, call.location.root());
        let lookup = Approvals {
            session: &session_list,
            saved: &saved,
        };
        let mut waiting = Vec::new();
        for &i in &asks {
            let r = &judged[i].request;
            let coverable = Self::coverable(&policy, r);
            match approval_covering(r, false, &lookup).filter(|_| coverable) {
                Some((source, pattern)) => {
                    finals[i] = allow(
                        &finals[i],
                        source,
                        format!(
                            "{}; allowed by the approval of `{pattern}`",
                            finals[i].reason
                        ),
                    );
                }
                None => waiting.push((i, coverable)),
            }
        }
        if waiting.is_empty() {
            return Ok(finals);
        }
        let all_coverable = waiting.iter().all(|&(_, c)| c);
        let timeout = self.timeout.unwrap_or_else(|| policy.ask_timeout());
        let prompt = AskPrompt {
            session_id: call.session_id.to_string(),
            call_id: call.call_id.to_string(),
            tool: call.tool.to_string(),
            items: waiting
                .iter()
                .map(|&(i, coverable)| AskItem {
                    action: judged[i].request.action.clone(),
                    resource: judged[i].request.resource.clone(),
                    risk: judged[i].request.risk,
                    reason: finals[i].reason.clone(),
                    // What `always` saves, shown exactly: only when it is
                    // offered (the strictest item decides the offer).
                    save_pattern: if all_coverable && coverable {
                        judged[i].request.save_pattern.clone()
                    } else {
                        None
                    },
                })
                .collect(),
            offer_session: all_coverable,
            offer_always: all_coverable,
            timeout_ms: u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX),
            preview: call.preview.cloned(),
        }
        // What the model chose reaches every channel, and the web page's
        // live list, with its hidden characters escaped.
        .shown();
        let items: Vec<PermissionRequest> = waiting
            .iter()
            .map(|&(i, _)| judged[i].request.clone())
            .collect();
        let (tx, rx) = oneshot::channel();
        let id = {
            let mut state = self.state();
            state.next_id += 1;
            let id = state.next_id;
            state.pending.insert(
                id,
                Pending {
                    session: call.session_id.to_string(),
                    project: project.clone(),
                    coverable: all_coverable.then(|| items.clone()),
                    tx: Some(tx),
                },
            );
            id
        };
        let outcome = tokio::select! {
            biased;
            () = cancel.cancelled() => Outcome::Cancelled,
            Ok(cascade) = rx => Outcome::Cascade(cascade),
            answer = self.channel.ask(&prompt) => Outcome::Answer(answer),
            () = tokio::time::sleep(timeout) => Outcome::Timeout,
        };
        self.state().pending.remove(&id);
        let set = |finals: &mut Vec<Decision>, f: &dyn Fn(&Decision) -> Decision| {
            for &(i, _) in &waiting {
                finals[i] = f(&finals[i]);
            }
        };
        match outcome {
            Outcome::Cancelled => set(&mut finals, &|d| {
                deny(
                    d,
                    DecisionSource::User,
                    format!("{}; the call was cancelled", d.reason),
                )
            }),
            Outcome::Timeout => {
                let secs = timeout.as_secs_f64();
                set(&mut finals, &|d| {
                    deny(
                        d,
                        DecisionSource::Timeout,
                        format!("{}; nobody answered within {secs} s", d.reason),
                    )
                });
            }
            Outcome::Cascade(Cascade::Allowed(source, pattern)) => set(&mut finals, &|d| {
                allow(
                    d,
                    source,
                    format!(
                        "{}; allowed by the approval of `{pattern}` given meanwhile",
                        d.reason
                    ),
                )
            }),
            Outcome::Cascade(Cascade::Rejected) => set(&mut finals, &|d| {
                deny(
                    d,
                    DecisionSource::User,
                    format!(
                        "{}; rejected along with another request of this session",
                        d.reason
                    ),
                )
            }),
            Outcome::Answer(Err(e)) => {
                tracing::warn!(error = %e, "approval channel failed; denying");
                set(&mut finals, &|d| {
                    deny(
                        d,
                        DecisionSource::Default,
                        format!("{}; no one could be asked ({e})", d.reason),
                    )
                });
            }
            Outcome::Answer(Ok(answer)) => {
                self.apply_answer(
                    call,
                    &project,
                    id,
                    answer,
                    all_coverable,
                    &items,
                    &mut |f| set(&mut finals, f),
                );
            }
        }
        Ok(finals)
    }

    fn denies_wholesale(&self, action: &str) -> bool {
        self.policy().denies_wholesale(action)
    }

    fn denies_resource(&self, action: &str, resource: &str) -> bool {
        self.policy().denies_resource(action, resource)
    }
}

/// Rewrites the decision of every request that waited for the answer.
type Rewrite<'a> = &'a dyn Fn(&Decision) -> Decision;

enum Outcome {
    Cancelled,
    Timeout,
    Cascade(Cascade),
    Answer(Result<Answer, crate::approvals::ChannelError>),
}

impl PolicyGate {
    #[allow(clippy::too_many_arguments)]
    fn apply_answer(
        &self,
        call: &GateCall<'_>,
        project: &str,
        id: u64,
        answer: Answer,
        coverable: bool,
        items: &[PermissionRequest],
        set: &mut dyn FnMut(Rewrite<'_>),
    ) {
        let user_allow = |how: &'static str| {
            move |d: &Decision| allow(d, DecisionSource::User, format!("{}; {how}", d.reason))
        };
        match answer {
            Answer::Once => set(&user_allow("allowed once by the user")),
            Answer::Session if coverable => {
                self.add_session_approvals(call.session_id, items);
                set(&user_allow("allowed by the user for this session"));
                self.cascade(call.session_id, project, call.location.root(), id, false);
            }
            Answer::Always if coverable => {
                let mut unsaved = Vec::new();
                for r in items {
                    let Some(pattern) = &r.save_pattern else {
                        continue;
                    };
                    let stored = crate::project_key::pattern_to_store(
                        &r.action,
                        pattern,
                        call.location.root(),
                    );
                    if let Err(e) = self.store.save(project, &r.action, &stored) {
                        tracing::warn!(error = %e, "cannot save the approval; keeping it for this session");
                        unsaved.push(r.clone());
                    }
                }
                self.add_session_approvals(call.session_id, &unsaved);
                set(&user_allow("allowed by the user, always, for this project"));
                self.cascade(call.session_id, project, call.location.root(), id, false);
            }
            // Offered only once: a destructive, forced or opaque request.
            Answer::Session | Answer::Always => set(&user_allow(
                "allowed once by the user (this request cannot be approved for longer)",
            )),
            Answer::Reject { message: Some(m) } => set(&|d| Decision {
                feedback: Some(m.clone()),
                ..deny(
                    d,
                    DecisionSource::User,
                    format!("{}; rejected by the user: {m}", d.reason),
                )
            }),
            Answer::ClientDeclined { why } => {
                set(&|d| {
                    deny(
                        d,
                        DecisionSource::Client,
                        format!(
                            "{}; declined by the approval client itself, without asking the person ({why})",
                            d.reason
                        ),
                    )
                });
                self.cascade(call.session_id, project, call.location.root(), id, true);
            }
            Answer::Reject { message: None } => {
                set(&|d| {
                    deny(
                        d,
                        DecisionSource::User,
                        format!("{}; rejected by the user", d.reason),
                    )
                });
                self.cascade(call.session_id, project, call.location.root(), id, true);
            }
        }
    }
}

/// Whether a path a confined (already allowed) command changed lands with
/// no more asking: inside the location, neither protected nor a
/// credential (a file named as a secret counts as none when the command
/// created it with certificates only: `certificates_only`, read from the
/// staging area). Anything else lands only by a rule naming it or a
/// person's answer.
pub fn staged_write_lands_unasked(
    policy: &crate::policy::Policy,
    location: &toolgate_core::Location,
    path: &std::path::Path,
    certificates_only: bool,
) -> bool {
    use toolgate_core::credential::{CredentialKind, is_credential};
    location.contains(path)
        && policy.protected_paths().check(path).is_none()
        && match is_credential(path, policy.home()) {
            None => true,
            // A secret by its name alone, and the content (read from the
            // staging area) is certificates only: nothing secret in it.
            Some(CredentialKind::Name) => certificates_only,
            Some(_) => false,
        }
}
