//! Pins: the recorded SHA-256 of an upstream's tool definitions, keyed by its
//! configured command line or URL.
//!
//! Each definition is hashed whole, as received: SHA-256 of its RFC 8785
//! (JCS) canonical JSON. The set hash is SHA-256 over the sorted
//! `name:hash` lines. The server's instructions (from its `initialize`
//! answer) are pinned the same way. On first sight a listing is pinned,
//! but for the definitions a person must read first ([`unread_concern`]:
//! prompt-injection cues, a credential file named, or a size past
//! [`DEFINITION_MAX`]), which are
//! withheld until approved; after that a tool whose definition is new or changed is withheld, and
//! every tool of a server whose instructions changed, with the listing kept
//! as pending, until a person approves it (`toolgate mcp pins approve NAME
//! DIGEST`, naming what they read: [`pending_digest`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};

use super::GatewayError;

/// SHA-256 (hex) of the RFC 8785 canonical JSON of `definition`.
pub fn definition_hash(definition: &Value) -> Result<String, GatewayError> {
    let canonical = serde_json_canonicalizer::to_string(definition)
        .map_err(|e| GatewayError::Pins(format!("cannot canonicalise a definition: {e}")))?;
    Ok(hex::encode(Sha256::digest(canonical.as_bytes())))
}

/// SHA-256 (hex) over the sorted `name:hash` lines (each ended by `\n`).
pub fn set_hash(hashes: &BTreeMap<String, String>) -> String {
    let mut h = Sha256::new();
    for (name, hash) in hashes {
        h.update(name.as_bytes());
        h.update(b":");
        h.update(hash.as_bytes());
        h.update(b"\n");
    }
    hex::encode(h.finalize())
}

/// The first `$ref` in `definition` that points outside it (anything but a
/// `#…` fragment), if any.
pub fn outside_ref(definition: &Value) -> Option<String> {
    match definition {
        Value::Object(map) => map.iter().find_map(|(k, v)| match (k.as_str(), v) {
            ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(s)) if !s.starts_with('#') => {
                Some(s.clone())
            }
            _ => outside_ref(v),
        }),
        Value::Array(items) => items.iter().find_map(outside_ref),
        _ => None,
    }
}

/// Every string and member name in `definition` (description, title,
/// parameter descriptions, enum values, defaults, annotations, `_meta`),
/// one a line: the text a model may read in it.
fn definition_text(definition: &Value) -> String {
    fn collect(value: &Value, out: &mut String) {
        match value {
            Value::String(s) => {
                out.push_str(s);
                out.push('\n');
            }
            Value::Array(items) => items.iter().for_each(|v| collect(v, out)),
            Value::Object(map) => {
                for (k, v) in map {
                    out.push_str(k);
                    out.push('\n');
                    collect(v, out);
                }
            }
            _ => {}
        }
    }
    let mut text = String::new();
    collect(definition, &mut text);
    text
}

/// The kinds of prompt-injection cues in the text of `definition` (every
/// string and member name in it: description, title, parameter
/// descriptions, enum values, defaults, annotations, `_meta`), sorted and
/// without repeats; empty for a clean one. A definition that cannot be scanned (the scanner could not be
/// built) counts as carrying a cue.
pub fn injection_cues(definition: &Value) -> Vec<String> {
    let text = definition_text(definition);
    let scanner = match toolgate_core::output_check::scanner() {
        Ok(s) => s,
        Err(e) => return vec![format!("unscanned ({e})")],
    };
    let mut kinds: Vec<String> = scanner.flags(&text).into_iter().map(|f| f.kind).collect();
    kinds.sort_unstable();
    kinds.dedup();
    kinds
}

/// The first credential file or directory a word of `text` names
/// (`~/.ssh/id_rsa`, `~/.aws/credentials`, `.env`), as the file tools
/// judge one. A tool has no business telling the model about one: the
/// tool poisoning attacks do (review s43: instructions to append
/// `~/.aws/credentials` when another server's tool is called, in words no
/// injection cue catches, were shown on first sight).
fn named_credential(text: &str) -> Option<String> {
    use toolgate_core::credential::{home_dir, is_credential, names_credential_file};
    let home = home_dir();
    text.split(|c: char| {
        c.is_whitespace()
            || matches!(
                c,
                '`' | '"' | '\'' | '(' | ')' | '[' | ']' | '<' | '>' | ',' | ';'
            )
    })
    .map(|w| w.trim_end_matches(['.', ':', '!', '?']))
    .filter(|w| w.len() > 1 && w.len() <= 4096)
    .find(|w| {
        names_credential_file(w)
            || (w.starts_with(['~', '/', '.'])
                && is_credential(&toolgate_core::location::expand_home(w), &home).is_some())
    })
    .map(str::to_string)
}

/// The largest definition (as JSON text) the model is shown unread, on
/// first sight: the largest of `server-filesystem`'s and
/// `server-everything`'s are about 1.3 KB. Review s43: a 1.7 MB definition
/// was shown on first sight, each listing flooding the model's context.
pub const DEFINITION_MAX: usize = 32 * 1024;

/// Why `definition` must be read by a person before the model is shown
/// it, even on first sight: it carries prompt-injection cues
/// ([`injection_cues`]), names a credential file or directory,
/// or is larger than [`DEFINITION_MAX`]. `None` for one that may be shown.
pub fn unread_concern(definition: &Value) -> Option<String> {
    let read_it =
        "read it with `toolgate mcp pins list` and approve with `toolgate mcp pins approve`";
    let cues = injection_cues(definition);
    if !cues.is_empty() {
        return Some(format!(
            "its definition carries prompt-injection cues ({}); {read_it}",
            cues.join(", ")
        ));
    }
    if let Some(credential) = named_credential(&definition_text(definition)) {
        return Some(format!(
            "its definition names a credential file ({}); {read_it}",
            toolgate_core::visible::escape_hidden(&credential, &[])
        ));
    }
    let size = serde_json::to_string(definition).map_or(usize::MAX, |t| t.len());
    (size > DEFINITION_MAX).then(|| {
        format!(
            "its definition is {size} bytes, more than the {} KiB the model is shown unread; {read_it}",
            DEFINITION_MAX / 1024
        )
    })
}

/// One upstream's pinned listing.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PinRecord {
    /// The configured name (for the person; the key is what counts).
    pub name: String,
    /// The set hash of the pinned definitions.
    pub set_hash: String,
    /// Each pinned tool's definition hash.
    pub tools: BTreeMap<String, String>,
    /// The pinned definitions, for showing a diff.
    pub definitions: BTreeMap<String, Value>,
    /// A listing seen since that differs from the pin, awaiting approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending: Option<BTreeMap<String, Value>>,
    /// The hash of the server's instructions as pinned (of JSON `null` when
    /// it gave none); `None` in a pin made before instructions were pinned,
    /// which takes the next ones seen.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions_hash: Option<String>,
    /// The pinned instructions, for showing a diff.
    #[serde(default, skip_serializing_if = "Value::is_null")]
    pub instructions: Value,
    /// Instructions seen since that differ from the pin, awaiting approval.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_instructions: Option<Value>,
}

/// All pins, in one JSON file in the data directory.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub struct PinFile {
    /// By key (configured command line or URL).
    pub pins: BTreeMap<String, PinRecord>,
}

/// What a listing's check left visible and what it withheld.
#[derive(Debug, Default)]
pub struct Checked {
    /// Definitions matching the pin (or pinned just now), by tool name.
    pub visible: BTreeMap<String, (Value, String)>,
    /// Tools withheld, each with why.
    pub withheld: Vec<(String, String)>,
}

/// The pin store at one path.
#[derive(Clone, Debug)]
pub struct PinStore {
    path: PathBuf,
}

impl PinStore {
    /// The store at `path` (created when first written).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        PinStore { path: path.into() }
    }

    /// The file the pins are kept in.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads every pin (none when the file does not exist).
    pub fn load(&self) -> Result<PinFile, GatewayError> {
        match std::fs::read_to_string(&self.path) {
            Ok(text) => serde_json::from_str(&text).map_err(|e| {
                GatewayError::Pins(format!("{} is not a pin file: {e}", self.path.display()))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(PinFile::default()),
            Err(e) => Err(GatewayError::Pins(format!(
                "cannot read {}: {e}",
                self.path.display()
            ))),
        }
    }

    /// Writes every pin atomically.
    pub fn save(&self, file: &PinFile) -> Result<(), GatewayError> {
        let text = serde_json::to_string_pretty(file)
            .map_err(|e| GatewayError::Pins(format!("cannot encode pins: {e}")))?;
        let tmp = self.path.with_extension("json.tmp");
        let io = |e: std::io::Error| {
            GatewayError::Pins(format!("cannot write {}: {e}", self.path.display()))
        };
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        std::fs::write(&tmp, text).map_err(io)?;
        std::fs::rename(&tmp, &self.path).map_err(io)
    }

    /// Checks a listing (each definition as received) of the upstream keyed
    /// `key`: pins it on first sight; else keeps visible only the tools whose
    /// definitions match the pin, and records the listing as pending when
    /// anything was added, changed or removed. A definition with a `$ref`
    /// outside itself is always withheld.
    pub fn check(
        &self,
        key: &str,
        name: &str,
        listing: &[Value],
        instructions: Option<&str>,
    ) -> Result<Checked, GatewayError> {
        let instructions = instructions.map_or(Value::Null, |s| Value::String(s.to_string()));
        let instructions_hash = definition_hash(&instructions)?;
        let mut out = Checked::default();
        let mut seen: BTreeMap<String, (Value, String)> = BTreeMap::new();
        let mut twice = std::collections::BTreeSet::new();
        for def in listing {
            let tool = def
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string();
            if let Some(r) = outside_ref(def) {
                out.withheld.push((
                    tool,
                    format!("its schema refers outside its definition ($ref {r:?})"),
                ));
                continue;
            }
            let hash = definition_hash(def)?;
            if seen.insert(tool.clone(), (def.clone(), hash)).is_some()
                && twice.insert(tool.clone())
            {
                out.withheld
                    .push((tool, "the server lists this name twice".into()));
            }
        }
        // A name listed twice is ambiguous (which definition the server
        // runs is its own choice): neither is pinned or shown (review s42:
        // it was reported withheld and shown all the same).
        seen.retain(|tool, _| !twice.contains(tool));
        // Tool poisoning on first sight: a definition that carries
        // instructions to the model is never pinned or shown unread.
        let concerns: BTreeMap<String, String> = seen
            .iter()
            .filter_map(|(n, (d, _))| Some((n.clone(), unread_concern(d)?)))
            .collect();
        let mut file = self.load()?;
        let Some(record) = file.pins.get_mut(key) else {
            let (clean, flagged): (BTreeMap<_, _>, BTreeMap<_, _>) = seen
                .into_iter()
                .partition(|(n, _)| !concerns.contains_key(n));
            let tools: BTreeMap<String, String> = clean
                .iter()
                .map(|(n, (_, h))| (n.clone(), h.clone()))
                .collect();
            // The whole listing awaits approval when part of it was held
            // back: approving pins the flagged definitions as read.
            let pending = (!flagged.is_empty()).then(|| {
                clean
                    .iter()
                    .chain(&flagged)
                    .map(|(n, (d, _))| (n.clone(), d.clone()))
                    .collect()
            });
            for tool in flagged.keys() {
                out.withheld.push((
                    tool.clone(),
                    concerns.get(tool).cloned().unwrap_or_default(),
                ));
            }
            file.pins.insert(
                key.to_string(),
                PinRecord {
                    name: name.to_string(),
                    set_hash: set_hash(&tools),
                    tools,
                    definitions: clean
                        .iter()
                        .map(|(n, (d, _))| (n.clone(), d.clone()))
                        .collect(),
                    pending,
                    instructions_hash: Some(instructions_hash),
                    instructions,
                    pending_instructions: None,
                },
            );
            self.save(&file)?;
            out.visible = clean;
            return Ok(out);
        };
        let hashes: BTreeMap<String, String> = seen
            .iter()
            .map(|(n, (_, h))| (n.clone(), h.clone()))
            .collect();
        let differs = set_hash(&hashes) != record.set_hash;
        let mut changed = false;
        if record.instructions_hash.is_none() {
            // Pinned before instructions were: these are taken as the pin.
            record.instructions_hash = Some(instructions_hash.clone());
            record.instructions = instructions.clone();
            changed = true;
        }
        let instructions_differ = record.instructions_hash.as_deref() != Some(&instructions_hash);
        for (tool, (def, hash)) in seen {
            match record.tools.get(&tool) {
                Some(_) if instructions_differ => out.withheld.push((
                    tool,
                    "the server's instructions changed since it was pinned; approve with `toolgate mcp pins approve`"
                        .into(),
                )),
                Some(pinned) if *pinned == hash => {
                    out.visible.insert(tool, (def, hash));
                }
                _ if concerns.contains_key(&tool) => {
                    let why = concerns.get(&tool).cloned().unwrap_or_default();
                    out.withheld.push((tool, why));
                }
                Some(_) => out.withheld.push((
                    tool,
                    "its definition changed since it was pinned; approve with `toolgate mcp pins approve`"
                        .into(),
                )),
                None => out.withheld.push((
                    tool,
                    "it is new since the server was pinned; approve with `toolgate mcp pins approve`"
                        .into(),
                )),
            }
        }
        let pending = differs.then(|| {
            listing
                .iter()
                .filter(|d| outside_ref(d).is_none())
                .filter_map(|d| Some((d.get("name")?.as_str()?.to_string(), d.clone())))
                .collect::<BTreeMap<_, _>>()
        });
        let pending_instructions = instructions_differ.then_some(instructions);
        if record.pending != pending || record.pending_instructions != pending_instructions {
            record.pending = pending;
            record.pending_instructions = pending_instructions;
            changed = true;
        }
        if changed {
            self.save(&file)?;
        }
        Ok(out)
    }

    /// Approves the pending listing of the upstream named `name` whose
    /// [`pending_digest`] is `digest` (the one `toolgate mcp pins list`
    /// showed the person): it becomes the pin. Returns whether anything
    /// awaited approval; refuses when what awaits it now is not what
    /// `digest` names (review s43: an approval given to one change pinned
    /// the next one the server made after it was read).
    pub fn approve(&self, name: &str, digest: &str) -> Result<bool, GatewayError> {
        let mut file = self.load()?;
        let mut awaiting = false;
        let mut keys = Vec::new();
        for (key, record) in file.pins.iter().filter(|(_, r)| r.name == name) {
            if let Some(pending) = pending_digest(record)? {
                awaiting = true;
                if pending.eq_ignore_ascii_case(digest.trim()) {
                    keys.push(key.clone());
                }
            }
        }
        if !awaiting {
            return Ok(false);
        }
        if keys.is_empty() {
            return Err(GatewayError::Pins(format!(
                "what awaits approval for {name} is not what {digest:?} names: it changed since it was listed; read it again with `toolgate mcp pins list`"
            )));
        }
        let mut found = false;
        for record in file
            .pins
            .iter_mut()
            .filter(|(k, _)| keys.contains(k))
            .map(|(_, r)| r)
        {
            if let Some(pending) = record.pending.take() {
                let mut tools = BTreeMap::new();
                for (tool, def) in &pending {
                    tools.insert(tool.clone(), definition_hash(def)?);
                }
                record.set_hash = set_hash(&tools);
                record.tools = tools;
                record.definitions = pending;
                found = true;
            }
            if let Some(instructions) = record.pending_instructions.take() {
                record.instructions_hash = Some(definition_hash(&instructions)?);
                record.instructions = instructions;
                found = true;
            }
        }
        if found {
            self.save(&file)?;
        }
        Ok(found)
    }

    /// Forgets the pins of the upstream named `name` (its next listing is
    /// pinned afresh). Returns whether there were any.
    pub fn reset(&self, name: &str) -> Result<bool, GatewayError> {
        let mut file = self.load()?;
        let before = file.pins.len();
        file.pins.retain(|_, r| r.name != name);
        let changed = file.pins.len() != before;
        if changed {
            self.save(&file)?;
        }
        Ok(changed)
    }
}

/// The digest of what awaits approval in `record` (its pending definitions
/// and instructions): SHA-256 (hex) of their RFC 8785 canonical JSON;
/// `None` when nothing does. An approval names it, so that it approves
/// what the person read and nothing the server sent after.
pub fn pending_digest(record: &PinRecord) -> Result<Option<String>, GatewayError> {
    if record.pending.is_none() && record.pending_instructions.is_none() {
        return Ok(None);
    }
    let pending = serde_json::json!({
        "definitions": record.pending,
        "instructions": record.pending_instructions,
    });
    definition_hash(&pending).map(Some)
}

/// `text` with every character that is not shown
/// ([`toolgate_core::visible::is_hidden`]: controls, bidi and invisible
/// characters…) as a `\u{…}` escape, for a person reviewing a definition.
pub fn escape_invisible(text: &str) -> String {
    // Line breaks keep the diff readable; everything else not shown is escaped.
    toolgate_core::visible::escape_hidden(text, &['\n']).into_owned()
}

/// A person-readable diff of a pending listing against the pin: each added,
/// removed or changed tool with its definitions (escaped), one per line.
pub fn describe_pending(record: &PinRecord) -> Vec<String> {
    let show = |v: &Value| escape_invisible(&serde_json::to_string(v).unwrap_or_default());
    // The server chose the names too: one with a line break or an escape
    // must not forge or erase a line of the diff a person approves.
    let name = |t: &str| toolgate_core::visible::escape_hidden(t, &[]).into_owned();
    let mut lines = Vec::new();
    if let Some(now) = &record.pending_instructions {
        lines.push("  ~ the server's instructions:".into());
        lines.push(format!("      was {}", show(&record.instructions)));
        lines.push(format!("      now {}", show(now)));
    }
    let Some(pending) = &record.pending else {
        return lines;
    };
    for (tool, def) in pending {
        match record.definitions.get(tool) {
            None => lines.push(format!("  + {}: {}", name(tool), show(def))),
            Some(old) if old != def => {
                lines.push(format!("  ~ {}:", name(tool)));
                lines.push(format!("      was {}", show(old)));
                lines.push(format!("      now {}", show(def)));
            }
            Some(_) => {}
        }
    }
    for tool in record
        .definitions
        .keys()
        .filter(|t| !pending.contains_key(*t))
    {
        lines.push(format!("  - {}", name(tool)));
    }
    lines
}
