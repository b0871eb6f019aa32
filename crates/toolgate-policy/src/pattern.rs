//! Wildcard patterns for rule and approval resources, and their translation to
//! regular expressions.
//!
//! Three kinds, chosen by the action a pattern belongs to:
//!
//! * [`PatternKind::Command`] (bash): `*` matches anything, spaces and slashes
//!   included; `?` one character; a trailing `" *"` also matches the bare command
//!   (`git push *` matches `git push` but not `git pushx`).
//! * [`PatternKind::Path`] (read, edit, external_directory…): `*` and `?` stay within
//!   one path component, `**` crosses components, `~` is the home directory, and a
//!   relative pattern is relative to the location root.
//! * [`PatternKind::Generic`] (everything else, URLs, queries): like `Command`
//!   without the bare-command rule.
//!
//! ```
//! use toolgate_policy::pattern::{Pattern, PatternKind, PatternBase};
//! use std::path::Path;
//! let base = PatternBase { root: Path::new("/ws"), home: Path::new("/home/u") };
//! let p = Pattern::parse("git push *", PatternKind::Command, &base).unwrap();
//! assert!(p.is_match("git push"));
//! assert!(p.is_match("git push origin main"));
//! assert!(!p.is_match("git pushx"));
//! let src = Pattern::parse("src/**", PatternKind::Path, &base).unwrap();
//! assert!(src.is_match("/ws/src/a/b.rs"));
//! assert!(!src.is_match("/ws/srcx"));
//! ```

use std::path::{Component, Path, PathBuf};
use std::sync::OnceLock;

use regex::Regex;
use toolgate_core::ResourceKind;

/// The longest pattern text accepted. Far above any rule a person writes, and
/// low enough that every pattern's expression compiles within the regex
/// crate's size limit (tested), so compiling it lazily cannot fail.
pub const MAX_PATTERN_BYTES: usize = 4096;

/// How a pattern's wildcards are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PatternKind {
    /// Shell commands.
    Command,
    /// Filesystem paths.
    Path,
    /// Anything else (URLs, search queries, tool names).
    Generic,
}

impl PatternKind {
    /// How patterns over resources of `kind` read.
    pub fn for_kind(kind: ResourceKind) -> PatternKind {
        match kind {
            ResourceKind::Command => PatternKind::Command,
            ResourceKind::Path => PatternKind::Path,
            ResourceKind::Url | ResourceKind::Other => PatternKind::Generic,
        }
    }

    /// The kind used for resources of `action`, by the kind of resource the
    /// action is about ([`crate::actions`]); generic for any other action.
    pub fn for_action(action: &str) -> PatternKind {
        crate::actions::kind_of(action).map_or(PatternKind::Generic, PatternKind::for_kind)
    }
}

/// What relative and `~` path patterns are resolved against.
#[derive(Clone, Copy, Debug)]
pub struct PatternBase<'a> {
    /// The location root (relative path patterns start here).
    pub root: &'a Path,
    /// The home directory (`~`).
    pub home: &'a Path,
}

/// Why a pattern is invalid.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// The pattern is empty.
    #[error("the pattern is empty")]
    Empty,
    /// The pattern contains a NUL byte.
    #[error("the pattern contains a NUL byte")]
    Nul,
    /// `***` or more.
    #[error("`***` is not a wildcard; use `*` (one component) or `**` (any depth)")]
    TooManyStars,
    /// Longer than [`MAX_PATTERN_BYTES`].
    #[error("the pattern is {0} bytes long; the limit is {MAX_PATTERN_BYTES}")]
    TooLong(usize),
    /// The translated expression was rejected (too large, say).
    #[error("the pattern cannot be compiled: {0}")]
    Regex(String),
}

/// The shape of a pattern, for the fast paths of a compiled rule set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Shape {
    /// Matches every resource (`*`, `**`).
    Any,
    /// No wildcard: matches exactly this text.
    Exact(String),
    /// Matches `exact` itself (when `Some`) and every text starting with `prefix`.
    Prefix {
        /// Also matches this text exactly (`git push` for `git push *`).
        exact: Option<String>,
        /// The literal prefix.
        prefix: String,
        /// The rest after the prefix may not contain `/` (path `dir/*`).
        no_slash: bool,
    },
    /// A path pattern `PREFIX**/*SUFFIX` (`**/*.rs`): any path under `prefix`
    /// whose text ends with `suffix` (which holds no `/`).
    Suffix {
        /// The literal directory prefix, ending in `/`.
        prefix: String,
        /// The literal end of the file name (`.rs`).
        suffix: String,
    },
    /// Needs the regular expression; `literal_prefix` is the text before the
    /// first wildcard.
    Complex {
        /// The literal text before the first wildcard.
        literal_prefix: String,
    },
}

/// A parsed, compiled pattern.
#[derive(Clone, Debug)]
pub struct Pattern {
    /// The text as written.
    pub text: String,
    /// The kind.
    pub kind: PatternKind,
    /// The text after `~` and root expansion (for paths), else the text.
    pub expanded: String,
    /// The shape, for fast paths.
    pub shape: Shape,
    /// An anchored regular expression source equivalent to the pattern.
    pub regex_source: String,
    /// Compiled on first use, and only for [`Shape::Complex`]: the other shapes
    /// match without it, and a `check` process needs only the few it meets.
    regex: OnceLock<Option<Regex>>,
}

impl Pattern {
    /// Parses and compiles a pattern.
    pub fn parse(
        text: &str,
        kind: PatternKind,
        base: &PatternBase<'_>,
    ) -> Result<Pattern, PatternError> {
        if text.is_empty() {
            return Err(PatternError::Empty);
        }
        if text.contains('\0') {
            return Err(PatternError::Nul);
        }
        if text.contains("***") {
            return Err(PatternError::TooManyStars);
        }
        if text.len() > MAX_PATTERN_BYTES {
            return Err(PatternError::TooLong(text.len()));
        }
        let expanded = match kind {
            PatternKind::Path if !is_bare_wildcard(text) => expand_path(text, base),
            _ => text.to_string(),
        };
        let body = translate(&expanded, kind);
        let regex_source = format!("^(?s:{body})$");
        let shape = shape_of(&expanded, kind);
        Ok(Pattern {
            text: text.to_string(),
            kind,
            expanded,
            shape,
            regex_source,
            regex: OnceLock::new(),
        })
    }

    /// Whether `resource` matches.
    pub fn is_match(&self, resource: &str) -> bool {
        match &self.shape {
            Shape::Any => true,
            Shape::Exact(s) => s == resource,
            Shape::Prefix {
                exact,
                prefix,
                no_slash,
            } => {
                exact.as_deref() == Some(resource)
                    || resource
                        .strip_prefix(prefix.as_str())
                        .is_some_and(|rest| !*no_slash || !rest.contains('/'))
            }
            Shape::Suffix { prefix, suffix } => {
                resource.len() >= prefix.len() + suffix.len()
                    && resource.starts_with(prefix.as_str())
                    && resource.ends_with(suffix.as_str())
            }
            Shape::Complex { .. } => self.regex().is_some_and(|r| r.is_match(resource)),
        }
    }

    /// The compiled expression, built on first use. `None` only if the regex
    /// crate refused it, which [`MAX_PATTERN_BYTES`] rules out (tested).
    fn regex(&self) -> Option<&Regex> {
        self.regex
            .get_or_init(|| match Regex::new(&self.regex_source) {
                Ok(r) => Some(r),
                Err(e) => {
                    tracing::error!(pattern = %self.text, "cannot compile a rule pattern: {e}");
                    None
                }
            })
            .as_ref()
    }

    /// Whether this is a bare wildcard (`*`, `**`) that names nothing.
    pub fn is_bare_wildcard(&self) -> bool {
        matches!(self.shape, Shape::Any)
    }
}

/// Whether `text` is a bare wildcard: only `*` characters.
pub fn is_bare_wildcard(text: &str) -> bool {
    !text.is_empty() && text.chars().all(|c| c == '*')
}

/// Expands `~` and makes a relative path pattern absolute under the root, folding
/// `.` and `..` lexically (patterns are text, not files).
pub(crate) fn expand_path(text: &str, base: &PatternBase<'_>) -> String {
    let joined: PathBuf = if text == "~" {
        base.home.to_path_buf()
    } else if let Some(rest) = text.strip_prefix("~/") {
        base.home.join(rest)
    } else if text.starts_with('/') {
        PathBuf::from(text)
    } else {
        base.root.join(text)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(s) => out.push(s),
            Component::CurDir | Component::RootDir | Component::Prefix(_) => {}
        }
    }
    let mut s = out.to_string_lossy().into_owned();
    // Keep a trailing slash meaning "this directory": `src/` behaves like `src/**`.
    if text.ends_with('/') && !s.ends_with('/') {
        s.push_str("/**");
    }
    s
}

fn is_wild(c: char) -> bool {
    c == '*' || c == '?'
}

fn shape_of(expanded: &str, kind: PatternKind) -> Shape {
    if is_bare_wildcard(expanded) {
        return Shape::Any;
    }
    let first_wild = expanded.find(is_wild);
    let Some(pos) = first_wild else {
        return Shape::Exact(expanded.to_string());
    };
    let lit = &expanded[..pos];
    let rest = &expanded[pos..];
    match kind {
        PatternKind::Command => {
            if rest == "*" {
                if let Some(bare) = lit.strip_suffix(' ') {
                    if !bare.is_empty() {
                        return Shape::Prefix {
                            exact: Some(bare.to_string()),
                            prefix: lit.to_string(),
                            no_slash: false,
                        };
                    }
                }
                return Shape::Prefix {
                    exact: None,
                    prefix: lit.to_string(),
                    no_slash: false,
                };
            }
        }
        PatternKind::Path => {
            if rest == "**" {
                if let Some(dir) = lit.strip_suffix('/') {
                    return Shape::Prefix {
                        exact: Some(if dir.is_empty() {
                            "/".into()
                        } else {
                            dir.into()
                        }),
                        prefix: lit.to_string(),
                        no_slash: false,
                    };
                }
                return Shape::Prefix {
                    exact: None,
                    prefix: lit.to_string(),
                    no_slash: false,
                };
            }
            if rest == "*" {
                return Shape::Prefix {
                    exact: None,
                    prefix: lit.to_string(),
                    no_slash: true,
                };
            }
            if let Some(suffix) = rest.strip_prefix("**/*") {
                if lit.ends_with('/') && !suffix.is_empty() && !suffix.contains(['*', '?', '/']) {
                    return Shape::Suffix {
                        prefix: lit.to_string(),
                        suffix: suffix.to_string(),
                    };
                }
            }
        }
        PatternKind::Generic => {
            if rest == "*" {
                return Shape::Prefix {
                    exact: None,
                    prefix: lit.to_string(),
                    no_slash: false,
                };
            }
        }
    }
    Shape::Complex {
        literal_prefix: lit.to_string(),
    }
}

/// Translates wildcards to a regular-expression body (not anchored).
fn translate(text: &str, kind: PatternKind) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len() * 2);
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '*' if kind == PatternKind::Path => {
                if chars.get(i + 1) == Some(&'*') {
                    let at_start = i == 0 || chars[i - 1] == '/';
                    let slash_after = chars.get(i + 2) == Some(&'/');
                    let at_end = i + 2 == chars.len();
                    if at_start && slash_after {
                        // `**/` : zero or more whole components.
                        out.push_str("(?:[^/]*/)*");
                        i += 3;
                        continue;
                    }
                    if at_end && i > 0 && chars[i - 1] == '/' {
                        // `dir/**` also matches `dir` itself.
                        out.truncate(out.len() - 1);
                        out.push_str("(?:/.*)?");
                        i += 2;
                        continue;
                    }
                    out.push_str(".*");
                    i += 2;
                    continue;
                }
                out.push_str("[^/]*");
            }
            '?' if kind == PatternKind::Path => out.push_str("[^/]"),
            '*' => {
                let trailing_arg = kind == PatternKind::Command
                    && i + 1 == chars.len()
                    && i > 0
                    && chars[i - 1] == ' ';
                if trailing_arg {
                    // `cmd *` also matches the bare `cmd`.
                    out.truncate(out.len() - 1);
                    out.push_str("(?: .*)?");
                } else {
                    out.push_str(".*");
                }
            }
            '?' => out.push('.'),
            _ => {
                // A run of literal text, escaped at once.
                let start = i;
                while i < chars.len() && !is_wild(chars[i]) {
                    i += 1;
                }
                let run: String = chars[start..i].iter().collect();
                out.push_str(&regex::escape(&run));
                continue;
            }
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> PatternBase<'static> {
        PatternBase {
            root: Path::new("/ws"),
            home: Path::new("/home/u"),
        }
    }

    fn p(text: &str, kind: PatternKind) -> Pattern {
        Pattern::parse(text, kind, &base()).unwrap()
    }

    #[test]
    fn command_trailing_star_matches_bare_command() {
        let pat = p("git push *", PatternKind::Command);
        assert!(pat.is_match("git push"));
        assert!(pat.is_match("git push --force origin main"));
        assert!(!pat.is_match("git pushx"));
        assert!(!pat.is_match("git pul"));
        assert_eq!(
            pat.shape,
            Shape::Prefix {
                exact: Some("git push".into()),
                prefix: "git push ".into(),
                no_slash: false
            }
        );
    }

    #[test]
    fn command_question_and_inner_star() {
        let pat = p("npm run t?st*", PatternKind::Command);
        assert!(pat.is_match("npm run test"));
        assert!(pat.is_match("npm run tast:unit"));
        assert!(!pat.is_match("npm run tst"));
        let inner = p("cargo * --release", PatternKind::Command);
        assert!(inner.is_match("cargo build --release"));
        assert!(!inner.is_match("cargo build"));
        assert!(matches!(inner.shape, Shape::Complex { .. }));
    }

    #[test]
    fn the_longest_patterns_still_compile() {
        for kind in [
            PatternKind::Command,
            PatternKind::Path,
            PatternKind::Generic,
        ] {
            for unit in ["?", "*?", "a*", "é?", "**/?", "[(*"] {
                let text: String = unit
                    .repeat(MAX_PATTERN_BYTES)
                    .chars()
                    .scan(0, |len, c| {
                        *len += c.len_utf8();
                        (*len <= MAX_PATTERN_BYTES).then_some(c)
                    })
                    .collect();
                let text = text.replace("***", "*?*");
                let pat = p(&text, kind);
                assert!(
                    Regex::new(&pat.regex_source).is_ok(),
                    "{kind:?} {unit:?} does not compile"
                );
            }
            let long = "a".repeat(MAX_PATTERN_BYTES + 1);
            assert_eq!(
                Pattern::parse(&long, kind, &base()).unwrap_err(),
                PatternError::TooLong(MAX_PATTERN_BYTES + 1)
            );
        }
    }

    #[test]
    fn regex_metacharacters_are_literal() {
        let pat = p("echo (a|b) [x] $HOME.+", PatternKind::Command);
        assert!(pat.is_match("echo (a|b) [x] $HOME.+"));
        assert!(!pat.is_match("echo a [x] $HOME.+"));
    }

    #[test]
    fn path_patterns() {
        let src = p("src/**", PatternKind::Path);
        assert!(src.is_match("/ws/src"));
        assert!(src.is_match("/ws/src/a.rs"));
        assert!(src.is_match("/ws/src/a/b/c.rs"));
        assert!(!src.is_match("/ws/srcx/a.rs"));
        let one = p("/ws/src/*", PatternKind::Path);
        assert!(one.is_match("/ws/src/a.rs"));
        assert!(!one.is_match("/ws/src/a/b.rs"));
        let ext = p("**/*.rs", PatternKind::Path);
        assert!(ext.is_match("/ws/a.rs"));
        assert!(ext.is_match("/ws/x/y/a.rs"));
        assert!(!ext.is_match("/other/a.rs"));
        assert!(!ext.is_match("/ws/a.rsx"));
        let home = p("~/.ssh/**", PatternKind::Path);
        assert!(home.is_match("/home/u/.ssh/id_rsa"));
        let q = p("/ws/?.txt", PatternKind::Path);
        assert!(q.is_match("/ws/a.txt"));
        assert!(!q.is_match("/ws/ab.txt"));
        let dotdot = p("src/../lib/*", PatternKind::Path);
        assert_eq!(dotdot.expanded, "/ws/lib/*");
        let dir = p("docs/", PatternKind::Path);
        assert!(dir.is_match("/ws/docs/a/b.md"));
    }

    #[test]
    fn bare_wildcards() {
        for text in ["*", "**"] {
            for kind in [
                PatternKind::Command,
                PatternKind::Path,
                PatternKind::Generic,
            ] {
                let pat = p(text, kind);
                assert!(pat.is_bare_wildcard());
                assert!(pat.is_match("rm -rf /"));
            }
        }
        assert!(!p("/**", PatternKind::Path).is_bare_wildcard());
        assert!(!p("rm *", PatternKind::Command).is_bare_wildcard());
    }

    #[test]
    fn bad_patterns() {
        assert_eq!(
            Pattern::parse("", PatternKind::Command, &base()).unwrap_err(),
            PatternError::Empty
        );
        assert_eq!(
            Pattern::parse("a\0b", PatternKind::Command, &base()).unwrap_err(),
            PatternError::Nul
        );
        assert_eq!(
            Pattern::parse("src/***", PatternKind::Path, &base()).unwrap_err(),
            PatternError::TooManyStars
        );
    }

    #[test]
    fn shapes_agree_with_regex() {
        let cases = [
            ("git status *", PatternKind::Command, "git status"),
            ("git status *", PatternKind::Command, "git status -s"),
            ("git*", PatternKind::Command, "gitk"),
            ("/ws/src/*", PatternKind::Path, "/ws/src/a"),
            ("/ws/src/*", PatternKind::Path, "/ws/src/a/b"),
            ("src/**", PatternKind::Path, "/ws/src"),
            (
                "https://docs.rs/*",
                PatternKind::Generic,
                "https://docs.rs/x/y",
            ),
        ];
        for (text, kind, input) in cases {
            let pat = p(text, kind);
            let re = Regex::new(&pat.regex_source).unwrap();
            assert_eq!(pat.is_match(input), re.is_match(input), "{text} on {input}");
        }
    }
}
