//! Retiring a partition forgotten whole (`forget_scope`): what it must keep after its data goes
//! (the id counter, the name generation, the tombstones) moves from keys that start with its
//! prefix, which spells the tenant, user and scope, to its retired partition
//! (`Partition::retired`), named by a digest. Readers of those keys look in both places
//! (`kept`), so ids continue past the forgotten ones, a cache of names built before never looks
//! current again, and forgetting again still answers "already forgotten". The event of the
//! forgetting is recorded in the retired partition too (the verbs do that), and audit reads it
//! there.

use super::super::part::{Partition, SCOPES, user_scopes_prefix};
use super::super::trees::{NAMES_GEN, SEQ};
use super::TOMBSTONE;
use crate::error::Result;
use crate::history::TREES as HISTORY;
use crate::write::WriteTxn;

/// Moves `part`'s keepsakes to its retired partition. A keepsake retired before (the scope was
/// forgotten whole, written again, and is forgotten again) gives way to the newer one: counters
/// only grow, and a tombstone keeps the later time.
pub(crate) fn retire(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<()> {
    let retired = part.retired();
    let id = super::super::ids::read_next_id(tx, part)?;
    tx.put(SEQ, retired.prefix(), &id.to_be_bytes())?;
    tx.delete(SEQ, part.prefix())?;
    if let Some(generation) = tx.get(NAMES_GEN, part.prefix())? {
        tx.put(NAMES_GEN, retired.prefix(), &generation)?;
        tx.delete(NAMES_GEN, part.prefix())?;
    }
    for (key, at) in tx.prefix(TOMBSTONE, part.prefix())? {
        let moved = retired.key(&[&key[part.prefix().len()..]]);
        let later = match tx.get(TOMBSTONE, &moved)? {
            Some(before) if before > at => before,
            _ => at,
        };
        tx.put(TOMBSTONE, &moved, &later)?;
        tx.delete(TOMBSTONE, &key)?;
    }
    Ok(())
}

/// The value of `part`'s keepsake keyed `tail` in `tree`: where the partition has it, else where
/// a forgetting of the whole partition retired it.
pub(crate) fn kept(tx: &mut WriteTxn<'_>, tree: &str, part: &Partition, tail: &[u8]) -> Result<Option<Vec<u8>>> {
    if let Some(v) = tx.get(tree, &part.key(&[tail]))? {
        return Ok(Some(v));
    }
    if part.is_retired() {
        return Ok(None);
    }
    tx.get(tree, &part.retired().key(&[tail]))
}

/// `kept` on a snapshot.
pub(crate) fn kept_in(
    snap: &crate::snapshot::Snapshot,
    tree: &str,
    part: &Partition,
    tail: &[u8],
) -> Result<Option<Vec<u8>>> {
    if let Some(v) = snap.get(tree, &part.key(&[tail]))? {
        return Ok(Some(v));
    }
    if part.is_retired() {
        return Ok(None);
    }
    snap.get(tree, &part.retired().key(&[tail]))
}

/// Retires every partition that a store written before retiring existed left forgotten whole:
/// one with an id counter, out of the scope list (a forgotten scope leaves it, any write lists
/// it again), holding nothing but keepsakes and events (the event of its forgetting, or of a
/// user's deletion). Its keepsakes and events move to its retired partition, so `compact --purge`,
/// which runs this first, leaves no key spelling it. Returns how many it retired.
pub(crate) fn retire_forgotten(tx: &mut WriteTxn<'_>) -> Result<u64> {
    let mut retired = 0;
    for (key, _) in tx.prefix(SEQ, b"")? {
        // The store-wide counter of older stores and retired partitions name no caller's partition.
        let Ok(part) = Partition::of_key(&key) else { continue };
        if key.len() != part.prefix().len() || listed(tx, &part)? || holds_data(tx, &part)? {
            continue;
        }
        retire(tx, &part)?;
        let to = part.retired();
        for tree in HISTORY {
            for (key, value) in tx.prefix(tree, part.prefix())? {
                tx.put(tree, &to.key(&[&key[part.prefix().len()..]]), &value)?;
                tx.delete(tree, &key)?;
            }
        }
        retired += 1;
    }
    Ok(retired)
}

/// Whether `part` is in its user's scope list.
fn listed(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<bool> {
    let (tenant, user, scope) = part.parts();
    Ok(tx.get(SCOPES, &[user_scopes_prefix(tenant, user), scope.as_bytes().to_vec()].concat())?.is_some())
}

/// Whether any tree but the keepsakes' and the history's holds a key of `part`.
fn holds_data(tx: &mut WriteTxn<'_>, part: &Partition) -> Result<bool> {
    for tree in tx.tree_names() {
        if [SEQ, NAMES_GEN, TOMBSTONE].contains(&tree.as_str()) || HISTORY.contains(&tree.as_str()) {
            continue;
        }
        if tx.first_with_prefix(&tree, part.prefix())?.is_some() {
            return Ok(true);
        }
    }
    Ok(false)
}
