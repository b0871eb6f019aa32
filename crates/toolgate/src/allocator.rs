//! The process's allocator, chosen once, before `main`, by the subcommand.
//!
//! The servers (`mcp`, `serve`) judge call after call, and a decision makes a
//! few hundred short-lived allocations: there mimalloc's are cheaper than
//! glibc's (the `decide` bench of toolgate-policy measures both). A one-shot
//! command (`check`, `call`, `log`…) makes one or a few decisions, and there
//! mimalloc's start (its arena reserved and advised for huge pages, the pages
//! it first touches) cost more CPU than the whole decision: the system's
//! allocator serves it.
//!
//! The choice is made by a function in `.init_array`, which glibc calls with
//! `argc`, `argv` and `envp` before `main`. An allocation made before it (or
//! on a platform that does not pass the arguments) settles the choice on the
//! system's allocator for good: every block is freed by the allocator that
//! made it.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU8, Ordering};

const UNSET: u8 = 0;
const SYSTEM: u8 = 1;
const MIMALLOC: u8 = 2;

/// The global allocator: the system's or mimalloc, whichever was chosen.
pub struct Chosen(AtomicU8);

#[global_allocator]
static ALLOCATOR: Chosen = Chosen(AtomicU8::new(UNSET));

impl Chosen {
    /// The allocator chosen, choosing the system's if nothing was chosen yet.
    fn get(&self) -> u8 {
        match self.0.load(Ordering::Relaxed) {
            UNSET => {
                match self
                    .0
                    .compare_exchange(UNSET, SYSTEM, Ordering::Relaxed, Ordering::Relaxed)
                {
                    Ok(_) => SYSTEM,
                    Err(chosen) => chosen,
                }
            }
            chosen => chosen,
        }
    }

    fn chosen(&self) -> &'static dyn GlobalAlloc {
        if self.get() == MIMALLOC {
            &mimalloc::MiMalloc
        } else {
            &System
        }
    }
}

// SAFETY: every call goes to one of two allocators, the same one for the whole
// process (the choice never changes once an allocation was made), with the
// caller's promises passed on unchanged.
unsafe impl GlobalAlloc for Chosen {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        unsafe { self.chosen().alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        unsafe { self.chosen().dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        unsafe { self.chosen().alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        unsafe { self.chosen().realloc(ptr, layout, new_size) }
    }
}

/// The subcommand among the arguments after the program's name: the first
/// that is not an option nor the value of a global option given apart
/// (`--data-dir DIR`, `--durability full`).
fn subcommand<'a>(args: impl IntoIterator<Item = &'a [u8]>) -> Option<&'a [u8]> {
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        if arg == b"--data-dir" || arg == b"--durability" {
            args.next();
        } else if !arg.starts_with(b"-") {
            return Some(arg);
        }
    }
    None
}

/// Whether the subcommand is a long-running server.
fn serves(args: &[&[u8]]) -> bool {
    matches!(subcommand(args.iter().copied()), Some(b"mcp" | b"serve"))
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod before_main {
    use std::ffi::{CStr, c_char, c_int};
    use std::sync::atomic::Ordering;

    /// At most this many arguments are looked at for the subcommand.
    const MAX_ARGS: usize = 16;

    #[used]
    #[unsafe(link_section = ".init_array")]
    static CHOOSE: extern "C" fn(c_int, *const *const c_char, *const *const c_char) = choose;

    extern "C" fn choose(argc: c_int, argv: *const *const c_char, _envp: *const *const c_char) {
        if argv.is_null() {
            return;
        }
        let count = usize::try_from(argc).unwrap_or(0).min(MAX_ARGS);
        let mut args: [&[u8]; MAX_ARGS] = [&[]; MAX_ARGS];
        for (at, slot) in args.iter_mut().enumerate().take(count).skip(1) {
            // SAFETY: glibc passes the process's `argv`: `argc` pointers, each
            // to a NUL-terminated string that lives as long as the process.
            let arg = unsafe { *argv.add(at) };
            if arg.is_null() {
                break;
            }
            // SAFETY: as above.
            *slot = unsafe { CStr::from_ptr(arg) }.to_bytes();
        }
        let pick = if super::serves(&args[1..count.max(1)]) {
            super::MIMALLOC
        } else {
            super::SYSTEM
        };
        let _ = super::ALLOCATOR.0.compare_exchange(
            super::UNSET,
            pick,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(line: &str) -> Vec<&[u8]> {
        line.split_whitespace().map(str::as_bytes).collect()
    }

    #[test]
    fn the_servers_get_mimalloc_and_one_shot_commands_the_system_allocator() {
        for line in [
            "mcp",
            "serve --listen 127.0.0.1:1",
            "--data-dir /d mcp",
            "--durability full serve",
            "--data-dir=/d mcp --root .",
        ] {
            assert!(serves(&args(line)), "{line}");
        }
        for line in [
            "",
            "check bash {}",
            "call read {}",
            "--data-dir mcp check",
            "log verify",
            "--help",
            "trust --yes",
        ] {
            assert!(!serves(&args(line)), "{line}");
        }
    }

    #[test]
    fn this_test_process_chose_once() {
        // The test binary allocated long before any test ran: whichever was
        // chosen, it is set and stays.
        let first = ALLOCATOR.get();
        assert_ne!(first, UNSET);
        let _ = vec![1u8; 4096];
        assert_eq!(ALLOCATOR.get(), first);
    }
}
