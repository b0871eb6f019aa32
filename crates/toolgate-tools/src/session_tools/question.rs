//! `question`: asks the user through a [`QuestionChannel`] and returns the
//! answers. The tool never talks to a terminal itself: the embedding program
//! supplies the channel (the CLI asks on the terminal, the MCP server through
//! elicitation).

use std::sync::Arc;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Failure, Location, PermissionRequest, Risk, Tool, ToolContext, ToolError, ToolTraits,
};
// The question type and its port are core's, shared with the page and MCP.
pub use toolgate_core::{Question, QuestionChannel, QuestionError};

use super::SessionToolsConfig;

const MAX_QUESTIONS: usize = 20;
const MAX_OPTIONS: usize = 20;
const MAX_TEXT_CHARS: usize = 2000;

/// The answer to one question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Answer {
    /// The question asked.
    pub question: String,
    /// What the user answered.
    pub answer: String,
}

/// Input of `question`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuestionInput {
    /// The questions, asked in order.
    pub questions: Vec<Question>,
}

/// Output of `question`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct QuestionOutput {
    /// One answer per question, in order.
    pub answers: Vec<Answer>,
}

/// The `question` tool.
#[derive(Clone)]
pub struct QuestionTool {
    channel: Option<Arc<dyn QuestionChannel>>,
}

impl std::fmt::Debug for QuestionTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("QuestionTool")
            .field("channel", &self.channel.is_some())
            .finish()
    }
}

impl QuestionTool {
    /// A question tool using `config.question`.
    pub fn new(config: &SessionToolsConfig) -> Self {
        QuestionTool {
            channel: config.question.clone(),
        }
    }
}

fn check_text(what: &str, text: &str) -> Result<(), ToolError> {
    if text.trim().is_empty() {
        return Err(ToolError::InvalidInput(format!("{what} is empty")));
    }
    let chars = text.chars().count();
    if chars > MAX_TEXT_CHARS {
        return Err(ToolError::InvalidInput(format!(
            "{what} is {chars} characters; the limit is {MAX_TEXT_CHARS}"
        )));
    }
    Ok(())
}

fn check_questions(questions: &[Question]) -> Result<(), ToolError> {
    if questions.is_empty() {
        return Err(ToolError::InvalidInput(
            "questions is empty: ask at least one".into(),
        ));
    }
    if questions.len() > MAX_QUESTIONS {
        return Err(ToolError::InvalidInput(format!(
            "{} questions; at most {MAX_QUESTIONS} per call",
            questions.len()
        )));
    }
    for (i, q) in questions.iter().enumerate() {
        check_text(&format!("questions[{i}].question"), &q.question)?;
        let Some(options) = &q.options else { continue };
        if options.len() > MAX_OPTIONS {
            return Err(ToolError::InvalidInput(format!(
                "questions[{i}].options has {} entries; at most {MAX_OPTIONS}",
                options.len()
            )));
        }
        for (j, o) in options.iter().enumerate() {
            check_text(&format!("questions[{i}].options[{j}]"), o)?;
            if options[..j].contains(o) {
                return Err(ToolError::InvalidInput(format!(
                    "questions[{i}].options[{j}] repeats {o:?}"
                )));
            }
        }
    }
    Ok(())
}

impl Tool for QuestionTool {
    type Input = QuestionInput;
    type Output = QuestionOutput;

    fn traits(&self) -> ToolTraits {
        // Asks a person; one question at a time.
        ToolTraits {
            read_only: true,
            concurrency_safe: false,
            destructive: false,
            open_world: false,
        }
    }

    fn description(&self) -> String {
        "Asks the user one or more questions (each optionally with choices) and returns their \
         answers. Use it when you need a decision or information only the user has."
            .into()
    }

    fn intent(
        &self,
        input: &QuestionInput,
        _location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        check_questions(&input.questions)?;
        let summary = input
            .questions
            .iter()
            .map(|q| q.question.trim())
            .collect::<Vec<_>>()
            .join("\n");
        Ok(vec![
            PermissionRequest::new("question", summary, Risk::Read)
                .with_save_pattern(Some("*".into())),
        ])
    }

    async fn execute(
        &self,
        input: QuestionInput,
        ctx: ToolContext,
    ) -> Result<QuestionOutput, ToolError> {
        check_questions(&input.questions)?;
        let channel = self.channel.as_ref().ok_or_else(|| {
            ToolError::Failed(
                "question is not available: no question channel is configured (the program \
                 embedding toolgate must provide one, e.g. the terminal for `toolgate call`)"
                    .into(),
            )
        })?;
        let answers = tokio::select! {
            () = ctx.cancel.cancelled() => return Err(ToolError::Cancelled),
            r = channel.ask(&ctx.identity, &input.questions, &ctx.cancel) => r,
        };
        let answers = match answers {
            Ok(a) => a,
            Err(QuestionError::Cancelled) => return Err(ToolError::Cancelled),
            Err(e) => return Err(ToolError::Caused(Failure::of(e))),
        };
        if answers.len() != input.questions.len() {
            return Err(ToolError::Failed(format!(
                "the question channel returned {} answers for {} questions",
                answers.len(),
                input.questions.len()
            )));
        }
        Ok(QuestionOutput {
            answers: input
                .questions
                .into_iter()
                .zip(answers)
                .map(|(q, answer)| Answer {
                    question: q.question,
                    answer,
                })
                .collect(),
        })
    }

    fn project(&self, output: &QuestionOutput) -> Vec<Content> {
        let text = output
            .answers
            .iter()
            .map(|a| format!("Q: {}\nA: {}", a.question, a.answer))
            .collect::<Vec<_>>()
            .join("\n\n");
        vec![Content::text(text)]
    }
}
