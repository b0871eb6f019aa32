//! Small HTML helpers: the page frame, timestamps. Pages are built with
//! `maud`, which escapes every spliced value unless told it is markup.

use maud::{Markup, PreEscaped, html};

/// The page's stylesheet, served at `/approvals/static/style.css`.
pub const STYLE_CSS: &str = include_str!("../assets/style.css");
/// The page's script, served at `/approvals/static/app.js`.
pub const APP_JS: &str = include_str!("../assets/app.js");

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

/// The doctype, in the spelling the page has always had.
const DOCTYPE: PreEscaped<&str> = PreEscaped("<!doctype html>\n");

/// A whole page: head, navigation, `body`.
pub fn page(title: &str, tab: Tab, body: Markup) -> String {
    let link = |t: Tab, href: &str, label: &str| {
        html! {
            a href=(href) aria-current=[(t == tab).then_some("page")] { (label) }
        }
    };
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · toolgate" }
                link rel="stylesheet" href="/approvals/static/style.css";
                script src="/approvals/static/app.js" defer {}
            }
            body {
                header {
                    strong { "toolgate" }
                    nav {
                        (link(Tab::Pending, "/", "Pending"))
                        (link(Tab::Audit, "/approvals/audit", "Audit log"))
                        (link(Tab::Saved, "/approvals/saved", "Saved approvals"))
                    }
                }
                main { (body) }
            }
        }
    };
    page.into_string() + "\n"
}

/// A minimal page for errors (no navigation, no script).
pub fn message_page(title: &str, message: &str) -> String {
    small_page(title, message, None)
}

/// The sign-in step's page: it refreshes itself to `target` at once.
pub fn refresh_page(title: &str, message: &str, target: &str) -> String {
    small_page(title, message, Some(target))
}

fn small_page(title: &str, message: &str, refresh_to: Option<&str>) -> String {
    let page = html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                @if let Some(target) = refresh_to {
                    meta http-equiv="refresh" content={ "0; url=" (target) };
                }
                title { (title) " · toolgate" }
                link rel="stylesheet" href="/approvals/static/style.css";
            }
            body {
                main class="message" {
                    h1 { (title) }
                    p { (message) }
                }
            }
        }
    };
    page.into_string() + "\n"
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
    fn formats_utc_times() {
        assert_eq!(utc_time(0), "1970-01-01 00:00:00");
        assert_eq!(utc_time(951_782_400_000), "2000-02-29 00:00:00");
        assert_eq!(utc_time(1_796_000_000_123), "2026-11-30 00:53:20");
    }
}
