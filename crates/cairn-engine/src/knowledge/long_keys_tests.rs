//! Inputs at the contract's limits whose keys would pass the engine's key limit (`key_text`): a
//! 1 KiB name in a partition of 256-byte user and scope, a 1 KiB relation type, two long names in
//! one history target, a note that is one long token. They are stored and read back exactly,
//! names differing only past the part a key keeps stay apart, and keys that fit keep the layout
//! stores were written with before.

use super::Partition;
use super::testing_api::{caller, export_pages, notes_verb, verb};
use super::trees::{ADJ, ENT_NAME, FORGOTTEN, forgotten_key};
use crate::history::TARGET;
use crate::notes::index::TERM;
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
    (dir, store)
}

fn widest(scope: &str) -> Partition {
    Partition::new("local", &"u".repeat(256), &format!("{scope}{}", "s".repeat(256 - scope.len()))).unwrap()
}

/// Two 1 KiB names alike but for their last character, and a 1 KiB relation type.
fn long_names() -> (String, String, String) {
    let head = "Alexandra Quill of ".repeat(60);
    let pad = |s: String, last: char| format!("{}{last}", &s[..1023]);
    (pad(head.clone(), 'A'), pad(head, 'B'), "works_closely_with_".repeat(60)[..1024].to_owned())
}

fn recall(store: &Store, part: &Partition, subject: &str) -> Value {
    verb(store, &caller(part, 5_000), "recall", &json!({"subject": subject})).unwrap()
}

fn objects(reply: &Value) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = reply["facts"]
        .as_array()
        .unwrap_or_else(|| panic!("no facts: {reply}"))
        .iter()
        .map(|f| (f["relation"].as_str().unwrap().to_owned(), f["object"].as_str().unwrap().to_owned()))
        .collect();
    out.sort();
    out
}

#[test]
fn names_at_the_limit_are_stored_found_related_and_forgotten_in_the_widest_partition() {
    let (_dir, store) = fresh();
    let part = widest("a");
    let who = caller(&part, 1_000);
    let (a, b, ty) = long_names();
    // One symbol that folds to 18 letters: a 1 KiB name whose folded form is ~11 KiB.
    let wide = "\u{fdfa}".repeat(341);
    let stored = verb(
        &store,
        &who,
        "remember",
        &json!({"facts": {
            "entities": [{"name": a, "type": "person"}, {"name": b, "type": "person"}, {"name": wide, "type": "x"}],
            "relations": [{"source": a, "target": b, "type": ty}, {"source": wide, "target": a, "type": "knows"}]
        }}),
    )
    .unwrap();
    assert_eq!(stored["stored"]["entities"], 3, "{stored}");
    assert_eq!(stored["stored"]["relations"], 2, "{stored}");

    assert_eq!(recall(&store, &part, &a)["subject"]["name"], a.as_str());
    assert_eq!(recall(&store, &part, &b)["subject"]["name"], b.as_str(), "a name alike past the key's head is its own");
    assert_eq!(recall(&store, &part, &wide)["subject"]["name"], wide.as_str());
    assert!(objects(&recall(&store, &part, &a)).contains(&(ty.clone(), b.clone())));

    // The same edge again is the stored one, not a second.
    let again = verb(&store, &who, "relate", &json!({"from": a, "to": b, "type": ty})).unwrap();
    assert_eq!(again["created"], false, "{again}");
    let facts = recall(&store, &part, &b)["facts"].clone();
    assert_eq!(facts.as_array().unwrap().iter().filter(|f| f["relation"] == ty.as_str()).count(), 1);

    let events = notes_verb(&store, &who, "history", &json!({"subject": a}));
    assert!(!events["events"].as_array().unwrap().is_empty(), "{events}");
    let fact_events = notes_verb(&store, &who, "history", &json!({"fact": {"from": a, "to": b, "type": ty}}));
    assert!(!fact_events["events"].as_array().unwrap().is_empty(), "{fact_events}");

    let forgot = verb(&store, &who, "forget", &json!({"subject": a})).unwrap();
    assert_eq!(forgot["state"], "forgotten", "{forgot}");
    let again = verb(&store, &who, "forget", &json!({"subject": a})).unwrap();
    assert_eq!(again["state"], "already_forgotten", "{again}");
    assert_eq!(recall(&store, &part, &b)["subject"]["name"], b.as_str(), "forgetting one leaves its look-alike");
    assert_ne!(recall(&store, &part, &a)["subject"]["name"], a.as_str(), "at most a near spelling is found");
    assert!(store.check().unwrap().ok);
}

#[test]
fn a_load_of_long_names_into_an_empty_widest_partition_reads_back() {
    let (_dir, store) = fresh();
    let from = widest("a");
    let (a, b, ty) = long_names();
    verb(
        &store,
        &caller(&from, 1_000),
        "remember",
        &json!({"facts": {"relations": [{"source": a, "target": b, "type": ty}, {"source": b, "target": a, "type": ty}]}}),
    )
    .unwrap();
    let mut body = Vec::new();
    for r in export_pages(&store, &from, 5000).concat() {
        body.extend_from_slice(&serde_json::to_vec(&r).unwrap());
        body.push(b'\n');
    }
    let to = widest("b");
    let loaded: Value =
        serde_json::from_slice(&super::api::call(&store, "load", &caller(&to, 2_000), &body).unwrap()).unwrap();
    assert_eq!(loaded["imported"]["facts"], 2, "{loaded}");
    let read = objects(&recall(&store, &to, &a));
    assert_eq!(read.len(), 2);
    assert_eq!(read, objects(&recall(&store, &from, &a)));
    let events = notes_verb(&store, &caller(&to, 3_000), "history", &json!({"fact": {"from": a, "to": b, "type": ty}}));
    assert_eq!(events["events"].as_array().unwrap().len(), 1, "{events}");
    assert!(store.check().unwrap().ok);
}

#[test]
fn a_note_that_is_one_long_token_is_found_by_that_token_alone() {
    let (_dir, store) = fresh();
    let who = caller(&Partition::new("local", "u1", "nl").unwrap(), 1_000);
    let token = |last: char| format!("{}{last}", "eyJhbGciOiJIUzI1NiJ9".repeat(80));
    for (key, last) in [("jwt_a", 'a'), ("jwt_b", 'b')] {
        let receipt = notes_verb(
            &store,
            &who,
            "note_write",
            &json!({"key": key, "value": {"a": token(last)}, "kind": "decision"}),
        );
        assert_eq!(receipt["version"], 1, "{receipt}");
    }
    for (key, last) in [("jwt_a", 'a'), ("jwt_b", 'b')] {
        let list = notes_verb(&store, &who, "note_list", &json!({"query": token(last)}));
        let first = &list["notes"][0];
        assert_eq!(first["key"], key, "{list}");
        assert!(first["receipt"]["channels"].as_array().unwrap().contains(&json!("token")), "{first}");
        let other = &list["notes"][1];
        assert!(!other["receipt"]["channels"].as_array().unwrap().contains(&json!("token")), "{other}");
    }
}

#[test]
fn keys_that_fit_keep_the_layout_stores_were_written_with() {
    let (_dir, store) = fresh();
    let part = Partition::new("local", "u1", "kb").unwrap();
    let who = caller(&part, 1_000);
    let (a, ty) = ("N".repeat(1000), "t".repeat(1000));
    let (b, c) = ("M".repeat(200), "C".repeat(1000));
    verb(&store, &who, "relate", &json!({"from": a, "to": b, "type": ty})).unwrap();
    verb(&store, &who, "relate", &json!({"from": c, "to": b, "type": "knows"})).unwrap();
    verb(&store, &who, "forget", &json!({"subject": c})).unwrap();
    notes_verb(&store, &who, "note_write", &json!({"key": "k", "value": "w".repeat(1400), "kind": "decision"}));
    let snap = store.snapshot().unwrap();
    let keys =
        |tree: &str| -> Vec<Vec<u8>> { snap.prefix(tree, part.prefix()).unwrap().map(|kv| kv.unwrap().0).collect() };
    let holds = |tree: &str, text: &[u8]| keys(tree).iter().any(|k| k.windows(text.len()).any(|w| w == text));
    let (folded_a, folded_ty) = (a.to_lowercase(), ty.to_lowercase());
    assert!(holds(ENT_NAME, format!("{folded_a}\0").as_bytes()), "a name that fits is in its key whole");
    assert!(holds(ADJ, format!("{folded_ty}\0").as_bytes()));
    // A forgotten name is the exception: it is kept hashed, never as its words.
    assert!(keys(FORGOTTEN) == vec![forgotten_key(&part, &c.to_lowercase())]);
    assert!(!holds(FORGOTTEN, c.to_lowercase().as_bytes()));
    assert!(holds(TARGET, format!("entity\0{a}\0").as_bytes()));
    assert!(holds(TERM, format!("{}\0", "w".repeat(1400)).as_bytes()));
}
