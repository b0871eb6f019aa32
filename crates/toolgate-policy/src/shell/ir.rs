//! The second stage: a typed description of what a command line will run,
//! lowered from the syntax tree (or from a plain line, [`super::plain`]).
//!
//! Each simple command comes with its words — every piece of each word marked
//! with where it came from (literal, quoted, a variable's expansion, a command
//! substitution, unknown) —, its redirects, its environment assignments and the
//! constructs around it. Pieces of shell run in a copy of the shell (subshells,
//! pipeline stages, substitutions, function bodies, background jobs) are
//! [`Item::Isolated`]. What this stage cannot describe is [`Item::Unknown`];
//! the next stage never reads an unknown as harmless.
//!
//! The lowering recurses along the tree, but only as deep as
//! [`super::grammar::validate`] allowed (constructs nested at most
//! [`super::MAX_NESTING`] deep); chains of `&&`, `;` and `|`, which nest in the
//! grammar's tree as deep as they are long, are flattened with a loop.

use foldhash::{HashSet, HashSetExt};
use smallvec::{SmallVec, smallvec};

use tree_sitter::Node;

use super::words::{decode_ansi_c, text, unescape_unquoted};

/// Where one piece of a word came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Origin {
    /// Unquoted text (globs, braces and `~` apply).
    Literal,
    /// Quoted text (`'…'`, the literal parts of `"…"`, `$'…'`).
    Quoted,
    /// A variable's value (`$x`, `${x}`, `${x:-…}`): known only when the
    /// variable is.
    Expanded,
    /// The output of a command substitution (`$(…)`, backticks) — whose
    /// commands are items of their own.
    Substituted,
    /// Anything else (`$((…))`, `${!x}`, `${x@P}`…): never known.
    Unknown,
}

/// One piece of a word.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    /// The text: literal text unescaped, quoted text without its quotes, or the
    /// source of an expansion.
    pub(crate) text: String,
    /// Where it came from.
    pub(crate) origin: Origin,
    /// The variable an [`Origin::Expanded`] piece reads.
    pub(crate) var: Option<String>,
    /// `$'…'` quoting was used (an obfuscation of command names).
    pub(crate) ansi_c: bool,
    /// For [`Origin::Expanded`]: the expansion's value is used as is only
    /// when it is a plain `$x`/`${x}`; with an operator (`${x:-y}`,
    /// `${x#p}`) it is some other text.
    pub(crate) plain_var: bool,
}

/// A word's pieces: most words are one piece, kept inline (no allocation).
pub(crate) type Pieces = SmallVec<[Piece; 1]>;

/// One word: its pieces and its source text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct IrWord {
    pub(crate) pieces: Pieces,
    /// The source text.
    pub(crate) raw: String,
}

impl IrWord {
    /// A word that is one piece.
    pub(crate) fn single(text: String, origin: Origin, raw: String) -> Self {
        IrWord {
            pieces: smallvec![Piece {
                text,
                origin,
                var: None,
                ansi_c: false,
                plain_var: false,
            }],
            raw,
        }
    }

    /// Whether no piece was quoted or expanded.
    pub(crate) fn unquoted(&self) -> bool {
        self.pieces.iter().all(|p| p.origin == Origin::Literal)
    }

    /// The literal text when every piece is literal or quoted.
    pub(crate) fn literal(&self) -> Option<String> {
        self.pieces
            .iter()
            .all(|p| matches!(p.origin, Origin::Literal | Origin::Quoted))
            .then(|| self.pieces.iter().map(|p| p.text.as_str()).collect())
    }
}

/// An assignment: `NAME=VALUE`, `NAME+=VALUE`, `NAME[SUB]=VALUE`, `NAME=(…)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Assignment {
    pub(crate) name: String,
    /// The subscript's source text (`a[i+1]=x`), evaluated as arithmetic.
    pub(crate) subscript: Option<String>,
    /// The value; `None` for an array (`a=(…)`).
    pub(crate) value: Option<IrWord>,
    /// The elements of an array value.
    pub(crate) elements: Vec<IrWord>,
    /// Its source text.
    pub(crate) raw: String,
}

/// Where a redirect reads or writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Target {
    /// `>FILE`, `<FILE`, `>&N`…
    File(IrWord),
    /// `<<EOF`: the body, and whether the delimiter was quoted (nothing in the
    /// body is expanded).
    Heredoc { body: String, quoted: bool },
    /// `<<<WORD`.
    Herestring(IrWord),
}

/// One redirect.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redirect {
    /// The operator (`>`, `>>`, `<`, `&>`, `<<`, `<<<`…), with any descriptor
    /// before it (`2>`).
    pub(crate) op: String,
    pub(crate) target: Target,
}

/// The grammar's form of a simple command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Form {
    /// `NAME ARGS…` (or only assignments).
    Plain,
    /// `declare`/`typeset`/`export`/`readonly`/`local`, whose assignments are
    /// part of the command.
    Declaration,
    /// `unset`/`unsetenv`.
    Unset,
    /// `[[ … ]]`: its words are the operands and operators, in order.
    Test,
}

/// A construct around a simple command, innermost last.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Construct {
    Pipeline,
    Subshell,
    Group,
    Substitution,
    ProcessSubstitution,
    FunctionBody,
    If,
    Loop,
    Case,
    Negated,
    Background,
    Heredoc,
}

/// One simple command.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct SimpleCommand {
    /// The name and arguments, as written (brace expansion not yet applied).
    pub(crate) words: Vec<IrWord>,
    /// `NAME=VALUE` before the name (for [`Form::Declaration`], the
    /// declared assignments).
    pub(crate) assignments: Vec<Assignment>,
    pub(crate) redirects: Vec<Redirect>,
    /// Its source text.
    pub(crate) resource: String,
    pub(crate) form: Form,
    /// Whether its name is redefined in the same command (a function,
    /// `alias`, `hash -p`): then it is never the system command.
    pub(crate) name_redefined: bool,
    /// The constructs around it, outermost first.
    pub(crate) context: Vec<Construct>,
    /// A line break between two of its words: the grammar's reading is not
    /// bash's.
    pub(crate) across_lines: bool,
}

impl SimpleCommand {
    fn new(resource: String, form: Form, context: &[Construct]) -> Self {
        SimpleCommand {
            words: Vec::new(),
            assignments: Vec::new(),
            redirects: Vec::new(),
            resource,
            form,
            name_redefined: false,
            context: context.to_vec(),
            across_lines: false,
        }
    }

    /// The command name, when it is written literally.
    pub(crate) fn literal_name(&self) -> Option<String> {
        self.words.first().and_then(IrWord::literal)
    }

    /// What it does to the working directory, read from its words.
    pub(crate) fn dir_effect(&self) -> DirEffect {
        // Most commands are not `cd`: decided without building any text.
        let first = self.words.first().and_then(|w| w.pieces.first());
        if !first.is_some_and(|p| {
            matches!(
                p.text.as_str(),
                "cd" | "pushd" | "popd" | "builtin" | "command"
            )
        }) {
            return DirEffect::None;
        }
        let mut words = self.words.iter();
        let mut name = words.next().and_then(IrWord::literal);
        if matches!(name.as_deref(), Some("builtin" | "command")) {
            name = words.next().and_then(IrWord::literal);
        }
        let operands: Vec<&IrWord> = words
            .filter(|w| {
                w.literal()
                    .is_none_or(|t| !(t.starts_with('-') && t.len() > 1 && t != "--"))
                    || w.literal()
                        .is_some_and(|t| t[1..].bytes().all(|b| b.is_ascii_digit()))
            })
            .filter(|w| w.literal().as_deref() != Some("--"))
            .collect();
        match name.as_deref() {
            Some("cd") => match operands.first() {
                None => DirEffect::Home,
                Some(w) if w.literal().as_deref() == Some("-") => DirEffect::Previous,
                Some(w) => DirEffect::Cd((*w).clone()),
            },
            Some("pushd") => match operands.first() {
                None => DirEffect::Swap,
                Some(w) => match w.literal() {
                    Some(t) if is_stack_index(&t) => DirEffect::Rotate(t),
                    _ => DirEffect::Push((*w).clone()),
                },
            },
            Some("popd") => match operands.first() {
                None => DirEffect::Pop(None),
                Some(w) => match w.literal() {
                    Some(t) if is_stack_index(&t) => DirEffect::Pop(Some(t)),
                    _ => DirEffect::Unknown,
                },
            },
            _ => DirEffect::None,
        }
    }
}

fn is_stack_index(t: &str) -> bool {
    (t.starts_with('+') || t.starts_with('-'))
        && t.len() > 1
        && t[1..].bytes().all(|b| b.is_ascii_digit())
}

/// What a command does to the working directory.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DirEffect {
    None,
    /// `cd DIR`.
    Cd(IrWord),
    /// `cd` alone.
    Home,
    /// `cd -`: back to `OLDPWD`.
    Previous,
    /// `pushd DIR`.
    Push(IrWord),
    /// `pushd` alone: swaps the top two.
    Swap,
    /// `pushd +N`/`-N`.
    Rotate(String),
    /// `popd`, `popd +N`/`-N`.
    Pop(Option<String>),
    /// Something the stage cannot tell.
    Unknown,
}

/// One thing the command line runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Item {
    Command(SimpleCommand),
    /// Arithmetic the shell evaluates (`((…))`, `$((…))`, subscripts, the
    /// parts of `for ((…))`): the variables it names are read as code.
    Arithmetic {
        resource: String,
        /// Variable names it reads (`x`, `$x`, `${x}`), in order.
        names: Vec<String>,
        /// Variables it assigns (`x=1`, `x++`): their value is a number.
        assigns: Vec<String>,
    },
    /// `for NAME in WORDS`: `NAME` takes each word in turn.
    Loop {
        var: String,
        values: Vec<IrWord>,
    },
    /// Shell code the next stage parses and walks in place (backticks in an
    /// unquoted heredoc body, which the grammar leaves as text).
    Code(String),
    /// Items run in a copy of the shell: what they change does not last.
    Isolated(Vec<Item>),
    /// What this stage cannot describe.
    Unknown {
        text: String,
        why: String,
    },
}

/// The lowering's output.
#[derive(Debug, Default)]
pub(crate) struct Script {
    pub(crate) items: Vec<Item>,
    /// Names the line defines as functions, aliases or hashed commands.
    pub(crate) redefined: HashSet<String>,
}

/// Lowers a validated tree.
pub(crate) fn lower(root: Node<'_>, src: &str) -> Script {
    let mut l = Lowering {
        src,
        context: Vec::new(),
        redefined: HashSet::new(),
    };
    let mut items = Vec::new();
    l.statement(root, &mut items);
    let mut script = Script {
        items,
        redefined: l.redefined,
    };
    mark_redefined(&mut script.items, &script.redefined);
    script
}

/// Marks the commands whose name the line redefines.
pub(crate) fn mark_redefined(items: &mut [Item], names: &HashSet<String>) {
    if names.is_empty() {
        return;
    }
    let mut stack: Vec<&mut Item> = items.iter_mut().collect();
    while let Some(item) = stack.pop() {
        match item {
            Item::Command(c) if c.literal_name().is_some_and(|n| names.contains(&n)) => {
                c.name_redefined = true;
            }
            Item::Isolated(inner) => stack.extend(inner.iter_mut()),
            _ => {}
        }
    }
}

struct Lowering<'s> {
    src: &'s str,
    context: Vec<Construct>,
    redefined: HashSet<String>,
}

impl<'s> Lowering<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        text(node, self.src)
    }

    fn unknown(&self, node: Node<'_>, why: &str, out: &mut Vec<Item>) {
        out.push(Item::Unknown {
            text: self.text(node).to_string(),
            why: why.to_string(),
        });
    }

    /// Runs `f` with `c` pushed on the context, collecting into an isolated
    /// group.
    fn isolated(
        &mut self,
        c: Construct,
        out: &mut Vec<Item>,
        f: impl FnOnce(&mut Self, &mut Vec<Item>),
    ) {
        self.context.push(c);
        let mut inner = Vec::new();
        f(self, &mut inner);
        self.context.pop();
        out.push(Item::Isolated(inner));
    }

    fn in_context(&mut self, c: Construct, f: impl FnOnce(&mut Self)) {
        self.context.push(c);
        f(self);
        self.context.pop();
    }

    fn children<'t>(node: Node<'t>) -> Vec<Node<'t>> {
        let mut cursor = node.walk();
        node.children(&mut cursor).collect()
    }

    /// Any statement-level node.
    fn statement(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        if node.is_error() {
            // The command is already opaque; what can be read in it is still
            // judged: runs of words as one command (`<<EOF; rm -rf x` gives
            // `rm -rf x`), statements as statements.
            let mut run: Vec<Node<'_>> = Vec::new();
            let flush = |l: &mut Self, run: &mut Vec<Node<'_>>, out: &mut Vec<Item>| {
                if run.is_empty() {
                    return;
                }
                let start = run[0].start_byte();
                let end = run[run.len() - 1].end_byte();
                let mut cmd = SimpleCommand::new(
                    l.src.get(start..end).unwrap_or("").to_string(),
                    Form::Plain,
                    &l.context,
                );
                for w in run.drain(..) {
                    let word = l.word(w, out);
                    let assignment = cmd.words.is_empty()
                        && word.literal().is_some_and(|t| {
                            t.split_once('=').is_some_and(|(n, _)| {
                                !n.is_empty()
                                    && n.trim_end_matches('+')
                                        .bytes()
                                        .all(|b| b.is_ascii_alphanumeric() || b == b'_')
                            })
                        });
                    if assignment {
                        let t = word.literal().unwrap_or_default();
                        let (name, value) = t.split_once('=').unwrap_or((&t, ""));
                        cmd.assignments.push(Assignment {
                            name: name.trim_end_matches('+').to_string(),
                            subscript: None,
                            value: Some(IrWord::single(
                                value.to_string(),
                                Origin::Quoted,
                                value.to_string(),
                            )),
                            elements: Vec::new(),
                            raw: t.clone(),
                        });
                        continue;
                    }
                    cmd.words.push(word);
                }
                out.push(Item::Command(cmd));
            };
            for child in Self::children(node) {
                match child.kind() {
                    // A reserved word starts a new command (`<<EOF; { git pull`).
                    "word"
                        if matches!(
                            self.text(child),
                            "{" | "}"
                                | "!"
                                | "then"
                                | "do"
                                | "else"
                                | "elif"
                                | "fi"
                                | "done"
                                | "esac"
                                | "if"
                                | "while"
                                | "until"
                                | "time"
                        ) =>
                    {
                        flush(self, &mut run, out)
                    }
                    "word"
                    | "number"
                    | "string"
                    | "raw_string"
                    | "concatenation"
                    | "simple_expansion"
                    | "expansion"
                    | "ansi_c_string"
                    | "command_name"
                    | "command_substitution"
                    | "process_substitution"
                    | "arithmetic_expansion"
                    | "translated_string"
                    | "brace_expression" => run.push(child),
                    "heredoc_start" | "heredoc_end" => flush(self, &mut run, out),
                    _ if child.is_named() => {
                        flush(self, &mut run, out);
                        self.statement(child, out);
                    }
                    _ => flush(self, &mut run, out),
                }
            }
            flush(self, &mut run, out);
            return;
        }
        match node.kind() {
            "program" | "list" => self.sequence(node, out),
            "pipeline" => self.pipeline(node, out),
            "redirected_statement" => self.redirected(node, &[], out),
            "command" => self.command(node, &[], &[], out),
            "declaration_command" => self.declaration(node, Form::Declaration, &[], out),
            "unset_command" => self.declaration(node, Form::Unset, &[], out),
            "variable_assignment" | "variable_assignments" => {
                let mut cmd =
                    SimpleCommand::new(self.text(node).to_string(), Form::Plain, &self.context);
                let assigns: Vec<Node<'_>> = if node.kind() == "variable_assignment" {
                    vec![node]
                } else {
                    Self::children(node)
                        .into_iter()
                        .filter(|c| c.is_named())
                        .collect()
                };
                for a in assigns {
                    if a.kind() == "variable_assignment" {
                        let assignment = self.assignment(a, out);
                        cmd.assignments.push(assignment);
                    } else if a.kind() != "comment" {
                        self.unknown(a, "an unexpected part of an assignment list", out);
                    }
                }
                out.push(Item::Command(cmd));
            }
            "negated_command" => self.in_context(Construct::Negated, |l| {
                for c in Self::children(node) {
                    if c.is_named() {
                        l.statement(c, out);
                    }
                }
            }),
            "subshell" => self.isolated(Construct::Subshell, out, |l, inner| {
                for c in Self::children(node) {
                    if c.is_named() {
                        l.statement(c, inner);
                    }
                }
            }),
            "compound_statement" => {
                let arithmetic = Self::children(node)
                    .first()
                    .is_some_and(|c| c.kind() == "((");
                if arithmetic {
                    for c in Self::children(node) {
                        if c.is_named() {
                            self.arithmetic(c, out);
                        }
                    }
                } else if !Self::children(node)
                    .iter()
                    .any(|c| c.is_named() && c.kind() != "comment")
                {
                    // `{}`: bash reads a command named `{}`, the grammar an
                    // empty group.
                    self.unknown(node, "`{}` where a command goes", out);
                } else {
                    self.in_context(Construct::Group, |l| {
                        for c in Self::children(node) {
                            if c.is_named() {
                                l.statement(c, out);
                            }
                        }
                    });
                }
            }
            "if_statement" | "elif_clause" | "else_clause" => self.in_context(Construct::If, |l| {
                for c in Self::children(node) {
                    if c.is_named() {
                        l.statement(c, out);
                    }
                }
            }),
            "while_statement" => self.in_context(Construct::Loop, |l| {
                for c in Self::children(node) {
                    if c.is_named() {
                        l.statement(c, out);
                    }
                }
            }),
            "do_group" => {
                for c in Self::children(node) {
                    if c.is_named() {
                        self.statement(c, out);
                    }
                }
            }
            "for_statement" => self.for_statement(node, out),
            "c_style_for_statement" => self.in_context(Construct::Loop, |l| {
                for c in Self::children(node) {
                    match c.kind() {
                        "do_group" | "compound_statement" => l.statement(c, out),
                        _ if c.is_named() => l.arithmetic(c, out),
                        _ => {}
                    }
                }
            }),
            "case_statement" => self.in_context(Construct::Case, |l| {
                for c in Self::children(node) {
                    match c.kind() {
                        "case_item" => l.case_item(c, out),
                        "comment" => {}
                        _ if c.is_named() => {
                            // The value: its substitutions run, and its
                            // expansions are compared as `[[ ]]` compares.
                            l.judged_expansion(c, out);
                        }
                        _ => {}
                    }
                }
            }),
            "function_definition" => self.function(node, &[], out),
            "test_command" => self.test(node, &[], out),
            "comment" | "heredoc_body" | "heredoc_start" | "heredoc_end" => {}
            "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                // A redirect with no command (`> file`): it still opens the file.
                let mut cmd =
                    SimpleCommand::new(self.text(node).to_string(), Form::Plain, &self.context);
                let mut after = Vec::new();
                self.redirect(node, &mut cmd, &mut after, out);
                out.push(Item::Command(cmd));
                out.extend(after);
            }
            _ if node.is_named() => {
                // A word where a statement goes (the grammar's recovery), or a
                // kind with no statement arm: never invisible.
                self.unknown(
                    node,
                    &format!("`{}` where a command goes", node.kind()),
                    out,
                );
            }
            _ => {}
        }
    }

    /// `a; b && c || d`: the grammar nests these on the left; flattened here
    /// with a stack. `cmd &` runs in a copy of the shell.
    fn sequence(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        enum Pending<'t> {
            Node(Node<'t>),
            Background(Node<'t>),
        }
        let mut pending = vec![Pending::Node(node)];
        while let Some(p) = pending.pop() {
            match p {
                Pending::Background(n) => {
                    self.isolated(Construct::Background, out, |l, inner| l.statement(n, inner))
                }
                Pending::Node(n) if matches!(n.kind(), "program" | "list") && !n.is_error() => {
                    let children = Self::children(n);
                    let mut items = Vec::new();
                    for (i, c) in children.iter().enumerate() {
                        if !c.is_named() {
                            continue;
                        }
                        let background = children.get(i + 1).is_some_and(|x| x.kind() == "&");
                        items.push(if background {
                            Pending::Background(*c)
                        } else {
                            Pending::Node(*c)
                        });
                    }
                    pending.extend(items.into_iter().rev());
                }
                Pending::Node(n) => self.statement(n, out),
            }
        }
    }

    /// Each stage runs in a copy of the shell. tree-sitter-bash reads
    /// `a | b | c && d` as `a | (b | c && d)`; bash runs `(a | b | c) && d`:
    /// a list in a stage keeps its first element in the pipeline, the rest
    /// runs after the pipeline, in this shell.
    fn pipeline(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        let mut stages: Vec<Node<'_>> = Vec::new();
        let mut after: Vec<Node<'_>> = Vec::new();
        let mut current = Some(node);
        while let Some(p) = current.take() {
            let children: Vec<Node<'_>> = Self::children(p)
                .into_iter()
                .filter(|c| c.is_named())
                .collect();
            for (i, c) in children.iter().enumerate() {
                let last = i + 1 == children.len();
                if c.kind() == "list" && last {
                    let head = split_list(*c, &mut after);
                    if head.kind() == "pipeline" {
                        current = Some(head);
                    } else {
                        stages.push(head);
                    }
                } else if c.kind() == "pipeline" && last {
                    current = Some(*c);
                } else if c.kind() == "list" {
                    let head = split_list(*c, &mut after);
                    stages.push(head);
                } else {
                    stages.push(*c);
                }
            }
        }
        self.pipeline_stages(&stages, out);
        // `after` was gathered innermost first; runs in source order.
        after.sort_by_key(|n| n.start_byte());
        for rest in after {
            self.statement(rest, out);
        }
    }

    fn pipeline_stages(&mut self, stages: &[Node<'_>], out: &mut Vec<Item>) {
        for stage in stages {
            self.isolated(Construct::Pipeline, out, |l, inner| {
                l.statement(*stage, inner)
            });
        }
    }

    /// A statement with redirects. `extra` are redirects that belong to it
    /// from an enclosing node.
    fn redirected(&mut self, node: Node<'_>, _extra: &[Node<'_>], out: &mut Vec<Item>) {
        let mut body: Option<Node<'_>> = None;
        let mut redirects: Vec<Node<'_>> = Vec::new();
        for c in Self::children(node) {
            if !c.is_named() {
                continue;
            }
            match c.kind() {
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => redirects.push(c),
                "comment" => {}
                _ if body.is_none() => body = Some(c),
                _ => self.statement(c, out),
            }
        }
        // The heredoc line: `cat <<EOF ARGS >OUT | next && rest`.
        let mut extra_args: Vec<Node<'_>> = Vec::new();
        let mut extra_redirects: Vec<Node<'_>> = Vec::new();
        let mut pipe_to: Vec<Node<'_>> = Vec::new();
        let mut then: Vec<Node<'_>> = Vec::new();
        for r in &redirects {
            if r.kind() != "heredoc_redirect" {
                continue;
            }
            let kids = Self::children(*r);
            for (i, c) in kids.iter().enumerate() {
                match r.field_name_for_child(i as u32) {
                    Some("argument") => extra_args.push(*c),
                    Some("redirect") => extra_redirects.push(*c),
                    Some("right") => then.push(*c),
                    _ if c.kind() == "pipeline" => pipe_to.push(*c),
                    _ if c.kind() == "ERROR" => {
                        self.unknown(*c, "the heredoc line does not parse", out)
                    }
                    _ => {}
                }
            }
        }
        let mut all_redirects = redirects.clone();
        all_redirects.extend(extra_redirects);
        let lower_body = |l: &mut Self, out: &mut Vec<Item>| match body {
            Some(b) => match b.kind() {
                "command" => l.command(b, &all_redirects, &extra_args, out),
                "declaration_command" => l.declaration(b, Form::Declaration, &all_redirects, out),
                "unset_command" => l.declaration(b, Form::Unset, &all_redirects, out),
                "test_command" => l.test(b, &all_redirects, out),
                "function_definition" => l.function(b, &all_redirects, out),
                _ => {
                    // A compound statement with redirects: its redirects are
                    // judged as one command's, its body as usual.
                    let mut cmd =
                        SimpleCommand::new(l.text(node).to_string(), Form::Plain, &l.context);
                    let mut after = Vec::new();
                    for r in &all_redirects {
                        l.redirect(*r, &mut cmd, &mut after, out);
                    }
                    if !extra_args.is_empty() {
                        l.unknown(node, "words after a heredoc on a compound command", out);
                    }
                    l.statement(b, out);
                    out.push(Item::Command(cmd));
                    out.extend(after);
                }
            },
            None => {
                let mut cmd = SimpleCommand::new(l.text(node).to_string(), Form::Plain, &l.context);
                let mut after = Vec::new();
                for r in &all_redirects {
                    l.redirect(*r, &mut cmd, &mut after, out);
                }
                out.push(Item::Command(cmd));
                out.extend(after);
            }
        };
        if pipe_to.is_empty() {
            lower_body(self, out);
        } else {
            // `cat <<EOF | sh`: the statement is the first stage.
            self.isolated(Construct::Pipeline, out, |l, inner| lower_body(l, inner));
            for p in pipe_to {
                let stages: Vec<Node<'_>> = Self::children(p)
                    .into_iter()
                    .filter(|c| c.is_named())
                    .collect();
                let mut flat = Vec::new();
                let mut after = Vec::new();
                for s in stages {
                    if s.kind() == "list" {
                        flat.push(split_list(s, &mut after));
                    } else if s.kind() == "pipeline" {
                        flat.extend(Self::children(s).into_iter().filter(|c| c.is_named()));
                    } else {
                        flat.push(s);
                    }
                }
                self.pipeline_stages(&flat, out);
                after.sort_by_key(|n| n.start_byte());
                for rest in after {
                    self.statement(rest, out);
                }
            }
        }
        for t in then {
            self.statement(t, out);
        }
    }

    fn command(
        &mut self,
        node: Node<'_>,
        redirects: &[Node<'_>],
        extra_args: &[Node<'_>],
        out: &mut Vec<Item>,
    ) {
        let mut cmd = SimpleCommand::new(self.text(node).to_string(), Form::Plain, &self.context);
        cmd.across_lines = line_break_between_words(node, self.src);
        let mut after = Vec::new();
        let mut skipped_reserved = false;
        let kids = Self::children(node);
        for (i, c) in kids.iter().enumerate() {
            let field = node.field_name_for_child(i as u32);
            match (field, c.kind()) {
                (_, "variable_assignment") => {
                    let a = self.assignment(*c, out);
                    cmd.assignments.push(a);
                }
                (_, "file_redirect" | "heredoc_redirect" | "herestring_redirect") => {
                    self.redirect(*c, &mut cmd, &mut after, out)
                }
                (_, "comment") => {}
                _ if c.is_error() => {
                    // `ls; rm x` read as one command around an error: the words
                    // after it are another command (the line is opaque anyway).
                    self.note_redefinitions(&cmd);
                    let start = kids.get(i + 1).map_or(node.end_byte(), |n| n.start_byte());
                    let rest = self
                        .src
                        .get(start..node.end_byte())
                        .unwrap_or("")
                        .to_string();
                    let done = std::mem::replace(
                        &mut cmd,
                        SimpleCommand::new(rest, Form::Plain, &self.context),
                    );
                    out.push(Item::Command(done));
                    for e in Self::children(*c) {
                        if e.is_named() {
                            self.statement(e, out);
                        }
                    }
                }
                (Some("name") | Some("argument"), _) | (None, "command_name") => {
                    let w = self.word(*c, out);
                    // `! ! cmd`, `! { cmd; }`: the grammar reads the reserved
                    // word as a command name.
                    if cmd.words.is_empty()
                        && matches!(self.text(*c), "!" | "{" | "}")
                        && cmd.assignments.is_empty()
                    {
                        skipped_reserved = true;
                        continue;
                    }
                    cmd.words.push(w);
                }
                (_, "subscript") => {
                    // `a[i]=x cmd` in a prefix the grammar did not pair.
                    self.arithmetic(*c, out);
                    cmd.words.push(IrWord::single(
                        self.text(*c).into(),
                        Origin::Unknown,
                        self.text(*c).into(),
                    ));
                }
                _ if c.is_named() => {
                    let w = self.word(*c, out);
                    cmd.words.push(w);
                }
                _ => {}
            }
        }
        for a in extra_args {
            let w = self.word(*a, out);
            cmd.words.push(w);
        }
        for r in redirects {
            self.redirect(*r, &mut cmd, &mut after, out);
        }
        self.note_redefinitions(&cmd);
        let empty = cmd.words.is_empty() && cmd.assignments.is_empty() && cmd.redirects.is_empty();
        if !(skipped_reserved && empty) {
            out.push(Item::Command(cmd));
        }
        out.extend(after);
    }

    /// `alias NAME=…`, `hash -p PATH NAME`: later `NAME` is not the system's.
    fn note_redefinitions(&mut self, cmd: &SimpleCommand) {
        let texts: Vec<Option<String>> = cmd.words.iter().map(IrWord::literal).collect();
        match texts.first().cloned().flatten().as_deref() {
            Some("alias") => {
                for t in texts.iter().skip(1).flatten() {
                    if let Some((name, _)) = t.split_once('=') {
                        self.redefined.insert(name.to_string());
                    }
                }
            }
            Some("hash") => {
                // Every operand may be a name given a path (`-p PATH NAME`,
                // clustered `-rp`…).
                for t in texts.iter().skip(1).flatten() {
                    if !t.starts_with('-') {
                        self.redefined.insert(t.clone());
                    }
                }
            }
            _ => {}
        }
    }

    fn declaration(
        &mut self,
        node: Node<'_>,
        form: Form,
        redirects: &[Node<'_>],
        out: &mut Vec<Item>,
    ) {
        let mut cmd = SimpleCommand::new(self.text(node).to_string(), form, &self.context);
        let mut after = Vec::new();
        for c in Self::children(node) {
            match c.kind() {
                "declare" | "typeset" | "export" | "readonly" | "local" | "unset" | "unsetenv" => {
                    cmd.words.push(IrWord::single(
                        c.kind().into(),
                        Origin::Literal,
                        c.kind().into(),
                    ));
                }
                "variable_assignment" => {
                    let a = self.assignment(c, out);
                    // The classifier sees `NAME=VALUE` as one word.
                    let mut w = IrWord::single(
                        format!(
                            "{}{}=",
                            a.name,
                            a.subscript
                                .as_ref()
                                .map(|s| format!("[{s}]"))
                                .unwrap_or_default()
                        ),
                        Origin::Literal,
                        a.raw.clone(),
                    );
                    if let Some(v) = &a.value {
                        w.pieces.extend(v.pieces.iter().cloned());
                    } else {
                        w.pieces.push(Piece {
                            text: "(…)".into(),
                            origin: Origin::Quoted,
                            var: None,
                            ansi_c: false,
                            plain_var: false,
                        });
                    }
                    cmd.words.push(w);
                    cmd.assignments.push(a);
                }
                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                    self.redirect(c, &mut cmd, &mut after, out)
                }
                "comment" => {}
                "subscript" => {
                    // `unset a[$i]`: the subscript is arithmetic.
                    self.arithmetic(c, out);
                    cmd.words.push(IrWord::single(
                        self.text(c).into(),
                        Origin::Quoted,
                        self.text(c).into(),
                    ));
                }
                _ if c.is_named() => {
                    let w = self.word(c, out);
                    cmd.words.push(w);
                }
                _ => {}
            }
        }
        for r in redirects {
            self.redirect(*r, &mut cmd, &mut after, out);
        }
        out.push(Item::Command(cmd));
        out.extend(after);
    }

    fn function(&mut self, node: Node<'_>, redirects: &[Node<'_>], out: &mut Vec<Item>) {
        if let Some(name) = node.child_by_field_name("name") {
            self.redefined.insert(self.text(name).to_string());
        }
        // The body is judged as if it ran (it runs when called), in a copy of
        // the shell; its redirects apply to every call.
        self.isolated(Construct::FunctionBody, out, |l, inner| {
            for c in Self::children(node) {
                match c.kind() {
                    "compound_statement"
                    | "subshell"
                    | "test_command"
                    | "if_statement"
                    | "while_statement"
                    | "for_statement"
                    | "c_style_for_statement"
                    | "case_statement" => l.statement(c, inner),
                    "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                        let mut cmd =
                            SimpleCommand::new(l.text(c).to_string(), Form::Plain, &l.context);
                        let mut after = Vec::new();
                        l.redirect(c, &mut cmd, &mut after, inner);
                        inner.push(Item::Command(cmd));
                        inner.extend(after);
                    }
                    "word" | "comment" => {}
                    _ if c.is_named() => l.statement(c, inner),
                    _ => {}
                }
            }
            if !redirects.is_empty() {
                let mut cmd = SimpleCommand::new(l.text(node).to_string(), Form::Plain, &l.context);
                let mut after = Vec::new();
                for r in redirects {
                    l.redirect(*r, &mut cmd, &mut after, inner);
                }
                inner.push(Item::Command(cmd));
                inner.extend(after);
            }
        });
    }

    fn for_statement(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        self.in_context(Construct::Loop, |l| {
            let mut var = String::new();
            let mut values = Vec::new();
            let mut saw_in = false;
            let mut body = Vec::new();
            for (i, c) in Self::children(node).iter().enumerate() {
                match (node.field_name_for_child(i as u32), c.kind()) {
                    (Some("variable"), _) => var = l.text(*c).to_string(),
                    (Some("value"), _) => {
                        let w = l.word(*c, out);
                        values.push(w);
                    }
                    (_, "in") => saw_in = true,
                    (Some("body"), _) => body.push(*c),
                    (_, "comment") => {}
                    _ if c.is_named() => body.push(*c),
                    _ => {}
                }
            }
            if !saw_in {
                // `for x; do`: the positional parameters, unknown.
                values.push(IrWord::single("$@".into(), Origin::Unknown, "$@".into()));
            }
            out.push(Item::Loop { var, values });
            for b in body {
                l.statement(b, out);
            }
        });
    }

    fn case_item(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        for (i, c) in Self::children(node).iter().enumerate() {
            match node.field_name_for_child(i as u32) {
                Some("value") => {
                    // A pattern: its substitutions run, and its expansions
                    // are compared.
                    self.judged_expansion(*c, out);
                }
                Some("termination" | "fallthrough") => {}
                _ if c.is_named() && c.kind() != "comment" => self.statement(*c, out),
                _ => {}
            }
        }
    }

    /// A word the shell expands that is no command's argument — a `case`
    /// value or pattern, an expansion in an unquoted heredoc's body: judged
    /// as the `[[ WORD ]]` test that holds it, so a variable it expands is
    /// judged (a case on a secret is an oracle on it, one branch per
    /// character; a heredoc hands it to the program's input).
    fn judged_expansion(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        let w = self.word(node, out);
        self.judged_word(w, out);
    }

    /// `w` judged as the `[[ WORD ]]` test that holds it.
    fn judged_word(&mut self, w: IrWord, out: &mut Vec<Item>) {
        let mut cmd = SimpleCommand::new(w.raw.clone(), Form::Test, &self.context);
        cmd.words
            .push(IrWord::single("[[".into(), Origin::Literal, "[[".into()));
        cmd.words.push(w);
        cmd.words
            .push(IrWord::single("]]".into(), Origin::Literal, "]]".into()));
        out.push(Item::Command(cmd));
    }

    /// `[[ … ]]`: operands and operators, flattened in order.
    fn test(&mut self, node: Node<'_>, redirects: &[Node<'_>], out: &mut Vec<Item>) {
        let mut cmd = SimpleCommand::new(self.text(node).to_string(), Form::Test, &self.context);
        cmd.words
            .push(IrWord::single("[[".into(), Origin::Literal, "[[".into()));
        let mut stack: Vec<Node<'_>> = Self::children(node).into_iter().rev().collect();
        while let Some(n) = stack.pop() {
            match n.kind() {
                "[[" | "]]" | "[" | "]" => {}
                "binary_expression"
                | "unary_expression"
                | "parenthesized_expression"
                | "postfix_expression"
                | "ternary_expression" => {
                    stack.extend(Self::children(n).into_iter().rev());
                }
                "test_operator" => {
                    let t = self.text(n).to_string();
                    cmd.words
                        .push(IrWord::single(t.clone(), Origin::Literal, t));
                }
                "comment" => {}
                _ if !n.is_named() => {
                    let t = n.kind().to_string();
                    cmd.words
                        .push(IrWord::single(t.clone(), Origin::Literal, t));
                }
                "regex" | "extglob_pattern" => {
                    let t = self.text(n).to_string();
                    cmd.words.push(IrWord::single(t.clone(), Origin::Quoted, t));
                }
                _ => {
                    let w = self.word(n, out);
                    cmd.words.push(w);
                }
            }
        }
        cmd.words
            .push(IrWord::single("]]".into(), Origin::Literal, "]]".into()));
        let mut after = Vec::new();
        for r in redirects {
            self.redirect(*r, &mut cmd, &mut after, out);
        }
        out.push(Item::Command(cmd));
        out.extend(after);
    }

    fn assignment(&mut self, node: Node<'_>, out: &mut Vec<Item>) -> Assignment {
        let mut a = Assignment {
            name: String::new(),
            subscript: None,
            value: None,
            elements: Vec::new(),
            raw: self.text(node).to_string(),
        };
        let mut has_value = false;
        for (i, c) in Self::children(node).iter().enumerate() {
            match (node.field_name_for_child(i as u32), c.kind()) {
                (Some("name"), "subscript") => {
                    if let Some(n) = c.child_by_field_name("name") {
                        a.name = self.text(n).to_string();
                    }
                    if let Some(ix) = c.child_by_field_name("index") {
                        a.subscript = Some(self.text(ix).to_string());
                    }
                    self.arithmetic(*c, out);
                }
                (Some("name"), _) => a.name = self.text(*c).to_string(),
                (Some("value"), "array") => {
                    has_value = true;
                    for e in Self::children(*c) {
                        if e.is_named() && e.kind() != "comment" {
                            let w = self.word(e, out);
                            a.elements.push(w);
                        }
                    }
                }
                (Some("value"), _) => {
                    has_value = true;
                    a.value = Some(self.word(*c, out));
                }
                _ => {}
            }
        }
        if !has_value {
            a.value = Some(IrWord::single(String::new(), Origin::Quoted, String::new()));
        }
        a
    }

    /// A redirect of `cmd`. Commands that run inside it (substitutions in its
    /// target, the heredoc body) go to `out` before the command; a heredoc
    /// line's continuation (`&& rest`) is handled by [`Self::redirected`].
    fn redirect(
        &mut self,
        node: Node<'_>,
        cmd: &mut SimpleCommand,
        _after: &mut Vec<Item>,
        out: &mut Vec<Item>,
    ) {
        let kids = Self::children(node);
        let mut op = String::new();
        match node.kind() {
            "file_redirect" => {
                let mut target = None;
                for (i, c) in kids.iter().enumerate() {
                    match node.field_name_for_child(i as u32) {
                        Some("descriptor") => op.push_str(self.text(*c)),
                        Some("destination") => {
                            if target.is_none() {
                                target = Some(self.word(*c, out));
                            } else {
                                // `> a b`: bash takes one word; more is odd.
                                let w = self.word(*c, out);
                                cmd.words.push(w);
                            }
                        }
                        _ if !c.is_named() => op.push_str(c.kind()),
                        _ => {
                            let _ = self.word(*c, out);
                        }
                    }
                }
                match target {
                    Some(t) => cmd.redirects.push(Redirect {
                        op,
                        target: Target::File(t),
                    }),
                    None => out.push(Item::Unknown {
                        text: self.text(node).into(),
                        why: "a redirect without a target".into(),
                    }),
                }
            }
            "herestring_redirect" => {
                let mut word = None;
                for (i, c) in kids.iter().enumerate() {
                    match node.field_name_for_child(i as u32) {
                        Some("descriptor") => op.push_str(self.text(*c)),
                        _ if !c.is_named() => op.push_str(c.kind()),
                        _ => word = Some(self.word(*c, out)),
                    }
                }
                let w = word.unwrap_or_else(|| {
                    IrWord::single(String::new(), Origin::Quoted, String::new())
                });
                cmd.redirects.push(Redirect {
                    op,
                    target: Target::Herestring(w),
                });
            }
            "heredoc_redirect" => {
                let mut quoted = false;
                let mut body = String::new();
                for (i, c) in kids.iter().enumerate() {
                    match (node.field_name_for_child(i as u32), c.kind()) {
                        (Some("descriptor"), _) => op.push_str(self.text(*c)),
                        (_, "heredoc_start") => {
                            let start = self.text(*c);
                            quoted = start.contains(['\'', '"', '\\']);
                            if start.contains([';', '&', '|', '(', ')', '<', '>', ' ', '\t']) {
                                // `<<EOF;`: bash ends the delimiter at `;`, the
                                // grammar does not; its reading of the line is
                                // not bash's.
                                out.push(Item::Unknown {
                                    text: self.text(node).into(),
                                    why: format!(
                                        "the heredoc delimiter `{start}` holds an operator; the parser's reading of the line is not the shell's"
                                    ),
                                });
                            }
                        }
                        (_, "heredoc_body") => {
                            body.push_str(self.text(*c));
                            if !quoted {
                                self.in_context(Construct::Heredoc, |l| l.heredoc_body(*c, out));
                            }
                        }
                        (_, "<<" | "<<-")
                            if op.is_empty() || op.chars().all(|d| d.is_ascii_digit()) =>
                        {
                            op.push_str(c.kind())
                        }
                        // The rest of the line is lowered by `redirected`.
                        _ => {}
                    }
                }
                cmd.redirects.push(Redirect {
                    op,
                    target: Target::Heredoc { body, quoted },
                });
            }
            _ => out.push(Item::Unknown {
                text: self.text(node).into(),
                why: format!("an unknown redirect `{}`", node.kind()),
            }),
        }
    }

    /// The substitutions in an unquoted heredoc body run; the grammar leaves
    /// backticks in it as text, so those are read here.
    fn heredoc_body(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        let mut read = 0usize;
        for c in Self::children(node) {
            match c.kind() {
                "heredoc_content" | "heredoc_end" => {}
                _ if c.is_named() => {
                    read += 1;
                    self.judged_expansion(c, out);
                }
                _ => {}
            }
        }
        let body = self.text(node);
        // The grammar leaves some expansions as text (`<<-` with a tab
        // before `$NAME`): when the body holds more than it read, its
        // reading is not the shell's.
        if expansions_in_text(body) > read {
            out.push(Item::Unknown {
                text: body.to_string(),
                why: "the heredoc body holds an expansion the parser did not read".into(),
            });
        }
        if body.contains('`') {
            for code in super::words::backtick_spans(body) {
                out.push(Item::Code(code));
            }
        }
    }

    /// Arithmetic: the names it reads, the names it sets, and the
    /// substitutions inside it (which run).
    fn arithmetic(&mut self, node: Node<'_>, out: &mut Vec<Item>) {
        let mut names = Vec::new();
        let mut assigns = Vec::new();
        let mut stack = vec![node];
        while let Some(n) = stack.pop() {
            match n.kind() {
                "variable_name" | "word" => {
                    let t = self.text(n);
                    if t.bytes()
                        .next()
                        .is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
                    {
                        names.push(t.to_string());
                    } else if !t.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'#') {
                        // Text the grammar could not read as arithmetic.
                        names.push(t.to_string());
                    }
                }
                // `16#${x}`: a base with an expansion for its digits.
                "number" => stack.extend(Self::children(n).into_iter().filter(|c| c.is_named())),
                "simple_expansion" | "expansion" | "string" | "concatenation" | "raw_string"
                | "ansi_c_string" | "translated_string" => {
                    let w = self.word(n, out);
                    for p in &w.pieces {
                        match p.origin {
                            Origin::Expanded => {
                                names.push(p.var.clone().unwrap_or_else(|| p.text.clone()))
                            }
                            Origin::Unknown | Origin::Substituted => names.push(p.text.clone()),
                            Origin::Literal | Origin::Quoted => {
                                if !p.text.bytes().all(|b| b.is_ascii_digit()) {
                                    names.push(p.text.clone());
                                }
                            }
                        }
                    }
                }
                "command_substitution" | "process_substitution" | "arithmetic_expansion" => {
                    let _ = self.word(n, out);
                    names.push(self.text(n).to_string());
                }
                "binary_expression" | "unary_expression" | "postfix_expression" => {
                    let op = n
                        .child_by_field_name("operator")
                        .map(|o| o.kind())
                        .unwrap_or("");
                    let target = n.child_by_field_name("left").or_else(|| n.named_child(0));
                    if matches!(
                        op,
                        "=" | "+="
                            | "-="
                            | "*="
                            | "/="
                            | "%="
                            | "<<="
                            | ">>="
                            | "&="
                            | "^="
                            | "|="
                            | "++"
                            | "--"
                    ) {
                        if let Some(t) = target {
                            assigns.push(self.text(t).to_string());
                        }
                    }
                    stack.extend(Self::children(n).into_iter().filter(|c| c.is_named()));
                }
                "subscript" => {
                    if let Some(name) = n.child_by_field_name("name") {
                        names.push(self.text(name).to_string());
                    }
                    if let Some(ix) = n.child_by_field_name("index") {
                        stack.push(ix);
                    }
                }
                "variable_assignment" => {
                    if let Some(name) = n.child_by_field_name("name") {
                        assigns.push(self.text(name).to_string());
                    }
                    if let Some(v) = n.child_by_field_name("value") {
                        stack.push(v);
                    }
                }
                "comment" => {}
                _ => stack.extend(Self::children(n).into_iter().filter(|c| c.is_named())),
            }
        }
        out.push(Item::Arithmetic {
            resource: self.text(node).to_string(),
            names,
            assigns,
        });
    }

    /// One word, with every substitution in it lowered into `out` first.
    fn word(&mut self, node: Node<'_>, out: &mut Vec<Item>) -> IrWord {
        let raw = self.text(node).to_string();
        let mut pieces = Pieces::new();
        self.pieces(node, false, &mut pieces, out);
        if pieces.is_empty() {
            pieces.push(Piece {
                text: String::new(),
                origin: Origin::Quoted,
                var: None,
                ansi_c: false,
                plain_var: false,
            });
        }
        IrWord { pieces, raw }
    }

    fn piece(&self, text: String, origin: Origin) -> Piece {
        Piece {
            text,
            origin,
            var: None,
            ansi_c: false,
            plain_var: false,
        }
    }

    fn pieces(&mut self, node: Node<'_>, quoted: bool, pieces: &mut Pieces, out: &mut Vec<Item>) {
        let raw = self.text(node);
        match node.kind() {
            "word" | "number" | "command_name" | "extglob_pattern" | "regex"
                if node.named_child_count() == 0 =>
            {
                let origin = if quoted {
                    Origin::Quoted
                } else {
                    Origin::Literal
                };
                let text = if quoted {
                    raw.to_string()
                } else {
                    unescape_unquoted(raw)
                };
                let origin = if !quoted && raw.contains('\\') {
                    Origin::Quoted
                } else {
                    origin
                };
                pieces.push(self.piece(text, origin));
            }
            "command_name" | "concatenation" | "word" | "number" => {
                let mut last = node.start_byte();
                for c in Self::children(node) {
                    if !c.is_named() {
                        continue;
                    }
                    if c.start_byte() > last {
                        let gap = self.src.get(last..c.start_byte()).unwrap_or("");
                        let origin = if quoted {
                            Origin::Quoted
                        } else {
                            Origin::Literal
                        };
                        pieces.push(self.piece(unescape_unquoted(gap), origin));
                    }
                    self.pieces(c, quoted, pieces, out);
                    last = c.end_byte();
                }
                if node.end_byte() > last {
                    let gap = self.src.get(last..node.end_byte()).unwrap_or("");
                    let origin = if quoted {
                        Origin::Quoted
                    } else {
                        Origin::Literal
                    };
                    pieces.push(self.piece(unescape_unquoted(gap), origin));
                }
            }
            "raw_string" => {
                let inner = raw.strip_prefix('\'').unwrap_or(raw);
                let inner = inner.strip_suffix('\'').unwrap_or(inner);
                pieces.push(self.piece(inner.to_string(), Origin::Quoted));
            }
            "ansi_c_string" => match decode_ansi_c(raw) {
                Some(t) => {
                    let mut p = self.piece(t, Origin::Quoted);
                    p.ansi_c = true;
                    pieces.push(p);
                }
                None => {
                    let mut p = self.piece(raw.to_string(), Origin::Unknown);
                    p.ansi_c = true;
                    pieces.push(p);
                }
            },
            "string" | "translated_string" => {
                let prefix = if raw.starts_with('$') { 2 } else { 1 };
                let start = node.start_byte() + prefix.min(raw.len());
                let end = node.end_byte().saturating_sub(1).max(start);
                let mut last = start;
                for c in Self::children(node) {
                    if !c.is_named() || c.kind() == "string_content" {
                        continue;
                    }
                    if c.start_byte() > last {
                        let lit = self.src.get(last..c.start_byte()).unwrap_or("");
                        pieces.push(self.piece(super::words::unescape_double(lit), Origin::Quoted));
                    }
                    self.pieces(c, true, pieces, out);
                    last = c.end_byte().max(last);
                }
                if end > last {
                    let lit = self.src.get(last..end).unwrap_or("");
                    pieces.push(self.piece(super::words::unescape_double(lit), Origin::Quoted));
                }
                if raw.starts_with('$') {
                    // `$"…"`: translated through a message catalogue at run time.
                    for p in pieces.iter_mut() {
                        if p.origin == Origin::Quoted {
                            p.origin = Origin::Unknown;
                        }
                    }
                }
            }
            "simple_expansion" => {
                let name = raw.trim_start_matches('$').to_string();
                let mut p = self.piece(raw.to_string(), Origin::Expanded);
                p.var = Some(name);
                p.plain_var = true;
                pieces.push(p);
            }
            "expansion" => self.expansion(node, pieces, out),
            "command_substitution" => {
                self.isolated(Construct::Substitution, out, |l, inner| {
                    for c in Self::children(node) {
                        if c.is_named() {
                            match c.kind() {
                                "file_redirect" | "heredoc_redirect" | "herestring_redirect" => {
                                    // `$(< file)`: reads the file.
                                    let mut cmd = SimpleCommand::new(
                                        l.text(c).into(),
                                        Form::Plain,
                                        &l.context,
                                    );
                                    let mut after = Vec::new();
                                    l.redirect(c, &mut cmd, &mut after, inner);
                                    inner.push(Item::Command(cmd));
                                    inner.extend(after);
                                }
                                _ => l.statement(c, inner),
                            }
                        }
                    }
                });
                if raw.starts_with('`') && !raw.starts_with("``") && raw.contains('\\') {
                    // The grammar reads backticks' body as code already, but
                    // with its escapes kept: bash first turns `\``, `\$` and
                    // `\\` into `` ` ``, `$` and `\` (`` `echo \`id\`` `` runs
                    // `id`), so the body as bash reads it is walked too.
                    let body = raw
                        .strip_prefix('`')
                        .and_then(|b| b.strip_suffix('`'))
                        .unwrap_or(raw);
                    out.push(Item::Code(super::words::unescape_backticks(body)));
                }
                pieces.push(self.piece(raw.to_string(), Origin::Substituted));
            }
            "process_substitution" => {
                self.isolated(Construct::ProcessSubstitution, out, |l, inner| {
                    for c in Self::children(node) {
                        if c.is_named() {
                            l.statement(c, inner);
                        }
                    }
                });
                // The shell passes a `/dev/fd/N` path.
                pieces.push(self.piece("/dev/fd/63".into(), Origin::Quoted));
            }
            "arithmetic_expansion" => {
                for c in Self::children(node) {
                    if c.is_named() {
                        self.arithmetic(c, out);
                    }
                }
                pieces.push(self.piece(raw.to_string(), Origin::Unknown));
            }
            "brace_expression" => {
                // `{1..3}`: a sequence, expanded at run time.
                pieces.push(self.piece(
                    raw.to_string(),
                    if quoted {
                        Origin::Quoted
                    } else {
                        Origin::Literal
                    },
                ));
            }
            "string_content" | "heredoc_content" => {
                pieces.push(self.piece(super::words::unescape_double(raw), Origin::Quoted));
            }
            "array"
            | "subscript"
            | "binary_expression"
            | "unary_expression"
            | "ternary_expression"
            | "postfix_expression"
            | "parenthesized_expression" => {
                self.arithmetic(node, out);
                pieces.push(self.piece(raw.to_string(), Origin::Unknown));
            }
            "variable_name" | "special_variable_name" => {
                pieces.push(self.piece(
                    raw.to_string(),
                    if quoted {
                        Origin::Quoted
                    } else {
                        Origin::Literal
                    },
                ));
            }
            "comment" => {}
            _ => {
                // Anything else where a word goes (the grammar's recovery puts
                // a subshell or a group there): the words in it are walked for
                // substitutions, the statements in it lowered as statements,
                // and the word is unknown.
                if is_word_kind(node.kind()) {
                    for c in Self::children(node) {
                        if c.is_named() {
                            let mut ignored = Pieces::new();
                            self.pieces(c, quoted, &mut ignored, out);
                        }
                    }
                } else {
                    self.isolated(Construct::Subshell, out, |l, inner| {
                        l.statement(node, inner)
                    });
                }
                pieces.push(self.piece(raw.to_string(), Origin::Unknown));
            }
        }
    }

    /// `${…}`: a plain `${x}` is the variable; with an operator it is some
    /// other text (unknown unless the stage can tell); `${!x}`, `${x@P}` and
    /// friends are unknown, and their words' substitutions still run.
    fn expansion(&mut self, node: Node<'_>, pieces: &mut Pieces, out: &mut Vec<Item>) {
        let raw = self.text(node).to_string();
        let kids = Self::children(node);
        let mut name: Option<String> = None;
        let mut operators: Vec<String> = Vec::new();
        let mut other = false;
        for (i, c) in kids.iter().enumerate() {
            let field = node.field_name_for_child(i as u32);
            match (field, c.kind()) {
                (_, "${" | "}") => {}
                (_, "variable_name" | "special_variable_name") if name.is_none() => {
                    name = Some(self.text(*c).to_string())
                }
                (_, "subscript") => {
                    if let Some(n) = c.child_by_field_name("name") {
                        name.get_or_insert_with(|| self.text(n).to_string());
                    }
                    // `${a[i]}`: the index is arithmetic (for indexed arrays).
                    if let Some(ix) = c.child_by_field_name("index") {
                        let t = self.text(ix);
                        if t != "@" && t != "*" {
                            self.arithmetic(ix, out);
                        }
                    }
                    other = true;
                }
                (Some("operator"), k) => operators.push(k.to_string()),
                _ if c.is_named() && operators.last().is_some_and(|o| o == ":") => {
                    // `${x:OFFSET:LENGTH}`: both are arithmetic.
                    self.arithmetic(*c, out);
                    other = true;
                }
                _ if c.is_named() => {
                    // Words inside (`${x:-$(cmd)}`): substitutions run, and
                    // what they expand (`${x:-$API_KEY}`) is judged.
                    let mut inner = Pieces::new();
                    self.pieces(*c, true, &mut inner, out);
                    if inner.iter().any(|p| p.var.is_some()) {
                        let raw = self.text(*c).to_string();
                        self.judged_word(IrWord { pieces: inner, raw }, out);
                    }
                    other = true;
                }
                (_, k) => operators.push(k.to_string()),
            }
        }
        if operators.iter().any(|o| o == ":=" || o == "=")
            && name
                .as_deref()
                .is_some_and(crate::classify::table::lasting_assignment_matters)
        {
            // `${GLOBIGNORE:=x}` assigns the variable.
            out.push(Item::Unknown {
                text: raw.clone(),
                why: "the expansion assigns a variable that makes later programs load other code, or changes how the shell runs them".into(),
            });
        }
        if raw.contains('`') {
            // `${x:-`cmd`}`: backticks the grammar leaves as text in the word.
            for code in super::words::backtick_spans(&raw) {
                out.push(Item::Code(code));
            }
        }
        let mut p = self.piece(raw.clone(), Origin::Expanded);
        p.var = name.clone();
        if operators.iter().any(|o| o == "!") {
            // `${!x}` (indirection) and `${!prefix*}` (names).
            p.origin = Origin::Unknown;
            p.var = name.map(|n| format!("!{n}"));
        } else if operators.iter().any(|o| o == "@") {
            // `${x@P}` (prompt expansion runs substitutions), `${x@Q}`…
            p.origin = Origin::Unknown;
        } else if operators.is_empty() && !other {
            p.plain_var = true;
        }
        if operators.iter().any(|o| o == "#") && operators.len() == 1 && !other {
            // `${#x}`: a length, a number.
            p.origin = Origin::Unknown;
            p.plain_var = false;
        }
        pieces.push(p);
    }
}

/// The first element of a `list` node (following nested lists down their left
/// side, without recursion); the elements after it are appended to `rest`.
fn split_list<'t>(list: Node<'t>, rest: &mut Vec<Node<'t>>) -> Node<'t> {
    let mut current = list;
    loop {
        let mut cursor = current.walk();
        let children: Vec<Node<'t>> = current.named_children(&mut cursor).collect();
        let Some((&first, others)) = children.split_first() else {
            return current;
        };
        rest.extend(others.iter().copied());
        if first.kind() == "list" {
            current = first;
        } else {
            return first;
        }
    }
}

/// Kinds that are words or parts of one.
fn is_word_kind(kind: &str) -> bool {
    matches!(
        kind,
        "word"
            | "number"
            | "command_name"
            | "concatenation"
            | "string"
            | "translated_string"
            | "raw_string"
            | "ansi_c_string"
            | "string_content"
            | "simple_expansion"
            | "expansion"
            | "command_substitution"
            | "process_substitution"
            | "arithmetic_expansion"
            | "brace_expression"
            | "array"
            | "subscript"
            | "variable_name"
            | "special_variable_name"
            | "extglob_pattern"
            | "regex"
            | "heredoc_content"
            | "comment"
    )
}

/// Whether a line break separates two words of one command (outside any word).
fn line_break_between_words(node: Node<'_>, src: &str) -> bool {
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

/// How many `$` in `text` start an expansion (`$NAME`, `${`, `$(`, `$1`,
/// a special parameter), a backslash-escaped one aside.
fn expansions_in_text(text: &str) -> usize {
    let b = text.as_bytes();
    (0..b.len())
        .filter(|&i| {
            b[i] == b'$'
                && (i == 0 || b[i - 1] != b'\\')
                && b.get(i + 1)
                    .is_some_and(|n| n.is_ascii_alphanumeric() || b"_{(!@#?*-$".contains(n))
        })
        .count()
}
