//! MCP over streamable HTTP (axum), at `/mcp`.
//!
//! Every request passes a guard before the SDK sees it: its `Host` must be
//! loopback or configured and its `Origin`, when present, loopback or configured
//! (DNS-rebinding protection, `403`), and it must carry the bearer token
//! (`401`) unless authentication is off, which is allowed only on loopback.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolgate_core::pipeline::CANCEL_GRACE;

use crate::auth::{bearer_matches, validate_token};
use crate::error::ServeError;
use crate::origin::AllowedPeers;
use crate::server::ToolgateServer;

/// The path of the MCP endpoint.
pub const MCP_PATH: &str = "/mcp";

/// How HTTP clients authenticate.
#[derive(Clone, Debug)]
pub enum HttpAuth {
    /// `Authorization: Bearer <token>` on every request.
    Bearer(String),
    /// No authentication (`--no-auth`): loopback only.
    Disabled,
}

/// Options of the HTTP transport.
#[derive(Clone, Debug)]
pub struct HttpOptions {
    /// Where to listen (`127.0.0.1:PORT` by default; port 0 picks one).
    pub listen: SocketAddr,
    /// Authentication.
    pub auth: HttpAuth,
    /// Hosts and origins allowed besides loopback.
    pub allowed: AllowedPeers,
    /// The largest request body accepted, in bytes (default 16 MiB).
    pub max_request_bytes: usize,
}

impl HttpOptions {
    /// Loopback on `port`, with bearer `token`.
    pub fn loopback(port: u16, token: String) -> Self {
        HttpOptions {
            listen: SocketAddr::from(([127, 0, 0, 1], port)),
            auth: HttpAuth::Bearer(token),
            allowed: AllowedPeers::default(),
            max_request_bytes: 16 * 1024 * 1024,
        }
    }

    /// Refuses settings that would expose the server: `--no-auth` off loopback,
    /// and weak tokens.
    pub fn validate(&self) -> Result<(), ServeError> {
        match &self.auth {
            HttpAuth::Disabled if !self.listen.ip().is_loopback() => {
                Err(ServeError::Config(format!(
                    "--no-auth is only allowed on a loopback address, not {}",
                    self.listen
                )))
            }
            HttpAuth::Bearer(token) => validate_token(token),
            HttpAuth::Disabled => Ok(()),
        }
    }
}

#[derive(Clone)]
struct Guard {
    auth: HttpAuth,
    allowed: Arc<AllowedPeers>,
}

/// An HTTP server bound to its address, not yet serving.
#[derive(Debug)]
pub struct BoundHttp {
    listener: TcpListener,
    router: Router,
    server: ToolgateServer,
    shutdown: CancellationToken,
}

impl BoundHttp {
    /// The address actually bound (useful with port 0).
    pub fn local_addr(&self) -> Result<SocketAddr, ServeError> {
        self.listener
            .local_addr()
            .map_err(|e| ServeError::io("reading the bound address", e))
    }

    /// Serves until `shutdown` is cancelled, then waits for calls in flight.
    pub async fn serve(self) -> Result<(), ServeError> {
        let shutdown = self.shutdown.clone();
        let result = axum::serve(self.listener, self.router)
            .with_graceful_shutdown(async move { shutdown.cancelled().await })
            .await
            .map_err(|e| ServeError::io("serving HTTP", e));
        if !self
            .server
            .drain(CANCEL_GRACE + Duration::from_secs(1))
            .await
        {
            tracing::warn!("calls still running at shutdown");
        }
        result
    }
}

/// Binds the HTTP transport for `server`. Loudly warns when authentication is off.
pub async fn bind_http(
    server: &ToolgateServer,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<BoundHttp, ServeError> {
    options.validate()?;
    if matches!(options.auth, HttpAuth::Disabled) {
        tracing::warn!(
            listen = %options.listen,
            "AUTHENTICATION IS OFF (--no-auth): any local process can call tools through this server"
        );
    }
    let listener = TcpListener::bind(options.listen)
        .await
        .map_err(|e| ServeError::io(format!("cannot listen on {}", options.listen), e))?;
    let router = router(server, &options, shutdown.child_token());
    Ok(BoundHttp {
        listener,
        router,
        server: server.clone(),
        shutdown,
    })
}

/// Binds and serves until `shutdown` is cancelled.
pub async fn serve_http(
    server: &ToolgateServer,
    options: HttpOptions,
    shutdown: CancellationToken,
) -> Result<(), ServeError> {
    bind_http(server, options, shutdown).await?.serve().await
}

/// The axum router: the guarded MCP endpoint.
pub fn router(
    server: &ToolgateServer,
    options: &HttpOptions,
    sessions_end: CancellationToken,
) -> Router {
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1"].map(String::from).to_vec();
    hosts.extend(options.allowed.hosts.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_max_request_body_bytes(options.max_request_bytes)
        .with_cancellation_token(sessions_end);
    let factory_server = server.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(factory_server.connection()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let guard = Guard {
        auth: options.auth.clone(),
        allowed: Arc::new(options.allowed.clone()),
    };
    Router::new()
        .nest_service(MCP_PATH, mcp)
        .layer(middleware::from_fn_with_state(guard, check_request))
}

fn refuse(status: StatusCode, message: String) -> Response {
    tracing::info!(%status, %message, "HTTP request refused");
    let body = json!({"error": message});
    let mut response = (
        status,
        [(header::CONTENT_TYPE, "application/json")],
        body.to_string(),
    )
        .into_response();
    if status == StatusCode::UNAUTHORIZED {
        response
            .headers_mut()
            .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    }
    response
}

async fn check_request(State(guard): State<Guard>, request: Request, next: Next) -> Response {
    let headers = request.headers();
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .map(str::to_string)
        .or_else(|| request.uri().authority().map(|a| a.to_string()));
    match host {
        Some(h) if guard.allowed.host_allowed(&h) => {}
        Some(h) => {
            return refuse(
                StatusCode::FORBIDDEN,
                format!("Host {h:?} is not allowed (DNS-rebinding protection)"),
            );
        }
        None => return refuse(StatusCode::BAD_REQUEST, "missing Host header".into()),
    }
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("<not text>");
        if !guard.allowed.origin_allowed(origin) {
            return refuse(
                StatusCode::FORBIDDEN,
                format!("Origin {origin:?} is not allowed (DNS-rebinding protection)"),
            );
        }
    }
    if let HttpAuth::Bearer(token) = &guard.auth {
        let presented = headers
            .get(header::AUTHORIZATION)
            .and_then(|h| h.to_str().ok());
        if !bearer_matches(presented, token) {
            let what = if presented.is_some() {
                "invalid"
            } else {
                "missing"
            };
            return refuse(
                StatusCode::UNAUTHORIZED,
                format!(
                    "{what} bearer token: send `Authorization: Bearer <token>` (printed by `toolgate serve`)"
                ),
            );
        }
    }
    next.run(request).await
}
