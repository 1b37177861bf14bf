//! The other notes stored at a key. A model that updates a task note without its `taskId` (or an
//! agent note without `visibility: agent`) names another note: sent with `kind`, the write
//! created a second note beside the one it meant, which kept its stale value; sent without, it
//! was refused only as "kind is required". Both now name the notes at that key the caller may
//! read without `includePrivate`, to send back. `history {key}` sent without a visibility names
//! them too when they stand beside the user note (`events.rs`).

use super::record::{CUR, Identity, NoteRecord, Visibility};
use crate::error::Result;
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use serde_json::{Value, json};

/// The notes at `named`'s key but another identity, as `{key, visibility, taskId?}`: the user's,
/// any task's and `agent`'s own; private ones only for a reader of private notes (`private`).
/// Keys hold no NUL, so `key \0` bounds the scan.
pub(crate) fn same_key(
    snap: &Snapshot,
    part: &Partition,
    (agent, private): (&str, bool),
    named: &Identity,
) -> Result<Vec<Value>> {
    let mut found = Vec::new();
    for kv in snap.prefix(CUR, &part.key(&[named.key.as_bytes(), b"\0"]))? {
        let (_, bytes) = kv?;
        let note = NoteRecord::decode(&bytes)?;
        let id = note.identity();
        if id == *named || (note.private && !private) || (id.visibility == Visibility::Agent && id.owner != agent) {
            continue;
        }
        let mut shown = json!({ "key": id.key, "visibility": id.visibility.as_str() });
        if let Some(t) = id.task_id() {
            shown["taskId"] = json!(t);
        }
        found.push(shown);
    }
    Ok(found)
}

/// The receipt warning of a write that created `named` beside the notes `others` at its key.
pub(crate) fn created_beside(named: &Identity, others: &[Value]) -> Value {
    let listed: Vec<String> = others.iter().map(described).collect();
    json!({
        "field": "key",
        "message": format!(
            "created a new {} note {:?} beside {}; to update one of those instead, send its visibility and taskId",
            named.visibility.as_str(),
            named.key,
            listed.join(", ")
        ),
        "notes": others,
    })
}

/// `{key, visibility, taskId?}` as a message names it.
pub(crate) fn described(note: &Value) -> String {
    match note["taskId"].as_str() {
        Some(t) => format!("the task note of task {t:?}"),
        None => format!("the {} note", note["visibility"].as_str().unwrap_or_default()),
    }
}
