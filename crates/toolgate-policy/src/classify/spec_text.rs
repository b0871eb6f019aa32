//! One entry of a read-spec file as written, and the step that resolves its
//! option groups: shared by the build script, which turns each entry's TOML
//! into compact bytes once, and by the crate, which decodes those bytes when
//! the command is first looked up (and parses the TOML itself in tests).
//!
//! std and serde only: the build script includes this file by path.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// An entry as the build script compiles it: its own text with the
/// subcommands taken out, each subcommand compiled the same way into its own
/// byte range, so that judging `git log` decodes `git` and `git log` only.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompiledSpec {
    /// The entry without its `sub` table (and without its examples).
    pub text: SpecText,
    /// Its subcommands, by the byte ranges of their own [`CompiledSpec`]s.
    pub subs: Vec<CompiledSub>,
}

/// Where one compiled subcommand is, and the names it answers to.
#[derive(Debug, Serialize, Deserialize)]
pub struct CompiledSub {
    /// The key of its `[NAME.sub.KEY]` table.
    pub key: String,
    /// Its `names` (empty: the key).
    pub names: Vec<String>,
    /// Its bytes in the blob: `from..to`.
    pub from: usize,
    /// See `from`.
    pub to: usize,
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
    /// The command alone (no subcommand) does something else than read
    /// (`git stash` stashes).
    #[serde(default)]
    pub needs_sub: bool,
    /// A first word without a dash is a bundle of options (`tar xf`, `ar t`).
    #[serde(default)]
    pub bundled_first: bool,
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
