//! An exact reader of git's configuration syntax (git-config(1), "Syntax"),
//! following the grammar git itself implements: sections with quoted
//! subsections, the legacy `[section.sub]` form, variables with no value
//! (boolean true), values with quotes, the escapes `\n \t \b \" \\`,
//! continuation lines, `#`/`;` comments, and a leading UTF-8 byte order mark.
//!
//! Anything git would refuse is an error here too, with its line; the caller
//! treats an error as "may run a program".

use thiserror::Error;

/// One `name = value` of a config file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// The full key: section and name lowercased, an extended (`"quoted"`)
    /// subsection verbatim, e.g. `remote.Origin.url`.
    pub key: String,
    /// The value; `None` for a variable written without `=` (boolean true).
    pub value: Option<String>,
    /// The 1-based line on which the variable starts.
    pub line: usize,
}

/// A config file git would refuse.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("bad config line {line}: {what}")]
pub struct ParseError {
    /// The 1-based line of the error.
    pub line: usize,
    /// What is wrong.
    pub what: &'static str,
}

struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
    line: usize,
    eof: bool,
    /// The last character read was a newline (errors name the line it ended).
    after_newline: bool,
}

impl Reader<'_> {
    /// git's `get_next_char`: `\r\n` reads as `\n`, end of input as `\n`.
    fn next(&mut self) -> u8 {
        let Some(&c) = self.bytes.get(self.pos) else {
            self.eof = true;
            return b'\n';
        };
        self.pos += 1;
        let c = if c == b'\r' && self.bytes.get(self.pos) == Some(&b'\n') {
            self.pos += 1;
            b'\n'
        } else {
            c
        };
        self.after_newline = c == b'\n';
        if c == b'\n' {
            self.line += 1;
        }
        c
    }

    fn err(&self, what: &'static str) -> ParseError {
        let line = if self.after_newline {
            self.line.saturating_sub(1).max(1)
        } else {
            self.line
        };
        ParseError { line, what }
    }
}

fn is_key_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'-'
}

/// C's `isspace` in the "C" locale.
fn is_space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r')
}

/// Parses a whole config file.
pub fn parse(text: &[u8]) -> Result<Vec<Entry>, ParseError> {
    let text = text.strip_prefix(b"\xef\xbb\xbf").unwrap_or(text);
    let mut r = Reader {
        bytes: text,
        pos: 0,
        line: 1,
        eof: false,
        after_newline: false,
    };
    let mut out = Vec::new();
    let mut section: Option<Vec<u8>> = None;
    let mut comment = false;
    loop {
        let c = r.next();
        if c == b'\n' {
            if r.eof {
                return Ok(out);
            }
            comment = false;
            continue;
        }
        if comment || is_space(c) {
            continue;
        }
        if c == b'#' || c == b';' {
            comment = true;
            continue;
        }
        if c == b'[' {
            section = Some(section_header(&mut r)?);
            continue;
        }
        if !c.is_ascii_alphabetic() {
            return Err(r.err("expected a section header, a variable or a comment"));
        }
        // git accepts a variable before any section: a key of one word.
        let base = section.as_deref();
        let line = r.line;
        let mut name = vec![c.to_ascii_lowercase()];
        let mut c = r.next();
        while !r.eof && is_key_char(c) {
            name.push(c.to_ascii_lowercase());
            c = r.next();
        }
        while c == b' ' || c == b'\t' {
            c = r.next();
        }
        let value = if c == b'\n' {
            None
        } else if c == b'=' {
            Some(value(&mut r)?)
        } else {
            return Err(r.err("invalid character in a variable name"));
        };
        let mut key = Vec::new();
        if let Some(base) = base {
            key.extend_from_slice(base);
            key.push(b'.');
        }
        key.extend_from_slice(&name);
        out.push(Entry {
            key: String::from_utf8_lossy(&key).into_owned(),
            value: value.map(|v| String::from_utf8_lossy(&v).into_owned()),
            line,
        });
    }
}

/// After `[`: the section name, and an extended subsection in quotes.
fn section_header(r: &mut Reader<'_>) -> Result<Vec<u8>, ParseError> {
    let mut name = Vec::new();
    loop {
        let c = r.next();
        if r.eof {
            return Err(r.err("unterminated section header"));
        }
        if c == b']' {
            if name.is_empty() {
                return Err(r.err("empty section name"));
            }
            return Ok(name);
        }
        if is_space(c) {
            if c == b'\n' || name.is_empty() {
                return Err(r.err("bad section header"));
            }
            return extended_subsection(r, name);
        }
        if !is_key_char(c) && c != b'.' {
            return Err(r.err("invalid character in a section name"));
        }
        name.push(c.to_ascii_lowercase());
    }
}

fn extended_subsection(r: &mut Reader<'_>, mut name: Vec<u8>) -> Result<Vec<u8>, ParseError> {
    let mut c = r.next();
    while is_space(c) {
        if c == b'\n' {
            return Err(r.err("section header spans lines"));
        }
        c = r.next();
    }
    if c != b'"' {
        return Err(r.err("a subsection name must be in double quotes"));
    }
    name.push(b'.');
    loop {
        let mut c = r.next();
        if c == b'\n' {
            return Err(r.err("section header spans lines"));
        }
        if c == b'"' {
            break;
        }
        if c == b'\\' {
            c = r.next();
            if c == b'\n' {
                return Err(r.err("section header spans lines"));
            }
        }
        name.push(c);
    }
    if r.next() != b']' {
        return Err(r.err("expected ] after the subsection name"));
    }
    Ok(name)
}

/// After `=`: git's `parse_value`.
fn value(r: &mut Reader<'_>) -> Result<Vec<u8>, ParseError> {
    let mut out = Vec::new();
    let (mut quote, mut comment) = (false, false);
    // Whitespace is kept verbatim between words, dropped at both ends.
    let mut space = Vec::new();
    loop {
        let c = r.next();
        if c == b'\n' {
            if quote {
                return Err(r.err("unterminated quoted value"));
            }
            return Ok(out);
        }
        if comment {
            continue;
        }
        if is_space(c) && !quote {
            if !out.is_empty() {
                space.push(c);
            }
            continue;
        }
        if !quote && (c == b';' || c == b'#') {
            comment = true;
            continue;
        }
        out.append(&mut space);
        if c == b'\\' {
            let e = r.next();
            let ch = match e {
                b'\n' => continue,
                b't' => b'\t',
                b'b' => b'\x08',
                b'n' => b'\n',
                b'\\' | b'"' => e,
                _ => return Err(r.err("invalid escape in a value")),
            };
            out.push(ch);
            continue;
        }
        if c == b'"' {
            quote = !quote;
            continue;
        }
        out.push(c);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kv(text: &str) -> Vec<(String, Option<String>, usize)> {
        parse(text.as_bytes())
            .unwrap()
            .into_iter()
            .map(|e| (e.key, e.value, e.line))
            .collect()
    }

    fn one(key: &str, value: Option<&str>, line: usize) -> (String, Option<String>, usize) {
        (key.to_string(), value.map(str::to_string), line)
    }

    #[test]
    fn sections_subsections_and_the_legacy_form() {
        let got = kv(
            "[Core]\n\tFileMode = false\n[remote \"Origin\"]\nurl = x\n[Branch.Main]\nremote=o\n",
        );
        assert_eq!(
            got,
            vec![
                one("core.filemode", Some("false"), 2),
                one("remote.Origin.url", Some("x"), 4),
                one("branch.main.remote", Some("o"), 6),
            ]
        );
    }

    #[test]
    fn variables_after_the_header_on_the_same_line_and_without_value() {
        let got = kv("[core] pager = less\n[http]\n\tsslVerify\n");
        assert_eq!(
            got,
            vec![
                one("core.pager", Some("less"), 1),
                one("http.sslverify", None, 3)
            ]
        );
    }

    #[test]
    fn quotes_escapes_comments_and_continuations() {
        let got = kv(
            "[a]\nx = \"touch /tmp/m\" ; c\ny = a\\\n  b # c\nz = \" sp \"\\t\\\"q\\\\\nw = a    b\n",
        );
        assert_eq!(
            got,
            vec![
                one("a.x", Some("touch /tmp/m"), 2),
                one("a.y", Some("a  b"), 3),
                one("a.z", Some(" sp \t\"q\\"), 5),
                one("a.w", Some("a    b"), 6),
            ]
        );
    }

    #[test]
    fn subsection_escapes_and_crlf_and_bom() {
        let got = kv("\u{feff}[s \"a\\\"b\\\\c\\d\"]\r\nk = v\r\n");
        assert_eq!(got, vec![one("s.a\"b\\cd.k", Some("v"), 2)]);
    }

    #[test]
    fn what_git_refuses_is_an_error_with_its_line() {
        for (text, line) in [
            ("[core]\n\tpager = \"less\n", 2),
            ("[core\n", 1),
            ("[core \"x\n\"]\n", 1),
            ("[core]\n1x = y\n", 2),
            ("[core]\nx = \\q\n", 2),
            ("[co re]\n", 1),
            ("[]\n", 1),
            ("[core]\nname ; comment\n", 2),
            ("[core]\n\tx.y = 1\n", 2),
        ] {
            let err = parse(text.as_bytes()).unwrap_err();
            assert_eq!(err.line, line, "{text:?}: {err}");
        }
    }

    #[test]
    fn a_variable_before_any_section_is_a_one_word_key() {
        assert_eq!(kv("x = 1\n"), vec![one("x", Some("1"), 1)]);
    }

    #[test]
    fn a_comment_line_ending_in_backslash_does_not_continue() {
        let got = kv("[a] # c \\\nb = 1\n");
        assert_eq!(got, vec![one("a.b", Some("1"), 2)]);
    }
}
