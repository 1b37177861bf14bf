//! Test helpers for the verbs: a caller and a one-line verb call.

use super::Partition;
use super::api::{Caller, call};
use crate::store::Store;
use serde_json::Value;

/// A caller of `part` as agent `a` at time `now`.
pub(crate) fn caller(part: &Partition, now: i64) -> Caller {
    Caller { part: part.clone(), agent: "a".into(), now }
}

/// Runs `verb` with `body`; the reply, or the engine error's code as `Err`.
pub(crate) fn verb(store: &Store, who: &Caller, name: &str, body: &Value) -> Result<Value, &'static str> {
    call(store, name, who, &serde_json::to_vec(body).unwrap())
        .map(|bytes| serde_json::from_slice(&bytes).unwrap())
        .map_err(|e| e.code())
}

/// Runs the notes verb `name` with `body` as `who`; the reply (a refusal is a reply too).
pub(crate) fn notes_verb(store: &Store, who: &Caller, name: &str, body: &Value) -> Value {
    let reply = crate::notes::api::call(store, name, who, &serde_json::to_vec(body).unwrap()).unwrap();
    serde_json::from_slice(&reply).unwrap()
}

/// Every record of `part`, private notes included, exported `limit` at a time, as pages.
pub(crate) fn export_pages(store: &Store, part: &Partition, limit: usize) -> Vec<Vec<Value>> {
    let who = caller(part, 7);
    let mut pages = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut body = serde_json::json!({"limit": limit, "allowPrivate": true, "includePrivate": true});
        if !cursor.is_null() {
            body["cursor"] = cursor.clone();
        }
        let reply = verb(store, &who, "export", &body).unwrap();
        pages.push(reply["records"].as_array().unwrap().clone());
        cursor = reply["next"].clone();
        if cursor.is_null() {
            return pages;
        }
    }
}

/// Every page of `part`'s export at `max_bytes` (and `limit`), checking each fits in the bound
/// unless it is one record that `alone` says may pass it (one version of a note, one write of an
/// entity).
pub(crate) fn pages_within(
    store: &Store,
    part: &Partition,
    (limit, max_bytes): (usize, usize),
    alone: fn(&Value) -> bool,
) -> Vec<Vec<Value>> {
    let (mut out, mut cursor) = (Vec::new(), Value::Null);
    loop {
        let mut body = serde_json::json!({"limit": limit, "maxBytes": max_bytes});
        if !cursor.is_null() {
            body["cursor"] = cursor.clone();
        }
        let reply = verb(store, &caller(part, 7), "export", &body).unwrap();
        let records = reply["records"].as_array().unwrap().clone();
        let bytes = serde_json::to_vec(&records).unwrap().len();
        assert!(
            bytes <= max_bytes || (records.len() == 1 && alone(&records[0])),
            "a page of {bytes} bytes over {max_bytes}"
        );
        out.push(records);
        cursor = reply["next"].clone();
        if cursor.is_null() {
            return out;
        }
    }
}

/// `records` bulk-loaded (`load`, as `cairn import` does) into the empty scope `scope` of user
/// `u1`: the scope and the reply.
pub(crate) fn loaded(store: &Store, records: &[Value], scope: &str) -> (Partition, Value) {
    let lines = records.iter().map(Value::to_string).collect::<Vec<_>>().join("\n");
    let target = Partition::new("local", "u1", scope).unwrap();
    let reply = call(store, "load", &caller(&target, 20_000_000), lines.as_bytes()).unwrap();
    (target, serde_json::from_slice(&reply).unwrap())
}

/// Records with store-local ids taken out, so two scopes' exports compare: ids are dropped (an
/// earlier version's `version_of` reads `true`),
/// fact ends are named (the export carries the names), a document provenance (the fact's, and
/// each of `provenance.also`) names the document's text, and the header's time and scope and
/// every record's origin go. Sorted.
pub(crate) fn normalized(records: &[Value]) -> Vec<String> {
    let texts: std::collections::HashMap<String, Value> = records
        .iter()
        .filter(|r| r["kind"] == "document")
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["text"].clone()))
        .collect();
    let mut out: Vec<String> = records
        .iter()
        .map(|r| {
            let mut r = r.as_object().unwrap().clone();
            for field in ["id", "exported_at", "scope", "origin"] {
                r.remove(field);
            }
            // A fact's ends are ids too (a handoff's `from`/`to` are agents, kept).
            if r["kind"] == "fact" {
                r.remove("from");
                r.remove("to");
                // An earlier version names its fact by id: it stays marked a version.
                if r.contains_key("version_of") {
                    r.insert("version_of".into(), Value::Bool(true));
                }
            }
            let by_text = |p: &mut serde_json::Map<String, Value>| {
                if let Some(doc) = p.remove("doc_id") {
                    p.insert("doc_text".into(), texts.get(doc.as_str().unwrap()).cloned().unwrap_or(Value::Null));
                }
            };
            if let Some(Value::Object(p)) = r.get_mut("provenance") {
                by_text(p);
                if let Some(Value::Array(also)) = p.get_mut("also") {
                    also.iter_mut().filter_map(Value::as_object_mut).for_each(by_text);
                }
            }
            serde_json::to_string(&r).unwrap()
        })
        .collect();
    out.sort();
    out
}
