//! `possible_duplicates` in the replies of `relate` and `remember`: each entity the call created
//! whose name is a near spelling of a stored one (`Priya Ramen` beside `Priya Raman`), a whole
//! word of a longer one (`Priya`), or holds or abbreviates one (`Dr. Priya Raman`, `Priya R.`).
//! The entity is kept (the caller may mean someone else), but a model sees the split while it can
//! still `forget` the new one or send the call again with the stored spelling (found by an audit:
//! a misspelled `from` made a second Priya whose facts recall of the first never showed). Names
//! come from the caller's partition only, as recall's suggestions do.

use super::Caller;
use super::recall::visible;
use crate::error::Result;
use crate::knowledge::cache;
use crate::knowledge::graph::entity_by_id;
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::text::{Effort, LookupOptions, MatchKind};
use serde_json::{Value, json};

/// The most stored names offered for one created entity.
const PER_ENTITY: usize = 3;

/// The most entities a call may create and still be checked. A larger call is a bulk load: the
/// check would rebuild the partition's name index on every such call (about half a second at 100k
/// names), so it is left out and the reply says so (`possible_duplicates_unchecked`).
const MAX_CHECKED: usize = 100;

/// Sets `possible_duplicates` in `reply` for the entities `created` (ids, in the call's order), as
/// `snap` (taken after the write) sees them: `[{name, id, similar_to: {name, id}}]`, each pair
/// once; or, past `MAX_CHECKED`, none and `possible_duplicates_unchecked: true`.
pub(super) fn annotate(
    store: &Store,
    snap: &Snapshot,
    caller: &Caller,
    created: &[u64],
    reply: &mut Value,
) -> Result<()> {
    if created.len() > MAX_CHECKED {
        reply["possible_duplicates"] = json!([]);
        reply["possible_duplicates_unchecked"] = json!(true);
        return Ok(());
    }
    reply["possible_duplicates"] = possible_duplicates(store, snap, caller, created)?;
    Ok(())
}

fn possible_duplicates(store: &Store, snap: &Snapshot, caller: &Caller, created: &[u64]) -> Result<Value> {
    let mut out: Vec<Value> = Vec::new();
    if created.is_empty() {
        return Ok(Value::Array(out));
    }
    let names = cache::names(store.dir(), snap, &caller.part)?;
    let mut pairs: Vec<(u64, u64)> = Vec::new();
    for &id in created {
        let Some(entity) = entity_by_id(snap, &caller.part, id)? else { continue };
        // Capped: a hint every create pays for must not cost more as the partition grows (see
        // `Effort`); among thousands of names like this one it offers some, not all.
        let loose = names
            .lookup_with(&entity.name, LookupOptions { prefix: false, limit: 16, as_name: false }, Effort::Capped)
            .into_iter()
            .filter(|m| matches!(m.how, MatchKind::WordOfName | MatchKind::Near { .. }))
            .map(|m| (m.id, m.name));
        let mut offered = 0;
        for (other, name) in loose.chain(names.held_or_abbreviated_with(&entity.name, 16, Effort::Capped)) {
            if offered == PER_ENTITY {
                break;
            }
            if other == id || pairs.contains(&(id, other)) || pairs.contains(&(other, id)) {
                continue;
            }
            // The cache may hold forgotten entities; only stored ones are offered.
            if visible(snap, caller, other, None)?.is_none() {
                continue;
            }
            pairs.push((id, other));
            offered += 1;
            out.push(json!({
                "name": entity.name,
                "id": id.to_string(),
                "similar_to": { "name": name, "id": other.to_string() },
            }));
        }
    }
    Ok(Value::Array(out))
}

#[cfg(test)]
mod tests {
    use crate::knowledge::Partition;
    use crate::knowledge::api::Caller;
    use crate::knowledge::testing::{call, caller, fresh};
    use serde_json::{Value, json};

    fn pairs(reply: &Value) -> Vec<(String, String)> {
        let list = reply["possible_duplicates"].as_array().unwrap_or_else(|| panic!("no possible_duplicates: {reply}"));
        list.iter()
            .map(|d| (d["name"].as_str().unwrap().to_owned(), d["similar_to"]["name"].as_str().unwrap().to_owned()))
            .collect()
    }

    /// The audit's calls: `Priya Ramen` in a second relate is a new entity, and the reply says it
    /// is spelled like the stored `Priya Raman`, with both ids.
    #[test]
    fn relate_warns_when_it_creates_a_near_spelling_of_a_stored_name() {
        let (_dir, store, _part) = fresh();
        let first = call(
            &store,
            &caller(10),
            "relate",
            &json!({"from": "Priya Raman", "to": "Acme Robotics", "type": "works_at"}),
        )
        .unwrap();
        assert_eq!(first["possible_duplicates"], json!([]), "{first}");
        let typo =
            call(&store, &caller(20), "relate", &json!({"from": "Priya Ramen", "to": "Porto", "type": "born_in"}))
                .unwrap();
        assert_eq!(typo["created"], json!(true));
        let dup = &typo["possible_duplicates"];
        assert_eq!(dup.as_array().unwrap().len(), 1, "{typo}");
        assert_eq!(dup[0]["name"], json!("Priya Ramen"));
        assert_eq!(dup[0]["id"], typo["fact"]["subject_id"]);
        assert_eq!(dup[0]["similar_to"]["name"], json!("Priya Raman"));
        assert_eq!(dup[0]["similar_to"]["id"], first["fact"]["subject_id"]);
        // Named as stored, nothing is created and nothing is said.
        let again =
            call(&store, &caller(30), "relate", &json!({"from": "Priya Raman", "to": "Porto", "type": "visited"}))
                .unwrap();
        assert_eq!(again["possible_duplicates"], json!([]), "{again}");
    }

    #[test]
    fn relate_warns_for_a_word_of_a_name_and_for_a_name_that_holds_or_abbreviates_one() {
        let (_dir, store, _part) = fresh();
        call(&store, &caller(10), "relate", &json!({"from": "Priya Raman", "to": "Acme Robotics", "type": "works_at"}))
            .unwrap();
        for (from, stored) in [
            ("Priya", "Priya Raman"),
            ("Dr. Priya Raman", "Priya Raman"),
            ("Priya R.", "Priya Raman"),
            ("Acme Robotics Inc", "Acme Robotics"),
        ] {
            let r =
                call(&store, &caller(20), "relate", &json!({"from": from, "to": "Lisbon", "type": "visited"})).unwrap();
            assert!(pairs(&r).contains(&(from.to_owned(), stored.to_owned())), "{from}: {r}");
        }
        // A name like none stored is no warning (Lisbon was created by the first of those).
        let r = call(&store, &caller(30), "relate", &json!({"from": "Jonas Berg", "to": "Lisbon", "type": "visited"}))
            .unwrap();
        assert_eq!(r["possible_duplicates"], json!([]), "{r}");
    }

    #[test]
    fn a_bulk_write_is_not_checked_and_says_so() {
        let (_dir, store, _part) = fresh();
        let entities: Vec<Value> = (0..101).map(|i| json!({"name": format!("Member {i:03}")})).collect();
        let r = call(&store, &caller(10), "remember", &json!({"facts": {"entities": entities}})).unwrap();
        assert_eq!((&r["possible_duplicates"], &r["possible_duplicates_unchecked"]), (&json!([]), &json!(true)), "{r}");
        let one =
            call(&store, &caller(20), "remember", &json!({"facts": {"entities": [{"name": "Member 1000"}]}})).unwrap();
        assert!(one.get("possible_duplicates_unchecked").is_none(), "{one}");
        assert!(pairs(&one).contains(&("Member 1000".to_owned(), "Member 100".to_owned())), "{one}");
    }

    #[test]
    fn remember_warns_for_entities_and_fact_ends_it_creates_from_the_callers_partition_only() {
        let (_dir, store, part) = fresh();
        let facts = |name: &str| json!({"facts": {"entities": [{"name": name, "type": "person"}]}});
        let stored = call(&store, &caller(10), "remember", &facts("Priya Raman")).unwrap();
        assert_eq!(stored["possible_duplicates"], json!([]), "{stored}");
        let typo = call(&store, &caller(20), "remember", &facts("Pryia Raman")).unwrap();
        assert_eq!(pairs(&typo), [("Pryia Raman".to_owned(), "Priya Raman".to_owned())], "{typo}");
        let ends = json!({"facts": {"relations": [{"source": "Priya Ramen", "target": "Porto", "type": "born_in"}]}});
        let r = call(&store, &caller(30), "remember", &ends).unwrap();
        assert!(pairs(&r).contains(&("Priya Ramen".to_owned(), "Priya Raman".to_owned())), "{r}");
        // Another user's partition holds no Priya: nothing of this one is offered there.
        let other = Caller { part: Partition::new("local", "u2", "default").unwrap(), ..caller(40) };
        assert_ne!(other.part, part);
        let theirs = call(&store, &other, "remember", &facts("Priya Ramen")).unwrap();
        assert_eq!(theirs["possible_duplicates"], json!([]), "{theirs}");
    }
}
