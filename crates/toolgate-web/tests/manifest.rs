//! The page sits on core and policy: it reads the audit log through core's
//! event-query port and never depends on the store (the store is only a
//! dev-dependency, for tests with a real SQLite file).

#[test]
fn the_library_does_not_depend_on_the_store() {
    let manifest = include_str!("../Cargo.toml");
    let mut section = "";
    let mut offending = Vec::new();
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
            continue;
        }
        let runtime = matches!(section, "[dependencies]" | "[build-dependencies]")
            || section.starts_with("[target.") && !section.ends_with("dev-dependencies]");
        if runtime && line.starts_with("toolgate-store") {
            offending.push(format!("{section} {line}"));
        }
    }
    assert!(
        offending.is_empty(),
        "toolgate-web depends on the store: {offending:?}"
    );
}
