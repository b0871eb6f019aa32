//! Save patterns for bash approvals: the command prefix by an arity table.
//!
//! The arity of a command is how many leading words name what it does:
//! `git push` (2), `npm run build` (3), `ls` (1). An approval saves that prefix
//! plus ` *`, never anything broader. Wrappers and `NAME=value` words in front
//! are kept verbatim so that the pattern matches the command as written.
//!
//! What "always" really saves is [`save_pattern`]'s answer, which is narrower
//! than the prefix wherever the prefix would cover more than was shown:
//! * a command that evaluates code given in its arguments (`python -c`,
//!   `node -e`, `make --eval`, python's `-m`: [`super::table::INLINE_CODE`]
//!   and [`super::table::CODE_OPTIONS`]) saves nothing;
//! * a program that runs code chosen by its arguments — a shell or an
//!   interpreter ([`super::table::SHELLS`], [`super::table::STDIN_RUNNERS`],
//!   the two tables above), a wrapper (`env`, `xargs`, `timeout`…), or a
//!   command or subcommand marked [`WHOLE`] in the arity table (`make`,
//!   `npm run`, `cargo run`) — saves the exact command;
//! * a command that gives any option after its prefix, whose read spec
//!   describes it but could not prove it only reads (`sed 's/x/y/w out' f`:
//!   its script chose to write), or whose operands raise it above what its
//!   prefix alone is, saves the exact command, and (see [`exact_only`])
//!   is answered only by an approval of exactly that command: a prefix
//!   pattern never covers an option the person was not shown, whether or
//!   not the program's spec knows it, nor a command riskier than its prefix.

use super::read_spec;
use super::table::{CODE_OPTIONS, INLINE_CODE, SHELLS, STDIN_RUNNERS, lookup, wrapper_for};
use crate::pattern::MAX_PATTERN_BYTES;
use toolgate_core::Risk;

/// Subcommands whose arity differs from their command's.
type Subcommands = &'static [(&'static str, usize)];

/// Marks an arity (`2 | WHOLE`): the command's arguments choose the code it
/// runs (a make target, a package script, a program to build and run), so
/// its arguments are never a wildcard: "always" saves the exact command.
pub(crate) const WHOLE: usize = 1 << 16;

/// `(command, arity, [(subcommand, arity)])`, sorted by command: how many
/// leading words name what a command does. A command not listed has arity 1;
/// a subcommand listed overrides its command's arity.
static ARITY: &[(&str, usize, Subcommands)] = &[
    ("apt", 2, &[]),
    ("apt-get", 2, &[]),
    ("aws", 3, &[]),
    ("az", 3, &[]),
    ("brew", 2, &[]),
    (
        "bun",
        2,
        &[("run", 3 | WHOLE), ("x", 2 | WHOLE), ("exec", 2 | WHOLE)],
    ),
    ("bundle", 2, &[("exec", 3 | WHOLE)]),
    ("bunx", 2 | WHOLE, &[]),
    ("cargo", 2, &[("run", 2 | WHOLE), ("script", 2 | WHOLE)]),
    ("composer", 2, &[]),
    ("conda", 2, &[]),
    (
        "deno",
        2,
        &[("run", 2 | WHOLE), ("eval", 2 | WHOLE), ("task", 2 | WHOLE)],
    ),
    ("dnf", 2, &[]),
    (
        "docker",
        2,
        &[
            ("compose", 3),
            ("container", 3),
            ("exec", 2 | WHOLE),
            ("image", 3),
            ("run", 2 | WHOLE),
        ],
    ),
    ("dotnet", 2, &[]),
    ("gcloud", 3, &[]),
    ("gh", 3, &[]),
    (
        "git",
        2,
        &[
            ("stash", 3),
            ("remote", 3),
            ("submodule", 3),
            ("worktree", 3),
            ("bisect", 3),
            ("config", 3),
        ],
    ),
    ("gmake", 2 | WHOLE, &[]),
    ("go", 2, &[("mod", 3), ("run", 2 | WHOLE)]),
    ("gradle", 2, &[]),
    ("hatch", 2, &[]),
    ("helm", 2, &[]),
    ("just", 2 | WHOLE, &[]),
    ("kubectl", 2, &[("exec", 2 | WHOLE), ("run", 2 | WHOLE)]),
    ("make", 2 | WHOLE, &[]),
    ("mix", 2, &[]),
    ("mvn", 2, &[]),
    (
        "npm",
        2,
        &[
            ("run", 3 | WHOLE),
            ("run-script", 3 | WHOLE),
            ("exec", 3 | WHOLE),
            ("x", 3 | WHOLE),
        ],
    ),
    ("npx", 2 | WHOLE, &[]),
    ("pdm", 2, &[("run", 3 | WHOLE)]),
    ("pip", 2, &[]),
    ("pip3", 2, &[]),
    (
        "pnpm",
        2,
        &[("run", 3 | WHOLE), ("exec", 3 | WHOLE), ("dlx", 3 | WHOLE)],
    ),
    ("pnpx", 2 | WHOLE, &[]),
    ("podman", 2, &[]),
    ("poetry", 2, &[("run", 3 | WHOLE)]),
    ("rake", 2 | WHOLE, &[]),
    ("rustup", 2, &[]),
    ("systemctl", 2, &[]),
    ("task", 2 | WHOLE, &[]),
    ("terraform", 2, &[]),
    ("uv", 2, &[("pip", 3), ("run", 3 | WHOLE)]),
    (
        "yarn",
        2,
        &[("run", 3 | WHOLE), ("workspace", 4), ("dlx", 3 | WHOLE)],
    ),
    ("yum", 2, &[]),
    ("zig", 2, &[]),
];

/// The arity of the command whose first words (name, then the subcommand
/// when there is one) are `words`.
fn arity_of(words: &[&str]) -> usize {
    arity_entry(words) & !WHOLE
}

/// The arity table's entry for `words`, with its [`WHOLE`] mark.
fn arity_entry(words: &[&str]) -> usize {
    let Some(first) = words.first() else {
        return 1;
    };
    let Ok(at) = ARITY.binary_search_by(|(name, _, _)| name.cmp(first)) else {
        return 1;
    };
    let (_, arity, subs) = ARITY[at];
    words
        .get(1)
        .and_then(|sub| subs.iter().find(|(s, _)| s == sub))
        .map_or(arity, |(_, n)| *n)
}

/// Whether program `name` runs code chosen by its arguments `rest`: a
/// shell, an interpreter, or a command or subcommand marked [`WHOLE`].
fn runs_chosen_code(name: &str, rest: &[&str]) -> bool {
    let base = name.trim_end_matches(|c: char| c.is_ascii_digit() || c == '.');
    let named = |n: &[&str]| n.contains(&name) || (!base.is_empty() && n.contains(&base));
    if named(SHELLS)
        || named(STDIN_RUNNERS)
        || INLINE_CODE.iter().any(|(n, _)| named(n))
        || CODE_OPTIONS.iter().any(|(n, _)| named(n))
    {
        return true;
    }
    // The subcommand: the first word that is not an option.
    let sub = rest
        .iter()
        .find(|a| !a.starts_with('-'))
        .copied()
        .unwrap_or("");
    arity_entry(&[name, sub]) & WHOLE != 0
}

/// What "always" saves for the simple command `resource` given as its words
/// `argv` (see the module's documentation): `None` when nothing may be
/// saved, the exact command, or the prefix pattern.
pub(crate) fn save_pattern(argv: &[&str], resource: &str, risk: Risk) -> Option<String> {
    let mut head = Vec::new();
    let (start, wrapped) = command_start(argv, &mut head);
    let Some(first) = argv.get(start) else {
        return Some(finish(head));
    };
    let name = super::command_name(first);
    let rest = &argv[start + 1..];
    if crate::shell::evaluates_code(name, rest).is_some() {
        return None;
    }
    if wrapped || runs_chosen_code(name, rest) {
        return exact(resource);
    }
    let used = prefix_len(argv).min(argv.len());
    if argv[used..]
        .iter()
        .any(|a| a.starts_with('-') && a.len() > 1)
    {
        return exact(resource);
    }
    // The operands raised it above what its prefix alone is (`sed 's/x/y/w
    // out'` writes, `sed` alone reads): the prefix would cover other operands
    // that raise it further (`sed '1e id'`), so only the exact command.
    if risk > Risk::Read
        && (super::read_spec::describes(name, rest)
            || super::classify_words(&argv[start..used]).risk < risk)
    {
        return exact(resource);
    }
    Some(prefix_of(argv))
}

/// `resource` as a pattern that matches only itself: `None` when it holds a
/// wildcard character (it cannot be saved exactly) or is too long to save.
pub(crate) fn exact(resource: &str) -> Option<String> {
    (!resource.is_empty() && !resource.contains(['*', '?']) && resource.len() <= MAX_PATTERN_BYTES)
        .then(|| resource.to_string())
}

/// Whether a bash request may be answered only by an approval of exactly
/// its command: its save pattern is the command itself (`save_pattern`
/// chose the exact command, so a prefix pattern saved for another command
/// must not cover it).
pub fn exact_only(resource: &str, save_pattern: Option<&str>) -> bool {
    save_pattern == Some(resource)
}

/// The save pattern for a command given as its words: wrappers and assignments
/// in front kept, then the command's prefix by its arity, then ` *`.
///
/// ```
/// use toolgate_policy::classify::arity_prefix;
/// let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
/// assert_eq!(arity_prefix(&argv("git push origin main")), "git push *");
/// assert_eq!(arity_prefix(&argv("npm run build -- --watch")), "npm run build *");
/// assert_eq!(arity_prefix(&argv("cargo test -p core")), "cargo test *");
/// assert_eq!(arity_prefix(&argv("ls -la src")), "ls *");
/// assert_eq!(arity_prefix(&argv("timeout 5 git status")), "timeout 5 git status *");
/// ```
pub fn arity_prefix<S: AsRef<str>>(argv: &[S]) -> String {
    let words: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    prefix_of(&words)
}

/// [`arity_prefix`] on borrowed words.
pub(crate) fn prefix_of(argv: &[&str]) -> String {
    let used = prefix_len(argv);
    finish(argv[..used.min(argv.len())].to_vec())
}

/// The `NAME=value` words and wrappers (with their options and leading
/// operands) in front of the command, pushed onto `out`: where the command
/// starts, and whether a wrapper was among them.
fn command_start<'a>(argv: &[&'a str], out: &mut Vec<&'a str>) -> (usize, bool) {
    let mut i = 0;
    let mut wrapped = false;
    // `NAME=value` words before the command.
    while i < argv.len() && is_assignment(argv[i]) {
        out.push(argv[i]);
        i += 1;
    }
    // Wrappers with their options and leading operands.
    while let Some(w) = argv
        .get(i)
        .and_then(|a| wrapper_for(super::command_name(a)))
    {
        wrapped = true;
        let name = super::command_name(argv[i]);
        out.push(argv[i]);
        i += 1;
        // Its options, read by its spec as the shell analyser reads them;
        // options the spec does not read make the analysis opaque (nothing
        // is saved), so here they are only kept as they stand.
        let options = read_spec::wrapper_spec(name)
            .and_then(|spec| read_spec::judge_wrapper(&spec, &argv[i..]).ok())
            .map_or_else(
                || argv[i..].iter().take_while(|a| a.starts_with('-')).count(),
                |o| o.command_at,
            );
        out.extend_from_slice(&argv[i..i + options]);
        i += options;
        let mut operands_left = w.leading_operands;
        while let Some(a) = argv.get(i) {
            if w.takes_assignments && is_assignment(a) {
                out.push(a);
                i += 1;
            } else if operands_left > 0 {
                out.push(a);
                operands_left -= 1;
                i += 1;
            } else {
                break;
            }
        }
    }
    (i, wrapped)
}

/// How many leading words of `argv` the prefix pattern keeps.
fn prefix_len(argv: &[&str]) -> usize {
    let mut out = Vec::new();
    let (mut i, _) = command_start(argv, &mut out);
    let Some(first) = argv.get(i) else {
        return i;
    };
    // The program's options that take a separate value, from its table row
    // or its spec.
    let name = super::command_name(first);
    let facts = read_spec::lookup(name).and_then(|s| super::facts_spec(&s));
    let value_opts: Vec<&str> = match lookup(name) {
        Some(row) => row.global_value_opts.to_vec(),
        None => facts
            .as_deref()
            .and_then(|s| s.sub_facts.as_ref())
            .map(|f| f.value_options.iter().map(String::as_str).collect())
            .unwrap_or_default(),
    };
    // The command's name, then its subcommand: all `arity_of` looks at.
    let mut words: [&str; 2] = [super::command_name(first), ""];
    let mut named = 1;
    i += 1;
    while named < arity_of(&words[..named.min(2)]) {
        let Some(a) = argv.get(i) else { break };
        i += 1;
        if *a == "--" {
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            if value_opts.contains(a) {
                if argv.get(i).is_some() {
                    i += 1;
                }
            }
            continue;
        }
        if named < 2 {
            words[named] = a;
        }
        named += 1;
    }
    i
}

fn finish(out: Vec<&str>) -> String {
    if out.is_empty() {
        return String::new();
    }
    let mut pattern = String::with_capacity(out.iter().map(|w| w.len() + 1).sum::<usize>() + 1);
    for w in out {
        pattern.push_str(w);
        pattern.push(' ');
    }
    pattern.push('*');
    pattern
}

/// `NAME=value` with a valid shell variable name.
pub(crate) fn is_assignment(word: &str) -> bool {
    match word.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && !name.starts_with(|c: char| c.is_ascii_digit())
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_arity_table_is_sorted_and_unique() {
        // `arity_of` looks commands up by binary search.
        assert!(ARITY.windows(2).all(|w| w[0].0 < w[1].0));
        assert_eq!(arity_of(&["yarn", "workspace"]), 4);
        assert_eq!(arity_of(&["git", "log"]), 2);
        assert_eq!(arity_of(&["ls"]), 1);
        assert_eq!(arity_of(&[]), 1);
    }

    fn p(s: &str) -> String {
        arity_prefix(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn prefixes() {
        assert_eq!(p("git -C sub push origin"), "git -C sub push *");
        assert_eq!(p("git status"), "git status *");
        assert_eq!(p("git"), "git *");
        assert_eq!(p("npm test"), "npm test *");
        assert_eq!(p("npm run"), "npm run *");
        assert_eq!(p("FOO=1 cargo test"), "FOO=1 cargo test *");
        assert_eq!(
            p("sudo -u root apt-get install x"),
            "sudo -u root apt-get install *"
        );
        assert_eq!(p("env A=1 make build"), "env A=1 make build *");
        assert_eq!(p("/usr/bin/git log -5"), "/usr/bin/git log *");
        assert_eq!(p(""), "");
    }

    #[test]
    fn a_wrapper_s_options_are_read_by_its_spec() {
        // Values separate or attached, as `specs/wrappers.toml` says.
        assert_eq!(
            p("timeout -s KILL 5 git status -s"),
            "timeout -s KILL 5 git status *"
        );
        assert_eq!(
            p("timeout --signal=KILL 5 ls -la"),
            "timeout --signal=KILL 5 ls *"
        );
        assert_eq!(p("nice -n5 ls -la"), "nice -n5 ls *");
        assert_eq!(
            p("env -u HOME -C sub A=1 ls x"),
            "env -u HOME -C sub A=1 ls *"
        );
        assert_eq!(p("xargs -n 1 -P4 grep x"), "xargs -n 1 -P4 grep *");
        assert_eq!(p("nohup -- ls x"), "nohup -- ls *");
        // An option its spec does not read is kept as it stands.
        assert_eq!(p("nice --frob ls x"), "nice --frob ls *");
    }

    fn save(s: &str, risk: Risk) -> Option<String> {
        let argv: Vec<&str> = s.split_whitespace().collect();
        save_pattern(&argv, s, risk)
    }

    #[test]
    fn what_always_saves() {
        use Risk::*;
        // The prefix: nothing but operands after it, nothing that runs code.
        assert_eq!(
            save("git push origin main", Network).as_deref(),
            Some("git push *")
        );
        assert_eq!(
            save("npm install lodash", Network).as_deref(),
            Some("npm install *")
        );
        // The exact command: code chosen by the arguments, a wrapper, options.
        for exact_command in [
            "python3 scripts/test_all.py",
            "make test",
            "gmake test",
            "npm run build",
            "cargo run --bin tool",
            "bash scripts/ci.sh",
            "env FOO=1 cargo build",
            "xargs grep foo",
            "npx prettier src",
            "cargo test -p core",
            "git push --force-with-lease origin main",
        ] {
            assert_eq!(save(exact_command, Execute).as_deref(), Some(exact_command));
        }
        // Nothing: it evaluates code; or the exact text would be a wildcard.
        for never in [
            "python3 -m http.server",
            "python3 -c print(1)",
            "node -e 1",
            "node -r ./x.js a.js",
            "make --eval=x: test",
            "make test -E x:",
            "perl -MLWP::Simple -e 1",
            "bash -c ls",
            "python3 x.py *.txt",
        ] {
            assert_eq!(save(never, Execute), None, "{never}");
        }
        assert!(exact_only("make test", Some("make test")));
        assert!(!exact_only("git push origin", Some("git push *")));
    }
}
