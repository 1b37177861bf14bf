//! A fact named from the other end of a symmetric or inverse type is the stored fact for every
//! verb that names a fact by its ends: `relate`, `forget {fact}` and `memory_history {fact}`
//! (found by an audit: `relate` called the reading already stored, `forget` answered 404 and
//! `history` an empty page).

use super::Partition;
use super::testing::fresh;
use super::testing_api::{caller, notes_verb, verb};
use crate::store::Store;
use serde_json::{Value, json};

fn call(store: &Store, part: &Partition, at: i64, name: &str, body: &Value) -> Value {
    verb(store, &caller(part, at), name, body).unwrap()
}

fn fact(from: &str, rel_type: &str, to: &str) -> Value {
    json!({"from": from, "to": to, "type": rel_type})
}

/// The ops of the events `history {fact}` pages, or the error code of its refusal.
fn history(store: &Store, part: &Partition, (from, rel_type, to): (&str, &str, &str)) -> Result<Vec<String>, Value> {
    let reply = notes_verb(store, &caller(part, 500), "history", &json!({"fact": fact(from, rel_type, to)}));
    match reply["events"].as_array() {
        Some(events) => Ok(events.iter().map(|e| e["op"].as_str().unwrap().to_owned()).collect()),
        None => Err(reply["error"].clone()),
    }
}

/// `Ana married_to Bruno`, `Ana parent_of Mei` and `Northwind employs Priya` stored, each said
/// again from its other end (`already`).
fn stated_both_ways() -> (tempfile::TempDir, Store, Partition) {
    let (dir, store, part) = fresh();
    for (at, (stored, other)) in [10, 20, 30].into_iter().zip([
        (fact("Ana", "married_to", "Bruno"), fact("Bruno", "married_to", "Ana")),
        (fact("Ana", "parent_of", "Mei"), fact("Mei", "child_of", "Ana")),
        (fact("Northwind", "employs", "Priya"), fact("Priya", "employed_by", "Northwind")),
    ]) {
        assert_eq!(call(&store, &part, at, "relate", &stored)["created"], json!(true));
        let again = call(&store, &part, at + 1, "relate", &other);
        assert_eq!(again["already"], json!(true), "{other}: {again}");
    }
    (dir, store, part)
}

#[test]
fn the_other_ends_reading_reads_and_forgets_the_stored_fact() {
    let (_dir, store, part) = stated_both_ways();
    for (from, rel_type, to) in
        [("Bruno", "married_to", "Ana"), ("Mei", "child_of", "Ana"), ("Priya", "employed_by", "Northwind")]
    {
        assert_eq!(history(&store, &part, (from, rel_type, to)).unwrap(), ["assert"], "{from} {rel_type} {to}");
    }
    for (from, rel_type, to) in
        [("Bruno", "Married To", "ana"), ("Mei", "child_of", "Ana"), ("PRIYA", "employed-by", "Northwind")]
    {
        let body = json!({"fact": fact(from, rel_type, to)});
        let reply = call(&store, &part, 100, "forget", &body);
        assert_eq!(reply["state"], json!("forgotten"), "{body}: {reply}");
        assert_eq!(reply["forgotten"]["facts"], json!(1), "{body}: {reply}");
        assert_eq!(call(&store, &part, 101, "forget", &body), json!({"state": "already_forgotten"}), "{body}");
    }
    // Gone in every reading: the stored one is already forgotten too, and has no events left.
    for (from, rel_type, to) in
        [("Ana", "married_to", "Bruno"), ("Ana", "parent_of", "Mei"), ("Northwind", "employs", "Priya")]
    {
        let body = json!({"fact": fact(from, rel_type, to)});
        assert_eq!(call(&store, &part, 102, "forget", &body), json!({"state": "already_forgotten"}), "{body}");
        assert_eq!(history(&store, &part, (from, rel_type, to)).unwrap(), Vec::<String>::new());
        let read = call(&store, &part, 103, "recall", &json!({"subject": from}));
        assert_eq!(read["facts"], json!([]), "{read}");
    }
}

#[test]
fn a_fact_never_stored_is_not_found_by_history_as_by_forget() {
    let (_dir, store, part) = stated_both_ways();
    for (from, rel_type, to) in [
        ("Bruno", "parent_of", "Ana"), // a type the pair does not hold
        ("Mei", "parent_of", "Ana"),   // the inverse type read the wrong way round
        ("Northwind", "employed_by", "Priya"),
        ("Ana", "married_to", "Nobody"), // an end that is no entity
    ] {
        let error = history(&store, &part, (from, rel_type, to)).unwrap_err();
        assert_eq!(error["code"], json!("NOT_FOUND"), "{from} {rel_type} {to}: {error}");
        let forgot = call(&store, &part, 100, "forget", &json!({"fact": fact(from, rel_type, to)}));
        assert_eq!(forgot["error"]["code"], json!("NOT_FOUND"), "{forgot}");
    }
    // The refusals changed nothing: each stored fact is still read from either end.
    assert_eq!(history(&store, &part, ("Bruno", "married_to", "Ana")).unwrap(), ["assert"]);
    assert_eq!(history(&store, &part, ("Mei", "child_of", "Ana")).unwrap(), ["assert"]);
}

#[test]
fn a_fact_by_id_goes_and_is_then_forgotten_in_its_other_reading() {
    let (_dir, store, part) = stated_both_ways();
    let stored = call(&store, &part, 90, "relate", &fact("Ana", "married_to", "Bruno"));
    let id = stored["fact"]["id"].as_str().unwrap().to_owned();
    assert_eq!(call(&store, &part, 100, "forget", &json!({"fact": {"id": id}}))["forgotten"]["facts"], json!(1));
    let other = json!({"fact": fact("Bruno", "married_to", "Ana")});
    assert_eq!(call(&store, &part, 101, "forget", &other), json!({"state": "already_forgotten"}));
    assert_eq!(history(&store, &part, ("Bruno", "married_to", "Ana")).unwrap(), Vec::<String>::new());
}

#[test]
fn a_merge_said_from_the_other_end_is_in_the_history_of_both_readings() {
    let (_dir, store, part) = stated_both_ways();
    let revised = json!({"from": "Mei", "to": "Ana", "type": "child_of", "attributes": {"adopted": false}});
    assert_eq!(call(&store, &part, 200, "relate", &revised)["created"], json!(false));
    for reading in [("Mei", "child_of", "Ana"), ("Ana", "parent_of", "Mei")] {
        assert_eq!(history(&store, &part, reading).unwrap(), ["assert", "merge"], "{reading:?}");
    }
}

#[test]
fn a_camel_case_type_is_the_same_fact_from_the_other_end() {
    // Found by an audit: `childOf` had no mirror, so `Mei childOf Ana` said after `Ana parentOf
    // Mei` (or `Ana parent_of Mei`) was stored as a second fact, and history and forget named it
    // only in the stored reading.
    let (_dir, store, part) = fresh();
    assert_eq!(call(&store, &part, 10, "relate", &fact("Ana", "parentOf", "Mei"))["created"], json!(true));
    assert_eq!(call(&store, &part, 11, "relate", &fact("Lu", "child_of", "Bo"))["created"], json!(true));
    for (at, (from, rel_type, to)) in
        [(20, ("Mei", "childOf", "Ana")), (21, ("Mei", "child_of", "Ana")), (22, ("Bo", "parentOf", "Lu"))]
    {
        let again = call(&store, &part, at, "relate", &fact(from, rel_type, to));
        assert_eq!(again["already"], json!(true), "{from} {rel_type} {to}: {again}");
        assert_eq!(history(&store, &part, (from, rel_type, to)).unwrap(), ["assert"], "{from} {rel_type} {to}");
    }
    // A type in lower case alone reads as no rule type: not the other end of `parentOf`.
    assert_eq!(call(&store, &part, 30, "relate", &fact("Joe", "parentOf", "Kim"))["created"], json!(true));
    let plain = call(&store, &part, 31, "relate", &fact("Kim", "childof", "Joe"));
    assert_eq!(plain["created"], json!(true), "{plain}");
    let body = json!({"fact": fact("Mei", "childOf", "Ana")});
    let gone = call(&store, &part, 40, "forget", &body);
    assert_eq!(gone["forgotten"]["facts"], json!(1), "{gone}");
    assert_eq!(history(&store, &part, ("Ana", "parentOf", "Mei")).unwrap(), Vec::<String>::new());
}
