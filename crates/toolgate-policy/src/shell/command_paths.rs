//! Paths named by a command: arguments and redirect targets, resolved like tool
//! paths, turned into `read`/`edit`/`external_directory` requests.

use std::borrow::Cow;
use std::path::{Path, PathBuf};

use toolgate_core::path_text;
use toolgate_core::{PermissionRequest, ResolvedPath, Risk};

use super::analyzer::{Analyzer, Scope};
use super::words::Word;
use crate::classify::{Walk, credential_of_with, glob_match, is_assignment};

/// Most directory entries looked at for the recursive reads of one analysis
/// (each directory is walked once and its answer shared).
pub(crate) const WALK_BUDGET: usize = 4096;

/// How many directory levels a recursive read is followed for secrets.
const WALK_DEPTH: usize = 4;

/// Most entries a glob in an argument is expanded to.
const MAX_GLOB_MATCHES: usize = 512;

/// Device files that are neither secrets nor places outside the workspace.
fn is_neutral_device(path: &str) -> bool {
    matches!(
        path,
        "/dev/null"
            | "/dev/zero"
            | "/dev/random"
            | "/dev/urandom"
            | "/dev/stdin"
            | "/dev/stdout"
            | "/dev/stderr"
            | "/dev/tty"
    ) || path
        .strip_prefix("/dev/fd/")
        .is_some_and(|fd| !fd.is_empty() && fd.bytes().all(|b| b.is_ascii_digit()))
}

fn looks_like_path(s: &str) -> bool {
    s.starts_with('/')
        || s.starts_with('~')
        || s.starts_with("./")
        || s.starts_with("../")
        || s.contains('/')
        || s.starts_with(".env")
}

fn has_glob(s: &str) -> bool {
    s.contains(['*', '?', '['])
}

/// Folds `.` and `..` without looking at the filesystem.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    toolgate_core::path_text::lexical(path)
}

/// `/proc/PID/environ`, `/proc/self/environ`, `/proc/PID/task/TID/environ`
/// (any pid, `self`, `thread-self`, or a glob): another process's environment,
/// secrets included.
pub(crate) fn is_proc_environ(path: &Path) -> bool {
    // Folding only drops components: a path without `proc` cannot become one.
    if !path_text::has_name(path, b"proc") {
        return false;
    }
    let parts: Vec<String> = lexical(path)
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let parts: Vec<&str> = parts.iter().map(String::as_str).collect();
    match parts.as_slice() {
        ["/", "proc", _, last] => environ_like(last),
        ["/", "proc", _, "task", _, last] => environ_like(last),
        _ => false,
    }
}

/// `environ`, or a glob that could match it.
fn environ_like(name: &str) -> bool {
    name == "environ" || (has_glob(name) && glob_match(name, "environ"))
}

/// Whether grep's `--include` or rg's `-g` glob `pattern` selects the file
/// `name`. Neither applies the shell's leading-dot rule: `*.local` selects
/// `.env.local`. A leading wildcard may match the dot; a leading bracket is
/// taken to (the stricter answer: the file is read).
fn include_matches(pattern: &str, name: &str) -> bool {
    if glob_match(pattern, name) {
        return true;
    }
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    if pattern.starts_with('*') {
        glob_match(&format!(".{pattern}"), name)
    } else if let Some(tail) = pattern.strip_prefix('?') {
        glob_match(tail, rest) || rest.is_empty() && tail.is_empty()
    } else {
        pattern.starts_with('[')
    }
}

impl Analyzer<'_, '_> {
    /// `~` and `~/…` (a quoted `~` too: judged as the home, the stricter
    /// reading); `~+`, `~-` and `~user` were expanded, or found unknown, when
    /// the word was evaluated.
    fn expand_tilde<'p>(&self, path: &'p str) -> Cow<'p, str> {
        if path == "~" {
            return Cow::Owned(self.ctx.home.to_string_lossy().into_owned());
        }
        if let Some(rest) = path.strip_prefix("~/") {
            return Cow::Owned(self.ctx.home.join(rest).to_string_lossy().into_owned());
        }
        Cow::Borrowed(path)
    }

    /// A path only known at run time (`$F`, `~user/x`, relative to a directory
    /// only known at run time): never inside the location, never read.
    pub(crate) fn unknown_path(&mut self, raw: &str, risk: Risk, writes: bool, scope: &Scope) {
        if let Some(cred) = self.secret_risk(Path::new(&*self.expand_tilde(raw))) {
            self.secret_request(raw, cred, writes, scope);
        }
        let what = if writes { "writes" } else { "reads" };
        self.push(
            PermissionRequest::command("bash", raw, risk.max(Risk::Write)).with_save_pattern(None),
            true,
            format!("opaque: it {what} `{raw}`, a path only known at run time"),
            scope,
        );
    }

    /// Resolves a directory operand (`cd DIR`, `env -C DIR`); `None` when it is
    /// only known at run time or cannot be resolved.
    pub(crate) fn resolve_dir(&self, word: &Word, scope: &Scope) -> Option<PathBuf> {
        if !word.known {
            return None;
        }
        let text = self.expand_tilde(&word.text);
        let base = scope.cwd.as_ref()?;
        self.paths
            .resolve_from(self.ctx.location, &text, base)
            .ok()
            .map(|r| r.path)
    }

    /// Whether `path` names a secret ([`crate::classify::path_risk`]), with
    /// hard links judged from this analysis' `lstat` answers.
    fn secret_risk(&self, path: &Path) -> Option<Risk> {
        credential_of_with(path, &self.ctx.home, &[], &self.paths).map(|_| Risk::Credential)
    }

    /// [`Self::secret_risk`], also counting hard links to the location's own
    /// credential files ([`crate::classify::path_risk_in`]).
    fn secret_risk_in(&self, path: &Path) -> Option<Risk> {
        let roots: Vec<&Path> = self.ctx.location.roots().collect();
        credential_of_with(path, &self.ctx.home, &roots, &self.paths).map(|_| Risk::Credential)
    }

    /// Whether `arg` names, by a plain path (no `..`, no glob, no `~`), an
    /// existing regular file (not a link) in a directory that really is
    /// inside the location, or nothing at all below such a directory: what a
    /// command that only looks at entries prints of it is its metadata, or
    /// that there is no such file — never its content. (A directory or a
    /// link is judged as a read: `ls` lists a directory's names.)
    pub(crate) fn names_plain_file_here(&self, arg: &Word, scope: &Scope) -> bool {
        let text = arg.text.as_str();
        if !arg.known || text.is_empty() || text.starts_with(['-', '~']) || has_glob(text) {
            return false;
        }
        let path = Path::new(text);
        if path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
        {
            return false;
        }
        let Some(cwd) = scope.cwd.as_deref() else {
            return false;
        };
        let joined = cwd.join(path);
        match std::fs::symlink_metadata(&joined) {
            Ok(m) if m.is_file() => {}
            // Nothing there: `ls` says so, and shows nothing of a file.
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            _ => return false,
        }
        // The nearest directory that exists, resolved, must be inside (a
        // link among the parents could lead anywhere).
        joined
            .ancestors()
            .skip(1)
            .find(|dir| std::fs::symlink_metadata(dir).is_ok())
            .and_then(|dir| std::fs::canonicalize(dir).ok())
            .is_some_and(|real| self.ctx.location.contains(&real.join("x")))
    }

    /// One argument of a command whose operands are paths.
    pub(crate) fn path_argument(
        &mut self,
        arg: &Word,
        positional: bool,
        risk: Risk,
        writes: bool,
        scope: &Scope,
    ) {
        if !arg.known {
            // An option with a run-time value (`--file=$F`) or an operand:
            // the path it names is unknown.
            let value = match arg.text.split_once('=') {
                Some((opt, v)) if !positional && opt.starts_with('-') => v,
                _ => arg.text.as_str(),
            };
            if positional || !arg.text.starts_with('-') || value != arg.text {
                self.unknown_path(value, risk, writes, scope);
            }
            return;
        }
        let text = arg.text.as_str();
        // The path the word names, and whether it is an operand (taken for a
        // path whatever it looks like).
        let candidate: Option<(&str, bool)> =
            if !positional && text.starts_with('-') && text.len() > 1 {
                // `--output=FILE`, `-o=FILE`.
                text.split_once('=')
                    .map(|(_, value)| (value.trim_start_matches('@'), false))
            } else if let Some(rest) = text.strip_prefix("file://") {
                Some((rest, true))
            } else if text.contains("://") {
                return;
            } else if let Some(rest) = text.strip_prefix('@') {
                Some((rest, false))
            } else if let Some((_, rest)) = text.split_once("=@") {
                Some((rest, false))
            } else if is_assignment(text) {
                // `dd if=FILE of=FILE`.
                text.split_once('=').map(|(_, value)| (value, false))
            } else {
                Some((text, true))
            };
        self.colon_secret(text, writes, scope);
        if let Some((candidate, operand)) = candidate {
            if !candidate.is_empty() && (operand || looks_like_path(candidate)) {
                self.path_requests(candidate, risk, writes, scope);
            }
        }
    }

    /// One word of a line that could not be read: judged as a read of the
    /// path it names when it looks like one or names a credential.
    pub(crate) fn opaque_token(&mut self, token: &str, scope: &Scope) {
        let named_secret = self
            .secret_risk(Path::new(&*self.expand_tilde(token)))
            .is_some();
        if named_secret || looks_like_path(token) {
            self.path_requests(token, Risk::Read, false, scope);
        }
    }

    /// Requests for one path a command touches: a secret, a place outside the
    /// location, a symlink leading out.
    fn path_requests(&mut self, raw: &str, risk: Risk, writes: bool, scope: &Scope) {
        if is_neutral_device(raw) {
            return;
        }
        let path = self.expand_tilde(raw);
        if is_proc_environ(Path::new(&*path)) {
            self.push(
                PermissionRequest::path(
                    if writes { "edit" } else { "read" },
                    path.clone(),
                    Risk::Credential,
                ),
                false,
                format!("{path} is a process's environment, secrets included"),
                scope,
            );
        }
        let Some(cwd) = scope.cwd.as_deref() else {
            if path.starts_with('/') {
                return self.path_requests_from(&path, Path::new("/"), risk, writes, scope);
            }
            // Relative to a directory only known at run time.
            return self.unknown_path(&path, risk, writes, scope);
        };
        self.path_requests_from(&path, cwd, risk, writes, scope)
    }

    fn path_requests_from(
        &mut self,
        path: &str,
        cwd: &Path,
        risk: Risk,
        writes: bool,
        scope: &Scope,
    ) {
        let raw = path;
        let joined = cwd.join(path);
        if has_glob(path) {
            self.glob_requests(&joined, risk, writes, scope);
            return;
        }
        let strong = looks_like_path(path);
        if !strong && !self.paths.exists_no_follow(&joined) {
            // A plain word naming nothing here: a pattern, a message, a branch.
            if let Some(cred) = self.secret_risk(&joined) {
                self.secret_request(&joined.to_string_lossy(), cred, writes, scope);
            }
            return;
        }
        match self.paths.resolve_from(self.ctx.location, path, cwd) {
            Ok(resolved) => {
                if is_proc_environ(&resolved.path) && !is_proc_environ(Path::new(&path)) {
                    self.secret_request(
                        &resolved.path.to_string_lossy(),
                        Risk::Credential,
                        writes,
                        scope,
                    );
                }
                self.resolved_requests(&joined, &resolved, risk, writes, scope)
            }
            Err(e) => self.unresolvable(raw, &e.to_string(), scope),
        }
    }

    fn unresolvable(&mut self, raw: &str, error: &str, scope: &Scope) {
        self.push(
            PermissionRequest::command("bash", raw, Risk::Execute),
            true,
            format!("opaque: cannot resolve path `{raw}`: {error}"),
            scope,
        );
    }

    /// `git show HEAD:.env`, `scp host:~/.ssh/id_rsa .`: a credential path
    /// after a colon. Whether it was found.
    fn colon_secret(&mut self, text: &str, writes: bool, scope: &Scope) -> bool {
        let Some((_, after)) = text.split_once(':') else {
            return false;
        };
        if after.is_empty() || text.contains("://") {
            return false;
        }
        match self.secret_risk(Path::new(after)) {
            Some(cred) => {
                self.secret_request(text, cred, writes, scope);
                true
            }
            None => false,
        }
    }

    /// The words of a command that its spec does not take for files, checked
    /// for `REV:PATH` and `HOST:PATH` forms that name a credential: a command
    /// that prints an object by name (`git cat-file -p HEAD:.env`) reads it
    /// whatever its spec says of its operands. `judged` are the words already
    /// judged as paths.
    pub(crate) fn colon_secrets(&mut self, args: &[Word], judged: &[String], scope: &Scope) {
        for arg in args {
            if !arg.known || judged.contains(&arg.text) {
                continue;
            }
            // `--option=REV:PATH` too.
            let text = match arg.text.split_once('=') {
                Some((opt, v)) if opt.starts_with('-') => v,
                _ => arg.text.as_str(),
            };
            self.colon_secret(text, false, scope);
        }
    }

    fn secret_request(&mut self, path: &str, risk: Risk, writes: bool, scope: &Scope) {
        let action = if writes { "edit" } else { "read" };
        self.push(
            PermissionRequest::path(action, path, risk),
            false,
            if self.sending {
                format!("reads {path}, which holds secrets, and sends it over the network")
            } else {
                format!("{path} holds secrets")
            },
            scope,
        );
    }

    fn resolved_requests(
        &mut self,
        lexical_path: &Path,
        resolved: &ResolvedPath,
        risk: Risk,
        writes: bool,
        scope: &Scope,
    ) {
        let lexical_path = lexical(lexical_path);
        let resolved_text = resolved.path.to_string_lossy().into_owned();
        // The resolved file is also checked for being a hard link to a
        // credential of the home or of the location.
        if self.secret_risk(&lexical_path).is_some()
            || self.secret_risk_in(&resolved.path).is_some()
        {
            self.secret_request(&resolved_text, Risk::Credential, writes, scope);
        }
        if writes {
            // A file the command writes is judged like a redirect target,
            // inside the location or not: protected paths (`.git/hooks/…`,
            // `.envrc`, `~/.bashrc`, toolgate's own files) are seen.
            self.push(
                PermissionRequest::path("edit", resolved_text.clone(), Risk::Write),
                false,
                format!("writes {resolved_text}"),
                scope,
            );
        }
        if resolved.inside {
            return;
        }
        let dir = resolved
            .external_dir
            .clone()
            .unwrap_or_else(|| resolved.path.clone());
        let dir_text = dir.to_string_lossy().into_owned();
        self.push(
            PermissionRequest::path("external_directory", dir_text.clone(), risk.raised()),
            false,
            format!("{resolved_text} is outside the location"),
            scope,
        );
        if self.ctx.location.contains(&lexical_path) {
            // Named inside, lands outside: asked every time, on top of the above.
            self.push(
                PermissionRequest::path("external_directory", dir_text, Risk::Destructive),
                false,
                format!(
                    "{} is a symlink that leads outside the location, to {resolved_text}",
                    lexical_path.display()
                ),
                scope,
            );
        }
    }

    /// A glob argument: judged by every entry it matches now when its
    /// directory can be listed in full; else by the names it could match.
    fn glob_requests(&mut self, joined: &Path, risk: Risk, writes: bool, scope: &Scope) {
        let could_match_a_secret = self.secret_risk(joined).is_some();
        // Judged by the names it could match: a write through the pattern
        // lands where only the run knows (`sed -i … .g?t/config` edits
        // `.git/config`), so it is an edit of an unknown target, which no
        // mode and no rule that does not name it allows.
        let by_pattern = |walker: &mut Self| {
            if could_match_a_secret {
                walker.secret_request(&joined.to_string_lossy(), Risk::Credential, writes, scope);
            }
            if writes {
                let text = joined.to_string_lossy().into_owned();
                walker.push(
                    PermissionRequest::path("edit", text.clone(), Risk::Write)
                        .with_save_pattern(None),
                    true,
                    format!("opaque: the pattern `{text}` writes files only known at run time"),
                    scope,
                );
            }
        };
        let (Some(parent), Some(pattern)) = (joined.parent(), joined.file_name()) else {
            by_pattern(self);
            return;
        };
        let pattern = pattern.to_string_lossy().into_owned();
        let parent_text = parent.to_string_lossy().into_owned();
        if has_glob(&parent_text) {
            by_pattern(self);
            // Only the glob-free front can be judged for leaving the location.
            let front: PathBuf = parent
                .components()
                .take_while(|c| !has_glob(&c.as_os_str().to_string_lossy()))
                .collect();
            if let Ok(resolved) =
                self.paths
                    .resolve_from(self.ctx.location, &front.to_string_lossy(), Path::new("/"))
            {
                self.resolved_requests(&front, &resolved, risk, writes, scope);
            }
            return;
        }
        let Ok(parent_resolved) =
            self.paths
                .resolve_from(self.ctx.location, &parent_text, Path::new("/"))
        else {
            by_pattern(self);
            return;
        };
        self.resolved_requests(parent, &parent_resolved, risk, writes, scope);
        let Ok(entries) = std::fs::read_dir(&parent_resolved.path) else {
            by_pattern(self);
            return;
        };
        let mut matched = 0;
        for entry in entries {
            let Ok(entry) = entry else {
                // Part of the listing is unknown.
                by_pattern(self);
                return;
            };
            let name = entry.file_name().to_string_lossy().into_owned();
            if !glob_match(&pattern, &name) {
                continue;
            }
            matched += 1;
            if matched > MAX_GLOB_MATCHES {
                by_pattern(self);
                break;
            }
            let lexical_entry = parent.join(&name);
            if let Ok(resolved) = self.paths.resolve_from(
                self.ctx.location,
                &lexical_entry.to_string_lossy(),
                Path::new("/"),
            ) {
                self.resolved_requests(&lexical_entry, &resolved, risk, writes, scope);
            }
        }
    }

    /// A redirect: `>`/`>>`/`&>`/`>|` targets are edits, `<` sources are reads.
    pub(crate) fn redirect_target(&mut self, op: &str, target: &Word, scope: &Scope) {
        let op = op.trim_start_matches(|c: char| c.is_ascii_digit());
        let dup = matches!(op, ">&" | "<&" | ">&-" | "<&-");
        if dup && (target.text == "-" || target.text.chars().all(|c| c.is_ascii_digit())) {
            return;
        }
        let writes = op.contains('>');
        let truncates = matches!(op, ">" | ">|" | "&>" | ">&");
        // bash expands an unquoted glob in a redirect target (`>> .g?t/config`
        // writes `.git/config` when that is its one match): where a write
        // lands is then only known when the command runs.
        let globbed = writes && target.unquoted && has_glob(&target.text);
        if !target.known || globbed {
            let action = if writes { "edit" } else { "read" };
            let risk = if writes {
                Risk::Write
            } else {
                Risk::Read.raised()
            };
            // Never an edit inside the location: nobody knows where it lands.
            if let Some(cred) = self.secret_risk(Path::new(&*self.expand_tilde(&target.text))) {
                self.secret_request(&target.text, cred, writes, scope);
            }
            self.push(
                PermissionRequest::path(action, target.text.clone(), risk).with_save_pattern(None),
                true,
                format!(
                    "opaque: redirect target `{}` is only known at run time",
                    target.text
                ),
                scope,
            );
            return;
        }
        if is_neutral_device(&target.text) {
            return;
        }
        if let Some(endpoint) = target
            .text
            .strip_prefix("/dev/tcp/")
            .or_else(|| target.text.strip_prefix("/dev/udp/"))
        {
            self.push(
                PermissionRequest::command("bash", target.text.clone(), Risk::Network)
                    .with_save_pattern(None),
                false,
                format!("the redirect opens a network connection to {endpoint}"),
                scope,
            );
            return;
        }
        if !writes {
            self.path_requests(&target.text, Risk::Read, false, scope);
            return;
        }
        let path = self.expand_tilde(&target.text);
        if is_proc_environ(Path::new(&*path)) {
            self.secret_request(&path, Risk::Credential, true, scope);
        }
        let cwd = match scope.cwd.clone() {
            Some(cwd) => cwd,
            None if path.starts_with('/') => PathBuf::from("/"),
            None => {
                self.push(
                    PermissionRequest::path("edit", target.text.clone(), Risk::Write)
                        .with_save_pattern(None),
                    true,
                    format!(
                        "opaque: redirect to `{}` in a directory only known at run time",
                        target.text
                    ),
                    scope,
                );
                return;
            }
        };
        let resolved = match self.paths.resolve_from(self.ctx.location, &path, &cwd) {
            Ok(r) => r,
            Err(e) => return self.unresolvable(&target.text, &e.to_string(), scope),
        };
        let lexical_path = lexical(&cwd.join(&*path));
        let resolved_text = resolved.path.to_string_lossy().into_owned();
        let secret = self.secret_risk(&lexical_path).is_some()
            || self.secret_risk_in(&resolved.path).is_some();
        let (risk, reason) = if secret {
            (
                Risk::Credential,
                format!("the redirect writes {resolved_text}, which holds secrets"),
            )
        } else if truncates && resolved.exists && !resolved.inside {
            (
                Risk::Destructive,
                format!("`{op}` overwrites {resolved_text}, an existing file outside the location"),
            )
        } else if self.ctx.location.contains(&lexical_path) && !resolved.inside {
            (
                Risk::Destructive,
                format!(
                    "the redirect writes through a symlink that leads outside, to {resolved_text}"
                ),
            )
        } else {
            (Risk::Write, format!("the redirect writes {resolved_text}"))
        };
        let note = if resolved.exists {
            "overwrite"
        } else {
            "create"
        };
        let note = if op.contains(">>") { "append" } else { note };
        self.push(
            PermissionRequest::path("edit", resolved_text.clone(), risk).with_note(note),
            false,
            reason,
            scope,
        );
        if !resolved.inside && !secret {
            self.resolved_requests(&lexical_path, &resolved, Risk::Write, true, scope);
        }
    }

    /// Secrets a recursive reader (`grep -r`, `rg --hidden`) would read: the
    /// credential files in the top [`WALK_DEPTH`] levels of each directory it
    /// walks (at most [`WALK_BUDGET`] entries; `.git`, `node_modules`, `target`
    /// skipped).
    pub(crate) fn walked_secrets(&mut self, args: &[Word], walk: Walk, scope: &Scope) {
        let Some(cwd) = scope.cwd.clone() else {
            return;
        };
        let mut dirs = Vec::new();
        let mut any_path = false;
        let mut after_dashes = false;
        let mut excludes: Vec<String> = Vec::new();
        if walk == Walk::Unhidden {
            // Hidden files and directories are skipped (the glob's leading
            // dot is matched literally, so `.*` names exactly those).
            excludes.push(".*".to_string());
        }
        // With `--include`/`-g GLOB`, only matching files are read.
        let mut includes: Vec<String> = Vec::new();
        let mut i = 0;
        while let Some(w) = args.get(i) {
            i += 1;
            if !w.known {
                continue;
            }
            let mut text = w.text.as_str();
            if text == "--" {
                after_dashes = true;
                continue;
            }
            if text.starts_with('-') && !after_dashes {
                let (name, inline) = match text.split_once('=') {
                    Some((n, v)) => (n, Some(v.to_string())),
                    None => (text, None),
                };
                // `diff --from-file=DIR FILE` compares DIR/FILE: the
                // directory is read below like an operand.
                if let ("--from-file" | "--to-file", Some((_, value))) =
                    (name, text.split_once('='))
                {
                    text = value;
                } else {
                    walk_glob_option(name, inline, args, &mut i, &mut excludes, &mut includes);
                    continue;
                }
            }
            let path = self.expand_tilde(text);
            if let Ok(r) = self.paths.resolve_from(self.ctx.location, &path, &cwd) {
                if r.exists {
                    any_path = true;
                    if r.is_dir {
                        dirs.push(r.path);
                    }
                }
            }
        }
        if !any_path && walk != Walk::Operands {
            dirs.push(cwd);
        }
        let follow = matches!(walk, Walk::Operands | Walk::AllFollow);
        for dir in dirs {
            let key = (dir, excludes.clone(), includes.clone(), follow);
            let found = match self.walk_cache.get(&key) {
                Some(found) => found.clone(),
                None => {
                    let mut found = Vec::new();
                    let mut budget = self.walk_budget;
                    self.scan_for_secrets(
                        &key.0,
                        WALK_DEPTH,
                        &mut budget,
                        (&excludes, &includes),
                        follow,
                        &mut found,
                    );
                    self.walk_budget = budget;
                    self.walk_cache.insert(key, found.clone());
                    found
                }
            };
            for path in found {
                let shown = path.to_string_lossy().into_owned();
                if std::fs::symlink_metadata(&path).is_ok_and(|m| m.file_type().is_symlink()) {
                    // A link the walk reads through: a key, or a place outside.
                    self.path_requests(&shown, Risk::Read, false, scope);
                    continue;
                }
                self.push(
                    PermissionRequest::path("read", shown.clone(), Risk::Credential),
                    false,
                    format!("the recursive read would read {shown}, which holds secrets"),
                    scope,
                );
            }
        }
    }

    fn scan_for_secrets(
        &mut self,
        dir: &Path,
        depth: usize,
        budget: &mut usize,
        (excludes, includes): (&[String], &[String]),
        follow: bool,
        found: &mut Vec<PathBuf>,
    ) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for entry in entries.flatten() {
            if *budget == 0 {
                return;
            }
            *budget -= 1;
            let path = entry.path();
            let name = entry.file_name();
            let name_text = name.to_string_lossy();
            if excludes.iter().any(|g| glob_match(g, &name_text)) {
                // The reader is told to skip it.
                continue;
            }
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            let included = is_dir
                || includes.is_empty()
                || includes.iter().any(|g| include_matches(g, &name_text));
            if included && self.secret_risk(&path).is_some() {
                found.push(path);
                continue;
            }
            // A link below is read through (`grep -R`, `diff FILE DIR`): what
            // it leads to is judged, a key elsewhere included.
            if follow && included && entry.file_type().is_ok_and(|t| t.is_symlink()) {
                if let Ok(target) = std::fs::canonicalize(&path) {
                    if self.secret_risk(&target).is_some() || !self.ctx.location.contains(&target) {
                        // The link itself: judged like a path the command names.
                        found.push(path);
                        continue;
                    }
                }
            }
            let skip = matches!(name.to_str(), Some(".git" | "node_modules" | "target"));
            if is_dir && depth > 1 && !skip {
                self.scan_for_secrets(
                    &path,
                    depth - 1,
                    budget,
                    (excludes, includes),
                    follow,
                    found,
                );
            }
        }
    }
}

/// `--exclude=GLOB`, `--exclude GLOB`, `-g '!GLOB'`, `--glob=!GLOB`,
/// `--include GLOB`: what a recursive read skips or keeps.
fn walk_glob_option(
    name: &str,
    inline: Option<String>,
    args: &[Word],
    i: &mut usize,
    excludes: &mut Vec<String>,
    includes: &mut Vec<String>,
) {
    if !matches!(
        name,
        "--exclude" | "--exclude-dir" | "--include" | "-g" | "--glob" | "--iglob"
    ) {
        return;
    }
    let value = inline.or_else(|| {
        *i += 1;
        args.get(*i - 1).filter(|v| v.known).map(|v| v.text.clone())
    });
    if let Some(value) = value {
        let value = value.trim_matches('/').to_string();
        if name.starts_with("--exclude") {
            excludes.push(value);
        } else if name == "--iglob" && !value.starts_with('!') {
            // Matched without regard to case: taken as matching anything
            // rather than guessing which case is meant.
            includes.push("*".to_string());
        } else if name == "--include" {
            includes.push(value);
        } else if let Some(negated) = value.strip_prefix('!') {
            excludes.push(negated.to_string());
        } else {
            includes.push(value);
        }
    }
}
