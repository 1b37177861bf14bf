//! Where a task waits when `handoff_resume {taskId}` finds no capsule of it in the caller's scope.
//! A capsule is left in the scope of the agent that wrote it, so an agent resuming from another
//! scope (a misspelt `scope`, a client whose config names another one) read `state: none` as "no
//! one began this task" (found by an audit: `{"taskId":"t1","scope":"defualt"}` answered a bare
//! `none` while t1 waited in `default`). The reply names the caller's other scopes holding an
//! unexpired capsule of the task. Read: the caller's tenant and user only, of its scopes only
//! those the node says the caller's token may use (`readableScopes`; none given, every one), at
//! most `READ` index entries in all.

use super::handoff_elsewhere::{named_scopes, other_scopes};
use super::handoff_tasks;
use crate::error::Result;
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use serde_json::Value;

/// Task index entries read across the other scopes, at most: past it, scopes may go unnamed (`more`).
const READ: usize = 5_000;

/// Scopes named, at most, in the order the user's scopes list.
const NAMED: usize = 10;

/// `{scopes: [{scope, handoffs}], more?, hint}`: the caller's other scopes, among `readable`,
/// where `task_id` holds unexpired capsules; `None` when none does.
pub(super) fn task_elsewhere(
    snap: &Snapshot,
    caller: &Caller,
    readable: Option<&[String]>,
    task_id: &str,
) -> Result<Option<Value>> {
    let mut found: Vec<(String, u64)> = Vec::new();
    let mut budget = READ;
    let mut more = false;
    for other in other_scopes(snap, caller, readable)? {
        let (scope, part) = other?;
        if budget == 0 || found.len() == NAMED {
            more = true;
            break;
        }
        let mut live = 0;
        handoff_tasks::scan(snap, &part, task_id, |e| {
            budget = budget.saturating_sub(1);
            live += u64::from(!e.expired(caller.now));
            Ok(budget > 0)
        })?;
        if live > 0 {
            found.push((scope, live));
        }
    }
    if found.is_empty() {
        return Ok(None);
    }
    let named: Vec<String> = found.iter().map(|(s, _)| format!("{s:?}")).collect();
    let hint = format!(
        "no handoff on task {task_id:?} waits in this scope, but one does in your scope{} {}{}: send `scope` with \
         it to resume the task",
        if found.len() == 1 { "" } else { "s" },
        named.join(", "),
        if more { " and perhaps more" } else { "" }
    );
    Ok(Some(named_scopes(&found, "handoffs", more, &hint)))
}
