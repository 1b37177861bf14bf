//! `history {key}` where the key holds a user note and other notes (`events.rs` `note_named`): the
//! caller is told which notes the key names instead of getting the user note's events alone.

use super::tests::{agent, code, fresh, run};
use serde_json::{Value, json};

fn write(store: &crate::store::Store, by: &str, body: &Value) {
    let mut full = json!({"key": "db", "kind": "decision", "allowPrivate": true});
    full.as_object_mut().unwrap().extend(body.as_object().unwrap().clone());
    let reply = run(store, &agent(by), "note_write", &full);
    assert!(reply.get("error").is_none(), "{reply}");
}

/// The `(op, visibility, taskId)` of each event of a history page.
fn events(page: &Value) -> Vec<(String, String, Option<String>)> {
    let events = page["events"].as_array().unwrap_or_else(|| panic!("not a page: {page}"));
    let text = |v: &Value| v.as_str().map(str::to_owned);
    events
        .iter()
        .map(|e| (text(&e["op"]).unwrap(), text(&e["target"]["visibility"]).unwrap(), text(&e["target"]["taskId"])))
        .collect()
}

#[test]
fn a_key_alone_beside_other_notes_is_refused_naming_each_and_each_is_read_by_its_visibility() {
    let (_d, store) = fresh();
    write(&store, "claude", &json!({"value": "postgres"}));
    // With the user note alone the key names it, as before.
    assert_eq!(events(&run(&store, &agent("claude"), "history", &json!({"key": "db"}))).len(), 1);
    write(&store, "claude", &json!({"value": "sqlite", "taskId": "t1"}));
    write(&store, "claude", &json!({"value": "mine", "visibility": "agent"}));
    write(&store, "codex", &json!({"value": "codex's", "visibility": "agent"}));
    write(&store, "claude", &json!({"value": "hidden", "taskId": "t2", "private": true}));

    let claude = run(&store, &agent("claude"), "history", &json!({"key": "db"}));
    assert_eq!(code(&claude), "VALIDATION_ERROR", "{claude}");
    let named: Vec<&Value> = claude["error"]["details"].as_array().unwrap().iter().map(|d| &d["note"]).collect();
    assert_eq!(
        named,
        [
            &json!({"key": "db", "visibility": "user"}),
            &json!({"key": "db", "visibility": "agent"}),
            &json!({"key": "db", "visibility": "task", "taskId": "t1"}),
        ],
        "another agent's note and a private note are not named: {claude}"
    );
    assert!(claude["error"]["details"].as_array().unwrap().iter().all(|d| d["field"] == "visibility"));
    let message = claude["error"]["message"].as_str().unwrap();
    assert!(message.starts_with("visibility: key \"db\" names 3 notes"), "{message}");
    assert!(message.contains("task \"t1\"") && !message.contains("t2"), "{message}");

    // A reader of private notes is told of the private one too; codex of its own agent note.
    let private =
        run(&store, &agent("claude"), "history", &json!({"key": "db", "allowPrivate": true, "includePrivate": true}));
    assert_eq!(private["error"]["details"].as_array().map(Vec::len), Some(4), "{private}");
    let codex = run(&store, &agent("codex"), "history", &json!({"key": "db"}));
    assert_eq!(codex["error"]["details"][1]["note"], json!({"key": "db", "visibility": "agent"}), "{codex}");

    // Each note named is read whole, its events naming it.
    let read = |body: Value| events(&run(&store, &agent("claude"), "history", &body));
    let create = |v: &str, t: Option<&str>| vec![("create".to_owned(), v.to_owned(), t.map(str::to_owned))];
    assert_eq!(read(json!({"key": "db", "visibility": "user"})), create("user", None));
    assert_eq!(read(json!({"key": "db", "taskId": "t1"})), create("task", Some("t1")));
    assert_eq!(read(json!({"key": "db", "visibility": "agent"})), create("agent", None));
}

#[test]
fn a_page_begun_on_the_user_note_goes_on_with_it_when_another_note_appears() {
    let (_d, store) = fresh();
    let claude = agent("claude");
    for v in 0..5 {
        write(&store, "claude", &json!({"value": v}));
    }
    let first = run(&store, &claude, "history", &json!({"key": "db", "limit": 2}));
    assert_eq!(events(&first).len(), 2);
    write(&store, "claude", &json!({"value": 9, "taskId": "t1"}));
    let mut seen = events(&first);
    let mut cursor = first["nextCursor"].clone();
    while let Some(c) = cursor.as_str() {
        let page = run(&store, &claude, "history", &json!({"key": "db", "limit": 2, "cursor": c}));
        seen.extend(events(&page));
        cursor = page["nextCursor"].clone();
    }
    let ops: Vec<&str> = seen
        .iter()
        .map(|(op, v, _)| {
            assert_eq!(v, "user");
            op.as_str()
        })
        .collect();
    assert_eq!(ops, ["create", "replace", "replace", "replace", "replace"]);
    // A new first page is told of both notes.
    assert_eq!(code(&run(&store, &claude, "history", &json!({"key": "db"}))), "VALIDATION_ERROR");
}

#[test]
fn a_key_with_no_user_note_is_still_not_found_offering_its_notes() {
    let (_d, store) = fresh();
    write(&store, "claude", &json!({"value": "sqlite", "taskId": "t1"}));
    let miss = run(&store, &agent("claude"), "history", &json!({"key": "db"}));
    assert_eq!(code(&miss), "NOT_FOUND", "{miss}");
    assert_eq!(miss["error"]["details"][0]["note"], json!({"key": "db", "visibility": "task", "taskId": "t1"}));
}
