//! Ids through the verbs: what one partition's writes do to the ids another sees (nothing), and
//! stores written with the old store-wide counter.

use super::Partition;
use super::testing::fresh;
use super::testing_api::{caller, notes_verb, verb};
use super::trees::SEQ;
use crate::store::Store;
use serde_json::{Value, json};

fn part(user: &str) -> Partition {
    Partition::new("local", user, "default").unwrap()
}

fn id(v: &Value) -> u64 {
    v.as_str().and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("not an id: {v}"))
}

/// Round `n` of writes by every family; the ids and history sequence numbers the replies show.
fn round(store: &Store, p: &Partition, n: u32) -> Vec<u64> {
    let who = caller(p, 10 + i64::from(n));
    let text = format!("Note {n}: Priya Raman met Jonas Weber in Lisbon.");
    let remembered = verb(store, &who, "remember", &json!({"content": text, "source": "memo"})).unwrap();
    let related =
        verb(store, &who, "relate", &json!({"from": format!("Person {n}"), "to": "Acme", "type": "works_at"})).unwrap();
    let subject = verb(store, &who, "recall", &json!({"subject": format!("Person {n}")})).unwrap();
    let note = notes_verb(store, &who, "note_write", &json!({"key": format!("k{n}"), "value": n, "kind": "user_fact"}));
    let hand = notes_verb(store, &who, "handoff_create", &json!({"taskId": "t", "summary": format!("step {n}")}));
    let history = notes_verb(store, &who, "history", &json!({"key": format!("k{n}")}));
    let seqs = history["events"].as_array().unwrap().iter().map(|e| id(&e["seq"]));
    [&remembered["doc_id"], &related["fact"]["id"], &subject["subject"]["id"], &note["id"], &hand["id"]]
        .into_iter()
        .map(id)
        .chain(seqs)
        .collect()
}

#[test]
fn another_partitions_writes_never_move_a_partitions_ids() {
    let (a, b) = (part("a"), part("b"));
    let (_quiet_dir, quiet, _) = fresh();
    let (_busy_dir, busy, _) = fresh();
    let mut alone = Vec::new();
    let mut interleaved = Vec::new();
    for n in 0..4 {
        alone.push(round(&quiet, &a, n));
        // b writes a different amount before each of a's rounds.
        for m in 0..n {
            round(&busy, &b, 10 * n + m);
        }
        interleaved.push(round(&busy, &a, n));
    }
    assert_eq!(interleaved, alone, "a's ids are the same whether or not b wrote in between");
    let flat: Vec<u64> = alone.concat();
    assert_eq!(flat[0], 1, "a partition's first id is 1");
    let mut sorted = flat.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), flat.len(), "ids of one partition are distinct across families: {flat:?}");
}

/// Makes `store` look as a store written before per-partition counters does, as far as `part`
/// goes: its counter becomes the store-wide one (the old key `id`), which other partitions then
/// continue from (`continue_old`), so ids are unique in the store as the old counter made them.
fn to_old_counter(store: &Store, part: &Partition) {
    let key = part.prefix().to_vec();
    store
        .write(move |tx| {
            let next = tx.get(SEQ, &key)?.expect("the partition took ids");
            tx.delete(SEQ, &key)?;
            tx.put(SEQ, b"id", &next)
        })
        .unwrap();
}

/// Sets `part`'s counter to the old store-wide one, as if the old code wrote its next ids.
fn continue_old(store: &Store, part: &Partition) {
    let key = part.prefix().to_vec();
    store
        .write(move |tx| {
            let next = tx.get(SEQ, b"id")?.expect("an old counter");
            tx.put(SEQ, &key, &next)
        })
        .unwrap();
}

#[test]
fn an_old_store_keeps_its_ids_and_never_reuses_one() {
    let (_dir, store, _) = fresh();
    let (a, b, c) = (part("a"), part("b"), part("c"));
    // The old code: a, then b, then a again, from one store-wide counter.
    let a_old = round(&store, &a, 0);
    to_old_counter(&store, &a);
    continue_old(&store, &b);
    let b_old = round(&store, &b, 0);
    to_old_counter(&store, &b);
    continue_old(&store, &a);
    let a_old2 = round(&store, &a, 1);
    to_old_counter(&store, &a);
    let old_counter = store.snapshot().unwrap().get(SEQ, b"id").unwrap().unwrap();
    let old_next = u64::from_be_bytes(old_counter.try_into().unwrap());
    assert!(store.snapshot().unwrap().get(SEQ, a.prefix()).unwrap().is_none(), "as the old code left it");
    assert!(a_old.iter().chain(&b_old).chain(&a_old2).all(|&i| i < old_next));

    // New writes: partitions with old data continue past the old counter; a new one starts at 1.
    let a_new = round(&store, &a, 2);
    let b_new = round(&store, &b, 1);
    let c_new = round(&store, &c, 0);
    assert!(a_new.iter().chain(&b_new).all(|&i| i >= old_next), "{a_new:?} {b_new:?} past {old_next}");
    assert_eq!(c_new[0], 1, "a partition with nothing stored starts at 1: {c_new:?}");
    assert_eq!(store.snapshot().unwrap().get(SEQ, b"id").unwrap(), Some(old_next.to_be_bytes().to_vec()));

    // Old ids still resolve: the fact, the note (its id kept across versions), the history in order.
    let who = caller(&a, 50);
    let fact = verb(&store, &who, "recall", &json!({"subject": "Person 0"})).unwrap();
    assert_eq!(id(&fact["facts"][0]["id"]), a_old[1]);
    let note = notes_verb(&store, &who, "note_write", &json!({"key": "k0", "value": "again"}));
    assert_eq!(id(&note["id"]), a_old[3], "{note}");
    let history = notes_verb(&store, &who, "history", &json!({"key": "k0", "limit": 1}));
    let first = id(&history["events"][0]["seq"]);
    let next = notes_verb(&store, &who, "history", &json!({"key": "k0", "limit": 1, "cursor": history["nextCursor"]}));
    let second = id(&next["events"][0]["seq"]);
    assert!(first < old_next && second >= old_next && first < second, "commit order across the upgrade");
    let gone = verb(&store, &who, "forget", &json!({"passage": a_old[0].to_string()})).unwrap();
    assert_eq!(gone["state"], json!("forgotten"), "{gone}");
    let all: Vec<Value> = super::testing_api::export_pages(&store, &a, 1000).concat();
    assert!(all.iter().any(|r| r["kind"] == json!("fact") && id(&r["id"]) == a_old2[1]), "old facts export");
}
