//! `load` through the verb: it stores what `import` of the same records stores (records, history,
//! counts, skip reasons), refuses a scope that holds knowledge without changing anything, and
//! what it stores survives a reopen with a clean check.

use super::Partition;
use super::api::{Caller, call};
use super::exchange_tests::seeded;
use super::testing_api::{caller, export_pages, normalized, verb};
use crate::history::{EVENT, Event};
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};

/// A load's time: later than every record's (an import refuses a time to come).
const NOW: i64 = 1_800_000_000_000;

fn lines(records: &[Value]) -> Vec<u8> {
    let mut out = Vec::new();
    for r in records {
        out.extend_from_slice(&serde_json::to_vec(r).unwrap());
        out.push(b'\n');
    }
    out
}

fn load(store: &Store, part: &Partition, body: &[u8]) -> Value {
    serde_json::from_slice(&call(store, "load", &caller(part, NOW), body).unwrap()).unwrap()
}

/// `records` loaded into a scope `loaded` and imported into a scope `imported` of `store`, whose
/// replies must agree; the two scopes and the reply.
fn both_ways(store: &Store, records: &[Value]) -> (Partition, Partition, Value) {
    let loaded = Partition::new("local", "u1", "loaded").unwrap();
    let imported = Partition::new("local", "u1", "imported").unwrap();
    let by_load = load(store, &loaded, &lines(records));
    let by_import =
        verb(store, &caller(&imported, NOW), "import", &json!({"records": records, "allAgents": true})).unwrap();
    assert_eq!(by_load, by_import, "the same counts, skips and notes");
    (loaded, imported, by_load)
}

/// The `import` events of `part`, as (family, target, after), sorted.
fn import_events(store: &Store, part: &Partition) -> Vec<(String, String, Value)> {
    let snap = store.snapshot().unwrap();
    let mut out: Vec<(String, String, Value)> = snap
        .prefix(EVENT, part.prefix())
        .unwrap()
        .map(|item| serde_json::from_slice::<Event>(&item.unwrap().1).unwrap())
        .filter(|e| e.op == "import")
        .map(|e| (e.family, e.target, e.after.unwrap()))
        .collect();
    out.sort_by(|a, b| (&a.0, &a.1).cmp(&(&b.0, &b.1)));
    out
}

#[test]
fn a_load_stores_what_import_of_the_same_records_stores() {
    let (_dir, store, part) = seeded();
    let records = export_pages(&store, &part, 5000).concat();
    let (loaded, imported, by_load) = both_ways(&store, &records);
    assert_eq!(
        by_load["imported"],
        json!({"entities": 4, "facts": 3, "documents": 1, "notes": 0, "handoffs": 0}),
        "{by_load}"
    );
    let exported = |p: &Partition| normalized(&export_pages(&store, p, 5000).concat());
    assert_eq!(exported(&loaded), exported(&imported));
    assert_eq!(exported(&loaded), normalized(&records), "the copy exports as the source did");
    // One `import` event per record stored, naming it as `import` does; `after` holds its id.
    let (from_load, from_import) = (import_events(&store, &loaded), import_events(&store, &imported));
    let names = |events: &[(String, String, Value)]| -> Vec<(String, String)> {
        // A document is named by its local id, which differs between the two copies.
        events.iter().map(|(f, t, _)| (f.clone(), if f == "document" { String::new() } else { t.clone() })).collect()
    };
    assert_eq!(names(&from_load), names(&from_import));
    let fact = from_load.iter().find(|(f, t, _)| f == "fact" && t == "Jonas Weber\0works_at\0Globex").unwrap();
    let id = fact.2["id"].as_str().unwrap().to_owned();
    let rec = verb(&store, &caller(&loaded, 9_500), "recall", &json!({"subject": "jonas weber"})).unwrap();
    assert_eq!(rec["state"], json!("answered"), "found through the name index: {rec}");
    let live = rec["facts"].as_array().unwrap().iter().find(|f| f["object"] == json!("Globex")).unwrap();
    assert_eq!(live["id"], json!(id), "the event's id is the stored fact's");
    let rec_imported = verb(&store, &caller(&imported, 9_500), "recall", &json!({"subject": "jonas weber"})).unwrap();
    assert_eq!(rec["facts"].as_array().unwrap().len(), rec_imported["facts"].as_array().unwrap().len());
    // As of before the ended fact ended, the copy answers as the source does.
    let then = json!({"subject": "Jonas Weber", "as_of": 3_150});
    let at = |p: &Partition| verb(&store, &caller(p, 9_500), "recall", &then).unwrap()["facts"].clone();
    // The ended fact's end included: a `replaces` had not shortened it yet then.
    let objects = |facts: Value| -> Vec<(Value, Value)> {
        facts.as_array().unwrap().iter().map(|f| (f["object"].clone(), f["valid_to"].clone())).collect()
    };
    assert_eq!(objects(at(&loaded)), objects(at(&part)));
}

#[test]
fn a_scope_holding_knowledge_is_refused_and_nothing_changes() {
    let (_dir, store, part) = seeded();
    let records = export_pages(&store, &part, 5000).concat();
    let counter = || store.snapshot().unwrap().get(crate::knowledge::trees::SEQ, part.prefix()).unwrap();
    let (before, events) = (counter(), import_events(&store, &part).len());
    let reply = load(&store, &part, &lines(&records));
    assert_eq!(reply["error"]["code"], json!("VALIDATION_ERROR"), "{reply}");
    assert_eq!(counter(), before, "not even an id was taken");
    assert_eq!(import_events(&store, &part).len(), events);
    // A second load into a scope the first one filled is refused the same way.
    let copy = Partition::new("local", "u1", "copy").unwrap();
    assert!(load(&store, &copy, &lines(&records)).get("error").is_none());
    let again = load(&store, &copy, &lines(&records));
    assert_eq!(again["error"]["code"], json!("VALIDATION_ERROR"), "{again}");
}

#[test]
fn bad_lines_are_skipped_by_line_with_imports_reasons() {
    let (_dir, store, _part) = crate::knowledge::testing::fresh();
    let at = "2024-01-01T00:00:00.000Z";
    let good_fact = json!({"kind": "fact", "id": "20", "from": "10", "to": "99", "to_name": "Berlin",
        "type": "lives_in", "recorded_at": at, "provenance": {"kind": "asserted", "label": "chat", "agent": "x"}});
    let records = [
        json!({"kind": "header", "format": "cairn.export", "version": 2}),
        json!({"kind": "entity", "id": "11"}),
        json!({"kind": "entity", "id": "10", "name": "Priya", "types": ["person"], "recorded_at": at}),
        json!({"kind": "fact", "id": "21", "from": "10", "to": "11", "type": "knows"}),
        good_fact.clone(),
        good_fact,
        json!({"kind": "fact", "id": "22", "from": "404", "to": "10", "type": "knows", "recorded_at": at}),
        json!({"kind": "note", "key": "k"}),
        json!({"kind": "entity", "id": "12", "name": "Acme", "attributes": "big"}),
    ];
    let mut body = lines(&records[..2]);
    body.extend_from_slice(b"\n  \nnot json\n");
    body.extend_from_slice(&lines(&records[2..]));
    let loaded = Partition::new("local", "u1", "loaded").unwrap();
    let reply = load(&store, &loaded, &body);
    let imported = Partition::new("local", "u1", "imported").unwrap();
    let by_import =
        verb(&store, &caller(&imported, NOW), "import", &json!({"records": records, "allAgents": true})).unwrap();
    assert_eq!(reply["imported"], by_import["imported"]);
    assert_eq!(reply["unchanged"], by_import["unchanged"]);
    assert_eq!(
        reply["imported"],
        json!({"entities": 1, "facts": 1, "documents": 0, "notes": 0, "handoffs": 0}),
        "{reply}"
    );
    // Lines count from 0 with blank ones included; the import's indexes count records.
    let skipped = |r: &Value| -> Vec<(u64, String)> {
        r["skipped"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| (s["index"].as_u64().unwrap(), s["reason"].as_str().unwrap().to_owned()))
            .collect()
    };
    let line_of_record = [0, 1, 5, 6, 7, 8, 9, 10, 11];
    let expected: Vec<(u64, String)> =
        skipped(&by_import).into_iter().map(|(i, why)| (line_of_record[i as usize], why)).collect();
    let mut got = skipped(&reply);
    let not_json = got.iter().position(|(i, _)| *i == 4).expect("the line that is not JSON is skipped");
    assert!(got.remove(not_json).1.starts_with("record: not JSON"));
    assert_eq!(got, expected);
    assert_eq!(got.iter().map(|(i, _)| *i).collect::<Vec<_>>(), vec![0, 1, 6, 9, 10, 11], "{reply}");
    let exported = |p: &Partition| normalized(&export_pages(&store, p, 5000).concat());
    assert_eq!(exported(&loaded), exported(&imported));
}

#[test]
fn a_loaded_scope_survives_a_reopen_and_checks_clean() {
    let dir = tempfile::tempdir().unwrap();
    let part = Partition::new("local", "u1", "default").unwrap();
    let mut body = Vec::new();
    for i in 0..3000 {
        let e = json!({"kind": "entity", "id": i.to_string(), "name": format!("Node {i}"), "types": ["node"]});
        body.extend_from_slice(format!("{e}\n").as_bytes());
    }
    for i in 0..6000 {
        let f = json!({"kind": "fact", "id": (10_000 + i).to_string(), "from": (i % 3000).to_string(),
            "to": ((i % 3000 + 1 + i / 3000 * 1000) % 3000).to_string(), "type": "links", "recorded_at": "2024-01-01T00:00:00.000Z"});
        body.extend_from_slice(format!("{f}\n").as_bytes());
    }
    {
        let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
        let reply = load(&store, &part, &body);
        assert_eq!(
            reply["imported"],
            json!({"entities": 3000, "facts": 6000, "documents": 0, "notes": 0, "handoffs": 0}),
            "{reply}"
        );
        assert!(store.check().unwrap().ok);
        // Dropped without `close`: the load was made durable when it was acknowledged.
        std::mem::forget(store);
    }
    // What a process killed now leaves: the files as they are (the handle still holds the lock).
    let copy = tempfile::tempdir().unwrap();
    for file in [crate::store::DATA_FILE, crate::store::WAL_FILE] {
        std::fs::copy(dir.path().join(file), copy.path().join(file)).unwrap();
    }
    let store = Store::open(copy.path(), StoreOptions::default()).unwrap();
    let check = store.check().unwrap();
    assert!(check.ok, "{check:?}");
    let rec = verb(&store, &caller(&part, 9_500), "recall", &json!({"subject": "node 1", "k": 100})).unwrap();
    assert_eq!(rec["state"], json!("answered"), "{rec}");
    assert_eq!(rec["facts"].as_array().unwrap().len(), 4, "two out, two in: {rec}");
}

/// Into a new store every tree is empty, so a load packs each one page by page
/// (`btree::Packer`): the result is what `import` of the same records stores, multi-level trees
/// included, and checks clean; with records whose name or type holds a NUL byte too, which both
/// refuse alike (a NUL would split the name keys).
#[test]
fn a_load_into_a_new_store_packs_trees_that_import_would_fill_alike() {
    let (_dir, source, part) = seeded();
    let mut records = export_pages(&source, &part, 5000).concat();
    for i in 0..2000 {
        let name = format!("Bulk {:05}", (i * 7919) % 2000);
        records.push(json!({"kind": "entity", "id": (100_000 + i).to_string(), "name": name, "types": ["node"]}));
    }
    for i in 0..2000 {
        records.push(json!({"kind": "fact", "id": (200_000 + i).to_string(), "from": (100_000 + i).to_string(),
            "to": (100_000 + (i * 7) % 2000).to_string(), "type": if i % 3 == 0 { "links" } else { "cites" },
            "recorded_at": "2024-01-01T00:00:00.000Z"}));
    }
    // A name and a type that JSON escapes: their events spell them as import's do.
    records.push(json!({"kind": "entity", "id": "250000", "name": "Say \"hi\" \\ there", "types": ["odd"]}));
    records.push(json!({"kind": "fact", "id": "250001", "from": "250000", "to": "100002", "type": "quotes \"",
        "recorded_at": "2024-01-01T00:00:00.000Z"}));
    for nul in [false, true] {
        let mut records = records.clone();
        if nul {
            records.push(json!({"kind": "entity", "id": "300000", "name": "Nul\u{0}Name", "types": ["odd"]}));
            records.push(json!({"kind": "entity", "id": "300001", "name": "Nul", "types": ["odd"]}));
            records
                .push(json!({"kind": "fact", "id": "300002", "from": "300000", "to": "100001", "type": "is\u{0}near",
                "recorded_at": "2024-01-01T00:00:00.000Z"}));
        }
        let (_a, by_load_store, p) = crate::knowledge::testing::fresh();
        let (_b, by_import_store, q) = crate::knowledge::testing::fresh();
        let by_load = load(&by_load_store, &p, &lines(&records));
        let by_import =
            verb(&by_import_store, &caller(&q, NOW), "import", &json!({"records": records, "allAgents": true}))
                .unwrap();
        assert_eq!(by_load, by_import, "nul {nul}");
        if nul {
            let reply = by_import.to_string();
            assert!(reply.contains("name: must not contain control characters"), "{reply}");
            assert!(reply.contains("type: must not contain control characters"), "{reply}");
        }
        let exported = |s: &Store, p: &Partition| normalized(&export_pages(s, p, 5000).concat());
        assert_eq!(exported(&by_load_store, &p), exported(&by_import_store, &q), "nul {nul}");
        let names = |events: Vec<(String, String, Value)>| -> Vec<(String, String)> {
            events.into_iter().filter(|(f, _, _)| f != "document").map(|(f, t, _)| (f, t)).collect()
        };
        assert_eq!(names(import_events(&by_load_store, &p)), names(import_events(&by_import_store, &q)));
        for s in [&by_load_store, &by_import_store] {
            let check = s.check().unwrap();
            assert!(check.ok, "nul {nul}: {check:?}");
        }
        let rec =
            verb(&by_load_store, &caller(&p, 9_500), "recall", &json!({"subject": "Bulk 00007", "k": 100})).unwrap();
        assert_eq!(rec["state"], json!("answered"), "{rec}");
    }
}

#[test]
fn an_earlier_version_of_a_revised_fact_travels_as_a_version() {
    // Ann knows Bo from 2020 (at 10), then from 2019 (at 30): a read as of 20 sees 2020.
    let (_dir, store, part) = super::testing::fresh();
    let source = caller(&part, 10);
    for (at, date) in [(10, "2020-01-01"), (30, "2019-01-01")] {
        let body = json!({"from": "Ann", "to": "Bo", "type": "knows", "date": date});
        verb(&store, &Caller { now: at, ..source.clone() }, "relate", &body).unwrap();
    }
    let records = export_pages(&store, &part, 5000).concat();
    let facts: Vec<&Value> = records.iter().filter(|r| r["kind"] == "fact").collect();
    assert_eq!(facts.len(), 2, "the fact and its earlier version: {facts:?}");
    assert_eq!(facts[1]["version_of"], facts[0]["id"], "the version comes after its fact");
    let (loaded, imported, reply) = both_ways(&store, &records);
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    let starts = |p: &Partition, extra: Value| -> Vec<Value> {
        let mut body = json!({"subject": "Ann"});
        body.as_object_mut().unwrap().extend(extra.as_object().cloned().unwrap_or_default());
        let r = verb(&store, &caller(p, NOW), "recall", &body).unwrap();
        r["facts"].as_array().unwrap().iter().map(|f| f["valid_from"].clone()).collect()
    };
    for p in [&part, &loaded, &imported] {
        assert_eq!(starts(p, json!({})), [json!("2019-01-01")], "one fact now, in {p:?}");
        assert_eq!(starts(p, json!({"as_of": 20})), [json!("2020-01-01")], "as known at 20, in {p:?}");
    }
    // Again: nothing new, the version matched as a version.
    let again =
        verb(&store, &caller(&imported, NOW), "import", &json!({"records": records, "allAgents": true})).unwrap();
    assert_eq!(again["imported"]["facts"], json!(0), "{again}");
    // A version whose fact is not here is skipped, naming why.
    let alone = Partition::new("local", "u1", "alone").unwrap();
    let only = json!({"records": [records[0].clone(), facts[1].clone()], "allAgents": true});
    let r = verb(&store, &caller(&alone, NOW), "import", &only).unwrap();
    assert!(r["skipped"][0]["reason"].as_str().unwrap().starts_with("version_of"), "{r}");
}

#[test]
fn a_load_skips_what_import_skips_for_valid_time_sizes_and_unknown_fields() {
    let (_dir, store, _part) = crate::knowledge::testing::fresh();
    let at = "2024-01-01T00:00:00.000Z";
    let fact = |id: &str, over: Value| {
        let mut r = json!({"kind": "fact", "id": id, "from": "1", "to": "2", "from_name": "PP", "to_name": "QQ",
            "type": "knows", "recorded_at": at, "attributes": {}, "provenance": {"kind": "asserted", "label": null, "agent": "a1"}});
        r.as_object_mut().unwrap().extend(over.as_object().unwrap().clone());
        r
    };
    let records = [
        json!({"kind": "header", "format": "cairn.export", "version": 1, "evil": 1}),
        fact("9", json!({"valid_from": "not a date", "valid_to": "yesterday"})),
        fact("10", json!({"valid_from": "2024-02-30"})),
        fact("11", json!({"valid_from": "2024-05-01", "valid_to": "2024-01-01"})),
        fact("12", json!({"attributes": {"valid_to": "someday"}})),
        fact("13", json!({"to_name": "q".repeat(2000)})),
        fact("14", json!({"provenance": {"kind": "asserted", "label": "l".repeat(1025)}})),
        fact("15", json!({"evil": 1})),
        fact("16", json!({"name": null})),
        fact("17", json!({"provenance": {"kind": "asserted", "evil": 1}})),
        json!({"kind": "entity", "id": "3", "name": "Evil", "evil": 1}),
        json!({"kind": "entity", "id": "4", "name": "Nulled", "valid_from": null}),
        json!({"kind": "entity", "id": "5", "name": "Typed", "types": ["x".repeat(1025)]}),
        json!({"kind": "entity", "id": "6", "name": "Kept", "attributes": {"note": null}, "recorded_at": at}),
        // Said on a date other than when it became true: `source_date` travels with it.
        fact("18", json!({"valid_from": "2022-01-01", "valid_to": "2030-01-01", "source_date": "2024-01-01"})),
    ];
    let (loaded, imported, reply) = both_ways(&store, &records);
    let fields: Vec<(u64, String)> = reply["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| (s["index"].as_u64().unwrap(), s["reason"].as_str().unwrap().split(':').next().unwrap().to_owned()))
        .collect();
    let want: Vec<(u64, String)> = [
        (0, "evil"),
        (1, "valid_from"),
        (2, "valid_from"),
        (3, "valid_to"),
        (4, "attributes.valid_to"),
        (5, "to_name"),
        (6, "provenance.label"),
        (7, "evil"),
        (8, "name"),
        (9, "provenance.evil"),
        (10, "evil"),
        (11, "valid_from"),
        (12, "types[0]"),
    ]
    .iter()
    .map(|(i, f)| (*i, (*f).to_owned()))
    .collect();
    assert_eq!(fields, want, "{reply}");
    assert_eq!(reply["imported"], json!({"entities": 1, "facts": 1, "documents": 0, "notes": 0, "handoffs": 0}));
    let exported = |p: &Partition| normalized(&export_pages(&store, p, 5000).concat());
    assert_eq!(exported(&loaded), exported(&imported));
    let copy = export_pages(&store, &loaded, 5000).concat();
    let kept = copy.iter().find(|r| r["kind"] == "fact").unwrap();
    assert_eq!(kept["source_date"], json!("2024-01-01"), "{kept}");
}

/// An entity record carrying dated attribute writes (`import_attributes.rs`) goes through
/// import's path, so a loaded copy reads its attributes at any time as the source does.
#[test]
fn a_load_replays_dated_attribute_writes() {
    let (_dir, store, _) = crate::knowledge::testing::fresh();
    let (a, b) = (Partition::new("local", "u1", "a").unwrap(), Partition::new("local", "u1", "b").unwrap());
    for (city, date) in [("Milan", "2023-01-01"), ("Turin", "2030-01-01")] {
        let facts = json!({"entities": [{"name": "Vera Lynx", "type": "person", "attributes": {"city": city}}]});
        verb(&store, &caller(&a, 1_000), "remember", &json!({"date": date, "facts": facts})).unwrap();
    }
    let records: Vec<Value> = export_pages(&store, &a, 500).concat();
    let reply = load(&store, &b, &lines(&records));
    assert!(reply["skipped"].as_array().unwrap().is_empty(), "{reply}");
    let city = |when: &str| {
        let body = json!({"subject": "Vera Lynx", "valid_at": when});
        verb(&store, &caller(&b, NOW), "recall", &body).unwrap()["subject"]["attributes"]["city"].clone()
    };
    assert_eq!((city("2024-06-01"), city("2031-06-01")), (json!("Milan"), json!("Turin")));
}

/// A fact record carrying its attribute writes (`fact_attribute_time.rs`) goes through import's
/// path, so a loaded copy reads the fact's attributes at any valid instant as the source does.
#[test]
fn a_load_keeps_a_facts_attribute_writes() {
    let (_dir, store, part) = crate::knowledge::testing::fresh();
    for (at, role, date) in [(10, "engineer", "2020-01-01"), (30, "CTO", "2023-01-01")] {
        let body = json!({"from": "Ann", "to": "Acme", "type": "works_at", "attributes": {"role": role}, "date": date});
        verb(&store, &caller(&part, at), "relate", &body).unwrap();
    }
    let records = export_pages(&store, &part, 5000).concat();
    let (loaded, imported, reply) = both_ways(&store, &records);
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    let role = |p: &Partition, when: Value| {
        let mut body = json!({"subject": "Ann"});
        body.as_object_mut().unwrap().extend(when.as_object().cloned().unwrap_or_default());
        verb(&store, &caller(p, NOW), "recall", &body).unwrap()["facts"][0]["attributes"]["role"].clone()
    };
    for p in [&part, &loaded, &imported] {
        assert_eq!(role(p, json!({"valid_at": "2021-06-01"})), json!("engineer"), "{p:?}");
        assert_eq!(role(p, json!({})), json!("CTO"), "{p:?}");
        assert_eq!(role(p, json!({"as_of": 20, "valid_at": "2024-06-01"})), json!("engineer"), "{p:?}");
    }
    let writes = |records: &[Value]| -> Vec<Value> {
        records.iter().filter(|r| r["kind"] == "fact").map(|r| r["attribute_writes"].clone()).collect()
    };
    assert_eq!(writes(&export_pages(&store, &loaded, 5000).concat()), writes(&records), "exported again alike");
}

#[test]
fn a_load_files_every_event_under_exactly_the_names_it_spells() {
    let (_dir, store, part) = seeded();
    let mut records = export_pages(&store, &part, 5000).concat();
    // More entities and facts than the seed, so names share prefixes ("Ann", "Anna", "Ann Lee").
    for (i, name) in ["Ann", "Anna", "Ann Lee", "ann lee jr", "Zoë", "Zoe Ng"].iter().enumerate() {
        records.push(json!({"kind": "entity", "id": format!("{}", 900 + i), "name": name, "types": ["person"]}));
    }
    for (i, (from, to)) in
        [("Ann", "Anna"), ("Anna", "Ann Lee"), ("Zoë", "Ann"), ("Zoe Ng", "ann lee jr")].iter().enumerate()
    {
        records.push(json!({"kind": "fact", "id": format!("{}", 950 + i), "from_name": from, "to_name": to,
            "type": "knows", "recorded_at": "2024-01-01T00:00:00.000Z"}));
    }
    // Into a store with no event at all, so `h.name` is packed from the run as it comes.
    let (_dir2, store, _) = crate::knowledge::testing::fresh();
    let loaded = Partition::new("local", "u1", "names").unwrap();
    load(&store, &loaded, &lines(&records));
    assert!(store.check().unwrap().ok, "the packed tree checks clean");
    let snap = store.snapshot().unwrap();
    let mut want: Vec<Vec<u8>> = Vec::new();
    for item in snap.prefix(EVENT, loaded.prefix()).unwrap() {
        let event: Event = serde_json::from_slice(&item.unwrap().1).unwrap();
        for name in crate::history::names_of_event(&event) {
            want.push([crate::history::name_prefix(&loaded, &name), event.seq.to_be_bytes().to_vec()].concat());
        }
    }
    want.sort();
    let have: Vec<Vec<u8>> =
        snap.prefix(crate::history::NAME, loaded.prefix()).unwrap().map(|kv| kv.unwrap().0).collect();
    assert!(want.len() > 20, "{}", want.len());
    assert_eq!(have, want);
}

#[test]
fn facts_that_remap_ids_resolve_as_import_resolves_them() {
    // Fact ends are resolved against the entity records before the facts are planned; a fact
    // that creates an entity or maps an id changes what later ends resolve to. Here fact 12
    // maps id 2 to Ada (its name wins over the id), and fact 13 maps it back to Bob: a load that
    // kept the early answer for fact 13 would leave id 2 at Ada, and fact 14, naming only ids,
    // would then join other entities than import joins.
    let at = "2024-01-01T00:00:00.000Z";
    let fact = |id: &str, from: (&str, &str), to: (&str, &str), ty: &str| {
        json!({"kind": "fact", "id": id, "from": from.0, "from_name": from.1, "to": to.0, "to_name": to.1,
            "type": ty, "recorded_at": at})
    };
    let records = vec![
        json!({"kind": "entity", "id": "1", "name": "Ada", "types": ["person"], "recorded_at": at}),
        json!({"kind": "entity", "id": "2", "name": "Bob", "types": ["person"], "recorded_at": at}),
        fact("11", ("1", "Ada"), ("3", "Cy"), "knows"),
        fact("12", ("2", "Ada"), ("3", "Cy"), "likes"),
        fact("13", ("2", "Bob"), ("1", "Ada"), "likes"),
    ];
    let later = vec![json!({"kind": "fact", "id": "14", "from": "2", "to": "3", "type": "mentors", "recorded_at": at})];
    let (_dir, store, _) = crate::knowledge::testing::fresh();
    let (loaded, imported, _) = both_ways(&store, &records);
    for p in [&loaded, &imported] {
        verb(&store, &caller(p, NOW), "import", &json!({"records": later, "allAgents": true})).unwrap();
    }
    let exported = |p: &Partition| normalized(&export_pages(&store, p, 5000).concat());
    assert_eq!(exported(&loaded), exported(&imported));
    let mentors = verb(&store, &caller(&loaded, NOW), "recall", &json!({"subject": "Bob"})).unwrap();
    assert!(
        mentors["facts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["relation"] == json!("mentors") && f["object"] == json!("Cy")),
        "id 2 is Bob's again: {mentors}"
    );
}

#[test]
fn a_large_load_resolves_ahead_in_chunks_as_import_resolves_one_by_one() {
    // Over a megabyte of lines (parsed in two halves) and several chunks of facts in each: the
    // ends resolved on a helper a chunk ahead must meet the very lines they were resolved for, or
    // facts would join other entities than import joins.
    let at = "2024-01-01T00:00:00.000Z";
    let mut records: Vec<Value> = (0..1000)
        .map(|i| json!({"kind": "entity", "id": i.to_string(), "name": format!("Person {i:04}"), "types": ["person"]}))
        .collect();
    for i in 0..12_000u32 {
        let (from, to) = (i % 1000, (i * 7 + 1) % 1000);
        let to = if to == from { (to + 1) % 1000 } else { to };
        let ty = format!("rel_{}", i / 1000);
        records.push(json!({"kind": "fact", "id": (10_000 + i).to_string(), "from": from.to_string(),
            "from_name": format!("Person {from:04}"), "to": to.to_string(), "to_name": format!("Person {to:04}"),
            "type": ty, "recorded_at": at}));
    }
    assert!(lines(&records).len() > 1 << 20, "the body is parsed in two halves");
    let (_dir, store, _) = crate::knowledge::testing::fresh();
    let loaded = Partition::new("local", "u1", "loaded").unwrap();
    let imported = Partition::new("local", "u1", "imported").unwrap();
    let reply = load(&store, &loaded, &lines(&records));
    assert_eq!((reply["imported"]["facts"].clone(), reply["skipped"].clone()), (json!(12_000), json!([])), "{reply}");
    for page in records.chunks(1000) {
        verb(&store, &caller(&imported, NOW), "import", &json!({"records": page, "allAgents": true})).unwrap();
    }
    let exported = |p: &Partition| normalized(&export_pages(&store, p, 5000).concat());
    assert_eq!(exported(&loaded), exported(&imported));
}

/// `load_whole` (a Memory Package) stores all of a body or, when any line fails its checks,
/// nothing: the refusal names each such line, and the scope stays empty for the fixed body.
#[test]
fn a_whole_load_with_a_bad_line_stores_nothing_and_names_the_line() {
    let (_dir, source, part) = seeded();
    let mut records = export_pages(&source, &part, 5000).concat();
    let good = lines(&records);
    let fact = records.iter().position(|r| r["kind"] == json!("fact")).expect("the seed holds a fact");
    records[fact]["valid_from"] = json!("not-a-date");
    let (_a, store, into) = crate::knowledge::testing::fresh();
    let whole = |body: &[u8]| -> Value {
        serde_json::from_slice(&call(&store, "load_whole", &caller(&into, NOW), body).unwrap()).unwrap()
    };
    let reply = whole(&lines(&records));
    assert_eq!(reply["error"]["code"], json!("VALIDATION_ERROR"), "{reply}");
    let details = reply["error"]["details"].as_array().unwrap();
    assert_eq!(details.len(), 1, "{reply}");
    assert_eq!(details[0]["field"], json!(format!("line {}", fact + 1)));
    assert!(details[0]["message"].as_str().unwrap().starts_with("valid_from"), "{reply}");
    assert!(export_pages(&store, &into, 5000).concat().iter().all(|r| r["kind"] == json!("header")));
    assert!(import_events(&store, &into).is_empty(), "no history either");
    // The body as exported goes in whole.
    let fixed = whole(&good);
    assert!(fixed.get("error").is_none(), "{fixed}");
    assert!(fixed["skipped"].as_array().unwrap().is_empty());
    assert_eq!(
        normalized(&export_pages(&store, &into, 5000).concat()),
        normalized(&export_pages(&source, &part, 5000).concat())
    );
}
