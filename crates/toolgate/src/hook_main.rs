//! `toolgate-hook AGENT [FLAGS]`: answers one pre-tool-use hook of an agent,
//! as `toolgate hook AGENT` does, from a program that starts nothing else
//! (no command-line parser, runtime or server): the agents run it for every
//! call. See [`toolgate::hook`].

use std::process::ExitCode;

fn main() -> ExitCode {
    let code = toolgate::hook::run_program(std::env::args_os().skip(1));
    ExitCode::from(u8::try_from(code).unwrap_or(2))
}
