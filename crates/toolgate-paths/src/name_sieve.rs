//! A quick and sound "certainly not" for the credential name tables: a walker
//! asks about every entry of a tree, and most names (`main.rs`,
//! `entry-0042.txt`) share neither a first byte with any name the tables
//! match from its start nor a three-byte ending with any they match from its
//! end, so they are answered with two table reads instead of a comparison
//! against every row (about a tenth of a 1,000-entry `list` went there).
//!
//! The sieve is built from the same tables as the full check (see
//! [`crate::credential`]), never from a list of its own, and only ever says
//! "maybe" or "no": "no" is given only where no row could match.

use std::sync::OnceLock;

use crate::credential::{
    BACKUP_SUFFIXES, ENV_PREFIX, PRIVATE_KEY_PREFIXES, SECRET_DIRS, SECRET_FILES,
    SECRET_NAME_SHAPES, SECRET_PAIRS, SECRET_SUFFIXES,
};

/// How many bytes of an ending are compared through the sorted keys.
const END_BYTES: usize = 3;

/// The folded first bytes and endings the tables can match.
#[derive(Debug)]
pub(crate) struct NameSieve {
    /// First bytes (ASCII lower case) of every row matched from a name's start.
    starts: [bool; 256],
    /// Last [`END_BYTES`] bytes (lower case) of every row matched from a
    /// name's end, as 24-bit keys, sorted.
    ends: Vec<u32>,
    /// Rows matched from the end that are shorter than [`END_BYTES`] (`~`).
    short_ends: Vec<&'static str>,
    /// First bytes of the directories of the pair table.
    pair_parents: [bool; 256],
}

fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

fn end_key(end: &[u8]) -> u32 {
    end.iter()
        .fold(0u32, |key, &b| (key << 8) | u32::from(fold(b)))
}

fn first(starts: &mut [bool; 256], text: &str) {
    if let Some(&b) = text.as_bytes().first() {
        starts[usize::from(fold(b))] = true;
    }
}

impl NameSieve {
    fn build() -> NameSieve {
        let mut sieve = NameSieve {
            starts: [false; 256],
            ends: Vec::new(),
            short_ends: Vec::new(),
            pair_parents: [false; 256],
        };
        let from_start = SECRET_FILES
            .iter()
            .chain(SECRET_DIRS)
            .map(|(name, _)| *name)
            .chain(PRIVATE_KEY_PREFIXES.iter().copied())
            .chain([ENV_PREFIX]);
        for text in from_start {
            first(&mut sieve.starts, text);
        }
        let mut from_end: Vec<&'static str> = SECRET_SUFFIXES
            .iter()
            .chain(BACKUP_SUFFIXES)
            .map(|(end, _)| *end)
            .collect();
        for (start, end, _) in SECRET_NAME_SHAPES {
            // A shape is found by its start when it has one, else by its end.
            match (start.is_empty(), end.is_empty()) {
                (false, _) => first(&mut sieve.starts, start),
                (true, false) => from_end.push(end),
                // A shape with neither matches every name: never say no.
                (true, true) => sieve.starts = [true; 256],
            }
        }
        for end in from_end {
            let bytes = end.as_bytes();
            match bytes.len().checked_sub(END_BYTES) {
                Some(cut) => sieve.ends.push(end_key(&bytes[cut..])),
                None => sieve.short_ends.push(end),
            }
        }
        sieve.ends.sort_unstable();
        sieve.ends.dedup();
        for (dir, _, _) in SECRET_PAIRS {
            first(&mut sieve.pair_parents, dir);
        }
        sieve
    }

    /// False only when no row of the name tables (files, directories, endings,
    /// shapes, key names, `.env` variants, backups of any of them) can match
    /// `name`.
    pub(crate) fn may_be_secret_name(&self, name: &[u8]) -> bool {
        let Some(&head) = name.first() else {
            return false;
        };
        if self.starts[usize::from(fold(head))] {
            return true;
        }
        if self.short_ends.iter().any(|end| {
            name.len() >= end.len()
                && name[name.len() - end.len()..].eq_ignore_ascii_case(end.as_bytes())
        }) {
            return true;
        }
        match name.len().checked_sub(END_BYTES) {
            Some(cut) => self.ends.binary_search(&end_key(&name[cut..])).is_ok(),
            // Shorter than any ending compared by key: the full check decides.
            None => true,
        }
    }

    /// False only when `parent` is no directory of the pair table.
    pub(crate) fn may_be_pair_parent(&self, parent: &[u8]) -> bool {
        parent
            .first()
            .is_some_and(|&b| self.pair_parents[usize::from(fold(b))])
    }
}

/// The sieve over the tables, built on first use.
pub(crate) fn sieve() -> &'static NameSieve {
    static SIEVE: OnceLock<NameSieve> = OnceLock::new();
    SIEVE.get_or_init(NameSieve::build)
}

#[cfg(test)]
mod tests;
