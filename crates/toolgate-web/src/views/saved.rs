//! The saved ("always") approvals, with revoke.

use std::sync::Arc;

use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};
use maud::html;
use serde::Deserialize;
use serde_json::json;
use toolgate_policy::approvals::{ApprovalStoreError, SavedApproval};

use crate::html::{Tab, page, utc_time};
use crate::views::{App, parse_id, reply_error, wants_json};

/// The notice shown after a revoke.
#[derive(Debug, Default, Deserialize)]
pub struct SavedQuery {
    /// The id just revoked.
    #[serde(default)]
    revoked: Option<String>,
}

/// `GET /approvals/saved`: every saved approval (JSON with `Accept: application/json`).
pub async fn list_handler(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<SavedQuery>,
) -> Response {
    let json = wants_json(&headers);
    let store = Arc::clone(&app.web.store);
    let listed = tokio::task::spawn_blocking(move || store.list_all())
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r.map_err(|e| e.to_string()));
    let approvals = match listed {
        Ok(list) => list,
        Err(e) => return reply_error(StatusCode::INTERNAL_SERVER_ERROR, &e, json),
    };
    if json {
        return axum::Json(approvals).into_response();
    }
    let revoked = query.revoked.as_deref().and_then(|r| r.parse::<i64>().ok());
    let body = html! {
        h1 { "Saved approvals" }
        @if let Some(id) = revoked {
            p class="notice" role="status" { "Revoked saved approval #" (id) "." }
        }
        @if approvals.is_empty() {
            p class="empty" { "No approval is saved. Answering \"always\" saves one." }
        } @else {
            table class="saved" {
                thead {
                    tr {
                        th { "#" } th { "Project" } th { "Action" } th { "Pattern" }
                        th { "Saved (UTC)" } th { "Approved by" } th {}
                    }
                }
                tbody {
                    @for a in &approvals {
                        tr id={ "saved-" (a.id) } {
                            td { (a.id) }
                            td { code { (a.project) } }
                            td { (a.action) }
                            td { code { (a.pattern) } }
                            td { (utc_time(a.created_ms)) }
                            td {
                                (a.approved_by.as_deref().unwrap_or("-"))
                                @if let Some(m) = &a.machine { " on " (m) }
                            }
                            td {
                                form method="post" action={ "/approvals/saved/" (a.id) "/revoke" } {
                                    button class="reject" { "Revoke" }
                                }
                            }
                        }
                    }
                }
            }
        }
    };
    Html(page("Saved approvals", Tab::Saved, body)).into_response()
}

/// `POST /approvals/saved/{id}/revoke`.
pub async fn revoke_handler(
    State(app): State<Arc<App>>,
    Path(raw): Path<String>,
    headers: HeaderMap,
) -> Response {
    let json = wants_json(&headers);
    let id: i64 = match parse_id(&raw, "approval") {
        Ok(id) => id,
        Err(e) => return reply_error(StatusCode::BAD_REQUEST, &e, json),
    };
    let store = Arc::clone(&app.web.store);
    let revoked: Result<SavedApproval, (StatusCode, String)> =
        match tokio::task::spawn_blocking(move || store.revoke(id)).await {
            Ok(Ok(a)) => Ok(a),
            Ok(Err(e @ ApprovalStoreError::NotFound(_))) => {
                Err((StatusCode::NOT_FOUND, e.to_string()))
            }
            Ok(Err(e)) => Err((StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
            Err(e) => Err((StatusCode::INTERNAL_SERVER_ERROR, e.to_string())),
        };
    match revoked {
        Ok(a) => {
            tracing::info!(id = a.id, action = %a.action, pattern = %a.pattern, "saved approval revoked on the web page");
            if json {
                axum::Json(json!({ "ok": true, "revoked": a })).into_response()
            } else {
                Redirect::to(&format!("/approvals/saved?revoked={}", a.id)).into_response()
            }
        }
        Err((status, message)) => reply_error(status, &message, json),
    }
}
