//! A gate that decides from a script instead of a policy.

use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use tokio_util::sync::CancellationToken;

use super::lock;
use crate::{
    Decision, DecisionSource, Effect, Gate, GateCall, GateError, Judged, PermissionRequest,
};

/// What a scripted gate runs at a step of its own (while "a person reads",
/// or while "the analysis runs").
type Hook = Box<dyn Fn(&GateCall<'_>) + Send + Sync>;

/// A gate that answers from a script: every request gets `effect` from
/// `source`, and asks are resolved to `answer` (with `feedback`), after
/// `during_ask` ran (what happens while a person reads). The tool named
/// `forbidden` is denied wholesale, so it never reaches a catalogue.
pub struct ScriptedGate {
    /// The first decision on every request.
    pub effect: Effect,
    /// The source of the first decision (`Rule` unless set).
    pub source: DecisionSource,
    /// What a person answers to an ask.
    pub answer: Effect,
    /// The message that comes with the person's answer.
    pub feedback: Option<String>,
    /// How many times the gate was asked to resolve a call.
    pub asked: Mutex<usize>,
    /// Runs before asks are answered, as a person takes their time.
    pub during_ask: Option<Box<dyn Fn() + Send + Sync>>,
    /// Runs before the first decision, on the deciding thread: it may block
    /// (a long analysis) or panic (a broken one).
    pub during_evaluate: Option<Hook>,
}

impl ScriptedGate {
    fn scripted(effect: Effect, source: DecisionSource, answer: Effect) -> Self {
        ScriptedGate {
            effect,
            source,
            answer,
            feedback: None,
            asked: Mutex::new(0),
            during_ask: None,
            during_evaluate: None,
        }
    }

    /// Decides `effect` on every request and answers asks with `answer`.
    pub fn new(effect: Effect, answer: Effect) -> Arc<Self> {
        Arc::new(Self::scripted(effect, DecisionSource::Rule, answer))
    }

    /// Decides `effect` on every request and answers asks with `answer`,
    /// sending `feedback` with the answer.
    pub fn answering_with(effect: Effect, answer: Effect, feedback: &str) -> Arc<Self> {
        let mut gate = Self::scripted(effect, DecisionSource::Rule, answer);
        gate.feedback = Some(feedback.into());
        Arc::new(gate)
    }

    /// Allows everything by rule, without asking.
    pub fn allow_all() -> Arc<Self> {
        Self::allowing_from(DecisionSource::Rule)
    }

    /// Asks about everything and allows, after `during_ask` ran.
    pub fn allowing_after(during_ask: impl Fn() + Send + Sync + 'static) -> Arc<Self> {
        let mut gate = Self::scripted(Effect::Ask, DecisionSource::Rule, Effect::Allow);
        gate.during_ask = Some(Box::new(during_ask));
        Arc::new(gate)
    }

    /// Allows everything with `source`, without asking.
    pub fn allowing_from(source: DecisionSource) -> Arc<Self> {
        Arc::new(Self::scripted(Effect::Allow, source, Effect::Allow))
    }

    /// Allows everything by rule once `during_evaluate` has run for the call.
    pub fn allowing_once(
        during_evaluate: impl Fn(&GateCall<'_>) + Send + Sync + 'static,
    ) -> Arc<Self> {
        let mut gate = Self::scripted(Effect::Allow, DecisionSource::Rule, Effect::Allow);
        gate.during_evaluate = Some(Box::new(during_evaluate));
        Arc::new(gate)
    }
}

#[async_trait]
impl Gate for ScriptedGate {
    fn evaluate(
        &self,
        call: &GateCall<'_>,
        requests: Vec<PermissionRequest>,
    ) -> Result<Vec<Judged>, GateError> {
        if let Some(during_evaluate) = &self.during_evaluate {
            during_evaluate(call);
        }
        Ok(requests
            .into_iter()
            .map(|r| Judged {
                decision: Decision::new(self.effect, r.risk, self.source, "scripted"),
                request: r,
            })
            .collect())
    }

    async fn resolve(
        &self,
        _call: &GateCall<'_>,
        judged: &[Judged],
        _cancel: &CancellationToken,
    ) -> Result<Vec<Decision>, GateError> {
        *lock(&self.asked) += 1;
        if let Some(during_ask) = &self.during_ask {
            during_ask();
        }
        Ok(judged
            .iter()
            .map(|j| {
                if j.decision.effect == Effect::Ask {
                    let mut d = Decision::new(
                        self.answer,
                        j.request.risk,
                        DecisionSource::User,
                        "answered",
                    );
                    d.feedback = self.feedback.clone();
                    d
                } else {
                    j.decision.clone()
                }
            })
            .collect())
    }

    fn denies_wholesale(&self, tool: &str) -> bool {
        tool == "forbidden"
    }
}
