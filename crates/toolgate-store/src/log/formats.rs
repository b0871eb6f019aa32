//! Which hash-chain format each event of a log is in: the `log_formats` table
//! maps the first seq of each run of events to its format.

use rusqlite::Connection;

use crate::canonical::LogFormat;
use crate::error::StoreError;

/// The format runs of one log, in seq order.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FormatRuns(Vec<(i64, LogFormat)>);

impl FormatRuns {
    /// Reads the runs. A log without the table (schema version 1) is format 1
    /// throughout; a format this build does not know is an error naming it.
    pub(crate) fn read(conn: &Connection) -> Result<FormatRuns, StoreError> {
        let has_table: bool = conn
            .query_row(
                "SELECT count(*) > 0 FROM sqlite_master WHERE type = 'table' AND name = 'log_formats'",
                [],
                |r| r.get(0),
            )
            .map_err(StoreError::sqlite("reading the log's formats"))?;
        if !has_table {
            return Ok(FormatRuns(vec![(1, LogFormat::V1)]));
        }
        let mut stmt = conn
            .prepare("SELECT first_seq, format FROM log_formats ORDER BY first_seq")
            .map_err(StoreError::sqlite("reading the log's formats"))?;
        let rows = stmt
            .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
            .map_err(StoreError::sqlite("reading the log's formats"))?;
        let mut runs = Vec::new();
        for row in rows {
            let (first_seq, number) =
                row.map_err(StoreError::sqlite("reading the log's formats"))?;
            let format = LogFormat::from_number(number).ok_or(StoreError::UnknownLogFormat {
                format: number,
                first_seq,
            })?;
            runs.push((first_seq, format));
        }
        Ok(FormatRuns(runs))
    }

    /// Runs read from elsewhere (another store's table), in seq order.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    pub(crate) fn from_runs(runs: Vec<(i64, LogFormat)>) -> FormatRuns {
        FormatRuns(runs)
    }

    /// The format of the event at `seq`. Before the first recorded run (only
    /// in a damaged table) it is format 1, the original.
    pub(crate) fn at(&self, seq: i64) -> LogFormat {
        self.0
            .iter()
            .take_while(|(first, _)| *first <= seq)
            .last()
            .map_or(LogFormat::V1, |(_, format)| *format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_seq_takes_the_format_of_the_run_it_falls_in() {
        let runs = FormatRuns(vec![(1, LogFormat::V1), (11, LogFormat::V2)]);
        assert_eq!(runs.at(1), LogFormat::V1);
        assert_eq!(runs.at(10), LogFormat::V1);
        assert_eq!(runs.at(11), LogFormat::V2);
        assert_eq!(runs.at(1_000), LogFormat::V2);
        assert_eq!(FormatRuns(vec![(5, LogFormat::V2)]).at(4), LogFormat::V1);
    }
}
