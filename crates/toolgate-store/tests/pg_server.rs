//! The PostgreSQL server the team-store tests run against: the one
//! `scripts/setup-postgres.sh` started (`TOOLGATE_TEST_PG_URL` and
//! `TOOLGATE_TEST_PG_PASSWORD_FILE`, or the `env` file the script writes), a
//! fresh database per test. Without a server the tests fail under `CI=true`
//! and are skipped, loudly, elsewhere.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};

use toolgate_store::PgConfig;

/// The server's URL (its `postgres` database) and the password.
pub fn server() -> Option<(String, String)> {
    let (url, password_file) = match (
        std::env::var("TOOLGATE_TEST_PG_URL"),
        std::env::var("TOOLGATE_TEST_PG_PASSWORD_FILE"),
    ) {
        (Ok(u), Ok(p)) => (u, PathBuf::from(p)),
        _ => from_env_file()?,
    };
    let password = std::fs::read_to_string(&password_file).ok()?;
    Some((url, password.trim().to_string()))
}

fn from_env_file() -> Option<(String, PathBuf)> {
    let tmp = std::env::var_os("TMPDIR").map_or_else(|| PathBuf::from("/tmp"), PathBuf::from);
    let text = std::fs::read_to_string(tmp.join("toolgate-pg/env")).ok()?;
    let get = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("export {key}=")))
            .map(|v| v.trim_matches('\'').to_string())
    };
    Some((
        get("TOOLGATE_TEST_PG_URL")?,
        get("TOOLGATE_TEST_PG_PASSWORD_FILE")?.into(),
    ))
}

/// The server, or `None` after saying why the test is skipped; under
/// `CI=true` a missing server fails the test.
pub fn server_or_skip() -> Option<(String, String)> {
    let found = server();
    if found.is_none() {
        let setup = "bash scripts/setup-postgres.sh";
        assert!(
            std::env::var("CI").as_deref() != Ok("true"),
            "no PostgreSQL server for the team-store tests (run `{setup}`, which sets TOOLGATE_TEST_PG_URL)"
        );
        eprintln!("SKIPPED: no PostgreSQL server for the team-store tests; run `{setup}`");
    }
    found
}

/// A database of one test: its URL (no password) and the password; dropped
/// (with its connections) when the test ends, so runs leave nothing behind.
pub struct TestDb {
    db: (String, String),
    name: String,
    server: (String, String),
}

impl std::ops::Deref for TestDb {
    type Target = (String, String);
    fn deref(&self) -> &(String, String) {
        &self.db
    }
}

impl Drop for TestDb {
    fn drop(&mut self) {
        let (url, password, name) = (
            self.server.0.clone(),
            self.server.1.clone(),
            self.name.clone(),
        );
        // Best effort, on a thread of its own: never a second panic.
        let _ = std::thread::spawn(move || {
            let mut config: postgres::Config = url.parse().ok()?;
            config.password(&password);
            let mut client = config.connect(postgres::NoTls).ok()?;
            client
                .batch_execute(&format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                .ok()
        })
        .join();
    }
}

/// A new, empty database on the server.
pub fn fresh_database(tag: &str) -> Option<TestDb> {
    let (url, password) = server_or_skip()?;
    static N: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "tg_{tag}_{}_{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    execute(
        &url,
        &password,
        &[
            &format!("DROP DATABASE IF EXISTS {name}"),
            &format!("CREATE DATABASE {name}"),
        ],
    );
    let base = url.rsplit_once('/').unwrap().0;
    Some(TestDb {
        db: (format!("{base}/{name}"), password.clone()),
        name,
        server: (url, password),
    })
}

/// Runs each statement on its own, as the superuser, on a thread of its own
/// (the synchronous client cannot run on an async test's thread).
pub fn execute(url: &str, password: &str, statements: &[&str]) {
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut config: postgres::Config = url.parse().unwrap();
            config.password(password);
            let mut client = config.connect(postgres::NoTls).unwrap();
            for sql in statements {
                client.batch_execute(sql).unwrap();
            }
        })
        .join()
        .unwrap();
    });
}

/// The store's config for a database made by [`fresh_database`].
pub fn config((url, password): &(String, String)) -> PgConfig {
    PgConfig::parse(url, Some(password.clone())).unwrap()
}

/// `scripts/setup-postgres.sh` in the repository.
pub fn script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scripts/setup-postgres.sh")
}

/// A port nobody listens on now.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A cluster of this test's own (for stopping and starting it): runs the
/// setup script with its own directory and port.
pub struct OwnCluster {
    pub dir: tempfile::TempDir,
    pub port: u16,
}

impl OwnCluster {
    pub fn start() -> OwnCluster {
        let dir = tempfile::tempdir().unwrap();
        // The server's account must reach the cluster directory.
        std::fs::set_permissions(
            dir.path(),
            std::os::unix::fs::PermissionsExt::from_mode(0o755),
        )
        .unwrap();
        let c = OwnCluster {
            dir,
            port: free_port(),
        };
        c.run("start");
        c
    }

    pub fn run(&self, action: &str) {
        let status = std::process::Command::new("bash")
            .arg(script())
            .arg(action)
            .env("TOOLGATE_PG_DIR", self.dir.path())
            .env("TOOLGATE_PG_PORT", self.port.to_string())
            .stdout(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(status.success(), "setup-postgres.sh {action} failed");
    }

    pub fn url_and_password(&self) -> (String, String) {
        let password = std::fs::read_to_string(self.dir.path().join("password")).unwrap();
        (
            format!("postgres://toolgate@127.0.0.1:{}/postgres", self.port),
            password.trim().to_string(),
        )
    }
}

impl Drop for OwnCluster {
    fn drop(&mut self) {
        self.run("stop");
    }
}
