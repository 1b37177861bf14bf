//! The notes verbs end to end through `api::call`, as the node calls them: JSON in, JSON out.

use super::api::call;
use crate::history::{self, Change};
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::store::{Store, StoreOptions};
use serde_json::{Value, json};
use std::sync::{Arc, Barrier};

/// A visibility case: reader, the task it views, allowPrivate, includePrivate → the keys it sees.
type Case<'a> = (&'a str, Option<&'a str>, bool, bool, Vec<&'a str>);

pub(super) const T0: i64 = 1_700_000_000_000;

pub(super) fn fresh() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: 1 << 20, ..StoreOptions::default() }).unwrap();
    (dir, store)
}

pub(super) fn who(user: &str, scope: &str, agent: &str, now: i64) -> Caller {
    Caller { part: Partition::new("local", user, scope).unwrap(), agent: agent.into(), now }
}

pub(super) fn agent(name: &str) -> Caller {
    who("u1", "default", name, T0)
}

pub(super) fn run(store: &Store, caller: &Caller, verb: &str, body: &Value) -> Value {
    serde_json::from_slice(&call(store, verb, caller, &serde_json::to_vec(body).unwrap()).unwrap()).unwrap()
}

/// `first` as a retry that replays it gets it: marked `replayed: true`.
pub(super) fn replayed(first: &Value) -> Value {
    assert!(first.get("replayed").is_none(), "a first write is not a replay: {first}");
    with(first.clone(), json!({"replayed": true}))
}

pub(super) fn code(reply: &Value) -> &str {
    reply["error"]["code"].as_str().unwrap_or_else(|| panic!("not a refusal: {reply}"))
}

pub(super) fn keys(reply: &Value) -> Vec<String> {
    reply["notes"]
        .as_array()
        .unwrap_or_else(|| panic!("not a list: {reply}"))
        .iter()
        .map(|n| n["key"].as_str().unwrap().to_owned())
        .collect()
}

/// Runs `work(store, t)` on `threads` threads released together; their results in thread order.
fn race<T: Send + 'static>(
    store: &Store,
    threads: usize,
    work: impl Fn(&Store, usize) -> T + Send + Sync + 'static,
) -> Vec<T> {
    let barrier = Arc::new(Barrier::new(threads));
    let work = Arc::new(work);
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            let (store, barrier, work) = (store.clone(), barrier.clone(), work.clone());
            std::thread::spawn(move || {
                barrier.wait();
                work(&store, t)
            })
        })
        .collect();
    handles.into_iter().map(|h| h.join().unwrap()).collect()
}

#[allow(clippy::needless_pass_by_value)] // call sites read as JSON literals: note("k", json!(1))
pub(super) fn note(key: &str, value: Value) -> Value {
    json!({ "key": key, "value": value, "kind": "user_fact" })
}

#[allow(clippy::needless_pass_by_value)] // as `note`
pub(super) fn with(mut body: Value, extra: Value) -> Value {
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[test]
fn write_creates_replaces_and_merges_with_versions() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let r1 = run(&store, &a, "note_write", &note("editor", json!({"theme": "dark", "font": {"size": 12}})));
    assert_eq!(r1["version"], 1);
    assert_eq!(r1["evolution"], "created");
    assert_eq!(r1["supersedes"], Value::Null);
    assert_eq!(r1["visibility"], "user");
    assert!(r1["id"].is_string(), "ids are decimal strings: {r1}");
    let r2 = run(
        &store,
        &a,
        "note_write",
        &json!({"key": "editor", "value": {"font": {"family": "mono"}, "theme": null}, "writeMode": "merge"}),
    );
    assert_eq!(
        (r2["version"].clone(), r2["evolution"].clone(), r2["supersedes"].clone()),
        (json!(2), json!("merged"), json!(1))
    );
    assert_eq!(r2["id"], r1["id"], "a note keeps its id across versions");
    let listed = run(&store, &a, "note_list", &json!({"key": "editor"}));
    let n = &listed["notes"][0];
    assert_eq!(n["value"], json!({"font": {"size": 12, "family": "mono"}}));
    assert_eq!(
        (n["version"].clone(), n["supersedes"].clone(), n["kind"].clone()),
        (json!(2), json!(1), json!("user_fact"))
    );
    assert_eq!(n["agent"], "claude");
    assert_eq!(n["createdAt"], "2023-11-14T22:13:20.000Z");
    let r3 = run(&store, &a, "note_write", &json!({"key": "editor", "value": [1], "kind": "user_preference"}));
    assert_eq!((r3["version"].clone(), r3["evolution"].clone()), (json!(3), json!("replaced")));
    let n = &run(&store, &a, "note_list", &json!({"key": "editor"}))["notes"][0];
    assert_eq!((n["value"].clone(), n["kind"].clone()), (json!([1]), json!("user_preference")));
}

/// A query's pages rank the notes as they stood at the first page: the cursor is an offset into
/// a ranking, and another agent's write between pages reordered it (found in QA: a note shown on
/// both pages after one write). What was written since shows on a list asked for anew.
#[test]
fn query_pages_rank_the_notes_as_they_stood_at_the_first_page() {
    let (_d, store) = fresh();
    let at = |name: &str, ms: i64| who("u1", "default", name, T0 + ms);
    for (i, key) in ["pref/a", "pref/b", "pref/c", "pref/d"].into_iter().enumerate() {
        let value = json!({"editor": "vim ".repeat(i + 1)});
        run(&store, &at("claude", 0), "note_write", &note(key, value));
    }
    let keys = |page: &Value| -> Vec<String> {
        page["notes"].as_array().unwrap().iter().map(|n| n["key"].as_str().unwrap().to_owned()).collect()
    };
    let first = run(&store, &at("claude", 10), "note_list", &json!({"query": "vim editor", "limit": 2}));
    // Another agent's writes between the pages: one note that would rank first, one changed.
    run(&store, &at("codex", 20), "note_write", &note("pref/e", json!({"editor": "vim ".repeat(9)})));
    run(&store, &at("codex", 20), "note_write", &note("pref/a", json!({"editor": "vim ".repeat(8)})));
    let cursor = first["nextCursor"].clone();
    let second =
        run(&store, &at("claude", 30), "note_list", &json!({"query": "vim editor", "limit": 2, "cursor": cursor}));
    let mut shown = [keys(&first), keys(&second)].concat();
    assert_eq!(second["nextCursor"], Value::Null, "{second}");
    shown.sort();
    assert_eq!(shown, ["pref/a", "pref/b", "pref/c", "pref/d"], "each note once, none written since: {first} {second}");
    let anew = run(&store, &at("claude", 40), "note_list", &json!({"query": "vim editor", "limit": 10}));
    assert_eq!(anew["notes"].as_array().unwrap().len(), 5, "{anew}");
}

/// A refusal for a missing field names the values it takes, so a model sends a valid one on its
/// next try rather than guessing (found in QA: "kind: is required when creating a note").
#[test]
fn a_missing_kind_or_basis_is_refused_naming_the_values_it_takes() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let missing = run(&store, &a, "note_write", &json!({"key": "k", "value": 1}));
    assert_eq!(
        missing["error"]["message"],
        "kind: is required when creating a note: one of user_preference, user_fact, task_state, decision"
    );
    let unsure =
        run(&store, &a, "note_write", &json!({"key": "k", "value": 1, "kind": "user_fact", "confidence": 0.5}));
    assert_eq!(
        unsure["error"]["message"],
        "confidenceBasis: is required with confidence: one of user_asserted, agent_inferred, source_supported"
    );
    assert_eq!(run(&store, &a, "note_list", &json!({}))["notes"], json!([]), "nothing was written");
}

/// Confidence describes the value: a merge keeps it, but the user never asserted what an
/// unconfirmed merge adds, so a `user_asserted` basis goes with such a merge (found by an audit).
#[test]
fn a_merge_keeps_confidence_but_not_an_unconfirmed_user_assertion() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let read = |key: &str| {
        let n = run(&store, &a, "note_list", &json!({ "key": key }))["notes"][0].clone();
        (n["confidence"].clone(), n["confidenceBasis"].clone())
    };
    let merge = |key: &str, value: Value, extra: Value| {
        let body = with(json!({ "key": key, "value": value, "writeMode": "merge" }), extra);
        assert!(run(&store, &a, "note_write", &body).get("error").is_none());
    };
    let asserted = json!({"confidence": 1.0, "confidenceBasis": "user_asserted", "userConfirmed": true});
    for key in ["said", "confirmed", "same"] {
        run(&store, &a, "note_write", &with(note(key, json!({"diet": "vegan"})), asserted.clone()));
    }
    run(
        &store,
        &a,
        "note_write",
        &with(
            note("inferred", json!({"diet": "vegan"})),
            json!({"confidence": 0.6, "confidenceBasis": "agent_inferred"}),
        ),
    );
    merge("said", json!({"allergy": "nuts"}), json!({}));
    assert_eq!(read("said"), (Value::Null, Value::Null), "the user did not assert the allergy");
    merge("confirmed", json!({"allergy": "nuts"}), json!({"userConfirmed": true}));
    assert_eq!(read("confirmed"), (json!(1.0), json!("user_asserted")));
    merge("same", json!({"diet": "vegan"}), json!({}));
    assert_eq!(read("same"), (json!(1.0), json!("user_asserted")), "a merge adding nothing asserts nothing new");
    merge("inferred", json!({"allergy": "nuts"}), json!({}));
    assert_eq!(read("inferred"), (json!(0.6), json!("agent_inferred")));
}

/// Found by a review: a merge whose patch or note is no object replaces the value whole (RFC
/// 7386), but its receipt said `merged` and it kept the replaced value's confidence.
#[test]
fn a_merge_that_replaces_whole_is_said_and_kept_as_a_replace() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let inferred = json!({"confidence": 0.6, "confidenceBasis": "agent_inferred"});
    for (key, first, patch) in [
        ("list", json!(["cutover"]), json!({"done": ["rollback"]})),
        ("object", json!({"done": ["cutover"]}), json!(["rollback"])),
    ] {
        run(&store, &a, "note_write", &with(note(key, first), inferred.clone()));
        let r = run(&store, &a, "note_write", &json!({"key": key, "value": patch, "writeMode": "merge"}));
        assert_eq!(r["evolution"], json!("replaced"), "{key}: {r}");
        let n = run(&store, &a, "note_list", &json!({ "key": key }))["notes"][0].clone();
        assert_eq!((n["value"].clone(), n["confidence"].clone()), (patch, Value::Null), "{key}: {n}");
        let h = run(&store, &a, "history", &json!({ "key": key }));
        let last = h["events"].as_array().and_then(|e| e.last()).cloned().unwrap_or_default();
        assert_eq!(
            (last["op"].clone(), last["patch"]["writeMode"].clone()),
            (json!("replace"), json!("merge")),
            "{key}"
        );
    }
}

/// Found by an audit: a value nested 126 deep was stored, and then its history, its forget and
/// the audit failed (the event holding it was past `serde_json`'s 128 levels). Free JSON is held
/// to 32 levels, and a value at the limit keeps every read of it working.
#[test]
fn a_value_nests_at_most_32_levels_and_one_at_the_limit_stays_readable() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let nested = |levels: usize| (0..levels).fold(json!("x"), |v, _| json!([v]));
    let refused = run(&store, &a, "note_write", &note("deep", nested(33)));
    assert_eq!(code(&refused), "VALIDATION_ERROR", "{refused}");
    assert!(refused["error"]["message"].as_str().unwrap().starts_with("value: nests 33 levels deep"), "{refused}");
    assert!(keys(&run(&store, &a, "note_list", &json!({}))).is_empty(), "a refusal stores nothing");
    let item = json!({"taskId": "t1", "summary": "s", "decisions": [{"why": nested(32)}]});
    let capsule = run(&store, &a, "handoff_create", &item);
    assert!(
        capsule["error"]["message"].as_str().unwrap().starts_with("decisions.0: nests 33 levels deep"),
        "{capsule}"
    );
    assert!(run(&store, &a, "note_write", &note("deep", nested(32))).get("error").is_none());
    let history = run(&store, &a, "history", &json!({"key": "deep"}));
    assert_eq!(history["events"].as_array().unwrap().len(), 1, "{history}");
    assert!(run(&store, &a, "audit", &json!({})).get("error").is_none());
    assert_eq!(run(&store, &a, "note_forget", &json!({"key": "deep"}))["state"], "forgotten");
}

#[test]
fn every_bad_input_is_refused_by_field_and_changes_nothing() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let base = note("k", json!(1));
    let cases: Vec<(Value, &str)> = vec![
        (json!({"value": 1, "kind": "user_fact"}), "key"),
        (with(base.clone(), json!({"key": ""})), "key"),
        (with(base.clone(), json!({"key": "x".repeat(513)})), "key"),
        (with(base.clone(), json!({"key": "a\u{0}b"})), "key"),
        (with(base.clone(), json!({"key": "   "})), "key"),
        (json!({"key": "k", "kind": "user_fact"}), "value"),
        (with(base.clone(), json!({"value": null})), "value"),
        (with(base.clone(), json!({"value": "x".repeat(64 * 1024)})), "value"),
        (with(base.clone(), json!({"kind": "opinion"})), "kind"),
        (json!({"key": "k", "value": 1}), "kind"),
        (with(base.clone(), json!({"visibility": "world"})), "visibility"),
        (with(base.clone(), json!({"visibility": "task"})), "taskId"),
        (with(base.clone(), json!({"visibility": "task", "taskId": ""})), "taskId"),
        (with(base.clone(), json!({"visibility": "user", "taskId": "T9"})), "taskId"),
        (with(base.clone(), json!({"visibility": "agent", "taskId": "T9"})), "taskId"),
        (with(base.clone(), json!({"private": true})), "private"),
        (with(base.clone(), json!({"private": true, "allowPrivate": false})), "private"),
        (with(base.clone(), json!({"writeMode": "append"})), "writeMode"),
        (with(base.clone(), json!({"expectedVersion": -1})), "expectedVersion"),
        (with(base.clone(), json!({"expectedVersion": "1"})), "expectedVersion"),
        (with(base.clone(), json!({"idempotencyKey": ""})), "idempotencyKey"),
        (with(base.clone(), json!({"confidence": 1.5, "confidenceBasis": "agent_inferred"})), "confidence"),
        (with(base.clone(), json!({"confidence": 0.5})), "confidenceBasis"),
        (with(base.clone(), json!({"confidence": 0.5, "confidenceBasis": "gut"})), "confidenceBasis"),
        (with(base.clone(), json!({"confidence": 0.9, "confidenceBasis": "user_asserted"})), "userConfirmed"),
        (with(base.clone(), json!({"expectedVerison": 0})), "expectedVerison"),
        (json!([1]), "body"),
    ];
    for (body, field) in cases {
        let reply = run(&store, &a, "note_write", &body);
        assert_eq!(code(&reply), "VALIDATION_ERROR", "{body}");
        assert_eq!(reply["error"]["details"][0]["field"], field, "{body} → {reply}");
        assert!(reply["error"]["details"][0]["message"].is_string(), "{body} → {reply}");
        assert!(reply["error"]["message"].as_str().unwrap().starts_with(field), "{reply}");
    }
    assert!(keys(&run(&store, &a, "note_list", &json!({}))).is_empty());
    assert_eq!(run(&store, &a, "audit", &json!({}))["events"], json!([]));
    // The valid edges are accepted.
    let ok = with(
        base,
        json!({"key": "x".repeat(512), "confidence": 1.0, "confidenceBasis": "user_asserted", "userConfirmed": true}),
    );
    assert_eq!(run(&store, &a, "note_write", &ok)["version"], 1);
}

#[test]
fn expected_version_guards_create_and_update() {
    let (_d, store) = fresh();
    let a = agent("claude");
    assert_eq!(run(&store, &a, "note_write", &with(note("k", json!(1)), json!({"expectedVersion": 0})))["version"], 1);
    let again = run(&store, &a, "note_write", &with(note("k", json!(2)), json!({"expectedVersion": 0})));
    assert_eq!(code(&again), "VERSION_CONFLICT");
    assert_eq!(again["error"]["details"][0]["currentVersion"], 1);
    assert_eq!(again["error"]["details"][0]["agent"], "claude", "who wrote the current version");
    let stale = run(&store, &a, "note_write", &with(note("k", json!(2)), json!({"expectedVersion": 5})));
    assert_eq!(stale["error"]["details"][0]["currentVersion"], 1);
    assert_eq!(run(&store, &a, "note_write", &with(note("k", json!(2)), json!({"expectedVersion": 1})))["version"], 2);
    let missing = run(&store, &a, "note_write", &with(note("other", json!(2)), json!({"expectedVersion": 1})));
    assert_eq!(missing["error"]["details"], json!([{"currentVersion": 0}]));
    assert_eq!(run(&store, &a, "note_list", &json!({"key": "k"}))["notes"][0]["value"], 2);
    assert_eq!(run(&store, &a, "history", &json!({"key": "k"}))["events"].as_array().unwrap().len(), 2);
}

#[test]
fn idempotent_retries_return_the_first_receipt() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let body = with(note("k", json!({"a": 1, "b": 2})), json!({"idempotencyKey": "op-1", "expectedVersion": 0}));
    let first = run(&store, &a, "note_write", &body);
    // The same body with its keys in another order is the same request.
    let reordered: Value = serde_json::from_str(
        r#"{"expectedVersion":0,"idempotencyKey":"op-1","kind":"user_fact","value":{"b":2,"a":1},"key":"k"}"#,
    )
    .unwrap();
    assert_eq!(run(&store, &a, "note_write", &reordered), replayed(&first));
    assert_eq!(
        run(&store, &a, "note_write", &body),
        replayed(&first),
        "a retry after success is not a version conflict"
    );
    let other = run(&store, &a, "note_write", &with(body.clone(), json!({"value": 3})));
    assert_eq!(code(&other), "IDEMPOTENCY_CONFLICT");
    assert_eq!(run(&store, &a, "history", &json!({"key": "k"}))["events"].as_array().unwrap().len(), 1);
    // Keys are per agent: another agent's `op-1` is its own.
    let b = agent("codex");
    let theirs = run(&store, &b, "note_write", &with(note("k", json!(9)), json!({"idempotencyKey": "op-1"})));
    assert_eq!(theirs["version"], 2);
}

/// Merges race on one note: each is worked out from the note as its writer read it before the
/// write, and must be redone on the note as it is when the write runs, so no field is lost and the
/// query index matches the final value.
#[test]
fn concurrent_merges_into_one_note_lose_nothing() {
    let (_d, store) = fresh();
    let threads = 8;
    let rounds = 10;
    race(&store, threads, move |store, t| {
        let me = agent(&format!("agent-{t}"));
        for r in 0..rounds {
            let field = format!("f{t}x{r}");
            let body = with(note("shared", json!({ field: format!("word{t}x{r}") })), json!({"writeMode": "merge"}));
            let reply = run(store, &me, "note_write", &body);
            assert!(reply.get("error").is_none(), "{reply}");
        }
    });
    let a = agent("reader");
    let current = &run(&store, &a, "note_list", &json!({"key": "shared"}))["notes"][0];
    assert_eq!(current["version"].as_u64().unwrap(), (threads * rounds) as u64);
    let value = current["value"].as_object().unwrap();
    assert_eq!(value.len(), threads * rounds, "every merged field is kept");
    for t in 0..threads {
        for r in 0..rounds {
            assert_eq!(value[&format!("f{t}x{r}")], json!(format!("word{t}x{r}")));
            let found = run(&store, &a, "note_list", &json!({"query": format!("word{t}x{r}")}));
            assert_eq!(keys(&found), vec!["shared"], "the index holds word{t}x{r}");
        }
    }
}

#[test]
fn concurrent_cas_writers_each_version_has_exactly_one_winner() {
    let (_d, store) = fresh();
    let threads = 8;
    let rounds = 12;
    let results = race(&store, threads, move |store, t| {
        let me = agent(&format!("agent-{t}"));
        let mut won = Vec::new();
        let mut conflicts = 0;
        for r in 0..rounds {
            let listed = run(store, &me, "note_list", &json!({"key": "counter"}));
            let current = listed["notes"][0]["version"].as_u64().unwrap_or(0);
            let body = with(note("counter", json!({"by": t, "round": r})), json!({"expectedVersion": current}));
            let reply = run(store, &me, "note_write", &body);
            if reply.get("error").is_some() {
                assert_eq!(code(&reply), "VERSION_CONFLICT");
                assert!(reply["error"]["details"][0]["currentVersion"].as_u64().unwrap() > current);
                conflicts += 1;
            } else {
                assert_eq!(reply["version"].as_u64().unwrap(), current + 1, "a win is exactly the next version");
                won.push((reply["version"].as_u64().unwrap(), t, r));
            }
        }
        (won, conflicts)
    });
    let mut wins = Vec::new();
    let mut conflicts = 0;
    for (w, c) in results {
        wins.extend(w);
        conflicts += c;
    }
    wins.sort_unstable();
    let versions: Vec<u64> = wins.iter().map(|w| w.0).collect();
    let expected: Vec<u64> = (1..=wins.len() as u64).collect();
    assert_eq!(versions, expected, "each version won exactly once");
    assert_eq!(wins.len() + conflicts, threads * rounds);
    let a = agent("reader");
    let current = &run(&store, &a, "note_list", &json!({"key": "counter"}))["notes"][0];
    assert_eq!(current["version"].as_u64().unwrap(), wins.len() as u64, "no lost update");
    let last = wins.last().unwrap();
    assert_eq!(current["value"], json!({"by": last.1, "round": last.2}));
    // History holds every winning write once, in version order.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = run(&store, &a, "history", &json!({"key": "counter", "limit": 7, "cursor": cursor}));
        for e in page["events"].as_array().unwrap() {
            seen.push((
                e["after"]["version"].as_u64().unwrap(),
                e["agent"].as_str().unwrap().to_owned(),
                e["after"]["value"].clone(),
            ));
        }
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    let want: Vec<(u64, String, Value)> =
        wins.iter().map(|(v, t, r)| (*v, format!("agent-{t}"), json!({"by": t, "round": r}))).collect();
    assert_eq!(seen, want);
}

#[test]
fn concurrent_idempotent_retries_make_one_version() {
    let (_d, store) = fresh();
    let threads = 8;
    let body = with(note("k", json!({"x": 1})), json!({"idempotencyKey": "retry-me"}));
    let receipts: Vec<Value> = race(&store, threads, move |store, _| {
        (0..5).map(|_| run(store, &agent("claude"), "note_write", &body)).collect::<Vec<_>>()
    })
    .into_iter()
    .flatten()
    .collect();
    // One write stored the note; every other call replayed its receipt and says so.
    let (first, replays): (Vec<&Value>, Vec<&Value>) = receipts.iter().partition(|r| r.get("replayed").is_none());
    assert_eq!(first.len(), 1, "{receipts:?}");
    assert!(replays.iter().all(|r| **r == replayed(first[0])), "{receipts:?}");
    assert_eq!(first[0]["version"], 1);
    let a = agent("claude");
    assert_eq!(run(&store, &a, "history", &json!({"key": "k"}))["events"].as_array().unwrap().len(), 1);
}

#[test]
fn visibility_matrix() {
    let (_d, store) = fresh();
    let writer = agent("claude");
    let policy = json!({"allowPrivate": true});
    for (key, extra) in [
        ("u", json!({})),
        ("t", json!({"visibility": "task", "taskId": "T1"})),
        ("a", json!({"visibility": "agent"})),
        ("up", json!({"private": true})),
        ("tp", json!({"visibility": "task", "taskId": "T1", "private": true})),
        ("ap", json!({"visibility": "agent", "private": true})),
    ] {
        let body = with(with(note(key, json!(key)), extra), policy.clone());
        assert_eq!(run(&store, &writer, "note_write", &body)["version"], 1, "{key}");
    }
    // (reader, viewTaskId, allowPrivate, includePrivate) → visible keys, in identity order.
    let cases: Vec<Case> = vec![
        ("claude", None, false, false, vec!["a", "u"]),
        ("claude", Some("T1"), false, false, vec!["a", "t", "u"]),
        ("claude", Some("T2"), false, false, vec!["a", "u"]),
        ("claude", Some("T1"), true, false, vec!["a", "t", "u"]),
        ("claude", Some("T1"), false, true, vec!["a", "t", "u"]),
        ("claude", Some("T1"), true, true, vec!["a", "ap", "t", "tp", "u", "up"]),
        ("claude", None, true, true, vec!["a", "ap", "u", "up"]),
        ("codex", None, false, false, vec!["u"]),
        ("codex", Some("T1"), false, false, vec!["t", "u"]),
        ("codex", Some("T2"), true, true, vec!["u", "up"]),
        ("codex", Some("T1"), true, true, vec!["t", "tp", "u", "up"]),
    ];
    for (reader, task, allow, include, want) in cases {
        let body = json!({"viewTaskId": task, "allowPrivate": allow, "includePrivate": include});
        let got = keys(&run(&store, &agent(reader), "note_list", &body));
        assert_eq!(got, want, "{reader} {task:?} allow={allow} include={include}");
    }
    // Another user, or another scope of the same user, sees none of it.
    for other in [who("u2", "default", "claude", T0), who("u1", "other", "claude", T0)] {
        let body = json!({"viewTaskId": "T1", "allowPrivate": true, "includePrivate": true});
        assert!(keys(&run(&store, &other, "note_list", &body)).is_empty());
    }
    // Another agent's agent-visible note is not theirs to read, replace or forget: the same key
    // names the caller's own (absent) note.
    let codex = agent("codex");
    assert_eq!(code(&run(&store, &codex, "note_forget", &json!({"key": "a", "visibility": "agent"}))), "NOT_FOUND");
    assert_eq!(code(&run(&store, &codex, "history", &json!({"key": "a", "visibility": "agent"}))), "NOT_FOUND");
    let own = run(&store, &codex, "note_write", &with(note("a", json!("mine")), json!({"visibility": "agent"})));
    assert_eq!(own["version"], 1, "a separate note");
    let filtered = run(&store, &agent("claude"), "note_list", &json!({"visibility": "task", "taskId": "T1"}));
    assert_eq!(keys(&filtered), vec!["t"], "visibility task with taskId filters to that task");
}

#[test]
fn task_id_filters_to_that_tasks_notes() {
    let (_d, store) = fresh();
    let claude = agent("claude");
    let policy = json!({"allowPrivate": true});
    for (key, extra) in [
        ("u", json!({})),
        ("a", json!({"visibility": "agent"})),
        ("t1-a", json!({"visibility": "task", "taskId": "T1"})),
        ("t1-b", json!({"visibility": "task", "taskId": "T1", "kind": "decision"})),
        ("t1-c", json!({"visibility": "task", "taskId": "T1"})),
        ("t1-p", json!({"visibility": "task", "taskId": "T1", "private": true})),
        ("t2", json!({"visibility": "task", "taskId": "T2"})),
    ] {
        let body = with(with(note(key, json!(format!("alpha {key}"))), extra), policy.clone());
        assert_eq!(run(&store, &claude, "note_write", &body)["version"], 1, "{key}");
    }
    // An agent note of an agent named like the task is still no task note.
    let named_t1 = with(note("owned-by-t1", json!("alpha")), json!({"visibility": "agent"}));
    assert_eq!(run(&store, &agent("T1"), "note_write", &named_t1)["version"], 1);
    let list = |caller: &Caller, body: Value| keys(&run(&store, caller, "note_list", &body));
    // Alone, with `visibility: task`, by kind, scanned at `as_of`, and ranked by a query (both the
    // index and the scan): only T1's notes, never the user or agent notes beside them.
    let t1 = vec!["t1-a", "t1-b", "t1-c"];
    assert_eq!(list(&claude, json!({"taskId": "T1"})), t1);
    assert_eq!(list(&agent("T1"), json!({"taskId": "T1"})), t1);
    assert_eq!(list(&agent("codex"), json!({"taskId": "T1", "visibility": "task"})), t1);
    assert_eq!(list(&claude, json!({"taskId": "T1", "kind": "decision"})), vec!["t1-b"]);
    assert_eq!(list(&claude, json!({"taskId": "T1", "as_of": T0 + 1})), t1);
    assert_eq!(
        list(&claude, json!({"taskId": "T1", "allowPrivate": true, "includePrivate": true})),
        vec!["t1-a", "t1-b", "t1-c", "t1-p"]
    );
    assert_eq!(list(&claude, json!({"taskId": "T2"})), vec!["t2"]);
    assert!(list(&claude, json!({"taskId": "T3"})).is_empty());
    for q in ["alpha", "al"] {
        let mut found = list(&claude, json!({"taskId": "T1", "query": q}));
        found.sort();
        assert_eq!(found, t1, "query {q}");
    }
    // `viewTaskId` (memory_context's) widens what is visible instead.
    assert_eq!(list(&claude, json!({"viewTaskId": "T1"})), vec!["a", "t1-a", "t1-b", "t1-c", "u"]);
    // A user or agent note has no task: naming one beside those visibilities is refused.
    for visibility in ["user", "agent"] {
        let reply = run(&store, &claude, "note_list", &json!({"taskId": "T1", "visibility": visibility}));
        assert_eq!(code(&reply), "VALIDATION_ERROR", "{visibility}");
        assert_eq!(reply["error"]["details"][0]["field"], "taskId");
    }
    // The cursor pages through T1's notes only, and is bound to the task it was given for.
    let first = run(&store, &claude, "note_list", &json!({"taskId": "T1", "limit": 2}));
    assert_eq!(keys(&first), vec!["t1-a", "t1-b"]);
    let cursor = first["nextCursor"].as_str().unwrap();
    let second = run(&store, &claude, "note_list", &json!({"taskId": "T1", "limit": 2, "cursor": cursor}));
    assert_eq!(keys(&second), vec!["t1-c"]);
    assert_eq!(second["nextCursor"], Value::Null);
    for other in [json!({"taskId": "T2"}), json!({}), json!({"viewTaskId": "T1"})] {
        let reply = run(&store, &claude, "note_list", &with(json!({"limit": 2, "cursor": cursor}), other.clone()));
        assert_eq!(code(&reply), "VALIDATION_ERROR", "{other}");
        assert_eq!(reply["error"]["details"][0]["field"], "cursor");
    }
    // Handoffs are their own records: a task's handoff resumes whatever its notes.
    run(&store, &claude, "handoff_create", &json!({"taskId": "T1", "summary": "half done"}));
    assert_eq!(
        run(&store, &agent("codex"), "handoff_resume", &json!({"taskId": "T1"}))["handoff"]["summary"],
        "half done"
    );
    assert_eq!(list(&claude, json!({"taskId": "T1"})), t1);
}

#[test]
fn private_history_is_redacted_unless_allowed_and_asked() {
    let (_d, store) = fresh();
    let a = agent("claude");
    run(
        &store,
        &a,
        "note_write",
        &with(note("secret", json!("pin 1234")), json!({"private": true, "allowPrivate": true})),
    );
    let hidden = run(&store, &a, "history", &json!({"key": "secret"}));
    assert_eq!(hidden["events"][0]["redacted"], "private");
    assert_eq!(hidden["events"][0]["after"], Value::Null);
    assert_eq!(hidden["events"][0]["patch"], Value::Null);
    let shown = run(&store, &a, "history", &json!({"key": "secret", "allowPrivate": true, "includePrivate": true}));
    assert_eq!(shown["events"][0]["after"]["value"], "pin 1234");
    assert!(!serde_json::to_string(&run(&store, &a, "audit", &json!({}))).unwrap().contains("1234"));
}

#[test]
fn list_filters_pages_and_ranks() {
    let (_d, store) = fresh();
    let a = agent("claude");
    for i in 0..25 {
        let kind = if i % 2 == 0 { "user_fact" } else { "decision" };
        let body = json!({"key": format!("k{i:02}"), "value": {"text": format!("note number {i}")}, "kind": kind});
        run(&store, &a, "note_write", &body);
    }
    run(
        &store,
        &a,
        "note_write",
        &json!({"key": "deploy", "value": {"target": "staging cluster eu-west"}, "kind": "decision"}),
    );
    let first = run(&store, &a, "note_list", &json!({}));
    assert_eq!(first["notes"].as_array().unwrap().len(), 20, "default limit 20");
    // Paging reaches every note once, in order.
    let mut all = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = run(&store, &a, "note_list", &json!({"limit": 7, "cursor": cursor}));
        all.extend(keys(&page));
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    let mut want: Vec<String> = (0..25).map(|i| format!("k{i:02}")).collect();
    want.insert(0, "deploy".into());
    assert_eq!(all, want);
    assert_eq!(keys(&run(&store, &a, "note_list", &json!({"kind": "decision", "limit": 100}))).len(), 13);
    assert_eq!(code(&run(&store, &a, "note_list", &json!({"limit": 101}))), "VALIDATION_ERROR");
    assert_eq!(code(&run(&store, &a, "note_list", &json!({"limit": 0}))), "VALIDATION_ERROR");
    // A hybrid query ranks with a receipt per item.
    let found = run(&store, &a, "note_list", &json!({"query": "staging"}));
    assert_eq!(keys(&found), vec!["deploy"]);
    let receipt = &found["notes"][0]["receipt"];
    assert_eq!(receipt["channels"], json!(["token", "trigram"]));
    assert_eq!(receipt["ranks"], json!({"token": 1, "trigram": 1}));
    assert!((receipt["score"].as_f64().unwrap() - 2.0 / 61.0).abs() < 1e-12);
    // Query pages: every match once.
    let mut seen = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = run(&store, &a, "note_list", &json!({"query": "note number", "limit": 10, "cursor": cursor}));
        seen.extend(keys(&page));
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    seen.sort();
    assert_eq!(seen, (0..25).map(|i| format!("k{i:02}")).collect::<Vec<_>>());
}

#[test]
fn a_cursor_is_refused_with_another_query_user_agent_or_scope() {
    let (_d, store) = fresh();
    for (user, scope) in [("u1", "default"), ("u2", "default"), ("u1", "other")] {
        let c = who(user, scope, "claude", T0);
        for i in 0..3 {
            run(&store, &c, "note_write", &note(&format!("k{i}"), json!("term")));
        }
    }
    let a = agent("claude");
    let page = run(&store, &a, "note_list", &json!({"limit": 1, "query": "term"}));
    let cursor = page["nextCursor"].clone();
    assert!(cursor.is_string());
    assert_eq!(keys(&run(&store, &a, "note_list", &json!({"limit": 1, "query": "term", "cursor": cursor}))).len(), 1);
    let misuse = [
        (a.clone(), json!({"limit": 1, "query": "other", "cursor": cursor})),
        (a.clone(), json!({"limit": 1, "cursor": cursor})),
        (a.clone(), json!({"limit": 1, "query": "term", "kind": "decision", "cursor": cursor})),
        (who("u2", "default", "claude", T0), json!({"limit": 1, "query": "term", "cursor": cursor})),
        (who("u1", "other", "claude", T0), json!({"limit": 1, "query": "term", "cursor": cursor})),
        (agent("codex"), json!({"limit": 1, "query": "term", "cursor": cursor})),
        (a.clone(), json!({"limit": 1, "query": "term", "cursor": "not a cursor"})),
        (a.clone(), json!({"limit": 1, "query": "term", "cursor": "AAAA"})),
    ];
    for (caller, body) in misuse {
        let reply = run(&store, &caller, "note_list", &body);
        assert_eq!(code(&reply), "VALIDATION_ERROR", "{body}");
        assert_eq!(reply["error"]["details"][0]["field"], "cursor");
    }
    let h = run(&store, &a, "history", &json!({"key": "k0", "cursor": cursor}));
    assert_eq!(h["error"]["details"][0]["field"], "cursor", "a list cursor does not page history");
}

#[test]
fn as_of_reads_the_versions_current_then() {
    let (_d, store) = fresh();
    let at = |ms: i64| who("u1", "default", "claude", T0 + ms);
    run(&store, &at(0), "note_write", &note("k", json!("v1")));
    run(&store, &at(100), "note_write", &note("k", json!("v2")));
    run(&store, &at(150), "note_write", &note("later", json!("x")));
    run(&store, &at(200), "note_write", &note("k", json!("v3")));
    let read = |as_of: i64| run(&store, &at(1000), "note_list", &json!({"as_of": T0 + as_of}));
    assert!(keys(&read(-1)).is_empty());
    assert_eq!(read(50)["notes"][0]["value"], "v1");
    assert_eq!(read(100)["notes"][0]["value"], "v2");
    assert_eq!(keys(&read(120)), vec!["k"]);
    assert_eq!(keys(&read(150)), vec!["k", "later"]);
    assert_eq!(read(199)["notes"][0]["version"], 2);
    assert_eq!(read(10_000)["notes"][0]["value"], "v3");
    assert_eq!(read(100)["notes"][0]["updatedAt"], "2023-11-14T22:13:20.100Z");
}

#[test]
fn forget_removes_every_version_and_is_idempotent() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let k = "marcus-salary";
    run(&store, &a, "note_write", &with(note(k, json!("secret v1")), json!({"idempotencyKey": "w1"})));
    run(&store, &a, "note_write", &note(k, json!("secret v2")));
    run(&store, &a, "note_write", &note("kept", json!("other")));
    assert_eq!(code(&run(&store, &a, "note_forget", &json!({"key": "never"}))), "NOT_FOUND");
    let gone = run(&store, &a, "note_forget", &json!({"key": k}));
    let forgotten =
        json!({"entities": 0, "facts": 0, "documents": 0, "passages": 0, "attributes": 0, "notes": 1, "handoffs": 0});
    assert_eq!(
        gone,
        json!({"state": "forgotten", "forgotten": forgotten, "kept": [], "note": {"key": k, "visibility": "user", "versions": 2}})
    );
    assert_eq!(run(&store, &a, "note_forget", &json!({"key": k}))["state"], "already_forgotten");
    assert_eq!(keys(&run(&store, &a, "note_list", &json!({}))), vec!["kept"]);
    assert_eq!(keys(&run(&store, &a, "note_list", &json!({"as_of": T0 + 1}))), vec!["kept"], "no version survives");
    // Its events go with it: the key is not spelled by the history, the audit or any stored byte.
    // The history says who forgot it and when, so an empty page does not read as "never changed".
    assert_eq!(
        run(&store, &a, "history", &json!({"key": k})),
        json!({"events": [], "nextCursor": null, "forgotten": {"agent": "claude", "at": "2023-11-14T22:13:20.000Z"}})
    );
    let audit = run(&store, &a, "audit", &json!({}));
    assert!(!audit.to_string().contains("marcus") && !audit.to_string().contains("secret"), "{audit}");
    let ops: Vec<(&str, Value)> = audit["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["family"].as_str().unwrap(), e["target"].clone()))
        .collect();
    assert_eq!(
        ops,
        vec![("note", json!({"key": "kept", "visibility": "user"})), ("forget", json!({"form": "note"}))],
        "what stays is the record of a forget"
    );
    assert_eq!(audit["events"][1]["after"], json!({"forgotten": {"notes": 1, "versions": 2, "events": 2}}));
    let snap = store.snapshot().unwrap();
    for tree in snap.trees().unwrap() {
        for kv in snap.prefix(&tree.name, &[]).unwrap() {
            let (k, v) = kv.unwrap();
            let bytes = String::from_utf8_lossy(&[k, v].concat()).into_owned();
            assert!(!bytes.contains("secret") && !bytes.contains("marcus"), "{} still holds it: {bytes:?}", tree.name);
        }
    }
    // A retried write with the forgotten write's idempotency key writes again, as new.
    let again = run(&store, &a, "note_write", &with(note(k, json!("new")), json!({"idempotencyKey": "w1"})));
    assert_eq!(again["version"], 1, "{again}");
    let h = run(&store, &a, "history", &json!({"key": k}));
    assert_eq!(h["events"].as_array().unwrap().len(), 1);
    assert_eq!(h["events"][0]["after"]["value"], "new");
    assert_eq!(code(&run(&store, &a, "note_forget", &json!({"key": k, "visibility": "task"}))), "VALIDATION_ERROR");
}

#[test]
fn history_pages_notes_entities_and_facts_in_order() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let task = json!({"visibility": "task", "taskId": "T1"});
    for i in 0..5 {
        run(&store, &a, "note_write", &with(note("plan", json!(i)), task.clone()));
        run(&store, &a, "note_write", &note("plan", json!(-i)));
    }
    let events = run(&store, &a, "history", &with(json!({"key": "plan"}), task.clone()));
    let values: Vec<Value> = events["events"].as_array().unwrap().iter().map(|e| e["after"]["value"].clone()).collect();
    assert_eq!(values, (0..5).map(|i| json!(i)).collect::<Vec<_>>(), "the task note's own events only");
    let first = &events["events"][0];
    assert_eq!(
        (first["family"].clone(), first["op"].clone(), first["agent"].clone()),
        (json!("note"), json!("create"), json!("claude"))
    );
    assert_eq!(first["at"], "2023-11-14T22:13:20.000Z");
    assert_eq!(first["patch"]["value"], 0);
    assert!(first["seq"].is_string());
    assert_eq!(events["events"][1]["before"]["value"], 0);
    assert_eq!(code(&run(&store, &a, "history", &json!({"key": "plan", "visibility": "task"}))), "VALIDATION_ERROR");
    assert_eq!(code(&run(&store, &a, "history", &json!({"key": "plan", "subject": "x"}))), "VALIDATION_ERROR");
    assert_eq!(code(&run(&store, &a, "history", &json!({}))), "VALIDATION_ERROR");
    assert_eq!(code(&run(&store, &a, "history", &json!({"fact": {"from": "a", "to": "b"}}))), "VALIDATION_ERROR");
    // Entity and fact events, as the knowledge verbs record them.
    let part = a.part.clone();
    let caller = a.clone();
    store
        .write(move |tx| {
            for (family, target, op) in [
                ("entity", "Priya", "create"),
                ("fact", "Priya\0works_at\0Acme", "assert"),
                ("entity", "Priya", "update"),
            ] {
                let change = Change { family, target, op, before: None, after: Some(json!({"op": op})), patch: None };
                history::record(tx, &caller, change)?;
            }
            part.register(tx)
        })
        .unwrap();
    let ent = run(&store, &a, "history", &json!({"subject": "Priya"}));
    let ops: Vec<&str> = ent["events"].as_array().unwrap().iter().map(|e| e["op"].as_str().unwrap()).collect();
    assert_eq!(ops, vec!["create", "update"]);
    let fact = run(&store, &a, "history", &json!({"fact": {"from": "Priya", "to": "Acme", "type": "works_at"}}));
    assert_eq!(fact["events"][0]["op"], "assert");
    assert_eq!(fact["events"].as_array().unwrap().len(), 1);
    // The stored target is `from \0 type \0 to`; a reply names it by fields and holds no NUL.
    let shown = json!({"from": "Priya", "type": "works_at", "to": "Acme"});
    assert_eq!(fact["events"][0]["target"], shown);
    let audit = run(&store, &a, "audit", &json!({}));
    assert!(audit["events"].as_array().unwrap().iter().any(|e| e["target"] == shown), "{audit}");
    for reply in [&fact, &ent, &audit] {
        assert!(!reply.to_string().contains("\\u0000"), "{reply}");
    }
}

#[test]
fn audit_lists_the_callers_own_writes_only() {
    let (_d, store) = fresh();
    let (a, b) = (agent("claude"), agent("codex"));
    for i in 0..3 {
        run(&store, &a, "note_write", &note(&format!("a{i}"), json!(i)));
        run(&store, &b, "note_write", &note(&format!("b{i}"), json!(i)));
    }
    run(&store, &a, "handoff_create", &json!({"taskId": "T", "summary": "s"}));
    let mut targets = Vec::new();
    let mut cursor = Value::Null;
    loop {
        let page = run(&store, &a, "audit", &json!({"limit": 2, "cursor": cursor}));
        for e in page["events"].as_array().unwrap() {
            assert_eq!(e["agent"], "claude");
            let target = &e["target"];
            let name = target.get("key").or_else(|| target.get("taskId")).and_then(Value::as_str).unwrap();
            targets.push(format!("{}:{name}", e["family"].as_str().unwrap()));
        }
        cursor = page["nextCursor"].clone();
        if cursor.is_null() {
            break;
        }
    }
    assert_eq!(targets, vec!["note:a0", "note:a1", "note:a2", "handoff:T"]);
    let cursor = run(&store, &a, "audit", &json!({"limit": 1}))["nextCursor"].clone();
    assert_eq!(
        code(&run(&store, &b, "audit", &json!({"cursor": cursor}))),
        "VALIDATION_ERROR",
        "another agent's cursor"
    );
}

#[test]
fn handoffs_resume_across_agents_and_expire() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let created = run(
        &store,
        &a,
        "handoff_create",
        &json!({"taskId": "T1", "summary": "half done", "status": "in_progress", "decisions": ["use sqlite"],
                "nextSteps": [{"step": "write tests"}], "to": "codex", "expiresAt": "2023-11-15T00:00:00Z"}),
    );
    assert_eq!(created["taskId"], "T1");
    assert_eq!(created["to"], "codex");
    assert_eq!(created["expiresAt"], "2023-11-15T00:00:00.000Z");
    assert_eq!(created["createdAt"], "2023-11-14T22:13:20.000Z");
    let b = agent("codex");
    let resumed = run(&store, &b, "handoff_resume", &json!({"taskId": "T1"}));
    assert_eq!(resumed["state"], "resumed");
    assert_eq!(resumed["handoff"]["summary"], "half done");
    assert_eq!(resumed["handoff"]["from"], "claude");
    assert_eq!(resumed["handoff"]["nextSteps"], json!([{"step": "write tests"}]));
    assert_eq!(resumed["handoff"]["blockers"], json!([]));
    let mine = run(&store, &b, "handoff_resume", &json!({}));
    assert_eq!(mine["handoffs"].as_array().unwrap().len(), 1);
    assert!(run(&store, &agent("cursor"), "handoff_resume", &json!({}))["handoffs"].as_array().unwrap().is_empty());
    assert_eq!(run(&store, &b, "handoff_resume", &json!({"taskId": "T2"})), json!({"state": "none", "taskId": "T2"}));
    // After its expiry it is not returned, and the reply says when it expired.
    let later = who("u1", "default", "codex", T0 + 10_000_000);
    let expired = run(&store, &later, "handoff_resume", &json!({"taskId": "T1"}));
    assert_eq!(expired["state"], "expired");
    assert_eq!(expired["expiredAt"], "2023-11-15T00:00:00.000Z");
    assert!(expired.get("handoff").is_none() && !expired.to_string().contains("half done"));
    assert!(run(&store, &later, "handoff_resume", &json!({}))["handoffs"].as_array().unwrap().is_empty());
    // A newer capsule resumes; another user never sees the task.
    run(&store, &later, "handoff_create", &json!({"taskId": "T1", "summary": "picked up"}));
    assert_eq!(run(&store, &later, "handoff_resume", &json!({"taskId": "T1"}))["handoff"]["summary"], "picked up");
    let stranger = who("u2", "default", "codex", T0);
    assert_eq!(run(&store, &stranger, "handoff_resume", &json!({"taskId": "T1"}))["state"], "none");
    let h = run(&store, &a, "audit", &json!({}));
    assert_eq!(h["events"][0]["family"], "handoff");
}

#[test]
fn handoff_inputs_are_checked_by_field() {
    let (_d, store) = fresh();
    let a = agent("claude");
    let base = json!({"taskId": "T1", "summary": "s"});
    for (extra, field) in [
        (json!({"taskId": null}), "taskId"),
        (json!({"summary": " "}), "summary"),
        (json!({"summary": "x".repeat(16 * 1024 + 1)}), "summary"),
        (json!({"status": ""}), "status"),
        (json!({"decisions": "one"}), "decisions"),
        (json!({"blockers": [1]}), "blockers.0"),
        (json!({"artifacts": vec!["a"; 101]}), "artifacts"),
        (json!({"nextSteps": ["x".repeat(5000)]}), "nextSteps.0"),
        (json!({"decisions": ["x".repeat(4097)]}), "decisions.0"),
        (json!({"decisions": vec!["x".repeat(4000); 20]}), "(body)"),
        (json!({"to": "not an agent name!!"}), "to"),
        (json!({"expiresAt": "tomorrow"}), "expiresAt"),
        (json!({"expiresAt": "2020-01-01T00:00:00Z"}), "expiresAt"),
        (json!({"to": ""}), "to"),
        (json!({"owner": "x"}), "owner"),
    ] {
        let reply = run(&store, &a, "handoff_create", &with(base.clone(), extra.clone()));
        assert_eq!(code(&reply), "VALIDATION_ERROR", "{extra}");
        assert_eq!(reply["error"]["details"][0]["field"], field, "{extra}");
    }
    assert_eq!(run(&store, &a, "handoff_resume", &json!({"taskId": "T1"}))["state"], "none");
    assert_eq!(run(&store, &a, "audit", &json!({}))["events"], json!([]));
}

#[test]
fn unknown_verbs_are_store_errors() {
    let (_d, store) = fresh();
    let err = call(&store, "note_delete", &agent("claude"), b"{}").unwrap_err();
    assert_eq!(err.code(), "INVALID_ARGUMENT");
}

#[test]
fn the_query_index_ranks_exactly_like_a_scan_through_replaces_and_forgets() {
    use rand::{Rng, SeedableRng};
    let (_d, store) = fresh();
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "deploy", "deployment", "staging", "東京都", "日本"];
    let agents = ["claude", "codex"];
    let mut rng = rand::rngs::StdRng::seed_from_u64(7);
    for step in 0..300 {
        let me = who("u1", "default", agents[rng.random_range(0..2)], T0 + step);
        let key = format!("k{}", rng.random_range(0..40));
        let vis = match rng.random_range(0..4) {
            0 => json!({"visibility": "task", "taskId": if rng.random_bool(0.5) { "T1" } else { "T2" }}),
            1 => json!({"visibility": "agent"}),
            _ => json!({}),
        };
        if rng.random_range(0..8) == 0 {
            run(&store, &me, "note_forget", &with(json!({"key": key}), vis));
            continue;
        }
        let text: Vec<&str> = (0..rng.random_range(1..8)).map(|_| words[rng.random_range(0..words.len())]).collect();
        let kind = ["user_fact", "decision"][rng.random_range(0..2)];
        let body = json!({"key": key, "value": {"text": text.join(" ")}, "kind": kind, "private": rng.random_bool(0.2), "allowPrivate": true});
        let reply = run(&store, &me, "note_write", &with(body, vis));
        assert!(reply.get("error").is_none(), "{reply}");
    }
    // Long queries make the trigram channel pick its rarest trigrams and verify the rest.
    for q in [
        "alpha",
        "deploy staging",
        "deplo",
        "東京",
        "charlie delta echo",
        "zzz",
        "k1",
        "deployment stagin",
        "alphabravo charliex",
        "echo deploy charlie bravo staging",
    ] {
        for (agent, extra) in [
            ("claude", json!({})),
            ("codex", json!({"taskId": "T1"})),
            ("claude", json!({"taskId": "T2", "allowPrivate": true, "includePrivate": true})),
            ("codex", json!({"kind": "decision", "visibility": "user"})),
        ] {
            let me = agent_at(agent);
            let indexed = run(&store, &me, "note_list", &with(json!({"query": q, "limit": 100}), extra.clone()));
            let scanned = run(
                &store,
                &me,
                "note_list",
                &with(json!({"query": q, "limit": 100, "as_of": T0 + 10_000}), extra.clone()),
            );
            assert_eq!(indexed, scanned, "{q} {agent} {extra}");
        }
    }
    // The trigram counts that order a query's trigrams equal the sampled notes' trigrams.
    let snap = store.snapshot().unwrap();
    let part = agent_at("claude").part;
    let mut counted: std::collections::BTreeMap<Vec<u8>, u32> = std::collections::BTreeMap::new();
    for kv in snap.prefix(super::record::CUR, &part.key(&[])).unwrap() {
        let note = super::record::NoteRecord::decode(&kv.unwrap().1).unwrap();
        if super::index::sampled(&note) {
            for g in super::search::grams(&note.search().text) {
                *counted.entry(part.key(&[g.as_bytes()])).or_default() += 1;
            }
        }
    }
    assert!(!counted.is_empty(), "some notes are sampled");
    let stored: std::collections::BTreeMap<Vec<u8>, u32> = snap
        .prefix(super::index::TRI_COUNT, &[])
        .unwrap()
        .map(|kv| {
            let (k, v) = kv.unwrap();
            (k, u32::from_be_bytes(v.as_slice().try_into().unwrap()))
        })
        .collect();
    assert_eq!(counted, stored);
    // The index is not trivially empty.
    assert!(
        !run(&store, &agent_at("claude"), "note_list", &json!({"query": "alpha"}))["notes"]
            .as_array()
            .unwrap()
            .is_empty()
    );
}

fn agent_at(name: &str) -> Caller {
    who("u1", "default", name, T0 + 20_000)
}

#[test]
fn a_store_indexed_one_key_per_posting_is_rebuilt_into_blocks_on_first_use() {
    let (_d, store) = fresh();
    let words = ["alpha", "bravo", "charlie", "deploy", "staging", "東京都"];
    for i in 0..300_usize {
        let who = if i % 3 == 0 { who("u2", "work", "codex", T0) } else { agent("claude") };
        let text: Vec<&str> = (0..4).map(|j| words[(i + j) % words.len()]).collect();
        let body = json!({"key": format!("k{i}"), "value": {"text": text.join(" ")}, "kind": "user_fact"});
        assert!(run(&store, &who, "note_write", &body).get("error").is_none());
    }
    let queries = ["alpha", "deploy staging", "東京", "charlie bravo alpha"];
    let ask = |store: &Store| -> Vec<Value> {
        queries
            .iter()
            .flat_map(|q| {
                [agent("claude"), who("u2", "work", "codex", T0)]
                    .map(|c| run(store, &c, "note_list", &json!({"query": q, "limit": 100})))
            })
            .collect()
    };
    let before = ask(&store);
    let tree_keys = |store: &Store, tree: &str| store.snapshot().unwrap().prefix(tree, &[]).unwrap().count();
    let tree = |store: &Store, tree: &str| -> Vec<(Vec<u8>, Vec<u8>)> {
        store.snapshot().unwrap().prefix(tree, &[]).unwrap().map(Result::unwrap).collect()
    };
    let counts = tree(&store, super::index::TRI_COUNT);
    // What a store of the first layout holds: postings in `n.tok`/`n.tri`, no blocks.
    store
        .write(|tx| {
            for tree in [super::index::TERM, super::index::GRAM, super::index::DOC, super::index::TRI_COUNT] {
                for (k, _) in tx.prefix(tree, &[]).unwrap() {
                    tx.delete(tree, &k)?;
                }
            }
            let part = Partition::new("local", "u1", "default").unwrap();
            tx.put("n.tok", &part.key(&[b"alpha\0", &7u64.to_be_bytes()]), &[0, 0, 0, 1, 0, 0, 0, 4, 0, 1, 0])?;
            tx.put("n.tri", &part.key(&[b"alp\0", &7u64.to_be_bytes()]), &[0, 1, 0])
        })
        .unwrap();
    assert_eq!(tree_keys(&store, super::index::DOC), 0);
    // Several first calls at once: one rebuilds, the others find it done.
    race(&store, 4, |store, _| run(store, &agent("claude"), "note_list", &json!({"query": "bravo"})));
    let after = ask(&store);
    assert_eq!(before, after);
    assert!(before.iter().all(|r| !r["notes"].as_array().unwrap().is_empty()), "every query finds notes");
    assert_eq!(tree_keys(&store, "n.tok") + tree_keys(&store, "n.tri"), 0, "the first layout is gone");
    assert_eq!(tree(&store, super::index::TRI_COUNT), counts, "trigram counts are rebuilt once");
    assert!(tree_keys(&store, super::index::DOC) >= 3, "two partitions, 300 ids: several doc blocks");
}

#[test]
fn accents_and_nfd_match_in_notes_and_a_store_indexed_before_folding_is_rebuilt() {
    let (_d, store) = fresh();
    let body = json!({"key": "cv", "value": {"text": "Caf\u{e9} na\u{ef}ve r\u{e9}sum\u{e9}"}, "kind": "user_fact"});
    assert!(run(&store, &agent("claude"), "note_write", &body).get("error").is_none());
    let keys = |q: &str| -> Vec<Value> {
        let reply = run(&store, &agent("claude"), "note_list", &json!({"query": q}));
        reply["notes"].as_array().unwrap().iter().map(|n| n["key"].clone()).collect()
    };
    // Terms and trigrams alike: whole words, and a partial one ("resu") through trigrams.
    for q in ["cafe", "resume naive", "re\u{301}sume\u{301} nai\u{308}ve", "CAF\u{c9}", "resu"] {
        assert_eq!(keys(q), [json!("cv")], "{q}");
    }
    // A store indexed before folding: its keys hold accented terms and trigrams, and no mark.
    let part = Partition::new("local", "u1", "default").unwrap();
    let p = part.clone();
    store
        .write(move |tx| {
            for tree in [super::index::TERM, super::index::GRAM] {
                for (k, _) in tx.prefix(tree, &[])? {
                    tx.delete(tree, &k)?;
                }
            }
            let id = super::record::NoteRecord::decode(&tx.prefix(super::record::CUR, &p.key(&[]))?[0].1)?.id;
            let blk = super::block::block_of(id);
            for term in ["caf\u{e9}", "na\u{ef}v", "r\u{e9}sum\u{e9}"] {
                let key = [super::index::term_prefix(&p, term), blk.to_vec()].concat();
                super::block::set(tx, super::index::TERM, &key, id, Some(&[1]))?;
            }
            super::block::set(tx, super::index::GRAM, &p.key(&[b"caf", b"\0", &blk]), id, Some(&[]))?;
            tx.delete("n.folded", &[])
        })
        .unwrap();
    assert!(!super::index::current(&store).unwrap());
    // The first call rebuilds the index: folded spellings find the note, the old keys are gone.
    assert_eq!(keys("cafe"), [json!("cv")]);
    assert!(super::index::current(&store).unwrap());
    let snap = store.snapshot().unwrap();
    assert!(snap.prefix(super::index::TERM, &super::index::term_prefix(&part, "caf\u{e9}")).unwrap().next().is_none());
    // Forgetting the note leaves no posting behind.
    let gone = run(&store, &agent("claude"), "note_forget", &json!({"key": "cv"}));
    assert!(gone.get("error").is_none(), "{gone}");
    let snap = store.snapshot().unwrap();
    for tree in [super::index::TERM, super::index::GRAM, super::index::DOC] {
        assert!(snap.prefix(tree, &part.key(&[])).unwrap().next().is_none(), "{tree} is empty");
    }
    assert!(keys("cafe").is_empty());
}

/// `api::submit` as the binding calls it: the reply arrives through the callback.
fn submit(store: &Store, caller: &Caller, verb: &str, body: &Value) -> Value {
    let (tx, rx) = std::sync::mpsc::channel();
    super::api::submit(
        store,
        verb,
        caller,
        &serde_json::to_vec(body).unwrap(),
        Box::new(move |reply| tx.send(reply).unwrap()),
    );
    serde_json::from_slice(&rx.recv().unwrap().unwrap()).unwrap()
}

#[test]
fn submitted_writes_answer_once_durable_and_race_like_called_ones() {
    let (_dir, store) = fresh();
    let a = agent("a");
    let created = submit(&store, &a, "note_write", &json!({"key": "k", "value": {"x": 1}, "kind": "user_fact"}));
    assert_eq!(created["version"], 1);
    assert_eq!(created["evolution"], "created");
    // Answered means published: a read right after sees it.
    assert_eq!(keys(&run(&store, &a, "note_list", &json!({"key": "k"}))), ["k"]);
    // Eight writers with the same expectedVersion: exactly one wins. Each sends a value the note
    // does not hold: one equal to it (`{"x": 1}`) changes nothing and succeeds as `unchanged`
    // whenever it runs first, which made this test fail about one run in four on a busy machine.
    let replies = race(&store, 8, |store, t| {
        submit(store, &agent("a"), "note_write", &json!({"key": "k", "value": {"x": t + 10}, "expectedVersion": 1}))
    });
    let won = replies.iter().filter(|r| r.get("error").is_none()).count();
    assert_eq!(won, 1, "{replies:?}");
    assert!(replies.iter().filter(|r| r.get("error").is_some()).all(|r| code(r) == "VERSION_CONFLICT"));
    // A refusal before the writer, and a verb other than a write, answer through the callback too.
    assert_eq!(code(&submit(&store, &a, "note_write", &json!({"key": "k"}))), "VALIDATION_ERROR");
    assert_eq!(submit(&store, &a, "note_list", &json!({"key": "k"}))["notes"][0]["version"], 2);
}

#[test]
fn quick_calls_are_lists_of_one_key() {
    use super::api::quick;
    assert!(!quick("note_write", br#"{"key":"k","value":1}"#), "a write goes to a thread");
    assert!(!quick("note_list", &[b' '; 5000]), "a large body goes to a thread");
    assert!(quick("note_list", br#"{"key":"k","limit":1}"#));
    assert!(!quick("note_list", br#"{"key":"k","query":"x"}"#), "a query ranks: not quick");
    assert!(!quick("note_list", br#"{"key":"k","as_of":5}"#), "as_of reads versions: not quick");
    assert!(!quick("note_list", br#"{"kind":"user_fact"}"#), "no key: may scan many notes");
    assert!(!quick("note_list", b"not json"));
    assert!(!quick("history", br#"{"key":"k"}"#));
}

#[test]
fn a_task_id_alone_names_a_task_note_on_every_note_verb() {
    let (_d, store) = fresh();
    let (a, other) = (agent("claude"), agent("codex"));
    let receipt = run(&store, &a, "note_write", &with(note("tw", json!(1)), json!({"taskId": "T9"})));
    assert_eq!((receipt["visibility"].as_str(), receipt["taskId"].as_str()), (Some("task"), Some("T9")), "{receipt}");
    // Another agent without the task does not see it; naming the task does.
    assert!(keys(&run(&store, &other, "note_list", &json!({}))).is_empty());
    assert_eq!(keys(&run(&store, &other, "note_list", &json!({"taskId": "T9"}))), vec!["tw"]);
    let events = run(&store, &other, "history", &json!({"key": "tw", "taskId": "T9"}));
    assert_eq!(events["events"].as_array().map(Vec::len), Some(1), "{events}");
    for visibility in ["user", "agent"] {
        for verb in ["history", "note_forget"] {
            let reply = run(&store, &a, verb, &json!({"key": "tw", "visibility": visibility, "taskId": "T9"}));
            assert_eq!(reply["error"]["details"][0]["field"], "taskId", "{verb} {visibility} → {reply}");
        }
    }
    let forgotten = run(&store, &other, "note_forget", &json!({"key": "tw", "taskId": "T9"}));
    assert_eq!(forgotten["state"], "forgotten", "{forgotten}");
    assert!(keys(&run(&store, &a, "note_list", &json!({"taskId": "T9"}))).is_empty());
}

#[test]
fn a_fresh_store_writes_nothing_until_its_first_note_and_that_note_marks_the_index() {
    let (_d, store) = fresh();
    let txn = |store: &Store| store.snapshot().unwrap().txn();
    let before = txn(&store);
    // Refused and read-only first calls: nothing to rebuild in a store without notes.
    let refused = run(&store, &agent("claude"), "note_write", &json!({"key": "", "value": 1}));
    assert_eq!(code(&refused), "VALIDATION_ERROR", "{refused}");
    assert!(keys(&run(&store, &agent("claude"), "note_list", &json!({"query": "alpha"}))).is_empty());
    assert_eq!(txn(&store), before, "a refused first call changes nothing");
    assert!(!super::index::current(&store).unwrap());
    let body = json!({"key": "k", "value": {"text": "alpha bravo"}, "kind": "user_fact"});
    assert!(run(&store, &agent("claude"), "note_write", &body).get("error").is_none());
    assert_eq!(txn(&store), before + 1, "the first note is one transaction, mark included");
    assert!(super::index::current(&store).unwrap(), "the first note marks the index folded");
    assert_eq!(keys(&run(&store, &agent("claude"), "note_list", &json!({"query": "ALPHA"}))), ["k"]);
}

#[test]
fn a_private_note_is_not_written_over_where_the_policy_lets_no_one_read_it() {
    let (_d, store) = fresh();
    let private =
        json!({"key": "p", "value": "alice's secret", "kind": "user_fact", "private": true, "allowPrivate": true});
    assert!(run(&store, &agent("alice"), "note_write", &private).get("error").is_none());
    let before = store.snapshot().unwrap().txn();
    for extra in
        [json!({}), json!({"expectedVersion": 0}), json!({"expectedVersion": 1}), json!({"writeMode": "merge"})]
    {
        let mut body = json!({"key": "p", "value": "bob's guess", "kind": "user_fact"});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let reply = run(&store, &agent("bob"), "note_write", &body);
        assert_eq!(code(&reply), "FORBIDDEN", "{body}: {reply}");
        assert!(!reply.to_string().contains("currentVersion"), "the version is not told: {reply}");
    }
    assert_eq!(store.snapshot().unwrap().txn(), before, "nothing was written");
    // Where the policy lets it be read, it may be written as any note.
    let open = json!({"key": "p", "value": "bob's edit", "expectedVersion": 1, "allowPrivate": true});
    assert_eq!(run(&store, &agent("bob"), "note_write", &open)["version"], json!(2));
    let read =
        run(&store, &agent("alice"), "note_list", &json!({"key": "p", "allowPrivate": true, "includePrivate": true}));
    assert_eq!(read["notes"][0]["value"], json!("bob's edit"));
    assert_eq!(read["notes"][0]["private"], json!(true), "it stays private");
}

#[test]
fn a_blank_task_id_is_refused_naming_it_by_notes_and_handoffs() {
    let (_d, store) = fresh();
    let note = json!({"key": "k", "value": 1, "kind": "task_state", "taskId": "   "});
    let handoff = json!({"taskId": " \t", "summary": "half done"});
    for (verb, body) in [("note_write", note), ("handoff_create", handoff), ("note_list", json!({"taskId": "  "}))] {
        let reply = run(&store, &agent("claude"), verb, &body);
        assert_eq!(code(&reply), "VALIDATION_ERROR", "{verb}: {reply}");
        assert_eq!(reply["error"]["details"][0]["field"], json!("taskId"), "{verb}: {reply}");
    }
    let idem = json!({"key": "k", "value": 1, "kind": "user_fact", "idempotencyKey": " "});
    assert_eq!(
        run(&store, &agent("claude"), "note_write", &idem)["error"]["details"][0]["field"],
        json!("idempotencyKey")
    );
}
