//! A fact's attribute writes (`fact_attribute_time.rs`), kept apart from its record in
//! `k.fact_writes`, one entry a write: `part | relation id | seq` → the write. Held in the record,
//! the list made it grow with every revision: n relates that changed a fact's attributes read and
//! rewrote the whole list each time, O(n²) in all (bench/revisions.bench.mjs, "attributes": 4.18 ms
//! a relate at 2,000 writes against 0.73 ms at 250). The record keeps what a read at the present
//! needs (its attributes, each key's last write) and `Kept`: how many writes the tree holds and,
//! while they came in order, the start and time of the last, so a `relate` or a plain read that
//! lies past every write reads none of them; an append writes one entry.

use super::fact_attribute_time::AttributeWrite;
use super::graph::Relation;
use super::part::Partition;
use super::records::{decode, encode};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::write::WriteTxn;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// `part | relation id | seq (u32 BE)` → one attribute write; the empty key → `[1]` marks the
/// lists of a store written before moved out of their records (`fact_writes_build.rs`).
pub(crate) const FACT_WRITES: &str = "k.fact_writes";

/// What a fact's record keeps of its list in `FACT_WRITES`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Kept {
    /// How many writes the list holds (at seqs `0..n`).
    pub n: u32,
    /// While every write starts and was recorded no earlier than the one before, and the record's
    /// attributes are each key's last write: the last write's start and recorded time. A read at
    /// an instant no earlier than that start, of every write, finds the record's attributes true
    /// then (each key's last write has the latest start) and needs no list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last: Option<[i64; 2]>,
}

impl Kept {
    /// Whether a read at valid instant `at`, of the writes recorded by `as_of`, sees the record's
    /// own attributes, so it need not read the list.
    pub(crate) fn present(&self, at: i64, as_of: Option<i64>) -> bool {
        self.last.is_some_and(|[start, recorded]| at >= start && as_of.is_none_or(|t| t >= recorded))
    }

    /// What the record keeps once `added` are appended (the record's attributes updated with
    /// them, as `graph::restated` does).
    pub(crate) fn after(kept: Option<Self>, added: &[AttributeWrite]) -> Option<Self> {
        let mut out = kept.unwrap_or(Kept { n: 0, last: Some([i64::MIN, i64::MIN]) });
        for w in added {
            out.n += 1;
            out.last = out.last.filter(|&[start, recorded]| w.start() >= start && w.recorded >= recorded);
            out.last = out.last.map(|_| [w.start(), w.recorded]);
        }
        (out.n > 0).then_some(out)
    }

    /// What a record holding `attributes` keeps of `writes`, a whole list (imported, or moved out
    /// of a record of a store written before): in order only when each of its attribute keys
    /// holds the value its last write set.
    pub(crate) fn of(writes: &[AttributeWrite], attributes: &Map<String, Value>) -> Option<Self> {
        let mut kept = Self::after(None, writes)?;
        let mut last: Map<String, Value> = Map::new();
        for w in writes {
            last.extend(w.set.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        if last.iter().any(|(k, v)| attributes.get(k) != Some(v)) {
            kept.last = None;
        }
        Some(kept)
    }
}

fn key(part: &Partition, id: u64, seq: u32) -> Vec<u8> {
    part.key(&[&id.to_be_bytes(), &seq.to_be_bytes()])
}

fn prefix(part: &Partition, id: u64) -> Vec<u8> {
    part.key(&[&id.to_be_bytes()])
}

/// Appends `added` to record `id`'s list, which held `from` writes (its record's `writes` says
/// what it holds after: `Kept::after`).
pub(crate) fn append(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    id: u64,
    from: u32,
    added: &[AttributeWrite],
) -> Result<()> {
    for (seq, w) in (from..).zip(added) {
        tx.put(FACT_WRITES, &key(part, id, seq), &encode(w))?;
    }
    Ok(())
}

/// Moves the list `rel` holds in its record (`attribute_writes`: a store written before, or an
/// import) to the tree, when it holds one; its `writes` then says what the tree holds.
pub(crate) fn move_out(tx: &mut WriteTxn<'_>, part: &Partition, rel: &mut Relation) -> Result<()> {
    if rel.attribute_writes.is_empty() {
        return Ok(());
    }
    tx.delete_prefix(FACT_WRITES, &prefix(part, rel.id))?;
    for (seq, w) in (0..).zip(&rel.attribute_writes) {
        tx.put(FACT_WRITES, &key(part, rel.id, seq), &encode(w))?;
    }
    rel.writes = Kept::of(&rel.attribute_writes, &rel.attributes);
    rel.attribute_writes = Vec::new();
    Ok(())
}

/// The first `n` writes of record `id`'s list (all of them: `u32::MAX`), as of `snap`.
pub(crate) fn first(snap: &Snapshot, part: &Partition, id: u64, n: u32) -> Result<Vec<AttributeWrite>> {
    let mut out = Vec::new();
    for item in snap.prefix(FACT_WRITES, &prefix(part, id))?.take(usize::try_from(n).unwrap_or(usize::MAX)) {
        out.push(decode(&item?.1, "fact attribute write")?);
    }
    Ok(out)
}

/// `first` inside a write transaction.
pub(crate) fn first_in(tx: &mut WriteTxn<'_>, part: &Partition, id: u64, n: u32) -> Result<Vec<AttributeWrite>> {
    let entries = tx.prefix(FACT_WRITES, &prefix(part, id))?;
    entries
        .iter()
        .take(usize::try_from(n).unwrap_or(usize::MAX))
        .map(|(_, v)| decode(v, "fact attribute write"))
        .collect()
}

/// Write `seq` of record `id`'s list, inside a write transaction.
pub(crate) fn nth_in(tx: &mut WriteTxn<'_>, part: &Partition, id: u64, seq: u32) -> Result<Option<AttributeWrite>> {
    tx.get(FACT_WRITES, &key(part, id, seq))?.map(|v| decode(&v, "fact attribute write")).transpose()
}

/// Removes record `id`'s list (the record is forgotten).
pub(crate) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, id: u64) -> Result<()> {
    tx.delete_prefix(FACT_WRITES, &prefix(part, id))?;
    Ok(())
}

/// Moves record `id`'s list to record `to` (a restore keeps the earlier life under a new id).
pub(crate) fn rename(tx: &mut WriteTxn<'_>, part: &Partition, id: u64, to: u64) -> Result<()> {
    for (k, v) in tx.prefix(FACT_WRITES, &prefix(part, id))? {
        let seq = k.get(k.len().saturating_sub(4)..).unwrap_or_default();
        tx.put(FACT_WRITES, &part.key(&[&to.to_be_bytes(), seq]), &v)?;
    }
    remove(tx, part, id)
}
