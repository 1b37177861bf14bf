//! DESIGN.md §2: "Forgotten data is unreachable at once; `cairn database compact --purge` erases
//! it from disk too." Every form of forget is run on knowledge spelled with words found nowhere
//! else, the store is compacted with `purge` (as the CLI and the node do, `knowledge::compact`)
//! and closed, and the bytes of every file of its directory are searched for each word, in any
//! case. None may be left, while what was kept still is.

use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::knowledge::testing_api::{export_pages, notes_verb, verb};
use crate::knowledge::trees::{FORGOTTEN, legacy_forgotten_key};
use crate::store::{CompactOptions, Store, StoreOptions};
use serde_json::{Value, json};
use std::path::Path;

fn who(part: &Partition, now: i64) -> Caller {
    Caller { part: part.clone(), agent: "claude".into(), now }
}

fn ok(reply: Value) -> Value {
    assert!(reply.get("error").is_none(), "{reply}");
    reply
}

/// The words of `words` found in the files of `dir`, with the file, matched case-insensitively
/// on their first seven letters (so a stemmed full-text term counts too).
fn on_disk(dir: &Path, words: &[&'static str]) -> Vec<(String, &'static str)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if !path.is_file() {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap().to_ascii_lowercase();
        for word in words {
            let head = word[..word.len().min(7)].to_ascii_lowercase();
            if bytes.windows(head.len()).any(|w| w == head.as_bytes()) {
                found.push((path.file_name().unwrap().to_string_lossy().into_owned(), *word));
            }
        }
    }
    found
}

/// Words of what every form forgets (spelled nowhere else), then words of what stays.
const GONE: [&str; 38] = [
    // subject (a whole document, a blanked passage, the name, an attribute, a fact with its type)
    "Quillfeather",
    "Vantablue",
    "zephyrmoss",
    "glimmerfounded",
    "brambleweft",
    "Petrova",
    "hyacinthine",
    // fact
    "plinthwhisper",
    "cobaltdusk",
    // subject named by the call that ended a kept fact (`replaces`)
    "Kestrelbourne",
    // passage
    "orreryhouse",
    "Tessellate",
    // source (the label, its document, a fact from it)
    "umbrageous",
    "glaucous",
    "Wrenfold",
    "sketchedgull",
    // attribute
    "grimoirequest",
    "quoitsmanship",
    // note (key, value)
    "nightjarledger",
    "saffronvault",
    // handoff (summary, task id), forgotten by its task
    "kittiwakecipher",
    "cormorantdesk",
    // imported, then forgotten (subject, note)
    "Ossifrage",
    "wyvernlantern",
    "quaysidebell",
    // all (knowledge, a note, a handoff)
    "Brindlecombe",
    "marrowglass",
    "thistlecrown",
    "gorsewhistle",
    // delete_user
    "Ravensworth",
    "Quenbymoor",
    "apiarycipher",
    "honeydrake",
    // the names of a scope forgotten whole and of a deleted user and their scope
    "larkspurvale",
    "Hollowmere",
    "fernwickshire",
    // a scope of the deleted user whose every record went one form at a time before
    "gossamerdell",
    "Pemberly",
];
const KEPT: [&str; 2] = ["Northwind", "committee"];

/// About 300 words of sentences naming nobody, so a text holds more than one passage.
fn filler() -> String {
    "The committee met on Tuesday to review the budget for the coming year. ".repeat(25)
}

/// Scope `forms`: knowledge of every kind (some imported from another scope, which is then
/// forgotten whole) and a note, each forgotten through its own form.
fn fill(store: &Store) -> Partition {
    let part = Partition::new("local", "u1", "forms").unwrap();
    let c = who(&part, 1_000);
    let remember = |body: Value| ok(verb(store, &c, "remember", &body).unwrap());
    remember(json!({
        "content": "Xavier Quillfeather painted the Vantablue harbour.",
        "facts": {
            "entities": [{"name": "Xavier Quillfeather", "type": "person", "attributes": {"codename": "zephyrmoss"}}],
            "relations": [{"source": "Xavier Quillfeather", "target": "Northwind Labs", "type": "glimmerfounded",
                           "attributes": {"motto": "brambleweft"}}],
        },
    }));
    // A document that keeps passages not naming her: hers is blanked.
    remember(json!({
        "content": format!("Olga Petrova studied the hyacinthine lichen. {}", filler()),
        "date": "2024-01-01",
        "facts": {"entities": [{"name": "Olga Petrova", "type": "person"}]},
    }));
    ok(verb(
        store,
        &c,
        "relate",
        &json!({"from": "Mira Lund", "to": "Northwind Labs", "type": "plinthwhisper", "attributes": {"grade": "cobaltdusk"}}),
    )
    .unwrap());
    let relate = |body: Value| ok(verb(store, &c, "relate", &body).unwrap());
    relate(json!({"from": "Mira Lund", "to": "Northwind Labs", "type": "chairs"}));
    relate(json!({"from": "Mira Lund", "to": "Kestrelbourne Guild", "type": "chairs", "replaces": true}));
    let passage = remember(json!({"content": "The orreryhouse at Tessellate Point hums at dusk."}));
    remember(json!({
        "content": "Glaucous gulls nest near Wrenfold. Mira Lund counted them.",
        "source": "umbrageous-fieldbook",
        "facts": {"relations": [{"source": "Mira Lund", "target": "Northwind Labs", "type": "sketchedgull"}]},
    }));
    remember(json!({"facts": {"entities": [{"name": "Mira Lund", "type": "person",
                                            "attributes": {"grimoirequest": "quoitsmanship", "team": "Northwind"}}]}}));
    ok(notes_verb(
        store,
        &c,
        "note_write",
        &json!({"key": "nightjarledger", "value": {"text": "saffronvault ledger"}, "kind": "decision", "idempotencyKey": "n1"}),
    ));

    // Brought in by import from another scope (which is then forgotten whole): the import map
    // keys spell a note's identity.
    let src = Partition::new("local", "u1", "src").unwrap();
    let sc = who(&src, 1_500);
    ok(verb(
        store,
        &sc,
        "remember",
        &json!({"content": "The Ossifrage Tower leans west.", "facts": {
        "entities": [{"name": "Ossifrage Tower", "type": "place"}]}}),
    )
    .unwrap());
    ok(notes_verb(
        store,
        &sc,
        "note_write",
        &json!({"key": "wyvernlantern", "value": "quaysidebell", "kind": "decision"}),
    ));
    let records: Vec<Value> = export_pages(store, &src, 500).concat();
    let imported = ok(verb(store, &who(&part, 1_600), "import", &json!({"records": records})).unwrap());
    assert_eq!(imported["imported"]["notes"], 1, "{imported}");
    assert_eq!(ok(verb(store, &sc, "forget", &json!({"all": true})).unwrap())["state"], "forgotten");

    let forget = |body: Value| {
        let reply = ok(verb(store, &who(&part, 2_000), "forget", &body).unwrap());
        assert_eq!(reply["state"], "forgotten", "{body}: {reply}");
    };
    forget(json!({"subject": "Xavier Quillfeather"}));
    forget(json!({"subject": "Olga Petrova"}));
    forget(json!({"fact": {"from": "Mira Lund", "to": "Northwind Labs", "type": "plinthwhisper"}}));
    forget(json!({"passage": passage["doc_id"]}));
    forget(json!({"source": "umbrageous-fieldbook"}));
    forget(json!({"attribute": {"subject": "Mira Lund", "key": "grimoirequest"}}));
    forget(json!({"subject": "Ossifrage Tower"}));
    forget(json!({"subject": "Kestrelbourne Guild"}));
    let capsule = json!({"taskId": "cormorantdesk", "summary": "the kittiwakecipher password", "to": "codex"});
    ok(notes_verb(store, &c, "handoff_create", &capsule));
    let gone = notes_verb(store, &who(&part, 2_000), "handoff_forget", &json!({"taskId": "cormorantdesk"}));
    assert_eq!(gone["state"], "forgotten", "{gone}");
    for key in ["nightjarledger", "wyvernlantern"] {
        let note = notes_verb(store, &who(&part, 2_000), "note_forget", &json!({"key": key}));
        assert_eq!(note["state"], "forgotten", "{note}");
    }

    part
}

/// A scope forgotten whole (knowledge, a note, a handoff) and a user deleted.
fn fill_and_forget_scopes(store: &Store) {
    let whole = Partition::new("local", "u1", "larkspurvale").unwrap();
    let w = who(&whole, 3_000);
    ok(verb(
        store,
        &w,
        "remember",
        &json!({"content": "Brindlecombe keeps the keys.", "facts": {
        "entities": [{"name": "Brindlecombe", "type": "person"}]}}),
    )
    .unwrap());
    ok(notes_verb(
        store,
        &w,
        "note_write",
        &json!({"key": "marrowglass", "value": "thistlecrown", "kind": "decision"}),
    ));
    ok(notes_verb(store, &w, "handoff_create", &json!({"taskId": "T1", "summary": "capsule gorsewhistle"})));
    assert_eq!(ok(verb(store, &w, "forget", &json!({"all": true})).unwrap())["state"], "forgotten");

    let user = Partition::new("local", "hollowmere", "fernwickshire").unwrap();
    let u = who(&user, 4_000);
    ok(verb(
        store,
        &u,
        "remember",
        &json!({"content": "Ottoline Ravensworth keeps bees in Quenbymoor.", "facts": {
        "entities": [{"name": "Ottoline Ravensworth", "type": "person"}]}}),
    )
    .unwrap());
    ok(notes_verb(
        store,
        &u,
        "note_write",
        &json!({"key": "apiarycipher", "value": "honeydrake", "kind": "user_fact"}),
    ));
    let emptied = who(&Partition::new("local", "hollowmere", "gossamerdell").unwrap(), 4_000);
    let ida = json!({"facts": {"entities": [{"name": "Ida Pemberly", "type": "person"}]}});
    ok(verb(store, &emptied, "remember", &ida).unwrap());
    let gone = ok(verb(store, &emptied, "forget", &json!({"subject": "Ida Pemberly"})).unwrap());
    assert_eq!(gone["state"], "forgotten");
    assert_eq!(ok(verb(store, &u, "delete_user", &json!({})).unwrap())["state"], "forgotten");
}

#[test]
fn compact_purge_leaves_no_word_of_any_forgotten_form_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
    let part = fill(&store);
    fill_and_forget_scopes(&store);
    store.checkpoint().unwrap();
    // Unreachable at once, but still in freed pages and the log.
    let before: Vec<&str> = on_disk(dir.path(), &GONE).into_iter().map(|(_, w)| w).collect();
    let missing: Vec<&&str> = GONE.iter().filter(|w| !before.contains(w)).collect();
    assert!(missing.is_empty(), "every word is on disk before the purge (else the search proves nothing): {missing:?}");
    let report = crate::knowledge::compact(&store, CompactOptions { purge: true }).unwrap();
    assert!(report.bytes_zeroed > 0);
    // What stays is still read, and forgetting again is "already".
    let c = who(&part, 5_000);
    assert_eq!(verb(&store, &c, "recall", &json!({"subject": "Mira Lund"})).unwrap()["state"], "answered");
    let again = verb(&store, &c, "forget", &json!({"subject": "Xavier Quillfeather"})).unwrap();
    assert_eq!(again, json!({"state": "already_forgotten"}));
    store.close().unwrap();
    assert_eq!(on_disk(dir.path(), &GONE), Vec::new(), "forgotten words on disk after compact --purge");
    let kept: Vec<&str> = on_disk(dir.path(), &KEPT).into_iter().map(|(_, w)| w).collect();
    assert!(KEPT.iter().all(|w| kept.contains(w)), "what was kept is on disk: {kept:?}");
}

#[test]
fn plain_forgotten_names_of_an_older_store_answer_already_and_do_not_survive_a_purge() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
    // The widest partition, so a 1 KiB name is kept in a key as its head and a digest.
    let part = Partition::new("local", &"u".repeat(256), &"s".repeat(256)).unwrap();
    // As a store written before hashed names holds a forgotten subject: the folded name in the key.
    let long = format!("Xavier Quillfeather {}", "of the Long Name ".repeat(60))[..1024].to_owned();
    let p = part.clone();
    let keys = [legacy_forgotten_key(&p, "xavier quillfeather"), legacy_forgotten_key(&p, &long.to_lowercase())];
    let k = keys.clone();
    store
        .write(move |tx| {
            for key in &k {
                tx.put(FORGOTTEN, key, &7_i64.to_be_bytes())?;
            }
            Ok(())
        })
        .unwrap();
    let c = who(&part, 5_000);
    let forget = |name: &str| verb(&store, &c, "forget", &json!({"subject": name})).unwrap();
    for name in ["Xavier Quillfeather", long.as_str()] {
        assert_eq!(forget(name), json!({"state": "already_forgotten"}), "before the purge");
    }
    crate::knowledge::compact(&store, CompactOptions { purge: true }).unwrap();
    for name in ["Xavier Quillfeather", long.as_str()] {
        assert_eq!(forget(name), json!({"state": "already_forgotten"}), "after the purge");
    }
    let snap = store.snapshot().unwrap();
    let held: Vec<Vec<u8>> = snap.prefix(FORGOTTEN, b"").unwrap().map(|kv| kv.unwrap().0).collect();
    assert_eq!(held.len(), 2, "each name is kept once, hashed");
    assert!(keys.iter().all(|k| !held.contains(k)), "no plain entry is left");
    drop(snap);
    store.close().unwrap();
    assert_eq!(on_disk(dir.path(), &["Quillfeather"]), Vec::new());
}

/// The id of the entity `name` recalls, as `c` sees it.
fn entity_id(store: &Store, c: &Caller, name: &str) -> u64 {
    let reply = ok(verb(store, c, "recall", &json!({"subject": name})).unwrap());
    reply["subject"]["id"].as_str().unwrap().parse().unwrap()
}

/// Moves every key of `from` in the keepsake and history trees to `to`: from a retired
/// partition back to its own, as a store written before retiring existed holds a scope
/// forgotten whole.
fn move_keys(store: &Store, from: &Partition, to: &Partition) {
    let (from, to) = (from.clone(), to.clone());
    store
        .write(move |tx| {
            for tree in ["k.seq", "k.names_gen", "k.tombstone", "h.event", "h.target", "h.agent"] {
                for (key, value) in tx.prefix(tree, from.prefix())? {
                    tx.put(tree, &to.key(&[&key[from.prefix().len()..]]), &value)?;
                    tx.delete(tree, &key)?;
                }
            }
            Ok(())
        })
        .unwrap();
}

#[test]
fn scopes_an_older_store_forgot_whole_are_retired_by_a_purge() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
    let part = Partition::new("local", "Tamsinwold", "cloudberryfen").unwrap();
    let c = who(&part, 1_000);
    let body = json!({"facts": {"entities": [{"name": "Ida Lund", "type": "person"}]}});
    ok(verb(&store, &c, "remember", &body).unwrap());
    let first = entity_id(&store, &c, "Ida Lund");
    assert_eq!(ok(verb(&store, &c, "forget", &json!({"all": true})).unwrap())["state"], "forgotten");
    move_keys(&store, &part.retired(), &part);
    let live = Partition::new("local", "Tamsinwold", "stays").unwrap();
    ok(verb(&store, &who(&live, 1_000), "remember", &body).unwrap());

    crate::knowledge::compact(&store, CompactOptions { purge: true }).unwrap();
    let later = who(&part, 2_000);
    assert_eq!(verb(&store, &later, "forget", &json!({"all": true})).unwrap(), json!({"state": "already_forgotten"}));
    let audit = notes_verb(&store, &later, "audit", &json!({}));
    assert_eq!(audit["events"][0]["target"], json!({"form": "all"}), "the forgetting is still audited: {audit}");
    ok(verb(&store, &later, "remember", &body).unwrap());
    let again = entity_id(&store, &later, "Ida Lund");
    assert!(again > first, "ids continue past the forgotten ones ({again} after {first})");
    ok(verb(&store, &later, "forget", &json!({"all": true})).unwrap());
    crate::knowledge::compact(&store, CompactOptions { purge: true }).unwrap();
    let stays = ok(verb(&store, &who(&live, 3_000), "recall", &json!({"subject": "Ida Lund"})).unwrap());
    assert_eq!(stays["state"], "answered", "a live scope is not retired: {stays}");
    store.close().unwrap();
    assert_eq!(on_disk(dir.path(), &["cloudberryfen"]), Vec::new());
}
