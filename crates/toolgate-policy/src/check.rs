//! `toolgate check` and `toolgate policy explain` as library functions.
//!
//! [`check`] judges a call's base requests without running anything and returns a
//! [`CheckOutcome`], which serializes exactly to the documented `check --json`
//! object (docs/policy.md). [`run_batch`] drives JSONL in, JSONL out. [`explain`] renders the
//! same judgement in words a person reads.

use std::io::{BufRead, Write};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolgate_core::{DecisionSource, Effect, Judged, Location, PermissionRequest, Risk};

use crate::expand::{Expanded, expand_with};
use crate::policy::{
    ApprovalLookup, Ignored, Policy, UNTRUSTED, Verdict, refused_wildcard_default,
    wildcard_restriction,
};
use crate::rules::RuleEffect;

/// The action of the request a bash call adds when it asks to run outside
/// the sandbox (`"unsandboxed": true`).
pub const UNSANDBOXED_ACTION: &str = "bash_unsandboxed";

/// One judged request of a `check` answer.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckRequest {
    /// The action.
    pub action: String,
    /// The resource.
    pub resource: String,
    /// The risk (after raising).
    pub risk: Risk,
    /// Its decision.
    pub decision: Effect,
    /// `file:line` of the deciding rule, or null.
    pub rule: Option<String>,
}

/// The answer for one call: exactly the documented `check --json` object.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckOutcome {
    /// The strictest decision of the call.
    pub decision: Effect,
    /// The highest risk of the call.
    pub risk: Risk,
    /// Why, from the deciding request.
    pub reason: String,
    /// Where the deciding request's decision came from.
    pub source: DecisionSource,
    /// The allow holds only because the command runs inside the sandbox.
    pub sandbox: bool,
    /// Every request.
    pub requests: Vec<CheckRequest>,
    /// Entries of an untrusted project config that would have loosened this
    /// call, and a broken project config ignored as a whole.
    #[serde(default)]
    pub ignored: Vec<Ignored>,
}

/// One judged request with everything explain needs.
#[derive(Clone, Debug)]
pub struct Judgement {
    /// The expanded request.
    pub expanded: Expanded,
    /// The verdict.
    pub verdict: Verdict,
    /// The untrusted project entry that would have loosened it, if any.
    /// Boxed: it is rare, and a judgement small enough that a few fit in
    /// under a kilobyte keeps the allocator on its fast path.
    pub ignored: Option<Box<Ignored>>,
}

impl Judgement {
    /// As the gate port returns it.
    pub fn judged(&self) -> Judged {
        Judged {
            request: self.expanded.request.clone(),
            decision: self.verdict.decision.clone(),
        }
    }
}

/// Expands, raises and judges a call's base requests.
pub fn judge_call(
    policy: &Policy,
    requests: Vec<PermissionRequest>,
    location: &Location,
    approvals: &dyn ApprovalLookup,
) -> Vec<Judgement> {
    // A call that asked to run outside the sandbox is judged as in `default`.
    let confined = !requests.iter().any(|r| r.action == UNSANDBOXED_ACTION);
    // Toolgate's own bash tool gives a confined command only the sandbox's
    // allowlisted variables; anywhere else (`check`, hooks, an unconfined
    // run) the command sees the environment toolgate inherited.
    let inherited_env = !(confined && policy.runs_commands() && policy.sandbox_confines());
    expand_with(
        requests,
        location,
        policy.home(),
        crate::shell::BUDGET,
        inherited_env,
    )
    .into_iter()
    .map(|mut e| {
        if let Some(why) = policy.raise_protected(&mut e.request) {
            e.reason = Some(match e.reason.take() {
                Some(r) if !r.contains(&why) => format!("{why}; {r}"),
                _ => why,
            });
        }
        let verdict = policy.judge_confined(
            &e.request,
            e.opaque,
            e.reason.as_deref(),
            location,
            approvals,
            confined,
        );
        let ignored = policy.ignored_for(
            &e.request,
            e.opaque,
            e.reason.as_deref(),
            location,
            approvals,
            &verdict,
            confined,
        );
        Judgement {
            expanded: e,
            verdict,
            ignored: ignored.map(Box::new),
        }
    })
    .collect()
}

/// What `check` reports as ignored for a judged call of `policy`: a broken
/// project config, and each untrusted project entry that would have
/// loosened one of its requests (once each).
pub fn ignored_entries(policy: &Policy, judged: &[Judgement]) -> Vec<Ignored> {
    let mut out = Vec::new();
    if let Some(e) = policy.project_error() {
        out.push(Ignored {
            rule: format!("{}:{}", e.file, e.line),
            why: format!("project config ignored: {e}"),
        });
    }
    for i in judged.iter().filter_map(|j| j.ignored.as_deref()) {
        if !out.contains(i) {
            out.push(i.clone());
        }
    }
    out
}

/// The outcome of a judged call.
pub fn outcome(judged: &[Judgement]) -> CheckOutcome {
    let decision = Effect::strictest(judged.iter().map(|j| j.verdict.decision.effect));
    let risk = judged
        .iter()
        .map(|j| j.verdict.decision.risk)
        .max()
        .unwrap_or(Risk::Read);
    // The allow holds only because of the sandbox when any request of it
    // was allowed by mode `auto`, deciding or not; then that request decides.
    let sandbox = decision == Effect::Allow
        && judged
            .iter()
            .any(|j| j.verdict.decision.source == DecisionSource::Sandbox);
    // The deciding request: the strictest effect, then the highest risk.
    let deciding = judged
        .iter()
        .filter(|j| j.verdict.decision.effect == decision)
        .filter(|j| !sandbox || j.verdict.decision.source == DecisionSource::Sandbox)
        .max_by_key(|j| j.verdict.decision.risk);
    let (reason, source) = deciding.map_or_else(
        || {
            (
                "the call touches nothing".to_string(),
                DecisionSource::Default,
            )
        },
        |j| (j.verdict.decision.reason.clone(), j.verdict.decision.source),
    );
    CheckOutcome {
        decision,
        risk,
        reason,
        source,
        sandbox,
        requests: judged
            .iter()
            .map(|j| CheckRequest {
                action: j.expanded.request.action.clone(),
                resource: j.expanded.request.resource.clone(),
                risk: j.verdict.decision.risk,
                decision: j.verdict.decision.effect,
                rule: j.verdict.decision.rule.as_ref().map(|r| r.location()),
            })
            .collect(),
        ignored: Vec::new(),
    }
}

/// [`outcome`] with what `policy` ignored (see [`ignored_entries`]).
pub fn outcome_for(policy: &Policy, judged: &[Judgement]) -> CheckOutcome {
    let mut out = outcome(judged);
    out.ignored = ignored_entries(policy, judged);
    out
}

/// Judges a call and returns its `check` answer.
pub fn check(
    policy: &Policy,
    requests: Vec<PermissionRequest>,
    location: &Location,
    approvals: &dyn ApprovalLookup,
) -> CheckOutcome {
    outcome_for(policy, &judge_call(policy, requests, location, approvals))
}

/// One line of a batch: `{"tool":"bash","input":{...},"root":"/ws"}`.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BatchLine {
    /// The tool name.
    pub tool: String,
    /// Its input.
    pub input: Value,
    /// The location root, when not the batch's.
    #[serde(default)]
    pub root: Option<String>,
}

#[derive(Serialize)]
struct NumberedOutcome<'a> {
    line: usize,
    #[serde(flatten)]
    outcome: &'a CheckOutcome,
}

#[derive(Serialize)]
struct NumberedError<'a> {
    line: usize,
    error: &'a str,
}

/// Counts of a batch run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BatchSummary {
    /// Lines evaluated.
    pub evaluated: usize,
    /// Lines that gave an error object.
    pub errors: usize,
}

/// Reads JSONL calls from `input` and writes one JSON object per non-blank line:
/// the outcome plus `"line": N`, or `{"line":N,"error":"…"}`; the batch goes on
/// after a bad line. `judge` answers one parsed line.
pub fn run_batch<R: BufRead, W: Write>(
    input: R,
    mut output: W,
    mut judge: impl FnMut(&BatchLine) -> Result<CheckOutcome, String>,
) -> std::io::Result<BatchSummary> {
    let mut summary = BatchSummary::default();
    for (i, line) in input.lines().enumerate() {
        let number = i + 1;
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let result = serde_json::from_str::<BatchLine>(&line)
            .map_err(|e| format!("invalid batch line: {e}; expected {{\"tool\":\"bash\",\"input\":{{\"command\":\"ls\"}},\"root\":\"/ws\"}}"))
            .and_then(|parsed| judge(&parsed));
        let text = match &result {
            Ok(outcome) => {
                summary.evaluated += 1;
                serde_json::to_string(&NumberedOutcome {
                    line: number,
                    outcome,
                })
            }
            Err(error) => {
                summary.errors += 1;
                serde_json::to_string(&NumberedError {
                    line: number,
                    error,
                })
            }
        }
        .map_err(std::io::Error::other)?;
        writeln!(output, "{text}")?;
    }
    output.flush()?;
    Ok(summary)
}

/// Explains a judged call in words a person reads: each request, its risk and why
/// — the rule with its file:line, or the default — and the rules it overrode.
pub fn explain(policy: &Policy, tool: &str, input: &Value, judged: &[Judgement]) -> String {
    let mut s = String::new();
    let out = outcome(judged);
    s.push_str(&format!(
        "{tool} {input}\nin {} (mode {})\n\n",
        policy.root().display(),
        policy.mode()
    ));
    s.push_str(&format!(
        "Decision: {} — the call's highest risk is {}.\n",
        out.decision.as_str().to_uppercase(),
        out.risk
    ));
    let n = judged.len();
    s.push_str(&format!(
        "The call makes {n} request{}; the strictest decision wins.\n",
        if n == 1 { "" } else { "s" }
    ));
    for (i, j) in judged.iter().enumerate() {
        let r = &j.expanded.request;
        let d = &j.verdict.decision;
        s.push_str(&format!(
            "\n{}. {} {}\n   risk: {}",
            i + 1,
            r.action,
            r.resource,
            d.risk
        ));
        if let Some(why) = &j.expanded.reason {
            s.push_str(&format!(" ({why})"));
        }
        if j.expanded.opaque && d.source == DecisionSource::Sandbox {
            s.push_str("\n   the command cannot be fully analysed: mode auto runs it only inside the sandbox, and no approval for it is saved");
        } else if j.expanded.opaque {
            s.push_str("\n   the command cannot be fully analysed: it is asked at least, and no approval for it is saved");
        }
        s.push_str(&format!(
            "\n   decision: {} ({})\n",
            d.effect,
            source_words(d.source)
        ));
        let refused = policy.refused_wildcard(r);
        match &d.rule {
            Some(rule) => s.push_str(&format!(
                "   because: rule {} \"{}\" at {}:{}\n",
                rule.action, rule.resource, rule.file, rule.line
            )),
            None if d.source == DecisionSource::Default => match &refused {
                Some((rule, why)) => s.push_str(&format!(
                    "   because: {} rule {} \"{}\" at {}:{} matched, but a bare wildcard never allows {why}\n",
                    refused_wildcard_default(r),
                    rule.action,
                    rule.resource.text,
                    rule.file,
                    rule.line
                )),
                None => s.push_str(&format!(
                    "   because: no rule matched, so the default for {} applies\n",
                    d.risk
                )),
            },
            None => {}
        }
        s.push_str(&format!("   in full: {}\n", d.reason));
        if let Some(i) = &j.ignored {
            s.push_str(&format!("   ignored: {} at {}\n", i.why, i.rule));
        }
        let others: Vec<String> = policy
            .rules()
            .iter()
            .chain(policy.managed_rules())
            .filter(|rule| rule.matches(&r.action, &r.resource))
            .filter(|rule| {
                d.rule
                    .as_ref()
                    .is_none_or(|x| !(x.file == rule.file && x.line == rule.line))
            })
            .map(|rule| {
                let bare_allow =
                    rule.effect == RuleEffect::Allow && rule.resource.is_bare_wildcard();
                let note = match wildcard_restriction(r).filter(|_| bare_allow) {
                    Some(why) => format!(" (a bare wildcard never allows {why})"),
                    None => String::new(),
                };
                format!("{} at {}:{}{note}", rule.describe(), rule.file, rule.line)
            })
            .collect();
        if !others.is_empty() {
            s.push_str("   also matched, but did not decide:\n");
            for o in others {
                s.push_str(&format!("     - {o}\n"));
            }
        }
        match &r.save_pattern {
            Some(p) if j.verdict.reusable => {
                s.push_str(&format!("   an approval would be remembered as `{p}`\n"))
            }
            _ if d.effect == Effect::Ask => s.push_str(
                "   an approval is never remembered for this request: it is asked every time\n",
            ),
            _ => {}
        }
    }
    if let Some(e) = policy.project_error() {
        s.push_str(&format!(
            "\nignored: the project config is broken, so it is ignored as a whole: {e}\n"
        ));
    }
    if let Some(p) = policy
        .project()
        .filter(|p| !p.trusted && !p.loosening.is_empty())
    {
        s.push_str(&format!(
            "\nignored: {UNTRUSTED}: {} loosening entr{} of {}:\n",
            p.loosening.len(),
            if p.loosening.len() == 1 { "y" } else { "ies" },
            p.file
        ));
        for i in &p.loosening {
            s.push_str(&format!("  - {}: {}\n", i.rule, i.why));
        }
    }
    if policy.files().is_empty() {
        s.push_str("\nNo config files were loaded; only the defaults apply.\n");
    } else {
        s.push_str("\nConfig files, in merge order (later wins; managed is final):\n");
        for f in policy.files() {
            s.push_str(&format!("  - {f}\n"));
        }
    }
    s
}

fn source_words(source: DecisionSource) -> &'static str {
    match source {
        DecisionSource::Default => "the default for this risk",
        DecisionSource::Rule => "a configured rule",
        DecisionSource::Saved => "an approval saved for this project",
        DecisionSource::Session => "an approval given earlier in this session",
        DecisionSource::User => "the user's answer",
        DecisionSource::Timeout => "nobody answered in time",
        DecisionSource::Hook => "a hook",
        DecisionSource::Sandbox => "mode auto: the sandbox confines it",
        DecisionSource::Client => "the approval client, which declined without asking the person",
    }
}
