//! A fact said under several provenances (`fact_sources.rs`): each is recorded, each forget
//! keeps what another still states, and export and import carry them.

use super::Partition;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, normalized, notes_verb, verb};
use crate::store::Store;
use serde_json::{Value, json};

fn call(store: &Store, part: &Partition, now: i64, name: &str, body: &Value) -> Value {
    verb(store, &caller(part, now), name, body).unwrap_or_else(|e| panic!("{name} {body}: {e}"))
}

/// `Acme located_in Berlin`, asserted under `label` (`None`: no label).
fn acme(label: Option<&str>) -> Value {
    json!({"from": "Acme", "to": "Berlin", "type": "located_in", "source": label})
}

/// The citations of Acme's facts as recall shows them at `as_of` (`None`: now).
fn cited(store: &Store, part: &Partition, as_of: Option<i64>) -> Vec<Value> {
    let mut body = json!({"subject": "Acme"});
    if let Some(t) = as_of {
        body["as_of"] = json!(t);
    }
    let reply = call(store, part, TODAY + 100, "recall", &body);
    let facts = reply["facts"].as_array().cloned().unwrap_or_default();
    facts.iter().map(|f| f["citation"]["source"]["name"].clone()).collect()
}

fn history(store: &Store, part: &Partition) -> Value {
    let body = json!({"fact": {"from": "Acme", "to": "Berlin", "type": "located_in"}});
    notes_verb(store, &caller(part, TODAY + 100), "history", &body)
}

fn kept_facts(reply: &Value) -> Option<Value> {
    let kept = reply["kept"].as_array().unwrap_or_else(|| panic!("{reply}"));
    kept.iter().find(|k| k["what"] == "facts").cloned()
}

fn copy_of(store: &Store, part: &Partition) -> Partition {
    let copy = Partition::new("local", "u1", "copy").unwrap();
    for page in export_pages(store, part, 500) {
        let reply = call(store, &copy, TODAY + 50, "import", &json!({"records": page}));
        assert_eq!(reply["skipped"], json!([]), "{reply}");
    }
    copy
}

/// Found by an audit (s30): `Acme located_in Berlin` under `press`, then `wiki`, answered
/// `already` and recorded nothing of `wiki`; forgetting `press` took the fact `wiki` states, and
/// forgetting `wiki` was a 404. The second source is a revision (a `merge` event, the version
/// before kept for `as_of`); each forget keeps the fact while the other is left, in either
/// order, in the store and in a copy of it, and the forgotten label is read nowhere.
#[test]
fn a_fact_said_again_under_another_source_is_that_sources_too() {
    for (first, second) in [("press", "wiki"), ("wiki", "press")] {
        let (_dir, store, part) = fresh();
        assert_eq!(call(&store, &part, TODAY, "relate", &acme(Some("press")))["created"], json!(true));
        let again = call(&store, &part, TODAY + 10, "relate", &acme(Some("wiki")));
        assert_eq!((&again["created"], &again["already"]), (&json!(false), &json!(false)), "{again}");
        assert_eq!(call(&store, &part, TODAY + 20, "relate", &acme(Some("wiki")))["already"], json!(true));
        assert_eq!(call(&store, &part, TODAY + 20, "relate", &acme(Some("press")))["already"], json!(true));
        let ops: Vec<Value> =
            history(&store, &part)["events"].as_array().unwrap().iter().map(|e| e["op"].clone()).collect();
        assert_eq!(ops, [json!("assert"), json!("merge")], "one event a provenance");
        assert_eq!(cited(&store, &part, Some(TODAY + 5)), [json!("press")], "the version before, as of then");
        let copy = copy_of(&store, &part);
        for scope in [&part, &copy] {
            let kept = call(&store, scope, TODAY + 30, "forget", &json!({"source": first}));
            assert_eq!(kept["forgotten"]["facts"], json!(0), "{kept}");
            let reason = kept_facts(&kept).unwrap_or_else(|| panic!("{kept}"));
            assert_eq!(reason["count"], json!(1), "{kept}");
            assert!(reason["why"].as_str().unwrap().contains("another source states them too"), "{kept}");
            assert_eq!(cited(&store, scope, None), [json!(second)], "{second} still states it");
            let said = format!("\"{first}\"");
            let events = history(&store, scope).to_string();
            assert!(!events.contains(&said), "{events}");
            let exported = serde_json::to_string(&export_pages(&store, scope, 500)).unwrap();
            assert!(!exported.contains(&said), "{exported}");
            let gone = call(&store, scope, TODAY + 40, "forget", &json!({"source": second}));
            assert_eq!(gone["forgotten"]["facts"], json!(1), "{gone}");
            assert_eq!(kept_facts(&gone), None, "{gone}");
            assert_eq!(cited(&store, scope, None), Vec::<Value>::new());
            let again = call(&store, scope, TODAY + 50, "forget", &json!({"source": second}));
            assert_eq!(again, json!({"state": "already_forgotten"}));
            let again = call(&store, scope, TODAY + 50, "forget", &json!({"source": first}));
            assert_eq!(again, json!({"state": "already_forgotten"}));
        }
    }
}

/// A provenance is a document, else a label, else none: unlabelled and labelled are two, and
/// the same one again writes nothing.
#[test]
fn an_unlabelled_assertion_is_a_provenance_of_its_own() {
    let (_dir, store, part) = fresh();
    call(&store, &part, TODAY, "relate", &acme(None));
    assert_eq!(call(&store, &part, TODAY + 10, "relate", &acme(None))["already"], json!(true));
    assert_eq!(call(&store, &part, TODAY + 10, "relate", &acme(Some("press")))["already"], json!(false));
    assert_eq!(call(&store, &part, TODAY + 20, "relate", &acme(None))["already"], json!(true));
    let kept = call(&store, &part, TODAY + 30, "forget", &json!({"source": "press"}));
    assert_eq!(kept_facts(&kept).map(|k| k["count"].clone()), Some(json!(1)), "{kept}");
    assert_eq!(cited(&store, &part, None), [Value::Null], "asserted with no label");
}

fn remembered(label: &str, text: &str) -> Value {
    json!({"source": label, "content": text,
           "facts": {"relations": [{"source": "Acme", "target": "Berlin", "type": "located_in"}]}})
}

fn doc_id(store: &Store, part: &Partition) -> Value {
    let reply = call(store, part, TODAY + 100, "recall", &json!({"subject": "Acme"}));
    reply["facts"][0]["citation"]["source"]["doc_id"].clone()
}

/// Two documents stating one fact are two provenances; forgetting the document the fact cites
/// (`passage`) promotes the other instead of leaving a citation to a forgotten document, and
/// an assertion stated before a document is kept when the document goes.
#[test]
fn forgetting_the_cited_document_promotes_another_provenance() {
    let (_dir, store, part) = fresh();
    call(&store, &part, TODAY, "remember", &remembered("press", "Acme is located in Berlin, says the press."));
    let first = doc_id(&store, &part);
    let again = call(&store, &part, TODAY + 10, "remember", &remembered("blog", "Acme sits in Berlin, a blog says."));
    assert_eq!(again["already"], json!(false), "{again}");
    call(&store, &part, TODAY + 20, "relate", &acme(Some("wiki")));
    let reply = call(&store, &part, TODAY + 30, "forget", &json!({"passage": first}));
    let kept = kept_facts(&reply).unwrap_or_else(|| panic!("{reply}"));
    assert!(kept["why"].as_str().unwrap().contains("another source states them too"), "{reply}");
    let now = call(&store, &part, TODAY + 100, "recall", &json!({"subject": "Acme"}));
    let citation = &now["facts"][0]["citation"];
    assert_eq!(citation["source"]["name"], json!("blog"), "{now}");
    assert!(citation["span"]["text"].as_str().is_some_and(|t| t.contains("Berlin")), "{now}");
    let reply = call(&store, &part, TODAY + 40, "forget", &json!({"source": "blog"}));
    assert_eq!(reply["forgotten"]["facts"], json!(0), "{reply}");
    assert_eq!(cited(&store, &part, None), [json!("wiki")]);
    let reply = call(&store, &part, TODAY + 50, "forget", &json!({"source": "wiki"}));
    assert_eq!(reply["forgotten"]["facts"], json!(1), "{reply}");
}

/// Export gives each fact its other provenances (documents by their ids in the export);
/// importing twice stores them once, and a copy exports what its source did.
#[test]
fn export_and_import_carry_every_provenance() {
    let (_dir, store, part) = fresh();
    call(&store, &part, TODAY, "relate", &acme(Some("wiki")));
    call(&store, &part, TODAY + 10, "remember", &remembered("press", "Acme is located in Berlin, says the press."));
    call(&store, &part, TODAY + 20, "relate", &acme(None));
    let pages = export_pages(&store, &part, 500);
    let records: Vec<Value> = pages.concat();
    let fact = records.iter().find(|r| r["kind"] == "fact" && r.get("version_of").is_none()).unwrap();
    let also = fact["provenance"]["also"].as_array().unwrap_or_else(|| panic!("{fact}"));
    let labels: Vec<&Value> = also.iter().map(|a| &a["label"]).collect();
    assert_eq!((&fact["provenance"]["label"], labels), (&json!("press"), vec![&json!("wiki"), &Value::Null]));
    assert_eq!(also[0]["recorded_at"], json!("2026-05-28T20:26:40.000Z"), "{fact}");
    let copy = copy_of(&store, &part);
    for page in &pages {
        let reply = call(&store, &copy, TODAY + 60, "import", &json!({"records": page}));
        assert_eq!(reply["imported"]["facts"], json!(0), "{reply}");
    }
    let back: Vec<Value> = export_pages(&store, &copy, 500).concat();
    assert_eq!(normalized(&back), normalized(&records));
    // `load` leaves the lines its fast path does not read (`provenance.also`) to import.
    let loaded = Partition::new("local", "u1", "loaded").unwrap();
    let body: Vec<u8> =
        records.iter().flat_map(|r| [serde_json::to_vec(r).unwrap(), b"\n".to_vec()].concat()).collect();
    let reply = super::api::call(&store, "load", &caller(&loaded, TODAY + 60), &body).unwrap();
    let reply: Value = serde_json::from_slice(&reply).unwrap();
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    assert_eq!(normalized(&export_pages(&store, &loaded, 500).concat()), normalized(&records));
    let reply = call(&store, &copy, TODAY + 70, "forget", &json!({"source": "press"}));
    assert_eq!(kept_facts(&reply).map(|k| k["count"].clone()), Some(json!(1)), "{reply}");
    assert_eq!(cited(&store, &copy, None), [json!("wiki")]);
}

/// A record merging into a fact stored here already adds the provenances it lacks; an `also`
/// entry is checked as the rest of a record (a field it may not hold, a time to come).
#[test]
fn import_merges_provenances_and_checks_each() {
    let (_dir, store, part) = fresh();
    call(&store, &part, TODAY, "relate", &acme(Some("press")));
    let other = Partition::new("local", "u1", "other").unwrap();
    call(&store, &other, TODAY, "relate", &acme(Some("wiki")));
    for page in export_pages(&store, &other, 500) {
        let reply = call(&store, &part, TODAY + 10, "import", &json!({"records": page}));
        assert_eq!(reply["imported"]["facts"], json!(1), "{reply}");
    }
    let kept = call(&store, &part, TODAY + 20, "forget", &json!({"source": "press"}));
    assert_eq!(kept_facts(&kept).map(|k| k["count"].clone()), Some(json!(1)), "{kept}");
    let mut fact = export_pages(&store, &part, 500).concat().into_iter().find(|r| r["kind"] == "fact").unwrap();
    for (also, field) in [
        (
            json!([{"kind": "asserted", "label": "x", "recorded_at": "2020-01-01T00:00:00.000Z", "evil": 1}]),
            "provenance.also[0].evil",
        ),
        (
            json!([{"kind": "asserted", "label": "x", "recorded_at": "2999-01-01T00:00:00.000Z"}]),
            "provenance.also[0].recorded_at",
        ),
        (json!([{"kind": "asserted", "label": "x"}]), "provenance.also[0].recorded_at"),
        (json!({"kind": "asserted"}), "provenance.also"),
    ] {
        fact["provenance"]["also"] = also;
        let reply = call(&store, &other, TODAY + 30, "import", &json!({"records": [fact.clone()]}));
        let reason = reply["skipped"][0]["reason"].as_str().unwrap_or_else(|| panic!("{reply}"));
        assert!(reason.starts_with(field), "{reason}");
    }
}
