//! Ids: one counter per partition (`k.seq`, key = the partition's prefix), so the ids and history
//! sequence numbers a caller sees advance only with writes to the caller's own partition and say
//! nothing of anyone else's (DESIGN.md §1). Every id-keyed tree starts with the partition prefix,
//! so ids need be unique within a partition only (docs/design/knowledge-keys.md, "Ids").
//!
//! Stores written before kept one counter for the whole store under `k.seq` key `id`; it is read,
//! never written again. A partition without a counter of its own starts past it when it holds any
//! key (its old ids are all below it), and at 1 when it holds none.

use super::forget::kept;
use super::part::Partition;
use super::trees::SEQ;
use crate::error::{Error, Result};
use crate::write::WriteTxn;

/// The key of the store-wide counter of stores written before per-partition counters. A
/// partition's key starts with its length (a u16 of at most 770, so a first byte of at most 3),
/// never with `i`.
const LEGACY: &[u8] = b"id";

/// A new id of `part`, unique there (ids start at 1).
pub(crate) fn next_id(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<u64> {
    let next = read_next_id(tx, part)?;
    write_next_id(tx, part, next + 1)?;
    Ok(next)
}

/// The id `next_id` would hand out now in `part`, taking nothing: a bulk writer counts ids from
/// it and stores the counter once with `write_next_id`.
pub(crate) fn read_next_id(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<u64> {
    // A partition forgotten whole continues from its retired counter (`forget::retire`).
    if let Some(v) = kept(tx, SEQ, part, &[])? {
        return counter(&v);
    }
    // First id of this partition since per-partition counters: an old store's partition that
    // holds anything continues past the old store-wide counter (every id it holds is below it).
    match tx.get(SEQ, LEGACY)? {
        Some(v) if holds_anything(tx, part)? => counter(&v),
        _ => Ok(1),
    }
}

/// Sets the counter of `part`: `next` is the next id to hand out (past every id already taken).
pub(crate) fn write_next_id(tx: &mut WriteTxn<'_>, part: &Partition, next: u64) -> Result<()> {
    tx.put(SEQ, part.prefix(), &next.to_be_bytes())
}

fn counter(v: &[u8]) -> Result<u64> {
    Ok(u64::from_be_bytes(v.try_into().map_err(|_| Error::corrupt(None, "an id counter is not 8 bytes"))?))
}

/// Whether any tree holds a key of `part` (every partitioned tree starts its keys with the
/// prefix, whichever family wrote it). Read once per partition of an old store, on its first id.
fn holds_anything(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<bool> {
    for tree in tx.tree_names() {
        if tree != SEQ && tx.first_with_prefix(&tree, part.prefix())?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::fresh;

    fn part(user: &str) -> Partition {
        Partition::new("local", user, "default").unwrap()
    }

    #[test]
    fn partitions_count_on_their_own() {
        let (_dir, store, _) = fresh();
        let (a, b) = (part("a"), part("b"));
        let (ids, _) = store
            .write(move |tx| {
                let mut ids = (Vec::new(), Vec::new());
                for round in 0..5 {
                    ids.0.push(next_id(tx, &a)?);
                    for _ in 0..round {
                        ids.1.push(next_id(tx, &b)?);
                    }
                }
                Ok(ids)
            })
            .unwrap();
        assert_eq!(ids.0, vec![1, 2, 3, 4, 5], "b's writes in between do not show in a's ids");
        assert_eq!(ids.1, (1..=10).collect::<Vec<_>>());
    }

    #[test]
    fn an_old_store_continues_past_its_counter_where_data_is() {
        let (_dir, store, _) = fresh();
        let (old, new) = (part("old"), part("new"));
        let key = old.key(&[&40u64.to_be_bytes()]);
        store
            .write(move |tx| {
                tx.put(SEQ, LEGACY, &41u64.to_be_bytes())?;
                tx.put(super::super::trees::ENT, &key, b"{}")
            })
            .unwrap();
        let (got, _) = store.write(move |tx| Ok((next_id(tx, &old)?, next_id(tx, &new)?, next_id(tx, &old)?))).unwrap();
        assert_eq!(got, (41, 1, 42), "old data's partition continues past 41; an empty one starts at 1");
        let legacy = store.snapshot().unwrap().get(SEQ, LEGACY).unwrap();
        assert_eq!(legacy, Some(41u64.to_be_bytes().to_vec()), "the old counter is never written again");
    }
}
