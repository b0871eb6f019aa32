//! Walking the syntax tree: every simple command, wherever it hides.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;

use toolgate_core::{PermissionRequest, Risk};
use tree_sitter::{Node, Parser, Tree};

use super::argv::{self, Part};
use super::plain;
use super::resolve::PathCache;
use super::words::{self, Known, Word, brace_expand, text};
use super::{MAX_COMMAND_BYTES, MAX_DEPTH, ShellContext, ShellRequest};
use crate::classify::table::{
    EXPRESSION_AFTER_PATHS, GLOB_OPTIONS, PATTERN_FIRST, SEARCH_OPTIONS, env_is_harmless,
    loads_code,
};
use crate::classify::{arity_prefix, sql_destroys};

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

/// What the shell knows at a point of the script.
#[derive(Clone, Debug)]
pub(crate) struct Scope {
    /// The working directory; `None` once it depends on run time (`cd "$X"`).
    pub(crate) cwd: Option<PathBuf>,
}

pub(crate) struct Analyzer<'c, 'l> {
    pub(crate) ctx: &'c ShellContext<'l>,
    pub(crate) out: Vec<ShellRequest>,
    /// Set once a variable that loads code (`PATH`, `LD_PRELOAD`) is assigned:
    /// every later command is at least `execute`.
    tainted: Option<String>,
    /// A floor from an enclosing wrapper (`sudo bash -c '…'`).
    floor: Option<(Risk, String)>,
    depth: usize,
    /// Shell functions defined so far: calling one runs its body, whatever
    /// its name (`:() { … }; :`).
    functions: HashSet<String>,
    /// Text fed to the next command on stdin by heredocs and here-strings.
    stdin_text: Option<String>,
    /// `lstat`/`readlink` answers for this analysis only.
    pub(crate) paths: PathCache,
    /// Whether plain lines skip the grammar (see [`plain`]).
    plain_reader: bool,
}

pub(crate) fn analyze_top(
    command: &str,
    ctx: &ShellContext<'_>,
    plain_reader: bool,
) -> Vec<ShellRequest> {
    let mut a = Analyzer {
        plain_reader,
        ctx,
        out: Vec::new(),
        tainted: None,
        floor: None,
        depth: 0,
        functions: HashSet::new(),
        stdin_text: None,
        paths: PathCache::default(),
    };
    let mut scope = Scope {
        cwd: Some(ctx.cwd.clone()),
    };
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
        if a.out.is_empty() {
            // Only comments or blank lines: runs nothing.
            a.push(
                PermissionRequest::new("bash", command.trim(), Risk::Read),
                false,
                "runs nothing (comments only)".into(),
                &scope,
            );
        }
    }
    dedupe(a.out)
}

impl Analyzer<'_, '_> {
    /// Parses and walks a piece of shell code (the top level or `bash -c` text).
    fn code(&mut self, source: &str, scope: &mut Scope) {
        if self.depth > MAX_DEPTH {
            self.opaque_whole(source, "shell code nested too deeply", scope);
            return;
        }
        if let Some(pipelines) = self.plain_reader.then(|| plain::split(source)).flatten() {
            self.plain(source, pipelines, scope);
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
        if root.has_error() {
            self.opaque_whole(source, &parse_error_detail(root, source), scope);
        }
        self.walk(root, source, scope);
    }

    /// Walks a plain line (see [`plain`]) as the grammar's tree would be walked:
    /// the stages of a pipeline each in a copy of the shell, the rest in order.
    fn plain(&mut self, source: &str, pipelines: Vec<plain::PlainPipeline>, scope: &mut Scope) {
        for pipeline in pipelines {
            let several = pipeline.stages.len() > 1;
            for stage in pipeline.stages {
                let resource = source[stage.start..stage.end].to_string();
                let stdin: Vec<String> = self.stdin_text.take().into_iter().collect();
                let simple = Simple {
                    words: stage.words,
                    prefix_words: Vec::new(),
                    env_floor: None,
                    name_ansi_c: false,
                    name_glob: None,
                    stdin,
                    resource,
                };
                if several {
                    self.simple_command(simple, &mut scope.clone());
                } else {
                    self.simple_command(simple, scope);
                }
            }
        }
    }

    fn opaque_whole(&mut self, source: &str, why: &str, scope: &Scope) {
        let resource: String = source.chars().take(4096).collect();
        self.push(
            PermissionRequest::new("bash", resource, Risk::Execute),
            true,
            format!("opaque: {why}"),
            scope,
        );
    }

    fn walk(&mut self, node: Node<'_>, src: &str, scope: &mut Scope) {
        match node.kind() {
            "command" => self.command(node, src, scope),
            "declaration_command" => self.declaration(node, src, scope),
            "variable_assignment" => self.bare_assignment(node, src, scope),
            "redirected_statement" => {
                self.stdin_text = stdin_text(node, src);
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    if is_redirect(child.kind()) {
                        self.redirect(child, src, scope);
                    } else {
                        self.walk(child, src, scope);
                    }
                }
            }
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                self.redirect(node, src, scope)
            }
            "function_definition" => {
                if let Some(name) = node.child_by_field_name("name") {
                    self.functions.insert(text(name, src).to_string());
                }
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.walk(child, src, &mut scope.clone());
                }
            }
            "pipeline" => self.pipeline(node, src, scope),
            // Subshells and substitutions run in a copy of the shell: `cd` there
            // does not last.
            "subshell" | "command_substitution" | "process_substitution" => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.walk(child, src, &mut scope.clone());
                }
            }
            _ => {
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    self.walk(child, src, scope);
                }
            }
        }
    }

    /// Each stage of a pipeline runs in a copy of the shell: `cd` there does not
    /// last. tree-sitter-bash reads `a | b | c && d` as `a | (b | c && d)`;
    /// bash runs `(a | b | c) && d`. So a list in a stage keeps only its first
    /// element in the pipeline, and the rest runs after it, in this shell.
    fn pipeline(&mut self, node: Node<'_>, src: &str, scope: &mut Scope) {
        let mut after: Vec<Node<'_>> = Vec::new();
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            let stage = if child.kind() == "list" {
                split_list(child, &mut after)
            } else {
                child
            };
            self.walk(stage, src, &mut scope.clone());
        }
        for rest in after {
            self.walk(rest, src, scope);
        }
    }

    /// Walks every command hidden inside the words of a command: `$(…)`,
    /// backticks, `<(…)`, unquoted heredoc bodies.
    fn nested(&mut self, node: Node<'_>, src: &str, scope: &Scope) {
        if !may_substitute(text(node, src)) {
            return;
        }
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "command_substitution" | "process_substitution" => {
                    self.walk(child, src, &mut scope.clone())
                }
                _ => self.nested(child, src, scope),
            }
        }
    }

    fn known<'a>(&'a self, scope: &'a Scope) -> Known<'a> {
        Known {
            home: &self.ctx.home,
            cwd: scope.cwd.as_deref(),
        }
    }

    fn command(&mut self, node: Node<'_>, src: &str, scope: &mut Scope) {
        self.nested(node, src, scope);
        if has_line_break_between_words(node, src) {
            // bash ends a command at an unquoted newline; if the grammar read
            // one command across it, its reading cannot be trusted.
            self.opaque_whole(
                text(node, src),
                "the parser read one command across a line break",
                scope,
            );
        }
        let mut prefix_words: Vec<String> = Vec::new();
        let mut env_floor: Option<String> = None;
        let mut words: Vec<Word> = Vec::new();
        let mut name_ansi_c = false;
        let mut name_glob: Option<String> = None;
        let mut stdin: Vec<String> = self.stdin_text.take().into_iter().collect();
        stdin.extend(herestrings(node, src));
        let mut cursor = node.walk();
        for child in node.named_children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => {
                    let var = child
                        .child_by_field_name("name")
                        .map_or("", |n| text(n, src));
                    if loads_code(var) {
                        env_floor = Some(format!(
                            "setting {var} makes the program load or run other code"
                        ));
                    } else if !env_is_harmless(var) && env_floor.is_none() {
                        env_floor = Some(format!(
                            "setting {var} may change what the program reads or runs"
                        ));
                    }
                    prefix_words.push(text(child, src).to_string());
                }
                kind if is_redirect(kind) => self.redirect(child, src, scope),
                "command_name" => {
                    let w = words::expand(child, src, &self.known(scope));
                    name_ansi_c = w.ansi_c;
                    if w.known && w.unquoted && is_glob(&w.text) {
                        name_glob = Some(w.text.clone());
                    }
                    if w.known && w.unquoted && w.text.contains('{') {
                        // `{rm,-rf,src}` runs `rm -rf src`.
                        for text in brace_expand(&w.text) {
                            words.push(Word { text, ..w.clone() });
                        }
                    } else {
                        words.push(w);
                    }
                }
                "subscript" | "comment" => {}
                _ => {
                    let w = words::expand(child, src, &self.known(scope));
                    if w.known && w.unquoted && w.text.contains('{') {
                        for text in brace_expand(&w.text) {
                            words.push(Word { text, ..w.clone() });
                        }
                    } else {
                        words.push(w);
                    }
                }
            }
        }
        let simple = Simple {
            words,
            prefix_words,
            env_floor,
            name_ansi_c,
            name_glob,
            stdin,
            resource: text(node, src).to_string(),
        };
        self.simple_command(simple, scope);
    }

    /// One simple command, however it was read: wrappers unwrapped, classified,
    /// raised by what the line set up before it.
    fn simple_command(&mut self, simple: Simple, scope: &mut Scope) {
        let Simple {
            words,
            prefix_words,
            env_floor,
            name_ansi_c,
            name_glob,
            stdin,
            resource,
        } = simple;
        if words.is_empty() {
            // Only assignments: `FOO=1`, `PATH=/tmp/x:$PATH`.
            let (risk, reason) = match &env_floor {
                Some(why) => {
                    self.tainted = Some(why.clone());
                    (Risk::Execute, why.clone())
                }
                None => (Risk::Read, "sets a shell variable".to_string()),
            };
            let save = (risk == Risk::Read).then(|| resource.clone());
            self.push(
                PermissionRequest::new("bash", resource, risk).with_save_pattern(save),
                false,
                reason,
                scope,
            );
            return;
        }
        let mut part = argv::analyse(&words, self.depth);
        if name_ansi_c {
            part.opaque = Some("opaque: the command name is obfuscated with ANSI-C quoting".into());
            part.raise(Risk::Execute, "obfuscated command name");
        }
        if let Some(glob) = name_glob {
            part.opaque = Some(format!(
                "opaque: the command name `{glob}` is a glob the shell expands at run time"
            ));
            part.raise(Risk::Execute, "the command name is a glob");
        }
        if self.functions.contains(&part.name)
            || words
                .first()
                .is_some_and(|w| self.functions.contains(&w.text))
        {
            part.raise(
                Risk::Execute,
                format!(
                    "calls the shell function `{}` defined in this command",
                    part.name
                ),
            );
        }
        if SQL_CLIENTS.contains(&part.name.as_str())
            && stdin.iter().any(|t| sql_destroys(&t.to_ascii_uppercase()))
        {
            part.raise(
                Risk::Destructive,
                format!("{} is fed SQL that drops or truncates data", part.name),
            );
        }
        if sets_code_loading_var(&part) {
            let why = format!(
                "`{}` sets a variable that makes later programs load other code",
                part.name
            );
            self.tainted = Some(why.clone());
            part.raise(Risk::Execute, why);
        }
        if let Some(why) = env_floor.clone().or_else(|| self.tainted.clone()) {
            part.raise(Risk::Execute, why);
        }
        if let Some((risk, why)) = self.floor.clone() {
            part.raise(risk, why);
        }
        self.finish_part(part, resource, prefix_words, &words, scope);
    }

    fn finish_part(
        &mut self,
        mut part: Part,
        resource: String,
        prefix_words: Vec<String>,
        words: &[Word],
        scope: &mut Scope,
    ) {
        // The directory the command itself runs in (`env -C DIR cmd`).
        let mut run_scope = scope.clone();
        if let Some(dir) = part.chdir.clone() {
            run_scope.cwd = self.resolve_dir(&dir, scope);
            // The directory it moves to is judged like any path it reads.
            self.path_argument(&dir, true, part.risk, false, scope);
        }
        if part.risk < Risk::Execute {
            let path_var = std::env::var_os("PATH");
            if let Some(found) = super::program::shadowing_program(
                &part.name,
                path_var.as_deref(),
                self.ctx.location,
                &self.ctx.home,
                scope.cwd.as_deref(),
            ) {
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
        if part.name == "git" && part.risk < Risk::Execute {
            self.git_configuration(&mut part, &prefix_words, &run_scope);
        }
        if part.unknown_args && part.paths && part.risk < Risk::Execute {
            // What it reads is not known: never "inside the location".
            part.raise(Risk::Execute, "an argument is only known at run time");
        }
        // Shell code given to `bash -c`/`trap` runs with this part's floor.
        if !part.code.is_empty() && part.opaque.is_none() {
            let saved_floor = self.floor.clone();
            if part.risk > Risk::Read {
                self.floor = Some((part.risk, part.reason.clone()));
            }
            self.depth += 1;
            for code in std::mem::take(&mut part.code) {
                let mut inner = run_scope.clone();
                self.code(&code, &mut inner);
            }
            self.depth -= 1;
            self.floor = saved_floor;
        }
        if let Some(files) = part.files.take() {
            // The read spec named every file: each is judged as used.
            for (arg, writes) in files {
                let risk = if writes { Risk::Write } else { Risk::Read };
                self.path_argument(&arg, true, risk.max(part.risk), writes, &run_scope);
            }
        } else if part.paths {
            let writes = part.risk >= Risk::Write;
            for (arg, after_dashes) in path_words(&part.name, &part.args) {
                self.path_argument(&arg, after_dashes, part.risk, writes, &run_scope);
            }
        }
        for (file, writes) in std::mem::take(&mut part.wrapper_files) {
            let risk = if writes { Risk::Write } else { Risk::Read };
            self.path_argument(&file, true, risk, writes, &run_scope);
        }
        if part.walks {
            self.walked_secrets(&part.args, &run_scope);
        }
        if !part.delegates || part.opaque.is_some() {
            let opaque = part.opaque.is_some();
            let save = if opaque || part.unknown_args || part.risk == Risk::Destructive {
                None
            } else {
                let mut argv = prefix_words;
                argv.extend(words.iter().map(|w| w.text.clone()));
                Some(arity_prefix(&argv))
            };
            let mut request =
                PermissionRequest::new("bash", resource, part.risk).with_save_pattern(save);
            if let Some(note) = &part.note {
                request = request.with_note(note.clone());
            }
            let reason = part.opaque.clone().unwrap_or_else(|| part.reason.clone());
            self.push(request, opaque, reason, &run_scope);
        }
        self.track_cd(&part, scope);
    }

    /// `cd DIR`, `pushd DIR`, `popd`: later relative paths resolve against DIR.
    fn track_cd(&mut self, part: &Part, scope: &mut Scope) {
        match part.name.as_str() {
            "cd" | "pushd" => {
                let operands: Vec<&Word> = part
                    .args
                    .iter()
                    .filter(|w| !(w.known && w.text.starts_with('-') && w.text.len() > 1))
                    .collect();
                scope.cwd = match operands.first() {
                    None => Some(self.ctx.home.clone()),
                    Some(w) if w.known && w.text == "-" => None,
                    Some(w) => self.resolve_dir(w, scope),
                };
            }
            "popd" => scope.cwd = None,
            _ => {}
        }
    }

    /// A git command the spec proved read still runs what the repository's
    /// configuration names (`core.fsmonitor`, a pager, an alias…): judged from
    /// the configuration git will read, and the repository it reaches.
    fn git_configuration(&mut self, part: &mut Part, prefix_words: &[String], scope: &Scope) {
        let Some(cwd) = scope.cwd.clone() else {
            return;
        };
        let globals = part
            .sub_at
            .map_or(&part.args[..], |at| &part.args[..at.min(part.args.len())]);
        if globals.iter().any(|w| !w.known) {
            part.raise(Risk::Execute, "a git option is only known at run time");
            return;
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
        let report = crate::repo_config::inspect(&invocation, self.ctx.location);
        if let Some(why) = report.may_run_program() {
            part.raise(Risk::Execute, why);
            part.unknown_args = true;
        }
        for dir in report.outside {
            let word = Word {
                text: dir.to_string_lossy().into_owned(),
                known: true,
                ansi_c: false,
                unquoted: false,
            };
            self.path_argument(&word, true, part.risk, false, scope);
        }
    }

    fn declaration(&mut self, node: Node<'_>, src: &str, scope: &mut Scope) {
        self.nested(node, src, scope);
        let mut argv: Vec<String> = Vec::new();
        let mut floor: Option<String> = None;
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "variable_assignment" => {
                    let var = child
                        .child_by_field_name("name")
                        .map_or("", |n| text(n, src));
                    let exported = argv.first().is_some_and(|c| c == "export")
                        || argv.iter().any(|a| a.starts_with('-') && a.contains('x'));
                    if loads_code(var) || (exported && !env_is_harmless(var)) {
                        floor = Some(format!(
                            "setting {var} makes later programs load or run other code"
                        ));
                    }
                    argv.push(text(child, src).to_string());
                }
                "comment" => {}
                _ => argv.push(words::expand(child, src, &self.known(scope)).text),
            }
        }
        let verdict = crate::classify::classify(&argv);
        let (mut risk, mut reason) = (verdict.risk, verdict.reason);
        if let Some(why) = floor {
            self.tainted = Some(why.clone());
            if risk < Risk::Execute {
                risk = Risk::Execute;
                reason = why;
            }
        }
        let resource = text(node, src).to_string();
        let save = (risk < Risk::Destructive).then(|| arity_prefix(&argv));
        self.push(
            PermissionRequest::new("bash", resource, risk).with_save_pattern(save),
            false,
            reason,
            scope,
        );
    }

    fn bare_assignment(&mut self, node: Node<'_>, src: &str, scope: &mut Scope) {
        self.nested(node, src, scope);
        let var = node
            .child_by_field_name("name")
            .map_or("", |n| text(n, src));
        let resource = text(node, src).to_string();
        if loads_code(var) {
            let why = format!("setting {var} makes later programs load or run other code");
            self.tainted = Some(why.clone());
            self.push(
                PermissionRequest::new("bash", resource, Risk::Execute).with_save_pattern(None),
                false,
                why,
                scope,
            );
        } else {
            self.push(
                PermissionRequest::new("bash", resource, Risk::Read),
                false,
                "sets a shell variable".into(),
                scope,
            );
        }
    }

    fn redirect(&mut self, node: Node<'_>, src: &str, scope: &mut Scope) {
        self.nested(node, src, scope);
        match node.kind() {
            "file_redirect" => {
                let mut op = String::new();
                let mut cursor = node.walk();
                for child in node.children(&mut cursor) {
                    if !child.is_named() {
                        op.push_str(text(child, src));
                    }
                }
                let Some(dest) = node.child_by_field_name("destination") else {
                    return;
                };
                let word = words::expand(dest, src, &self.known(scope));
                self.redirect_target(&op, &word, scope);
            }
            "heredoc_redirect" => {
                let mut quoted = false;
                let mut cursor = node.walk();
                for child in node.named_children(&mut cursor) {
                    match child.kind() {
                        // `cat <<EOF > out`: the nested redirect is a real one.
                        "file_redirect" => self.redirect(child, src, scope),
                        "heredoc_start" => quoted = text(child, src).contains(['\'', '"', '\\']),
                        // The grammar leaves backticks in an unquoted body as text;
                        // the shell runs them.
                        "heredoc_body" if !quoted => {
                            for code in words::backtick_spans(text(child, src)) {
                                self.depth += 1;
                                self.code(&code, &mut scope.clone());
                                self.depth -= 1;
                            }
                        }
                        _ => {}
                    }
                }
            }
            _ => {}
        }
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

/// One simple command's words and what surrounds them, read from the tree or
/// from a plain line.
struct Simple {
    words: Vec<Word>,
    /// Assignments before the name (`FOO=1 cmd`), as written.
    prefix_words: Vec<String>,
    /// Why an assignment before the name makes the command load other code.
    env_floor: Option<String>,
    name_ansi_c: bool,
    /// The command name when it is an unquoted glob.
    name_glob: Option<String>,
    /// Heredoc and here-string text fed to it.
    stdin: Vec<String>,
    /// Its source text.
    resource: String,
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

/// SQL clients whose stdin is checked for `DROP`/`TRUNCATE`.
const SQL_CLIENTS: &[&str] = &["psql", "mysql", "mariadb", "sqlite3", "duckdb"];

/// Unquoted glob characters in a command name (`/???/r?`, `r[m]`).
fn is_glob(name: &str) -> bool {
    name.contains(['*', '?']) || (name.contains('[') && name.contains(']') && name != "[")
}

/// `printf -v PATH …`, `read PATH`, `mapfile PATH`: assignments in disguise.
fn sets_code_loading_var(part: &Part) -> bool {
    matches!(
        part.name.as_str(),
        "printf" | "read" | "mapfile" | "readarray" | "getopts"
    ) && part.args.iter().any(|w| w.known && loads_code(&w.text))
}

/// The bodies of a statement's heredocs and here-strings (its stdin).
fn stdin_text(node: Node<'_>, src: &str) -> Option<String> {
    let mut out = String::new();
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() == "heredoc_redirect" {
            let mut inner = child.walk();
            for part in child.named_children(&mut inner) {
                if part.kind() == "heredoc_body" {
                    out.push_str(text(part, src));
                    out.push('\n');
                }
            }
        } else if child.kind() == "herestring_redirect" {
            out.push_str(text(child, src));
            out.push('\n');
        }
    }
    (!out.is_empty()).then_some(out)
}

/// The here-strings attached to a command node itself.
fn herestrings(node: Node<'_>, src: &str) -> Vec<String> {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() == "herestring_redirect")
        .map(|c| text(c, src).to_string())
        .collect()
}

/// The first element of a `list` node (following nested lists down their left
/// side); the elements after it are appended to `rest`, in order.
fn split_list<'t>(list: Node<'t>, rest: &mut Vec<Node<'t>>) -> Node<'t> {
    let mut cursor = list.walk();
    let children: Vec<Node<'t>> = list.named_children(&mut cursor).collect();
    let Some((&first, others)) = children.split_first() else {
        return list;
    };
    let mut later = Vec::new();
    let head = if first.kind() == "list" {
        split_list(first, &mut later)
    } else {
        first
    };
    rest.extend(later);
    rest.extend(others.iter().copied());
    head
}

/// Whether `text` may hold a command or process substitution (`$(…)`,
/// backticks, `<(…)`, `>(…)`); without one of those the subtree need not be
/// searched for them.
fn may_substitute(text: &str) -> bool {
    text.contains('`') || text.contains("$(") || text.contains("<(") || text.contains(">(")
}

/// Whether a line break separates two words of one command (outside any word).
fn has_line_break_between_words(node: Node<'_>, src: &str) -> bool {
    if !text(node, src).contains('\n') {
        return false;
    }
    let mut cursor = node.walk();
    let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
    children.windows(2).any(|pair| {
        src.get(pair[0].end_byte()..pair[1].start_byte())
            .is_some_and(|gap| gap.contains('\n'))
    })
}

fn is_redirect(kind: &str) -> bool {
    matches!(
        kind,
        "file_redirect" | "heredoc_redirect" | "herestring_redirect"
    )
}

fn is_absolute(text: &str) -> bool {
    text.starts_with('/') || text.starts_with('~') || text.starts_with('-')
}

/// Where the first parse error is, for the reason text.
fn parse_error_detail(root: Node<'_>, src: &str) -> String {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if node.is_error() || node.is_missing() {
            let at = node.start_position();
            let snippet: String = text(node, src).chars().take(40).collect();
            return format!(
                "the command does not parse (line {}, column {}: `{}`)",
                at.row + 1,
                at.column + 1,
                snippet
            );
        }
        let mut cursor = node.walk();
        let children: Vec<Node<'_>> = node.children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
    "the command does not parse".to_string()
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
