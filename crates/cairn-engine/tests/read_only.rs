//! A read-only open (`ReadOnlyStore`) reads a store and changes nothing on disk: no file made
//! (`LOCK`, the log), none written, the log's records past the checkpoint replayed in memory; it
//! checks what a read-write open checks, and is refused while a read-write open holds the store.

mod common;

use cairn_engine::{Batch, Error, ReadOnlyStore, Store, StoreOptions};
use common::{TREES, value};
use std::collections::BTreeMap;
use std::path::Path;

/// Every file in `dir` with its bytes.
fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().into_string().unwrap(), std::fs::read(e.path()).unwrap())
        })
        .collect()
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A data dir as a killed process leaves it: 300 keys checkpointed into the data file, 100 more
/// only in the log.
fn killed_store(dir: &Path) {
    let live = tempfile::tempdir().unwrap();
    // A checkpoint only when asked, so the later writes stay in the log.
    let store =
        Store::open(live.path(), StoreOptions { checkpoint_bytes: 1 << 40, ..StoreOptions::default() }).unwrap();
    for round in 0..4 {
        let mut b = Batch::default();
        for i in round * 100..(round + 1) * 100 {
            b.put(TREES[0], &key(i), &value(i as u8, 200));
        }
        store.apply(b).unwrap();
        if round == 2 {
            store.checkpoint().unwrap();
        }
    }
    for file in ["data.cairn", "wal.cairn"] {
        std::fs::copy(live.path().join(file), dir.join(file)).unwrap();
    }
    // Dropped without closing: its own files are not what the test reads.
    std::mem::forget(store);
}

#[test]
fn a_read_only_open_changes_no_file_and_checks_what_a_read_write_open_checks() {
    let dir = tempfile::tempdir().unwrap();
    killed_store(dir.path());
    let before = files(dir.path());
    assert_eq!(before.keys().collect::<Vec<_>>(), ["data.cairn", "wal.cairn"]);

    let ro = ReadOnlyStore::open(dir.path(), &StoreOptions::default()).unwrap();
    let report = ro.check().unwrap();
    // The keys only in the log were replayed, in memory.
    assert_eq!(ro.get(TREES[0], &key(399)).unwrap(), Some(value(143, 200)));
    ro.close().unwrap();
    assert!(report.ok, "{report:?}");
    assert_eq!(report.trees.iter().find(|t| t.name == TREES[0]).map(|t| t.entries), Some(400));
    assert!(files(dir.path()) == before, "a read-only open changed the directory");

    let rw = Store::open(dir.path(), StoreOptions::default()).unwrap();
    assert_eq!(rw.check().unwrap(), report);
    rw.close().unwrap();
    assert!(files(dir.path()) != before, "the read-write open recovers (and so writes) the same directory");
}

#[test]
fn a_backup_opened_read_only_gets_no_log_and_no_lock() {
    let dir = tempfile::tempdir().unwrap();
    let backup = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let mut b = Batch::default();
    b.put(TREES[1], b"k", b"v");
    store.apply(b).unwrap();
    let dest = backup.path().join("b");
    store.backup(&dest).unwrap();
    store.close().unwrap();
    let before = files(&dest);
    assert_eq!(before.keys().collect::<Vec<_>>(), ["data.cairn"]);

    let ro = ReadOnlyStore::open(&dest, &StoreOptions::default()).unwrap();
    assert!(ro.check().unwrap().ok);
    assert_eq!(ro.get(TREES[1], b"k").unwrap(), Some(b"v".to_vec()));
    ro.close().unwrap();
    assert!(files(&dest) == before, "a read-only open changed the backup");
}

#[test]
fn a_read_only_open_is_refused_while_a_read_write_open_holds_the_store_and_keeps_one_out() {
    let dir = tempfile::tempdir().unwrap();
    let rw = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let err = ReadOnlyStore::open(dir.path(), &StoreOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Locked { holder_pid: Some(pid), .. } if pid == std::process::id()), "{err:?}");
    rw.close().unwrap();

    let ro = ReadOnlyStore::open(dir.path(), &StoreOptions::default()).unwrap();
    // Two read-only opens share the store.
    ReadOnlyStore::open(dir.path(), &StoreOptions::default()).unwrap().close().unwrap();
    // `LOCK` still names the read-write open that has closed: no pid is given for the reader.
    let err = Store::open(dir.path(), StoreOptions::default()).unwrap_err();
    assert!(matches!(err, Error::Locked { holder_pid: None, .. }), "{err:?}");
    ro.close().unwrap();
    Store::open(dir.path(), StoreOptions::default()).unwrap().close().unwrap();
}

#[test]
fn a_read_only_open_of_a_directory_with_no_store_is_an_error_and_makes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let err = ReadOnlyStore::open(dir.path(), &StoreOptions::default()).unwrap_err();
    assert_eq!(err.code(), "STORE_IO", "{err:?}");
    assert!(err.to_string().contains("no store at"), "{err}");
    assert!(files(dir.path()).is_empty());
    let missing = dir.path().join("missing");
    assert!(ReadOnlyStore::open(&missing, &StoreOptions::default()).is_err());
    assert!(!missing.exists());
}
