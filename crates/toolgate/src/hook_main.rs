//! `toolgate-hook AGENT [FLAGS]`: answers one pre-tool-use hook of an agent,
//! as `toolgate hook AGENT` does, from a program that starts nothing else
//! (no command-line parser, runtime or server): the agents run it for every
//! call. See [`toolgate::hook`].
//!
//! Its entry point is C's `main`, without the Rust runtime's start-up, which
//! would parse `/proc/self/maps` to place a stack-overflow guard and install
//! its signal handlers (a tenth of the process's instructions). What that
//! changes cannot open the hook: a stack overflow or a closed pipe ends the
//! process by a signal, which the agent or the installed `|| exit 2` reads
//! as a block; the answer is flushed before `main` returns.

#![no_main]

use std::ffi::{c_char, c_int};

/// The program's entry point, called by the C runtime.
#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    toolgate_store::tune_for_short_process();
    toolgate::hook::run_program(std::env::args_os().skip(1))
}
