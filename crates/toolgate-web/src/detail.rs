//! What a pending call will do, in full: the preview its tool gave with the
//! ask (a command, a diff, labelled facts), shown the same way for every tool.
//! When the ask has no preview, the call's input is read back from its first
//! `permission.requested` event (the only one that carries it), which the
//! pipeline makes durable before anyone is asked, and shown as it is.

use serde_json::Value;
use toolgate_core::event_query::{EventFilter, EventQuery, QueryError};
use toolgate_core::{EventKind, Preview, PreviewBody};

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

/// HTML showing what the call will do, as its tool described it.
pub fn render(preview: &Preview) -> Markup {
    html! {
        section class="detail" {
            h3 { (preview.title) }
            @match &preview.body {
                Some(PreviewBody::Command(command)) => pre class="command" { (command) },
                Some(PreviewBody::Diff(diff)) => (diff_html(diff)),
                Some(PreviewBody::Text(text)) => pre { (clipped(text)) },
                None => {},
            }
            @for field in &preview.fields {
                p class="field" { (field.label) " " code { (field.value) } }
            }
        }
    }
}

/// HTML showing the call's input as it was logged, for a call whose tool gave
/// no preview (empty when the input is empty).
pub fn render_input(args: &Value) -> Markup {
    json_section(args)
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
    // JSON escapes controls but not a bidi override or a zero-width space.
    let pretty = toolgate_core::visible::escape_hidden(&pretty, &['\n']);
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
    fn a_diff_body_is_shown_one_coloured_line_at_a_time() {
        let diff = "--- src/a.rs\n+++ src/a.rs\n@@ -1 +1 @@\n-let x = 1;\n+let x = 2;\n";
        let html =
            render(&Preview::new("Edit").with_body(PreviewBody::Diff(diff.into()))).into_string();
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
    fn a_command_and_its_fields_are_escaped() {
        let preview = Preview::new("Command")
            .with_body(PreviewBody::Command("echo '<b>' && rm -rf /tmp/x".into()))
            .with_field("in", "<dir>");
        let html = render(&preview).into_string();
        // maud leaves `'` as it is: it quotes every attribute with `"`.
        assert!(
            html.contains("echo '&lt;b&gt;' &amp;&amp; rm -rf /tmp/x"),
            "{html}"
        );
        assert!(html.contains("in <code>&lt;dir&gt;</code>"), "{html}");
    }

    #[test]
    fn long_content_is_clipped_with_a_note() {
        let diff: String = "+x\n".repeat(MAX_LINES + 5);
        let html = render(&Preview::new("Write").with_body(PreviewBody::Diff(diff))).into_string();
        assert!(html.contains("more lines"), "{html}");
        assert_eq!(html.matches("class=\"add\"").count(), MAX_LINES);
        let text = "y\n".repeat(MAX_LINES + 5);
        let html = render(&Preview::new("Text").with_body(PreviewBody::Text(text))).into_string();
        assert!(html.contains("… 5 more lines"), "{html}");
    }

    #[test]
    fn an_input_without_a_preview_is_shown_as_json() {
        let html = render_input(&json!({"url": "https://example.com/<x>"})).into_string();
        assert!(html.contains("<h3>Input</h3>"), "{html}");
        assert!(html.contains("https://example.com/&lt;x&gt;"), "{html}");
        assert!(render_input(&json!({})).into_string().is_empty());
    }
}
