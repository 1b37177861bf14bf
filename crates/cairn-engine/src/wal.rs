//! The write-ahead log. A commit is durable once its record is in the log and the log is synced;
//! tree pages reach the data file later, at a checkpoint.
//!
//! Header (32 bytes): `0..8 magic "CAIRNWAL" | 8..12 format u32 | 12..16 crc32c of the other 28
//! bytes | 16..24 salt u64 | 24..32 store id u64`. Then records:
//! `len u32 | crc32c u32 | txn u64 | payload (len bytes, a batch encoding)`, where the checksum
//! covers the salt, `len`, `txn` and the payload. Each reset (after a checkpoint) starts a new
//! salt, the one the checkpoint's meta names (`meta.rs`), so records left over from an older
//! generation never verify; replay also demands consecutive txn ids and stops at the first record
//! that fails. Which salt an open reads records under is `log_rules.rs`'s to say.

use crate::error::{Error, Result};
use crate::vfs::VfsFile;
use std::sync::Arc;

const MAGIC: &[u8; 8] = b"CAIRNWAL";
const VERSION: u32 = 1;
pub(crate) const HEADER_LEN: u64 = 32;
const RECORD_HEADER: usize = 16;
/// The log is grown in zero-filled steps so that a sync after an append rarely has to persist a
/// new file size (overwriting allocated blocks is what makes `fdatasync` cheap).
const GROWTH: u64 = 4 << 20;

pub(crate) struct Wal {
    file: Arc<dyn VfsFile>,
    salt: u64,
    store_id: u64,
    /// Where the next record goes.
    pos: u64,
    /// Bytes of the file already allocated (zero-filled or old records).
    allocated: u64,
    /// The bytes of the records being appended, kept between appends (a group's records reach
    /// megabytes; a new buffer each time was faulted in as fresh memory).
    buf: Vec<u8>,
}

/// What the log's slack is zero-filled from, a slice at a time.
static ZEROS: [u8; 64 << 10] = [0; 64 << 10];

/// A record read back during recovery.
pub(crate) struct Record {
    pub(crate) txn: u64,
    pub(crate) payload: Vec<u8>,
}

fn record_crc(salt: u64, txn: u64, payload: &[u8]) -> u32 {
    let mut c = crc32c::crc32c(&salt.to_le_bytes());
    c = crc32c::crc32c_append(c, &(payload.len() as u32).to_le_bytes());
    c = crc32c::crc32c_append(c, &txn.to_le_bytes());
    crc32c::crc32c_append(c, payload)
}

fn header_crc(h: &[u8]) -> u32 {
    crc32c::crc32c_append(crc32c::crc32c(&h[0..12]), &h[16..32])
}

/// A fresh random salt; uniqueness across resets is what matters, not secrecy.
pub(crate) fn random_u64() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos()));
    h.finish()
}

/// Checks a header; `Some((salt, store_id))` when it is intact.
pub(crate) fn decode_header(h: &[u8]) -> Option<(u64, u64)> {
    if h.len() < HEADER_LEN as usize || &h[0..8] != MAGIC {
        return None;
    }
    let version = u32::from_le_bytes(h[8..12].try_into().ok()?);
    let crc = u32::from_le_bytes(h[12..16].try_into().ok()?);
    if version != VERSION || crc != header_crc(h) {
        return None;
    }
    Some((u64::from_le_bytes(h[16..24].try_into().ok()?), u64::from_le_bytes(h[24..32].try_into().ok()?)))
}

/// Decodes one record at the start of `bytes` under `salt`: `Some((txn, payload, record length))`.
pub(crate) fn decode_record(bytes: &[u8], salt: u64) -> Option<(u64, &[u8], usize)> {
    let head = bytes.get(..RECORD_HEADER)?;
    let len = u32::from_le_bytes(head[0..4].try_into().ok()?) as usize;
    let crc = u32::from_le_bytes(head[4..8].try_into().ok()?);
    let txn = u64::from_le_bytes(head[8..16].try_into().ok()?);
    let payload = bytes.get(RECORD_HEADER..RECORD_HEADER.checked_add(len)?)?;
    (record_crc(salt, txn, payload) == crc).then_some((txn, payload, RECORD_HEADER + len))
}

/// What a log's header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Header {
    /// Shorter than a header, or all zeros: a log never written, or zeroed by a purge.
    Fresh,
    Valid {
        salt: u64,
        store_id: u64,
    },
    /// Anything else: a header damaged after it was written (a sector is written whole).
    Damaged,
}

/// Reads the header of the log in `file`.
pub(crate) fn read_header(file: &dyn VfsFile) -> Result<Header> {
    let len = file.len().map_err(|e| Error::io("reading the log's length", e))?;
    if len < HEADER_LEN {
        return Ok(Header::Fresh);
    }
    let mut h = [0u8; HEADER_LEN as usize];
    file.read_exact_at(&mut h, 0).map_err(|e| Error::io("reading the log header", e))?;
    Ok(match decode_header(&h) {
        Some((salt, store_id)) => Header::Valid { salt, store_id },
        None if h.iter().all(|&b| b == 0) => Header::Fresh,
        None => Header::Damaged,
    })
}

impl Wal {
    /// Opens the log and reads back every intact record under `salt`, in order (none without
    /// one). The log is not changed: recovery resets it once the records are in the data file.
    pub(crate) fn open(file: Arc<dyn VfsFile>, store_id: u64, salt: Option<u64>) -> Result<(Wal, Vec<Record>)> {
        let len = file.len().map_err(|e| Error::io("reading the log's length", e))?;
        let mut records = Vec::new();
        let mut wal = Wal { file, salt: 0, store_id, pos: HEADER_LEN, allocated: len, buf: Vec::new() };
        let Some(salt) = salt else {
            return Ok((wal, records));
        };
        wal.salt = salt;
        let mut pos = HEADER_LEN;
        let mut prev_txn: Option<u64> = None;
        while pos + RECORD_HEADER as u64 <= len {
            let mut head = [0u8; RECORD_HEADER];
            wal.file.read_exact_at(&mut head, pos).map_err(|e| Error::io("reading the log", e))?;
            let body_len = u32::from_le_bytes(head[0..4].try_into().expect("4 bytes")) as u64;
            if pos + RECORD_HEADER as u64 + body_len > len {
                break;
            }
            let mut rec = vec![0u8; RECORD_HEADER + body_len as usize];
            wal.file.read_exact_at(&mut rec, pos).map_err(|e| Error::io("reading the log", e))?;
            let Some((txn, payload, used)) = decode_record(&rec, salt) else { break };
            if prev_txn.is_some_and(|p| txn != p + 1) {
                break;
            }
            prev_txn = Some(txn);
            records.push(Record { txn, payload: payload.to_vec() });
            pos += used as u64;
        }
        wal.pos = pos;
        Ok((wal, records))
    }

    /// Appends records (not yet durable: call `sync`).
    pub(crate) fn append(&mut self, records: &[(u64, &[u8])]) -> Result<()> {
        let total: usize = records.iter().map(|(_, p)| RECORD_HEADER + p.len()).sum();
        let buf = &mut self.buf;
        buf.clear();
        buf.reserve(total);
        for (txn, payload) in records {
            buf.extend_from_slice(&(payload.len() as u32).to_le_bytes());
            buf.extend_from_slice(&record_crc(self.salt, *txn, payload).to_le_bytes());
            buf.extend_from_slice(&txn.to_le_bytes());
            buf.extend_from_slice(payload);
        }
        let end = self.pos + buf.len() as u64;
        self.file.write_all_at(buf, self.pos).map_err(|e| Error::io("appending to the log", e))?;
        if end > self.allocated {
            // The records themselves extend the file; only the slack after them is zero-filled
            // (a large group would otherwise write its bytes twice, zeros first).
            let new_alloc = end.next_multiple_of(GROWTH);
            let mut at = end;
            while at < new_alloc {
                let n = (new_alloc - at).min(ZEROS.len() as u64);
                self.file.write_all_at(&ZEROS[..n as usize], at).map_err(|e| Error::io("growing the log", e))?;
                at += n;
            }
            self.allocated = new_alloc;
        }
        self.pos = end;
        Ok(())
    }

    pub(crate) fn sync(&self) -> Result<()> {
        self.file.sync_data().map_err(|e| Error::io("syncing the log", e))
    }

    /// Starts a new generation under `salt` (the one the meta just made durable names), an empty
    /// log. Only call once the data file holds every logged transaction durably.
    pub(crate) fn reset(&mut self, salt: u64) -> Result<()> {
        self.salt = salt;
        let mut h = [0u8; HEADER_LEN as usize];
        h[0..8].copy_from_slice(MAGIC);
        h[8..12].copy_from_slice(&VERSION.to_le_bytes());
        h[16..24].copy_from_slice(&self.salt.to_le_bytes());
        h[24..32].copy_from_slice(&self.store_id.to_le_bytes());
        let crc = header_crc(&h);
        h[12..16].copy_from_slice(&crc.to_le_bytes());
        self.file.write_all_at(&h, 0).map_err(|e| Error::io("resetting the log", e))?;
        self.sync()?;
        self.pos = HEADER_LEN;
        self.allocated = self.allocated.max(HEADER_LEN);
        Ok(())
    }

    /// Overwrites the whole log with zeros and starts it again under its salt (purge: no record
    /// is left to verify under it).
    pub(crate) fn zero(&mut self) -> Result<u64> {
        let len = self.file.len().map_err(|e| Error::io("reading the log's length", e))?;
        let chunk = vec![0u8; 1 << 20];
        let mut at = 0;
        while at < len {
            let n = chunk.len().min((len - at) as usize);
            self.file.write_all_at(&chunk[..n], at).map_err(|e| Error::io("zeroing the log", e))?;
            at += n as u64;
        }
        self.reset(self.salt)?;
        Ok(len)
    }

    /// The salt of the current generation.
    pub(crate) fn salt(&self) -> u64 {
        self.salt
    }

    /// Bytes of records since the last reset.
    pub(crate) fn used(&self) -> u64 {
        self.pos - HEADER_LEN
    }
}
