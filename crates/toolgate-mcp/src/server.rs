//! The MCP server: one [`ToolgateServer`] per process, one
//! [`ToolgateConnection`] (an rmcp `ServerHandler`) per client connection.
//!
//! Each connection is a session in the audit log (`session.started` with the
//! client's name and version), keeps the catalogue it advertised, and settles
//! every `tools/call` against it through the core pipeline.

use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rmcp::ErrorData as McpError;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CustomRequest, CustomResult, ErrorCode,
    Implementation, InitializeRequestParams, InitializeResult, ListToolsResult,
    PaginatedRequestParams, ProgressNotificationParam, ProgressToken, ProtocolVersion,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{Peer, RoleServer, ServerHandler};
use serde_json::{Value, json};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;
use toolgate_core::{
    CallIdentity, CallRequest, Catalogue, Engine, Event, EventKind, EventPayload, Location,
    Progress,
};

use crate::approval::ElicitationChannel;
use crate::convert::{call_response, mcp_tools};
use crate::disconnect::ClientGone;
use crate::list_changed::ToolListSignal;
use crate::mrtr::{PausedCalls, Running, Waiter};

/// MCP methods whose malformed requests reach `on_custom_request`.
const KNOWN_METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/read",
    "prompts/list",
    "prompts/get",
    "completion/complete",
    "logging/setLevel",
    "server/discover",
];

/// How long progress notifications still queued when a call ends may take to go out.
const PROGRESS_FLUSH: Duration = Duration::from_secs(1);

/// The server: the engine every call goes through, the location calls act in,
/// and the state its connections share. Cheap to clone.
#[derive(Clone, Debug)]
pub struct ToolgateServer {
    shared: Arc<Shared>,
}

#[derive(Debug)]
struct Shared {
    engine: Engine,
    location: Arc<Location>,
    elicitation: ElicitationChannel,
    calls: TaskTracker,
    paused: PausedCalls,
    info: Implementation,
    tool_list: ToolListSignal,
}

impl ToolgateServer {
    /// A server over `engine`, acting in `location`.
    pub fn new(engine: Engine, location: Arc<Location>) -> Self {
        Self::with_elicitation(engine, location, ElicitationChannel::new())
    }

    /// A server whose connections register with `elicitation`, a channel made
    /// before the engine so that the gate inside it can ask through it.
    pub fn with_elicitation(
        engine: Engine,
        location: Arc<Location>,
        elicitation: ElicitationChannel,
    ) -> Self {
        ToolgateServer {
            shared: Arc::new(Shared {
                engine,
                location,
                elicitation,
                calls: TaskTracker::new(),
                paused: PausedCalls::default(),
                info: Implementation::new("toolgate", env!("CARGO_PKG_VERSION")),
                tool_list: ToolListSignal::new(),
            }),
        }
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.shared.engine
    }

    /// The approval channel through the connected clients' elicitation: give it
    /// to the gate so that an `ask` of an MCP session reaches that client.
    pub fn elicitation(&self) -> ElicitationChannel {
        self.shared.elicitation.clone()
    }

    /// The signal that makes every connected client re-list its tools
    /// (`notifications/tools/list_changed`): announce it after changing what
    /// the catalogue holds.
    pub fn tool_list_signal(&self) -> ToolListSignal {
        self.shared.tool_list.clone()
    }

    /// A handler for one new connection, with a fresh session id.
    pub fn connection(&self) -> ToolgateConnection {
        ToolgateConnection {
            shared: Arc::clone(&self.shared),
            conn: Arc::new(Connection {
                session_id: uuid::Uuid::new_v4().to_string(),
                elicitation: self.shared.elicitation.clone(),
                started: AtomicBool::new(false),
                catalogue: Mutex::new(None),
                closed: CancellationToken::new(),
            }),
        }
    }

    /// Waits until every call in flight has finished (cancelled calls record
    /// `tool.failed` before they finish), at most `limit`. Returns whether all did.
    pub async fn drain(&self, limit: Duration) -> bool {
        self.shared.calls.close();
        let done = tokio::time::timeout(limit, self.shared.calls.wait())
            .await
            .is_ok();
        self.shared.calls.reopen();
        done
    }
}

/// One client connection: an MCP session.
#[derive(Clone, Debug)]
pub struct ToolgateConnection {
    shared: Arc<Shared>,
    conn: Arc<Connection>,
}

#[derive(Debug)]
struct Connection {
    session_id: String,
    elicitation: ElicitationChannel,
    started: AtomicBool,
    /// What this connection's client was shown by `tools/list`.
    catalogue: Mutex<Option<Catalogue>>,
    /// Cancelled when the connection ends: stops its list-changed forwarding.
    closed: CancellationToken,
}

impl Drop for Connection {
    fn drop(&mut self) {
        self.closed.cancel();
        self.elicitation.unregister(&self.session_id);
    }
}

impl ToolgateConnection {
    /// The session id this connection records its events under.
    pub fn session_id(&self) -> &str {
        &self.conn.session_id
    }

    /// Records `session.started` once, durably, with the client's identity.
    async fn start_session(
        &self,
        client: Option<&Implementation>,
        protocol: Option<&ProtocolVersion>,
        transport_meta: Value,
    ) -> Result<(), McpError> {
        if self.conn.started.swap(true, Ordering::SeqCst) {
            return Ok(());
        }
        let mut extra = json!({
            "client_name": client.map(|c| c.name.clone()),
            "client_version": client.map(|c| c.version.clone()),
            "protocol_version": protocol.map(ToString::to_string),
            "server": "mcp",
            "root": self.shared.location.root().display().to_string(),
        });
        if let (Some(obj), Value::Object(more)) = (extra.as_object_mut(), transport_meta) {
            obj.extend(more);
        }
        let payload = EventPayload {
            actor: client.map(|c| c.name.clone()),
            extra: Some(extra),
            ..EventPayload::default()
        };
        let event = Event::now(
            EventKind::SessionStarted,
            &self.conn.session_id,
            "",
            payload,
        );
        self.shared
            .engine
            .sink()
            .submit(event)
            .await
            .map(|_| ())
            .map_err(|e| {
                // Let a later request try again rather than run unrecorded.
                self.conn.started.store(false, Ordering::SeqCst);
                McpError::internal_error(e.to_string(), None)
            })
    }

    /// Starts the session from a request's own `_meta` (protocol 2026-07-28 has
    /// no `initialize`; earlier connections started at `initialize`).
    async fn ensure_session(&self, context: &RequestContext<RoleServer>) -> Result<(), McpError> {
        if self.conn.started.load(Ordering::SeqCst) {
            return Ok(());
        }
        let client = context
            .meta
            .client_info()
            .or_else(|| context.peer.peer_info().map(|p| p.client_info.clone()));
        let protocol = context.protocol_version();
        self.start_session(client.as_ref(), protocol.as_ref(), Value::Null)
            .await
    }

    /// What a call of `name` settles against: what this connection's client
    /// was shown.
    fn catalogue(&self, name: &str) -> Catalogue {
        let advertised = self
            .conn
            .catalogue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone();
        // A client may call without listing first (or, on stateless HTTP, list
        // on another request): settle against what it would have been shown,
        // of which only the tool called matters.
        advertised.unwrap_or_else(|| self.shared.engine.materialize_one(name))
    }

    async fn settle(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        self.ensure_session(&context).await?;
        if let Some(state) = request.request_state.as_deref() {
            let waiter = Waiter {
                peer: &context.peer,
                progress_token: context.meta.get_progress_token(),
                request_cancel: &context.ct,
            };
            return self
                .shared
                .paused
                .resume(state, &request.name, request.input_responses, waiter)
                .await;
        }
        let name = request.name.to_string();
        let catalogue = self.catalogue(&name);
        let call = CallRequest {
            name: name.clone(),
            input: Value::Object(request.arguments.unwrap_or_default()),
            identity: CallIdentity {
                session_id: self.conn.session_id.clone(),
                // The client's name (`claude-code`, `cursor`…), recorded as
                // the agent with every event of the call.
                agent_id: context
                    .peer
                    .peer_info()
                    .map(|p| p.client_info.name.clone())
                    .filter(|n| !n.is_empty()),
                message_id: None,
                call_id: format!("mcp-{}", uuid::Uuid::new_v4()),
            },
        };
        if answers_by_input_required(&context) {
            return self.settle_in_rounds(catalogue, call, context).await;
        }
        let progress = context
            .meta
            .get_progress_token()
            .map(|token| forward_progress(context.peer.clone(), token));
        let (tx, forwarder) = match progress {
            Some((tx, task)) => (Some(tx), Some(task)),
            None => (None, None),
        };
        let cancel = context.ct.child_token();
        let watch = client_gone(&context).map(|gone| link(gone, cancel.clone()));
        let outcome = self
            .shared
            .engine
            .settle_with_progress(
                &catalogue,
                call,
                Arc::clone(&self.shared.location),
                cancel,
                tx,
            )
            .await;
        if let Some(watch) = watch {
            watch.abort();
        }
        if let Some(task) = forwarder {
            // The sender is gone with the call; let queued reports go out first.
            let _ = tokio::time::timeout(PROGRESS_FLUSH, task).await;
        }
        let flags = outcome
            .as_ref()
            .err()
            .map(|e| self.shared.engine.failure_flags(e))
            .unwrap_or_default();
        call_response(&catalogue, &name, outcome, &flags).map(CallToolResponse::Complete)
    }
}

impl ToolgateConnection {
    /// Runs a 2026-07-28 call in its own task, so that an ask can pause it and
    /// travel to the client as an input-required result.
    async fn settle_in_rounds(
        &self,
        catalogue: Catalogue,
        call: CallRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        let (input_tx, inputs) = mpsc::unbounded_channel();
        let (progress_tx, progress) = mpsc::unbounded_channel();
        let call_id = call.identity.call_id.clone();
        let tool = call.name.clone();
        self.shared.elicitation.register_call(&call_id, input_tx);
        let cancel = CancellationToken::new();
        let shared = Arc::clone(&self.shared);
        let task_cancel = cancel.clone();
        let outcome = tokio::spawn(self.shared.calls.track_future(async move {
            let name = call.name.clone();
            let outcome = shared
                .engine
                .settle_with_progress(
                    &catalogue,
                    call,
                    Arc::clone(&shared.location),
                    task_cancel,
                    Some(progress_tx),
                )
                .await;
            shared.elicitation.unregister_call(&call_id);
            let flags = outcome
                .as_ref()
                .err()
                .map(|e| shared.engine.failure_flags(e))
                .unwrap_or_default();
            call_response(&catalogue, &name, outcome, &flags).map(CallToolResponse::Complete)
        }));
        let running = Running {
            tool,
            outcome,
            inputs,
            progress,
            cancel: cancel.clone(),
        };
        let watch = client_gone(&context).map(|gone| link(gone, cancel));
        let waiter = Waiter {
            peer: &context.peer,
            progress_token: context.meta.get_progress_token(),
            request_cancel: &context.ct,
        };
        let result = self.shared.paused.wait(running, waiter).await;
        if let Some(watch) = watch {
            watch.abort();
        }
        result
    }
}

/// Whether this call is on protocol 2026-07-28 or later from a client that
/// declared form elicitation: its asks go out as input-required results.
fn answers_by_input_required(context: &RequestContext<RoleServer>) -> bool {
    let modern = context
        .protocol_version()
        .is_some_and(|v| v.as_str() >= ProtocolVersion::V_2026_07_28.as_str());
    let elicits = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    modern && elicits
}

/// The disconnect signal of the HTTP request that carried this call, if any.
fn client_gone(context: &RequestContext<RoleServer>) -> Option<CancellationToken> {
    context
        .extensions
        .get::<axum::http::request::Parts>()
        .and_then(|parts| parts.extensions.get::<ClientGone>())
        .map(|gone| gone.0.clone())
}

/// Cancels `call` when `gone` fires; the watcher ends with the call.
fn link(gone: CancellationToken, call: CancellationToken) -> tokio::task::JoinHandle<()> {
    tokio::spawn(async move {
        tokio::select! {
            () = gone.cancelled() => {
                tracing::info!("HTTP client disconnected mid-call; cancelling the tool");
                call.cancel();
            }
            () = call.cancelled() => {}
        }
    })
}

/// Sends a tool's progress reports as `notifications/progress` for `token`.
fn forward_progress(
    peer: Peer<RoleServer>,
    token: ProgressToken,
) -> (mpsc::UnboundedSender<Progress>, tokio::task::JoinHandle<()>) {
    let (tx, mut rx) = mpsc::unbounded_channel::<Progress>();
    let task = tokio::spawn(async move {
        while let Some(report) = rx.recv().await {
            let mut param = ProgressNotificationParam::new(token.clone(), report.progress)
                .with_message(report.message);
            if let Some(total) = report.total {
                param = param.with_total(total);
            }
            if let Err(e) = peer.notify_progress(param).await {
                tracing::debug!(error = %e, "progress notification not delivered");
                break;
            }
        }
    });
    (tx, task)
}

impl ServerHandler for ToolgateConnection {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(self.shared.info.clone())
        .with_instructions(
            "toolgate: every tool call is checked by the workspace's policy; \
                 a refused call returns an error explaining why.",
        )
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        Cow::Borrowed(ProtocolVersion::known_up_to(&ProtocolVersion::V_2026_07_28))
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, McpError> {
        context.peer.set_peer_info(request.clone());
        let result = self.negotiate_initialize(&request)?;
        self.shared
            .elicitation
            .register(&self.conn.session_id, &context.peer);
        self.shared
            .tool_list
            .forward_to(context.peer.clone(), self.conn.closed.clone());
        self.start_session(
            Some(&request.client_info),
            Some(&result.protocol_version),
            json!({"elicitation": self.shared.elicitation.can_ask(&self.conn.session_id)}),
        )
        .await?;
        Ok(result)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, McpError> {
        self.ensure_session(&context).await?;
        let catalogue = self.shared.engine.materialize();
        let tools = mcp_tools(&catalogue);
        *self
            .conn
            .catalogue
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(catalogue);
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// Requests the SDK could not decode as a known method end up here: a known
    /// method with bad params is `-32602` naming the method, anything else `-32601`.
    async fn on_custom_request(
        &self,
        request: CustomRequest,
        _context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, McpError> {
        let method = request.method;
        if KNOWN_METHODS.contains(&method.as_str()) {
            Err(McpError::invalid_params(
                format!("invalid params for {method}: missing or not matching the MCP schema"),
                None,
            ))
        } else {
            Err(McpError::new(
                ErrorCode::METHOD_NOT_FOUND,
                format!("Method not found: {method}"),
                None,
            ))
        }
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, McpError> {
        // Tracked so that shutdown waits for cancelled calls to record their end.
        let this = self.clone();
        let task = self
            .shared
            .calls
            .track_future(async move { this.settle(request, context).await });
        task.await
    }
}
