//! A reader of git's index file (`.git/index`): the paths the repository
//! tracks, with each entry's mode and the device and inode its stat data
//! recorded. Formats 2, 3 (extended flags) and 4 (prefix-compressed paths),
//! as `gitformat-index(5)` describes them, for SHA-1 and SHA-256
//! repositories.
//!
//! The reader bounds its work ([`MAX_INDEX_BYTES`], one pass, no allocation
//! beyond the entries) and never guesses: a malformed index, an unknown
//! version or required extension, a split index (`link`, whose entries live
//! in another file) or a sparse one (`sdir`, whose directory entries stand
//! for paths it does not list) is an [`IndexError`], which callers treat as
//! "what the repository tracks is unknown".
//!
//! The object format is not read from the configuration: the entries are
//! parsed with both object-id sizes, and exactly one layout must account for
//! every byte (two that both do are [`IndexError::Ambiguous`]). A SHA-256
//! index's trailing checksum is checked too (`sha2` is at hand; SHA-1 is not).

use sha2::{Digest, Sha256};

/// Index files larger than this are not read (unknown).
pub const MAX_INDEX_BYTES: u64 = 64 << 20;

/// The smallest entry (`v4`, a one-byte path): 40 bytes of stat data, a
/// 20-byte object id, 2 bytes of flags, a varint and a NUL.
const MIN_ENTRY_BYTES: usize = 40 + 20 + 2 + 1 + 1;

/// Mode bits of a regular file.
pub const MODE_FILE: u32 = 0o100000;
/// Mode bits of a symbolic link.
pub const MODE_SYMLINK: u32 = 0o120000;
/// Mode bits of a gitlink (a submodule's commit).
pub const MODE_GITLINK: u32 = 0o160000;
/// The object-type bits of a mode.
pub const MODE_TYPE: u32 = 0o170000;

/// One entry of the index.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IndexEntry {
    /// The path, relative to the top of the work tree, `/`-separated.
    pub path: Vec<u8>,
    /// The mode: [`MODE_FILE`] (with 0644 or 0755), [`MODE_SYMLINK`] or
    /// [`MODE_GITLINK`].
    pub mode: u32,
    /// The device of the file when it was last stat'ed, truncated to 32 bits.
    pub dev: u32,
    /// Its inode, truncated to 32 bits.
    pub ino: u32,
}

/// An index as read.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Index {
    /// 2, 3 or 4.
    pub version: u32,
    /// The entries, in the file's order (several per path during a merge).
    pub entries: Vec<IndexEntry>,
}

/// Why an index is not read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IndexError {
    /// Larger than [`MAX_INDEX_BYTES`].
    #[error("the index is larger than {MAX_INDEX_BYTES} bytes")]
    TooLarge,
    /// Not an index file.
    #[error("the index does not start with the DIRC signature")]
    NotAnIndex,
    /// A version other than 2, 3 and 4.
    #[error("index version {0} is not known")]
    UnknownVersion(u32),
    /// Its bytes do not follow the format.
    #[error("the index is malformed: {0}")]
    Malformed(&'static str),
    /// A split index: most entries are in a shared index file.
    #[error("the index is split (its entries are in a shared index)")]
    Split,
    /// A sparse index: directory entries stand for paths it does not list.
    #[error("the index is sparse (directories stand for the paths below them)")]
    Sparse,
    /// A required extension the reader does not know.
    #[error("the index has an unknown required extension `{0}`")]
    UnknownExtension(String),
    /// Both object-id sizes account for every byte.
    #[error("the index reads as both a SHA-1 and a SHA-256 index")]
    Ambiguous,
    /// The file could not be read.
    #[error("cannot read the index: {0}")]
    Io(String),
}

/// Reads an index from its bytes (see the module documentation).
pub fn parse(bytes: &[u8]) -> Result<Index, IndexError> {
    if bytes.len() as u64 > MAX_INDEX_BYTES {
        return Err(IndexError::TooLarge);
    }
    let sha1 = parse_with(bytes, 20);
    let sha256 = parse_with(bytes, 32).and_then(|index| {
        check_sha256(bytes)?;
        Ok(index)
    });
    match (sha1, sha256) {
        (Ok(_), Ok(_)) => Err(IndexError::Ambiguous),
        (Ok(index), Err(_)) | (Err(_), Ok(index)) => Ok(index),
        (Err(e), Err(_)) => Err(e),
    }
}

/// The trailing SHA-256 over everything before it (all zeros when git was
/// told to skip it, `index.skipHash`).
fn check_sha256(bytes: &[u8]) -> Result<(), IndexError> {
    let split = bytes.len().saturating_sub(32);
    let (body, trailer) = bytes.split_at(split);
    if trailer.iter().all(|b| *b == 0) || Sha256::digest(body).as_slice() == trailer {
        Ok(())
    } else {
        Err(IndexError::Malformed("the SHA-256 checksum does not match"))
    }
}

/// A cursor over the index's bytes, every read bounds-checked.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], IndexError> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|end| *end <= self.bytes.len())
            .ok_or(IndexError::Malformed("an entry runs past the end"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn u32(&mut self) -> Result<u32, IndexError> {
        let b = self.take(4)?;
        Ok(u32::from_be_bytes([b[0], b[1], b[2], b[3]]))
    }

    fn u16(&mut self) -> Result<u16, IndexError> {
        let b = self.take(2)?;
        Ok(u16::from_be_bytes([b[0], b[1]]))
    }

    /// The offset encoding of `OFS_DELTA` (`gitformat-pack(5)`).
    fn varint(&mut self) -> Result<usize, IndexError> {
        let mut c = self.take(1)?[0];
        let mut value = usize::from(c & 0x7f);
        while c & 0x80 != 0 {
            value = value
                .checked_add(1)
                .and_then(|v| v.checked_mul(128))
                .ok_or(IndexError::Malformed("a path prefix length overflows"))?;
            c = self.take(1)?[0];
            value |= usize::from(c & 0x7f);
        }
        Ok(value)
    }

    /// Bytes up to the next NUL (not included; the NUL is consumed).
    fn until_nul(&mut self) -> Result<&'a [u8], IndexError> {
        let rest = &self.bytes[self.pos..];
        let len = rest
            .iter()
            .position(|b| *b == 0)
            .ok_or(IndexError::Malformed("a path is not NUL-terminated"))?;
        let out = &rest[..len];
        self.pos += len + 1;
        Ok(out)
    }
}

/// Flags of an entry.
const FLAG_EXTENDED: u16 = 0x4000;
const NAME_MASK: u16 = 0x0fff;
/// The extended flags that are defined (skip-worktree, intent-to-add).
const EXTENDED_KNOWN: u16 = 0x6000;

/// Parses with object ids (and the trailing checksum) of `hash` bytes.
fn parse_with(bytes: &[u8], hash: usize) -> Result<Index, IndexError> {
    if bytes.len() < 12 + hash {
        return Err(IndexError::Malformed("shorter than a header and checksum"));
    }
    let body = &bytes[..bytes.len() - hash];
    let mut r = Reader {
        bytes: body,
        pos: 0,
    };
    if r.take(4)? != b"DIRC" {
        return Err(IndexError::NotAnIndex);
    }
    let version = r.u32()?;
    if !(2..=4).contains(&version) {
        return Err(IndexError::UnknownVersion(version));
    }
    let count = usize::try_from(r.u32()?).map_err(|_| IndexError::Malformed("entry count"))?;
    if count > body.len() / MIN_ENTRY_BYTES {
        return Err(IndexError::Malformed("more entries than the file can hold"));
    }
    let mut entries = Vec::with_capacity(count);
    let mut previous: Vec<u8> = Vec::new();
    let mut invalid_path = false;
    for _ in 0..count {
        let start = r.pos;
        // ctime, mtime: 16 bytes.
        r.take(16)?;
        let dev = r.u32()?;
        let ino = r.u32()?;
        let mode = r.u32()?;
        // uid, gid, size, then the object id.
        r.take(12 + hash)?;
        let flags = r.u16()?;
        if flags & FLAG_EXTENDED != 0 {
            if version < 3 {
                return Err(IndexError::Malformed("extended flags in a version 2 index"));
            }
            if r.u16()? & !EXTENDED_KNOWN != 0 {
                return Err(IndexError::Malformed("unknown extended flags"));
            }
        }
        let type_bits = mode & MODE_TYPE;
        if !matches!(type_bits, MODE_FILE | MODE_SYMLINK | MODE_GITLINK) {
            // Directories of a sparse index (mode 040000) land here too.
            return Err(IndexError::Malformed("an entry of unknown mode"));
        }
        let name_len = usize::from(flags & NAME_MASK);
        let path = if version == 4 {
            let strip = r.varint()?;
            let keep = previous
                .len()
                .checked_sub(strip)
                .ok_or(IndexError::Malformed(
                    "a path prefix longer than the last path",
                ))?;
            let suffix = r.until_nul()?;
            let mut path = Vec::with_capacity(keep + suffix.len());
            path.extend_from_slice(&previous[..keep]);
            path.extend_from_slice(suffix);
            path
        } else {
            let name = r.until_nul()?.to_vec();
            // 1-8 NULs pad the entry to a multiple of 8 bytes.
            let used = r.pos - start;
            let padded = (used - 1 + 8) & !7;
            r.take(padded - used)?;
            name
        };
        if name_len != usize::from(NAME_MASK) && name_len != path.len() {
            return Err(IndexError::Malformed(
                "a path's length disagrees with its flags",
            ));
        }
        // A split index's entries may have no name: told by its `link`
        // extension, after the entries.
        invalid_path |= !valid_path(&path);
        previous.clone_from(&path);
        entries.push(IndexEntry {
            path,
            mode,
            dev,
            ino,
        });
    }
    // Extensions, up to the checksum.
    while r.pos < body.len() {
        let signature = r.take(4)?;
        let size = usize::try_from(r.u32()?).map_err(|_| IndexError::Malformed("size"))?;
        r.take(size)?;
        match signature {
            b"link" => return Err(IndexError::Split),
            b"sdir" => return Err(IndexError::Sparse),
            s if s[0].is_ascii_uppercase() => {}
            s => {
                return Err(IndexError::UnknownExtension(
                    String::from_utf8_lossy(s).into(),
                ));
            }
        }
    }
    if invalid_path {
        return Err(IndexError::Malformed("a path git does not allow"));
    }
    Ok(Index { version, entries })
}

/// A path as git stores it: not empty, no leading or trailing `/`, no empty,
/// `.`, `..` or `.git` component.
fn valid_path(path: &[u8]) -> bool {
    !path.is_empty()
        && path
            .split(|b| *b == b'/')
            .all(|c| !c.is_empty() && c != b"." && c != b".." && !c.eq_ignore_ascii_case(b".git"))
}

#[cfg(test)]
mod tests;
