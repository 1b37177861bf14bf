//! A fact named by two stored ends with another type or direction is 404 offering what joins
//! them, as stored (`facts_between.rs`): `forget {fact}` the live facts, `memory_history {fact}`
//! ended ones too; never a forgotten fact, never another user's or scope's.

use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::knowledge::testing::{call, caller, fresh};
use crate::store::Store;
use serde_json::{Value, json};

fn relate(store: &Store, who: &Caller, (from, to, rel_type): (&str, &str, &str)) {
    let reply = call(store, who, "relate", &json!({"from": from, "to": to, "type": rel_type})).unwrap();
    assert!(reply.get("error").is_none(), "{reply}");
}

/// The error of `verb` (`forget` or `history`) for the fact `from -[rel_type]-> to`, a 404.
fn miss(store: &Store, who: &Caller, verb: &str, (from, to, rel_type): (&str, &str, &str)) -> Value {
    let body = serde_json::to_vec(&json!({"fact": {"from": from, "to": to, "type": rel_type}})).unwrap();
    let reply = match verb {
        "forget" => crate::knowledge::api::call(store, verb, who, &body),
        _ => crate::notes::api::call(store, verb, who, &body),
    };
    let reply: Value = serde_json::from_slice(&reply.unwrap()).unwrap();
    assert_eq!(reply["error"]["code"], "NOT_FOUND", "{verb}: {reply}");
    reply["error"].clone()
}

/// The `did_you_mean` texts of an error, each checked against its `fact`.
fn offered(error: &Value) -> Vec<String> {
    let details = error["details"].as_array().map_or(&[][..], Vec::as_slice);
    details
        .iter()
        .map(|d| {
            let f = &d["fact"];
            let text = format!("{} -[{}]-> {}", f["from"].as_str().unwrap(), f["type"].as_str().unwrap(), f["to"]);
            assert_eq!(text.replace('"', ""), d["did_you_mean"].as_str().unwrap(), "{d}");
            d["did_you_mean"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn export(store: &Store, who: &Caller) -> Value {
    call(store, who, "export", &json!({})).unwrap()["records"].clone()
}

#[test]
fn a_wrong_type_or_direction_offers_the_facts_between_the_ends_as_stored() {
    let (_dir, store, _part) = fresh();
    let me = caller(1);
    relate(&store, &me, ("Priya Raman", "Acme", "consultsFor"));
    relate(&store, &me, ("Acme", "Priya Raman", "sponsors"));
    relate(&store, &me, ("Priya Raman", "Globex", "advises"));
    // Another user's and another scope's facts between the same names are never offered.
    let theirs = Caller { part: Partition::new("local", "u2", "default").unwrap(), ..caller(1) };
    relate(&store, &theirs, ("Priya Raman", "Acme", "owns"));
    let elsewhere = Caller { part: Partition::new("local", "u1", "work").unwrap(), ..caller(1) };
    relate(&store, &elsewhere, ("Priya Raman", "Acme", "founded"));
    let before = export(&store, &me);
    for verb in ["forget", "history"] {
        let error = miss(&store, &me, verb, ("Priya Raman", "Acme", "works_at"));
        assert_eq!(
            error["details"],
            json!([
                {"did_you_mean": "Priya Raman -[consultsFor]-> Acme",
                 "fact": {"from": "Priya Raman", "to": "Acme", "type": "consultsFor"}},
                {"did_you_mean": "Acme -[sponsors]-> Priya Raman",
                 "fact": {"from": "Acme", "to": "Priya Raman", "type": "sponsors"}},
            ]),
            "{verb}"
        );
        assert_eq!(
            error["message"],
            "no fact \"Priya Raman\" -[works_at]-> \"Acme\" is stored; stored between them: \"Priya Raman\" \
             -[consultsFor]-> \"Acme\", \"Acme\" -[sponsors]-> \"Priya Raman\" (name a fact as stored)",
            "{verb}"
        );
        // Asked the other way round: the direction asked comes first.
        let reversed = miss(&store, &me, verb, ("Acme", "Priya Raman", "consultsFor"));
        assert_eq!(offered(&reversed), ["Acme -[sponsors]-> Priya Raman", "Priya Raman -[consultsFor]-> Acme"]);
        // Their partitions offer theirs only.
        assert_eq!(
            offered(&miss(&store, &theirs, verb, ("Priya Raman", "Acme", "works_at"))),
            ["Priya Raman -[owns]-> Acme"]
        );
        let there = miss(&store, &elsewhere, verb, ("Acme", "Priya Raman", "works_at"));
        assert_eq!(offered(&there), ["Priya Raman -[founded]-> Acme"]);
    }
    assert_eq!(export(&store, &me), before, "a miss changes nothing");
}

#[test]
fn forget_offers_live_facts_history_ended_ones_too_and_neither_a_forgotten_one() {
    let (_dir, store, _part) = fresh();
    let me = caller(1);
    relate(&store, &me, ("Priya Raman", "Acme", "works_at"));
    let replaced = json!({"from": "Priya Raman", "to": "Globex", "type": "works_at", "replaces": true});
    assert_eq!(call(&store, &me, "relate", &replaced).unwrap()["ended"].as_array().map(Vec::len), Some(1));
    relate(&store, &me, ("Priya Raman", "Acme", "advises"));
    let asked = ("Priya Raman", "Acme", "owns");
    assert_eq!(offered(&miss(&store, &me, "forget", asked)), ["Priya Raman -[advises]-> Acme"]);
    assert_eq!(
        offered(&miss(&store, &me, "history", asked)),
        ["Priya Raman -[advises]-> Acme", "Priya Raman -[works_at]-> Acme"],
        "live first, then the ended fact history reads"
    );
    let forgot =
        call(&store, &me, "forget", &json!({"fact": {"from": "Priya Raman", "to": "Acme", "type": "advises"}}));
    assert_eq!(forgot.unwrap()["state"], "forgotten");
    let none = miss(&store, &me, "forget", asked);
    assert_eq!(offered(&none), Vec::<String>::new());
    assert_eq!(none["message"], "no fact \"Priya Raman\" -[owns]-> \"Acme\" is stored");
    assert_eq!(offered(&miss(&store, &me, "history", asked)), ["Priya Raman -[works_at]-> Acme"]);
}

#[test]
fn at_most_three_facts_are_offered_read_from_the_shorter_end() {
    let (_dir, store, _part) = fresh();
    let me = caller(1);
    for rel_type in ["e_type", "d_type", "c_type", "b_type", "a_type"] {
        relate(&store, &me, ("Priya Raman", "Acme", rel_type));
    }
    // Acme is a hub: the facts are read from Priya's end.
    for i in 0..40 {
        relate(&store, &me, (&format!("Person {i}"), "Acme", "works_at"));
    }
    for verb in ["forget", "history"] {
        let error = miss(&store, &me, verb, ("Priya Raman", "Acme", "owns"));
        let expected = ["a_type", "b_type", "c_type"].map(|t| format!("Priya Raman -[{t}]-> Acme"));
        assert_eq!(offered(&error), expected, "{verb}");
    }
}
