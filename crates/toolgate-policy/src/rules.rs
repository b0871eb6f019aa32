//! Rules and the compiled rule set.
//!
//! A rule is `{action, resource, effect}` with wildcard patterns; it remembers its
//! layer and file:line. Within a merged list the last match wins. The list is
//! compiled once into per-action matchers with fast paths the way `globset` does
//! it — exact literals and literal prefixes in hash maps, the rest in one
//! `RegexSet` per first command word, compiled on first use — so a lookup never
//! walks every rule.
//!
//! ```
//! use std::path::Path;
//! use toolgate_core::Risk;
//! use toolgate_policy::pattern::PatternBase;
//! use toolgate_policy::rules::{Layer, Rule, RuleEffect, RuleSet};
//! let base = PatternBase { root: Path::new("/ws"), home: Path::new("/home/u") };
//! let rules = vec![
//!     Rule::new("bash", "*", RuleEffect::Ask, Layer::Project, "<test>", 1, &base).unwrap(),
//!     Rule::new("bash", "git status *", RuleEffect::Allow, Layer::Project, "<test>", 2, &base).unwrap(),
//! ];
//! let set = RuleSet::compile(rules).unwrap();
//! let hit = set.find("bash", "git status -s", Risk::Read).unwrap();
//! assert_eq!(hit.effect, RuleEffect::Allow);
//! assert_eq!(set.find("bash", "ls", Risk::Read).unwrap().effect, RuleEffect::Ask);
//! ```

use foldhash::{HashMap, HashMapExt};
use std::fmt;
use std::sync::OnceLock;

use regex::{Regex, RegexSet};
use toolgate_core::{Effect, Risk, RuleRef};

use crate::pattern::{Pattern, PatternBase, PatternError, PatternKind, Shape};

/// A rule's effect. `ask!` forces asking: no saved or session approval turns it
/// into allow.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleEffect {
    /// Allow without asking.
    Allow,
    /// Ask; an earlier approval may answer.
    Ask,
    /// Ask every time; approvals are never reused.
    ForceAsk,
    /// Refuse.
    Deny,
}

impl RuleEffect {
    /// Parses `allow`, `ask`, `ask!` or `deny`.
    pub fn parse(text: &str) -> Option<RuleEffect> {
        match text {
            "allow" => Some(RuleEffect::Allow),
            "ask" => Some(RuleEffect::Ask),
            "ask!" => Some(RuleEffect::ForceAsk),
            "deny" => Some(RuleEffect::Deny),
            _ => None,
        }
    }

    /// The effect on the decision.
    pub fn effect(self) -> Effect {
        match self {
            RuleEffect::Allow => Effect::Allow,
            RuleEffect::Ask | RuleEffect::ForceAsk => Effect::Ask,
            RuleEffect::Deny => Effect::Deny,
        }
    }

    /// The text as written in config.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleEffect::Allow => "allow",
            RuleEffect::Ask => "ask",
            RuleEffect::ForceAsk => "ask!",
            RuleEffect::Deny => "deny",
        }
    }
}

impl fmt::Display for RuleEffect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The layer a rule came from, in merge order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Layer {
    /// Built into toolgate.
    Builtin,
    /// `~/.config/toolgate/config.toml`.
    User,
    /// `<root>/.toolgate/config.toml`.
    Project,
    /// Session or CLI flags (`--config FILE`, rules given on the command line).
    Session,
    /// `/etc/toolgate/config.toml`: applied last, final.
    Managed,
}

impl Layer {
    /// A lowercase name for people.
    pub fn as_str(self) -> &'static str {
        match self {
            Layer::Builtin => "built-in",
            Layer::User => "user",
            Layer::Project => "project",
            Layer::Session => "session",
            Layer::Managed => "managed",
        }
    }
}

/// One configured rule.
#[derive(Clone, Debug)]
pub struct Rule {
    /// The action pattern (`bash`, `read`, `*`).
    pub action: String,
    /// The resource pattern, compiled.
    pub resource: Pattern,
    /// The effect.
    pub effect: RuleEffect,
    /// Its layer.
    pub layer: Layer,
    /// The file it came from (`<builtin>`, `<cli>` for non-files).
    pub file: String,
    /// Its 1-based line (0 when unknown).
    pub line: u32,
    action_regex: Option<Regex>,
}

impl Rule {
    /// Builds a rule, compiling its patterns.
    pub fn new(
        action: &str,
        resource: &str,
        effect: RuleEffect,
        layer: Layer,
        file: &str,
        line: u32,
        base: &PatternBase<'_>,
    ) -> Result<Rule, PatternError> {
        let action_regex = if action.contains(['*', '?']) {
            let p = Pattern::parse(action, PatternKind::Generic, base)?;
            Some(Regex::new(&p.regex_source).map_err(|e| PatternError::Regex(e.to_string()))?)
        } else {
            None
        };
        // Rules over several actions read their resource generically.
        let kind = if action_regex.is_some() {
            PatternKind::Generic
        } else {
            PatternKind::for_action(action)
        };
        Ok(Rule {
            action: action.to_string(),
            resource: Pattern::parse(resource, kind, base)?,
            effect,
            layer,
            file: file.to_string(),
            line,
            action_regex,
        })
    }

    /// Whether the rule's action pattern covers `action`.
    pub fn matches_action(&self, action: &str) -> bool {
        match &self.action_regex {
            Some(re) => re.is_match(action),
            None => self.action == action,
        }
    }

    /// Whether the rule matches a request (ignoring the bare-wildcard restriction).
    pub fn matches(&self, action: &str, resource: &str) -> bool {
        self.matches_action(action) && self.resource.is_match(resource)
    }

    /// Whether this rule may decide a request of `risk`: a bare-wildcard `allow`
    /// never allows a destructive or credential request (invariant 3).
    pub fn applies_to_risk(&self, risk: Risk) -> bool {
        !(self.effect == RuleEffect::Allow
            && self.resource.is_bare_wildcard()
            && matches!(risk, Risk::Destructive | Risk::Credential))
    }

    /// The reference recorded with a decision.
    pub fn rule_ref(&self) -> RuleRef {
        RuleRef {
            file: self.file.clone(),
            line: self.line,
            action: self.action.clone(),
            resource: self.resource.text.clone(),
        }
    }

    /// `action "resource" = effect`, as a person would write it.
    pub fn describe(&self) -> String {
        format!(
            "{} \"{}\" = \"{}\"",
            self.action, self.resource.text, self.effect
        )
    }
}

/// Errors compiling a rule set.
#[derive(Debug, thiserror::Error)]
#[error("cannot compile the rule set: {0}")]
pub struct CompileError(String);

/// Rule indexes grouped by literal prefix, probed by the lengths that occur.
#[derive(Debug, Default)]
struct PrefixMap {
    by_prefix: HashMap<String, usize>,
    lengths: Vec<usize>,
}

impl PrefixMap {
    fn insert(&mut self, prefix: &str, idx: usize) {
        let slot = self.by_prefix.entry(prefix.to_string()).or_insert(idx);
        *slot = (*slot).max(idx);
        if !self.lengths.contains(&prefix.len()) {
            self.lengths.push(prefix.len());
            self.lengths.sort_unstable();
        }
    }

    fn best(&self, text: &str, no_slash: bool, best: &mut Option<usize>) {
        for &len in &self.lengths {
            if len > text.len() {
                break;
            }
            if !text.is_char_boundary(len) {
                continue;
            }
            if let Some(&idx) = self.by_prefix.get(&text[..len]) {
                if no_slash && text[len..].contains('/') {
                    continue;
                }
                bump(best, idx);
            }
        }
    }
}

fn bump(best: &mut Option<usize>, idx: usize) {
    if best.is_none_or(|b| idx > b) {
        *best = Some(idx);
    }
}

/// A `RegexSet` over some rules, with the rule index of each member. The set is
/// compiled on first use: a `check` process meets one or two buckets, and
/// compiling every one up front would cost it more than the decision.
#[derive(Debug)]
struct RegexBucket {
    set: OnceLock<Option<RegexSet>>,
    rules: Vec<usize>,
}

impl RegexBucket {
    fn best(&self, all: &[Rule], text: &str, best: &mut Option<usize>) {
        let set = self.set.get_or_init(|| {
            RegexSet::new(
                self.rules
                    .iter()
                    .map(|&i| all[i].resource.regex_source.as_str()),
            )
            .map_err(|e| {
                // Too large as one set: each pattern is matched on its own.
                tracing::debug!("rule patterns matched one by one: {e}");
            })
            .ok()
        });
        match set {
            // Members are in ascending rule order, so the last hit is the best.
            Some(set) => {
                if let Some(i) = set.matches(text).iter().next_back() {
                    bump(best, self.rules[i]);
                }
            }
            None => {
                if let Some(&i) = self
                    .rules
                    .iter()
                    .rev()
                    .find(|&&i| all[i].resource.is_match(text))
                {
                    bump(best, i);
                }
            }
        }
    }
}

/// The compiled rules of one action (or of the wildcard actions).
#[derive(Debug, Default)]
struct ActionMatcher {
    exact: HashMap<String, usize>,
    prefixes: PrefixMap,
    prefixes_no_slash: PrefixMap,
    /// `dir/**/*.ext` rules by the last `.`-part of their suffix (`""` when none).
    suffixes: HashMap<String, Vec<(String, String, usize)>>,
    /// Bare wildcard rules, ascending.
    any: Vec<usize>,
    /// Complex command patterns bucketed by their first word.
    by_first_word: HashMap<String, RegexBucket>,
    general: Option<RegexBucket>,
}

impl ActionMatcher {
    fn build(rules: &[Rule], members: &[usize]) -> Result<ActionMatcher, CompileError> {
        let mut m = ActionMatcher::default();
        let mut worded: HashMap<String, Vec<usize>> = HashMap::new();
        let mut general: Vec<usize> = Vec::new();
        for &idx in members {
            let pattern = &rules[idx].resource;
            match &pattern.shape {
                Shape::Any => m.any.push(idx),
                Shape::Exact(s) => {
                    let slot = m.exact.entry(s.clone()).or_insert(idx);
                    *slot = (*slot).max(idx);
                }
                Shape::Prefix {
                    exact,
                    prefix,
                    no_slash,
                } => {
                    if let Some(e) = exact {
                        let slot = m.exact.entry(e.clone()).or_insert(idx);
                        *slot = (*slot).max(idx);
                    }
                    if *no_slash {
                        m.prefixes_no_slash.insert(prefix, idx);
                    } else {
                        m.prefixes.insert(prefix, idx);
                    }
                }
                Shape::Suffix { prefix, suffix } => m
                    .suffixes
                    .entry(extension_key(suffix).to_string())
                    .or_default()
                    .push((prefix.clone(), suffix.clone(), idx)),
                Shape::Complex { literal_prefix } => {
                    match first_word(literal_prefix, pattern.kind) {
                        Some(word) => worded.entry(word.to_string()).or_default().push(idx),
                        None => general.push(idx),
                    }
                }
            }
        }
        for (word, idxs) in worded {
            m.by_first_word.insert(word, bucket(idxs));
        }
        if !general.is_empty() {
            m.general = Some(bucket(general));
        }
        Ok(m)
    }

    /// The highest-index non-bare rule matching `text`.
    fn best(&self, all: &[Rule], text: &str) -> Option<usize> {
        let mut best = None;
        if let Some(&idx) = self.exact.get(text) {
            bump(&mut best, idx);
        }
        self.prefixes.best(text, false, &mut best);
        self.prefixes_no_slash.best(text, true, &mut best);
        if !self.suffixes.is_empty() {
            let name = text.rsplit('/').next().unwrap_or(text);
            for key in [extension_key(name), ""] {
                for (prefix, suffix, idx) in self.suffixes.get(key).into_iter().flatten() {
                    if text.len() >= prefix.len() + suffix.len()
                        && text.starts_with(prefix.as_str())
                        && text.ends_with(suffix.as_str())
                    {
                        bump(&mut best, *idx);
                    }
                }
            }
        }
        if !self.by_first_word.is_empty() {
            if let Some(word) = text.split([' ', '\t', '\n']).next() {
                if let Some(b) = self.by_first_word.get(word) {
                    b.best(all, text, &mut best);
                }
            }
        }
        if let Some(b) = &self.general {
            b.best(all, text, &mut best);
        }
        best
    }
}

/// The last `.`-part of a name (`.gz` of `a.tar.gz`), or `""` when it has none.
fn extension_key(name: &str) -> &str {
    name.rfind('.').map_or("", |i| &name[i..])
}

/// The first complete word of a command pattern's literal prefix.
fn first_word(literal_prefix: &str, kind: PatternKind) -> Option<&str> {
    if kind != PatternKind::Command {
        return None;
    }
    let end = literal_prefix.find([' ', '\t', '\n'])?;
    let word = &literal_prefix[..end];
    (!word.is_empty()).then_some(word)
}

fn bucket(mut idxs: Vec<usize>) -> RegexBucket {
    idxs.sort_unstable();
    RegexBucket {
        set: OnceLock::new(),
        rules: idxs,
    }
}

/// A compiled, ordered rule list: the last matching rule wins.
#[derive(Debug, Default)]
pub struct RuleSet {
    rules: Vec<Rule>,
    by_action: HashMap<String, ActionMatcher>,
    /// Rules whose action is a wildcard, compiled together, with their actions.
    wild: Option<(ActionMatcher, Vec<usize>)>,
}

impl RuleSet {
    /// Compiles `rules`, in order (later wins).
    pub fn compile(rules: Vec<Rule>) -> Result<RuleSet, CompileError> {
        let mut groups: HashMap<String, Vec<usize>> = HashMap::new();
        let mut wild = Vec::new();
        for (idx, rule) in rules.iter().enumerate() {
            if rule.action_regex.is_some() {
                wild.push(idx);
            } else {
                groups.entry(rule.action.clone()).or_default().push(idx);
            }
        }
        let mut by_action = HashMap::with_capacity(groups.len());
        for (action, members) in groups {
            by_action.insert(action, ActionMatcher::build(&rules, &members)?);
        }
        let wild = if wild.is_empty() {
            None
        } else {
            Some((ActionMatcher::build(&rules, &wild)?, wild))
        };
        Ok(RuleSet {
            rules,
            by_action,
            wild,
        })
    }

    /// The rules, in merge order.
    pub fn rules(&self) -> &[Rule] {
        &self.rules
    }

    /// Whether there are no rules.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }

    /// The last rule that matches `(action, resource)` and may decide a request of
    /// `risk` (a bare-wildcard allow is skipped for destructive and credential).
    pub fn find(&self, action: &str, resource: &str, risk: Risk) -> Option<&Rule> {
        let mut best = None;
        if let Some(m) = self.by_action.get(action) {
            self.best_in(m, action, resource, risk, &mut best, false);
        }
        if let Some((m, _)) = &self.wild {
            self.best_in(m, action, resource, risk, &mut best, true);
        }
        best.map(|i| &self.rules[i])
    }

    fn best_in(
        &self,
        m: &ActionMatcher,
        action: &str,
        resource: &str,
        risk: Risk,
        best: &mut Option<usize>,
        check_action: bool,
    ) {
        if !check_action {
            if let Some(i) = m.best(&self.rules, resource) {
                bump(best, i);
            }
            if let Some(&i) = m
                .any
                .iter()
                .rev()
                .find(|&&i| self.rules[i].applies_to_risk(risk))
            {
                bump(best, i);
            }
            return;
        }
        // Wildcard actions are rare: check the action of each candidate.
        let mut candidates: Vec<usize> = m
            .any
            .iter()
            .copied()
            .filter(|&i| self.rules[i].applies_to_risk(risk))
            .collect();
        candidates.extend(
            self.wild_members()
                .iter()
                .copied()
                .filter(|&i| !self.rules[i].resource.is_bare_wildcard())
                .filter(|&i| self.rules[i].resource.is_match(resource)),
        );
        if let Some(i) = candidates
            .into_iter()
            .filter(|&i| self.rules[i].matches_action(action))
            .max()
        {
            bump(best, i);
        }
    }

    fn wild_members(&self) -> &[usize] {
        self.wild.as_ref().map_or(&[], |(_, w)| w.as_slice())
    }

    /// Every rule that matches `(action, resource)`, in order (for explain).
    pub fn all_matches(&self, action: &str, resource: &str) -> Vec<&Rule> {
        self.rules
            .iter()
            .filter(|r| r.matches(action, resource))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn base() -> PatternBase<'static> {
        PatternBase {
            root: Path::new("/ws"),
            home: Path::new("/home/u"),
        }
    }

    fn rule(action: &str, resource: &str, effect: RuleEffect, line: u32) -> Rule {
        Rule::new(action, resource, effect, Layer::Project, "f", line, &base()).unwrap()
    }

    /// The naive definition the compiled set must agree with.
    fn naive<'a>(rules: &'a [Rule], action: &str, res: &str, risk: Risk) -> Option<&'a Rule> {
        rules
            .iter()
            .rev()
            .find(|r| r.matches(action, res) && r.applies_to_risk(risk))
    }

    #[test]
    fn compiled_agrees_with_naive_scan() {
        let rules = vec![
            rule("bash", "*", RuleEffect::Ask, 1),
            rule("bash", "git *", RuleEffect::Allow, 2),
            rule("bash", "git push *", RuleEffect::ForceAsk, 3),
            rule("bash", "git push * --force*", RuleEffect::Deny, 4),
            rule("bash", "ls", RuleEffect::Allow, 5),
            rule("bash", "*rm -rf*", RuleEffect::Deny, 6),
            rule("read", "**", RuleEffect::Allow, 7),
            rule("read", "~/.ssh/**", RuleEffect::Deny, 8),
            rule("edit", "src/*", RuleEffect::Allow, 9),
            rule("edit", "**/*.lock", RuleEffect::Deny, 10),
            rule("edit", "src/**/*_test.rs", RuleEffect::Ask, 14),
            rule("edit", "**/*.tar.gz", RuleEffect::Deny, 15),
            rule("*", "*", RuleEffect::Ask, 11),
            rule("web*", "https://evil.example/*", RuleEffect::Deny, 12),
            rule("bash", "git status", RuleEffect::Allow, 13),
        ];
        let set = RuleSet::compile(rules.clone()).unwrap();
        let probes = [
            ("bash", "git status"),
            ("bash", "git push origin main"),
            ("bash", "git push origin main --force"),
            ("bash", "ls"),
            ("bash", "ls -la"),
            ("bash", "sudo rm -rf /"),
            ("read", "/home/u/.ssh/id_rsa"),
            ("read", "/ws/a"),
            ("edit", "/ws/src/a.rs"),
            ("edit", "/ws/src/a/b.rs"),
            ("edit", "/ws/Cargo.lock"),
            ("edit", "/ws/src/x/a_test.rs"),
            ("edit", "/ws/a_test.rs"),
            ("edit", "/ws/out/b.tar.gz"),
            ("edit", "/ws/out/b.gz"),
            ("webfetch", "https://evil.example/x"),
            ("websearch", "rust"),
            ("question", "q"),
        ];
        for (action, res) in probes {
            for risk in Risk::ALL {
                let want = naive(&rules, action, res, risk).map(|r| r.line);
                let got = set.find(action, res, risk).map(|r| r.line);
                assert_eq!(got, want, "{action} {res} {risk}");
            }
        }
    }

    #[test]
    fn bare_wildcard_allow_skipped_for_destructive_and_credential() {
        let rules = vec![
            rule("bash", "rm -rf build", RuleEffect::Allow, 1),
            rule("bash", "*", RuleEffect::Allow, 2),
        ];
        let set = RuleSet::compile(rules).unwrap();
        assert_eq!(
            set.find("bash", "rm -rf /", Risk::Destructive)
                .map(|r| r.line),
            None
        );
        assert_eq!(
            set.find("bash", "rm -rf build", Risk::Destructive)
                .map(|r| r.line),
            Some(1)
        );
        assert_eq!(
            set.find("bash", "cat .env", Risk::Credential)
                .map(|r| r.line),
            None
        );
        assert_eq!(set.find("bash", "ls", Risk::Read).map(|r| r.line), Some(2));
    }

    #[test]
    fn a_bucket_too_large_for_one_set_matches_rule_by_rule() {
        let rules = vec![
            rule("bash", "git * --force *", RuleEffect::Deny, 1),
            rule("bash", "git * origin *", RuleEffect::Ask, 2),
            rule("bash", "git l?g *", RuleEffect::Allow, 3),
        ];
        let b = bucket(vec![2, 0, 1]);
        // As if RegexSet::new had refused the set.
        b.set.set(None).unwrap();
        for (text, want) in [
            ("git push origin --force x", Some(1)),
            ("git push --force y", Some(0)),
            ("git log -n 1", Some(2)),
            ("git status", None),
        ] {
            let mut best = None;
            b.best(&rules, text, &mut best);
            assert_eq!(best, want, "{text}");
        }
        // The compiled set agrees.
        let compiled = bucket(vec![0, 1, 2]);
        for text in [
            "git push origin --force x",
            "git push --force y",
            "git log -n 1",
            "git status",
        ] {
            let (mut a, mut c) = (None, None);
            b.best(&rules, text, &mut a);
            compiled.best(&rules, text, &mut c);
            assert_eq!(a, c, "{text}");
        }
    }

    #[test]
    fn effects_parse() {
        assert_eq!(RuleEffect::parse("ask!"), Some(RuleEffect::ForceAsk));
        assert_eq!(RuleEffect::parse("Allow"), None);
        assert_eq!(RuleEffect::ForceAsk.effect(), Effect::Ask);
    }
}
