//! `memory_status`, the partition-level part: counts of the caller's scope, its ontology summary,
//! and every scope this tenant and user has written, with counts.

use super::{Caller, parse};
use crate::error::Result;
use crate::knowledge::part::{Partition, SCOPES, user_scopes_prefix};
use crate::knowledge::trees::{DOC, PSG};
use crate::knowledge::{TypeCount, ontology};
use crate::snapshot::Snapshot;
use crate::store::Store;
use serde::Deserialize;
use serde_json::{Value, json};

/// How many of the largest entity types are listed as classes.
const LARGEST_CLASSES: usize = 10;

#[derive(Debug, Default, Deserialize)]
struct Request {}

fn count(snap: &Snapshot, tree: &str, part: &Partition) -> Result<u64> {
    let mut n = 0;
    for item in snap.prefix(tree, part.prefix())? {
        item?;
        n += 1;
    }
    Ok(n)
}

fn types(list: &[TypeCount]) -> Vec<Value> {
    list.iter().map(|t| json!({ "type": t.spelling, "count": t.count })).collect()
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let _: Request = if body.iter().all(u8::is_ascii_whitespace) { Request::default() } else { parse("status", body)? };
    let snap = store.snapshot()?;
    let part = &caller.part;
    let o = ontology(&snap, part)?;
    let (tenant, user, _) = part.parts();
    let prefix = user_scopes_prefix(tenant, user);
    let mut scopes = Vec::new();
    for item in snap.prefix(SCOPES, &prefix)? {
        let (key, _) = item?;
        let scope = String::from_utf8_lossy(&key[prefix.len()..]).into_owned();
        let p = Partition::new(tenant, user, &scope)?;
        let summary = ontology(&snap, &p)?;
        scopes.push(json!({
            "scope": scope,
            "entities": summary.entities,
            "relations": summary.relations,
            "documents": count(&snap, DOC, &p)?,
        }));
    }
    Ok(json!({
        "scope": {
            "entities": o.entities,
            "relations": o.relations,
            "documents": count(&snap, DOC, part)?,
            "passages": count(&snap, PSG, part)?,
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
        assert_eq!(s["scope"], json!({"entities": 2, "relations": 1, "documents": 1, "passages": 1}));
        assert_eq!(s["ontology"]["entity_types"], json!([{"type": "Company", "count": 1}]));
        assert_eq!(s["ontology"]["relation_types"], json!([{"type": "located_in", "count": 1}]));
        assert_eq!(
            s["scopes"],
            json!([
                {"scope": "default", "entities": 2, "relations": 1, "documents": 1},
                {"scope": "project-x", "entities": 2, "relations": 1, "documents": 0},
            ]),
            "another user's scope is never listed"
        );
    }
}
