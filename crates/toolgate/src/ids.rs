//! Ids for sessions and calls that the caller did not name.

/// A fresh id: time plus process id plus a counter, unique enough for logs.
pub fn new_id(prefix: &str) -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    format!(
        "{prefix}-{:x}-{:x}-{}",
        toolgate_core::now_ms(),
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}
