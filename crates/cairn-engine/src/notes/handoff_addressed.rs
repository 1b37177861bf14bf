//! `handoff_resume` without `taskId`: the unexpired capsules addressed `to` the caller, newest
//! first (latest `createdAt`, then id, as a task's newest is chosen), a page of `limit` at a time
//! (fewer past `PAGE_BYTES` of JSON).
//! The cursor is opaque and bound to the caller (`cursor.rs`; no other field shapes this list,
//! and the page size may change between pages); it keeps the (`createdAt`, id) of the last capsule
//! shown, so a capsule left meanwhile (newer than every page) neither shifts nor repeats a page.
//! A page is a seek in the index of addressed capsules (`handoff_index.rs`) and a read of the
//! entries from there: its own, one more, and the expired ones passed over, whatever the caller
//! received before.

use super::cursor::Binding;
use super::events::PAGE_BYTES;
use super::handoff_elsewhere::elsewhere;
use super::handoff_index::{self, Entry};
use super::handoff_tasks;
use super::{Outcome, invalid};
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use serde_json::{Value, json};
use std::collections::HashMap;

/// A page of the unexpired capsules addressed to the caller, after the capsule `cursor` names:
/// `{state: "listed", handoffs, nextCursor}`. One that a newer unexpired capsule of its task has
/// replaced (so `handoff_resume {taskId}` returns that one) is marked `superseded: true` with the
/// newer one's id as `supersededBy`: an agent acting on the list must not pick up a stale
/// handoff, yet should still see that one was left for it.
/// With none on the first page, `elsewhere` names the other scopes (among `readable`) where some
/// wait (`handoff_elsewhere.rs`).
pub(super) fn addressed(
    snap: &Snapshot,
    caller: &Caller,
    (limit, cursor): (usize, Option<&str>),
    readable: Option<&[String]>,
) -> Outcome<Value> {
    let binding = Binding::new("handoff_resume", caller, &json!({}));
    let after = cursor.map(|c| binding.position(c).and_then(|p| position(&p))).transpose()?;
    // One past the page tells whether another follows.
    let mut rest: Vec<Entry> = Vec::with_capacity(limit + 1);
    handoff_index::scan(snap, &caller.part, &caller.agent, after, |e| {
        if !e.expired(caller.now) {
            rest.push(e);
        }
        Ok(rest.len() <= limit)
    })?;
    let page = &rest[..rest.len().min(limit)];
    // The capsule `handoff_resume {taskId}` returns, per task of the page.
    let mut current: HashMap<&str, Option<u64>> = HashMap::new();
    let mut out = Vec::with_capacity(page.len());
    let mut bytes = 0;
    for e in page {
        if !current.contains_key(e.task_id.as_str()) {
            let newest = handoff_tasks::newest_unexpired(snap, &caller.part, &e.task_id, caller.now)?;
            current.insert(&e.task_id, newest.map(|t| t.id));
        }
        let mut shown = e.capsule(snap, &caller.part)?.render();
        if let Some(newer) = current[e.task_id.as_str()].filter(|id| *id != e.id) {
            shown["superseded"] = json!(true);
            shown["supersededBy"] = json!(newer.to_string());
        }
        // A page ends early, before the capsule that would take it past `PAGE_BYTES` (history's
        // bound), though it holds one: a capsule may be 64 KiB, so 20 of them made 1.3 MB.
        let size = serde_json::to_vec(&shown).map_or(0, |v| v.len()) + 1;
        if !out.is_empty() && bytes + size > PAGE_BYTES {
            break;
        }
        bytes += size;
        out.push(shown);
    }
    let next = (rest.len() > out.len()).then(|| {
        let last = &page[out.len() - 1];
        binding.cursor(&[last.created_at.to_be_bytes(), last.id.to_be_bytes()].concat())
    });
    let mut reply = json!({ "state": "listed", "handoffs": out, "nextCursor": next });
    if cursor.is_none()
        && rest.is_empty()
        && let Some(there) = elsewhere(snap, caller, readable)?
    {
        reply["elsewhere"] = there;
    }
    Ok(reply)
}

/// The (`createdAt`, id) a cursor keeps.
fn position(bytes: &[u8]) -> Outcome<(i64, u64)> {
    if bytes.len() != 16 {
        return Err(invalid("cursor", "is damaged"));
    }
    let (at, id) = bytes.split_at(8);
    Ok((i64::from_be_bytes(at.try_into().expect("8 bytes")), u64::from_be_bytes(id.try_into().expect("8 bytes"))))
}
