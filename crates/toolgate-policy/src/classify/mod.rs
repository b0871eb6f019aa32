//! Risk classification: what one command (already split by the shell analyser
//! and unwrapped from `env`/`sudo`/…) would do, and which paths hold secrets.
//!
//! Driven by data: a program's read spec (`specs/*.toml`) proves what only
//! reads and says what its operands are, which options raise it and which
//! named check reads it further; the command table (`table.rs`) holds the
//! programs without a spec: each one's base risk, the flags that raise it,
//! its subcommands and a few named checks. Unknown commands are `execute`.
//!
//! ```
//! use toolgate_core::Risk;
//! use toolgate_policy::classify::{arity_prefix, classify};
//! let argv = |s: &str| s.split(' ').map(String::from).collect::<Vec<_>>();
//! assert_eq!(classify(&argv("git status")).risk, Risk::Read);
//! assert_eq!(classify(&argv("git push --force origin main")).risk, Risk::Destructive);
//! assert_eq!(classify(&argv("find . -name x -delete")).risk, Risk::Destructive);
//! assert_eq!(classify(&argv("my-tool --flag")).risk, Risk::Execute);
//! assert_eq!(arity_prefix(&argv("npm run build --watch")), "npm run build *");
//! ```

mod about;
mod arity;
mod credential_paths;
mod programs;
pub(crate) mod read_spec;
#[cfg(test)]
mod spec_index;
mod spec_text;
mod special;
pub(crate) mod table;

pub(crate) use about::LOOKS_AT_ENTRIES;
pub use arity::{arity_prefix, exact_only};
pub(crate) use arity::{exact, is_assignment, save_pattern};
pub(crate) use credential_paths::glob_match;
pub use credential_paths::{
    FileLinks, LinkLookup, credential_of, credential_of_with, path_risk, path_risk_in,
};
pub use read_spec::{FileArg, TrackedRead};
pub(crate) use special::sql_destroys;

use toolgate_core::Risk;

use table::{Cmd, Flag, FlagMatch};

/// How much of the tree below its directory operands a command reads.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord)]
pub enum Walk {
    /// Only the files it names.
    #[default]
    None,
    /// Every file below the directories it names, hidden ones included, and
    /// what the links there lead to, but nothing when it names none (`diff
    /// DIR1 DIR2` compares the files both hold, `diff FILE DIR` reads
    /// DIR/FILE; `diff - FILE` reads no directory).
    Operands,
    /// Every file whose name, and whose directories' names, do not start
    /// with a dot: what ripgrep and ag search by default.
    Unhidden,
    /// Every file, hidden ones included.
    All,
    /// Every file, hidden ones included, and what the links below lead to
    /// (`grep -R`, `rg -L`).
    AllFollow,
}

/// What classifying one command found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Verdict {
    /// The command's risk class.
    pub risk: Risk,
    /// Why, in words a person reads.
    pub reason: String,
    /// Whether the command's operands are file paths (to be checked for secrets
    /// and for leaving the location).
    pub paths: bool,
    /// Commands this one runs with its own arguments (`find -exec CMD ;`,
    /// `fd -x CMD`); the shell analyser classifies them too.
    pub embedded: Vec<Vec<String>>,
    /// How much of the tree below its directory operands (or the working
    /// directory) it reads: `grep -r` and `rg --hidden` every file, `rg`
    /// every file that is not hidden.
    pub walks: Walk,
    /// Shell code it runs (`git rebase -x CODE`, `git submodule foreach CODE`);
    /// the shell analyser parses it.
    pub code: Vec<String>,
    /// The files it reads and writes, when a read spec proved every word of
    /// it (`None`: the operands are only guessed from `paths`).
    pub files: Option<Vec<FileArg>>,
    /// A directory it moves to before acting (`git -C DIR`), from its spec.
    pub chdir: Option<FileArg>,
    /// Where its subcommand's name is among the arguments, from its spec.
    pub sub_at: Option<usize>,
    /// It prints the content of the files a repository tracks (`git grep`,
    /// `git log -p`), from its spec: the shell analyser judges those.
    pub tracked: Option<TrackedRead>,
}

impl Verdict {
    fn new(risk: Risk, reason: impl Into<String>, paths: bool) -> Self {
        Verdict {
            risk,
            reason: reason.into(),
            paths,
            embedded: Vec::new(),
            walks: Walk::None,
            code: Vec::new(),
            files: None,
            chdir: None,
            sub_at: None,
            tracked: None,
        }
    }

    /// Raises the risk to `risk` (keeping the reason of the higher one).
    pub(crate) fn raise(&mut self, risk: Risk, reason: impl Into<String>) {
        if risk > self.risk {
            self.risk = risk;
            self.reason = reason.into();
        }
    }
}

/// The command name used for lookups: the last path component (`/bin/rm` → `rm`).
pub fn command_name(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

/// Classifies one simple command given as its words (`argv[0]` is the command).
///
/// A command is `read` only when its read spec proves every word harmless
/// (see `read_spec`); otherwise it is at least `execute`, raised further by what
/// the command table knows of it (a destructive flag, the network).
/// Wrappers, shells and interpreters are the shell analyser's business; here
/// they are plain executors. An empty `argv` is `read` (it runs nothing).
pub fn classify<S: AsRef<str>>(argv: &[S]) -> Verdict {
    let words: Vec<&str> = argv.iter().map(AsRef::as_ref).collect();
    classify_words(&words)
}

/// [`classify`] on borrowed words.
pub(crate) fn classify_words(argv: &[&str]) -> Verdict {
    let Some(first) = argv.first() else {
        return Verdict::new(Risk::Read, "no command", false);
    };
    if let Some(v) = about::about_program(argv).or_else(|| about::printenv_harmless(argv)) {
        return v;
    }
    let name = command_name(first);
    let table = table::lookup(name).map(|row| by_table(row, name, &argv[1..]));
    let spec = read_spec::lookup(name);
    // What the program's spec says of its operands, of the options that
    // raise it and of its check holds by its path too.
    let paths = spec
        .as_deref()
        .is_none_or(read_spec::Spec::operands_are_paths);
    let table = table.or_else(|| {
        let facts = facts_spec(spec.as_ref()?)?;
        by_spec(&facts, name, &argv[1..], paths)
    });
    let judged = if first.contains('/') {
        read_spec::Judged::Unproven(format!(
            "`{first}` is run by its path, not found by name as the known `{name}`"
        ))
    } else {
        // A spec that only holds another program's facts proves nothing.
        match spec.as_ref().filter(|s| s.facts_of.is_none()) {
            Some(s) => read_spec::judge(s, &argv[1..]),
            None => {
                read_spec::Judged::Unproven(format!("`{name}` is not a program known to only read"))
            }
        }
    };
    match judged {
        read_spec::Judged::Proven {
            risk,
            reason,
            files,
            walks,
            chdir,
            sub_at,
            tracked,
        } => {
            // The table's deny-list stays a second wall: it raises what it
            // names as dangerous (the network, secrets, destruction); its
            // coarse "write"/"execute" for a subcommand the spec proved is
            // ignorance, not a finding.
            let mut verdict = table.unwrap_or_else(|| Verdict::new(Risk::Read, "", paths));
            if verdict.risk < Risk::Network || risk > verdict.risk {
                verdict.risk = risk;
                verdict.reason = reason;
            }
            verdict.walks = verdict.walks.max(walks);
            verdict.files = Some(files);
            verdict.chdir = chdir;
            verdict.sub_at = sub_at;
            verdict.tracked = tracked;
            verdict
        }
        read_spec::Judged::Unproven(why) => {
            let mut verdict = table.unwrap_or_else(|| Verdict::new(Risk::Execute, "", paths));
            if verdict.risk < Risk::Execute || verdict.reason.is_empty() {
                verdict.risk = verdict.risk.max(Risk::Execute);
                verdict.reason = why;
            }
            verdict
        }
    }
}

/// What a program's spec knows beyond proving reads, over every command line
/// of it: the options that raise it, its subcommands' risks and its named
/// check (`None` when it names none of them). The caller merges it as it
/// merges a table row's.
fn by_spec(spec: &read_spec::Spec, name: &str, args: &[&str], paths: bool) -> Option<Verdict> {
    let base = spec.base_risk;
    if spec.check.is_none()
        && spec.flags.is_empty()
        && spec.sub_facts.is_none()
        && base == Risk::Read
    {
        return None;
    }
    let (mut verdict, own) = match &spec.sub_facts {
        None => (
            Verdict::new(base, format!("`{name}` is {base}"), paths),
            args,
        ),
        Some(facts) => {
            let value_options: Vec<&str> = facts.value_options.iter().map(String::as_str).collect();
            // A long option that takes a value may be abbreviated (pip's
            // optparse, npm's nopt: `--lo FILE` for `--log FILE`), and
            // whether the word after it is its value or the subcommand then
            // depends on the program: both readings are judged, the
            // stricter holds.
            let exact = subcommand_index(args, &value_options, false);
            let abbreviated = subcommand_index(args, &value_options, true);
            let mut readings = vec![exact];
            if abbreviated != exact {
                readings.push(abbreviated);
            }
            // The program's own options: every word before either reading's
            // subcommand.
            let own_end = readings
                .iter()
                .map(|at| at.unwrap_or(args.len()))
                .max()
                .unwrap_or(args.len());
            let mut judged: Option<Verdict> = None;
            for sub_at in readings {
                let verdict = sub_verdict(facts, name, args, sub_at, base, paths);
                if judged.as_ref().is_none_or(|best| verdict.risk > best.risk) {
                    judged = Some(verdict);
                }
            }
            let verdict = judged?;
            (verdict, &args[..own_end])
        }
    };
    raise_by_flags(&mut verdict, &spec.flags, own);
    if let Some(check) = spec.check {
        special::run(check, name, args, &mut verdict);
    }
    Some(verdict)
}

/// What subcommand facts say of `args` when the subcommand is the word at
/// `sub_at` (`None`: there is none).
fn sub_verdict(
    facts: &read_spec::SubFacts,
    name: &str,
    args: &[&str],
    sub_at: Option<usize>,
    base: Risk,
    paths: bool,
) -> Verdict {
    match sub_at {
        None => Verdict::new(
            base,
            format!("`{name}` without a subcommand is {base}"),
            paths,
        ),
        Some(i) => {
            let sub_name = args[i];
            match facts.sub(sub_name) {
                Some(Err(e)) => {
                    // A built-in fact that does not read proves nothing: the
                    // strictest risk, never allowed. A test keeps this from
                    // shipping.
                    tracing::error!("the facts of `{name} {sub_name}` do not load: {e}");
                    Verdict::new(
                        Risk::Destructive,
                        format!("the facts of `{name} {sub_name}` do not load: {e}"),
                        paths,
                    )
                }
                Some(Ok((risk, flags, check))) => {
                    let rest = &args[i + 1..];
                    let mut v = Verdict::new(risk, format!("`{name} {sub_name}` is {risk}"), paths);
                    raise_by_flags(&mut v, flags, rest);
                    if let Some(check) = check {
                        special::run(check, sub_name, rest, &mut v);
                    }
                    v
                }
                None => Verdict::new(
                    facts.unknown,
                    format!(
                        "`{name} {sub_name}` is not a known subcommand (an alias or plugin may run anything)"
                    ),
                    paths,
                ),
            }
        }
    }
}

/// The spec that holds `spec`'s facts: its own, or the one its `facts_of`
/// names (`None` when that one is missing: a test keeps it there).
pub(crate) fn facts_spec(
    spec: &std::sync::Arc<read_spec::Spec>,
) -> Option<std::sync::Arc<read_spec::Spec>> {
    match &spec.facts_of {
        None => Some(spec.clone()),
        Some(other) => read_spec::lookup(other),
    }
}

/// Raises `verdict` for each option word of `args` (up to `--`) that one of
/// a spec's `flags` matches.
fn raise_by_flags(verdict: &mut Verdict, flags: &[read_spec::SpecFlag], args: &[&str]) {
    for arg in options(args) {
        for f in flags {
            if flag_matches(f.at(), arg) {
                verdict.raise(f.risk, f.why.as_str());
            }
        }
    }
}

/// The command table's classification (known-dangerous flags, subcommands).
fn by_table(row: &Cmd, name: &str, args: &[&str]) -> Verdict {
    if row.subs.is_empty() {
        let mut verdict = Verdict::new(row.risk, format!("`{name}` is {}", row.risk), row.paths);
        apply_flags(&mut verdict, row.flags, args);
        if let Some(check) = row.check {
            special::run(check, name, args, &mut verdict);
        }
        return verdict;
    }
    classify_with_subcommand(row, name, args)
}

fn classify_with_subcommand(row: &Cmd, name: &str, args: &[&str]) -> Verdict {
    let sub_at = subcommand_index(args, row.global_value_opts, false);
    let before = &args[..sub_at.unwrap_or(args.len())];
    let mut verdict = match sub_at {
        None => Verdict::new(
            row.risk,
            format!("`{name}` without a subcommand is {}", row.risk),
            row.paths,
        ),
        Some(i) => {
            let sub_name = args[i];
            let rest = &args[i + 1..];
            match row.subs.iter().find(|s| s.names.contains(&sub_name)) {
                Some(sub) => {
                    let mut v = Verdict::new(
                        sub.risk,
                        format!("`{name} {sub_name}` is {}", sub.risk),
                        row.paths,
                    );
                    apply_flags(&mut v, sub.flags, rest);
                    if let Some(check) = sub.check {
                        special::run(check, sub_name, rest, &mut v);
                    }
                    v
                }
                None => Verdict::new(
                    row.unknown_sub,
                    format!(
                        "`{name} {sub_name}` is not a known subcommand (an alias or plugin may run anything)"
                    ),
                    row.paths,
                ),
            }
        }
    };
    apply_flags(&mut verdict, row.flags, before);
    if let Some(check) = row.check {
        special::run(check, name, args, &mut verdict);
    }
    verdict
}

/// The index of the first operand, skipping options and the values of
/// `value_opts` (and, with `abbreviations`, of a long option word that
/// abbreviates one of them: `--pref` for `--prefix`).
fn subcommand_index(args: &[&str], value_opts: &[&str], abbreviations: bool) -> Option<usize> {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if a == "--" {
            return (i + 1 < args.len()).then_some(i + 1);
        }
        if a.starts_with('-') && a.len() > 1 {
            let abbreviates = |v: &&str| {
                a.len() >= 3 && a.starts_with("--") && !a.contains('=') && v.starts_with(a)
            };
            if value_opts.contains(&a) || (abbreviations && value_opts.iter().any(abbreviates)) {
                i += 1;
            }
            i += 1;
            continue;
        }
        if a.starts_with('+') && i == 0 {
            // `cargo +nightly build`: a toolchain, not a subcommand.
            i += 1;
            continue;
        }
        return Some(i);
    }
    None
}

/// Raises `verdict` for each flag in `args` (up to `--`) that `flags` lists.
fn apply_flags(verdict: &mut Verdict, flags: &[Flag], args: &[&str]) {
    for arg in options(args) {
        for f in flags {
            if flag_matches(f.at, arg) {
                verdict.raise(f.risk, f.why);
            }
        }
    }
}

/// The option words of `args`: everything starting with `-` before `--`.
pub(crate) fn options<'a>(args: &[&'a str]) -> impl Iterator<Item = &'a str> {
    args.iter()
        .copied()
        .take_while(|a| *a != "--")
        .filter(|a| a.starts_with('-') && a.len() > 1)
}

/// The operands of `args`: words not starting with `-`, and everything after `--`.
pub(crate) fn operands<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut after_dashes = false;
    for &a in args {
        if after_dashes {
            out.push(a);
        } else if a == "--" {
            after_dashes = true;
        } else if !(a.starts_with('-') && a.len() > 1) {
            out.push(a);
        }
    }
    out
}

/// Whether the option word `arg` is the flag `at` (long options may be
/// abbreviated, as getopt_long and git accept).
pub(crate) fn flag_matches(at: FlagMatch<'_>, arg: &str) -> bool {
    match at {
        FlagMatch::Exact(flag) => {
            let name = arg.split('=').next().unwrap_or(arg);
            name == flag || long_abbreviation(name, flag)
        }
        FlagMatch::Prefix(prefix) => {
            arg.starts_with(prefix)
                || long_abbreviation(arg.split('=').next().unwrap_or(arg), prefix)
        }
        FlagMatch::Short(letter) => {
            arg.starts_with('-')
                && !arg.starts_with("--")
                && arg.len() >= 2
                && arg[1..]
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .any(|c| c == letter)
        }
    }
}

/// `--forc` (even `--f`) for `--force`: getopt_long and git accept any
/// unambiguous prefix, so every prefix counts (stricter when ambiguous).
fn long_abbreviation(name: &str, flag: &str) -> bool {
    flag.starts_with("--") && name.starts_with("--") && name.len() >= 3 && flag.starts_with(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(cmd: &str) -> Risk {
        let argv: Vec<String> = cmd.split_whitespace().map(String::from).collect();
        classify(&argv).risk
    }

    #[test]
    fn table_rows() {
        use Risk::*;
        for (cmd, want) in [
            ("ls -la", Read),
            ("rm a", Write),
            ("rm -rf a", Destructive),
            ("rm -r a", Destructive),
            ("rm --recur a", Destructive),
            ("rm -- -rf", Write),
            ("git status", Read),
            ("git -C sub status", Read),
            ("git -c core.pager=sh status", Execute),
            ("git push origin main", Network),
            ("git push origin +main", Destructive),
            ("git push origin :main", Destructive),
            ("git push --forc origin", Destructive),
            ("git push -uf origin", Destructive),
            ("git reset --hard", Destructive),
            ("git reset HEAD~1", Write),
            ("git clean -fdx", Destructive),
            ("git clean -n", Write),
            ("git checkout -- .", Destructive),
            ("git checkout main", Write),
            ("git restore .", Destructive),
            ("git restore --staged a", Write),
            ("git frobnicate", Execute),
            ("git diff --output=x", Write),
            ("git stash drop", Destructive),
            ("git stash list", Read),
            ("git branch", Read),
            ("git branch -D x", Destructive),
            ("git branch new", Write),
            ("git config user.name", Read),
            ("git config core.pager less", Execute),
            ("find . -name x", Read),
            ("find . -delete", Destructive),
            ("find . -fprint out", Write),
            ("find . -exec ls {} ;", Execute),
            ("sed s/a/b/ f", Read),
            ("sed -i s/a/b/ f", Write),
            ("sed s/a/b/e f", Execute),
            ("sed 1e f", Execute),
            ("sed w/out f", Write),
            ("awk {print} f", Read),
            ("awk BEGIN{system(\"id\")}", Execute),
            ("sort -o out in", Write),
            ("sort --compress-program=sh in", Execute),
            ("rg --pre=sh x", Execute),
            ("tar -tf a.tar", Read),
            ("tar -xf a.tar", Write),
            ("tar xf a.tar", Write),
            ("tar -xf a.tar --to-command=sh", Execute),
            ("curl https://x", Network),
            ("npm run build", Execute),
            ("npm install", Network),
            ("cargo test", Execute),
            // rustup runs the toolchain a repository's `rust-toolchain.toml` names.
            ("cargo --version", Execute),
            ("cargo +nightly build", Execute),
            ("printenv", Credential),
            ("set", Credential),
            ("set -euo pipefail", Read),
            ("export -p", Credential),
            ("dd if=a of=b", Destructive),
            ("mkfs.ext4 /dev/sda", Destructive),
            ("chmod -R 777 .", Destructive),
            ("chmod +x a", Write),
            ("psql -c DROP TABLE x", Destructive),
            ("sqlite3 db select", Write),
            ("python3.12 x.py", Execute),
            ("python3.12 --version", Read),
            ("python3.12 -c 1", Execute),
            ("python3.12. --version", Execute),
            ("crontab -r", Destructive),
            ("uniq a b", Write),
            ("date -s now", Write),
            ("frob", Execute),
        ] {
            // Read must be proven exactly; anything else is never weaker than
            // what the table knows (an unproven write is `execute`).
            if want == Read {
                assert_eq!(risk(cmd), want, "{cmd}");
            } else {
                assert!(risk(cmd) >= want, "{cmd}: {} < {want}", risk(cmd));
            }
        }
    }

    #[test]
    fn every_command_has_one_row() {
        let mut seen = std::collections::HashMap::new();
        let mut dups = Vec::new();
        for (i, row) in table::COMMANDS.iter().enumerate() {
            for name in row.names {
                if let Some(first) = seen.insert(*name, i) {
                    dups.push(format!("`{name}` in rows {first} and {i}"));
                }
            }
        }
        assert!(dups.is_empty(), "{}", dups.join("; "));
    }

    #[test]
    fn a_program_with_a_spec_has_no_table_row() {
        let specs = read_spec::all();
        let both: Vec<&str> = table::COMMANDS
            .iter()
            .flat_map(|row| row.names.iter().copied())
            .filter(|name| specs.contains_key(*name))
            .collect();
        assert!(
            both.is_empty(),
            "described by a spec and by a table row: {}",
            both.join(", ")
        );
    }

    #[test]
    fn a_spec_s_flags_and_check_hold_when_it_does_not_prove_the_command() {
        let verdict = |cmd: &str| {
            let argv: Vec<String> = cmd.split_whitespace().map(String::from).collect();
            classify(&argv)
        };
        let rm = verdict("rm --frob -rf a");
        assert_eq!(rm.risk, Risk::Destructive, "{}", rm.reason);
        assert_eq!(rm.reason, "rm -r removes whole trees");
        let sed = verdict("sed --frob -f x data.txt");
        assert_eq!(sed.risk, Risk::Execute);
        assert_eq!(sed.reason, "sed -f runs a script the analyser cannot see");
        let find = verdict("find . --frob -exec rm -rf {} ;");
        assert_eq!(find.embedded, vec![vec!["rm", "-rf", "{}"]]);
        let grep = verdict("grep --frob -d recurse x .");
        assert_eq!(grep.walks, Walk::All);
        assert_eq!(verdict("ps --frob e").risk, Risk::Credential);
        assert_eq!(verdict("gsed --frob -i s/a/b/ f").risk, Risk::Execute);
        // Proven, the spec's flags still raise past what it proves.
        assert_eq!(verdict("rm -r a").risk, Risk::Destructive);
        assert_eq!(verdict("set").risk, Risk::Credential);
    }

    #[test]
    fn a_spec_says_what_each_subcommand_is_when_it_does_not_prove_it() {
        use Risk::*;
        let verdict = |cmd: &str| classify(&cmd.split_whitespace().collect::<Vec<_>>());
        for (cmd, risk) in [
            ("go build ./...", Execute),
            ("go get example.invalid/x", Network),
            // Below `execute`, a subcommand its spec does not prove is
            // `execute` all the same.
            ("go fmt ./...", Execute),
            ("go list -m -u all", Network),
            ("go list -export ./...", Execute),
            ("go frobnicate", Execute),
            ("go version", Read),
        ] {
            assert_eq!(verdict(cmd).risk, risk, "{cmd}: {}", verdict(cmd).reason);
        }
        assert_eq!(
            verdict("go list -m -u all").reason,
            "`go list -u` asks the module proxy for updates"
        );
    }

    #[test]
    fn git_attr_source_s_value_hides_no_destructive_subcommand() {
        // `--attr-source` takes a value (git's spec says so), so `diff` is
        // that value and `clean -fdx` the subcommand git runs.
        let verdict = |cmd: &str| classify(&cmd.split_whitespace().collect::<Vec<_>>());
        for cmd in [
            "git -C . --attr-source diff clean -fdx",
            "git --attr-source status push --force origin",
            "git --list-cmds log reset --hard",
            "git --super-prefix x push --force",
        ] {
            assert_eq!(verdict(cmd).risk, Risk::Destructive, "{cmd}");
        }
    }

    #[test]
    fn pip_option_values_hide_no_network_subcommand() {
        // `--log` and `--cache-dir` take a value (pip's spec says so): `list`
        // and `show` are values, `install` the subcommand pip runs.
        let verdict = |cmd: &str| classify(&cmd.split_whitespace().collect::<Vec<_>>());
        for cmd in [
            "pip --log list install evil",
            "pip3 --cache-dir show install evil",
            "pipx --log list install evil",
        ] {
            assert_eq!(verdict(cmd).risk, Risk::Network, "{cmd}");
        }
    }

    #[test]
    fn a_program_with_another_s_facts_has_them_and_proves_nothing() {
        use Risk::*;
        let verdict = |cmd: &str| classify(&cmd.split_whitespace().collect::<Vec<_>>());
        for (cmd, risk) in [
            ("pnpm install", Network),
            ("pnpm ls", Execute),
            ("pnpm -C x run build", Execute),
            ("podman rm -f x", Destructive),
            ("podman -H tcp://h ps", Network),
            ("podman ps", Execute),
            ("pipx install x", Network),
            ("pipx list", Execute),
        ] {
            assert_eq!(verdict(cmd).risk, risk, "{cmd}: {}", verdict(cmd).reason);
        }
        assert_eq!(
            verdict("pnpm ls").reason,
            "`pnpm` is not a program known to only read"
        );
    }

    #[test]
    fn an_interpreter_s_spec_says_it_runs_what_it_is_given() {
        let verdict = |cmd: &str| classify(&cmd.split_whitespace().collect::<Vec<_>>());
        for (cmd, reason) in [
            ("python3 x.py", "`python3` is execute"),
            ("python -c 1", "`python` is execute"),
            ("node x.js", "`node` is execute"),
        ] {
            let v = verdict(cmd);
            assert_eq!(
                (v.risk, v.reason.as_str()),
                (Risk::Execute, reason),
                "{cmd}"
            );
            assert!(v.paths, "{cmd}");
        }
        assert_eq!(verdict("python3 --version").risk, Risk::Read);
    }

    #[test]
    fn a_spec_says_whether_operands_are_paths() {
        let paths = |cmd: &str| classify(&cmd.split_whitespace().collect::<Vec<_>>()).paths;
        // Operands that are text, proven or not.
        assert!(!paths("echo a"));
        assert!(!paths("whoami --frob x"));
        assert!(!paths("date --frob +%F"));
        // Files, and `test`'s paths (read by no one, named all the same).
        assert!(paths("cat a"));
        assert!(paths("df --frob ."));
        assert!(paths("test -f a"));
        assert!(paths("git --frob status"));
    }

    #[test]
    fn embedded_commands() {
        let argv: Vec<String> = "find . -exec rm -rf {} +"
            .split(' ')
            .map(String::from)
            .collect();
        let v = classify(&argv);
        assert_eq!(v.embedded, vec![vec!["rm", "-rf", "{}"]]);
    }
}
