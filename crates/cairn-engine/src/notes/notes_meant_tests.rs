//! What a note or task named with nothing behind it may have meant (`notes_meant.rs`).

use super::tests::{T0, agent, code, fresh, run, who};
use serde_json::{Value, json};

fn write(store: &crate::store::Store, by: &str, key: &str, extra: &Value) {
    let mut body = json!({"key": key, "value": 1, "kind": "task_state", "allowPrivate": true});
    body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
    assert_eq!(run(store, &agent(by), "note_write", &body)["version"], 1, "{key}");
}

#[test]
fn a_note_miss_offers_the_notes_it_may_name_and_nothing_private_or_of_another_agent() {
    let (_dir, store) = fresh();
    write(&store, "claude", "deploy_window", &json!({}));
    write(&store, "claude", "recon_status", &json!({"taskId": "atlas-migration"}));
    write(&store, "claude", "deploy_windows", &json!({"visibility": "agent"}));
    write(&store, "codex", "deploy_windoww", &json!({"visibility": "agent"}));
    write(&store, "claude", "deploy_winodw", &json!({"private": true}));
    let codex = agent("codex");
    for verb in ["history", "note_forget"] {
        let miss = run(&store, &codex, verb, &json!({"key": "deploy-window"}));
        assert_eq!(code(&miss), "NOT_FOUND", "{miss}");
        // Codex's own agent note is offered; claude's agent note and the private note are not.
        assert_eq!(
            miss["error"]["details"],
            json!([
                {"did_you_mean": "deploy_window", "note": {"key": "deploy_window", "visibility": "user"}},
                {"did_you_mean": "deploy_windoww", "note": {"key": "deploy_windoww", "visibility": "agent"}},
            ]),
            "{verb}: {miss}"
        );
        // A task note named without its task: the same key, with its taskId to send back.
        let task = run(&store, &codex, verb, &json!({"key": "recon_status"}));
        assert_eq!(
            task["error"]["details"],
            json!([{"did_you_mean": "recon_status", "note": {"key": "recon_status", "visibility": "task", "taskId": "atlas-migration"}}]),
            "{verb}: {task}"
        );
        assert!(
            task["error"]["message"]
                .as_str()
                .unwrap()
                .ends_with("did you mean \"recon_status\" (task \"atlas-migration\")? (send a detail's `note` back)"),
            "{task}"
        );
    }
    // Another user's notes are never offered.
    let stranger = who("u2", "default", "codex", T0);
    let theirs = run(&store, &stranger, "history", &json!({"key": "deploy-window"}));
    assert_eq!(theirs["error"]["message"], "no note \"deploy-window\" with user visibility is stored");
    assert!(theirs["error"].get("details").is_none_or(|d| d == &json!([])), "{theirs}");
}

#[test]
fn a_version_conflict_on_no_note_says_there_is_none() {
    let (_dir, store) = fresh();
    write(&store, "claude", "recon_status", &json!({"taskId": "T"}));
    let miss =
        run(&store, &agent("codex"), "note_write", &json!({"key": "recon_status", "value": 2, "expectedVersion": 1}));
    assert_eq!(code(&miss), "VERSION_CONFLICT", "{miss}");
    assert_eq!(
        miss["error"]["message"],
        "expectedVersion 1 but no note \"recon_status\" with user visibility is stored (version 0)"
    );
    assert_eq!(miss["error"]["details"], json!([{"currentVersion": 0}]));
}

#[test]
fn resuming_a_task_with_no_handoff_offers_the_tasks_spelled_like_it() {
    let (_dir, store) = fresh();
    let claude = agent("claude");
    run(&store, &claude, "handoff_create", &json!({"taskId": "atlas-migration", "summary": "s"}));
    run(&store, &claude, "handoff_create", &json!({"taskId": "atlas-migration", "summary": "again"}));
    run(&store, &claude, "handoff_create", &json!({"taskId": "billing", "summary": "s"}));
    let codex = agent("codex");
    let miss = run(&store, &codex, "handoff_resume", &json!({"taskId": "atlas_migration"}));
    assert_eq!(miss, json!({"state": "none", "taskId": "atlas_migration", "did_you_mean": ["atlas-migration"]}));
    let far = run(&store, &codex, "handoff_resume", &json!({"taskId": "payroll"}));
    assert_eq!(far, json!({"state": "none", "taskId": "payroll"}));
    let stranger = who("u2", "default", "codex", T0);
    let theirs = run(&store, &stranger, "handoff_resume", &json!({"taskId": "atlas_migration"}));
    assert_eq!(theirs, json!({"state": "none", "taskId": "atlas_migration"}));
}

#[test]
fn a_key_or_task_asked_in_another_case_is_offered_as_stored() {
    // Keys and task ids are exact: a miss by case alone was offered nothing, while a typo was.
    let (_dir, store) = fresh();
    let claude = agent("claude");
    write(&store, "claude", "deploy.window", &json!({}));
    run(&store, &claude, "handoff_create", &json!({"taskId": "Atlas-Migration", "summary": "s"}));
    let codex = agent("codex");
    let miss = run(&store, &codex, "handoff_resume", &json!({"taskId": "atlas-migration"}));
    assert_eq!(miss, json!({"state": "none", "taskId": "atlas-migration", "did_you_mean": ["Atlas-Migration"]}));
    let history = run(&store, &codex, "history", &json!({"key": "Deploy.Window"}));
    assert_eq!(
        history["error"]["details"],
        json!([{"did_you_mean": "deploy.window", "note": {"key": "deploy.window", "visibility": "user"}}]),
        "{history}"
    );
    let list = run(&store, &codex, "note_list", &json!({"key": "DEPLOY.WINDOW"}));
    assert_eq!(list["did_you_mean"], json!([{"key": "deploy.window", "visibility": "user"}]), "{list}");
    // A list by a task that holds no note offers the notes of the tasks spelled like it.
    write(&store, "claude", "progress", &json!({"taskId": "Atlas-Migration"}));
    write(&store, "claude", "secret", &json!({"taskId": "Atlas-Migration", "private": true}));
    let task = run(&store, &codex, "note_list", &json!({"taskId": "atlas-migration"}));
    assert_eq!(
        task,
        json!({"notes": [], "nextCursor": null,
            "did_you_mean": [{"key": "progress", "visibility": "task", "taskId": "Atlas-Migration"}]}),
    );
    let typo = run(&store, &codex, "note_list", &json!({"taskId": "atlas_migraton", "kind": "task_state"}));
    assert_eq!(typo["did_you_mean"][0]["taskId"], "Atlas-Migration", "{typo}");
    // A task that holds notes, none of them of the kind asked, is no miss.
    let kind = run(&store, &codex, "note_list", &json!({"taskId": "Atlas-Migration", "kind": "decision"}));
    assert_eq!(kind, json!({"notes": [], "nextCursor": null}));
    // Another user's are never offered.
    let stranger = who("u2", "default", "codex", T0);
    let theirs = run(&store, &stranger, "handoff_resume", &json!({"taskId": "atlas-migration"}));
    assert_eq!(theirs, json!({"state": "none", "taskId": "atlas-migration"}));
}

#[test]
fn a_key_or_task_that_begins_stored_ones_offers_them() {
    // Hierarchical keys: a model asked for the task's folder, not its one note, and read
    // `notes: []` as nothing stored.
    let (_dir, store) = fresh();
    write(&store, "claude", "task/auth-refactor/state", &json!({"taskId": "auth-refactor"}));
    write(&store, "claude", "pref/editor", &json!({}));
    write(&store, "claude", "pref/theme", &json!({}));
    write(&store, "claude", "prefix-other", &json!({"private": true}));
    let codex = agent("codex");
    let list = run(&store, &codex, "note_list", &json!({"key": "task/auth-refactor"}));
    assert_eq!(
        list["did_you_mean"],
        json!([{"key": "task/auth-refactor/state", "visibility": "task", "taskId": "auth-refactor"}]),
        "{list}"
    );
    let prefs = run(&store, &codex, "note_list", &json!({"key": "pref/"}));
    assert_eq!(
        prefs["did_you_mean"],
        json!([{"key": "pref/editor", "visibility": "user"}, {"key": "pref/theme", "visibility": "user"}]),
        "{prefs}"
    );
    let history = run(&store, &codex, "history", &json!({"key": "pref"}));
    assert_eq!(code(&history), "NOT_FOUND", "{history}");
    assert_eq!(history["error"]["details"][0]["did_you_mean"], "pref/editor", "{history}");
    // A task id that begins a stored one offers its notes.
    let task = run(&store, &codex, "note_list", &json!({"taskId": "auth"}));
    assert_eq!(task["did_you_mean"][0]["key"], "task/auth-refactor/state", "{task}");
    run(&store, &agent("claude"), "handoff_create", &json!({"taskId": "auth-refactor", "summary": "s"}));
    let resume = run(&store, &codex, "handoff_resume", &json!({"taskId": "auth"}));
    assert_eq!(resume, json!({"state": "none", "taskId": "auth", "did_you_mean": ["auth-refactor"]}));
}
