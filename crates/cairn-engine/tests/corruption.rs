//! Damage on disk is reported, never returned as data: a flipped byte in a tree page is named by
//! `check()` and by the read that meets it; a damaged meta page falls back to the other one; a
//! newer format, a foreign file and a second opener are refused with their own codes.
//!
//! Page layout used here (see `src/page.rs` and `src/meta.rs`): `0..4 crc32c | 4 kind` (3 leaf,
//! 4 overflow) `| 8..16 page id`; meta pages 0 and 1 carry `32..40 magic | 40..44 format` and
//! `80..88 sequence`.

mod common;

use cairn_engine::vfs::fault::{CrashMode, FaultFs, PointKind};
use cairn_engine::{Batch, Error, PAGE_SIZE, Store, StoreOptions};
use common::{Oracle, TREES, assert_check_clean, assert_contents, dump, value};
use std::ops::Bound;
use std::path::Path;
use std::sync::Arc;

const LEAF: u8 = 3;
const OVERFLOW: u8 = 4;

fn open(dir: &Path) -> Result<Store, Error> {
    Store::open(dir, StoreOptions::default())
}

fn key(i: u32) -> Vec<u8> {
    format!("key{i:05}").into_bytes()
}

/// A closed store with 400 keys in `TREES[0]` (many leaves), a marked small value under
/// `needle` and a marked 12 KiB value (overflow pages) under `big`. Returns its oracle.
fn build(dir: &Path) -> Oracle {
    let store = open(dir).unwrap();
    let mut oracle = Oracle::new();
    let mut b = Batch::default();
    for i in 0..400 {
        let v = value(i as u8, 60);
        b.put(TREES[0], &key(i), &v);
        oracle.insert((TREES[0].to_owned(), key(i)), v);
    }
    b.put(TREES[0], b"needle", b"NEEDLE-VALUE-0123456789");
    oracle.insert((TREES[0].to_owned(), b"needle".to_vec()), b"NEEDLE-VALUE-0123456789".to_vec());
    let big = [b"BIG-VALUE-MARK-".as_slice(), &value(7, 12_000)].concat();
    b.put(TREES[1], b"big", &big);
    oracle.insert((TREES[1].to_owned(), b"big".to_vec()), big);
    store.apply(b).unwrap();
    store.close().unwrap();
    oracle
}

fn data_path(dir: &Path) -> std::path::PathBuf {
    dir.join("data.cairn")
}

/// Ids of the pages of `kind` whose bytes contain `needle`.
fn pages_with(file: &[u8], kind: u8, needle: &[u8]) -> Vec<u64> {
    file.chunks_exact(PAGE_SIZE)
        .enumerate()
        .skip(2)
        .filter(|(_, p)| p[4] == kind && p.windows(needle.len()).any(|w| w == needle))
        .map(|(i, _)| i as u64)
        .collect()
}

/// Flips one byte of `needle` in each page listed.
fn flip(file: &mut [u8], pages: &[u64], needle: &[u8]) {
    for &p in pages {
        let page = &mut file[p as usize * PAGE_SIZE..(p as usize + 1) * PAGE_SIZE];
        let at = page.windows(needle.len()).position(|w| w == needle).unwrap() + 3;
        page[at] ^= 0x20;
    }
}

fn corrupt_page(err: &Error) -> Option<u64> {
    match err {
        Error::Corruption(c) => c.page,
        _ => None,
    }
}

/// Every key reads back right or fails as corrupt; no read returns wrong data.
fn never_wrong(store: &Store, oracle: &Oracle) -> usize {
    let mut failed = 0;
    for ((tree, k), v) in oracle {
        match store.get(tree, k) {
            Ok(got) => assert_eq!(got.as_ref(), Some(v), "{tree}/{}: wrong data", String::from_utf8_lossy(k)),
            Err(e) => {
                assert_eq!(e.code(), "STORE_CORRUPT", "{e}");
                failed += 1;
            }
        }
    }
    let snap = store.snapshot().unwrap();
    for tree in TREES {
        match snap.range(tree, Bound::Unbounded, Bound::Unbounded) {
            Ok(entries) => {
                for e in entries {
                    match e {
                        Ok((k, v)) => assert_eq!(
                            oracle.get(&(tree.to_owned(), k.clone())),
                            Some(&v),
                            "range of {tree} yielded wrong data for {}",
                            String::from_utf8_lossy(&k)
                        ),
                        Err(e) => {
                            assert_eq!(e.code(), "STORE_CORRUPT", "{e}");
                            break;
                        }
                    }
                }
            }
            Err(e) => assert_eq!(e.code(), "STORE_CORRUPT", "{e}"),
        }
    }
    failed
}

fn assert_damage_found(dir: &Path, oracle: &Oracle, key: (&str, &[u8]), pages: &[u64]) {
    let store = open(dir).expect("a damaged tree page does not stop the store from opening");
    let err = store.get(key.0, key.1).expect_err("reading a damaged page must fail");
    assert_eq!(err.code(), "STORE_CORRUPT", "{err}");
    let page = corrupt_page(&err).unwrap_or_else(|| panic!("the error names no page: {err}"));
    assert!(pages.contains(&page), "the error names page {page}, the damage is in {pages:?}");
    assert!(err.to_string().contains(&format!("page {page}")), "message: {err}");

    let report = store.check().expect("check reports damage, it does not fail on it");
    assert!(!report.ok, "check says ok");
    assert!(
        report.problems.iter().any(|p| p.page.is_some_and(|id| pages.contains(&id))),
        "no problem names pages {pages:?}: {:?}",
        report.problems.iter().map(|p| (p.page, p.what.clone())).collect::<Vec<_>>()
    );
    assert!(never_wrong(&store, oracle) >= 1);
}

#[test]
fn a_flipped_byte_in_a_leaf_is_reported_with_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let oracle = build(dir.path());
    let mut file = std::fs::read(data_path(dir.path())).unwrap();
    let needle = b"NEEDLE-VALUE";
    let pages = pages_with(&file, LEAF, needle);
    assert!(!pages.is_empty(), "no leaf holds the needle");
    flip(&mut file, &pages, needle);
    std::fs::write(data_path(dir.path()), &file).unwrap();
    assert_damage_found(dir.path(), &oracle, (TREES[0], b"needle"), &pages);
}

#[test]
fn a_flipped_byte_in_an_overflow_page_is_reported_with_its_page() {
    let dir = tempfile::tempdir().unwrap();
    let oracle = build(dir.path());
    let mut file = std::fs::read(data_path(dir.path())).unwrap();
    let needle = b"BIG-VALUE-MARK";
    let pages = pages_with(&file, OVERFLOW, needle);
    assert!(!pages.is_empty(), "no overflow page holds the big value's start");
    flip(&mut file, &pages, needle);
    std::fs::write(data_path(dir.path()), &file).unwrap();
    assert_damage_found(dir.path(), &oracle, (TREES[1], b"big"), &pages);
}

#[test]
fn a_page_written_to_the_wrong_place_is_reported() {
    // Swap two leaves: each is intact but at the other's place.
    let dir = tempfile::tempdir().unwrap();
    let oracle = build(dir.path());
    let mut file = std::fs::read(data_path(dir.path())).unwrap();
    let a = pages_with(&file, LEAF, b"needle")[0] as usize;
    let b = pages_with(&file, LEAF, &key(0))[0] as usize;
    assert_ne!(a, b);
    let page_a = file[a * PAGE_SIZE..(a + 1) * PAGE_SIZE].to_vec();
    file.copy_within(b * PAGE_SIZE..(b + 1) * PAGE_SIZE, a * PAGE_SIZE);
    file[b * PAGE_SIZE..(b + 1) * PAGE_SIZE].copy_from_slice(&page_a);
    std::fs::write(data_path(dir.path()), &file).unwrap();
    assert_damage_found(dir.path(), &oracle, (TREES[0], b"needle"), &[a as u64, b as u64]);
}

/// Builds a store with two checkpoints (so both meta pages are in use) and returns the oracle and
/// which meta page is the newer (by its sequence).
fn build_two_metas(dir: &Path) -> (Oracle, usize) {
    let mut oracle = build(dir);
    let store = open(dir).unwrap();
    store
        .apply({
            let mut b = Batch::default();
            b.put(TREES[2], b"second", b"checkpoint");
            b
        })
        .unwrap();
    oracle.insert((TREES[2].to_owned(), b"second".to_vec()), b"checkpoint".to_vec());
    store.close().unwrap();
    let file = std::fs::read(data_path(dir)).unwrap();
    let seq = |p: usize| u64::from_le_bytes(file[p * PAGE_SIZE + 80..p * PAGE_SIZE + 88].try_into().unwrap());
    assert_ne!(seq(0), seq(1), "both meta pages carry the same sequence");
    (oracle, usize::from(seq(1) > seq(0)))
}

#[test]
fn a_damaged_older_meta_page_is_ignored() {
    let dir = tempfile::tempdir().unwrap();
    let (oracle, newer) = build_two_metas(dir.path());
    let older = 1 - newer;
    let mut file = std::fs::read(data_path(dir.path())).unwrap();
    file[older * PAGE_SIZE + 100] ^= 0xFF;
    std::fs::write(data_path(dir.path()), &file).unwrap();
    let store = open(dir.path()).unwrap();
    assert_contents(&store, &oracle, "older meta damaged");
    assert_check_clean(&store, "older meta damaged");
}

#[test]
fn a_damaged_newer_meta_page_never_yields_wrong_data() {
    // With the log already reset, falling back to the older meta cannot bring back the last
    // checkpoint's commits; what matters is that the result is either a consistent older state
    // or a clear error.
    let dir = tempfile::tempdir().unwrap();
    let (oracle, newer) = build_two_metas(dir.path());
    let mut file = std::fs::read(data_path(dir.path())).unwrap();
    file[newer * PAGE_SIZE + 100] ^= 0xFF;
    std::fs::write(data_path(dir.path()), &file).unwrap();
    match open(dir.path()) {
        Ok(store) => {
            let got = dump(&store.snapshot().unwrap()).expect("a store that opens reads without error");
            let mut older = oracle.clone();
            older.remove(&(TREES[2].to_owned(), b"second".to_vec()));
            assert!(got == oracle || got == older, "the store opened with contents of no checkpoint");
            assert_check_clean(&store, "newer meta damaged");
        }
        Err(e) => assert_eq!(e.code(), "STORE_CORRUPT", "{e}"),
    }
}

#[test]
fn a_torn_meta_write_during_a_checkpoint_falls_back_to_the_other_meta() {
    // Run checkpoints on FaultFs, find their meta page writes, and crash at each with it torn.
    let commits: Vec<(Vec<u8>, Vec<u8>)> =
        (0..4u8).map(|i| (vec![b'a' + i], value(i, 1000 + 1500 * usize::from(i)))).collect();
    let run = |fs: &FaultFs, acked: &mut usize| -> Result<(), Error> {
        let store =
            Store::open(Path::new("/s"), StoreOptions { vfs: Arc::new(fs.clone()), ..StoreOptions::default() })?;
        for (k, v) in &commits {
            let mut b = Batch::default();
            b.put(TREES[0], k, v);
            store.apply(b)?;
            *acked += 1;
            store.checkpoint()?;
        }
        store.close()
    };
    let dry = FaultFs::new();
    dry.record_trace(true);
    run(&dry, &mut 0).unwrap();
    let meta_writes: Vec<u64> = dry
        .trace()
        .iter()
        .filter(|p| {
            p.path.ends_with("data.cairn")
                && matches!(p.kind, PointKind::Write { offset, .. } if offset == 0 || offset == PAGE_SIZE as u64)
        })
        .map(|p| p.index)
        .collect();
    assert!(meta_writes.len() >= 4, "expected a meta write per checkpoint, trace has {meta_writes:?}");
    for &n in &meta_writes {
        for seed in 0..4 {
            let fs = FaultFs::new();
            fs.crash_after_torn(n, seed);
            let mut acked = 0;
            assert!(run(&fs, &mut acked).is_err());
            let image = fs.crash_image(CrashMode::TornWrite, seed);
            let context = format!("torn meta write at point {n} (seed {seed}, {acked} commits acknowledged)");
            let store = Store::open(Path::new("/s"), StoreOptions { vfs: Arc::new(image), ..StoreOptions::default() })
                .unwrap_or_else(|e| panic!("{context}: reopen failed: {e}"));
            assert_check_clean(&store, &context);
            let want: Oracle =
                commits[..acked].iter().map(|(k, v)| ((TREES[0].to_owned(), k.clone()), v.clone())).collect();
            assert_contents(&store, &want, &context);
        }
    }
}

/// Rewrites both meta pages with `format` as their version, resealing them when `reseal`.
fn set_format(dir: &Path, format: u32, reseal: bool) {
    let mut file = std::fs::read(data_path(dir)).unwrap();
    for p in 0..2usize {
        let page = &mut file[p * PAGE_SIZE..(p + 1) * PAGE_SIZE];
        page[40..44].copy_from_slice(&format.to_le_bytes());
        if reseal {
            let crc = crc32c::crc32c_append(crc32c::crc32c(&(p as u64).to_le_bytes()), &page[4..]);
            page[0..4].copy_from_slice(&crc.to_le_bytes());
        }
    }
    std::fs::write(data_path(dir), &file).unwrap();
}

#[test]
fn a_newer_format_is_refused() {
    for reseal in [true, false] {
        let dir = tempfile::tempdir().unwrap();
        build(dir.path());
        set_format(dir.path(), 2, reseal);
        let err = open(dir.path()).expect_err("a newer format must be refused");
        assert_eq!(err.code(), "STORE_FORMAT_TOO_NEW", "{err}");
        assert!(matches!(err, Error::FormatTooNew { found: 2, supported: 1 }), "{err:?}");
        // The refusal must not have touched the file.
        let file = std::fs::read(data_path(dir.path())).unwrap();
        assert_eq!(u32::from_le_bytes(file[40..44].try_into().unwrap()), 2);
    }
}

#[test]
fn a_foreign_file_is_not_a_store() {
    let dir = tempfile::tempdir().unwrap();
    let text = b"This is a text file, not a Cairn store. ".repeat(300);
    std::fs::write(data_path(dir.path()), &text).unwrap();
    let err = open(dir.path()).expect_err("a foreign file must be refused");
    assert_eq!(err.code(), "STORE_NOT_A_STORE", "{err}");
    assert_eq!(std::fs::read(data_path(dir.path())).unwrap(), text, "the foreign file was modified");

    // A short foreign file too (shorter than the two meta pages).
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(data_path(dir.path()), b"hello").unwrap();
    let err = open(dir.path()).expect_err("a short foreign file must be refused");
    assert_eq!(err.code(), "STORE_NOT_A_STORE", "{err}");
    assert_eq!(std::fs::read(data_path(dir.path())).unwrap(), b"hello", "the foreign file was modified");
}

#[test]
fn both_meta_pages_damaged_is_corruption_not_a_new_store() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let mut file = std::fs::read(data_path(dir.path())).unwrap();
    file[100] ^= 0xFF;
    file[PAGE_SIZE + 100] ^= 0xFF;
    std::fs::write(data_path(dir.path()), &file).unwrap();
    let err = open(dir.path()).expect_err("a store with no valid meta must not open");
    assert_eq!(err.code(), "STORE_CORRUPT", "{err}");
}

#[test]
fn a_second_open_of_the_same_directory_is_locked() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path()).unwrap();
    let err = open(dir.path()).expect_err("a second open must be refused");
    assert_eq!(err.code(), "STORE_LOCKED", "{err}");
    let pid = std::process::id().to_string();
    assert!(err.to_string().contains(&pid), "the message does not name pid {pid}: {err}");
    // The refused opener left the first one working.
    let mut b = Batch::default();
    b.put(TREES[0], b"k", b"v");
    store.apply(b).unwrap();
    store.close().unwrap();
    // Closing releases the lock.
    let again = open(dir.path()).unwrap();
    assert_eq!(again.get(TREES[0], b"k").unwrap().as_deref(), Some(&b"v"[..]));
    // So does dropping the last handle without close.
    let clone = again.clone();
    drop(again);
    assert!(open(dir.path()).is_err(), "a live clone still holds the lock");
    drop(clone);
    let third = open(dir.path()).expect("dropping every handle releases the lock");
    third.close().unwrap();
}

#[test]
fn the_lock_holds_on_fault_fs_too() {
    let fs = FaultFs::new();
    let opts = || StoreOptions { vfs: Arc::new(fs.clone()), ..StoreOptions::default() };
    let store = Store::open(Path::new("/s"), opts()).unwrap();
    let err = Store::open(Path::new("/s"), opts()).expect_err("second open");
    assert_eq!(err.code(), "STORE_LOCKED");
    assert!(err.to_string().contains(&std::process::id().to_string()), "{err}");
    store.close().unwrap();
    Store::open(Path::new("/s"), opts()).unwrap().close().unwrap();
}

#[test]
fn a_backup_that_meets_a_damaged_page_fails_and_leaves_no_partial_file() {
    let dir = tempfile::tempdir().unwrap();
    build(dir.path());
    let mut file = std::fs::read(data_path(dir.path())).unwrap();
    let needle = b"NEEDLE-VALUE";
    let pages = pages_with(&file, LEAF, needle);
    flip(&mut file, &pages, needle);
    std::fs::write(data_path(dir.path()), &file).unwrap();
    let store = open(dir.path()).unwrap();
    let dest = tempfile::tempdir().unwrap();
    let err = store.backup(dest.path()).expect_err("a backup that reads a damaged page must fail");
    assert_eq!(err.code(), "STORE_CORRUPT", "{err}");
    let left: Vec<_> = std::fs::read_dir(dest.path()).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert!(left.is_empty(), "the failed backup left {left:?}");
}
