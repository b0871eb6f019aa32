//! `toolgate-sandbox-helper`: the program bubblewrap runs inside the
//! sandbox's namespaces, last before the command. It sets `no_new_privs`,
//! restricts itself with Landlock, installs the seccomp filters and `exec`s
//! the command (`toolgate_sandbox::run_if_requested`), and holds nothing
//! else: started once per confined command, it costs a fraction of the
//! whole `toolgate` executable's start. `toolgate` uses it when it is
//! installed beside it, and acts as its own helper otherwise.
//!
//! Its entry point is C's `main`, without the Rust runtime's start-up (see
//! `hook_main.rs`): nothing it does needs the stack-overflow guard or the
//! runtime's signal set-up, and the command it `exec`s starts with the
//! default signal dispositions either way.

#![no_main]

use std::ffi::{c_char, c_int};

/// The program's entry point, called by the C runtime.
#[unsafe(no_mangle)]
extern "C" fn main(_argc: c_int, _argv: *const *const c_char) -> c_int {
    // Confines itself and runs the command when started as the helper;
    // it never returns then.
    toolgate_sandbox::run_if_requested();
    eprintln!(
        "toolgate-sandbox-helper: toolgate's sandbox runs this program inside bubblewrap; it is not run by hand"
    );
    2
}
