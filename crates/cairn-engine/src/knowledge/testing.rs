//! Test fixtures shared by the knowledge modules' tests.

use super::{Assertion, Partition, Source};
use crate::store::{Store, StoreOptions};
use serde_json::{Map, Value};

/// An empty store in a temporary directory (kept alive by the returned guard) and the partition
/// `local / u1 / default`.
pub(crate) fn fresh() -> (tempfile::TempDir, Store, Partition) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
    (dir, store, Partition::new("local", "u1", "default").unwrap())
}

/// An asserted, non-replacing relation.
pub(crate) fn assertion<'a>(
    from: &'a str,
    to: &'a str,
    rel_type: &'a str,
    attributes: &'a Map<String, Value>,
    agent: &'a str,
) -> Assertion<'a> {
    Assertion { from, to, rel_type, attributes, source: Source::Asserted { label: None }, agent, replaces: false }
}
