//! Turning syntax-tree words into the strings the shell would pass, where that
//! can be known before running anything.

use std::path::Path;

use tree_sitter::Node;

/// One word of a command as the shell would expand it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Word {
    /// The expanded text; for parts not known until run time, their source text.
    pub(crate) text: String,
    /// Whether every part of the text is known now.
    pub(crate) known: bool,
    /// Whether ANSI-C quoting (`$'\x72m'`) was used: a classic obfuscation.
    pub(crate) ansi_c: bool,
    /// Whether the word had no quotes at all (globs and brace expansion apply).
    pub(crate) unquoted: bool,
}

impl Word {
    fn literal(text: String, unquoted: bool) -> Self {
        Word {
            text,
            known: true,
            ansi_c: false,
            unquoted,
        }
    }

    fn unknown(text: String) -> Self {
        Word {
            text,
            known: false,
            ansi_c: false,
            unquoted: false,
        }
    }

    fn append(&mut self, other: Word) {
        self.text.push_str(&other.text);
        self.known &= other.known;
        self.ansi_c |= other.ansi_c;
        self.unquoted &= other.unquoted;
    }
}

/// Variables whose value is known before the command runs.
pub(crate) struct Known<'a> {
    pub(crate) home: &'a Path,
    pub(crate) cwd: Option<&'a Path>,
}

impl Known<'_> {
    fn var(&self, name: &str) -> Option<String> {
        match name {
            "HOME" => Some(self.home.to_string_lossy().into_owned()),
            "PWD" => self.cwd.map(|c| c.to_string_lossy().into_owned()),
            _ => None,
        }
    }
}

/// The source text of `node`.
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
}

/// Expands one argument node.
pub(crate) fn expand(node: Node<'_>, src: &str, known: &Known<'_>) -> Word {
    let raw = text(node, src);
    match node.kind() {
        "word" | "number" | "command_name" if node.named_child_count() == 0 => {
            Word::literal(unescape_unquoted(raw), !raw.contains('\\'))
        }
        "command_name" | "concatenation" => {
            let mut word = Word::literal(String::new(), true);
            let mut cursor = node.walk();
            let mut last_end = node.start_byte();
            for child in node.named_children(&mut cursor) {
                // Text between children (unnamed tokens) is literal.
                if child.start_byte() > last_end {
                    let gap = src.get(last_end..child.start_byte()).unwrap_or("");
                    word.append(Word::literal(unescape_unquoted(gap), true));
                }
                word.append(expand(child, src, known));
                last_end = child.end_byte();
            }
            if node.end_byte() > last_end {
                let gap = src.get(last_end..node.end_byte()).unwrap_or("");
                word.append(Word::literal(unescape_unquoted(gap), true));
            }
            word
        }
        "raw_string" => Word::literal(strip_quotes(raw, '\'').to_string(), false),
        "ansi_c_string" => match decode_ansi_c(raw) {
            Some(text) => Word {
                text,
                known: true,
                ansi_c: true,
                unquoted: false,
            },
            None => Word {
                text: raw.to_string(),
                known: false,
                ansi_c: true,
                unquoted: false,
            },
        },
        "string" | "translated_string" => expand_double_quoted(node, src, known),
        "simple_expansion" | "expansion" => {
            let name = raw
                .trim_start_matches('$')
                .trim_start_matches('{')
                .trim_end_matches('}');
            match known.var(name) {
                Some(v) => Word {
                    text: v,
                    known: true,
                    ansi_c: false,
                    unquoted: false,
                },
                None => Word::unknown(raw.to_string()),
            }
        }
        // The shell passes a `/dev/fd/N` path for `<(…)`; the command inside is
        // analysed on its own.
        "process_substitution" => Word::literal("/dev/fd/63".to_string(), false),
        _ => Word::unknown(raw.to_string()),
    }
}

/// A `"…"` string: literal text with `\"`, `\\`, `\$`, `` \` `` escapes, and
/// expansions inside.
fn expand_double_quoted(node: Node<'_>, src: &str, known: &Known<'_>) -> Word {
    let raw = text(node, src);
    let prefix = if raw.starts_with('$') { 2 } else { 1 };
    let start = node.start_byte() + prefix.min(raw.len());
    let end = node.end_byte().saturating_sub(1).max(start);
    let mut word = Word::literal(String::new(), false);
    let mut last = start;
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if child.kind() == "string_content" {
            continue;
        }
        if child.start_byte() > last {
            let lit = src.get(last..child.start_byte()).unwrap_or("");
            word.append(Word::literal(unescape_double(lit), false));
        }
        let mut inner = expand(child, src, known);
        inner.unquoted = false;
        word.append(inner);
        last = child.end_byte().max(last);
    }
    if end > last {
        let lit = src.get(last..end).unwrap_or("");
        word.append(Word::literal(unescape_double(lit), false));
    }
    word.unquoted = false;
    word
}

fn strip_quotes(raw: &str, q: char) -> &str {
    let s = raw.strip_prefix(q).unwrap_or(raw);
    s.strip_suffix(q).unwrap_or(s)
}

/// Unquoted text: a backslash quotes the next character; `\` + newline vanishes.
pub(crate) fn unescape_unquoted(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('\n') | None => {}
                Some(n) => out.push(n),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Inside double quotes a backslash only quotes `$`, `` ` ``, `"`, `\` and newline.
fn unescape_double(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.peek() {
                Some('$' | '`' | '"' | '\\') => {
                    if let Some(n) = chars.next() {
                        out.push(n);
                    }
                }
                Some('\n') => {
                    chars.next();
                }
                _ => out.push(c),
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Decodes `$'…'` the way bash does; `None` for escapes it cannot decode.
pub(crate) fn decode_ansi_c(raw: &str) -> Option<String> {
    let body = raw.strip_prefix("$'")?.strip_suffix('\'')?;
    let mut out = String::new();
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let e = chars.next()?;
        match e {
            'n' => out.push('\n'),
            't' => out.push('\t'),
            'r' => out.push('\r'),
            'a' => out.push('\x07'),
            'b' => out.push('\x08'),
            'e' | 'E' => out.push('\x1b'),
            'f' => out.push('\x0c'),
            'v' => out.push('\x0b'),
            '\\' | '\'' | '"' | '?' => out.push(e),
            'x' | 'u' | 'U' => {
                let max = match e {
                    'x' => 2,
                    'u' => 4,
                    _ => 8,
                };
                let mut digits = String::new();
                while digits.len() < max {
                    match chars.peek() {
                        Some(d) if d.is_ascii_hexdigit() => {
                            digits.push(*d);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                let n = u32::from_str_radix(&digits, 16).ok()?;
                out.push(char::from_u32(n)?);
            }
            '0'..='7' => {
                let mut digits = String::from(e);
                while digits.len() < 3 {
                    match chars.peek() {
                        Some(d @ '0'..='7') => {
                            digits.push(*d);
                            chars.next();
                        }
                        _ => break,
                    }
                }
                let n = u32::from_str_radix(&digits, 8).ok()?;
                out.push(char::from_u32(n)?);
            }
            'c' => return None,
            other => {
                out.push('\\');
                out.push(other);
            }
        }
    }
    Some(out)
}

/// Prepares source for the grammar without changing what bash would run:
/// removes `\`+newline outside single quotes and comments (bash joins those
/// lines before splitting words; the grammar splits the word), and puts a space
/// after a newline that is followed by a backslash (the grammar glues
/// `ls⏎\rm x` into one command; bash runs two).
pub(crate) fn join_continuations(src: &str) -> std::borrow::Cow<'_, str> {
    if !src.contains("\\\n") && !src.contains("\n\\") {
        return std::borrow::Cow::Borrowed(src);
    }
    #[derive(PartialEq)]
    enum State {
        Normal,
        Single,
        AnsiC,
        Double,
        Comment,
    }
    let mut out = String::with_capacity(src.len());
    let mut state = State::Normal;
    let mut chars = src.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        match state {
            State::Normal | State::Double if c == '\\' => {
                match chars.next() {
                    Some('\n') => {}
                    Some(n) => {
                        out.push(c);
                        out.push(n);
                    }
                    None => out.push(c),
                }
                prev = Some('x');
                continue;
            }
            State::Normal | State::Comment if c == '\n' && chars.peek() == Some(&'\\') => {
                state = State::Normal;
                out.push(c);
                out.push(' ');
                prev = Some(' ');
                continue;
            }
            State::Normal => match c {
                '\'' => {
                    state = if prev == Some('$') {
                        State::AnsiC
                    } else {
                        State::Single
                    }
                }
                '"' => state = State::Double,
                '#' if prev.is_none_or(|p| p.is_whitespace() || ";&|()".contains(p)) => {
                    state = State::Comment
                }
                _ => {}
            },
            State::Single if c == '\'' => state = State::Normal,
            State::AnsiC if c == '\\' => {
                out.push(c);
                if let Some(n) = chars.next() {
                    out.push(n);
                }
                continue;
            }
            State::AnsiC if c == '\'' => state = State::Normal,
            State::Double if c == '"' => state = State::Normal,
            State::Comment if c == '\n' => state = State::Normal,
            _ => {}
        }
        out.push(c);
        prev = Some(c);
    }
    std::borrow::Cow::Owned(out)
}

/// The commands inside unescaped backticks of an unquoted heredoc body.
pub(crate) fn backtick_spans(body: &str) -> Vec<String> {
    let mut spans = Vec::new();
    let mut current: Option<String> = None;
    let mut chars = body.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => {
                let next = chars.next();
                if let (Some(cur), Some(n)) = (current.as_mut(), next) {
                    cur.push(n);
                }
            }
            '`' => match current.take() {
                Some(code) => spans.push(code),
                None => current = Some(String::new()),
            },
            _ => {
                if let Some(cur) = current.as_mut() {
                    cur.push(c);
                }
            }
        }
    }
    spans
}

/// Brace expansion of an unquoted word: `-{r,f}` → `-r`, `-f`;
/// `a{1,2}{x,y}` → four words. Words without a `{…,…}` group come back as is.
pub(crate) fn brace_expand(word: &str) -> Vec<String> {
    const LIMIT: usize = 256;
    let Some((open, close)) = find_brace_group(word) else {
        return vec![word.to_string()];
    };
    let pre = &word[..open];
    let body = &word[open + 1..close];
    let post = &word[close + 1..];
    let mut out = Vec::new();
    for alt in split_top_level(body) {
        for tail in brace_expand(&format!("{alt}{post}")) {
            out.push(format!("{pre}{tail}"));
            if out.len() >= LIMIT {
                return out;
            }
        }
    }
    out
}

/// The first `{…}` holding a top-level comma.
fn find_brace_group(word: &str) -> Option<(usize, usize)> {
    let bytes = word.as_bytes();
    for (open, b) in bytes.iter().enumerate() {
        if *b != b'{' {
            continue;
        }
        let mut depth = 0;
        let mut comma = false;
        for (i, c) in bytes.iter().enumerate().skip(open) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        if comma {
                            return Some((open, i));
                        }
                        break;
                    }
                }
                b',' if depth == 1 => comma = true,
                _ => {}
            }
        }
    }
    None
}

fn split_top_level(body: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0;
    let mut start = 0;
    for (i, c) in body.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                parts.push(&body[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&body[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ansi_c() {
        assert_eq!(decode_ansi_c("$'\\x72m'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("$'\\162\\155'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("$'a\\tb'").as_deref(), Some("a\tb"));
        assert_eq!(decode_ansi_c("$'\\u0072m'").as_deref(), Some("rm"));
        assert_eq!(decode_ansi_c("$'\\cA'"), None);
    }

    #[test]
    fn braces() {
        assert_eq!(brace_expand("-{r,f}"), vec!["-r", "-f"]);
        assert_eq!(brace_expand("a{1,2}{x,y}").len(), 4);
        assert_eq!(brace_expand("{}"), vec!["{}"]);
        assert_eq!(brace_expand("x"), vec!["x"]);
        assert_eq!(brace_expand("{a,{b,c}}"), vec!["a", "b", "c"]);
    }

    #[test]
    fn continuations() {
        assert_eq!(join_continuations("r\\\nm -rf x"), "rm -rf x");
        assert_eq!(join_continuations("echo 'a\\\nb'"), "echo 'a\\\nb'");
        assert_eq!(join_continuations("echo \"a\\\nb\""), "echo \"ab\"");
        assert_eq!(join_continuations("# c \\\nrm x"), "# c \\\nrm x");
        assert_eq!(join_continuations("ls\n\\rm x"), "ls\n \\rm x");
        assert_eq!(join_continuations("ls # c\n\\rm x"), "ls # c\n \\rm x");
        assert_eq!(join_continuations("echo 'a\n\\b'"), "echo 'a\n\\b'");
        assert_eq!(backtick_spans("a `id` b \\`x\\` `ls`"), vec!["id", "ls"]);
    }

    #[test]
    fn unescapes() {
        assert_eq!(unescape_unquoted("\\rm"), "rm");
        assert_eq!(unescape_double("a\\$b\\n"), "a$b\\n");
    }
}
