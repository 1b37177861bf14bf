//! Export and import through the verbs: pages and cursors, a round trip into an empty scope,
//! idempotence, and every skip reason.

use super::testing::{assertion, fresh, seeded_with};
use super::testing_api::{caller, export_pages, normalized, verb};
use super::{Assertion, Partition, Source, forget_subject, relate, remember_text, upsert_entity};
use crate::store::Store;
use serde_json::{Map, Value, json};
use std::fmt::Write as _;

/// Two blocks of 150 words: the chunker cuts between them, so forgetting Priya leaves the
/// second passage of the document alive (ordinal 1).
fn two_block_text() -> String {
    let mut text = String::from("Priya Raman wrote this first part today. ");
    for day in 0..14 {
        let _ = write!(text, "The storage team reviewed the plan carefully on day {day}. ");
    }
    text.push_str("Acme wrote this second part today. ");
    for day in 0..14 {
        let _ = write!(text, "The harbour crew checked the boats slowly on day {day}. ");
    }
    text.trim_end().to_owned()
}

/// Entities with types and attributes, an ended fact and its replacement, a fact taken from a
/// document, a document with a forgotten passage, and a forgotten subject.
pub(super) fn seeded() -> (tempfile::TempDir, Store, Partition) {
    seeded_with(|tx, p| {
        let none = Map::new();
        let since = json!({"valid_from": "2024-01-01", "team": "infra"}).as_object().unwrap().clone();
        relate(tx, p, assertion("Priya Raman", "Acme", "works_at", &since, "claude"), 1_000)?;
        relate(
            tx,
            p,
            Assertion { replaces: true, ..assertion("Priya Raman", "Globex", "works_at", &none, "codex") },
            2_000,
        )?;
        let attrs = json!({"role": "lead"}).as_object().unwrap().clone();
        upsert_entity(tx, p, "Jonas Weber", &["person".into(), "author".into()], &attrs, 3_000)?;
        relate(tx, p, assertion("Jonas Weber", "Acme", "works_at", &none, "a"), 3_100)?;
        relate(
            tx,
            p,
            Assertion { replaces: true, ..assertion("Jonas Weber", "Globex", "works_at", &none, "a") },
            3_200,
        )?;
        let doc = remember_text(tx, p, &two_block_text(), Some("notes"), Some("2024-05-01"), 4_000)?;
        let from_doc = Source::Document { doc_id: doc.doc_id, label: Some("notes".into()) };
        relate(
            tx,
            p,
            Assertion { source: from_doc, ..assertion("Acme", "Harbour", "operates", &none, "claude") },
            5_000,
        )?;
        remember_text(tx, p, "Zed Quill visited once. Jonas Weber met Zed Quill.", None, None, 6_000)?;
        relate(tx, p, assertion("Zed Quill", "Jonas Weber", "knows", &none, "claude"), 6_500)?;
        forget_subject(tx, p, "Zed Quill", 7_000)?;
        forget_subject(tx, p, "Priya Raman", 8_000)
    })
}

fn all_records(store: &Store, part: &Partition) -> Vec<Value> {
    export_pages(store, part, 5000).concat()
}

#[test]
fn the_export_holds_live_data_only_with_its_history() {
    let (_dir, store, part) = seeded();
    let records = all_records(&store, &part);
    assert_eq!(records[0]["kind"], "header");
    assert_eq!(records[0]["format"], "cairn.export");
    assert_eq!(records[0]["version"], 1);
    assert_eq!(records[0]["scope"], "default");
    let text = serde_json::to_string(&records).unwrap();
    assert!(!text.contains("Priya") && !text.contains("Zed"), "forgotten data exported: {text}");
    assert!(!text.contains("storage team"), "a forgotten passage's text is exported");
    let doc = records.iter().find(|r| r["kind"] == "document" && r["label"] == "notes").unwrap();
    assert_eq!(doc["passages"].as_array().unwrap().len(), 1, "only the live passage: {}", doc["passages"]);
    assert_eq!(doc["passages"][0]["ordinal"], 1);
    assert_eq!(doc["ingested_at"], "1970-01-01T00:00:04.000Z");
    let jonas = records.iter().find(|r| r["name"] == "Jonas Weber").unwrap();
    assert_eq!(jonas["types"], json!(["person", "author"]));
    assert_eq!(jonas["attributes"], json!({"role": "lead"}));
    let operates = records.iter().find(|r| r["type"] == "operates").unwrap();
    assert_eq!(operates["provenance"]["kind"], "document");
    assert_eq!(operates["provenance"]["doc_id"], doc["id"]);
    assert!(records.iter().all(|r| r["id"].is_null() || r["id"].is_string()), "ids are strings");
}

#[test]
fn pages_of_any_size_join_to_the_whole_export() {
    let (_dir, store, part) = seeded();
    let whole = all_records(&store, &part);
    for limit in 1..=4 {
        let pages = export_pages(&store, &part, limit);
        assert!(pages.iter().all(|p| p.len() <= limit && !p.is_empty()), "limit {limit}: {pages:?}");
        assert_eq!(normalized(&pages.concat()), normalized(&whole), "limit {limit}");
    }
}

#[test]
fn bad_limits_and_cursors_are_refused_by_name() {
    let (_dir, store, part) = seeded();
    let who = caller(&part, 9);
    for (body, field) in [
        (json!({"limit": 0}), "limit"),
        (json!({"limit": 5001}), "limit"),
        (json!({"limit": 2.5}), "limit"),
        (json!({"cursor": "%%%"}), "cursor"),
        (json!({"cursor": 3}), "cursor"),
        (json!({"page": 1}), "page"),
    ] {
        let err = super::api::call(&store, "export", &who, &serde_json::to_vec(&body).unwrap()).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{body}");
        assert!(err.to_string().contains(&format!("{field}: ")), "{body}: {err}");
    }
    let first = verb(&store, &who, "export", &json!({"limit": 2})).unwrap();
    let cursor = first["next"].clone();
    assert!(cursor.is_string());
    let stranger = Partition::new("local", "u2", "default").unwrap();
    assert_eq!(verb(&store, &caller(&stranger, 9), "export", &json!({"cursor": cursor})), Err("INVALID_ARGUMENT"));
    let other_scope = Partition::new("local", "u1", "other").unwrap();
    assert_eq!(verb(&store, &caller(&other_scope, 9), "export", &json!({"cursor": cursor})), Err("INVALID_ARGUMENT"));
}

#[test]
fn export_then_import_in_any_page_order_twice_gives_the_same_records() {
    let (_dir, store, part) = seeded();
    let pages = export_pages(&store, &part, 2);
    let target = Partition::new("local", "u1", "restored").unwrap();
    // An operator's restore (`allAgents`): the seeded facts were written by several agents.
    let who = caller(&target, 50_000);
    let mut imported = json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0});
    for page in pages.iter().rev() {
        let reply = verb(&store, &who, "import", &json!({"records": page, "allAgents": true})).unwrap();
        assert_eq!(reply["skipped"], json!([]), "{reply}");
        for kind in ["entities", "facts", "documents"] {
            imported[kind] = json!(imported[kind].as_u64().unwrap() + reply["imported"][kind].as_u64().unwrap());
        }
    }
    assert_eq!(normalized(&all_records(&store, &target)), normalized(&pages.concat()));
    assert_eq!(imported["facts"], 3);
    assert_eq!(imported["documents"], 1);
    for page in &pages {
        let reply = verb(&store, &who, "import", &json!({"records": page, "allAgents": true})).unwrap();
        assert_eq!(
            reply["imported"],
            json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0}),
            "{reply}"
        );
    }
    assert_eq!(normalized(&all_records(&store, &target)), normalized(&pages.concat()));
    // The ended fact ends again at its exported time, and reads as of then see it.
    let ended: Vec<Value> = all_records(&store, &target).into_iter().filter(|r| r.get("ended_at").is_some()).collect();
    assert_eq!(ended.len(), 1);
    assert_eq!((&ended[0]["to_name"], &ended[0]["ended_at"]), (&json!("Acme"), &json!("1970-01-01T00:00:03.200Z")));
    let snap = store.snapshot().unwrap();
    assert_eq!(crate::fts::search(&snap, target.raw(), "harbour", 5).unwrap().len(), 1);
    assert!(
        crate::fts::search(&snap, target.raw(), "storage", 5).unwrap().is_empty(),
        "a forgotten passage stays forgotten"
    );
}

#[test]
fn ended_facts_end_again_at_their_time() {
    let (_dir, store, part) = fresh();
    let p = part.clone();
    store
        .write(move |tx| {
            let none = Map::new();
            relate(tx, &p, assertion("Mara", "Acme", "works_at", &none, "a"), 1_000)?;
            relate(tx, &p, Assertion { replaces: true, ..assertion("Mara", "Globex", "works_at", &none, "a") }, 2_000)
        })
        .unwrap();
    let records = all_records(&store, &part);
    let ended: Vec<&Value> = records.iter().filter(|r| r.get("ended_at").is_some()).collect();
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0]["ended_at"], "1970-01-01T00:00:02.000Z");
    let target = Partition::new("local", "u1", "copy").unwrap();
    verb(&store, &caller(&target, 9_000), "import", &json!({"records": records})).unwrap();
    let snap = store.snapshot().unwrap();
    let when = |as_of| super::When { as_of: Some(as_of), valid_at: None, now: None };
    let employer = |as_of| -> Vec<u64> {
        let super::Recall::Answered { facts, .. } = super::recall(&snap, &target, "Mara", &when(as_of)).unwrap() else {
            panic!("Mara is imported")
        };
        facts.iter().map(|f| f.other).collect()
    };
    let acme = super::entity_by_name(&snap, &target, "Acme").unwrap().unwrap().id;
    let globex = super::entity_by_name(&snap, &target, "Globex").unwrap().unwrap().id;
    assert_eq!(employer(1_500), vec![acme]);
    assert_eq!(employer(2_500), vec![globex]);
    assert_eq!(normalized(&all_records(&store, &target)), normalized(&records));
}

#[test]
fn bad_records_are_skipped_by_index_and_field_and_change_nothing() {
    let (_dir, store, part) = fresh();
    // The records' times are of 2024: now is later (an import refuses times to come).
    let who = caller(&part, 1_800_000_000_000);
    for body in [json!({"records": "x"}), json!({}), json!({"records": [], "scope": "other"})] {
        assert_eq!(verb(&store, &who, "import", &body), Err("INVALID_ARGUMENT"), "{body}");
    }
    let doc = |passages: Value| json!({"kind": "document", "id": "9", "text": "Short text.", "ingested_at": "2024-01-01T00:00:00.000Z", "passages": passages});
    let records = json!([
        {"kind": "header", "format": "cairn.export", "version": 2},
        7,
        {"kind": "planet"},
        {"kind": "entity", "id": "1", "name": ""},
        {"kind": "entity", "id": "x", "name": "Ana"},
        {"kind": "fact", "id": "3", "from": "1", "to": "2", "type": "knows", "recorded_at": "2024-01-01T00:00:00.000Z"},
        {"kind": "fact", "id": "4", "from_name": "A", "to_name": "B", "type": "knows", "recorded_at": "yesterday"},
        {"kind": "fact", "id": "5", "from_name": "A", "to_name": "B", "type": "knows", "recorded_at": "2024-01-01T00:00:00.000Z", "provenance": {"kind": "rumour"}},
        doc(json!([{"start": 0, "end": 99}])),
        doc(json!([])),
        {"kind": "handoff", "summary": "no task"},
    ]);
    let reply = verb(&store, &who, "import", &json!({"records": records})).unwrap();
    let reasons: Vec<(u64, String)> = reply["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["index"].as_u64().unwrap(), s["reason"].as_str().unwrap().to_owned()))
        .collect();
    let starts: Vec<(u64, &str)> = reasons.iter().map(|(i, r)| (*i, r.split(':').next().unwrap())).collect();
    assert_eq!(
        starts,
        vec![
            (0, "version"),
            (1, "record"),
            (2, "kind"),
            (3, "name"),
            (4, "id"),
            (5, "from"),
            (6, "recorded_at"),
            (7, "provenance.kind"),
            (8, "passages[0]"),
            (9, "passages"),
            (10, "taskId")
        ],
        "{reasons:?}"
    );
    assert_eq!(reply["imported"], json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0}));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.prefix(super::trees::ENT, part.prefix()).unwrap().count(), 0);
    assert_eq!(snap.prefix(super::part::SCOPES, b"").unwrap().count(), 0, "nothing imported registers no scope");
}

#[test]
fn a_fact_citing_a_document_not_yet_imported_resolves_when_it_comes() {
    let (_dir, store, part) = seeded();
    let records = all_records(&store, &part);
    let (docs, rest): (Vec<Value>, Vec<Value>) = records.into_iter().partition(|r| r["kind"] == "document");
    let target = Partition::new("local", "u1", "later").unwrap();
    let who = caller(&target, 60_000);
    let first = verb(&store, &who, "import", &json!({"records": rest, "allAgents": true})).unwrap();
    assert_eq!(first["not_reproduced"].as_array().unwrap().len(), 1, "{first}");
    assert_eq!(first["not_reproduced"][0]["what"], "citation");
    verb(&store, &who, "import", &json!({"records": docs})).unwrap();
    let copied = all_records(&store, &target);
    let operates = copied.iter().find(|r| r["type"] == "operates").unwrap();
    let notes = copied.iter().find(|r| r["label"] == "notes").unwrap();
    assert_eq!(operates["provenance"]["doc_id"], notes["id"], "the fact cites the document it reserved");
}
