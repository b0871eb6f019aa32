//! `docs/boundary-tables.md` is rendered from the tables of this crate, so
//! the list a person reads is the list the gate uses: a name added to a
//! table and not to the page (47 entries had drifted so in the README's
//! hand-written list) fails this test.
//!
//! After changing a table: `TOOLGATE_BLESS=1 cargo test -p toolgate-paths
//! --test boundary_page` writes the page again.

use std::fmt::Write as _;
use std::path::PathBuf;

use toolgate_paths::credential::{
    BACKUP_SUFFIXES, ENV_PREFIX, ENV_TEMPLATE_SUFFIXES, PRIVATE_KEY_PREFIXES, PUBLIC_KEY_SUFFIX,
    SECRET_DIRS, SECRET_FILES, SECRET_NAME_SHAPES, SECRET_PAIRS, SECRET_SUFFIXES, SECRET_SYSTEM,
};
use toolgate_paths::protected::{
    Anchor, PROTECTED, PROTECTED_NAME_FORMS, PROTECTED_SUFFIXES, ProtectedClass,
};
use toolgate_paths::shape::{DOT_PATH_WHY, INERT_DOTFILES};

fn page_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../docs/boundary-tables.md")
}

/// Text made safe for one cell of a Markdown table.
fn cell(text: &str) -> String {
    text.replace('|', "\\|").replace('\n', " ")
}

/// A name shown as code (a backtick inside is never in these tables).
fn code(text: &str) -> String {
    format!("`{}`", text.replace('`', ""))
}

fn render() -> String {
    let mut out = String::new();
    let w = &mut out;
    let _ = writeln!(
        w,
        "# Protected paths and secret files\n\n\
         This page is generated from the tables the gate itself uses (crate `toolgate-paths`:\n\
         `protected.rs`, `shape.rs`, `credential.rs`); a test fails when they differ. Names are\n\
         compared without regard to ASCII case.\n\n\
         ## Protected paths\n\n\
         A write to one of these places is at least `execute`: no mode and no bare-wildcard\n\
         rule allows it, only a rule whose pattern names it; a confined command's write there\n\
         lands only when a person approves it (with nobody to ask, it is discarded). A path\n\
         ending in `/` covers everything beneath it; *anywhere* means at any depth of a path,\n\
         *home* under the home directory, *root* at that absolute place. The README's\n\
         Protected paths section says what else is protected (what these files name, git's\n\
         own state).\n"
    );
    let _ = writeln!(
        w,
        "| path | where | loaded or run by | why | documented at |"
    );
    let _ = writeln!(w, "|---|---|---|---|---|");
    for e in PROTECTED {
        let anchor = match e.anchor {
            Anchor::Anywhere => "anywhere",
            Anchor::Home => "home",
            Anchor::Root => "root",
        };
        let class = match e.class {
            ProtectedClass::Toolgate => " (toolgate's own: writes denied)",
            ProtectedClass::RunsCode => "",
        };
        let _ = writeln!(
            w,
            "| {} | {anchor} | {}{class} | {} | {} |",
            code(e.display),
            cell(e.program),
            cell(e.why),
            cell(e.source)
        );
    }
    let _ = writeln!(
        w,
        "\nA file whose name ends so, or has this form, anywhere:\n\n\
         | name | loaded or run by | documented at |\n|---|---|---|"
    );
    for (ending, program, source) in PROTECTED_SUFFIXES {
        let _ = writeln!(
            w,
            "| {} | {} | {} |",
            code(&format!("*{ending}")),
            cell(program),
            cell(source)
        );
    }
    for (start, end, program, source) in PROTECTED_NAME_FORMS {
        let _ = writeln!(
            w,
            "| {} | {} | {} |",
            code(&format!("{start}*{end}")),
            cell(program),
            cell(source)
        );
    }
    let _ = writeln!(
        w,
        "\n## Dot-paths in the location\n\n\
         Beyond the table, a path inside the location with a component that starts with a dot\n\
         is protected by its shape: {}. The inert dotfiles:\n",
        cell(DOT_PATH_WHY)
    );
    let _ = writeln!(w, "| name | why it runs nothing |\n|---|---|");
    for (name, why) in INERT_DOTFILES {
        let _ = writeln!(w, "| {} | {} |", code(name), cell(why));
    }
    let _ = writeln!(
        w,
        "\n## Secret files\n\n\
         Reading or writing one of these is `credential`: denied unless a rule names it; `list`,\n\
         `glob` and `grep` leave such files out.\n\n\
         Directories whose whole content is secret, wherever they are:\n\n\
         | directory | documented at |\n|---|---|"
    );
    for (name, source) in SECRET_DIRS {
        let _ = writeln!(w, "| {} | {} |", code(&format!("{name}/")), cell(source));
    }
    let _ = writeln!(
        w,
        "\nAn entry inside a directory (`*`: anything beneath it):\n\n\
         | path | documented at |\n|---|---|"
    );
    for (dir, entry, source) in SECRET_PAIRS {
        let _ = writeln!(
            w,
            "| {} | {} |",
            code(&format!("{dir}/{entry}")),
            cell(source)
        );
    }
    let _ = writeln!(
        w,
        "\nFile names that are secret wherever they are; also `{ENV_PREFIX}` followed by `.` or `_`\n\
         and anything, except templates whose last suffix is {}:\n\n\
         | name | documented at |\n|---|---|",
        ENV_TEMPLATE_SUFFIXES
            .iter()
            .map(|s| code(s))
            .collect::<Vec<_>>()
            .join(", ")
    );
    for (name, source) in SECRET_FILES {
        let _ = writeln!(w, "| {} | {} |", code(name), cell(source));
    }
    let _ = writeln!(
        w,
        "\nName endings (private keys, key stores, state):\n\n| ending | documented at |\n|---|---|"
    );
    for (ending, source) in SECRET_SUFFIXES {
        let _ = writeln!(w, "| {} | {} |", code(&format!("*{ending}")), cell(source));
    }
    let _ = writeln!(w, "\nName forms:\n\n| form | documented at |\n|---|---|");
    for (start, end, source) in SECRET_NAME_SHAPES {
        let _ = writeln!(
            w,
            "| {} | {} |",
            code(&format!("{start}*{end}")),
            cell(source)
        );
    }
    let _ = writeln!(
        w,
        "\nSSH private keys, also with a purpose after the name (`id_rsa_github`): {}; a name\n\
         ending in {} is the public half and not secret.\n",
        PRIVATE_KEY_PREFIXES
            .iter()
            .map(|s| code(&format!("{s}*")))
            .collect::<Vec<_>>()
            .join(", "),
        code(PUBLIC_KEY_SUFFIX)
    );
    let _ = writeln!(
        w,
        "A backup or an editor's copy of a secret file is secret too:\n\n\
         | ending | written by |\n|---|---|"
    );
    for (ending, who) in BACKUP_SUFFIXES {
        let _ = writeln!(w, "| {} | {} |", code(&format!("*{ending}")), cell(who));
    }
    let _ = writeln!(
        w,
        "\nSystem secrets: {}; also `/proc/*/environ`, SSH host private keys, and any hard link\n\
         of a known secret file.",
        SECRET_SYSTEM
            .iter()
            .map(|s| code(s))
            .collect::<Vec<_>>()
            .join(", ")
    );
    out
}

#[test]
fn the_boundary_page_is_the_tables() {
    let rendered = render();
    let path = page_path();
    if std::env::var_os("TOOLGATE_BLESS").is_some() {
        std::fs::write(&path, &rendered).unwrap();
        return;
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == rendered,
        "{} differs from the tables; run `TOOLGATE_BLESS=1 cargo test -p toolgate-paths --test boundary_page` and commit it",
        path.display()
    );
}

/// Every entry of every table is on the page by its name, so a renderer
/// that dropped a table would not pass by rendering nothing.
#[test]
fn every_entry_of_the_tables_is_on_the_page() {
    let page = render();
    let names = PROTECTED
        .iter()
        .map(|e| code(e.display))
        .chain(SECRET_FILES.iter().map(|(n, _)| code(n)))
        .chain(SECRET_DIRS.iter().map(|(n, _)| code(&format!("{n}/"))))
        .chain(SECRET_SUFFIXES.iter().map(|(n, _)| code(&format!("*{n}"))))
        .chain(INERT_DOTFILES.iter().map(|(n, _)| code(n)));
    for name in names {
        assert!(page.contains(&name), "{name} is missing from the page");
    }
    assert!(page.contains("`AGENTS.md` | anywhere"));
    assert!(page.contains("`~/.bashrc` | home"));
}
