//! "Did you mean" for a note or task named with nothing behind it. A model misspells the key
//! (`deploy-window` for `deploy_window`) or leaves out the `taskId` of a task note, and a bare
//! `NOT_FOUND` of `history {key}` or `forget {note}` read to it as "never stored"; a misspelt task
//! (`atlas_migration`) was `handoff_resume` `state: none`, "no one began it". Offered: the notes it
//! may name and read without `includePrivate` (the user's, its own agent notes, any task's: an
//! export holds them all) whose key is the one sent at another visibility, then those spelled like
//! it (in case, accents or spacing, then keys it begins, then `text::names`' near spellings), each as a `note` to send back; the
//! tasks with handoffs spelled like the one asked. A scope's notes or handoffs are read up to
//! `READ`, so a miss costs a bounded scan.

use super::handoff::HAND;
use super::record::{CUR, Identity, NoteRecord, Visibility};
use crate::error::Result;
use crate::knowledge::Partition;
use crate::snapshot::Snapshot;
use crate::text::{NameIndex, fold};
use serde_json::{Value, json};

/// Current notes read for suggestions, at most.
const READ: usize = 5_000;

/// Suggestions offered, at most.
const OFFERED: usize = 3;

/// `details` of the `NOT_FOUND` for `named`: `{did_you_mean, note: {key, visibility, taskId?}}`.
pub(crate) fn notes_meant(snap: &Snapshot, part: &Partition, agent: &str, named: &Identity) -> Result<Vec<Value>> {
    let notes: Vec<Identity> = nameable(snap, part, agent)?.into_iter().filter(|n| n != named).collect();
    let mut keys = vec![named.key.clone()];
    keys.extend(spelled_like(notes.iter().map(|n| n.key.as_str()), &named.key));
    offer(snap, part, keys.iter().flat_map(|k| notes.iter().filter(move |n| &n.key == k)))
}

/// `details` as `notes_meant`'s for a `note_list` filtered by a `task_id` that holds no note: the
/// notes of the tasks spelled like it. Found by a review: `note_list {taskId: "atlas-migration"}`
/// of task `Atlas-Migration`'s state was `notes: []`, read as "nothing stored".
pub(crate) fn task_notes_meant(snap: &Snapshot, part: &Partition, agent: &str, task_id: &str) -> Result<Vec<Value>> {
    let notes: Vec<Identity> =
        nameable(snap, part, agent)?.into_iter().filter(|n| n.visibility == Visibility::Task).collect();
    if notes.iter().any(|n| n.owner == task_id) {
        return Ok(Vec::new());
    }
    let mut tasks: Vec<&str> = notes.iter().map(|n| n.owner.as_str()).collect();
    tasks.sort_unstable();
    tasks.dedup();
    let meant = spelled_like(tasks.into_iter(), task_id);
    offer(snap, part, meant.iter().flat_map(|t| notes.iter().filter(move |n| &n.owner == t)))
}

/// The current notes of `part` that `agent` may name (its own agent notes, every user and task
/// note), up to `READ`: identities from the tree's keys (`key \0 visibility \0 owner`), in key
/// order, so only the few offered are read.
fn nameable(snap: &Snapshot, part: &Partition, agent: &str) -> Result<Vec<Identity>> {
    let mut notes: Vec<Identity> = Vec::new();
    for kv in snap.prefix(CUR, part.prefix())?.take(READ) {
        let (k, _) = kv?;
        let Some(n) = identity_of(&k[part.prefix().len()..]) else { continue };
        if n.visibility != Visibility::Agent || n.owner == agent {
            notes.push(n);
        }
    }
    Ok(notes)
}

/// The first `OFFERED` of `notes` that are not private (their records read to know: a value may
/// be 64 KiB), as `{did_you_mean, note: {key, visibility, taskId?}}`.
fn offer<'a>(snap: &Snapshot, part: &Partition, notes: impl Iterator<Item = &'a Identity>) -> Result<Vec<Value>> {
    let mut offered = Vec::new();
    for n in notes {
        if offered.len() == OFFERED {
            break;
        }
        let Some(bytes) = snap.get(CUR, &n.cur_key(part))? else { continue };
        if NoteRecord::decode(&bytes)?.private {
            continue;
        }
        let mut note = json!({ "key": n.key, "visibility": n.visibility.as_str() });
        if let Some(t) = n.task_id() {
            note["taskId"] = json!(t);
        }
        offered.push(json!({ "did_you_mean": n.key, "note": note }));
    }
    Ok(offered)
}

/// The tasks with handoffs in `part` spelled like `task_id`, which has none.
pub(crate) fn tasks_meant(snap: &Snapshot, part: &Partition, task_id: &str) -> Result<Vec<String>> {
    let mut tasks: Vec<String> = Vec::new();
    // Keys are `task \0 id` (8 bytes), a task's capsules together.
    for kv in snap.prefix(HAND, part.prefix())?.take(READ) {
        let (k, _) = kv?;
        let Some(task) = k.get(part.prefix().len()..k.len().saturating_sub(9)) else { continue };
        let Ok(task) = std::str::from_utf8(task) else { continue };
        if tasks.last().is_none_or(|t| t != task) {
            tasks.push(task.to_owned());
        }
    }
    Ok(spelled_like(tasks.iter().map(String::as_str), task_id))
}

/// Up to `OFFERED` of `names` spelled like `asked`: first those it matches but for case, accents
/// or spacing (`fold`), then those it begins (folded), then `NameIndex::did_you_mean`'s. Keys and
/// task ids are exact, so `Atlas-Migration` misses `atlas-migration`; but the name index reads a
/// folded match as the name itself, no suggestion, and such a miss was offered nothing (found by a
/// review: `state: none` for a task asked in another case, as if no one began it, while a typo was
/// offered it). Nor does it offer a name `asked` begins at a word's end: `note_list {key:
/// "task/auth-refactor"}` of a task's `task/auth-refactor/state` was `notes: []`, read as nothing
/// stored (found by QA playing two agents on hierarchical keys).
fn spelled_like<'a>(names: impl Iterator<Item = &'a str> + Clone, asked: &str) -> Vec<String> {
    let folded = fold(asked);
    let mut out: Vec<String> = Vec::new();
    let begun = |name: &str| !folded.is_empty() && fold(name).starts_with(&folded);
    for alike in [&|name: &str| fold(name) == folded, &begun as &dyn Fn(&str) -> bool] {
        for name in names.clone() {
            if out.len() < OFFERED && name != asked && alike(name) && !out.iter().any(|o| o == name) {
                out.push(name.to_owned());
            }
        }
    }
    let index = NameIndex::new(names.enumerate().map(|(i, n)| (i as u64, n)));
    for name in index.did_you_mean(asked, OFFERED) {
        if out.len() < OFFERED && !out.contains(&name) {
            out.push(name);
        }
    }
    out
}

/// `message` with the notes `offered` (as `notes_meant` gives them) named after it.
pub(crate) fn message_with(message: String, offered: &[Value]) -> String {
    if offered.is_empty() {
        return message;
    }
    let named: Vec<String> = offered
        .iter()
        .map(|o| {
            let note = &o["note"];
            match note["taskId"].as_str() {
                Some(t) => format!("{} (task {t:?})", note["key"]),
                None => format!("{} ({})", note["key"], note["visibility"].as_str().unwrap_or_default()),
            }
        })
        .collect();
    format!("{message}; did you mean {}? (send a detail's `note` back)", named.join(", "))
}

/// The identity a current note's tree key spells after its partition; None for one unreadable.
pub(super) fn identity_of(tail: &[u8]) -> Option<Identity> {
    let text = std::str::from_utf8(tail).ok()?;
    let mut parts = text.splitn(3, '\0');
    let (key, visibility, owner) = (parts.next()?, parts.next()?, parts.next()?);
    let visibility = Visibility::parse(Some(visibility)).ok()?;
    Some(Identity { key: key.to_owned(), visibility, owner: owner.to_owned() })
}
