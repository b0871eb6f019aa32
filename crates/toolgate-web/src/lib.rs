//! # toolgate-web
//!
//! The approval page and audit viewer of toolgate, served by `toolgate serve`
//! (mounted next to `/mcp`) and, for `toolgate mcp`, on a loopback port of its own.
//!
//! - [`WebApprovals`] is an [`ApprovalChannel`]: each `ask` waits on the page until
//!   a person answers (once / session / always / reject with a message); dropping
//!   the `ask` future withdraws it from the page.
//! - [`WebApprovals::ask_questions`] shows the `question` tool's questions
//!   (each with its options as choices and a field for the person's own
//!   words) until a person answers, one text per question, or declines; dropping
//!   the future (cancelled, answered elsewhere) takes them off the page.
//! - [`router`] serves the page: pending asks and questions live over server-sent events, with a
//!   colour per risk class and the preview the call's tool gave with the ask
//!   (a command, a diff, labelled facts; the logged input when there is none);
//!   the audit log with filters and `log verify`'s verdict; the saved approvals
//!   with revoke. The audit log is read through core's [`EventQuery`] port;
//!   the page knows no store and no tool.
//! - Protection: a token (`?token=…` exchanged for an HttpOnly SameSite=Strict
//!   cookie), `Host` must be loopback or configured, `Origin` must be this page on
//!   every state-changing request, no CORS, loopback listening by default.
//!
//! ## Routes
//!
//! | route | what |
//! | --- | --- |
//! | `GET /` | pending asks (HTML, live with the script) |
//! | `GET /approvals/pending` | pending asks as JSON ([`PendingAsk`]) |
//! | `GET /approvals/events` | server-sent events: `pending` with the whole lists (`asks`, `questions`) after every change |
//! | `POST /approvals/pending/{id}/answer` | form `answer=once|session|always|reject`, `message=…`, `confirm=yes` |
//! | `GET /approvals/questions` | pending questions as JSON ([`PendingQuestion`]) |
//! | `POST /approvals/questions/{id}/answer` | JSON `{"answers": ["…", …]}` (one string per question) or `{"decline": true, "message": "…"}`; or the card's form (`reply=answer|decline`, `answer_N`, `answer_N_other`, `message`) |
//! | `GET /approvals/audit` | the audit log; `?session=&tool=&decision=&kind=&limit=` |
//! | `GET /approvals/saved` | saved approvals |
//! | `POST /approvals/saved/{id}/revoke` | revokes one |
//! | `GET /approvals/static/{app.js,style.css}` | the script and stylesheet |
//!
//! Requests with `Accept: application/json` get JSON answers and errors
//! (`{"error": "…"}`); others get pages and redirects.
//!
//! [`ApprovalChannel`]: toolgate_policy::approvals::ApprovalChannel
//! [`EventQuery`]: toolgate_core::EventQuery
//!
//! ```
//! use std::sync::Arc;
//! use toolgate_policy::approvals::{Answer, ApprovalChannel, AskItem, AskPrompt};
//! use toolgate_web::{WebApprovals, WebState, serve_standalone, page_url};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let approvals = WebApprovals::new();
//! let state = WebState {
//!     approvals: approvals.clone(),
//!     events: Arc::new(toolgate_store::LogQuery::new(dir.path().join("events.db"))),
//!     store: Arc::new(toolgate_store::SqliteApprovals::open(dir.path().join("state.db"))?),
//!     token: toolgate_web::new_token()?,
//!     allowed_hosts: Vec::new(),
//! };
//! let token = state.token.clone();
//! let (addr, _server) = serve_standalone("127.0.0.1:0".parse()?, state).await?;
//! eprintln!("approve at {}", page_url(addr, &token));
//!
//! let prompt = AskPrompt {
//!     session_id: "s1".into(),
//!     call_id: "c1".into(),
//!     tool: "bash".into(),
//!     items: vec![AskItem {
//!         action: "bash".into(),
//!         resource: "git push".into(),
//!         risk: toolgate_core::Risk::Network,
//!         reason: "network access".into(),
//!         save_pattern: Some("git push *".into()),
//!     }],
//!     offer_session: true,
//!     offer_always: true,
//!     timeout_ms: 60_000,
//!     preview: None,
//! };
//! let asking = approvals.clone();
//! let waiting = tokio::spawn(async move { asking.ask(&prompt).await });
//! while approvals.pending().is_empty() {
//!     tokio::task::yield_now().await;
//! }
//! // What the page's "Allow once" button does:
//! approvals.answer(approvals.pending()[0].id, Answer::Once, false)?;
//! assert_eq!(waiting.await??, Answer::Once);
//! # Ok(())
//! # }
//! ```

#![deny(missing_docs)]

mod detail;
mod html;
mod page_protection;
mod pending;
mod questions;
mod views;

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::DefaultBodyLimit;
use axum::http::header;
use axum::routing::{get, post};
use tokio::task::JoinHandle;
use toolgate_core::EventQuery;
use toolgate_policy::approvals::ApprovalStore;

pub use page_protection::host_allowed;
pub use pending::{AnswerError, MAX_MESSAGE_CHARS, PendingAsk, WebApprovals, check_answer};
pub use questions::{
    MAX_ANSWER_CHARS, PendingQuestion, QuestionAnswerError, QuestionReply, check_reply,
};

/// Largest request body accepted (answer and revoke forms are tiny).
const MAX_BODY: usize = 64 * 1024;
/// Largest reply to a `question` call: up to 20 answers of
/// [`MAX_ANSWER_CHARS`] characters, JSON-escaped.
const MAX_QUESTION_BODY: usize = 1024 * 1024;

/// What the page serves from.
#[derive(Clone)]
pub struct WebState {
    /// The approval channel whose asks the page shows and answers.
    pub approvals: WebApprovals,
    /// The audit log, read for the audit view and for the input of asked calls.
    pub events: Arc<dyn EventQuery>,
    /// Where saved approvals live (listed and revoked on the page).
    pub store: Arc<dyn ApprovalStore>,
    /// The secret in the printed URL. Empty: nobody can sign in.
    pub token: String,
    /// Host names (or `name:port`) accepted besides loopback names.
    pub allowed_hosts: Vec<String>,
}

impl std::fmt::Debug for WebState {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WebState")
            .field("allowed_hosts", &self.allowed_hosts)
            .field("token", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// Errors starting the page.
#[derive(Debug, thiserror::Error)]
pub enum WebError {
    /// The listen address could not be bound.
    #[error("cannot listen on {addr} for the approval page: {source}")]
    Bind {
        /// The address.
        addr: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// A non-loopback address without any configured host.
    #[error(
        "the approval page listens on loopback only unless hosts are configured; \
         {0} is not a loopback address"
    )]
    NotLoopback(SocketAddr),
    /// No token: the page would be unreachable.
    #[error("the approval page needs a token (it is empty)")]
    EmptyToken,
    /// The server stopped with an error.
    #[error("the approval page server failed: {0}")]
    Serve(std::io::Error),
    /// No randomness for a token.
    #[error("cannot generate a token: {0}")]
    Random(String),
}

/// A fresh random token (32 bytes, hex).
pub fn new_token() -> Result<String, WebError> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| WebError::Random(e.to_string()))?;
    Ok(hex::encode(bytes))
}

/// The URL to print: `http://ADDR/?token=TOKEN`.
pub fn page_url(addr: SocketAddr, token: &str) -> String {
    let token: String = form_urlencoded::byte_serialize(token.as_bytes()).collect();
    format!("http://{addr}/?token={token}")
}

/// The page's routes (see the crate docs), every one behind the token, `Host`
/// and `Origin` checks. Mergeable with other routers (it owns `/` and
/// `/approvals/…` only).
pub fn router(state: WebState) -> Router {
    if state.token.is_empty() {
        tracing::warn!("the approval page has an empty token: every request will be refused");
    }
    let shared = Arc::new(page_protection::page_guard(&state));
    let app = Arc::new(views::App::new(state));
    Router::new()
        .route("/", get(views::pending_page::page_handler))
        .route("/approvals/pending", get(views::pending_page::list_handler))
        .route(
            "/approvals/events",
            get(views::pending_page::events_handler),
        )
        .route(
            "/approvals/pending/{id}/answer",
            post(views::pending_page::answer_handler),
        )
        .route(
            "/approvals/questions",
            get(views::questions_page::list_handler),
        )
        .route(
            "/approvals/questions/{id}/answer",
            post(views::questions_page::answer_handler)
                .layer(DefaultBodyLimit::max(MAX_QUESTION_BODY)),
        )
        .route("/approvals/audit", get(views::audit::handler))
        .route("/approvals/saved", get(views::saved::list_handler))
        .route(
            "/approvals/saved/{id}/revoke",
            post(views::saved::revoke_handler),
        )
        .route("/approvals/static/app.js", get(script))
        .route("/approvals/static/style.css", get(style))
        .with_state(app)
        .layer(DefaultBodyLimit::max(MAX_BODY))
        .layer(axum::middleware::from_fn_with_state(
            shared,
            page_protection::protect,
        ))
}

async fn script() -> impl axum::response::IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        html::APP_JS,
    )
}

async fn style() -> impl axum::response::IntoResponse {
    (
        [(header::CONTENT_TYPE, "text/css; charset=utf-8")],
        html::STYLE_CSS,
    )
}

/// Serves the page alone on `listen` (for `toolgate mcp`, which prints
/// [`page_url`] to stderr). Returns the bound address (port 0 picks one) and the
/// server task; abort the task to stop it.
///
/// `listen` must be loopback unless `allowed_hosts` is configured.
pub async fn serve_standalone(
    listen: SocketAddr,
    state: WebState,
) -> Result<(SocketAddr, JoinHandle<Result<(), WebError>>), WebError> {
    if state.token.is_empty() {
        return Err(WebError::EmptyToken);
    }
    if !listen.ip().is_loopback() && state.allowed_hosts.is_empty() {
        return Err(WebError::NotLoopback(listen));
    }
    let listener = tokio::net::TcpListener::bind(listen)
        .await
        .map_err(|source| WebError::Bind {
            addr: listen,
            source,
        })?;
    let addr = listener.local_addr().map_err(|source| WebError::Bind {
        addr: listen,
        source,
    })?;
    let app = router(state);
    let task =
        tokio::spawn(async move { axum::serve(listener, app).await.map_err(WebError::Serve) });
    tracing::info!(%addr, "approval page listening");
    Ok((addr, task))
}
