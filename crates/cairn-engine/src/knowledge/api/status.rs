//! `memory_status`, the partition-level part: counts of the caller's scope, its ontology summary,
//! and every scope this tenant and user has written, with counts (notes and handoffs among them,
//! as `notes::count` counts them for the caller). Every count is read from the partitions'
//! tallies (`knowledge::tally`): the cost is a few keys per type and per scope, not the data.

use super::{Caller, parse};
use crate::error::Result;
use crate::knowledge::part::{Partition, SCOPES, user_scopes_prefix};
use crate::knowledge::tally::totals;
use crate::knowledge::{TypeCount, ontology};
use crate::notes::{live_handoffs, visible_notes};
use crate::store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

/// How many of the largest entity types are listed as classes.
const LARGEST_CLASSES: usize = 10;

#[derive(Debug, Default, Deserialize)]
struct Request {}

fn types(list: &[TypeCount]) -> Vec<Value> {
    list.iter().map(|t| json!({ "type": t.spelling, "count": t.count })).collect()
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let _: Request = if body.iter().all(u8::is_ascii_whitespace) { Request::default() } else { parse("status", body)? };
    // The notes counts read the index's layout of blocks; a store written before it is rebuilt first.
    crate::notes::index::upgrade(store)?;
    // The counts read the partitions' tallies, which `api::call` has built on a store written
    // before them (`tally_build::upgrade`).
    let snap = store.snapshot()?;
    let part = &caller.part;
    let notes = |p: &Partition| -> Result<(u64, u64)> {
        Ok((visible_notes(&snap, p, &caller.agent)?, live_handoffs(&snap, p, caller.now)?))
    };
    let o = ontology(&snap, part)?;
    let (tenant, user, _) = part.parts();
    let prefix = user_scopes_prefix(tenant, user);
    let mut scopes = Vec::new();
    for item in snap.prefix(SCOPES, &prefix)? {
        let (key, _) = item?;
        let scope = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
        let p = Partition::new(tenant, user, &scope)?;
        let counted = totals(&snap, &p)?;
        let (notes, handoffs) = notes(&p)?;
        scopes.push(json!({
            "scope": scope,
            "entities": counted.entities,
            "relations": counted.relations,
            "documents": counted.documents,
            "notes": notes,
            "handoffs": handoffs,
        }));
    }
    let (notes, handoffs) = notes(part)?;
    let counted = totals(&snap, part)?;
    Ok(json!({
        "scope": {
            "entities": o.entities,
            "relations": o.relations,
            "documents": counted.documents,
            "passages": counted.passages,
            "notes": notes,
            "handoffs": handoffs,
        },
        "ontology": {
            "entity_types": types(&o.entity_types),
            "relation_types": types(&o.relation_types),
            "largest_classes": types(&o.entity_types[..o.entity_types.len().min(LARGEST_CLASSES)]),
            "spellings": o.relation_types.iter().map(|t| t.spelling.clone()).collect::<Vec<_>>(),
        },
        "scopes": scopes,
    }))
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{call, caller, fresh};
    use serde_json::json;

    #[test]
    fn counts_ontology_and_every_scope_of_the_user() {
        let (_dir, store, _part) = fresh();
        let body = json!({"content": "Acme is in Berlin.", "facts": {
            "entities": [{"name": "Acme", "type": "Company"}],
            "relations": [{"source": "Acme", "target": "Berlin", "type": "located_in"}]}});
        call(&store, &caller(1), "remember", &body).unwrap();
        let mut other_scope = caller(2);
        other_scope.part = crate::knowledge::Partition::new("local", "u1", "project-x").unwrap();
        call(&store, &other_scope, "relate", &json!({"from": "a", "to": "b", "type": "t"})).unwrap();
        let mut other_user = caller(3);
        other_user.part = crate::knowledge::Partition::new("local", "u2", "secret").unwrap();
        call(&store, &other_user, "relate", &json!({"from": "c", "to": "d", "type": "t"})).unwrap();
        let s = call(&store, &caller(4), "status", &json!({})).unwrap();
        assert_eq!(
            s["scope"],
            json!({"entities": 2, "relations": 1, "documents": 1, "passages": 1, "notes": 0, "handoffs": 0})
        );
        assert_eq!(s["ontology"]["entity_types"], json!([{"type": "Company", "count": 1}]));
        assert_eq!(s["ontology"]["relation_types"], json!([{"type": "located_in", "count": 1}]));
        assert_eq!(
            s["scopes"],
            json!([
                {"scope": "default", "entities": 2, "relations": 1, "documents": 1, "notes": 0, "handoffs": 0},
                {"scope": "project-x", "entities": 2, "relations": 1, "documents": 0, "notes": 0, "handoffs": 0},
            ]),
            "another user's scope is never listed"
        );
    }

    #[test]
    fn a_scope_of_notes_and_handoffs_counts_what_the_caller_may_read() {
        let (_dir, store, _part) = fresh();
        let at = |agent: &str, now: i64| {
            let mut c = caller(now);
            c.part = crate::knowledge::Partition::new("local", "u1", "notes-only").unwrap();
            c.agent = agent.into();
            c
        };
        let write = |agent: &str, body: serde_json::Value| {
            let reply =
                crate::notes::api::call(&store, "note_write", &at(agent, 1_000), &serde_json::to_vec(&body).unwrap());
            let reply = String::from_utf8(reply.unwrap()).unwrap();
            assert!(!reply.contains("\"error\""), "{reply}");
        };
        write("claude", json!({"key": "lang", "value": "en", "kind": "user_preference"}));
        write("claude", json!({"key": "plan", "value": 1, "kind": "task_state", "visibility": "task", "taskId": "T"}));
        write("claude", json!({"key": "mine", "value": 1, "kind": "decision", "visibility": "agent"}));
        write("codex", json!({"key": "theirs", "value": 1, "kind": "decision", "visibility": "agent"}));
        write(
            "claude",
            json!({"key": "secret", "value": 1, "kind": "user_fact", "private": true, "allowPrivate": true}),
        );
        let handoff = |body: serde_json::Value| {
            crate::notes::api::call(&store, "handoff_create", &at("codex", 1_000), &serde_json::to_vec(&body).unwrap())
                .unwrap()
        };
        handoff(json!({"taskId": "T", "summary": "next"}));
        handoff(json!({"taskId": "T", "summary": "soon gone", "expiresAt": "1970-01-01T00:00:02Z"}));
        let s = call(&store, &at("claude", 5_000), "status", &json!({})).unwrap();
        let counts = json!({"entities": 0, "relations": 0, "documents": 0, "notes": 3, "handoffs": 1});
        let listed = s["scopes"].as_array().unwrap().iter().find(|x| x["scope"] == "notes-only").unwrap().clone();
        assert_eq!(
            listed,
            json!({"scope": "notes-only", "entities": 0, "relations": 0, "documents": 0, "notes": 3, "handoffs": 1})
        );
        assert_eq!(s["scope"]["notes"], counts["notes"], "user, task and own agent notes; not another's, not private");
        assert_eq!(s["scope"]["handoffs"], counts["handoffs"], "the expired one is not counted");
    }
}
