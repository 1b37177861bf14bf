//! A fact at a hub is read from what names it, not from the hub's whole list (found by an audit:
//! `memory_history {fact}` read every fact of its `from` end, record by record, so at an entity
//! with 200k facts each call was a latency cliff). History, `forget {fact}` and `relate` of a fact
//! at an entity with 20,000 facts answer as they do at one with 2,000, reading about as many pages:
//! the store's page count (`Store::pages_read`), never a clock.

use crate::knowledge::testing::{call, caller, counted};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

/// The facts the hub's list holds besides the ones read, some of the read fact's own type.
const FILLER_TYPES: [&str; 4] = ["works_at", "knows", "parent_of", "mentors"];

/// A store whose entity `Hub` has the facts read here, then `filler` more, to other entities.
fn hub(filler: usize) -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    // No checkpoint while the reads are counted: its pages are not theirs.
    let options = StoreOptions { cache_bytes: 16 << 20, checkpoint_bytes: 1 << 40, ..StoreOptions::default() };
    let store = Store::open(dir.path(), options).unwrap();
    for (from, to, rel_type, attributes) in [
        ("Hub", "Acme", "works_at", json!({})),
        ("Hub", "Acme", "works_at", json!({"role": "cto"})),
        ("Hub", "Mei", "parent_of", json!({})),
        ("Hub", "Acme", "advises", json!({})),
    ] {
        let body = json!({"from": from, "to": to, "type": rel_type, "attributes": attributes});
        let reply = call(&store, &caller(1), "relate", &body).unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
    }
    let mut relations: Vec<Value> =
        (0..10).map(|i| json!({"source": format!("Colleague {i}"), "target": "Acme", "type": "works_at"})).collect();
    relations.extend((0..filler).map(
        |i| json!({"source": "Hub", "target": format!("Other {i}"), "type": FILLER_TYPES[i % FILLER_TYPES.len()]}),
    ));
    for batch in relations.chunks(crate::knowledge::limits::MAX_RELATIONS) {
        let reply = call(&store, &caller(2), "remember", &json!({"facts": {"relations": batch}})).unwrap();
        assert!(reply.get("error").is_none(), "{reply}");
    }
    (dir, store)
}

fn fact(from: &str, rel_type: &str, to: &str) -> Value {
    json!({"fact": {"from": from, "to": to, "type": rel_type}})
}

/// The calls read, in order, each named: history as stored, from the other end of an inverse
/// type, in another spelling of the type, with a type nothing joins the ends by; `relate` of the
/// stored fact again; `forget` of it by its ends; its history after.
fn calls() -> Vec<(&'static str, &'static str, Value)> {
    let relate = json!({"from": "Hub", "to": "Acme", "type": "works_at", "attributes": {"role": "cto"}});
    vec![
        ("history as stored", "history", fact("Hub", "works_at", "Acme")),
        ("history from the other end", "history", fact("Mei", "child_of", "Hub")),
        ("history in another spelling", "history", fact("Hub", "Works At", "Acme")),
        ("history of a type not stored", "history", fact("Hub", "owns", "Acme")),
        ("relate again", "relate", relate),
        ("forget by its ends", "forget", fact("Hub", "works_at", "Acme")),
        ("history after the forget", "history", fact("Hub", "works_at", "Acme")),
    ]
}

#[test]
fn a_fact_at_a_hub_reads_the_same_answer_from_as_many_pages_as_at_a_small_entity() {
    let (_small_dir, small) = hub(2_000);
    let (_big_dir, big) = hub(20_000);
    let mut costly = Vec::new();
    for (what, verb, body) in calls() {
        let (expected, small_pages) = counted(&small, verb, &body);
        let (reply, big_pages) = counted(&big, verb, &body);
        eprintln!("{what}: {small_pages} pages at 2,000 facts, {big_pages} at 20,000");
        assert_eq!(reply, expected, "{what}");
        // Ten times the facts deepen a tree or two, a page more per lookup; reading the hub's
        // list cost pages in proportion to it (60,298 at 20,000 for a history as stored).
        if big_pages * 2 > small_pages * 3 || big_pages >= 300 {
            costly.push(format!("{what}: {big_pages} pages, {small_pages} at 2,000"));
        }
    }
    assert_eq!(costly, Vec::<String>::new());
    // The answers are the ones the stored facts call for.
    let (events, _) = counted(&small, "history", &fact("Hub", "parent_of", "Mei"));
    assert_eq!(events["events"].as_array().map(Vec::len), Some(1), "{events}");
    let (events, _) = counted(&small, "history", &fact("Mei", "child_of", "Hub"));
    assert_eq!(events["events"].as_array().map(Vec::len), Some(1), "from the other end: {events}");
}

#[test]
fn a_fact_at_a_hub_has_its_history_until_it_is_forgotten_by_its_ends() {
    let (_dir, store) = hub(2_000);
    let ops = |reply: &Value| -> Vec<String> {
        reply["events"].as_array().unwrap().iter().map(|e| e["op"].as_str().unwrap().to_owned()).collect()
    };
    let asked = fact("Hub", "works_at", "Acme");
    let (events, _) = counted(&store, "history", &asked);
    assert_eq!(ops(&events).len(), 2, "stated, then revised: {events}");
    assert_eq!(counted(&store, "history", &fact("Hub", "Works At", "Acme")).0, events, "another spelling");
    let (miss, _) = counted(&store, "history", &fact("Hub", "owns", "Acme"));
    assert_eq!(miss["error"]["details"][0]["did_you_mean"], "Hub -[advises]-> Acme", "{miss}");
    assert_eq!(counted(&store, "forget", &asked).0["state"], "forgotten");
    assert_eq!(counted(&store, "history", &asked).0, json!({"events": [], "nextCursor": null}));
    assert_eq!(counted(&store, "forget", &asked).0["state"], "already_forgotten");
    // The hub's other facts, and their events, stay.
    let (other, _) = counted(&store, "history", &fact("Hub", "works_at", "Other 0"));
    assert_eq!(ops(&other).len(), 1, "{other}");
}
