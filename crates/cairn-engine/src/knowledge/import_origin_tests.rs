//! Import of exports whose ids collide (found by an audit: ids restart in every partition, and
//! import matched a record by its source id alone, so the second of two scopes' exports into one
//! scope was `unchanged` and missing, and a fact record was joined to the entities its ids mapped
//! to whatever names it carried). Source ids are keyed by their origin, and a match by id is
//! used only when the record's own names and text agree with it.

use super::Partition;
use super::import::IMPORT_MAP;
use super::testing::fresh;
use super::testing_api::{caller, export_pages, normalized, verb};
use crate::store::Store;
use serde_json::{Value, json};

const NOW: i64 = 50_000;

/// A scope holding `from type to` and a document, written in the same order as every other
/// scope these tests make, so their exports carry the same ids.
fn scope(store: &Store, name: &str, (from, rel, to): (&str, &str, &str), text: &str) -> Partition {
    let part = Partition::new("local", "u1", name).unwrap();
    let who = caller(&part, 10_000);
    verb(store, &who, "relate", &json!({"from": from, "to": to, "type": rel})).unwrap();
    verb(store, &who, "remember", &json!({"content": text, "source": format!("{name} notes")})).unwrap();
    part
}

fn import(store: &Store, part: &Partition, records: &[Value]) -> Value {
    verb(store, &caller(part, NOW), "import", &json!({"records": records, "allAgents": true})).unwrap()
}

fn counts(reply: &Value, field: &str) -> (u64, u64, u64) {
    let n = |k: &str| reply[field][k].as_u64().unwrap();
    (n("entities"), n("facts"), n("documents"))
}

/// The facts of `part`'s export as `from type to`, sorted.
fn facts(store: &Store, part: &Partition) -> Vec<String> {
    let mut out: Vec<String> = export_pages(store, part, 5000)
        .concat()
        .iter()
        .filter(|r| r["kind"] == "fact")
        .map(|r| format!("{} {} {}", r["from_name"].as_str().unwrap(), r["type"], r["to_name"].as_str().unwrap()))
        .collect();
    out.sort();
    out
}

fn texts(store: &Store, part: &Partition) -> Vec<String> {
    let mut out: Vec<String> = export_pages(store, part, 5000)
        .concat()
        .iter()
        .filter(|r| r["kind"] == "document")
        .map(|r| r["text"].as_str().unwrap().to_owned())
        .collect();
    out.sort();
    out
}

/// The ids an export's records carry, by kind.
fn ids(records: &[Value]) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = records
        .iter()
        .filter(|r| r["id"].is_string())
        .map(|r| (r["kind"].as_str().unwrap().to_owned(), r["id"].as_str().unwrap().to_owned()))
        .collect();
    out.sort();
    out
}

/// The id of the entity `name` in `records`.
fn id_of<'a>(records: &'a [Value], name: &str) -> &'a str {
    records.iter().find(|r| r["kind"] == "entity" && r["name"] == name).unwrap()["id"].as_str().unwrap()
}

/// JSON lines of `records`, for `load`.
fn lines<'a>(records: impl IntoIterator<Item = &'a Value>) -> Vec<u8> {
    records.into_iter().flat_map(|r| [serde_json::to_vec(r).unwrap(), b"\n".to_vec()].concat()).collect()
}

fn load(store: &Store, part: &Partition, body: &[u8]) -> Value {
    serde_json::from_slice(&super::api::call(store, "load", &caller(part, NOW), body).unwrap()).unwrap()
}

/// Two scopes whose exports carry the same ids: mergeA and mergeB, with their records.
fn two_origins() -> (tempfile::TempDir, Store, Vec<Value>, Vec<Value>) {
    let (dir, store, _) = fresh();
    let a = scope(&store, "mergeA", ("Xavier", "knows", "Yolanda"), "the lighthouse keeper counted gulls at dawn");
    let b = scope(&store, "mergeB", ("Quentin", "manages", "Rita"), "the orchard crew pruned every pear tree twice");
    let (ra, rb) = (export_pages(&store, &a, 5000).concat(), export_pages(&store, &b, 5000).concat());
    assert_eq!(ids(&ra), ids(&rb), "the two exports share their ids (the case this is about)");
    assert_ne!(ra[0]["origin"], rb[0]["origin"], "each names its own origin");
    (dir, store, ra, rb)
}

fn without_origin(records: &[Value]) -> Vec<Value> {
    records
        .iter()
        .map(|r| {
            let mut r = r.clone();
            r.as_object_mut().unwrap().remove("origin");
            r
        })
        .collect()
}

/// Imports `ra` then `rb` into a new scope, checks both are there whole with honest counts, and
/// that importing either again, page by page in reverse, changes nothing.
fn both_arrive(store: &Store, target: &str, ra: &[Value], rb: &[Value]) {
    let c = Partition::new("local", "u1", target).unwrap();
    let first = import(store, &c, ra);
    assert_eq!(first["skipped"], json!([]), "{first}");
    let entities = |r: &[Value]| r.iter().filter(|r| r["kind"] == "entity").count() as u64;
    assert_eq!(counts(&first, "imported"), (entities(ra), 1, 1), "{first}");
    let second = import(store, &c, rb);
    assert_eq!(second["skipped"], json!([]), "{second}");
    assert_eq!(counts(&second, "imported"), (entities(rb), 1, 1), "every record of the second export: {second}");
    assert_eq!(counts(&second, "unchanged"), (0, 0, 0), "nothing unstored is called unchanged: {second}");
    assert_eq!(facts(store, &c), vec!["Quentin \"manages\" Rita", "Xavier \"knows\" Yolanda"]);
    assert_eq!(
        texts(store, &c),
        vec!["the lighthouse keeper counted gulls at dawn", "the orchard crew pruned every pear tree twice"]
    );
    let rec = verb(store, &caller(&c, NOW), "recall", &json!({"subject": "Quentin"})).unwrap();
    let stored: Vec<&Value> = rec["facts"].as_array().unwrap().iter().filter(|f| f["derived"].is_null()).collect();
    assert_eq!(stored.len(), 1, "{rec}");
    assert_eq!((&stored[0]["relation"], &stored[0]["object"]), (&json!("manages"), &json!("Rita")), "{rec}");
    let before = normalized(&export_pages(store, &c, 5000).concat());
    // Again, both, a page at a time in reverse order: nothing new.
    for records in [rb, ra, ra, rb] {
        for page in records.chunks(2).rev() {
            let again = import(store, &c, page);
            assert_eq!(counts(&again, "imported"), (0, 0, 0), "{again}");
            assert_eq!(again["skipped"], json!([]), "{again}");
        }
    }
    assert_eq!(normalized(&export_pages(store, &c, 5000).concat()), before, "no duplicates");
}

#[test]
fn two_origins_whose_ids_collide_are_each_imported_whole() {
    let (_dir, store, ra, rb) = two_origins();
    both_arrive(&store, "mergeC", &ra, &rb);
}

#[test]
fn exports_without_origins_whose_ids_collide_are_each_imported_whole() {
    // Exports made before origins: the ids share one namespace, and every match by id is checked
    // against the record's names and text.
    let (_dir, store, ra, rb) = two_origins();
    assert!(ra.iter().all(|r| r["origin"].is_string()));
    both_arrive(&store, "mergeOld", &without_origin(&ra), &without_origin(&rb));
    // An old export and a new one of the same scope into one scope: still once.
    let d = Partition::new("local", "u1", "mergeMixed").unwrap();
    import(&store, &d, &without_origin(&ra));
    let again = import(&store, &d, &ra);
    assert_eq!(counts(&again, "imported"), (0, 0, 0), "{again}");
}

#[test]
fn a_fact_whose_names_contradict_its_ids_is_joined_by_its_names() {
    let (_dir, store, ra, rb) = two_origins();
    let c = Partition::new("local", "u1", "mergeC").unwrap();
    import(&store, &c, &ra);
    import(&store, &c, &rb);
    // Ids 1 and 3 are Xavier and Yolanda in mergeA's export (and as records naming no origin
    // they were mapped so once an old export came): the names say Quentin and Rita.
    import(&store, &c, &without_origin(&ra));
    let (from, to) = (id_of(&ra, "Xavier"), id_of(&ra, "Yolanda"));
    let fact = json!({"kind": "fact", "id": "99", "from": from, "to": to, "from_name": "Quentin", "to_name": "Rita",
        "type": "mentors", "recorded_at": "1970-01-01T00:00:05.000Z"});
    let reply = import(&store, &c, std::slice::from_ref(&fact));
    assert_eq!(counts(&reply, "imported"), (0, 1, 0), "{reply}");
    let stored = facts(&store, &c);
    assert!(stored.contains(&"Quentin \"mentors\" Rita".to_owned()), "{stored:?}");
    assert!(!stored.iter().any(|f| f.contains("mentors") && f.contains("Xavier")), "{stored:?}");
    // Into a scope without Quentin: created by name, never Xavier.
    let e = Partition::new("local", "u1", "mergeE").unwrap();
    import(&store, &e, &without_origin(&ra));
    let reply = import(&store, &e, &[fact]);
    assert_eq!(counts(&reply, "imported"), (0, 1, 0), "{reply}");
    assert_eq!(facts(&store, &e), vec!["Quentin \"mentors\" Rita", "Xavier \"knows\" Yolanda"]);
}

#[test]
fn a_fact_whose_ends_resolve_to_one_entity_is_skipped_with_the_reason() {
    let (_dir, store, ra, _) = two_origins();
    let c = Partition::new("local", "u1", "loops").unwrap();
    import(&store, &c, &without_origin(&ra));
    let (xavier, yolanda) = (id_of(&ra, "Xavier"), id_of(&ra, "Yolanda"));
    let at = "1970-01-01T00:00:05.000Z";
    let records = [
        // Names that fold alike.
        json!({"kind": "fact", "id": "70", "from_name": "Maya Chen", "to_name": "MAYA CHEN", "type": "worked_at", "recorded_at": at}),
        // An id mapped to Xavier, and Xavier's name at the other end.
        json!({"kind": "fact", "id": "71", "from": xavier, "to_name": "Xavier", "type": "knows", "recorded_at": at}),
        // Two ids of one entity's name: the name wins over the id, and it is the same entity.
        json!({"kind": "fact", "id": "72", "from": xavier, "to": yolanda, "from_name": "Yolanda", "to_name": "Yolanda", "type": "knows", "recorded_at": at}),
    ];
    let reply = import(&store, &c, &records);
    assert_eq!(counts(&reply, "imported"), (0, 0, 0), "{reply}");
    let skipped = reply["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 3, "{reply}");
    assert!(skipped.iter().all(|s| s["reason"].as_str().unwrap().contains("from and to name the same entity")));
    assert_eq!(facts(&store, &c), vec!["Xavier \"knows\" Yolanda"], "nothing written for them");
    // The load path skips them the same way (after the entity lines the ids name).
    let loaded = Partition::new("local", "u1", "loopsLoaded").unwrap();
    let entities = without_origin(&ra).into_iter().filter(|r| r["kind"] == "entity").collect::<Vec<_>>();
    let reply = load(&store, &loaded, &lines(entities.iter().chain(&records)));
    assert_eq!(counts(&reply, "imported"), (2, 0, 0), "{reply}");
    let skipped = reply["skipped"].as_array().unwrap();
    assert_eq!(skipped.len(), 3, "{reply}");
    assert!(skipped.iter().all(|s| s["reason"].as_str().unwrap().contains("from and to name the same entity")));
}

#[test]
fn a_restored_copy_and_its_source_import_into_one_scope_as_one() {
    // The everyday workflow of the audit: export cp, restore it into cp3, import cp's export and
    // then cp3's into cp5 (cp3's ids are its own, not cp's).
    let (_dir, store, cp) = super::exchange_tests::seeded();
    let records = export_pages(&store, &cp, 5000).concat();
    let cp3 = Partition::new("local", "u1", "cp3").unwrap();
    assert_eq!(import(&store, &cp3, &records)["skipped"], json!([]));
    let copy = export_pages(&store, &cp3, 5000).concat();
    let cp5 = Partition::new("local", "u1", "cp5").unwrap();
    import(&store, &cp5, &records);
    let second = import(&store, &cp5, &copy);
    assert_eq!(second["skipped"], json!([]), "{second}");
    assert_eq!(counts(&second, "imported"), (0, 0, 0), "{second}");
    assert_eq!(normalized(&export_pages(&store, &cp5, 5000).concat()), normalized(&records));
    // And the other way round, page by page.
    let cp6 = Partition::new("local", "u1", "cp6").unwrap();
    for page in copy.chunks(3).chain(records.chunks(2).rev()) {
        assert_eq!(import(&store, &cp6, page)["skipped"], json!([]));
    }
    assert_eq!(normalized(&export_pages(&store, &cp6, 5000).concat()), normalized(&records));
}

#[test]
fn a_load_of_two_exports_whose_ids_collide_stores_both() {
    let (_dir, store, ra, rb) = two_origins();
    for (name, a, b) in [("loadNew", ra.clone(), rb.clone()), ("loadOld", without_origin(&ra), without_origin(&rb))] {
        let part = Partition::new("local", "u1", name).unwrap();
        let reply = load(&store, &part, &lines(a.iter().chain(&b)));
        assert_eq!(reply["skipped"], json!([]), "{name}: {reply}");
        assert_eq!(counts(&reply, "imported"), (4, 2, 2), "{name}: {reply}");
        assert_eq!(facts(&store, &part), vec!["Quentin \"manages\" Rita", "Xavier \"knows\" Yolanda"], "{name}");
        assert_eq!(texts(&store, &part).len(), 2, "{name}");
    }
}

#[test]
fn import_map_keys_spell_no_scope_or_user_of_the_source() {
    let (_dir, store, ra, _) = two_origins();
    let c = Partition::new("local", "u1", "spelled").unwrap();
    import(&store, &c, &ra);
    let snap = store.snapshot().unwrap();
    let keys: Vec<Vec<u8>> = snap.prefix(IMPORT_MAP, c.prefix()).unwrap().map(|kv| kv.unwrap().0).collect();
    assert!(!keys.is_empty());
    let origin = super::Origin::parse(ra[0]["origin"].as_str().unwrap()).unwrap();
    for k in &keys {
        let tail = &k[c.prefix().len()..];
        assert!(!tail.windows(6).any(|w| w == b"mergeA"), "{k:?}");
        assert_eq!(&tail[1..17], origin.key_bytes(), "keyed by the record's origin");
    }
}
