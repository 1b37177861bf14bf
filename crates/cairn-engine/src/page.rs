//! The common 32-byte page header, page checksums and typed page kinds.
//!
//! Header layout (little-endian):
//! `0..4 crc32c | 4 kind u8 | 5 reserved | 6..8 count u16 | 8..16 page id u64 | 16..24 txn u64 | 24..32 link u64`
//! The checksum covers the page id followed by bytes `4..4096`, so a page written to the wrong place
//! fails its check as surely as a damaged one. `link` is the leftmost child of a branch, the next
//! page of an overflow or free-list chain, and unused in leaves.

use crate::error::{Error, Result};
use crate::limits::PAGE_SIZE;
use std::sync::Arc;

/// A page of zeros: what a new page starts from.
pub(crate) static ZERO_PAGE: &[u8] = &[0; PAGE_SIZE];

/// The index of a page in the data file; page `n` starts at byte `n * 4096`. 0 and 1 are the meta
/// pages, so 0 also serves as "no page".
pub(crate) type PageId = u64;

/// No page (an empty tree, the end of a chain).
pub(crate) const NO_PAGE: PageId = 0;

/// Bytes before the first slot or payload byte of every page.
pub(crate) const HEADER_LEN: usize = 32;

/// An immutable page image shared between the cache, readers and the writer.
pub(crate) type Page = Arc<[u8]>;

/// What a page holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    Meta = 1,
    Branch = 2,
    Leaf = 3,
    Overflow = 4,
    Freelist = 5,
}

impl Kind {
    pub(crate) fn from_u8(v: u8) -> Option<Kind> {
        Some(match v {
            1 => Kind::Meta,
            2 => Kind::Branch,
            3 => Kind::Leaf,
            4 => Kind::Overflow,
            5 => Kind::Freelist,
            _ => return None,
        })
    }
}

pub(crate) fn checksum(id: PageId, bytes: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&id.to_le_bytes()), &bytes[4..PAGE_SIZE])
}

/// A page under construction, built straight into the shared allocation the sealed page lives
/// in: sealing hands it over without another copy.
pub(crate) struct PageBuilder {
    page: Page,
}

impl PageBuilder {
    pub(crate) fn new(kind: Kind) -> Self {
        let mut b = PageBuilder { page: Arc::from(ZERO_PAGE) };
        b.bytes_mut()[4] = kind as u8;
        b
    }

    /// A builder starting from a copy of an existing page (one allocation, one copy).
    pub(crate) fn copy_of(page: &[u8]) -> Self {
        PageBuilder { page: Arc::from(page) }
    }

    /// The bytes being built.
    pub(crate) fn bytes_mut(&mut self) -> &mut [u8] {
        Arc::get_mut(&mut self.page).expect("a page under construction has one owner")
    }

    pub(crate) fn set_count(&mut self, count: u16) {
        self.bytes_mut()[6..8].copy_from_slice(&count.to_le_bytes());
    }

    pub(crate) fn set_link(&mut self, link: u64) {
        self.bytes_mut()[24..32].copy_from_slice(&link.to_le_bytes());
    }

    /// Stamps id, txn and checksum; the result is ready to be written at `id`.
    pub(crate) fn seal(mut self, id: PageId, txn: u64) -> Page {
        let bytes = self.bytes_mut();
        bytes[8..16].copy_from_slice(&id.to_le_bytes());
        bytes[16..24].copy_from_slice(&txn.to_le_bytes());
        let crc = checksum(id, bytes);
        bytes[0..4].copy_from_slice(&crc.to_le_bytes());
        self.page
    }
}

/// Checks length, checksum and self-id of a page read from disk.
pub(crate) fn verify(id: PageId, bytes: &[u8]) -> Result<()> {
    if bytes.len() != PAGE_SIZE {
        return Err(Error::corrupt(Some(id), format!("page is {} bytes, not {PAGE_SIZE}", bytes.len())));
    }
    let stored = u32_at(bytes, 0);
    if stored != checksum(id, bytes) {
        return Err(Error::corrupt(Some(id), "checksum mismatch"));
    }
    if u64_at(bytes, 8) != id {
        return Err(Error::corrupt(Some(id), format!("page claims to be page {}", u64_at(bytes, 8))));
    }
    Ok(())
}

pub(crate) fn kind(bytes: &[u8]) -> Option<Kind> {
    Kind::from_u8(bytes[4])
}

/// Checks that a verified page has the expected kind.
pub(crate) fn expect_kind(id: PageId, bytes: &[u8], want: Kind) -> Result<()> {
    match kind(bytes) {
        Some(k) if k == want => Ok(()),
        other => Err(Error::corrupt(Some(id), format!("expected a {want:?} page, found {other:?}"))),
    }
}

pub(crate) fn count(bytes: &[u8]) -> usize {
    u16_at(bytes, 6) as usize
}

pub(crate) fn link(bytes: &[u8]) -> u64 {
    u64_at(bytes, 24)
}

pub(crate) fn txn(bytes: &[u8]) -> u64 {
    u64_at(bytes, 16)
}

pub(crate) fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

pub(crate) fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

pub(crate) fn u64_at(b: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(b[at..at + 8].try_into().expect("8 bytes"))
}
