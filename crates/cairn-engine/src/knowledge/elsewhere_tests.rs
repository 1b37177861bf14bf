//! A recall or context that finds nothing in the caller's scope names the caller's other scopes
//! that hold what was asked (`elsewhere.rs`), never another user's, never a scope the node says
//! the caller's token may not use.

use super::Partition;
use super::api::Caller;
use super::testing::{call, caller, fresh};
use serde_json::{Value, json};

fn in_scope(user: &str, scope: &str) -> Caller {
    Caller { part: Partition::new("local", user, scope).unwrap(), ..caller(1) }
}

fn store_priya(store: &crate::store::Store, who: &Caller) {
    let facts = json!({"facts": {"entities": [{"name": "Priya Raman", "type": "person"}],
        "relations": [{"source": "Priya Raman", "target": "Ledger", "type": "owns"}]}});
    call(store, who, "remember", &facts).unwrap();
}

fn scopes(reply: &Value) -> Vec<String> {
    reply["elsewhere"]["scopes"]
        .as_array()
        .map_or_else(Vec::new, |s| s.iter().map(|x| x["scope"].as_str().unwrap().to_owned()).collect())
}

#[test]
fn a_recall_missing_here_names_the_users_scopes_holding_the_name() {
    let (_dir, store, _) = fresh();
    store_priya(&store, &in_scope("u1", "project-x"));
    store_priya(&store, &in_scope("u2", "theirs"));
    let here = in_scope("u1", "default");
    call(&store, &here, "relate", &json!({"from": "Ada", "to": "Ledger", "type": "uses"})).unwrap();
    for subject in ["Priya Raman", "priya raman", "Priya"] {
        let r = call(&store, &here, "recall", &json!({ "subject": subject })).unwrap();
        assert_eq!(r["state"], json!("nothing_stored"), "{subject}: {r}");
        assert_eq!(r["elsewhere"]["scopes"], json!([{"scope": "project-x", "name": "Priya Raman"}]), "{subject}: {r}");
        assert!(r["elsewhere"]["hint"].as_str().unwrap().contains("send `scope`"), "{r}");
    }
    for subject in ["Priy", "Raman", "Nobody"] {
        let r = call(&store, &here, "recall", &json!({ "subject": subject })).unwrap();
        assert!(r.get("elsewhere").is_none(), "{subject} is no whole leading word of a name there: {r}");
    }
    let limited = json!({"subject": "Priya", "readableScopes": ["default"]});
    let r = call(&store, &here, "recall", &limited).unwrap();
    assert!(r.get("elsewhere").is_none(), "a scope the token may not use is not named: {r}");
    let found = call(&store, &in_scope("u1", "project-x"), "recall", &json!({"subject": "Priya"})).unwrap();
    assert!(found.get("elsewhere").is_none(), "{found}");
}

#[test]
fn a_word_that_never_names_alone_is_named_elsewhere_only_as_a_whole_name() {
    let (_dir, store, _) = fresh();
    call(&store, &in_scope("u1", "music"), "remember", &json!({"facts": {"entities": [{"name": "The Who"}]}})).unwrap();
    let r = call(&store, &in_scope("u1", "default"), "recall", &json!({"subject": "the"})).unwrap();
    assert!(r.get("elsewhere").is_none(), "{r}");
    let r = call(&store, &in_scope("u1", "default"), "recall", &json!({"subject": "The Who"})).unwrap();
    assert_eq!(scopes(&r), ["music"], "{r}");
}

#[test]
fn context_on_an_empty_scope_names_the_users_scopes_holding_knowledge() {
    let (_dir, store, _) = fresh();
    store_priya(&store, &in_scope("u1", "project-x"));
    store_priya(&store, &in_scope("u2", "theirs"));
    let passages = json!({"passages": [{"text": "The ledger service moved to Rust.", "mentions": []}]});
    call(&store, &in_scope("u1", "notes-only"), "remember", &passages).unwrap();
    let ask = json!({"question": "Who owns the ledger?"});
    let empty = call(&store, &in_scope("u1", "default"), "context", &ask).unwrap();
    assert_eq!(empty["state"], json!("nothing_stored"), "{empty}");
    assert_eq!(
        empty["elsewhere"]["scopes"],
        json!([
            {"scope": "project-x", "entities": 2, "passages": 0},
            {"scope": "notes-only", "entities": 0, "passages": 1}
        ]),
        "most first, never another user's: {empty}"
    );
    let limited = json!({"question": "Who owns the ledger?", "readableScopes": ["default", "notes-only"]});
    let r = call(&store, &in_scope("u1", "default"), "context", &limited).unwrap();
    assert_eq!(scopes(&r), ["notes-only"], "{r}");
    let miss = call(&store, &in_scope("u1", "notes-only"), "context", &json!({"question": "Who is Zed?"})).unwrap();
    assert!(miss.get("elsewhere").is_none(), "a scope holding knowledge answers for itself: {miss}");
}

/// Found by QA: the scopes were listed by size, so a large scope unrelated to the question came
/// before the one that answers it. They come by how many of the question's words they hold.
#[test]
fn context_elsewhere_lists_the_scopes_matching_more_of_the_question_first() {
    let (_dir, store, _) = fresh();
    let big: Vec<Value> = (0..6).map(|i| json!({"name": format!("Unrelated {i}"), "type": "thing"})).collect();
    call(&store, &in_scope("u1", "big"), "remember", &json!({"facts": {"entities": big}})).unwrap();
    let deploy = json!({"passages": [{"text": "The Atlas deploy finished on Friday.", "mentions": []}]});
    call(&store, &in_scope("u1", "ops"), "remember", &deploy).unwrap();
    let named = json!({"facts": {"entities": [{"name": "Atlas", "type": "project"}]}});
    call(&store, &in_scope("u1", "names"), "remember", &named).unwrap();
    call(&store, &in_scope("u1", "alpha"), "remember", &named).unwrap();
    let ask = json!({"question": "When did the Atlas deploy finish?"});
    let r = call(&store, &in_scope("u1", "default"), "context", &ask).unwrap();
    // ops holds "atlas", "deploy" and "finish"; alpha and names hold the name Atlas (a tie, by
    // name); big holds none of the words but is listed last, as holding knowledge.
    assert_eq!(scopes(&r), ["ops", "alpha", "names", "big"], "{r}");
}
