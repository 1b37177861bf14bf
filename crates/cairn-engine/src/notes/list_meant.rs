//! What an empty first page of `note_list` may have meant. Found by playing a model: agent B
//! looking for the task state agent A wrote (`note_list {key: "migration-state"}`, or `{query:
//! "migration backfill"}`) got `notes: []` and read it as "nothing stored", though the note was
//! there under its `taskId` (which a list without it does not show), while `history` of the same
//! key named it. The reply now names them, as `history` does (`notes_meant`): for a `key`, the
//! notes that key may name (the same key at another visibility or task, near spellings); for a
//! `query` without `taskId`, the task notes it matches, best first. Never private ones, never
//! another agent's own, at most `OFFERED`.

use super::index;
use super::lookup;
use super::notes_meant::{notes_meant, task_notes_meant};
use super::record::{CUR, Identity, KINDS, NoteRecord, Visibility};
use super::search::{Query, fuse};
use crate::error::{Error, Result};
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use serde_json::{Value, json};

/// Task notes offered for a query, at most.
const OFFERED: usize = 3;

/// The notes a `key` named with nothing listed may mean, as `{key, visibility, taskId?}` to send
/// back; `visibility` and `task_id` are those the list asked with.
pub(super) fn keys_meant(
    snap: &Snapshot,
    caller: &Caller,
    key: &str,
    visibility: Option<Visibility>,
    task_id: Option<&str>,
) -> Result<Vec<Value>> {
    let (visibility, owner) = match (visibility, task_id) {
        (_, Some(t)) => (Visibility::Task, t.to_owned()),
        (Some(Visibility::Agent), None) => (Visibility::Agent, caller.agent.clone()),
        _ => (Visibility::User, String::new()),
    };
    let named = Identity { key: key.to_owned(), visibility, owner };
    Ok(notes_meant(snap, &caller.part, &caller.agent, &named)?.into_iter().map(|o| o["note"].clone()).collect())
}

/// The notes of the tasks spelled like `task_id`, which holds none, as `{key, visibility,
/// taskId}` to send back.
pub(super) fn tasks_meant(snap: &Snapshot, caller: &Caller, task_id: &str) -> Result<Vec<Value>> {
    Ok(task_notes_meant(snap, &caller.part, &caller.agent, task_id)?.into_iter().map(|o| o["note"].clone()).collect())
}

/// The task notes that `query` matches (and `kind`, when given), best first, as `{key,
/// visibility, taskId}` to send back.
pub(super) fn tasks_matching(
    snap: &Snapshot,
    caller: &Caller,
    query: &Query,
    kind: Option<&str>,
) -> Result<Vec<Value>> {
    let admit = |m: &index::Meta<'_>| {
        let k = KINDS.get(usize::from(m.kind)).copied().unwrap_or_default();
        m.visibility == Visibility::Task && !m.private && kind.is_none_or(|want| want == k)
    };
    let (ids, docs): (Vec<u64>, Vec<_>) =
        lookup::lookup(snap, &caller.part, query, &admit)?.into_iter().map(|h| (h.id, h.features)).unzip();
    let mut offered = Vec::new();
    for r in fuse(query, &docs, OFFERED).best {
        let missing = || Error::corrupt(None, format!("indexed note {} is missing", ids[r.index]));
        let identity = snap.get(index::IDS, &index::id_key(&caller.part, ids[r.index]))?.ok_or_else(missing)?;
        let note = NoteRecord::decode(&snap.get(CUR, &caller.part.key(&[&identity]))?.ok_or_else(missing)?)?;
        offered.push(json!({ "key": note.key, "visibility": "task", "taskId": note.task_id() }));
    }
    Ok(offered)
}
