//! Save patterns for bash approvals: the command prefix by an arity table.
//!
//! The arity of a command is how many leading words name what it does:
//! `git push` (2), `npm run build` (3), `ls` (1). An approval saves that prefix
//! plus ` *`, never anything broader. Wrappers and `NAME=value` words in front
//! are kept verbatim so that the pattern matches the command as written.

use super::table::{lookup, wrapper_for};

/// Subcommands whose arity differs from their command's.
type Subcommands = &'static [(&'static str, usize)];

/// `(command, arity, [(subcommand, arity)])`, sorted by command: how many
/// leading words name what a command does. A command not listed has arity 1;
/// a subcommand listed overrides its command's arity.
static ARITY: &[(&str, usize, Subcommands)] = &[
    ("apt", 2, &[]),
    ("apt-get", 2, &[]),
    ("aws", 3, &[]),
    ("az", 3, &[]),
    ("brew", 2, &[]),
    ("bun", 2, &[("run", 3)]),
    ("bundle", 2, &[("exec", 3)]),
    ("bunx", 2, &[]),
    ("cargo", 2, &[]),
    ("composer", 2, &[]),
    ("conda", 2, &[]),
    ("deno", 2, &[]),
    ("dnf", 2, &[]),
    (
        "docker",
        2,
        &[("compose", 3), ("container", 3), ("image", 3)],
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
    ("go", 2, &[("mod", 3)]),
    ("gradle", 2, &[]),
    ("hatch", 2, &[]),
    ("helm", 2, &[]),
    ("just", 2, &[]),
    ("kubectl", 2, &[]),
    ("make", 2, &[]),
    ("mix", 2, &[]),
    ("mvn", 2, &[]),
    ("npm", 2, &[("run", 3), ("run-script", 3), ("exec", 3)]),
    ("npx", 2, &[]),
    ("pdm", 2, &[]),
    ("pip", 2, &[]),
    ("pip3", 2, &[]),
    ("pnpm", 2, &[("run", 3), ("exec", 3), ("dlx", 3)]),
    ("pnpx", 2, &[]),
    ("podman", 2, &[]),
    ("poetry", 2, &[("run", 3)]),
    ("rake", 2, &[]),
    ("rustup", 2, &[]),
    ("systemctl", 2, &[]),
    ("task", 2, &[]),
    ("terraform", 2, &[]),
    ("uv", 2, &[("pip", 3), ("run", 3)]),
    ("yarn", 2, &[("run", 3), ("workspace", 4)]),
    ("yum", 2, &[]),
    ("zig", 2, &[]),
];

/// The arity of the command whose first words (name, then the subcommand
/// when there is one) are `words`.
fn arity_of(words: &[&str]) -> usize {
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
    let mut out: Vec<&str> = Vec::new();
    let mut i = 0;
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
        out.push(argv[i]);
        i += 1;
        let mut operands_left = w.leading_operands;
        while let Some(a) = argv.get(i) {
            if a.starts_with('-') && a.len() > 1 {
                out.push(a);
                i += 1;
                if w.value_opts.contains(a) {
                    if let Some(v) = argv.get(i) {
                        out.push(v);
                        i += 1;
                    }
                }
            } else if w.takes_assignments && is_assignment(a) {
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
    let Some(first) = argv.get(i) else {
        return finish(out);
    };
    let value_opts = lookup(super::command_name(first))
        .map(|row| row.global_value_opts)
        .unwrap_or(&[]);
    // The command's name, then its subcommand: all `arity_of` looks at.
    let mut words: [&str; 2] = [super::command_name(first), ""];
    let mut named = 1;
    out.push(first);
    i += 1;
    while named < arity_of(&words[..named.min(2)]) {
        let Some(a) = argv.get(i) else { break };
        out.push(a);
        i += 1;
        if *a == "--" {
            break;
        }
        if a.starts_with('-') && a.len() > 1 {
            if value_opts.contains(a) {
                if let Some(v) = argv.get(i) {
                    out.push(v);
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
    finish(out)
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
}
