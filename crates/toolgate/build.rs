//! Link settings of the `toolgate`, `toolgate-hook` and
//! `toolgate-sandbox-helper` binaries.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && env == "gnu" {
        // Packed relative relocations (DT_RELR): at every start the loader
        // applies the binary's ~40,000 pointer fix-ups from a bitmap of a few
        // KB instead of reading a table of about 1 MB, a visible part of a
        // short `toolgate check`. GNU ld 2.38+ and glibc 2.36+ support it.
        println!("cargo:rustc-link-arg-bin=toolgate=-Wl,-z,pack-relative-relocs");
    }
    if os == "linux" {
        // The hook program, which the agents start for every call, is linked
        // at a fixed address: the loader then has no pointer fix-ups to apply
        // at all, and its tables are not copied page by page at start.
        println!("cargo:rustc-link-arg-bin=toolgate-hook=-no-pie");
        // The same for the sandbox's helper, started before every confined
        // command.
        println!("cargo:rustc-link-arg-bin=toolgate-sandbox-helper=-no-pie");
    }
}
