//! The plain subset of shell, read without the full grammar.
//!
//! Most commands an agent runs are plain: words of letters, digits and
//! `_ . / : , + @ % = -`, single-quoted text, double-quoted text without `$`,
//! backticks or backslashes, joined by `|`, `&&`, `||` and `;`. For such text
//! bash's own reading is exactly "split on blanks and those operators": no
//! expansion, substitution, glob, redirect or keyword can occur. [`split`]
//! recognises that subset and gives the commands with their words; anything
//! else — a single character outside it, an unbalanced quote, an empty command,
//! a keyword or assignment where a command name goes — returns `None`, and the
//! caller parses with tree-sitter-bash as before.
//!
//! The property test `plain_reading_agrees_with_the_grammar` in
//! `tests/prop_shell.rs` checks that both readings give the same requests.

use super::ir::{Construct, Form, IrWord, Item, Origin, SimpleCommand};
use super::words::Word;

/// One simple command of a plain line.
#[derive(Debug)]
pub(crate) struct PlainCommand {
    /// Its source text, from the first word's start to the last word's end.
    pub(crate) start: usize,
    pub(crate) end: usize,
    /// Its words, as the shell passes them.
    pub(crate) words: Vec<Word>,
}

/// Commands joined by `|` into one pipeline (each stage runs in its own
/// subshell when there are several).
#[derive(Debug)]
pub(crate) struct PlainPipeline {
    pub(crate) stages: Vec<PlainCommand>,
}

/// Words that are not plain commands where a command name goes: keywords, and
/// builtins the grammar reads as declarations.
const NOT_PLAIN_NAMES: &[&str] = &[
    "if", "then", "else", "elif", "fi", "case", "esac", "for", "select", "while", "until", "do",
    "done", "in", "function", "time", "coproc", "declare", "typeset", "export", "readonly",
    "local", "unset", "unsetenv",
];

fn is_bare(b: u8) -> bool {
    b.is_ascii_alphanumeric()
        || matches!(
            b,
            b'_' | b'.' | b'/' | b':' | b',' | b'+' | b'@' | b'%' | b'=' | b'-'
        )
}

/// Whether a command name is plain: unquoted letters, digits and `_ . / -`
/// (the grammar reads `@`, `:`, `=`… in a name its own way), and not a keyword.
fn plain_name(name: &Word) -> bool {
    name.unquoted
        && !name.text.is_empty()
        && name
            .text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'/' | b'-'))
        && !NOT_PLAIN_NAMES.contains(&name.text.as_str())
}

/// Reads `source` when it is plain; `None` when the grammar must read it.
pub(crate) fn split(source: &str) -> Option<Vec<PlainPipeline>> {
    let bytes = source.as_bytes();
    let mut pipelines: Vec<PlainPipeline> = Vec::new();
    let mut stages: Vec<PlainCommand> = Vec::new();
    let mut words: Vec<Word> = Vec::new();
    let mut start = 0;
    let mut end = 0;
    let mut i = 0;
    let finish_command = |words: &mut Vec<Word>, stages: &mut Vec<PlainCommand>, start, end| {
        if words.is_empty() {
            return None;
        }
        if !plain_name(&words[0]) {
            return None;
        }
        stages.push(PlainCommand {
            start,
            end,
            words: std::mem::take(words),
        });
        Some(())
    };
    while i < bytes.len() {
        match bytes[i] {
            b' ' | b'\t' => i += 1,
            b'|' => {
                if bytes.get(i + 1) == Some(&b'&') {
                    return None;
                }
                finish_command(&mut words, &mut stages, start, end)?;
                if bytes.get(i + 1) == Some(&b'|') {
                    pipelines.push(PlainPipeline {
                        stages: std::mem::take(&mut stages),
                    });
                    i += 2;
                } else {
                    i += 1;
                }
            }
            b'&' => {
                if bytes.get(i + 1) != Some(&b'&') {
                    return None;
                }
                finish_command(&mut words, &mut stages, start, end)?;
                pipelines.push(PlainPipeline {
                    stages: std::mem::take(&mut stages),
                });
                i += 2;
            }
            b';' => {
                if bytes.get(i + 1) == Some(&b';') || bytes.get(i + 1) == Some(&b'&') {
                    return None;
                }
                finish_command(&mut words, &mut stages, start, end)?;
                pipelines.push(PlainPipeline {
                    stages: std::mem::take(&mut stages),
                });
                i += 1;
            }
            _ => {
                let (word, next) = read_word(bytes, source, i)?;
                if words.is_empty() {
                    start = i;
                }
                end = next;
                words.push(word);
                i = next;
            }
        }
    }
    finish_command(&mut words, &mut stages, start, end)?;
    pipelines.push(PlainPipeline { stages });
    Some(pipelines)
}

/// One word starting at `at`: bare characters and quoted chunks with no blank
/// between them.
fn read_word(bytes: &[u8], source: &str, at: usize) -> Option<(Word, usize)> {
    let mut text = String::new();
    let mut quoted = false;
    let mut i = at;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            b'\'' => {
                let close = i + 1 + bytes[i + 1..].iter().position(|&c| c == b'\'')?;
                let inner = &source[i + 1..close];
                if inner.contains('\n') {
                    return None;
                }
                text.push_str(inner);
                quoted = true;
                i = close + 1;
            }
            b'"' => {
                let close = i + 1 + bytes[i + 1..].iter().position(|&c| c == b'"')?;
                let inner = &source[i + 1..close];
                if inner.contains(['$', '`', '\\', '\n', '!']) {
                    return None;
                }
                text.push_str(inner);
                quoted = true;
                i = close + 1;
            }
            b' ' | b'\t' | b'|' | b'&' | b';' => break,
            _ if is_bare(b) => {
                let run = bytes[i..].iter().take_while(|&&c| is_bare(c)).count();
                text.push_str(&source[i..i + run]);
                i += run;
            }
            _ => return None,
        }
    }
    // A word starting with `-`… is fine; one made only of quotes is fine too.
    Some((
        Word {
            text,
            known: true,
            ansi_c: false,
            unquoted: !quoted,
        },
        i,
    ))
}

/// The description ([`super::ir`]) of a plain line: the same items the
/// grammar's lowering gives for it — each stage of a pipeline of several in a
/// copy of the shell, every word one literal or quoted piece.
pub(crate) fn items(source: &str, pipelines: Vec<PlainPipeline>) -> Vec<Item> {
    let mut out = Vec::new();
    for pipeline in pipelines {
        let several = pipeline.stages.len() > 1;
        for stage in pipeline.stages {
            let context = if several {
                vec![Construct::Pipeline]
            } else {
                Vec::new()
            };
            let words = stage
                .words
                .into_iter()
                .map(|w| {
                    let origin = if w.unquoted {
                        Origin::Literal
                    } else {
                        Origin::Quoted
                    };
                    IrWord::single(w.text, origin, String::new())
                })
                .collect();
            let command = Item::Command(SimpleCommand {
                words,
                assignments: Vec::new(),
                redirects: Vec::new(),
                resource: source[stage.start..stage.end].to_string(),
                form: Form::Plain,
                name_redefined: false,
                context,
                across_lines: false,
            });
            if several {
                out.push(Item::Isolated(vec![command]));
            } else {
                out.push(command);
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(source: &str) -> Option<Vec<Vec<Vec<String>>>> {
        split(source).map(|ps| {
            ps.iter()
                .map(|p| {
                    p.stages
                        .iter()
                        .map(|c| c.words.iter().map(|w| w.text.clone()).collect())
                        .collect()
                })
                .collect()
        })
    }

    #[test]
    fn plain_lines_split_into_pipelines_and_words() {
        assert_eq!(
            texts("git log -n 20 -- src/lib.rs | grep -v fixup && cargo test"),
            Some(vec![
                vec![
                    vec!["git", "log", "-n", "20", "--", "src/lib.rs"]
                        .into_iter()
                        .map(String::from)
                        .collect(),
                    vec!["grep".to_string(), "-v".into(), "fixup".into()],
                ],
                vec![vec!["cargo".to_string(), "test".into()]],
            ])
        );
        assert_eq!(
            texts("echo 'a && b' \"c d\"x"),
            Some(vec![vec![vec![
                "echo".to_string(),
                "a && b".into(),
                "c dx".into()
            ]]])
        );
        let parsed = split("  ls   -la ;pwd").unwrap();
        assert_eq!(
            (parsed[0].stages[0].start, parsed[0].stages[0].end),
            (2, 10)
        );
    }

    #[test]
    fn anything_else_goes_to_the_grammar() {
        for source in [
            "",
            "ls;",
            "ls &",
            "ls |& cat",
            "| ls",
            "ls &&",
            "echo $HOME",
            "echo \"$HOME\"",
            "echo `id`",
            "ls > out",
            "cat < in",
            "rm -rf *.o",
            "ls ~",
            "ls # comment",
            "(ls)",
            "{ ls; }",
            "FOO=1 ls",
            "if true; then ls; fi",
            "export A=1",
            "echo 'unterminated",
            "echo a\\ b",
            "ls\nrm x",
            "echo \"a\nb\"",
            "echo [ab]",
            "echo {a,b}",
            "! ls",
            "echo \"hi!\"",
            "ls ;; ls",
            "échö",
            "user@host:path",
            "'ls' -la",
            "a=b",
        ] {
            assert!(split(source).is_none(), "{source:?}");
        }
    }
}
