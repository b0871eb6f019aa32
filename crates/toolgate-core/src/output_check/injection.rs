//! Prompt-injection cues in tool output, as data. A cue is flagged, never
//! removed: the text the model receives is unchanged, and the call's result
//! (and the audit log) say which cue was seen on which line.
//!
//! One case-insensitive Aho-Corasick pass finds the anchors; a cue with a
//! pattern is confirmed by it on the anchor's line.

use regex::Regex;

use super::CheckError;

/// One injection cue.
#[derive(Clone, Copy, Debug)]
pub struct InjectionCue {
    /// The kind reported in a flag.
    pub kind: &'static str,
    /// Literal strings (ASCII case-insensitive, or exact bytes) one of which
    /// the cue contains.
    pub anchors: &'static [&'static str],
    /// The pattern that confirms the cue on the anchor's line (case-insensitive);
    /// `None`: the anchor alone is the cue.
    pub pattern: Option<&'static str>,
}

/// Instructions addressed to the model.
pub const INSTRUCTION: &str = "instruction-to-model";
/// Role or chat-template markers.
pub const CHAT_TEMPLATE: &str = "chat-template-marker";
/// Tags that imitate the harness's own (`<system>`, `<function_calls>`, …).
pub const HARNESS_TAG: &str = "forged-harness-tag";
/// Invisible characters (zero-width, word joiners, Unicode tag characters).
pub const INVISIBLE: &str = "invisible-unicode";
/// Bidirectional overrides and isolates (Trojan Source, CVE-2021-42574).
pub const BIDI: &str = "bidi-control";
/// URLs built to carry data out (a markdown image whose query holds data or
/// a template for it; text asking to send data to a URL).
pub const EXFILTRATION: &str = "exfiltration-url";

/// The table.
pub const INJECTION_CUES: &[InjectionCue] = &[
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &["ignore", "disregard", "forget", "override"],
        pattern: Some(
            r"\b(?:ignore|disregard|forget|override)\s+(?:all\s+|any\s+|the\s+|your\s+|of\s+)*(?:previous|prior|above|earlier|preceding|foregoing|former|original|existing|system)\s+(?:instructions?|prompts?|directions?|directives?|rules|guidelines|context|messages?|commands?|orders?)",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &["disregard", "forget"],
        pattern: Some(
            r"\b(?:disregard|forget)\s+(?:everything|all)\s+(?:you\s+(?:were|have\s+been)\s+told|(?:said\s+)?(?:above|before|so\s+far))",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &["instruction"],
        pattern: Some(
            r"\b(?:new|updated|revised|real|actual|secret|hidden|additional|important)\s+(?:system\s+)?instructions?\s*(?::|for\s+(?:the\s+)?(?:ai|assistant|model|agent|llm))",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &[
            "if you are",
            "you're an ai",
            "are an ai",
            "are a language model",
            "are an llm",
        ],
        pattern: Some(
            r"\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|large\s+language\s+model|language\s+model|ai\s+assistant|ai\s+agent|assistant|automated\s+agent)\b|\b(?:since|as|because)\s+you(?:'re|\s+are)\s+an?\s+(?:ai|llm|language\s+model)\b[^.\n]{0,60}\b(?:must|should|will|need)",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &[
            "dear",
            "hey",
            "hi ",
            "hello",
            "attention",
            "note to",
            "message to",
            "instruction",
            "important",
            "notice to",
        ],
        pattern: Some(
            r"\b(?:dear|hey|hi|hello|attention|note\s+to|message\s+to|instructions?\s+(?:for|to)|important\s+(?:for|to)|notice\s+to)\s+(?:the\s+|all\s+|any\s+)?(?:ai|llms?|ai\s+assistants?|assistants?|ai\s+agents?|coding\s+agents?|agents?|language\s+models?|models?|claude|chatgpt|gpt(?:-[0-9.o]+)?|copilot|gemini|cursor)\b\s*[:,!.-]",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &["the user"],
        pattern: Some(
            r"\b(?:do\s+not|don't|dont|never)\s+(?:tell|inform|mention\s+(?:this|it)\s+to|mention|reveal\s+(?:this|it)\s+to|alert|notify|show\s+(?:this|it)\s+to)\s+(?:this\s+|it\s+)?(?:to\s+)?the\s+user\b|\bwithout\s+(?:telling|informing|asking|notifying|alerting|the\s+knowledge\s+of)\s+the\s+user\b|\b(?:hide|conceal|keep)\s+(?:this|it)\s+(?:from|secret\s+from)\s+the\s+user\b",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &[
            "system prompt",
            "initial instructions",
            "hidden instructions",
            "developer message",
            "system message",
        ],
        pattern: Some(
            r"\b(?:reveal|print|output|repeat|show|leak|dump|tell\s+me|send|share|disclose)\s+(?:me\s+)?(?:your|the)\s+(?:full\s+|entire\s+|original\s+|exact\s+)?(?:system\s+prompt|initial\s+instructions|hidden\s+instructions|developer\s+message|system\s+message)",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &["you are now", "from now on", "act as", "pretend"],
        pattern: Some(
            r"\byou\s+are\s+now\s+(?:an?\s+)?(?:dan\b|jailbroken|unrestricted|unfiltered|in\s+(?:developer|god|admin|debug|unrestricted)\s+mode|no\s+longer\s+(?:bound|restricted|an?\s+(?:ai|assistant)))|\bfrom\s+now\s+on,?\s+you\s+(?:are|will|must)\b|\b(?:act\s+as|pretend\s+(?:to\s+be|you\s+are))\s+(?:an?\s+)?(?:dan\b|unrestricted|jailbroken|unfiltered|evil|different\s+(?:ai|assistant))",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &[
            "must",
            "should",
            "need to",
            "required to",
            "immediately",
            "silently",
            "quietly",
            "secretly",
        ],
        pattern: Some(
            r"\b(?:(?:the\s+)?(?:assistant|agent|ai|model|llm)|you\s+(?:must|should|need\s+to|are\s+required\s+to)\s+(?:now|immediately))\s+(?:must\s+|should\s+|are\s+required\s+to\s+|need\s+to\s+|now\s+|immediately\s+|first\s+|also\s+|silently\s+)*(?:call|use|invoke|run|execute)\s+(?:the\s+)?`?[A-Za-z_][A-Za-z0-9_.-]*`?\s+(?:tool|function|command)\b|\bimmediately\s+(?:run|execute|call|invoke|send|upload|delete|read)\s+(?:the\s+following|this|these|`|~/|/etc/|\.env|the\s+(?:file|contents?|ssh|credentials?|secrets?))|\b(?:silently|quietly|secretly)\s+(?:run|execute|call|invoke|send|upload|delete|remove|read|add|push|commit|exfiltrate|copy|modify|rewrite|install|download)\b",
        ),
    },
    InjectionCue {
        kind: INSTRUCTION,
        anchors: &["important", "urgent", "attention"],
        pattern: Some(
            r"\b(?:important|urgent|attention|critical|warning)\b\s*(?:[*\])]+)?\s*[:!-]+\s*(?:the\s+|all\s+)?(?:ai\b|llms?\b|assistants?\b|agents?\b|models?\b|you\s+must|before\s+(?:you\s+)?(?:continue|proceed|respond|answer))",
        ),
    },
    // Role and chat-template markers.
    InjectionCue {
        kind: CHAT_TEMPLATE,
        anchors: &[
            "<|im_start|>",
            "<|im_end|>",
            "<|system|>",
            "<|user|>",
            "<|assistant|>",
            "<|endoftext|>",
            "<|begin_of_text|>",
            "<|start_header_id|>",
            "<|end_header_id|>",
            "<|eot_id|>",
            "<|end|>",
            "<start_of_turn>",
            "<end_of_turn>",
            "[inst]",
            "[/inst]",
            "<<sys>>",
            "<</sys>>",
            "<|channel|>",
            "<|message|>",
            "<|start|>",
        ],
        pattern: None,
    },
    InjectionCue {
        kind: CHAT_TEMPLATE,
        anchors: &[
            "\n\nhuman:",
            "\n\nassistant:",
            "\n\nsystem:",
            "### instruction:",
            "### system:",
            "### response:",
        ],
        pattern: None,
    },
    // Tags that imitate the harness.
    InjectionCue {
        kind: HARNESS_TAG,
        anchors: &[
            "<system",
            "</system",
            "<instructions",
            "</instructions",
            "<important",
            "</important",
            "<assistant",
            "</assistant",
            "<tool_result",
            "</tool_result",
            "<function_results",
            "</function_results",
            "<function_calls",
            "</function_calls",
            "<tool_call",
            "</tool_call",
            "<tool_use",
            "</tool_use",
            "<admin",
            "<user_query",
            "<user_message",
            "\x3Cantml:",
            "\x3C/antml:",
            "<system-reminder",
            "</system-reminder",
        ],
        pattern: Some(
            r"</?(?:system(?:[-_](?:reminder|prompt|message|instructions?))?|instructions?|important|assistant|tool_results?|function_results|function_calls|tool_calls?|tool_use|antml:[a-z_]+|admin(?:_instructions)?|user_query|user_message)(?:\s[^<>]{0,200})?>",
        ),
    },
    // Invisible characters: U+200B zero width space, U+2060..U+2064 word
    // joiner and invisible operators, U+FEFF inside text, U+180E, and the
    // Unicode tag block U+E0000..U+E007F (text hidden in "ASCII smuggling").
    InjectionCue {
        kind: INVISIBLE,
        anchors: &[
            "\u{200B}", "\u{2060}", "\u{2061}", "\u{2062}", "\u{2063}", "\u{2064}", "\u{FEFF}",
            "\u{180E}",
        ],
        pattern: None,
    },
    // Bidirectional embeddings, overrides and isolates.
    InjectionCue {
        kind: BIDI,
        anchors: &[
            "\u{202A}", "\u{202B}", "\u{202C}", "\u{202D}", "\u{202E}", "\u{2066}", "\u{2067}",
            "\u{2068}", "\u{2069}",
        ],
        pattern: None,
    },
    // URLs built to carry data out.
    InjectionCue {
        kind: EXFILTRATION,
        anchors: &["![", "<img"],
        pattern: Some(
            r#"(?:!\[[^\]\n]{0,200}\]\(\s*|<img\s[^>]{0,200}src\s*=\s*["']?)https?://[^\s)"'>?#]*\?[^\s)"'>#]*?(?:\{[A-Za-z_][^}\s]{0,40}\}|\$\{?[A-Za-z_]|%7[Bb]|<[A-Za-z_]+>|\[[A-Z_]{3,}\]|=(?-i:[A-Z_]*(?:DATA|SECRET|TOKEN|PASSWORD|CONVERSATION|INSERT|HISTORY|KEY)[A-Z_]*)(?:[&)"'\s]|$)|=[A-Za-z0-9+_%=-]{48,})"#,
        ),
    },
    InjectionCue {
        kind: EXFILTRATION,
        anchors: &[
            "send",
            "post",
            "upload",
            "exfiltrate",
            "forward",
            "transmit",
            "append",
            "include",
            "encode",
            "leak",
        ],
        pattern: Some(
            r"\b(?:send|post|upload|exfiltrate|forward|transmit|append|include|encode|leak)\s+(?:it|them|this|that|all\s+of\s+(?:it|them)|(?:the|your|any|all|its)\s+(?:[a-z_.-]+\s+){0,3}(?:contents?|data|secrets?|keys?|tokens?|credentials?|passwords?|conversation|chat\s+history|history|env(?:ironment)?(?:\s+variables)?|files?|\.env|api\s+keys?))\s+(?:to|into|in|as\s+a\s+(?:query|parameter)\s+(?:of|to))\s+(?:the\s+)?(?:https?://|(?:url|endpoint|server|webhook|link|image\s+url|query\s+string)\b)",
        ),
    },
];

/// One cue found: its kind and the byte where its anchor starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct CueHit {
    pub(crate) kind: &'static str,
    pub(crate) at: usize,
    line_start: usize,
}

/// The compiled table.
#[derive(Debug)]
pub(crate) struct InjectionScanner {
    /// The anchor literals, by anchor id (matched ignoring ASCII case).
    literals: Vec<&'static [u8]>,
    /// Per anchor pattern id: the cues it belongs to.
    anchor_cues: Vec<Vec<usize>>,
    patterns: Vec<Option<Regex>>,
}

/// UTF-8 of U+E0000..U+E003F and U+E0040..U+E007F, less their last byte.
const TAG_BLOCK_PREFIXES: [&[u8]; 2] = [b"\xF3\xA0\x80", b"\xF3\xA0\x81"];

/// How far either side of an anchor its line is read.
const LINE_REACH: usize = 512;

impl InjectionScanner {
    pub(crate) fn new() -> Result<Self, CheckError> {
        let mut literals: Vec<&'static [u8]> = Vec::new();
        let mut anchor_cues: Vec<Vec<usize>> = Vec::new();
        for (i, cue) in INJECTION_CUES.iter().enumerate() {
            for anchor in cue.anchors {
                match literals
                    .iter()
                    .position(|l| l.eq_ignore_ascii_case(anchor.as_bytes()))
                {
                    Some(j) => anchor_cues[j].push(i),
                    None => {
                        literals.push(anchor.as_bytes());
                        anchor_cues.push(vec![i]);
                    }
                }
            }
        }
        // The whole Unicode tag block (U+E0000..U+E007F) by the first three
        // bytes of its UTF-8 form.
        if let Some(invisible) = INJECTION_CUES.iter().position(|c| c.kind == INVISIBLE) {
            for prefix in TAG_BLOCK_PREFIXES {
                literals.push(prefix);
                anchor_cues.push(vec![invisible]);
            }
        }
        let patterns = INJECTION_CUES
            .iter()
            .map(|c| {
                c.pattern
                    .map(|p| {
                        // ASCII word boundaries: the cues are English words,
                        // and a Unicode boundary would slow every line with
                        // a non-ASCII character.
                        Regex::new(&format!("(?im){}", p.replace(r"\b", r"(?-u:\b)")))
                            .map_err(|e| CheckError::Build(format!("{}: {e}", c.kind)))
                    })
                    .transpose()
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(InjectionScanner {
            literals,
            anchor_cues,
            patterns,
        })
    }

    /// The anchor literals, by anchor id.
    pub(crate) fn literals(&self) -> &[&'static [u8]] {
        &self.literals
    }

    /// Every cue in `text`, given the anchors found in it as (start, anchor
    /// id), leftmost-longest and not overlapping, in order.
    pub(crate) fn find_from(
        &self,
        text: &str,
        anchors: impl Iterator<Item = (usize, usize)>,
    ) -> Vec<CueHit> {
        let mut out: Vec<CueHit> = Vec::new();
        // (kind, line start) already reported, and (cue, line start) already
        // tried: a line with many anchors is read once per cue.
        let mut tried: Vec<(usize, usize)> = Vec::new();
        for (at, anchor) in anchors {
            let (line_start, line_end) = line_around(text, at);
            for &cue in &self.anchor_cues[anchor] {
                let kind = INJECTION_CUES[cue].kind;
                if out
                    .iter()
                    .any(|h| h.kind == kind && h.line_start == line_start)
                    || tried.contains(&(cue, line_start))
                {
                    continue;
                }
                let hit = match &self.patterns[cue] {
                    None => true,
                    Some(re) => {
                        tried.push((cue, line_start));
                        re.is_match(&text[line_start..line_end])
                    }
                };
                // A byte-order mark opening the text is not hidden text.
                if hit && !(kind == INVISIBLE && at == 0 && text.starts_with('\u{FEFF}')) {
                    out.push(CueHit {
                        kind,
                        at,
                        line_start,
                    });
                }
            }
        }
        out.sort_by_key(|h| h.at);
        out
    }
}

/// The line around byte `at`, at most [`LINE_REACH`] bytes either side.
fn line_around(text: &str, at: usize) -> (usize, usize) {
    let bytes = text.as_bytes();
    let lo = at.saturating_sub(LINE_REACH);
    let start = bytes[lo..at]
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(lo, |i| lo + i + 1);
    let hi = (at + LINE_REACH).min(bytes.len());
    let end = bytes[at..hi]
        .iter()
        .position(|&b| b == b'\n')
        .map_or(hi, |i| at + i);
    let mut start = start;
    while start > 0 && !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = end;
    while end < text.len() && !text.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}
