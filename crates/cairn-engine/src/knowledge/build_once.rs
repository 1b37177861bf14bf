//! The once-per-store build of an index that a store written before it existed lacks (the tally,
//! the attribute index): run before a verb, it costs one point read once the index is built.

use crate::error::Result;
use crate::store::Store;
use crate::write::WriteTxn;

/// Runs `build` in one transaction unless the empty key of `marker` is there (the index is
/// built; `build` writes it). A store none of whose `data` trees holds anything is left as it
/// is, so a fresh store's first verb writes nothing (a refused call changes nothing); its
/// writers keep the index from the first record on, and the first verb after that builds it once
/// more from that little data and marks it.
pub(crate) fn build_once(
    store: &Store,
    marker: &'static str,
    data: &[&str],
    build: fn(&mut WriteTxn<'_>) -> Result<()>,
) -> Result<()> {
    let snap = store.snapshot()?;
    if snap.get(marker, &[])?.is_some() {
        return Ok(());
    }
    let mut empty = true;
    for tree in data {
        empty &= snap.prefix(tree, &[])?.next().is_none();
    }
    if empty {
        return Ok(());
    }
    store.write(move |tx| {
        // Another call may have built it between the snapshot and this transaction.
        if tx.get(marker, &[])?.is_some() {
            return Ok(());
        }
        build(tx)
    })?;
    Ok(())
}
