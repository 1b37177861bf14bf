//! Damage to the log or a meta page after the writes in it were acknowledged (a bit flipped on
//! the disk, a file deleted or mixed up by hand), found by an audit: each made an open drop those
//! writes without a word and reset the log over them. Now a damaged log header is read through
//! (its records verify under the salt the meta names), and where the writes cannot be taken back
//! the open refuses, naming the damage, and changes nothing on disk.

use cairn_engine::vfs::Vfs;
use cairn_engine::vfs::fault::{CrashMode, FaultFs, PointKind};
use cairn_engine::{Batch, Store, StoreOptions};
use std::path::Path;
use std::sync::Arc;

const DATA: &str = "/store/data.cairn";
const LOG: &str = "/store/wal.cairn";
const PAGE: usize = 4096;

fn options(fs: &FaultFs) -> StoreOptions {
    StoreOptions { checkpoint_bytes: 64 << 20, vfs: Arc::new(fs.clone()), ..StoreOptions::default() }
}

fn put(store: &Store, key: &str) {
    let mut b = Batch::default();
    b.put("t", key.as_bytes(), b"acknowledged");
    store.apply(b).unwrap();
}

/// What the disk holds after power loss once `writes` were acknowledged, with `checkpoints` taken
/// after the first of them: the writes after the last checkpoint are only in the log.
fn killed_after(writes: &[&str], checkpoint_after: &[usize]) -> FaultFs {
    let fs = FaultFs::new();
    let store = Store::open("/store", options(&fs)).unwrap();
    for (i, key) in writes.iter().enumerate() {
        put(&store, key);
        if checkpoint_after.contains(&i) {
            store.checkpoint().unwrap();
        }
    }
    let image = fs.crash_image(CrashMode::SyncedOnly, 0);
    drop(store);
    image
}

fn flip(fs: &FaultFs, path: &str, at: usize) {
    let mut bytes = fs.read_durable(Path::new(path)).unwrap();
    bytes[at] ^= 0x10;
    fs.write_durable(Path::new(path), &bytes);
}

fn files(fs: &FaultFs) -> Vec<(String, Vec<u8>)> {
    fs.files().iter().map(|p| (p.display().to_string(), fs.read_durable(p).unwrap())).collect()
}

/// Opens `fs`, which must be refused as corrupt with a message holding `says`, changing nothing.
fn refused(fs: &FaultFs, says: &str) {
    let before = files(fs);
    let Err(err) = Store::open("/store", options(fs)) else { panic!("the open is refused") };
    assert_eq!(err.code(), "STORE_CORRUPT", "{err}");
    assert!(err.to_string().contains(says), "{err}");
    assert_eq!(files(fs), before, "a refused open changes nothing on disk");
}

fn has(store: &Store, key: &str) -> bool {
    store.get("t", key.as_bytes()).unwrap().is_some()
}

#[test]
fn a_damaged_log_header_loses_none_of_the_writes_logged_after_it() {
    let keys = ["a", "b", "c", "d"];
    for at in [0, 12, 20, 27] {
        let fs = killed_after(&keys, &[]);
        flip(&fs, LOG, at);
        let store = Store::open("/store", options(&fs)).unwrap();
        for key in keys {
            assert!(has(&store, key), "{key} kept with byte {at} of the header flipped");
        }
        assert!(store.check().unwrap().ok);
    }
}

#[test]
fn a_log_without_its_data_file_is_refused_not_reset() {
    let fs = killed_after(&["a", "b"], &[]);
    fs.remove(Path::new(DATA)).unwrap();
    refused(&fs, "data.cairn is missing");
}

#[test]
fn a_damaged_newest_meta_page_is_refused_when_the_log_follows_it() {
    let fs = killed_after(&["a", "b", "c"], &[0, 2]);
    let data = fs.read_durable(Path::new(DATA)).unwrap();
    let sequence = |slot: usize| u64::from_le_bytes(data[slot * PAGE + 80..slot * PAGE + 88].try_into().unwrap());
    let newest = usize::from(sequence(1) > sequence(0));
    flip(&fs, DATA, newest * PAGE + 300);
    refused(&fs, "newest meta page is damaged");
}

#[test]
fn a_log_of_another_store_holding_writes_is_refused() {
    let ours = killed_after(&["a"], &[0]);
    let theirs = killed_after(&["x", "y"], &[]);
    ours.write_durable(Path::new(LOG), &theirs.read_durable(Path::new(LOG)).unwrap());
    refused(&ours, "writes of another store");
}

#[test]
fn a_store_stopped_between_a_meta_and_its_log_reset_opens_whole() {
    // The legitimate case the rules must tell from damage: the log still under the salt of the
    // meta before the checkpoint (its records all in the data file), power lost before the reset.
    let fs = FaultFs::new();
    let store = Store::open("/store", options(&fs)).unwrap();
    put(&store, "a");
    put(&store, "b");
    fs.record_trace(true);
    store.checkpoint().unwrap();
    let points = fs.trace();
    // The checkpoint's last write to the log is the reset of its header.
    let reset = points
        .iter()
        .rfind(|p| p.path == Path::new(LOG) && matches!(p.kind, PointKind::Write { .. }))
        .expect("the checkpoint resets the log")
        .index;
    drop(store);
    // The same writes again, the power lost at that reset.
    let fs = FaultFs::new();
    let store = Store::open("/store", options(&fs)).unwrap();
    put(&store, "a");
    put(&store, "b");
    fs.crash_after(reset);
    assert!(store.checkpoint().is_err());
    let image = fs.crash_image(CrashMode::SyncedOnly, 0);
    drop(store);
    let reopened = Store::open("/store", options(&image)).unwrap();
    assert!(has(&reopened, "a") && has(&reopened, "b"));
    assert!(reopened.check().unwrap().ok);
}
