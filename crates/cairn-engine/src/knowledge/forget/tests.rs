//! The forget verb in every form, through `api::call`.

use crate::fts;
use crate::history::{Change, EVENT, Event};
use crate::knowledge::Origin;
use crate::knowledge::testing::{assertion, seeded_with};
use crate::knowledge::testing_api::{caller, verb};
use crate::knowledge::trees::{DOC, ENT, PSG, REL};
use crate::knowledge::{
    Assertion, EXPORT_PAGE_BYTES, Partition, Reader, Recall, Source, When, entity_by_name, export, recall, relate,
    remember_text, upsert_entity,
};

/// An export of everything but private notes, as an admin reads it.
const ALL: Reader<'static> = Reader { private: false, agent: None };
use crate::store::Store;
use serde_json::{Map, Value, json};

const TEXT: &str = "Priya Raman joined Acme in 2024 to lead the lighthouse project.";
const OTHER: &str = "Jonas Weber moved to Berlin for the harbour survey.";

/// Priya works at Acme (asserted, label "chat"), Jonas at Acme, two documents (labels "notes"
/// and "mail"), a fact taken from the second, and Priya's attribute `role`.
fn seeded() -> (tempfile::TempDir, Store, Partition) {
    seeded_with(|tx, p| {
        let none = Map::new();
        let chat = Source::Asserted { label: Some("chat".into()) };
        relate(tx, p, Assertion { source: chat, ..assertion("Priya Raman", "Acme", "works_at", &none, "a") }, 1)?;
        relate(tx, p, assertion("Jonas Weber", "Acme", "works_at", &none, "a"), 2)?;
        let attrs = json!({"role": "lead", "team": "storage"}).as_object().unwrap().clone();
        upsert_entity(tx, p, "Priya Raman", &["person".into()], &attrs, 3)?;
        remember_text(tx, p, TEXT, Some("notes"), None, 4)?;
        let mail = remember_text(tx, p, OTHER, Some("mail"), None, 5)?;
        let from_mail = Source::Document { doc_id: mail.doc_id, label: Some("mail".into()) };
        relate(tx, p, Assertion { source: from_mail, ..assertion("Jonas Weber", "Berlin", "lives_in", &none, "a") }, 6)
    })
}

fn forget(store: &Store, part: &Partition, body: &Value) -> Value {
    verb(store, &caller(part, 100), "forget", body).unwrap()
}

fn doc_id(store: &Store, part: &Partition, label: &str) -> u64 {
    let snap = store.snapshot().unwrap();
    let page = export(&snap, part, Origin::of(0, part), None, (100, EXPORT_PAGE_BYTES), 0, &ALL).unwrap();
    let doc = page.records.iter().find(|r| r["kind"] == "document" && r["label"] == label).expect("document");
    doc["id"].as_str().unwrap().parse().unwrap()
}

fn exported_text(store: &Store, part: &Partition) -> String {
    let snap = store.snapshot().unwrap();
    serde_json::to_string(
        &export(&snap, part, Origin::of(0, part), None, (1000, EXPORT_PAGE_BYTES), 0, &ALL).unwrap().records,
    )
    .unwrap()
}

fn tree_count(store: &Store, tree: &str, part: &Partition) -> usize {
    store.snapshot().unwrap().prefix(tree, part.prefix()).unwrap().count()
}

fn forget_events(store: &Store, part: &Partition) -> Vec<Event> {
    let snap = store.snapshot().unwrap();
    snap.prefix(EVENT, part.prefix())
        .unwrap()
        .map(|e| serde_json::from_slice::<Event>(&e.unwrap().1).unwrap())
        .filter(|e| e.family == "forget")
        .collect()
}

#[test]
fn exactly_one_well_formed_form_is_required_and_a_refusal_changes_nothing() {
    let (_dir, store, part) = seeded();
    let before = exported_text(&store, &part);
    for body in [
        json!({}),
        json!({"subject": "Acme", "source": "chat"}),
        json!({"all": false}),
        json!({"subject": ""}),
        json!({"fact": {"from": "Priya Raman"}}),
        json!({"fact": {"id": 5}}),
        json!({"passage": 5}),
        json!({"attribute": {"subject": "Priya Raman"}}),
        json!({"note": "k"}),
        json!([1]),
    ] {
        assert_eq!(verb(&store, &caller(&part, 100), "forget", &body), Err("INVALID_ARGUMENT"), "{body}");
    }
    assert_eq!(exported_text(&store, &part), before);
    assert!(forget_events(&store, &part).is_empty());
}

#[test]
fn subject_goes_with_its_facts_and_passages_and_again_is_already() {
    let (_dir, store, part) = seeded();
    // DESIGN.md §2: "exact name only". Another case is a miss (the audit's finding 12) that
    // suggests the stored name and changes nothing.
    let before = exported_text(&store, &part);
    let miss = forget(&store, &part, &json!({"subject": "priya raman"}));
    assert_eq!(miss["error"]["code"], "NOT_FOUND", "{miss}");
    assert_eq!(miss["error"]["details"], json!([{"did_you_mean": "Priya Raman"}]));
    assert_eq!(exported_text(&store, &part), before);
    let reply = forget(&store, &part, &json!({"subject": "Priya Raman"}));
    assert_eq!(reply["state"], "forgotten");
    // Her two attributes (`role`, `team`) went with her and are counted (an audit found 0 here).
    assert_eq!(
        reply["forgotten"],
        json!({"entities": 1, "facts": 1, "documents": 1, "passages": 1, "attributes": 2, "notes": 0, "handoffs": 0})
    );
    assert_eq!(reply["kept"][0]["what"], "entities", "Acme is named in the passage and stays");
    let snap = store.snapshot().unwrap();
    assert!(entity_by_name(&snap, &part, "Priya Raman").unwrap().is_none());
    assert!(fts::search(&snap, part.raw(), "lighthouse", 5).unwrap().is_empty());
    let c = crate::knowledge::context(&snap, &part, "Priya Raman lighthouse", 2, 10).unwrap();
    assert!(c.items.iter().all(|i| !i.text.contains("Priya")), "context still quotes her");
    assert!(!exported_text(&store, &part).contains("Priya"));
    assert_eq!(forget(&store, &part, &json!({"subject": "Priya Raman"})), json!({"state": "already_forgotten"}));
    let events = forget_events(&store, &part);
    assert_eq!(events.len(), 1, "one event per forget that removed something");
    assert_eq!(events[0].target, "subject", "the forget event names the form, not the forgotten name");
    let event = serde_json::to_string(&events[0]).unwrap();
    assert!(
        !event.to_lowercase().contains("priya") && !event.contains("lighthouse"),
        "the event holds content: {event}"
    );
}

#[test]
fn a_fact_with_a_misspelt_end_suggests_the_names_that_end_may_mean() {
    let (_dir, store, part) = seeded();
    let before = exported_text(&store, &part);
    let fact = json!({"fact": {"from": "Priya Ramen", "to": "Acme", "type": "works_at"}});
    let miss = forget(&store, &part, &fact);
    assert_eq!(miss["error"]["code"], "NOT_FOUND", "{miss}");
    assert_eq!(miss["error"]["details"], json!([{"did_you_mean": "Priya Raman"}]), "{miss}");
    // Both ends stored, the type not: no name to suggest, but the fact that joins them
    // (`facts_between_tests.rs`).
    let wrong_type = forget(&store, &part, &json!({"fact": {"from": "Priya Raman", "to": "Acme", "type": "owns"}}));
    assert_eq!(wrong_type["error"]["code"], "NOT_FOUND", "{wrong_type}");
    assert_eq!(wrong_type["error"]["details"][0]["did_you_mean"], "Priya Raman -[works_at]-> Acme", "{wrong_type}");
    // Another user's partition offers nothing of this one's.
    let other = Partition::new("local", "u2", "default").unwrap();
    let miss = forget(&store, &other, &fact);
    assert_eq!(miss["error"]["code"], "NOT_FOUND", "{miss}");
    assert!(miss["error"]["details"].is_null(), "{miss}");
    assert_eq!(exported_text(&store, &part), before);
}

#[test]
fn a_missed_subject_suggests_only_own_names() {
    let (_dir, store, part) = seeded();
    let miss = forget(&store, &part, &json!({"subject": "Jonas"}));
    assert_eq!(miss["error"]["code"], "NOT_FOUND");
    assert_eq!(miss["error"]["details"], json!([{"did_you_mean": "Jonas Weber"}]));
    let other = Partition::new("local", "u2", "default").unwrap();
    let miss = forget(&store, &other, &json!({"subject": "Jonas"}));
    assert_eq!(miss["error"]["code"], "NOT_FOUND");
    assert!(miss["error"].get("details").is_none(), "another user's names leaked: {miss}");
    assert!(entity_by_name(&store.snapshot().unwrap(), &part, "Jonas Weber").unwrap().is_some());
}

#[test]
fn a_fact_goes_in_every_version_and_its_ends_stay() {
    let (_dir, store, part) = seeded();
    let p = part.clone();
    store
        .write(move |tx| {
            let none = Map::new();
            relate(
                tx,
                &p,
                Assertion { replaces: true, ..assertion("Priya Raman", "Globex", "works_at", &none, "a") },
                10,
            )?;
            relate(tx, &p, Assertion { replaces: true, ..assertion("Priya Raman", "Acme", "works_at", &none, "a") }, 11)
        })
        .unwrap();
    let snap = store.snapshot().unwrap();
    let acme_versions = snap
        .prefix(REL, part.prefix())
        .unwrap()
        .map(|e| serde_json::from_slice::<crate::knowledge::Relation>(&e.unwrap().1).unwrap())
        .filter(|r| r.rel_type == "works_at" && r.ended_at.is_some())
        .count();
    assert_eq!(acme_versions, 2, "an ended Acme version and an ended Globex one");
    let reply = forget(&store, &part, &json!({"fact": {"from": "Priya Raman", "to": "ACME", "type": "Works_At"}}));
    assert_eq!(reply["forgotten"]["facts"], 2, "the ended and the restored version: {reply}");
    let snap = store.snapshot().unwrap();
    let Recall::Answered { facts, .. } =
        recall(&snap, &part, "Priya Raman", &When { as_of: Some(5), valid_at: None, now: None }).unwrap()
    else {
        panic!("Priya stays")
    };
    assert!(facts.is_empty(), "as_of reads must not see a forgotten version either");
    assert!(entity_by_name(&snap, &part, "Acme").unwrap().is_some());
    assert_eq!(
        forget(&store, &part, &json!({"fact": {"from": "Priya Raman", "to": "Acme", "type": "works_at"}})),
        json!({"state": "already_forgotten"})
    );
    let globex = forget(&store, &part, &json!({"fact": {"from": "Priya Raman", "to": "Globex", "type": "works_at"}}));
    assert_eq!(globex["forgotten"]["facts"], 1);
    let never = forget(&store, &part, &json!({"fact": {"from": "Acme", "to": "Berlin", "type": "near"}}));
    assert_eq!(never["error"]["code"], "NOT_FOUND");
}

#[test]
fn a_fact_by_id_goes_and_its_id_is_then_already_forgotten() {
    let (_dir, store, part) = seeded();
    let snap = store.snapshot().unwrap();
    let jonas = entity_by_name(&snap, &part, "Jonas Weber").unwrap().unwrap();
    let id = crate::knowledge::neighbours(&snap, &part, jonas.id).unwrap()[0].relation.id;
    let reply = forget(&store, &part, &json!({"fact": {"id": id.to_string()}}));
    assert_eq!(reply["forgotten"]["facts"], 1);
    assert_eq!(forget(&store, &part, &json!({"fact": {"id": id.to_string()}})), json!({"state": "already_forgotten"}));
    assert_eq!(forget(&store, &part, &json!({"fact": {"id": "999999"}}))["error"]["code"], "NOT_FOUND");
}

#[test]
fn a_document_goes_with_passages_postings_and_links_and_facts_from_it_are_kept() {
    let (_dir, store, part) = seeded();
    let mail = doc_id(&store, &part, "mail");
    let reply = forget(&store, &part, &json!({"passage": mail.to_string()}));
    assert_eq!(reply["forgotten"]["documents"], 1);
    assert_eq!(reply["forgotten"]["passages"], 1);
    assert_eq!(reply["kept"][0]["what"], "facts");
    assert_eq!(reply["kept"][1]["what"], "entities", "Jonas Weber and Berlin are named in it and stay: {reply}");
    assert_eq!(reply["kept"][1]["count"], 2);
    let snap = store.snapshot().unwrap();
    assert!(fts::search(&snap, part.raw(), "harbour", 5).unwrap().is_empty());
    assert_eq!(fts::search(&snap, part.raw(), "lighthouse", 5).unwrap().len(), 1);
    assert!(!exported_text(&store, &part).contains("harbour"));
    assert_eq!(forget(&store, &part, &json!({"passage": mail.to_string()})), json!({"state": "already_forgotten"}));
    assert_eq!(forget(&store, &part, &json!({"passage": "424242"}))["error"]["code"], "NOT_FOUND");
    // The same text can be remembered anew: its content hash went with it.
    let p = part.clone();
    let (again, _) = store.write(move |tx| remember_text(tx, &p, OTHER, Some("mail"), None, 200)).unwrap();
    assert!(!again.already);
}

#[test]
fn a_source_takes_its_documents_and_the_facts_from_it() {
    let (_dir, store, part) = seeded();
    let reply = forget(&store, &part, &json!({"source": "mail"}));
    assert_eq!(
        reply["forgotten"],
        json!({"entities": 0, "facts": 1, "documents": 1, "passages": 1, "attributes": 0, "notes": 0, "handoffs": 0})
    );
    let chat = forget(&store, &part, &json!({"source": "chat"}));
    assert_eq!(chat["forgotten"]["facts"], 1, "asserted facts with that label go too: {chat}");
    let text = exported_text(&store, &part);
    assert!(!text.contains("harbour") && !text.contains("lives_in") && !text.contains("\"chat\""), "{text}");
    assert!(text.contains("lighthouse"), "other sources stay");
    assert_eq!(forget(&store, &part, &json!({"source": "mail"})), json!({"state": "already_forgotten"}));
    assert_eq!(forget(&store, &part, &json!({"source": "never"}))["error"]["code"], "NOT_FOUND");
}

/// The id of the relation of `rel_type` leaving `from`.
fn relation_id(store: &Store, part: &Partition, from: &str, rel_type: &str) -> String {
    let snap = store.snapshot().unwrap();
    let entity = entity_by_name(&snap, part, from).unwrap().unwrap();
    let n = crate::knowledge::neighbours(&snap, part, entity.id).unwrap();
    n.iter().find(|n| n.relation.rel_type == rel_type).expect("relation").relation.id.to_string()
}

/// DESIGN.md §2: "Idempotent: again → 200 `already_forgotten`; never existed → 404", whichever form
/// removed it first: a document taken by its source or its subject is "already" by id, a fact
/// taken with its source or subject is "already" by id and by its ends, an attribute taken with
/// its subject is "already", and a label whose last document went by id is "already" as a source.
/// (Found by an audit: `forget {source}` then `forget {passage}` of its document was a 404.)
#[test]
fn what_one_form_removed_is_already_forgotten_through_the_others() {
    let (_dir, store, part) = seeded();
    let p = part.clone();
    let diary = store.write(move |tx| remember_text(tx, &p, "Priya Raman likes tea.", Some("diary"), None, 7)).unwrap();
    let diary = diary.0.doc_id.to_string();
    let (mail, notes) = (doc_id(&store, &part, "mail").to_string(), doc_id(&store, &part, "notes").to_string());
    let (lives_in, works_at) =
        (relation_id(&store, &part, "Jonas Weber", "lives_in"), relation_id(&store, &part, "Priya Raman", "works_at"));
    let already = json!({"state": "already_forgotten"});
    let state = |body: Value| {
        let reply = forget(&store, &part, &body);
        reply.get("state").cloned().unwrap_or_else(|| reply["error"]["code"].clone())
    };

    // A source takes its document and the fact from it.
    assert_eq!(state(json!({"source": "mail"})), "forgotten");
    assert_eq!(forget(&store, &part, &json!({"passage": mail})), already, "its document, by id");
    assert_eq!(forget(&store, &part, &json!({"fact": {"id": lives_in}})), already, "its fact, by id");
    let ends = json!({"fact": {"from": "Jonas Weber", "to": "Berlin", "type": "lives_in"}});
    assert_eq!(forget(&store, &part, &ends), already, "its fact, by its ends");

    // A document forgotten by id was its label's last: the source is then "already".
    assert_eq!(state(json!({"passage": notes})), "forgotten");
    assert_eq!(forget(&store, &part, &json!({"source": "notes"})), already);

    // A subject takes the document naming only it, its facts and its attributes.
    assert_eq!(state(json!({"subject": "Priya Raman"})), "forgotten");
    assert_eq!(forget(&store, &part, &json!({"passage": diary})), already, "its document, by id");
    assert_eq!(forget(&store, &part, &json!({"source": "diary"})), already, "that document's label");
    assert_eq!(forget(&store, &part, &json!({"fact": {"id": works_at}})), already, "its fact, by id");
    let ends = json!({"fact": {"from": "Priya Raman", "to": "Acme", "type": "works_at"}});
    assert_eq!(forget(&store, &part, &ends), already, "its fact, by its ends");
    assert_eq!(forget(&store, &part, &json!({"source": "chat"})), already, "the label its asserted fact carried");
    let role = json!({"attribute": {"subject": "Priya Raman", "key": "role"}});
    assert_eq!(forget(&store, &part, &role), already, "its attribute");

    // What never existed is still not found.
    for body in [
        json!({"passage": "424242"}),
        json!({"fact": {"id": "424242"}}),
        json!({"fact": {"from": "Priya Raman", "to": "Acme", "type": "founded"}}),
        json!({"attribute": {"subject": "Priya Raman", "key": "age"}}),
        json!({"source": "never"}),
    ] {
        assert_eq!(state(body.clone()), "NOT_FOUND", "{body}");
    }
    // The tombstones hold hashes only: no name, label or key of what went.
    let snap = store.snapshot().unwrap();
    for (key, _) in snap.prefix(super::TOMBSTONE, part.prefix()).unwrap().map(Result::unwrap) {
        let tail = String::from_utf8_lossy(&key[part.prefix().len()..]).to_lowercase();
        for word in ["priya", "jonas", "berlin", "mail", "diary", "chat", "notes", "role", "works_at", "lives_in"] {
            assert!(!tail.contains(word), "a tombstone spells {word:?}: {tail:?}");
        }
    }
}

#[test]
fn an_attribute_goes_alone() {
    let (_dir, store, part) = seeded();
    let body = json!({"attribute": {"subject": "Priya Raman", "key": "role"}});
    assert_eq!(forget(&store, &part, &body)["forgotten"]["attributes"], 1);
    let priya = entity_by_name(&store.snapshot().unwrap(), &part, "Priya Raman").unwrap().unwrap();
    assert_eq!(priya.attributes.keys().collect::<Vec<_>>(), vec!["team"]);
    assert!(!exported_text(&store, &part).contains("\"lead\""));
    assert_eq!(forget(&store, &part, &body), json!({"state": "already_forgotten"}));
    let missing = forget(&store, &part, &json!({"attribute": {"subject": "Priya Raman", "key": "age"}}));
    assert_eq!(missing["error"]["code"], "NOT_FOUND");
    let nobody = forget(&store, &part, &json!({"attribute": {"subject": "Nobody", "key": "role"}}));
    assert_eq!(nobody["error"]["code"], "NOT_FOUND");
    assert!(nobody["error"].get("details").is_none(), "no name is near: {nobody}");
}

/// Found by an audit: the `subject` form offered the names a miss may mean, the `attribute` form
/// none; both offer them by one rule now, from the caller's own partition only.
#[test]
fn an_attribute_of_a_name_no_entity_has_offers_the_names_meant() {
    let (_dir, store, part) = seeded();
    for subject in ["Dr. Priya Raman", "Priya R.", "Priya Ramen"] {
        let miss = forget(&store, &part, &json!({"attribute": {"subject": subject, "key": "role"}}));
        assert_eq!(miss["error"]["code"], "NOT_FOUND", "{subject}: {miss}");
        assert_eq!(miss["error"]["details"], json!([{"did_you_mean": "Priya Raman"}]), "{subject}: {miss}");
    }
    let other = Partition::new("local", "u2", "default").unwrap();
    let theirs = forget(&store, &other, &json!({"attribute": {"subject": "Dr. Priya Raman", "key": "role"}}));
    assert!(theirs["error"].get("details").is_none(), "another user's names are not offered: {theirs}");
    let priya = entity_by_name(&store.snapshot().unwrap(), &part, "Priya Raman").unwrap().unwrap();
    assert!(priya.attributes.contains_key("role"), "a miss forgets nothing");
}

#[test]
fn all_empties_the_scope_and_nothing_else() {
    let (_dir, store, part) = seeded();
    let other = Partition::new("local", "u1", "project-x").unwrap();
    let o = other.clone();
    store.write(move |tx| remember_text(tx, &o, TEXT, None, None, 50)).unwrap();
    let empty = Partition::new("local", "u1", "empty").unwrap();
    assert_eq!(forget(&store, &empty, &json!({"all": true}))["error"]["code"], "NOT_FOUND");
    // A tree added later is emptied too; a generation counter is kept (it must never go back),
    // retired.
    let p = part.clone();
    store
        .write(move |tx| {
            tx.put("k.future", &p.key(&[b"x"]), b"content")?;
            tx.put("k.names_gen", p.prefix(), &7u64.to_be_bytes())
        })
        .unwrap();
    let reply = forget(&store, &part, &json!({"all": true}));
    assert_eq!(
        reply["forgotten"],
        json!({"entities": 4, "facts": 3, "documents": 2, "passages": 2, "attributes": 2, "notes": 0, "handoffs": 0})
    );
    for tree in [ENT, REL, DOC, PSG, "k.future", "k.ent_name", "k.adj", "k.mention", "k.doc_hash", "k.doc_hash8"] {
        assert_eq!(tree_count(&store, tree, &part), 0, "{tree}");
    }
    assert_eq!(tree_count(&store, "k.names_gen", &part), 0, "kept, but not under the scope's name");
    let generation = store.snapshot().unwrap().get("k.names_gen", part.retired().prefix()).unwrap();
    assert_eq!(generation, Some(7u64.to_be_bytes().to_vec()), "the generation is kept, retired");
    let onto = crate::knowledge::ontology(&store.snapshot().unwrap(), &part).unwrap();
    assert_eq!((onto.entities, onto.relations, onto.entity_types.len()), (0, 0, 0), "ontology counts forgotten data");
    let snap = store.snapshot().unwrap();
    assert!(fts::search(&snap, part.raw(), "lighthouse", 5).unwrap().is_empty());
    assert_eq!(fts::search(&snap, other.raw(), "lighthouse", 5).unwrap().len(), 1, "another scope is untouched");
    let page = export(&snap, &part, Origin::of(0, &part), None, (100, EXPORT_PAGE_BYTES), 0, &ALL).unwrap();
    assert_eq!(page.records.len(), 1, "only the header is left: {:?}", page.records);
    assert_eq!(forget(&store, &part, &json!({"all": true})), json!({"state": "already_forgotten"}));
}

#[test]
fn delete_user_forgets_every_scope_of_that_user_only() {
    let (_dir, store, part) = seeded();
    let project = Partition::new("local", "u1", "project-x").unwrap();
    let stranger = Partition::new("local", "u2", "default").unwrap();
    for p in [&part, &project, &stranger] {
        let body = json!({"records": [{"kind": "entity", "id": "1", "name": "Marker", "recorded_at": "1970-01-01T00:00:00.050Z"}]});
        verb(&store, &caller(p, 60), "import", &body).unwrap();
    }
    let reply = verb(&store, &caller(&project, 100), "delete_user", &json!({})).unwrap();
    assert_eq!(reply["state"], "forgotten");
    let scopes: Vec<&str> = reply["scopes"].as_array().unwrap().iter().map(|s| s["scope"].as_str().unwrap()).collect();
    assert_eq!(scopes, vec!["default", "project-x"]);
    assert_eq!(reply["scopes"][0]["forgotten"]["entities"], 5);
    for p in [&part, &project] {
        assert_eq!(tree_count(&store, ENT, p), 0);
    }
    assert_eq!(tree_count(&store, ENT, &stranger), 1, "another user is untouched");
    let snap = store.snapshot().unwrap();
    let listed = snap.prefix(crate::knowledge::part::SCOPES, b"local\0u1\0").unwrap().count();
    assert_eq!(listed, 0, "the deleted user's scopes are no longer listed");
    assert_eq!(
        verb(&store, &caller(&part, 101), "delete_user", &json!({})).unwrap(),
        json!({"state": "already_forgotten"})
    );
    let nobody = Partition::new("local", "u9", "default").unwrap();
    assert_eq!(verb(&store, &caller(&nobody, 101), "delete_user", &json!({})).unwrap()["error"]["code"], "NOT_FOUND");
}

/// Records events as the write verbs do (entity by name, fact as `from \0 type \0 to`, document
/// by id), with content in `after`.
fn record_events(store: &Store, part: &Partition, doc: u64) {
    let who = caller(part, 90);
    store
        .write(move |tx| {
            for (family, target, after) in [
                ("entity", "Priya Raman".to_owned(), json!({"attributes": {"role": "lead", "team": "storage"}})),
                ("entity", "Jonas Weber".to_owned(), json!({"attributes": {"role": "lead"}})),
                ("fact", "priya raman\0Works_At\0Acme".to_owned(), json!({"valid_from": "2024"})),
                ("fact", "Jonas Weber\0works_at\0Acme".to_owned(), json!({"valid_from": "2023"})),
                ("document", doc.to_string(), json!({"text": "Jonas Weber moved"})),
            ] {
                let change = Change { family, target: &target, op: "create", after: Some(after), ..Change::default() };
                crate::history::record(tx, &who, change)?;
            }
            Ok(())
        })
        .unwrap();
}

fn event_afters(store: &Store, part: &Partition) -> Vec<(String, Value)> {
    let snap = store.snapshot().unwrap();
    snap.prefix(EVENT, part.prefix())
        .unwrap()
        .map(|e| serde_json::from_slice::<Event>(&e.unwrap().1).unwrap())
        .filter(|e| e.family != "forget")
        .map(|e| (e.target, e.after.unwrap_or(Value::Null)))
        .collect()
}

#[test]
fn forgetting_removes_the_forgotten_records_events_only() {
    let (_dir, store, part) = seeded();
    let mail = doc_id(&store, &part, "mail");
    record_events(&store, &part, mail);
    forget(&store, &part, &json!({"attribute": {"subject": "Priya Raman", "key": "role"}}));
    let afters = event_afters(&store, &part);
    assert_eq!(afters[0].1, json!({"attributes": {"team": "storage"}}), "only the attribute goes");
    assert_eq!(
        afters[5],
        ("Priya Raman".to_owned(), json!({"forgotten": {"attributes": 1}})),
        "the entity's history says an attribute went, not which"
    );
    forget(&store, &part, &json!({"subject": "Priya Raman"}));
    forget(&store, &part, &json!({"passage": mail.to_string()}));
    let targets: Vec<String> = event_afters(&store, &part).into_iter().map(|(t, _)| t).collect();
    assert_eq!(
        targets,
        vec!["Jonas Weber".to_owned(), "Jonas Weber\0works_at\0Acme".to_owned()],
        "the subject's events, a fact touching it (matched folded) and the document's go; others stay"
    );
    assert_eq!(event_afters(&store, &part)[0].1, json!({"attributes": {"role": "lead"}}), "untouched");
    forget(&store, &part, &json!({"fact": {"from": "Jonas Weber", "to": "Acme", "type": "works_at"}}));
    assert_eq!(event_afters(&store, &part).len(), 1, "only Jonas's own event is left");
    let forgets: Vec<String> = forget_events(&store, &part).into_iter().map(|e| e.target).collect();
    assert_eq!(forgets, ["attribute", "subject", "passage", "fact"], "each forget is recorded by its form only");
}

/// Pat Moss works at Initech (remembered from source `src1`), then at Hooli (`replaces`, which
/// ends the first), then at Initech again (`replaces`: the fact restored, asserted by the agent).
/// Returns the store and partition.
fn restored_fact() -> (tempfile::TempDir, Store, Partition) {
    let (dir, store, _) = crate::knowledge::testing::fresh();
    let part = Partition::new("local", "u1", "hist1").unwrap();
    let at = |now| caller(&part, now);
    let remember = json!({
        "content": "Pat Moss works at Initech.",
        "facts": {
            "entities": [{"name": "Pat Moss", "type": "person"}, {"name": "Initech", "type": "company"}],
            "relations": [{"source": "Pat Moss", "target": "Initech", "type": "works_at"}],
        },
        "date": "2024-05-01",
        "source": "src1",
    });
    assert!(verb(&store, &at(10), "remember", &remember).unwrap().get("error").is_none());
    let hooli = json!({"from": "Pat Moss", "to": "Hooli", "type": "works_at", "replaces": true, "date": "2025-01-01"});
    verb(&store, &at(20), "relate", &hooli).unwrap();
    let back = json!({"from": "Pat Moss", "to": "Initech", "type": "works_at", "replaces": true, "date": "2025-06-01"});
    assert_eq!(verb(&store, &at(30), "relate", &back).unwrap()["restored"].as_array().unwrap().len(), 1);
    (dir, store, part)
}

fn history_ops(store: &Store, part: &Partition, from: &str, to: &str) -> Vec<Value> {
    let body = json!({"fact": {"from": from, "to": to, "type": "works_at"}});
    let reply = crate::knowledge::testing_api::notes_verb(store, &caller(part, 200), "history", &body);
    reply["events"].as_array().unwrap_or_else(|| panic!("{reply}")).clone()
}

/// Found by an audit: `forget {source}` took the ended copy from that source, and with it every
/// event of the fact, the restore of its live version (which the source never stated) included.
/// The live version keeps its history; what the source stated goes, and the kept restore no
/// longer shows the forgotten version it replaced.
#[test]
fn a_source_takes_the_events_of_its_versions_and_a_live_version_keeps_its_own() {
    let (_dir, store, part) = restored_fact();
    let ops: Vec<Value> = history_ops(&store, &part, "Pat Moss", "Initech").iter().map(|e| e["op"].clone()).collect();
    assert_eq!(ops, [json!("assert"), json!("end"), json!("restore")]);
    let reply = forget(&store, &part, &json!({"source": "src1"}));
    assert_eq!(reply["state"], "forgotten", "{reply}");
    assert_eq!(reply["forgotten"]["facts"], 1, "the ended copy from src1: {reply}");
    let recall =
        verb(&store, &caller(&part, crate::knowledge::testing::TODAY), "recall", &json!({"subject": "Pat Moss"}))
            .unwrap();
    let live: Vec<&Value> = recall["facts"].as_array().unwrap().iter().filter(|f| f["object"] == "Initech").collect();
    assert_eq!(live.len(), 1, "{recall}");
    assert_eq!(live[0]["citation"]["source"]["kind"], "asserted", "{recall}");
    let events = history_ops(&store, &part, "Pat Moss", "Initech");
    let ops: Vec<&Value> = events.iter().map(|e| &e["op"]).collect();
    assert_eq!(ops, [&json!("restore")], "the live version's own event stays: {events:?}");
    assert_eq!(events[0]["after"]["source"]["kind"], "asserted");
    assert_eq!(events[0]["before"], json!({"redacted": "forgotten"}), "the version it replaced went");
    let text = serde_json::to_string(&events).unwrap();
    assert!(!text.contains("src1") && !text.contains("\"document\""), "{text}");
    let audit = crate::knowledge::testing_api::notes_verb(&store, &caller(&part, 220), "audit", &json!({}));
    let facts: Vec<&Value> = audit["events"].as_array().unwrap().iter().filter(|e| e["family"] == "fact").collect();
    assert_eq!(facts.len(), 3, "the restore, and Hooli's assert and the end it got from the restore: {audit}");
    assert!(!serde_json::to_string(&audit).unwrap().contains("src1"), "{audit}");
    assert_eq!(history_ops(&store, &part, "Pat Moss", "Hooli").len(), 2, "another fact's events stay");
}

/// The other way round: the live version is the one from the source, its earlier life the
/// agent's. The source takes the live version and the restore that made it; the earlier life
/// and its events stay.
#[test]
fn a_source_whose_version_restored_a_fact_takes_the_restore_only() {
    let (_dir, store, _) = crate::knowledge::testing::fresh();
    let part = Partition::new("local", "u1", "hist2").unwrap();
    let at = |now| caller(&part, now);
    verb(
        &store,
        &at(10),
        "relate",
        &json!({"from": "Pat Moss", "to": "Initech", "type": "works_at", "date": "2024-01-01"}),
    )
    .unwrap();
    verb(
        &store,
        &at(20),
        "relate",
        &json!({"from": "Pat Moss", "to": "Hooli", "type": "works_at", "replaces": true, "date": "2025-01-01"}),
    )
    .unwrap();
    let body = json!({"from": "Pat Moss", "to": "Initech", "type": "works_at", "replaces": true, "date": "2025-06-01", "source": "memo"});
    verb(&store, &at(30), "relate", &body).unwrap();
    assert_eq!(history_ops(&store, &part, "Pat Moss", "Initech").len(), 3);
    let reply = forget(&store, &part, &json!({"source": "memo"}));
    assert_eq!(reply["forgotten"]["facts"], 1, "{reply}");
    let events = history_ops(&store, &part, "Pat Moss", "Initech");
    let ops: Vec<&Value> = events.iter().map(|e| &e["op"]).collect();
    assert_eq!(ops, [&json!("assert"), &json!("end")], "{events:?}");
    // The end of Hooli came from the forgotten call: it stays (Hooli's fact is kept) without the
    // call's input, which names the forgotten label.
    let hooli = history_ops(&store, &part, "Pat Moss", "Hooli");
    let text = serde_json::to_string(&hooli).unwrap();
    assert_eq!(hooli.len(), 2, "{text}");
    assert!(!text.contains("memo"), "{text}");
    assert_eq!(hooli[1]["patch"], json!({"redacted": "forgotten"}), "{text}");
}

/// Found in review: Pat Moss's move to Hooli (`replaces`) ended the Initech fact, whose `end`
/// event kept that call's input, `to: "Hooli"`. Forgetting Hooli, or the Hooli fact, took the
/// Hooli events and left the name on the kept Initech event (in `memory_history` and on disk).
#[test]
fn a_kept_end_event_loses_the_input_naming_a_forgotten_subject_or_fact() {
    for body in [json!({"subject": "Hooli"}), json!({"fact": {"from": "Pat Moss", "to": "Hooli", "type": "works_at"}})]
    {
        let (_dir, store, part) = restored_fact();
        let before = history_ops(&store, &part, "Pat Moss", "Initech");
        assert!(serde_json::to_string(&before).unwrap().contains("Hooli"), "{before:?}");
        assert_eq!(forget(&store, &part, &body)["state"], "forgotten", "{body}");
        let events = history_ops(&store, &part, "Pat Moss", "Initech");
        let ops: Vec<&Value> = events.iter().map(|e| &e["op"]).collect();
        assert_eq!(ops, [&json!("assert"), &json!("end"), &json!("restore")], "Initech's events stay: {events:?}");
        assert_eq!(events[1]["patch"], json!({"redacted": "forgotten"}), "{events:?}");
        assert_eq!(events[2]["patch"]["to"], "Initech", "an input naming no forgotten thing stays: {events:?}");
        // A fact forget keeps the entity Hooli, and so its own events.
        let audit = crate::knowledge::testing_api::notes_verb(&store, &caller(&part, 220), "audit", &json!({}));
        let facts: Vec<&Value> = audit["events"].as_array().unwrap().iter().filter(|e| e["family"] == "fact").collect();
        let text = serde_json::to_string(&facts).unwrap();
        assert!(!text.to_lowercase().contains("hooli"), "{body}: {text}");
    }
}

/// A store that had the index from its first write never pays the scan that builds it: the
/// first write marks it.
#[test]
fn a_new_store_is_marked_indexed_by_its_first_write() {
    let (_dir, store, part) = restored_fact();
    assert!(store.snapshot().unwrap().get("h.named", &[]).unwrap().is_some());
    let names = store.snapshot().unwrap().prefix("h.name", part.prefix()).unwrap().count();
    assert!(names >= 7, "every entity and fact event is indexed: {names}");
}

/// A store written before `h.name` has none of its entries: the first forget builds the index
/// over every event, then forgets as on a store that always had it.
#[test]
fn a_store_without_the_name_index_builds_it_on_the_first_forget() {
    let (_dir, store, part) = restored_fact();
    store
        .write(|tx| {
            for (key, _) in tx.prefix("h.name", b"")? {
                tx.delete("h.name", &key)?;
            }
            tx.delete("h.named", &[])
        })
        .unwrap();
    assert_eq!(forget(&store, &part, &json!({"subject": "Hooli"}))["state"], "forgotten");
    assert_eq!(history_ops(&store, &part, "Pat Moss", "Hooli").len(), 0, "Hooli's events went");
    let events = history_ops(&store, &part, "Pat Moss", "Initech");
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[1]["patch"], json!({"redacted": "forgotten"}), "{events:?}");
    let snap = store.snapshot().unwrap();
    let names: Vec<String> =
        snap.prefix("h.name", b"").unwrap().map(|kv| String::from_utf8_lossy(&kv.unwrap().0).into_owned()).collect();
    assert!(names.iter().any(|k| k.contains("pat moss")), "the index was built: {names:?}");
    assert!(!names.iter().any(|k| k.contains("hooli")), "{names:?}");
}

/// A document forgotten by id keeps the facts taken from it, and so their history, even when a
/// later call restated (and revised) the fact.
#[test]
fn a_passage_keeps_the_history_of_the_facts_it_keeps() {
    let (_dir, store, _) = crate::knowledge::testing::fresh();
    let part = Partition::new("local", "u1", "hist3").unwrap();
    let fact = |content: &str, date: &str, source: &str| {
        json!({
            "content": content,
            "facts": {"relations": [{"source": "Pat Moss", "target": "Initech", "type": "works_at",
                                     "attributes": {"role": source}}]},
            "date": date,
            "source": source,
        })
    };
    let first =
        verb(&store, &caller(&part, 10), "remember", &fact("Pat Moss works at Initech.", "2024-05-01", "a")).unwrap();
    verb(&store, &caller(&part, 20), "remember", &fact("Pat Moss joined Initech early.", "2024-01-01", "b")).unwrap();
    assert_eq!(history_ops(&store, &part, "Pat Moss", "Initech").len(), 2, "assert, then merge");
    let doc = first["doc_id"].as_str().unwrap().to_owned();
    assert_eq!(forget(&store, &part, &json!({"passage": doc}))["state"], "forgotten");
    assert_eq!(history_ops(&store, &part, "Pat Moss", "Initech").len(), 2, "the facts stay, so does their history");
}

/// A scope with more keys in a tree than `delete_prefix` logs key by key goes in bulk (in no
/// redo record, its group checkpointed): every key of it goes, another scope's stay, the store
/// checks clean, and the scope is still forgotten after a reopen.
#[test]
fn a_scope_too_large_to_forget_key_by_key_goes_whole_and_stays_gone() {
    let (dir, store, part) = crate::knowledge::testing::fresh();
    let other = Partition::new("local", "u1", "other").unwrap();
    let n = crate::write::LOGGED_DELETE_MAX + 100;
    for p in [part.clone(), other.clone()] {
        store
            .write(move |tx| {
                let none = Map::new();
                for i in 0..n {
                    let name = format!("Entity {i}");
                    upsert_entity(tx, &p, &name, &["thing".into()], &none, 1)?;
                    relate(tx, &p, assertion(&name, "Hub", "links_to", &none, "a"), 2)?;
                }
                Ok(())
            })
            .unwrap();
    }
    let reply = forget(&store, &part, &json!({"all": true}));
    assert_eq!(reply["forgotten"]["entities"], n + 1);
    assert_eq!(reply["forgotten"]["facts"], n);
    let gone = |store: &Store| {
        for tree in [ENT, REL, "k.ent_name", "k.adj", EVENT] {
            assert_eq!(tree_count(store, tree, &part), 0, "{tree}");
        }
        assert_eq!(tree_count(store, ENT, &other), n + 1, "another scope is untouched");
        let report = store.check().unwrap();
        assert!(report.ok, "{:?}", report.problems);
    };
    gone(&store);
    store.close().unwrap();
    let store = Store::open(dir.path(), crate::store::StoreOptions::default()).unwrap();
    gone(&store);
    assert_eq!(forget(&store, &part, &json!({"all": true})), json!({"state": "already_forgotten"}));
}
