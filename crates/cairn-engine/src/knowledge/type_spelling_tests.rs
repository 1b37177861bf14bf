//! Relation types written in several spellings (`type_spelling.rs`), through the verbs.

use super::testing::{TODAY, call, caller, fresh};
use serde_json::{Value, json};

fn stored_facts(store: &crate::store::Store, subject: &str) -> Vec<Value> {
    let r = call(store, &caller(TODAY), "recall", &json!({"subject": subject})).unwrap();
    r["facts"].as_array().unwrap().iter().filter(|f| f["derived"].is_null()).cloned().collect()
}

fn relation_types(store: &crate::store::Store) -> Value {
    call(store, &caller(TODAY), "status", &json!({"scope": "default"})).unwrap()["ontology"]["relation_types"].clone()
}

#[test]
fn one_fact_however_agents_spell_its_type() {
    // The audit's calls: five spellings of works_at made four facts and four types.
    let (_dir, store, _part) = fresh();
    let first = call(&store, &caller(10), "relate", &json!({"from": "Ann", "to": "Acme", "type": "works_at"})).unwrap();
    for (at, spelling) in [(20, "works at"), (30, "Works-At"), (40, "WORKS_AT"), (50, "worksAt")] {
        let r = call(&store, &caller(at), "relate", &json!({"from": "Ann", "to": "Acme", "type": spelling})).unwrap();
        assert_eq!((&r["created"], &r["already"]), (&json!(false), &json!(true)), "{spelling}: {r}");
        assert_eq!(r["fact"]["id"], first["fact"]["id"], "{spelling}");
        assert_eq!(r["fact"]["relation"], json!("works_at"), "stored as the partition spells it: {spelling}");
    }
    let facts = stored_facts(&store, "Ann");
    assert_eq!(facts.len(), 1, "{facts:?}");
    assert_eq!(relation_types(&store), json!([{"type": "works_at", "count": 1}]));
}

#[test]
fn remember_states_one_fact_for_spellings_within_and_across_calls() {
    let (_dir, store, _part) = fresh();
    let rel = |t: &str, to: &str| json!({"source": "Ann", "target": to, "type": t});
    let body =
        json!({"facts": {"relations": [rel("part of", "Team A"), rel("Part-Of", "Team A"), rel("partOf", "Team B")]}});
    let r = call(&store, &caller(10), "remember", &body).unwrap();
    assert_eq!(r["stored"]["relations"], json!(2), "one new type, two facts: {r}");
    let again = json!({"facts": {"relations": [rel("part_of", "Team A"), rel("PART OF", "Team B")]}});
    let r = call(&store, &caller(20), "remember", &again).unwrap();
    assert_eq!((&r["stored"]["relations"], &r["already"]), (&json!(0), &json!(true)), "{r}");
    let spelled: Vec<Value> = stored_facts(&store, "Ann").iter().map(|f| f["relation"].clone()).collect();
    assert_eq!(spelled, [json!("part of"), json!("part of")], "the first spelling is kept");
    assert_eq!(relation_types(&store), json!([{"type": "part of", "count": 2}]));
}

#[test]
fn replaces_forget_and_history_name_a_fact_by_any_spelling_of_its_type() {
    let (_dir, store, _part) = fresh();
    call(&store, &caller(10), "relate", &json!({"from": "Cy", "to": "Oslo", "type": "lives_in"})).unwrap();
    let moved = call(
        &store,
        &caller(20),
        "relate",
        &json!({"from": "Cy", "to": "Bergen", "type": "lives in", "replaces": true}),
    )
    .unwrap();
    assert_eq!(moved["ended"].as_array().map(Vec::len), Some(1), "Oslo ended: {moved}");
    let live: Vec<Value> = stored_facts(&store, "Cy").iter().map(|f| f["object"].clone()).collect();
    assert_eq!(live, [json!("Bergen")]);
    let history = |t: &str| {
        let body = json!({"fact": {"from": "Cy", "to": "Bergen", "type": t}});
        let reply =
            crate::notes::api::call(&store, "history", &caller(TODAY), &serde_json::to_vec(&body).unwrap()).unwrap();
        serde_json::from_slice::<Value>(&reply).unwrap()["events"].as_array().unwrap().len()
    };
    assert_eq!((history("livesIn"), history("Lives-In")), (1, 1));
    let gone = call(&store, &caller(30), "forget", &json!({"fact": {"from": "Cy", "to": "Bergen", "type": "LivesIn"}}))
        .unwrap();
    assert_eq!(gone["state"], json!("forgotten"), "{gone}");
    assert!(stored_facts(&store, "Cy").is_empty());
}

#[test]
fn an_import_keeps_its_spellings_and_a_spelling_stored_as_such_is_used_as_it_is() {
    // A store written before holds `works at` and `works_at` as two types; a copy reads the same.
    let (_dir, store, _part) = fresh();
    let entity = |id: &str, name: &str| {
        json!({"kind": "entity", "id": id, "name": name, "types": [], "attributes": {},
               "recorded_at": "2026-01-01T00:00:00.000Z"})
    };
    let fact = |id: &str, t: &str, to: &str| {
        json!({"kind": "fact", "id": id, "from": "1", "to": to, "from_name": "Ann", "to_name": format!("Org {to}"),
               "type": t, "attributes": {}, "valid_from": null, "valid_to": null,
               "provenance": {"agent": "a", "kind": "asserted", "label": null},
               "recorded_at": "2026-01-01T00:00:00.000Z"})
    };
    let records = json!([
        entity("1", "Ann"),
        entity("2", "Org 2"),
        entity("3", "Org 3"),
        fact("10", "works at", "2"),
        fact("11", "works_at", "3")
    ]);
    let r = call(&store, &caller(TODAY), "import", &json!({"records": records, "allAgents": true})).unwrap();
    assert_eq!(r["skipped"], json!([]), "{r}");
    let mut types: Vec<Value> = relation_types(&store).as_array().unwrap().iter().map(|t| t["type"].clone()).collect();
    types.sort_by_key(ToString::to_string);
    assert_eq!(types, [json!("works at"), json!("works_at")]);
    let again =
        call(&store, &caller(20), "relate", &json!({"from": "Ann", "to": "Org 2", "type": "works at"})).unwrap();
    assert_eq!(again["already"], json!(true), "{again}");
}
