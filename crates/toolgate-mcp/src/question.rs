//! The `question` tool's questions as an MCP elicitation form.
//!
//! Each question becomes a string field titled with its text (`answer_1`,
//! `answer_2`, …). A question with options offers them as choices, plus an
//! `answer_N_other` field for an answer in the user's own words, which wins when
//! filled in. On protocol 2026-07-28 the form travels in an input-required
//! result under [`QUESTION_KEY`].

use async_trait::async_trait;
use rmcp::model::{ElicitResult, ElicitationAction, ElicitationSchema};
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use toolgate_core::{CallIdentity, Failure, Question, QuestionChannel, QuestionError};
use toolgate_policy::approvals::ChannelError;

use crate::approval::ElicitationChannel;
use crate::mrtr::QUESTION_KEY;

/// Why the client gave no answers.
#[derive(Debug, thiserror::Error)]
pub enum QuestionFormError {
    /// No client that can answer forms is connected for the session.
    #[error("{0}")]
    Unavailable(#[source] Failure),
    /// The user declined or dismissed the form.
    #[error("the user declined to answer")]
    Declined,
    /// The elicitation failed or its answer is unusable.
    #[error("{0}")]
    Failed(#[source] Failure),
}

fn field(i: usize) -> String {
    format!("answer_{}", i + 1)
}

fn other_field(i: usize) -> String {
    format!("answer_{}_other", i + 1)
}

/// The message and form schema for `questions`.
pub fn question_form(questions: &[Question]) -> Result<(String, ElicitationSchema), Failure> {
    let mut message = String::from("toolgate: the model asks you");
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (i, q) in questions.iter().enumerate() {
        message.push_str(&format!("\n{}. {}", i + 1, q.question));
        match q.options.as_deref().filter(|o| !o.is_empty()) {
            None => {
                properties.insert(field(i), json!({"type": "string", "title": q.question}));
                required.push(Value::String(field(i)));
            }
            Some(options) => {
                let choices: Vec<Value> = options
                    .iter()
                    .map(|o| json!({"const": o, "title": o}))
                    .collect();
                properties.insert(
                    field(i),
                    json!({"type": "string", "title": q.question, "oneOf": choices}),
                );
                properties.insert(
                    other_field(i),
                    json!({
                        "type": "string",
                        "title": format!("{}: or answer in your own words", i + 1),
                    }),
                );
            }
        }
    }
    let mut schema = Map::new();
    schema.insert("type".into(), json!("object"));
    schema.insert("properties".into(), Value::Object(properties));
    if !required.is_empty() {
        schema.insert("required".into(), Value::Array(required));
    }
    let schema = ElicitationSchema::from_json_schema(schema)
        .map_err(|e| Failure::caused("cannot build the question form", e))?;
    Ok((message, schema))
}

/// Reads one answer per question from the client's reply. Declining or
/// dismissing the form is [`QuestionFormError::Declined`]; a missing answer or
/// a choice that was not offered is an error naming the question.
pub fn question_answers(
    reply: &ElicitResult,
    questions: &[Question],
) -> Result<Vec<String>, QuestionFormError> {
    let invalid =
        |m: String| QuestionFormError::Failed(format!("invalid answer to the form: {m}").into());
    if !matches!(reply.action, ElicitationAction::Accept) {
        return Err(QuestionFormError::Declined);
    }
    let content = reply
        .content
        .as_ref()
        .and_then(Value::as_object)
        .ok_or_else(|| invalid("accepted without content".into()))?;
    let text = |key: &str| -> Result<Option<String>, QuestionFormError> {
        match content.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.trim().to_string()).filter(|s| !s.is_empty())),
            Some(other) => Err(invalid(format!("`{key}` must be a string, not {other}"))),
        }
    };
    let mut answers = Vec::with_capacity(questions.len());
    for (i, q) in questions.iter().enumerate() {
        let chosen = text(&field(i))?;
        let own = match &q.options {
            Some(_) => text(&other_field(i))?,
            None => None,
        };
        if let (Some(options), Some(c), None) = (&q.options, &chosen, &own)
            && !options.contains(c)
        {
            return Err(invalid(format!(
                "{c:?} is not one of the options of question {}",
                i + 1
            )));
        }
        let answer = own.or(chosen).ok_or_else(|| {
            invalid(format!(
                "question {} ({:?}) has no answer",
                i + 1,
                q.question
            ))
        })?;
        answers.push(answer);
    }
    Ok(answers)
}

impl ElicitationChannel {
    /// Asks `questions` of the client of `session_id` (for call `call_id`) in
    /// one form and returns one answer per question.
    pub async fn ask_questions(
        &self,
        session_id: &str,
        call_id: &str,
        questions: &[Question],
    ) -> Result<Vec<String>, QuestionFormError> {
        let (message, schema) = question_form(questions).map_err(QuestionFormError::Failed)?;
        let reply = self
            .elicit_form(session_id, call_id, QUESTION_KEY, message, schema)
            .await
            .map_err(|e| match e {
                ChannelError::Unavailable(why) => QuestionFormError::Unavailable(why),
                ChannelError::Failed(why) => QuestionFormError::Failed(why),
            })?;
        question_answers(&reply, questions)
    }
}

/// The client as a question channel: a declined form ends the question; a
/// client that cannot be asked, or a form that fails, is a
/// [`QuestionError::Failed`], so the next channel may be tried.
#[async_trait]
impl QuestionChannel for ElicitationChannel {
    async fn ask(
        &self,
        caller: &CallIdentity,
        questions: &[Question],
        cancel: &CancellationToken,
    ) -> Result<Vec<String>, QuestionError> {
        let asked = cancel
            .run_until_cancelled(self.ask_questions(&caller.session_id, &caller.call_id, questions))
            .await
            .ok_or(QuestionError::Cancelled)?;
        match asked {
            Ok(answers) => Ok(answers),
            Err(QuestionFormError::Declined) => Err(QuestionError::Declined(None)),
            Err(e) => Err(QuestionError::Failed(Failure::of(e))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn questions() -> Vec<Question> {
        vec![
            Question {
                question: "Which database?".into(),
                options: Some(vec!["sqlite".into(), "postgres".into()]),
            },
            Question {
                question: "Anything else?".into(),
                options: None,
            },
        ]
    }

    fn accept(content: Value) -> ElicitResult {
        let mut r = ElicitResult::new(ElicitationAction::Accept);
        r.content = Some(content);
        r
    }

    #[test]
    fn the_form_shows_each_question_and_its_choices() {
        let (message, schema) = question_form(&questions()).unwrap();
        assert!(message.contains("1. Which database?") && message.contains("2. Anything else?"));
        let v = serde_json::to_value(&schema).unwrap();
        let choices: Vec<&str> = v["properties"]["answer_1"]["oneOf"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["const"].as_str().unwrap())
            .collect();
        assert_eq!(choices, ["sqlite", "postgres"]);
        assert_eq!(v["properties"]["answer_1_other"]["type"], "string");
        assert_eq!(v["properties"]["answer_2"]["title"], "Anything else?");
        assert_eq!(v["required"], json!(["answer_2"]));
    }

    #[test]
    fn answers_come_back_in_order_and_own_words_win() {
        let qs = questions();
        let got = question_answers(
            &accept(json!({"answer_1": "postgres", "answer_2": " no "})),
            &qs,
        )
        .unwrap();
        assert_eq!(got, ["postgres", "no"]);
        let got = question_answers(
            &accept(json!({"answer_1": "sqlite", "answer_1_other": "duckdb", "answer_2": "x"})),
            &qs,
        )
        .unwrap();
        assert_eq!(got, ["duckdb", "x"]);
    }

    #[test]
    fn bad_replies_are_named() {
        let qs = questions();
        let err = |c: Value| question_answers(&accept(c), &qs).unwrap_err().to_string();
        assert!(
            err(json!({"answer_1": "mysql", "answer_2": "x"})).contains("not one of the options")
        );
        assert!(err(json!({"answer_1": "sqlite"})).contains("question 2"));
        assert!(err(json!({"answer_2": "x"})).contains("question 1"));
        assert!(err(json!({"answer_1": 3, "answer_2": "x"})).contains("must be a string"));
        let declined = question_answers(&ElicitResult::new(ElicitationAction::Decline), &qs);
        assert!(matches!(declined, Err(QuestionFormError::Declined)));
        let empty = question_answers(&ElicitResult::new(ElicitationAction::Accept), &qs);
        assert!(matches!(empty, Err(QuestionFormError::Failed(_))));
    }

    #[tokio::test]
    async fn without_a_client_the_channel_is_unavailable() {
        let channel = ElicitationChannel::new();
        let err = channel
            .ask_questions("nobody", "call", &questions())
            .await
            .unwrap_err();
        assert!(matches!(err, QuestionFormError::Unavailable(_)), "{err}");
    }

    #[tokio::test]
    async fn without_a_client_the_question_port_passes_to_the_next_channel() {
        let channel = ElicitationChannel::new();
        let caller = CallIdentity {
            session_id: "nobody".into(),
            call_id: "call".into(),
            ..CallIdentity::default()
        };
        let err = QuestionChannel::ask(&channel, &caller, &questions(), &CancellationToken::new())
            .await
            .unwrap_err();
        assert!(matches!(err, QuestionError::Failed(_)), "{err}");
    }
}
