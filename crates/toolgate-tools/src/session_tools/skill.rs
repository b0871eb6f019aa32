//! `skill`: loads a skill, a directory holding a `SKILL.md` with YAML-style
//! frontmatter (`name`, `description`) and any supporting files.
//!
//! Skills are discovered in `<root>/.toolgate/skills/*/SKILL.md` (project) and
//! in the user's skills directory (`~/.config/toolgate/skills/*/SKILL.md`); a
//! project skill wins over a user skill of the same name. The frontmatter
//! reader understands `key: value` lines, quoted values and `>`/`|` block
//! values, which is what skill files use; it is not a full YAML parser.

use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use toolgate_core::{
    Content, Location, PermissionRequest, Risk, Tool, ToolContext, ToolError, ToolTraits,
};

use super::SessionToolsConfig;

/// How many supporting files are listed.
const MAX_FILES: usize = 10;
/// How deep supporting files are looked for.
const MAX_DEPTH: usize = 4;
/// The largest `SKILL.md` read.
const MAX_SKILL_BYTES: u64 = 1024 * 1024;
const SKILL_FILE: &str = "SKILL.md";

/// Input of `skill`.
#[derive(Debug, Clone, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SkillInput {
    /// The skill's name (from its frontmatter, else its directory name).
    pub name: String,
}

/// Output of `skill`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SkillOutput {
    /// The skill's name.
    pub name: String,
    /// Its description.
    pub description: String,
    /// `project` or `user`.
    pub scope: String,
    /// The skill's directory.
    pub dir: String,
    /// The `SKILL.md` text after the frontmatter.
    pub content: String,
    /// Up to 10 other files in the skill's directory, sorted.
    pub files: Vec<String>,
    /// More files exist than are listed.
    pub more_files: bool,
}

/// A discovered skill.
#[derive(Debug, Clone, PartialEq, Eq)]
struct SkillEntry {
    name: String,
    description: String,
    scope: &'static str,
    dir: PathBuf,
    body: String,
}

/// The `skill` tool.
#[derive(Debug, Clone)]
pub struct SkillTool {
    user_dir: Option<PathBuf>,
}

impl SkillTool {
    /// A skill tool searching the project and `config.user_skills_dir`.
    pub fn new(config: &SessionToolsConfig) -> Self {
        SkillTool {
            user_dir: config.user_skills_dir.clone(),
        }
    }

    fn search_dirs(&self, root: &Path) -> Vec<(&'static str, PathBuf)> {
        let mut dirs = vec![("project", root.join(".toolgate").join("skills"))];
        if let Some(user) = &self.user_dir {
            dirs.push(("user", user.clone()));
        }
        dirs
    }
}

/// Frontmatter fields and the body after it.
#[derive(Debug, Default, PartialEq, Eq)]
struct Parsed {
    name: Option<String>,
    description: Option<String>,
    body: String,
}

fn unquote(value: &str) -> String {
    let v = value.trim();
    for q in ['"', '\''] {
        if v.len() >= 2 && v.starts_with(q) && v.ends_with(q) {
            return v[1..v.len() - 1].to_string();
        }
    }
    v.to_string()
}

fn parse_skill(text: &str) -> Parsed {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.lines();
    if lines.next().map(str::trim_end) != Some("---") {
        return Parsed {
            body: text.to_string(),
            ..Parsed::default()
        };
    }
    let all: Vec<&str> = text.lines().collect();
    let Some(end) = all.iter().skip(1).position(|l| l.trim_end() == "---") else {
        return Parsed {
            body: text.to_string(),
            ..Parsed::default()
        };
    };
    let front = &all[1..=end];
    let body = all[end + 2..]
        .join("\n")
        .trim_start_matches('\n')
        .to_string();
    let mut parsed = Parsed {
        body,
        ..Parsed::default()
    };
    let mut i = 0;
    while i < front.len() {
        let line = front[i];
        i += 1;
        if line.starts_with([' ', '\t', '#']) {
            continue;
        }
        let Some((key, value)) = line.split_once(':') else {
            continue;
        };
        let value = value.trim();
        let value = if matches!(value, ">" | "|" | ">-" | "|-" | ">+" | "|+") {
            // A block value: the following indented lines.
            let mut block = Vec::new();
            while i < front.len()
                && (front[i].starts_with([' ', '\t']) || front[i].trim().is_empty())
            {
                block.push(front[i].trim());
                i += 1;
            }
            let sep = if value.starts_with('>') { " " } else { "\n" };
            block.join(sep).trim().to_string()
        } else {
            unquote(value)
        };
        match key.trim() {
            "name" => parsed.name = Some(value),
            "description" => parsed.description = Some(value),
            _ => {}
        }
    }
    parsed
}

/// Every skill visible from `root`, project skills first; later duplicates of
/// a name are ignored.
fn discover(dirs: &[(&'static str, PathBuf)]) -> Vec<SkillEntry> {
    let mut skills: Vec<SkillEntry> = Vec::new();
    for (scope, base) in dirs {
        let Ok(entries) = std::fs::read_dir(base) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        // A project's skills come with the repository: a `SKILL.md` (or a
        // skill directory) must not lead out of its skills directory, where
        // a symbolic link could reach any file of the machine.
        let inside = if *scope == "project" {
            match std::fs::canonicalize(base) {
                Ok(b) => Some(b),
                Err(_) => continue,
            }
        } else {
            None
        };
        let home = toolgate_core::credential::home_dir();
        for dir in dirs {
            let file = dir.join(SKILL_FILE);
            let Ok(real) = std::fs::canonicalize(&file) else {
                continue;
            };
            if inside.as_ref().is_some_and(|b| !real.starts_with(b)) {
                tracing::warn!(path = %file.display(), "skill file leads out of the project's skills directory; skipped");
                continue;
            }
            // Never a credential file, by name or as a hard link to one.
            if toolgate_core::credential::is_credential(&real, &home).is_some()
                || toolgate_core::credential::hard_link_of(&real, &home, &[]).is_some()
            {
                tracing::warn!(path = %file.display(), "skill file is a credential file; skipped");
                continue;
            }
            let text = match read_skill_file(&real) {
                Ok(Some(text)) => text,
                Ok(None) => continue,
                Err(e) => {
                    tracing::warn!(path = %file.display(), error = %e, "unreadable skill file");
                    continue;
                }
            };
            let parsed = parse_skill(&text);
            let name = parsed
                .name
                .filter(|n| !n.trim().is_empty())
                .unwrap_or_else(|| {
                    dir.file_name()
                        .map(|n| n.to_string_lossy().into_owned())
                        .unwrap_or_default()
                });
            if skills.iter().any(|s| s.name == name) {
                continue;
            }
            skills.push(SkillEntry {
                name,
                description: parsed.description.unwrap_or_default(),
                scope,
                dir,
                body: parsed.body,
            });
        }
    }
    skills
}

/// Up to `limit` files under `dir` (except its `SKILL.md`), sorted, hidden
/// entries skipped; and whether there were more.
fn sibling_files(dir: &Path, limit: usize) -> (Vec<String>, bool) {
    let mut found = Vec::new();
    let mut stack = vec![(dir.to_path_buf(), 0usize)];
    let mut all = Vec::new();
    while let Some((d, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
            .map(|e| e.path())
            .collect();
        paths.sort();
        for p in paths.into_iter().rev() {
            // symlink_metadata: do not follow links out of the skill.
            let Ok(meta) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            if meta.is_dir() {
                if depth + 1 < MAX_DEPTH {
                    stack.push((p, depth + 1));
                }
            } else if !(depth == 0 && p.file_name().is_some_and(|n| n == SKILL_FILE)) {
                all.push(p);
            }
        }
        if all.len() > limit * 4 {
            break;
        }
    }
    all.sort();
    let more = all.len() > limit;
    found.extend(all.into_iter().take(limit).map(|p| p.display().to_string()));
    (found, more)
}

fn unknown_skill(name: &str, skills: &[SkillEntry], dirs: &[(&'static str, PathBuf)]) -> ToolError {
    if skills.is_empty() {
        let places = dirs
            .iter()
            .map(|(_, d)| format!("{}/*/{SKILL_FILE}", d.display()))
            .collect::<Vec<_>>()
            .join(" and ");
        return ToolError::InvalidInput(format!(
            "unknown skill {name:?}: no skills are installed (looked for {places})"
        ));
    }
    let list = skills
        .iter()
        .map(|s| {
            if s.description.is_empty() {
                format!("- {}", s.name)
            } else {
                format!("- {}: {}", s.name, s.description)
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    ToolError::InvalidInput(format!("unknown skill {name:?}; available skills:\n{list}"))
}

impl Tool for SkillTool {
    type Input = SkillInput;
    type Output = SkillOutput;

    fn traits(&self) -> ToolTraits {
        // Reads skill files only.
        ToolTraits::read_only()
    }

    fn description(&self) -> String {
        "Loads a skill by name: the instructions in its SKILL.md and the paths of up to 10 \
         supporting files. Skills live in .toolgate/skills/<name>/ and ~/.config/toolgate/skills/. \
         An unknown name returns the list of available skills."
            .into()
    }

    fn intent(
        &self,
        input: &SkillInput,
        _location: &Location,
    ) -> Result<Vec<PermissionRequest>, ToolError> {
        if input.name.trim().is_empty() {
            return Err(ToolError::InvalidInput("name is empty".into()));
        }
        Ok(vec![PermissionRequest::new(
            "skill",
            input.name.trim(),
            Risk::Read,
        )])
    }

    async fn execute(&self, input: SkillInput, ctx: ToolContext) -> Result<SkillOutput, ToolError> {
        let name = input.name.trim().to_string();
        if name.is_empty() {
            return Err(ToolError::InvalidInput("name is empty".into()));
        }
        let dirs = self.search_dirs(ctx.location.root());
        let found = tokio::task::spawn_blocking(move || {
            let skills = discover(&dirs);
            match skills.iter().find(|s| s.name == name) {
                Some(skill) => {
                    let (files, more) = sibling_files(&skill.dir, MAX_FILES);
                    Ok((skill.clone(), files, more))
                }
                None => Err(unknown_skill(&name, &skills, &dirs)),
            }
        })
        .await
        .map_err(|e| ToolError::caused("skill discovery failed", e))?;
        let (skill, files, more_files) = found?;
        Ok(SkillOutput {
            name: skill.name,
            description: skill.description,
            scope: skill.scope.to_string(),
            dir: skill.dir.display().to_string(),
            content: skill.body,
            files,
            more_files,
        })
    }

    fn project(&self, output: &SkillOutput) -> Vec<Content> {
        let mut text = format!(
            "# Skill: {}\n(base directory: {})\n\n{}",
            output.name, output.dir, output.content
        );
        if !output.files.is_empty() {
            text.push_str("\n\nSupporting files:\n");
            for f in &output.files {
                text.push_str(&format!("- {f}\n"));
            }
            if output.more_files {
                text.push_str("- … (more files not listed)\n");
            }
        }
        vec![Content::text(text)]
    }
}

/// A skill file's text: opened once, not through a link and without
/// waiting on a FIFO, and read from that handle only when it is a regular
/// file of at most [`MAX_SKILL_BYTES`] (`None` otherwise, with a warning
/// for one too large). A file swapped for a FIFO after it was found is
/// passed over instead of stalling the catalogue.
fn read_skill_file(real: &Path) -> std::io::Result<Option<String>> {
    use std::io::Read;
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NONBLOCK | nix::libc::O_NOFOLLOW)
        .open(real)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Ok(None);
    }
    if meta.len() > MAX_SKILL_BYTES {
        tracing::warn!(path = %real.display(), "skill file too large; skipped");
        return Ok(None);
    }
    let mut bytes = Vec::new();
    file.take(MAX_SKILL_BYTES).read_to_end(&mut bytes)?;
    Ok(Some(String::from_utf8_lossy(&bytes).into_owned()))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A skill file that is a FIFO (swapped in after it was found, or there
    /// from the start) is passed over at once; a link is not followed; a
    /// file past the limit is skipped; a plain one is read.
    #[test]
    fn a_skill_file_is_read_only_when_it_is_a_plain_file_of_bounded_size() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo.md");
        let c = std::ffi::CString::new(fifo.as_os_str().as_encoded_bytes()).unwrap();
        assert_eq!(unsafe { nix::libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        let (done, finished) = std::sync::mpsc::channel();
        std::thread::spawn(move || drop(done.send(read_skill_file(&fifo).map_err(|e| e.kind()))));
        let got = finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading a FIFO skill file stalled");
        assert_eq!(got, Ok(None));
        let plain = dir.path().join("SKILL.md");
        std::fs::write(&plain, "---\nname: x\n---\nbody").unwrap();
        assert_eq!(
            read_skill_file(&plain).unwrap().as_deref(),
            Some("---\nname: x\n---\nbody")
        );
        let link = dir.path().join("link.md");
        std::os::unix::fs::symlink(&plain, &link).unwrap();
        assert!(read_skill_file(&link).is_err(), "a link is not followed");
        let big = dir.path().join("big.md");
        std::fs::write(&big, vec![b'x'; MAX_SKILL_BYTES as usize + 1]).unwrap();
        assert_eq!(read_skill_file(&big).unwrap(), None);
    }

    #[test]
    fn parses_frontmatter_forms() {
        let p =
            parse_skill("---\nname: pdf\ndescription: \"Work with: PDFs\"\n---\n# Body\ntext\n");
        assert_eq!(p.name.as_deref(), Some("pdf"));
        assert_eq!(p.description.as_deref(), Some("Work with: PDFs"));
        assert_eq!(p.body, "# Body\ntext");

        let p =
            parse_skill("---\nname: 'x'\ndescription: >\n  folded\n  text\nother: 1\n---\nbody");
        assert_eq!(p.name.as_deref(), Some("x"));
        assert_eq!(p.description.as_deref(), Some("folded text"));
        assert_eq!(p.body, "body");

        let p = parse_skill("no frontmatter");
        assert_eq!(p.name, None);
        assert_eq!(p.body, "no frontmatter");

        let p = parse_skill("---\nname: unterminated\n");
        assert_eq!(p.name, None);
    }
}
