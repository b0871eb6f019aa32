//! The page's handlers, one module per tab, and what they share.

pub mod audit;
pub mod pending_page;
pub mod questions_page;
pub mod saved;

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

use axum::http::header::{ACCEPT, CONTENT_TYPE, HeaderValue};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use serde_json::json;

use crate::WebState;
use crate::html::message_page;

/// The router's state: the caller's [`WebState`] and the rendered cards.
pub struct App {
    /// What the caller gave.
    pub web: WebState,
    /// Rendered ask cards by ask id (an ask without a preview reads the audit log
    /// once, when its card is first rendered).
    cards: Mutex<HashMap<u64, String>>,
}

impl App {
    /// Wraps the caller's state.
    pub fn new(web: WebState) -> Self {
        App {
            web,
            cards: Mutex::new(HashMap::new()),
        }
    }

    fn cards(&self) -> MutexGuard<'_, HashMap<u64, String>> {
        // The cache holds finished strings only; a poisoned lock is still valid.
        self.cards.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// Whether the client asked for JSON (`Accept: application/json`).
pub fn wants_json(headers: &HeaderMap) -> bool {
    headers
        .get(ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.contains("application/json"))
}

/// An id from the URL, or a message naming what is wrong.
pub fn parse_id<T: std::str::FromStr>(raw: &str, what: &str) -> Result<T, String> {
    raw.parse()
        .map_err(|_| format!("{what} id must be a positive whole number, got {raw:?}"))
}

/// An error as JSON `{"error": …}` or as a small page.
pub fn reply_error(status: StatusCode, message: &str, json: bool) -> Response {
    if json {
        return (status, axum::Json(json!({ "error": message }))).into_response();
    }
    let title = status.canonical_reason().unwrap_or("Error");
    let mut response = (status, Html(message_page(title, message))).into_response();
    response.headers_mut().insert(
        CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    response
}
