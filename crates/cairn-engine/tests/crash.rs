//! Crash simulation on `FaultFs`: each randomized scenario (commits, some with large values,
//! group commits, sorted runs written outside the log (`put_sorted`, made durable by a checkpoint), checkpoints forced by a tiny `checkpoint_bytes`, explicit checkpoints and
//! reopens) is run once to count its I/O points, then once per point with the power failing at
//! that point. Every crash image (each `CrashMode`) must reopen to the last acknowledged commit,
//! or to that plus some of the commits in flight, with `check()` clean, and must then accept and
//! keep a new commit.
//!
//! `CAIRN_CRASH_SCENARIOS` sets the number of scenarios (default 10); `CAIRN_CRASH_SEED` runs
//! just the scenario with that seed, and `CAIRN_CRASH_POINT` just that crash point of it.

mod common;

use cairn_engine::vfs::fault::{CrashMode, FaultFs, PointKind};
use cairn_engine::{Batch, CompactOptions, Error, Store, StoreOptions};
use common::{Oracle, TREES, assert_check_clean, assert_contents, diff, dump, show, value};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::Path;
use std::sync::{Arc, mpsc};
use std::time::Instant;

const DIR: &str = "/store";

type Changes = Vec<(usize, Vec<u8>, Option<Vec<u8>>)>;

#[derive(Debug, Clone)]
enum Step {
    Commit(Changes),
    /// Puts into one tree, sorted and distinct, written as one run (`WriteTxn::put_sorted`).
    Sorted(Changes),
    /// Batches submitted together, so they may share one group commit.
    Group(Vec<Changes>),
    Checkpoint,
    Reopen,
    Compact {
        purge: bool,
    },
}

#[derive(Debug)]
struct Scenario {
    seed: u64,
    checkpoint_bytes: u64,
    steps: Vec<Step>,
}

fn changes(rng: &mut StdRng) -> Changes {
    (0..rng.random_range(1..6))
        .map(|_| {
            let tree = rng.random_range(0..TREES.len());
            let key = if rng.random_bool(0.7) {
                vec![b'a' + rng.random_range(0..8u8)]
            } else {
                format!("k{:04}", rng.random_range(0..60)).into_bytes()
            };
            if rng.random_bool(0.2) {
                return (tree, key, None);
            }
            let len = match rng.random_range(0..10) {
                0 => 0,
                1..=5 => rng.random_range(1..60),
                6 | 7 => rng.random_range(200..1500),
                8 => rng.random_range(3000..6000),
                _ => rng.random_range(9000..20_000),
            };
            (tree, key, Some(value(rng.random(), len)))
        })
        .collect()
}

/// Puts into one tree with distinct keys in key order, some values large.
fn sorted_run(rng: &mut StdRng) -> Changes {
    let tree = rng.random_range(0..TREES.len());
    let mut run: Vec<(usize, Vec<u8>, Option<Vec<u8>>)> =
        changes(rng).into_iter().chain(changes(rng)).filter_map(|(_, k, v)| v.map(|v| (tree, k, Some(v)))).collect();
    run.sort_by(|a, b| a.1.cmp(&b.1));
    run.dedup_by(|a, b| a.1 == b.1);
    if run.is_empty() {
        run.push((tree, b"k0000".to_vec(), Some(value(rng.random(), 10))));
    }
    run
}

fn scenario(seed: u64) -> Scenario {
    let mut rng = StdRng::seed_from_u64(seed);
    let steps = (0..rng.random_range(5..10))
        .map(|_| match rng.random_range(0..13) {
            0..=4 => Step::Commit(changes(&mut rng)),
            5 | 6 => Step::Sorted(sorted_run(&mut rng)),
            7 | 8 => Step::Group((0..rng.random_range(2..4)).map(|_| changes(&mut rng)).collect()),
            9 | 10 => Step::Checkpoint,
            11 => Step::Reopen,
            _ => Step::Compact { purge: rng.random_bool(0.5) },
        })
        .collect();
    let checkpoint_bytes = [1024, 4096, 16 * 1024][rng.random_range(0..3)];
    Scenario { seed, checkpoint_bytes, steps }
}

fn options(fs: &FaultFs, checkpoint_bytes: u64) -> StoreOptions {
    StoreOptions { cache_bytes: 24 * 4096, checkpoint_bytes, vfs: Arc::new(fs.clone()), ..StoreOptions::default() }
}

fn batch(c: &Changes) -> Batch {
    let mut b = Batch::default();
    for (t, k, v) in c {
        match v {
            Some(v) => b.put(TREES[*t], k, v),
            None => b.delete(TREES[*t], k),
        };
    }
    b
}

/// Applies changes to the oracle; whether any changed something (a write that changes nothing
/// takes no txn id).
fn apply(oracle: &mut Oracle, c: &Changes) -> bool {
    let mut changed = false;
    for (t, k, v) in c {
        let key = (TREES[*t].to_owned(), k.clone());
        changed |= match v {
            Some(v) => {
                oracle.insert(key, v.clone());
                true
            }
            None => oracle.remove(&key).is_some(),
        };
    }
    changed
}

/// The oracle after each prefix of the scenario's commits (in submission order), with the number
/// of txn ids those commits took.
fn states(sc: &Scenario) -> Vec<(Oracle, u64)> {
    let mut out = vec![(Oracle::new(), 0)];
    for step in &sc.steps {
        let commits = match step {
            Step::Commit(c) | Step::Sorted(c) => vec![c.clone()],
            Step::Group(g) => g.clone(),
            _ => continue,
        };
        for c in commits {
            let (mut next, txns) = out.last().expect("never empty").clone();
            let changed = apply(&mut next, &c);
            out.push((next, txns + u64::from(changed)));
        }
    }
    out
}

/// What the run acknowledged before the power failed.
#[derive(Debug, Default)]
struct Outcome {
    /// Commits acknowledged, in order (a prefix of the scenario's commits).
    acked: usize,
    /// Commits submitted but not acknowledged when the failure came.
    in_flight: usize,
    /// The txn id of the store when first opened, when the open succeeded.
    base_txn: Option<u64>,
    /// The step and error that ended the run early.
    stopped: Option<String>,
}

/// Runs the scenario until the first error (the process "died" there) or to the end.
fn run(fs: &FaultFs, sc: &Scenario) -> Outcome {
    let mut out = Outcome::default();
    let dir = Path::new(DIR);
    let mut store = match Store::open(dir, options(fs, sc.checkpoint_bytes)) {
        Ok(s) => s,
        Err(e) => {
            out.stopped = Some(format!("first open: {e}"));
            return out;
        }
    };
    out.base_txn = Some(store.snapshot().map_or(0, |s| s.txn()));
    for (i, step) in sc.steps.iter().enumerate() {
        let stop = |e: &Error| Some(format!("step {i} {}: {e}", step_name(step)));
        match step {
            Step::Sorted(c) => {
                let tree = TREES[c[0].0];
                let run: Vec<(Vec<u8>, Vec<u8>)> =
                    c.iter().map(|(_, k, v)| (k.clone(), v.clone().expect("a run holds puts"))).collect();
                match store.write(move |tx| tx.put_sorted(tree, run)) {
                    Ok(_) => out.acked += 1,
                    Err(e) => {
                        out.in_flight = 1;
                        out.stopped = stop(&e);
                        return out;
                    }
                }
            }
            Step::Commit(c) => match store.apply(batch(c)) {
                Ok(_) => out.acked += 1,
                Err(e) => {
                    out.in_flight = 1;
                    out.stopped = stop(&e);
                    return out;
                }
            },
            Step::Group(g) => {
                let (tx, rx) = mpsc::channel();
                for (j, c) in g.iter().enumerate() {
                    let tx = tx.clone();
                    store.submit(
                        batch(c),
                        Box::new(move |r| {
                            let _ = tx.send((j, r));
                        }),
                    );
                }
                drop(tx);
                let mut results: Vec<_> = rx.iter().collect();
                assert_eq!(results.len(), g.len(), "seed {}: a submit callback was lost", sc.seed);
                results.sort_by_key(|r| r.0);
                let ok = results.iter().take_while(|r| r.1.is_ok()).count();
                assert!(
                    results[ok..].iter().all(|r| r.1.is_err()),
                    "seed {}: a group acknowledged a batch after an earlier one failed",
                    sc.seed
                );
                out.acked += ok;
                if ok < g.len() {
                    out.in_flight = g.len() - ok;
                    out.stopped = stop(results[ok].1.as_ref().expect_err("checked"));
                    return out;
                }
            }
            Step::Checkpoint => {
                if let Err(e) = store.checkpoint() {
                    out.stopped = stop(&e);
                    return out;
                }
            }
            Step::Compact { purge } => {
                if let Err(e) = store.compact(CompactOptions { purge: *purge }) {
                    out.stopped = stop(&e);
                    return out;
                }
            }
            Step::Reopen => {
                if let Err(e) = store.close() {
                    out.stopped = stop(&e);
                    return out;
                }
                drop(store);
                store = match Store::open(dir, options(fs, sc.checkpoint_bytes)) {
                    Ok(s) => s,
                    Err(e) => {
                        out.stopped = stop(&e);
                        return out;
                    }
                };
            }
        }
    }
    if let Err(e) = store.close() {
        out.stopped = Some(format!("final close: {e}"));
    }
    out
}

fn step_name(step: &Step) -> String {
    match step {
        Step::Commit(c) => format!("commit of {} changes", c.len()),
        Step::Sorted(c) => format!("sorted run of {} puts", c.len()),
        Step::Group(g) => format!("group of {} batches", g.len()),
        Step::Checkpoint => "checkpoint".into(),
        Step::Reopen => "reopen".into(),
        Step::Compact { purge } => format!("compact (purge {purge})"),
    }
}

/// Reopens a crash image and checks it against the candidates; `Err` describes what was wrong.
fn verify(image: &FaultFs, sc: &Scenario, states: &[(Oracle, u64)], out: &Outcome) -> Result<(), String> {
    let dir = Path::new(DIR);
    let store = Store::open(dir, options(image, sc.checkpoint_bytes))
        .map_err(|e| format!("reopen failed: {e} ({})", e.code()))?;
    let snap = store.snapshot().map_err(|e| format!("snapshot: {e}"))?;
    let got = dump(&snap).map_err(|e| format!("scan failed: {e} ({})", e.code()))?;
    let candidates = out.acked..=out.acked + out.in_flight;
    let txn_of = |i: usize| out.base_txn.unwrap_or(0) + states[i].1;
    // Two candidates can hold the same contents (a commit that puts and deletes a key); the txn
    // id tells them apart.
    let same: Vec<usize> = candidates.clone().filter(|&i| states[i].0 == got).collect();
    let Some(&matched) = same.iter().find(|&&i| txn_of(i) == snap.txn()) else {
        if let Some(&i) = same.first() {
            return Err(format!("txn is {}, expected {} (state after commit {i})", snap.txn(), txn_of(i)));
        }
        let d = diff(&got, &states[out.acked].0).unwrap_or_default();
        return Err(format!(
            "contents match none of commits {candidates:?}; against the last acknowledged ({}): {d}",
            out.acked
        ));
    };
    drop(snap);
    let report = store.check().map_err(|e| format!("check failed: {e} ({})", e.code()))?;
    if !report.ok || !report.problems.is_empty() {
        return Err(format!(
            "check after recovery: {:?}",
            report.problems.iter().map(|p| format!("page {:?}: {}", p.page, p.what)).collect::<Vec<_>>()
        ));
    }
    // The recovered store takes a new commit, and that commit survives the next power loss.
    let mut probe = Batch::default();
    let probe_value = value(0xEE, 5000);
    probe.put(TREES[2], b"probe", &probe_value).delete(TREES[0], b"a");
    let txn = store.apply(probe).map_err(|e| format!("commit after recovery failed: {e}"))?;
    if txn != snap_txn(&store) {
        return Err("txn of the probe commit is not the store's txn".into());
    }
    let after = image.crash_image(CrashMode::SyncedOnly, 0);
    drop(store);
    let store = Store::open(dir, options(&after, sc.checkpoint_bytes))
        .map_err(|e| format!("reopen after the probe commit failed: {e} ({})", e.code()))?;
    let mut want = states[matched].0.clone();
    want.insert((TREES[2].to_owned(), b"probe".to_vec()), probe_value);
    want.remove(&(TREES[0].to_owned(), b"a".to_vec()));
    let got = dump(&store.snapshot().map_err(|e| e.to_string())?).map_err(|e| format!("scan: {e}"))?;
    if let Some(d) = diff(&got, &want) {
        return Err(format!("after a commit on the recovered store and another power loss: {d}"));
    }
    Ok(())
}

fn snap_txn(store: &Store) -> u64 {
    store.snapshot().map_or(u64::MAX, |s| s.txn())
}

struct Failure {
    point: String,
    mode: CrashMode,
    outcome: String,
    what: String,
}

/// Crashes the scenario at every point, in every mode; returns the failures and the point count.
fn crash_everywhere(sc: &Scenario) -> (Vec<Failure>, u64) {
    let states = states(sc);
    let dry = FaultFs::new();
    dry.record_trace(true);
    let clean = run(&dry, sc);
    assert!(clean.stopped.is_none(), "seed {}: the scenario fails without a crash: {clean:?}", sc.seed);
    assert_eq!(clean.acked, states.len() - 1);
    let trace = dry.trace();
    let points = dry.points();
    let mut failures = Vec::new();
    // `CAIRN_CRASH_POINT` narrows a run to one point and prints the dry run's trace.
    let only: Option<u64> = std::env::var("CAIRN_CRASH_POINT").ok().and_then(|s| s.parse().ok());

    // Point `points` is "no crash": the images of a cleanly closed store.
    for n in (0..=points).filter(|n| only.is_none_or(|o| o == *n)) {
        let fs = FaultFs::new();
        let is_write = trace.get(n as usize).is_some_and(|p| matches!(p.kind, PointKind::Write { .. }));
        if is_write {
            fs.crash_after_torn(n, sc.seed ^ n);
        } else {
            fs.crash_after(n);
        }
        fs.record_trace(only.is_some());
        let outcome = catch_unwind(AssertUnwindSafe(|| run(&fs, sc)));
        // Group commits make the order of points vary a little between runs: name the point this
        // run crashed at, not the dry run's.
        let point = fs.crash_point().map_or_else(|| format!("#{n} (none: clean close)"), |p| p.to_string());
        if only.is_some() {
            eprintln!("--- scenario:");
            for (i, step) in sc.steps.iter().enumerate() {
                let show_changes = |c: &Changes| {
                    c.iter()
                        .map(|(t, k, v)| match v {
                            Some(v) => format!("put {}/{} ({} B)", TREES[*t], show(k), v.len()),
                            None => format!("del {}/{}", TREES[*t], show(k)),
                        })
                        .collect::<Vec<_>>()
                        .join(", ")
                };
                match step {
                    Step::Commit(c) => eprintln!("step {i}: commit [{}]", show_changes(c)),
                    Step::Sorted(c) => eprintln!("step {i}: sorted run [{}]", show_changes(c)),
                    Step::Group(g) => {
                        eprintln!(
                            "step {i}: group {}",
                            g.iter().map(|c| format!("[{}]", show_changes(c))).collect::<Vec<_>>().join(" ")
                        );
                    }
                    other => eprintln!("step {i}: {}", step_name(other)),
                }
            }
            eprintln!("--- the crash run:");
            for p in fs.trace() {
                eprintln!("{p}");
            }
            eprintln!("crashed at {point}");
        }
        let Ok(outcome) = outcome else {
            failures.push(Failure {
                point,
                mode: CrashMode::SyncedOnly,
                outcome: String::new(),
                what: "the engine panicked while the power failed".into(),
            });
            continue;
        };
        for mode in CrashMode::ALL {
            let image = fs.crash_image(mode, sc.seed.wrapping_mul(1000) + n);
            let result = catch_unwind(AssertUnwindSafe(|| verify(&image, sc, &states, &outcome))).unwrap_or_else(|p| {
                Err(format!(
                    "panicked: {}",
                    p.downcast_ref::<String>()
                        .cloned()
                        .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
                        .unwrap_or_default()
                ))
            });
            if let Err(what) = result {
                failures.push(Failure {
                    point: point.clone(),
                    mode,
                    outcome: format!(
                        "acked {}, in flight {}, stopped at {}",
                        outcome.acked,
                        outcome.in_flight,
                        outcome.stopped.as_deref().unwrap_or("-")
                    ),
                    what,
                });
            }
        }
    }
    (failures, points)
}

fn report(sc: &Scenario, failures: &[Failure]) -> String {
    let mut s = format!(
        "seed {} (checkpoint_bytes {}): {} failures; steps: {}",
        sc.seed,
        sc.checkpoint_bytes,
        failures.len(),
        sc.steps.iter().map(step_name).collect::<Vec<_>>().join(", ")
    );
    for f in failures.iter().take(6) {
        let _ = write!(s, "\n  crash at {} [{:?}] ({}): {}", f.point, f.mode, f.outcome, f.what);
    }
    s
}

#[test]
fn recovery_after_a_crash_at_every_io_point() {
    let seeds: Vec<u64> = if let Some(seed) = std::env::var("CAIRN_CRASH_SEED").ok().and_then(|s| s.parse().ok()) {
        vec![seed]
    } else {
        let n = std::env::var("CAIRN_CRASH_SCENARIOS").ok().and_then(|s| s.parse().ok()).unwrap_or(10);
        (1..=n).collect()
    };
    let started = Instant::now();
    let mut bad = Vec::new();
    let mut total_points = 0;
    for seed in seeds {
        let sc = scenario(seed);
        let (failures, points) = crash_everywhere(&sc);
        total_points += points;
        if !failures.is_empty() {
            bad.push(report(&sc, &failures));
        }
    }
    eprintln!("crash: {total_points} crash points x {} modes in {:.1?}", CrashMode::ALL.len(), started.elapsed());
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// A crash while the store is being created leaves a directory that opens as an empty store.
#[test]
fn crash_while_creating_a_store_leaves_it_openable() {
    let dry = FaultFs::new();
    Store::open(Path::new(DIR), options(&dry, 1 << 20)).unwrap().close().unwrap();
    // Only the points of the first open (not the close's checkpoint) are of interest here, but
    // crashing in the close as well costs little.
    for n in 0..dry.points() {
        let fs = FaultFs::new();
        fs.crash_after(n);
        let _ = Store::open(Path::new(DIR), options(&fs, 1 << 20)).map(|s| s.close());
        for mode in CrashMode::ALL {
            let image = fs.crash_image(mode, n);
            let store = Store::open(Path::new(DIR), options(&image, 1 << 20))
                .unwrap_or_else(|e| panic!("crash at point {n} [{mode:?}]: reopen failed: {e} ({})", e.code()));
            let got = dump(&store.snapshot().unwrap()).unwrap();
            assert!(got.is_empty(), "crash at point {n}: {} entries in a new store", got.len());
            store.apply(batch(&vec![(0, b"x".to_vec(), Some(b"y".to_vec()))])).unwrap();
            assert_eq!(store.get(TREES[0], b"x").unwrap().as_deref(), Some(&b"y"[..]));
        }
    }
}

/// Replay stops at the first bad record, and the records after it must never come back: a new
/// commit written over the bad record's place must not make a stale record after it valid.
/// Tried with no intact record before the bad one (right after a checkpoint) and with two.
#[test]
fn a_record_after_a_torn_one_is_not_resurrected() {
    for prior in [0usize, 2] {
        stale_record_case(prior);
    }
}

fn stale_record_case(prior: usize) {
    let fs = FaultFs::new();
    let store = Store::open(Path::new(DIR), options(&fs, 64 << 20)).unwrap();
    let put = |k: &[u8], v: &[u8]| batch(&vec![(0, k.to_vec(), Some(v.to_vec()))]);
    let mut last = store.snapshot().unwrap().txn();
    for i in 0..prior {
        last = store.apply(put(format!("p{i}").as_bytes(), b"prior")).unwrap();
    }
    // The disk after power loss: the synced records. Append by hand what a torn group commit of
    // the next two txns can leave (sectors persist in any order): the first record damaged, the
    // second intact.
    let image = fs.crash_image(CrashMode::SyncedOnly, 0);
    drop(store);
    let wal_path = Path::new(DIR).join("wal.cairn");
    let mut wal = image.read(&wal_path).unwrap();
    let salt = u64::from_le_bytes(wal[16..24].try_into().unwrap());
    let mut pos = 32;
    while pos + 16 <= wal.len() {
        let len = u32::from_le_bytes(wal[pos..pos + 4].try_into().unwrap()) as usize;
        let txn = u64::from_le_bytes(wal[pos + 8..pos + 16].try_into().unwrap());
        if len == 0 && txn == 0 {
            break;
        }
        pos += 16 + len;
    }
    let record = |txn: u64, payload: &[u8]| {
        let mut c = crc32c::crc32c(&salt.to_le_bytes());
        c = crc32c::crc32c_append(c, &(payload.len() as u32).to_le_bytes());
        c = crc32c::crc32c_append(c, &txn.to_le_bytes());
        c = crc32c::crc32c_append(c, payload);
        let mut r = (payload.len() as u32).to_le_bytes().to_vec();
        r.extend_from_slice(&c.to_le_bytes());
        r.extend_from_slice(&txn.to_le_bytes());
        r.extend_from_slice(payload);
        r
    };
    let damaged = put(b"k3", b"three").encode();
    let stale = put(b"zombie", b"never acknowledged").encode();
    let mut torn = record(last + 1, &damaged);
    let end = torn.len() - 1;
    torn[end] ^= 0xFF;
    let tail = [torn, record(last + 2, &stale)].concat();
    if wal.len() < pos + tail.len() {
        wal.resize(pos + tail.len(), 0);
    }
    wal[pos..pos + tail.len()].copy_from_slice(&tail);
    image.write_durable(&wal_path, &wal);

    let context = format!("{prior} intact records before the damaged one");
    let store = Store::open(Path::new(DIR), options(&image, 64 << 20)).unwrap();
    assert_eq!(store.get(TREES[0], b"k3").unwrap(), None, "{context}: a damaged record was replayed");
    assert_eq!(store.get(TREES[0], b"zombie").unwrap(), None, "{context}: a record after a damaged one was replayed");
    // A new commit of the same size as the damaged record lands where it was.
    let t3 = store.apply(put(b"k3", b"THREE")).unwrap();
    assert_eq!(t3, last + 1);
    let after = image.crash_image(CrashMode::SyncedOnly, 0);
    drop(store);
    let store = Store::open(Path::new(DIR), options(&after, 64 << 20)).unwrap();
    assert_eq!(store.get(TREES[0], b"k3").unwrap().as_deref(), Some(&b"THREE"[..]), "{context}");
    assert_eq!(
        store.get(TREES[0], b"zombie").unwrap().map(|v| show(&v)),
        None,
        "{context}: a record that was never acknowledged came back after a later commit"
    );
    assert_eq!(store.snapshot().unwrap().txn(), t3, "{context}");
}

/// A checkpoint whose free set is one page more than fits the pages needed to list it (here
/// exactly one free page, which becomes the list's only holder and leaves the list empty) must
/// still write that holder page. Recovery replays both commits in one batch, which frees one
/// page, then checkpoints; the next open reads that meta's free list.
#[test]
fn a_checkpoint_with_a_single_free_page_writes_its_free_list() {
    let fs = FaultFs::new();
    let store = Store::open(Path::new(DIR), options(&fs, 64 << 20)).unwrap();
    let mut oracle = Oracle::new();
    let commits: [Changes; 2] = [
        vec![(1, b"h".to_vec(), Some(value(7, 1020))), (2, b"k0015".to_vec(), Some(value(7, 5)))],
        vec![(2, b"a".to_vec(), Some(value(7, 18_144))), (1, b"k0009".to_vec(), Some(value(7, 45)))],
    ];
    for c in &commits {
        store.apply(batch(c)).unwrap();
        apply(&mut oracle, c);
    }
    // Power loss: the log is synced, the data file never was.
    let image = fs.crash_image(CrashMode::SyncedOnly, 0);
    drop(store);
    let store = Store::open(Path::new(DIR), options(&image, 64 << 20)).unwrap();
    assert_check_clean(&store, "after recovery");
    // Power loss again, right after recovery's checkpoint.
    let again = image.crash_image(CrashMode::SyncedOnly, 0);
    drop(store);
    let store = Store::open(Path::new(DIR), options(&again, 64 << 20))
        .unwrap_or_else(|e| panic!("the store checkpointed by recovery does not open: {e}"));
    assert_contents(&store, &oracle, "after the second power loss");
    assert_check_clean(&store, "after the second power loss");
}
