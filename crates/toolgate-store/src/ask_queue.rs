//! Asks handed over by short processes (`toolgate hook`) to a long-lived
//! channel (the approval page, `toolgate approvals watch`) in SQLite
//! (`<data_dir>/asks.db`).
//!
//! A hook process lives for one call, so it cannot show a page or hold a
//! terminal: it [posts](AskQueue::post) its ask with a deadline and polls
//! for the [answer](AskQueue::answer_of); a channel lists the
//! [pending](AskQueue::pending) asks, shows each to the person, and
//! [answers](AskQueue::answer) it. The first answer wins; an answer after
//! the deadline is refused, and the asker [withdraws](AskQueue::withdraw)
//! its row whether or not it was answered.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use toolgate_core::now_ms;
use toolgate_policy::approvals::{Answer, AskPrompt};

use crate::error::StoreError;
use crate::sqlite::{self, Access, FileKind};

const ASK_FILE: FileKind = FileKind {
    name: "ask queue",
    // "TGAQ"
    application_id: 0x5447_4151,
    version: 1,
    page_size: 4096,
    upgrades: &[],
    schema: "
        CREATE TABLE asks (
            id          INTEGER PRIMARY KEY AUTOINCREMENT,
            created_ms  INTEGER NOT NULL,
            deadline_ms INTEGER NOT NULL,
            agent       TEXT NOT NULL,
            prompt      TEXT NOT NULL,
            answer      TEXT,
            answered_by TEXT
        );
    ",
};

/// An ask waiting for a person, as a channel lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedAsk {
    /// Its id in the queue.
    pub id: i64,
    /// The agent whose call it is (`codex`, `gemini`…).
    pub agent: String,
    /// What is asked.
    pub prompt: AskPrompt,
    /// When the asker stops waiting, ms since the Unix epoch.
    pub deadline_ms: i64,
}

/// The answer a channel gave, and which channel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct QueuedAnswer {
    /// The person's answer.
    pub answer: Answer,
    /// The channel that answered (`page`, `terminal`).
    pub answered_by: String,
}

/// The queue of handed-over asks (one connection).
#[derive(Debug)]
pub struct AskQueue {
    conn: Connection,
}

impl AskQueue {
    /// Opens (creating if needed) the queue at `path`.
    pub fn open(path: impl AsRef<Path>) -> Result<AskQueue, StoreError> {
        let conn = sqlite::open(path.as_ref(), ASK_FILE, Access::ReadWrite)?;
        Ok(AskQueue { conn })
    }

    /// Posts an ask of `agent` that waits until `deadline_ms`; returns its id.
    pub fn post(
        &self,
        agent: &str,
        prompt: &AskPrompt,
        deadline_ms: i64,
    ) -> Result<i64, StoreError> {
        let json = serde_json::to_string(prompt).map_err(StoreError::Serialize)?;
        self.conn
            .execute(
                "INSERT INTO asks (created_ms, deadline_ms, agent, prompt) VALUES (?1, ?2, ?3, ?4)",
                params![now_ms(), deadline_ms, agent, json],
            )
            .map_err(StoreError::sqlite("posting an ask"))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// The answer to ask `id`, once a channel gave one.
    pub fn answer_of(&self, id: i64) -> Result<Option<QueuedAnswer>, StoreError> {
        let row: Option<(Option<String>, Option<String>)> = self
            .conn
            .prepare_cached("SELECT answer, answered_by FROM asks WHERE id = ?1")
            .and_then(|mut s| s.query_row([id], |r| Ok((r.get(0)?, r.get(1)?))).optional())
            .map_err(StoreError::sqlite("reading an ask's answer"))?;
        let Some((Some(answer), by)) = row else {
            return Ok(None);
        };
        let answer = serde_json::from_str(&answer).map_err(StoreError::Serialize)?;
        Ok(Some(QueuedAnswer {
            answer,
            answered_by: by.unwrap_or_default(),
        }))
    }

    /// Removes ask `id` (answered, or given up on by its asker).
    pub fn withdraw(&self, id: i64) -> Result<(), StoreError> {
        self.conn
            .execute("DELETE FROM asks WHERE id = ?1", [id])
            .map_err(StoreError::sqlite("withdrawing an ask"))?;
        Ok(())
    }

    /// The asks still waiting for an answer, oldest first. Rows past their
    /// deadline (of an asker that was killed before it withdrew) are
    /// removed.
    pub fn pending(&self) -> Result<Vec<QueuedAsk>, StoreError> {
        let now = now_ms();
        self.conn
            .execute("DELETE FROM asks WHERE deadline_ms < ?1", [now - 60_000])
            .map_err(StoreError::sqlite("removing stale asks"))?;
        let mut stmt = self
            .conn
            .prepare_cached(
                "SELECT id, agent, prompt, deadline_ms FROM asks
                 WHERE answer IS NULL AND deadline_ms > ?1 ORDER BY id",
            )
            .map_err(StoreError::sqlite("listing asks"))?;
        let rows = stmt
            .query_map([now], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .map_err(StoreError::sqlite("listing asks"))?;
        let mut asks = Vec::new();
        for row in rows {
            let (id, agent, prompt, deadline_ms) =
                row.map_err(StoreError::sqlite("listing asks"))?;
            match serde_json::from_str(&prompt) {
                Ok(prompt) => asks.push(QueuedAsk {
                    id,
                    agent,
                    prompt,
                    deadline_ms,
                }),
                // A row this build cannot read is never shown (nor answered).
                Err(e) => tracing::warn!(id, error = %e, "skipping an unreadable queued ask"),
            }
        }
        Ok(asks)
    }

    /// Whether ask `id` is still waiting for an answer (not answered, not
    /// withdrawn, not past its deadline).
    pub fn is_waiting(&self, id: i64) -> Result<bool, StoreError> {
        self.conn
            .prepare_cached(
                "SELECT count(*) FROM asks WHERE id = ?1 AND answer IS NULL AND deadline_ms > ?2",
            )
            .and_then(|mut s| s.query_row(params![id, now_ms()], |r| r.get::<_, i64>(0)))
            .map(|n| n > 0)
            .map_err(StoreError::sqlite("reading an ask"))
    }

    /// Answers ask `id` for the person, through channel `by`. False when
    /// it is no longer waiting (answered by another channel, withdrawn, or
    /// past its deadline): the first answer wins.
    pub fn answer(&self, id: i64, answer: &Answer, by: &str) -> Result<bool, StoreError> {
        let json = serde_json::to_string(answer).map_err(StoreError::Serialize)?;
        let changed = self
            .conn
            .execute(
                "UPDATE asks SET answer = ?2, answered_by = ?3
                 WHERE id = ?1 AND answer IS NULL AND deadline_ms > ?4",
                params![id, json, by, now_ms()],
            )
            .map_err(StoreError::sqlite("answering an ask"))?;
        Ok(changed == 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolgate_core::Risk;
    use toolgate_policy::approvals::AskItem;

    fn prompt() -> AskPrompt {
        AskPrompt {
            session_id: "codex:s1".into(),
            call_id: "c1".into(),
            tool: "shell".into(),
            items: vec![AskItem {
                action: "bash".into(),
                resource: "git push".into(),
                risk: Risk::Network,
                reason: "network access".into(),
                save_pattern: None,
            }],
            offer_session: false,
            offer_always: false,
            timeout_ms: 10_000,
            preview: None,
        }
    }

    #[test]
    fn the_first_answer_wins_and_the_asker_reads_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("asks.db");
        let asker = AskQueue::open(&path).unwrap();
        let channel = AskQueue::open(&path).unwrap();
        let id = asker.post("codex", &prompt(), now_ms() + 10_000).unwrap();
        let pending = channel.pending().unwrap();
        assert_eq!(pending.len(), 1);
        assert_eq!(pending[0].prompt, prompt());
        assert_eq!(asker.answer_of(id).unwrap(), None);
        assert!(channel.answer(id, &Answer::Once, "terminal").unwrap());
        assert!(
            !channel
                .answer(id, &Answer::Reject { message: None }, "page")
                .unwrap()
        );
        let got = asker.answer_of(id).unwrap().unwrap();
        assert_eq!(got.answer, Answer::Once);
        assert_eq!(got.answered_by, "terminal");
        assert!(channel.pending().unwrap().is_empty());
        asker.withdraw(id).unwrap();
        assert_eq!(asker.answer_of(id).unwrap(), None);
    }

    #[test]
    fn an_answer_after_the_deadline_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let queue = AskQueue::open(dir.path().join("asks.db")).unwrap();
        let id = queue.post("gemini", &prompt(), now_ms() - 1).unwrap();
        assert!(queue.pending().unwrap().is_empty());
        assert!(!queue.is_waiting(id).unwrap());
        assert!(!queue.answer(id, &Answer::Once, "terminal").unwrap());
        assert_eq!(queue.answer_of(id).unwrap(), None);
    }
}
