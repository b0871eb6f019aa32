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
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use futures::StreamExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use serde_json::json;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use toolgate_core::pipeline::CANCEL_GRACE;
use toolgate_http_guard::{Admission, AllowedPeers, Credential, HttpGuard, OriginRule, Token};

use crate::auth::validate_token;
use crate::disconnect::{ClientGone, WatchedBody};
use crate::error::ServeError;
use crate::frame::{INVALID_REQUEST, PARSE_ERROR, error_line, scan_id, syntax_error};
use crate::server::ToolgateServer;

/// How much of an oversized body is read to find the request's id.
const ID_PREFIX: usize = 64 * 1024;

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
    http: Arc<HttpGuard>,
    max_request_bytes: usize,
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
    let mut hosts: Vec<String> = ["localhost", "127.0.0.1", "::1", "[::1]"]
        .map(String::from)
        .to_vec();
    hosts.extend(options.allowed.hosts.iter().cloned());
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        // The guard enforces the limit with a JSON-RPC answer; this is a backstop.
        .with_max_request_body_bytes(options.max_request_bytes.saturating_add(1))
        .with_cancellation_token(sessions_end);
    let factory_server = server.clone();
    let mcp = StreamableHttpService::new(
        move || Ok(factory_server.connection()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let credential = match &options.auth {
        HttpAuth::Bearer(token) => Credential::Bearer(Token::new(token.clone())),
        HttpAuth::Disabled => Credential::Open,
    };
    let guard = Guard {
        http: Arc::new(HttpGuard {
            peers: options.allowed.clone(),
            origin: OriginRule::Peers,
            credential,
        }),
        max_request_bytes: options.max_request_bytes,
    };
    Router::new()
        .nest_service(MCP_PATH, mcp)
        .layer(middleware::from_fn_with_state(guard, check_request))
}

/// A JSON-RPC error as an HTTP response (for bodies refused before the SDK).
fn rpc_error(
    status: StatusCode,
    id: Option<serde_json::Value>,
    code: i64,
    message: &str,
) -> Response {
    tracing::info!(%status, %message, "MCP request refused");
    let mut line = error_line(id, code, message);
    line.pop();
    (status, [(header::CONTENT_TYPE, "application/json")], line).into_response()
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
    match guard.http.check(&request) {
        Ok(Admission::Admit) => {}
        // Only a browser session signs in; the bearer guard never asks to.
        Ok(Admission::SignIn(_)) => {
            return refuse(
                StatusCode::UNAUTHORIZED,
                "sign-in is not offered here".into(),
            );
        }
        Err(refusal) => return refuse(refusal.status(), refusal.to_string()),
    }
    let request = if request.method() == Method::POST {
        match checked_body(request, guard.max_request_bytes).await {
            Ok(request) => request,
            Err(response) => return response,
        }
    } else {
        request
    };
    let gone = ClientGone::default();
    let mut request = request;
    request.extensions_mut().insert(gone.clone());
    next.run(request)
        .await
        .map(|body| Body::new(WatchedBody::new(body, gone.0)))
}

/// Reads a POST body within the limit and checks that it is JSON, answering
/// with a JSON-RPC error (`-32600` too large, `-32700` unparsable) otherwise.
async fn checked_body(request: Request, max: usize) -> Result<Request, Response> {
    let too_large = |id, total: &str| {
        rpc_error(
            StatusCode::PAYLOAD_TOO_LARGE,
            id,
            INVALID_REQUEST,
            &format!(
                "request too large: {total} bytes exceeds the limit of {max} bytes; nothing was run"
            ),
        )
    };
    let declared = request
        .headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .filter(|len| *len > max);
    let (parts, body) = request.into_parts();
    let mut stream = body.into_data_stream();
    let mut data: Vec<u8> = Vec::new();
    let mut total = 0usize;
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            rpc_error(
                StatusCode::BAD_REQUEST,
                None,
                INVALID_REQUEST,
                &format!("reading the request body failed: {e}"),
            )
        })?;
        total += chunk.len();
        data.extend_from_slice(&chunk);
        // Too large: keep only enough to find the request's id, then answer.
        if total > max || (declared.is_some() && data.len() >= ID_PREFIX) {
            data.truncate(ID_PREFIX);
            let size = declared.map_or_else(|| format!("more than {max}"), |n| n.to_string());
            return Err(too_large(scan_id(&data), &size));
        }
    }
    if let Some(len) = declared {
        return Err(too_large(scan_id(&data), &len.to_string()));
    }
    if let Some(message) = syntax_error(&data) {
        return Err(rpc_error(
            StatusCode::BAD_REQUEST,
            None,
            PARSE_ERROR,
            &format!("Parse error: {message}"),
        ));
    }
    Ok(Request::from_parts(parts, Body::from(data)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_auth_only_on_loopback_and_tokens_must_be_strong() {
        let mut options = HttpOptions::loopback(0, "t".repeat(32));
        assert!(options.validate().is_ok());
        options.auth = HttpAuth::Disabled;
        assert!(
            options.validate().is_ok(),
            "--no-auth on loopback is allowed"
        );
        options.listen = SocketAddr::from(([0, 0, 0, 0], 8765));
        let err = options.validate().unwrap_err().to_string();
        assert!(
            err.contains("--no-auth is only allowed on a loopback address"),
            "{err}"
        );
        options.listen = SocketAddr::from(([192, 168, 1, 2], 8765));
        assert!(options.validate().is_err());
        options.auth = HttpAuth::Bearer("short".into());
        assert!(options.validate().is_err());
    }

    #[tokio::test]
    async fn binding_a_busy_port_is_a_clear_error() {
        let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = taken.local_addr().unwrap().port();
        let engine = toolgate_core::Engine::new(
            toolgate_core::ToolSet::default(),
            std::sync::Arc::new(DenyAll),
            std::sync::Arc::new(NoSink),
            std::sync::Arc::new(NoSpill),
        );
        let dir = std::env::temp_dir();
        let location = Arc::new(toolgate_core::Location::new(&dir).unwrap());
        let server = ToolgateServer::new(engine, location);
        let err = bind_http(
            &server,
            HttpOptions::loopback(port, "t".repeat(32)),
            CancellationToken::new(),
        )
        .await
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(&format!("cannot listen on 127.0.0.1:{port}")),
            "{err}"
        );
    }

    struct DenyAll;
    #[async_trait::async_trait]
    impl toolgate_core::Gate for DenyAll {
        fn evaluate(
            &self,
            _: &toolgate_core::GateCall<'_>,
            _: Vec<toolgate_core::PermissionRequest>,
        ) -> Result<Vec<toolgate_core::Judged>, toolgate_core::GateError> {
            Ok(vec![])
        }
        async fn resolve(
            &self,
            _: &toolgate_core::GateCall<'_>,
            _: &[toolgate_core::Judged],
            _: &CancellationToken,
        ) -> Result<Vec<toolgate_core::Decision>, toolgate_core::GateError> {
            Ok(vec![])
        }
    }
    struct NoSink;
    impl toolgate_core::EventSink for NoSink {
        fn submit(&self, _: toolgate_core::Event) -> toolgate_core::EventAck {
            Box::pin(async { Ok(0) })
        }
    }
    struct NoSpill;
    impl toolgate_core::OutputStore for NoSpill {
        fn spill(&self, _: &str, _: &str) -> Result<std::path::PathBuf, toolgate_core::SpillError> {
            Ok(std::path::PathBuf::new())
        }
    }
}
