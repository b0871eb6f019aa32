//! A small front end to the crate, for its own tests and for trying the
//! sandbox by hand: `toolgate-sandbox status` and
//! `toolgate-sandbox exec [--root DIR]... [--write DIR]... [--net] [--home DIR] [--stage DIR] -- CMD [ARG...]`.
//! With `--stage`, the command's writes are staged and discarded: what it
//! changed is printed as JSON lines on standard error, and nothing lands.
//! It is also its own sandbox helper.

use std::path::PathBuf;
use std::process::ExitCode;

fn usage() -> ExitCode {
    eprintln!(
        "usage: toolgate-sandbox status | toolgate-sandbox exec [--root DIR]... [--write DIR]... [--net] [--home DIR] [--stage DIR] -- CMD [ARG...]"
    );
    ExitCode::from(2)
}

fn main() -> ExitCode {
    toolgate_sandbox::run_if_requested();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let support = toolgate_sandbox::detect();
    match args.first().map(String::as_str) {
        Some("status") => {
            println!("{}", serde_json::to_string(&support).unwrap_or_default());
            ExitCode::SUCCESS
        }
        Some("exec") => {
            let mut roots = Vec::new();
            let mut writable = Vec::new();
            let mut home = None;
            let mut stage = None;
            let mut network = false;
            let mut it = args[1..].iter();
            let mut rest = Vec::new();
            while let Some(a) = it.next() {
                match a.as_str() {
                    "--root" => roots.extend(it.next().map(PathBuf::from)),
                    "--write" => writable.extend(it.next().map(PathBuf::from)),
                    "--home" => home = it.next().map(PathBuf::from),
                    "--stage" => stage = it.next().map(PathBuf::from),
                    "--net" => network = true,
                    "--" => {
                        rest = it.cloned().collect();
                        break;
                    }
                    _ => return usage(),
                }
            }
            let Some((program, cmd_args)) = rest.split_first() else {
                return usage();
            };
            if roots.is_empty() {
                roots.push(std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")));
            }
            let mut spec = toolgate_sandbox::SandboxSpec::for_location(roots, home.as_deref());
            spec.writable = writable;
            spec.network = network;
            spec.stage = stage;
            if let Ok(cwd) = std::env::current_dir() {
                spec.cwd = cwd;
            }
            let mut confined = match spec.command(&support, program, cmd_args) {
                Ok(c) => c,
                Err(e) => {
                    eprintln!("toolgate-sandbox: {e}");
                    return ExitCode::from(126);
                }
            };
            match confined.command.status() {
                Ok(st) => {
                    if let Some(staging) = &confined.staging {
                        match staging.changes() {
                            Ok(changes) => {
                                for c in changes {
                                    eprintln!(
                                        "{}",
                                        serde_json::json!({"path": c.path, "change": c.kind, "dir": c.dir})
                                    );
                                }
                            }
                            Err(e) => eprintln!("toolgate-sandbox: {e}"),
                        }
                    }
                    ExitCode::from(st.code().map_or(128, |c| c as u8))
                }
                Err(e) => {
                    eprintln!("toolgate-sandbox: cannot start bwrap: {e}");
                    ExitCode::from(126)
                }
            }
        }
        _ => usage(),
    }
}
