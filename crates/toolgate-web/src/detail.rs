//! What a pending call would do, in full: the command, or the diff of an edit or
//! patch. The ask carries only actions and resources, so the call's input is
//! read back from its first `permission.requested` event (the only one that
//! carries it), which the pipeline makes durable before anyone is asked.

use serde_json::Value;
use similar::TextDiff;
use toolgate_core::EventKind;
use toolgate_core::event_query::{EventFilter, EventQuery, QueryError};

use maud::{Markup, html};

/// Most lines of a diff or file content shown on the page.
const MAX_LINES: usize = 2000;

/// The decoded input of call `call_id`, when the audit log has it.
pub fn call_args(events: &dyn EventQuery, session_id: &str, call_id: &str) -> Option<Value> {
    let filter = EventFilter {
        session: Some(session_id.to_string()),
        call_id: Some(call_id.to_string()),
        kind: Some(EventKind::PermissionRequested),
        limit: Some(1),
        ..EventFilter::default()
    };
    match events.query(&filter) {
        Ok(found) => found.into_iter().next()?.event.payload.args,
        Err(QueryError::NoLog(_)) => None,
        Err(e) => {
            tracing::warn!(error = %e, call_id, "cannot read the call's input from the audit log");
            None
        }
    }
}

/// HTML showing what the call would do (empty when there is nothing to add).
pub fn render(tool: &str, args: &Value) -> Markup {
    let text = |key: &str| args.get(key).and_then(Value::as_str);
    match tool {
        "bash" => match text("command") {
            Some(command) => html! {
                section class="detail" {
                    h3 { "Command" }
                    pre class="command" { (command) }
                    @if let Some(dir) = text("workdir") {
                        p { "in " code { (dir) } }
                    }
                    @if let Some(why) = text("description") {
                        p class="said" { "The model says: " (why) }
                    }
                }
            },
            None => html! {},
        },
        "edit" => match (text("path"), text("old_string"), text("new_string")) {
            (Some(path), Some(old), Some(new)) => {
                let diff = TextDiff::from_lines(old, new)
                    .unified_diff()
                    .context_radius(3)
                    .header(path, path)
                    .to_string();
                let all = if args.get("replace_all").and_then(Value::as_bool) == Some(true) {
                    " (every occurrence)"
                } else {
                    ""
                };
                section(&format!("Edit{all}"), diff_html(&diff))
            }
            _ => json_section(args),
        },
        "write" => match (text("path"), text("content")) {
            (Some(path), Some(content)) => {
                let added: String = content.lines().map(|l| format!("+{l}\n")).collect();
                let diff = format!("+++ {path} (whole new content)\n{added}");
                section("Write", diff_html(&diff))
            }
            _ => json_section(args),
        },
        "apply_patch" => match text("patch") {
            Some(patch) => section("Patch", diff_html(patch)),
            None => json_section(args),
        },
        _ => json_section(args),
    }
}

fn section(title: &str, body: Markup) -> Markup {
    html! {
        section class="detail" { h3 { (title) } (body) }
    }
}

fn json_section(args: &Value) -> Markup {
    if args.as_object().is_some_and(|o| o.is_empty()) {
        return html! {};
    }
    let pretty = serde_json::to_string_pretty(args).unwrap_or_default();
    section("Input", html! { pre { (clipped(&pretty)) } })
}

/// The class of a diff line, by its first characters.
fn line_class(line: &str) -> &'static str {
    if line.starts_with("+++") || line.starts_with("---") || line.starts_with("***") {
        "head"
    } else if line.starts_with("@@") {
        "hunk"
    } else if line.starts_with('+') {
        "add"
    } else if line.starts_with('-') {
        "del"
    } else {
        "ctx"
    }
}

/// A diff with one span per line, coloured by its first character.
fn diff_html(diff: &str) -> Markup {
    let total = diff.lines().count();
    // One block span per line, no newline between them: the spans are the lines.
    html! {
        pre class="diff" {
            @for line in diff.lines().take(MAX_LINES) {
                span class=(line_class(line)) { (line) }
            }
            @if total > MAX_LINES {
                span class="more" {
                    "… " (total - MAX_LINES) " more lines (the full input is in the audit log)"
                }
            }
        }
    }
}

/// The text, cut after [`MAX_LINES`] lines with a note.
fn clipped(text: &str) -> String {
    let total = text.lines().count();
    if total <= MAX_LINES {
        return text.to_string();
    }
    let head: Vec<&str> = text.lines().take(MAX_LINES).collect();
    format!("{}\n… {} more lines", head.join("\n"), total - MAX_LINES)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn edit_shows_a_unified_diff() {
        let html = render(
            "edit",
            &json!({"path": "src/a.rs", "old_string": "let x = 1;\n", "new_string": "let x = 2;\n"}),
        )
        .into_string();
        assert!(
            html.contains("<span class=\"del\">-let x = 1;</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"add\">+let x = 2;</span>"),
            "{html}"
        );
        assert!(
            html.contains("<span class=\"head\">--- src/a.rs</span>"),
            "{html}"
        );
    }

    #[test]
    fn bash_shows_the_escaped_command() {
        let html = render("bash", &json!({"command": "echo '<b>' && rm -rf /tmp/x"})).into_string();
        // maud leaves `'` as it is: it quotes every attribute with `"`.
        assert!(
            html.contains("echo '&lt;b&gt;' &amp;&amp; rm -rf /tmp/x"),
            "{html}"
        );
    }

    #[test]
    fn long_content_is_clipped_with_a_note() {
        let content = "x\n".repeat(MAX_LINES + 5);
        let html = render("write", &json!({"path": "big.txt", "content": content})).into_string();
        assert!(html.contains("more lines"), "{html}");
        assert_eq!(html.matches("class=\"add\"").count(), MAX_LINES - 1);
    }
}
