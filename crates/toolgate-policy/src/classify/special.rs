//! The named checks of the command table: what a flag list cannot express.

use toolgate_core::Risk;

use super::table::Check;
use super::{Verdict, Walk, flag_matches, operands, options};
use crate::classify::table::FlagMatch::{Exact, Short};

/// Runs `check` over `args` (the words after the command or subcommand).
pub(crate) fn run(check: Check, name: &str, args: &[&str], v: &mut Verdict) {
    match check {
        Check::FindActions => find_actions(args, v),
        Check::FdExec => fd_exec(args, v),
        Check::SedScript => sed_script(args, v),
        Check::AwkProgram => awk_program(args, v),
        Check::Sql => sql(name, args, v),
        Check::GitPushRefspec => git_push_refspec(args, v),
        Check::GitCheckoutDiscard => git_checkout(args, v),
        Check::GitRestore => git_restore(args, v),
        Check::GitStash => git_stash(args, v),
        Check::GitBranch => git_branch(args, v),
        Check::GitConfig => git_config(args, v),
        Check::GitRemote => git_remote(args, v),
        Check::GitRunsCode => git_runs_code(name, args, v),
        Check::TarMode => tar_mode(args, v),
        Check::RecursiveRead => recursive_read(name, args, v),
        Check::GitReflog => {
            if matches!(operands(args).first(), Some(&("expire" | "delete"))) {
                v.raise(
                    Risk::Destructive,
                    "`git reflog expire/delete` drops the history that undoes mistakes",
                );
            }
        }
        Check::PsEnv => {
            // BSD-style words (no dash) holding `e` print each environment.
            if operands(args).iter().any(|w| w.contains('e')) {
                v.raise(
                    Risk::Credential,
                    "`ps e` prints every process's environment, secrets included",
                );
            }
        }
        Check::UniqOutput => {
            if operands(args).len() >= 2 {
                v.raise(Risk::Write, format!("{name} IN OUT writes OUT"));
            }
        }
        Check::SetBare => {
            if args.is_empty() {
                v.raise(
                    Risk::Credential,
                    "`set` with no arguments prints every variable, secrets included",
                );
            }
        }
        Check::ExportPrint => {
            if args
                .iter()
                .all(|a| matches!(*a, "-p" | "-x" | "-px" | "-xp"))
            {
                v.raise(
                    Risk::Credential,
                    format!("`{name}` without names prints the environment, secrets included"),
                );
            }
        }
        Check::SetsSystem => {
            let sets_date = name == "date"
                && options(args)
                    .any(|o| flag_matches(Short('s'), o) || flag_matches(Exact("--set"), o));
            let sets_host = name == "hostname" && !operands(args).is_empty();
            if sets_date || sets_host {
                v.raise(
                    Risk::Write,
                    format!("`{name}` with these arguments changes the system"),
                );
            }
        }
        Check::Crontab => {
            if options(args).any(|o| flag_matches(Short('r'), o)) {
                v.raise(Risk::Destructive, "crontab -r removes every scheduled job");
            } else if options(args).any(|o| o == "-l") {
                v.risk = Risk::Read;
                v.reason = "crontab -l lists jobs".into();
            }
        }
    }
}

/// The words after `flag` up to a `;` or `+` terminator.
fn command_after(args: &[&str], start: usize) -> (Vec<String>, usize) {
    let mut end = start;
    while end < args.len() && args[end] != ";" && args[end] != "+" && args[end] != "\\;" {
        end += 1;
    }
    (
        args[start..end].iter().map(|a| a.to_string()).collect(),
        end,
    )
}

fn recursive_read(name: &str, args: &[&str], v: &mut Verdict) {
    let any = |m: &[crate::classify::table::FlagMatch<'_>]| {
        options(args).any(|o| m.iter().any(|f| flag_matches(*f, o)))
    };
    let all_or = |all: bool, otherwise: Walk| if all { Walk::All } else { otherwise };
    v.walks = match name {
        // ripgrep and ag search below their operands by default, skipping
        // hidden files (ignore files are not taken into account: stricter).
        "rg" | "ripgrep" => all_or(
            any(&[Exact("--hidden"), Exact("--no-ignore-dot")])
                || options(args).any(|o| o.starts_with("-uu") || o == "-."),
            Walk::Unhidden,
        ),
        "ag" => all_or(
            any(&[Exact("--hidden"), Exact("--unrestricted"), Short('u')]),
            Walk::Unhidden,
        ),
        _ => all_or(
            any(&[
                Short('r'),
                Short('R'),
                Exact("--recursive"),
                Exact("--dereference-recursive"),
                Exact("--directories"),
            ]) || args.windows(2).any(|w| w[0] == "-d" && w[1] == "recurse"),
            Walk::None,
        ),
    };
}

fn find_actions(args: &[&str], v: &mut Verdict) {
    let mut i = 0;
    while i < args.len() {
        match args[i] {
            "-exec" | "-execdir" | "-ok" | "-okdir" => {
                let (cmd, end) = command_after(args, i + 1);
                v.raise(
                    Risk::Execute,
                    format!("find {} runs a command on every match", args[i]),
                );
                if !cmd.is_empty() {
                    v.embedded.push(cmd);
                }
                i = end;
            }
            "-delete" => v.raise(Risk::Destructive, "find -delete removes every match"),
            a if a.starts_with("-fprint") || a == "-fls" => {
                v.raise(Risk::Write, format!("find {a} writes a file"))
            }
            _ => {}
        }
        i += 1;
    }
}

fn fd_exec(args: &[&str], v: &mut Verdict) {
    let mut i = 0;
    while i < args.len() {
        let a = args[i];
        if matches!(a, "-x" | "--exec" | "-X" | "--exec-batch") {
            let (cmd, end) = command_after(args, i + 1);
            v.raise(
                Risk::Execute,
                format!("fd {a} runs a command on every match"),
            );
            if !cmd.is_empty() {
                v.embedded.push(cmd);
            }
            i = end;
        }
        i += 1;
    }
}

/// The sed scripts: `-e X`, `--expression=X`, or else the first operand.
fn sed_scripts<'a>(args: &[&'a str]) -> Vec<&'a str> {
    let mut scripts = Vec::new();
    let mut i = 0;
    let mut explicit = false;
    let mut first_operand = None;
    while i < args.len() {
        let a = args[i];
        if a == "-e" || a == "--expression" {
            if let Some(s) = args.get(i + 1) {
                scripts.push(*s);
            }
            explicit = true;
            i += 2;
            continue;
        }
        if let Some(s) = a.strip_prefix("--expression=") {
            scripts.push(s);
            explicit = true;
        } else if a.starts_with("-e") && a.len() > 2 && !a.starts_with("--") {
            scripts.push(&a[2..]);
            explicit = true;
        } else if !a.starts_with('-') && first_operand.is_none() {
            first_operand = Some(a);
        }
        i += 1;
    }
    if !explicit {
        scripts.extend(first_operand);
    }
    scripts
}

fn sed_script(args: &[&str], v: &mut Verdict) {
    for script in sed_scripts(args) {
        for cmd in script.split([';', '\n']) {
            match sed_command_effect(cmd.trim()) {
                Some(Risk::Execute) => {
                    v.raise(Risk::Execute, "the sed script runs shell commands (e)")
                }
                Some(Risk::Write) => v.raise(Risk::Write, "the sed script writes a file (w)"),
                _ => {}
            }
        }
    }
}

/// The effect of one sed command: `e` executes, `w`/`W` write, `s///e` and
/// `s///w` likewise.
fn sed_command_effect(cmd: &str) -> Option<Risk> {
    let body = strip_sed_address(cmd).trim_start();
    let mut chars = body.chars();
    match chars.next()? {
        'e' => Some(Risk::Execute),
        'w' | 'W' => Some(Risk::Write),
        's' | 'y' => {
            let delim = chars.next()?;
            // Skip the pattern and replacement (two more delimiters), then read flags.
            let rest: Vec<char> = chars.collect();
            let mut seen = 0;
            let mut i = 0;
            while i < rest.len() && seen < 2 {
                if rest[i] == '\\' {
                    i += 2;
                    continue;
                }
                if rest[i] == delim {
                    seen += 1;
                }
                i += 1;
            }
            let flags: String = rest
                .get(i..)
                .map(|r| r.iter().collect())
                .unwrap_or_default();
            if flags.contains('e') {
                Some(Risk::Execute)
            } else if flags.contains('w') || flags.contains('W') {
                Some(Risk::Write)
            } else {
                None
            }
        }
        _ => None,
    }
}

/// Strips a sed address (`1`, `$`, `/re/`, `1,5`, `/a/,/b/`, `!`) from the front.
fn strip_sed_address(cmd: &str) -> &str {
    let bytes = cmd.as_bytes();
    let mut i = 0;
    loop {
        while i < bytes.len()
            && (bytes[i].is_ascii_digit()
                || matches!(bytes[i], b'$' | b',' | b'~' | b'!' | b' ' | b'+'))
        {
            i += 1;
        }
        if i < bytes.len() && bytes[i] == b'/' {
            i += 1;
            while i < bytes.len() && bytes[i] != b'/' {
                if bytes[i] == b'\\' {
                    i += 1;
                }
                i += 1;
            }
            i += 1;
            continue;
        }
        break;
    }
    cmd.get(i.min(cmd.len())..).unwrap_or("")
}

/// The awk program: the first operand that is not the value of `-F`/`-v`.
fn awk_program(args: &[&str], v: &mut Verdict) {
    let mut i = 0;
    let mut program = None;
    while i < args.len() {
        let a = args[i];
        if matches!(a, "-F" | "-v" | "--assign" | "--field-separator") {
            i += 2;
            continue;
        }
        if a.starts_with('-') && a.len() > 1 {
            i += 1;
            continue;
        }
        program = Some(a);
        break;
    }
    let Some(program) = program else { return };
    let without_or = program.replace("||", "");
    if program.contains("system") || without_or.contains('|') || program.contains("@load") {
        v.raise(
            Risk::Execute,
            "the awk program runs commands (system, pipes)",
        );
    } else if program.contains("print") && program.contains('>') && awk_print_redirect(program) {
        v.raise(Risk::Write, "the awk program writes a file (print > file)");
    } else if program.contains("getline") {
        v.raise(Risk::Read, "the awk program reads with getline");
    }
}

/// Whether a `>` follows a `print`/`printf` within the same statement.
fn awk_print_redirect(program: &str) -> bool {
    program.split([';', '}', '\n']).any(|stmt| {
        stmt.find("print")
            .is_some_and(|at| stmt[at..].contains('>'))
    })
}

fn sql(name: &str, args: &[&str], v: &mut Verdict) {
    // `sqlite3 db '.shell CMD'`, `psql -c '\\! CMD'`: the client's shell escapes.
    if args.iter().any(|a| {
        let t = a.trim_start();
        t.starts_with(".shell") || t.starts_with(".system") || t.starts_with("\\!")
    }) {
        v.raise(
            Risk::Execute,
            format!("{name} is told to run a shell command"),
        );
    }
    let text = args.join(" ").to_ascii_uppercase();
    if sql_destroys(&text) {
        v.raise(
            Risk::Destructive,
            format!("{name} runs SQL that drops or truncates data"),
        );
    }
}

/// Whether SQL text drops or truncates something.
pub(crate) fn sql_destroys(upper: &str) -> bool {
    let words: Vec<&str> = upper
        .split(|c: char| !c.is_ascii_alphanumeric() && c != '_')
        .filter(|w| !w.is_empty())
        .collect();
    words.iter().any(|w| *w == "DROP" || *w == "TRUNCATE")
}

fn git_push_refspec(args: &[&str], v: &mut Verdict) {
    for op in operands(args) {
        if op.starts_with('+') {
            v.raise(Risk::Destructive, "git push +ref force-pushes");
        } else if op.starts_with(':') {
            v.raise(Risk::Destructive, "git push :ref deletes a remote ref");
        }
    }
}

fn git_checkout(args: &[&str], v: &mut Verdict) {
    if args.contains(&"--") {
        v.raise(
            Risk::Destructive,
            "git checkout -- PATHS discards uncommitted changes",
        );
    }
    if options(args).any(|o| flag_matches(Short('f'), o) || flag_matches(Exact("--force"), o)) {
        v.raise(
            Risk::Destructive,
            "git checkout --force discards uncommitted changes",
        );
    }
    if operands(args)
        .iter()
        .any(|o| *o == "." || o.ends_with("/.") || o.starts_with(":/") || o.contains('*'))
    {
        v.raise(
            Risk::Destructive,
            "git checkout . discards uncommitted changes",
        );
    }
}

fn git_restore(args: &[&str], v: &mut Verdict) {
    let staged = options(args).any(|o| o == "--staged" || o == "-S");
    let worktree = options(args).any(|o| o == "--worktree" || o == "-W");
    if staged && !worktree {
        v.risk = Risk::Write;
        v.reason = "git restore --staged only unstages".into();
    } else {
        v.risk = Risk::Destructive;
        v.reason = "git restore discards uncommitted changes".into();
    }
}

fn git_stash(args: &[&str], v: &mut Verdict) {
    match operands(args).first().copied() {
        Some("drop" | "clear") => v.raise(
            Risk::Destructive,
            "git stash drop/clear destroys stashed work",
        ),
        Some("list" | "show") => {
            v.risk = Risk::Read;
            v.reason = "git stash list/show reads".into();
        }
        _ => {}
    }
}

fn git_branch(args: &[&str], v: &mut Verdict) {
    let opts: Vec<&str> = options(args).collect();
    let has = |f: &str| opts.contains(&f);
    let force = has("-f") || has("--force");
    if has("-D") || ((has("-d") || has("--delete")) && force) {
        v.raise(Risk::Destructive, "git branch -D deletes unmerged branches");
        return;
    }
    let writes = [
        "-d",
        "--delete",
        "-m",
        "-M",
        "-c",
        "-C",
        "-u",
        "--set-upstream-to",
        "--unset-upstream",
        "--edit-description",
        "-f",
        "--force",
        "--track",
        "-t",
    ];
    let lists = [
        "-l",
        "--list",
        "-a",
        "--all",
        "-r",
        "--remotes",
        "--contains",
        "--merged",
        "--no-merged",
        "--points-at",
        "--show-current",
        "-v",
        "-vv",
    ];
    if opts
        .iter()
        .any(|o| writes.contains(o) || o.starts_with("--set-upstream-to="))
    {
        v.raise(Risk::Write, "git branch changes branches");
    } else if !operands(args).is_empty() && !opts.iter().any(|o| lists.contains(o)) {
        v.raise(Risk::Write, "git branch NAME creates a branch");
    }
}

fn git_runs_code(sub: &str, args: &[&str], v: &mut Verdict) {
    match sub {
        "rebase" => {
            let mut i = 0;
            while i < args.len() {
                let a = args[i];
                if a == "-x" || a == "--exec" {
                    if let Some(code) = args.get(i + 1) {
                        v.code.push(code.to_string());
                    }
                    i += 1;
                } else if let Some(code) = a.strip_prefix("--exec=") {
                    v.code.push(code.to_string());
                } else if a.starts_with("-x") && a.len() > 2 {
                    v.code.push(a[2..].to_string());
                }
                i += 1;
            }
            if !v.code.is_empty() {
                v.raise(
                    Risk::Execute,
                    "git rebase --exec runs shell code after each commit",
                );
            }
        }
        "submodule" => {
            let ops = operands(args);
            match ops.first().copied() {
                Some("foreach") => {
                    // Everything after `foreach` is joined into one command line.
                    let at = args.iter().position(|a| *a == "foreach").unwrap_or(0);
                    let code = args[at + 1..]
                        .iter()
                        .filter(|a| !matches!(**a, "--recursive" | "-q" | "--quiet"))
                        .cloned()
                        .collect::<Vec<_>>()
                        .join(" ");
                    v.raise(
                        Risk::Execute,
                        "git submodule foreach runs shell code in every submodule",
                    );
                    if !code.is_empty() {
                        v.code.push(code);
                    }
                }
                Some("status" | "summary") | None => {
                    v.risk = Risk::Read;
                    v.reason = "git submodule status reads".into();
                }
                _ => {}
            }
        }
        _ => {
            // `git bisect run CMD ARGS…`.
            if let Some(at) = args.iter().position(|a| *a == "run") {
                if at + 1 < args.len() {
                    v.embedded
                        .push(args[at + 1..].iter().map(|a| a.to_string()).collect());
                }
            } else if !matches!(operands(args).first().copied(), Some("run")) {
                v.risk = Risk::Write;
                v.reason = "git bisect moves HEAD".into();
            }
        }
    }
}

fn git_remote(args: &[&str], v: &mut Verdict) {
    match operands(args).first().copied() {
        None | Some("get-url") => {}
        Some("show" | "update" | "prune") => v.raise(
            Risk::Network,
            "git remote show/update/prune contacts the remote",
        ),
        Some(_) => v.raise(Risk::Write, "git remote changes the configured remotes"),
    }
}

fn git_config(args: &[&str], v: &mut Verdict) {
    let opts: Vec<&str> = options(args).collect();
    let ops = operands(args);
    let reads = opts
        .iter()
        .any(|o| o.starts_with("--get") || matches!(*o, "-l" | "--list"))
        || matches!(ops.first().copied(), Some("get" | "list"));
    let edits = opts
        .iter()
        .any(|o| matches!(*o, "-e" | "--edit" | "--add" | "--replace-all"))
        || matches!(ops.first().copied(), Some("set" | "edit"));
    let unsets = opts.iter().any(|o| {
        o.starts_with("--unset")
            || o.starts_with("--remove-section")
            || o.starts_with("--rename-section")
    }) || matches!(
        ops.first().copied(),
        Some("unset" | "remove-section" | "rename-section")
    );
    if edits || (!reads && ops.len() >= 2) {
        v.raise(
            Risk::Execute,
            "git config sets configuration that can run programs (core.pager, alias.*, hooks)",
        );
    } else if unsets {
        v.raise(Risk::Write, "git config --unset changes configuration");
    } else if let Some(key) = ops.last().filter(|k| !shows_no_credential(k)) {
        // A read of one key prints its value. Configuration holds credentials
        // in shapes no output check recognises (`sendemail.smtpPass`, a
        // credential helper's inline script, a tool's own `*.token`), so only
        // the sections whose every value git defines as harmless are read.
        v.raise(
            Risk::Credential,
            format!(
                "`git config {key}` prints a value outside the keys known to hold no \
                 credential (http.*.extraheader carries a token, sendemail.smtpPass a password)"
            ),
        );
    }
}

/// Whether printing the configuration value `key` (`section.name` or
/// `section.subsection.name`) shows no credential: one fact with what the
/// sandbox shows of git's configuration
/// ([`toolgate_core::secret_values::git_key_holds_no_secret`]). A remote's
/// or submodule's URL may carry `user:password@`, which the output check
/// redacts.
fn shows_no_credential(key: &str) -> bool {
    toolgate_core::secret_values::git_key_holds_no_secret(key)
}

fn tar_mode(args: &[&str], v: &mut Verdict) {
    let writes_long = [
        "--create",
        "--extract",
        "--get",
        "--append",
        "--update",
        "--delete",
        "--concatenate",
        "--catenate",
    ];
    let mut modes = String::new();
    for (i, a) in args.iter().enumerate() {
        if *a == "--" {
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let long = format!("--{}", long.split('=').next().unwrap_or(long));
            if writes_long.contains(&long.as_str()) {
                modes.push('c');
            }
        } else if let Some(short) = a.strip_prefix('-') {
            modes.push_str(short);
        } else if i == 0 {
            // Old style: `tar xzf archive`.
            modes.push_str(a);
        }
    }
    // `-f host:file` (or old style `tar tf host:file`): rsh/ssh reach the host.
    if args.iter().any(|a| {
        let value = a.strip_prefix("--file=").unwrap_or(a);
        !value.starts_with('-')
            && value
                .split('/')
                .next()
                .is_some_and(|head| head.contains(':'))
    }) && !args.contains(&"--force-local")
    {
        v.raise(
            Risk::Network,
            "`tar` given `host:file` reaches the host with rsh/ssh",
        );
    }
    if modes
        .chars()
        .any(|c| matches!(c, 'c' | 'x' | 'r' | 'u' | 'A'))
    {
        v.raise(Risk::Write, "tar creates or extracts files");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sed_commands() {
        assert_eq!(sed_command_effect("s/a/b/g"), None);
        assert_eq!(sed_command_effect("s|a|b|e"), Some(Risk::Execute));
        assert_eq!(sed_command_effect("s/a\\/x/b/w out"), Some(Risk::Write));
        assert_eq!(sed_command_effect("/foo/e"), Some(Risk::Execute));
        assert_eq!(sed_command_effect("1,5w out"), Some(Risk::Write));
        assert_eq!(sed_command_effect("p"), None);
        assert_eq!(sed_command_effect(""), None);
    }

    #[test]
    fn sql_words() {
        assert!(sql_destroys("DROP TABLE USERS"));
        assert!(sql_destroys("SELECT 1;TRUNCATE T"));
        assert!(!sql_destroys("SELECT DROPPED FROM T"));
    }
}
