//! `memory_history` for something never stored is 404 `NOT_FOUND`, as `forget` answers it (found
//! by an audit: a misspelled subject or an unwritten note key read as an empty page, "nothing
//! ever changed"); for something forgotten it is an empty page, its events gone with it.

use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::knowledge::testing::{call, caller, fresh};
use serde_json::{Value, json};

fn history(store: &crate::store::Store, who: &Caller, body: &Value) -> Value {
    let reply = crate::notes::api::call(store, "history", who, &serde_json::to_vec(body).unwrap()).unwrap();
    serde_json::from_slice(&reply).unwrap()
}

fn notes(store: &crate::store::Store, verb: &str, body: &Value) -> Value {
    let reply = crate::notes::api::call(store, verb, &caller(5), &serde_json::to_vec(body).unwrap()).unwrap();
    serde_json::from_slice(&reply).unwrap()
}

fn did_you_mean(reply: &Value) -> Vec<&str> {
    let details = reply["error"]["details"].as_array().map_or(&[][..], Vec::as_slice);
    details.iter().map(|d| d["did_you_mean"].as_str().unwrap()).collect()
}

#[test]
fn a_subject_never_stored_is_not_found_with_the_names_meant_from_the_callers_partition() {
    let (_dir, store, _part) = fresh();
    call(&store, &caller(1), "relate", &json!({"from": "Priya Raman", "to": "Acme Robotics", "type": "works_at"}))
        .unwrap();
    let other = Caller { part: Partition::new("local", "u2", "default").unwrap(), ..caller(1) };
    call(&store, &other, "relate", &json!({"from": "Priya Ramen", "to": "Porto", "type": "born_in"})).unwrap();
    for (subject, meant) in [
        ("Priya", vec!["Priya Raman"]),
        ("Priya Ramen", vec!["Priya Raman"]),
        ("Dr. Priya Raman", vec!["Priya Raman"]),
        ("Nobody Here", vec![]),
    ] {
        let miss = history(&store, &caller(2), &json!({"subject": subject}));
        assert_eq!(miss["error"]["code"], json!("NOT_FOUND"), "{subject}: {miss}");
        assert_eq!(did_you_mean(&miss), meant, "{subject}: {miss}");
    }
    // Up to case, the stored name is read as before.
    let events = history(&store, &caller(2), &json!({"subject": "priya raman"}));
    assert_eq!(events["events"][0]["op"], json!("create"), "{events}");
}

#[test]
fn a_fact_with_an_end_never_stored_offers_the_names_that_end_may_mean() {
    let (_dir, store, _part) = fresh();
    call(&store, &caller(1), "relate", &json!({"from": "Priya Raman", "to": "Acme Robotics", "type": "works_at"}))
        .unwrap();
    let other = Caller { part: Partition::new("local", "u2", "default").unwrap(), ..caller(1) };
    call(&store, &other, "relate", &json!({"from": "Priya Ramen", "to": "Porto", "type": "born_in"})).unwrap();
    for (from, to, meant) in [
        ("Priya Ramen", "Acme Robotics", vec!["Priya Raman"]),
        ("Priya Raman", "Acme", vec!["Acme Robotics"]),
        ("Priya Raman", "Acme Robotics", vec!["Priya Raman -[works_at]-> Acme Robotics"]),
        ("Nobody Here", "Porto", vec![]),
    ] {
        let fact = json!({"fact": {"from": from, "to": to, "type": "owns"}});
        let miss = history(&store, &caller(2), &fact);
        assert_eq!(miss["error"]["code"], json!("NOT_FOUND"), "{fact}: {miss}");
        assert_eq!(did_you_mean(&miss), meant, "{fact}: {miss}");
    }
}

#[test]
fn a_forgotten_subject_reads_as_an_empty_page() {
    let (_dir, store, _part) = fresh();
    call(&store, &caller(1), "relate", &json!({"from": "Marcus Feld", "to": "Oslo", "type": "lives_in"})).unwrap();
    call(&store, &caller(2), "forget", &json!({"subject": "Marcus Feld"})).unwrap();
    assert_eq!(
        history(&store, &caller(3), &json!({"subject": "Marcus Feld"})),
        json!({"events": [], "nextCursor": null})
    );
}

#[test]
fn a_note_key_never_written_is_not_found_and_a_forgotten_one_an_empty_page() {
    let (_dir, store, _part) = fresh();
    let miss = history(&store, &caller(3), &json!({"key": "nonexistent-note"}));
    assert_eq!(miss["error"]["code"], json!("NOT_FOUND"), "{miss}");
    notes(&store, "note_write", &json!({"key": "deploy", "value": "friday", "kind": "user_fact"}));
    let read = history(&store, &caller(6), &json!({"key": "deploy"}));
    assert_eq!(read["events"].as_array().unwrap().len(), 1, "{read}");
    let task = history(&store, &caller(6), &json!({"key": "deploy", "visibility": "agent"}));
    assert_eq!(task["error"]["code"], json!("NOT_FOUND"), "another visibility is another note: {task}");
    notes(&store, "note_forget", &json!({"key": "deploy"}));
    // Empty, saying who forgot it and when (the forget's event names no key).
    let forgotten = json!({"agent": "claude", "at": "1970-01-01T00:00:00.005Z"});
    assert_eq!(
        history(&store, &caller(7), &json!({"key": "deploy"})),
        json!({"events": [], "nextCursor": null, "forgotten": forgotten})
    );
}

#[test]
fn a_fact_is_named_by_id_as_recall_hands_it_out() {
    let (_dir, store, _part) = fresh();
    let r =
        call(&store, &caller(1), "relate", &json!({"from": "Priya Raman", "to": "Acme", "type": "works_at"})).unwrap();
    let id = r["fact"]["id"].as_str().unwrap().to_owned();
    let by_id = history(&store, &caller(2), &json!({"fact": {"id": id}}));
    let by_ends =
        history(&store, &caller(2), &json!({"fact": {"from": "Priya Raman", "to": "Acme", "type": "works_at"}}));
    assert_eq!(by_id, by_ends);
    assert_eq!(by_id["events"][0]["op"], json!("assert"), "{by_id}");
    let miss = history(&store, &caller(2), &json!({"fact": {"id": "999"}}));
    assert_eq!(miss["error"]["code"], json!("NOT_FOUND"), "{miss}");
    let bad = history(&store, &caller(2), &json!({"fact": {"id": "x1"}}));
    assert_eq!(bad["error"]["details"][0]["field"], json!("fact.id"), "{bad}");
    call(&store, &caller(3), "forget", &json!({"fact": {"id": id}})).unwrap();
    assert_eq!(history(&store, &caller(4), &json!({"fact": {"id": id}})), json!({"events": [], "nextCursor": null}));
}
