//! An event's target as `memory_history` and audit show it: an object naming the target the way
//! a request names it, never the stored key form. The store keeps composite targets joined by NUL
//! (`key \0 visibility \0 owner`, `from \0 type \0 to`: history keys, docs/design/history.md); a
//! reply carries no NUL, so each family's target is split into its fields here.

use serde_json::{Value, json};

/// `target` of an event of `family`, as replies show it:
/// - `note`: `{key, visibility, taskId?}`; `entity`: `{name}`; `fact`: `{from, type, to}`;
/// - `document`: `{doc_id}`; `handoff`: `{taskId}`;
/// - `forget`: `{form}` (`subject`, `fact`, `passage`, `source`, `attribute`, `all`), and for
///   events written before forget targets left the names out, the names they spell
///   (`{form: "attribute", subject, key}`, `{form: "fact", from, type, to}`, `{form: "subject", subject}`);
/// - anything else (or a target that does not read as its family's): `{parts: [...]}`.
#[must_use]
pub fn render(family: &str, target: &str) -> Value {
    let shown = match family {
        "note" => note(target),
        "entity" => Some(json!({ "name": target })),
        "fact" => three(target).map(|[from, rel, to]| json!({ "from": from, "type": rel, "to": to })),
        "document" => Some(json!({ "doc_id": target })),
        "handoff" => Some(json!({ "taskId": target })),
        "forget" => forget(target),
        _ => None,
    };
    shown.unwrap_or_else(|| json!({ "parts": target.split('\0').collect::<Vec<_>>() }))
}

/// `key \0 visibility \0 owner` (none holds a NUL; the owner is a task id, an agent, or empty).
fn note(target: &str) -> Option<Value> {
    let [key, visibility, owner] = three(target)?;
    let mut out = json!({ "key": key, "visibility": visibility });
    if visibility == "task" {
        out["taskId"] = json!(owner);
    }
    Some(out)
}

/// `from \0 type \0 to` (names hold no control character), or any three NUL-joined parts.
fn three(target: &str) -> Option<[&str; 3]> {
    let mut parts = target.split('\0');
    let found = [parts.next()?, parts.next()?, parts.next()?];
    parts.next().is_none().then_some(found)
}

fn forget(target: &str) -> Option<Value> {
    if !target.contains(':') {
        return (!target.contains('\0')).then(|| json!({ "form": target }));
    }
    if let Some(name) = target.strip_prefix("subject:") {
        return Some(json!({ "form": "subject", "subject": name }));
    }
    if let Some(rest) = target.strip_prefix("attribute:") {
        let (subject, key) = rest.split_once('\0')?;
        return Some(json!({ "form": "attribute", "subject": subject, "key": key }));
    }
    let [from, rel, to] = three(target.strip_prefix("fact:")?)?;
    Some(json!({ "form": "fact", "from": from, "type": rel, "to": to }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composite_targets_are_split_into_fields_and_no_reply_holds_a_nul() {
        let cases = [
            (
                "fact",
                "Marcus Feld\0founded\0Nimbus Labs",
                json!({"from": "Marcus Feld", "type": "founded", "to": "Nimbus Labs"}),
            ),
            ("note", "deploy\0task\0T-7", json!({"key": "deploy", "visibility": "task", "taskId": "T-7"})),
            ("note", "prefs\0user\0", json!({"key": "prefs", "visibility": "user"})),
            ("note", "mine\0agent\0claude", json!({"key": "mine", "visibility": "agent"})),
            ("entity", "Ivo Petrov", json!({"name": "Ivo Petrov"})),
            ("document", "17", json!({"doc_id": "17"})),
            ("handoff", "T-7", json!({"taskId": "T-7"})),
            ("forget", "attribute", json!({"form": "attribute"})),
            (
                "forget",
                "attribute:Ivo Petrov\0eyes",
                json!({"form": "attribute", "subject": "Ivo Petrov", "key": "eyes"}),
            ),
            ("forget", "fact:A\0knows\0B", json!({"form": "fact", "from": "A", "type": "knows", "to": "B"})),
            ("forget", "subject:Ivo Petrov", json!({"form": "subject", "subject": "Ivo Petrov"})),
            ("fact", "odd\0shape", json!({"parts": ["odd", "shape"]})),
            ("forget", "x\0y", json!({"parts": ["x", "y"]})),
            ("mystery", "a\0b", json!({"parts": ["a", "b"]})),
        ];
        for (family, target, want) in cases {
            let shown = render(family, target);
            assert_eq!(shown, want, "{family} {target:?}");
            assert!(!shown.to_string().contains("\\u0000"), "{shown}");
        }
    }
}
