//! The files of the work tree that a protected file names: a file that
//! makes a program run code often runs another file of the project, and a
//! write to that file is a write to the protected one.
//!
//! direnv's `.envrc` puts `bin/` first on `PATH` (`PATH_add bin`) and
//! sources scripts (`source_env scripts/env.sh`); a pre-commit framework's
//! local hook, a husky or lefthook hook, or a hook installed in
//! `.git/hooks/` runs `scripts/lint.sh`; another agent's hook command or
//! MCP server is a script of the project; an editor starts the interpreter
//! its settings name. Each runs, unconfined, at the person's next `cd`,
//! commit, push, agent start or editor start. ([`crate::git_config_paths`]
//! does the same for the files git's own configuration names.)
//!
//! Formats are many (shell, YAML, JSON, TOML), so no parser says which
//! values are paths: the text is cut into words, a project-directory
//! variable (`$CLAUDE_PROJECT_DIR`, `${workspaceFolder}`, `$PWD`…) is read
//! as the project directory, and a word counts when it names, relative to
//! the file's directory or the project directory and inside the location
//! root, an existing regular file, or a file that does not exist yet (the
//! word holds a `/` and does not end with one, or is a file name with an
//! extension). A directory counts, with
//! everything below it, only on a line that sets a search path (`PATH`,
//! `PATH_add`, mise's `_.path`), whether it exists yet or not: a program
//! put there shadows the commands the person types. Words with wildcards, variables, URLs or options do
//! not count; nor does an absolute path outside the root.
//!
//! CI and hosting files are not read: they run only after a push, which is
//! asked, and they name much of the project. Nor are `.gitignore` (it
//! names nothing to run), prose (`.md`, `.mdc`, `.txt`) or files larger
//! than [`MAX_FILE_BYTES`]; at most [`MAX_FILES`] files are read per
//! protected place.
//!
//! ```
//! use toolgate_paths::named_by::named_paths;
//! let dir = tempfile::tempdir().unwrap();
//! let ws = dir.path();
//! std::fs::create_dir_all(ws.join("bin")).unwrap();
//! std::fs::create_dir_all(ws.join("scripts")).unwrap();
//! std::fs::write(ws.join("scripts/env.sh"), "").unwrap();
//! std::fs::write(ws.join(".envrc"), "PATH_add bin\nsource_env scripts/env.sh\n").unwrap();
//! let named = named_paths(&ws.join(".envrc"), ws, ws);
//! assert!(named.contains(&ws.join("bin")));
//! assert!(named.contains(&ws.join("scripts/env.sh")));
//! ```

use std::path::{Path, PathBuf};

use crate::path_text::lexical;

/// Files larger than this are not read.
pub const MAX_FILE_BYTES: u64 = 256 * 1024;
/// At most this many files are read below one protected directory.
pub const MAX_FILES: usize = 64;
/// At most this many places are reported for one protected place.
pub const MAX_NAMED: usize = 1024;

/// Variables that stand for the project directory in the files read.
const PROJECT_VARS: &[&str] = &[
    "CLAUDE_PROJECT_DIR",
    "GEMINI_PROJECT_DIR",
    "CURSOR_PROJECT_DIR",
    "workspaceFolder",
    "workspaceRoot",
    "PWD",
    "PROJECT_DIR",
    "DIRENV_DIR",
];

/// File endings of prose, which names paths without running them.
const PROSE: &[&str] = &[".md", ".mdc", ".txt", ".rst"];

/// The places the protected file or directory `place` names: its files
/// (below a directory, two levels deep) read as the module says, words
/// resolved against each file's directory and `project`, kept when inside
/// `root`.
pub fn named_paths(place: &Path, project: &Path, root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    collect(place, 2, &mut files);
    let mut out: Vec<PathBuf> = Vec::new();
    for file in files {
        let Some(text) = read_small(&file) else {
            continue;
        };
        let base = file.parent().unwrap_or(project).to_path_buf();
        let mut found = names_in(&text, &[&base, project], root);
        // A file direnv loads by convention is code too (a Nix shell's
        // `shellHook`): what it names is read the same way, one level.
        for loaded in text.lines().flat_map(|l| by_convention(l, &base)) {
            if !loaded.starts_with(root) {
                continue;
            }
            if let Some(code) = read_small(&loaded) {
                let dir = loaded.parent().unwrap_or(&base).to_path_buf();
                found.extend(names_in(&code, &[&dir, project], root));
            }
        }
        for named in found {
            if out.len() >= MAX_NAMED {
                return out;
            }
            if !out.contains(&named) {
                out.push(named);
            }
        }
    }
    out
}

/// The regular files at `at`, or below it `depth` levels deep, at most
/// [`MAX_FILES`], prose and hook samples left out.
fn collect(at: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(meta) = std::fs::symlink_metadata(at) else {
        return;
    };
    if meta.is_file() {
        let name = at
            .file_name()
            .map(|n| n.to_string_lossy().to_ascii_lowercase())
            .unwrap_or_default();
        let skip = PROSE.iter().any(|e| name.ends_with(e)) || name.ends_with(".sample");
        if !skip && out.len() < MAX_FILES {
            out.push(at.to_path_buf());
        }
        return;
    }
    if !meta.is_dir() || depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(at) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    paths.sort();
    for p in paths {
        if out.len() >= MAX_FILES {
            return;
        }
        collect(&p, depth - 1, out);
    }
}

/// The text of `file` when it is a regular file of at most
/// [`MAX_FILE_BYTES`] (read without ever waiting: see [`crate::small_file`]).
fn read_small(file: &Path) -> Option<String> {
    let bytes = crate::small_file::read(file, MAX_FILE_BYTES).ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

/// `text` with every spelling of a project-directory variable (quoted or
/// not, braced or not, and JSON's escaped quotes) replaced by `.`.
fn with_project_vars(text: &str) -> String {
    let mut t = text.replace("\\\"", "\"");
    for var in PROJECT_VARS {
        for form in [
            format!("\"${{{var}}}\""),
            format!("\"${var}\""),
            format!("${{{var}}}"),
            format!("${var}"),
        ] {
            t = t.replace(&form, ".");
        }
    }
    t.replace("$(pwd)", ".")
}

/// direnv's stdlib directives that load files or put directories on `PATH`
/// by convention, naming neither (direnv-stdlib(1); `use devenv` is
/// devenv's, `use guix` guix's): `(directive, files it loads, directories
/// it puts first on PATH)`, relative to the file's directory. `use flake`
/// and `use nix` evaluate the flake's or shell's `shellHook`, which runs
/// at the person's next `cd`; `layout node` puts `node_modules/.bin`
/// first on `PATH`, so a program there shadows what the person types.
const DIRENV_CONVENTIONS: &[(&str, &[&str], &[&str])] = &[
    ("use flake", &["flake.nix", "flake.lock"], &[]),
    ("use nix", &["shell.nix", "default.nix"], &[]),
    (
        "use devenv",
        &[
            "devenv.nix",
            "devenv.yaml",
            "devenv.lock",
            "devenv.local.nix",
        ],
        &[],
    ),
    ("use guix", &["manifest.scm", "guix.scm"], &[]),
    ("layout node", &[], &["node_modules/.bin"]),
    ("layout php", &[], &["vendor/bin"]),
    ("layout go", &[], &["bin"]),
];

/// The files and directories a direnv directive on `line` loads or puts
/// on `PATH` by convention (see [`DIRENV_CONVENTIONS`]), under `base`.
fn by_convention(line: &str, base: &Path) -> Vec<PathBuf> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let directive = match words.as_slice() {
        [first, second, ..] if *first == "use" || *first == "layout" => {
            format!("{first} {second}")
        }
        [first, ..] => first
            .replacen("use_", "use ", 1)
            .replacen("layout_", "layout ", 1),
        [] => return Vec::new(),
    };
    // `use flake ./infra`, `use_flake path:../ops#dev`: the installable's
    // path is the directory the flake is loaded from.
    let argument = if words.first() == Some(&"use") {
        words.get(2)
    } else {
        words.get(1)
    };
    let flake_dir = match argument {
        Some(arg) if directive == "use flake" && !arg.starts_with('-') => {
            let path = arg.strip_prefix("path:").unwrap_or(arg);
            let path = path.split('#').next().unwrap_or_default();
            base.join(path)
        }
        _ => base.to_path_buf(),
    };
    DIRENV_CONVENTIONS
        .iter()
        .filter(|(d, _, _)| *d == directive)
        .flat_map(|(_, files, dirs)| files.iter().chain(dirs.iter()))
        .map(|p| lexical(&flake_dir.join(p)))
        .collect()
}

/// Whether a line sets a search path, so a directory it names holds
/// programs the person runs by name.
fn sets_search_path(line: &str) -> bool {
    line.contains("PATH") || line.contains("_.path")
}

/// The places the words of `text` name (see the module documentation).
fn names_in(text: &str, bases: &[&Path], root: &Path) -> Vec<PathBuf> {
    let text = with_project_vars(text);
    let mut out = Vec::new();
    for line in text.lines() {
        if let Some(base) = bases.first() {
            out.extend(
                by_convention(line, base)
                    .into_iter()
                    .filter(|p| p.starts_with(root) && p != root),
            );
        }
        let search_path = sets_search_path(line);
        let words = line.split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    '"' | '\''
                        | '`'
                        | ','
                        | ';'
                        | '='
                        | '('
                        | ')'
                        | '['
                        | ']'
                        | '{'
                        | '}'
                        | ':'
                        | '<'
                        | '>'
                        | '|'
                        | '&'
                )
        });
        for (i, word) in words.filter(|w| !w.is_empty()).enumerate() {
            // On a search-path line, a directory that does not exist yet
            // counts too (`PATH_add bin` before `bin/` is made), but not
            // the line's command or a variable's name.
            let command_or_name =
                i == 0 || word.bytes().all(|b| b.is_ascii_uppercase() || b == b'_');
            let word = word.trim_start_matches("./");
            let skip = word.is_empty()
                || word == "."
                || word.starts_with(['-', '~', '$', '@', '#', '^'])
                || word.contains(['*', '?', '$', '%', '\\'])
                || word.contains("//");
            if skip {
                continue;
            }
            for base in bases {
                let candidate = lexical(&base.join(word));
                if !candidate.starts_with(root) || candidate == root {
                    continue;
                }
                let counts = match std::fs::symlink_metadata(&candidate) {
                    Ok(m) if m.is_dir() => search_path,
                    Ok(_) => true,
                    Err(_) => {
                        (search_path && !command_or_name)
                            || (word.contains('/') && !word.ends_with('/'))
                            || names_a_file(word)
                    }
                };
                if counts {
                    out.push(std::fs::canonicalize(&candidate).unwrap_or(candidate));
                }
            }
        }
    }
    out
}

/// Whether a word without a `/` is shaped as a file's name: a stem and an
/// extension of one to eight letters and digits starting with a letter
/// (`CONVENTIONS.md`, `server.js`), not a version (`1.2`) or a dotfile.
/// Such a word names a file that does not exist yet as surely as `dir/x`
/// does: aider's `read: CONVENTIONS.md` made every later session load the
/// file a command then created (review s43's follow-up).
fn names_a_file(word: &str) -> bool {
    let Some((stem, ext)) = word.rsplit_once('.') else {
        return false;
    };
    !stem.is_empty()
        && !word.starts_with('.')
        && (1..=8).contains(&ext.len())
        && ext.starts_with(|c: char| c.is_ascii_alphabetic())
        && ext.bytes().all(|b| b.is_ascii_alphanumeric())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `.envrc` says `use nix`, and `shell.nix` is a FIFO: reading what it
    /// loads waited for a writer for ever, and every write the gate judged
    /// in that location with it (`toolgate check write` stalled).
    #[test]
    fn a_fifo_where_a_loaded_file_is_expected_is_passed_over() {
        use std::os::unix::ffi::OsStrExt;
        let d = tempfile::tempdir().unwrap();
        let ws = d.path().to_path_buf();
        std::fs::write(ws.join(".envrc"), "use nix\nPATH_add bin\n").unwrap();
        for name in ["shell.nix", "default.nix"] {
            let c = std::ffi::CString::new(ws.join(name).as_os_str().as_bytes()).unwrap();
            // SAFETY: a C string this test owns.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
        }
        let (done, finished) = std::sync::mpsc::channel();
        let at = ws.clone();
        std::thread::spawn(move || drop(done.send(named_paths(&at.join(".envrc"), &at, &at))));
        let named = finished
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("reading what .envrc loads stalled");
        assert!(named.contains(&ws.join("bin")), "{named:?}");
    }

    #[test]
    fn direnv_directives_name_their_files_and_path_by_convention() {
        let d = tempfile::tempdir().unwrap();
        let ws = d.path();
        std::fs::write(
            ws.join(".envrc"),
            "use flake\nuse nix\nuse devenv\nlayout node\nuse_guix\n",
        )
        .unwrap();
        let named = named_paths(&ws.join(".envrc"), ws, ws);
        for p in [
            "flake.nix",
            "shell.nix",
            "default.nix",
            "devenv.nix",
            "devenv.yaml",
            "node_modules/.bin",
            "manifest.scm",
        ] {
            assert!(named.contains(&ws.join(p)), "{p}: {named:?}");
        }
        std::fs::write(ws.join(".envrc"), "# use flake someday\nexport X=1\n").unwrap();
        let named = named_paths(&ws.join(".envrc"), ws, ws);
        assert!(!named.contains(&ws.join("flake.nix")), "{named:?}");
    }

    #[test]
    fn what_counts_and_what_does_not() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        for f in ["tools/fmt.py", "scripts/lint.sh", "src/main.rs", "README"] {
            std::fs::create_dir_all(ws.join(f).parent().unwrap()).unwrap();
            std::fs::write(ws.join(f), "").unwrap();
        }
        std::fs::create_dir_all(ws.join(".claude")).unwrap();
        std::fs::write(
            ws.join(".claude/settings.json"),
            r#"{"hooks":{"PostToolUse":[{"hooks":[{"command":"python3 \"$CLAUDE_PROJECT_DIR\"/tools/fmt.py"}]}]},
               "permissions":{"allow":["Read(./src/**)","Bash(npm run test:*)"]},
               "env":{"X":"https://example.com/a/b"}}"#,
        )
        .unwrap();
        let named = named_paths(&ws.join(".claude"), &ws, &ws);
        assert!(named.contains(&ws.join("tools/fmt.py")), "{named:?}");
        assert!(!named.contains(&ws.join("src")), "{named:?}");
        assert!(
            !named.iter().any(|p| p.starts_with(ws.join("src"))),
            "{named:?}"
        );
        std::fs::write(
            ws.join(".pre-commit-config.yaml"),
            "repos:\n- repo: local\n  hooks:\n  - id: lint\n    entry: scripts/lint.sh\n    files: ^src/.*\\.py$\n- repo: https://github.com/x/y\n",
        )
        .unwrap();
        let named = named_paths(&ws.join(".pre-commit-config.yaml"), &ws, &ws);
        assert_eq!(named, vec![ws.join("scripts/lint.sh")]);
        // A directory only on a line that sets a search path; nothing
        // outside the root.
        std::fs::write(
            ws.join(".envrc"),
            "export PATH=$PWD/tools:$PATH\nPATH_add bin\nwatch_dir src\nsource ../../etc/profile\n",
        )
        .unwrap();
        let named = named_paths(&ws.join(".envrc"), &ws, &ws);
        assert!(named.contains(&ws.join("tools")), "{named:?}");
        assert!(named.contains(&ws.join("bin")), "not made yet: {named:?}");
        assert!(!named.contains(&ws.join("PATH_add")), "{named:?}");
        assert!(!named.contains(&ws.join("export")), "{named:?}");
        assert!(!named.contains(&ws.join("src")), "{named:?}");
        assert!(named.iter().all(|p| p.starts_with(&ws)), "{named:?}");
    }

    /// A file an agent's config names by its bare name, before it exists:
    /// aider's `read: CONVENTIONS.md` (every session loads it) counted only
    /// once the file was there, so a command could create it unasked.
    #[test]
    fn a_bare_file_name_counts_before_the_file_exists() {
        let dir = tempfile::tempdir().unwrap();
        let ws = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::write(
            ws.join(".aider.conf.yml"),
            "read: CONVENTIONS.md
model: gpt-4.1
auto-commits: true
",
        )
        .unwrap();
        let named = named_paths(&ws.join(".aider.conf.yml"), &ws, &ws);
        assert_eq!(named, vec![ws.join("CONVENTIONS.md")], "{named:?}");
        assert!(names_a_file("server.js") && names_a_file("notes.TXT"));
        for word in [
            "1.2",
            "gpt-4.1",
            ".env",
            "x.",
            "a.toolongextension",
            "v2.0rc",
        ] {
            assert!(!names_a_file(word), "{word}");
        }
    }
}
