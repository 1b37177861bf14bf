//! `memory_relate`: one typed edge `from` → `to`, missing entities created. `replaces: true` ends
//! the subject's other edges of that type at the call's date in valid time (kept for `as_of` and
//! `valid_at` reads), and asserting an ended edge again restores it from that date. An assertion
//! dated before edges that start later is older news: it is kept in history, valid until the
//! first of them starts, and ends none of them (knowledge-verbs.md "Valid time").

use super::{Caller, parse};
use crate::error::{Error, Result};
use crate::history::{Change, record};
use crate::knowledge::citation::Citer;
use crate::knowledge::graph::{self, Assertion, Direction, Relation, Source, entity_by_id, relation_by_id};
use crate::knowledge::limits::MAX_NAME_LEN;
use crate::knowledge::relate;
use crate::knowledge::valid::check_interval;
use crate::knowledge::wire::{self, FoundBy, check_date};
use crate::store::Store;
use crate::text::fold;
use crate::write::WriteTxn;
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Debug, Deserialize)]
struct Request {
    from: String,
    to: String,
    #[serde(rename = "type")]
    rel_type: String,
    attributes: Option<Map<String, Value>>,
    #[serde(default)]
    replaces: bool,
    date: Option<String>,
    source: Option<String>,
}

fn check(req: &Request) -> Result<()> {
    for (field, value) in [("from", &req.from), ("to", &req.to), ("type", &req.rel_type)] {
        let len = value.trim().len();
        if len == 0 || len > MAX_NAME_LEN {
            return Err(Error::InvalidArgument(format!("{field} must be 1..={MAX_NAME_LEN} bytes, got {len}")));
        }
    }
    if fold(&req.from) == fold(&req.to) {
        return Err(Error::InvalidArgument("from and to name the same entity".into()));
    }
    if let Some(s) = &req.source
        && (s.trim().is_empty() || s.len() > MAX_NAME_LEN)
    {
        return Err(Error::InvalidArgument(format!("source must be 1..={MAX_NAME_LEN} bytes")));
    }
    if let Some(d) = &req.date {
        check_date("date", d)?;
    }
    check_interval("attributes", req.attributes.as_ref(), req.date.as_deref())
}

/// What the write did.
struct Done {
    relation: Relation,
    created: bool,
    ended: Vec<u64>,
    restored: Vec<u64>,
    /// Live edges newer than this assertion: it ends when the first of them starts.
    newer: Vec<u64>,
}

fn write(tx: &mut WriteTxn<'_>, caller: &Caller, req: &Request) -> Result<Done> {
    let part = &caller.part;
    part.register(tx)?;
    let mut attrs = req.attributes.clone().unwrap_or_default();
    attrs.retain(|_, v| !v.is_null());
    if let Some(d) = &req.date {
        attrs.entry("valid_from").or_insert_with(|| Value::String(d.clone()));
    }
    let a = Assertion {
        from: &req.from,
        to: &req.to,
        rel_type: &req.rel_type,
        attributes: &attrs,
        source: Source::Asserted { label: req.source.clone() },
        agent: &caller.agent,
        replaces: req.replaces,
    };
    let missing: Vec<&str> = [req.from.as_str(), req.to.as_str()]
        .into_iter()
        .filter(|n| graph::entity_id_in(tx, part, n).is_ok_and(|id| id.is_none()))
        .collect();
    let related = relate(tx, part, a, caller.now)?;
    for name in missing {
        if let Some(e) = graph::entity_by_name_in(tx, part, name)? {
            let after = Some(serde_json::to_value(&e).expect("entities serialise"));
            record(tx, caller, Change { family: "entity", target: &e.name, op: "create", after, ..Change::default() })?;
        }
    }
    let target = format!("{}\0{}\0{}", req.from.trim(), related.relation.rel_type, req.to.trim());
    let patch = json!({
        "from": req.from, "to": req.to, "type": req.rel_type, "attributes": req.attributes,
        "replaces": req.replaces, "date": req.date, "source": req.source,
    });
    for &ended in &related.ended {
        if let Some(rel) = graph::relation_in(tx, part, ended)? {
            // Filed under the ended fact's own target, so its history shows how it ended.
            let name = |tx: &mut WriteTxn<'_>, id: u64| -> Result<String> {
                Ok(graph::entity_in(tx, part, id)?.map_or_else(|| id.to_string(), |e| e.name))
            };
            let own = format!("{}\0{}\0{}", name(tx, rel.from)?, rel.rel_type, name(tx, rel.to)?);
            let before = Relation {
                valid_to: rel.shortened.as_ref().map_or_else(|| rel.valid_to.clone(), |s| s.valid_to.clone()),
                ended_at: rel.ended_at.filter(|&end| end != caller.now),
                shortened: None,
                ..rel.clone()
            };
            let change = Change {
                family: "fact",
                target: &own,
                op: "end",
                before: Some(serde_json::to_value(&before).expect("relations serialise")),
                after: Some(serde_json::to_value(&rel).expect("relations serialise")),
                patch: Some(patch.clone()),
            };
            record(tx, caller, change)?;
        }
    }
    let op = match (related.created, related.restored.is_some()) {
        (true, true) => "restore",
        (true, false) => "assert",
        (false, _) => "merge",
    };
    let change = Change {
        family: "fact",
        target: &target,
        op,
        before: None,
        after: Some(serde_json::to_value(&related.relation).expect("relations serialise")),
        patch: Some(patch),
    };
    record(tx, caller, change)?;
    Ok(Done {
        relation: related.relation,
        created: related.created,
        ended: related.ended,
        restored: related.restored.into_iter().collect(),
        newer: related.superseded_by,
    })
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let req: Request = parse("relate", body)?;
    check(&req)?;
    let who = caller.clone();
    let (done, _) = store.write(move |tx| write(tx, &who, &req))?;
    let snap = store.snapshot()?;
    let part = &caller.part;
    let mut citer = Citer::new(&snap, part, false);
    let mut shape = |rel: &Relation| -> Result<Value> {
        let name = |id| -> Result<String> { Ok(entity_by_id(&snap, part, id)?.map_or_else(String::new, |e| e.name)) };
        let names = (name(rel.from)?, name(rel.to)?);
        let citation = citer.relation(rel, (&names.0, &names.1))?;
        let by = FoundBy { seed: &names.0, hops: 0, reasoning: None };
        Ok(wire::fact(rel, (&names.0, &names.1), Direction::Outbound, None, &citation, &by))
    };
    let mut list = |ids: &[u64]| -> Result<Vec<Value>> {
        let mut out = Vec::new();
        for &id in ids {
            if let Some(rel) = relation_by_id(&snap, part, id)? {
                out.push(shape(&rel)?);
            }
        }
        Ok(out)
    };
    let ended = list(&done.ended)?;
    let restored = list(&done.restored)?;
    let superseded_by = list(&done.newer)?;
    Ok(json!({
        "fact": shape(&done.relation)?,
        "created": done.created,
        "ended": ended,
        "restored": restored,
        "superseded_by": superseded_by,
    }))
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{TODAY, call, caller, fresh};
    use serde_json::json;

    #[test]
    fn replaces_ends_reports_and_restores() {
        let (_dir, store, _part) = fresh();
        let first =
            call(&store, &caller(10), "relate", &json!({"from": "Priya", "to": "Acme", "type": "works_at"})).unwrap();
        assert_eq!(first["created"], json!(true));
        assert_eq!(first["fact"]["subject"], json!("Priya"));
        assert_eq!(first["fact"]["object"], json!("Acme"));
        assert_eq!(first["fact"]["recorded_at"], json!("1970-01-01T00:00:00.010Z"));
        let body = json!({"from": "Priya", "to": "Globex", "type": "works_at", "replaces": true, "source": "hr"});
        let second = call(&store, &caller(20), "relate", &body).unwrap();
        assert_eq!(second["ended"].as_array().unwrap().len(), 1);
        assert_eq!(second["ended"][0]["id"], first["fact"]["id"]);
        assert_eq!(second["ended"][0]["ended_at"], json!("1970-01-01T00:00:00.020Z"));
        assert_eq!(second["fact"]["citation"]["source"]["name"], json!("hr"));
        let back = call(
            &store,
            &caller(30),
            "relate",
            &json!({"from": "Priya", "to": "Acme", "type": "works_at", "replaces": true}),
        )
        .unwrap();
        assert_eq!(back["restored"][0]["id"], first["fact"]["id"]);
        assert_eq!(back["ended"][0]["id"], second["fact"]["id"]);
        let then = call(&store, &caller(40), "recall", &json!({"subject": "Priya", "as_of": 25})).unwrap();
        let objects: Vec<&str> =
            then["facts"].as_array().unwrap().iter().map(|f| f["object"].as_str().unwrap()).collect();
        assert_eq!(objects, vec!["Globex"], "as_of reads what was known then");
        let events = store.snapshot().unwrap().tree_len(crate::history::EVENT).unwrap();
        assert_eq!(events, 3 + 3 + 2, "three entities, three asserts or restores, two ends");
    }

    #[test]
    fn an_older_assertion_is_history_that_ends_when_the_newer_starts() {
        let (_dir, store, _part) = fresh();
        let newer =
            json!({"from": "Priya", "to": "Globex", "type": "works_at", "replaces": true, "date": "2025-01-01"});
        call(&store, &caller(10), "relate", &newer).unwrap();
        let older = json!({"from": "Priya", "to": "Acme", "type": "works_at", "replaces": true, "date": "2023-01-01"});
        let r = call(&store, &caller(20), "relate", &older).unwrap();
        assert_eq!(r["ended"], json!([]), "older news ends nothing");
        assert_eq!(r["fact"]["valid_from"], json!("2023-01-01"));
        assert_eq!(r["fact"]["valid_to"], json!("2025-01-01"));
        assert_eq!(r["superseded_by"][0]["object"], json!("Globex"));
        let at = |d: &str| -> Vec<String> {
            let r = call(&store, &caller(30), "recall", &json!({"subject": "Priya", "valid_at": d})).unwrap();
            r["facts"].as_array().unwrap().iter().map(|f| f["object"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(at("2024-06-01"), vec!["Acme"]);
        assert_eq!(at("2025-06-01"), vec!["Globex"]);
        assert!(at("2022-06-01").is_empty());
    }

    /// The objects `recall` answers for `subject` at `valid_at` (`None`: a plain recall).
    fn objects_at(store: &crate::store::Store, subject: &str, valid_at: Option<&str>) -> Vec<String> {
        let mut body = json!({"subject": subject});
        if let Some(at) = valid_at {
            body["valid_at"] = json!(at);
        }
        let r = call(store, &caller(TODAY), "recall", &body).unwrap();
        r["facts"].as_array().unwrap().iter().map(|f| f["object"].as_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn as_of_before_a_replace_reads_the_end_known_then_and_the_ended_fact_keeps_its_history() {
        // The re-audit's calls: Oslo from 2019; later, Bergen replaces it from 2024.
        let (_dir, store, _part) = fresh();
        let relate = |at: i64, body: serde_json::Value| call(&store, &caller(at), "relate", &body).unwrap();
        relate(
            10,
            json!({"from": "Kim", "to": "Oslo", "type": "lives_in", "attributes": {"valid_from": "2019-01-01"}}),
        );
        relate(20, json!({"from": "Kim", "to": "Bergen", "type": "lives_in", "replaces": true, "date": "2024-01-01"}));
        let read = |body: serde_json::Value| call(&store, &caller(30), "recall", &body).unwrap()["facts"].clone();
        let then = read(json!({"subject": "Kim", "as_of": 15}));
        assert_eq!((&then[0]["object"], &then[0]["valid_to"]), (&json!("Oslo"), &json!(null)), "{then}");
        assert!(then[0].get("ended_at").is_none(), "{then}");
        let then_2025 = read(json!({"subject": "Kim", "as_of": 15, "valid_at": "2025-06-01"}));
        assert_eq!(then_2025[0]["object"], json!("Oslo"), "at 15 Oslo had no end: {then_2025}");
        let now_2025 = read(json!({"subject": "Kim", "valid_at": "2025-06-01"}));
        assert_eq!(now_2025[0]["object"], json!("Bergen"), "{now_2025}");
        let history = crate::notes::api::call(
            &store,
            "history",
            &caller(30),
            br#"{"fact": {"from": "Kim", "to": "Oslo", "type": "lives_in"}}"#,
        )
        .unwrap();
        let history: serde_json::Value = serde_json::from_slice(&history).unwrap();
        let events = history["events"].as_array().unwrap();
        assert_eq!(events.iter().map(|e| e["op"].as_str().unwrap()).collect::<Vec<_>>(), ["assert", "end"]);
        assert_eq!(events[1]["before"]["valid_to"], json!(null));
        assert_eq!(events[1]["after"]["valid_to"], json!("2024-01-01"));
    }

    #[test]
    fn valid_at_answers_the_interval_the_user_stated() {
        // The audit's calls (issue 3 item 6): Paris from 2020, Berlin from 2023, Paris again
        // from 2025, then older news: Rome from 2010.
        let (_dir, store, _part) = fresh();
        let relate = |at: i64, body: serde_json::Value| call(&store, &caller(at), "relate", &body).unwrap();
        let paris = relate(
            10,
            json!({"from": "Ana", "to": "Paris", "type": "lives_in", "attributes": {"valid_from": "2020-01-01"}}),
        );
        let berlin = relate(
            20,
            json!({"from": "Ana", "to": "Berlin", "type": "lives_in", "replaces": true, "date": "2023-03-01"}),
        );
        assert_eq!(berlin["ended"][0]["id"], paris["fact"]["id"]);
        assert_eq!(berlin["ended"][0]["valid_to"], json!("2023-03-01"), "ended in valid time at the call's date");
        assert_eq!(berlin["ended"][0]["ended_at"], json!("1970-01-01T00:00:00.020Z"), "and in transaction time now");
        assert_eq!(objects_at(&store, "Ana", Some("2021-06-01")), vec!["Paris"]);
        assert_eq!(objects_at(&store, "Ana", Some("2024-01-01")), vec!["Berlin"]);
        let back = relate(
            30,
            json!({"from": "Ana", "to": "Paris", "type": "lives_in", "replaces": true, "date": "2025-01-01"}),
        );
        assert_eq!(back["restored"][0]["id"], paris["fact"]["id"]);
        assert_eq!(back["fact"]["valid_from"], json!("2025-01-01"), "restored from the call's date");
        assert_eq!(back["ended"][0]["valid_to"], json!("2025-01-01"));
        let rome = relate(
            40,
            json!({"from": "Ana", "to": "Rome", "type": "lives_in", "replaces": true, "date": "2010-01-01"}),
        );
        assert_eq!(rome["ended"], json!([]), "older news ends nothing");
        assert_eq!(rome["fact"]["valid_to"], json!("2020-01-01"), "it ends when Paris starts");
        assert_eq!(rome["fact"]["ended_at"], json!("1970-01-01T00:00:00.040Z"), "stored as history, not live");
        assert_eq!(rome["superseded_by"].as_array().unwrap().len(), 3);
        for (at, want) in [
            ("2009-12-31", vec![]),
            ("2015-06-01", vec!["Rome"]),
            ("2021-06-01", vec!["Paris"]),
            ("2023-02-28T23:59:59.999Z", vec!["Paris"]),
            ("2023-03-01", vec!["Berlin"]),
            ("2024-01-01", vec!["Berlin"]),
            ("2026-01-01", vec!["Paris"]),
        ] {
            assert_eq!(objects_at(&store, "Ana", Some(at)), want, "valid_at {at}");
        }
        assert_eq!(objects_at(&store, "Ana", None), vec!["Paris"], "today only the restored Paris is true");
        let then = call(&store, &caller(50), "recall", &json!({"subject": "Ana", "as_of": 25})).unwrap();
        assert_eq!(then["facts"][0]["object"], json!("Berlin"));
        assert_eq!(then["facts"][0].get("ended_at"), None, "as known at 25, Berlin had not ended");
    }

    #[test]
    fn restating_what_is_already_true_changes_no_interval() {
        let (_dir, store, _part) = fresh();
        let relate = |at: i64, body: serde_json::Value| call(&store, &caller(at), "relate", &body).unwrap();
        let lives =
            |to: &str, date: &str| json!({"from": "Ana", "to": to, "type": "lives_in", "replaces": true, "date": date});
        let first = relate(10, lives("Paris", "2020-01-01"));
        relate(20, lives("Berlin", "2023-01-01"));
        let again = relate(30, lives("Paris", "2021-01-01"));
        assert_eq!(again["created"], json!(false), "Paris in 2021 is already stated");
        assert_eq!(again["fact"]["id"], first["fact"]["id"]);
        assert_eq!(objects_at(&store, "Ana", Some("2022-01-01")), vec!["Paris"]);
        assert_eq!(objects_at(&store, "Ana", Some("2024-01-01")), vec!["Berlin"]);
        let live = relate(40, lives("Berlin", "2024-01-01"));
        assert_eq!(live["fact"]["valid_from"], json!("2023-01-01"), "a live edge keeps its own start");
        assert_eq!(objects_at(&store, "Ana", Some("2023-06-01")), vec!["Berlin"]);
    }

    #[test]
    fn valid_times_compare_as_instants_across_zones() {
        let (_dir, store, _part) = fresh();
        let attributes = json!({"valid_from": "2024-01-01T10:00:00+05:00", "valid_to": "2024-01-01T12:00:00+05:00"});
        let r = call(
            &store,
            &caller(10),
            "relate",
            &json!({"from": "Zed", "to": "Tokyo", "type": "visits", "attributes": attributes}),
        )
        .unwrap();
        assert_eq!(r["fact"]["valid_from"], json!("2024-01-01T10:00:00+05:00"), "the user's spelling is kept");
        for (at, n) in [
            ("2024-01-01T06:00:00Z", 1),
            ("2024-01-01T11:00:00+05:00", 1),
            ("2024-01-01T04:59:59Z", 0),
            ("2024-01-01T05:00:00Z", 1),
            ("2024-01-01T07:00:00Z", 0),
            ("2024-01-01", 0),
        ] {
            assert_eq!(objects_at(&store, "Zed", Some(at)).len(), n, "valid_at {at}");
        }
    }

    #[test]
    fn an_interval_ending_before_it_starts_is_refused_naming_valid_to() {
        let (_dir, store, _part) = fresh();
        for body in [
            json!({"from": "a", "to": "b", "type": "t", "attributes": {"valid_from": "2024-01-01", "valid_to": "2023-01-01"}}),
            json!({"from": "a", "to": "b", "type": "t", "date": "2024-01-01", "attributes": {"valid_to": "2023-01-01"}}),
        ] {
            let err = call(&store, &caller(1), "relate", &body).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT");
            assert!(err.to_string().contains("attributes.valid_to"), "{err}");
        }
        assert_eq!(store.snapshot().unwrap().tree_len(crate::knowledge::trees::ENT).unwrap_or(0), 0);
    }

    #[test]
    fn bad_input_is_refused_by_field_and_changes_nothing() {
        let (_dir, store, _part) = fresh();
        for (body, field) in [
            (json!({"from": "", "to": "b", "type": "t"}), "from"),
            (json!({"from": "a", "to": "b".repeat(1025), "type": "t"}), "to"),
            (json!({"from": "a", "to": "b", "type": " "}), "type"),
            (json!({"from": "a", "to": "A", "type": "t"}), "same entity"),
            (json!({"from": "a", "to": "b", "type": "t", "date": "tomorrow"}), "date"),
            (json!({"from": "a", "to": "b", "type": "t", "attributes": {"valid_to": 5}}), "attributes.valid_to"),
            (json!({"from": "a", "type": "t"}), "to"),
        ] {
            let err = call(&store, &caller(1), "relate", &body).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT");
            assert!(err.to_string().contains(field), "{err} should name {field}");
        }
        assert_eq!(store.snapshot().unwrap().tree_len(crate::knowledge::trees::ENT).unwrap_or(0), 0);
    }
}
