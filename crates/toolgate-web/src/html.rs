//! Small HTML helpers: escaping, the page frame, timestamps.

/// The page's stylesheet, served at `/approvals/static/style.css`.
pub const STYLE_CSS: &str = include_str!("../assets/style.css");
/// The page's script, served at `/approvals/static/app.js`.
pub const APP_JS: &str = include_str!("../assets/app.js");

/// Escapes text for an HTML text node or a quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 8);
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// Which tab of the page is shown.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Tab {
    /// Pending asks.
    Pending,
    /// The audit log.
    Audit,
    /// Saved approvals.
    Saved,
}

/// A whole page: head, navigation, `body`.
pub fn page(title: &str, tab: Tab, body: &str) -> String {
    let link = |t: Tab, href: &str, label: &str| {
        let current = if t == tab {
            " aria-current=\"page\""
        } else {
            ""
        };
        format!("<a href=\"{href}\"{current}>{label}</a>")
    };
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\
<title>{title} · toolgate</title>\
<link rel=\"stylesheet\" href=\"/approvals/static/style.css\">\
<script src=\"/approvals/static/app.js\" defer></script></head>\
<body><header><strong>toolgate</strong><nav>{}{}{}</nav></header><main>{body}</main></body></html>\n",
        link(Tab::Pending, "/", "Pending"),
        link(Tab::Audit, "/approvals/audit", "Audit log"),
        link(Tab::Saved, "/approvals/saved", "Saved approvals"),
        title = escape(title),
    )
}

/// A minimal page for errors and the sign-in step (no navigation, no script).
pub fn message_page(title: &str, message: &str, extra_head: &str) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{extra_head}\
<title>{t} · toolgate</title><link rel=\"stylesheet\" href=\"/approvals/static/style.css\"></head>\
<body><main class=\"message\"><h1>{t}</h1><p>{m}</p></main></body></html>\n",
        t = escape(title),
        m = escape(message),
    )
}

/// `ms` since the Unix epoch as `YYYY-MM-DD HH:MM:SS` UTC.
pub fn utc_time(ms: i64) -> String {
    let mut text = toolgate_core::event::format_utc_ms(ms);
    text.truncate(19);
    text.replacen('T', " ", 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_markup_and_quotes() {
        assert_eq!(
            escape("<img src=x onerror='a'>&\""),
            "&lt;img src=x onerror=&#39;a&#39;&gt;&amp;&quot;"
        );
    }

    #[test]
    fn formats_utc_times() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00");
        assert_eq!(utc_time(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(utc_time(1_796_000_000_123), "2026-11-30 00:53:20");
    }
}
