//! Core's event-query port as the store implements it, against real SQLite files.

// A failed setup step should stop a test loudly.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::common;

use std::sync::Arc;

use common::{event, raw, write_events};
use toolgate_core::EventSink;
use toolgate_core::event_query::{EventFilter, EventQuery, Problem, QueryError, VerifyReport};
use toolgate_store::{Durability, EventLog, EventReader, LogQuery};

fn seqs(query: &dyn EventQuery, filter: &EventFilter) -> Vec<u64> {
    query.query(filter).unwrap().iter().map(|e| e.seq).collect()
}

fn session(name: &str) -> EventFilter {
    EventFilter {
        session: Some(name.into()),
        ..EventFilter::default()
    }
}

#[tokio::test]
async fn every_implementation_answers_the_same_queries() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let log = Arc::new(EventLog::open(&path, Durability::Normal).unwrap());
    for n in 1..=6 {
        log.submit(event(n)).await.unwrap();
    }
    let ports: Vec<(&str, Arc<dyn EventQuery>)> = vec![
        ("EventLog", log.clone()),
        ("EventReader", Arc::new(EventReader::open(&path).unwrap())),
        ("LogQuery", Arc::new(LogQuery::new(&path))),
    ];
    let newest_two = EventFilter {
        limit: Some(2),
        tail: true,
        ..EventFilter::default()
    };
    for (name, port) in &ports {
        assert_eq!(seqs(port.as_ref(), &session("s1")), vec![1, 4], "{name}");
        assert_eq!(seqs(port.as_ref(), &newest_two), vec![5, 6], "{name}");
        let all = port.query(&EventFilter::default()).unwrap();
        assert_eq!(all[2].event, event(3), "{name}");
        assert_eq!(
            port.verify().unwrap(),
            VerifyReport::Ok { events: 6 },
            "{name}"
        );
    }
    // Events appended later are seen by every open handle.
    log.submit(event(7)).await.unwrap();
    for (name, port) in &ports {
        assert_eq!(seqs(port.as_ref(), &session("s1")), vec![1, 4, 7], "{name}");
    }
}

#[tokio::test]
async fn a_log_query_waits_for_the_file_and_then_keeps_its_connection() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    let query = LogQuery::new(&path);
    match query.query(&EventFilter::default()) {
        Err(QueryError::NoLog(place)) => assert_eq!(place, path.display().to_string()),
        other => panic!("expected no log yet, got {other:?}"),
    }
    assert!(matches!(query.verify(), Err(QueryError::NoLog(_))));
    assert!(!path.exists(), "querying must never create the log");

    write_events(&path, 3).await;
    assert_eq!(seqs(&query, &EventFilter::default()), vec![1, 2, 3]);
    // The file is gone from its name, yet the open connection still reads it:
    // the query does not reopen the file for each request.
    std::fs::rename(&path, dir.path().join("moved.db")).unwrap();
    assert_eq!(seqs(&query, &EventFilter::default()), vec![1, 2, 3]);
    assert!(query.verify().unwrap().is_ok());
}

#[tokio::test]
async fn a_tampered_log_is_reported_broken_through_the_port() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    write_events(&path, 4).await;
    let query: Arc<dyn EventQuery> = Arc::new(LogQuery::new(&path));
    assert!(query.verify().unwrap().is_ok());
    raw(&path)
        .execute(
            "UPDATE events SET payload = json_set(payload, '$.tool', 'bash') WHERE seq = 2",
            [],
        )
        .unwrap();
    match query.verify().unwrap() {
        VerifyReport::Broken { seq, problem, .. } => {
            assert_eq!((seq, problem), (2, Problem::Edited));
        }
        ok => panic!("tampering went unnoticed: {ok}"),
    }
}

#[tokio::test]
async fn a_file_that_is_not_a_log_fails_and_keeps_the_cause() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("events.db");
    std::fs::write(&path, "not sqlite at all, just text that is long enough").unwrap();
    let err = LogQuery::new(&path)
        .query(&EventFilter::default())
        .unwrap_err();
    assert!(matches!(err, QueryError::Failed(_)), "{err}");
    let cause = std::error::Error::source(&err).and_then(std::error::Error::source);
    assert!(
        cause.is_some_and(|c| c.downcast_ref::<toolgate_store::StoreError>().is_some()),
        "{err:?}"
    );
}
