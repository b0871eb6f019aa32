//! Asking a person on the terminal (`/dev/tty`), for `toolgate call`.
//!
//! Reads from the controlling terminal rather than stdin, so a command whose
//! stdin is a pipe still asks the person at the keyboard, and a process with no
//! terminal (CI, a daemon) reports the channel as unavailable instead of hanging.

use std::fs::{File, OpenOptions};
use std::io::{BufRead, BufReader, Write};

use async_trait::async_trait;
use toolgate_core::{Failure, Preview};
use toolgate_policy::approvals::{Answer, ApprovalChannel, AskPrompt, ChannelError};

/// The terminal channel: approvals and the `question` tool's questions.
#[derive(Debug, Default)]
pub struct TerminalChannel;

fn open_tty() -> Result<(File, File), ChannelError> {
    let read = File::open("/dev/tty")
        .map_err(|e| ChannelError::Unavailable(Failure::caused("no terminal to ask on", e)))?;
    let write = OpenOptions::new()
        .write(true)
        .open("/dev/tty")
        .map_err(|e| ChannelError::Unavailable(Failure::caused("no terminal to ask on", e)))?;
    Ok((read, write))
}

/// Shows `text` on the terminal and reads a yes/no answer (anything but `y`
/// or `yes` is no). Fails when there is no terminal.
pub fn confirm(text: &str) -> Result<bool, ChannelError> {
    let (read, mut write) = open_tty()?;
    write
        .write_all(text.as_bytes())
        .and_then(|()| write.flush())
        .map_err(|e| ChannelError::Failed(Failure::of(e)))?;
    let mut line = String::new();
    BufReader::new(read)
        .read_line(&mut line)
        .map_err(|e| ChannelError::Failed(Failure::of(e)))?;
    Ok(matches!(
        line.trim().to_ascii_lowercase().as_str(),
        "y" | "yes"
    ))
}

/// Renders the prompt as the person sees it.
pub fn render_prompt(prompt: &AskPrompt) -> String {
    // What reaches the terminal has its escapes and overrides made visible.
    let prompt = &prompt.shown();
    let mut text = format!("\ntoolgate: {} wants to run:\n", prompt.tool);
    for item in &prompt.items {
        text.push_str(&format!(
            "  [{}] {} {}\n      why: {}\n",
            item.risk, item.action, item.resource, item.reason
        ));
        if prompt.offer_always {
            text.push_str(&format!("      {}\n", item.saves()));
        }
    }
    if let Some(preview) = &prompt.preview {
        text.push_str(&render_preview(preview));
    }
    let mut choices = vec!["[o]nce"];
    if prompt.offer_session {
        choices.push("[s]ession");
    }
    if prompt.offer_always {
        choices.push("[a]lways");
    }
    choices.push("[r]eject [message]");
    text.push_str(&format!("Allow? {}: ", choices.join(" / ")));
    text
}

/// Most lines of a preview's body shown on the terminal (the page shows more).
const MAX_PREVIEW_LINES: usize = 40;

/// A tool's preview of the call, indented under the requests: its title, its
/// body (cut after [`MAX_PREVIEW_LINES`]), then its labelled facts.
fn render_preview(preview: &Preview) -> String {
    let mut text = format!("  {}:\n", preview.title);
    if let Some(body) = &preview.body {
        let lines: Vec<&str> = body.text().lines().collect();
        for line in lines.iter().take(MAX_PREVIEW_LINES) {
            text.push_str(&format!("    {line}\n"));
        }
        if lines.len() > MAX_PREVIEW_LINES {
            text.push_str(&format!(
                "    … {} more lines\n",
                lines.len() - MAX_PREVIEW_LINES
            ));
        }
    }
    for field in &preview.fields {
        text.push_str(&format!("    {}: {}\n", field.label, field.value));
    }
    text
}

/// Parses one answer line; `None` when it is not a valid choice for `prompt`.
pub fn parse_answer(line: &str, prompt: &AskPrompt) -> Option<Answer> {
    let line = line.trim();
    let (word, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let message = Some(rest.trim().to_string()).filter(|m| !m.is_empty());
    match word.to_ascii_lowercase().as_str() {
        "o" | "once" | "y" | "yes" => Some(Answer::Once),
        "s" | "session" if prompt.offer_session => Some(Answer::Session),
        "a" | "always" if prompt.offer_always => Some(Answer::Always),
        "r" | "reject" | "n" | "no" => Some(Answer::Reject { message }),
        _ => None,
    }
}

#[async_trait]
impl ApprovalChannel for TerminalChannel {
    async fn ask(&self, prompt: &AskPrompt) -> Result<Answer, ChannelError> {
        let (read, mut write) = open_tty()?;
        let prompt = prompt.clone();
        tokio::task::spawn_blocking(move || {
            let mut lines = BufReader::new(read);
            loop {
                write
                    .write_all(render_prompt(&prompt).as_bytes())
                    .map_err(|e| ChannelError::Failed(Failure::of(e)))?;
                let mut line = String::new();
                let n = lines
                    .read_line(&mut line)
                    .map_err(|e| ChannelError::Failed(Failure::of(e)))?;
                if n == 0 {
                    return Err(ChannelError::Unavailable("the terminal closed".into()));
                }
                if let Some(answer) = parse_answer(&line, &prompt) {
                    return Ok(answer);
                }
                let _ = writeln!(write, "Not a valid choice: {:?}", line.trim());
            }
        })
        .await
        .map_err(|e| ChannelError::Failed(Failure::of(e)))?
    }
}

/// Picks an option by its 1-based number, else takes the text as written.
pub fn interpret_choice(line: &str, options: Option<&[String]>) -> String {
    let line = line.trim();
    if let (Some(options), Ok(n)) = (options, line.parse::<usize>()) {
        if let Some(choice) = n.checked_sub(1).and_then(|i| options.get(i)) {
            return choice.clone();
        }
    }
    line.to_string()
}

/// One question as the terminal shows it: the model wrote it, so its
/// escapes are made visible (line breaks kept) and cannot draw a fake
/// prompt or clear the screen.
fn render_question(q: &toolgate_core::Question) -> String {
    use toolgate_core::visible::escape_hidden;
    let mut text = format!(
        "\ntoolgate question: {}\n",
        escape_hidden(&q.question, &['\n'])
    );
    for (i, o) in q.options.iter().flatten().enumerate() {
        text.push_str(&format!("  {}. {}\n", i + 1, escape_hidden(o, &[])));
    }
    text.push_str("> ");
    text
}

/// Asks the `question` tool's questions on the terminal.
#[async_trait]
impl toolgate_core::QuestionChannel for TerminalChannel {
    async fn ask(
        &self,
        _caller: &toolgate_core::CallIdentity,
        questions: &[toolgate_core::Question],
        cancel: &tokio_util::sync::CancellationToken,
    ) -> Result<Vec<String>, toolgate_core::QuestionError> {
        use toolgate_core::QuestionError;
        let (read, mut write) = open_tty().map_err(|e| {
            QuestionError::Failed(match e {
                ChannelError::Unavailable(why) | ChannelError::Failed(why) => why,
            })
        })?;
        let questions = questions.to_vec();
        let work = tokio::task::spawn_blocking(move || {
            let mut lines = BufReader::new(read);
            let mut answers = Vec::new();
            for q in &questions {
                let text = render_question(q);
                write
                    .write_all(text.as_bytes())
                    .map_err(|e| QuestionError::Failed(Failure::of(e)))?;
                let mut line = String::new();
                if lines
                    .read_line(&mut line)
                    .map_err(|e| QuestionError::Failed(Failure::of(e)))?
                    == 0
                {
                    return Err(QuestionError::Failed("the terminal closed".into()));
                }
                answers.push(interpret_choice(&line, q.options.as_deref()));
            }
            Ok(answers)
        });
        tokio::select! {
            r = work => r.map_err(|e| QuestionError::Failed(Failure::of(e)))?,
            () = cancel.cancelled() => Err(QuestionError::Cancelled),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Risk;
    use toolgate_policy::approvals::AskItem;

    fn prompt(always: bool) -> AskPrompt {
        AskPrompt {
            session_id: "s".into(),
            call_id: "c".into(),
            tool: "bash".into(),
            items: vec![AskItem {
                action: "bash".into(),
                resource: "rm -rf build".into(),
                risk: Risk::Destructive,
                reason: "destructive".into(),
                save_pattern: None,
            }],
            offer_session: always,
            offer_always: always,
            timeout_ms: 1000,
            preview: None,
        }
    }

    #[test]
    fn answers_parse_and_always_is_refused_when_not_offered() {
        let p = prompt(true);
        assert_eq!(parse_answer("o\n", &p), Some(Answer::Once));
        assert_eq!(parse_answer("always", &p), Some(Answer::Always));
        assert_eq!(parse_answer(" s ", &p), Some(Answer::Session));
        assert_eq!(
            parse_answer("r use cargo clean instead", &p),
            Some(Answer::Reject {
                message: Some("use cargo clean instead".into())
            })
        );
        assert_eq!(
            parse_answer("r", &p),
            Some(Answer::Reject { message: None })
        );
        assert_eq!(parse_answer("maybe", &p), None);
        assert_eq!(parse_answer("", &p), None);
        let destructive = prompt(false);
        assert_eq!(parse_answer("a", &destructive), None);
        assert_eq!(parse_answer("s", &destructive), None);
        assert!(!render_prompt(&destructive).contains("[a]lways"));
        assert!(render_prompt(&p).contains("rm -rf build"));
    }

    #[test]
    fn the_prompt_shows_the_exact_pattern_always_saves() {
        let mut p = prompt(true);
        p.items[0].resource = "python3 scripts/test_all.py".into();
        p.items[0].risk = Risk::Execute;
        p.items[0].save_pattern = Some("python3 scripts/test_all.py".into());
        let text = render_prompt(&p);
        assert!(
            text.contains("\"always\" saves bash `python3 scripts/test_all.py`"),
            "{text}"
        );
        // Nothing is said of "always" where it is not offered.
        assert!(!render_prompt(&prompt(false)).contains("\"always\" saves"));
    }

    #[test]
    fn a_preview_is_shown_under_the_requests_whatever_the_tool() {
        let mut p = prompt(true);
        p.tool = "deploy".into();
        let body: String = (1..=45).map(|n| format!("step {n}\n")).collect();
        p.preview = Some(
            Preview::new("Deploy")
                .with_body(toolgate_core::PreviewBody::Text(body))
                .with_field("target", "staging"),
        );
        let text = render_prompt(&p);
        let preview = text.find("  Deploy:\n").expect(&text);
        assert!(
            preview > text.find("why: destructive").expect(&text),
            "{text}"
        );
        assert!(
            text.contains("    step 40\n") && !text.contains("step 41"),
            "{text}"
        );
        assert!(text.contains("    … 5 more lines\n"), "{text}");
        assert!(text.contains("    target: staging\n"), "{text}");
        assert!(text.ends_with("[r]eject [message]: "), "{text}");
    }

    /// A command whose escape sequences erase the line and move the cursor:
    /// written to the terminal as it was, the person saw `ls -la` where the
    /// call would run `rm -rf ~`. The same goes for the preview's body and
    /// for a right-to-left override in a path.
    #[test]
    fn an_escape_sequence_in_a_command_cannot_erase_it_from_the_terminal_prompt() {
        let command = "rm -rf ~ #\u{1b}[2K\u{1b}[1Gls -la";
        let mut p = prompt(true);
        p.items[0].resource = command.into();
        p.items[0].reason = "asks\u{202e}".into();
        p.items[0].save_pattern = Some(command.into());
        p.preview = Some(
            Preview::new("Command")
                .with_body(toolgate_core::PreviewBody::Command(format!(
                    "{command}\n\tnext line"
                )))
                .with_field("in", "/tmp/\u{202e}cod"),
        );
        let text = render_prompt(&p);
        for hidden in ['\u{1b}', '\u{202e}'] {
            assert!(!text.contains(hidden), "{text:?}");
        }
        assert!(
            text.contains("rm -rf ~ #\\u{001B}[2K\\u{001B}[1Gls -la"),
            "{text}"
        );
        assert!(text.contains("    \tnext line\n"), "{text:?}");
        assert!(text.contains("in: /tmp/\\u{202E}cod"), "{text}");
    }

    /// A question whose text clears the screen and draws what looks like an
    /// approval prompt reached the terminal as it was.
    #[test]
    fn a_question_cannot_clear_the_screen_or_draw_a_prompt() {
        let q: toolgate_core::Question = serde_json::from_value(serde_json::json!({
            "question": "Pick one\u{1b}[2J\u{1b}[H\ntoolgate: bash wants to run: ls",
            "options": ["a\u{1b}[1A", "b"]
        }))
        .unwrap();
        let text = render_question(&q);
        assert!(!text.contains('\u{1b}'), "{text:?}");
        assert!(
            text.contains("Pick one\\u{001B}[2J\\u{001B}[H\ntoolgate: bash"),
            "{text}"
        );
        assert!(text.contains("  1. a\\u{001B}[1A\n  2. b\n> "), "{text}");
    }
}
