//! Scripts given to read tools: a `sed` script, an `awk` program, a `jq`
//! filter. Each is read by a small parser and counts as harmless only when
//! every part of it is one the parser knows to only read; anything it cannot
//! read, or that runs, writes or opens other files, is an error (the command is
//! then not proven read).

use toolgate_core::Risk;

use super::read_spec::Program;

/// What a script that only reads may still do: print secrets.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct ScriptEffect {
    raises: Option<(Risk, String)>,
}

impl ScriptEffect {
    /// Hands a raise (if any) to `f`.
    pub(crate) fn apply(self, f: impl FnOnce(Risk, String)) {
        if let Some((risk, why)) = self.raises {
            f(risk, why);
        }
    }
}

/// Judges `text` as a script of `program`.
pub(crate) fn judge(program: Program, text: &str) -> Result<ScriptEffect, String> {
    match program {
        Program::Sed => sed(text).map(|()| ScriptEffect::default()),
        Program::Awk => awk(text),
        Program::Jq => jq(text),
    }
}

/// A sed script: addresses, then commands from the read-only set.
fn sed(script: &str) -> Result<(), String> {
    let s: Vec<char> = script.chars().collect();
    let mut i = 0;
    let skip_ws = |i: &mut usize| {
        while *i < s.len() && (s[*i] == ' ' || s[*i] == '\t') {
            *i += 1;
        }
    };
    while i < s.len() {
        skip_ws(&mut i);
        if i >= s.len() {
            break;
        }
        if matches!(s[i], ';' | '\n' | '}') {
            i += 1;
            continue;
        }
        // Up to two addresses, then `!`.
        for n in 0..2 {
            skip_ws(&mut i);
            if !sed_address(&s, &mut i)? {
                break;
            }
            skip_ws(&mut i);
            if n == 0 && i < s.len() && s[i] == ',' {
                i += 1;
                skip_ws(&mut i);
                if i < s.len() && (s[i] == '+' || s[i] == '~') {
                    i += 1;
                    let start = i;
                    while i < s.len() && s[i].is_ascii_digit() {
                        i += 1;
                    }
                    if i == start {
                        return Err("a `+N`/`~N` address without a number".into());
                    }
                    break;
                }
                continue;
            }
            break;
        }
        skip_ws(&mut i);
        while i < s.len() && s[i] == '!' {
            i += 1;
            skip_ws(&mut i);
        }
        let Some(&c) = s.get(i) else {
            return Err("an address without a command".into());
        };
        i += 1;
        match c {
            '{' => {}
            'p' | 'P' | 'd' | 'D' | 'n' | 'N' | 'g' | 'G' | 'h' | 'H' | 'x' | 'l' | '=' | 'z'
            | 'F' => {
                if c == 'l' {
                    while i < s.len() && s[i].is_ascii_digit() {
                        i += 1;
                    }
                }
            }
            'q' | 'Q' => {
                skip_ws(&mut i);
                while i < s.len() && s[i].is_ascii_digit() {
                    i += 1;
                }
            }
            ':' | 'b' | 't' | 'T' => {
                // A label: GNU sed ends it at whitespace too (`:x e CMD` is
                // the label `x`, then `e CMD`), so the shortest reading is
                // taken and what follows is read as commands.
                skip_ws(&mut i);
                while i < s.len() && !matches!(s[i], ';' | '\n' | ' ' | '\t' | '}') {
                    i += 1;
                }
            }
            'a' | 'i' | 'c' => {
                // Text to the end of the line (`a\` continues onto the next).
                while i < s.len() && s[i] != '\n' {
                    if s[i] == '\\' {
                        i += 1;
                    }
                    i += 1;
                }
            }
            's' => {
                let delim = *s.get(i).ok_or("`s` without a delimiter")?;
                if delim == '\n' || delim == '\\' {
                    return Err("an `s` delimiter the analyser does not read".into());
                }
                i += 1;
                for _ in 0..2 {
                    sed_delimited(&s, &mut i, delim)?;
                }
                // Flags: only those that print or choose matches.
                while i < s.len() && !matches!(s[i], ';' | '\n' | '}' | ' ' | '\t') {
                    match s[i] {
                        'g' | 'p' | 'i' | 'I' | 'm' | 'M' | '0'..='9' => i += 1,
                        'e' => return Err("`s///e` runs the pattern space as a command".into()),
                        'w' | 'W' => return Err("`s///w` writes a file".into()),
                        other => {
                            return Err(format!("`s` flag `{other}` is not known to only read"));
                        }
                    }
                }
            }
            'y' => {
                let delim = *s.get(i).ok_or("`y` without a delimiter")?;
                i += 1;
                for _ in 0..2 {
                    sed_delimited(&s, &mut i, delim)?;
                }
            }
            'e' => return Err("`e` runs a command".into()),
            'r' | 'R' => return Err("`r`/`R` reads another file".into()),
            'w' | 'W' => return Err("`w`/`W` writes a file".into()),
            other => return Err(format!("sed command `{other}` is not known to only read")),
        }
    }
    Ok(())
}

/// Reads one sed address at `i`; false when there is none.
fn sed_address(s: &[char], i: &mut usize) -> Result<bool, String> {
    let Some(&c) = s.get(*i) else {
        return Ok(false);
    };
    if c.is_ascii_digit() {
        while *i < s.len() && (s[*i].is_ascii_digit() || s[*i] == '~') {
            *i += 1;
        }
        return Ok(true);
    }
    if c == '$' {
        *i += 1;
        return Ok(true);
    }
    let delim = if c == '/' {
        *i += 1;
        '/'
    } else if c == '\\' {
        let d = *s.get(*i + 1).ok_or("`\\` address without a delimiter")?;
        *i += 2;
        d
    } else {
        return Ok(false);
    };
    sed_delimited(s, i, delim)?;
    while *i < s.len() && matches!(s[*i], 'I' | 'M') {
        *i += 1;
    }
    Ok(true)
}

/// Skips text up to an unescaped `delim` (and past it).
fn sed_delimited(s: &[char], i: &mut usize, delim: char) -> Result<(), String> {
    while *i < s.len() {
        if s[*i] == '\\' {
            *i += 2;
            continue;
        }
        if s[*i] == delim {
            *i += 1;
            return Ok(());
        }
        *i += 1;
    }
    Err("an unterminated regular expression".into())
}

/// Words in an awk program that reach outside it.
const AWK_OUTSIDE: &[(&str, &str)] = &[
    ("system", "`system` runs a command"),
    ("getline", "`getline` reads other files or commands"),
    (
        "close",
        "`close` belongs to pipes and files the program opens",
    ),
    ("ARGV", "changing `ARGV` makes it read other files"),
    ("ARGC", "changing `ARGC` makes it read other files"),
    ("@include", "`@include` loads another file"),
    ("@load", "`@load` loads a native extension"),
    ("@namespace", "gawk namespaces are not read by the analyser"),
];

/// An awk program, read as tokens (a `/` starts a regex only where an operand
/// may start, as awk's grammar decides): no token may reach outside
/// (`system`, `getline`, pipes, `print > FILE`); `ENVIRON` prints secrets.
fn awk(program: &str) -> Result<ScriptEffect, String> {
    let s: Vec<char> = program.chars().collect();
    let mut effect = ScriptEffect::default();
    let mut i = 0;
    // Whether the statement being read began with print/printf, where `>` and
    // `|` redirect rather than compare.
    let mut in_print = false;
    let mut paren = 0usize;
    // Whether the token before ends an operand (then `/` divides).
    let mut after_operand = false;
    let mut divides = false;
    let mut quotes = false;
    while i < s.len() {
        let c = s[i];
        if c == ' ' || c == '\t' || c == '\r' || (c == '\\' && s.get(i + 1) == Some(&'\n')) {
            i += if c == '\\' { 2 } else { 1 };
            continue;
        }
        if c == '"' {
            quotes = true;
            i += 1;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    i += 1;
                }
                i += 1;
            }
            if i >= s.len() {
                return Err("an unterminated string".into());
            }
            i += 1;
            after_operand = true;
            continue;
        }
        if c == '/' && !after_operand {
            i += 1;
            let start = i;
            let mut in_class = false;
            while i < s.len() && (s[i] != '/' || in_class) {
                match s[i] {
                    '\\' => i += 1,
                    '[' => in_class = true,
                    ']' => in_class = false,
                    '\n' => return Err("an unterminated regular expression".into()),
                    _ => {}
                }
                i += 1;
            }
            if i >= s.len() {
                return Err("an unterminated regular expression".into());
            }
            // What is skipped as a regex must hold nothing that would matter
            // as code, in case awk reads this `/` as division.
            let body: String = s[start..i.min(s.len())].iter().collect();
            if body.contains('"') {
                return Err("a regular expression holding `\"` is not read by the analyser".into());
            }
            if let Some((_, why)) = AWK_OUTSIDE.iter().find(|(w, _)| body.contains(*w)) {
                return Err((*why).to_string());
            }
            i += 1;
            after_operand = true;
            continue;
        }
        if c == '/' {
            divides = true;
        }
        if c == '#' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphanumeric() || c == '_' || c == '@' || c == '.' {
            let start = i;
            i += 1;
            while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == '_' || s[i] == '.') {
                i += 1;
            }
            let word: String = s[start..i].iter().collect();
            if let Some((_, why)) = AWK_OUTSIDE.iter().find(|(w, _)| *w == word) {
                return Err((*why).to_string());
            }
            if word.starts_with('@') {
                // `@f(…)` calls the function named by `f`'s value (gawk's
                // indirect call: `f = "system"`); `@include`, `@load`,
                // `@namespace` and `@/re/` are directives the checks above
                // name.
                return Err(format!(
                    "`{word}`: gawk's indirect calls and directives are not read by the analyser"
                ));
            }
            if word == "SYMTAB" || word == "FUNCTAB" {
                return Err(format!(
                    "`{word}` reaches every variable or function by name (`SYMTAB[\"ENVIRON\"]`, `ARGV`)"
                ));
            }
            if word == "ENVIRON" || word == "PROCINFO" {
                effect.raises = Some((
                    Risk::Credential,
                    "reads `ENVIRON`, the environment with its secrets".to_string(),
                ));
            }
            if (word == "print" || word == "printf") && paren == 0 {
                in_print = true;
            }
            after_operand = !AWK_KEYWORDS.contains(&word.as_str());
            continue;
        }
        i += 1;
        match c {
            '|' => {
                if s.get(i) == Some(&'|') {
                    i += 1;
                    after_operand = false;
                    continue;
                }
                return Err("`|` pipes to or from a command".into());
            }
            '>' if in_print && paren == 0 => {
                return Err("`print > FILE` writes a file".into());
            }
            '(' => paren += 1,
            ')' => paren = paren.saturating_sub(1),
            ';' | '\n' | '{' | '}' => {
                in_print = false;
                paren = 0;
            }
            _ => {}
        }
        after_operand = match c {
            ')' | ']' | '$' => true,
            '+' | '-' if s.get(i) == Some(&c) => {
                // `i++ / 2`: a postfix increment ends an operand.
                i += 1;
                true
            }
            _ => false,
        };
    }
    if divides && quotes {
        // Where awk would read a regex and the analyser a division (or the
        // reverse), a string could hide code: both together are not read.
        return Err("the program both divides and quotes; the analyser cannot tell its regular expressions from division".into());
    }
    Ok(effect)
}

/// Words after which an awk operand (so a regex) may start.
const AWK_KEYWORDS: &[&str] = &[
    "print",
    "printf",
    "return",
    "in",
    "case",
    "if",
    "while",
    "for",
    "do",
    "else",
    "BEGIN",
    "END",
    "BEGINFILE",
    "ENDFILE",
    "delete",
    "exit",
    "next",
    "nextfile",
    "function",
    "func",
];

/// Names in a jq filter that reach outside the input: jq has no way to run a
/// program or write a file, so what remains is the environment (`env`,
/// `$ENV`) and modules on disk (`import`, `include`, `modulemeta`, search
/// paths).
const JQ_OUTSIDE: &[(&str, &str)] = &[
    ("import", "`import` loads a module from disk"),
    ("include", "`include` loads a module from disk"),
    ("modulemeta", "`modulemeta` reads modules from disk"),
    ("get_search_list", "reads the module search path"),
    ("$__prog_name", "not read by the analyser"),
];

/// A jq filter: strings are skipped, identifiers checked.
fn jq(filter: &str) -> Result<ScriptEffect, String> {
    let s: Vec<char> = filter.chars().collect();
    let mut effect = ScriptEffect::default();
    let mut i = 0;
    while i < s.len() {
        let c = s[i];
        if c == '"' {
            i += 1;
            while i < s.len() && s[i] != '"' {
                if s[i] == '\\' {
                    i += 1;
                    // `\(…)` interpolation holds code: read it like the rest.
                    if s.get(i) == Some(&'(') {
                        let start = i + 1;
                        let mut depth = 1;
                        i += 1;
                        while i < s.len() && depth > 0 {
                            match s[i] {
                                '(' => depth += 1,
                                ')' => depth -= 1,
                                _ => {}
                            }
                            i += 1;
                        }
                        let inner: String = s[start..i.saturating_sub(1)].iter().collect();
                        let e = jq(&inner)?;
                        if e.raises.is_some() {
                            effect = e;
                        }
                        continue;
                    }
                }
                i += 1;
            }
            if i >= s.len() {
                return Err("an unterminated string".into());
            }
            i += 1;
            continue;
        }
        if c == '#' {
            while i < s.len() && s[i] != '\n' {
                i += 1;
            }
            continue;
        }
        if c.is_ascii_alphabetic() || c == '_' || c == '$' || c == '@' {
            let start = i;
            i += 1;
            if c == '$' {
                // jq reads `$ ENV` (whitespace or a comment between) as `$ENV`.
                loop {
                    while i < s.len() && s[i].is_whitespace() {
                        i += 1;
                    }
                    if s.get(i) == Some(&'#') {
                        while i < s.len() && s[i] != '\n' {
                            i += 1;
                        }
                        continue;
                    }
                    break;
                }
            }
            let name_at = i;
            while i < s.len() && (s[i].is_ascii_alphanumeric() || s[i] == '_') {
                i += 1;
            }
            let word: String = if c == '$' {
                std::iter::once('$')
                    .chain(s[name_at..i].iter().copied())
                    .collect()
            } else {
                s[start..i].iter().collect()
            };
            if let Some((_, why)) = JQ_OUTSIDE.iter().find(|(w, _)| *w == word) {
                return Err((*why).to_string());
            }
            if word == "env" || word == "$ENV" {
                effect.raises = Some((
                    Risk::Credential,
                    "reads the environment with its secrets (`env`, `$ENV`)".to_string(),
                ));
            }
            continue;
        }
        i += 1;
    }
    Ok(effect)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(p: Program, t: &str) -> bool {
        judge(p, t).is_ok_and(|e| e.raises.is_none())
    }

    #[test]
    fn sed_scripts_that_only_read() {
        for t in [
            "s/a/b/g",
            "1,10p",
            "/start/,/end/d",
            "$!N;P;D",
            "s|x|y|2",
            "/^#/d;s/ *$//",
            "1~2p",
            "0,/re/s//x/",
            "y/abc/xyz/",
            "/x/{s/a/b/;p}",
            "10q",
            "\\,foo,p",
            "2,+3d",
        ] {
            assert!(ok(Program::Sed, t), "{t}");
        }
    }

    #[test]
    fn sed_scripts_that_run_write_or_read_more() {
        for t in [
            "e id",
            "1e touch x",
            "/x/e cmd",
            "$e cmd",
            "/a/,/b/{e cmd\n}",
            "s/x/id/e",
            "s/x/y/w out",
            "w out",
            "1W out",
            "r /etc/passwd",
            "R ~/.ssh/id_rsa",
            "/x/!e cmd",
            "s/x/y/ge",
            "1!{e cmd\n}",
            "v",
            "s/a",
            // GNU sed ends a label at whitespace: `:x` then `e id`.
            ":x e id",
            ": x e id",
            ":a w out",
            "bx e id",
            "ta r /etc/passwd",
        ] {
            assert!(!ok(Program::Sed, t), "{t}");
        }
    }

    #[test]
    fn awk_programs() {
        for t in [
            "{print $1}",
            "$3 > 100 {print $1}",
            "NR==1",
            "{s+=$2} END {print s}",
            "/re/ {n++} END {print n/2}",
            "BEGIN{FS=\":\"} {print $1}",
            "{ if ($1 > 2) print $2 }",
            "{s+=$1} END {print s/NR}",
            "/a|b/ {print}",
            "length($0) > 72",
            "{print ($1 > 2)}",
        ] {
            assert!(ok(Program::Awk, t), "{t}");
        }
        for t in [
            "BEGIN{system(\"id\")}",
            "{print | \"sh\"}",
            "{print > \"/tmp/x\"}",
            "{print $1 >> \"out\"}",
            "BEGIN{while ((getline l < \"/etc/passwd\") > 0) print l}",
            "BEGIN{ARGV[1]=\"/etc/shadow\"; ARGC=2}",
            "BEGIN{\"id\" | getline x; print x}",
            "@load \"filefuncs\"",
            "{printf \"%s\", $1 > \"f\"}",
            // awk reads `/"/` after `if (1)` as a regex; a reader that took it
            // for division would skip `system` inside a "string".
            "BEGIN { if (1) /\"/; system(\"id\"); /\"/ }",
            "BEGIN { x = 4 /\"/; system(\"id\") }",
            "/system/ {print}",
            // gawk's indirect call runs the function named by a value.
            "BEGIN{f=\"system\"; @f(\"id\")}",
            "BEGIN{f=\"sys\" \"tem\"; @f(\"id\")}",
            "BEGIN{print SYMTAB[\"ENVIRON\"][\"HOME\"]}",
        ] {
            assert!(!ok(Program::Awk, t), "{t}");
        }
        assert!(matches!(
            judge(Program::Awk, "BEGIN{print ENVIRON[\"HOME\"]}").map(|e| e.raises.map(|r| r.0)),
            Ok(Some(Risk::Credential))
        ));
    }

    #[test]
    fn jq_filters() {
        for t in [
            ".dependencies",
            ".[] | .name",
            "map(select(.a > 1))",
            "keys",
            "\"\\(.a)\"",
        ] {
            assert!(ok(Program::Jq, t), "{t}");
        }
        for t in ["import \"x\" as x; .", "include \"m\"; ."] {
            assert!(!ok(Program::Jq, t), "{t}");
        }
        for t in [
            "env",
            "$ENV.HOME",
            "env.GITHUB_TOKEN",
            "\"\\(env.X)\"",
            "$ ENV.HOME",
            "$\nENV",
            "$ # a comment\nENV",
        ] {
            assert!(
                matches!(
                    judge(Program::Jq, t).map(|e| e.raises.map(|r| r.0)),
                    Ok(Some(Risk::Credential))
                ),
                "{t}"
            );
        }
    }
}
