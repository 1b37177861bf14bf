//! Model-based tests: random sequences of writes, snapshots, reads, checkpoints, reopens and
//! compactions against a `BTreeMap` oracle. Keys come from a small alphabet so overwrites and
//! deletes hit; values run from 0 bytes to tens of KiB so overflow pages are used; a few keys
//! are long (up to the 1536-byte limit) so branch pages hold few keys and trees grow deep.
//!
//! `PROPTEST_CASES` sets the number of sequences (default 256).

mod common;

use cairn_engine::{Batch, CompactOptions, Error, Snapshot, Store, StoreOptions, WriteTxn};
use common::{Oracle, TREES, assert_check_clean, assert_contents, counts, diff, dump, show, value};
use proptest::prelude::*;
use std::fmt;
use std::ops::Bound;
use std::path::Path;
use std::sync::Once;
use std::sync::mpsc;

/// A key: up to three letters of `abcd`, then `pad` bytes of `~`.
#[derive(Clone, PartialEq, Eq)]
struct Key {
    base: Vec<u8>,
    pad: usize,
}

impl Key {
    fn bytes(&self) -> Vec<u8> {
        let mut k = self.base.clone();
        k.resize(self.base.len() + self.pad, b'~');
        k
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", String::from_utf8_lossy(&self.base))?;
        if self.pad > 0 {
            write!(f, "+{}~", self.pad)?;
        }
        Ok(())
    }
}

/// A value given by its seed and length (see `common::value`).
#[derive(Clone, Copy)]
struct Val {
    seed: u8,
    len: usize,
}

impl Val {
    fn bytes(self) -> Vec<u8> {
        value(self.seed, self.len)
    }
}

impl fmt::Debug for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "v{}x{}", self.seed, self.len)
    }
}

/// One change inside a batch or a write closure.
#[derive(Clone, Debug)]
enum Change {
    Put(usize, Key, Val),
    Del(usize, Key),
}

/// How a write closure ends.
#[derive(Clone, Copy, Debug)]
enum Ending {
    Commit,
    Fail,
    Panic,
}

#[derive(Clone, Debug)]
enum Step {
    Put(usize, Key, Val),
    Delete(usize, Key),
    Apply(Vec<Change>),
    /// A `Store::write` closure making the changes, reading its own writes as it goes.
    Write(Vec<Change>, Ending),
    /// Several writes submitted without waiting, so they can share a group commit: batches, and
    /// closures of which some fail or panic (rolling back only themselves).
    Submit(Vec<(Vec<Change>, Ending)>),
    /// `count` keys `k00000…` from `start`, in one batch, so leaves split.
    BulkPut {
        tree: usize,
        start: u16,
        count: u16,
        len: usize,
    },
    /// Deletes `count` keys `k00000…` from `start`, in one batch, so leaves merge.
    BulkDelete {
        tree: usize,
        start: u16,
        count: u16,
    },
    Get(usize, Key),
    Range(usize, Option<(Key, bool)>, Option<(Key, bool)>),
    Prefix(usize, Vec<u8>),
    TakeSnapshot,
    /// Reads the whole of the snapshot at this index (modulo the number held).
    CheckSnapshot(usize),
    DropSnapshot(usize),
    Checkpoint,
    Reopen,
    Compact {
        purge: bool,
    },
    /// `check()` in the middle of a sequence.
    Check,
    /// A backup into a new directory, opened and compared there.
    Backup,
}

fn key() -> impl Strategy<Value = Key> {
    (
        prop::collection::vec(prop::sample::select(b"abcd".to_vec()), 0..=3),
        prop_oneof![12 => Just(0usize), 1 => Just(200usize), 1 => Just(1533usize)],
    )
        .prop_map(|(base, pad)| Key { base, pad })
}

fn val() -> impl Strategy<Value = Val> {
    (
        any::<u8>(),
        prop_oneof![
            2 => Just(0usize),
            5 => 1..40usize,
            3 => 100..1200usize,
            2 => 1900..2200usize,
            2 => 3000..5000usize,
            1 => 5000..40_000usize,
        ],
    )
        .prop_map(|(seed, len)| Val { seed, len })
}

fn tree() -> impl Strategy<Value = usize> {
    0..TREES.len()
}

fn change() -> impl Strategy<Value = Change> {
    prop_oneof![
        3 => (tree(), key(), val()).prop_map(|(t, k, v)| Change::Put(t, k, v)),
        1 => (tree(), key()).prop_map(|(t, k)| Change::Del(t, k)),
    ]
}

fn bound() -> impl Strategy<Value = Option<(Key, bool)>> {
    prop::option::of((key(), any::<bool>()))
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        20 => (tree(), key(), val()).prop_map(|(t, k, v)| Step::Put(t, k, v)),
        8 => (tree(), key()).prop_map(|(t, k)| Step::Delete(t, k)),
        6 => prop::collection::vec(change(), 1..12).prop_map(Step::Apply),
        4 => (prop::collection::vec(change(), 0..8),
              prop_oneof![4 => Just(Ending::Commit), 1 => Just(Ending::Fail), 1 => Just(Ending::Panic)])
            .prop_map(|(c, e)| Step::Write(c, e)),
        3 => prop::collection::vec(
                (prop::collection::vec(change(), 1..4),
                 prop_oneof![6 => Just(Ending::Commit), 1 => Just(Ending::Fail), 1 => Just(Ending::Panic)]),
                2..6)
            .prop_map(Step::Submit),
        2 => (tree(), 0..400u16, 1..300u16, prop_oneof![Just(0usize), 1..64usize, 200..700usize])
            .prop_map(|(tree, start, count, len)| Step::BulkPut { tree, start, count, len }),
        2 => (tree(), 0..400u16, 1..300u16)
            .prop_map(|(tree, start, count)| Step::BulkDelete { tree, start, count }),
        6 => (tree(), key()).prop_map(|(t, k)| Step::Get(t, k)),
        3 => (tree(), bound(), bound()).prop_map(|(t, a, b)| Step::Range(t, a, b)),
        2 => (tree(), prop_oneof![Just(b"k0".to_vec()), Just(b"k001".to_vec()),
                                  prop::collection::vec(prop::sample::select(b"abcd~".to_vec()), 0..3)])
            .prop_map(|(t, p)| Step::Prefix(t, p)),
        3 => Just(Step::TakeSnapshot),
        3 => any::<usize>().prop_map(Step::CheckSnapshot),
        1 => any::<usize>().prop_map(Step::DropSnapshot),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Reopen),
        1 => any::<bool>().prop_map(|purge| Step::Compact { purge }),
        2 => Just(Step::Check),
        1 => Just(Step::Backup),
    ]
}

fn bulk_key(i: u16) -> Vec<u8> {
    format!("k{i:05}").into_bytes()
}

/// The oracle's entries of one tree within the bounds, in order.
fn oracle_range(oracle: &Oracle, tree: usize, start: Bound<&[u8]>, end: Bound<&[u8]>) -> Vec<(Vec<u8>, Vec<u8>)> {
    oracle
        .iter()
        .filter(|((t, k), _)| {
            t == TREES[tree]
                && match start {
                    Bound::Included(s) => k.as_slice() >= s,
                    Bound::Excluded(s) => k.as_slice() > s,
                    Bound::Unbounded => true,
                }
                && match end {
                    Bound::Included(e) => k.as_slice() <= e,
                    Bound::Excluded(e) => k.as_slice() < e,
                    Bound::Unbounded => true,
                }
        })
        .map(|((_, k), v)| (k.clone(), v.clone()))
        .collect()
}

fn to_bound(b: Option<&(Vec<u8>, bool)>) -> Bound<&[u8]> {
    match b {
        None => Bound::Unbounded,
        Some((k, true)) => Bound::Included(k.as_slice()),
        Some((k, false)) => Bound::Excluded(k.as_slice()),
    }
}

/// Applies a change to the oracle; whether it changed anything (a put always does, a delete
/// only of a present key). A write that changes nothing takes no txn id.
fn apply_change(oracle: &mut Oracle, c: &Change) -> bool {
    match c {
        Change::Put(t, k, v) => {
            oracle.insert((TREES[*t].to_owned(), k.bytes()), v.bytes());
            true
        }
        Change::Del(t, k) => oracle.remove(&(TREES[*t].to_owned(), k.bytes())).is_some(),
    }
}

fn apply_changes(oracle: &mut Oracle, changes: &[Change]) -> bool {
    changes.iter().fold(false, |any, c| apply_change(oracle, c) | any)
}

fn batch_of(changes: &[Change]) -> Batch {
    let mut b = Batch::default();
    for c in changes {
        match c {
            Change::Put(t, k, v) => b.put(TREES[*t], &k.bytes(), &v.bytes()),
            Change::Del(t, k) => b.delete(TREES[*t], &k.bytes()),
        };
    }
    b
}

const PANIC_MESSAGE: &str = "model: deliberate panic in a write closure";

/// Keeps the deliberate panics of `Ending::Panic` out of the test output, and the failures of
/// the model's own thread while proptest shrinks (it reports the minimal one's message itself).
fn quiet_deliberate_panics() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let deliberate = info.payload().downcast_ref::<&str>() == Some(&PANIC_MESSAGE);
            let verdict = info.payload().downcast_ref::<String>().is_some_and(|m| m.starts_with("Test failed"));
            let shrinking =
                !verdict && std::thread::current().name().is_some_and(|n| n.ends_with("store_matches_the_model"));
            if !deliberate && !shrinking {
                default(info);
            }
        }));
    });
}

/// Makes `changes` in `txn`, checking each read of its own writes against `view` (the oracle
/// plus this closure's changes so far). Returns the mismatches.
/// Makes `changes` in `txn`, checking every read against `view` (the oracle as the transaction
/// should see it), which it keeps up to date; `lens` ends with `tree_len` of every tree (which
/// merges waiting changes into their trees first).
fn run_changes(txn: &mut WriteTxn, changes: &[Change], view: &mut Oracle, lens: bool) -> Result<Vec<String>, Error> {
    let mut wrong = Vec::new();
    for c in changes {
        match c {
            Change::Put(t, k, v) => {
                txn.put(TREES[*t], &k.bytes(), &v.bytes())?;
                let got = txn.get(TREES[*t], &k.bytes())?;
                if got.as_deref() != Some(v.bytes().as_slice()) {
                    wrong.push(format!("get after put {c:?} returned {:?}", got.as_deref().map(show)));
                }
            }
            Change::Del(t, k) => {
                let existed = txn.delete(TREES[*t], &k.bytes())?;
                let expected = view.contains_key(&(TREES[*t].to_owned(), k.bytes()));
                if existed != expected {
                    wrong.push(format!("delete {c:?} returned {existed}, expected {expected}"));
                }
                if let Some(got) = txn.get(TREES[*t], &k.bytes())? {
                    wrong.push(format!("get after delete {c:?} returned {}", show(&got)));
                }
            }
        }
        apply_change(view, c);
        // A bounded scan and a prefix scan around the key just written, while puts may still be
        // waiting to be merged into the tree: the scans must merge them in.
        let (Change::Put(t, k, _) | Change::Del(t, k)) = c;
        let key = k.bytes();
        let (lo, hi) = (&key[..key.len() / 2], key.as_slice());
        let got = txn.range(TREES[*t], Bound::Excluded(lo), Bound::Included(hi))?;
        if got != oracle_range(view, *t, Bound::Excluded(lo), Bound::Included(hi)) {
            wrong.push(format!("bounded range after {c:?} inside the closure differs"));
        }
        let got = txn.prefix(TREES[*t], lo)?;
        let want: Vec<_> = oracle_range(view, *t, Bound::Included(lo), Bound::Unbounded)
            .into_iter()
            .take_while(|(k, _)| k.starts_with(lo))
            .collect();
        if got != want {
            wrong.push(format!("prefix scan after {c:?} inside the closure differs"));
        }
    }
    for (t, tree) in TREES.iter().enumerate() {
        let got = txn.range(tree, Bound::Unbounded, Bound::Unbounded)?;
        let want = oracle_range(view, t, Bound::Unbounded, Bound::Unbounded);
        if got != want {
            wrong.push(format!("range of {tree} inside the closure: {} entries, expected {}", got.len(), want.len()));
        }
        if lens {
            let len = txn.tree_len(tree)?;
            if len != want.len() as u64 {
                wrong.push(format!("tree_len of {tree} inside the closure: {len}, expected {}", want.len()));
            }
        }
    }
    Ok(wrong)
}

/// A snapshot the test holds, with what it must show. `closed` when its store has been closed
/// since: it may then also answer `STORE_CLOSED`, but never wrong data, even while the reopened
/// store reuses pages.
struct Held {
    snap: Snapshot,
    want: Oracle,
    closed: bool,
}

/// Unwraps a read of a held snapshot; `None` when it may and did answer `STORE_CLOSED`.
fn closed_or<T>(r: Result<T, Error>, closed: bool, what: &str) -> Option<T> {
    match r {
        Ok(v) => Some(v),
        Err(Error::Closed) if closed => None,
        Err(e) => panic!("{what}: {e} ({})", e.code()),
    }
}

struct Harness {
    dir: tempfile::TempDir,
    cache_bytes: usize,
    checkpoint_bytes: u64,
    store: Store,
    oracle: Oracle,
    snapshots: Vec<Held>,
    last_txn: u64,
    log: Vec<String>,
}

fn open(dir: &Path, cache_bytes: usize, checkpoint_bytes: u64) -> Store {
    let opts = StoreOptions { cache_bytes, checkpoint_bytes, ..StoreOptions::default() };
    Store::open(dir, opts).unwrap_or_else(|e| panic!("open failed: {e} ({})", e.code()))
}

impl Harness {
    fn new(cache_bytes: usize, checkpoint_bytes: u64) -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), cache_bytes, checkpoint_bytes);
        let last_txn = store.snapshot().unwrap().txn();
        Harness {
            dir,
            cache_bytes,
            checkpoint_bytes,
            store,
            oracle: Oracle::new(),
            snapshots: Vec::new(),
            last_txn,
            log: Vec::new(),
        }
    }

    /// Checks the txn id a write returned: one more than the last, or the last when the write
    /// changed nothing.
    fn committed(&mut self, txn: u64, changed: bool, what: &str) {
        let want = self.last_txn + u64::from(changed);
        assert_eq!(txn, want, "{what}: txn ids increase by one per write that changes something");
        self.last_txn = txn;
    }

    fn apply(&mut self, changes: &[Change], what: &str) {
        let txn = self.store.apply(batch_of(changes)).unwrap_or_else(|e| panic!("{what}: {e} ({})", e.code()));
        let effective = apply_changes(&mut self.oracle, changes);
        self.committed(txn, effective, what);
    }

    fn verify_snapshot(&self, i: usize, context: &str) {
        let Held { snap, want, closed } = &self.snapshots[i];
        let context = format!(
            "{context}: snapshot {i} (txn {}{})",
            snap.txn(),
            if *closed { ", store closed since" } else { "" }
        );
        if let Some(got) = closed_or(dump(snap), *closed, &context)
            && let Some(d) = diff(&got, want)
        {
            panic!("{context} changed: {d}");
        }
        for ((tree, k), v) in want.iter().take(16) {
            if let Some(got) = closed_or(snap.get(tree, k), *closed, &context) {
                assert_eq!(got.as_deref(), Some(v.as_slice()), "{context}: get {tree}/{}", show(k));
            }
        }
        for tree in TREES {
            let want_len = want.keys().filter(|(t, _)| t == tree).count() as u64;
            if let Some(n) = closed_or(snap.tree_len(tree), *closed, &context) {
                assert_eq!(n, want_len, "{context}: tree_len {tree}");
            }
        }
        if let Some(trees) = closed_or(snap.trees(), *closed, &context) {
            let got: Vec<(String, u64)> = trees.into_iter().map(|t| (t.name, t.entries)).collect();
            let expected: Vec<(String, u64)> = counts(want).into_iter().collect();
            assert_eq!(got, expected, "{context}: trees() lists the non-empty trees with their sizes");
        }
    }

    #[allow(clippy::too_many_lines)] // One arm per step; splitting it would scatter the model.
    fn step(&mut self, step: &Step) {
        let what = format!("step {} {step:?}", self.log.len());
        self.log.push(what.clone());
        match step {
            Step::Put(t, k, v) => self.apply(&[Change::Put(*t, k.clone(), *v)], &what),
            Step::Delete(t, k) => self.apply(&[Change::Del(*t, k.clone())], &what),
            Step::Apply(changes) => self.apply(changes, &what),
            Step::Write(changes, ending) => {
                let (changes2, ending2) = (changes.clone(), *ending);
                let mut view = self.oracle.clone();
                let result = self.store.write(move |txn| {
                    let wrong = run_changes(txn, &changes2, &mut view, true)?;
                    match ending2 {
                        Ending::Commit => Ok(wrong),
                        Ending::Fail => Err(Error::InvalidArgument("model: deliberate failure".into())),
                        Ending::Panic => std::panic::panic_any(PANIC_MESSAGE),
                    }
                });
                match (ending, result) {
                    (Ending::Commit, Ok((wrong, txn))) => {
                        assert!(wrong.is_empty(), "{what}: reads inside the closure: {wrong:#?}");
                        let effective = apply_changes(&mut self.oracle, changes);
                        self.committed(txn, effective, &what);
                    }
                    (Ending::Fail, Err(Error::InvalidArgument(m))) if m.contains("deliberate") => {}
                    (Ending::Panic, Err(e)) if e.code() == "STORE_PANIC" => {}
                    (_, Ok((_, txn))) => panic!("{what}: expected the closure to roll back, got txn {txn}"),
                    (_, Err(e)) => panic!("{what}: unexpected error {e} ({})", e.code()),
                }
                // A rolled-back closure leaves nothing behind.
                assert_contents(&self.store, &self.oracle, &what);
            }
            Step::Submit(writes) => {
                let (tx, rx) = mpsc::channel();
                // What each write must read: the oracle after the committing writes before it
                // (the writer runs them in submission order, most in one group).
                let mut seen = self.oracle.clone();
                for (i, (changes, ending)) in writes.iter().enumerate() {
                    let mut view = seen.clone();
                    if matches!(ending, Ending::Commit) {
                        apply_changes(&mut seen, changes);
                    }
                    let tx = tx.clone();
                    let done: Box<dyn FnOnce(Result<u64, Error>) + Send> = Box::new(move |r| {
                        let _ = tx.send((i, r));
                    });
                    match ending {
                        // Odd ones as closures, so both entry points are exercised.
                        Ending::Commit if i % 2 == 0 => self.store.submit(batch_of(changes), done),
                        _ => {
                            let (changes, ending) = (changes.clone(), *ending);
                            self.store.submit_fn(
                                Box::new(move |txn| {
                                    // Reads see the group's earlier writes, merged or still
                                    // waiting; some closures end with `tree_len`, which merges.
                                    let wrong = run_changes(txn, &changes, &mut view, i % 4 == 1)?;
                                    if !wrong.is_empty() {
                                        return Err(Error::InvalidArgument(format!("model: wrong reads {wrong:#?}")));
                                    }
                                    match ending {
                                        Ending::Commit => Ok(()),
                                        Ending::Fail => Err(Error::InvalidArgument("model: deliberate failure".into())),
                                        Ending::Panic => std::panic::panic_any(PANIC_MESSAGE),
                                    }
                                }),
                                done,
                            );
                        }
                    }
                }
                drop(tx);
                let mut done: Vec<(usize, Result<u64, Error>)> = rx.iter().collect();
                assert_eq!(done.len(), writes.len(), "{what}: every callback runs once");
                // One thread submitting: the writer takes the writes in submission order.
                done.sort_unstable_by_key(|d| d.0);
                for (i, result) in done {
                    let w = format!("{what}, write {i}");
                    match (writes[i].1, result) {
                        (Ending::Commit, Ok(txn)) => {
                            let effective = apply_changes(&mut self.oracle, &writes[i].0);
                            self.committed(txn, effective, &w);
                        }
                        (Ending::Fail, Err(Error::InvalidArgument(m))) if m.contains("deliberate") => {}
                        (Ending::Panic, Err(e)) if e.code() == "STORE_PANIC" => {}
                        (_, r) => panic!("{w}: unexpected result {:?}", r.map_err(|e| format!("{e} ({})", e.code()))),
                    }
                }
                assert_contents(&self.store, &self.oracle, &what);
            }
            Step::BulkPut { tree, start, count, len } => {
                let mut b = Batch::default();
                for i in *start..start.saturating_add(*count) {
                    let v = value(i as u8, *len);
                    b.put(TREES[*tree], &bulk_key(i), &v);
                    self.oracle.insert((TREES[*tree].to_owned(), bulk_key(i)), v);
                }
                let txn = self.store.apply(b).unwrap_or_else(|e| panic!("{what}: {e}"));
                self.committed(txn, true, &what);
            }
            Step::BulkDelete { tree, start, count } => {
                let mut b = Batch::default();
                let mut changed = false;
                for i in *start..start.saturating_add(*count) {
                    b.delete(TREES[*tree], &bulk_key(i));
                    changed |= self.oracle.remove(&(TREES[*tree].to_owned(), bulk_key(i))).is_some();
                }
                let txn = self.store.apply(b).unwrap_or_else(|e| panic!("{what}: {e}"));
                self.committed(txn, changed, &what);
            }
            Step::Get(t, k) => {
                let got = self.store.get(TREES[*t], &k.bytes()).unwrap_or_else(|e| panic!("{what}: {e}"));
                let want = self.oracle.get(&(TREES[*t].to_owned(), k.bytes()));
                assert_eq!(got.as_ref(), want, "{what}");
            }
            Step::Range(t, a, b) => {
                let a = a.as_ref().map(|(k, inc)| (k.bytes(), *inc));
                let b = b.as_ref().map(|(k, inc)| (k.bytes(), *inc));
                let (start, end) = (to_bound(a.as_ref()), to_bound(b.as_ref()));
                let want = oracle_range(&self.oracle, *t, start, end);
                let snap = self.store.snapshot().unwrap();
                match snap.range(TREES[*t], start, end).and_then(Iterator::collect::<Result<Vec<_>, _>>) {
                    Ok(got) => assert!(
                        got == want,
                        "{what}: got keys {:?}, expected {:?}",
                        got.iter().map(|e| show(&e.0)).collect::<Vec<_>>(),
                        want.iter().map(|e| show(&e.0)).collect::<Vec<_>>()
                    ),
                    // Bounds that cross may be refused rather than answered with nothing.
                    Err(e) if e.code() == "INVALID_ARGUMENT" && want.is_empty() && a.is_some() && b.is_some() => {}
                    Err(e) => panic!("{what}: {e} ({})", e.code()),
                }
            }
            Step::Prefix(t, p) => {
                let want: Vec<_> = oracle_range(&self.oracle, *t, Bound::Unbounded, Bound::Unbounded)
                    .into_iter()
                    .filter(|(k, _)| k.starts_with(p))
                    .collect();
                let snap = self.store.snapshot().unwrap();
                let got: Vec<_> = snap
                    .prefix(TREES[*t], p)
                    .and_then(Iterator::collect::<Result<Vec<_>, _>>)
                    .unwrap_or_else(|e| panic!("{what}: {e}"));
                assert!(got == want, "{what}: got {} entries, expected {}", got.len(), want.len());
            }
            Step::TakeSnapshot => {
                let snap = self.store.snapshot().unwrap();
                assert_eq!(snap.txn(), self.last_txn, "{what}: a new snapshot sees the last commit");
                if self.snapshots.len() == 4 {
                    self.snapshots.remove(0);
                }
                self.snapshots.push(Held { snap, want: self.oracle.clone(), closed: false });
            }
            Step::CheckSnapshot(i) => {
                if !self.snapshots.is_empty() {
                    self.verify_snapshot(i % self.snapshots.len(), &what);
                }
            }
            Step::DropSnapshot(i) => {
                if !self.snapshots.is_empty() {
                    let n = self.snapshots.len();
                    self.snapshots.remove(i % n);
                }
            }
            Step::Checkpoint => {
                self.store.checkpoint().unwrap_or_else(|e| panic!("{what}: {e}"));
                assert_eq!(self.store.snapshot().unwrap().txn(), self.last_txn, "{what}");
            }
            Step::Reopen => {
                self.store.close().unwrap_or_else(|e| panic!("{what}: close: {e}"));
                self.store.close().expect("close is idempotent");
                match self.store.get(TREES[0], b"a") {
                    Err(Error::Closed) => {}
                    other => panic!("{what}: get after close returned {other:?}"),
                }
                let mut b = Batch::default();
                b.put(TREES[0], b"a", b"after close");
                match self.store.apply(b) {
                    Err(Error::Closed) => {}
                    other => panic!("{what}: apply after close returned {other:?}"),
                }
                // Snapshots held across close (and kept while the reopened store writes) answer
                // correctly or say the store is closed.
                for h in &mut self.snapshots {
                    h.closed = true;
                }
                for i in 0..self.snapshots.len() {
                    self.verify_snapshot(i, &what);
                }
                self.store = open(self.dir.path(), self.cache_bytes, self.checkpoint_bytes);
                assert_eq!(self.store.snapshot().unwrap().txn(), self.last_txn, "{what}: txn after reopen");
                assert_contents(&self.store, &self.oracle, &what);
            }
            Step::Check => {
                let txn = assert_check_clean(&self.store, &what);
                assert_eq!(txn, self.last_txn, "{what}: check's txn");
            }
            Step::Backup => self.backup(&what),
            Step::Compact { purge } => {
                let report = self
                    .store
                    .compact(CompactOptions { purge: *purge })
                    .unwrap_or_else(|e| panic!("{what}: {e} ({})", e.code()));
                assert!(
                    report.pages_after <= report.pages_before,
                    "{what}: compaction grew the file: {} -> {} pages",
                    report.pages_before,
                    report.pages_after
                );
                let txn = self.store.snapshot().unwrap().txn();
                assert!(txn >= self.last_txn, "{what}: txn went back from {} to {txn}", self.last_txn);
                self.last_txn = txn;
                assert_contents(&self.store, &self.oracle, &what);
                for i in 0..self.snapshots.len() {
                    self.verify_snapshot(i, &format!("{what}: snapshot taken before compaction"));
                }
            }
        }
    }

    fn backup(&mut self, what: &str) {
        let dest = self.dir.path().join(format!("backup-{}", self.log.len()));
        let report = self.store.backup(&dest).unwrap_or_else(|e| panic!("{what}: backup: {e} ({})", e.code()));
        assert_eq!(report.txn, self.last_txn, "{what}: backup txn");
        let copy = open(&dest, 64 << 20, 64 << 20);
        assert_eq!(copy.snapshot().unwrap().txn(), self.last_txn, "{what}: txn of the opened backup");
        assert_contents(&copy, &self.oracle, &format!("{what}: the backup"));
        assert_check_clean(&copy, &format!("{what}: the backup"));
        copy.close().unwrap();
        // The store it came from is untouched and a second backup to the same place is refused.
        let again = self.store.backup(&dest).expect_err("a backup over a store must be refused");
        assert_eq!(again.code(), "INVALID_ARGUMENT", "{what}: {again}");
        std::fs::remove_dir_all(&dest).unwrap();
    }

    fn finish(&mut self) {
        for i in 0..self.snapshots.len() {
            self.verify_snapshot(i, "end");
        }
        self.snapshots.clear();
        assert_contents(&self.store, &self.oracle, "end");
        let txn = assert_check_clean(&self.store, "end");
        assert_eq!(txn, self.last_txn, "check reports the last txn");
        let report = self.store.check().unwrap();
        let want = counts(&self.oracle);
        for info in &report.trees {
            let expected = want.get(&info.name).copied().unwrap_or(0);
            assert_eq!(info.entries, expected, "check's entry count of tree {}", info.name);
        }
        for (tree, n) in &want {
            assert!(report.trees.iter().any(|t| &t.name == tree), "check does not list tree {tree} ({n} entries)");
        }
        assert!(
            report.pages_reachable + report.pages_free <= report.pages_total,
            "check: {} reachable + {} free > {} total",
            report.pages_reachable,
            report.pages_free,
            report.pages_total
        );
        // And once more from disk.
        self.store.close().unwrap();
        self.store = open(self.dir.path(), self.cache_bytes, self.checkpoint_bytes);
        assert_contents(&self.store, &self.oracle, "end, after reopen");
        assert_check_clean(&self.store, "end, after reopen");
        self.store.close().unwrap();
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), max_shrink_iters: 2000, ..ProptestConfig::default() })]

    #[test]
    fn store_matches_the_model(
        steps in prop::collection::vec(step(), 1..70),
        // 16 pages of cache forces eviction and re-reads from the file; 8 KiB of WAL forces
        // checkpoints in the middle of sequences.
        cache_bytes in prop_oneof![Just(16 * 4096usize), Just(64 << 20)],
        checkpoint_bytes in prop_oneof![Just(8192u64), Just(64 << 20)],
    ) {
        quiet_deliberate_panics();
        let mut h = Harness::new(cache_bytes, checkpoint_bytes);
        for s in &steps {
            h.step(s);
        }
        h.finish();
    }
}

/// Readers scanning snapshots on other threads while the writer commits see exactly their
/// snapshot's version, never a mix.
#[test]
fn snapshots_are_stable_under_concurrent_writes() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), 32 * 4096, 16 * 1024);
    // Round r writes every key with value seed r, so a snapshot must see one seed throughout.
    let round = |r: u8| {
        let mut b = Batch::default();
        for i in 0..120u16 {
            b.put(TREES[0], &bulk_key(i), &value(r, 40 + usize::from(i % 7) * 300));
        }
        b
    };
    store.apply(round(0)).unwrap();
    let readers: Vec<_> = (0..2)
        .map(|_| {
            let store = store.clone();
            std::thread::spawn(move || {
                let mut seen = 0;
                for _ in 0..40 {
                    let snap = store.snapshot().unwrap();
                    let entries: Vec<_> = snap
                        .range(TREES[0], Bound::Unbounded, Bound::Unbounded)
                        .unwrap()
                        .collect::<Result<_, _>>()
                        .unwrap();
                    assert_eq!(entries.len(), 120, "txn {}", snap.txn());
                    let r = (0..=255u8).find(|&r| entries[0].1 == value(r, entries[0].1.len())).unwrap();
                    for (i, (k, v)) in entries.iter().enumerate() {
                        assert_eq!(k, &bulk_key(i as u16));
                        assert!(*v == value(r, 40 + (i % 7) * 300), "snapshot {} mixes rounds", snap.txn());
                    }
                    seen += 1;
                }
                seen
            })
        })
        .collect();
    // Backups taken while the writer goes on hold exactly the round of their txn.
    let backups = {
        let store = store.clone();
        let root = dir.path().to_path_buf();
        std::thread::spawn(move || {
            (0..3)
                .map(|i| {
                    let dest = root.join(format!("backup-{i}"));
                    let report = store.backup(&dest).unwrap();
                    (dest, report.txn)
                })
                .collect::<Vec<_>>()
        })
    };
    for r in 1..=30u8 {
        store.apply(round(r)).unwrap();
        if r % 10 == 0 {
            store.checkpoint().unwrap();
        }
    }
    for t in readers {
        assert_eq!(t.join().unwrap(), 40);
    }
    for (dest, txn) in backups.join().unwrap() {
        let copy = open(&dest, 64 << 20, 64 << 20);
        assert_eq!(copy.snapshot().unwrap().txn(), txn);
        let r = u8::try_from(txn - 1).unwrap(); // round r committed as txn r + 1
        for i in 0..120u16 {
            let got = copy.get(TREES[0], &bulk_key(i)).unwrap();
            assert!(got == Some(value(r, 40 + usize::from(i % 7) * 300)), "backup at txn {txn}: key {i}");
        }
        assert_check_clean(&copy, "backup");
        copy.close().unwrap();
    }
    assert_check_clean(&store, "concurrent");
    store.close().unwrap();
}

/// Deleted bytes are gone from every file after a purging compaction.
#[test]
fn purge_removes_deleted_values_from_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), 64 << 20, 64 << 20);
    let secret = b"SECRET-0123456789-do-not-keep".repeat(3);
    let big_secret = b"BIGSECRET-abcdefghij-".repeat(600); // spills to overflow pages
    let mut b = Batch::default();
    for i in 0..200u16 {
        b.put(TREES[0], &bulk_key(i), &value(i as u8, 100));
    }
    b.put(TREES[0], b"secret", &secret).put(TREES[1], b"big", &big_secret);
    store.apply(b).unwrap();
    store.checkpoint().unwrap();
    let mut b = Batch::default();
    b.delete(TREES[0], b"secret").delete(TREES[1], b"big");
    store.apply(b).unwrap();
    let report = store.compact(CompactOptions { purge: true }).unwrap();
    assert!(report.bytes_zeroed > 0, "purge zeroed nothing");
    store.close().unwrap();
    for name in ["data.cairn", "wal.cairn"] {
        let bytes = std::fs::read(dir.path().join(name)).unwrap_or_default();
        for (label, needle) in [("secret", &secret[..20]), ("big secret", &big_secret[..20])] {
            assert!(
                !bytes.windows(needle.len()).any(|w| w == needle),
                "{label} is still in {name} after a purging compaction"
            );
        }
    }
    let store = open(dir.path(), 64 << 20, 64 << 20);
    assert_eq!(store.get(TREES[0], b"secret").unwrap(), None);
    assert_eq!(store.snapshot().unwrap().tree_len(TREES[0]).unwrap(), 200);
    assert_check_clean(&store, "after purge");
}

/// A snapshot that outlives its store (closed, then reopened by a new handle that rewrites every
/// page) answers with its own version or `STORE_CLOSED`: never another version's data, and never
/// a corruption error for a store that is not corrupt. The tree is larger than the smallest
/// cache (64 pages), so the snapshot's reads reach the file.
#[test]
fn a_snapshot_outliving_its_store_never_reads_the_reopened_store() {
    let keys = 2000u16;
    let fill = |store: &Store, round: u8| {
        let mut b = Batch::default();
        for i in 0..keys {
            b.put(TREES[0], &bulk_key(i), &value(round, 300));
        }
        store.apply(b).unwrap();
    };
    for purge in [None, Some(false), Some(true)] {
        let dir = tempfile::tempdir().unwrap();
        let store = open(dir.path(), 0, 64 << 20);
        fill(&store, 1);
        let snap = store.snapshot().unwrap();
        store.close().unwrap();
        let store = open(dir.path(), 0, 64 << 20);
        for round in 2..5u8 {
            fill(&store, round);
            store.checkpoint().unwrap();
        }
        if let Some(purge) = purge {
            store.compact(CompactOptions { purge }).unwrap();
        }
        let mut outcomes = std::collections::BTreeMap::new();
        for i in (0..keys).step_by(5) {
            let outcome = match snap.get(TREES[0], &bulk_key(i)) {
                Ok(v) if v == Some(value(1, 300)) => "right value".to_owned(),
                Ok(Some(v)) => match (1..5u8).find(|&r| v == value(r, 300)) {
                    Some(r) => format!("WRONG: round {r}'s value"),
                    None => "WRONG: unknown value".to_owned(),
                },
                Ok(None) => "WRONG: missing".to_owned(),
                Err(e) => format!("error {}", e.code()),
            };
            *outcomes.entry(outcome).or_insert(0) += 1;
        }
        store.close().unwrap();
        assert!(
            outcomes.keys().all(|o| o == "right value" || o == "error STORE_CLOSED"),
            "compact {purge:?}: reads of a snapshot of the closed store: {outcomes:?}"
        );
    }
}

/// A checkpoint (here the one in `close`) with exactly one free page: that page becomes the free
/// list's only holder, the list itself is then empty, and the holder must still be written.
#[test]
fn a_store_whose_checkpoint_has_one_free_page_reopens() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path(), 64 << 20, 64 << 20);
    let mut b = Batch::default();
    // The 8000-byte value takes two overflow pages; overwriting it in the same batch frees them.
    b.put(TREES[0], b"a", &value(3, 8000)).put(TREES[0], b"a", b"");
    store.apply(b).unwrap();
    store.close().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default())
        .unwrap_or_else(|e| panic!("reopen after close failed: {e} ({})", e.code()));
    assert_eq!(store.get(TREES[0], b"a").unwrap().as_deref(), Some(&b""[..]));
    assert_check_clean(&store, "after reopen");
}
