//! A task note is found by its task id (`search_text.rs`): "what is left on AUTH-12" reads the
//! notes of task `AUTH-12`, and an index built before (layout 4) is rebuilt to hold the task ids.

use super::tests::{agent, fresh, run};
use crate::knowledge::Partition;
use serde_json::{Value, json};

fn keys(reply: &Value) -> Vec<String> {
    let notes = reply["notes"].as_array().unwrap_or_else(|| panic!("not a list: {reply}"));
    notes.iter().map(|n| n["key"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_task_note_is_found_by_its_task_id_and_an_older_index_is_rebuilt() {
    let (_d, store) = fresh();
    let write = |body: Value| {
        let reply = run(&store, &agent("claude"), "note_write", &body);
        assert!(reply.get("error").is_none(), "{reply}");
    };
    write(json!({"key": "progress", "kind": "task_state", "taskId": "AUTH-12", "value": {"done": ["schema"]}}));
    write(json!({"key": "progress", "kind": "task_state", "taskId": "DOCS-3", "value": {"done": ["intro"]}}));
    write(json!({"key": "lunch", "kind": "user_fact", "value": "pizza"}));
    let list = |body: Value| run(&store, &agent("codex"), "note_list", &body);
    let asked = json!({"query": "what is left on AUTH-12", "taskId": "AUTH-12"});
    assert_eq!(keys(&list(asked.clone())), ["progress"]);
    // Without the taskId the task's notes are offered to send back, the other task's not.
    let offered = list(json!({"query": "what is left on AUTH-12"}));
    assert_eq!(offered["did_you_mean"], json!([{"key": "progress", "visibility": "task", "taskId": "AUTH-12"}]));

    // The layout of a store indexed before task ids were: no term of them.
    let part = Partition::new("local", "u1", "default").unwrap();
    store
        .write(move |tx| {
            for term in ["auth-12", "auth", "12"] {
                for (k, _) in tx.prefix(super::index::TERM, &super::index::term_prefix(&part, term))? {
                    tx.delete(super::index::TERM, &k)?;
                }
            }
            tx.put("n.folded", &[], &[4])
        })
        .unwrap();
    assert!(!super::index::current(&store).unwrap());
    let reply = list(json!({"query": "AUTH-12", "taskId": "AUTH-12"}));
    assert_eq!(keys(&reply), ["progress"]);
    assert_eq!(reply["notes"][0]["receipt"]["channels"][0], "token", "found by a term the rebuild indexed: {reply}");
    assert!(super::index::current(&store).unwrap());
}
