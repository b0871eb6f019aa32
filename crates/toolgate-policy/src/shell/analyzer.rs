//! The third and fourth stages: each simple command of the description
//! ([`super::ir`]) is classified ([`super::argv::analyse`]) with what the line
//! set up before it (working directory, variables, functions), and turned into
//! permission requests.

use foldhash::{HashMap, HashMapExt, HashSet, HashSetExt};
use std::cell::RefCell;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use toolgate_core::sandbox_env::sandbox_env_allows;
use toolgate_core::secret_env::{is_default_secret_name, value_holds_password};
use toolgate_core::{PermissionRequest, Risk};
use tree_sitter::{Parser, Tree};

use super::argv::{self, Part};
use super::builtins;
use super::grammar;
use super::ir::{self, DirEffect, Form, IrWord, Item, Origin, SimpleCommand, Target};
use super::plain;
use super::resolve::PathCache;
use super::words::{self, Word, brace_expand};
use super::{MAX_COMMAND_BYTES, MAX_DEPTH, MAX_NESTING, ShellContext, ShellRequest, TOO_COMPLEX};
use crate::classify::table::{
    EXPRESSION_AFTER_PATHS, GLOB_OPTIONS, PATTERN_FIRST, SEARCH_OPTIONS, env_is_harmless,
    inherited, lasting_assignment_matters, loads_code, points_at_a_host,
};
use crate::classify::{Walk, exact, save_pattern, sql_destroys};

/// The CPU budget of one analysis: 50 ms, measured as wall time from its
/// start (an `Instant` deadline checked every few nodes). Unoptimised builds
/// (tests) run the same work many times slower, so they get ten times as
/// much; a release build — what the gate runs — gets 50 ms.
pub(crate) const BUDGET: Duration = if cfg!(debug_assertions) {
    Duration::from_millis(500)
} else {
    Duration::from_millis(50)
};

thread_local! {
    static PARSER: RefCell<Option<Parser>> = const { RefCell::new(None) };
}

/// Parses `source` with a per-thread parser; `None` when the parser gives up.
fn parse(source: &str) -> Option<Tree> {
    PARSER.with(|cell| {
        let mut slot = cell.borrow_mut();
        if slot.is_none() {
            let mut parser = Parser::new();
            // A grammar built for another tree-sitter ABI: nothing parses, so
            // every command is opaque (asked), never allowed.
            parser
                .set_language(&tree_sitter_bash::LANGUAGE.into())
                .ok()?;
            *slot = Some(parser);
        }
        slot.as_mut()?.parse(source, None)
    })
}

/// What the shell's value of a variable is known to be.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Var {
    /// A number (from arithmetic, or a literal integer): safe in arithmetic.
    Number,
    /// Known text.
    Text(String),
    /// Only known at run time.
    Unknown,
}

/// What the shell knows at a point of the script.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    /// The working directory; `None` once it depends on run time (`cd "$X"`).
    pub(crate) cwd: Option<PathBuf>,
    /// `OLDPWD` (`cd -`, `~-`); `None` when unknown (it comes from the
    /// environment until a `cd` in this line sets it).
    pub(crate) oldpwd: Option<PathBuf>,
    /// The directory stack below `cwd` (`pushd`/`popd`); `None` when unknown.
    pub(crate) stack: Option<Vec<PathBuf>>,
    /// Whether `HOME` still is the context's home (not assigned here).
    pub(crate) home_known: bool,
    /// Whether `CDPATH` was set in this line (`cd rel` is then unknown).
    pub(crate) cdpath_set: bool,
    /// Variables assigned in this line.
    pub(crate) vars: HashMap<String, Var>,
}

/// Whether a `CDPATH` the shell inherits (the user exported one) makes
/// `cd rel` search other directories first (`CDPATH=~ ; cd .ssh`).
fn cdpath_inherited(value: Option<&std::ffi::OsStr>) -> bool {
    value.is_some_and(|v| !v.is_empty())
}

impl Scope {
    fn new(cwd: PathBuf) -> Self {
        Scope {
            cwd: Some(cwd),
            oldpwd: None,
            stack: Some(Vec::new()),
            home_known: true,
            cdpath_set: cdpath_inherited(std::env::var_os("CDPATH").as_deref()),
            vars: HashMap::new(),
        }
    }

    /// Whether variable `name`, read in arithmetic, is known to hold no code.
    fn arith_safe_name(&self, name: &str) -> bool {
        let name = name
            .trim_start_matches('$')
            .trim_start_matches('{')
            .trim_end_matches('}');
        if name.bytes().all(|b| b.is_ascii_digit()) && !name.is_empty() {
            return true;
        }
        if matches!(
            name,
            "#" | "?"
                | "$"
                | "!"
                | "RANDOM"
                | "SRANDOM"
                | "SECONDS"
                | "LINENO"
                | "BASHPID"
                | "PPID"
                | "UID"
                | "EUID"
                | "EPOCHSECONDS"
                | "OPTIND"
        ) && !self.vars.contains_key(name)
        {
            return true;
        }
        matches!(self.vars.get(name), Some(Var::Number))
    }
}

/// One walk of a recursive read: the directory, the globs it skips and
/// keeps, and whether it reads through links.
pub(crate) type WalkKey = (PathBuf, Vec<String>, Vec<String>, bool);

pub(crate) struct Analyzer<'c, 'l> {
    pub(crate) ctx: &'c ShellContext<'l>,
    pub(crate) out: Vec<ShellRequest>,
    /// Set once a variable that loads code (`PATH`, `LD_PRELOAD`) is assigned:
    /// every later command is at least `execute`.
    tainted: Option<String>,
    /// A floor from an enclosing wrapper (`sudo bash -c '…'`).
    floor: Option<(Risk, String)>,
    /// How many pieces of shell code deep (`bash -c` in `bash -c`).
    depth: usize,
    /// How many constructs deep the walk is, across nested code.
    nesting: usize,
    /// Names defined in this command as functions, aliases or hashed paths:
    /// calling one is never the system command (`:() { … }; :`).
    redefined: HashSet<String>,
    /// `lstat`/`readlink` answers for this analysis only.
    pub(crate) paths: PathCache,
    /// Secrets found below each directory a recursive reader walks, shared by
    /// every part of the command.
    pub(crate) walk_cache: HashMap<WalkKey, Vec<PathBuf>>,
    /// Entries left for recursive-read walks in this analysis.
    pub(crate) walk_budget: usize,
    /// Whether plain lines skip the grammar (see [`plain`]).
    plain_reader: bool,
    /// Past this, the analysis stops: one opaque request.
    deadline: Instant,
    timed_out: bool,
    /// Inside [`Analyzer::fallback_pieces`]: no second fallback.
    in_fallback: bool,
    /// The process's `PATH`, read once per analysis (for
    /// [`super::program::shadowing_program`]).
    path_var: std::cell::OnceCell<Option<std::ffi::OsString>>,
    /// Where in `out` the git commands judged from the configuration git
    /// would read at decision time are: see
    /// [`Analyzer::writes_void_git_surveys`].
    git_surveyed: Vec<usize>,
    /// While judging a file a network command reads and sends (`curl -d
    /// @FILE`, `-T FILE`): the reasons say so.
    pub(crate) sending: bool,
    /// The configuration surveys made in this analysis, by the invocation
    /// they answer: `git status && git log` reads the same files once.
    git_config_seen: Vec<(
        crate::repo_config::GitInvocation,
        crate::repo_config::RepoConfig,
    )>,
}

pub(crate) fn analyze_top(
    command: &str,
    ctx: &ShellContext<'_>,
    plain_reader: bool,
) -> Vec<ShellRequest> {
    analyze_with_budget(command, ctx, plain_reader, BUDGET)
}

pub(crate) fn analyze_with_budget(
    command: &str,
    ctx: &ShellContext<'_>,
    plain_reader: bool,
    budget: Duration,
) -> Vec<ShellRequest> {
    let mut a = Analyzer {
        plain_reader,
        ctx,
        out: Vec::new(),
        tainted: None,
        floor: None,
        depth: 0,
        nesting: 0,
        redefined: HashSet::new(),
        paths: PathCache::default(),
        walk_cache: HashMap::new(),
        walk_budget: super::command_paths::WALK_BUDGET,
        deadline: Instant::now() + budget,
        timed_out: false,
        in_fallback: false,
        sending: false,
        path_var: std::cell::OnceCell::new(),
        git_surveyed: Vec::new(),
        git_config_seen: Vec::new(),
    };
    let mut scope = Scope::new(ctx.cwd.clone());
    if command.trim().is_empty() {
        a.opaque_whole(command, "the command is empty", &scope);
    } else if command.contains('\0') {
        a.opaque_whole(command, "the command contains a NUL byte", &scope);
    } else if command.len() > MAX_COMMAND_BYTES {
        a.opaque_whole(
            command,
            &format!(
                "the command is {} bytes long; the analyser reads at most {MAX_COMMAND_BYTES}",
                command.len()
            ),
            &scope,
        );
    } else {
        a.code(command, &mut scope);
        if a.timed_out || Instant::now() > a.deadline {
            a.out.clear();
            a.timed_out = false;
            a.opaque_whole(command, TOO_COMPLEX, &Scope::new(ctx.cwd.clone()));
            return a.out;
        }
        a.writes_void_git_surveys();
        if a.out.is_empty() {
            // Only comments or blank lines: runs nothing.
            a.push(
                PermissionRequest::command("bash", command.trim(), Risk::Read),
                false,
                "runs nothing (comments only)".into(),
                &scope,
            );
        }
    }
    dedupe(a.out)
}

impl Analyzer<'_, '_> {
    fn out_of_time(&mut self) -> bool {
        if !self.timed_out && Instant::now() > self.deadline {
            self.timed_out = true;
        }
        self.timed_out
    }

    /// Parses and walks a piece of shell code (the top level or `bash -c` text).
    fn code(&mut self, source: &str, scope: &mut Scope) {
        if self.depth > MAX_DEPTH {
            self.opaque_whole(source, "shell code nested too deeply", scope);
            return;
        }
        if self.out_of_time() {
            return;
        }
        if let Some(pipelines) = self.plain_reader.then(|| plain::split(source)).flatten() {
            let items = plain::items(source, pipelines);
            self.run(&items, scope);
            return;
        }
        // tree-sitter-bash splits a word at `\`+newline; bash joins it first.
        let joined = words::join_continuations(source);
        let source: &str = &joined;
        let Some(tree) = parse(source) else {
            self.opaque_whole(source, "the parser could not read the command", scope);
            return;
        };
        let root = tree.root_node();
        let room = MAX_NESTING.saturating_sub(self.nesting);
        match grammar::validate(root, source, room, Some(self.deadline)) {
            Err(grammar::Unwalkable::TooComplex) => {
                self.timed_out = true;
                return;
            }
            Err(e) => {
                self.opaque_whole(source, &e.describe(MAX_NESTING), scope);
                return;
            }
            Ok(Some(syntax)) => self.opaque_whole(source, &syntax, scope),
            Ok(None) => {}
        }
        let mut script = ir::lower(root, source);
        drop(tree);
        self.redefined.extend(script.redefined.iter().cloned());
        ir::mark_redefined(&mut script.items, &self.redefined);
        self.run(&script.items, scope);
    }

    /// Runs the items of a description in order.
    fn run(&mut self, items: &[Item], scope: &mut Scope) {
        for item in items {
            if self.out_of_time() {
                return;
            }
            match item {
                Item::Command(c) => self.simple(c, scope),
                Item::Arithmetic {
                    resource,
                    names,
                    assigns,
                } => {
                    if let Some(bad) = names.iter().find(|n| !scope.arith_safe_name(n)) {
                        self.opaque_whole(
                            resource,
                            &format!(
                                "arithmetic reads `{bad}`, whose value is only known at run time (a subscript in it would run code)"
                            ),
                            scope,
                        );
                    }
                    for a in assigns {
                        self.taint_if_loads_code(a);
                        scope.vars.insert(a.clone(), Var::Number);
                    }
                }
                Item::Loop { var, values } => {
                    let mut value = Var::Number;
                    for v in values {
                        let w = self.eval(v, scope);
                        if !w.known || (w.unquoted && has_glob_chars(&w.text)) {
                            value = Var::Unknown;
                        } else if value == Var::Number && !is_integer(&w.text) {
                            value = Var::Text(w.text);
                        }
                    }
                    self.taint_if_loads_code(var);
                    scope.vars.insert(var.clone(), value);
                }
                Item::Isolated(inner) => {
                    self.nesting += 1;
                    self.run(inner, &mut scope.clone());
                    self.nesting -= 1;
                }
                Item::Unknown { text, why } => self.opaque_whole(text, why, scope),
                Item::Code(code) => {
                    self.depth += 1;
                    self.nesting += 1;
                    self.code(code, &mut scope.clone());
                    self.nesting -= 1;
                    self.depth -= 1;
                }
            }
        }
    }

    /// A command the grammar could not read exactly is opaque; its pieces,
    /// split naively on lines, operators and keywords, are judged as well, so
    /// that what it would run (`rm -rf`, a secret, the network) still raises
    /// it: this only adds requests, so the answer never gets weaker than the
    /// opaque `ask`. Every request it adds is opaque (never saved).
    fn fallback_pieces(&mut self, source: &str, scope: &Scope) {
        if self.in_fallback || source.len() > FALLBACK_MAX_BYTES {
            return;
        }
        self.in_fallback = true;
        let first = self.out.len();
        for piece in naive_pieces(source).into_iter().take(FALLBACK_MAX_PIECES) {
            if self.out_of_time() {
                break;
            }
            self.depth += 1;
            self.code(piece, &mut scope.clone());
            self.depth -= 1;
        }
        // The naive pieces can split inside quotes and lose an operand: every
        // word of the raw text that names a path is judged as a read too, so a
        // credential named anywhere in an unreadable line is still denied.
        for token in opaque_tokens(source).take(FALLBACK_MAX_TOKENS) {
            if self.out_of_time() {
                break;
            }
            self.opaque_token(token, scope);
        }
        // And every expansion it writes: `$GITHUB_TOKEN`, `${!k}`, `${!AWS*}`.
        for (var, text) in raw_expansions(source).into_iter().take(FALLBACK_MAX_TOKENS) {
            self.secret_var(&var, &text, scope);
        }
        for r in &mut self.out[first..] {
            r.opaque = true;
            r.request.save_pattern = None;
        }
        self.in_fallback = false;
    }

    /// One opaque request for `source` (at least `ask`, never saved), and
    /// its pieces judged as well (see [`Analyzer::fallback_pieces`]).
    fn opaque_whole(&mut self, source: &str, why: &str, scope: &Scope) {
        let resource: String = source.chars().take(4096).collect();
        self.push(
            PermissionRequest::command("bash", resource, Risk::Execute),
            true,
            format!("opaque: {why}"),
            scope,
        );
        if !self.timed_out {
            self.fallback_pieces(source, scope);
        }
    }

    /// The word the shell passes for `w`, as far as it is known here; secret
    /// variables it expands are reported as credential requests.
    pub(crate) fn eval(&mut self, w: &IrWord, scope: &Scope) -> Word {
        let mut word = Word {
            text: String::new(),
            known: true,
            ansi_c: false,
            unquoted: w.unquoted(),
        };
        for (i, p) in w.pieces.iter().enumerate() {
            word.ansi_c |= p.ansi_c;
            match p.origin {
                Origin::Literal if i == 0 && p.text.starts_with('~') => {
                    match self.tilde(&p.text, scope) {
                        Some(t) => word.text.push_str(&t),
                        None => {
                            word.known = false;
                            word.text.push_str(&p.text);
                        }
                    }
                }
                Origin::Literal | Origin::Quoted => word.text.push_str(&p.text),
                Origin::Expanded => {
                    let var = p.var.as_deref().unwrap_or("");
                    self.secret_var(var, &p.text, scope);
                    let value = if p.plain_var {
                        self.var_value(var, scope)
                    } else {
                        None
                    };
                    match value {
                        Some(v) => word.text.push_str(&v),
                        None => {
                            word.known = false;
                            word.text.push_str(&p.text);
                        }
                    }
                }
                Origin::Substituted | Origin::Unknown => {
                    if let Some(var) = p.var.as_deref() {
                        self.secret_var(var, &p.text, scope);
                    }
                    if p.text.starts_with("${") && p.text.contains("@P") {
                        self.opaque_whole(
                            &p.text,
                            "`${x@P}` expands the variable as a prompt, which runs the commands in it",
                            scope,
                        );
                    }
                    word.known = false;
                    word.text.push_str(&p.text);
                }
            }
        }
        word
    }

    /// A variable's value when this line knows it.
    fn var_value(&self, var: &str, scope: &Scope) -> Option<String> {
        match var {
            "HOME" if scope.home_known && !scope.vars.contains_key("HOME") => {
                Some(self.ctx.home.to_string_lossy().into_owned())
            }
            "PWD" if !scope.vars.contains_key("PWD") => {
                scope.cwd.as_ref().map(|c| c.to_string_lossy().into_owned())
            }
            "OLDPWD" if !scope.vars.contains_key("OLDPWD") => scope
                .oldpwd
                .as_ref()
                .map(|c| c.to_string_lossy().into_owned()),
            _ => None,
        }
    }

    /// `~`, `~/…`, `~+`, `~-`, `~user`: the directory, or `None` when unknown.
    fn tilde(&self, text: &str, scope: &Scope) -> Option<String> {
        let (head, tail) = match text.find('/') {
            Some(at) => (&text[..at], &text[at..]),
            None => (text, ""),
        };
        let dir = match head {
            "~" => scope.home_known.then(|| self.ctx.home.clone())?,
            "~+" => scope.cwd.clone()?,
            "~-" => scope.oldpwd.clone()?,
            // `~user`, `~+2`: another home or the directory stack.
            _ => return None,
        };
        Some(format!("{}{tail}", dir.to_string_lossy()))
    }

    /// Expanding a variable whose name looks like a secret (`$OPENAI_API_KEY`),
    /// or listing names by prefix (`${!AWS*}`), or reading one indirectly
    /// (`${!ref}`), touches a credential.
    ///
    /// Any other variable the environment exports and the sandbox's
    /// allowlist does not name ([`sandbox_env_allows`]) is at least `ask`
    /// where the command runs with that environment
    /// ([`super::ShellContext::inherited_env`]), and `credential` when its
    /// value is a connection string with a password.
    fn secret_var(&mut self, var: &str, text: &str, scope: &Scope) {
        let indirect = var.starts_with('!');
        let from_env = !indirect && !scope.vars.contains_key(var) && inherited(var);
        let password = from_env && std::env::var(var).is_ok_and(|v| value_holds_password(&v));
        if !indirect && !password && !is_default_secret_name(var) {
            if from_env && self.ctx.inherited_env && !sandbox_env_allows(var, &[]) {
                self.push(
                    PermissionRequest::path("read", format!("${var}"), Risk::Read),
                    true,
                    format!(
                        "`{text}` expands {var}, which the environment exports and the \
                         sandbox's allowlist does not name: here the command runs with \
                         that environment, so it may print a secret"
                    ),
                    scope,
                );
            }
            return;
        }
        let why = if indirect {
            format!("`{text}` expands variables chosen at run time, secrets included")
        } else if password {
            format!("`{text}` expands {var}, whose value is a connection string with a password")
        } else {
            format!("`{text}` expands {var}, a variable that holds a secret")
        };
        self.push(
            PermissionRequest::path(
                "read",
                format!("${}", var.trim_start_matches('!')),
                Risk::Credential,
            ),
            false,
            why,
            scope,
        );
    }

    /// The words of a command as the shell passes them: each evaluated, and
    /// unquoted known words brace-expanded (`{rm,-rf,src}` runs `rm -rf src`).
    fn words(&mut self, c: &SimpleCommand, scope: &Scope) -> Vec<Word> {
        let mut out = Vec::with_capacity(c.words.len());
        for w in &c.words {
            let word = self.eval(w, scope);
            if word.known && word.unquoted && word.text.contains('{') {
                match brace_expand(&word.text) {
                    Some(texts) => {
                        for text in texts {
                            out.push(Word {
                                text,
                                ..word.clone()
                            });
                        }
                    }
                    None => {
                        self.opaque_whole(
                            &c.resource,
                            &format!(
                                "a brace expansion makes more than {} words",
                                super::MAX_BRACE_WORDS
                            ),
                            scope,
                        );
                        out.push(Word {
                            known: false,
                            ..word
                        });
                    }
                }
            } else {
                out.push(word);
            }
        }
        out
    }

    /// One simple command.
    fn simple(&mut self, c: &SimpleCommand, scope: &mut Scope) {
        if c.across_lines {
            // bash ends a command at an unquoted newline; if the grammar read
            // one command across it, its reading cannot be trusted.
            self.opaque_whole(
                &c.resource,
                "the parser read one command across a line break",
                scope,
            );
        }
        // Assignments before the name (or alone).
        let mut env_floor: Option<String> = None;
        let mut prefix_words: Vec<String> = Vec::new();
        let mut assigned: Vec<(String, Var)> = Vec::new();
        for a in &c.assignments {
            if loads_code(&a.name) {
                env_floor = Some(format!(
                    "setting {} makes the program load or run other code",
                    a.name
                ));
            } else if !env_is_harmless(&a.name) && env_floor.is_none() && !c.words.is_empty() {
                env_floor = Some(format!(
                    "setting {} may change what the program reads or runs",
                    a.name
                ));
            }
            let value = match &a.value {
                Some(v) => {
                    let only_arith = v.pieces.len() == 1 && v.raw.starts_with("$((");
                    let w = self.eval(v, scope);
                    if only_arith {
                        Var::Number
                    } else if !w.known {
                        Var::Unknown
                    } else if is_integer(&w.text) {
                        Var::Number
                    } else {
                        Var::Text(w.text)
                    }
                }
                None => {
                    for e in &a.elements {
                        let w = self.eval(e, scope);
                        // `a=([x]=1)`: the key of an indexed array is
                        // arithmetic; a variable holding `b[$(cmd)]` runs
                        // the code in it (an associative array's literal
                        // key is not told apart: not proven either).
                        let key = w
                            .text
                            .strip_prefix('[')
                            .and_then(|k| k.split_once("]=").or_else(|| k.split_once("]+=")))
                            .map(|(k, _)| k.to_string());
                        if let Some(key) = key {
                            let key_word = Word {
                                text: key.clone(),
                                known: w.known,
                                ansi_c: false,
                                unquoted: false,
                            };
                            if !self.arith_safe(&key_word, scope) {
                                self.opaque_whole(
                                    &c.resource,
                                    &format!(
                                        "the array key `[{key}]` is evaluated as arithmetic, with a value only known at run time"
                                    ),
                                    scope,
                                );
                            }
                        }
                    }
                    Var::Unknown
                }
            };
            let value = if a.subscript.is_some() {
                Var::Unknown
            } else {
                value
            };
            assigned.push((a.name.clone(), value));
            prefix_words.push(a.raw.clone());
        }
        let stdin: Vec<String> = c
            .redirects
            .iter()
            .filter_map(|r| match &r.target {
                Target::Heredoc { body, .. } => Some(body.clone()),
                Target::Herestring(w) => Some(w.raw.clone()),
                Target::File(_) => None,
            })
            .collect();
        // Redirects apply in the directory the command starts in.
        for r in &c.redirects {
            match &r.target {
                Target::File(t) => {
                    let word = self.eval(t, scope);
                    self.redirect_target(&r.op, &word, scope);
                }
                // Its expansions happen (`<<<"$SECRET"`).
                Target::Herestring(w) => {
                    let _ = self.eval(w, scope);
                }
                Target::Heredoc { .. } => {}
            }
        }
        if c.form == Form::Plain && c.words.is_empty() {
            self.assignments_only(c, env_floor, assigned, scope);
            return;
        }
        if c.form == Form::Test {
            // No brace expansion or word splitting inside `[[ ]]`.
            let words: Vec<Word> = c.words.iter().map(|w| self.eval(w, scope)).collect();
            self.test(c, &words, scope);
            return;
        }
        let words = self.words(c, scope);
        if let Some(first) = words.first().filter(|w| w.known) {
            if crate::classify::is_assignment(&first.text) {
                // `NAME=value` where the program's name goes: the grammar
                // misread the line (`! { A='x y' git fetch; }`); bash would
                // take it as an assignment and run what follows.
                self.opaque_whole(
                    &c.resource,
                    &format!(
                        "the parser read the assignment `{}` as a command",
                        first.text
                    ),
                    scope,
                );
                return;
            }
        }
        if let Some(first) = words.first().filter(|w| w.known && w.unquoted) {
            if RESERVED_WORDS.contains(&first.text.as_str()) {
                // A keyword where a command name goes: the grammar misread
                // the line (`! for …` reads as commands `for`, `do`…).
                self.opaque_whole(
                    &c.resource,
                    &format!("the parser read the keyword `{}` as a command", first.text),
                    scope,
                );
                return;
            }
        }
        match c.form {
            Form::Test => {}
            Form::Declaration | Form::Unset => {
                self.declaration(c, &words, scope);
                for (name, value) in assigned {
                    self.set_var(&name, value, scope);
                }
            }
            Form::Plain => self.plain_command(c, words, prefix_words, env_floor, stdin, scope),
        }
    }

    /// A loop, an arithmetic expression or a declaration setting a variable
    /// that makes later programs load other code or changes how the shell
    /// runs them (`for PATH in ./scripts`, `((GLOBIGNORE=1))`): what follows
    /// is not proven.
    fn taint_if_loads_code(&mut self, name: &str) {
        if loads_code(name) {
            self.tainted = Some(format!(
                "setting {name} makes later programs load or run other code, or changes how the shell runs them"
            ));
        } else if lasting_assignment_matters(name) {
            self.tainted = Some(format!(
                "setting {name}, which the shell inherited from the environment and exports to every later program, may change what they read or run"
            ));
        }
    }

    fn set_var(&mut self, name: &str, value: Var, scope: &mut Scope) {
        self.taint_if_loads_code(name);
        match name {
            "HOME" => scope.home_known = false,
            "CDPATH" => scope.cdpath_set = true,
            "OLDPWD" => scope.oldpwd = None,
            "PWD" => {}
            _ => {}
        }
        scope.vars.insert(name.to_string(), value);
    }

    fn assignments_only(
        &mut self,
        c: &SimpleCommand,
        env_floor: Option<String>,
        assigned: Vec<(String, Var)>,
        scope: &mut Scope,
    ) {
        // Only assignments: `FOO=1`, `PATH=/tmp/x:$PATH`.
        let (risk, reason) = match &env_floor {
            Some(why) => {
                self.tainted = Some(why.clone());
                (Risk::Execute, why.clone())
            }
            None if c.redirects.is_empty() => (Risk::Read, "sets a shell variable".to_string()),
            None => (
                Risk::Read,
                "opens its redirects and runs nothing".to_string(),
            ),
        };
        for (name, value) in assigned {
            self.set_var(&name, value, scope);
        }
        let save = if risk == Risk::Read {
            exact(&c.resource)
        } else {
            None
        };
        self.push(
            PermissionRequest::command("bash", c.resource.clone(), risk).with_save_pattern(save),
            false,
            reason,
            scope,
        );
    }

    /// `[[ … ]]`: runs nothing, but `-v NAME` and the arithmetic comparisons
    /// evaluate their operands.
    fn test(&mut self, c: &SimpleCommand, words: &[Word], scope: &Scope) {
        let mut why: Option<String> = None;
        for (i, w) in words.iter().enumerate() {
            let op = w.text.as_str();
            if matches!(op, "-v" | "-R") {
                if let Some(n) = words.get(i + 1) {
                    if !n.known
                        || builtins::holds_code(&n.text)
                        || subscript_of(&n.text).is_some_and(|s| !self.arith_safe(&s, scope))
                    {
                        why = Some(format!(
                            "`[[ {op} {} ]]` evaluates a subscript, which runs code",
                            n.text
                        ));
                    }
                }
            }
            if matches!(op, "-eq" | "-ne" | "-lt" | "-le" | "-gt" | "-ge") {
                for side in [i.checked_sub(1), Some(i + 1)].into_iter().flatten() {
                    if let Some(n) = words.get(side) {
                        let safe_var = c.words.get(side).is_some_and(|w| {
                            w.pieces.iter().all(|p| {
                                p.origin == Origin::Expanded
                                    && p.plain_var
                                    && p.var.as_deref().is_some_and(|v| scope.arith_safe_name(v))
                            })
                        });
                        if !safe_var && !self.arith_safe(n, scope) {
                            why = Some(format!(
                                "`[[ … {op} … ]]` evaluates `{}` as arithmetic, which runs code in subscripts and variables",
                                n.text
                            ));
                        }
                    }
                }
            }
        }
        match why {
            Some(why) => self.opaque_whole(&c.resource, &why, scope),
            None => self.push(
                PermissionRequest::command("bash", c.resource.clone(), Risk::Read)
                    .with_save_pattern(None),
                false,
                "tests a condition".into(),
                scope,
            ),
        }
    }

    /// Whether an evaluated word, read as arithmetic, is known to hold no code.
    fn arith_safe(&self, w: &Word, scope: &Scope) -> bool {
        if !w.known || builtins::holds_code(&w.text) {
            return false;
        }
        // Every identifier in it is a variable read as arithmetic, except
        // the target of a plain `=` (`let n=1+2`), which is only set.
        let bytes = w.text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let b = bytes[i];
            if b.is_ascii_digit() {
                // A number, with its base and digits (`16#ff`, `0x1f`).
                while i < bytes.len()
                    && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'#' || bytes[i] == b'_')
                {
                    i += 1;
                }
                continue;
            }
            if b.is_ascii_alphabetic() || b == b'_' {
                let start = i;
                while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                    i += 1;
                }
                let assigned = bytes.get(i) == Some(&b'=') && bytes.get(i + 1) != Some(&b'=');
                if !assigned && !scope.arith_safe_name(&w.text[start..i]) {
                    return false;
                }
                if assigned && lasting_assignment_matters(&w.text[start..i]) {
                    // `GLOBIGNORE=1` turns on dotglob; `PATH=1` moves lookup.
                    return false;
                }
                continue;
            }
            i += 1;
        }
        true
    }

    fn declaration(&mut self, c: &SimpleCommand, words: &[Word], scope: &mut Scope) {
        let argv: Vec<String> = words.iter().map(|w| w.text.clone()).collect();
        let mut floor: Option<String> = None;
        let exported = words.first().is_some_and(|w| w.text == "export")
            || words
                .iter()
                .any(|w| w.text.starts_with('-') && w.text.contains('x'));
        for a in &c.assignments {
            if loads_code(&a.name) || (exported && !env_is_harmless(&a.name)) {
                floor = Some(format!(
                    "setting {} makes later programs load or run other code",
                    a.name
                ));
            }
        }
        let name = argv.first().cloned().unwrap_or_default();
        let arith = |w: &Word| self.arith_safe(w, scope);
        let code = builtins::judge(&name, &words[1.min(words.len())..], &arith);
        let verdict = crate::classify::classify(&argv);
        let (mut risk, mut reason) = (verdict.risk, verdict.reason);
        if let Some(why) = floor {
            self.tainted = Some(why.clone());
            if risk < Risk::Execute {
                risk = Risk::Execute;
                reason = why;
            }
        }
        if let Some(why) = code {
            self.opaque_whole(&c.resource, &why, scope);
        }
        if let Some(why) = prints_secret(&name, &words[1.min(words.len())..]) {
            risk = Risk::Credential;
            reason = why;
        }
        let unknown = words.iter().any(|w| !w.known);
        let save = if risk < Risk::Destructive && !unknown {
            let words: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
            save_pattern(&words, &c.resource, risk)
        } else {
            None
        };
        self.push(
            PermissionRequest::command("bash", c.resource.clone(), risk).with_save_pattern(save),
            false,
            reason,
            scope,
        );
        // Names it sets without a value in this line.
        for w in words.iter().skip(1) {
            if w.known && !w.text.starts_with('-') && !w.text.contains('=') {
                if exported && !env_is_harmless(&w.text) {
                    // `export NAME` hands a value the line set to every
                    // later program (`X=./ub; export X; pip list`).
                    self.tainted = Some(format!(
                        "`{name}` exports {}, which may change what later programs read or run",
                        w.text
                    ));
                }
                if c.form == Form::Unset {
                    // `unset PATH` makes bash search `.`; an unset inherited
                    // variable changes what later programs see.
                    self.taint_if_loads_code(&w.text);
                    scope.vars.remove(&w.text);
                    if w.text == "CDPATH" {
                        // Unset: `cd rel` is plain again.
                        scope.cdpath_set = false;
                    }
                } else {
                    self.set_var(&w.text, Var::Unknown, scope);
                }
            }
        }
    }

    /// A plain simple command: wrappers unwrapped, classified, raised by what
    /// the line set up before it.
    fn plain_command(
        &mut self,
        c: &SimpleCommand,
        words: Vec<Word>,
        prefix_words: Vec<String>,
        env_floor: Option<String>,
        stdin: Vec<String>,
        scope: &mut Scope,
    ) {
        let mut part = argv::analyse(words, self.depth);
        if c.words
            .first()
            .is_some_and(|w| w.pieces.iter().any(|p| p.ansi_c))
        {
            part.opaque = Some("opaque: the command name is obfuscated with ANSI-C quoting".into());
            part.raise(Risk::Execute, "obfuscated command name");
        }
        let glob_name = part
            .head
            .first()
            .filter(|first| first.known && first.unquoted && is_glob(&first.text))
            .map(|first| first.text.clone());
        if let Some(name) = glob_name {
            part.opaque = Some(format!(
                "opaque: the command name `{name}` is a glob the shell expands at run time"
            ));
            part.raise(Risk::Execute, "the command name is a glob");
        }
        if c.name_redefined
            || self.redefined.contains(&part.name)
            || part
                .head
                .first()
                .is_some_and(|w| self.redefined.contains(&w.text))
        {
            part.raise(
                Risk::Execute,
                format!(
                    "calls `{}`, which this command redefines (a function, an alias or a hashed path)",
                    part.name
                ),
            );
        }
        if part.name == "trap" {
            self.trap_code(&mut part);
        }
        // Builtins that evaluate code hidden in their arguments.
        {
            let arith = |w: &Word| self.arith_safe(w, scope);
            if let Some(why) = builtins::judge(&part.name, &part.args, &arith) {
                part.opaque = Some(format!("opaque: {why}"));
                part.raise(Risk::Execute, "it evaluates code in an argument");
            }
        }
        if let Some(why) = prints_secret(&part.name, &part.args) {
            part.raise(Risk::Credential, why);
        }
        if matches!(part.name.as_str(), "printenv") {
            let secret = part
                .args
                .iter()
                .find(|a| !a.known || is_default_secret_name(&a.text))
                .map(|a| a.text.clone());
            if let Some(name) = secret {
                part.raise(
                    Risk::Credential,
                    format!("`printenv {name}` prints a variable that holds a secret"),
                );
            }
        }
        if SQL_CLIENTS.contains(&part.name.as_str())
            && stdin.iter().any(|t| sql_destroys(&t.to_ascii_uppercase()))
        {
            part.raise(
                Risk::Destructive,
                format!("{} is fed SQL that drops or truncates data", part.name),
            );
        }
        if matches!(
            part.name.as_str(),
            "export" | "declare" | "typeset" | "readonly" | "local"
        ) {
            // A declaration the grammar read as a plain command (`! export
            // X=1`, `command export X=1`).
            let exported = part.name == "export"
                || part
                    .args
                    .iter()
                    .any(|w| w.text.starts_with('-') && w.text.contains('x'));
            for w in part.args.clone() {
                let Some((name, _)) = w.text.split_once('=') else {
                    if exported && !w.text.starts_with('-') && !env_is_harmless(&w.text) {
                        let why = format!(
                            "`{}` exports {}, which may change what later programs read or run",
                            part.name, w.text
                        );
                        self.tainted = Some(why.clone());
                        part.raise(Risk::Execute, why);
                    }
                    continue;
                };
                let name = name.split(['[', '+']).next().unwrap_or(name);
                if !w.known || loads_code(name) || (exported && !env_is_harmless(name)) {
                    let why = format!(
                        "`{}` sets {name}, which makes later programs load or run other code",
                        part.name
                    );
                    self.tainted = Some(why.clone());
                    part.raise(Risk::Execute, why);
                }
                self.set_var(name, Var::Unknown, scope);
            }
        }
        if sets_code_loading_var(&part) {
            let why = format!(
                "`{}` sets a variable that makes later programs load other code",
                part.name
            );
            self.tainted = Some(why.clone());
            part.raise(Risk::Execute, why);
        }
        if let Some(why) = env_floor.or_else(|| self.tainted.clone()) {
            part.raise(Risk::Execute, why);
        }
        if let Some(w) = prefix_words.iter().find(|w| points_at_a_host(w)) {
            part.raise(
                Risk::Network,
                format!("`{w}` points the program at another host"),
            );
        }
        if let Some((risk, why)) = self.floor.clone() {
            part.raise(risk, why);
        }
        self.names_set(&part, scope);
        let effect = c.dir_effect();
        self.finish_part(&mut part, c.resource.clone(), prefix_words, scope);
        self.track_cd(&effect, &part, scope);
    }

    /// `trap [-lp] [--] [CODE] SIGNAL…`: CODE runs later, in this shell, and
    /// is analysed as code (`trap -- 'cmd' EXIT` too); code only known at run
    /// time is opaque.
    fn trap_code(&mut self, part: &mut Part) {
        let mut args = part.args.iter().peekable();
        while let Some(w) = args.peek() {
            if !w.known {
                break;
            }
            if w.text == "--" {
                args.next();
                break;
            }
            if w.text.starts_with('-') && w.text.len() > 1 {
                if w.text.contains(['l', 'p']) {
                    // Lists or prints traps.
                    return;
                }
                args.next();
                continue;
            }
            break;
        }
        let Some(code) = args.next() else {
            return;
        };
        if args.peek().is_none()
            && code.known
            && code.text.bytes().all(|b| b.is_ascii_alphanumeric())
        {
            // `trap SIGNAL`: resets it.
            return;
        }
        if !code.known {
            part.opaque = Some(format!(
                "opaque: `trap` is given code only known at run time (`{}`)",
                code.text
            ));
            part.raise(Risk::Execute, "it cannot be analysed");
        } else if code.text != "-" && !part.code.contains(&code.text) {
            part.code.push(code.text.clone());
        }
    }

    /// Variables a builtin sets (`read x`, `printf -v x`, `let x=1`).
    fn names_set(&mut self, part: &Part, scope: &mut Scope) {
        let sets = matches!(
            part.name.as_str(),
            "read" | "mapfile" | "readarray" | "printf" | "getopts" | "let" | "wait"
        );
        if !sets {
            return;
        }
        for w in &part.args {
            let name = w.text.split(['=', '[', '+']).next().unwrap_or("");
            if !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
                let value = if part.name == "let" {
                    Var::Number
                } else {
                    Var::Unknown
                };
                self.set_var(name, value, scope);
            }
        }
    }

    fn finish_part(
        &mut self,
        part: &mut Part,
        resource: String,
        prefix_words: Vec<String>,
        scope: &mut Scope,
    ) {
        // The directory the command itself runs in (`env -C DIR cmd`): the
        // line's own unless a wrapper moves it (a copy only then).
        let moved_scope;
        let run_scope: &Scope = match part.chdir.clone() {
            Some(dir) => {
                let mut moved = scope.clone();
                moved.cwd = self.resolve_dir(&dir, scope);
                // The directory it moves to is judged like any path it reads.
                self.path_argument(&dir, true, part.risk, false, scope);
                moved_scope = moved;
                &moved_scope
            }
            None => scope,
        };
        if part.risk < Risk::Execute {
            let path_var = self.path_var.get_or_init(|| std::env::var_os("PATH"));
            let shadowed = std::iter::once(part.name.as_str())
                .chain(super::program::helper_programs(&part.name).iter().copied())
                .find_map(|name| {
                    super::program::shadowing_program(
                        name,
                        path_var.as_deref(),
                        self.ctx.location,
                        &self.ctx.home,
                        scope.cwd.as_deref(),
                    )
                });
            if let Some(found) = shadowed {
                part.raise(
                    Risk::Execute,
                    format!(
                        "`{}` may run {}, a program the workspace or the home directory controls",
                        part.name,
                        found.display()
                    ),
                );
                part.unknown_args = true;
            }
        }
        if part.paths && run_scope.cwd.is_none() && part.args.iter().any(|w| !is_absolute(&w.text))
        {
            if part.risk < Risk::Execute {
                part.raise(
                    Risk::Execute,
                    "the directory it runs in is only known at run time",
                );
            }
            part.unknown_args = true;
        }
        // A content command is surveyed whatever else raised it: the
        // credentials it prints are requests of their own.
        let mut surveyed = false;
        if part.name == "git" && (part.risk < Risk::Execute || part.tracked.is_some()) {
            surveyed = true;
            // git's own `-C` is followed by the survey: it starts where
            // the command line does.
            let globals = part
                .sub_at
                .map_or(&part.args[..], |at| &part.args[..at.min(part.args.len())]);
            let own_chdir = globals.iter().any(|w| w.text.starts_with("-C"));
            let git_scope = if own_chdir { &*scope } else { run_scope };
            let report = self.git_configuration(part, &prefix_words, git_scope);
            if let Some((pathspecs, why)) = part.tracked.take() {
                self.tracked_content(part, report.as_ref(), pathspecs, &why, run_scope);
            }
        }
        if part.unknown_args && part.paths && part.risk < Risk::Execute {
            // What it reads is not known: never "inside the location".
            part.raise(Risk::Execute, "an argument is only known at run time");
        }
        if let Some((risk, why)) = super::raised::raised(&part.name, part.risk, &part.args) {
            part.raise(risk, why);
        }
        let narrowed =
            super::raised::narrowed(&part.name, part.risk, &part.args).map(|(saving, why)| {
                part.reason = format!("{}; {why}", part.reason);
                saving
            });
        // Shell code given to `bash -c`/`trap` runs with this part's floor.
        if !part.code.is_empty() && part.opaque.is_none() {
            let saved_floor = self.floor.clone();
            if part.risk > Risk::Read {
                self.floor = Some((part.risk, part.reason.clone()));
            }
            self.depth += 1;
            self.nesting += 1;
            for code in std::mem::take(&mut part.code) {
                let mut inner = run_scope.clone();
                self.code(&code, &mut inner);
            }
            self.nesting -= 1;
            self.depth -= 1;
            self.floor = saved_floor;
        }
        let mut judged: Vec<String> = Vec::new();
        if let Some(files) = part.files.take() {
            // The read spec named every file: each is judged as used.
            let looks = crate::classify::LOOKS_AT_ENTRIES.contains(&part.name.as_str());
            for (arg, writes) in files {
                if looks && !writes && self.names_plain_file_here(&arg, run_scope) {
                    // `ls -la .env`: its metadata, not its content.
                    judged.push(arg.text);
                    continue;
                }
                let risk = if writes { Risk::Write } else { Risk::Read };
                self.path_argument(&arg, true, risk.max(part.risk), writes, run_scope);
                judged.push(arg.text);
            }
        } else if part.paths {
            let writes = part.risk >= Risk::Write;
            let network = part.risk >= Risk::Network;
            let mut previous: Option<String> = None;
            for (arg, after_dashes) in path_words(&part.name, &part.args) {
                // A file a network command uploads is read and sent, not written.
                let sent = network && sends_file(previous.as_deref(), &arg.text);
                self.sending = sent;
                self.path_argument(&arg, after_dashes, part.risk, writes && !sent, run_scope);
                self.sending = false;
                previous = Some(arg.text.clone());
                judged.push(arg.text);
            }
        }
        self.colon_secrets(&part.args, &judged, run_scope);
        for (file, writes) in std::mem::take(&mut part.wrapper_files) {
            let risk = if writes { Risk::Write } else { Risk::Read };
            self.path_argument(&file, true, risk, writes, run_scope);
        }
        if part.walks != Walk::None {
            self.walked_secrets(&part.args, part.walks, run_scope);
        }
        if !part.delegates || part.opaque.is_some() {
            let opaque = part.opaque.is_some();
            let save = if opaque || part.unknown_args || part.risk == Risk::Destructive {
                None
            } else {
                let argv: Vec<&str> = prefix_words
                    .iter()
                    .map(String::as_str)
                    .chain(part.words().map(|w| w.text.as_str()))
                    .collect();
                match narrowed {
                    None => save_pattern(&argv, &resource, part.risk),
                    Some(super::raised::Saving::Exact) => {
                        save_pattern(&argv, &resource, part.risk).and_then(|_| exact(&resource))
                    }
                    Some(super::raised::Saving::Never) => None,
                }
            };
            let mut request =
                PermissionRequest::command("bash", resource, part.risk).with_save_pattern(save);
            if let Some(note) = &part.note {
                request = request.with_note(note.clone());
            }
            let reason = part.opaque.clone().unwrap_or_else(|| part.reason.clone());
            if surveyed && !opaque && part.risk < Risk::Execute {
                self.git_surveyed.push(self.out.len());
            }
            self.push(request, opaque, reason, run_scope);
        }
    }

    /// A git command judged below `execute` was judged from the configuration
    /// git would read when the call is judged. Any other part of the same
    /// command line that writes files (a redirect, a writer, a program, a
    /// part that could not be analysed) may create or change that
    /// configuration — a repository's `config`, an include target, a whole
    /// git directory — before git reads it, whatever the order of the parts
    /// (pipelines run together, loops run again). Such a git command is
    /// judged as one that may run a program: asked, unless a person allows it.
    fn writes_void_git_surveys(&mut self) {
        if self.git_surveyed.is_empty() {
            return;
        }
        let surveyed = &self.git_surveyed;
        let writes = self
            .out
            .iter()
            .enumerate()
            .any(|(at, r)| !surveyed.contains(&at) && writes_files(r));
        if !writes {
            return;
        }
        for &at in surveyed {
            let Some(r) = self.out.get_mut(at) else {
                continue;
            };
            if r.request.risk < Risk::Execute {
                r.request.risk = Risk::Execute;
                r.reason = "the command line also writes files, which may create or change \
                            the git configuration this command reads (and the programs it \
                            names) before it runs"
                    .into();
            }
        }
    }

    /// A git command the spec proved read still runs what the repository's
    /// configuration names (`core.fsmonitor`, a pager, an alias…): judged from
    /// the configuration git will read, and the repository it reaches.
    /// The configuration survey, when it was made.
    fn git_configuration(
        &mut self,
        part: &mut Part,
        prefix_words: &[String],
        scope: &Scope,
    ) -> Option<crate::repo_config::RepoConfig> {
        let cwd = scope.cwd.clone()?;
        let globals = part
            .sub_at
            .map_or(&part.args[..], |at| &part.args[..at.min(part.args.len())]);
        if globals.iter().any(|w| !w.known) {
            part.raise(Risk::Execute, "a git option is only known at run time");
            return None;
        }
        let assignments = prefix_words
            .iter()
            .filter_map(|w| w.split_once('='))
            .map(|(k, v)| (k.to_string(), Some(v.to_string())))
            .collect();
        let invocation = crate::repo_config::GitInvocation {
            global_args: globals.iter().map(|w| w.text.clone()).collect(),
            assignments,
            ..crate::repo_config::GitInvocation::new(&cwd, &self.ctx.home)
        };
        // The files read are the same for the same invocation within one
        // analysis (nothing runs between its commands).
        let seen = self
            .git_config_seen
            .iter()
            .find(|(inv, _)| inv.same_survey(&invocation))
            .map(|(_, report)| report.clone());
        let report = match seen {
            Some(report) => report,
            None => {
                let report =
                    crate::repo_config::inspect_with(&invocation, self.ctx.location, &self.paths);
                self.git_config_seen.push((invocation, report.clone()));
                report
            }
        };
        if let Some(why) = report.may_run_program() {
            part.raise(Risk::Execute, why);
            part.unknown_args = true;
        }
        for dir in &report.outside {
            let word = Word {
                text: dir.to_string_lossy().into_owned(),
                known: true,
                ansi_c: false,
                unquoted: false,
            };
            self.path_argument(&word, true, part.risk, false, scope);
        }
        Some(report)
    }

    /// `cd`, `pushd`, `popd`: later relative paths resolve against the new
    /// directory, or are unknown when it is.
    fn track_cd(&mut self, effect: &DirEffect, part: &Part, scope: &mut Scope) {
        if *effect == DirEffect::None {
            // A wrapper around `cd` (`exec cd`…): not followed.
            let name = part
                .words()
                .next()
                .map(|w| crate::classify::command_name(&w.text));
            if matches!(name, Some("cd" | "pushd" | "popd"))
                || part
                    .words()
                    .skip(1)
                    .take(3)
                    .any(|w| matches!(w.text.as_str(), "cd" | "pushd" | "popd"))
                    && matches!(name, Some("exec" | "builtin" | "command" | "eval"))
            {
                scope.cwd = None;
                scope.stack = None;
            }
            return;
        }
        let before = scope.cwd.clone();
        match effect {
            DirEffect::None => {}
            DirEffect::Cd(dir) => {
                scope.cwd = self.cd_target(dir, scope);
            }
            DirEffect::Home => {
                scope.cwd = scope.home_known.then(|| self.ctx.home.clone());
            }
            DirEffect::Previous => scope.cwd = scope.oldpwd.clone(),
            DirEffect::Push(dir) => {
                let target = self.cd_target(dir, scope);
                match (&mut scope.stack, &before) {
                    (Some(stack), Some(cwd)) => stack.push(cwd.clone()),
                    _ => scope.stack = None,
                }
                scope.cwd = target;
            }
            DirEffect::Swap => match scope.stack.as_mut().and_then(|s| s.pop()) {
                Some(top) => {
                    if let (Some(stack), Some(cwd)) = (scope.stack.as_mut(), &before) {
                        stack.push(cwd.clone());
                    }
                    scope.cwd = Some(top);
                }
                None => scope.cwd = None,
            },
            DirEffect::Rotate(_) | DirEffect::Unknown => {
                scope.cwd = None;
                scope.stack = None;
            }
            DirEffect::Pop(None) => match scope.stack.as_mut().and_then(|s| s.pop()) {
                Some(top) => scope.cwd = Some(top),
                None => scope.cwd = None,
            },
            DirEffect::Pop(Some(_)) => {
                // `popd +N`/`-N` removes an entry; `popd +0` changes directory.
                scope.cwd = None;
                scope.stack = None;
            }
        }
        if scope.cwd != before {
            scope.oldpwd = before;
        }
    }

    /// Where `cd DIR` goes: `None` when it depends on run time (an unknown
    /// word, `CDPATH` set in this line for a relative name).
    fn cd_target(&mut self, dir: &IrWord, scope: &Scope) -> Option<PathBuf> {
        let w = self.eval(dir, scope);
        if !w.known {
            return None;
        }
        let explicit = w.text.starts_with('/')
            || w.text == "."
            || w.text == ".."
            || w.text.starts_with("./")
            || w.text.starts_with("../");
        if scope.cdpath_set && !explicit {
            return None;
        }
        self.resolve_dir(&w, scope)
    }

    pub(crate) fn push(
        &mut self,
        request: PermissionRequest,
        opaque: bool,
        reason: String,
        scope: &Scope,
    ) {
        let mut request = request;
        if opaque || request.risk == Risk::Destructive {
            request.save_pattern = None;
        }
        if request.action == "bash" {
            if let Some(cwd) = &scope.cwd {
                request = request.with_cwd(cwd.to_string_lossy());
            }
        }
        self.out.push(ShellRequest {
            request,
            opaque,
            reason,
        });
    }
}

/// The words of a command that may name files, with whether they follow `--`:
/// patterns (`grep PATTERN`, `--exclude=GLOB`, `find -name GLOB`) are not paths.
fn path_words(name: &str, args: &[Word]) -> Vec<(Word, bool)> {
    let pattern_first = PATTERN_FIRST.contains(&name)
        && !args.iter().any(|w| {
            let t = w.text.as_str();
            matches!(t, "-e" | "--regexp" | "-f" | "--file")
                || t.starts_with("--regexp=")
                || t.starts_with("--file=")
        });
    let expression_after_paths = EXPRESSION_AFTER_PATHS.contains(&name);
    let mut out = Vec::new();
    let mut after_dashes = false;
    let mut skipped_pattern = !pattern_first;
    let mut in_expression = false;
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        let t = w.text.as_str();
        if after_dashes {
            if !skipped_pattern {
                skipped_pattern = true;
                continue;
            }
            out.push((w.clone(), true));
            continue;
        }
        if t == "--" {
            after_dashes = true;
            continue;
        }
        if expression_after_paths && (in_expression || t.starts_with('-') || t == "(" || t == "!") {
            // `find PATHS EXPRESSION`: the expression holds patterns; only the
            // files it writes (`-fprint FILE`, `-fls FILE`) are paths.
            in_expression = true;
            if t.starts_with("-fprint") || t == "-fls" {
                if let Some(file) = args.get(i) {
                    out.push((file.clone(), true));
                }
                i += 1;
            }
            continue;
        }
        if t.starts_with('-') && t.len() > 1 {
            let option = t.split('=').next().unwrap_or(t);
            if GLOB_OPTIONS.contains(&option)
                || (PATTERN_FIRST.contains(&name) && SEARCH_OPTIONS.contains(&option))
            {
                if !t.contains('=') {
                    i += 1;
                }
                continue;
            }
            out.push((w.clone(), false));
            continue;
        }
        if !skipped_pattern {
            skipped_pattern = true;
            continue;
        }
        out.push((w.clone(), false));
    }
    out
}

/// Whether the word `text` (after `previous`) of a network command names a
/// file it reads and sends: `@FILE` and `NAME=@FILE` (curl's `-d`,
/// `--data-binary`, `-F`; httpie), or the file of `-T`/`--upload-file`.
fn sends_file(previous: Option<&str>, text: &str) -> bool {
    text.starts_with('@')
        || text.contains("=@")
        || text.starts_with("--upload-file=")
        || (text.starts_with("-T") && text.len() > 2 && !text.starts_with("--"))
        || matches!(previous, Some("-T" | "--upload-file"))
}

/// SQL clients whose stdin is checked for `DROP`/`TRUNCATE`.
const SQL_CLIENTS: &[&str] = &["psql", "mysql", "mariadb", "sqlite3", "duckdb"];

/// Unquoted glob characters in a command name (`/???/r?`, `r[m]`).
fn is_glob(name: &str) -> bool {
    name.contains(['*', '?']) || (name.contains('[') && name.contains(']') && name != "[")
}

/// `printf -v PATH …`, `read PATH`, `mapfile PATH`: assignments in disguise.
/// The subscript of `name[SUB]`, as a word of its own.
pub(crate) fn subscript_of(text: &str) -> Option<Word> {
    let open = text.find('[')?;
    let close = text.rfind(']')?;
    (close > open).then(|| Word {
        text: text[open + 1..close].to_string(),
        known: true,
        ansi_c: false,
        unquoted: false,
    })
}

fn sets_code_loading_var(part: &Part) -> bool {
    matches!(
        part.name.as_str(),
        "printf" | "read" | "mapfile" | "readarray" | "getopts" | "wait"
    ) && part.args.iter().any(|w| {
        // `printf -vNAME`, `NAME[KEY]` (`printf -v 'BASH_CMDS[ls]' ./x`).
        let text = w.text.strip_prefix("-v").unwrap_or(&w.text);
        let name = text.split('[').next().unwrap_or(text);
        w.known && (lasting_assignment_matters(name) || loads_code(&w.text))
    })
}

fn is_absolute(text: &str) -> bool {
    text.starts_with('/') || text.starts_with('~') || text.starts_with('-')
}

/// Whether a request of a command line may change files: a path it writes,
/// a command that writes or does more, or a part that could not be analysed.
fn writes_files(r: &ShellRequest) -> bool {
    r.opaque
        || r.request.action == crate::actions::EDIT
        || (r.request.action == "bash" && r.request.risk >= Risk::Write)
}

/// Merges identical requests (same action, resource, risk and opaqueness),
/// keeping the strictest save pattern. Requests that differ in risk stay apart:
/// merging them by the highest risk could lose a stricter default (`credential`
/// is denied, `destructive` only asked).
fn dedupe(requests: Vec<ShellRequest>) -> Vec<ShellRequest> {
    let mut out: Vec<ShellRequest> = Vec::with_capacity(requests.len());
    // A line makes a handful of requests: a scan beats hashing cloned keys;
    // long scripts get an index.
    let mut seen: Option<HashMap<(String, String, Risk, bool), usize>> =
        (requests.len() > 32).then(HashMap::new);
    for r in requests {
        let at = match &mut seen {
            Some(index) => {
                let key = (
                    r.request.action.clone(),
                    r.request.resource.clone(),
                    r.request.risk,
                    r.opaque,
                );
                match index.get(&key) {
                    Some(&at) => Some(at),
                    None => {
                        index.insert(key, out.len());
                        None
                    }
                }
            }
            None => out.iter().position(|o| {
                o.request.risk == r.request.risk
                    && o.opaque == r.opaque
                    && o.request.action == r.request.action
                    && o.request.resource == r.request.resource
            }),
        };
        match at {
            Some(at) => {
                if r.request.save_pattern.is_none() {
                    out[at].request.save_pattern = None;
                }
            }
            None => out.push(r),
        }
    }
    out
}

/// `declare -p NAME` (and `typeset`, `export`, `readonly`, `local`): prints
/// the variable's value; with a secret-looking or unknown name, a credential.
fn prints_secret(name: &str, args: &[Word]) -> Option<String> {
    if !matches!(
        name,
        "declare" | "typeset" | "export" | "readonly" | "local"
    ) {
        return None;
    }
    let prints = args
        .iter()
        .any(|w| w.known && w.text.starts_with('-') && w.text.contains('p'));
    if !prints {
        return None;
    }
    args.iter()
        .find(|w| !w.text.starts_with('-') && (!w.known || is_default_secret_name(&w.text)))
        .map(|w| {
            format!(
                "`{name} -p {}` prints a variable that holds a secret",
                w.text
            )
        })
}

/// Whether text holds unquoted glob characters.
fn has_glob_chars(text: &str) -> bool {
    text.contains(['*', '?', '['])
}

/// Whether text is an integer the shell's arithmetic reads as a number.
fn is_integer(text: &str) -> bool {
    let t = text.strip_prefix('-').unwrap_or(text);
    !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit())
}

/// The longest command whose pieces [`Analyzer::fallback_pieces`] judges.
const FALLBACK_MAX_BYTES: usize = 64 * 1024;
/// At most this many pieces are judged.
const FALLBACK_MAX_PIECES: usize = 512;

/// `source` split on newlines and the list and pipe operators, with leading
/// keywords and grouping marks (`!`, `{`, `(`, `do`, `then`, `f() {`…) cut
/// off each piece: a rough reading for commands the grammar could not read.
/// A line cut where a command could end or start, as far as can be told
/// without a grammar: at newlines, `;`, `&`, `|`, parentheses, and braces
/// that stand alone as words (a group or a function body) — never inside
/// quotes, after a backslash, or in `${…}` and brace expansions (`-{r,f}`), so
/// each command keeps its words.
fn naive_chunks(source: &str) -> Vec<&str> {
    /// What an open construct is, innermost last.
    #[derive(Clone, Copy, PartialEq)]
    enum Open {
        Double,
        /// `${…}`: its braces are the expansion's.
        Param,
        /// `(…)` or `$(…)`: code again.
        Paren,
    }
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut open: Vec<Open> = Vec::new();
    let mut start = 0;
    let mut i = 0;
    let boundary = |at: usize| at >= bytes.len() || b" \t\n;&|()".contains(&bytes[at]);
    fn cut<'a>(source: &'a str, at: usize, start: &mut usize, out: &mut Vec<&'a str>) {
        out.push(&source[*start..at]);
        *start = at + 1;
    }
    while i < bytes.len() {
        let b = bytes[i];
        let top = open.last().copied();
        if b == b'\\' {
            i += 2;
            continue;
        }
        if b == b'$' && bytes.get(i + 1) == Some(&b'{') {
            open.push(Open::Param);
            i += 2;
            continue;
        }
        if b == b'$' && bytes.get(i + 1) == Some(&b'(') {
            // A command substitution, even inside double quotes: code.
            open.push(Open::Paren);
            cut(source, i + 1, &mut start, &mut out);
            i += 2;
            continue;
        }
        match top {
            Some(Open::Double) => {
                if b == b'"' {
                    open.pop();
                }
            }
            Some(Open::Param) => match b {
                b'}' => {
                    open.pop();
                }
                b'"' => open.push(Open::Double),
                _ => {}
            },
            None | Some(Open::Paren) => match b {
                b'\'' => {
                    // To the closing quote; nothing inside is special.
                    i += 1;
                    while i < bytes.len() && bytes[i] != b'\'' {
                        i += 1;
                    }
                }
                b'"' => open.push(Open::Double),
                b'(' => {
                    open.push(Open::Paren);
                    cut(source, i, &mut start, &mut out);
                }
                b')' => {
                    if top == Some(Open::Paren) {
                        open.pop();
                    }
                    cut(source, i, &mut start, &mut out);
                }
                b'\n' | b';' | b'&' | b'|' => cut(source, i, &mut start, &mut out),
                b'{' | b'}' if (i == 0 || boundary(i - 1)) && boundary(i + 1) => {
                    cut(source, i, &mut start, &mut out)
                }
                _ => {}
            },
        }
        i += 1;
    }
    if start < source.len() {
        out.push(&source[start..]);
    }
    out
}

/// How many words of an opaque line are judged as paths at most.
const FALLBACK_MAX_TOKENS: usize = 256;

/// The words of a line split at blanks, quotes and every shell operator,
/// `=` too (`if=/etc/shadow`): what a path operand could be, however the
/// line was meant to parse.
fn opaque_tokens(source: &str) -> impl Iterator<Item = &str> {
    source
        .split(|c: char| c.is_whitespace() || "'\"`;&|(){}<>=$,".contains(c))
        .filter(|t| !t.is_empty() && !t.starts_with('-'))
}

/// Every `$NAME`, `${NAME…}` and `${!…}` written in a line, found in the raw
/// text (quotes ignored): the variable (with a leading `!` when indirect) and
/// the text as written.
fn raw_expansions(source: &str) -> Vec<(String, String)> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'$' {
            i += 1;
            continue;
        }
        let start = i;
        i += 1;
        let braced = bytes.get(i) == Some(&b'{');
        if braced {
            i += 1;
        }
        let bang = braced && bytes.get(i) == Some(&b'!');
        if bang {
            i += 1;
        }
        let name_at = i;
        while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
            i += 1;
        }
        if i == name_at && !bang {
            continue;
        }
        let name = &source[name_at..i];
        let var = if bang {
            format!("!{name}")
        } else {
            name.to_string()
        };
        out.push((var, source[start..i].to_string()));
    }
    out
}

fn naive_pieces(source: &str) -> Vec<&str> {
    const LEADING: &[&str] = &[
        "!", "{", "}", "(", ")", "do", "done", "then", "else", "elif", "fi", "if", "while",
        "until", "time", "function", "esac", "in",
    ];
    let mut out = Vec::new();
    for chunk in naive_chunks(source) {
        let mut piece = chunk.trim();
        loop {
            let before = piece;
            for k in LEADING {
                if let Some(rest) = piece.strip_prefix(k) {
                    if rest.is_empty() || rest.starts_with([' ', '\t', '{', '(']) || k.len() == 1 {
                        piece = rest.trim_start();
                    }
                }
            }
            // `f() {`, `name () {`: a function header.
            if let Some(at) = piece.find("()") {
                if piece[..at]
                    .trim()
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
                {
                    piece = piece[at + 2..].trim_start();
                }
            }
            // `for x in …`, `case x in`: the header runs nothing.
            if piece.starts_with("for ")
                || piece.starts_with("select ")
                || piece.starts_with("case ")
            {
                piece = "";
            }
            if piece == before {
                break;
            }
        }
        let piece = piece.trim_end_matches(['}', ')', ' ', '\t']);
        if !piece.is_empty() {
            out.push(piece);
        }
    }
    out
}

/// bash's reserved words: never a command name when bash reads the line.
const RESERVED_WORDS: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "{", "}", "!", "[[", "]]",
];

#[cfg(test)]
mod tests {
    use super::cdpath_inherited;
    use std::ffi::OsStr;

    #[test]
    fn an_inherited_cdpath_makes_cd_unknown() {
        assert!(cdpath_inherited(Some(OsStr::new("/home/u"))));
        assert!(cdpath_inherited(Some(OsStr::new(":"))));
        assert!(!cdpath_inherited(Some(OsStr::new(""))));
        assert!(!cdpath_inherited(None));
    }
}
