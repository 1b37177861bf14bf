//! The two meta pages (pages 0 and 1). A checkpoint writes the one not holding the newest state,
//! so a torn meta write leaves the other intact; opening picks the valid meta with the highest
//! checkpoint sequence.
//!
//! Layout after the common header (whose txn field is the last transaction the meta covers):
//! `32..40 magic "CAIRNDB\0" | 40..44 format u32 | 44..48 page size u32 | 48..56 catalog root |
//! 56..64 free-list head | 64..72 free-list entries | 72..80 page count | 80..88 sequence |
//! 88..96 store id | 96..104 log salt`. The log salt is the salt of the log generation that
//! follows this checkpoint (`wal.rs`): opening reads the log's records under it even when the
//! log's header is damaged, and a log under a salt neither meta names follows a checkpoint whose
//! meta is gone. 0 (a meta written before the field) names none.

use crate::error::{Error, Result};
use crate::limits::PAGE_SIZE;
use crate::page::{self, Kind, Page, PageBuilder, PageId, u32_at, u64_at};

pub(crate) const MAGIC: &[u8; 8] = b"CAIRNDB\0";
pub(crate) const FORMAT_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Meta {
    pub(crate) txn: u64,
    pub(crate) catalog_root: PageId,
    pub(crate) freelist_head: PageId,
    pub(crate) freelist_len: u64,
    pub(crate) page_count: u64,
    pub(crate) sequence: u64,
    pub(crate) store_id: u64,
    /// The salt of the log generation after this checkpoint; 0 when unknown.
    pub(crate) log_salt: u64,
}

/// The meta a store opens at, and the other slot's when that is valid too.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Chosen {
    pub(crate) slot: PageId,
    pub(crate) meta: Meta,
    pub(crate) other: Option<Meta>,
}

impl Chosen {
    /// Whether `salt` is one a log may hold at open: the chosen meta's, or the other valid
    /// meta's (a checkpoint that wrote the chosen meta and stopped before it reset the log).
    pub(crate) fn names_log(&self, salt: u64) -> bool {
        salt == self.meta.log_salt || self.other.is_some_and(|o| o.log_salt == salt)
    }
}

/// What one meta slot holds.
#[derive(Debug)]
pub(crate) enum Slot {
    Valid(Meta),
    /// Not a Cairn meta page at all (wrong magic).
    Foreign,
    /// A Cairn meta page of a newer format.
    TooNew(u32),
    /// A Cairn meta page that fails its checksum or fields.
    Damaged(String),
}

impl Meta {
    pub(crate) fn encode(&self, slot: PageId) -> Page {
        let mut b = PageBuilder::new(Kind::Meta);
        let f = b.bytes_mut();
        f[32..40].copy_from_slice(MAGIC);
        f[40..44].copy_from_slice(&FORMAT_VERSION.to_le_bytes());
        f[44..48].copy_from_slice(&(PAGE_SIZE as u32).to_le_bytes());
        f[48..56].copy_from_slice(&self.catalog_root.to_le_bytes());
        f[56..64].copy_from_slice(&self.freelist_head.to_le_bytes());
        f[64..72].copy_from_slice(&self.freelist_len.to_le_bytes());
        f[72..80].copy_from_slice(&self.page_count.to_le_bytes());
        f[80..88].copy_from_slice(&self.sequence.to_le_bytes());
        f[88..96].copy_from_slice(&self.store_id.to_le_bytes());
        f[96..104].copy_from_slice(&self.log_salt.to_le_bytes());
        b.seal(slot, self.txn)
    }

    /// Reads one meta slot. Never panics, whatever the bytes.
    pub(crate) fn decode(slot: PageId, bytes: &[u8]) -> Slot {
        if bytes.len() != PAGE_SIZE || &bytes[32..40] != MAGIC {
            return Slot::Foreign;
        }
        let version = u32_at(bytes, 40);
        if version > FORMAT_VERSION {
            return Slot::TooNew(version);
        }
        if let Err(e) = page::verify(slot, bytes) {
            return Slot::Damaged(e.to_string());
        }
        if page::kind(bytes) != Some(Kind::Meta) || version == 0 {
            return Slot::Damaged("not a meta page".into());
        }
        if u32_at(bytes, 44) as usize != PAGE_SIZE {
            return Slot::Damaged(format!("page size {} is not {PAGE_SIZE}", u32_at(bytes, 44)));
        }
        let meta = Meta {
            txn: page::txn(bytes),
            catalog_root: u64_at(bytes, 48),
            freelist_head: u64_at(bytes, 56),
            freelist_len: u64_at(bytes, 64),
            page_count: u64_at(bytes, 72),
            sequence: u64_at(bytes, 80),
            store_id: u64_at(bytes, 88),
            log_salt: u64_at(bytes, 96),
        };
        let in_file = |p: PageId| p == 0 || (p >= 2 && p < meta.page_count);
        if meta.page_count < 2 || !in_file(meta.catalog_root) || !in_file(meta.freelist_head) {
            return Slot::Damaged("page references outside the file".into());
        }
        Slot::Valid(meta)
    }

    /// Picks the newest valid meta of the two slots, with the other slot (`Chosen`), or says why
    /// the file cannot be opened.
    pub(crate) fn choose(a: Slot, b: Slot, path: &std::path::Path) -> Result<Chosen> {
        let chosen = |slot, meta, other| Ok(Chosen { slot, meta, other });
        match (a, b) {
            (Slot::TooNew(v), _) | (_, Slot::TooNew(v)) => {
                Err(Error::FormatTooNew { found: v, supported: FORMAT_VERSION })
            }
            (Slot::Valid(x), Slot::Valid(y)) => {
                if y.sequence > x.sequence {
                    chosen(1, y, Some(x))
                } else {
                    chosen(0, x, Some(y))
                }
            }
            (Slot::Valid(x), _) => chosen(0, x, None),
            (_, Slot::Valid(y)) => chosen(1, y, None),
            (Slot::Foreign, Slot::Foreign) => Err(Error::NotAStore { path: path.to_owned() }),
            (Slot::Damaged(e), _) | (_, Slot::Damaged(e)) => {
                Err(Error::corrupt(None, format!("both meta pages are damaged ({e})")))
            }
        }
    }
}
