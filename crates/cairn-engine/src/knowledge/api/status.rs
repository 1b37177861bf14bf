//! `memory_status`, the partition-level part: counts of the caller's scope, its ontology summary,
//! and every scope this tenant and user has written, with counts (notes and handoffs among them,
//! as `notes::count` counts them for the caller). Every count is read from the partitions'
//! tallies (`knowledge::tally`): the cost is a few keys per type and per scope, not the data.

use super::{Caller, parse};
use crate::error::Result;
use crate::knowledge::part::{Partition, user_scopes};
use crate::knowledge::tally::totals;
use crate::knowledge::{TypeCount, ontology};
use crate::notes::{live_handoffs, visible_notes};
use crate::store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

/// How many of the largest entity types are listed as classes.
const LARGEST_CLASSES: usize = 10;

/// How many entity types and relation types are listed, most used first: a summary for a model to
/// read, so it is bounded whatever the scope holds (found by an audit: a scope of 3,000 entity
/// types and 15,000 relation types answered 0.8 MB); `omitted` counts the rest.
const TYPES_SHOWN: usize = 100;

#[derive(Debug, Default, Deserialize)]
struct Request {}

/// The first `n` of `list` (ranked most used first).
fn shown(list: &[TypeCount], n: usize) -> &[TypeCount] {
    &list[..list.len().min(n)]
}

fn types(list: &[TypeCount]) -> Vec<Value> {
    list.iter().map(|t| json!({ "type": t.spelling, "count": t.count })).collect()
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let _: Request = if body.iter().all(u8::is_ascii_whitespace) { Request::default() } else { parse("status", body)? };
    // The notes counts read the index's layout of blocks; a store written before it is rebuilt first.
    crate::notes::index::upgrade(store)?;
    // The handoff counts read the index of each task's capsules (`notes/handoff_tasks.rs`).
    crate::notes::handoff_tasks::upgrade(store)?;
    // The counts read the partitions' tallies, which `api::call` has built on a store written
    // before them (`tally_build::upgrade`).
    let snap = store.snapshot()?;
    let part = &caller.part;
    let notes = |p: &Partition| -> Result<(u64, u64)> {
        Ok((visible_notes(&snap, p, &caller.agent)?, live_handoffs(&snap, p, caller.now)?))
    };
    let o = ontology(&snap, part)?;
    let (tenant, user, _) = part.parts();
    let mut scopes = Vec::new();
    for scope in user_scopes(&snap, tenant, user)? {
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
            "entity_types": types(shown(&o.entity_types, TYPES_SHOWN)),
            "relation_types": types(shown(&o.relation_types, TYPES_SHOWN)),
            "largest_classes": types(shown(&o.entity_types, LARGEST_CLASSES)),
            "spellings": shown(&o.relation_types, TYPES_SHOWN).iter().map(|t| t.spelling.clone()).collect::<Vec<_>>(),
            "omitted": {
                "entity_types": o.entity_types.len().saturating_sub(TYPES_SHOWN),
                "relation_types": o.relation_types.len().saturating_sub(TYPES_SHOWN),
            },
        },
        "scopes": scopes,
    }))
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{call, caller, fresh};
    use serde_json::json;

    #[test]
    fn the_ontology_lists_the_most_used_types_and_counts_the_rest() {
        let (_dir, store, _part) = fresh();
        let entities: Vec<_> = (0..150).map(|i| json!({"name": format!("E{i}"), "type": format!("t{i}")})).collect();
        let relations: Vec<_> = (0..149)
            .map(|i| json!({"source": format!("E{i}"), "target": format!("E{}", i + 1), "type": format!("r{i}")}))
            .chain((0..3).map(|i| json!({"source": "E0", "target": format!("E{}", i + 2), "type": "knows"})))
            .collect();
        call(&store, &caller(1), "remember", &json!({"facts": {"entities": entities, "relations": relations}}))
            .unwrap();
        let s = call(&store, &caller(2), "status", &json!({})).unwrap();
        let o = &s["ontology"];
        assert_eq!(o["entity_types"].as_array().unwrap().len(), 100, "{o}");
        assert_eq!(o["relation_types"].as_array().unwrap().len(), 100);
        assert_eq!(o["spellings"].as_array().unwrap().len(), 100);
        assert_eq!(o["omitted"], json!({"entity_types": 50, "relation_types": 50}));
        assert_eq!(o["relation_types"][0], json!({"type": "knows", "count": 3}), "most used first");
        assert_eq!(s["scope"]["relations"], json!(152), "the counts are of everything");
    }

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
