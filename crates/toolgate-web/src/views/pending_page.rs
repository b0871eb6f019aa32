//! The pending asks: the page, the live event stream and the answer form.

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::Arc;

use axum::Form;
use axum::extract::rejection::FormRejection;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use futures::{Stream, StreamExt};
use maud::{PreEscaped, html};
use serde::Deserialize;
use serde_json::json;
use tokio_stream::wrappers::WatchStream;
use toolgate_policy::approvals::Answer;

use crate::detail;
use crate::html::{Tab, page};
use crate::pending::{AnswerError, PendingAsk};
use crate::views::{App, parse_id, reply_error, wants_json};

/// `GET /`: the pending asks, live.
pub async fn page_handler(State(app): State<Arc<App>>) -> Html<String> {
    let cards = cards(&app).await;
    let questions = app.web.approvals.pending_questions();
    let body = html! {
        h1 { "Pending requests " span id="count" class="count" {} }
        p id="live" class="live" { "Updates live while this page is open." }
        section id="questions-section" hidden[questions.is_empty()] {
            h2 { "Questions from the model" }
            div id="questions" {
                @for q in &questions { (super::questions_page::card_markup(q)) }
            }
        }
        div id="pending" {
            // Cards are rendered (and escaped) once, then cached as markup.
            @for (_, card) in &cards { (PreEscaped(card)) }
        }
        p id="empty" class="empty" hidden[!cards.is_empty() || !questions.is_empty()] {
            "Nothing is waiting for you."
        }
    };
    Html(page("Pending requests", Tab::Pending, body))
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
                        "html": super::questions_page::card(q),
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
                Answer::Reject { .. } | Answer::ClientDeclined { .. } => "reject",
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
/// before (the audit log is read at most once per ask).
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
        let events = Arc::clone(&app.web.events);
        let rendered = tokio::task::spawn_blocking(move || {
            missing
                .iter()
                .map(|ask| {
                    // The log is read only for an ask whose tool gave no preview.
                    let args = match ask.prompt.preview {
                        Some(_) => None,
                        None => detail::call_args(
                            events.as_ref(),
                            &ask.prompt.session_id,
                            &ask.prompt.call_id,
                        ),
                    };
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
/// `args`: the call's logged input, shown when the ask has no preview.
pub fn card(ask: &PendingAsk, args: Option<&serde_json::Value>) -> String {
    // HTML escaping keeps markup out, not a bidi override that reverses
    // what follows it: hidden characters are made visible first.
    let shown = ask.prompt.shown();
    let p = &shown;
    let destructive = ask.is_destructive();
    let deadline = ask
        .asked_ms
        .saturating_add(i64::try_from(p.timeout_ms).unwrap_or(i64::MAX));
    let card = html! {
        article class={ "ask risk-" (ask.risk()) } id={ "ask-" (ask.id) } data-id=(ask.id)
            data-destructive=(u8::from(destructive)) data-deadline=(deadline) {
            header {
                strong class="tool" { (p.tool) }
                " "
                span class="ids" { "session " (p.session_id) " · call " (p.call_id) }
                " "
                span class="timer" {}
            }
            ul class="items" {
                @for item in &p.items {
                    li {
                        span class={ "risk-tag risk-" (item.risk) } { (item.risk) }
                        " "
                        b { (item.action) }
                        pre class="resource" { (item.resource) }
                        p class="reason" { (item.reason) }
                        @if p.offer_always {
                            p class="saves" { (item.saves()) }
                        }
                    }
                }
            }
            @if let Some(preview) = &p.preview {
                (detail::render(preview))
            } @else if let Some(args) = args {
                (detail::render_input(args))
            }
            form class="answer" method="post" action={ "/approvals/pending/" (ask.id) "/answer" } {
                // The form's default button, disabled: Enter in the reject message
                // (or anywhere) must not press "Allow once", the first real button,
                // when the script is off. With the script, Enter in the message rejects.
                button type="submit" class="no-default" disabled hidden aria-hidden="true"
                    tabindex="-1" {}
                @if destructive {
                    p class="warning" {
                        "Destructive: this cannot be undone, and it is asked every time."
                    }
                    label class="confirm" {
                        input type="checkbox" name="confirm" value="yes";
                        " I have read it and want it to run"
                    }
                }
                div class="buttons" {
                    button name="answer" value="once" class="allow" { "Allow once" }
                    @if ask.offers_session() {
                        button name="answer" value="session" class="allow" { "Allow for this session" }
                    }
                    @if ask.offers_always() {
                        button name="answer" value="always" class="allow" { "Always allow (save)" }
                    }
                }
                div class="reject-row" {
                    input type="text" name="message" maxlength=(crate::pending::MAX_MESSAGE_CHARS)
                        placeholder="Message to the model (optional; without one, this session's other pending requests are rejected too)"
                        aria-label="Message to the model";
                    button name="answer" value="reject" class="reject" { "Reject" }
                }
                p class="error" role="alert" {}
            }
        }
    };
    card.into_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Risk;
    use toolgate_policy::approvals::{AskItem, AskPrompt};

    /// A right-to-left override in a command reverses what follows it on
    /// the page, whatever the HTML escaping: `echo hi # U+202E ~ fr- mr` reads
    /// as `echo hi # rm -rf ~`. Hidden characters are shown as `\u{…}` on the card, in
    /// the request and in the logged input alike.
    #[test]
    fn a_bidi_override_cannot_reorder_a_command_on_the_approval_page() {
        let ask = PendingAsk {
            id: 1,
            prompt: AskPrompt {
                session_id: "s".into(),
                call_id: "c".into(),
                tool: "bash".into(),
                items: vec![AskItem {
                    action: "bash".into(),
                    resource: "echo hi # \u{202e}~ fr- mr".into(),
                    risk: Risk::Execute,
                    reason: "runs a program".into(),
                    save_pattern: Some("echo hi # \u{202e}~ fr- mr".into()),
                }],
                offer_session: true,
                offer_always: true,
                timeout_ms: 1000,
                preview: None,
            },
            asked_ms: 0,
        };
        let args = serde_json::json!({"command": "echo hi # \u{202e}~ fr- mr"});
        let html = card(&ask, Some(&args));
        assert!(!html.contains('\u{202e}'), "{html}");
        assert_eq!(html.matches("# \\u{202E}~ fr- mr").count(), 3, "{html}");
    }
}
