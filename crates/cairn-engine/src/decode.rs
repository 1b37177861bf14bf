//! Total decoders for bytes read from disk, exposed for fuzzing: whatever the input, they return
//! an error or a value and never panic, loop forever or allocate without bound.

use crate::batch::Batch;
use crate::btree::{CAPACITY, Node};
use crate::error::{Error, Result};
use crate::freelist::IDS_PER_PAGE;
use crate::limits::PAGE_SIZE;
use crate::meta::{Meta, Slot};
use crate::page::{self, Kind};
use crate::wal;

/// Decodes a page of any kind as the store would (structure first, then checksum).
pub fn page(bytes: &[u8]) -> Result<()> {
    if bytes.len() != PAGE_SIZE {
        return Err(Error::corrupt(None, "not a page"));
    }
    let id = page::u64_at(bytes, 8);
    match page::kind(bytes) {
        Some(Kind::Leaf | Kind::Branch) => {
            let page: crate::page::Page = std::sync::Arc::from(bytes);
            Node::decode(id, &page)?;
        }
        Some(Kind::Overflow) => {
            if page::count(bytes) > CAPACITY {
                return Err(Error::corrupt(Some(id), "overflow page overfull"));
            }
        }
        Some(Kind::Freelist) => {
            if page::count(bytes) > IDS_PER_PAGE {
                return Err(Error::corrupt(Some(id), "free-list page overfull"));
            }
        }
        Some(Kind::Meta) => {
            meta(bytes)?;
        }
        None => return Err(Error::corrupt(Some(id), "unknown page kind")),
    }
    page::verify(id, bytes)
}

/// Decodes a meta page as slot 0 and as slot 1.
pub fn meta(bytes: &[u8]) -> Result<()> {
    let mut last = Err(Error::corrupt(None, "no valid meta"));
    for slot in 0..2 {
        if let Slot::Valid(_) = Meta::decode(slot, bytes) {
            last = Ok(());
        }
    }
    last
}

/// Decodes a log: a header, then records and their batches, as recovery would.
pub fn wal_record(bytes: &[u8]) -> Result<()> {
    let salt = wal::decode_header(bytes).map_or(0, |(salt, _)| salt);
    let mut rest = bytes.get(wal::HEADER_LEN as usize..).unwrap_or(&[]);
    while let Some((_, payload, used)) = wal::decode_record(rest, salt) {
        Batch::decode(payload)?;
        rest = &rest[used..];
    }
    Ok(())
}
