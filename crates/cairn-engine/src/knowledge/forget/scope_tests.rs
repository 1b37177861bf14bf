//! Forgetting leaves nothing behind: the history and audit of a forgotten subject, and the notes,
//! handoffs and events of a forgotten scope or user, through the verbs as the node calls them.

use crate::knowledge::Partition;
use crate::knowledge::api::{Caller, call};
use crate::knowledge::testing::fresh;
use crate::store::Store;
use serde_json::{Value, json};

fn who(part: &Partition, agent: &str, now: i64) -> Caller {
    Caller { part: part.clone(), agent: agent.into(), now }
}

fn knowledge(store: &Store, caller: &Caller, verb: &str, body: &Value) -> Value {
    serde_json::from_slice(&call(store, verb, caller, &serde_json::to_vec(body).unwrap()).unwrap()).unwrap()
}

fn notes(store: &Store, caller: &Caller, verb: &str, body: &Value) -> Value {
    let bytes = crate::notes::api::call(store, verb, caller, &serde_json::to_vec(body).unwrap()).unwrap();
    let reply: Value = serde_json::from_slice(&bytes).unwrap();
    assert!(reply.get("error").is_none(), "{verb} {body}: {reply}");
    reply
}

/// The history page `body` asks for; a key never stored there (404, its message echoing the key
/// asked) reaches nothing.
fn history(store: &Store, caller: &Caller, body: &Value) -> Value {
    let bytes = crate::notes::api::call(store, "history", caller, &serde_json::to_vec(body).unwrap()).unwrap();
    let reply: Value = serde_json::from_slice(&bytes).unwrap();
    if reply["error"]["code"] == "NOT_FOUND" {
        return json!({"events": []});
    }
    assert!(reply.get("error").is_none(), "history {body}: {reply}");
    reply
}

/// Every way a reader of `part` could reach a note, a handoff or an event: lists with private
/// reads and each task, each handoff, the history of each key and visibility, and the audit of
/// each agent.
fn reachable(store: &Store, part: &Partition, keys: &[&str], tasks: &[&str]) -> String {
    let mut seen = Vec::new();
    for agent in ["claude", "codex"] {
        let c = who(part, agent, 9_000);
        let private = json!({"allowPrivate": true, "includePrivate": true});
        seen.push(notes(store, &c, "note_list", &private));
        seen.push(notes(store, &c, "audit", &private));
        for task in tasks {
            let body = json!({"allowPrivate": true, "includePrivate": true, "taskId": task});
            seen.push(notes(store, &c, "note_list", &body));
            seen.push(notes(store, &c, "handoff_resume", &json!({"taskId": task})));
        }
        seen.push(notes(store, &c, "handoff_resume", &json!({})));
        for key in keys {
            for (visibility, task) in [("user", None), ("agent", None), ("task", Some(tasks[0]))] {
                let mut body =
                    json!({"key": key, "visibility": visibility, "allowPrivate": true, "includePrivate": true});
                if let Some(t) = task {
                    body["taskId"] = json!(t);
                }
                seen.push(history(store, &c, &body));
            }
        }
    }
    serde_json::to_string(&seen).unwrap()
}

/// Writes, in `part` as `claude`, a user note, a private note, an agent note, a task note (two
/// versions), a handoff and some knowledge.
fn fill(store: &Store, part: &Partition) {
    let c = who(part, "claude", 1_000);
    for body in [
        json!({"key": "pknote", "value": {"text": "secret plan alpha"}, "kind": "decision", "idempotencyKey": "i1"}),
        json!({"key": "pkgone", "value": "omega", "kind": "decision"}),
        json!({"key": "pkprivate", "value": "hidden beta", "kind": "user_fact", "private": true, "allowPrivate": true}),
        json!({"key": "pkmine", "value": "gamma", "kind": "task_state", "visibility": "agent"}),
        json!({"key": "pktask", "value": "delta one", "kind": "task_state", "visibility": "task", "taskId": "PK"}),
        json!({"key": "pktask", "value": "delta two", "kind": "task_state", "visibility": "task", "taskId": "PK"}),
    ] {
        notes(store, &c, "note_write", &body);
    }
    notes(store, &c, "note_forget", &json!({"key": "pkgone"}));
    notes(
        store,
        &c,
        "handoff_create",
        &json!({"taskId": "PK", "summary": "capsule epsilon", "nextSteps": ["zeta"], "to": "codex"}),
    );
    knowledge(store, &c, "remember", &founded());
}

/// The audit's example: a sentence and the relation it states, its founder's role beside it.
fn founded() -> Value {
    json!({
        "content": "Marcus Feld founded Nimbus Labs in Oslo.",
        "facts": {
            "entities": [{"name": "Marcus Feld", "attributes": {"role": "founder"}}],
            "relations": [{"source": "Marcus Feld", "target": "Nimbus Labs", "type": "founded"}],
        },
    })
}

/// The knowledge indexes a filled scope writes to that no other test of forgetting lists: the
/// attribute index both ways (`attr_index.rs`) and the attribute writes (`attr_writes.rs`).
const INDEX_TREES: [&str; 3] = ["k.attr", "k.attr_of", "k.attr_writes"];

/// Whether any of `INDEX_TREES` holds a key of `part`.
fn indexed(store: &Store, part: &Partition) -> bool {
    let snap = store.snapshot().unwrap();
    INDEX_TREES.iter().any(|tree| snap.prefix(tree, part.prefix()).unwrap().next().is_some())
}

/// Every notes tree a filled scope writes to.
const NOTES_TREES: [&str; 11] =
    ["n.cur", "n.ver", "n.idem", "n.forgotten", "n.term", "n.gram", "n.doc", "n.tric", "n.id", "n.hand", "n.hand_for"];

const WORDS: [&str; 8] = ["pknote", "pkprivate", "pkmine", "pktask", "alpha", "beta", "epsilon", "Marcus"];

#[test]
fn a_forgotten_subject_leaves_no_trace_in_history_or_audit() {
    let (_dir, store, part) = fresh();
    let c = who(&part, "claude", 1_000);
    knowledge(&store, &c, "remember", &founded());
    knowledge(&store, &c, "relate", &json!({"from": "Marcus Feld", "to": "Oslo", "type": "lives_in"}));
    assert!(reachable(&store, &part, &[], &["PK"]).contains("Marcus"), "the events name him before the forget");
    assert!(indexed(&store, &part), "his role is filed");
    let gone = knowledge(&store, &who(&part, "claude", 2_000), "forget", &json!({"subject": "Marcus Feld"}));
    assert_eq!(gone["state"], "forgotten", "{gone}");
    assert!(!indexed(&store, &part), "his role's entries went with him");
    let audit = serde_json::to_string(&notes(&store, &c, "audit", &json!({}))).unwrap();
    assert!(!audit.contains("Marcus") && !audit.contains("marcus"), "the audit spells the forgotten fact: {audit}");
    assert!(audit.contains("Nimbus Labs"), "the entity that stays keeps its events: {audit}");
    for body in [
        json!({"subject": "Marcus Feld"}),
        json!({"fact": {"from": "Marcus Feld", "to": "Nimbus Labs", "type": "founded"}}),
        json!({"fact": {"from": "Marcus Feld", "to": "Oslo", "type": "lives_in"}}),
    ] {
        assert_eq!(notes(&store, &c, "history", &body)["events"], json!([]), "{body}");
    }
    let again = knowledge(&store, &c, "forget", &json!({"subject": "Marcus Feld"}));
    assert_eq!(again, json!({"state": "already_forgotten"}));
}

#[test]
fn forgetting_a_scope_takes_its_notes_handoffs_and_history() {
    let (_dir, store, _) = fresh();
    let pack = Partition::new("local", "u1", "pack").unwrap();
    let other = Partition::new("local", "u1", "other").unwrap();
    fill(&store, &pack);
    fill(&store, &other);
    let before = reachable(&store, &pack, &["pknote", "pkprivate", "pkmine", "pktask"], &["PK"]);
    assert!(WORDS.iter().all(|w| before.contains(w)), "every word is reachable before: {before}");
    let reply = knowledge(&store, &who(&pack, "codex", 5_000), "forget", &json!({"all": true}));
    assert_eq!(reply["state"], "forgotten", "{reply}");
    assert_eq!((reply["forgotten"]["notes"].as_u64(), reply["forgotten"]["handoffs"].as_u64()), (Some(4), Some(1)));
    assert_eq!(reply["kept"], json!([]));
    let after = reachable(&store, &pack, &["pknote", "pkprivate", "pkmine", "pktask"], &["PK"]);
    for w in WORDS {
        assert!(!after.contains(w), "{w} is reachable after forget all: {after}");
    }
    let snap = store.snapshot().unwrap();
    for tree in NOTES_TREES.iter().chain(&INDEX_TREES) {
        assert_eq!(snap.prefix(tree, pack.prefix()).unwrap().count(), 0, "{tree} keeps keys of the forgotten scope");
    }
    assert!(indexed(&store, &other), "another scope keeps its entries");
    for tree in ["h.event", "h.target", "h.agent"] {
        assert_eq!(snap.prefix(tree, pack.prefix()).unwrap().count(), 0, "{tree} keeps keys of the forgotten scope");
        let retired = snap.prefix(tree, pack.retired().prefix()).unwrap().count();
        assert_eq!(retired, 1, "{tree}: only the forget event stays, retired");
    }
    let audit = notes(&store, &who(&pack, "codex", 6_000), "audit", &json!({}));
    assert_eq!(audit["events"][0]["target"], json!({"form": "all"}), "the record that the scope was forgotten stays");
    let untouched = reachable(&store, &other, &["pknote", "pkprivate", "pkmine", "pktask"], &["PK"]);
    assert!(WORDS.iter().all(|w| untouched.contains(w)), "another scope is untouched");
    let again = knowledge(&store, &who(&pack, "codex", 7_000), "forget", &json!({"all": true}));
    assert_eq!(again, json!({"state": "already_forgotten"}));
}

#[test]
fn a_scope_holding_only_notes_is_forgotten_not_missing() {
    let (_dir, store, part) = fresh();
    let c = who(&part, "claude", 1_000);
    notes(&store, &c, "note_write", &json!({"key": "only", "value": 1, "kind": "decision"}));
    let reply = knowledge(&store, &c, "forget", &json!({"all": true}));
    assert_eq!(reply["forgotten"]["notes"], 1, "{reply}");
    assert_eq!(notes(&store, &c, "note_list", &json!({}))["notes"], json!([]));
}

#[test]
fn delete_user_takes_notes_handoffs_and_history_of_every_scope() {
    let (_dir, store, _) = fresh();
    let home = Partition::new("local", "u9", "default").unwrap();
    let work = Partition::new("local", "u9", "work").unwrap();
    let neighbour = Partition::new("local", "u1", "default").unwrap();
    for p in [&home, &work, &neighbour] {
        fill(&store, p);
    }
    let reply = knowledge(&store, &who(&work, "claude", 5_000), "delete_user", &json!({"confirm": true}));
    assert_eq!(reply["state"], "forgotten", "{reply}");
    for scope in reply["scopes"].as_array().unwrap() {
        assert_eq!((scope["forgotten"]["notes"].as_u64(), scope["forgotten"]["handoffs"].as_u64()), (Some(4), Some(1)));
    }
    for p in [&home, &work] {
        let after = reachable(&store, p, &["pknote", "pkprivate", "pkmine", "pktask"], &["PK"]);
        for w in WORDS {
            assert!(!after.contains(w), "{w} is reachable after delete_user: {after}");
        }
    }
    let untouched = reachable(&store, &neighbour, &["pknote", "pkprivate", "pkmine", "pktask"], &["PK"]);
    assert!(WORDS.iter().all(|w| untouched.contains(w)), "another user is untouched");
    assert!(!indexed(&store, &home) && !indexed(&store, &work), "a deleted user keeps no index entry");
    assert!(indexed(&store, &neighbour), "another user keeps its entries");
}

fn listed_scopes(store: &Store, caller: &Caller) -> Vec<String> {
    let status = knowledge(store, caller, "status", &json!({}));
    status["scopes"].as_array().unwrap().iter().map(|s| s["scope"].as_str().unwrap().to_owned()).collect()
}

#[test]
fn a_forgotten_scope_leaves_the_status_list_until_written_again() {
    let (_dir, store, _) = fresh();
    let pack = Partition::new("local", "u1", "pack").unwrap();
    let other = Partition::new("local", "u1", "other").unwrap();
    fill(&store, &pack);
    fill(&store, &other);
    let c = who(&other, "claude", 5_000);
    assert_eq!(listed_scopes(&store, &c), ["other", "pack"]);
    let reply = knowledge(&store, &who(&pack, "claude", 5_000), "forget", &json!({"all": true}));
    assert_eq!(reply["state"], "forgotten", "{reply}");
    assert_eq!(listed_scopes(&store, &c), ["other"], "a forgotten scope is not listed");
    let again = knowledge(&store, &who(&pack, "claude", 6_000), "forget", &json!({"all": true}));
    assert_eq!(again, json!({"state": "already_forgotten"}));
    assert_eq!(listed_scopes(&store, &c), ["other"]);
    notes(&store, &who(&pack, "claude", 7_000), "note_write", &json!({"key": "back", "value": 1, "kind": "decision"}));
    assert_eq!(listed_scopes(&store, &c), ["other", "pack"], "a write lists it again");
    // A user whose every scope was forgotten whole was forgotten before, not never stored.
    for p in [&pack, &other] {
        assert_eq!(knowledge(&store, &who(p, "claude", 8_000), "forget", &json!({"all": true}))["state"], "forgotten");
    }
    assert_eq!(listed_scopes(&store, &c), Vec::<String>::new());
    let reply = knowledge(&store, &c, "delete_user", &json!({"confirm": true}));
    assert_eq!(reply, json!({"state": "already_forgotten"}));
    let stranger = who(&Partition::new("local", "u2", "default").unwrap(), "claude", 9_000);
    assert_eq!(knowledge(&store, &stranger, "delete_user", &json!({"confirm": true}))["error"]["code"], "NOT_FOUND");
}

/// The trees holding a key that starts with `part`'s prefix.
fn trees_keyed_by(store: &Store, part: &Partition) -> Vec<String> {
    let prefix = part.prefix().to_vec();
    let (trees, _) = store
        .write(move |tx| {
            let mut found = Vec::new();
            for tree in tx.tree_names() {
                if tx.first_with_prefix(&tree, &prefix)?.is_some() {
                    found.push(tree);
                }
            }
            Ok(found)
        })
        .unwrap();
    trees
}

fn entity_id(store: &Store, caller: &Caller, name: &str) -> u64 {
    let reply = knowledge(store, caller, "recall", &json!({"subject": name}));
    reply["subject"]["id"].as_str().unwrap_or_else(|| panic!("{reply}")).parse().unwrap()
}

#[test]
fn a_scope_forgotten_whole_keeps_no_key_under_its_name_and_ids_and_audit_go_on() {
    let (_dir, store, _) = fresh();
    let pack = Partition::new("local", "u1", "pack").unwrap();
    fill(&store, &pack);
    let c = who(&pack, "claude", 5_000);
    let before = entity_id(&store, &c, "Nimbus Labs");
    assert_eq!(knowledge(&store, &c, "forget", &json!({"all": true}))["state"], "forgotten");
    assert_eq!(trees_keyed_by(&store, &pack), Vec::<String>::new(), "keys still spell the forgotten scope");

    // Written again: ids continue past the forgotten ones, and the audit lists the forgetting
    // (kept retired) before the new write.
    let later = who(&pack, "claude", 6_000);
    knowledge(&store, &later, "remember", &founded());
    assert!(entity_id(&store, &later, "Nimbus Labs") > before, "an id of the forgotten scope is given again");
    let audit = notes(&store, &later, "audit", &json!({}));
    let ops: Vec<&str> = audit["events"].as_array().unwrap().iter().map(|e| e["op"].as_str().unwrap()).collect();
    assert_eq!(ops.first(), Some(&"forget"), "{audit}");
    assert!(ops.len() > 1 && ops[1..].iter().all(|op| *op != "forget"), "{audit}");
    let seqs: Vec<u64> =
        audit["events"].as_array().unwrap().iter().map(|e| e["seq"].as_str().unwrap().parse().unwrap()).collect();
    assert!(seqs.windows(2).all(|w| w[0] < w[1]), "one sequence across the retired and the live events: {seqs:?}");

    // Forgotten again after the new write, and forgetting a third time is "already".
    assert_eq!(knowledge(&store, &later, "forget", &json!({"all": true}))["state"], "forgotten");
    assert_eq!(trees_keyed_by(&store, &pack), Vec::<String>::new());
    let again = knowledge(&store, &who(&pack, "claude", 7_000), "forget", &json!({"all": true}));
    assert_eq!(again, json!({"state": "already_forgotten"}));
    let audit = notes(&store, &who(&pack, "claude", 7_000), "audit", &json!({}));
    assert_eq!(audit["events"].as_array().unwrap().len(), 2, "both forgettings are audited: {audit}");
}

#[test]
fn a_deleted_user_keeps_no_key_under_its_name_and_its_audit_lists_the_deletion() {
    let (_dir, store, _) = fresh();
    let home = Partition::new("local", "u9", "default").unwrap();
    let work = Partition::new("local", "u9", "work").unwrap();
    // A scope whose only record went one form at a time: its tombstone, counter and events stay
    // keyed by the partition until the user goes.
    let emptied = Partition::new("local", "u9", "emptied").unwrap();
    fill(&store, &home);
    fill(&store, &work);
    let e = who(&emptied, "claude", 2_000);
    knowledge(&store, &e, "remember", &json!({"facts": {"entities": [{"name": "Ida Lund", "type": "person"}]}}));
    assert_eq!(knowledge(&store, &e, "forget", &json!({"subject": "Ida Lund"}))["state"], "forgotten");
    assert!(!trees_keyed_by(&store, &emptied).is_empty());
    let c = who(&work, "claude", 5_000);
    assert_eq!(knowledge(&store, &c, "delete_user", &json!({}))["state"], "forgotten");
    for p in [&home, &work, &emptied] {
        assert_eq!(trees_keyed_by(&store, p), Vec::<String>::new(), "keys still spell {p:?}");
    }
    let audit = notes(&store, &who(&work, "claude", 6_000), "audit", &json!({}));
    let ops: Vec<&str> = audit["events"].as_array().unwrap().iter().map(|e| e["op"].as_str().unwrap()).collect();
    assert_eq!(ops, ["delete_user"], "{audit}");
    assert_eq!(knowledge(&store, &c, "delete_user", &json!({})), json!({"state": "already_forgotten"}));
}
