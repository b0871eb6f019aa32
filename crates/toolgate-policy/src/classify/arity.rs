//! Save patterns for bash approvals: the command prefix by an arity table.
//!
//! The arity of a command is how many leading words name what it does:
//! `git push` (2), `npm run build` (3), `ls` (1). An approval saves that prefix
//! plus ` *`, never anything broader. Wrappers and `NAME=value` words in front
//! are kept verbatim so that the pattern matches the command as written.

use super::table::{lookup, wrapper_for};

/// `(command words, arity)`; the longest matching prefix wins; default 1.
static ARITY: &[(&[&str], usize)] = &[
    (&["git"], 2),
    (&["git", "stash"], 3),
    (&["git", "remote"], 3),
    (&["git", "submodule"], 3),
    (&["git", "worktree"], 3),
    (&["git", "bisect"], 3),
    (&["git", "config"], 3),
    (&["npm"], 2),
    (&["npm", "run"], 3),
    (&["npm", "run-script"], 3),
    (&["npm", "exec"], 3),
    (&["pnpm"], 2),
    (&["pnpm", "run"], 3),
    (&["pnpm", "exec"], 3),
    (&["pnpm", "dlx"], 3),
    (&["yarn"], 2),
    (&["yarn", "run"], 3),
    (&["yarn", "workspace"], 4),
    (&["bun"], 2),
    (&["bun", "run"], 3),
    (&["npx"], 2),
    (&["pnpx"], 2),
    (&["bunx"], 2),
    (&["cargo"], 2),
    (&["rustup"], 2),
    (&["go"], 2),
    (&["go", "mod"], 3),
    (&["pip"], 2),
    (&["pip3"], 2),
    (&["uv"], 2),
    (&["uv", "pip"], 3),
    (&["uv", "run"], 3),
    (&["poetry"], 2),
    (&["poetry", "run"], 3),
    (&["pdm"], 2),
    (&["hatch"], 2),
    (&["docker"], 2),
    (&["docker", "compose"], 3),
    (&["docker", "container"], 3),
    (&["docker", "image"], 3),
    (&["podman"], 2),
    (&["kubectl"], 2),
    (&["helm"], 2),
    (&["gh"], 3),
    (&["aws"], 3),
    (&["gcloud"], 3),
    (&["az"], 3),
    (&["make"], 2),
    (&["just"], 2),
    (&["task"], 2),
    (&["rake"], 2),
    (&["bundle"], 2),
    (&["bundle", "exec"], 3),
    (&["brew"], 2),
    (&["apt"], 2),
    (&["apt-get"], 2),
    (&["dnf"], 2),
    (&["yum"], 2),
    (&["systemctl"], 2),
    (&["terraform"], 2),
    (&["dotnet"], 2),
    (&["mvn"], 2),
    (&["gradle"], 2),
    (&["deno"], 2),
    (&["composer"], 2),
    (&["conda"], 2),
    (&["mix"], 2),
    (&["zig"], 2),
];

fn arity_of(words: &[&str]) -> usize {
    ARITY
        .iter()
        .filter(|(prefix, _)| words.starts_with(prefix))
        .max_by_key(|(prefix, _)| prefix.len())
        .map_or(1, |(_, n)| *n)
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
fn prefix_of(argv: &[&str]) -> String {
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
    let mut words: Vec<&str> = vec![super::command_name(first)];
    out.push(first);
    i += 1;
    while words.len() < arity_of(&words) {
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
        words.push(a);
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
