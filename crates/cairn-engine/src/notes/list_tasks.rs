//! The tasks holding notes, named when task notes are asked for without a `taskId`. Found by a
//! review: `note_list {visibility: "task"}` was refused "taskId: is required to list task notes"
//! and nothing more, so a model that had lost the task's id had nowhere to go (a task note is read
//! only with its `taskId`, DESIGN.md §1). The refusal now names the scope's tasks holding notes
//! the caller could list with that id: any agent's task notes, never one a private note alone
//! holds (a private note's existence is not told), most notes first, at most `NAMED`, from the
//! first `READ` current notes, so the refusal costs a bounded scan.

use super::Fail;
use super::notes_meant::identity_of;
use super::record::{CUR, NoteRecord, Visibility};
use crate::error::Result;
use crate::knowledge::Partition;
use crate::knowledge::api::Refusal;
use crate::snapshot::Snapshot;
use serde_json::json;
use std::collections::BTreeMap;

/// Current notes read, at most.
const READ: usize = 5_000;

/// Tasks named, at most.
const NAMED: usize = 10;

/// The refusal of a task-note list without `taskId`, naming the tasks holding notes in `part`.
pub(super) fn task_id_required(snap: &Snapshot, part: &Partition) -> Result<Fail> {
    let mut held: BTreeMap<String, u64> = BTreeMap::new();
    for kv in snap.prefix(CUR, part.prefix())?.take(READ) {
        let (k, v) = kv?;
        let Some(n) = identity_of(&k[part.prefix().len()..]) else { continue };
        if n.visibility == Visibility::Task && !NoteRecord::decode(&v)?.private {
            *held.entry(n.owner).or_default() += 1;
        }
    }
    let mut tasks: Vec<(String, u64)> = held.into_iter().collect();
    tasks.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let more = tasks.len() > NAMED;
    tasks.truncate(NAMED);
    let mut message = "is required to list task notes".to_owned();
    if !tasks.is_empty() {
        let named: Vec<String> = tasks.iter().map(|(t, n)| format!("{t:?} ({n})")).collect();
        let more = if more { ", …" } else { "" };
        message = format!("{message}; tasks holding notes here: {}{more} (send one as taskId)", named.join(", "));
    }
    let mut detail = json!({ "field": "taskId", "message": message });
    if !tasks.is_empty() {
        detail["tasks"] = tasks.iter().map(|(t, n)| json!({ "taskId": t, "notes": n })).collect();
    }
    Ok(Fail::Refused(Refusal {
        code: "VALIDATION_ERROR",
        message: format!("taskId: {message}"),
        details: vec![detail],
    }))
}
