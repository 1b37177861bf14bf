//! What a forget does to the event history: events keep who, when and which operation (the
//! audit), but the content of the events of what was forgotten (`before`, `after`, `patch`) is
//! stripped in the same transaction, so `memory_history` cannot return it either. (The notes
//! engine does the same for a forgotten note's events.) Targets are matched as the verbs write
//! them: an entity by its name, a fact as `from \0 type \0 to`, a document by its id; names and
//! types are compared folded.

use super::super::part::Partition;
use super::super::records::{decode, encode};
use crate::error::Result;
use crate::history::{EVENT, Event};
use crate::text::fold;
use crate::write::WriteTxn;
use serde_json::{Value, json};

/// Which events' content a forget strips.
pub(crate) enum Strip<'a> {
    /// An entity's events and the events of every fact touching it (folded name).
    Subject(&'a str),
    /// The events of facts with these folded `from \0 type \0 to` targets.
    Facts(&'a [String]),
    /// The events of these documents.
    Documents(&'a [u64]),
    /// One attribute key inside an entity's events (folded name, key).
    Attribute(&'a str, &'a str),
}

fn folded_fact(target: &str) -> Option<[String; 3]> {
    let mut parts = target.split('\0');
    let (from, rel_type, to) = (parts.next()?, parts.next()?, parts.next()?);
    parts.next().is_none().then(|| [fold(from.trim()), fold(rel_type.trim()), fold(to.trim())])
}

/// Removes `key` from every object inside `value`.
fn drop_key(value: &mut Value, key: &str) {
    match value {
        Value::Object(map) => {
            map.remove(key);
            map.values_mut().for_each(|v| drop_key(v, key));
        }
        Value::Array(items) => items.iter_mut().for_each(|v| drop_key(v, key)),
        _ => {}
    }
}

/// Strips the content of the events of `part` that `what` names; returns how many changed.
pub(crate) fn strip_events(tx: &mut WriteTxn<'_>, part: &Partition, what: &Strip<'_>) -> Result<u64> {
    let mut changed = 0;
    for (key, bytes) in tx.prefix(EVENT, part.prefix())? {
        let mut event: Event = decode(&bytes, "history event")?;
        let before = event.clone();
        match what {
            Strip::Subject(name) => {
                let hit = match event.family.as_str() {
                    "entity" => fold(event.target.trim()) == *name,
                    "fact" => folded_fact(&event.target).is_some_and(|[f, _, t]| f == *name || t == *name),
                    _ => false,
                };
                if hit {
                    redact(&mut event);
                }
            }
            Strip::Facts(targets) => {
                if event.family == "fact"
                    && folded_fact(&event.target).is_some_and(|parts| targets.contains(&parts.join("\0")))
                {
                    redact(&mut event);
                }
            }
            Strip::Documents(ids) => {
                if event.family == "document" && event.target.parse().is_ok_and(|id: u64| ids.contains(&id)) {
                    redact(&mut event);
                }
            }
            Strip::Attribute(name, attr) => {
                if event.family == "entity" && fold(event.target.trim()) == *name {
                    for v in [&mut event.before, &mut event.after, &mut event.patch].into_iter().flatten() {
                        drop_key(v, attr);
                    }
                }
            }
        }
        if event != before {
            tx.put(EVENT, &key, &encode(&event))?;
            changed += 1;
        }
    }
    Ok(changed)
}

fn redact(event: &mut Event) {
    event.before = None;
    event.patch = None;
    event.after = Some(json!({ "redacted": "forgotten" }));
}
