//! What a forget does to the event history. The events of what was forgotten go with it (from
//! `h.event` and both indexes), in the same transaction: their targets spell the forgotten names
//! (an entity's name, a fact's `from \0 type \0 to`) and their values its content, so redacting
//! values alone would leave the fact readable through `memory_history` and audit. The `forget`
//! event the verb appends stays as the record that a forget happened; it names the form and the
//! counts, never the target. An attribute forget keeps the entity, so it keeps its events and
//! takes only that key out of them. (Events of forget verbs written before targets were left
//! out, `subject:<name>` and the like, go with a subject they name.) Names and types are
//! compared folded.

use super::super::part::Partition;
use super::super::records::{decode, encode};
use crate::error::Result;
use crate::history::{EVENT, Event, remove};
use crate::text::fold;
use crate::write::WriteTxn;
use serde_json::Value;

/// Which events a forget removes (or, for an attribute, edits).
pub(crate) enum Strip<'a> {
    /// An entity's events, the events of every fact touching it, and older forget events naming
    /// it (folded name).
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

/// Whether an older `forget` event's target (`subject:<name>`, `attribute:<name>\0<key>`,
/// `fact:<from>\0<type>\0<to>`) names the entity `name` (folded).
fn legacy_forget_names(target: &str, name: &str) -> bool {
    let named = |s: &str| fold(s.trim()) == name;
    if let Some(rest) = target.strip_prefix("subject:") {
        return named(rest);
    }
    if let Some(rest) = target.strip_prefix("attribute:") {
        return rest.split('\0').next().is_some_and(named);
    }
    target.strip_prefix("fact:").and_then(folded_fact).is_some_and(|[f, _, t]| f == name || t == name)
}

/// Removes the events of `part` that `what` names (an attribute: edits them); returns how many.
pub(crate) fn strip_events(tx: &mut WriteTxn<'_>, part: &Partition, what: &Strip<'_>) -> Result<u64> {
    let mut changed = 0;
    for (key, bytes) in tx.prefix(EVENT, part.prefix())? {
        let mut event: Event = decode(&bytes, "history event")?;
        let gone = match what {
            Strip::Subject(name) => match event.family.as_str() {
                "entity" => fold(event.target.trim()) == *name,
                "fact" => folded_fact(&event.target).is_some_and(|[f, _, t]| f == *name || t == *name),
                "forget" => legacy_forget_names(&event.target, name),
                _ => false,
            },
            Strip::Facts(targets) => {
                event.family == "fact"
                    && folded_fact(&event.target).is_some_and(|parts| targets.contains(&parts.join("\0")))
            }
            Strip::Documents(ids) => {
                event.family == "document" && event.target.parse().is_ok_and(|id: u64| ids.contains(&id))
            }
            Strip::Attribute(name, attr) => {
                if event.family == "entity" && fold(event.target.trim()) == *name {
                    let before = event.clone();
                    for v in [&mut event.before, &mut event.after, &mut event.patch].into_iter().flatten() {
                        drop_key(v, attr);
                    }
                    if event != before {
                        tx.put(EVENT, &key, &encode(&event))?;
                        changed += 1;
                    }
                }
                false
            }
        };
        if gone {
            remove(tx, part, &event)?;
            changed += 1;
        }
    }
    Ok(changed)
}
