use super::sieve;
use crate::credential::{
    BACKUP_SUFFIXES, ENV_PREFIX, ENV_TEMPLATE_SUFFIXES, PRIVATE_KEY_PREFIXES, SECRET_DIRS,
    SECRET_FILES, SECRET_NAME_SHAPES, SECRET_PAIRS, SECRET_SUFFIXES, is_credential_name,
    sample_secret_names,
};

/// Every row of the tables, pieces of rows, and ordinary names, each in several
/// cases, with and without a backup's ending and other decorations.
fn names() -> Vec<Vec<u8>> {
    let mut fragments: Vec<String> = sample_secret_names();
    fragments.extend(SECRET_FILES.iter().map(|(n, _)| n.to_string()));
    fragments.extend(SECRET_DIRS.iter().map(|(n, _)| n.to_string()));
    fragments.extend(SECRET_SUFFIXES.iter().map(|(n, _)| n.to_string()));
    fragments.extend(BACKUP_SUFFIXES.iter().map(|(n, _)| n.to_string()));
    fragments.extend(PRIVATE_KEY_PREFIXES.iter().map(|n| n.to_string()));
    fragments.extend(ENV_TEMPLATE_SUFFIXES.iter().map(|n| n.to_string()));
    for (start, end, _) in SECRET_NAME_SHAPES {
        fragments.push(start.to_string());
        fragments.push(end.to_string());
        fragments.push(format!("{start}x{end}"));
    }
    for (dir, entry, _) in SECRET_PAIRS {
        fragments.push(dir.to_string());
        fragments.push(entry.to_string());
    }
    fragments.push(ENV_PREFIX.to_string());
    fragments.extend(
        [
            "main.rs",
            "lib.rs",
            "README.md",
            "Cargo.toml",
            "entry-0042.txt",
            "x",
            "ab",
            "~",
            ".",
            "..",
            "a~",
            "id_",
            "id_rsa",
            "id_rsa.pub",
            ".env.",
            ".envrc",
            "é.pem",
            "\u{1F511}",
            "notes.txt",
            "-",
            "_",
            "0",
        ]
        .map(str::to_string),
    );
    let decorations: Vec<(String, String)> = [
        ("", ""),
        ("x", ""),
        ("", "x"),
        ("my-", ""),
        ("", ".json"),
        ("", "-prod"),
        ("", "_github"),
        (".", ""),
        ("", ".local"),
        ("", ".example"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .chain(
        BACKUP_SUFFIXES
            .iter()
            .map(|(b, _)| (String::new(), b.to_string())),
    )
    .collect();
    let mut out = Vec::new();
    for f in &fragments {
        for (before, after) in &decorations {
            let name = format!("{before}{f}{after}");
            for variant in [
                name.clone(),
                name.to_ascii_uppercase(),
                name.to_ascii_lowercase(),
                name.chars()
                    .enumerate()
                    .map(|(i, c)| {
                        if i % 2 == 0 {
                            c.to_ascii_uppercase()
                        } else {
                            c
                        }
                    })
                    .collect(),
            ] {
                out.push(variant.into_bytes());
            }
        }
    }
    // Every byte string of up to three bytes over an alphabet of the tables'
    // own bytes and a few others.
    let alphabet: Vec<u8> = b".~_-ekpsvyxjnEKPS0128".to_vec();
    for a in &alphabet {
        out.push(vec![*a]);
        for b in &alphabet {
            out.push(vec![*a, *b]);
            for c in &alphabet {
                out.push(vec![*a, *b, *c]);
            }
        }
    }
    out.push(Vec::new());
    out.push(vec![0xff, b'.', b'e', b'n', b'v']);
    out
}

#[test]
fn the_sieve_never_turns_away_a_name_the_tables_match() {
    let names = names();
    assert!(names.len() > 5_000, "{} names", names.len());
    let mut turned_away = 0;
    for name in &names {
        let by_table = crate::credential::is_credential_name_by_table(name);
        assert_eq!(
            is_credential_name(name),
            by_table,
            "{:?}",
            String::from_utf8_lossy(name)
        );
        if !sieve().may_be_secret_name(name) {
            assert!(!by_table, "{:?}", String::from_utf8_lossy(name));
            turned_away += 1;
        }
    }
    // And it does turn names away, or it would cost without saving.
    assert!(turned_away > 1_000, "only {turned_away} names turned away");
}

#[test]
fn most_ordinary_source_names_are_turned_away_at_once() {
    // Which ones depends on the tables (a new secret file's first byte lets
    // every name starting so through to the full check), so this asserts a
    // share, not names.
    let ordinary = [
        "main.rs",
        "lib.rs",
        "mod.rs",
        "build.rs",
        "README.md",
        "CHANGELOG.md",
        "Makefile",
        "entry-0042.txt",
        "index.html",
        "style.css",
        "app.py",
        "setup.py",
        "test_api.py",
        "server.go",
        "go.mod",
        "main.c",
        "util.h",
        "Main.java",
        "pom.xml",
        "index.ts",
        "App.tsx",
        "package.json",
        "tsconfig.json",
        "Dockerfile",
        "LICENSE",
        "notes.txt",
        "data.csv",
        "logo.png",
        "report.pdf",
        "Cargo.lock",
    ];
    let turned_away = ordinary
        .iter()
        .filter(|n| !sieve().may_be_secret_name(n.as_bytes()))
        .count();
    assert!(
        turned_away * 2 >= ordinary.len(),
        "only {turned_away} of {} ordinary names turned away",
        ordinary.len()
    );
    for name in [
        ".env",
        "ID_RSA_work",
        "prod.PEM",
        "x.tfstate~",
        "Service-Account-1.json",
        ".dev.vars.x",
    ] {
        assert!(sieve().may_be_secret_name(name.as_bytes()), "{name}");
    }
}

#[test]
fn the_pair_sieve_never_turns_away_a_pair_directory() {
    for (dir, entry, _) in SECRET_PAIRS {
        for d in [dir.to_string(), dir.to_ascii_uppercase()] {
            assert!(sieve().may_be_pair_parent(d.as_bytes()), "{d}");
            assert!(
                crate::credential::is_secret_pair(d.as_bytes(), entry.as_bytes()),
                "{d}/{entry}"
            );
        }
    }
    assert!(!sieve().may_be_pair_parent(b""));
}
