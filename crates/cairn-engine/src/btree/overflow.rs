//! Values too large for a leaf cell live in a chain of overflow pages: each holds up to
//! `CAPACITY` bytes (its count) and links to the next. Chains are immutable once written, so
//! copy-on-write leaves share them.

use super::{CAPACITY, PageSource, PageStore, Value, fits_inline};
use crate::error::{Error, Result};
use crate::page::{self, HEADER_LEN, Kind, NO_PAGE, PageBuilder};

/// Stores `bytes` inline when it fits the leaf cell, else as a new overflow chain.
pub(crate) fn write_value(tx: &mut impl PageStore, key: &[u8], bytes: &[u8]) -> Result<Value> {
    if fits_inline(key, bytes.len()) {
        return Ok(Value::Inline(bytes.into()));
    }
    let chunks: Vec<&[u8]> = bytes.chunks(CAPACITY).collect();
    let mut ids = Vec::with_capacity(chunks.len());
    for _ in &chunks {
        ids.push(tx.alloc()?);
    }
    for (i, chunk) in chunks.iter().enumerate() {
        let mut b = PageBuilder::new(Kind::Overflow);
        b.set_count(chunk.len() as u16);
        b.set_link(ids.get(i + 1).copied().unwrap_or(NO_PAGE));
        b.bytes_mut()[HEADER_LEN..HEADER_LEN + chunk.len()].copy_from_slice(chunk);
        let page = b.seal(ids[i], tx.txn());
        tx.write(ids[i], page);
    }
    Ok(Value::Overflow { first: ids[0], len: bytes.len() as u32 })
}

/// The bytes of a value, following its overflow chain.
pub(crate) fn read_value(src: &impl PageSource, value: Value) -> Result<Vec<u8>> {
    match value {
        Value::Inline(v) => Ok(match v {
            super::Bytes::Owned(v) => v,
            shared @ super::Bytes::Shared { .. } => shared.to_vec(),
        }),
        Value::Overflow { first, len } => {
            let len = len as usize;
            let mut out = Vec::with_capacity(len);
            let mut id = first;
            while out.len() < len {
                if id == NO_PAGE {
                    return Err(Error::corrupt(Some(first), "overflow chain ends early"));
                }
                let p = src.page(id)?;
                page::expect_kind(id, &p, Kind::Overflow)?;
                let n = page::count(&p);
                if n == 0 || n > CAPACITY || out.len() + n > len {
                    return Err(Error::corrupt(Some(id), "overflow page length does not match its value"));
                }
                out.extend_from_slice(&p[HEADER_LEN..HEADER_LEN + n]);
                id = page::link(&p);
            }
            Ok(out)
        }
    }
}

/// Frees the overflow chain of a value that is no longer referenced.
pub(crate) fn free_value(tx: &mut impl PageStore, value: &Value) -> Result<()> {
    if let Value::Overflow { first, len } = *value {
        let mut id = first;
        for _ in 0..(len as usize).div_ceil(CAPACITY) {
            let p = tx.page(id)?;
            page::expect_kind(id, &p, Kind::Overflow)?;
            tx.free(id);
            id = page::link(&p);
        }
    }
    Ok(())
}
