//! Helpers shared by the integration tests: deterministic values, the oracle, and comparisons
//! that describe a difference briefly (values can be tens of KiB).

#![allow(dead_code)] // Each test binary uses a different part of this module.

use cairn_engine::{Error, Snapshot, Store};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::ops::Bound;

/// The trees every test writes to. The second name is not ASCII on purpose.
pub const TREES: [&str; 3] = ["alpha", "β-tree", "t2"];

/// The expected contents of a store: (tree, key) to value.
pub type Oracle = BTreeMap<(String, Vec<u8>), Vec<u8>>;

/// A value of `len` bytes determined by `seed`, different at every offset so that a page
/// returned for the wrong place is noticed.
#[must_use]
pub fn value(seed: u8, len: usize) -> Vec<u8> {
    let mut x = u32::from(seed).wrapping_mul(0x9E37_79B9) ^ (len as u32);
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 11) as u8
        })
        .collect()
}

/// Short text for a byte string: printable ASCII as is, the rest escaped, long runs elided.
#[must_use]
pub fn show(bytes: &[u8]) -> String {
    let mut out = String::new();
    let head = &bytes[..bytes.len().min(24)];
    for &b in head {
        if b.is_ascii_graphic() {
            out.push(b as char);
        } else {
            let _ = write!(out, "\\x{b:02x}");
        }
    }
    if bytes.len() > head.len() {
        let _ = write!(out, "…({} bytes)", bytes.len());
    }
    out
}

/// Every entry of `TREES` in `snap`, read by full-range scans.
pub fn dump(snap: &Snapshot) -> Result<Oracle, Error> {
    let mut out = Oracle::new();
    for tree in TREES {
        for entry in snap.range(tree, Bound::Unbounded, Bound::Unbounded)? {
            let (k, v) = entry?;
            if out.insert((tree.to_owned(), k.clone()), v).is_some() {
                return Err(Error::InvalidArgument(format!("range of {tree} yielded {} twice", show(&k))));
            }
        }
    }
    Ok(out)
}

/// A description of how `got` differs from `want`, or `None` when they are equal.
#[must_use]
pub fn diff(got: &Oracle, want: &Oracle) -> Option<String> {
    if got == want {
        return None;
    }
    let mut out = format!("{} entries, expected {}", got.len(), want.len());
    let mut shown = 0;
    for (k, v) in want {
        let line = match got.get(k) {
            None => format!("missing {}/{} (value {})", k.0, show(&k.1), show(v)),
            Some(g) if g != v => {
                format!("{}/{}: got {}, expected {}", k.0, show(&k.1), show(g), show(v))
            }
            Some(_) => continue,
        };
        let _ = write!(out, "\n  {line}");
        shown += 1;
        if shown == 8 {
            break;
        }
    }
    for (k, v) in got {
        if shown >= 12 {
            break;
        }
        if !want.contains_key(k) {
            let _ = write!(out, "\n  unexpected {}/{} = {}", k.0, show(&k.1), show(v));
            shown += 1;
        }
    }
    Some(out)
}

/// Panics unless the store's contents equal `want`.
pub fn assert_contents(store: &Store, want: &Oracle, context: &str) {
    let snap = store.snapshot().unwrap_or_else(|e| panic!("{context}: snapshot failed: {e}"));
    let got = dump(&snap).unwrap_or_else(|e| panic!("{context}: scan failed: {e} ({})", e.code()));
    if let Some(d) = diff(&got, want) {
        panic!("{context}: contents differ: {d}");
    }
}

/// Panics unless `check()` finds nothing wrong; returns the report's txn.
pub fn assert_check_clean(store: &Store, context: &str) -> u64 {
    let report = store.check().unwrap_or_else(|e| panic!("{context}: check failed: {e} ({})", e.code()));
    assert!(
        report.ok && report.problems.is_empty(),
        "{context}: check found problems (ok = {}): {:?}",
        report.ok,
        report.problems.iter().map(|p| format!("page {:?} tree {:?}: {}", p.page, p.tree, p.what)).collect::<Vec<_>>()
    );
    report.txn
}

/// The number of entries per tree in `oracle`.
#[must_use]
pub fn counts(oracle: &Oracle) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    for (tree, _) in oracle.keys() {
        *out.entry(tree.clone()).or_insert(0) += 1;
    }
    out
}
