//! Text helpers shared by the file tools: BOM, line endings, cutting long lines,
//! binary detection and strict UTF-8 decoding.

use std::path::Path;

use toolgate_core::ToolError;

/// The UTF-8 byte order mark.
pub const BOM: &str = "\u{feff}";
/// How many leading bytes are inspected for a NUL byte.
pub const BINARY_SAMPLE_BYTES: usize = 8192;

/// Extensions of formats that are binary even when a sample has no NUL byte.
const BINARY_EXTENSIONS: &[&str] = &[
    "7z", "a", "avi", "bin", "bmp", "bz2", "class", "dat", "db", "dll", "doc", "docx", "dylib",
    "eot", "exe", "flac", "gz", "ico", "iso", "jar", "lib", "mkv", "mov", "mp3", "mp4", "o", "obj",
    "odt", "ogg", "otf", "pdf", "ppt", "pptx", "pyc", "rlib", "so", "sqlite", "tar", "tgz", "tif",
    "tiff", "ttf", "wasm", "wav", "woff", "woff2", "xls", "xlsx", "xz", "zip", "zst",
];

/// Whether the file looks binary: a NUL byte in `sample`, or a binary extension.
pub fn looks_binary(path: &Path, sample: &[u8]) -> bool {
    memchr::memchr(0, sample).is_some() || has_binary_extension(path)
}

/// Whether the extension names a binary format.
pub fn has_binary_extension(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| BINARY_EXTENSIONS.contains(&e.to_ascii_lowercase().as_str()))
}

/// The line-ending style of a text.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEnding {
    /// `\n`
    Lf,
    /// `\r\n`
    Crlf,
}

impl LineEnding {
    /// The style most of the text's line breaks use; `Lf` when there are none.
    pub fn detect(text: &str) -> LineEnding {
        let newlines = text.matches('\n').count();
        let crlf = text.matches("\r\n").count();
        if crlf > 0 && crlf * 2 >= newlines {
            LineEnding::Crlf
        } else {
            LineEnding::Lf
        }
    }

    /// `"lf"` or `"crlf"`.
    pub fn name(self) -> &'static str {
        match self {
            LineEnding::Lf => "lf",
            LineEnding::Crlf => "crlf",
        }
    }

    /// `text` (with any endings) converted to this style.
    pub fn apply(self, text: &str) -> String {
        let lf = text.replace("\r\n", "\n");
        match self {
            LineEnding::Lf => lf,
            LineEnding::Crlf => lf.replace('\n', "\r\n"),
        }
    }
}

/// A decoded text file: BOM and line-ending style noted, body normalised to `\n`
/// when every break in it was `\r\n`.
#[derive(Clone, Debug)]
pub struct TextFile {
    /// Whether the file starts with a UTF-8 BOM.
    pub bom: bool,
    /// Whether `body` was converted from `\r\n` (and must be converted back).
    pub normalised: bool,
    /// The text without BOM.
    pub body: String,
}

impl TextFile {
    /// Decodes `bytes` strictly as UTF-8 (naming `path` and the offset on error).
    pub fn decode(path: &Path, bytes: Vec<u8>) -> Result<TextFile, ToolError> {
        let text = decode_utf8(path, bytes)?;
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest.to_string()),
            None => (false, text),
        };
        let ending = LineEnding::detect(&body);
        // Only a file whose every break is CRLF is normalised; a mixed file is
        // edited as it is, so no line ending changes that the edit did not ask for.
        let uniform_crlf = ending == LineEnding::Crlf
            && body.matches('\n').count() == body.matches("\r\n").count();
        let (normalised, body) = if uniform_crlf {
            (true, body.replace("\r\n", "\n"))
        } else {
            (false, body)
        };
        Ok(TextFile {
            bom,
            normalised,
            body,
        })
    }

    /// Encodes `body` (in this file's normalised form) back with BOM and endings.
    pub fn encode(&self, body: &str) -> Vec<u8> {
        let mut out = String::with_capacity(body.len() + 8);
        if self.bom {
            out.push_str(BOM);
        }
        if self.normalised {
            out.push_str(&body.replace('\n', "\r\n"));
        } else {
            out.push_str(body);
        }
        out.into_bytes()
    }

    /// `text` given by the model, converted to the form `body` is in.
    pub fn normalise_input(&self, text: &str) -> String {
        if self.normalised {
            text.replace("\r\n", "\n")
        } else {
            text.to_string()
        }
    }
}

/// Decodes `bytes` as UTF-8 or says where it is not.
pub fn decode_utf8(path: &Path, bytes: Vec<u8>) -> Result<String, ToolError> {
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        ToolError::Failed(format!(
            "{} is not valid UTF-8 (invalid byte at offset {at}); refusing to change it as text",
            path.display()
        ))
    })
}

/// Cuts `line` to at most `max_chars` characters, appending a marker that says
/// how long the line was. Returns the text and whether it was cut.
pub fn cut_line(line: &str, max_chars: usize, total_chars: usize) -> (String, bool) {
    match line.char_indices().nth(max_chars) {
        None if total_chars <= max_chars => (line.to_string(), false),
        None => (
            format!("{line}… [line cut: {total_chars} characters, first {max_chars} shown]"),
            true,
        ),
        Some((at, _)) => (
            format!(
                "{}… [line cut: {total_chars} characters, first {max_chars} shown]",
                &line[..at]
            ),
            true,
        ),
    }
}

/// Number of characters in UTF-8 `bytes` (counting bytes that start a character;
/// an invalid byte counts as one).
pub fn count_chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| (b & 0xC0) != 0x80).count()
}

/// The 1-based line number of byte offset `at` in `text`.
pub fn line_of(text: &str, at: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..at.min(text.len())]).count() + 1
}
