//! Replays the fuzz corpus (`fuzz/corpus/<target>/`) through the same decoders the fuzz targets
//! call, on stable Rust: no input may panic, inputs named `ok-*` are real store bytes and must
//! decode, and any single flipped byte of a real page must be refused.
//!
//! `seeds_from_a_real_store_decode_as_labelled` builds seeds from a real store (pages of every
//! kind, meta pages, a log, batches) plus mutations of them and checks them like the corpus;
//! with `CAIRN_WRITE_CORPUS=1` it writes them into `fuzz/corpus` (how the seed corpus was made).

mod common;

use cairn_engine::{Batch, PAGE_SIZE, Store, StoreOptions, decode};
use common::{TREES, value};
use std::fs;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};

type Decoder = fn(&[u8]) -> Result<(), String>;

/// A named change to a real page, for the seed corpus.
type Mutation = (&'static str, fn(&mut [u8]));

fn page(b: &[u8]) -> Result<(), String> {
    decode::page(b).map_err(|e| e.to_string())
}

fn meta(b: &[u8]) -> Result<(), String> {
    decode::meta(b).map_err(|e| e.to_string())
}

fn wal(b: &[u8]) -> Result<(), String> {
    decode::wal_record(b).map_err(|e| e.to_string())
}

/// As the `batch_decode` target: a decoded batch re-encodes to exactly its input.
fn batch(b: &[u8]) -> Result<(), String> {
    let decoded = Batch::decode(b).map_err(|e| e.to_string())?;
    assert_eq!(decoded.encode(), b, "decode then encode changed the bytes");
    Ok(())
}

const TARGETS: [(&str, Decoder); 4] =
    [("page_decode", page), ("meta_decode", meta), ("wal_record", wal), ("batch_decode", batch)];

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz").join("corpus")
}

fn files(root: &Path, target: &str) -> Vec<(String, Vec<u8>)> {
    let dir = root.join(target);
    let mut out: Vec<_> = fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| {
            let e = e.unwrap();
            (e.file_name().to_string_lossy().into_owned(), fs::read(e.path()).unwrap())
        })
        .collect();
    out.sort();
    out
}

fn run(name: &str, target: &str, decoder: Decoder, bytes: &[u8]) -> Result<(), String> {
    catch_unwind(AssertUnwindSafe(|| decoder(bytes)))
        .unwrap_or_else(|_| panic!("{target} panicked on corpus file {name} ({} bytes)", bytes.len()))
}

#[test]
fn every_corpus_file_decodes_without_panicking() {
    let total = replay(&corpus_dir());
    eprintln!("replayed {total} corpus files");
}

/// Runs every file under `root` through its decoder (and every other one); `ok-*` files must
/// decode. Returns how many files there were.
fn replay(root: &Path) -> usize {
    let mut total = 0;
    for (target, decoder) in TARGETS {
        let inputs = files(root, target);
        assert!(!inputs.is_empty(), "the corpus of {target} is empty");
        for (name, bytes) in &inputs {
            let result = run(name, target, decoder, bytes);
            if name.starts_with("ok-") {
                assert!(result.is_ok(), "{target}: real input {name} was refused: {result:?}");
            }
            // Every input through every other decoder too: they all face arbitrary bytes.
            for (other, d) in TARGETS {
                let _ = run(name, other, d, bytes);
            }
            total += 1;
        }
    }
    total
}

#[test]
fn a_single_flipped_byte_in_a_real_page_is_refused() {
    for (target, decoder) in [("page_decode", page as Decoder), ("meta_decode", meta)] {
        for (name, bytes) in files(&corpus_dir(), target).iter().filter(|(n, _)| n.starts_with("ok-")) {
            for at in 0..bytes.len() {
                for mask in [0x01u8, 0x80, 0xFF] {
                    let mut b = bytes.clone();
                    b[at] ^= mask;
                    assert!(decoder(&b).is_err(), "{target}: {name} with byte {at} xor {mask:#04x} still decodes");
                }
            }
        }
    }
}

/// Stamps a page's checksum for the id it claims (bytes 8..16), so a mutation reaches the
/// structural checks behind the checksum.
fn reseal(page: &mut [u8]) {
    let id = u64::from_le_bytes(page[8..16].try_into().unwrap());
    let crc = crc32c::crc32c_append(crc32c::crc32c(&id.to_le_bytes()), &page[4..]);
    page[0..4].copy_from_slice(&crc.to_le_bytes());
}

/// Stamps a meta page's checksum for the slot it is in.
fn reseal_meta(page: &mut [u8], slot: u64) {
    let crc = crc32c::crc32c_append(crc32c::crc32c(&slot.to_le_bytes()), &page[4..]);
    page[0..4].copy_from_slice(&crc.to_le_bytes());
}

fn write(root: &Path, target: &str, name: &str, bytes: &[u8]) {
    let dir = root.join(target);
    fs::create_dir_all(&dir).unwrap();
    fs::write(dir.join(name), bytes).unwrap();
}

/// A store whose file holds pages of every kind; returns (data file, log with records).
fn real_store() -> (Vec<u8>, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let mut b = Batch::default();
    for i in 0..700u32 {
        let len = if i % 97 == 0 { 9000 } else { 40 };
        b.put(TREES[0], format!("key{i:05}").as_bytes(), &value(i as u8, len));
    }
    b.put(TREES[1], b"x", b"y").put(TREES[2], &[0xFF; 300], &[]);
    store.apply(b).unwrap();
    store.checkpoint().unwrap();
    let mut b = Batch::default();
    for i in (0..700u32).step_by(3) {
        b.delete(TREES[0], format!("key{i:05}").as_bytes());
    }
    store.apply(b).unwrap();
    store.checkpoint().unwrap();
    for i in 0..3u8 {
        let mut b = Batch::default();
        b.put(TREES[1], &[b'a' + i], &value(i, 30 + 500 * usize::from(i))).delete(TREES[0], b"key00001");
        store.apply(b).unwrap();
    }
    let log = fs::read(dir.path().join("wal.cairn")).unwrap();
    store.close().unwrap();
    let data = fs::read(dir.path().join("data.cairn")).unwrap();
    // Trim the log after its intact records (older generations and zeros follow).
    let salt = u64::from_le_bytes(log[16..24].try_into().unwrap());
    let mut end = 32;
    while end + 16 <= log.len() {
        let len = u32::from_le_bytes(log[end..end + 4].try_into().unwrap()) as usize;
        let Some(payload) = log.get(end + 16..end + 16 + len) else { break };
        if record_crc(salt, &log[end + 8..end + 16], payload) != log[end + 4..end + 8] {
            break;
        }
        end += 16 + len;
    }
    assert!(end > 32, "the log holds no record");
    (data, log[..end].to_vec())
}

/// A log record's checksum: over the salt, the length, the txn and the payload.
fn record_crc(salt: u64, txn: &[u8], payload: &[u8]) -> [u8; 4] {
    let mut c = crc32c::crc32c(&salt.to_le_bytes());
    c = crc32c::crc32c_append(c, &(payload.len() as u32).to_le_bytes());
    c = crc32c::crc32c_append(c, txn);
    crc32c::crc32c_append(c, payload).to_le_bytes()
}

#[test]
fn seeds_from_a_real_store_decode_as_labelled() {
    let scratch = tempfile::tempdir().unwrap();
    let root = if std::env::var_os("CAIRN_WRITE_CORPUS").is_some() { corpus_dir() } else { scratch.path().to_owned() };
    let write = |target: &str, name: &str, bytes: &[u8]| write(&root, target, name, bytes);
    let (data, log) = real_store();
    let pages: Vec<&[u8]> = data.chunks_exact(PAGE_SIZE).collect();
    // Pages by kind: 1 meta, 2 branch, 3 leaf, 4 overflow, 5 free list.
    for (kind, label, keep) in [(2u8, "branch", 2), (3, "leaf", 3), (4, "overflow", 2), (5, "freelist", 2)] {
        let found: Vec<&[u8]> = pages[2..].iter().copied().filter(|p| p[4] == kind).take(keep).collect();
        assert!(!found.is_empty(), "the store has no {label} page");
        for (i, p) in found.iter().enumerate() {
            write("page_decode", &format!("ok-{label}-{i}"), p);
            // Mutations behind a valid checksum, so the structural checks are what refuses them.
            let mutations: [Mutation; 6] = [
                ("count-max", |p| p[6..8].copy_from_slice(&u16::MAX.to_le_bytes())),
                ("count-zero", |p| p[6..8].fill(0)),
                ("slots-scrambled", |p| p[32..96].iter_mut().for_each(|b| *b = b.wrapping_mul(31).wrapping_add(7))),
                ("body-ff", |p| p[PAGE_SIZE / 2..].fill(0xFF)),
                ("link-self", |p| {
                    let id: [u8; 8] = p[8..16].try_into().unwrap();
                    p[24..32].copy_from_slice(&id);
                }),
                ("kind-swapped", |p| p[4] = if p[4] == 3 { 2 } else { 3 }),
            ];
            for (m, f) in mutations {
                let mut b = p.to_vec();
                f(&mut b);
                reseal(&mut b);
                write("page_decode", &format!("{label}-{i}-{m}"), &b);
            }
            write("page_decode", &format!("{label}-{i}-truncated"), &p[..1000]);
        }
    }
    for (slot, &m) in pages.iter().take(2).enumerate() {
        write("meta_decode", &format!("ok-meta-{slot}"), m);
        write("page_decode", &format!("ok-meta-{slot}"), m);
        let mutations: [Mutation; 7] = [
            ("format-0", |p| p[40..44].fill(0)),
            ("format-2", |p| p[40..44].copy_from_slice(&2u32.to_le_bytes())),
            ("page-size-8k", |p| p[44..48].copy_from_slice(&8192u32.to_le_bytes())),
            ("page-count-1", |p| p[72..80].copy_from_slice(&1u64.to_le_bytes())),
            ("catalog-past-end", |p| {
                let n: [u8; 8] = p[72..80].try_into().unwrap();
                p[48..56].copy_from_slice(&n);
            }),
            ("freelist-huge", |p| p[64..72].copy_from_slice(&u64::MAX.to_le_bytes())),
            ("kind-leaf", |p| p[4] = 3),
        ];
        for (name, f) in mutations {
            let mut b = m.to_vec();
            f(&mut b);
            reseal_meta(&mut b, slot as u64);
            write("meta_decode", &format!("meta-{slot}-{name}"), &b);
        }
    }
    // The log.
    write("wal_record", "ok-log-3-records", &log);
    write("wal_record", "ok-header-only", &log[..32]);
    write("wal_record", "log-truncated", &log[..log.len() - 7]);
    let mut b = log.clone();
    let mid = 32 + (log.len() - 32) / 2;
    b[mid] ^= 0x40;
    write("wal_record", "log-flipped", &b);
    let mut b = log[..48].to_vec();
    b[32..36].copy_from_slice(&u32::MAX.to_le_bytes());
    write("wal_record", "log-len-max", &b);
    // A record whose checksum is right but whose payload is not a batch.
    let salt = u64::from_le_bytes(log[16..24].try_into().unwrap());
    let payload = [1u8, 0xFF, 0xFF, b't'];
    let mut b = log[..32].to_vec();
    b.extend_from_slice(&(payload.len() as u32).to_le_bytes());
    b.extend_from_slice(&record_crc(salt, &1u64.to_le_bytes(), &payload));
    b.extend_from_slice(&1u64.to_le_bytes());
    b.extend_from_slice(&payload);
    write("wal_record", "log-bad-batch", &b);
    // Batches.
    let mut ok = Batch::default();
    ok.put("t", b"k", b"v").delete("other", b"").put("β", &[0; 40], &value(1, 300));
    let enc = ok.encode();
    write("batch_decode", "ok-mixed", &enc);
    write("batch_decode", "ok-empty", &[]);
    let mut big = Batch::default();
    big.put(&"n".repeat(255), &[7; 1536], &value(2, 5000));
    write("batch_decode", "ok-limits", &big.encode());
    write("batch_decode", "truncated", &enc[..enc.len() - 1]);
    let mut b = enc.clone();
    b[0] = 9;
    write("batch_decode", "bad-op", &b);
    write("batch_decode", "empty-tree-name", &[1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]);
    write("batch_decode", "tree-not-utf8", &[2, 2, 0, 0xC3, 0x28, 0, 0, 0, 0]);
    let mut b = vec![2, 1, 0, b't'];
    b.extend_from_slice(&1537u32.to_le_bytes());
    b.extend_from_slice(&[0; 1537]);
    write("batch_decode", "key-too-long", &b);
    write("batch_decode", "value-len-max", &[1, 1, 0, b't', 0, 0, 0, 0, 0xFF, 0xFF, 0xFF, 0xFF]);
    assert!(replay(&root) > 0);
}
