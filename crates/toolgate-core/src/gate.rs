//! The gate port: the trait the policy crate implements to decide every call.
//!
//! Core never decides permissions itself. The settle pipeline asks the gate to
//! [`evaluate`](Gate::evaluate) the requests a call implies (a pure function of
//! tool, input, location, policy and approvals), records the result, and only when
//! something is `ask` calls [`resolve`](Gate::resolve), which reaches a person.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::location::Location;
use crate::risk::{Decision, Risk};

/// What a request's resource is. The gate judges a resource by its kind, never
/// by the tool that asked: every tool's paths get the same credential and
/// outside-the-location checks, every command the shell analysis, every URL
/// the check for embedded credentials.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ResourceKind {
    /// A filesystem path, resolved through the location (absolute, canonical).
    Path,
    /// A shell command line.
    Command,
    /// A URL.
    Url,
    /// Anything else (a search query, a skill name, a summary): judged as given.
    #[default]
    Other,
}

impl ResourceKind {
    /// The name used in JSON: `path`, `command`, `url` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            ResourceKind::Path => "path",
            ResourceKind::Command => "command",
            ResourceKind::Url => "url",
            ResourceKind::Other => "other",
        }
    }
}

impl std::fmt::Display for ResourceKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One thing a call would touch: `{action, resource, kind, risk, save_pattern}`.
///
/// ```
/// use toolgate_core::{PermissionRequest, ResourceKind, Risk};
/// let r = PermissionRequest::path("read", "/ws/src/main.rs", Risk::Read);
/// assert_eq!((r.action.as_str(), r.kind), ("read", ResourceKind::Path));
/// let q = PermissionRequest::new("websearch", "rust regex", Risk::Network);
/// assert_eq!(q.kind, ResourceKind::Other);
/// ```
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PermissionRequest {
    /// The permission asked for: usually the tool name (`read`, `edit`, `bash`), or
    /// `external_directory` for a path outside the location.
    pub action: String,
    /// What is touched: a canonical path, a command, a host.
    pub resource: String,
    /// What the resource is; the gate's checks follow it. Records written
    /// before requests carried a kind read as `other`.
    #[serde(default)]
    pub kind: ResourceKind,
    /// The risk class, as the tool sees it (the gate may raise it).
    pub risk: Risk,
    /// The pattern an `always`/`session` approval would save; `None` means an
    /// approval for this request is never saved.
    pub save_pattern: Option<String>,
    /// Extra facts for people and the gate (for example `create` vs `overwrite`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// For shell commands: the resolved directory the command starts in.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    /// A file a confined command created whose content is certificates only
    /// ([`holds_only_certificates`](crate::credential::holds_only_certificates)),
    /// so a secret's name (`cacert.pem`) is all it has of one. Set by the
    /// landing judgement from the staged bytes; never read from outside
    /// (not serialised), so no client can claim it.
    #[serde(skip)]
    #[schemars(skip)]
    pub certificates_only: bool,
}

impl PermissionRequest {
    /// A request of kind [`ResourceKind::Other`] whose save pattern is the
    /// resource itself.
    pub fn new(action: impl Into<String>, resource: impl Into<String>, risk: Risk) -> Self {
        let resource = resource.into();
        PermissionRequest {
            action: action.into(),
            save_pattern: Some(resource.clone()),
            resource,
            kind: ResourceKind::Other,
            risk,
            note: None,
            cwd: None,
            certificates_only: false,
        }
    }

    /// A request for a filesystem path (give it resolved through the
    /// location); the gate checks it for credentials and for leaving the
    /// location.
    pub fn path(action: impl Into<String>, path: impl Into<String>, risk: Risk) -> Self {
        PermissionRequest::new(action, path, risk).with_kind(ResourceKind::Path)
    }

    /// A request to run a shell command line; the gate analyses the command.
    pub fn command(action: impl Into<String>, command: impl Into<String>, risk: Risk) -> Self {
        PermissionRequest::new(action, command, risk).with_kind(ResourceKind::Command)
    }

    /// A request to reach a URL; the gate checks it for embedded credentials.
    pub fn url(action: impl Into<String>, url: impl Into<String>, risk: Risk) -> Self {
        PermissionRequest::new(action, url, risk).with_kind(ResourceKind::Url)
    }

    /// Sets the resource kind.
    pub fn with_kind(mut self, kind: ResourceKind) -> Self {
        self.kind = kind;
        self
    }

    /// Sets the save pattern.
    pub fn with_save_pattern(mut self, pattern: Option<String>) -> Self {
        self.save_pattern = pattern;
        self
    }

    /// Sets the working directory of a shell command.
    pub fn with_cwd(mut self, cwd: impl Into<String>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Marks a created file whose content was read and is certificates only.
    pub fn with_certificates_only(mut self, certificates_only: bool) -> Self {
        self.certificates_only = certificates_only;
        self
    }

    /// Sets the note.
    pub fn with_note(mut self, note: impl Into<String>) -> Self {
        self.note = Some(note.into());
        self
    }
}

/// A request together with the gate's decision about it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Judged {
    /// The request as the gate saw it (risk possibly raised, bash split into parts).
    pub request: PermissionRequest,
    /// The decision before anyone was asked.
    pub decision: Decision,
}

/// Who is calling and what: the facts a gate may use, and nothing the model says
/// beyond the decoded input.
#[derive(Clone, Copy, Debug)]
pub struct GateCall<'a> {
    /// The tool name as advertised.
    pub tool: &'a str,
    /// The decoded, schema-valid input.
    pub input: &'a Value,
    /// The workspace the call acts in.
    pub location: &'a Location,
    /// The session the call belongs to.
    pub session_id: &'a str,
    /// The call's id.
    pub call_id: &'a str,
    /// What the tool says the call will do, for the person asked
    /// ([`crate::Tool::preview`]); set only when [`Gate::resolve`] is called.
    pub preview: Option<&'a crate::preview::Preview>,
}

/// Errors from a gate.
#[derive(Debug, thiserror::Error)]
pub enum GateError {
    /// The gate could not evaluate (for example its approvals store failed).
    #[error("gate failed: {0}")]
    Failed(#[source] crate::failure::Failure),
    /// The request could not be analysed at all.
    #[error("invalid request: {0}")]
    Invalid(String),
}

/// The port the settle pipeline uses to decide. Implemented by `toolgate-policy`.
#[async_trait]
pub trait Gate: Send + Sync {
    /// Decide every request without asking anyone. The gate may split or add
    /// requests (a bash command becomes one request per sub-command); each judged
    /// request is recorded as `permission.requested`.
    fn evaluate(
        &self,
        call: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError>;

    /// Reach a person for the `ask` requests. Returns the final decision of every
    /// judged request, in order. Requests that were already `allow` or `deny` keep
    /// their decision. Must honour `cancel` (a cancelled call is a deny).
    async fn resolve(
        &self,
        call: &GateCall<'_>,
        judged: &[Judged],
        cancel: &CancellationToken,
    ) -> Result<Vec<Decision>, GateError>;

    /// Judge paths that a confined command changed, the command itself
    /// having been allowed: each request is a write (`edit`) of one path.
    /// The default judges them as any write; a policy may let a write
    /// inside the location that is neither protected nor a credential land
    /// without asking, since the command that made it was allowed.
    fn evaluate_staged(
        &self,
        call: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        self.evaluate(call, requests)
    }

    /// Whether judging `requests` is quick and bounded, so that
    /// [`Gate::evaluate`] can run on the calling task: a hand-off to the
    /// blocking pool and back costs more CPU than judging a file path. Say
    /// `true` only when nothing in the judgement can take long (no shell
    /// command to analyse). The default is `false`: the pipeline then judges
    /// on the blocking pool, so a slow decision never holds up the event loop.
    fn judges_quickly(&self, _requests: &[PermissionRequest]) -> bool {
        false
    }

    /// Whether a rule of the policy covers `action` (names it, or matches it
    /// by a pattern over actions). A call's
    /// [`PreparedCall::when_named`](crate::tool::PreparedCall::when_named)
    /// requests are judged only when this is `true`: without such a rule a
    /// read request of that action is allowed by default and changes
    /// nothing. The default, `true`, judges them always.
    fn names_action(&self, _action: &str) -> bool {
        true
    }

    /// Whether the policy denies every request of `action` (a tool's name, or
    /// the action it names in [`crate::Tool::action`]), so that the tool is
    /// left out of the catalogue the model sees. This is visibility only,
    /// never authorisation.
    fn denies_wholesale(&self, _action: &str) -> bool {
        false
    }

    /// Whether the policy denies every request of `action` on exactly
    /// `resource` (an upstream tool `NAME__tool` under action `mcp`), so that
    /// the tool is left out of the catalogue. Visibility only, never
    /// authorisation. By default `false`.
    fn denies_resource(&self, _action: &str, _resource: &str) -> bool {
        false
    }
}
