//! The audit log with filters, and `log verify`'s verdict.

use std::sync::Arc;

use axum::extract::{Query, State};
use axum::http::{HeaderMap, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use maud::{Markup, html};
use serde::Deserialize;
use serde_json::json;
use toolgate_core::event_query::{EventFilter, EventQuery, QueryError, StoredEvent, VerifyReport};
use toolgate_core::{Effect, EventKind};

use crate::html::{Tab, page, utc_time};
use crate::views::{App, reply_error, wants_json};

/// Events shown when no limit is given.
const DEFAULT_LIMIT: usize = 200;
/// Largest limit accepted.
const MAX_LIMIT: usize = 5000;

/// The filters, as typed in the form (validated by [`Filters::parse`]).
#[derive(Debug, Default, Deserialize)]
pub struct AuditQuery {
    #[serde(default)]
    session: Option<String>,
    #[serde(default)]
    call: Option<String>,
    #[serde(default)]
    tool: Option<String>,
    #[serde(default)]
    decision: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    person: Option<String>,
    #[serde(default)]
    machine: Option<String>,
    #[serde(default)]
    agent: Option<String>,
    #[serde(default)]
    limit: Option<String>,
}

/// Validated filters.
#[derive(Debug, Default, Clone)]
struct Filters {
    session: Option<String>,
    call: Option<String>,
    tool: Option<String>,
    decision: Option<Effect>,
    kind: Option<EventKind>,
    person: Option<String>,
    machine: Option<String>,
    agent: Option<String>,
    limit: usize,
}

fn non_empty(v: &Option<String>) -> Option<String> {
    v.as_deref()
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

impl Filters {
    fn parse(q: &AuditQuery) -> Result<Filters, String> {
        let decision = match non_empty(&q.decision).as_deref() {
            None => None,
            Some("allow") => Some(Effect::Allow),
            Some("ask") => Some(Effect::Ask),
            Some("deny") => Some(Effect::Deny),
            Some(other) => {
                return Err(format!(
                    "unknown decision {other:?}: expected allow, ask or deny"
                ));
            }
        };
        let kind = match non_empty(&q.kind) {
            None => None,
            Some(k) => Some(EventKind::parse(&k).ok_or_else(|| {
                format!(
                    "unknown event kind {k:?}: expected permission.requested, \
                     permission.resolved, tool.started, tool.completed, tool.failed or \
                     session.started"
                )
            })?),
        };
        let limit = match non_empty(&q.limit) {
            None => DEFAULT_LIMIT,
            Some(l) => match l.parse::<usize>() {
                Ok(n) if (1..=MAX_LIMIT).contains(&n) => n,
                _ => {
                    return Err(format!(
                        "limit must be a whole number from 1 to {MAX_LIMIT}, got {l:?}"
                    ));
                }
            },
        };
        Ok(Filters {
            session: non_empty(&q.session),
            call: non_empty(&q.call),
            tool: non_empty(&q.tool),
            decision,
            kind,
            person: non_empty(&q.person),
            machine: non_empty(&q.machine),
            agent: non_empty(&q.agent),
            limit,
        })
    }

    fn keeps(&self, e: &StoredEvent) -> bool {
        let p = &e.event.payload;
        self.tool
            .as_ref()
            .is_none_or(|t| p.tool.as_ref() == Some(t))
            && self.decision.is_none_or(|d| p.decision == Some(d))
    }
}

/// What the page shows: the newest matching events and the verdict.
struct Audit {
    events: Vec<StoredEvent>,
    verdict: Result<VerifyReport, String>,
}

/// The log's events and verdict; `Ok(Err(place))` when there is no log yet.
fn read(events: &dyn EventQuery, f: &Filters) -> Result<Result<Audit, String>, String> {
    let in_memory = f.tool.is_some() || f.decision.is_some();
    let filter = EventFilter {
        session: f.session.clone(),
        call_id: f.call.clone(),
        kind: f.kind,
        person: f.person.clone(),
        machine: f.machine.clone(),
        agent: f.agent.clone(),
        // Tool and decision live in the payload, which the store cannot filter on:
        // read every event of the session/kind and keep the newest matches.
        limit: (!in_memory).then_some(f.limit),
        tail: true,
        ..EventFilter::default()
    };
    let mut found = match events.query(&filter) {
        Ok(found) => found,
        Err(QueryError::NoLog(place)) => return Ok(Err(place)),
        Err(e) => return Err(e.to_string()),
    };
    if in_memory {
        found.retain(|e| f.keeps(e));
        let skip = found.len().saturating_sub(f.limit);
        found.drain(..skip);
    }
    let verdict = events.verify().map_err(|e| e.to_string());
    Ok(Ok(Audit {
        events: found,
        verdict,
    }))
}

/// `GET /approvals/audit?session=&call=&tool=&decision=&kind=&person=&machine=&agent=&limit=`: the newest
/// matching events (oldest first) and the verdict of `log verify`. JSON with
/// `Accept: application/json`: `{"events": […], "verify": {…} | null, "verify_error"?}`.
pub async fn handler(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    Query(query): Query<AuditQuery>,
) -> Response {
    let json = wants_json(&headers);
    let filters = match Filters::parse(&query) {
        Ok(f) => f,
        Err(e) => return reply_error(StatusCode::BAD_REQUEST, &e, json),
    };
    let events = Arc::clone(&app.web.events);
    let f = filters.clone();
    let audit = tokio::task::spawn_blocking(move || read(events.as_ref(), &f))
        .await
        .map_err(|e| e.to_string())
        .and_then(|r| r);
    let audit = match audit {
        Ok(a) => a,
        Err(e) => return reply_error(StatusCode::INTERNAL_SERVER_ERROR, &e, json),
    };
    if json {
        return match audit {
            Err(_) => axum::Json(
                json!({ "events": [], "verify": null, "verify_error": "no audit log yet" }),
            )
            .into_response(),
            Ok(Audit { events, verdict }) => match verdict {
                Ok(v) => {
                    axum::Json(json!({ "events": events, "verify": v, "verdict": v.to_string() }))
                        .into_response()
                }
                Err(e) => {
                    axum::Json(json!({ "events": events, "verify": null, "verify_error": e }))
                        .into_response()
                }
            },
        };
    }
    let events = match &audit {
        Ok(a) => a.events.as_slice(),
        Err(_) => &[],
    };
    let body = html! {
        h1 { "Audit log" }
        @match &audit {
            Err(place) => p class="verdict" { "No audit log yet at " code { (place) } "." },
            Ok(a) => @match &a.verdict {
                Ok(v) => p class={ "verdict " (if v.is_ok() { "ok" } else { "broken" }) } id="verdict" {
                    b { "log verify:" } " " (v)
                },
                Err(e) => p class="verdict broken" id="verdict" { b { "log verify failed:" } " " (e) },
            },
        }
        (filter_form(&filters))
        @if events.is_empty() {
            p class="empty" { "No event matches." }
        } @else {
            (table(events))
        }
    };
    Html(page("Audit log", Tab::Audit, body)).into_response()
}

const DECISIONS: [Effect; 3] = [Effect::Allow, Effect::Ask, Effect::Deny];
const KINDS: [EventKind; 7] = [
    EventKind::SessionStarted,
    EventKind::PermissionRequested,
    EventKind::PermissionResolved,
    EventKind::ToolStarted,
    EventKind::ToolCompleted,
    EventKind::ToolFailed,
    EventKind::NetworkConnection,
];

fn filter_form(f: &Filters) -> Markup {
    let value = |v: &Option<String>| v.clone().unwrap_or_default();
    html! {
        form class="filters" method="get" action="/approvals/audit" {
            label { "Session " input name="session" value=(value(&f.session)); }
            label { "Call " input name="call" value=(value(&f.call)); }
            label { "Tool " input name="tool" value=(value(&f.tool)); }
            label {
                "Decision "
                select name="decision" {
                    option value="" { "any" }
                    @for d in DECISIONS { option selected[f.decision == Some(d)] { (d) } }
                }
            }
            label {
                "Kind "
                select name="kind" {
                    option value="" { "any" }
                    @for k in KINDS { option selected[f.kind == Some(k)] { (k) } }
                }
            }
            label { "Person " input name="person" value=(value(&f.person)); }
            label { "Machine " input name="machine" value=(value(&f.machine)); }
            label { "Agent " input name="agent" value=(value(&f.agent)); }
            label { "Newest " input name="limit" size="5" value=(f.limit); }
            button { "Filter" }
            " "
            a href="/approvals/audit" { "clear" }
        }
    }
}

/// A query-string value, percent-encoded.
fn encoded(value: &str) -> String {
    form_urlencoded::byte_serialize(value.as_bytes()).collect()
}

fn table(events: &[StoredEvent]) -> Markup {
    html! {
        table class="audit" {
            thead {
                tr {
                    th { "#" } th { "Time (UTC)" } th { "Event" } th { "Session" } th { "Call" }
                    th { "Who" } th { "Tool" } th { "Request" } th { "Decision" } th { "Source" }
                    th { "Details" }
                }
            }
            tbody {
                @for e in events { (row(e)) }
            }
        }
    }
}

fn row(e: &StoredEvent) -> Markup {
    let p = &e.event.payload;
    let details = [p.reason.as_deref(), p.preview.as_deref()]
        .into_iter()
        .flatten()
        .collect::<Vec<_>>()
        .join(" · ");
    // What the model or a command chose (a resource, a preview) is shown
    // with its hidden characters made visible, as on the approval card.
    let shown = |t: &str| toolgate_core::visible::escape_hidden(t, &[]).into_owned();
    let details = shown(&details);
    let session = &e.event.session_id;
    let call = &e.event.call_id;
    html! {
        tr class={ "kind-" (e.event.kind.as_str().replace('.', "-")) } {
            td { (e.seq) }
            td { (utc_time(e.event.ts_ms)) }
            td { (e.event.kind) }
            td { a href={ "/approvals/audit?session=" (encoded(session)) } { (session) } }
            td {
                @if !call.is_empty() {
                    a href={ "/approvals/audit?call=" (encoded(call)) } { (call) }
                }
            }
            td class="who" {
                @if let Some(person) = &p.person {
                    a href={ "/approvals/audit?person=" (encoded(person)) } { (person) }
                }
                @if let Some(machine) = &p.machine {
                    " on " a href={ "/approvals/audit?machine=" (encoded(machine)) } { (machine) }
                }
                @if let Some(agent) = &p.agent {
                    " via " a href={ "/approvals/audit?agent=" (encoded(agent)) } { (agent) }
                }
            }
            td { (shown(p.tool.as_deref().unwrap_or(""))) }
            td {
                @if let (Some(a), Some(r)) = (&p.action, &p.resource) {
                    b { (shown(a)) } " " code { (shown(r)) }
                }
            }
            td {
                @if let Some(d) = p.decision {
                    span class={ "decision-" (d) } { (d) }
                }
            }
            td { (p.sourced_from.map_or("", |s| s.as_str())) }
            td class="details" { (details) }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(decision: &str, kind: &str, limit: &str) -> AuditQuery {
        AuditQuery {
            decision: Some(decision.into()),
            kind: Some(kind.into()),
            limit: Some(limit.into()),
            ..AuditQuery::default()
        }
    }

    #[test]
    fn bad_filters_name_what_is_wrong() {
        let e = Filters::parse(&query("maybe", "", "")).unwrap_err();
        assert!(e.contains("unknown decision \"maybe\""), "{e}");
        let e = Filters::parse(&query("", "tool.exploded", "")).unwrap_err();
        assert!(e.contains("unknown event kind \"tool.exploded\""), "{e}");
        for bad in ["0", "-3", "ten", "5001"] {
            let e = Filters::parse(&query("", "", bad)).unwrap_err();
            assert!(e.contains("limit must be"), "{bad}: {e}");
        }
        let f = Filters::parse(&query(" deny ", "tool.failed", "7")).unwrap();
        assert_eq!(f.decision, Some(Effect::Deny));
        assert_eq!(f.kind, Some(EventKind::ToolFailed));
        assert_eq!(f.limit, 7);
    }

    /// A logged request whose command holds a right-to-left override read
    /// reordered in the audit view (the same attack as on the approval card).
    #[test]
    fn a_bidi_override_in_a_logged_request_is_shown_escaped() {
        let payload = toolgate_core::EventPayload {
            tool: Some("bash".into()),
            action: Some("bash".into()),
            resource: Some("echo hi # \u{202e}~ fr- mr".into()),
            reason: Some("asked\u{1b}[2K".into()),
            ..Default::default()
        };
        let event = toolgate_core::test_util::stored_event(
            1,
            toolgate_core::EventKind::PermissionRequested,
            "s",
            payload,
        );
        let html = row(&event).into_string();
        assert!(
            !html.contains('\u{202e}') && !html.contains('\u{1b}'),
            "{html}"
        );
        assert!(html.contains("# \\u{202E}~ fr- mr"), "{html}");
    }
}
