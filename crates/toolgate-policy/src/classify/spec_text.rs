//! One entry of a read-spec file as written, and the step that resolves its
//! option groups: shared by the build script, which turns each entry's TOML
//! into compact bytes once, and by the crate, which decodes those bytes when
//! the command is first looked up (and parses the TOML itself in tests).
//!
//! std and serde only: the build script includes this file by path.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An entry as the build script compiles it: its own text with the
/// subcommands and option lines taken out, its options parsed into a sorted
/// table, each subcommand compiled the same way into its own byte range, so
/// that judging `git log` decodes `git` and `git log` only. The strings are
/// borrowed from the bytes: decoding allocates a few vectors, not a string
/// per option.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompiledSpec<'a> {
    /// The entry without its `sub` table, its option lines and its examples.
    pub text: SpecText,
    /// Its options, parsed.
    #[serde(borrow)]
    pub options: OptionTable<'a>,
    /// Its subcommands, by the byte ranges of their own [`CompiledSpec`]s.
    #[serde(borrow)]
    pub subs: Vec<CompiledSub<'a>>,
    /// Its `sub_risks`, `sub_flags` and `sub_checks`, per subcommand (see
    /// [`sub_facts`]); taken out of `text`.
    #[serde(borrow)]
    pub facts: Option<Vec<SubFactText<'a>>>,
}

/// What one subcommand is when the spec does not prove it, gathered from its
/// program's `sub_risks`, `sub_flags` and `sub_checks`: borrowed, so that
/// judging `git log` decodes every subcommand's name but reads only `log`'s
/// risk, flag lines and check.
#[derive(Debug, Serialize, Deserialize)]
pub struct SubFactText<'a> {
    /// The subcommand's name.
    pub name: &'a str,
    /// The risk `sub_risks` gives it.
    pub risk: &'a str,
    /// Its `sub_flags` lines.
    #[serde(borrow)]
    pub flags: Vec<&'a str>,
    /// Its `sub_checks` check.
    pub check: Option<&'a str>,
}

/// An entry's `sub_risks`, `sub_flags` and `sub_checks` per subcommand,
/// sorted by name (`None`: it names no subcommand's risk). An error when a
/// subcommand is named twice, when flags or a check are given for one
/// `sub_risks` does not name, or when `sub_flags`, `sub_checks` or
/// `unknown_sub` come without `sub_risks`. The names of risks, checks and
/// flag lines are read by the crate.
// The crate gathers them only when its tests parse the TOML; the build
// script does it for every process.
#[cfg_attr(not(test), allow(dead_code))]
pub fn sub_facts(text: &SpecText) -> Result<Option<Vec<SubFactText<'_>>>, String> {
    if text.sub_risks.is_empty() {
        if !text.sub_flags.is_empty() || !text.sub_checks.is_empty() || text.unknown_sub.is_some() {
            return Err("`sub_flags`, `sub_checks` or `unknown_sub` without `sub_risks`".into());
        }
        return Ok(None);
    }
    let mut facts: Vec<SubFactText<'_>> = text
        .sub_risks
        .iter()
        .flat_map(|(risk, names)| {
            names.iter().map(move |name| SubFactText {
                name,
                risk,
                flags: Vec::new(),
                check: None,
            })
        })
        .collect();
    facts.sort_by(|a, b| a.name.cmp(b.name));
    if let Some(w) = facts.windows(2).find(|w| w[0].name == w[1].name) {
        return Err(format!("`sub_risks` names `{}` twice", w[0].name));
    }
    let place = |facts: &[SubFactText<'_>], name: &str, what: &str| {
        facts
            .binary_search_by(|f| f.name.cmp(name))
            .map_err(|_| format!("`{what}` for `{name}`, which `sub_risks` does not name"))
    };
    for (names, lines) in &text.sub_flags {
        for name in names.split_whitespace() {
            let at = place(&facts, name, "sub_flags")?;
            facts[at].flags.extend(lines.iter().map(String::as_str));
        }
    }
    for (names, check) in &text.sub_checks {
        for name in names.split_whitespace() {
            let at = place(&facts, name, "sub_checks")?;
            facts[at].check = Some(check);
        }
    }
    Ok(Some(facts))
}

/// Where one compiled subcommand is, and the names it answers to.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompiledSub<'a> {
    /// The key of its `[NAME.sub.KEY]` table.
    pub key: &'a str,
    /// Its `names` (empty: the key).
    #[serde(borrow)]
    pub names: Vec<&'a str>,
    /// Its bytes in the blob: `from..to`.
    pub from: usize,
    /// See `from`.
    pub to: usize,
}

/// Whether and how an option takes a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Takes {
    Nothing,
    Required,
    /// Only attached (`--color=auto`, `-i.bak`).
    Optional,
    /// Two separate values (`jq --arg NAME VALUE`); the value kind is the
    /// second's.
    Two,
}

/// What an option's value is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum ValueKind {
    Plain,
    Read,
    Write,
    Cd,
    Exec,
    Net,
    /// An archive name: `host:file` is reached over the network (rsh/ssh).
    Archive,
    /// A file holding the names of more files to read: those are not known.
    List,
    /// A glob that whitelists files (ripgrep's `-g`): unless it is a
    /// negation (`!GLOB`), the search reads hidden files it matches too.
    Glob,
    /// A git format (`--format=`, `--pretty=`): a signature placeholder
    /// (`%G?`, `%GS`…, `%(signature)`) makes git verify signatures, which
    /// runs the signing program (gpg, gpgsm, ssh-keygen).
    GitFormat,
}

/// What an option does beyond reading, whatever its value (`!exec`…).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Raises {
    Execute,
    Network,
    Credential,
    Destructive,
}

/// What an option says of printing the content of tracked files (git's
/// patch, grep and object output).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Prints {
    /// Nothing.
    Same,
    /// `!content`: it prints file content (`git log -p`).
    Content,
    /// `!brief`: it replaces the default content output by one without
    /// (`git show --stat`, `git cat-file -t`).
    Brief,
}

/// One option of a spec, parsed from its line.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct OptSpec<'a> {
    pub takes: Takes,
    pub value: ValueKind,
    /// `!walk`: it reads every file below its operands.
    pub walk: bool,
    /// `!follow`: its walk reads through the links it meets (`grep -R`).
    pub follow: bool,
    /// `!write`: its operands are written.
    pub writes_operands: bool,
    /// `!pattern`: the search pattern was given by this option.
    pub gives_pattern: bool,
    /// `!args`: the operands after it are not files.
    pub ends_files: bool,
    pub raises: Option<Raises>,
    /// `!content` / `!brief`.
    pub prints: Prints,
    /// How it was written (its first alias), for reasons.
    pub label: &'a str,
}

/// The options of one spec: each option once, and its aliases sorted for a
/// binary search.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct OptionTable<'a> {
    /// Long aliases (and, for `style = "find"`, every alias), sorted.
    #[serde(borrow)]
    pub long: Vec<(&'a str, u16)>,
    /// Short option letters, sorted.
    pub short: Vec<(char, u16)>,
    /// The options, indexed by the aliases.
    #[serde(borrow)]
    pub opts: Vec<OptSpec<'a>>,
}

impl<'a> OptionTable<'a> {
    /// Parses option lines (`"-n --lines= :count"`, see the read-spec docs);
    /// `all_long` for `find`-style entries, whose single-dash primaries are
    /// long names. An error names the line. (The build script parses every
    /// spec; the crate only when its tests read the TOML.)
    #[cfg_attr(not(test), allow(dead_code))]
    pub fn parse<I>(lines: I, all_long: bool) -> Result<OptionTable<'a>, String>
    where
        I: IntoIterator<Item = &'a str>,
    {
        let mut table = OptionTable::default();
        for line in lines {
            let (aliases, opt) = parse_option(line)?;
            let at = u16::try_from(table.opts.len())
                .map_err(|_| format!("`{line}`: more than {} options", u16::MAX))?;
            table.opts.push(opt);
            for alias in aliases {
                if all_long || alias.starts_with("--") {
                    table.long.push((alias, at));
                } else {
                    let mut chars = alias.chars().skip(1);
                    let (Some(c), None) = (chars.next(), chars.next()) else {
                        return Err(format!("`{alias}` is not a short option"));
                    };
                    table.short.push((c, at));
                }
            }
        }
        table.long.sort_unstable();
        table.short.sort_unstable();
        if let Some(w) = table.long.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!("option `{}` listed twice", w[0].0));
        }
        if let Some(w) = table.short.windows(2).find(|w| w[0].0 == w[1].0) {
            return Err(format!("option `-{}` listed twice", w[0].0));
        }
        Ok(table)
    }

    /// The option a long alias names.
    pub fn long(&self, alias: &str) -> Option<&OptSpec<'a>> {
        let at = self.long.binary_search_by(|(a, _)| (*a).cmp(alias)).ok()?;
        self.opts.get(usize::from(self.long[at].1))
    }

    /// The option a short letter names.
    pub fn short(&self, letter: char) -> Option<&OptSpec<'a>> {
        let at = self.short.binary_search_by(|(c, _)| c.cmp(&letter)).ok()?;
        self.opts.get(usize::from(self.short[at].1))
    }
}

/// Parses one option string into its aliases and what it does.
#[cfg_attr(not(test), allow(dead_code))]
fn parse_option(line: &str) -> Result<(Vec<&str>, OptSpec<'_>), String> {
    let mut aliases = Vec::new();
    let mut opt = OptSpec {
        takes: Takes::Nothing,
        value: ValueKind::Plain,
        walk: false,
        follow: false,
        writes_operands: false,
        gives_pattern: false,
        ends_files: false,
        raises: None,
        prints: Prints::Same,
        label: line.split_whitespace().next().unwrap_or(""),
    };
    for token in line.split_whitespace() {
        if let Some(kind) = token.strip_prefix(':') {
            opt.value = match kind {
                "read" => ValueKind::Read,
                "write" => ValueKind::Write,
                "cd" => ValueKind::Cd,
                "exec" => ValueKind::Exec,
                "net" => ValueKind::Net,
                "archive" => ValueKind::Archive,
                "list" => ValueKind::List,
                "glob" => ValueKind::Glob,
                "gitformat" => ValueKind::GitFormat,
                "plain" => ValueKind::Plain,
                other => return Err(format!("`{line}`: unknown value kind `:{other}`")),
            };
        } else if let Some(effect) = token.strip_prefix('!') {
            match effect {
                "walk" => opt.walk = true,
                "follow" => opt.follow = true,
                "write" => opt.writes_operands = true,
                "pattern" => opt.gives_pattern = true,
                "args" => opt.ends_files = true,
                "exec" => opt.raises = Some(Raises::Execute),
                "net" => opt.raises = Some(Raises::Network),
                "cred" => opt.raises = Some(Raises::Credential),
                "destructive" => opt.raises = Some(Raises::Destructive),
                "content" => opt.prints = Prints::Content,
                "brief" => opt.prints = Prints::Brief,
                other => return Err(format!("`{line}`: unknown effect `!{other}`")),
            }
        } else if token.starts_with('-') || token.starts_with('+') {
            let (alias, takes) = if let Some(a) = token.strip_suffix("=?") {
                (a, Takes::Optional)
            } else if let Some(a) = token.strip_suffix("=2") {
                (a, Takes::Two)
            } else if let Some(a) = token.strip_suffix('=') {
                (a, Takes::Required)
            } else {
                (token, Takes::Nothing)
            };
            if takes != Takes::Nothing {
                if opt.takes != Takes::Nothing && opt.takes != takes {
                    return Err(format!("`{line}`: aliases disagree on taking a value"));
                }
                opt.takes = takes;
            }
            if alias.len() < 2 {
                return Err(format!("`{line}`: `{token}` is not an option"));
            }
            aliases.push(alias);
        } else {
            return Err(format!("`{line}`: cannot read `{token}`"));
        }
    }
    if aliases.is_empty() {
        return Err(format!("`{line}`: no option name"));
    }
    if opt.value != ValueKind::Plain && opt.takes == Takes::Nothing {
        return Err(format!(
            "`{line}`: a value kind on an option without a value"
        ));
    }
    Ok((aliases, opt))
}

/// One entry of a spec file, as written.
#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpecText {
    #[serde(default)]
    pub names: Vec<String>,
    #[serde(default)]
    pub operands: Option<String>,
    #[serde(default)]
    pub options: Vec<String>,
    #[serde(default)]
    pub style: Option<String>,
    #[serde(default)]
    pub numeric: bool,
    #[serde(default)]
    pub max_operands: Option<usize>,
    #[serde(default)]
    pub program: Option<String>,
    #[serde(default)]
    pub sub: BTreeMap<String, SpecText>,
    /// Shared option lists (`[git-diff-options]` with `group = true`).
    #[serde(default)]
    pub options_from: Vec<String>,
    /// An entry that only holds options for others.
    #[serde(default)]
    pub group: bool,
    /// BSD-style option words without a dash (`ps aux`): the letters allowed.
    #[serde(default)]
    pub bsd_letters: Option<String>,
    /// `@FILE` operands read more options from FILE (binutils): never proven.
    #[serde(default)]
    pub at_files: bool,
    /// A directory operand is read below whatever the options: `diff DIR1
    /// DIR2` compares the files both hold, `diff FILE DIR` reads DIR/FILE.
    #[serde(default)]
    pub walk: bool,
    /// The command alone (no subcommand) does something else than read
    /// (`git stash` stashes).
    #[serde(default)]
    pub needs_sub: bool,
    /// A first word without a dash is a bundle of options (`tar xf`, `ar t`).
    #[serde(default)]
    pub bundled_first: bool,
    /// When it prints the content of the repository's tracked files:
    /// `"always"`, `"default"` (unless a `!brief` option and no `!content`
    /// one is given), `"option"` (only with a `!content` option).
    #[serde(default)]
    pub content: Option<String>,
    /// An operand may name a blob, printed whole whatever the options
    /// (`git show OBJECT`), unless it is `HEAD` or a revision of it.
    #[serde(default)]
    pub blobs: bool,
    /// Whether its operands name paths (checked for secrets and for leaving
    /// the location when the spec does not prove the command, and made
    /// unknown by a directory only known at run time). By default, unless
    /// `operands` is `"none"` or `"format"`.
    #[serde(default)]
    pub paths: Option<bool>,
    /// A named check of what a list of options cannot say (`find`'s
    /// actions, a `sed` script's commands…), run over every command line of
    /// the program, proven or not (`special.rs` holds each). A program's
    /// entry only, like `flags` and `paths`: a subcommand has none.
    #[serde(default)]
    pub check: Option<String>,
    /// Options that raise the command whether or not the spec proves it:
    /// `"MATCH RISK WHY"`, MATCH being `-x` (a short option, alone or in a
    /// cluster), `--long` (the option, `--long=V`, or an abbreviation) or
    /// `PREFIX*` (any option word starting so); `-x=` or `--long=` when it
    /// takes a separate value, which is then never taken for a subcommand.
    #[serde(default)]
    pub flags: Vec<String>,
    /// What each subcommand is when its spec does not prove it (or it has
    /// none): a risk (`"network"`) → the subcommands it is the risk of. A
    /// program's entry only.
    #[serde(default)]
    pub sub_risks: BTreeMap<String, Vec<String>>,
    /// The risk of a subcommand `sub_risks` does not name (an alias or a
    /// plugin may run anything); `"execute"` by default.
    #[serde(default)]
    pub unknown_sub: Option<String>,
    /// The options that raise a subcommand, as `flags` lines, by subcommand
    /// (a key may name several, separated by spaces): matched in the words
    /// after it.
    #[serde(default)]
    pub sub_flags: BTreeMap<String, Vec<String>>,
    /// What the program is when its spec does not prove it and nothing
    /// raises it (`"execute"` for an interpreter: it runs what it is
    /// given); `"read"` by default. A program's entry only.
    #[serde(default)]
    pub risk: Option<String>,
    /// Another program whose `flags`, `check` and subcommands' facts this
    /// one has (`pnpm` has `npm`'s), while its spec proves nothing of its
    /// own: it names no option and no subcommand. A program's entry only.
    #[serde(default)]
    pub facts_of: Option<String>,
    /// A subcommand's named check (see `check`), by subcommand (a key may
    /// name several, separated by spaces), run over the words after it.
    #[serde(default)]
    pub sub_checks: BTreeMap<String, String>,
    #[serde(default)]
    pub read: Vec<String>,
    #[serde(default)]
    pub not_read: Vec<String>,
}

/// The entries of one spec table (a file, or one entry's text with the file's
/// option groups): groups dropped, each entry's `options_from` replaced by the
/// groups' options. Keys in order, so the compiled bytes are the same on
/// every build.
// The crate resolves groups only when its tests parse the TOML; the build
// script does it for every process.
#[cfg_attr(not(test), allow(dead_code))]
pub fn resolve_groups(
    mut table: BTreeMap<String, SpecText>,
) -> Result<BTreeMap<String, SpecText>, String> {
    let groups: BTreeMap<String, Vec<String>> = table
        .iter()
        .filter(|(_, e)| e.group)
        .map(|(k, e)| (k.clone(), e.options.clone()))
        .collect();
    table.retain(|_, e| !e.group);
    for entry in table.values_mut() {
        merge_groups(entry, &groups)?;
    }
    Ok(table)
}

/// Appends the options of the groups an entry (and its subcommands) names.
#[cfg_attr(not(test), allow(dead_code))]
fn merge_groups(
    entry: &mut SpecText,
    groups: &BTreeMap<String, Vec<String>>,
) -> Result<(), String> {
    for g in std::mem::take(&mut entry.options_from) {
        let options = groups
            .get(&g)
            .ok_or_else(|| format!("no option group `{g}`"))?;
        entry.options.extend(options.iter().cloned());
    }
    for sub in entry.sub.values_mut() {
        merge_groups(sub, groups)?;
    }
    Ok(())
}
