//! Finding where literal anchors may start in a text, with state small
//! enough to stay in the first-level cache between tool calls.
//!
//! One bitset of hashed three-byte prefixes, folded to ASCII lower case: the
//! first three bytes of every anchor of three bytes or more, and a two-byte
//! anchor followed by each possible byte. One pass over the text tests each
//! position's next three bytes against it; most positions are skipped there,
//! and a position that passes is looked up in a sorted table of the exact
//! prefixes, which gives the anchors to compare in full (the text's last two
//! bytes, which have no third, are looked up directly). About 4.3 KB are read
//! at every byte, where an automaton over the same prefixes was 227 KB and
//! was out of the caches by the time a server checked a call's output.

use super::CheckError;

/// Bits of the hash of a three-byte prefix: 2^15 bits, 4 KB.
const LONG_BITS: u32 = 15;
/// The bitset's length in words.
const WORDS: usize = (1 << LONG_BITS) / 64;
/// Marks a two-byte key, so that it never equals a three-byte one.
const SHORT_TAG: u32 = 1 << 24;

/// Bytes of text folded to lower case at a time (on the stack).
const FOLD_CHUNK: usize = 512;

/// The shortest anchor the filter can hold.
pub(crate) const MIN_ANCHOR_LEN: usize = 2;

/// The filter over a set of anchors, by anchor id.
#[derive(Debug)]
pub(crate) struct AnchorFilter {
    /// ASCII lower case of each byte.
    fold: [u8; 256],
    /// Hashed three-byte prefixes: of the anchors of three bytes or more,
    /// and of each two-byte anchor followed by any byte.
    long: Box<[u64; WORDS]>,
    /// Each exact folded prefix (a three-byte key, or a two-byte key with
    /// [`SHORT_TAG`]), sorted.
    keys: Vec<u32>,
    /// Per key of `keys`: the anchors that start with it.
    anchors: Vec<Vec<usize>>,
}

/// A three-byte key's bit, below 2^[`LONG_BITS`].
fn hash(key: u32) -> usize {
    (key.wrapping_mul(0x9E37_79B1) >> (32 - LONG_BITS)) as usize
}

fn set(bitset: &mut [u64; WORDS], at: usize) {
    bitset[at / 64] |= 1 << (at % 64);
}

fn has(bitset: &[u64; WORDS], at: usize) -> bool {
    bitset[at / 64] & (1 << (at % 64)) != 0
}

impl AnchorFilter {
    /// The filter over `anchors` (anchor id = index); an anchor shorter than
    /// [`MIN_ANCHOR_LEN`] bytes is an error.
    pub(crate) fn new(anchors: &[&[u8]]) -> Result<AnchorFilter, CheckError> {
        let mut fold = [0u8; 256];
        for (b, f) in fold.iter_mut().enumerate() {
            *f = (b as u8).to_ascii_lowercase();
        }
        let mut filter = AnchorFilter {
            fold,
            long: Box::new([0; WORDS]),
            keys: Vec::new(),
            anchors: Vec::new(),
        };
        let mut by_key: Vec<(u32, usize)> = Vec::with_capacity(anchors.len());
        for (id, anchor) in anchors.iter().enumerate() {
            let key = match anchor.len() {
                n if n < MIN_ANCHOR_LEN => {
                    return Err(CheckError::Build(format!(
                        "output check anchor {:?} is shorter than {MIN_ANCHOR_LEN} bytes",
                        String::from_utf8_lossy(anchor)
                    )));
                }
                2 => {
                    let pair = filter.pair(anchor[0], anchor[1]);
                    for next in 0..=255u8 {
                        let key = (pair << 8) | u32::from(filter.fold[usize::from(next)]);
                        set(&mut filter.long, hash(key));
                    }
                    SHORT_TAG | pair
                }
                _ => {
                    let key = filter.triple(anchor[0], anchor[1], anchor[2]);
                    set(&mut filter.long, hash(key));
                    key
                }
            };
            by_key.push((key, id));
        }
        by_key.sort_unstable();
        for (key, id) in by_key {
            if filter.keys.last() != Some(&key) {
                filter.keys.push(key);
                filter.anchors.push(Vec::new());
            }
            if let Some(ids) = filter.anchors.last_mut() {
                ids.push(id);
            }
        }
        Ok(filter)
    }

    fn pair(&self, a: u8, b: u8) -> u32 {
        (u32::from(self.fold[usize::from(a)]) << 8) | u32::from(self.fold[usize::from(b)])
    }

    fn triple(&self, a: u8, b: u8, c: u8) -> u32 {
        (self.pair(a, b) << 8) | u32::from(self.fold[usize::from(c)])
    }

    /// The anchors whose folded prefix is `key`.
    fn lookup(&self, key: u32) -> Option<&[usize]> {
        self.keys
            .binary_search(&key)
            .ok()
            .and_then(|i| self.anchors.get(i))
            .map(Vec::as_slice)
    }

    /// Calls `found(at, ids)` for each position `at` of `text`, in order,
    /// where the anchors `ids` may start: their first two or three bytes
    /// equal the text's there, ignoring ASCII case. Every place where an
    /// anchor occurs (in any case) is reported with that anchor among `ids`;
    /// the caller compares each in full.
    pub(crate) fn candidates(&self, text: &[u8], mut found: impl FnMut(usize, &[usize])) {
        let n = text.len();
        if n < MIN_ANCHOR_LEN {
            return;
        }
        let mut report = |at: usize, key: u32| {
            if let Some(ids) = self.lookup(key) {
                found(at, ids);
            }
        };
        // The text is folded a chunk at a time into a buffer (a loop the
        // compiler vectorises), and each position's key is read from it
        // afresh: no position's key waits for the one before it.
        let mut folded = [0u8; FOLD_CHUNK + 2];
        let mut start = 0;
        while start + 2 < n {
            let end = (start + FOLD_CHUNK + 2).min(n);
            let chunk = &mut folded[..end - start];
            chunk.copy_from_slice(&text[start..end]);
            chunk.make_ascii_lowercase();
            for (i, w) in chunk.windows(3).enumerate() {
                let key = (u32::from(w[0]) << 16) | (u32::from(w[1]) << 8) | u32::from(w[2]);
                if has(&self.long, hash(key)) {
                    report(start + i, SHORT_TAG | (key >> 8));
                    report(start + i, key);
                }
            }
            start = end - 2;
        }
        report(n - 2, SHORT_TAG | self.pair(text[n - 2], text[n - 1]));
    }

    /// The bytes of the filter's tables that every position reads.
    pub(crate) fn hot_bytes(&self) -> usize {
        self.fold.len() + self.long.len() * 8
    }
}

#[cfg(test)]
mod tests {
    use super::AnchorFilter;

    fn all(filter: &AnchorFilter, text: &str) -> Vec<(usize, Vec<usize>)> {
        let mut out = Vec::new();
        filter.candidates(text.as_bytes(), |at, ids| out.push((at, ids.to_vec())));
        out
    }

    /// What `candidates` must report, found the slow way: at each position,
    /// the anchors whose first two (or three) bytes equal the text's there,
    /// ignoring ASCII case.
    fn naive(anchors: &[&[u8]], text: &[u8]) -> Vec<(usize, Vec<usize>)> {
        let mut out: Vec<(usize, Vec<usize>)> = Vec::new();
        for at in 0..text.len() {
            // Two-byte anchors and longer ones are reported apart (as the
            // filter's two keys are), two-byte first.
            for short in [true, false] {
                let ids: Vec<usize> = anchors
                    .iter()
                    .enumerate()
                    .filter(|(_, a)| (a.len() == 2) == short)
                    .filter(|(_, a)| {
                        let k = a.len().min(3);
                        text.get(at..at + k)
                            .is_some_and(|t| t.eq_ignore_ascii_case(&a[..k]))
                    })
                    .map(|(id, _)| id)
                    .collect();
                if !ids.is_empty() {
                    out.push((at, ids));
                }
            }
        }
        out
    }

    #[test]
    fn every_position_is_reported_as_the_slow_way_finds_it_across_chunk_ends() {
        let anchors: &[&[u8]] = &[
            b"SK",
            b"sk-ant-",
            b"![",
            b"<img",
            b"IGNORE",
            b"ign",
            b"\xe2\x80",
            b"zz",
        ];
        let filter = AnchorFilter::new(anchors).unwrap();
        // A deterministic mix of the anchors' bytes and others, long enough to
        // cross several chunks, with anchors placed on and around chunk ends.
        let mut text = Vec::new();
        let mut x: u32 = 0x1234_5678;
        let alphabet = b"skSK-ant![<imgIGNOREignzZ \n\xe2\x80\x8b.";
        while text.len() < 3 * super::FOLD_CHUNK + 7 {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            text.push(alphabet[(x >> 16) as usize % alphabet.len()]);
        }
        let check = |t: &[u8]| {
            let mut got = Vec::new();
            filter.candidates(t, |at, ids| got.push((at, ids.to_vec())));
            assert_eq!(got, naive(anchors, t), "text of {} bytes", t.len());
        };
        // Chunks of positions end at multiples of FOLD_CHUNK: an anchor placed
        // on and around each end, one text per place.
        for edge in [super::FOLD_CHUNK, 2 * super::FOLD_CHUNK] {
            for at in edge - 4..=edge + 4 {
                for anchor in [&b"<IMg"[..], b"sK"] {
                    let mut t = text.clone();
                    t[at..at + anchor.len()].copy_from_slice(anchor);
                    check(&t);
                }
            }
        }
        let f = super::FOLD_CHUNK;
        for len in [2, 3, 4, 5, f + 1, f + 2, f + 3, text.len()] {
            check(&text[..len]);
        }
    }

    #[test]
    fn an_anchor_shorter_than_two_bytes_is_refused() {
        let err = AnchorFilter::new(&[b"ok", b"x"]).unwrap_err();
        assert!(
            err.to_string().contains("\"x\" is shorter than 2 bytes"),
            "{err}"
        );
    }

    #[test]
    fn anchors_are_reported_where_their_prefix_is_in_any_case_and_at_the_text_end() {
        let filter = AnchorFilter::new(&[b"SK", b"sk-ant-", b"sk-proj-", b"![", b"<img"]).unwrap();
        let found = all(&filter, "a sk-x ![ <IMG sK");
        assert_eq!(
            found,
            vec![
                (2, vec![0]),
                (2, vec![1, 2]),
                (7, vec![3]),
                (10, vec![4]),
                (15, vec![0]),
            ]
        );
    }
}
