//! Read specs: the allowlist that proves a command only reads.
//!
//! A command is `read` only when a spec says so for every word it was given:
//! the program is in a spec file, every option is one the spec lists (parsed
//! the way the program parses it: clusters of short options, values attached
//! or separate, `--opt=value`, `--` ending options), every subcommand is one
//! the spec lists, and every file it will read — operands and option values —
//! is named, so the caller can judge it as a read of that path. Anything else
//! is [`Judged::Unproven`], which the caller turns into at least `execute`.
//!
//! The specs are data, one TOML file per command family under `specs/`, each
//! entry with examples that must be read and examples that must not
//! (`read = […]`, `not_read = […]`); a test runs every example.
//!
//! Option strings (`options = ["-n --lines= :count", …]`) hold the aliases of
//! one option, then markers:
//! * `-x` a short option, `--long` a long one; a trailing `=` on any alias
//!   means the option takes a value (separate or attached), `=?` an optional
//!   value that can only be attached (`--color=auto`, `-i.bak`);
//! * `:read` the value is a file it reads, `:write` a file it writes
//!   (`write`), `:cd` a directory it works in (judged as a read of that
//!   directory, and later operands are unknown), `:exec` the value is run
//!   (`execute`), `:net` it talks to the network;
//! * `!walk` it reads every file below its operands, `!write` its operands are
//!   written, `!pattern` the search pattern was given by this option (so the
//!   first operand is a file), `!exec`, `!net`, `!cred` (prints secrets),
//!   `!args` the operands after it are not files, `!content` it prints the
//!   content of tracked files (`git log -p`), `!brief` it replaces a
//!   default content output by one without (`git show --stat`).
//!
//! A git subcommand that can print the content of the repository's tracked
//! files says when (`content = "always"`, `"default"`, `"option"`; see
//! [`TrackedRead`]), and `blobs = true` when an operand may name a blob that
//! it prints whole: the caller then judges the files the repository tracks.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, LazyLock, Mutex, OnceLock};

#[cfg(test)]
use super::spec_text::resolve_groups;

use super::spec_text::{
    CompiledSpec, CompiledSub, OptSpec, OptionTable, Prints, Raises, SpecText, SubFactText, Takes,
    ValueKind,
};
use serde::Deserialize as _;
use toolgate_core::Risk;

use super::table::{Check, FlagMatch};

/// The spec files, one per family, in the order a later one wins. A process
/// uses what the build script compiled from their text; tests parse it.
const SPEC_FILES: &[(&str, &str)] = &[
    ("coreutils.toml", include_str!("specs/coreutils.toml")),
    ("search.toml", include_str!("specs/search.toml")),
    ("text.toml", include_str!("specs/text.toml")),
    ("git.toml", include_str!("specs/git.toml")),
    ("packages.toml", include_str!("specs/packages.toml")),
    ("system.toml", include_str!("specs/system.toml")),
    ("files.toml", include_str!("specs/files.toml")),
];

/// The wrappers' option specs (not read specs: a wrapper runs a command).
const WRAPPER_FILE: (&str, &str) = ("wrappers.toml", include_str!("specs/wrappers.toml"));

/// How a command's operands are used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Operands {
    /// Files it reads.
    Read,
    /// Not files (text to print, names to look up).
    None,
    /// A pattern first (unless an option gave it), then files it reads.
    PatternThenRead,
    /// A subcommand, looked up in `sub`.
    Sub,
    /// Files it writes.
    Write,
    /// A command to run, from the first operand on (wrappers).
    Command,
    /// Output formats starting with `+` (`date +%F`); any other operand is
    /// not proven (`date MMDDhhmm` sets the clock).
    Format,
}

/// When a command prints the content of the repository's tracked files.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Content {
    /// Never (`git status`, `git ls-files`).
    Never,
    /// Whatever its options (`git grep`).
    Always,
    /// Unless a `!brief` option is given and no `!content` one (`git diff`).
    Default,
    /// Only with a `!content` option (`git log -p`).
    Option,
}

/// How options are written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Style {
    /// GNU getopt_long: options anywhere, clusters of short options.
    Gnu,
    /// Options end at the first operand.
    Posix,
    /// `find`: single-dash long primaries after the paths, values separate.
    Find,
    /// No options at all: every word is text (`echo`, `printf`, `true`).
    Free,
}

/// A command's (or subcommand's) spec.
#[derive(Debug)]
pub(crate) struct Spec {
    pub(crate) name: String,
    operands: Operands,
    style: Style,
    numeric: bool,
    max_operands: Option<usize>,
    bsd_letters: Option<String>,
    at_files: bool,
    walk: bool,
    needs_sub: bool,
    bundled_first: bool,
    content: Content,
    blobs: bool,
    /// Whether its operands name paths (see `SpecText::paths`).
    paths: bool,
    /// Its named check, run over every command line of it.
    pub(crate) check: Option<Check>,
    /// The options that raise it whether or not it is proven.
    pub(crate) flags: Vec<SpecFlag>,
    /// Its subcommands' facts, when the spec names them.
    pub(crate) sub_facts: Option<SubFacts>,
    /// The program whose facts it has (see `SpecText::facts_of`).
    pub(crate) facts_of: Option<String>,
    /// What it is when not proven and nothing raises it (see
    /// `SpecText::risk`).
    pub(crate) base_risk: Risk,
    pub(crate) program: Option<Program>,
    options: OptionTable<'static>,
    /// Subcommand names, sorted, each with its place in `subs`.
    sub_names: Vec<(&'static str, u16)>,
    subs: Vec<SubSpec>,
    /// Examples the tests hold the spec to.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) read_examples: Vec<String>,
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) not_read_examples: Vec<String>,
}

/// A subcommand's spec, built from its text the first time a command line
/// names it: `git` has dozens, and a `check` process judges one or two.
#[derive(Debug)]
pub(crate) struct SubSpec {
    /// The key of its table (`log` of `[git.sub.log]`).
    key: &'static str,
    /// Taken when the spec is built.
    source: Mutex<Option<SubSource>>,
    built: OnceLock<Result<Arc<Spec>, String>>,
}

/// What a subcommand's spec is built from.
#[derive(Debug)]
enum SubSource {
    /// Its text, as parsed from TOML (the tests' full load).
    #[cfg(test)]
    Text(Box<SpecText>),
    /// Its compiled bytes (see `build.rs`), decoded only when needed.
    Compiled(&'static [u8]),
}

impl SubSpec {
    /// The spec of this subcommand of `parent`; an error when its text does
    /// not build (a test builds every built-in one).
    pub(crate) fn spec(&self, parent: &str) -> Result<&Arc<Spec>, &str> {
        self.built
            .get_or_init(|| {
                let source = self
                    .source
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .take()
                    .ok_or_else(|| "built twice".to_string())?;
                let name = format!("{parent} {}", self.key);
                match source {
                    #[cfg(test)]
                    SubSource::Text(text) => build_text(&name, *text),
                    SubSource::Compiled(bytes) => {
                        let compiled: CompiledSpec<'static> =
                            postcard::from_bytes(bytes).map_err(|e| e.to_string())?;
                        build(&name, compiled)
                    }
                }
                .map(Arc::new)
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

/// An option that raises a command whether or not its spec proves it
/// (`rm -r` destroys, `sed -f` runs a script the analyser cannot see),
/// parsed from a `flags` line.
#[derive(Debug)]
pub(crate) struct SpecFlag {
    at: FlagAt,
    /// It takes a separate value (`-c NAME=VALUE`).
    takes_value: bool,
    /// The risk it raises the command to.
    pub(crate) risk: Risk,
    /// Why, in words.
    pub(crate) why: String,
}

/// How a [`SpecFlag`] is recognised (see [`FlagMatch`]).
#[derive(Debug)]
enum FlagAt {
    Exact(String),
    Prefix(String),
    Short(char),
}

impl SpecFlag {
    /// Parses `"MATCH RISK WHY"` (see `SpecText::flags`).
    fn parse(line: &str) -> Result<SpecFlag, String> {
        let mut parts = line.splitn(3, ' ');
        let (Some(at), Some(risk), Some(why)) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("flag `{line}` is not `MATCH RISK WHY`"));
        };
        let risk = risk_named(risk).map_err(|e| format!("flag `{line}`: {e}"))?;
        let (at, takes_value) = match at.strip_suffix('=') {
            Some(at) => (at, true),
            None => (at, false),
        };
        let at = if let Some(prefix) = at.strip_suffix('*') {
            FlagAt::Prefix(prefix.to_string())
        } else if at.starts_with("--") {
            FlagAt::Exact(at.to_string())
        } else {
            let mut chars = at.strip_prefix('-').unwrap_or("").chars();
            match (chars.next(), chars.next()) {
                (Some(c), None) => FlagAt::Short(c),
                _ => return Err(format!("flag `{line}`: `{at}` is no option to match")),
            }
        };
        Ok(SpecFlag {
            at,
            takes_value,
            risk,
            why: why.to_string(),
        })
    }

    /// The word it is written as when it takes a separate value.
    fn value_option(&self) -> Option<String> {
        match (&self.at, self.takes_value) {
            (FlagAt::Exact(text), true) => Some(text.clone()),
            (FlagAt::Short(c), true) => Some(format!("-{c}")),
            _ => None,
        }
    }

    /// How it is recognised in an option word.
    pub(crate) fn at(&self) -> FlagMatch<'_> {
        match &self.at {
            FlagAt::Exact(text) => FlagMatch::Exact(text),
            FlagAt::Prefix(text) => FlagMatch::Prefix(text),
            FlagAt::Short(c) => FlagMatch::Short(*c),
        }
    }
}

/// What a program's subcommands are whether or not the spec proves them.
#[derive(Debug)]
pub(crate) struct SubFacts {
    /// Each named subcommand's facts, sorted by name.
    subs: Vec<SubFact>,
    /// The risk of a subcommand not named.
    pub(crate) unknown: Risk,
    /// The program's own options that take a separate value (`-C DIR`), so
    /// their value is never taken for the subcommand.
    pub(crate) value_options: Vec<String>,
}

/// One subcommand's facts as written, read the first time a command line
/// names it: `git` names a hundred subcommands, and a `check` process judges
/// one or two.
#[derive(Debug)]
struct SubFact {
    text: SubFactText<'static>,
    read: OnceLock<Result<ReadFact, String>>,
}

/// A subcommand's risk, the options that raise it and its check, borrowed.
pub(crate) type SubFactRef<'a> = (Risk, &'a [SpecFlag], Option<Check>);

/// A subcommand's risk, the options that raise it and its check.
type ReadFact = (Risk, Vec<SpecFlag>, Option<Check>);

impl SubFact {
    /// Its risk, flags and check; an error naming what does not read (a
    /// test reads every built-in one).
    fn read(&self) -> Result<&ReadFact, &str> {
        self.read
            .get_or_init(|| {
                let text = &self.text;
                let risk = risk_named(text.risk)?;
                let flags = text
                    .flags
                    .iter()
                    .map(|line| SpecFlag::parse(line))
                    .collect::<Result<Vec<_>, _>>()?;
                let check = text.check.map(check_named).transpose()?;
                Ok((risk, flags, check))
            })
            .as_ref()
            .map_err(String::as_str)
    }
}

impl SubFacts {
    /// The risk of subcommand `name`, the options that raise it and its
    /// check (`None`: the spec does not name it); an error when its facts
    /// do not read.
    pub(crate) fn sub(&self, name: &str) -> Option<Result<SubFactRef<'_>, &str>> {
        let at = self.subs.binary_search_by(|f| f.text.name.cmp(name)).ok()?;
        Some(
            self.subs[at]
                .read()
                .map(|(risk, flags, check)| (*risk, flags.as_slice(), *check)),
        )
    }

    /// Reads every subcommand's facts: the first error.
    #[cfg(test)]
    fn read_all(&self) -> Result<(), String> {
        for fact in &self.subs {
            fact.read()
                .map_err(|e| format!("subcommand `{}`: {e}", fact.text.name))?;
        }
        Ok(())
    }

    /// From an entry's subcommand facts (see [`super::spec_text::sub_facts`]),
    /// its `unknown_sub` and its options; `None` when it names no
    /// subcommand's risk.
    fn build(
        facts: Option<Vec<SubFactText<'static>>>,
        unknown_sub: Option<&str>,
        options: &OptionTable<'_>,
        flags: &[SpecFlag],
    ) -> Result<Option<SubFacts>, String> {
        let Some(facts) = facts else {
            if unknown_sub.is_some() {
                return Err("`unknown_sub` without `sub_risks`".into());
            }
            return Ok(None);
        };
        let unknown = unknown_sub.map_or(Ok(Risk::Execute), risk_named)?;
        let takes_value = |at: u16| {
            options
                .opts
                .get(usize::from(at))
                .is_some_and(|o| o.takes == Takes::Required || o.takes == Takes::Two)
        };
        let value_options = options
            .long
            .iter()
            .filter(|(_, at)| takes_value(*at))
            .map(|(alias, _)| alias.to_string())
            .chain(
                options
                    .short
                    .iter()
                    .filter(|(_, at)| takes_value(*at))
                    .map(|(c, _)| format!("-{c}")),
            )
            .chain(flags.iter().filter_map(SpecFlag::value_option))
            .collect();
        Ok(Some(SubFacts {
            subs: facts
                .into_iter()
                .map(|text| SubFact {
                    text,
                    read: OnceLock::new(),
                })
                .collect(),
            unknown,
            value_options,
        }))
    }
}

/// The check named `name` (`"find-actions"`).
fn check_named(name: &str) -> Result<Check, String> {
    Check::deserialize(serde::de::value::StrDeserializer::<serde::de::value::Error>::new(name))
        .map_err(|e| format!("check `{name}`: {e}"))
}

/// The risk named `name` (`"network"`).
fn risk_named(name: &str) -> Result<Risk, String> {
    Risk::ALL
        .into_iter()
        .find(|r| r.as_str() == name)
        .ok_or_else(|| format!("no risk `{name}`"))
}

/// Programs whose script is parsed before the command counts as read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Program {
    Sed,
    Awk,
    Jq,
}

/// A file the command uses, by its index in the arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FileArg {
    /// Index into the arguments (the words after the command name).
    pub index: usize,
    /// Whether it is written.
    pub writes: bool,
    /// The word is exactly the file (an operand), or the value attached to an
    /// option (`--file=F`, `-fF`): `attached` gives the byte offset of the
    /// value in the word.
    pub attached: Option<usize>,
}

/// A command that prints the content of the repository's tracked files (in
/// the working tree, the index or history): the caller judges what the
/// repository tracks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TrackedRead {
    /// Indices of the pathspecs after `--`, which select the files it reads;
    /// `None` when it may read any tracked file.
    pub pathspecs: Option<Vec<usize>>,
    /// Why it prints content, in words.
    pub why: String,
}

/// What a spec proved about one command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Judged {
    /// Every word is understood: the risk, why, and the files it uses.
    Proven {
        /// `read`, or higher when a known option writes or runs something.
        risk: Risk,
        /// Why, in words.
        reason: String,
        /// The files it reads or writes.
        files: Vec<FileArg>,
        /// How much it reads below its directory operands.
        walks: super::Walk,
        /// A directory it moves to (`git -C DIR`): index of the word.
        chdir: Option<FileArg>,
        /// Where its subcommand's name is (`git -C x status`: 2).
        sub_at: Option<usize>,
        /// It prints the content of tracked files.
        tracked: Option<TrackedRead>,
    },
    /// Something is not in the spec: why.
    Unproven(String),
}

/// One spec file's entries as the build script compiled them (see
/// `build.rs` and `spec_index.rs`): each entry's table — its own TOML with
/// the file's option groups resolved — as a byte range of [`SPEC_TABLES`],
/// and (in `GENERATED_NAMES`, for all files at once) its names sorted, each
/// with the entry it names.
struct GeneratedFile {
    file: &'static str,
    tables: &'static [(usize, usize)],
}

include!(concat!(env!("OUT_DIR"), "/spec_index.rs"));

/// Every entry's table, encoded with `postcard` by the build script: decoding
/// one costs a small fraction of parsing its TOML, and a `check` process
/// decodes only the entries of the commands it judges.
static SPEC_TABLES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/spec_tables.bin"));

/// The specs of a set of files, each entry built the first time its command
/// is looked up.
struct Index {
    files: Vec<IndexedFile>,
    /// For each file of [`GENERATED_INDEX`], its place in `files`, if any.
    place: Vec<Option<usize>>,
}

struct IndexedFile {
    generated: &'static GeneratedFile,
    built: Vec<OnceLock<Option<Arc<Spec>>>>,
}

impl Index {
    fn new(files: &[(&'static str, &'static str)]) -> Index {
        let files = files
            .iter()
            .filter_map(|(name, _text)| {
                let generated = GENERATED_INDEX.iter().find(|g| g.file == *name);
                if generated.is_none() {
                    // The build script compiles every file of `specs/`; a test
                    // keeps this from shipping.
                    tracing::error!("spec file `{name}` has no compiled index");
                }
                generated.map(|generated| IndexedFile {
                    generated,
                    built: generated.tables.iter().map(|_| OnceLock::new()).collect(),
                })
            })
            .collect::<Vec<_>>();
        let place = GENERATED_INDEX
            .iter()
            .map(|g| files.iter().position(|f| std::ptr::eq(f.generated, g)))
            .collect();
        Index { files, place }
    }

    fn get(&self, name: &str) -> Option<Arc<Spec>> {
        // A later file's entry of the same name wins, as it did when the
        // files were read into one map: the greatest place among the names.
        let from = GENERATED_NAMES.partition_point(|(n, _, _)| *n < name);
        let (place, at) = GENERATED_NAMES[from..]
            .iter()
            .take_while(|(n, _, _)| *n == name)
            .filter_map(|(_, g, at)| Some((self.place.get(*g).copied().flatten()?, *at)))
            .max_by_key(|(place, _)| *place)?;
        let file = &self.files[place];
        file.built[at]
            .get_or_init(|| {
                let (from, to) = file.generated.tables[at];
                let loaded = SPEC_TABLES
                    .get(from..to)
                    .ok_or_else(|| "compiled table out of range".to_string())
                    .and_then(|bytes| {
                        postcard::from_bytes::<BTreeMap<String, CompiledSpec<'static>>>(bytes)
                            .map_err(|e| e.to_string())
                    })
                    .and_then(|table| add_compiled(file.generated.file, table));
                match loaded {
                    Ok(map) => map.get(name).cloned(),
                    Err(e) => {
                        // A built-in spec that does not load proves nothing: the
                        // command is unproven (asked), never allowed. A test
                        // keeps this from shipping.
                        tracing::error!("built-in spec for `{name}` does not load: {e}");
                        None
                    }
                }
            })
            .clone()
    }
}

static SPECS: LazyLock<Index> = LazyLock::new(|| Index::new(SPEC_FILES));
static WRAPPER_SPECS: LazyLock<Index> = LazyLock::new(|| Index::new(&[WRAPPER_FILE]));

/// Every spec by command name (aliases included), all parsed.
#[cfg(test)]
pub(crate) fn all() -> HashMap<String, Arc<Spec>> {
    load_all().unwrap_or_else(|e| panic!("{e}"))
}

/// The option spec of a wrapper (`env`, `timeout`, `xargs`…).
pub(crate) fn wrapper_spec(name: &str) -> Option<Arc<Spec>> {
    WRAPPER_SPECS.get(name)
}

/// Loads and checks every read spec file.
#[cfg(test)]
pub(crate) fn load_all() -> Result<HashMap<String, Arc<Spec>>, String> {
    load_files(SPEC_FILES)
}

/// Loads and checks the wrapper spec file.
#[cfg(test)]
pub(crate) fn load_wrappers() -> Result<HashMap<String, Arc<Spec>>, String> {
    load_files(&[WRAPPER_FILE])
}

/// Parses whole spec files (the tests' way in: every entry at once).
#[cfg(test)]
fn load_files(files: &[(&str, &str)]) -> Result<HashMap<String, Arc<Spec>>, String> {
    let mut out = HashMap::new();
    for (file, text) in files {
        let table: BTreeMap<String, SpecText> =
            toml::from_str(text).map_err(|e| format!("{file}: {e}"))?;
        add_table(&mut out, file, table)?;
    }
    Ok(out)
}

/// The names an entry answers to: its `names`, or else its table's key.
fn names_of<'n>(key: &'n str, names: &[&'n str]) -> Vec<&'n str> {
    if names.is_empty() {
        vec![key]
    } else {
        names.to_vec()
    }
}

/// Builds the entries of one compiled table (groups resolved by the build
/// script), by every name they answer to.
fn add_compiled(
    file: &str,
    table: BTreeMap<String, CompiledSpec<'static>>,
) -> Result<HashMap<String, Arc<Spec>>, String> {
    let mut out = HashMap::new();
    for (key, entry) in table {
        let names = entry.text.names.clone();
        let spec = build(&key, entry).map_err(|e| format!("{file}: [{key}] {e}"))?;
        insert_named(&mut out, file, &key, &names, spec)?;
    }
    Ok(out)
}

/// Adds `spec` under every name it answers to (its `names`, or else its
/// table's key); a name taken already is an error.
fn insert_named(
    out: &mut HashMap<String, Arc<Spec>>,
    file: &str,
    key: &str,
    names: &[String],
    spec: Spec,
) -> Result<(), String> {
    let spec = Arc::new(spec);
    let names: Vec<&str> = names.iter().map(String::as_str).collect();
    for name in names_of(key, &names) {
        if out.insert(name.to_string(), spec.clone()).is_some() {
            return Err(format!("{file}: `{name}` has two specs"));
        }
    }
    Ok(())
}

/// Builds the entries of one table (groups not yet resolved) into `out`, by
/// every name they answer to.
#[cfg(test)]
fn add_table(
    out: &mut HashMap<String, Arc<Spec>>,
    file: &str,
    table: BTreeMap<String, SpecText>,
) -> Result<(), String> {
    let table = resolve_groups(table).map_err(|e| format!("{file}: {e}"))?;
    for (key, text) in table {
        let names = text.names.clone();
        let spec = build_text(&key, text).map_err(|e| format!("{file}: [{key}] {e}"))?;
        insert_named(out, file, &key, &names, spec)?;
    }
    Ok(())
}

/// Builds the spec `name` from its text as parsed from TOML (the tests' full
/// load): its option lines are parsed here, its subcommands built when first
/// judged. The table borrows its strings, so they are leaked: tests only.
#[cfg(test)]
fn build_text(name: &str, mut text: SpecText) -> Result<Spec, String> {
    fn leak(s: String) -> &'static str {
        String::leak(s)
    }
    let all_long = text.style.as_deref() == Some("find");
    let lines: Vec<&'static str> = std::mem::take(&mut text.options)
        .into_iter()
        .map(leak)
        .collect();
    let options = OptionTable::parse(lines, all_long)?;
    let mut subs = Vec::new();
    for (key, entry) in std::mem::take(&mut text.sub) {
        let names: Vec<&'static str> = entry.names.iter().cloned().map(leak).collect();
        subs.push((leak(key), names, SubSource::Text(Box::new(entry))));
    }
    let facts = super::spec_text::sub_facts(&text)?.map(|facts| {
        facts
            .into_iter()
            .map(|f| SubFactText {
                name: leak(f.name.to_string()),
                risk: leak(f.risk.to_string()),
                flags: f.flags.into_iter().map(|l| leak(l.to_string())).collect(),
                check: f.check.map(|c| leak(c.to_string())),
            })
            .collect()
    });
    let spec = assemble(name, text, options, subs, facts)?;
    if let Some(facts) = &spec.sub_facts {
        facts.read_all()?;
    }
    Ok(spec)
}

/// Builds the spec `name` from its compiled form; its subcommands are built
/// when first judged.
fn build(name: &str, compiled: CompiledSpec<'static>) -> Result<Spec, String> {
    let mut subs = Vec::with_capacity(compiled.subs.len());
    for CompiledSub {
        key,
        names,
        from,
        to,
    } in compiled.subs
    {
        let bytes = SPEC_TABLES
            .get(from..to)
            .ok_or_else(|| format!("compiled subcommand `{key}` out of range"))?;
        subs.push((key, names, SubSource::Compiled(bytes)));
    }
    assemble(name, compiled.text, compiled.options, subs, compiled.facts)
}

/// A spec from its parts: the entry's settings, its options, its
/// subcommands as `(key, names, source)` and its subcommands' facts.
fn assemble(
    name: &str,
    text: SpecText,
    options: OptionTable<'static>,
    subs: Vec<(&'static str, Vec<&'static str>, SubSource)>,
    facts: Option<Vec<SubFactText<'static>>>,
) -> Result<Spec, String> {
    let operands = match text.operands.as_deref() {
        None | Some("read") => Operands::Read,
        Some("none") => Operands::None,
        Some("pattern") => Operands::PatternThenRead,
        Some("sub") => Operands::Sub,
        Some("format") => Operands::Format,
        Some("command") => Operands::Command,
        Some("write") => Operands::Write,
        Some(other) => return Err(format!("unknown operands kind `{other}`")),
    };
    let style = match text.style.as_deref() {
        None | Some("gnu") => Style::Gnu,
        Some("posix") => Style::Posix,
        Some("find") => Style::Find,
        Some("free") => Style::Free,
        Some(other) => return Err(format!("unknown style `{other}`")),
    };
    let program = match text.program.as_deref() {
        None => None,
        Some("sed") => Some(Program::Sed),
        Some("awk") => Some(Program::Awk),
        Some("jq") => Some(Program::Jq),
        Some(other) => return Err(format!("unknown program `{other}`")),
    };
    let content = match text.content.as_deref() {
        None => Content::Never,
        Some("always") => Content::Always,
        Some("default") => Content::Default,
        Some("option") => Content::Option,
        Some(other) => return Err(format!("unknown content kind `{other}`")),
    };
    let check = text.check.as_deref().map(check_named).transpose()?;
    let flags = text
        .flags
        .iter()
        .map(|line| SpecFlag::parse(line))
        .collect::<Result<Vec<_>, _>>()?;
    let sub_facts = SubFacts::build(facts, text.unknown_sub.as_deref(), &options, &flags)?;
    let mut sub_names = Vec::with_capacity(subs.len());
    let mut built_subs = Vec::with_capacity(subs.len());
    for (key, names, source) in subs {
        let at = u16::try_from(built_subs.len())
            .map_err(|_| format!("more than {} subcommands", u16::MAX))?;
        for n in names_of(key, &names) {
            sub_names.push((n, at));
        }
        built_subs.push(SubSpec {
            key,
            source: Mutex::new(Some(source)),
            built: OnceLock::new(),
        });
    }
    sub_names.sort_unstable();
    if let Some(w) = sub_names.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(format!("subcommand `{}` listed twice", w[0].0));
    }
    if text.facts_of.is_some() {
        let own = !flags.is_empty()
            || check.is_some()
            || sub_facts.is_some()
            || !options.opts.is_empty()
            || !built_subs.is_empty();
        if own {
            return Err("`facts_of` with options, subcommands or facts of its own".into());
        }
    } else if operands == Operands::Sub && built_subs.is_empty() {
        return Err("operands = \"sub\" without any [*.sub.NAME]".into());
    }
    Ok(Spec {
        name: name.to_string(),
        operands,
        style,
        numeric: text.numeric,
        max_operands: text.max_operands,
        bsd_letters: text.bsd_letters,
        at_files: text.at_files,
        walk: text.walk,
        needs_sub: text.needs_sub,
        bundled_first: text.bundled_first,
        content,
        blobs: text.blobs,
        paths: text
            .paths
            .unwrap_or(!matches!(operands, Operands::None | Operands::Format)),
        check,
        flags,
        sub_facts,
        facts_of: text.facts_of,
        base_risk: text.risk.as_deref().map_or(Ok(Risk::Read), risk_named)?,
        program,
        options,
        sub_names,
        subs: built_subs,
        read_examples: text.read,
        not_read_examples: text.not_read,
    })
}

impl Spec {
    /// The subcommand `name` of this spec.
    fn sub(&self, name: &str) -> Option<&SubSpec> {
        let at = self
            .sub_names
            .binary_search_by(|(n, _)| (*n).cmp(name))
            .ok()?;
        self.subs.get(usize::from(self.sub_names[at].1))
    }

    /// Whether the program's operands name paths: the caller checks them
    /// for secrets and for leaving the location when the spec does not
    /// prove the command.
    pub(crate) fn operands_are_paths(&self) -> bool {
        self.paths
    }

    /// Every subcommand, with one of its names (tests build them all).
    #[cfg(test)]
    fn all_subs(&self) -> impl Iterator<Item = (&'static str, &SubSpec)> {
        self.subs.iter().map(|s| (s.key, s))
    }
}

impl Raises {
    /// The risk this effect raises a command to, and why in words.
    fn risk(self) -> (Risk, &'static str) {
        match self {
            Raises::Execute => (Risk::Execute, "runs a program"),
            Raises::Network => (Risk::Network, "uses the network"),
            Raises::Credential => (Risk::Credential, "prints secrets"),
            Raises::Destructive => (Risk::Destructive, "destroys data"),
        }
    }
}

/// The spec for a command name, if there is one. A name with a version
/// number after it (`python3.12`, `pip3.11`: a dotted version, so `gpg2`
/// or `b2sum` are not taken for another program) is the unversioned
/// program's.
pub(crate) fn lookup(name: &str) -> Option<Arc<Spec>> {
    SPECS.get(name).or_else(|| {
        let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
        let version = &name[base.len()..];
        let dotted = version.contains('.') && !version.starts_with('.') && !version.ends_with('.');
        (dotted && !base.is_empty())
            .then(|| SPECS.get(base))
            .flatten()
    })
}

/// Whether a spec describes the command `name` given `rest`: the program
/// has one, and when the spec lists subcommands, the first word that is not
/// an option is one of them (`git log`, not `git push`). Such a command that
/// is not proven `read` was raised by what its words chose (a script that
/// runs or writes, an option the spec does not know), so an approval for it
/// saves the exact command ([`super::arity`]).
pub(crate) fn describes(name: &str, rest: &[&str]) -> bool {
    let Some(spec) = lookup(name).filter(|s| s.facts_of.is_none()) else {
        return false;
    };
    if spec.sub_names.is_empty() {
        return true;
    }
    rest.iter()
        .find(|a| !a.starts_with('-'))
        .is_some_and(|sub| spec.sub_names.iter().any(|(n, _)| n == sub))
}

/// Judges `args` (the words after the command name) against `spec`.
pub(crate) fn judge(spec: &Spec, args: &[&str]) -> Judged {
    let mut state = State::reading();
    match judge_into(spec, args, 0, &mut state) {
        Ok(()) => {
            let reason = if state.reason.is_empty() {
                format!("`{}` with these options only reads", spec.name)
            } else {
                state.reason
            };
            Judged::Proven {
                risk: state.risk,
                reason,
                files: state.files,
                walks: state.walks,
                chdir: state.chdir,
                sub_at: state.sub_at,
                tracked: state.tracked,
            }
        }
        Err(why) => Judged::Unproven(why),
    }
}

/// A wrapper's own options, parsed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct WrapperOptions {
    /// Index of the first word after its options (`args.len()` when none).
    pub(crate) command_at: usize,
    /// Files its options name.
    pub(crate) files: Vec<FileArg>,
    /// A directory it runs the command in.
    pub(crate) chdir: Option<FileArg>,
    /// What its options themselves do beyond reading (`time -o`, `env -S`).
    pub(crate) raise: Option<(Risk, String)>,
}

/// Parses a wrapper's options (the words after its name) by its spec.
pub(crate) fn judge_wrapper(spec: &Spec, args: &[&str]) -> Result<WrapperOptions, String> {
    let mut state = State::reading();
    judge_into(spec, args, 0, &mut state)?;
    Ok(WrapperOptions {
        command_at: state.command_at.unwrap_or(args.len()),
        files: state.files,
        chdir: state.chdir,
        raise: (state.risk > Risk::Read).then_some((state.risk, state.reason)),
    })
}

struct State {
    risk: Risk,
    reason: String,
    files: Vec<FileArg>,
    walks: super::Walk,
    chdir: Option<FileArg>,
    /// Where a wrapper's command starts.
    command_at: Option<usize>,
    /// Where the (first) subcommand's name is.
    sub_at: Option<usize>,
    /// It prints the content of tracked files.
    tracked: Option<TrackedRead>,
}

impl State {
    /// Nothing judged yet: a command that only reads.
    fn reading() -> State {
        State {
            risk: Risk::Read,
            reason: String::new(),
            files: Vec::new(),
            walks: super::Walk::None,
            chdir: None,
            command_at: None,
            sub_at: None,
            tracked: None,
        }
    }

    fn raise(&mut self, risk: Risk, reason: String) {
        if risk > self.risk {
            self.risk = risk;
            self.reason = reason;
        }
    }
}

/// Parses `args[start..]` by `spec`, adding to `state`.
fn judge_into(spec: &Spec, args: &[&str], start: usize, state: &mut State) -> Result<(), String> {
    let name = &spec.name;
    if spec.style == Style::Free {
        return Ok(());
    }
    if spec.walk {
        state.walks = super::Walk::Operands;
    }
    if spec.bundled_first {
        if let Some(first) = args.get(start).filter(|a| !a.starts_with('-')) {
            return Err(format!(
                "`{name} {first}`: options without a dash are not read by the analyser"
            ));
        }
    }
    let mut operands: Vec<usize> = Vec::new();
    let mut after_dashes = false;
    let mut pattern_given = false;
    let mut writes_operands = false;
    let mut files_end: Option<usize> = None;
    // The operands before `--`, and the option that prints content or
    // turns the default content off.
    let mut before_dashes: Option<usize> = None;
    let mut prints_content: Option<String> = None;
    let mut brief = false;
    let mut program_values: Vec<(usize, Option<usize>)> = Vec::new();
    let mut i = start;
    while i < args.len() {
        let a = args[i];
        let operand_now = after_dashes
            || a == "-"
            || !(a.starts_with('-')
                || (spec.style == Style::Find && matches!(a, "(" | ")" | "!" | ",")))
            || (spec.style == Style::Posix && !operands.is_empty());
        if operand_now {
            operands.push(i);
            if spec.operands == Operands::Command {
                state.command_at = Some(i);
                return Ok(());
            }
            if spec.operands == Operands::Sub {
                break;
            }
            i += 1;
            continue;
        }
        if a == "--" {
            after_dashes = true;
            before_dashes = Some(operands.len());
            i += 1;
            continue;
        }
        if spec.style == Style::Find && matches!(a, "(" | ")" | "!" | ",") {
            i += 1;
            continue;
        }
        if spec.numeric && a[1..].bytes().all(|b| b.is_ascii_digit()) {
            i += 1;
            continue;
        }
        let mut uses = |opt: &OptSpec,
                        value: Option<(usize, Option<usize>)>,
                        state: &mut State|
         -> Result<(), String> {
            if opt.walk {
                state.walks = state.walks.max(super::Walk::All);
            }
            if opt.follow {
                state.walks = state.walks.max(super::Walk::AllFollow);
            }
            writes_operands |= opt.writes_operands;
            pattern_given |= opt.gives_pattern;
            match opt.prints {
                Prints::Same => {}
                Prints::Content => {
                    prints_content.get_or_insert_with(|| opt.label.to_string());
                }
                Prints::Brief => brief = true,
            }
            if opt.ends_files && files_end.is_none() {
                files_end = Some(operands.len());
            }
            if let Some((risk, why)) = opt.raises.map(Raises::risk) {
                state.raise(risk, format!("`{name} {}` {why}", opt.label));
            }
            if opt.gives_pattern && spec.program.is_some() {
                if let Some(v) = value {
                    program_values.push(v);
                }
            }
            let Some((index, attached)) = value else {
                return Ok(());
            };
            match opt.value {
                ValueKind::Plain => {}
                ValueKind::Read => state.files.push(FileArg {
                    index,
                    writes: false,
                    attached,
                }),
                ValueKind::Write => {
                    state.files.push(FileArg {
                        index,
                        writes: true,
                        attached,
                    });
                    state.raise(Risk::Write, format!("`{name} {}` writes a file", opt.label));
                }
                ValueKind::Cd => {
                    state.chdir = Some(FileArg {
                        index,
                        writes: false,
                        attached,
                    });
                }
                ValueKind::Exec => {
                    state.raise(
                        Risk::Execute,
                        format!("`{name} {}` runs what it is given", opt.label),
                    );
                }
                ValueKind::Net => {
                    state.raise(
                        Risk::Network,
                        format!("`{name} {}` uses the network", opt.label),
                    );
                }
                ValueKind::Glob => {
                    if !args[index][attached.unwrap_or(0)..].starts_with('!') {
                        state.walks = state.walks.max(super::Walk::All);
                    }
                }
                ValueKind::GitFormat => {
                    let text = &args[index][attached.unwrap_or(0)..];
                    if text.contains("%G") || text.contains("%(signature") {
                        state.raise(
                            Risk::Execute,
                            format!(
                                "`{name} {}` asks for a signature check, which runs the signing program",
                                opt.label
                            ),
                        );
                    }
                }
                ValueKind::List => {
                    return Err(format!(
                        "`{name} {}` reads the names of more files from a file",
                        opt.label
                    ));
                }
                ValueKind::Archive => {
                    let text = &args[index][attached.unwrap_or(0)..];
                    let remote = text
                        .split('/')
                        .next()
                        .is_some_and(|head| head.contains(':'));
                    if remote {
                        state.raise(
                            Risk::Network,
                            format!("`{name} {}` names a remote archive (host:file), reached with rsh/ssh", opt.label),
                        );
                    } else {
                        state.files.push(FileArg {
                            index,
                            writes: false,
                            attached,
                        });
                    }
                }
            }
            Ok(())
        };
        if a.starts_with("--") || spec.style == Style::Find {
            let (key, value) = match a.find('=') {
                Some(at) if spec.style != Style::Find => (&a[..at], Some(at + 1)),
                _ => (a, None),
            };
            let Some(opt) = spec.options.long(key) else {
                return Err(format!(
                    "`{name} {key}` is not an option known to only read"
                ));
            };
            let value = match (opt.takes, value) {
                (Takes::Nothing, Some(_)) => {
                    return Err(format!("`{name} {key}` takes no value"));
                }
                (Takes::Nothing, None) | (Takes::Optional, None) => None,
                (Takes::Two, Some(_)) => {
                    return Err(format!("`{name} {key}` takes two separate values"));
                }
                (Takes::Two, None) => {
                    i += 2;
                    if i >= args.len() {
                        return Err(format!("`{name} {key}` lacks its values"));
                    }
                    Some((i, None))
                }
                (_, Some(at)) => Some((i, Some(at))),
                (Takes::Required, None) => {
                    i += 1;
                    if i >= args.len() {
                        return Err(format!("`{name} {key}` lacks its value"));
                    }
                    Some((i, None))
                }
            };
            uses(opt, value, state)?;
            i += 1;
            continue;
        }
        // A cluster of short options: `-la`, `-n5`, `-C DIR`.
        let chars = a.char_indices().skip(1);
        let mut consumed_next = false;
        for (at, c) in chars {
            let Some(opt) = spec.options.short(c) else {
                return Err(format!("`{name} -{c}` is not an option known to only read"));
            };
            let rest_at = at + c.len_utf8();
            match opt.takes {
                Takes::Nothing => uses(opt, None, state)?,
                Takes::Optional => {
                    let value = (rest_at < a.len()).then_some((i, Some(rest_at)));
                    uses(opt, value, state)?;
                    break;
                }
                Takes::Two => {
                    return Err(format!("`{name} -{c}` with two values is not read"));
                }
                Takes::Required => {
                    let value = if rest_at < a.len() {
                        (i, Some(rest_at))
                    } else {
                        if i + 1 >= args.len() {
                            return Err(format!("`{name} -{c}` lacks its value"));
                        }
                        consumed_next = true;
                        (i + 1, None)
                    };
                    uses(opt, Some(value), state)?;
                    break;
                }
            }
        }
        i += if consumed_next { 2 } else { 1 };
    }
    if spec.operands == Operands::Sub {
        let Some(&at) = operands.first() else {
            if spec.needs_sub {
                return Err(format!("`{name}` without a subcommand does more than read"));
            }
            return Ok(());
        };
        let sub_name = args[at];
        let Some(sub) = spec.sub(sub_name) else {
            return Err(format!(
                "`{name} {sub_name}` is not a subcommand known to only read"
            ));
        };
        let sub = sub
            .spec(name)
            .map_err(|e| format!("the spec of `{name} {sub_name}` does not load: {e}"))?;
        state.sub_at.get_or_insert(at);
        return judge_into(sub, args, at + 1, state);
    }
    for &at in &operands {
        let word = args[at];
        if spec.at_files && word.starts_with('@') {
            return Err(format!("`{name} {word}` reads more options from a file"));
        }
        if spec.operands == Operands::Format && !word.starts_with('+') {
            return Err(format!("`{name} {word}` is not an output format"));
        }
    }
    if let Some(letters) = &spec.bsd_letters {
        for &at in &operands {
            if let Some(bad) = args[at].chars().find(|c| !letters.contains(*c)) {
                return Err(format!(
                    "`{name} {}`: `{bad}` is not an option known to only read",
                    args[at]
                ));
            }
        }
    }
    if let Some(max) = spec.max_operands {
        if operands.len() > max {
            return Err(format!(
                "`{name}` is given more operands than it reads ({max} at most)"
            ));
        }
    }
    let mut file_operands: &[usize] = &operands;
    if spec.operands == Operands::PatternThenRead && !pattern_given {
        if let Some((&first, rest)) = operands.split_first() {
            if spec.program.is_some() {
                program_values.push((first, None));
            }
            file_operands = rest;
        }
    }
    if let Some(program) = spec.program {
        if program_values.is_empty() {
            return Err(format!(
                "`{name}` is given no program the analyser can read"
            ));
        }
        // Several `-e` scripts are one program, joined by newlines.
        let text: Vec<&str> = program_values
            .iter()
            .map(|(index, attached)| &args[*index][attached.unwrap_or(0)..])
            .collect();
        super::programs::judge(program, &text.join("\n"))
            .map_err(|why| format!("`{name}` program: {why}"))?
            .apply(|risk, why| state.raise(risk, format!("`{name}` program {why}")));
    }
    let end = files_end.map_or(file_operands.len(), |e| {
        e.saturating_sub(operands.len() - file_operands.len())
    });
    match spec.operands {
        Operands::Read | Operands::PatternThenRead => {
            for &index in file_operands.iter().take(end) {
                if spec.program == Some(Program::Awk) && is_awk_assignment(args[index]) {
                    continue;
                }
                state.files.push(FileArg {
                    index,
                    writes: writes_operands,
                    attached: None,
                });
            }
            if writes_operands && !file_operands.is_empty() {
                state.raise(
                    Risk::Write,
                    format!("`{name}` with these options writes its files"),
                );
            }
        }
        Operands::Write => {
            for &index in file_operands.iter().take(end) {
                state.files.push(FileArg {
                    index,
                    writes: true,
                    attached: None,
                });
            }
            state.raise(Risk::Write, format!("`{name}` writes the files it names"));
        }
        Operands::None | Operands::Sub | Operands::Format | Operands::Command => {}
    }
    let revisions = &operands[..before_dashes.unwrap_or(operands.len())];
    let why = match (spec.content, prints_content) {
        (Content::Never, _) => None,
        (Content::Always, _) => Some(format!("`{name}` prints the content of tracked files")),
        (Content::Default | Content::Option, Some(label)) => Some(format!(
            "`{name} {label}` prints the content of tracked files"
        )),
        (Content::Default, None) if !brief => {
            Some(format!("`{name}` prints the content of tracked files"))
        }
        (Content::Default | Content::Option, None) => None,
    };
    let blob = spec
        .blobs
        .then(|| {
            revisions
                .iter()
                .map(|&at| args[at])
                .find(|w| !is_head_revision(w))
        })
        .flatten();
    if let Some(blob) = blob {
        state.tracked = Some(TrackedRead {
            pathspecs: None,
            why: format!("`{name} {blob}` prints the object it names, which may be a tracked file"),
        });
    } else if let Some(why) = why {
        // The search pattern is no pathspec; one after `--` is not read
        // as git might, so nothing is narrowed then.
        let pattern_at = (spec.operands == Operands::PatternThenRead && !pattern_given)
            .then(|| operands.first().copied())
            .flatten();
        let pathspecs = before_dashes
            .filter(|at| pattern_at.is_none_or(|p| operands[..*at].contains(&p)))
            .map(|at| operands[at..].to_vec());
        state.tracked = Some(TrackedRead { pathspecs, why });
    }
    Ok(())
}

/// `HEAD`, `@` and the revisions reached from them by `~N`, `^N`, `^`:
/// always commits, never a blob.
fn is_head_revision(word: &str) -> bool {
    let rest = word
        .strip_prefix("HEAD")
        .or_else(|| word.strip_prefix('@'))
        .unwrap_or(word);
    if rest.len() == word.len() {
        return false;
    }
    let mut chars = rest.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '~' && c != '^' {
            return false;
        }
        while chars.peek().is_some_and(char::is_ascii_digit) {
            chars.next();
        }
    }
    true
}

/// `var=value` operands of awk are assignments, not files.
fn is_awk_assignment(word: &str) -> bool {
    let Some((var, _)) = word.split_once('=') else {
        return false;
    };
    let mut chars = var.chars();
    chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<&str> {
        s.split_whitespace().collect()
    }

    fn judged(cmd: &str) -> Judged {
        let w = words(cmd);
        let spec = lookup(w[0]).unwrap_or_else(|| panic!("no spec for {}", w[0]));
        judge(&spec, &w[1..])
    }

    #[test]
    fn every_subcommand_spec_builds() {
        // Subcommands are built when first judged: a broken one would only
        // show as an unproven command, so every one is built here, from the
        // TOML (the tests' full load) and from the compiled tables.
        let full = all();
        let built_from = |roots: Vec<Arc<Spec>>| {
            let mut names = std::collections::BTreeSet::new();
            let mut stack = roots;
            while let Some(spec) = stack.pop() {
                for (key, sub) in spec.all_subs() {
                    let sub = sub
                        .spec(&spec.name)
                        .unwrap_or_else(|e| panic!("`{} {key}`: {e}", spec.name));
                    names.insert(sub.name.clone());
                    stack.push(sub.clone());
                }
            }
            names
        };
        let from_text = built_from(full.values().cloned().collect());
        let compiled = built_from(full.keys().filter_map(|name| lookup(name)).collect());
        assert_eq!(
            from_text, compiled,
            "the same subcommands from both sources"
        );
        assert!(compiled.len() > 40, "only {} subcommands", compiled.len());
    }

    #[test]
    fn subcommand_facts_that_cannot_be_read_are_an_error() {
        for (entry, why) in [
            ("sub_risks = { fatal = [\"x\"] }", "no risk"),
            ("sub_risks = { read = [\"x\"], write = [\"x\"] }", "twice"),
            (
                "sub_risks = { read = [\"x\"] }\nsub_flags = { y = [] }",
                "does not name",
            ),
            ("sub_flags = { x = [] }", "without"),
            (
                "sub_risks = { read = [\"x\"] }\nunknown_sub = \"sometimes\"",
                "no risk",
            ),
            ("sub_checks = { x = \"git-stash\" }", "without"),
            ("facts_of = \"npm\"\noptions = [\"-x\"]", "of its own"),
            ("facts_of = \"npm\"\nflags = [\"-x read x\"]", "of its own"),
        ] {
            let table: BTreeMap<String, SpecText> =
                toml::from_str(&format!("[p]\noperands = \"none\"\n{entry}\n")).unwrap();
            let mut out = HashMap::new();
            let err = add_table(&mut out, "test.toml", table).unwrap_err();
            assert!(err.contains(why), "{entry}: {err}");
        }
    }

    #[test]
    fn every_compiled_subcommand_fact_reads_as_the_toml_says() {
        // Compiled facts are read when a command line names the subcommand:
        // a broken one would only show as a command asked, so every one is
        // read here and held to the TOML's.
        let mut facts = 0;
        for (name, spec) in all() {
            let compiled = lookup(&name).unwrap_or_else(|| panic!("`{name}` not compiled"));
            let (Some(text), Some(compiled)) = (&spec.sub_facts, &compiled.sub_facts) else {
                assert!(
                    spec.sub_facts.is_none() && compiled.sub_facts.is_none(),
                    "`{name}`: facts in one source only"
                );
                continue;
            };
            compiled
                .read_all()
                .unwrap_or_else(|e| panic!("`{name}`: {e}"));
            assert_eq!(text.unknown, compiled.unknown, "{name}");
            assert_eq!(text.value_options, compiled.value_options, "{name}");
            assert_eq!(text.subs.len(), compiled.subs.len(), "{name}");
            for (t, c) in text.subs.iter().zip(&compiled.subs) {
                let (t_risk, t_flags, t_check) = t.read().unwrap();
                let (c_risk, c_flags, c_check) = c.read().unwrap();
                assert_eq!(
                    (t.text.name, t_risk, t_flags.len(), t_check),
                    (c.text.name, c_risk, c_flags.len(), c_check),
                    "{name}"
                );
                facts += 1;
            }
        }
        assert!(facts > 100, "only {facts} subcommand facts");
    }

    #[test]
    fn a_program_s_facts_of_names_a_program_with_facts() {
        let specs = all();
        let mut named = 0;
        for (name, spec) in &specs {
            if let Some(other) = &spec.facts_of {
                named += 1;
                let other = specs.get(other).unwrap_or_else(|| {
                    panic!("`{name}` has the facts of `{other}`, which has no spec")
                });
                assert!(
                    other.facts_of.is_none()
                        && (other.sub_facts.is_some() || !other.flags.is_empty()),
                    "`{name}` has the facts of `{}`, which holds none of its own",
                    other.name
                );
            }
        }
        assert!(named >= 3, "only {named}");
    }

    #[test]
    fn a_subcommand_names_no_check_and_no_flags() {
        // Only a program's entry is read for them: on a subcommand they
        // would say nothing.
        let mut stack: Vec<Arc<Spec>> = all().into_values().collect();
        let mut subs = 0;
        while let Some(spec) = stack.pop() {
            for (key, sub) in spec.all_subs() {
                let sub = sub.spec(&spec.name).unwrap();
                assert!(
                    sub.check.is_none() && sub.flags.is_empty(),
                    "`{} {key}` names a check or flags",
                    spec.name
                );
                subs += 1;
                stack.push(sub.clone());
            }
        }
        assert!(subs > 40, "only {subs} subcommands");
    }

    #[test]
    fn the_lazy_index_finds_every_spec_as_the_full_load_does() {
        let full = load_all().unwrap_or_else(|e| panic!("{e}"));
        let indexed = GENERATED_NAMES
            .iter()
            .filter(|(_, g, _)| SPECS.place[*g].is_some())
            .count();
        assert_eq!(indexed, full.len());
        for (name, spec) in &full {
            let lazy = lookup(name).unwrap_or_else(|| panic!("`{name}` not in the index"));
            assert_eq!(lazy.name, spec.name, "{name}");
            assert_eq!(
                (
                    lazy.options.short.len(),
                    lazy.options.long.len(),
                    lazy.sub_names.len()
                ),
                (
                    spec.options.short.len(),
                    spec.options.long.len(),
                    spec.sub_names.len()
                ),
                "{name}"
            );
        }
        let wrappers = load_wrappers().unwrap_or_else(|e| panic!("{e}"));
        for name in wrappers.keys() {
            assert!(wrapper_spec(name).is_some(), "wrapper `{name}`");
        }
    }

    #[test]
    fn the_compiled_index_is_a_scan_of_every_spec_file_and_only_of_them() {
        let listed: Vec<(&str, &str)> = SPEC_FILES.iter().copied().chain([WRAPPER_FILE]).collect();
        let mut generated: Vec<&str> = GENERATED_INDEX.iter().map(|g| g.file).collect();
        let mut names: Vec<&str> = listed.iter().map(|(n, _)| *n).collect();
        generated.sort();
        names.sort();
        assert_eq!(
            generated, names,
            "every file of specs/ is listed, and only those"
        );
        for (file, text) in listed {
            let g = GENERATED_INDEX.iter().find(|g| g.file == file).unwrap();
            let scanned = super::super::spec_index::scan(text);
            // One compiled table per scanned entry, each decoding (what
            // it holds is compared with the whole file's parse below).
            assert_eq!(scanned.len(), g.tables.len(), "{file}");
            for &(from, to) in g.tables {
                postcard::from_bytes::<BTreeMap<String, CompiledSpec<'static>>>(
                    &SPEC_TABLES[from..to],
                )
                .unwrap_or_else(|e| panic!("{file}: {e}"));
            }
            for e in &scanned {
                for n in &e.names {
                    let g_at = GENERATED_INDEX
                        .iter()
                        .position(|x| std::ptr::eq(x, g))
                        .unwrap();
                    let compiled: Vec<usize> = GENERATED_NAMES
                        .iter()
                        .filter(|(x, f, _)| *x == n.as_str() && *f == g_at)
                        .map(|(_, _, at)| *at)
                        .collect();
                    // The last entry of a name wins: one compiled name per file.
                    let last = scanned.iter().rposition(|x| x.names.contains(n)).unwrap();
                    assert_eq!(compiled, vec![last], "{file}: `{n}`");
                }
            }
        }
    }

    #[test]
    fn a_flag_line_that_cannot_be_read_is_an_error() {
        for bad in [
            "-rf destructive rm -rf",
            "--force fatal rm --force",
            "-r destructive",
            "r destructive no dash",
        ] {
            assert!(SpecFlag::parse(bad).is_err(), "{bad}");
        }
        let ok = SpecFlag::parse("--to-command* execute tar runs a program").unwrap();
        assert_eq!(ok.risk, Risk::Execute);
        assert_eq!(ok.why, "tar runs a program");
        assert!(super::super::flag_matches(ok.at(), "--to-command=sh"));
    }

    #[test]
    fn every_spec_file_loads() {
        let specs = load_all().unwrap_or_else(|e| panic!("{e}"));
        assert!(specs.len() > 50, "only {} specs", specs.len());
    }

    #[test]
    fn wrapper_specs_load() {
        let w = load_wrappers().unwrap_or_else(|e| panic!("{e}"));
        for name in ["env", "timeout", "xargs", "time", "sudo", "nice", "command"] {
            assert!(w.contains_key(name), "{name}");
        }
    }

    #[test]
    fn wrapper_options() {
        let env = wrapper_spec("env").unwrap();
        let w = judge_wrapper(&env, &words("-i -u X A=1 ls")).unwrap();
        assert_eq!(w.command_at, 3);
        let w = judge_wrapper(&env, &words("-CDIR ls")).unwrap();
        assert_eq!(
            w.chdir,
            Some(FileArg {
                index: 0,
                writes: false,
                attached: Some(2)
            })
        );
        assert_eq!(w.command_at, 1);
        assert!(
            judge_wrapper(&env, &words("-vS'id' ls"))
                .unwrap()
                .raise
                .is_some()
        );
        assert!(judge_wrapper(&env, &words("--sp=id ls")).is_err());
        let time = wrapper_spec("time").unwrap();
        let w = judge_wrapper(&time, &words("-oout ls")).unwrap();
        assert_eq!(
            w.files,
            vec![FileArg {
                index: 0,
                writes: true,
                attached: Some(2)
            }]
        );
    }

    fn proven_read(cmd: &str) -> bool {
        matches!(
            judged(cmd),
            Judged::Proven {
                risk: Risk::Read,
                ..
            }
        )
    }

    #[test]
    fn clusters_values_and_dashes() {
        for cmd in [
            "ls -la src",
            "head -n5 x",
            "head -n 5 x",
            "head --lines=5 x",
        ] {
            assert!(proven_read(cmd), "{cmd}");
        }
        assert!(matches!(judged("ls --frobnicate"), Judged::Unproven(_)));
        assert!(matches!(judged("head -n"), Judged::Unproven(_)));
        let Judged::Proven { files, .. } = judged("cat -- -x") else {
            panic!("cat -- -x")
        };
        assert_eq!(
            files,
            vec![FileArg {
                index: 1,
                writes: false,
                attached: None
            }]
        );
    }

    #[test]
    fn option_values_that_name_files() {
        let Judged::Proven { risk, files, .. } = judged("sort -o out.txt in.txt") else {
            panic!("sort -o")
        };
        assert_eq!(risk, Risk::Write);
        assert!(files.contains(&FileArg {
            index: 1,
            writes: true,
            attached: None
        }));
        assert!(files.contains(&FileArg {
            index: 2,
            writes: false,
            attached: None
        }));
        let Judged::Proven { files, .. } = judged("sort --random-source=list") else {
            panic!("sort --random-source")
        };
        assert_eq!(
            files,
            vec![FileArg {
                index: 0,
                writes: false,
                attached: Some(16)
            }]
        );
    }

    /// Splits an example as the shell would (quotes and backslashes), enough
    /// for the examples' words.
    fn shell_words(s: &str) -> Vec<String> {
        let mut out = Vec::new();
        let mut cur = String::new();
        let mut any = false;
        let mut chars = s.chars();
        while let Some(c) = chars.next() {
            match c {
                '\'' => {
                    any = true;
                    for c in chars.by_ref() {
                        if c == '\'' {
                            break;
                        }
                        cur.push(c);
                    }
                }
                '"' => {
                    any = true;
                    while let Some(c) = chars.next() {
                        match c {
                            '"' => break,
                            '\\' => cur.extend(chars.next()),
                            c => cur.push(c),
                        }
                    }
                }
                '\\' => cur.extend(chars.next()),
                ' ' => {
                    if any || !cur.is_empty() {
                        out.push(std::mem::take(&mut cur));
                    }
                    any = false;
                }
                c => cur.push(c),
            }
        }
        if any || !cur.is_empty() {
            out.push(cur);
        }
        out
    }

    #[test]
    fn every_example_holds() {
        let mut wrong = Vec::new();
        let mut count = 0;
        let mut seen = std::collections::HashSet::new();
        for spec in all().values() {
            if !seen.insert(Arc::as_ptr(spec)) {
                continue;
            }
            let mut stack = vec![spec.clone()];
            while let Some(s) = stack.pop() {
                stack.extend(s.subs.iter().map(|sub| sub.spec(&s.name).unwrap().clone()));
                for ex in &s.read_examples {
                    count += 1;
                    let v = super::super::classify(&shell_words(ex));
                    if v.risk != Risk::Read {
                        wrong.push(format!("{ex:?} should be read: {} ({})", v.risk, v.reason));
                    }
                }
                for ex in &s.not_read_examples {
                    count += 1;
                    let v = super::super::classify(&shell_words(ex));
                    if v.risk == Risk::Read {
                        wrong.push(format!("{ex:?} should not be read ({})", v.reason));
                    }
                }
            }
        }
        for (name, spec) in all() {
            if spec.read_examples.is_empty() && spec.not_read_examples.is_empty() {
                wrong.push(format!("`{name}` has no examples"));
            }
        }
        assert!(count > 100, "only {count} examples");
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
