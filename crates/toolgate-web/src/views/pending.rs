//! The pending asks: the page, the live event stream and the answer form.

use std::collections::HashMap;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use futures::{Stream, StreamExt};
use serde::Deserialize;
use serde_json::json;
use tokio_stream::wrappers::WatchStream;
use toolgate_policy::approvals::Answer;

use crate::detail;
use crate::html::{Tab, escape, page};
use crate::pending::{AnswerError, PendingAsk};
use crate::views::{App, parse_id, reply_error, wants_json};

/// `GET /`: the pending asks, live.
pub async fn page_handler(State(app): State<Arc<App>>) -> Html<String> {
    let cards = cards(&app).await;
    let questions = app.web.approvals.pending_questions();
    let mut body = String::from(
        "<h1>Pending requests <span id=\"count\" class=\"count\"></span></h1>\
<p id=\"live\" class=\"live\">Updates live while this page is open.</p>\
<section id=\"questions-section\"",
    );
    if questions.is_empty() {
        body.push_str(" hidden");
    }
    body.push_str("><h2>Questions from the model</h2><div id=\"questions\">");
    for q in &questions {
        body.push_str(&super::questions::card(q));
    }
    body.push_str("</div></section><div id=\"pending\">");
    for (_, html) in &cards {
        body.push_str(html);
    }
    body.push_str("</div><p id=\"empty\" class=\"empty\"");
    if !cards.is_empty() || !questions.is_empty() {
        body.push_str(" hidden");
    }
    body.push_str(">Nothing is waiting for you.</p>");
    Html(page("Pending requests", Tab::Pending, &body))
}

/// `GET /approvals/pending`: the pending asks as JSON.
pub async fn list_handler(State(app): State<Arc<App>>) -> Response {
    axum::Json(app.web.approvals.pending()).into_response()
}

/// `GET /approvals/events`: server-sent events, one `pending` event with the
/// whole lists (ids, tools and rendered cards) of asks and of questions now and
/// after every change.
pub async fn events_handler(
    State(app): State<Arc<App>>,
) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let changes = WatchStream::new(app.web.approvals.subscribe());
    let stream = changes.then(move |_| {
        let app = Arc::clone(&app);
        async move {
            let asks = app.web.approvals.pending();
            let cards: HashMap<u64, String> = cards(&app).await.into_iter().collect();
            let items: Vec<_> = asks
                .iter()
                .map(|a| {
                    json!({
                        "id": a.id,
                        "tool": a.prompt.tool,
                        "session_id": a.prompt.session_id,
                        "call_id": a.prompt.call_id,
                        "risk": a.risk(),
                        "html": cards.get(&a.id).cloned().unwrap_or_default(),
                    })
                })
                .collect();
            let questions: Vec<_> = app
                .web
                .approvals
                .pending_questions()
                .iter()
                .map(|q| {
                    json!({
                        "id": q.id,
                        "session_id": q.session_id,
                        "call_id": q.call_id,
                        "html": super::questions::card(q),
                    })
                })
                .collect();
            Ok(Event::default()
                .event("pending")
                .data(json!({ "asks": items, "questions": questions }).to_string()))
        }
    });
    Sse::new(stream).keep_alive(KeepAlive::default())
}

/// The answer form (also sent by the page's script).
#[derive(Debug, Deserialize)]
pub struct AnswerForm {
    /// `once`, `session`, `always` or `reject`.
    answer: String,
    /// Feedback for the model, with `reject`.
    #[serde(default)]
    message: Option<String>,
    /// `yes`: the second confirmation of a destructive request.
    #[serde(default)]
    confirm: Option<String>,
}

/// `POST /approvals/pending/{id}/answer`.
pub async fn answer_handler(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    form: Result<Form<AnswerForm>, FormRejection>,
) -> Response {
    let json = wants_json(&headers);
    let form = match form {
        Ok(Form(form)) => form,
        Err(e) => {
            let message = format!("bad answer form: {}", e.body_text());
            return reply_error(e.status(), &message, json);
        }
    };
    let result = parse_id(&id, "request")
        .map_err(AnswerError::BadInput)
        .and_then(|id| Ok((id, to_answer(&form)?)))
        .and_then(|(id, answer)| {
            let confirmed = form.confirm.as_deref() == Some("yes");
            app.web.approvals.answer(id, answer.clone(), confirmed)?;
            Ok((id, answer))
        });
    match result {
        Ok((id, answer)) if json => {
            let answer = match answer {
                Answer::Once => "once",
                Answer::Session => "session",
                Answer::Always => "always",
                Answer::Reject { .. } => "reject",
            };
            axum::Json(json!({ "ok": true, "id": id, "answer": answer })).into_response()
        }
        Ok(_) => axum::response::Redirect::to("/").into_response(),
        Err(e) => {
            let status = match e {
                AnswerError::NotPending(_) => StatusCode::NOT_FOUND,
                AnswerError::Withdrawn(_) => StatusCode::GONE,
                _ => StatusCode::BAD_REQUEST,
            };
            reply_error(status, &e.to_string(), json)
        }
    }
}

fn to_answer(form: &AnswerForm) -> Result<Answer, AnswerError> {
    let message = form
        .message
        .as_deref()
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string);
    let answer = match form.answer.as_str() {
        "once" => Answer::Once,
        "session" => Answer::Session,
        "always" => Answer::Always,
        "reject" => return Ok(Answer::Reject { message }),
        other => {
            return Err(AnswerError::BadInput(format!(
                "unknown answer {other:?}: expected once, session, always or reject"
            )));
        }
    };
    if message.is_some() {
        return Err(AnswerError::BadInput(
            "a message is sent to the model only with reject".into(),
        ));
    }
    Ok(answer)
}

/// The cards of the pending asks, oldest first, from the cache when rendered
/// before (the audit log is read once per ask).
async fn cards(app: &Arc<App>) -> Vec<(u64, String)> {
    let asks = app.web.approvals.pending();
    let missing: Vec<PendingAsk> = {
        let mut cache = app.cards();
        cache.retain(|id, _| asks.iter().any(|a| a.id == *id));
        asks.iter()
            .filter(|a| !cache.contains_key(&a.id))
            .cloned()
            .collect()
    };
    if !missing.is_empty() {
        let db = app.web.audit_db.clone();
        let rendered = tokio::task::spawn_blocking(move || {
            missing
                .iter()
                .map(|ask| {
                    let args = detail::call_args(&db, &ask.prompt.session_id, &ask.prompt.call_id);
                    (ask.id, card(ask, args.as_ref()))
                })
                .collect::<Vec<_>>()
        })
        .await
        .unwrap_or_default();
        app.cards().extend(rendered);
    }
    let cache = app.cards();
    asks.iter()
        .filter_map(|a| cache.get(&a.id).map(|html| (a.id, html.clone())))
        .collect()
}

/// One ask as an `<article>` with its answer form; works without the script.
pub fn card(ask: &PendingAsk, args: Option<&serde_json::Value>) -> String {
    let p = &ask.prompt;
    let risk = ask.risk();
    let destructive = ask.is_destructive();
    let deadline = ask
        .asked_ms
        .saturating_add(i64::try_from(p.timeout_ms).unwrap_or(i64::MAX));
    let mut out = String::new();
    let _ = write!(
        out,
        "<article class=\"ask risk-{risk}\" id=\"ask-{id}\" data-id=\"{id}\" data-destructive=\"{d}\" \
data-deadline=\"{deadline}\"><header><strong class=\"tool\">{tool}</strong> <span class=\"ids\">session {session} · call {call}</span> \
<span class=\"timer\"></span></header><ul class=\"items\">",
        id = ask.id,
        d = u8::from(destructive),
        tool = escape(&p.tool),
        session = escape(&p.session_id),
        call = escape(&p.call_id),
    );
    for item in &p.items {
        let _ = write!(
            out,
            "<li><span class=\"risk-tag risk-{r}\">{r}</span> <b>{action}</b>\
<pre class=\"resource\">{resource}</pre><p class=\"reason\">{reason}</p></li>",
            r = item.risk,
            action = escape(&item.action),
            resource = escape(&item.resource),
            reason = escape(&item.reason),
        );
    }
    out.push_str("</ul>");
    if let Some(args) = args {
        out.push_str(&detail::render(&p.tool, args));
    }
    let _ = write!(
        out,
        "<form class=\"answer\" method=\"post\" action=\"/approvals/pending/{}/answer\">",
        ask.id
    );
    // The form's default button, disabled: Enter in the reject message (or
    // anywhere) must not press "Allow once", the first real button, when the
    // script is off. With the script, Enter in the message rejects.
    out.push_str(
        "<button type=\"submit\" class=\"no-default\" disabled hidden aria-hidden=\"true\" \
tabindex=\"-1\"></button>",
    );
    if destructive {
        out.push_str(
            "<p class=\"warning\">Destructive: this cannot be undone, and it is asked every \
time.</p><label class=\"confirm\"><input type=\"checkbox\" name=\"confirm\" value=\"yes\"> \
I have read it and want it to run</label>",
        );
    }
    out.push_str("<div class=\"buttons\"><button name=\"answer\" value=\"once\" class=\"allow\">Allow once</button>");
    if ask.offers_session() {
        out.push_str("<button name=\"answer\" value=\"session\" class=\"allow\">Allow for this session</button>");
    }
    if ask.offers_always() {
        out.push_str(
            "<button name=\"answer\" value=\"always\" class=\"allow\">Always allow (save)</button>",
        );
    }
    let _ = write!(
        out,
        "</div><div class=\"reject-row\"><input type=\"text\" name=\"message\" maxlength=\"{max}\" \
placeholder=\"Message to the model (optional; without one, this session's other pending requests are rejected too)\" aria-label=\"Message to the model\">\
<button name=\"answer\" value=\"reject\" class=\"reject\">Reject</button></div>\
<p class=\"error\" role=\"alert\"></p></form></article>",
        max = crate::pending::MAX_MESSAGE_CHARS,
    );
    out
}
