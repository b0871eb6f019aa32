//! The pipeline's side of staged writes: the [`WriteJudge`] a tool's context
//! carries, and the hosts a confined command may reach.

use std::sync::Arc;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::context::CallIdentity;
use crate::event::{Event, EventKind, EventPayload, EventSink};
use crate::failure::Failure;
use crate::gate::{Gate, GateCall, Judged, PermissionRequest};
use crate::location::Location;
use crate::pipeline::permission_event;
use crate::preview::{Preview, PreviewBody};
use crate::risk::{Decision, DecisionSource, Effect, Risk};
use crate::staged::{StagedChange, StagedVerdict, WriteJudge};

/// At most this many changed paths are named one by one to the person
/// asked; the rest are counted.
const SHOWN: usize = 50;

/// Judges a call's staged writes with the call's own gate and audit log.
pub(crate) struct PipelineJudge {
    pub gate: Arc<dyn Gate>,
    pub sink: Arc<dyn EventSink>,
    pub tool: String,
    pub input: Value,
    pub identity: CallIdentity,
    pub location: Arc<Location>,
    pub cancel: CancellationToken,
}

#[async_trait]
impl WriteJudge for PipelineJudge {
    async fn judge(&self, changes: &[StagedChange]) -> Result<Vec<StagedVerdict>, Failure> {
        if changes.is_empty() {
            return Ok(Vec::new());
        }
        // Each change's own path, then each path it writes without naming
        // it (a link's target, what a git index or ref carries); `owner`
        // says whose request each is.
        let mut requests: Vec<PermissionRequest> = Vec::new();
        let mut owner: Vec<usize> = Vec::new();
        for (i, c) in changes.iter().enumerate() {
            // A directory is named with a trailing `/`: a path that did
            // not exist before is judged by git's ignore rules as what
            // it is (`.pytest_cache/` ignores a directory, not a file).
            let mut path = c.path.display().to_string();
            if c.dir && !path.ends_with('/') {
                path.push('/');
            }
            requests.push(
                PermissionRequest::path("edit", path, Risk::Write)
                    .with_save_pattern(None)
                    .with_certificates_only(c.certificates_only)
                    .with_note(format!("{} by the command", c.kind.as_str())),
            );
            owner.push(i);
            for also in &c.also {
                requests.push(
                    PermissionRequest::path("edit", also.display().to_string(), Risk::Write)
                        .with_save_pattern(None)
                        .with_note(format!(
                            "written through {} ({} by the command)",
                            c.path.display(),
                            c.kind.as_str()
                        )),
                );
                owner.push(i);
            }
        }
        let call = GateCall {
            tool: &self.tool,
            input: &self.input,
            location: &self.location,
            session_id: &self.identity.session_id,
            call_id: &self.identity.call_id,
            preview: None,
        };
        let judged = self
            .gate
            .evaluate_staged(&call, requests)
            .map_err(Failure::of)?;
        if judged.len() != owner.len() {
            return Err(Failure::new(format!(
                "the gate judged {} of {} changed paths",
                judged.len(),
                owner.len()
            )));
        }
        // Writes inside the location that need nothing more are summed up
        // in one event; each other path gets its own.
        let plain = |j: &Judged| {
            j.decision.effect == Effect::Allow && j.decision.source == DecisionSource::Sandbox
        };
        let special: Vec<usize> = (0..judged.len()).filter(|&i| !plain(&judged[i])).collect();
        let mut finals: Vec<Decision> = judged.iter().map(|j| j.decision.clone()).collect();
        let mut events: Vec<Event> = Vec::new();
        let landed_plain = judged.len() - special.len();
        if landed_plain > 0 {
            events.push(self.summary_event(landed_plain));
        }
        let asks: Vec<usize> = special
            .iter()
            .copied()
            .filter(|&i| judged[i].decision.effect == Effect::Ask)
            .collect();
        for &i in &special {
            events.push(permission_event(
                EventKind::PermissionRequested,
                &self.identity,
                &self.tool,
                &judged[i],
                &judged[i].decision,
                false,
                None,
            ));
        }
        if !asks.is_empty() {
            self.sink
                .submit_batch(std::mem::take(&mut events))
                .await
                .map_err(Failure::of)?;
            let asked: Vec<Judged> = asks.iter().map(|&i| judged[i].clone()).collect();
            let mut shown: Vec<&StagedChange> = Vec::new();
            for &i in &asks {
                let c = &changes[owner[i]];
                if !shown.iter().any(|s| std::ptr::eq(*s, c)) {
                    shown.push(c);
                }
            }
            let preview = preview_of(&shown);
            let asking = GateCall {
                preview: Some(&preview),
                ..call
            };
            let answers = self
                .gate
                .resolve(&asking, &asked, &self.cancel)
                .await
                .map_err(Failure::of)?;
            for (k, &i) in asks.iter().enumerate() {
                if let Some(d) = answers.get(k) {
                    finals[i] = d.clone();
                } else {
                    finals[i].effect = Effect::Deny;
                }
            }
        }
        for &i in &special {
            events.push(permission_event(
                EventKind::PermissionResolved,
                &self.identity,
                &self.tool,
                &judged[i],
                &finals[i],
                true,
                None,
            ));
        }
        self.sink.submit_batch(events).await.map_err(Failure::of)?;
        // A change lands only when its own path and every path it writes
        // through may; the first refusal is its reason.
        let mut verdicts: Vec<Option<StagedVerdict>> = vec![None; changes.len()];
        for (d, &i) in finals.into_iter().zip(&owner) {
            let land = d.effect == Effect::Allow;
            match &mut verdicts[i] {
                slot @ None => {
                    *slot = Some(StagedVerdict {
                        land,
                        reason: d.reason,
                    })
                }
                Some(v) if v.land && !land => {
                    *v = StagedVerdict {
                        land: false,
                        reason: d.reason,
                    }
                }
                Some(_) => {}
            }
        }
        Ok(verdicts
            .into_iter()
            .map(|v| {
                v.unwrap_or(StagedVerdict {
                    land: false,
                    reason: "not judged".into(),
                })
            })
            .collect())
    }
}

impl PipelineJudge {
    fn summary_event(&self, count: usize) -> Event {
        let payload = EventPayload {
            tool: Some(self.tool.clone()),
            tool_call_id: Some(self.identity.call_id.clone()),
            action: Some("edit".into()),
            resource: Some(format!(
                "{count} path(s) inside the location written by the command"
            )),
            risk_at_decision: Some(Risk::Write),
            sourced_from: Some(DecisionSource::Sandbox),
            suggested_decision: Some(Effect::Allow),
            decision: Some(Effect::Allow),
            reason: Some(
                "written inside the location by a command that was allowed; neither protected nor a credential"
                    .into(),
            ),
            actor: Some("policy".into()),
            ..EventPayload::default()
        };
        Event::now(
            EventKind::PermissionResolved,
            &self.identity.session_id,
            &self.identity.call_id,
            payload,
        )
    }
}

/// What the person is shown: each changed path and how, and its diff.
fn preview_of(changes: &[&StagedChange]) -> Preview {
    let mut text = String::new();
    for c in changes.iter().take(SHOWN) {
        text.push_str(&format!(
            "{} {}{}\n",
            c.kind.as_str(),
            c.path.display(),
            if c.dir { "/" } else { "" }
        ));
        for also in &c.also {
            text.push_str(&format!("  which writes {}\n", also.display()));
        }
        if let Some(d) = &c.detail {
            text.push_str(d);
            if !d.ends_with('\n') {
                text.push('\n');
            }
        }
    }
    if changes.len() > SHOWN {
        text.push_str(&format!("… and {} more\n", changes.len() - SHOWN));
    }
    Preview::new("Changes made by the command")
        .with_field("paths", changes.len().to_string())
        .with_body(PreviewBody::Diff(text))
}

/// The hosts the allowed network requests of a call named, for the
/// sandbox's proxy: none when any request was allowed only because the
/// command runs confined (an opaque part gets no network it was not
/// approved for).
pub(crate) fn network_hosts(judged: &[Judged], finals: &[Decision]) -> Vec<String> {
    if finals
        .iter()
        .any(|d| d.effect == Effect::Allow && d.source == DecisionSource::Sandbox)
    {
        return Vec::new();
    }
    let mut hosts: Vec<String> = Vec::new();
    for (j, d) in judged.iter().zip(finals) {
        if d.effect != Effect::Allow || d.risk != Risk::Network {
            continue;
        }
        for h in hosts_in(&j.request.resource) {
            if !hosts.contains(&h) {
                hosts.push(h);
            }
        }
    }
    hosts
}

/// The hosts of the URLs written in `text` (`scheme://[user@]host[:port]/…`),
/// lowercase, without brackets or port.
pub fn hosts_in(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(at) = rest.find("://") {
        let after = &rest[at + 3..];
        let end = after
            .find(|c: char| {
                c == '/' || c == '?' || c == '#' || c.is_whitespace() || c == '\'' || c == '"'
            })
            .unwrap_or(after.len());
        let authority = &after[..end];
        let host_port = authority.rsplit('@').next().unwrap_or(authority);
        let host = if let Some(v6) = host_port.strip_prefix('[') {
            v6.split(']').next().unwrap_or("")
        } else {
            host_port.split(':').next().unwrap_or("")
        };
        let host = host.trim_end_matches('.').to_ascii_lowercase();
        if !host.is_empty()
            && host
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':'))
            && !out.contains(&host)
        {
            out.push(host);
        }
        rest = &after[end..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_read_from_the_urls_of_a_command() {
        assert_eq!(
            hosts_in("curl -s http://127.0.0.1:8080/health -o x"),
            vec!["127.0.0.1"]
        );
        assert_eq!(
            hosts_in("git clone https://user:pw@GitHub.com/a/b 'https://[::1]:9/x'"),
            vec!["github.com", "::1"]
        );
        assert!(hosts_in("git push origin main").is_empty());
        assert!(hosts_in("echo ://").is_empty());
    }
}
