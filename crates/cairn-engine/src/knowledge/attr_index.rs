//! The attribute index: which entities ever held a value under a key, so `recall` by
//! `attribute: {key, value}` reads those entities instead of every entity of the partition.
//!
//! `ATTR` files each entity under a digest of (key, value) for every pair it has held: the ones
//! its record holds and every one an `entity` event of its history set, which is what a read at
//! any `as_of` or `valid_at` answers from (`attribute_time.rs`). Entries are only ever added while
//! the entity keeps the key, so the index holds a superset of what a read can match; the reader
//! verifies each candidate as the scan did (the values at its moment, `same_value`), so a shared
//! digest or a value since replaced only costs a read, never a wrong answer. `ATTR_OF` files the
//! same entries by entity, with the key they were made for, so forgetting a subject or one of its
//! attributes finds its entries without the values that went with them.
//!
//! The digest folds a string value as `same_value` compares strings (`text::fold`) and encodes any
//! other value canonically (object keys sorted, zero with one sign), so values that compare equal
//! share a digest.

use super::part::Partition;
use super::trees::{ATTR, ATTR_OF, trailing_id};
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::text::fold;
use crate::write::WriteTxn;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Bytes of the digest a pair is filed under: enough that unrelated pairs of one partition
/// practically never share one (and when they do, verification keeps answers exact).
pub(crate) const DIGEST_LEN: usize = 16;

/// The digest `key` holding `value` is filed under (a lookup passes the key it matches, trimmed).
pub(crate) fn digest(key: &str, value: &Value) -> [u8; DIGEST_LEN] {
    let mut h = Sha256::new();
    text(&mut h, key);
    match value {
        Value::String(s) => {
            h.update(b"s");
            text(&mut h, &fold(s));
        }
        other => {
            h.update(b"j");
            canonical(&mut h, other);
        }
    }
    h.finalize()[..DIGEST_LEN].try_into().expect("sha256 is longer than the digest")
}

/// Text, length first, so no two sequences of parts feed the same bytes.
fn text(h: &mut Sha256, s: &str) {
    h.update((s.len() as u64).to_be_bytes());
    h.update(s.as_bytes());
}

/// `value` in a form equal values share (`serde_json`'s equality): tagged, lengths first, object
/// keys sorted (the map may keep insertion order), numbers as written except zero, whose two
/// signs compare equal.
fn canonical(h: &mut Sha256, value: &Value) {
    match value {
        Value::Null => h.update(b"n"),
        Value::Bool(b) => h.update(if *b { b"t" } else { b"f" }),
        Value::Number(n) if n.as_f64() == Some(0.0) && n.is_f64() => h.update(b"0"),
        Value::Number(n) => {
            h.update(b"#");
            text(h, &n.to_string());
        }
        Value::String(s) => {
            h.update(b"\"");
            text(h, s);
        }
        Value::Array(items) => {
            h.update(b"[");
            h.update((items.len() as u64).to_be_bytes());
            for v in items {
                canonical(h, v);
            }
        }
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort_unstable();
            h.update(b"{");
            h.update((keys.len() as u64).to_be_bytes());
            for k in keys {
                text(h, k);
                canonical(h, &map[k]);
            }
        }
    }
}

/// `part | digest | entity id` in `ATTR` and `part | entity id | digest` in `ATTR_OF`.
fn keys(part: &Partition, entity: u64, digest: &[u8; DIGEST_LEN]) -> (Vec<u8>, Vec<u8>) {
    let id = entity.to_be_bytes();
    (part.key(&[digest, &id]), part.key(&[&id, digest]))
}

/// Files `entity` under each pair of `attributes`, in the writer's transaction.
pub(crate) fn add<'a>(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    entity: u64,
    attributes: impl IntoIterator<Item = (&'a String, &'a Value)>,
) -> Result<()> {
    for (key, value) in attributes {
        let (by_value, by_entity) = keys(part, entity, &digest(key, value));
        tx.put(ATTR, &by_value, &[])?;
        tx.put(ATTR_OF, &by_entity, key.as_bytes())?;
    }
    Ok(())
}

/// The entities filed under `key` holding `value`, by id: every entity that may match, and others
/// that share the digest or held the value once.
pub(crate) fn candidates(snap: &Snapshot, part: &Partition, key: &str, value: &Value) -> Result<Vec<u64>> {
    let mut out = Vec::new();
    for item in snap.prefix(ATTR, &part.key(&[&digest(key, value)]))? {
        out.push(trailing_id(&item?.0)?);
    }
    Ok(out)
}

/// Removes the entries of `entity` made for `key` (`None`: all of them), with the forgotten
/// subject or attribute.
pub(crate) fn remove(tx: &mut WriteTxn<'_>, part: &Partition, entity: u64, key: Option<&str>) -> Result<()> {
    let id = entity.to_be_bytes();
    for (by_entity, made_for) in tx.prefix(ATTR_OF, &part.key(&[&id]))? {
        if key.is_some_and(|k| k.as_bytes() != made_for) {
            continue;
        }
        let digest = &by_entity[by_entity.len() - DIGEST_LEN..];
        tx.delete(ATTR, &part.key(&[digest, &id]))?;
        tx.delete(ATTR_OF, &by_entity)?;
    }
    Ok(())
}

/// Entries gathered by a bulk writer (`load`, the build of a store written before), put as two
/// sorted runs instead of a tree walk per key.
#[derive(Default)]
pub(crate) struct Bulk {
    by_value: Vec<Vec<u8>>,
    by_entity: Vec<(Vec<u8>, Vec<u8>)>,
}

impl Bulk {
    /// Files `entity` of `part` under each pair of `attributes`.
    pub(crate) fn add(&mut self, part: &Partition, entity: u64, attributes: &Map<String, Value>) {
        for (key, value) in attributes {
            let (by_value, by_entity) = keys(part, entity, &digest(key, value));
            self.by_value.push(by_value);
            self.by_entity.push((by_entity, key.as_bytes().to_vec()));
        }
    }

    /// Puts what was gathered (a pair filed twice is put once).
    pub(crate) fn put(mut self, tx: &mut WriteTxn<'_>) -> Result<()> {
        self.by_value.sort_unstable();
        self.by_value.dedup();
        let mut run = tx.sorted_run(ATTR, true)?;
        for key in &self.by_value {
            run.push(key, &[])?;
        }
        run.finish()?;
        self.by_entity.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        self.by_entity.dedup_by(|a, b| a.0 == b.0);
        let mut run = tx.sorted_run(ATTR_OF, true)?;
        for (key, made_for) in &self.by_entity {
            run.push(key, made_for)?;
        }
        run.finish()
    }
}
