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

/// A fresh store (see `fresh`) with what `seed` writes into the partition, committed.
pub(crate) fn seeded_with<R: Send + 'static>(
    seed: impl FnOnce(&mut crate::write::WriteTxn<'_>, &Partition) -> crate::error::Result<R> + Send + 'static,
) -> (tempfile::TempDir, Store, Partition) {
    let (dir, store, part) = fresh();
    let p = part.clone();
    store.write(move |tx| seed(tx, &p)).unwrap();
    (dir, store, part)
}

/// An asserted, non-replacing relation.
pub(crate) fn assertion<'a>(
    from: &'a str,
    to: &'a str,
    rel_type: &'a str,
    attributes: &'a Map<String, Value>,
    agent: &'a str,
) -> Assertion<'a> {
    Assertion {
        from,
        to,
        rel_type,
        attributes,
        source: Source::Asserted { label: None },
        agent,
        replaces: false,
        date: None,
    }
}

/// A realistic call time (2026-05-28, ms) for reads whose dates must have passed: a plain read
/// means what is true now, so a fact dated 2024 is not true at a call time of a few ms.
pub(crate) const TODAY: i64 = 1_780_000_000_000;

/// The caller `claude` in partition `local / u1 / default` at time `now` (ms).
pub(crate) fn caller(now: i64) -> super::api::Caller {
    super::api::Caller { part: Partition::new("local", "u1", "default").unwrap(), agent: "claude".into(), now }
}

/// Runs a knowledge verb with a JSON body; returns the JSON reply.
pub(crate) fn call(
    store: &Store,
    caller: &super::api::Caller,
    verb: &str,
    body: &Value,
) -> crate::error::Result<Value> {
    let reply = super::api::call(store, verb, caller, &serde_json::to_vec(body).unwrap())?;
    Ok(serde_json::from_slice(&reply).unwrap())
}

/// The grounding verdict and uncovered words of `question` in `store`, asked at `now` (ms).
pub(crate) fn verdict_at(store: &Store, now: i64, question: &str) -> (String, Value) {
    let c = call(store, &caller(now), "context", &serde_json::json!({"question": question})).unwrap();
    (c["grounding"]["verdict"].as_str().unwrap().to_owned(), c["grounding"]["uncovered"].clone())
}

/// The reply of `verb` (a notes verb for `history`) called at time 3, and the pages it read.
pub(crate) fn counted(store: &Store, verb: &str, body: &Value) -> (Value, u64) {
    let body = serde_json::to_vec(body).unwrap();
    let before = store.pages_read();
    let reply = match verb {
        "history" => crate::notes::api::call(store, verb, &caller(3), &body),
        _ => super::api::call(store, verb, &caller(3), &body),
    };
    let pages = store.pages_read() - before;
    (serde_json::from_slice(&reply.unwrap()).unwrap(), pages)
}

/// Checks that every citation in `reply` with a span slices the stored document text exactly.
pub(crate) fn assert_citations_slice(store: &Store, part: &Partition, reply: &Value) {
    fn walk(v: &Value, out: &mut Vec<Value>) {
        match v {
            Value::Object(m) => {
                if let Some(c) = m.get("citation")
                    && !c.is_null()
                {
                    out.push(c.clone());
                }
                m.values().for_each(|x| walk(x, out));
            }
            Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut cites = Vec::new();
    walk(reply, &mut cites);
    let snap = store.snapshot().unwrap();
    for c in cites {
        let Some(span) = c["span"].as_object() else { continue };
        let doc_id: u64 = c["source"]["doc_id"].as_str().unwrap().parse().unwrap();
        let bytes = snap.get(super::trees::DOC, &part.key(&[&doc_id.to_be_bytes()])).unwrap().unwrap();
        let doc: super::Document = serde_json::from_slice(&bytes).unwrap();
        let (start, end) = (span["start"].as_u64().unwrap(), span["end"].as_u64().unwrap());
        let sliced = crate::text::char_slice(&doc.text, usize::try_from(start).unwrap(), usize::try_from(end).unwrap());
        if let Some(text) = span.get("text") {
            assert_eq!(sliced, text.as_str(), "citation {c} does not slice its document");
        } else {
            assert!(sliced.is_some(), "citation {c} runs past its document");
        }
    }
}
