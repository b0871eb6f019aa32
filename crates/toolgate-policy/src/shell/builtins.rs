//! Every bash builtin, with what it does to the analysis: which of their
//! arguments bash evaluates as code, as arithmetic, or as variable names
//! (whose array subscripts are arithmetic — `a[$(cmd)]` runs `cmd`).
//!
//! The table is data; `every_bash_builtin_has_an_entry` checks it against
//! `bash -c 'compgen -b'` on the machine. Classification of the builtins as
//! commands (their risk, their files) is the classifier's; this stage only
//! refuses what evaluates code hidden in an argument.

use super::words::Word;

/// How a builtin treats its arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Eval {
    /// Arguments are data (`echo`, `pwd`, `true`…).
    Data,
    /// Some arguments are variable names (`read NAME`, `unset NAME`,
    /// `printf -v NAME`, `declare NAME=…`, `test -v NAME`): a subscript in
    /// one is arithmetic.
    Names,
    /// Every argument is arithmetic (`let`).
    Arithmetic,
    /// Some option makes an argument code (`trap CODE`, `complete -C CMD`,
    /// `compgen -C`, `bind -x`, `mapfile -C`, `hash -p`, `enable -f`, `fc`):
    /// judged per builtin.
    Code,
    /// Runs its arguments, or a file, as code (`eval`, `source`, `.`,
    /// `exec`): the classifier handles what it can, the rest is opaque.
    Runs,
}

/// One builtin.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Builtin {
    pub(crate) name: &'static str,
    pub(crate) eval: Eval,
    /// What it does, in words.
    pub(crate) does: &'static str,
}

const fn b(name: &'static str, eval: Eval, does: &'static str) -> Builtin {
    Builtin { name, eval, does }
}

/// Every builtin of bash 5.2 (`compgen -b`), plus the keywords that act like
/// one (`[[`, `((`, handled by the grammar's own nodes).
pub(crate) const BUILTINS: &[Builtin] = &[
    b(".", Eval::Runs, "runs the commands of a file in this shell"),
    b(":", Eval::Data, "does nothing"),
    b(
        "[",
        Eval::Names,
        "tests a condition (`-v NAME` reads a subscript)",
    ),
    b(
        "alias",
        Eval::Code,
        "defines an alias: text run in place of a name",
    ),
    b("bg", Eval::Data, "resumes a job in the background"),
    b(
        "bind",
        Eval::Code,
        "binds keys; `-x` binds a key to a command",
    ),
    b("break", Eval::Data, "leaves a loop"),
    b("builtin", Eval::Runs, "runs a builtin (a wrapper)"),
    b("caller", Eval::Data, "prints the call stack"),
    b("cd", Eval::Data, "changes the working directory"),
    b(
        "command",
        Eval::Runs,
        "runs a command bypassing functions (a wrapper)",
    ),
    b(
        "compgen",
        Eval::Code,
        "prints completions; `-C CMD` and `-F FUNC` run code",
    ),
    b(
        "complete",
        Eval::Code,
        "defines completions; `-C CMD` and `-F FUNC` run code",
    ),
    b("compopt", Eval::Data, "changes completion options"),
    b("continue", Eval::Data, "next loop iteration"),
    b(
        "declare",
        Eval::Names,
        "declares variables (`-i`: values are arithmetic)",
    ),
    b("dirs", Eval::Data, "prints the directory stack"),
    b("disown", Eval::Data, "forgets jobs"),
    b("echo", Eval::Data, "prints its arguments"),
    b(
        "enable",
        Eval::Code,
        "enables builtins; `-f FILE` loads a shared object",
    ),
    b("eval", Eval::Runs, "runs its arguments as shell code"),
    b(
        "exec",
        Eval::Runs,
        "replaces the shell with a command (a wrapper)",
    ),
    b("exit", Eval::Data, "exits the shell"),
    b("export", Eval::Names, "exports variables"),
    b("false", Eval::Data, "fails"),
    b("fc", Eval::Code, "edits and re-runs history entries"),
    b("fg", Eval::Data, "resumes a job in the foreground"),
    b("getopts", Eval::Names, "parses options into a variable"),
    b(
        "hash",
        Eval::Code,
        "remembers command paths; `-p PATH NAME` redefines NAME",
    ),
    b("help", Eval::Data, "prints help"),
    b(
        "history",
        Eval::Code,
        "prints or changes history (`-r`/`-w` FILE, `-s`)",
    ),
    b("jobs", Eval::Data, "lists jobs"),
    b("kill", Eval::Data, "sends a signal"),
    b("let", Eval::Arithmetic, "evaluates arithmetic"),
    b("local", Eval::Names, "declares local variables"),
    b("logout", Eval::Data, "exits a login shell"),
    b(
        "mapfile",
        Eval::Code,
        "reads lines into an array; `-C CMD` runs code",
    ),
    b("popd", Eval::Data, "pops the directory stack"),
    b(
        "printf",
        Eval::Names,
        "prints formatted text; `-v NAME` assigns it",
    ),
    b("pushd", Eval::Data, "pushes onto the directory stack"),
    b("pwd", Eval::Data, "prints the working directory"),
    b("read", Eval::Names, "reads a line into variables"),
    b(
        "readarray",
        Eval::Code,
        "reads lines into an array; `-C CMD` runs code",
    ),
    b("readonly", Eval::Names, "marks variables read-only"),
    b("return", Eval::Data, "returns from a function"),
    b(
        "set",
        Eval::Code,
        "sets options or positional parameters; `-o keyword`, `-o histexpand`… change how later commands are read",
    ),
    b("shift", Eval::Data, "shifts positional parameters"),
    b("shopt", Eval::Data, "sets shell options"),
    b(
        "source",
        Eval::Runs,
        "runs the commands of a file in this shell",
    ),
    b("suspend", Eval::Data, "suspends the shell"),
    b(
        "test",
        Eval::Names,
        "tests a condition (`-v NAME` reads a subscript)",
    ),
    b("times", Eval::Data, "prints process times"),
    b("trap", Eval::Code, "runs code on a signal"),
    b("true", Eval::Data, "succeeds"),
    b("type", Eval::Data, "describes a name"),
    b("typeset", Eval::Names, "declares variables"),
    b("ulimit", Eval::Data, "sets resource limits"),
    b("umask", Eval::Data, "sets the file mode mask"),
    b("unalias", Eval::Data, "removes aliases"),
    b("unset", Eval::Names, "unsets variables or functions"),
    b(
        "wait",
        Eval::Names,
        "waits for jobs; `-p NAME` assigns a pid",
    ),
];

/// The builtin named `name`.
pub(crate) fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// Whether text holds code the shell runs when it evaluates it as a name or
/// as arithmetic: a command substitution or backticks (`a[$(cmd)]`).
pub(crate) fn holds_code(text: &str) -> bool {
    text.contains("$(") || text.contains('`') || text.contains("<(") || text.contains(">(")
}

/// Why running builtin `name` with `args` cannot be analysed: it would
/// evaluate code hidden in an argument. `arith_safe(word)` tells whether an
/// arithmetic operand is known to hold no code.
pub(crate) fn judge(
    name: &str,
    args: &[Word],
    arith_safe: &dyn Fn(&Word) -> bool,
) -> Option<String> {
    let entry = builtin(name)?;
    let does = entry.does;
    let code_in = |w: &Word| holds_code(&w.text);
    // A name argument whose value is unknown may hold `a[$(cmd)]`.
    let name_arg = |w: &Word| -> Option<String> {
        if !w.known {
            return Some(format!(
                "`{name}` is given the variable name `{}`, only known at run time; a subscript in it would run code",
                w.text
            ));
        }
        if code_in(w) {
            return Some(format!(
                "`{name}` ({does}) evaluates `{}` as a variable name, whose subscript runs the code in it",
                w.text
            ));
        }
        // `printf -v 'a[x]'`: the subscript is arithmetic, and `x` may hold
        // `b[$(cmd)]`.
        super::analyzer::subscript_of(&w.text)
            .filter(|s| !arith_safe(s))
            .map(|s| {
                format!(
                    "`{name}` ({does}) evaluates the subscript `{}` of `{}` as arithmetic, with a value only known at run time",
                    s.text, w.text
                )
            })
    };
    match entry.eval {
        Eval::Data | Eval::Runs => None,
        Eval::Arithmetic => args.iter().find_map(|w| {
            (!arith_safe(w) || code_in(w)).then(|| {
                format!(
                    "`{name}` evaluates `{}` as arithmetic, which runs code in array subscripts and variables",
                    w.text
                )
            })
        }),
        Eval::Names => names_builtin(name, args, &name_arg, arith_safe),
        Eval::Code => code_builtin(name, args, &name_arg),
    }
}

fn names_builtin(
    name: &str,
    args: &[Word],
    name_arg: &dyn Fn(&Word) -> Option<String>,
    arith_safe: &dyn Fn(&Word) -> bool,
) -> Option<String> {
    match name {
        // `test -v NAME`, `[ -v NAME ]`; other operands are data (test's
        // `-eq` does not evaluate arithmetic).
        "test" | "[" => args
            .windows(2)
            .filter(|p| p[0].known && matches!(p[0].text.as_str(), "-v" | "-R"))
            .find_map(|p| name_arg(&p[1])),
        "printf" => {
            let mut i = 0;
            while let Some(w) = args.get(i) {
                if !w.known {
                    // `printf $OPT …`: could be `-v`.
                    return name_arg(w);
                }
                if w.text == "--" || !w.text.starts_with('-') {
                    return None;
                }
                if w.text == "-v" {
                    return args.get(i + 1).and_then(name_arg);
                }
                if let Some(rest) = w.text.strip_prefix("-v") {
                    return name_arg(&Word {
                        text: rest.to_string(),
                        ..w.clone()
                    });
                }
                i += 1;
            }
            None
        }
        "wait" => args
            .windows(2)
            .filter(|p| p[0].known && p[0].text == "-p")
            .find_map(|p| name_arg(&p[1])),
        "read" | "getopts" => {
            // Options that take a value: read -a NAME -d DELIM -i TEXT -n N
            // -N N -p PROMPT -t T -u FD; every other operand is a name.
            let mut i = 0;
            let mut operands = 0;
            while let Some(w) = args.get(i) {
                i += 1;
                if !w.known {
                    return name_arg(w);
                }
                if name == "read" && w.text.starts_with('-') && w.text.len() > 1 {
                    let takes = w
                        .text
                        .chars()
                        .last()
                        .is_some_and(|c| "adinNptu".contains(c));
                    if w.text.ends_with('a') {
                        if let Some(r) = args.get(i).and_then(name_arg) {
                            return Some(r);
                        }
                    }
                    if takes {
                        i += 1;
                    }
                    continue;
                }
                operands += 1;
                // getopts OPTSTRING NAME [ARGS]: only the second is a name.
                if name == "getopts" && operands != 2 {
                    continue;
                }
                if let Some(r) = name_arg(w) {
                    return Some(r);
                }
            }
            None
        }
        "unset" | "export" | "readonly" | "declare" | "typeset" | "local" => {
            let integer = args
                .iter()
                .any(|w| w.known && w.text.starts_with('-') && w.text[1..].contains('i'));
            for w in args {
                if w.known && (w.text.starts_with('-') || w.text.starts_with('+')) {
                    continue;
                }
                let (var, value) = match w.text.split_once('=') {
                    Some((n, v)) => (n, Some(v)),
                    None => (w.text.as_str(), None),
                };
                let var_word = Word {
                    text: var.to_string(),
                    known: w.known || !var.contains('$'),
                    ..w.clone()
                };
                if let Some(r) = name_arg(&var_word) {
                    return Some(r);
                }
                if integer {
                    if let Some(v) = value {
                        let value_word = Word {
                            text: v.to_string(),
                            ..w.clone()
                        };
                        if !arith_safe(&value_word) || holds_code(v) {
                            return Some(format!(
                                "`{name} -i` evaluates `{v}` as arithmetic, which runs code in array subscripts and variables"
                            ));
                        }
                    }
                }
            }
            None
        }
        _ => None,
    }
}

fn code_builtin(
    name: &str,
    args: &[Word],
    name_arg: &dyn Fn(&Word) -> Option<String>,
) -> Option<String> {
    let has_option = |letters: &str| {
        args.iter().any(|w| {
            !w.known
                || (w.text.starts_with('-')
                    && !w.text.starts_with("--")
                    && w.text[1..].chars().any(|c| letters.contains(c)))
        })
    };
    match name {
        "compgen" | "complete" if has_option("CF") => Some(format!(
            "`{name} -C`/`-F` runs a command or function to produce completions"
        )),
        "bind" if has_option("x") => Some("`bind -x` binds a key to a shell command".into()),
        "mapfile" | "readarray" => {
            if has_option("C") {
                return Some(format!(
                    "`{name} -C` runs a callback for the lines it reads"
                ));
            }
            // The array name: the last operand.
            let mut i = 0;
            let mut last = None;
            while let Some(w) = args.get(i) {
                i += 1;
                if w.known && w.text.starts_with('-') && w.text.len() > 1 {
                    if w.text.chars().last().is_some_and(|c| "dnOsuCc".contains(c)) {
                        i += 1;
                    }
                    continue;
                }
                last = Some(w);
            }
            last.and_then(name_arg)
        }
        "enable" if has_option("f") => {
            Some("`enable -f` loads a builtin from a shared object".into())
        }
        "fc" => {
            // `fc -l` lists; anything else edits and runs history.
            let lists = args.iter().all(|w| {
                w.known
                    && (w.text.starts_with("-l")
                        || w.text.starts_with('-') && w.text.contains('l')
                        || w.text.parse::<i64>().is_ok())
            });
            (!lists || args.is_empty())
                .then(|| "`fc` re-runs commands from the history".to_string())
        }
        "history" if has_option("s") => Some("`history -s` adds commands to the history".into()),
        "alias" => args
            .iter()
            .find(|w| !w.known || w.text.contains('='))
            .map(|w| {
                format!(
                    "`alias {}` defines text run in place of a command name",
                    w.text
                )
            }),
        "hash" if has_option("p") => Some("`hash -p` makes a name run another program".into()),
        "set" => set_options(args),
        _ => None,
    }
}

/// The `set -o` names known only to change error handling, tracing and
/// other behaviour the analysis does not depend on. The rest change how the
/// shell reads or runs what follows: `allexport` exports every later
/// assignment, `keyword` takes `NAME=VALUE` arguments for the environment,
/// `history` with `histexpand` expands `!…` in later lines.
pub(crate) const HARMLESS_SET_OPTIONS: &[&str] = &[
    "errexit",
    "errtrace",
    "functrace",
    "nounset",
    "pipefail",
    "xtrace",
    "verbose",
    "noclobber",
    "noglob",
    "noexec",
    "notify",
    "monitor",
    "hashall",
    "braceexpand",
    "ignoreeof",
    "interactive-comments",
    "physical",
    "posix",
    "emacs",
    "vi",
    "nolog",
    "onecmd",
    "privileged",
];

/// The single-letter options of `set` (and of `bash`/`sh` themselves) known
/// to change nothing the analysis depends on; `-a` (allexport), `-k`
/// (keyword) and `-H` (history expansion) are not among them.
pub(crate) const HARMLESS_SET_LETTERS: &str = "bBCeEfhmnpPtTuvx";

/// Why `set ARGS` changes how later commands are read, if it does.
fn set_options(args: &[Word]) -> Option<String> {
    let mut i = 0;
    while let Some(w) = args.get(i) {
        i += 1;
        if !w.known {
            return Some(format!(
                "`set {}` is only known at run time and may turn on an option that changes how later commands are read",
                w.text
            ));
        }
        let text = w.text.as_str();
        if text == "--" || text == "-" {
            return None;
        }
        let Some(letters) = text.strip_prefix('-').or_else(|| text.strip_prefix('+')) else {
            // The positional parameters.
            return None;
        };
        let on = text.starts_with('-');
        for c in letters.chars() {
            if c == 'o' {
                let name = args.get(i)?;
                i += 1;
                if on && (!name.known || !HARMLESS_SET_OPTIONS.contains(&name.text.as_str())) {
                    return Some(format!(
                        "`set -o {}` changes how the shell reads or runs later commands",
                        name.text
                    ));
                }
            } else if on && !HARMLESS_SET_LETTERS.contains(c) {
                return Some(format!(
                    "`set -{c}` changes how the shell reads or runs later commands"
                ));
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn w(s: &str) -> Word {
        Word {
            text: s.to_string(),
            known: !s.starts_with('$'),
            ansi_c: false,
            unquoted: false,
        }
    }

    fn run(line: &str) -> Option<String> {
        let words: Vec<Word> = line.split(' ').map(w).collect();
        let safe = |w: &Word| {
            w.known
                && w.text
                    .bytes()
                    .all(|b| b.is_ascii_digit() || b"+-*/ ".contains(&b))
        };
        judge(&words[0].text, &words[1..], &safe)
    }

    #[test]
    fn every_bash_builtin_has_an_entry() {
        let Ok(out) = std::process::Command::new("bash")
            .args(["-c", "compgen -b"])
            .output()
        else {
            eprintln!("no bash here");
            return;
        };
        let names = String::from_utf8_lossy(&out.stdout);
        let missing: Vec<&str> = names.lines().filter(|n| builtin(n).is_none()).collect();
        assert!(missing.is_empty(), "builtins without an entry: {missing:?}");
        assert!(BUILTINS.len() >= 61);
    }

    #[test]
    fn subscripts_in_names_are_code() {
        assert!(run("printf -v a[$(id)] x").is_some());
        assert!(run("printf -va[`id`] x").is_some());
        assert!(run("read a[$(id)]").is_some());
        assert!(run("read -r -a a[$(id)]").is_some());
        assert!(run("unset a[$(id)]").is_some());
        assert!(run("test -v a[$(id)]").is_some());
        assert!(run("[ -v a[`id`] ]").is_some());
        assert!(run("declare a[$(id)]=1").is_some());
        assert!(run("export x a[$(id)]=1").is_some());
        assert!(run("getopts ab a[$(id)]").is_some());
        assert!(run("wait -p a[$(id)]").is_some());
        assert!(run("mapfile a[$(id)]").is_some());
        assert!(run("read $NAME").is_some());
        assert!(run("printf %s x").is_none());
        assert!(run("read -r line").is_none());
        assert!(run("unset x").is_none());
        assert!(run("test -f a[$(id)]").is_none());
    }

    #[test]
    fn code_options_are_code() {
        assert!(run("compgen -C id x").is_some());
        assert!(run("complete -C id x").is_some());
        assert!(run("complete -F f x").is_some());
        assert!(run("bind -x \"\\C-a\":id").is_some());
        assert!(run("mapfile -C id -c 1 a").is_some());
        assert!(run("enable -f ./x.so x").is_some());
        assert!(run("hash -p ./x.sh ls").is_some());
        assert!(run("fc -s").is_some());
        assert!(run("alias ls=id").is_some());
        assert!(run("fc -l").is_none());
        assert!(run("compgen -c").is_none());
        assert!(run("hash").is_none());
    }

    #[test]
    fn arithmetic_is_code_unless_known() {
        assert!(run("let x=a[$(id)]").is_some());
        assert!(run("let $X").is_some());
        assert!(run("let 1+2").is_none());
        assert!(run("declare -i x=$Y").is_some());
        assert!(run("declare -i x=a[`id`]").is_some());
    }
}
