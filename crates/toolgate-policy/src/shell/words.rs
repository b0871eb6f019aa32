//! Turning syntax-tree words into the strings the shell would pass, where that
//! can be known before running anything.

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

/// The source text of `node`.
pub(crate) fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.byte_range()).unwrap_or("")
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
pub(crate) fn unescape_double(s: &str) -> String {
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

/// The body of a backtick substitution as bash runs it: `\``, `\$` and
/// `\\` lose their backslash; any other backslash stays.
pub(crate) fn unescape_backticks(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut chars = body.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(&n) = chars.peek() {
                if matches!(n, '`' | '$' | '\\') {
                    out.push(n);
                    chars.next();
                    continue;
                }
            }
        }
        out.push(c);
    }
    out
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
/// `None` when it would make more than [`super::MAX_BRACE_WORDS`] words
/// (`{a,b}{a,b}…` doubles with each group): the work stops there, and the
/// caller judges the command as one it cannot analyse.
pub(crate) fn brace_expand(word: &str) -> Option<Vec<String>> {
    let mut out = Vec::new();
    expand_into(word, "", &mut out)?;
    Some(out)
}

/// Pushes the expansions of `word`, each after `pre`, onto `out`; `None`
/// once `out` would pass the limit.
fn expand_into(word: &str, pre: &str, out: &mut Vec<String>) -> Option<()> {
    let Some((open, close)) = find_brace_group(word) else {
        if out.len() >= super::MAX_BRACE_WORDS {
            return None;
        }
        out.push(format!("{pre}{word}"));
        return Some(());
    };
    let head = format!("{pre}{}", &word[..open]);
    let body = &word[open + 1..close];
    let post = &word[close + 1..];
    for alt in split_top_level(body) {
        expand_into(&format!("{alt}{post}"), &head, out)?;
    }
    Some(())
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
        let e = |w: &str| brace_expand(w).unwrap();
        assert_eq!(e("-{r,f}"), vec!["-r", "-f"]);
        assert_eq!(e("a{1,2}{x,y}").len(), 4);
        assert_eq!(e("a{1,2}{x,y}")[3], "a2y");
        assert_eq!(e("{}"), vec!["{}"]);
        assert_eq!(e("x"), vec!["x"]);
        assert_eq!(e("{a,{b,c}}"), vec!["a", "b", "c"]);
        // 2^8 = 256 words is the limit; one more group is past it.
        assert_eq!(e(&"{a,b}".repeat(8)).len(), super::super::MAX_BRACE_WORDS);
        assert_eq!(brace_expand(&"{a,b}".repeat(9)), None);
        assert_eq!(brace_expand(&"{a,b}".repeat(40)), None);
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
        assert_eq!(
            unescape_backticks("echo \\`id\\` \\$x \\\\ \\n"),
            "echo `id` $x \\ \\n"
        );
    }

    #[test]
    fn unescapes() {
        assert_eq!(unescape_unquoted("\\rm"), "rm");
        assert_eq!(unescape_double("a\\$b\\n"), "a$b\\n");
    }
}
