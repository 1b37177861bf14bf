//! A plain read (neither `as_of` nor `valid_at`) means what is known now about what is true now:
//! `valid_at` is the call's time. The re-audit's two cases: an edge stored as older news (already
//! ended in transaction time, its valid interval still holding today) is true today, and an edge
//! dated to start later is not true yet, though `valid_at` at a later date finds it. Recall,
//! context (its fact items and traversal) and derived facts all read it so.

use super::testing::{TODAY, call, caller, fresh};
use serde_json::{Value, json};

/// Jonas manages Priya from 2030 (stated first); then, older news, Jonas manages Kai from 2020
/// (`replaces`): stored already ended, `valid_to` 2030, true today (2026).
fn seeded() -> (tempfile::TempDir, crate::store::Store) {
    let (dir, store, _part) = fresh();
    let manages = |to: &str, date: &str| json!({"from": "Jonas Weber", "to": to, "type": "manages", "replaces": true, "date": date});
    call(&store, &caller(TODAY - 2_000), "relate", &manages("Priya Raman", "2030-01-01")).unwrap();
    let kai = call(&store, &caller(TODAY - 1_000), "relate", &manages("Kai Moss", "2020-01-01")).unwrap();
    assert_eq!(kai["fact"]["valid_to"], json!("2030-01-01"), "older news ends where the later edge starts: {kai}");
    assert!(kai["fact"]["ended_at"].is_string(), "stored as history: {kai}");
    (dir, store)
}

/// `(subject, relation, object)` of the facts (stored and derived) a recall answers.
fn facts(reply: &Value) -> Vec<(String, String, String)> {
    reply["facts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let s = |k: &str| f[k].as_str().unwrap().to_owned();
            (s("subject"), s("relation"), s("object"))
        })
        .collect()
}

fn triple(s: &str, r: &str, o: &str) -> (String, String, String) {
    (s.to_owned(), r.to_owned(), o.to_owned())
}

#[test]
fn a_plain_recall_shows_older_news_true_today_and_hides_what_starts_later() {
    let (_dir, store) = seeded();
    let recall = |body: Value| call(&store, &caller(TODAY), "recall", &body).unwrap();
    let jonas = recall(json!({"subject": "Jonas Weber"}));
    // Each stored fact comes with its inverse reading, derived from the same end.
    let kai = vec![triple("Jonas Weber", "manages", "Kai Moss"), triple("Kai Moss", "managed_by", "Jonas Weber")];
    assert_eq!(facts(&jonas), kai, "{jonas}");
    // Priya's manager starts in 2030: not true today, true with valid_at then.
    assert_eq!(facts(&recall(json!({"subject": "Priya Raman"}))), vec![]);
    let later = recall(json!({"subject": "Jonas Weber", "valid_at": "2031-01-01"}));
    let priya =
        vec![triple("Jonas Weber", "manages", "Priya Raman"), triple("Priya Raman", "managed_by", "Jonas Weber")];
    assert_eq!(facts(&later), priya);
    // Explicit `as_of` alone keeps its transaction-time reading: the edge live then.
    let as_of = recall(json!({"subject": "Jonas Weber", "as_of": TODAY}));
    assert_eq!(facts(&as_of), priya);
}

#[test]
fn derived_facts_rest_on_what_is_true_now() {
    let (_dir, store) = seeded();
    let recall = |body: Value| call(&store, &caller(TODAY), "recall", &body).unwrap();
    let kai = recall(json!({"subject": "Kai Moss"}));
    let derived: Vec<&Value> =
        kai["facts"].as_array().unwrap().iter().filter(|f| f["derived"] == json!(true)).collect();
    assert_eq!(derived.len(), 1, "{kai}");
    assert_eq!((&derived[0]["relation"], &derived[0]["object"]), (&json!("managed_by"), &json!("Jonas Weber")));
    assert_eq!(derived[0]["rests_on"], json!([kai["facts"][0]["id"].clone()]));
    let priya = recall(json!({"subject": "Priya Raman"}));
    assert!(priya["facts"].as_array().unwrap().is_empty(), "nothing follows from an edge not true yet: {priya}");
    let priya_later = recall(json!({"subject": "Priya Raman", "valid_at": "2030-06-01"}));
    assert!(priya_later["facts"].as_array().unwrap().iter().any(|f| f["relation"] == json!("managed_by")));
}

#[test]
fn context_facts_and_traversal_mean_now() {
    let (_dir, store) = seeded();
    call(&store, &caller(TODAY - 500), "relate", &json!({"from": "Kai Moss", "to": "Oslo", "type": "lives_in"}))
        .unwrap();
    let fact_texts = |body: Value| -> Vec<String> {
        let c = call(&store, &caller(TODAY), "context", &body).unwrap();
        c["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["kind"] == json!("fact"))
            .map(|i| i["text"].as_str().unwrap().to_owned())
            .collect()
    };
    // Two hops through the older-news edge reach Kai's home; the edge starting in 2030 is not read.
    let now = fact_texts(json!({"question": "Who does Jonas Weber manage?", "hops": 2}));
    assert!(now.contains(&"Jonas Weber manages Kai Moss".to_owned()), "{now:?}");
    assert!(now.contains(&"Kai Moss lives_in Oslo".to_owned()), "traversal goes on through it: {now:?}");
    assert!(!now.iter().any(|t| t.contains("Priya")), "{now:?}");
    let later = fact_texts(json!({"question": "Who does Jonas Weber manage?", "valid_at": "2031-01-01"}));
    assert!(later.contains(&"Jonas Weber manages Priya Raman".to_owned()), "{later:?}");
    assert!(!later.iter().any(|t| t.contains("Kai")), "{later:?}");
}

#[test]
fn a_plain_read_shows_the_attribute_values_true_now() {
    let (_dir, store, _part) = fresh();
    let write = |title: &str, date: &str| {
        let body = json!({"facts": {"entities": [{"name": "Uma Slate", "type": "person", "attributes": {"title": title, "team": "core"}}]}, "date": date});
        call(&store, &caller(TODAY - 1_000), "remember", &body).unwrap();
    };
    write("engineer", "2020-01-01");
    // Stated after, true only from 2030.
    let later = json!({"facts": {"entities": [{"name": "Uma Slate", "type": "person", "attributes": {"title": "director", "badge": "gold"}}]}, "date": "2030-01-01"});
    call(&store, &caller(TODAY - 500), "remember", &later).unwrap();
    let recall = |body: Value| call(&store, &caller(TODAY), "recall", &body).unwrap();
    let uma = recall(json!({"subject": "Uma Slate"}));
    assert_eq!(uma["subject"]["attributes"], json!({"title": "engineer", "team": "core"}), "{uma}");
    let engineer = recall(json!({"attribute": {"key": "title", "value": "engineer"}}));
    assert_eq!(engineer["subject"]["name"], json!("Uma Slate"), "{engineer}");
    let director = recall(json!({"attribute": {"key": "title", "value": "director"}}));
    assert_eq!(director["state"], json!("nothing_stored"), "{director}");
    let then = recall(json!({"subject": "Uma Slate", "valid_at": "2031-01-01"}));
    assert_eq!(then["subject"]["attributes"], json!({"title": "director", "team": "core", "badge": "gold"}), "{then}");
    let ctx = call(&store, &caller(TODAY), "context", &json!({"question": "Uma Slate", "hops": 0})).unwrap();
    let entity = ctx["items"].as_array().unwrap().iter().find(|i| i["kind"] == json!("entity")).cloned();
    assert_eq!(entity.expect("an entity item")["attributes"]["title"], json!("engineer"), "{ctx}");
}
