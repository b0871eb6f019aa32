//! Where each command's entry is in a spec file, found from its table headers
//! alone (no TOML parsing). The build script runs this on every spec file,
//! parses each entry's text, and compiles the entries and their index into
//! the crate, so a `check` process starts with the index ready and decodes
//! (`read_spec.rs`) only the entries of the commands it judges.
//!
//! std only: the build script includes this file by path.

/// One command's entry in a spec file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScannedEntry {
    /// The names it answers to: its `names = [...]` line, else its table name.
    pub names: Vec<String>,
    /// Byte ranges of its text: its own tables (`[git]`, `[git.sub.status]`…)
    /// in file order, then the file's option groups (`group = true`), so the
    /// concatenation is a TOML document that parses on its own.
    pub ranges: Vec<(usize, usize)>,
}

/// The entries of one spec file, in the order their top table first appears.
pub fn scan(text: &str) -> Vec<ScannedEntry> {
    // Blocks: each starts at a `[header]` line at the start of a line.
    let mut blocks: Vec<(&str, usize, usize)> = Vec::new();
    let mut start: Option<(usize, &str)> = None;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        if line.starts_with('[') {
            if let Some((at, header)) = start {
                blocks.push((header, at, offset));
            }
            let header = line.trim_start_matches('[').split(']').next().unwrap_or("");
            start = Some((offset, header));
        }
        offset += line.len();
    }
    if let Some((at, header)) = start {
        blocks.push((header, at, text.len()));
    }
    let is_group =
        |at: usize, end: usize| text[at..end].lines().any(|l| l.trim() == "group = true");
    let groups: Vec<(usize, usize)> = blocks
        .iter()
        .filter(|(_, at, end)| is_group(*at, *end))
        .map(|(_, at, end)| (*at, *end))
        .collect();
    let mut by_top: Vec<(&str, ScannedEntry)> = Vec::new();
    for (header, at, end) in &blocks {
        if is_group(*at, *end) {
            continue;
        }
        let top = header.split('.').next().unwrap_or(header);
        let i = match by_top.iter().position(|(t, _)| *t == top) {
            Some(i) => i,
            None => {
                by_top.push((
                    top,
                    ScannedEntry {
                        names: Vec::new(),
                        ranges: Vec::new(),
                    },
                ));
                by_top.len() - 1
            }
        };
        by_top[i].1.ranges.push((*at, *end));
        if *header == top {
            by_top[i].1.names = names_of(&text[*at..*end]).unwrap_or_else(|| vec![top.to_string()]);
        }
    }
    by_top
        .into_iter()
        .map(|(_, mut entry)| {
            entry.ranges.extend(groups.iter().copied());
            entry
        })
        .collect()
}

/// The names a top-level table gives in its `names = ["…", …]` line.
fn names_of(block: &str) -> Option<Vec<String>> {
    let line = block.lines().find(|l| l.starts_with("names = ["))?;
    let inner = line.strip_prefix("names = [")?.split(']').next()?;
    Some(
        inner
            .split(',')
            .map(|n| n.trim().trim_matches('"').to_string())
            .filter(|n| !n.is_empty())
            .collect(),
    )
}
