//! git commands that print the content of tracked files (`git grep`,
//! `git show`, `git log -p`, `git diff`…; the read specs say which, see
//! [`crate::classify::TrackedRead`]): judged as reads of the credentials the
//! repository tracks ([`crate::git_tracked`]), or not proven when what it
//! tracks cannot be checked.

use std::path::{Component, Path};

use toolgate_core::{PermissionRequest, Risk};

use super::analyzer::{Analyzer, Scope};
use super::argv::Part;
use super::words::Word;
use crate::git_tracked::{Survey, Tracked, survey};
use crate::repo_config::RepoConfig;

impl Analyzer<'_, '_> {
    /// A git command that prints tracked content, with the pathspecs that
    /// select what it reads (`None`: anything) and why it prints content.
    pub(crate) fn tracked_content(
        &mut self,
        part: &mut Part,
        report: Option<&RepoConfig>,
        pathspecs: Option<Vec<Word>>,
        why: &str,
        scope: &Scope,
    ) {
        let unproven = |part: &mut Part, cause: &str| {
            part.raise(
                Risk::Execute,
                format!("{why}, and what the repository tracks cannot be checked: {cause}"),
            );
            part.unknown_args = true;
        };
        let Some(report) = report else {
            return unproven(part, "the directory it runs in is only known at run time");
        };
        let Some(git_dir) = report.git_dir.as_deref() else {
            // Not in a repository: git refuses, and prints nothing.
            return;
        };
        if report.index_file_set {
            return unproven(part, "GIT_INDEX_FILE names another index");
        }
        let work_tree = report.work_tree.as_deref();
        // No pathspec after `--` selects every file.
        let specs = pathspecs.filter(|w| !w.is_empty()).and_then(|words| {
            let base = report.start_dir.as_deref()?;
            words
                .iter()
                .map(|w| pathspec(w, base, work_tree?))
                .collect::<Option<Vec<Vec<u8>>>>()
        });
        let roots: Vec<&Path> = self.ctx.location.roots().collect();
        let found = survey(&Survey {
            git_dir,
            work_tree,
            home: &self.ctx.home,
            roots: &roots,
            pathspecs: specs.as_deref(),
        });
        match found {
            Tracked::Clean => {}
            Tracked::Unknown(cause) => unproven(part, &cause),
            Tracked::Credentials(found) => {
                for f in found {
                    let shown = f.path.to_string_lossy().into_owned();
                    self.push(
                        PermissionRequest::path("read", shown.clone(), Risk::Credential),
                        false,
                        format!("{why}: {shown} is {}", f.why),
                        scope,
                    );
                }
            }
        }
    }
}

/// A pathspec as a path below the top of `work_tree`, when it is a plain one
/// (no glob, no `:(magic)`, not the whole tree) that stays inside: `None`
/// means it may select any tracked file.
fn pathspec(word: &Word, base: &Path, work_tree: &Path) -> Option<Vec<u8>> {
    use std::os::unix::ffi::OsStrExt;
    let text = word.text.as_str();
    if !word.known
        || text.is_empty()
        || text.starts_with(':')
        || text.contains(['*', '?', '[', '\\'])
    {
        return None;
    }
    let joined = base.join(text);
    let rel = joined.strip_prefix(work_tree).ok()?;
    let mut parts: Vec<&std::ffi::OsStr> = Vec::new();
    for c in rel.components() {
        match c {
            Component::Normal(s) => parts.push(s),
            Component::CurDir => {}
            Component::ParentDir => {
                parts.pop()?;
            }
            Component::RootDir | Component::Prefix(_) => return None,
        }
    }
    if parts.is_empty() {
        return None;
    }
    let mut out = Vec::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(p.as_bytes());
    }
    Some(out)
}
