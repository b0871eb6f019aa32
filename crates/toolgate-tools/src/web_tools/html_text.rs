//! HTML to markdown (with `htmd`) and to plain text (with html5ever's
//! tokenizer): scripts, styles and other non-content elements are dropped.

use std::cell::RefCell;

use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};

/// Elements whose content is never text for a reader.
const SKIPPED: &[&str] = &[
    "script", "style", "noscript", "template", "head", "svg", "iframe", "object",
];

/// Elements after which a line break belongs.
const BLOCKS: &[&str] = &[
    "p",
    "div",
    "br",
    "li",
    "ul",
    "ol",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "tr",
    "table",
    "section",
    "article",
    "header",
    "footer",
    "nav",
    "main",
    "aside",
    "pre",
    "blockquote",
    "hr",
    "dt",
    "dd",
    "dl",
    "form",
    "figure",
    "figcaption",
    "title",
];

/// Converts HTML to markdown.
pub fn to_markdown(html: &str) -> Result<String, std::io::Error> {
    htmd::HtmlToMarkdown::builder()
        .skip_tags(SKIPPED.to_vec())
        .build()
        .convert(html)
}

#[derive(Default)]
struct TextSink {
    out: RefCell<String>,
    skip_depth: RefCell<usize>,
}

impl TextSink {
    fn newline(&self) {
        let mut out = self.out.borrow_mut();
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
    }
}

impl TokenSink for TextSink {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        match token {
            Token::TagToken(tag) => {
                let name: &str = &tag.name;
                let skipped = SKIPPED.contains(&name);
                match tag.kind {
                    TagKind::StartTag => {
                        if skipped && !tag.self_closing {
                            *self.skip_depth.borrow_mut() += 1;
                        }
                        if BLOCKS.contains(&name) {
                            self.newline();
                        }
                        // Without a tree builder the tokenizer must be told
                        // which elements hold raw text.
                        return match name {
                            "script" => TokenSinkResult::RawData(RawKind::ScriptData),
                            "style" | "noscript" | "iframe" | "xmp" => {
                                TokenSinkResult::RawData(RawKind::Rawtext)
                            }
                            "title" | "textarea" => TokenSinkResult::RawData(RawKind::Rcdata),
                            _ => TokenSinkResult::Continue,
                        };
                    }
                    TagKind::EndTag => {
                        if skipped {
                            let mut depth = self.skip_depth.borrow_mut();
                            *depth = depth.saturating_sub(1);
                        }
                        if BLOCKS.contains(&name) {
                            self.newline();
                        }
                    }
                }
            }
            Token::CharacterTokens(text) if *self.skip_depth.borrow() == 0 => {
                push_collapsed(&mut self.out.borrow_mut(), &text);
            }
            _ => {}
        }
        TokenSinkResult::Continue
    }
}

/// Appends `text` with runs of whitespace folded to one space (line breaks
/// come from block elements).
fn push_collapsed(out: &mut String, text: &str) {
    for (i, word) in text.split_whitespace().enumerate() {
        let starts_with_space = text.starts_with(char::is_whitespace);
        if (i > 0 || starts_with_space) && !out.is_empty() && !out.ends_with([' ', '\n']) {
            out.push(' ');
        }
        out.push_str(word);
    }
    if text.ends_with(char::is_whitespace) && !out.is_empty() && !out.ends_with([' ', '\n']) {
        out.push(' ');
    }
}

/// Converts HTML to plain text: the visible text, one block per line.
pub fn to_text(html: &str) -> String {
    let tokenizer = Tokenizer::new(TextSink::default(), TokenizerOpts::default());
    let queue = BufferQueue::default();
    queue.push_back(html.into());
    let _ = tokenizer.feed(&queue);
    tokenizer.end();
    let raw = tokenizer.sink.out.take();
    raw.lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    const PAGE: &str = "<!doctype html><html><head><title>T</title><style>p{color:red}</style>\
        <script>var x = '<p>not text</p>';</script></head><body><h1>Hello</h1>\
        <p>First   <b>bold</b> para.</p><ul><li>one</li><li>two &amp; three</li></ul></body></html>";

    #[test]
    fn text_drops_scripts_and_styles() {
        let text = to_text(PAGE);
        assert_eq!(text, "Hello\nFirst bold para.\none\ntwo & three");
    }

    #[test]
    fn markdown_has_structure() {
        let md = to_markdown(PAGE).unwrap();
        assert!(md.contains("# Hello"), "{md}");
        assert!(md.contains("**bold**"), "{md}");
        assert!(
            !md.contains("not text") && !md.contains("color:red"),
            "{md}"
        );
    }
}
