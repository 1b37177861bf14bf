//! What a forget does to the event history. The events of what was forgotten go with it (from
//! `h.event` and both indexes), in the same transaction: their targets spell the forgotten names
//! (an entity's name, a fact's `from \0 type \0 to`) and their values its content, so redacting
//! values alone would leave the fact readable through `memory_history` and audit. The `forget`
//! event the verb appends stays as the record that a forget happened; it names the form and the
//! counts, never the target. An attribute forget keeps the entity, so it keeps its events and
//! takes only that key out of them. (Events of forget verbs written before targets were left
//! out, `subject:<name>` and the like, go with a subject they name.) Names and types are
//! compared folded. A kept fact event whose `relate` input names what went shows that input as
//! `{"redacted": "forgotten"}`.

use super::super::event_writes;
use super::super::fact_sources::Left;
use super::super::graph::Relation;
use super::super::part::Partition;
use super::super::records::decode;
use crate::error::Result;
use crate::history::{EVENT, Event, TARGET, naming, naming_fewer, remove, rewrite, seq_of, target_prefix};
use crate::text::fold;
use crate::write::WriteTxn;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeSet;

/// Which events a forget removes (or, for an attribute, edits).
pub(crate) enum Strip<'a> {
    /// An entity's events, the events of every fact touching it, and older forget events naming
    /// it (folded name).
    Subject(&'a str),
    /// The events of facts with these folded `from \0 type \0 to` targets (sorted).
    Facts(&'a [String]),
    /// The events of these documents (sorted).
    Documents(&'a [u64]),
    /// One attribute key inside an entity's events (folded name, key).
    Attribute(&'a str, &'a str),
    /// What a source label took: its documents' events, and of the facts it touched (folded
    /// targets `facts`) the events of the versions that went, `left` telling what is left of a
    /// record (`fact_sources::without`). A fact in `emptied` kept no version: all its events go.
    /// A fact that keeps one keeps the events whose `after` (the version the write made) still
    /// has a provenance, shown without the label's; such an event, and any other fact event,
    /// shows a `before` that went and a `relate` input naming the label as `{"redacted":
    /// "forgotten"}`, and a `before` that another provenance still states without the label's.
    /// `docs`, `facts` and `emptied` are sorted: a source may take thousands, looked up once an
    /// event.
    Source {
        label: &'a str,
        left: &'a dyn Fn(&Relation) -> Left,
        docs: &'a [u64],
        facts: &'a [String],
        emptied: &'a [String],
    },
}

/// What a kept event shows in place of a value that spelled what a forget took.
fn redacted() -> Value {
    json!({"redacted": "forgotten"})
}

/// What is left of an event's record once a source went: `None` when it went (a record that
/// does not read as a relation counts as gone: nothing shows that it was not), else the record
/// as it reads now (the label's provenances taken out).
fn left_of(record: &Value, left: &dyn Fn(&Relation) -> Left) -> Option<Value> {
    let Ok(rel) = Relation::deserialize(record) else { return None };
    match left(&rel) {
        Left::Untouched => Some(record.clone()),
        Left::Rewritten(kept) => {
            let mut out = serde_json::to_value(&*kept).expect("relations serialise");
            // The older writes the event left out stay counted (`event_writes.rs`).
            if let Some(n) = record.get(event_writes::OMITTED) {
                out[event_writes::OMITTED] = n.clone();
            }
            Some(out)
        }
        Left::Gone => None,
    }
}

/// Whether `patch` is a `relate` input (it names `from`; `remember`'s names `source` as the
/// relation's first end) given source label `label`.
fn relate_labelled(patch: Option<&Value>, label: &str) -> bool {
    patch.is_some_and(|p| p.get("from").is_some() && p.get("source").and_then(Value::as_str) == Some(label))
}

/// The folded `from`, `type` and `to` of a `relate` input (`remember`'s patches name `source`,
/// and their facts' events go with the facts they name).
fn relate_ends(patch: Option<&Value>) -> Option<[String; 3]> {
    let p = patch?;
    let field = |k: &str| p.get(k).and_then(Value::as_str).map(|s| fold(s.trim()));
    Some([field("from")?, field("type")?, field("to")?])
}

/// Whether a kept fact event's `relate` input spells what a subject or fact forget took: a
/// `replaces` call's input is filed on the facts it ended, so forgetting the new fact, or an
/// entity it names, would leave that name on another fact's `end` event.
fn names_forgotten(event: &Event, what: &Strip<'_>) -> bool {
    event.family == "fact"
        && relate_ends(event.patch.as_ref()).is_some_and(|[from, rel_type, to]| match what {
            Strip::Subject(name) => from == *name || to == *name,
            Strip::Facts(targets) => targets.binary_search(&[from, rel_type, to].join("\0")).is_ok(),
            _ => false,
        })
}

/// What a source forget does to fact event `event`: whether it goes (else it may be edited).
fn source_fact(
    event: &mut Event,
    (label, left): (&str, &dyn Fn(&Relation) -> Left),
    facts: &[String],
    emptied: &[String],
) -> bool {
    let folded = folded_fact(&event.target).map(|parts| parts.join("\0"));
    if let Some(target) = folded.filter(|t| facts.binary_search(t).is_ok()) {
        if emptied.binary_search(&target).is_ok() {
            return true;
        }
        match event.after.as_ref().map(|after| left_of(after, left)) {
            None | Some(None) => return true,
            Some(Some(after)) => event.after = Some(after),
        }
        if let Some(before) = &event.before {
            event.before = Some(left_of(before, left).unwrap_or_else(redacted));
        }
    }
    if relate_labelled(event.patch.as_ref(), label) {
        event.patch = Some(redacted());
    }
    false
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

/// The events of `part` that may be touched by `what`, by sequence number: found through
/// `h.name` (the entities they name) and `h.target` (documents), never by reading every event.
/// A fact's events, and the `relate` inputs naming it, all spell its subject; a source's facts
/// are found the same way.
fn candidates(tx: &mut WriteTxn<'_>, part: &Partition, what: &Strip<'_>) -> Result<BTreeSet<u64>> {
    let mut seqs = BTreeSet::new();
    let named = |tx: &mut WriteTxn<'_>, folded: &str, seqs: &mut BTreeSet<u64>| -> Result<()> {
        seqs.extend(naming(tx, part, folded)?);
        Ok(())
    };
    let subjects = |targets: &[String]| -> BTreeSet<String> {
        targets.iter().filter_map(|t| t.split('\0').next().map(str::to_owned)).collect()
    };
    let documents = |tx: &mut WriteTxn<'_>, ids: &[u64], seqs: &mut BTreeSet<u64>| -> Result<()> {
        for id in ids {
            for key in tx.prefix_keys(TARGET, &target_prefix(part, "document", &id.to_string()))? {
                seqs.insert(seq_of(&key)?);
            }
        }
        Ok(())
    };
    match what {
        Strip::Subject(name) | Strip::Attribute(name, _) => named(tx, name, &mut seqs)?,
        // A fact's events name both its ends (their target, or the `relate` input they carry):
        // the end named by fewer events holds them all (`from` may be a hub).
        Strip::Facts(targets) => {
            let pairs: BTreeSet<[String; 2]> =
                targets.iter().filter_map(|t| folded_fact(t)).map(|[from, _, to]| [from, to]).collect();
            for [from, to] in pairs {
                seqs.extend(naming_fewer(tx, part, (&from, &to))?);
            }
        }
        Strip::Documents(ids) => documents(tx, ids, &mut seqs)?,
        Strip::Source { docs, facts, .. } => {
            documents(tx, docs, &mut seqs)?;
            for from in subjects(facts) {
                named(tx, &from, &mut seqs)?;
            }
        }
    }
    Ok(seqs)
}

/// Removes the events of `part` that `what` names (an attribute: edits them); returns how many.
pub(crate) fn strip_events(tx: &mut WriteTxn<'_>, part: &Partition, what: &Strip<'_>) -> Result<u64> {
    let mut changed = 0;
    for seq in candidates(tx, part, what)? {
        let Some(bytes) = tx.get(EVENT, &part.key(&[&seq.to_be_bytes()]))? else { continue };
        let mut event: Event = decode(&bytes, "history event")?;
        let was = event.clone();
        let gone = match what {
            Strip::Subject(name) => match event.family.as_str() {
                "entity" => fold(event.target.trim()) == *name,
                "fact" => folded_fact(&event.target).is_some_and(|[f, _, t]| f == *name || t == *name),
                "forget" => legacy_forget_names(&event.target, name),
                _ => false,
            },
            Strip::Facts(targets) => {
                event.family == "fact"
                    && folded_fact(&event.target).is_some_and(|parts| targets.binary_search(&parts.join("\0")).is_ok())
            }
            Strip::Documents(ids) => {
                event.family == "document" && event.target.parse().is_ok_and(|id: u64| ids.binary_search(&id).is_ok())
            }
            Strip::Source { label, left, docs, facts, emptied } => match event.family.as_str() {
                "document" => event.target.parse().is_ok_and(|id: u64| docs.binary_search(&id).is_ok()),
                "fact" => source_fact(&mut event, (label, *left), facts, emptied),
                _ => false,
            },
            Strip::Attribute(name, attr) => {
                if event.family == "entity" && fold(event.target.trim()) == *name {
                    for v in [&mut event.before, &mut event.after, &mut event.patch].into_iter().flatten() {
                        drop_key(v, attr);
                    }
                }
                false
            }
        };
        if gone {
            remove(tx, part, &was)?;
            changed += 1;
            continue;
        }
        if names_forgotten(&event, what) {
            event.patch = Some(redacted());
        }
        if event != was {
            rewrite(tx, part, &was, &event)?;
            changed += 1;
        }
    }
    Ok(changed)
}
