//! The team store against a real PostgreSQL server (see `pg_server`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use toolgate_core::event_query::{EventFilter, EventQuery, QueryError, VerifyReport};
use toolgate_core::{Event, EventSink, SinkError};
use toolgate_policy::approvals::{ApprovalStore, ApprovalStoreError};
use toolgate_store::{APPROVALS_TTL, AppendMode, PgApprovals, PgConfig, PgEventLog};

use crate::common::event;
use crate::pg_server::{OwnCluster, config, execute, fresh_database};

fn stamped(n: u64, person: &str, machine: &str, agent: &str) -> Event {
    let mut e = event(n);
    e.payload.person = Some(person.into());
    e.payload.machine = Some(machine.into());
    e.payload.agent = Some(agent.into());
    e
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_writers_append_one_gapless_chain_that_verifies() {
    let Some(db) = fresh_database("chain") else {
        return;
    };
    // Both ways of appending, at once on one chain.
    let logs: Vec<Arc<PgEventLog>> = (0..4)
        .map(|i| {
            let mode = if i % 2 == 0 {
                AppendMode::Adaptive
            } else {
                AppendMode::Locked
            };
            Arc::new(PgEventLog::open_with(config(&db), mode).unwrap())
        })
        .collect();
    let per_writer = 300u64;
    let mut tasks = Vec::new();
    for (w, log) in logs.iter().enumerate() {
        let log = Arc::clone(log);
        tasks.push(tokio::spawn(async move {
            let mut seqs = Vec::new();
            for n in 0..per_writer {
                let e = stamped(
                    w as u64 * 1000 + n,
                    &format!("p{w}"),
                    &format!("m{w}"),
                    "test",
                );
                // Some calls submit two events at once, as the pipeline does.
                if n % 3 == 0 {
                    let last = log.submit_batch(vec![e.clone(), e]).await.unwrap();
                    seqs.extend([last - 1, last]);
                } else {
                    seqs.push(log.submit(e).await.unwrap());
                }
            }
            seqs
        }));
    }
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort_unstable();
    let total = all.len() as u64;
    assert_eq!(total, 4 * (per_writer + per_writer.div_ceil(3)));
    assert_eq!(
        all,
        (1..=total).collect::<Vec<_>>(),
        "every seq once, no gap"
    );
    let reader = PgEventLog::open(config(&db)).unwrap();
    assert_eq!(reader.verify().unwrap(), VerifyReport::Ok { events: total });
    // Fewer transactions than events: commits were grouped.
    let commits: u64 = logs.iter().map(|l| l.stats().commits).sum();
    assert!(commits <= total, "{commits} commits for {total} events");
    // The filters on who and where.
    let p2 = reader
        .query(&EventFilter {
            person: Some("p2".into()),
            ..EventFilter::default()
        })
        .unwrap();
    assert_eq!(p2.len() as u64, total / 4);
    assert!(
        p2.iter()
            .all(|e| e.event.payload.machine.as_deref() == Some("m2"))
    );
    let tail = reader
        .query(&EventFilter {
            machine: Some("m1".into()),
            agent: Some("test".into()),
            limit: Some(5),
            tail: true,
            ..EventFilter::default()
        })
        .unwrap();
    assert_eq!(tail.len(), 5);
    assert!(tail.windows(2).all(|w| w[0].seq < w[1].seq));
    assert_eq!(reader.last_seq().unwrap(), total);
}

#[tokio::test]
async fn an_edited_or_deleted_row_is_found_by_verify() {
    let Some(db) = fresh_database("tamper") else {
        return;
    };
    let log = PgEventLog::open(config(&db)).unwrap();
    for n in 1..=20 {
        log.submit(event(n)).await.unwrap();
    }
    assert!(log.verify().unwrap().is_ok());
    execute(
        &db.0,
        &db.1,
        &[
            "UPDATE toolgate_events SET payload = replace(payload, '\"read\"', '\"edit\"') WHERE seq = 7",
        ],
    );
    match log.verify().unwrap() {
        VerifyReport::Broken { seq, .. } => assert_eq!(seq, 7),
        ok => panic!("an edit went unnoticed: {ok}"),
    }
    execute(
        &db.0,
        &db.1,
        &["DELETE FROM toolgate_events WHERE seq >= 7"],
    );
    let report = log.verify().unwrap();
    assert!(
        report.to_string().contains("removed from the end"),
        "{report}"
    );
}

#[tokio::test]
async fn an_unreachable_database_refuses_events_and_names_it() {
    let port = crate::pg_server::free_port();
    let config = PgConfig::parse(
        &format!("postgres://tg@127.0.0.1:{port}/audit"),
        Some("x".into()),
    )
    .unwrap();
    let log = PgEventLog::open(config).unwrap();
    let started = Instant::now();
    let err = log.submit(event(1)).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(10));
    let text = err.to_string();
    assert!(matches!(err, SinkError::Storage(_)), "{text}");
    assert!(
        text.contains(&format!("postgres://tg@127.0.0.1:{port}/audit")),
        "{text}"
    );
    assert!(text.contains("not recorded"), "{text}");
    assert!(log.check().is_err());
    assert!(matches!(
        EventQuery::verify(&log),
        Err(QueryError::Failed(_))
    ));
}

#[tokio::test]
async fn a_wrong_password_is_a_clear_error() {
    let Some(db) = fresh_database("password") else {
        return;
    };
    let url = &db.0;
    let log = PgEventLog::open(PgConfig::parse(url, Some("wrong".into())).unwrap()).unwrap();
    let err = log.check().unwrap_err().to_string();
    assert!(err.contains("password authentication failed"), "{err}");
    assert!(err.contains(url.as_str()), "{err}");
}

#[tokio::test]
async fn a_fresh_database_reads_as_no_log_yet() {
    let Some(db) = fresh_database("empty") else {
        return;
    };
    let log = PgEventLog::open(config(&db)).unwrap();
    assert!(matches!(
        EventQuery::query(&log, &EventFilter::default()),
        Err(QueryError::NoLog(_))
    ));
    log.submit(event(1)).await.unwrap();
    assert_eq!(
        EventQuery::query(&log, &EventFilter::default())
            .unwrap()
            .len(),
        1
    );
}

#[test]
fn approvals_are_shared_with_who_and_where_and_revocations_reach_everyone() {
    let Some(db) = fresh_database("approvals") else {
        return;
    };
    let laptop = PgApprovals::open(config(&db), "ada@laptop", "laptop").unwrap();
    let ci = PgApprovals::open(config(&db), "ci@runner", "runner-7").unwrap();
    // Warm the runner's cache with "nothing saved".
    assert!(ci.list_project("/ws").unwrap().is_empty());
    let saved = laptop.save("/ws", "bash", "cargo test *").unwrap();
    assert_eq!(saved.approved_by.as_deref(), Some("ada@laptop"));
    assert_eq!(saved.machine.as_deref(), Some("laptop"));
    // Saving the same again returns the first one.
    assert_eq!(ci.save("/ws", "bash", "cargo test *").unwrap(), saved);
    // The runner sees it within the cache's lifetime.
    let seen = wait_for(|| ci.list_project("/ws").unwrap().len() == 1);
    assert!(
        seen <= APPROVALS_TTL + Duration::from_millis(500),
        "{seen:?}"
    );
    assert_eq!(
        ci.list_all().unwrap()[0].approved_by.as_deref(),
        Some("ada@laptop")
    );
    // Revoked on the runner: the laptop stops using it within the TTL.
    assert!(laptop.list_project("/ws").unwrap().len() == 1);
    assert_eq!(ci.revoke(saved.id).unwrap().id, saved.id);
    let gone = wait_for(|| laptop.list_project("/ws").unwrap().is_empty());
    assert!(
        gone <= APPROVALS_TTL + Duration::from_millis(500),
        "{gone:?}"
    );
    assert!(matches!(
        laptop.revoke(saved.id),
        Err(ApprovalStoreError::NotFound(_))
    ));
    assert!(laptop.save("/ws", "", "x").is_err());
}

fn wait_for(mut done: impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < Duration::from_secs(10), "never happened");
        std::thread::sleep(Duration::from_millis(50));
    }
    start.elapsed()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_restart_fails_events_closed_then_the_log_recovers() {
    if crate::pg_server::server_or_skip().is_none() {
        return;
    }
    let cluster = OwnCluster::start();
    let db = cluster.url_and_password();
    let log = PgEventLog::open(config(&db)).unwrap();
    for n in 1..=10 {
        log.submit(event(n)).await.unwrap();
    }
    cluster.run("stop");
    let err = log.submit(event(11)).await.unwrap_err().to_string();
    assert!(
        err.contains(&format!("127.0.0.1:{}", cluster.port)),
        "{err}"
    );
    // Still down: still refused, at once.
    assert!(log.submit(event(12)).await.is_err());
    cluster.run("start");
    let mut recovered = None;
    for _ in 0..50 {
        if let Ok(seq) = log.submit(event(13)).await {
            recovered = Some(seq);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // Nothing refused was stored; the chain goes on from event 10.
    assert_eq!(recovered, Some(11));
    assert_eq!(log.verify().unwrap(), VerifyReport::Ok { events: 11 });
}

#[tokio::test]
async fn a_writer_whose_head_moved_rechains_after_the_other_writers_events() {
    let Some(db) = fresh_database("moved") else {
        return;
    };
    let a = PgEventLog::open(config(&db)).unwrap();
    let b = PgEventLog::open(config(&db)).unwrap();
    assert_eq!(a.submit(event(1)).await.unwrap(), 1);
    // B appends behind A's back: A's remembered head is stale now.
    assert_eq!(b.submit_batch(vec![event(2), event(3)]).await.unwrap(), 3);
    assert_eq!(a.submit(event(4)).await.unwrap(), 4);
    assert_eq!(b.submit(event(5)).await.unwrap(), 5);
    assert_eq!(a.verify().unwrap(), VerifyReport::Ok { events: 5 });
    let calls: Vec<String> = a
        .query(&EventFilter::default())
        .unwrap()
        .into_iter()
        .map(|e| e.event.call_id)
        .collect();
    assert_eq!(calls, ["c1", "c2", "c3", "c4", "c5"]);
}

#[tokio::test]
async fn tables_from_a_newer_toolgate_are_refused_not_written() {
    let Some(db) = fresh_database("newer") else {
        return;
    };
    let log = PgEventLog::open(config(&db)).unwrap();
    log.submit(event(1)).await.unwrap();
    execute(
        &db.0,
        &db.1,
        &["UPDATE toolgate_meta SET value = '99' WHERE key = 'schema_version'"],
    );
    let fresh = PgEventLog::open(config(&db)).unwrap();
    let err = fresh.submit(event(2)).await.unwrap_err().to_string();
    assert!(err.contains("schema version 99"), "{err}");
}
