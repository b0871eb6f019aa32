//! One simple command's words: wrappers unwrapped, shells and interpreters
//! recognised, the rest classified by the command table.

use toolgate_core::Risk;

use super::words::Word;
use crate::classify::read_spec;
use crate::classify::table::{
    BASH_GRAMMAR_SHELLS, CODE_OPTIONS, DELETERS, INLINE_CODE, SHELLS, STDIN_RUNNERS,
    env_is_harmless, loads_code, wrapper_for,
};
use crate::classify::{self, FileArg, Walk, command_name};

/// What one simple command does, once unwrapped.
#[derive(Clone, Debug)]
pub(crate) struct Part {
    pub(crate) risk: Risk,
    pub(crate) reason: String,
    /// Why it cannot be analysed, if it cannot.
    pub(crate) opaque: Option<String>,
    /// Whether the innermost command's operands are paths.
    pub(crate) paths: bool,
    /// The innermost command's name.
    pub(crate) name: String,
    /// The words before [`Part::args`]: wrappers with their options, then the
    /// innermost command's name (all the words when there is no command).
    pub(crate) head: Vec<Word>,
    /// The innermost command's arguments, then those of commands it embeds
    /// (`find -exec`).
    pub(crate) args: Vec<Word>,
    /// How many of `args` are the command's own.
    own_args: usize,
    /// Where the innermost command's arguments start among the words.
    args_at: Option<usize>,
    /// Shell code it runs (`bash -c '…'`, `trap '…'`), analysed recursively.
    pub(crate) code: Vec<String>,
    /// Whether the command only delegates to `code` (no request of its own).
    pub(crate) delegates: bool,
    /// A directory the wrapper switches to (`env -C DIR`, `sudo -D DIR`).
    pub(crate) chdir: Option<Word>,
    /// Extra facts for people (`sudo`).
    pub(crate) note: Option<String>,
    /// Some argument is only known at run time: never save an approval.
    pub(crate) unknown_args: bool,
    /// How much it reads below its directories.
    pub(crate) walks: Walk,
    /// Files named by wrapper options (`xargs -a FILE`, `time -o FILE`), with
    /// whether they are written.
    pub(crate) wrapper_files: Vec<(Word, bool)>,
    /// The files the innermost command uses, when its read spec named them
    /// all (operands and option values), with whether each is written; `None`
    /// when they are only guessed from `paths`.
    pub(crate) files: Option<Vec<(Word, bool)>>,
    /// A program word given as a path (`./scripts/ls`): never the known program.
    by_path: Option<String>,
    /// Where the innermost command's subcommand is among `args` (from its spec).
    pub(crate) sub_at: Option<usize>,
    /// The innermost command prints the content of the files a repository
    /// tracks: the pathspecs that select them (`None`: any), and why.
    pub(crate) tracked: Option<(Option<Vec<Word>>, String)>,
}

impl Part {
    fn new() -> Self {
        Part {
            risk: Risk::Read,
            reason: String::new(),
            opaque: None,
            paths: false,
            name: String::new(),
            head: Vec::new(),
            args: Vec::new(),
            own_args: 0,
            args_at: None,
            code: Vec::new(),
            delegates: false,
            chdir: None,
            note: None,
            unknown_args: false,
            walks: Walk::None,
            wrapper_files: Vec::new(),
            files: None,
            by_path: None,
            sub_at: None,
            tracked: None,
        }
    }

    /// The command's words as the shell passes them: [`Part::head`], then its
    /// own arguments.
    pub(crate) fn words(&self) -> impl Iterator<Item = &Word> {
        self.head.iter().chain(&self.args[..self.own_args])
    }

    pub(crate) fn raise(&mut self, risk: Risk, reason: impl Into<String>) {
        if risk > self.risk || self.reason.is_empty() {
            self.risk = risk.max(self.risk);
            self.reason = reason.into();
        }
    }

    fn make_opaque(&mut self, why: impl Into<String>) {
        if self.opaque.is_none() {
            self.opaque = Some(format!("opaque: {}", why.into()));
        }
        self.raise(Risk::Execute, "it cannot be analysed");
    }

    fn merge(&mut self, other: Part) {
        self.raise(other.risk, other.reason);
        if self.opaque.is_none() {
            self.opaque = other.opaque;
        }
        self.code.extend(other.code);
        self.args.extend(other.args);
        self.unknown_args |= other.unknown_args;
    }
}

/// Analyses the words of one simple command (assignments already removed).
///
/// A program named by a path (`./scripts/ls`, `~/bin/git`) is judged by its
/// basename for what it would destroy or reach, but is never the known program:
/// at least `execute`, and no approval for it is saved.
pub(crate) fn analyse(mut words: Vec<Word>, depth: usize) -> Part {
    let mut part = analyse_words(&words, depth);
    // The arguments move out of the words instead of being copied; those of
    // embedded commands, merged meanwhile, go after them.
    let at = part.args_at.unwrap_or(words.len()).min(words.len());
    let embedded = std::mem::replace(&mut part.args, words.split_off(at));
    part.own_args = part.args.len();
    part.args.extend(embedded);
    part.head = words;
    if let Some(path) = part.by_path.take() {
        part.raise(
            Risk::Execute,
            format!("`{path}` is run by its path, not found by name as a known program"),
        );
        part.unknown_args = true;
    }
    part
}

fn analyse_words(words: &[Word], depth: usize) -> Part {
    let mut part = Part::new();
    let mut fed_by_xargs = false;
    if depth > super::MAX_DEPTH {
        part.make_opaque("commands nested too deeply");
        return part;
    }
    let mut i = 0;
    while let Some(word) = words.get(i) {
        if !word.known {
            part.make_opaque(format!(
                "the command name `{}` is only known at run time",
                word.text
            ));
            return part;
        }
        let name = command_name(&word.text);
        let Some(wrapper) = wrapper_for(name) else {
            break;
        };
        if word.text.contains('/') {
            part.by_path.get_or_insert_with(|| word.text.clone());
        }
        if (name == "command" || name == "type")
            && words
                .get(i + 1)
                .is_some_and(|w| matches!(w.text.as_str(), "-v" | "-V"))
        {
            part.raise(Risk::Read, "`command -v` looks a name up");
            part.name = name.to_string();
            return part;
        }
        if wrapper.floor > Risk::Read {
            part.raise(
                wrapper.floor,
                format!("`{name}` runs the command with other privileges"),
            );
        }
        if matches!(name, "sudo" | "doas") {
            part.note = Some(format!("{} ({name})", super::ANOTHER_USER_NOTE));
        }
        let via_xargs = matches!(name, "xargs" | "gxargs");
        i += 1;
        let Some(spec) = read_spec::wrapper_spec(name) else {
            part.make_opaque(format!("`{name}` has no option spec"));
            return part;
        };
        let texts: Vec<&str> = words[i..].iter().map(|w| w.text.as_str()).collect();
        let options = match read_spec::judge_wrapper(&spec, &texts) {
            Ok(options) => options,
            Err(why) => {
                part.make_opaque(why);
                return part;
            }
        };
        // A wrapper option only known at run time could be anything.
        if let Some(w) = words[i..i + options.command_at].iter().find(|w| !w.known) {
            part.make_opaque(format!(
                "`{name}` is given `{}`, only known at run time",
                w.text
            ));
            return part;
        }
        if let Some((risk, why)) = &options.raise {
            if *risk >= Risk::Execute {
                part.make_opaque(why.clone());
                return part;
            }
            // `time -o FILE` writes FILE.
            part.raise(*risk, why.clone());
        }
        if matches!(name, "sudo" | "doas")
            && texts[..options.command_at]
                .iter()
                .any(|a| matches!(*a, "-s" | "-i" | "--shell" | "--login" | "-e" | "--edit"))
        {
            part.raise(
                Risk::Execute,
                format!("`{name}` starts a shell or editor as another user"),
            );
        }
        let word_of = |f: &FileArg| -> Word {
            let w = &words[i + f.index];
            Word {
                text: w.text[f.attached.unwrap_or(0)..].to_string(),
                ..w.clone()
            }
        };
        for f in &options.files {
            part.wrapper_files.push((word_of(f), f.writes));
        }
        if let Some(dir) = &options.chdir {
            part.chdir = Some(word_of(dir));
        }
        i += options.command_at;
        fed_by_xargs |= via_xargs;
        if via_xargs {
            // xargs adds words read from its input to the command: its files
            // are not known before it runs.
            part.unknown_args = true;
        }
        let mut operands_left = wrapper.leading_operands;
        while let Some(w) = words.get(i) {
            let a = w.text.as_str();
            if !w.known {
                break;
            }
            if wrapper.takes_assignments && classify::is_assignment(a) {
                let var = a.split('=').next().unwrap_or(a);
                if loads_code(var) || !env_is_harmless(var) {
                    part.raise(
                        Risk::Execute,
                        format!("setting {var} may change what the program reads or runs"),
                    );
                }
                i += 1;
                continue;
            }
            if operands_left > 0 {
                operands_left -= 1;
                i += 1;
                continue;
            }
            break;
        }
        if i >= words.len() {
            part.name = name.to_string();
            let reason = if name == "env" {
                "`env` with no command prints the environment, secrets included".to_string()
            } else {
                format!("`{name}` with no command")
            };
            part.raise(wrapper.bare, reason);
            return part;
        }
        if via_xargs {
            let inner = command_name(&words[i].text);
            if DELETERS.contains(&inner) {
                part.raise(
                    Risk::Destructive,
                    format!("`xargs {inner}` deletes every file it is fed"),
                );
            }
        }
    }
    let rest = &words[i..];
    let Some(first) = rest.first() else {
        return part;
    };
    let name = command_name(&first.text).to_string();
    if first.text.contains('/') {
        part.by_path.get_or_insert_with(|| first.text.clone());
    }
    part.name = name.clone();
    part.args_at = Some(i + 1);
    let own_args = &rest[1..];
    part.unknown_args |= own_args.iter().any(|w| !w.known);
    let texts: Vec<&str> = rest.iter().map(|w| w.text.as_str()).collect();
    let args = &texts[1..];

    match name.as_str() {
        "eval" => {
            part.make_opaque("`eval` runs text built at run time");
            return part;
        }
        "source" | "." => {
            part.make_opaque(format!(
                "`{name}` runs the commands of a file the analyser does not read"
            ));
            // The file itself is still judged (`source .env` reads secrets).
            part.paths = true;
            return part;
        }
        "trap" => {
            match rest.get(1) {
                Some(code) if code.known && !code.text.starts_with('-') => {
                    part.code.push(code.text.clone());
                    part.raise(
                        Risk::Read,
                        "`trap` runs its code later; the code is analysed",
                    );
                }
                Some(code) if !code.known => {
                    part.make_opaque("`trap` is given code only known at run time")
                }
                _ => part.raise(Risk::Read, "`trap` lists or resets traps"),
            }
            return part;
        }
        _ => {}
    }
    if SHELLS.contains(&name.as_str()) {
        shell_invocation(&name, &rest[1..], &mut part);
        if fed_by_xargs {
            // `xargs -I{} sh -c '… {} …'`: the code is built from its input.
            part.raise(
                Risk::Execute,
                format!("`xargs` builds the code `{name}` runs from its input"),
            );
            part.unknown_args = true;
        }
        return part;
    }
    if let Some(why) = inline_code(&name, args) {
        part.make_opaque(why);
        return part;
    }
    if STDIN_RUNNERS.contains(&name.as_str()) && reads_code_from_stdin(args) {
        part.make_opaque(format!(
            "`{name}` reads its program from stdin (piped or heredoc data)"
        ));
        return part;
    }
    let verdict = classify::classify_words(&texts);
    part.raise(verdict.risk, verdict.reason);
    let word_of = |f: &FileArg| -> Option<Word> {
        let w = own_args.get(f.index)?;
        Some(Word {
            text: w.text.get(f.attached.unwrap_or(0)..)?.to_string(),
            ..w.clone()
        })
    };
    if let Some(files) = &verdict.files {
        let named: Vec<(Word, bool)> = files
            .iter()
            .filter_map(|f| Some((word_of(f)?, f.writes)))
            .collect();
        part.files = Some(named);
    }
    if let Some(dir) = &verdict.chdir {
        if let Some(w) = word_of(dir) {
            part.chdir = Some(w);
        }
    }
    part.sub_at = verdict.sub_at;
    if let Some(tracked) = verdict.tracked {
        // A pathspec that is not among the words selects anything.
        let pathspecs = tracked.pathspecs.and_then(|at| {
            at.iter()
                .map(|i| own_args.get(*i).cloned())
                .collect::<Option<Vec<Word>>>()
        });
        part.tracked = Some((pathspecs, tracked.why));
    }
    part.paths = verdict.paths;
    part.walks = verdict.walks;
    part.code.extend(verdict.code);
    for embedded in verdict.embedded {
        let words: Vec<Word> = embedded
            .into_iter()
            .map(|text| Word {
                text,
                known: true,
                ansi_c: false,
                unquoted: false,
            })
            .collect();
        let inner = analyse(words, depth + 1);
        part.merge(inner);
    }
    part
}

/// Long options of bash known to change nothing the analysis depends on.
const HARMLESS_SHELL_LONG: &[&str] = &[
    "--norc",
    "--noprofile",
    "--login",
    "--noediting",
    "--posix",
    "--restricted",
    "--verbose",
];

/// `bash -c CODE`, `bash script.sh`, or `bash` reading stdin.
fn shell_invocation(name: &str, args: &[Word], part: &mut Part) {
    let mut i = 0;
    let mut has_c = false;
    while let Some(w) = args.get(i) {
        let a = w.text.as_str();
        if !w.known {
            part.make_opaque(format!("`{name}` is given `{a}`, only known at run time"));
            return;
        }
        if a == "--" {
            i += 1;
            break;
        }
        if a.starts_with("--") {
            // Only the long options known to change nothing the analysis
            // depends on: `--rcfile FILE`, `--init-file FILE`, `--login`,
            // `--debugger` run other code first.
            if !HARMLESS_SHELL_LONG.contains(&a) {
                part.make_opaque(format!(
                    "`{name} {a}` is not known to leave what the shell runs unchanged"
                ));
                return;
            }
            i += 1;
            continue;
        }
        if (a.starts_with('-') || a.starts_with('+')) && a.len() > 1 {
            // A cluster of single-letter options (`-ec`, `-lc`, `-eo
            // pipefail`, `+x`). `-i` (an interactive shell: history
            // expansion, an rc file), `-O NAME` (a shopt such as dotglob),
            // `-a`, `-k` and `-H` change what runs or how the code is read.
            // `-l` reads the user's own profile, as the shell that started
            // the agent did.
            let on = a.starts_with('-');
            i += 1;
            for c in a[1..].chars() {
                match c {
                    'c' if on => has_c = true,
                    'o' => {
                        let Some(option) = args.get(i) else { break };
                        i += 1;
                        if on
                            && (!option.known
                                || !super::builtins::HARMLESS_SET_OPTIONS
                                    .contains(&option.text.as_str()))
                        {
                            part.make_opaque(format!(
                                "`{name} -o {}` changes how the shell reads or runs its code",
                                option.text
                            ));
                            return;
                        }
                    }
                    c if on
                        && !super::builtins::HARMLESS_SET_LETTERS.contains(c)
                        && !matches!(c, 's' | 'r' | 'l') =>
                    {
                        part.make_opaque(format!(
                            "`{name} -{c}` is not known to leave what the shell runs unchanged"
                        ));
                        return;
                    }
                    'O' => {
                        part.make_opaque(format!("`{name} +O` is not read by the analyser"));
                        return;
                    }
                    _ => {}
                }
            }
            continue;
        }
        break;
    }
    let operand = args.get(i);
    if has_c {
        match operand {
            Some(_) if !BASH_GRAMMAR_SHELLS.contains(&name) => part.make_opaque(format!(
                "`{name} -c` code is not bash: the analyser reads bash's grammar only"
            )),
            Some(code) if code.known => {
                part.code.push(code.text.clone());
                part.delegates = true;
                part.name = name.to_string();
            }
            Some(code) => part.make_opaque(format!(
                "`{name} -c` is given code only known at run time (`{}`)",
                code.text
            )),
            None => part.make_opaque(format!("`{name} -c` without code")),
        }
        return;
    }
    match operand {
        Some(script) => {
            part.raise(
                Risk::Execute,
                format!("`{name}` runs the script {}", script.text),
            );
            part.paths = true;
            part.args = args[i..].to_vec();
        }
        None => part.make_opaque(format!(
            "`{name}` reads its commands from stdin (piped or heredoc data)"
        )),
    }
}

/// `Some(reason)` when an interpreter is given code inline (`python -c`, `node -e`).
fn inline_code(name: &str, args: &[&str]) -> Option<String> {
    given_option(name, args, INLINE_CODE).map(|a| format!("`{name} {a}` runs inline code"))
}

/// `Some(reason)` when the program `name` evaluates code its arguments
/// `args` give or choose: inline code ([`INLINE_CODE`]), a shell's `-c`, a
/// module or makefile text ([`CODE_OPTIONS`]). No approval is saved for
/// such a command, and none covers it.
pub(crate) fn evaluates_code(name: &str, args: &[&str]) -> Option<String> {
    if let Some(why) = inline_code(name, args) {
        return Some(why);
    }
    if SHELLS.contains(&name) {
        if let Some(a) = given_option(name, args, &[(SHELLS, &["-c"])]) {
            return Some(format!("`{name} {a}` runs the code it is given"));
        }
    }
    given_option(name, args, CODE_OPTIONS)
        .map(|a| format!("`{name} {a}` runs code its arguments choose"))
}

/// The argument of `args` that is one of the options `table` lists for
/// `name`, before the script operand (options after it belong to the script).
fn given_option<'a>(name: &str, args: &[&'a str], table: &[(&[&str], &[&str])]) -> Option<&'a str> {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let (_, flags) = table
        .iter()
        .find(|(names, _)| names.contains(&name) || names.contains(&base))?;
    for &a in args {
        if a == "--" {
            break;
        }
        for flag in flags.iter() {
            let hit = if flag.starts_with('-')
                && flag.len() == 2
                && !a.starts_with("--")
                && a.starts_with('-')
            {
                // A short flag, alone or ending a cluster (`perl -ne`, `python -Bc`).
                let letter = flag.as_bytes()[1] as char;
                a[1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .any(|c| c == letter)
            } else {
                a.strip_prefix(flag)
                    .is_some_and(|rest| rest.is_empty() || rest.starts_with('='))
            };
            if hit {
                return Some(a);
            }
        }
        let options_anywhere = matches!(name, "su" | "runuser" | "script" | "make" | "gmake");
        if !a.starts_with('-') && !options_anywhere && !flags.iter().any(|f| !f.starts_with('-')) {
            // The script operand: options after it belong to the script.
            break;
        }
    }
    None
}

/// An interpreter with no script and no informational option reads stdin.
fn reads_code_from_stdin(args: &[&str]) -> bool {
    let informational = ["-V", "--version", "-h", "--help", "-v", "-m", "-c"];
    if args.iter().any(|a| informational.contains(a)) {
        return false;
    }
    args.iter().all(|a| a.starts_with('-'))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<Word> {
        s.split_whitespace()
            .map(|t| Word {
                text: t.to_string(),
                known: !t.starts_with('$'),
                ansi_c: false,
                unquoted: true,
            })
            .collect()
    }

    #[test]
    fn wrappers() {
        assert_eq!(
            analyse(words("timeout 5 rm -rf x"), 0).risk,
            Risk::Destructive
        );
        assert_eq!(analyse(words("sudo ls"), 0).risk, Risk::Execute);
        assert_eq!(analyse(words("env"), 0).risk, Risk::Credential);
        assert_eq!(analyse(words("env -i LC_ALL=C ls"), 0).risk, Risk::Read);
        // Any other variable may change what the program reads (`HOME`, `GIT_DIR`).
        assert_eq!(analyse(words("env -i A=1 ls"), 0).risk, Risk::Execute);
        assert_eq!(analyse(words("env LD_PRELOAD=x ls"), 0).risk, Risk::Execute);
        assert_eq!(analyse(words("xargs rm"), 0).risk, Risk::Destructive);
        assert_eq!(analyse(words("nice -n 5 nohup ls"), 0).risk, Risk::Read);
        assert!(analyse(words("$X ls"), 0).opaque.is_some());
        assert!(analyse(words("python3 -c print(1)"), 0).opaque.is_some());
        assert!(analyse(words("perl -ne print"), 0).opaque.is_some());
        assert!(analyse(words("python3 script.py -c x"), 0).opaque.is_none());
        assert!(analyse(words("bash"), 0).opaque.is_some());
        assert!(analyse(words("bash -c $X"), 0).opaque.is_some());
        let p = analyse(words("bash -lc ls"), 0);
        assert!(p.delegates);
        assert_eq!(p.code, vec!["ls"]);
        let p = analyse(words("bash -euo pipefail -c ls"), 0);
        assert!(p.delegates && p.opaque.is_none());
        // Options that run other code first or change how the code is read.
        for line in [
            "bash --rcfile x.sh -ic ls",
            "bash -ic ls",
            "bash -O dotglob -c ls",
            "bash -kc ls",
            "bash -o keyword -c ls",
            "sh -a -c ls",
        ] {
            assert!(analyse(words(line), 0).opaque.is_some(), "{line}");
        }
        assert_eq!(analyse(words("command -v rm"), 0).risk, Risk::Read);
        assert_eq!(
            analyse(words("find . -exec rm -rf {} ;"), 0).risk,
            Risk::Destructive
        );
    }

    #[test]
    fn code_for_a_shell_that_is_not_bash_is_not_read_with_the_bash_grammar() {
        // zsh runs code in glob qualifiers (`*(e:'cmd':)`), fish and csh have
        // grammars of their own: what bash's grammar reads there is not what
        // they run.
        for line in [
            "zsh -c ls",
            "zsh -c ls *(e:'touch pwned':)",
            "ksh -c ls",
            "mksh -c ls",
            "fish -c ls",
            "csh -c ls",
            "tcsh -c ls",
        ] {
            let p = analyse(words(line), 0);
            assert!(p.opaque.is_some() && p.code.is_empty(), "{line}");
        }
        for line in ["bash -c ls", "sh -c ls", "dash -c ls", "busybox-sh -c ls"] {
            let p = analyse(words(line), 0);
            assert!(p.opaque.is_none() && p.code == ["ls"], "{line}");
        }
    }
}
