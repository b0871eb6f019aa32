//! A quick and sound "certainly not" for the credential name tables: a walker
//! asks about every entry of a tree, and most names (`main.rs`,
//! `entry-0042.txt`) share neither their first two bytes with any name the
//! tables match from its start nor a three-byte ending with any they match
//! from its end, so they are answered with two lookups instead of a
//! comparison against every row (about a tenth of a 1,000-entry `list` went
//! there).
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

/// How many bytes of a start are compared, through their bit.
const START_BYTES: usize = 2;
// A start's key is its bit in [`KeyBits`], which holds two-byte keys.
const _: () = assert!(START_BYTES == 2);

/// One bit per two-byte key (65,536 bits): a lookup instead of a binary
/// search, for the question asked of every entry of a tree.
#[derive(Debug)]
struct KeyBits(Box<[u64; 1024]>);

impl KeyBits {
    fn of(keys: impl IntoIterator<Item = u32>) -> KeyBits {
        let mut bits = Box::new([0u64; 1024]);
        for key in keys {
            let key = (key & 0xffff) as usize;
            bits[key / 64] |= 1 << (key % 64);
        }
        KeyBits(bits)
    }

    fn has(&self, key: u32) -> bool {
        let key = (key & 0xffff) as usize;
        self.0[key / 64] & (1 << (key % 64)) != 0
    }
}

/// The folded starts and endings the tables can match.
#[derive(Debug)]
pub(crate) struct NameSieve {
    /// First [`START_BYTES`] bytes (ASCII lower case) of every row matched
    /// from a name's start, as keys.
    starts: KeyBits,
    /// Rows matched from the start that are shorter than [`START_BYTES`]
    /// (`""` for a shape with neither start nor end, which matches all).
    short_starts: Vec<&'static str>,
    /// Last [`END_BYTES`] bytes (lower case) of every row matched from a
    /// name's end, as keys, sorted.
    ends: Vec<u32>,
    /// The last two bytes of those keys: most names are answered by this
    /// lookup, without searching `ends`.
    end_tails: KeyBits,
    /// Rows matched from the end that are shorter than [`END_BYTES`] (`~`).
    short_ends: Vec<&'static str>,
    /// First bytes of the directories of the pair table.
    pair_parents: [bool; 256],
}

fn fold(b: u8) -> u8 {
    b.to_ascii_lowercase()
}

/// The folded bytes as one number (at most four bytes).
fn key(bytes: &[u8]) -> u32 {
    bytes
        .iter()
        .fold(0u32, |key, &b| (key << 8) | u32::from(fold(b)))
}

fn starts_with(name: &[u8], start: &str) -> bool {
    name.len() >= start.len() && name[..start.len()].eq_ignore_ascii_case(start.as_bytes())
}

fn ends_with(name: &[u8], end: &str) -> bool {
    name.len() >= end.len() && name[name.len() - end.len()..].eq_ignore_ascii_case(end.as_bytes())
}

/// Sorted, deduplicated keys of each text's first (or last) `n` bytes; the
/// texts shorter than `n` are returned apart.
fn keys(texts: Vec<&'static str>, n: usize, from_end: bool) -> (Vec<u32>, Vec<&'static str>) {
    let (mut long, mut short) = (Vec::new(), Vec::new());
    for text in texts {
        let bytes = text.as_bytes();
        match bytes.len().checked_sub(n) {
            Some(cut) if from_end => long.push(key(&bytes[cut..])),
            Some(_) => long.push(key(&bytes[..n])),
            None => short.push(text),
        }
    }
    long.sort_unstable();
    long.dedup();
    (long, short)
}

impl NameSieve {
    fn build() -> NameSieve {
        let mut from_start: Vec<&'static str> = SECRET_FILES
            .iter()
            .chain(SECRET_DIRS)
            .map(|(name, _)| *name)
            .chain(PRIVATE_KEY_PREFIXES.iter().copied())
            .chain([ENV_PREFIX])
            .collect();
        let mut from_end: Vec<&'static str> = SECRET_SUFFIXES
            .iter()
            .chain(BACKUP_SUFFIXES)
            .map(|(end, _)| *end)
            .collect();
        for (start, end, _) in SECRET_NAME_SHAPES {
            // A shape is found by its start when it has one, else by its end
            // (a shape with neither keeps an empty start, which every name has).
            if start.is_empty() && !end.is_empty() {
                from_end.push(end);
            } else {
                from_start.push(start);
            }
        }
        let (starts, short_starts) = keys(from_start, START_BYTES, false);
        let (ends, short_ends) = keys(from_end, END_BYTES, true);
        let end_tails = KeyBits::of(ends.iter().copied());
        let mut pair_parents = [false; 256];
        for (dir, _, _) in SECRET_PAIRS {
            if let Some(&b) = dir.as_bytes().first() {
                pair_parents[usize::from(fold(b))] = true;
            }
        }
        NameSieve {
            starts: KeyBits::of(starts),
            short_starts,
            ends,
            end_tails,
            short_ends,
            pair_parents,
        }
    }

    /// False only when no row of the name tables (files, directories, endings,
    /// shapes, key names, `.env` variants, backups of any of them) can match
    /// `name`.
    pub(crate) fn may_be_secret_name(&self, name: &[u8]) -> bool {
        if name.is_empty() {
            return false;
        }
        // A name shorter than the keys: the full check decides.
        let by_start = name
            .get(..START_BYTES)
            .is_none_or(|head| self.starts.has(key(head)));
        let by_end = name.len().checked_sub(END_BYTES).is_none_or(|cut| {
            let end = key(&name[cut..]);
            self.end_tails.has(end) && self.ends.binary_search(&end).is_ok()
        });
        by_start
            || by_end
            || self.short_starts.iter().any(|s| starts_with(name, s))
            || self.short_ends.iter().any(|e| ends_with(name, e))
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
