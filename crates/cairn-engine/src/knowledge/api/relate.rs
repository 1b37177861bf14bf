//! `memory_relate`: one typed edge `from` → `to`, missing entities created. `replaces: true` ends
//! the subject's other edges of that type at the call's date in valid time (kept for `as_of` and
//! `valid_at` reads), and asserting an ended edge again restores it from that date. An assertion
//! dated before edges that start later is older news: it is kept in history, valid until the
//! first of them starts, and ends none of them (knowledge-verbs.md "Valid time").

use super::attribute_keys::trim_keys;
use super::duplicates;
use super::{Caller, parse};
use crate::error::{Error, Result};
use crate::history::{Change, record};
use crate::knowledge::citation::Citer;
use crate::knowledge::event_writes;
use crate::knowledge::fact_attribute_time::{WritesIn, read_at};
use crate::knowledge::graph::{self, Assertion, Direction, Relation, Source, entity_by_id, relation_by_id};
use crate::knowledge::limits::MAX_NAME_LEN;
use crate::knowledge::valid::check_interval;
use crate::knowledge::wire::{self, FoundBy, check_date};
use crate::knowledge::{When, relate};
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

/// `now` is the start of a `replaces` that gives none, which its `valid_to` must follow.
fn check(req: &Request, now: i64) -> Result<()> {
    for (field, value) in [("from", &req.from), ("to", &req.to), ("type", &req.rel_type)] {
        let len = value.trim().len();
        if len == 0 || len > MAX_NAME_LEN {
            return Err(Error::InvalidArgument(format!("{field} must be 1..={MAX_NAME_LEN} bytes, got {len}")));
        }
        if fold(value).is_empty() {
            return Err(Error::InvalidArgument(format!("{field} must hold a visible character")));
        }
    }
    if fold(&req.from) == fold(&req.to) {
        return Err(Error::InvalidArgument("to: from and to name the same entity".into()));
    }
    if let Some(s) = &req.source
        && (s.trim().is_empty() || s.len() > MAX_NAME_LEN)
    {
        return Err(Error::InvalidArgument(format!("source must be 1..={MAX_NAME_LEN} bytes")));
    }
    if let Some(d) = &req.date {
        check_date("date", d)?;
    }
    if let Some(a) = &req.attributes {
        crate::json_depth::check_map("attributes", a).map_err(Error::InvalidArgument)?;
    }
    check_interval("attributes", req.attributes.as_ref(), req.date.as_deref(), req.replaces.then_some(now))
}

/// What the write did.
struct Done {
    relation: Relation,
    created: bool,
    ended: Vec<u64>,
    restored: Vec<u64>,
    /// Live edges newer than this assertion: it ends when the first of them starts.
    newer: Vec<u64>,
    /// The call changed nothing: the fact already said it (and nothing ended).
    already: bool,
    /// The entities the call created (an end not stored before).
    new_entities: Vec<u64>,
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
        date: req.date.as_deref(),
    };
    let missing: Vec<&str> = [req.from.as_str(), req.to.as_str()]
        .into_iter()
        .filter(|n| graph::entity_id_in(tx, part, n).is_ok_and(|id| id.is_none()))
        .collect();
    let related = relate(tx, part, a, caller.now)?;
    let mut new_entities = Vec::new();
    for name in missing {
        if let Some(e) = graph::entity_by_name_in(tx, part, name)? {
            new_entities.push(e.id);
            let after = Some(serde_json::to_value(&e).expect("entities serialise"));
            record(tx, caller, Change { family: "entity", target: &e.name, op: "create", after, ..Change::default() })?;
        }
    }
    // Every event of a fact is filed under its ends' stored names and its stored type, which is
    // how `memory_history` finds them however a call spells them.
    let name = |tx: &mut WriteTxn<'_>, id: u64| -> Result<String> {
        Ok(graph::entity_in(tx, part, id)?.map_or_else(|| id.to_string(), |e| e.name))
    };
    let rel = &related.relation;
    let target = format!("{}\0{}\0{}", name(tx, rel.from)?, rel.rel_type, name(tx, rel.to)?);
    let patch = json!({
        "from": req.from, "to": req.to, "type": req.rel_type, "attributes": req.attributes,
        "replaces": req.replaces, "date": req.date, "source": req.source,
    });
    for &ended in &related.ended {
        if let Some(rel) = graph::relation_in(tx, part, ended)? {
            let own = format!("{}\0{}\0{}", name(tx, rel.from)?, rel.rel_type, name(tx, rel.to)?);
            let before = Relation {
                valid_to: rel.shortened.as_ref().map_or_else(|| rel.valid_to.clone(), |s| s.valid_to.clone()),
                ended_at: rel.ended_at.filter(|&end| end != caller.now),
                shortened: None,
                version_of: None,
                ..rel.clone()
            };
            let change = Change {
                family: "fact",
                target: &own,
                op: "end",
                before: Some(event_writes::kept(tx, part, &before)?),
                after: Some(event_writes::kept(tx, part, &rel)?),
                patch: Some(patch.clone()),
            };
            record(tx, caller, change)?;
        }
    }
    let op = match (related.created, related.restored.is_some()) {
        (true, _) => "assert",
        (false, true) => "restore",
        (false, false) => "merge",
    };
    // Saying again what is stored changes nothing, so it is no event.
    let unchanged = related.before.as_ref() == Some(&related.relation);
    if !unchanged {
        let change = Change {
            family: "fact",
            target: &target,
            op,
            before: related.before.as_ref().map(|b| event_writes::kept(tx, part, b)).transpose()?,
            after: Some(event_writes::kept(tx, part, &related.relation)?),
            patch: Some(patch),
        };
        record(tx, caller, change)?;
    }
    Ok(Done {
        already: unchanged && related.ended.is_empty(),
        relation: related.relation,
        created: related.created,
        ended: related.ended,
        restored: related.restored.into_iter().collect(),
        newer: related.superseded_by,
        new_entities,
    })
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let mut req: Request = parse("relate", body)?;
    trim_keys("attributes", &mut req.attributes)?;
    check(&req, caller.now)?;
    let who = caller.clone();
    let (done, _) = store.write(move |tx| write(tx, &who, &req))?;
    let snap = store.snapshot()?;
    let part = &caller.part;
    let mut citer = Citer::new(&snap, part, false);
    let mut shape = |stored: &Relation| -> Result<Value> {
        // As a plain read shows it: its attributes are the values true now.
        let mut rel = stored.clone();
        let when = When::of_request(None, None, caller.now);
        WritesIn::fill(&snap, part, &mut rel, Some(&when))?;
        read_at(&mut rel, &when);
        let name = |id| -> Result<String> { Ok(entity_by_id(&snap, part, id)?.map_or_else(String::new, |e| e.name)) };
        let names = (name(rel.from)?, name(rel.to)?);
        let citation = citer.relation(&rel, (&names.0, &names.1))?;
        let by = FoundBy { seed: &names.0, hops: 0, reasoning: None };
        Ok(wire::fact(&rel, (&names.0, &names.1), Direction::Outbound, None, &citation, &by))
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
    let mut reply = json!({
        "fact": shape(&done.relation)?,
        "created": done.created,
        "already": done.already,
        "ended": ended,
        "restored": restored,
        "superseded_by": superseded_by,
    });
    duplicates::annotate(store, &snap, caller, &done.new_entities, &mut reply)?;
    Ok(reply)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{TODAY, call, caller, fresh};
    use serde_json::json;

    #[test]
    fn attributes_nest_at_most_32_levels_in_relate_and_remember() {
        let (_dir, store, _part) = fresh();
        let nested = |levels: usize| (1..levels).fold(json!("x"), |v, _| json!([v]));
        let r = call(
            &store,
            &caller(TODAY),
            "relate",
            &json!({"from": "A1", "to": "B1", "type": "t", "attributes": {"k": nested(33)}}),
        );
        let err = r.unwrap_err().to_string();
        assert!(err.contains("attributes: nests 33 levels deep"), "{err}");
        let body = json!({"facts": {"entities": [{"name": "C1", "attributes": {"k": nested(33)}}]}});
        let err = call(&store, &caller(TODAY), "remember", &body).unwrap_err().to_string();
        assert!(err.contains("facts.entities[0].attributes: nests 33 levels deep"), "{err}");
        let body = json!({"facts": {"relations": [{"source": "C1", "target": "D1", "type": "t", "attributes": {"k": nested(33)}}]}});
        let err = call(&store, &caller(TODAY), "remember", &body).unwrap_err().to_string();
        assert!(err.contains("facts.relations[0].attributes: nests 33 levels deep"), "{err}");
        let ok = json!({"from": "A1", "to": "B1", "type": "t", "attributes": {"k": nested(32)}});
        assert!(call(&store, &caller(TODAY), "relate", &ok).is_ok());
    }

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
        assert_eq!((&back["created"], &back["fact"]["id"]), (&json!(false), &paris["fact"]["id"]), "{back}");
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

    /// The ops of the history of the fact `from` -`type`-> `to`, and its events.
    fn fact_history(store: &crate::store::Store, from: &str, rel_type: &str, to: &str) -> Vec<serde_json::Value> {
        let body = json!({"fact": {"from": from, "to": to, "type": rel_type}});
        let reply =
            crate::notes::api::call(store, "history", &caller(TODAY), &serde_json::to_vec(&body).unwrap()).unwrap();
        let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap();
        reply["events"].as_array().unwrap().clone()
    }

    fn sorted(mut v: Vec<String>) -> Vec<String> {
        v.sort();
        v
    }

    #[test]
    fn re_asserting_an_ended_edge_restores_that_fact_once() {
        // The audit's calls (finding 6): Oslo, Bergen replacing it, then Oslo again, undated.
        let (_dir, store, _part) = fresh();
        let day = 86_400_000;
        let relate = |at: i64, body: serde_json::Value| call(&store, &caller(at), "relate", &body).unwrap();
        let oslo = relate(TODAY - 3 * day, json!({"from": "Cy", "to": "Oslo", "type": "lives_in"}));
        relate(TODAY - 2 * day, json!({"from": "Cy", "to": "Bergen", "type": "lives_in", "replaces": true}));
        let back = relate(TODAY - day, json!({"from": "Cy", "to": "Oslo", "type": "lives_in"}));
        assert_eq!(back["created"], json!(false), "{back}");
        assert_eq!(back["fact"]["id"], oslo["fact"]["id"], "the same fact, not a duplicate");
        assert_eq!(back["restored"].as_array().unwrap().len(), 1);
        assert_eq!(back["restored"][0]["id"], oslo["fact"]["id"]);
        assert_eq!(back["restored"][0].get("ended_at"), None, "restored is live again: {back}");
        assert_eq!(back["fact"]["valid_to"], json!(null));
        assert_eq!(sorted(objects_at(&store, "Cy", None)), ["Bergen", "Oslo"], "no replaces: Bergen stays");
        assert_eq!(objects_at(&store, "Cy", Some("2020-01-01")), ["Oslo"], "once, as it was then");
        let between = crate::time::iso_ms(TODAY - day - day / 2);
        assert_eq!(objects_at(&store, "Cy", Some(&between)), ["Bergen"]);
        let then = call(&store, &caller(TODAY), "recall", &json!({"subject": "Cy", "as_of": TODAY - day - 1})).unwrap();
        assert_eq!(then["facts"].as_array().unwrap().len(), 1, "as known before the restore: {then}");
        assert_eq!(then["facts"][0]["object"], json!("Bergen"));
        let events = fact_history(&store, "Cy", "lives_in", "Oslo");
        let ops: Vec<&str> = events.iter().map(|e| e["op"].as_str().unwrap()).collect();
        assert_eq!(ops, ["assert", "end", "restore"]);
        assert!(!events[2]["before"]["ended_at"].is_null(), "the restore shows what it brought back: {}", events[2]);
        assert!(events[2]["after"]["ended_at"].is_null(), "{}", events[2]);
    }

    #[test]
    fn re_asserting_an_ended_edge_with_a_date_restores_it_from_that_date() {
        let (_dir, store, _part) = fresh();
        let relate = |at: i64, body: serde_json::Value| call(&store, &caller(at), "relate", &body).unwrap();
        let works = |to: &str, date: &str, replaces: bool| json!({"from": "Ann", "to": to, "type": "works_at", "date": date, "replaces": replaces});
        let globex = relate(10, works("Globex", "2020-01-01", false));
        relate(20, works("Initech", "2022-01-01", true));
        let back = relate(30, works("Globex", "2024-01-01", false));
        assert_eq!((&back["created"], &back["fact"]["id"]), (&json!(false), &globex["fact"]["id"]), "{back}");
        assert_eq!(back["restored"][0]["id"], globex["fact"]["id"]);
        assert_eq!(back["restored"][0].get("ended_at"), None);
        assert_eq!(back["fact"]["valid_from"], json!("2024-01-01"));
        assert_eq!(objects_at(&store, "Ann", Some("2021-01-01")), ["Globex"]);
        assert_eq!(objects_at(&store, "Ann", Some("2023-01-01")), ["Initech"]);
        assert_eq!(sorted(objects_at(&store, "Ann", Some("2025-01-01"))), ["Globex", "Initech"]);
        assert_eq!(sorted(objects_at(&store, "Ann", None)), ["Globex", "Initech"]);
        // Ended again and restored again: still one fact, each earlier life read at its dates.
        relate(40, works("Initech", "2025-01-01", true));
        let again = relate(50, works("Globex", "2026-01-01", true));
        assert_eq!((&again["created"], &again["fact"]["id"]), (&json!(false), &globex["fact"]["id"]), "{again}");
        for (at, want) in [
            ("2021-01-01", vec!["Globex"]),
            ("2023-01-01", vec!["Initech"]),
            ("2024-06-01", vec!["Globex", "Initech"]),
            ("2025-06-01", vec!["Initech"]),
        ] {
            assert_eq!(sorted(objects_at(&store, "Ann", Some(at))), want, "valid_at {at}");
        }
        assert_eq!(objects_at(&store, "Ann", None), ["Globex"]);
        let ops: Vec<String> = fact_history(&store, "Ann", "works_at", "Globex")
            .iter()
            .map(|e| e["op"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(ops, ["assert", "end", "restore", "end", "restore"]);
    }

    #[test]
    fn relating_an_identical_edge_again_records_nothing() {
        // The audit's calls (finding 16): the same edge again is no event; a new attribute is one.
        let (_dir, store, _part) = fresh();
        let body = json!({"from": "Eve", "to": "Oslo", "type": "lives_in", "attributes": {"floor": 2}});
        let first = call(&store, &caller(10), "relate", &body).unwrap();
        for at in [20, 30] {
            let again = call(&store, &caller(at), "relate", &body).unwrap();
            assert_eq!((&again["created"], &again["fact"]["id"]), (&json!(false), &first["fact"]["id"]));
            assert_eq!(again["fact"]["recorded_at"], first["fact"]["recorded_at"]);
        }
        let ops = |s: &crate::store::Store| -> Vec<String> {
            fact_history(s, "Eve", "lives_in", "Oslo").iter().map(|e| e["op"].as_str().unwrap().to_owned()).collect()
        };
        assert_eq!(ops(&store), ["assert"]);
        let changed = json!({"from": "Eve", "to": "Oslo", "type": "lives_in", "attributes": {"floor": 3}});
        call(&store, &caller(40), "relate", &changed).unwrap();
        let events = fact_history(&store, "Eve", "lives_in", "Oslo");
        assert_eq!(ops(&store), ["assert", "merge"]);
        assert_eq!(
            (&events[1]["before"]["attributes"]["floor"], &events[1]["after"]["attributes"]["floor"]),
            (&json!(2), &json!(3))
        );
    }

    /// `recall` of `subject` with extra fields (`as_of`, `valid_at`) at `TODAY`: its stored facts.
    fn stored_facts(store: &crate::store::Store, subject: &str, extra: &serde_json::Value) -> Vec<serde_json::Value> {
        let mut body = json!({"subject": subject});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = call(store, &caller(TODAY), "recall", &body).unwrap();
        r["facts"].as_array().unwrap().iter().filter(|f| f["derived"].is_null()).cloned().collect()
    }

    fn ops(store: &crate::store::Store, from: &str, rel_type: &str, to: &str) -> Vec<String> {
        fact_history(store, from, rel_type, to).iter().map(|e| e["op"].as_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn saying_a_live_fact_again_later_confirms_it_and_earlier_extends_it_as_of_then() {
        // The audit's calls (`dup2`): Ann knows Bo from 2020, said again dated 2023, then 2019.
        let (_dir, store, _part) = fresh();
        let knows = |date: &str| json!({"from": "Ann", "to": "Bo", "type": "knows", "date": date});
        let first = call(&store, &caller(10), "relate", &knows("2020-01-01")).unwrap();
        assert_eq!(first["already"], json!(false));
        let later = call(&store, &caller(20), "relate", &knows("2023-01-01")).unwrap();
        assert_eq!((&later["created"], &later["already"]), (&json!(false), &json!(true)), "{later}");
        assert_eq!(later["fact"]["valid_from"], json!("2020-01-01"), "a later date confirms: {later}");
        assert_eq!(ops(&store, "Ann", "knows", "Bo"), ["assert"], "a confirmation is no event");
        for extra in [json!({"valid_at": "2021-06-01"}), json!({"valid_at": "2021-06-01", "as_of": 15})] {
            let facts = stored_facts(&store, "Ann", &extra);
            assert_eq!(facts.len(), 1, "{extra}: {facts:?}");
            assert_eq!(facts[0]["valid_from"], json!("2020-01-01"));
        }
        // An earlier date is news: true since 2019 from now on, unknown to reads as of before.
        let earlier = call(&store, &caller(30), "relate", &knows("2019-01-01")).unwrap();
        assert_eq!((&earlier["created"], &earlier["already"]), (&json!(false), &json!(false)), "{earlier}");
        assert_eq!(
            (&earlier["fact"]["id"], &earlier["fact"]["valid_from"]),
            (&first["fact"]["id"], &json!("2019-01-01"))
        );
        assert_eq!(earlier["fact"]["recorded_at"], json!("1970-01-01T00:00:00.030Z"), "this version is known from now");
        let now = stored_facts(&store, "Ann", &json!({"valid_at": "2019-06-01"}));
        assert_eq!((now.len(), &now[0]["id"]), (1, &first["fact"]["id"]));
        assert!(stored_facts(&store, "Ann", &json!({"valid_at": "2019-06-01", "as_of": 25})).is_empty());
        let then = stored_facts(&store, "Ann", &json!({"as_of": 25}));
        assert_eq!(then.len(), 1, "as known at 25: {then:?}");
        assert_eq!((&then[0]["id"], &then[0]["valid_from"]), (&first["fact"]["id"], &json!("2020-01-01")));
        assert_eq!(then[0]["recorded_at"], json!("1970-01-01T00:00:00.010Z"));
        assert!(then[0].get("ended_at").is_none(), "{then:?}");
        let plain = stored_facts(&store, "Ann", &json!({}));
        assert_eq!(plain.len(), 1, "the earlier version is no second fact: {plain:?}");
        assert!(stored_facts(&store, "Ann", &json!({"valid_at": "2021-06-01", "as_of": 35})).len() == 1);
        let events = fact_history(&store, "Ann", "knows", "Bo");
        assert_eq!(ops(&store, "Ann", "knows", "Bo"), ["assert", "merge"]);
        assert_eq!(
            (&events[1]["before"]["valid_from"], &events[1]["after"]["valid_from"]),
            (&json!("2020-01-01"), &json!("2019-01-01"))
        );
        // Said again as it now stands: nothing changes, nothing is recorded.
        let again = call(&store, &caller(40), "relate", &knows("2019-01-01")).unwrap();
        assert_eq!(again["already"], json!(true), "{again}");
        assert_eq!(ops(&store, "Ann", "knows", "Bo"), ["assert", "merge"]);
        let before =
            call(&store, &caller(TODAY), "recall", &json!({"subject": "Ann", "valid_at": "2018-06-01"})).unwrap();
        assert_eq!(before["outside_time"]["facts"], json!(1), "one fact, not one per version: {before}");
        assert_eq!(before["outside_time"]["next_valid_from"], json!("2019-01-01"));
    }

    #[test]
    fn explicit_bounds_said_again_only_widen_a_live_fact() {
        let (_dir, store, _part) = fresh();
        let lives = |attributes: serde_json::Value| json!({"from": "Eve", "to": "Oslo", "type": "lives_in", "attributes": attributes});
        let relate =
            |at: i64, attributes: serde_json::Value| call(&store, &caller(at), "relate", &lives(attributes)).unwrap();
        let first = relate(10, json!({"valid_from": "2020-01-01", "valid_to": "2024-01-01"}));
        for (at, within) in [
            (20, json!({"valid_to": "2022-01-01"})),
            (21, json!({"valid_from": "2021-01-01", "valid_to": "2023-01-01"})),
        ] {
            let r = relate(at, within);
            assert_eq!(r["already"], json!(true), "a statement within what is known confirms it: {r}");
        }
        let longer = relate(30, json!({"valid_to": "2026-01-01"}));
        assert_eq!((&longer["already"], &longer["fact"]["valid_to"]), (&json!(false), &json!("2026-01-01")));
        assert_eq!(longer["fact"]["id"], first["fact"]["id"]);
        assert!(stored_facts(&store, "Eve", &json!({"valid_at": "2025-01-01", "as_of": 25})).is_empty());
        assert_eq!(stored_facts(&store, "Eve", &json!({"valid_at": "2025-01-01"})).len(), 1);
        // After its end: a new life from the stated start; the earlier one stays history.
        let back = relate(40, json!({"valid_from": "2027-01-01"}));
        assert_eq!(
            (&back["restored"][0]["id"], &back["fact"]["valid_from"]),
            (&first["fact"]["id"], &json!("2027-01-01"))
        );
        for (at, n) in [("2019-06-01", 0), ("2021-06-01", 1), ("2026-06-01", 0), ("2028-01-01", 1)] {
            assert_eq!(stored_facts(&store, "Eve", &json!({"valid_at": at})).len(), n, "valid_at {at}");
        }
        // Entirely before what is stored: older news, kept in history up to the next start.
        let old = relate(50, json!({"valid_from": "2015-01-01", "valid_to": "2021-01-01"}));
        assert_eq!((&old["created"], &old["fact"]["valid_to"]), (&json!(true), &json!("2020-01-01")), "{old}");
        assert!(old["fact"]["ended_at"].is_string(), "{old}");
        for (at, n) in [("2016-06-01", 1), ("2020-06-01", 1), ("2028-01-01", 1)] {
            assert_eq!(stored_facts(&store, "Eve", &json!({"valid_at": at})).len(), n, "valid_at {at}");
        }
        assert_eq!(ops(&store, "Eve", "lives_in", "Oslo"), ["assert", "merge", "restore", "assert"]);
    }

    #[test]
    fn an_end_given_for_a_fact_without_one_ends_it_as_a_revision() {
        let (_dir, store, _part) = fresh();
        let works = |attributes: serde_json::Value| json!({"from": "Ann", "to": "Acme", "type": "works_at", "attributes": attributes});
        let relate =
            |at: i64, attributes: serde_json::Value| call(&store, &caller(at), "relate", &works(attributes)).unwrap();
        let first = relate(10, json!({"valid_from": "2020-01-01"}));
        let ended = relate(20, json!({"valid_to": "2024-01-01"}));
        assert_eq!((&ended["already"], &ended["fact"]["valid_to"]), (&json!(false), &json!("2024-01-01")), "{ended}");
        assert_eq!(ended["fact"]["id"], first["fact"]["id"], "the same fact, revised");
        assert!(stored_facts(&store, "Ann", &json!({"valid_at": "2025-01-01"})).is_empty(), "over by 2025");
        assert_eq!(stored_facts(&store, "Ann", &json!({"valid_at": "2022-01-01"})).len(), 1);
        let then = stored_facts(&store, "Ann", &json!({"valid_at": "2025-01-01", "as_of": 15}));
        assert_eq!(then.len(), 1, "as known before the end was given, it still held in 2025: {then:?}");
        assert!(then[0]["valid_to"].is_null(), "{then:?}");
        assert_eq!(ops(&store, "Ann", "works_at", "Acme"), ["assert", "merge"]);
        // Said again with a sooner end: a confirmation, as for any stated end.
        assert_eq!(relate(30, json!({"valid_to": "2023-01-01"}))["already"], json!(true));
    }

    #[test]
    fn remember_says_a_fact_again_as_relate_does() {
        let (_dir, store, _part) = fresh();
        let said = |date: &str| json!({"facts": {"relations": [{"source": "Ann", "target": "Bo", "type": "knows"}]}, "date": date});
        call(&store, &caller(10), "remember", &said("2020-01-01")).unwrap();
        let later = call(&store, &caller(20), "remember", &said("2023-01-01")).unwrap();
        assert_eq!((&later["already"], &later["updated"]["relations"]), (&json!(true), &json!(0)), "{later}");
        let earlier = call(&store, &caller(30), "remember", &said("2019-01-01")).unwrap();
        assert_eq!((&earlier["already"], &earlier["updated"]["relations"]), (&json!(false), &json!(1)), "{earlier}");
        assert_eq!(earlier["stored"]["relations"], json!(0));
        let now = stored_facts(&store, "Ann", &json!({}));
        assert_eq!((now.len(), &now[0]["valid_from"]), (1, &json!("2019-01-01")));
        let then = stored_facts(&store, "Ann", &json!({"as_of": 25}));
        assert_eq!((then.len(), &then[0]["valid_from"]), (1, &json!("2020-01-01")));
        let events = fact_history(&store, "Ann", "knows", "Bo");
        assert_eq!(ops(&store, "Ann", "knows", "Bo"), ["assert", "merge"]);
        assert_eq!(
            (&events[1]["before"]["valid_from"], &events[1]["after"]["valid_from"]),
            (&json!("2020-01-01"), &json!("2019-01-01"))
        );
        // The same through relate: already.
        let r = call(
            &store,
            &caller(40),
            "relate",
            &json!({"from": "Ann", "to": "Bo", "type": "knows", "date": "2021-01-01"}),
        )
        .unwrap();
        assert_eq!(r["already"], json!(true));
    }

    #[test]
    fn history_finds_a_subject_and_a_fact_however_the_case_is_spelled() {
        // The audit's calls (finding 12): events of "Oskar Berg" read as "oskar berg", type in capitals.
        let (_dir, store, _part) = fresh();
        call(&store, &caller(10), "relate", &json!({"from": "Oskar Berg", "to": "Berlin", "type": "located_in"}))
            .unwrap();
        let again = json!({"from": "oskar berg", "to": "BERLIN", "type": "LOCATED_IN", "attributes": {"since": 2020}});
        call(&store, &caller(20), "relate", &again).unwrap();
        let facts =
            json!({"facts": {"relations": [{"source": "OSKAR BERG", "target": "Malmö", "type": "Located_In"}]}});
        call(&store, &caller(30), "remember", &facts).unwrap();
        let history = |body: serde_json::Value| -> Vec<String> {
            let reply = crate::notes::api::call(&store, "history", &caller(TODAY), &serde_json::to_vec(&body).unwrap())
                .unwrap();
            let reply: serde_json::Value = serde_json::from_slice(&reply).unwrap();
            reply["events"].as_array().unwrap().iter().map(|e| e["op"].as_str().unwrap().to_owned()).collect()
        };
        for subject in ["Oskar Berg", "oskar berg", "OSKAR BERG"] {
            assert_eq!(history(json!({"subject": subject})), ["create"], "{subject}");
        }
        for (from, rel_type, to) in [("Oskar Berg", "located_in", "Berlin"), ("oskar berg", "LOCATED_IN", "berlin")] {
            let fact = json!({"fact": {"from": from, "type": rel_type, "to": to}});
            assert_eq!(history(fact), ["assert", "merge"], "{from} {rel_type} {to}");
        }
        let malmo = json!({"fact": {"from": "Oskar Berg", "type": "located_in", "to": "malmö"}});
        assert_eq!(history(malmo), ["assert"], "remember files its facts the same way");
        let oskar = crate::notes::api::call(&store, "history", &caller(TODAY), br#"{"subject": "Oskar"}"#).unwrap();
        assert!(String::from_utf8_lossy(&oskar).contains("NOT_FOUND"), "a word of a name is not the name");
    }

    #[test]
    fn the_calls_date_is_kept_as_source_date_beside_a_given_valid_from() {
        let (_dir, store, _part) = fresh();
        let body = json!({"from": "Eve", "to": "Acme", "type": "works_at", "date": "2022-01-01",
            "attributes": {"valid_from": "2023-01-01"}});
        let r = call(&store, &caller(10), "relate", &body).unwrap();
        assert_eq!((&r["fact"]["valid_from"], &r["fact"]["source_date"]), (&json!("2023-01-01"), &json!("2022-01-01")));
        let read = call(&store, &caller(TODAY), "recall", &json!({"subject": "Eve"})).unwrap();
        assert_eq!(read["facts"][0]["source_date"], json!("2022-01-01"), "{read}");
        let dated = call(
            &store,
            &caller(20),
            "relate",
            &json!({"from": "Eve", "to": "Oslo", "type": "lives_in", "date": "2021-05-01"}),
        )
        .unwrap();
        assert_eq!(
            (&dated["fact"]["valid_from"], &dated["fact"]["source_date"]),
            (&json!("2021-05-01"), &json!("2021-05-01"))
        );
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

    /// The audit's calls: Globex from 2019, then Initech `replaces` it with only a `valid_to` in the
    /// past. The replacing start is now, so the interval would run backwards: refused naming
    /// `attributes.valid_to`, and Globex is neither ended nor shortened.
    #[test]
    fn a_replaces_ending_before_now_without_a_start_is_refused_and_ends_nothing() {
        let (_dir, store, part) = fresh();
        let globex = json!({"from": "Priya Raman", "to": "Globex", "type": "works_at", "attributes": {"valid_from": "2019-01-01"}});
        call(&store, &caller(TODAY - 10), "relate", &globex).unwrap();
        let before = store.snapshot().unwrap().tree_len(crate::history::EVENT).unwrap();
        let initech = json!({"from": "Priya Raman", "to": "Initech", "type": "works_at", "replaces": true,
            "attributes": {"valid_to": "2020-01-01"}});
        let err = call(&store, &caller(TODAY), "relate", &initech).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert!(err.to_string().contains("attributes.valid_to must be later than its start, now"), "{err}");
        assert_eq!(objects_at(&store, "Priya Raman", None), vec!["Globex"], "the real fact still holds");
        let after = store.snapshot().unwrap();
        assert_eq!(after.tree_len(crate::history::EVENT).unwrap(), before, "nothing recorded");
        assert!(crate::knowledge::entity_by_name(&after, &part, "Initech").unwrap().is_none());
        // With an end after now the same call is fine.
        let later = json!({"from": "Priya Raman", "to": "Initech", "type": "works_at", "replaces": true,
            "attributes": {"valid_to": "2999-01-01"}});
        assert_eq!(call(&store, &caller(TODAY), "relate", &later).unwrap()["ended"].as_array().unwrap().len(), 1);
    }

    /// Without `replaces`, asserting an ended fact again restores it from now when no start is
    /// given: an end already past is refused there too, by the relation's own field in `remember`.
    #[test]
    fn restoring_from_now_with_a_past_end_is_refused() {
        let (_dir, store, _part) = fresh();
        let lives = |to: &str| json!({"from": "Kim", "to": to, "type": "lives_in", "replaces": true});
        call(&store, &caller(10), "relate", &lives("Oslo")).unwrap();
        call(&store, &caller(20), "relate", &lives("Bergen")).unwrap();
        let back = json!({"from": "Kim", "to": "Oslo", "type": "lives_in", "attributes": {"valid_to": "1970-01-01"}});
        let err = call(&store, &caller(30), "relate", &back).unwrap_err();
        assert!(err.to_string().contains("attributes.valid_to must be later than its start, now"), "{err}");
        let facts = json!({"facts": {"relations": [{"source": "Kim", "target": "Oslo", "type": "lives_in",
            "attributes": {"valid_to": "1970-01-01"}}]}});
        let err = call(&store, &caller(30), "remember", &facts).unwrap_err();
        assert!(err.to_string().contains("facts.relations[0].attributes.valid_to must be later"), "{err}");
        assert_eq!(objects_at(&store, "Kim", None), vec!["Bergen"]);
    }

    /// The audit's calls: Jonas leads Falcon from 2020; said again with `valid_from == valid_to`.
    /// An empty interval holds no instant: refused, and the open fact stays open.
    #[test]
    fn an_empty_interval_is_refused_and_does_not_end_an_open_fact() {
        let (_dir, store, _part) = fresh();
        let leads = |attributes: serde_json::Value| json!({"from": "Jonas Berg", "to": "Project Falcon", "type": "leads", "attributes": attributes});
        call(&store, &caller(10), "relate", &leads(json!({"valid_from": "2020-01-01"}))).unwrap();
        let empty = leads(json!({"valid_from": "2025-05-01T00:00:00Z", "valid_to": "2025-05-01"}));
        let err = call(&store, &caller(20), "relate", &empty).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert!(err.to_string().contains("attributes.valid_to must be later than valid_from"), "{err}");
        let dated = json!({"facts": {"relations": [{"source": "Jonas Berg", "target": "Project Falcon", "type": "leads",
            "attributes": {"valid_to": "2025-05-01"}}]}, "date": "2025-05-01"});
        let err = call(&store, &caller(20), "remember", &dated).unwrap_err();
        assert!(err.to_string().contains("facts.relations[0].attributes.valid_to must be later"), "{err}");
        assert_eq!(objects_at(&store, "Jonas Berg", None), vec!["Project Falcon"], "still open");
        assert_eq!(objects_at(&store, "Jonas Berg", Some("2026-01-01")), vec!["Project Falcon"]);
    }

    /// The audit's case: a name pasted with a zero-width space (or BOM, soft hyphen, word joiner)
    /// is the entity it shows as, not an invisible second one; a name of invisible marks alone is
    /// refused by its field.
    #[test]
    fn invisible_code_points_in_a_name_name_the_entity_it_shows() {
        let (_dir, store, _part) = fresh();
        call(&store, &caller(10), "relate", &json!({"from": "Priya Raman", "to": "Acme", "type": "works_at"})).unwrap();
        for pasted in ["Priya\u{200b}Raman", "\u{feff}Priya Raman", "Pri\u{ad}ya Ra\u{2060}man"] {
            let again = call(&store, &caller(20), "relate", &json!({"from": pasted, "to": "Acme", "type": "works_at"}));
            assert_eq!(again.unwrap()["already"], json!(true), "{pasted:?}");
            let facts = json!({"facts": {"entities": [{"name": pasted, "type": "person"}]}});
            assert_eq!(call(&store, &caller(20), "remember", &facts).unwrap()["stored"]["entities"], json!(0));
        }
        let read = call(&store, &caller(TODAY), "recall", &json!({"subject": "Priya\u{200b}Raman"})).unwrap();
        assert_eq!((&read["state"], &read["subject"]["name"]), (&json!("answered"), &json!("Priya Raman")), "{read}");
        let err =
            call(&store, &caller(30), "relate", &json!({"from": "\u{200b}", "to": "Acme", "type": "t"})).unwrap_err();
        assert!(err.to_string().contains("from must hold a visible character"), "{err}");
        let facts = json!({"facts": {"entities": [{"name": "\u{feff}\u{200b}"}]}});
        let err = call(&store, &caller(30), "remember", &facts).unwrap_err();
        assert!(err.to_string().contains("facts.entities[0].name must hold a visible character"), "{err}");
        assert_eq!(store.snapshot().unwrap().tree_len(crate::knowledge::trees::ENT).unwrap(), 2);
    }

    /// The audit's calls: `title`, then `Title` and `" title "` from another agent. The padded key
    /// is stored trimmed (the `title` it names), so recall by it finds the entity; `Title` is a key
    /// of its own, as JSON keys are.
    #[test]
    fn attribute_keys_are_stored_trimmed_and_found_by_the_trimmed_key() {
        let (_dir, store, _part) = fresh();
        let said = |attributes: serde_json::Value| json!({"facts": {"entities": [{"name": "Priya Raman", "type": "person", "attributes": attributes}]}});
        call(&store, &caller(10), "remember", &said(json!({"title": "CTO"}))).unwrap();
        call(&store, &caller(20), "remember", &said(json!({"Title": "CEO", " title ": "VP"}))).unwrap();
        let read = call(&store, &caller(TODAY), "recall", &json!({"subject": "Priya Raman"})).unwrap();
        assert_eq!(read["subject"]["attributes"], json!({"Title": "CEO", "title": "VP"}), "{read}");
        for key in [" title ", "title"] {
            let by =
                call(&store, &caller(TODAY), "recall", &json!({"attribute": {"key": key, "value": "vp"}})).unwrap();
            assert_eq!(by["subject"]["name"], json!("Priya Raman"), "{key:?}: {by}");
        }
        let rel = json!({"from": "Priya Raman", "to": "Acme", "type": "works_at", "attributes": {" team ": "infra"}});
        let r = call(&store, &caller(30), "relate", &rel).unwrap();
        assert_eq!(r["fact"]["attributes"], json!({"team": "infra"}));
        let clash = said(json!({"title": "CTO", "title ": "VP"}));
        let err = call(&store, &caller(40), "remember", &clash).unwrap_err();
        assert!(err.to_string().contains("facts.entities[0].attributes.title: sent twice"), "{err}");
    }

    /// Stored facts (not derived readings) `recall` shows for `subject`, as `subject type object`.
    fn stored(store: &crate::store::Store, subject: &str) -> Vec<String> {
        let r = call(store, &caller(TODAY), "recall", &json!({"subject": subject})).unwrap();
        let facts = r["facts"].as_array().unwrap().iter().filter(|f| f["derived"] != json!(true));
        facts
            .map(|f| {
                format!(
                    "{} {} {}",
                    f["subject"].as_str().unwrap(),
                    f["relation"].as_str().unwrap(),
                    f["object"].as_str().unwrap()
                )
            })
            .collect()
    }

    /// The audit's calls (finding 5): a symmetric fact said from the other end is the fact already
    /// stored; `replaces` ends the subject's facts of a symmetric type stored from the other end,
    /// and of the inverse type (`X employs Priya` is `Priya employed_by X`).
    #[test]
    fn symmetric_and_inverse_facts_are_one_fact_from_either_end() {
        let (_dir, store, _part) = fresh();
        let relate = |at: i64, body: serde_json::Value| call(&store, &caller(at), "relate", &body).unwrap();
        let first = relate(10, json!({"from": "Ana Costa", "to": "Bruno Costa", "type": "married_to"}));
        let again = relate(20, json!({"from": "Bruno Costa", "to": "Ana Costa", "type": "married_to"}));
        assert_eq!((&again["created"], &again["already"]), (&json!(false), &json!(true)), "{again}");
        assert_eq!(again["fact"]["id"], first["fact"]["id"]);
        assert_eq!(stored(&store, "Ana Costa"), ["Ana Costa married_to Bruno Costa"]);
        // The marriage is stored from Ana's end; from Bruno's it ends just the same.
        relate(30, json!({"from": "Cid Lima", "to": "Bruno Costa", "type": "married_to"}));
        let rui = relate(
            40,
            json!({"from": "Ana Costa", "to": "Rui Lima", "type": "married_to", "replaces": true,
            "attributes": {"valid_from": "2022-09-03"}}),
        );
        assert_eq!(rui["ended"][0]["object"], json!("Bruno Costa"), "{rui}");
        assert_eq!(stored(&store, "Ana Costa"), ["Ana Costa married_to Rui Lima"]);
        let eva = relate(
            45,
            json!({"from": "Bruno Costa", "to": "Eva Lima", "type": "married_to", "replaces": true,
            "attributes": {"valid_from": "2023-01-01"}}),
        );
        assert_eq!(eva["ended"].as_array().unwrap().len(), 1, "{eva}");
        assert_eq!(eva["ended"][0]["subject"], json!("Cid Lima"), "{eva}");
        // Inverse: Northwind employs Priya; Priya employed_by Contoso replaces it.
        relate(
            50,
            json!({"from": "Northwind Labs", "to": "Priya Raman", "type": "employs", "attributes": {"valid_from": "2023-03-01"}}),
        );
        let same = relate(60, json!({"from": "Priya Raman", "to": "Northwind Labs", "type": "employed_by"}));
        assert_eq!(same["already"], json!(true), "{same}");
        let contoso = relate(
            70,
            json!({"from": "Priya Raman", "to": "Contoso", "type": "employed_by", "replaces": true,
            "attributes": {"valid_from": "2025-01-01"}}),
        );
        assert_eq!(
            (&contoso["ended"][0]["subject"], &contoso["ended"][0]["valid_to"]),
            (&json!("Northwind Labs"), &json!("2025-01-01")),
            "{contoso}"
        );
        assert_eq!(stored(&store, "Priya Raman"), ["Priya Raman employed_by Contoso"]);
        // Restored from her end, the fact stored from Northwind's end lives again as stored.
        let back = relate(
            80,
            json!({"from": "Priya Raman", "to": "Northwind Labs", "type": "employed_by", "replaces": true,
            "attributes": {"valid_from": "2026-01-01"}}),
        );
        assert_eq!(
            (&back["restored"][0]["subject"], &back["restored"][0]["relation"]),
            (&json!("Northwind Labs"), &json!("employs")),
            "{back}"
        );
        assert_eq!(stored(&store, "Northwind Labs"), ["Northwind Labs employs Priya Raman"]);
        let forgot = crate::knowledge::api::call(
            &store,
            "forget",
            &caller(90),
            &serde_json::to_vec(&json!({"subject": "Northwind Labs"})).unwrap(),
        );
        assert!(forgot.is_ok(), "the restored fact's adjacency is whole: {forgot:?}");
    }

    /// The audit's calls (finding 7): types written with a space or hyphen still follow the
    /// symmetric and transitive rules, and mixed spellings chain.
    #[test]
    fn rules_read_spaces_and_hyphens_in_a_type_as_underscores() {
        let (_dir, store, _part) = fresh();
        let facts = json!({"facts": {"relations": [
            {"source": "Ana Lima", "target": "Rui Lima", "type": "married to"},
            {"source": "Room 9", "target": "Wing C", "type": "part of"},
            {"source": "Wing C", "target": "HQ", "type": "Part-Of"},
        ]}});
        call(&store, &caller(10), "remember", &facts).unwrap();
        let derived = |subject: &str| -> Vec<String> {
            let r = call(&store, &caller(TODAY), "recall", &json!({"subject": subject})).unwrap();
            let facts = r["facts"].as_array().unwrap().iter().filter(|f| f["derived"] == json!(true));
            facts
                .map(|f| {
                    format!(
                        "{} {} {}",
                        f["subject"].as_str().unwrap(),
                        f["rule"].as_str().unwrap(),
                        f["object"].as_str().unwrap()
                    )
                })
                .collect()
        };
        assert_eq!(derived("Rui Lima"), ["Rui Lima symmetric Ana Lima"]);
        assert_eq!(derived("Room 9"), ["Room 9 transitive HQ"]);
        // Said from the other end in another spelling, the marriage is the fact stored.
        let again =
            call(&store, &caller(20), "relate", &json!({"from": "Rui Lima", "to": "Ana Lima", "type": "married-to"}))
                .unwrap();
        assert_eq!(again["already"], json!(true), "{again}");
    }

    #[test]
    fn bad_input_is_refused_by_field_and_changes_nothing() {
        let (_dir, store, _part) = fresh();
        for (body, field) in [
            (json!({"from": "", "to": "b", "type": "t"}), "from"),
            (json!({"from": "a", "to": "b".repeat(1025), "type": "t"}), "to"),
            (json!({"from": "a", "to": "b", "type": " "}), "type"),
            // The field at fault comes first, so the node names `to` in `details`, not `(body)`.
            (
                json!({"from": "Same", "to": "same", "type": "t"}),
                "invalid argument: to: from and to name the same entity",
            ),
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
