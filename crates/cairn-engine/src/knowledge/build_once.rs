//! The once-per-store build of an index that a store written before it existed lacks (the tally,
//! the attribute index): run before a verb. Once a snapshot shows the index built, the open
//! store remembers it (`Store::mark`): no verb removes a marker (a build clears its tree and
//! marks it again in one transaction), so later verbs read nothing for it. Seven such checks,
//! a snapshot and a point read each, were about a tenth of a cheap recall.

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
    if store.marked(marker) {
        return Ok(());
    }
    let snap = store.snapshot()?;
    if snap.get(marker, &[])?.is_some() {
        store.mark(marker);
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

#[cfg(test)]
mod tests {
    use super::build_once;
    use crate::error::Result;
    use crate::store::{Store, StoreOptions};
    use crate::write::WriteTxn;
    use std::sync::atomic::{AtomicUsize, Ordering};

    const MARKER: &str = "t.marker";
    const DATA: &str = "t.data";
    /// The builds `build` ran: only the test below calls it.
    static BUILDS: AtomicUsize = AtomicUsize::new(0);

    fn build(tx: &mut WriteTxn<'_>) -> Result<()> {
        BUILDS.fetch_add(1, Ordering::SeqCst);
        tx.put(MARKER, &[], &[1])
    }

    #[test]
    fn a_marker_seen_is_remembered_until_the_store_is_opened_again() {
        let dir = tempfile::tempdir().unwrap();
        let open = || Store::open(dir.path(), StoreOptions::default()).unwrap();
        let store = open();
        store.write(|tx| tx.put(DATA, b"k", b"v")).unwrap();
        for _ in 0..2 {
            build_once(&store, MARKER, &[DATA], build).unwrap();
        }
        assert_eq!(BUILDS.load(Ordering::SeqCst), 1);
        // Taken out under the open store (no verb does): the store remembers it was built.
        store.write(|tx| tx.delete(MARKER, &[]).map(drop)).unwrap();
        build_once(&store, MARKER, &[DATA], build).unwrap();
        assert_eq!(BUILDS.load(Ordering::SeqCst), 1);
        // Opened again, as a store written before the index is, it is read and built anew.
        drop(store);
        let store = open();
        build_once(&store, MARKER, &[DATA], build).unwrap();
        assert_eq!(BUILDS.load(Ordering::SeqCst), 2);
    }
}
