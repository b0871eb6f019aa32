//! The `question` tool's questions: the JSON list, the cards and the reply.
//!
//! A reply is JSON (what the page's script sends) — `{"answers": ["…", …]}`
//! with one string per question, or `{"decline": true, "message": "…"}` — or,
//! without the script, the card's form: `reply=answer|decline`, `answer_N`
//! (the picked option or the text), `answer_N_other` (own words, which win),
//! `message`.

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::http::header::CONTENT_TYPE;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use serde_json::{Value, json};

use crate::questions::{MAX_ANSWER_CHARS, PendingQuestion, QuestionAnswerError, QuestionReply};
use crate::views::{App, parse_id, reply_error, wants_json};

/// `GET /approvals/questions`: the pending questions as JSON.
pub async fn list_handler(State(app): State<Arc<App>>) -> Response {
    axum::Json(app.web.approvals.pending_questions()).into_response()
}

/// `POST /approvals/questions/{id}/answer`.
pub async fn answer_handler(
    State(app): State<Arc<App>>,
    Path(id): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let json = wants_json(&headers);
    let id = match parse_id::<u64>(&id, "question") {
        Ok(id) => id,
        Err(e) => return reply_error(StatusCode::BAD_REQUEST, &e, json),
    };
    let content_type = headers
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    let media = content_type
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase();
    let reply = match media.as_str() {
        "application/json" => from_json(&body),
        "application/x-www-form-urlencoded" => {
            // The form names answers by position, so it needs the question count.
            let Some(pending) = app
                .web
                .approvals
                .pending_questions()
                .into_iter()
                .find(|q| q.id == id)
            else {
                let e = QuestionAnswerError::NotPending(id);
                return reply_error(StatusCode::NOT_FOUND, &e.to_string(), json);
            };
            from_form(&body, &pending)
        }
        _ => {
            let message = format!(
                "a reply must be application/json ({{\"answers\": [...]}} or {{\"decline\": \
                 true}}) or a form, not {:?}",
                content_type
            );
            return reply_error(StatusCode::UNSUPPORTED_MEDIA_TYPE, &message, json);
        }
    };
    let result = reply.and_then(|reply| {
        let declined = matches!(reply, QuestionReply::Declined(_));
        app.web.approvals.reply_questions(id, reply)?;
        Ok(declined)
    });
    match result {
        Ok(declined) if json => {
            let reply = if declined { "declined" } else { "answered" };
            axum::Json(json!({ "ok": true, "id": id, "reply": reply })).into_response()
        }
        Ok(_) => axum::response::Redirect::to("/").into_response(),
        Err(e) => {
            let status = match e {
                QuestionAnswerError::NotPending(_) => StatusCode::NOT_FOUND,
                QuestionAnswerError::Withdrawn(_) => StatusCode::GONE,
                QuestionAnswerError::BadInput(_) => StatusCode::BAD_REQUEST,
            };
            reply_error(status, &e.to_string(), json)
        }
    }
}

/// `{"answers": [...]}` or `{"decline": true, "message"?: "…"}`.
fn from_json(body: &[u8]) -> Result<QuestionReply, QuestionAnswerError> {
    let bad = QuestionAnswerError::BadInput;
    let value: Value = serde_json::from_slice(body)
        .map_err(|e| bad(format!("the reply is not valid JSON: {e}")))?;
    let Value::Object(fields) = value else {
        return Err(bad(format!(
            "the reply must be a JSON object ({{\"answers\": [...]}} or {{\"decline\": \
             true}}), not {}",
            kind(&value)
        )));
    };
    if let Some(unknown) = fields
        .keys()
        .find(|k| !matches!(k.as_str(), "answers" | "decline" | "message"))
    {
        return Err(bad(format!(
            "unknown field {unknown:?} in the reply: expected answers, or decline and message"
        )));
    }
    let decline = match fields.get("decline") {
        None | Some(Value::Bool(false)) => false,
        Some(Value::Bool(true)) => true,
        Some(other) => {
            return Err(bad(format!(
                "decline must be true or false, not {}",
                kind(other)
            )));
        }
    };
    let message = match fields.get("message") {
        None | Some(Value::Null) => None,
        Some(Value::String(m)) => Some(m.clone()),
        Some(other) => {
            return Err(bad(format!(
                "message must be a string, not {}",
                kind(other)
            )));
        }
    };
    match (fields.get("answers"), decline) {
        (Some(_), true) => Err(bad(
            "a reply either answers or declines, not both".to_string()
        )),
        (None, true) => Ok(QuestionReply::Declined(message)),
        (None, false) => Err(bad(
            "the reply has no answers: send {\"answers\": [one string per question]} or \
             {\"decline\": true}"
                .to_string(),
        )),
        (Some(_), false) if message.is_some() => Err(bad(
            "a message goes with decline only; put answers in answers".to_string(),
        )),
        (Some(Value::Array(items)), false) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Value::String(s) => Ok(s.clone()),
                other => Err(bad(format!(
                    "answers[{i}] must be a string, not {}",
                    kind(other)
                ))),
            })
            .collect::<Result<Vec<_>, _>>()
            .map(QuestionReply::Answered),
        (Some(other), false) => Err(bad(format!(
            "answers must be a list of strings, not {}",
            kind(other)
        ))),
    }
}

/// What a JSON value is, for error messages (never its content, which may be huge).
fn kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// The card's own form (the page without its script).
fn from_form(body: &[u8], pending: &PendingQuestion) -> Result<QuestionReply, QuestionAnswerError> {
    let pairs: Vec<(String, String)> = form_urlencoded::parse(body)
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect();
    let field = |name: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.trim().to_string())
            .filter(|v| !v.is_empty())
    };
    match field("reply").as_deref() {
        Some("decline") => Ok(QuestionReply::Declined(field("message"))),
        Some("answer") => Ok(QuestionReply::Answered(
            (1..=pending.questions.len())
                .map(|n| {
                    field(&format!("answer_{n}_other"))
                        .or_else(|| field(&format!("answer_{n}")))
                        .unwrap_or_default()
                })
                .collect(),
        )),
        Some(other) => Err(QuestionAnswerError::BadInput(format!(
            "unknown reply {other:?}: expected answer or decline"
        ))),
        None => Err(QuestionAnswerError::BadInput(
            "the form has no reply (answer or decline)".into(),
        )),
    }
}

/// One `question` call as an `<article>` with its form; works without the script.
pub fn card(pending: &PendingQuestion) -> String {
    card_markup(pending).into_string()
}

/// [`card`] as markup, to place into a page.
pub fn card_markup(pending: &PendingQuestion) -> Markup {
    let id = pending.id;
    html! {
        article class="question" id={ "question-" (id) } data-id=(id)
            data-count=(pending.questions.len()) {
            header {
                strong class="tool" { "question" }
                " "
                span class="ids" { "session " (pending.session_id) " · call " (pending.call_id) }
            }
            form class="reply" method="post" action={ "/approvals/questions/" (id) "/answer" } {
                @for (i, q) in pending.questions.iter().enumerate() {
                    @let n = i + 1;
                    fieldset class="asked" data-n=(n) {
                        legend { (toolgate_core::visible::escape_hidden(&q.question, &['\n'])) }
                        @match q.options.as_deref().filter(|o| !o.is_empty()) {
                            Some(options) => {
                                div class="options" {
                                    @for option in options {
                                        label class="option" {
                                            input type="radio" name={ "answer_" (n) } value=(option);
                                            " " (toolgate_core::visible::escape_hidden(option, &[]))
                                        }
                                    }
                                }
                                input type="text" class="own" name={ "answer_" (n) "_other" }
                                    maxlength=(MAX_ANSWER_CHARS)
                                    placeholder="…or answer in your own words"
                                    aria-label={ "Answer " (n) " in your own words" };
                            }
                            None => {
                                input type="text" class="own" name={ "answer_" (n) }
                                    maxlength=(MAX_ANSWER_CHARS) placeholder="Your answer"
                                    aria-label={ "Answer " (n) };
                            }
                        }
                    }
                }
                div class="buttons" {
                    button name="reply" value="answer" class="allow" { "Send answer" }
                }
                div class="reject-row" {
                    input type="text" name="message" maxlength=(MAX_ANSWER_CHARS)
                        placeholder="Why you decline (optional, the model sees it)"
                        aria-label="Why you decline";
                    button name="reply" value="decline" class="reject" { "Decline" }
                }
                p class="error" role="alert" {}
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Question;

    fn pending() -> PendingQuestion {
        PendingQuestion {
            id: 3,
            session_id: "s<1>".into(),
            call_id: "c".into(),
            questions: vec![
                Question {
                    question: "Pick <b>one</b>".into(),
                    options: Some(vec!["a\"b".into(), "c".into()]),
                },
                Question {
                    question: "Why?".into(),
                    options: None,
                },
            ],
            asked_ms: 0,
        }
    }

    #[test]
    fn the_card_escapes_text_and_names_fields_by_position() {
        let html = card(&pending());
        assert!(html.contains("Pick &lt;b&gt;one&lt;/b&gt;"), "{html}");
        assert!(html.contains("session s&lt;1&gt;"), "{html}");
        assert!(
            html.contains("name=\"answer_1\" value=\"a&quot;b\""),
            "{html}"
        );
        assert!(html.contains("name=\"answer_1_other\""), "{html}");
        assert!(html.contains("name=\"answer_2\" maxlength"), "{html}");
        assert!(!html.contains("answer_2_other"), "{html}");
    }

    #[test]
    fn the_form_prefers_own_words_and_reads_decline() {
        let p = pending();
        let reply = from_form(
            b"reply=answer&answer_1=c&answer_1_other=+mine+&answer_2=because",
            &p,
        )
        .unwrap();
        assert_eq!(
            reply,
            QuestionReply::Answered(vec!["mine".into(), "because".into()])
        );
        let reply = from_form(b"reply=answer&answer_1=c", &p).unwrap();
        assert_eq!(reply, QuestionReply::Answered(vec!["c".into(), "".into()]));
        assert_eq!(
            from_form(b"reply=decline&message=no", &p).unwrap(),
            QuestionReply::Declined(Some("no".into()))
        );
        assert!(from_form(b"answer_1=c", &p).is_err());
        assert!(from_form(b"reply=maybe", &p).is_err());
    }

    #[test]
    fn json_replies_are_checked_field_by_field() {
        let ok = |body: &str| from_json(body.as_bytes()).unwrap();
        let err = |body: &str| from_json(body.as_bytes()).unwrap_err().to_string();
        assert_eq!(
            ok(r#"{"answers": ["a", "b"]}"#),
            QuestionReply::Answered(vec!["a".into(), "b".into()])
        );
        assert_eq!(
            ok(r#"{"decline": true, "message": "later"}"#),
            QuestionReply::Declined(Some("later".into()))
        );
        for (body, wanted) in [
            ("{", "not valid JSON"),
            ("[1]", "must be a JSON object"),
            (
                r#"{"answers": ["a", 7]}"#,
                "answers[1] must be a string, not a number",
            ),
            (r#"{"answers": "a"}"#, "answers must be a list of strings"),
            (r#"{"answer": ["a"]}"#, "unknown field \"answer\""),
            (r#"{}"#, "has no answers"),
            (r#"{"answers": [], "decline": true}"#, "not both"),
            (r#"{"decline": "yes"}"#, "decline must be true or false"),
            (
                r#"{"decline": true, "message": 5}"#,
                "message must be a string",
            ),
            (r#"{"answers": ["a"], "message": "m"}"#, "with decline only"),
        ] {
            let e = err(body);
            assert!(e.contains(wanted), "{body}: {e}");
        }
    }

    /// The model writes the question and its options: a right-to-left
    /// override in them reordered what the page showed. Shown escaped; an
    /// option's value, sent back as the answer, stays as it was.
    #[test]
    fn a_bidi_override_in_a_question_or_option_is_shown_escaped() {
        let mut p = pending();
        p.questions[0].question = "Delete \u{202e}?sdrawkcab".into();
        p.questions[0].options = Some(vec!["yes\u{202e}".into()]);
        let html = card(&p);
        assert!(html.contains("Delete \\u{202E}?sdrawkcab"), "{html}");
        assert!(html.contains(" yes\\u{202E}"), "{html}");
        assert_eq!(
            html.matches('\u{202e}').count(),
            1,
            "only the value: {html}"
        );
    }
}
