//! The grammar, as the walker knows it: every node kind and field of
//! tree-sitter-bash, each with the stage that handles it, and the check that a
//! tree holds nothing else.
//!
//! The lowering (`super::ir`) has an arm for each kind listed here. A tree
//! with a kind or a field outside these tables (a grammar upgrade added one), a
//! parse error, a missing node, or constructs nested deeper than
//! [`super::MAX_NESTING`] is not walked at all: the whole command is opaque. The
//! test `every_grammar_node_kind_and_field_has_an_arm` reads the grammar's own
//! `node-types.json` and fails on any kind or field missing here.

use std::time::Instant;

use tree_sitter::{Node, TreeCursor};

/// Named node kinds, each with what it is to the walker.
const NAMED: &[(&str, Role)] = &[
    ("program", Role::Sequence),
    ("list", Role::Sequence),
    ("pipeline", Role::Sequence),
    ("redirected_statement", Role::Statement),
    ("command", Role::Statement),
    ("declaration_command", Role::Statement),
    ("unset_command", Role::Statement),
    ("variable_assignment", Role::Statement),
    ("variable_assignments", Role::Statement),
    ("negated_command", Role::Statement),
    ("test_command", Role::Construct),
    ("subshell", Role::Construct),
    ("compound_statement", Role::Construct),
    ("if_statement", Role::Construct),
    ("elif_clause", Role::Construct),
    ("else_clause", Role::Construct),
    ("while_statement", Role::Construct),
    ("for_statement", Role::Construct),
    ("c_style_for_statement", Role::Construct),
    ("do_group", Role::Construct),
    ("case_statement", Role::Construct),
    ("case_item", Role::Construct),
    ("function_definition", Role::Construct),
    ("file_redirect", Role::Redirect),
    ("heredoc_redirect", Role::Redirect),
    ("herestring_redirect", Role::Redirect),
    ("heredoc_body", Role::Redirect),
    ("heredoc_start", Role::Leaf),
    ("heredoc_end", Role::Leaf),
    ("heredoc_content", Role::Leaf),
    ("file_descriptor", Role::Leaf),
    ("command_name", Role::Word),
    ("word", Role::Word),
    ("number", Role::Word),
    ("concatenation", Role::Word),
    ("string", Role::Word),
    ("translated_string", Role::Word),
    ("raw_string", Role::Leaf),
    ("ansi_c_string", Role::Leaf),
    ("string_content", Role::Leaf),
    ("simple_expansion", Role::Word),
    ("expansion", Role::Word),
    ("command_substitution", Role::Construct),
    ("process_substitution", Role::Construct),
    ("arithmetic_expansion", Role::Arithmetic),
    ("brace_expression", Role::Word),
    ("array", Role::Word),
    ("subscript", Role::Arithmetic),
    ("binary_expression", Role::Arithmetic),
    ("unary_expression", Role::Arithmetic),
    ("postfix_expression", Role::Arithmetic),
    ("ternary_expression", Role::Arithmetic),
    ("parenthesized_expression", Role::Arithmetic),
    ("variable_name", Role::Leaf),
    ("special_variable_name", Role::Leaf),
    ("extglob_pattern", Role::Leaf),
    ("regex", Role::Leaf),
    ("test_operator", Role::Leaf),
    ("comment", Role::Leaf),
];

/// Anonymous tokens: operators, keywords and punctuation. All are known to the
/// lowering; a new one is opaque like a new kind.
const TOKENS: &[&str] = &[
    // Lists, pipelines, case terminators.
    "&&", "||", ";", "&", "|", "|&", ";;", ";&", ";;&", // Redirects.
    "<", ">", ">>", "&>", "&>>", "<&", ">&", "<&-", ">&-", ">|", "<<", "<<-", "<<<",
    // Grouping and substitution.
    "(", ")", "{", "}", "((", "))", "[", "]", "[[", "]]", "$(", "$((", "$[", "${", "`", "``", "$`",
    "<(", ">(", "$", "\"", // Keywords.
    "if", "then", "else", "elif", "fi", "case", "esac", "in", "for", "select", "while", "until",
    "do", "done", "function", "declare", "typeset", "export", "readonly", "local", "unset",
    "unsetenv", // Expansion operators (`${x:-y}`, `${x@Q}`…).
    "#", "##", "%", "%%", "/", "//", "/#", "/%", ",", ",,", "^", "^^", ":", ":-", ":=", ":?", ":+",
    "-", "+", "=", "?", "@", "!", "*", "A", "E", "K", "L", "P", "Q", "U", "a", "k", "u", "..",
    "~", // Arithmetic and test operators.
    "==", "!=", "=~", "<=", ">=", "<<=", ">>=", "+=", "-=", "*=", "/=", "%=", "&=", "^=", "|=",
    "**", "**=", "++", "--", "-a", "-o",
];

/// The fields of each kind that has fields; every one is read by the lowering.
const FIELDS: &[(&str, &[&str])] = &[
    ("binary_expression", &["left", "operator", "right"]),
    (
        "c_style_for_statement",
        &["body", "condition", "initializer", "update"],
    ),
    ("case_item", &["fallthrough", "termination", "value"]),
    ("case_statement", &["value"]),
    ("command", &["argument", "name", "redirect"]),
    ("command_substitution", &["redirect"]),
    ("expansion", &["operator"]),
    ("file_redirect", &["descriptor", "destination"]),
    ("for_statement", &["body", "value", "variable"]),
    ("function_definition", &["body", "name", "redirect"]),
    (
        "heredoc_redirect",
        &["argument", "descriptor", "operator", "redirect", "right"],
    ),
    ("herestring_redirect", &["descriptor"]),
    ("if_statement", &["condition"]),
    ("postfix_expression", &["operator"]),
    ("redirected_statement", &["body", "redirect"]),
    ("subscript", &["index", "name"]),
    (
        "ternary_expression",
        &["alternative", "condition", "consequence"],
    ),
    ("unary_expression", &["operator"]),
    ("variable_assignment", &["name", "value"]),
    ("while_statement", &["body", "condition"]),
];

/// What a named kind is to the walker (documentation, and the nesting count,
/// see [`nests`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// Runs its children one after another (`list`, `pipeline`, `program`):
    /// long chains are flattened without recursion.
    Sequence,
    /// One statement: a simple command, an assignment, `!`.
    Statement,
    /// A compound command or a substitution: a body run in some context.
    Construct,
    /// A redirect and its parts.
    Redirect,
    /// A word or a part of one.
    Word,
    /// Arithmetic (evaluated by the shell: variables in it are read as code).
    Arithmetic,
    /// A leaf whose text is read by its parent's arm.
    Leaf,
}

/// Whether the walker has an arm for the node kind `kind` (a named node, or an
/// anonymous token when `named` is false).
pub fn is_handled_kind(kind: &str, named: bool) -> bool {
    if named {
        NAMED.iter().any(|(k, _)| *k == kind)
    } else {
        TOKENS.contains(&kind)
    }
}

/// Whether the walker reads the field `field` of nodes of kind `kind`.
pub fn is_handled_field(kind: &str, field: &str) -> bool {
    FIELDS
        .iter()
        .any(|(k, fields)| *k == kind && fields.contains(&field))
}

/// Every kind the walker has an arm for, with whether it is named.
pub fn handled_kinds() -> impl Iterator<Item = (&'static str, bool)> {
    NAMED
        .iter()
        .map(|(k, _)| (*k, true))
        .chain(TOKENS.iter().map(|t| (*t, false)))
}

/// Whether a node counts toward the nesting limit: constructs, arithmetic,
/// redirects, and the words and statements that can hold themselves
/// (`${a:-${b:-…}}`, `"$("…")"`, `! ! cmd`). A simple command, a word and
/// a chain of `&&`/`|` do not: they are lowered without nesting.
fn nests(kind: &str, role: Role) -> bool {
    match role {
        Role::Construct | Role::Arithmetic | Role::Redirect => true,
        Role::Sequence | Role::Leaf => false,
        Role::Statement => matches!(kind, "negated_command"),
        Role::Word => matches!(kind, "expansion" | "string" | "translated_string" | "array"),
    }
}

fn role(kind: &str) -> Option<Role> {
    NAMED.iter().find(|(k, _)| *k == kind).map(|(_, r)| *r)
}

/// Why a tree cannot be walked, or `Ok` when every node in it is known, it
/// nests at most `max_nesting` constructs deep, and the check finished before
/// `deadline`. `Ok(Some(why))` when it did not parse cleanly: the command is
/// opaque, and what could be read is still walked (`ERROR` nodes' children
/// are known kinds) so that a destructive part keeps its risk.
pub(crate) fn validate(
    root: Node<'_>,
    src: &str,
    max_nesting: usize,
    deadline: Option<Instant>,
) -> Result<Option<String>, Unwalkable> {
    let mut syntax: Option<String> = None;
    let mut cursor: TreeCursor<'_> = root.walk();
    // The nodes open on the path from the root to the cursor: their kind,
    // and whether they count toward the nesting.
    let mut open: Vec<(&'static str, bool)> = Vec::new();
    let mut nesting = 0usize;
    let mut seen = 0usize;
    loop {
        let node = cursor.node();
        seen += 1;
        if seen.is_multiple_of(1024) && deadline.is_some_and(|d| Instant::now() > d) {
            return Err(Unwalkable::TooComplex);
        }
        if (node.is_error() || node.is_missing()) && syntax.is_none() {
            syntax = Some(error_detail(node, src));
        }
        let kind = node.kind();
        let counts = if node.is_error() {
            true
        } else if node.is_named() {
            match role(kind) {
                Some(r) => nests(kind, r),
                None => return Err(Unwalkable::UnknownKind(kind.to_string())),
            }
        } else if TOKENS.contains(&kind) {
            false
        } else {
            return Err(Unwalkable::UnknownKind(format!("`{kind}`")));
        };
        if let Some(field) = cursor.field_name() {
            let parent = open.last().map_or("", |(kind, _)| *kind);
            // Inside an `ERROR` node the grammar keeps fields of what it tried.
            if !is_handled_field(parent, field) && parent != "ERROR" {
                return Err(Unwalkable::UnknownKind(format!("{parent}.{field}")));
            }
        }
        if counts {
            nesting += 1;
            if nesting > max_nesting {
                return Err(Unwalkable::TooDeep);
            }
        }
        if cursor.goto_first_child() {
            open.push((if node.is_error() { "ERROR" } else { kind }, counts));
            continue;
        }
        if counts {
            nesting -= 1;
        }
        // Up until a sibling is found.
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                return Ok(syntax);
            }
            if open.pop().is_some_and(|(_, counts)| counts) {
                nesting -= 1;
            }
        }
    }
}

/// Why a tree is not walked.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Unwalkable {
    /// A kind or field this walker has no arm for.
    UnknownKind(String),
    /// Constructs nested deeper than the limit.
    TooDeep,
    /// The CPU budget ran out.
    TooComplex,
}

impl Unwalkable {
    /// The reason, in words.
    pub(crate) fn describe(&self, max_nesting: usize) -> String {
        match self {
            Unwalkable::UnknownKind(kind) => {
                format!("the grammar gave a construct the analyser does not know ({kind})")
            }
            Unwalkable::TooDeep => {
                format!("constructs are nested more than {max_nesting} deep")
            }
            Unwalkable::TooComplex => super::TOO_COMPLEX.to_string(),
        }
    }
}

fn error_detail(node: Node<'_>, src: &str) -> String {
    let at = node.start_position();
    let snippet: String = src
        .get(node.byte_range())
        .unwrap_or("")
        .chars()
        .take(40)
        .collect();
    let what = if node.is_missing() {
        format!("`{}` is missing", node.kind())
    } else {
        format!("`{snippet}`")
    };
    format!(
        "the command does not parse (line {}, column {}: {what})",
        at.row + 1,
        at.column + 1
    )
}
