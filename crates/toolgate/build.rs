//! Link settings of the `toolgate`, `toolgate-hook` and
//! `toolgate-sandbox-helper` binaries.

use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-env-changed=TOOLGATE_HOOK_DYNAMIC");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        // Packed relative relocations (DT_RELR): at every start the loader
        // applies the binary's ~40,000 pointer fix-ups from a bitmap of a few
        // KB instead of reading a table of about 1 MB, a visible part of a
        // short `toolgate check`. GNU ld 2.38+ and glibc 2.36+ support it.
        println!("cargo:rustc-link-arg-bin=toolgate=-Wl,-z,pack-relative-relocs");
        for bin in STATIC_BINS {
            link_static(bin);
        }
    }
    if os == "linux" {
        // The hook program, which the agents start for every call, is linked
        // at a fixed address: the loader then has no pointer fix-ups to apply
        // at all, and its tables are not copied page by page at start.
        println!("cargo:rustc-link-arg-bin=toolgate-hook=-no-pie");
        // The same for the sandbox's helper, started before every confined
        // command.
        println!("cargo:rustc-link-arg-bin=toolgate-sandbox-helper=-no-pie");
        hook_text_order();
    }
}

/// Places the functions a hook process runs together, before the rest of
/// `toolgate-hook`'s code (`hook-text-order.ld`, written by
/// `scripts/hook-text-order.sh`): the kernel maps a program's code 64 KB
/// around each page first touched, so a hook that runs code gathered in
/// 3.3 MB takes 39 faults in its code instead of 66 in code spread over
/// 14 MB (page faults were about a seventh of a hook's CPU time). Only
/// placement changes: a list that names functions no longer there is not
/// wrong, only less effective. `TOOLGATE_HOOK_TEXT_ORDER=0` links without it.
fn hook_text_order() {
    println!("cargo:rerun-if-changed=hook-text-order.ld");
    println!("cargo:rerun-if-env-changed=TOOLGATE_HOOK_TEXT_ORDER");
    if std::env::var_os("TOOLGATE_HOOK_TEXT_ORDER").is_some_and(|v| v == "0") {
        return;
    }
    let Some(dir) = std::env::var_os("CARGO_MANIFEST_DIR").map(PathBuf::from) else {
        return;
    };
    let script = dir.join("hook-text-order.ld");
    if script.is_file() {
        // A script of `SECTIONS { … } INSERT BEFORE .text;` adds to the
        // linker's own layout rather than replacing it (GNU ld and lld).
        println!(
            "cargo:rustc-link-arg-bin=toolgate-hook=-Wl,-T,{}",
            script.display()
        );
    }
}

/// The small programs started once per call or per confined command, linked
/// statically where the toolchain allows ([`link_static`]): the hook, which
/// the agents start for every call, and the sandbox's helper, which
/// bubblewrap starts inside the namespaces before every confined command.
const STATIC_BINS: &[&str] = &["toolgate-hook", "toolgate-sandbox-helper"];

/// Links `bin` statically (glibc's `libc.a`, and libgcc's unwinder
/// `libgcc_eh.a` for panics), where this machine's C toolchain has those
/// archives and the build is not a cross build: started for every call of
/// an agent (the hook) or before every confined command (the sandbox's
/// helper), it then maps no shared library and the loader resolves no
/// symbol (a sixth of the hook's instructions when linked dynamically; for
/// the helper, which does little else, more than half of its start).
/// Otherwise, or with `TOOLGATE_HOOK_DYNAMIC` set, it is linked dynamically.
///
/// rustc links `-lgcc_s -lc -lm…` for this target; a directory of linker
/// scripts named like those shared libraries, each naming the static archive
/// instead, is put first in the search path of this one binary.
fn link_static(bin: &str) {
    if std::env::var_os("TOOLGATE_HOOK_DYNAMIC").is_some_and(|v| !v.is_empty()) {
        return;
    }
    let (Ok(target), Ok(host)) = (std::env::var("TARGET"), std::env::var("HOST")) else {
        return;
    };
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    if target != host {
        return;
    }
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    // `cc -print-file-name=X` prints X's full path when the toolchain has
    // it, and X alone when it does not.
    let has = |archive: &str| {
        Command::new(&cc)
            .arg(format!("-print-file-name={archive}"))
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| String::from_utf8(o.stdout).ok())
            .is_some_and(|p| Path::new(p.trim()).is_absolute())
    };
    if !["libc.a", "libm.a", "libgcc_eh.a", "libgcc.a"]
        .iter()
        .all(|a| has(a))
    {
        println!(
            "cargo:warning={bin} is linked dynamically: this C toolchain has no static glibc (libc.a) or libgcc_eh.a"
        );
        return;
    }
    let dir = out.join("static-libs");
    // Each library rustc names, as the static archives that provide it
    // (since glibc 2.34, libpthread, libdl, librt and libutil are in libc).
    let scripts = [
        ("libgcc_s.so", "GROUP ( libgcc_eh.a libgcc.a )"),
        ("libc.so", "GROUP ( libc.a libgcc_eh.a libgcc.a )"),
        ("libm.so", "INPUT ( libm.a )"),
        ("libpthread.so", "INPUT ( libpthread.a )"),
        ("libdl.so", "INPUT ( libdl.a )"),
        ("librt.so", "INPUT ( librt.a )"),
        ("libutil.so", "INPUT ( libutil.a )"),
    ];
    let written = std::fs::create_dir_all(&dir).and_then(|()| {
        scripts
            .iter()
            .try_for_each(|(name, text)| std::fs::write(dir.join(name), format!("{text}\n")))
    });
    if let Err(e) = written {
        println!("cargo:warning={bin} is linked dynamically: cannot write {dir:?}: {e}");
        return;
    }
    println!("cargo:rustc-link-arg-bin={bin}=-static");
    println!("cargo:rustc-link-arg-bin={bin}=-L{}", dir.display());
}
