//! Recall's pages (`cursor`/`next`): they concatenate to the one big reply, each fact once in its
//! order, whatever is written between them, and a cursor opens only for its own request.

use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::knowledge::testing::{call, caller, fresh};
use crate::store::Store;
use serde_json::{Value, json};

const T: i64 = 1_790_000_000_000;

/// "Ada Hub" with 22 stored `likes` facts and 3 `manages` facts (each giving a derived
/// `managed_by`), every one written at its own time; each managed person works at Acme (two hops).
fn hub() -> (tempfile::TempDir, Store) {
    let (dir, store, _part) = fresh();
    for i in 0..25 {
        let (to, rel) = if i < 22 { (format!("Thing {i:02}"), "likes") } else { (format!("Report {i}"), "manages") };
        call(&store, &caller(T + i), "relate", &json!({"from": "Ada Hub", "to": to, "type": rel})).unwrap();
        if rel == "manages" {
            call(&store, &caller(T + i), "relate", &json!({"from": to, "to": "Acme", "type": "works_at"})).unwrap();
        }
    }
    (dir, store)
}

/// Each fact of a reply by what it says (derived facts have no id).
fn said(reply: &Value) -> Vec<String> {
    let facts = reply["facts"].as_array().unwrap_or_else(|| panic!("no facts: {reply}"));
    facts
        .iter()
        .map(|f| format!("{} {} {} {} {}", f["id"], f["subject"], f["relation"], f["object"], f["found_by"]["hops"]))
        .collect()
}

/// Every page of `body` at `k`, read by `who` at times from `at`; `between` runs after the first.
fn pages(store: &Store, who: &Caller, body: &Value, mut between: impl FnMut()) -> Vec<Value> {
    let mut out: Vec<Value> = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let mut req = body.clone();
        if !cursor.is_null() {
            req["cursor"] = cursor.clone();
        }
        let reply = call(store, who, "recall", &req).unwrap();
        cursor = reply["next"].clone();
        out.push(reply);
        if out.len() == 1 {
            between();
        }
        if cursor.is_null() {
            return out;
        }
        assert!(out.len() < 20, "paging never ends: {cursor}");
    }
}

#[test]
fn pages_concatenate_to_the_one_big_reply_each_fact_once() {
    let (_dir, store) = hub();
    for hops in [1, 2] {
        let all =
            call(&store, &caller(T + 100), "recall", &json!({"subject": "Ada Hub", "k": 1000, "hops": hops})).unwrap();
        assert_eq!((&all["omitted"], &all["next"]), (&json!(0), &Value::Null), "{all}");
        let whole = said(&all);
        assert_eq!(whole.len(), if hops == 1 { 28 } else { 31 }, "25 stored, 3 derived, 3 at hop 2: {all}");
        let got = pages(&store, &caller(T + 100), &json!({"subject": "Ada Hub", "k": 10, "hops": hops}), || {});
        assert_eq!(got.len(), if hops == 1 { 3 } else { 4 });
        let omitted: Vec<&Value> = got.iter().map(|p| &p["omitted"]).collect();
        let expect: Vec<Value> = (1..=got.len()).map(|n| json!(whole.len().saturating_sub(10 * n))).collect();
        assert_eq!(omitted, expect.iter().collect::<Vec<_>>());
        assert!(got[0]["omitted_hint"].as_str().unwrap().contains("`cursor` set to `next`"), "{}", got[0]);
        assert!(got.last().unwrap().get("omitted_hint").is_none());
        let joined: Vec<String> = got.iter().flat_map(said).collect();
        assert_eq!(joined, whole, "hops {hops}: the pages in order are the one big reply");
    }
}

#[test]
fn a_write_between_pages_shifts_nothing_and_shows_on_the_next_request() {
    let (_dir, store) = hub();
    let before = said(&call(&store, &caller(T + 100), "recall", &json!({"subject": "Ada Hub", "k": 1000})).unwrap());
    let mut later = T + 200;
    let got = pages(&store, &caller(T + 100), &json!({"subject": "Ada Hub", "k": 10}), || {
        // Newest first, so a new fact would lead the list and push every other one back a place.
        call(&store, &caller(later), "relate", &json!({"from": "Ada Hub", "to": "Thing new", "type": "likes"}))
            .unwrap();
        later += 1;
    });
    let joined: Vec<String> = got.iter().flat_map(said).collect();
    assert_eq!(joined, before, "the pages read as of the first one");
    let now = call(&store, &caller(T + 300), "recall", &json!({"subject": "Ada Hub", "k": 1})).unwrap();
    assert_eq!(now["facts"][0]["object"], json!("Thing new"), "a new request sees the write: {now}");
}

#[test]
fn a_cursor_is_refused_with_another_request_caller_or_when_altered() {
    let (_dir, store) = hub();
    let first = call(&store, &caller(T + 100), "recall", &json!({"subject": "Ada Hub", "k": 10})).unwrap();
    let next = first["next"].as_str().unwrap_or_else(|| panic!("no next: {first}")).to_owned();
    let mut other_user = caller(T + 100);
    other_user.part = Partition::new("local", "u2", "default").unwrap();
    call(&store, &other_user, "relate", &json!({"from": "Ada Hub", "to": "Elsewhere", "type": "likes"})).unwrap();
    let mut other_agent = caller(T + 100);
    other_agent.agent = "codex".into();
    let mut altered = next.clone().into_bytes();
    altered[3] = if altered[3] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    let cases: Vec<(Caller, Value)> = vec![
        (caller(T + 100), json!({"subject": "Thing 01", "k": 10, "cursor": next})),
        (caller(T + 100), json!({"subject": "Ada Hub", "k": 11, "cursor": next})),
        (caller(T + 100), json!({"subject": "Ada Hub", "k": 10, "as_of": T + 50, "cursor": next})),
        (caller(T + 100), json!({"subject": "Ada Hub", "k": 10, "valid_at": "2026-01-01", "cursor": next})),
        (other_user, json!({"subject": "Ada Hub", "k": 10, "cursor": next})),
        (other_agent, json!({"subject": "Ada Hub", "k": 10, "cursor": next})),
        (caller(T + 100), json!({"subject": "Ada Hub", "k": 10, "cursor": altered})),
        (caller(T + 100), json!({"subject": "Ada Hub", "k": 10, "cursor": "not-a-cursor"})),
        (caller(T + 100), json!({"subject": "Ada Hub", "k": 10, "cursor": ""})),
    ];
    for (who, body) in cases {
        let err = call(&store, &who, "recall", &body).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{body}");
        assert!(err.to_string().contains("cursor: "), "{body}: {err}");
    }
    let second = call(&store, &caller(T + 100), "recall", &json!({"subject": "Ada Hub", "k": 10, "cursor": next}));
    assert_eq!(second.unwrap()["facts"].as_array().map(Vec::len), Some(10), "the right request still pages");
}

#[test]
fn a_fact_forgotten_between_pages_refuses_the_cursor_rather_than_skip_one() {
    let (_dir, store) = hub();
    let first = call(&store, &caller(T + 100), "recall", &json!({"subject": "Ada Hub", "k": 10})).unwrap();
    let gone = first["facts"][0]["id"].clone();
    call(&store, &caller(T + 150), "forget", &json!({"fact": {"id": gone}})).unwrap();
    let body = json!({"subject": "Ada Hub", "k": 10, "cursor": first["next"]});
    let err = call(&store, &caller(T + 200), "recall", &body).unwrap_err();
    assert!(err.to_string().contains("cursor: the facts its earlier pages gave read differently"), "{err}");
}

/// A page ends before the fact that would take its facts past `RECALL_PAGE_BYTES`, whatever `k`;
/// the pages still concatenate to every fact once, `omitted` counting what each left.
#[test]
fn a_page_of_large_facts_ends_at_its_byte_bound_and_the_rest_follow() {
    let (_dir, store, _part) = fresh();
    for i in 0..30 {
        let attributes = json!({"notes": format!("{i} {}", "n".repeat(7_000))});
        let body = json!({"from": "Heavy", "to": format!("Thing {i:02}"), "type": "has", "attributes": attributes});
        call(&store, &caller(T + i), "relate", &body).unwrap();
    }
    let got = pages(&store, &caller(T + 100), &json!({"subject": "Heavy", "k": 1000}), || {});
    assert!(got.len() >= 4, "{} pages", got.len());
    for page in &got {
        let bytes = serde_json::to_vec(&page["facts"]).unwrap().len();
        assert!(bytes <= super::recall::RECALL_PAGE_BYTES, "{bytes}");
    }
    let joined: Vec<String> = got.iter().flat_map(said).collect();
    assert_eq!(joined.len(), 30);
    assert_eq!(joined.iter().collect::<std::collections::HashSet<_>>().len(), 30);
    let first = got[0]["facts"].as_array().unwrap().len();
    assert_eq!(got[0]["omitted"], json!(30 - first));
}
