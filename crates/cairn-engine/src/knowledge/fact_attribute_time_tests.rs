//! A fact's attributes in valid time (`fact_attribute_time.rs`), through the verbs: each write
//! holds from the start it states, `as_of` reads the writes known then, a copy made by export and
//! import answers as its source does, and a fact never revised keeps its record as it was.

use super::Partition;
use super::testing::{TODAY, fresh};
use super::testing_api::{caller, export_pages, normalized, notes_verb, verb};
use super::trees::REL;
use crate::store::Store;
use serde_json::{Value, json};

const DAY: i64 = 86_400_000;

/// `relate` Ann → Acme `works_at` with `attributes` (and `date`, when given) at `now`.
fn works_at(store: &Store, part: &Partition, now: i64, attributes: &Value, date: Option<&str>) -> Value {
    let mut body = json!({"from": "Ann", "to": "Acme", "type": "works_at", "attributes": attributes});
    if let Some(d) = date {
        body["date"] = json!(d);
    }
    verb(store, &caller(part, now), "relate", &body).unwrap()
}

/// The attributes of Ann's `works_at` fact as a recall at `TODAY` with `when` shows them
/// (`None`: the recall finds no such fact).
fn job(store: &Store, part: &Partition, when: &Value) -> Option<Value> {
    let mut body = json!({"subject": "Ann"});
    body.as_object_mut().unwrap().extend(when.as_object().unwrap().clone());
    let reply = verb(store, &caller(part, TODAY), "recall", &body).unwrap();
    let facts = reply["facts"].as_array().unwrap();
    facts.iter().find(|f| f["relation"] == "works_at").map(|f| f["attributes"].clone())
}

fn default_part() -> Partition {
    Partition::new("local", "u1", "default").unwrap()
}

/// The audit's calls: engineer from 2020, CTO from 2023. In 2021 she was an engineer.
#[test]
fn each_value_holds_from_the_date_it_was_stated() {
    let (_dir, store, _) = fresh();
    let part = default_part();
    works_at(&store, &part, TODAY - 10 * DAY, &json!({"role": "engineer"}), Some("2020-01-01"));
    let second = works_at(&store, &part, TODAY - 5 * DAY, &json!({"role": "CTO"}), Some("2023-01-01"));
    assert_eq!(second["fact"]["attributes"], json!({"role": "CTO"}), "{second}");
    assert_eq!(second["fact"]["valid_from"], "2020-01-01", "the fact's interval stays");
    assert_eq!(job(&store, &part, &json!({"valid_at": "2021-06-01"})), Some(json!({"role": "engineer"})));
    assert_eq!(job(&store, &part, &json!({"valid_at": "2024-06-01"})), Some(json!({"role": "CTO"})));
    assert_eq!(job(&store, &part, &json!({})), Some(json!({"role": "CTO"})));
    assert_eq!(job(&store, &part, &json!({"valid_at": "2019-06-01"})), None, "before the fact");
    // Known before the second write: an engineer, whenever.
    let before = TODAY - 7 * DAY;
    for when in [json!({"as_of": before}), json!({"as_of": before, "valid_at": "2024-06-01"})] {
        assert_eq!(job(&store, &part, &when), Some(json!({"role": "engineer"})), "{when}");
    }
    assert_eq!(
        job(&store, &part, &json!({"as_of": TODAY, "valid_at": "2021-06-01"})),
        Some(json!({"role": "engineer"}))
    );
    // Context's fact items read the same way.
    let context = |when: Value| {
        let mut body = json!({"question": "Where does Ann work?"});
        body.as_object_mut().unwrap().extend(when.as_object().unwrap().clone());
        let reply = verb(&store, &caller(&part, TODAY), "context", &body).unwrap();
        let items = reply["items"].as_array().unwrap().clone();
        items.into_iter().find(|i| i["relation"] == "works_at").map(|i| i["attributes"].clone())
    };
    assert_eq!(context(json!({"valid_at": "2021-06-01"})), Some(json!({"role": "engineer"})));
    assert_eq!(context(json!({})), Some(json!({"role": "CTO"})));
}

/// Said again with the value already true at the stated date, the fact changes nothing.
#[test]
fn a_value_already_true_at_its_date_is_no_news() {
    let (_dir, store, _) = fresh();
    let part = default_part();
    works_at(&store, &part, TODAY - 10 * DAY, &json!({"role": "engineer"}), Some("2020-01-01"));
    works_at(&store, &part, TODAY - 9 * DAY, &json!({"role": "CTO"}), Some("2023-01-01"));
    for (role, date) in [("CTO", "2024-01-01"), ("engineer", "2021-01-01"), ("CTO", "2023-01-01")] {
        let again = works_at(&store, &part, TODAY - 8 * DAY, &json!({"role": role}), Some(date));
        assert_eq!(again["already"], true, "{role} {date}: {again}");
    }
}

/// A write without a date holds from when it was written: a key it adds was not there before.
#[test]
fn an_undated_write_holds_from_when_it_was_written() {
    let (_dir, store, _) = fresh();
    let part = default_part();
    works_at(&store, &part, TODAY - 10 * DAY, &json!({"role": "engineer"}), Some("2020-01-01"));
    let written = TODAY - 2 * DAY;
    works_at(&store, &part, written, &json!({"team": "infra"}), None);
    let at = |ms: i64| json!({"valid_at": super::iso_ms(ms)});
    assert_eq!(job(&store, &part, &at(written - 1)), Some(json!({"role": "engineer"})));
    assert_eq!(job(&store, &part, &at(written)), Some(json!({"role": "engineer", "team": "infra"})));
    assert_eq!(job(&store, &part, &json!({})), Some(json!({"role": "engineer", "team": "infra"})));
}

/// A write dated before a later one of the same key (older news) holds only until that one
/// starts, and only for the keys it sets; one dated before the fact starts moves its start there.
#[test]
fn older_news_holds_until_the_later_write_starts() {
    let (_dir, store, _) = fresh();
    let part = default_part();
    works_at(&store, &part, TODAY - 10 * DAY, &json!({"role": "engineer", "team": "core"}), Some("2020-01-01"));
    works_at(&store, &part, TODAY - 9 * DAY, &json!({"role": "CTO"}), Some("2023-01-01"));
    works_at(&store, &part, TODAY - 8 * DAY, &json!({"role": "VP"}), Some("2021-01-01"));
    let at = |day: &str| job(&store, &part, &json!({"valid_at": day}));
    assert_eq!(at("2020-06-01"), Some(json!({"role": "engineer", "team": "core"})));
    assert_eq!(at("2022-06-01"), Some(json!({"role": "VP", "team": "core"})));
    assert_eq!(at("2024-06-01"), Some(json!({"role": "CTO", "team": "core"})));
    assert_eq!(job(&store, &part, &json!({})), Some(json!({"role": "CTO", "team": "core"})));
    let intern = works_at(&store, &part, TODAY - 7 * DAY, &json!({"role": "intern"}), Some("2018-01-01"));
    assert_eq!(intern["fact"]["valid_from"], "2018-01-01");
    assert_eq!(intern["fact"]["attributes"], json!({"role": "CTO", "team": "core"}), "true now: {intern}");
    assert_eq!(at("2019-06-01"), Some(json!({"role": "intern"})), "team was stated from 2020");
    assert_eq!(at("2020-06-01"), Some(json!({"role": "engineer", "team": "core"})));
}

/// `remember` says a fact again as `relate` does: its write keeps its date.
#[test]
fn remember_keeps_each_write_with_its_date() {
    let (_dir, store, _) = fresh();
    let part = default_part();
    for (at, role, date) in [(TODAY - 10 * DAY, "engineer", "2020-01-01"), (TODAY - 9 * DAY, "CTO", "2023-01-01")] {
        let rel = json!({"source": "Ann", "target": "Acme", "type": "works_at", "attributes": {"role": role}});
        let body = json!({"date": date, "facts": {"relations": [rel]}});
        verb(&store, &caller(&part, at), "remember", &body).unwrap();
    }
    assert_eq!(job(&store, &part, &json!({"valid_at": "2021-06-01"})), Some(json!({"role": "engineer"})));
    assert_eq!(job(&store, &part, &json!({})), Some(json!({"role": "CTO"})));
}

/// A copy made by export and import answers reads at any valid instant as its source does, and
/// exports the same records again.
#[test]
fn a_copy_reads_the_writes_as_its_source_does() {
    let (_dir, store, _) = fresh();
    let (a, b) = (Partition::new("local", "u1", "a").unwrap(), Partition::new("local", "u1", "b").unwrap());
    works_at(&store, &a, TODAY - 10 * DAY, &json!({"role": "engineer"}), Some("2020-01-01"));
    works_at(&store, &a, TODAY - 9 * DAY, &json!({"role": "CTO"}), Some("2023-01-01"));
    works_at(&store, &a, TODAY - 8 * DAY, &json!({"team": "infra"}), None);
    let records: Vec<Value> = export_pages(&store, &a, 500).concat();
    let fact = records.iter().find(|r| r["kind"] == "fact" && r.get("version_of").is_none()).unwrap();
    assert_eq!(fact["attribute_writes"].as_array().map(Vec::len), Some(3), "{fact}");
    let imported = verb(&store, &caller(&b, TODAY), "import", &json!({"records": records})).unwrap();
    assert!(imported["skipped"].as_array().unwrap().is_empty(), "{imported}");
    for when in [
        json!({}),
        json!({"valid_at": "2021-06-01"}),
        json!({"valid_at": "2024-06-01"}),
        json!({"valid_at": super::iso_ms(TODAY - 8 * DAY)}),
        json!({"as_of": TODAY - 9 * DAY, "valid_at": "2024-06-01"}),
    ] {
        assert_eq!(job(&store, &b, &when), job(&store, &a, &when), "{when}");
    }
    assert_eq!(job(&store, &b, &json!({"valid_at": "2021-06-01"})), Some(json!({"role": "engineer"})));
    let again: Vec<Value> = export_pages(&store, &b, 500).concat();
    assert_eq!(normalized(&again), normalized(&records));
}

/// A fact never revised stores no list (its record is as before the list was kept) and, like a
/// stored record that has none, reads its attributes as set at its start.
#[test]
fn a_fact_without_writes_reads_its_attributes_from_its_start() {
    let (_dir, store, _) = fresh();
    let part = default_part();
    let first = works_at(&store, &part, TODAY - 10 * DAY, &json!({"role": "engineer"}), Some("2020-01-01"));
    let again = works_at(&store, &part, TODAY - 9 * DAY, &json!({"role": "engineer"}), Some("2023-01-01"));
    assert_eq!(again["already"], true);
    let id: u64 = first["fact"]["id"].as_str().unwrap().parse().unwrap();
    let bytes = store.snapshot().unwrap().get(REL, &part.key(&[&id.to_be_bytes()])).unwrap().unwrap();
    let stored: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(stored.get("attribute_writes").is_none(), "{stored}");
    for when in [json!({}), json!({"valid_at": "2020-01-01"}), json!({"valid_at": "2024-06-01"})] {
        assert_eq!(job(&store, &part, &when), Some(json!({"role": "engineer"})), "{when}");
    }
}

/// The fact's history shows, beside each version's last values, the writes and their starts.
#[test]
fn history_shows_the_writes_of_a_revised_fact() {
    let (_dir, store, _) = fresh();
    let part = default_part();
    works_at(&store, &part, TODAY - 10 * DAY, &json!({"role": "engineer"}), Some("2020-01-01"));
    works_at(&store, &part, TODAY - 9 * DAY, &json!({"role": "CTO"}), Some("2023-01-01"));
    let body = json!({"fact": {"from": "Ann", "to": "Acme", "type": "works_at"}});
    let history = notes_verb(&store, &caller(&part, TODAY), "history", &body);
    let events = history["events"].as_array().unwrap_or_else(|| panic!("{history}"));
    let merge = events.iter().find(|e| e["op"] == "merge").unwrap_or_else(|| panic!("{history}"));
    assert_eq!(
        merge["after"]["attribute_writes"],
        json!([
            {"attributes": {"role": "engineer"}, "from": "2020-01-01", "recorded_at": super::iso_ms(TODAY - 10 * DAY)},
            {"attributes": {"role": "CTO"}, "from": "2023-01-01", "recorded_at": super::iso_ms(TODAY - 9 * DAY)},
        ]),
        "{merge}"
    );
    assert!(merge["before"].get("attribute_writes").is_none(), "{merge}");
}

/// A fact record whose writes do not read is skipped naming the field, and nothing is stored.
#[test]
fn bad_fact_writes_skip_the_record_naming_the_field() {
    let (_dir, store, _) = fresh();
    let b = Partition::new("local", "u1", "b").unwrap();
    let at = "2024-01-01T00:00:00.000Z";
    for (writes, field) in [
        (json!([{"attributes": {"k": 1}, "from": "yesterday", "recorded_at": at}]), "attribute_writes[0].from"),
        (json!([{"attributes": {"k": 1}, "from": null}]), "attribute_writes[0].recorded_at"),
        (json!([{"attributes": [], "from": null, "recorded_at": at}]), "attribute_writes[0].attributes"),
        (json!([{"attributes": {}, "from": null, "recorded_at": at, "source": "hr"}]), "attribute_writes[0].source"),
        (json!("all"), "attribute_writes"),
    ] {
        let record = json!({"kind": "fact", "id": "9", "from": "1", "to": "2", "from_name": "Ann", "to_name": "Acme",
                            "type": "works_at", "attributes": {"k": 1}, "valid_from": null, "valid_to": null,
                            "recorded_at": at, "provenance": {"kind": "asserted", "label": null, "agent": "a"},
                            "attribute_writes": writes});
        let r = verb(&store, &caller(&b, TODAY), "import", &json!({"records": [record]})).unwrap();
        let why = r["skipped"][0]["reason"].as_str().unwrap_or_else(|| panic!("{r}"));
        assert!(why.starts_with(field), "{field}: {r}");
        assert_eq!(r["imported"]["facts"], 0, "{r}");
    }
}
