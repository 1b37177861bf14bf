//! Note keys and task ids are one name in either Unicode spelling (NFC `été`, NFD `e\u{301}te\u{301}`),
//! in every verb that names them.

use super::tests::{agent, code, fresh, keys, run};
use serde_json::json;

const NFC: &str = "\u{e9}t\u{e9}";
const NFD: &str = "e\u{301}te\u{301}";
const TASK_NFC: &str = "r\u{e9}union";
const TASK_NFD: &str = "re\u{301}union";

#[test]
fn a_key_spelled_nfd_names_the_note_written_nfc() {
    let (_dir, store) = fresh();
    let (claude, codex) = (agent("claude"), agent("codex"));
    let first =
        run(&store, &claude, "note_write", &json!({"key": NFC, "value": 1, "kind": "user_fact", "expectedVersion": 0}));
    assert_eq!(first["version"], 1, "{first}");
    // Create-only holds across spellings: the second agent meets the first note.
    let twin =
        run(&store, &codex, "note_write", &json!({"key": NFD, "value": 2, "kind": "user_fact", "expectedVersion": 0}));
    assert_eq!(code(&twin), "VERSION_CONFLICT", "{twin}");
    let listed = run(&store, &codex, "note_list", &json!({"key": NFD}));
    assert_eq!(keys(&listed), vec![NFC.to_owned()]);
    let history = run(&store, &codex, "history", &json!({"key": NFD}));
    assert_eq!(history["events"].as_array().unwrap().len(), 1, "{history}");
    let gone = run(&store, &codex, "note_forget", &json!({"key": NFD}));
    assert_eq!(gone["state"], "forgotten", "{gone}");
    assert_eq!(gone["note"]["key"], NFC);
    assert_eq!(keys(&run(&store, &claude, "note_list", &json!({}))), Vec::<String>::new());
}

#[test]
fn a_task_id_spelled_nfd_names_the_task_written_nfc() {
    let (_dir, store) = fresh();
    let (claude, codex) = (agent("claude"), agent("codex"));
    let w =
        run(&store, &claude, "note_write", &json!({"key": "k", "value": 1, "kind": "task_state", "taskId": TASK_NFC}));
    assert_eq!(w["taskId"], TASK_NFC, "{w}");
    assert_eq!(keys(&run(&store, &codex, "note_list", &json!({"taskId": TASK_NFD}))), vec!["k".to_owned()]);
    // `memory_context` and `memory_query` send their taskId as `viewTaskId`.
    assert_eq!(keys(&run(&store, &codex, "note_list", &json!({"viewTaskId": TASK_NFD}))), vec!["k".to_owned()]);
    let again = run(&store, &codex, "note_write", &json!({"key": "k", "value": 2, "taskId": TASK_NFD}));
    assert_eq!((again["version"].clone(), again["evolution"].clone()), (json!(2), json!("replaced")), "{again}");
    let made = run(&store, &claude, "handoff_create", &json!({"taskId": TASK_NFD, "summary": "s"}));
    assert_eq!(made["taskId"], TASK_NFC, "{made}");
    let resumed = run(&store, &codex, "handoff_resume", &json!({"taskId": TASK_NFC}));
    assert_eq!(resumed["state"], "resumed", "{resumed}");
    assert_eq!(resumed["handoff"]["id"], made["id"]);
}

#[test]
fn an_import_recomposes_keys_and_task_ids() {
    let (_dir, store) = fresh();
    let me = agent("claude");
    let records = json!({"records": [
        {"kind": "note", "key": NFD, "value": 1, "noteKind": "user_fact", "visibility": "task", "taskId": TASK_NFD},
        {"kind": "handoff", "taskId": TASK_NFD, "summary": "imported"},
    ]});
    let imported = crate::knowledge::testing_api::verb(&store, &me, "import", &records).unwrap();
    assert_eq!(imported["imported"]["notes"], 1, "{imported}");
    assert_eq!(keys(&run(&store, &me, "note_list", &json!({"key": NFC, "taskId": TASK_NFC}))), vec![NFC.to_owned()]);
    let resumed = run(&store, &me, "handoff_resume", &json!({"taskId": TASK_NFC}));
    assert_eq!(resumed["handoff"]["summary"], "imported", "{resumed}");
}
