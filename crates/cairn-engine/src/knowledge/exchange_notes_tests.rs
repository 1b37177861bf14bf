//! Notes and handoffs through `export` / `import` / `load`: their records and fields, private
//! notes withheld unless asked for, the round trip into an empty scope, import twice is once, a
//! changed value as the next version with its event, and resume after an import in any order.

use super::Partition;
use super::testing::fresh;
use super::testing_api::{caller, export_pages, normalized, notes_verb, verb};
use crate::store::Store;
use serde_json::{Value, json};

/// Four notes (user, task, agent, private) and two handoffs (one expired by `now` 10,000).
fn seeded() -> (tempfile::TempDir, Store, Partition) {
    let (dir, store, part) = fresh();
    let who = caller(&part, 1_000);
    let writes = [
        json!({"key": "editor", "value": {"name": "vim"}, "kind": "user_preference"}),
        json!({"key": "plan", "value": "step 2", "kind": "task_state", "visibility": "task", "taskId": "t1",
               "confidence": 0.5, "confidenceBasis": "agent_inferred"}),
        json!({"key": "mine", "value": [1, 2], "kind": "decision", "visibility": "agent"}),
        json!({"key": "secret", "value": "x", "kind": "user_fact", "private": true, "allowPrivate": true}),
    ];
    for body in &writes {
        assert!(notes_verb(&store, &who, "note_write", body).get("error").is_none());
    }
    let later = caller(&part, 2_000);
    notes_verb(&store, &later, "note_write", &json!({"key": "editor", "value": {"name": "helix"}}));
    for (at, body) in [
        (3_000, json!({"taskId": "t1", "summary": "first", "expiresAt": "1970-01-01T00:00:05.000Z"})),
        (4_000, json!({"taskId": "t1", "summary": "second", "nextSteps": ["ship"], "to": "codex"})),
    ] {
        assert!(notes_verb(&store, &caller(&part, at), "handoff_create", &body).get("id").is_some());
    }
    (dir, store, part)
}

fn of_kind<'a>(records: &'a [Value], kind: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["kind"] == kind).collect()
}

#[test]
fn notes_and_handoffs_are_exported_with_their_fields() {
    let (_dir, store, part) = seeded();
    let who = caller(&part, 10_000);
    let plain = verb(&store, &who, "export", &json!({})).unwrap();
    let records = plain["records"].as_array().unwrap();
    assert_eq!(records[0]["kinds"], json!(["header", "entity", "fact", "document", "note", "handoff"]));
    assert_eq!(records[0]["withheld"], json!({"private_notes": 1, "private_versions": 0}));
    let notes = of_kind(records, "note");
    assert_eq!(notes.iter().map(|n| n["key"].as_str().unwrap()).collect::<Vec<_>>(), ["editor", "mine", "plan"]);
    let editor = notes[0];
    assert_eq!(editor["value"], json!({"name": "helix"}));
    assert_eq!(
        editor["versions"],
        json!([{"value": {"name": "vim"}, "noteKind": "user_preference", "private": false, "version": 1, "agent": "a",
                "createdAt": "1970-01-01T00:00:01.000Z", "updatedAt": "1970-01-01T00:00:01.000Z"}]),
        "every earlier version travels with the note"
    );
    assert_eq!((&editor["version"], &editor["noteKind"]), (&json!(2), &json!("user_preference")));
    assert_eq!(
        (&editor["createdAt"], &editor["updatedAt"]),
        (&json!("1970-01-01T00:00:01.000Z"), &json!("1970-01-01T00:00:02.000Z"))
    );
    assert!(editor["id"].is_string());
    assert_eq!(
        (&notes[1]["visibility"], &notes[1]["owner"], &notes[1]["agent"]),
        (&json!("agent"), &json!("a"), &json!("a"))
    );
    assert_eq!((&notes[2]["taskId"], &notes[2]["confidence"]), (&json!("t1"), &json!(0.5)));
    assert_eq!(notes[2]["confidenceBasis"], "agent_inferred");
    let handoffs = of_kind(records, "handoff");
    assert_eq!(handoffs.len(), 2, "expired capsules are exported too");
    assert_eq!(handoffs[0]["expiresAt"], "1970-01-01T00:00:05.000Z");
    assert_eq!((&handoffs[1]["nextSteps"], &handoffs[1]["to"]), (&json!(["ship"]), &json!("codex")));
    assert!(handoffs.iter().all(|h| h["id"].as_str().is_some_and(|id| id.parse::<u64>().is_ok())));
    // Private notes need both the node's policy and the caller's ask.
    for (body, private) in [
        (json!({"includePrivate": true}), false),
        (json!({"allowPrivate": true}), false),
        (json!({"allowPrivate": true, "includePrivate": true}), true),
    ] {
        let page = verb(&store, &who, "export", &body).unwrap();
        let records = page["records"].as_array().unwrap();
        assert_eq!(of_kind(records, "note").iter().any(|n| n["key"] == "secret"), private, "{body}");
        assert_eq!(records[0]["withheld"]["private_notes"], json!(u64::from(!private)), "{body}");
    }
    assert_eq!(verb(&store, &who, "export", &json!({"includePrivate": "yes"})), Err("INVALID_ARGUMENT"));
}

#[test]
fn notes_and_handoffs_round_trip_in_any_page_order_and_twice_is_once() {
    let (_dir, store, part) = seeded();
    let pages = export_pages(&store, &part, 2);
    let target = Partition::new("local", "u1", "restored").unwrap();
    let who = caller(&target, 50_000);
    let mut imported = (0, 0);
    for page in pages.iter().rev() {
        let reply = verb(&store, &who, "import", &json!({"records": page})).unwrap();
        assert_eq!(reply["skipped"], json!([]), "{reply}");
        imported.0 += reply["imported"]["notes"].as_u64().unwrap();
        imported.1 += reply["imported"]["handoffs"].as_u64().unwrap();
    }
    assert_eq!(imported, (4, 2));
    // Versions and times are the exported ones: the copy exports as the source does.
    assert_eq!(normalized(&export_pages(&store, &target, 5000).concat()), normalized(&pages.concat()));
    for page in &pages {
        let reply = verb(&store, &who, "import", &json!({"records": page})).unwrap();
        assert_eq!(reply["imported"], json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0}));
    }
    let reply = verb(&store, &who, "import", &json!({"records": pages.concat()})).unwrap();
    assert_eq!(reply["unchanged"]["notes"], 4);
    assert_eq!(reply["unchanged"]["handoffs"], 2);
    // Into the scope it came from, nothing is new either.
    let reply = verb(&store, &caller(&part, 50_000), "import", &json!({"records": pages.concat()})).unwrap();
    assert_eq!((&reply["imported"]["notes"], &reply["imported"]["handoffs"]), (&json!(0), &json!(0)), "{reply}");
    // The imported notes read and resume as the source's do.
    let reader = caller(&target, 10_000);
    let listed = notes_verb(&store, &reader, "note_list", &json!({"query": "helix"}));
    assert_eq!(listed["notes"][0]["key"], "editor", "{listed}");
    let resumed = notes_verb(&store, &reader, "handoff_resume", &json!({"taskId": "t1"}));
    assert_eq!(resumed["handoff"]["summary"], "second", "{resumed}");
    assert!(store.check().unwrap().ok);
}

#[test]
fn a_changed_value_is_the_next_version_and_an_old_page_never_rolls_back() {
    let (_dir, store, part) = seeded();
    let records = export_pages(&store, &part, 5000).concat();
    let editor: Vec<Value> = records.iter().filter(|r| r["key"] == "editor").cloned().collect();
    let target = Partition::new("local", "u1", "copy").unwrap();
    let who = caller(&target, 20_000);
    notes_verb(&store, &who, "note_write", &json!({"key": "editor", "value": "emacs", "kind": "user_preference"}));
    let reply = verb(&store, &who, "import", &json!({"records": editor})).unwrap();
    assert_eq!(reply["imported"]["notes"], 1, "{reply}");
    let note = &notes_verb(&store, &who, "note_list", &json!({"key": "editor"}))["notes"][0];
    assert_eq!(
        (&note["value"], &note["version"], &note["supersedes"]),
        (&json!({"name": "helix"}), &json!(2), &json!(1))
    );
    assert_eq!(note["updatedAt"], "1970-01-01T00:00:20.000Z", "a new version here is stamped when it is imported");
    let events = notes_verb(&store, &who, "history", &json!({"key": "editor"}));
    let last = events["events"].as_array().unwrap().last().unwrap().clone();
    assert_eq!((&last["op"], &last["before"]["value"]), (&json!("import"), &json!("emacs")), "{events}");
    // The copy moves on; the same page again leaves it where it is.
    notes_verb(&store, &who, "note_write", &json!({"key": "editor", "value": "nano"}));
    let reply = verb(&store, &who, "import", &json!({"records": editor})).unwrap();
    assert_eq!((&reply["imported"]["notes"], &reply["unchanged"]["notes"]), (&json!(0), &json!(1)), "{reply}");
    let note = &notes_verb(&store, &who, "note_list", &json!({"key": "editor"}))["notes"][0];
    assert_eq!((&note["value"], &note["version"]), (&json!("nano"), &json!(3)));
}

#[test]
fn bad_note_and_handoff_records_are_skipped_by_field() {
    let (_dir, store, part) = fresh();
    let who = caller(&part, 9);
    let records = json!([
        {"kind": "note", "key": "k"},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "gossip"},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "visibility": "task"},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "id": 5},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "updatedAt": "soon"},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "version": 2, "versions": [{"value": 0}]},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "version": 2,
         "versions": [{"version": 1, "value": 0, "noteKind": "rumour"}]},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "version": 2,
         "versions": [{"version": 1, "value": 0, "noteKind": "decision"}, {"version": 1, "value": 0, "noteKind": "decision"}]},
        {"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "versions": {}},
        {"kind": "handoff", "summary": "x"},
        {"kind": "handoff", "taskId": "t", "summary": " "},
        {"kind": "handoff", "taskId": "t", "summary": "s", "blockers": [3]},
    ]);
    let reply = verb(&store, &who, "import", &json!({"records": records})).unwrap();
    let starts: Vec<String> = reply["skipped"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| format!("{} {}", s["index"], s["reason"].as_str().unwrap().split(':').next().unwrap()))
        .collect();
    assert_eq!(
        starts,
        [
            "0 value",
            "1 noteKind",
            "2 taskId",
            "3 id",
            "4 updatedAt",
            "5 versions[0].version",
            "6 versions[0].noteKind",
            "7 versions[1].version",
            "8 versions",
            "9 taskId",
            "10 summary",
            "11 blockers[0]"
        ],
        "{reply}"
    );
    assert_eq!(reply["imported"], json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0}));
    let snap = store.snapshot().unwrap();
    assert_eq!(snap.prefix(super::part::SCOPES, b"").unwrap().count(), 0, "nothing imported registers no scope");
}

/// Found by an audit: import took notes and handoffs their write verbs refuse (a control
/// character in a key or task id, a blank key, a confidence with no basis, a user note naming a
/// task, a value nested past the limit, an addressee no token can hold), and a handoff so stored
/// could never be resumed. Each is skipped with the words the write verb refuses it with.
#[test]
fn records_the_write_verbs_refuse_are_skipped_with_their_words() {
    let (_dir, store, part) = fresh();
    let who = caller(&part, 9);
    let note = |extra: Value| {
        let mut r = json!({"kind": "note", "key": "k", "value": 1, "noteKind": "decision", "visibility": "user"});
        r.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        r
    };
    let mut deep = json!(1);
    for _ in 0..40 {
        deep = json!({ "a": deep });
    }
    let records = json!([
        note(json!({"key": "k\u{1}"})),
        note(json!({"key": "   "})),
        note(json!({"confidence": 0.5})),
        note(json!({"taskId": "t1"})),
        note(json!({"visibility": "task", "taskId": "t\u{1}x"})),
        note(json!({"value": deep})),
        {"kind": "handoff", "taskId": "h\u{1}x", "summary": "s"},
        {"kind": "handoff", "taskId": "h", "summary": "s", "to": "no one"},
        {"kind": "handoff", "taskId": "h", "summary": "s", "decisions": [deep]},
    ]);
    let reply = verb(&store, &who, "import", &json!({"records": records})).unwrap();
    let reasons: Vec<&str> =
        reply["skipped"].as_array().unwrap().iter().map(|s| s["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons.len(), 9, "{reply}");
    assert_eq!(reasons[0], "key: must not contain control characters");
    assert_eq!(reasons[1], "key: must not be blank");
    assert_eq!(
        reasons[2],
        "confidenceBasis: is required with confidence: one of user_asserted, agent_inferred, source_supported"
    );
    assert!(reasons[3].starts_with("taskId: names a task; user notes have no task"), "{reply}");
    assert_eq!(reasons[4], "taskId: must not contain control characters");
    assert!(reasons[5].starts_with("value: nests 40 levels deep"), "{reply}");
    assert_eq!(reasons[6], "taskId: must not contain control characters");
    assert!(reasons[7].starts_with("to: \"no one\" is not an agent name"), "{reply}");
    assert!(reasons[8].starts_with("decisions[0]: nests 40 levels deep"), "{reply}");
    assert_eq!(reply["imported"], json!({"entities": 0, "facts": 0, "documents": 0, "notes": 0, "handoffs": 0}));
    // The write verbs refuse the same inputs in the same words.
    for (body, message) in [
        (json!({"key": "k\u{1}", "value": 1}), reasons[0]),
        (json!({"key": "   ", "value": 1}), reasons[1]),
        (json!({"key": "k", "value": 1, "confidence": 0.5}), reasons[2]),
        (json!({"key": "k", "value": 1, "taskId": "t\u{1}x"}), reasons[4]),
    ] {
        let refused = notes_verb(&store, &who, "note_write", &body);
        assert_eq!(refused["error"]["message"], json!(message), "{refused}");
    }
    let refused = notes_verb(&store, &who, "handoff_create", &json!({"taskId": "h\u{1}x", "summary": "s"}));
    assert_eq!(refused["error"]["message"], json!(reasons[6]), "{refused}");
}

#[test]
fn load_takes_notes_and_handoffs_into_an_empty_scope() {
    let (_dir, store, part) = seeded();
    let records = export_pages(&store, &part, 5000).concat();
    let lines = records.iter().map(Value::to_string).collect::<Vec<_>>().join("\n");
    let target = Partition::new("local", "u1", "loaded").unwrap();
    let who = caller(&target, 60_000);
    let reply: Value =
        serde_json::from_slice(&super::api::call(&store, "load", &who, lines.as_bytes()).unwrap()).unwrap();
    assert_eq!(reply["skipped"], json!([]), "{reply}");
    assert_eq!((&reply["imported"]["notes"], &reply["imported"]["handoffs"]), (&json!(4), &json!(2)), "{reply}");
    assert_eq!(normalized(&export_pages(&store, &target, 5000).concat()), normalized(&records));
    let events = notes_verb(&store, &who, "history", &json!({"key": "plan", "visibility": "task", "taskId": "t1"}));
    assert_eq!(events["events"][0]["op"], "import", "{events}");
}

#[test]
fn an_agent_note_is_exported_and_imported_by_its_own_agent_or_an_admin_only() {
    let (_dir, store, part) = seeded();
    let other = super::api::Caller { agent: "b".into(), ..caller(&part, 10_000) };
    let keys = |reply: &Value| -> Vec<String> {
        of_kind(reply["records"].as_array().unwrap(), "note")
            .iter()
            .map(|n| n["key"].as_str().unwrap().into())
            .collect()
    };
    // Agent `a`'s note `mine` (visibility agent) is a's alone.
    let theirs = verb(&store, &other, "export", &json!({})).unwrap();
    assert_eq!(keys(&theirs), ["editor", "plan"]);
    let admin = verb(&store, &other, "export", &json!({"allAgents": true})).unwrap();
    assert_eq!(keys(&admin), ["editor", "mine", "plan"]);
    // Importing a's note as b is refused by name and changes nothing; as an admin it is written.
    let forged = json!({"kind": "note", "key": "mine", "value": "overwritten", "noteKind": "decision",
                        "visibility": "agent", "owner": "a", "agent": "a", "version": 1});
    let reply = verb(&store, &other, "import", &json!({"records": [forged.clone()]})).unwrap();
    assert_eq!(reply["skipped"][0]["reason"], json!("owner: an agent note is imported by its own agent only"));
    let mine = notes_verb(&store, &caller(&part, 11_000), "note_list", &json!({"key": "mine"}));
    assert_eq!(mine["notes"][0]["value"], json!([1, 2]));
    let reply = verb(&store, &other, "import", &json!({"records": [forged], "allAgents": true})).unwrap();
    assert_eq!(reply["skipped"], json!([]));
    let mine = notes_verb(&store, &caller(&part, 11_000), "note_list", &json!({"key": "mine"}));
    assert_eq!(mine["notes"][0]["value"], json!("overwritten"));
}

/// The user-visible trail of a note: each event's writer, time and the version it left.
fn trail(store: &Store, who: &super::api::Caller, key: &str) -> Vec<Value> {
    let body = json!({"key": key, "allowPrivate": true, "includePrivate": true, "limit": 100});
    let events = notes_verb(store, who, "history", &body);
    events["events"]
        .as_array()
        .unwrap_or_else(|| panic!("{events}"))
        .iter()
        .map(|e| json!([e["agent"], e["at"], e["after"]["version"], e["after"]["value"], e["after"]["confidence"]]))
        .collect()
}

/// The note as `note_list` shows it at `as_of` (`None`: now), without the store-local id.
fn read_at(store: &Store, who: &super::api::Caller, key: &str, as_of: Option<i64>) -> Value {
    let mut body = json!({"key": key, "allowPrivate": true, "includePrivate": true});
    if let Some(t) = as_of {
        body["as_of"] = json!(t);
    }
    let mut notes = notes_verb(store, who, "note_list", &body)["notes"].clone();
    for n in notes.as_array_mut().unwrap() {
        n.as_object_mut().unwrap().remove("id");
    }
    notes
}

#[test]
fn every_version_travels_so_history_and_as_of_read_as_at_the_source() {
    let (_dir, store, part) = fresh();
    let as_agent = |agent: &str, now: i64| super::api::Caller { agent: agent.into(), ..caller(&part, now) };
    for (agent, now, body) in [
        ("a", 1_000, json!({"key": "plan", "value": "draft", "kind": "task_state"})),
        ("b", 2_000, json!({"key": "plan", "value": "review", "confidence": 0.4, "confidenceBasis": "agent_inferred"})),
        ("a", 3_000, json!({"key": "plan", "value": "hush", "private": true, "allowPrivate": true})),
        ("c", 4_000, json!({"key": "plan", "value": "ship", "private": false, "allowPrivate": true})),
        ("a", 5_000, json!({"key": "solo", "value": 1, "kind": "decision"})),
    ] {
        let reply = notes_verb(&store, &as_agent(agent, now), "note_write", &body);
        assert!(reply.get("error").is_none(), "{reply}");
    }
    // One record a page, imported last page first, by an admin (who may keep each writer).
    let pages = export_pages(&store, &part, 1);
    let target = Partition::new("local", "u1", "copy").unwrap();
    let admin = caller(&target, 90_000);
    for page in pages.iter().rev() {
        let reply = verb(&store, &admin, "import", &json!({"records": page, "allAgents": true})).unwrap();
        assert_eq!(reply["skipped"], json!([]), "{reply}");
    }
    let (src, copy) = (caller(&part, 100_000), caller(&target, 100_000));
    for key in ["plan", "solo"] {
        assert_eq!(trail(&store, &copy, key), trail(&store, &src, key), "{key}: the copy's history is the source's");
        for t in [None, Some(500), Some(1_000), Some(1_500), Some(2_500), Some(3_000), Some(3_500), Some(4_500)] {
            assert_eq!(read_at(&store, &copy, key, t), read_at(&store, &src, key, t), "{key} as of {t:?}");
        }
    }
    assert_eq!(trail(&store, &copy, "plan").len(), 4);
    assert_eq!(normalized(&export_pages(&store, &target, 5000).concat()), normalized(&pages.concat()));
    // Twice is once; into the scope it came from, nothing is new.
    for (who, into) in [(&admin, "copy"), (&caller(&part, 90_000), "source")] {
        let reply = verb(&store, who, "import", &json!({"records": pages.concat(), "allAgents": true})).unwrap();
        assert_eq!((&reply["imported"]["notes"], &reply["unchanged"]["notes"]), (&json!(0), &json!(2)), "{into}");
    }
    // The source moves on; its next export brings the copy the new version, as written there.
    notes_verb(&store, &as_agent("b", 6_000), "note_write", &json!({"key": "plan", "value": "shipped"}));
    let reply = verb(
        &store,
        &admin,
        "import",
        &json!({"records": export_pages(&store, &part, 5000).concat(), "allAgents": true}),
    )
    .unwrap();
    assert_eq!((&reply["imported"]["notes"], &reply["unchanged"]["notes"]), (&json!(1), &json!(1)), "{reply}");
    assert_eq!(trail(&store, &copy, "plan"), trail(&store, &src, "plan"));
    assert_eq!(trail(&store, &copy, "plan").len(), 5);
    // An agent's own import may not sign other writers' versions: the note is skipped, naming
    // the first version another agent wrote, and nothing of it is stored; "solo", all its own, is.
    let mine = Partition::new("local", "u1", "mine").unwrap();
    let reply = verb(&store, &caller(&mine, 95_000), "import", &json!({"records": pages.concat()})).unwrap();
    let reasons: Vec<&str> =
        reply["skipped"].as_array().unwrap().iter().map(|s| s["reason"].as_str().unwrap()).collect();
    assert_eq!(reasons.len(), 1, "{reply}");
    assert!(reasons[0].starts_with("versions[1].agent: names agent \"b\""), "{reply}");
    assert_eq!(reply["imported"]["notes"], 1, "{reply}");
    assert_eq!(read_at(&store, &caller(&mine, 100_000), "plan", None), json!([]));
    assert_eq!(read_at(&store, &caller(&mine, 100_000), "solo", None), read_at(&store, &src, "solo", None));
    assert!(store.check().unwrap().ok);
}

#[test]
fn a_private_earlier_version_leaves_only_when_asked_for_and_is_counted() {
    let (_dir, store, part) = fresh();
    let who = caller(&part, 1_000);
    for body in [
        json!({"key": "k", "value": "open", "kind": "user_fact"}),
        json!({"key": "k", "value": "hush", "private": true, "allowPrivate": true}),
        json!({"key": "k", "value": "open again", "private": false, "allowPrivate": true}),
    ] {
        assert!(notes_verb(&store, &who, "note_write", &body).get("error").is_none());
    }
    let plain = verb(&store, &who, "export", &json!({})).unwrap();
    let records = plain["records"].as_array().unwrap();
    assert_eq!(records[0]["withheld"], json!({"private_notes": 0, "private_versions": 1}));
    let note = of_kind(records, "note")[0];
    assert_eq!(note["versions"].as_array().unwrap().len(), 1);
    assert!(!plain.to_string().contains("hush"), "{plain}");
    let all = verb(&store, &who, "export", &json!({"allowPrivate": true, "includePrivate": true})).unwrap();
    let note = of_kind(all["records"].as_array().unwrap(), "note")[0];
    assert_eq!(note["versions"][1]["value"], "hush");
    assert_eq!(all["records"][0]["withheld"], json!({"private_notes": 0, "private_versions": 0}));
}
