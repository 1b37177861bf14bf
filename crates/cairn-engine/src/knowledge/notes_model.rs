//! The notes side of the "forgotten never comes back" property (`exchange_properties`): notes of
//! every visibility (private ones too) and handoffs written in the scope, the words each holds,
//! and which words a forget took. After a forget, no gone word is reachable through `note_list`
//! (plain, per task, and by query, the channel `memory_context` reads notes through),
//! `handoff_resume`, `history` of any key and visibility, the audit, or an export.

use super::Partition;
use super::testing_api::{caller, export_pages};
use crate::store::Store;
use proptest::prelude::*;
use serde_json::{Value, json};
use std::collections::BTreeSet;

const KEYS: [&str; 3] = ["plan", "diet", "trip"];
const VISIBILITIES: [&str; 3] = ["user", "agent", "task"];
const TASKS: [&str; 2] = ["T1", "T2"];

/// A note write or a handoff of the model.
#[derive(Debug, Clone)]
pub(super) enum NoteStep {
    Write { key: usize, visibility: usize, private: bool },
    Forget { key: usize, visibility: usize },
    Handoff { task: usize },
}

pub(super) fn note_step() -> impl Strategy<Value = NoteStep> {
    prop_oneof![
        3 => (0..KEYS.len(), 0..VISIBILITIES.len(), any::<bool>())
            .prop_map(|(key, visibility, private)| NoteStep::Write { key, visibility, private }),
        1 => (0..KEYS.len(), 0..VISIBILITIES.len()).prop_map(|(key, visibility)| NoteStep::Forget { key, visibility }),
        1 => (0..TASKS.len()).prop_map(|task| NoteStep::Handoff { task }),
    ]
}

fn call(store: &Store, part: &Partition, now: i64, verb: &str, body: &Value) -> Value {
    let bytes = crate::notes::api::call(store, verb, &caller(part, now), &serde_json::to_vec(body).unwrap()).unwrap();
    serde_json::from_slice(&bytes).unwrap()
}

/// The identity fields of a note of key `key` and visibility `visibility` (task notes on `T1`).
fn identity(key: usize, visibility: usize) -> Value {
    let mut body = json!({"key": KEYS[key], "visibility": VISIBILITIES[visibility], "allowPrivate": true});
    if VISIBILITIES[visibility] == "task" {
        body["taskId"] = json!(TASKS[0]);
    }
    body
}

/// What was written and what must stay unreachable.
#[derive(Default)]
pub(super) struct NotesModel {
    /// (key, visibility, word) of every note version written since its identity was last forgotten.
    live: Vec<(usize, usize, String)>,
    /// Words of handoffs written since the scope was last forgotten.
    handoffs: Vec<String>,
    /// Words a forget took.
    gone: BTreeSet<String>,
}

impl NotesModel {
    /// Applies `step` (the `i`th of the run) at time `now`.
    pub(super) fn apply(&mut self, store: &Store, part: &Partition, i: usize, now: i64, step: &NoteStep) {
        match *step {
            NoteStep::Write { key, visibility, private } => {
                let word = format!("noteword{i}q");
                let mut body = identity(key, visibility);
                body["value"] = json!({"text": word});
                body["kind"] = json!("decision");
                body["private"] = json!(private);
                let reply = call(store, part, now, "note_write", &body);
                assert!(reply.get("error").is_none(), "{reply}");
                self.live.push((key, visibility, word));
            }
            NoteStep::Forget { key, visibility } => {
                let reply = call(store, part, now, "note_forget", &identity(key, visibility));
                if reply["state"] == "forgotten" {
                    let (gone, kept) = self.live.drain(..).partition(|(k, v, _)| (*k, *v) == (key, visibility));
                    self.live = kept;
                    self.gone.extend(gone.into_iter().map(|(_, _, w): (usize, usize, String)| w));
                }
            }
            NoteStep::Handoff { task } => {
                let word = format!("handword{i}q");
                let body = json!({"taskId": TASKS[task], "summary": word, "to": "a"});
                let reply = call(store, part, now, "handoff_create", &body);
                assert!(reply.get("error").is_none(), "{reply}");
                self.handoffs.push(word);
            }
        }
    }

    /// A forget of the whole scope answered `forgotten`: every note and handoff went.
    pub(super) fn forget_all(&mut self) {
        self.gone.extend(self.live.drain(..).map(|(_, _, w)| w));
        self.gone.extend(self.handoffs.drain(..));
    }

    /// Whether words of notes or handoffs are stored (a forget of the scope then removes them).
    pub(super) fn holds_any(&self) -> bool {
        !self.live.is_empty() || !self.handoffs.is_empty()
    }

    /// Checks that no gone word is reachable, and that the live ones are (so the check can fail).
    pub(super) fn check(&self, store: &Store, part: &Partition) -> Result<(), TestCaseError> {
        let private = json!({"allowPrivate": true, "includePrivate": true, "limit": 100});
        let mut seen = vec![call(store, part, 1, "note_list", &private), call(store, part, 1, "audit", &private)];
        for task in TASKS {
            let mut body = private.clone();
            body["taskId"] = json!(task);
            seen.push(call(store, part, 1, "note_list", &body));
            seen.push(call(store, part, 1, "handoff_resume", &json!({"taskId": task})));
        }
        seen.push(call(store, part, 1, "handoff_resume", &json!({"limit": 100})));
        for key in 0..KEYS.len() {
            for visibility in 0..VISIBILITIES.len() {
                let mut body = identity(key, visibility);
                body["includePrivate"] = json!(true);
                body["limit"] = json!(100);
                seen.push(call(store, part, 1, "history", &body));
            }
        }
        let text = serde_json::to_string(&seen).unwrap();
        // The export walks every note and capsule of the scope, private ones included.
        let exported = serde_json::to_string(&export_pages(store, part, 7)).unwrap();
        for word in &self.gone {
            prop_assert!(!exported.contains(word.as_str()), "forgotten {} is exported", word);
            let mut query = private.clone();
            query["query"] = json!(word);
            query["taskId"] = json!(TASKS[0]);
            // Other notes may match by trigrams; none may hold the word.
            let found = call(store, part, 1, "note_list", &query).to_string();
            prop_assert!(!found.contains(word.as_str()), "a query finds forgotten {}: {}", word, found);
            prop_assert!(!text.contains(word.as_str()), "forgotten {} is reachable: {}", word, text);
        }
        for (_, _, word) in &self.live {
            prop_assert!(text.contains(word.as_str()), "live {} is not reachable: {}", word, text);
        }
        Ok(())
    }

    /// What a reader sees of the notes of `part` over time: each key and visibility's history
    /// (writer, time, version, value, private), and `note_list` (private and task `T1` notes
    /// included, ids taken out: they are the store's) now and as of before, at and after each of
    /// `steps` step times (`1_000 * (i + 1)`).
    pub(super) fn reads(store: &Store, part: &Partition, steps: usize) -> Value {
        let mut out = Vec::new();
        for (key, key_name) in KEYS.iter().enumerate() {
            for (visibility, visibility_name) in VISIBILITIES.iter().enumerate() {
                let mut body = identity(key, visibility);
                body["includePrivate"] = json!(true);
                body["limit"] = json!(100);
                let history = call(store, part, 1, "history", &body);
                // A key never written in that visibility is NOT_FOUND: no events, as in the copy.
                let none = history["error"]["code"] == json!("NOT_FOUND");
                let events = if none { Some(&Vec::new()) } else { history["events"].as_array() };
                let trail: Vec<Value> = events
                    .unwrap_or_else(|| panic!("{history}"))
                    .iter()
                    .map(|e| {
                        let after = &e["after"];
                        json!([e["agent"], e["at"], after["version"], after["value"], after["private"]])
                    })
                    .collect();
                out.push(json!([key_name, visibility_name, trail]));
            }
        }
        let times = (0..=steps).flat_map(|i| {
            let t = 1_000 * i64::try_from(i).unwrap();
            [t + 500, t + 1_000]
        });
        for as_of in times.map(Some).chain([None]) {
            let mut body = json!({"allowPrivate": true, "includePrivate": true, "taskId": TASKS[0], "limit": 100});
            if let Some(t) = as_of {
                body["as_of"] = json!(t);
            }
            let mut list = call(store, part, 1, "note_list", &body);
            let notes = list["notes"].as_array_mut().unwrap_or_else(|| panic!("{body}"));
            for n in notes.iter_mut() {
                n.as_object_mut().unwrap().remove("id");
            }
            out.push(json!([as_of, notes]));
        }
        Value::Array(out)
    }
}
