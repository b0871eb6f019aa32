//! Which characters a reader sees, and names made unambiguous in text.
//!
//! A file name may hold any character but `/` and NUL: a line break that
//! forges a second entry in a listing, a terminal escape, a right-to-left
//! override that reverses what follows, a zero-width space. Text that a model
//! or a person reads shows such characters escaped. What may be shown as
//! itself is decided by a list of what is known to be visible, never by a
//! list of known tricks: a *graphic* character (Unicode general category
//! letter, mark, number, punctuation, symbol or space separator) that is not
//! *default ignorable* (the Unicode property of characters that render as
//! nothing: U+00AD soft hyphen, U+034F combining grapheme joiner, the Hangul
//! fillers, variation selectors, tags…). Everything else, controls, format
//! characters, line and paragraph separators, private use and unassigned code
//! points included, is hidden.
//!
//! ```
//! use toolgate_core::visible::{is_hidden, name_text};
//!
//! assert!(!is_hidden('é'));
//! assert!(is_hidden('\u{202E}')); // right-to-left override
//! assert_eq!(name_text("notes.md"), "notes.md");
//! assert_eq!(name_text("a\nb.txt"), r#""a\nb.txt""#);
//! ```
//!
//! For a person deciding on a call (the terminal prompt, the approval page,
//! an MCP client's form) [`escape_hidden`] writes each hidden character as a
//! visible `\u{…}`: an escape sequence in a command cannot erase the part of
//! it that matters, nor an override reverse it.

use std::borrow::Cow;

use unicode_general_category::{GeneralCategory, get_general_category};

/// Whether `c` is not shown as itself: not a graphic character, or a default
/// ignorable one.
pub fn is_hidden(c: char) -> bool {
    if c.is_ascii() {
        // Printable ASCII is graphic and never ignorable.
        return !(' '..='~').contains(&c);
    }
    !is_graphic(c) || is_default_ignorable(c)
}

/// General categories L, M, N, P, S and Zs.
fn is_graphic(c: char) -> bool {
    use GeneralCategory::*;
    matches!(
        get_general_category(c),
        UppercaseLetter
            | LowercaseLetter
            | TitlecaseLetter
            | ModifierLetter
            | OtherLetter
            | NonspacingMark
            | SpacingMark
            | EnclosingMark
            | DecimalNumber
            | LetterNumber
            | OtherNumber
            | ConnectorPunctuation
            | DashPunctuation
            | OpenPunctuation
            | ClosePunctuation
            | InitialPunctuation
            | FinalPunctuation
            | OtherPunctuation
            | MathSymbol
            | CurrencySymbol
            | ModifierSymbol
            | OtherSymbol
            | SpaceSeparator
    )
}

/// The Unicode property `Default_Ignorable_Code_Point` (DerivedCoreProperties,
/// Unicode 16): characters with no visible rendering of their own. Most are
/// format characters (already not graphic); the rest are letters and marks
/// that show as nothing.
fn is_default_ignorable(c: char) -> bool {
    matches!(
        c,
        '\u{00AD}'
            | '\u{034F}'
            | '\u{061C}'
            | '\u{115F}'..='\u{1160}'
            | '\u{17B4}'..='\u{17B5}'
            | '\u{180B}'..='\u{180F}'
            | '\u{200B}'..='\u{200F}'
            | '\u{202A}'..='\u{202E}'
            | '\u{2060}'..='\u{206F}'
            | '\u{3164}'
            | '\u{FE00}'..='\u{FE0F}'
            | '\u{FEFF}'
            | '\u{FFA0}'
            | '\u{FFF0}'..='\u{FFF8}'
            | '\u{1BCA0}'..='\u{1BCA3}'
            | '\u{1D173}'..='\u{1D17A}'
            | '\u{E0000}'..='\u{E0FFF}'
    )
}

/// `name` as a tool's text shows it: as itself when every character is
/// shown and it does not start with `"`; else as a JSON string literal, with
/// each hidden character as a `\uXXXX` escape (so the quoted form, pasted
/// into a tool call's JSON, names the same file).
pub fn name_text(name: &str) -> Cow<'_, str> {
    let plain = !name.starts_with('"')
        && if name.is_ascii() {
            name.bytes().all(|b| (b' '..=b'~').contains(&b))
        } else {
            !name.chars().any(is_hidden)
        };
    if plain {
        return Cow::Borrowed(name);
    }
    let mut out = String::with_capacity(name.len() + 8);
    out.push('"');
    for c in name.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if is_hidden(c) => {
                let mut units = [0u16; 2];
                for unit in c.encode_utf16(&mut units) {
                    out.push_str(&format!("\\u{unit:04x}"));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    Cow::Owned(out)
}

/// `text` with each hidden character ([`is_hidden`]) but those in `keep`
/// written as `\u{XXXX}`, for a person to read exactly what is there.
///
/// ```
/// use toolgate_core::visible::escape_hidden;
///
/// assert_eq!(escape_hidden("rm -rf ~\u{1b}[2K\rls", &[]), "rm -rf ~\\u{001B}[2K\\u{000D}ls");
/// assert_eq!(escape_hidden("a\tb\nc", &['\n', '\t']), "a\tb\nc");
/// ```
pub fn escape_hidden<'a>(text: &'a str, keep: &[char]) -> Cow<'a, str> {
    let escaped = |c: char| is_hidden(c) && !keep.contains(&c);
    if !text.chars().any(escaped) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if escaped(c) {
            out.push_str(&format!("\\u{{{:04X}}}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn letters_marks_numbers_punctuation_symbols_and_spaces_are_shown() {
        for c in [
            'a', 'Z', '0', ' ', '~', 'é', 'ß', '中', 'я', 'ع', '\u{0301}', '٣', '€', '→', '😀',
            '\u{00A0}', '\u{3000}', '«',
        ] {
            assert!(!is_hidden(c), "{:?} (U+{:04X})", c, c as u32);
        }
    }

    #[test]
    fn controls_formats_separators_private_use_and_ignorables_are_hidden() {
        for c in [
            '\0',
            '\t',
            '\n',
            '\r',
            '\u{1B}',
            '\u{7F}',
            '\u{85}',
            '\u{9B}', // controls
            '\u{200B}',
            '\u{200D}',
            '\u{200E}',
            '\u{202E}',
            '\u{2066}',
            '\u{FEFF}', // format
            '\u{2028}',
            '\u{2029}', // line and paragraph separators
            '\u{E000}',
            '\u{F8FF}',
            '\u{F0000}', // private use
            '\u{0378}',
            '\u{FFFF}', // unassigned
            '\u{00AD}',
            '\u{034F}',
            '\u{115F}',
            '\u{3164}',
            '\u{FFA0}',
            '\u{FE0F}',
            '\u{E0041}',
            '\u{E0100}',
            '\u{1D173}', // default ignorable
        ] {
            assert!(is_hidden(c), "U+{:04X}", c as u32);
        }
    }

    #[test]
    fn a_name_is_quoted_only_when_it_has_to_be() {
        assert_eq!(name_text("src/main.rs"), "src/main.rs");
        assert_eq!(name_text("it's a \\ name.txt"), "it's a \\ name.txt");
        assert_eq!(name_text("naïve résumé.md"), "naïve résumé.md");
        assert!(matches!(name_text("plain"), Cow::Borrowed(_)));
        assert_eq!(name_text("a\nb.txt"), r#""a\nb.txt""#);
        assert_eq!(name_text("c\u{1b}[31mred"), r#""c\u001b[31mred""#);
        assert_eq!(name_text("d\u{202e}txt.exe"), r#""d\u202etxt.exe""#);
        assert_eq!(name_text("tag\u{E0041}"), r#""tag\udb40\udc41""#);
        // A name that starts with a quote is quoted, so no plain name looks
        // like a quoted one.
        assert_eq!(name_text(r#""a\nb.txt""#), r#""\"a\\nb.txt\"""#);
        assert_eq!(name_text("back\\slash\t"), r#""back\\slash\t""#);
    }

    #[test]
    fn the_quoted_form_is_json_for_the_same_name() {
        for name in [
            "a\nb.txt",
            "c\u{1b}[31mred",
            "d\u{202e}txt.exe",
            "\"quoted\"",
            "x\u{E0041}\u{200B}y\\",
            "\u{2028}sep",
        ] {
            let shown = name_text(name);
            let back: String = serde_json::from_str(&shown).unwrap();
            assert_eq!(back, name);
        }
    }

    #[test]
    fn escaping_for_a_person_leaves_only_shown_characters_and_those_kept() {
        let text = "ok é\u{1b}[1A\u{202e}\u{200b}\n\tend";
        assert_eq!(
            escape_hidden(text, &[]),
            "ok é\\u{001B}[1A\\u{202E}\\u{200B}\\u{000A}\\u{0009}end"
        );
        assert_eq!(
            escape_hidden(text, &['\n']),
            "ok é\\u{001B}[1A\\u{202E}\\u{200B}\n\\u{0009}end"
        );
        assert!(matches!(escape_hidden("plain text", &[]), Cow::Borrowed(_)));
    }

    #[test]
    fn every_character_is_either_shown_or_escaped_in_a_name() {
        // No character reaches the quoted form raw unless it is shown.
        for u in (0u32..0x3_0000).chain(0xE_0000..0xE_1000) {
            let Some(c) = char::from_u32(u) else { continue };
            let name = format!("a{c}");
            let shown = name_text(&name);
            if is_hidden(c) {
                assert!(!shown.contains(c), "U+{u:04X} shown raw");
            } else {
                assert_eq!(shown, name, "U+{u:04X}");
            }
        }
    }
}
