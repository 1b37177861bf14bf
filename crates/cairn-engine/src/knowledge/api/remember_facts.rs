//! The facts of a `remember` call, stored in bulk. Everything that needs no store (folding
//! names and types, each relation's attributes, history targets and patches) is prepared on the
//! calling thread before the write, so calls in flight prepare in parallel. The writer thread
//! then creates each new entity without looking its name up twice, resolves each distinct
//! endpoint once, by id (an entity is loaded only when it must be created), and stores the
//! relations with ids counted locally and written back once. History events are written from
//! the records' own bytes.

use super::Caller;
use crate::error::{Error, Result};
use crate::history::{EncodedChange, record_encoded};
use crate::knowledge::event_writes;
use crate::knowledge::graph::{Assertion, Entity, Source, create_entity, entity_id_folded, entity_in, relate_ids};
use crate::knowledge::ids::{next_id, read_next_id, write_next_id};
use crate::knowledge::tally::Tally;
use crate::knowledge::type_spelling::TypeSpellings;
use crate::text::fold;
use crate::write::WriteTxn;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

/// One entity as the request sent it.
pub(super) struct EntityView<'a> {
    pub name: &'a str,
    pub entity_type: Option<&'a str>,
    pub attributes: Option<&'a Map<String, Value>>,
}

/// One entity ready for the writer.
struct PreparedEntity {
    /// `fold(name.trim())`.
    folded: String,
    /// The caller's input as sent, encoded: the history event's patch.
    patch: Vec<u8>,
}

/// One relation as the request sent it.
pub(super) struct RelationView<'a> {
    pub source: &'a str,
    pub target: &'a str,
    pub rel_type: &'a str,
    pub attributes: Option<&'a Map<String, Value>>,
}

/// One relation ready for the writer.
pub(super) struct Prepared {
    /// Indexes into `Facts::ends`.
    from: usize,
    to: usize,
    /// The type as sent, trimmed (stored as the partition spells it: `type_spelling.rs`).
    rel_type: String,
    /// As sent, with the call's `date` as `valid_from` when none is given.
    attributes: Map<String, Value>,
    /// The caller's input as sent, encoded: the history event's patch.
    patch: Vec<u8>,
}

/// The relations of a call, prepared.
#[derive(Default)]
pub(super) struct Facts {
    /// `facts.entities`, in request order.
    entities: Vec<PreparedEntity>,
    /// Each distinct endpoint (by folded name), first-sent spelling and folded form, in the order
    /// first named.
    pub ends: Vec<(String, String)>,
    relations: Vec<Prepared>,
    /// The call's `date`: each relation's `source_date`, as `relate` keeps it beside a given
    /// `valid_from`.
    date: Option<String>,
    /// The call's `source` label, which its entity events' patches hold (`entity_patch`).
    label: Option<String>,
}

/// The history input of an entity a `remember` call sends: as sent, with the call's `date` (the
/// valid time of the attributes it sets, `attribute_time.rs`) and `source` label (what a `source`
/// forget takes them by, `forget/source.rs`).
pub(super) fn entity_patch(e: &EntityView<'_>, (date, label): (Option<&str>, Option<&str>)) -> Value {
    let mut patch = json!({ "name": e.name, "type": e.entity_type, "attributes": e.attributes });
    if let Some(d) = date {
        patch["date"] = json!(d);
    }
    if let Some(l) = label {
        patch["source"] = json!(l);
    }
    patch
}

/// Prepares `entities` and `relations` (already checked: names and types are 1..=1 KiB after
/// trimming).
pub(super) fn prepare<'a>(
    entities: impl Iterator<Item = EntityView<'a>>,
    relations: impl Iterator<Item = RelationView<'a>>,
    (date, label): (Option<&str>, Option<&str>),
) -> Facts {
    let mut facts = Facts { date: date.map(str::to_owned), label: label.map(str::to_owned), ..Facts::default() };
    for e in entities {
        let patch = entity_patch(&e, (date, label));
        facts.entities.push(PreparedEntity {
            folded: fold(e.name.trim()),
            patch: serde_json::to_vec(&patch).expect("patches serialise"),
        });
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut end = |facts: &mut Facts, name: &str| -> usize {
        let folded = fold(name.trim());
        if let Some(&at) = seen.get(&folded) {
            return at;
        }
        facts.ends.push((name.to_owned(), folded.clone()));
        seen.insert(folded, facts.ends.len() - 1);
        facts.ends.len() - 1
    };
    for r in relations {
        let from = end(&mut facts, r.source);
        let to = end(&mut facts, r.target);
        let mut attributes = r.attributes.cloned().unwrap_or_default();
        if let Some(d) = date {
            attributes.entry("valid_from").or_insert_with(|| Value::String(d.to_owned()));
        }
        let rel_type = r.rel_type.trim().to_owned();
        let patch = json!({ "source": r.source, "target": r.target, "type": r.rel_type, "attributes": r.attributes });
        facts.relations.push(Prepared {
            from,
            to,
            rel_type,
            attributes,
            patch: serde_json::to_vec(&patch).expect("patches serialise"),
        });
    }
    facts
}

/// Stores the entities of `facts` (`sent[i]` is request entity `i`): a new one is created here,
/// with its history event; one stored before goes to `merge` (which records a change, if any).
/// Returns them in request order and how many were created. Count changes go to `tally` (`merge`
/// is handed it too), which the caller flushes once for the call.
pub(super) fn store_entities(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    facts: &Facts,
    sent: &[EntityView<'_>],
    merge: &mut dyn FnMut(&mut WriteTxn<'_>, usize, &mut Tally) -> Result<Entity>,
    tally: &mut Tally,
) -> Result<(Vec<Entity>, u64)> {
    let mut out = Vec::with_capacity(facts.entities.len());
    let mut created = 0;
    for (i, (p, e)) in facts.entities.iter().zip(sent).enumerate() {
        if entity_id_folded(tx, &caller.part, &p.folded)?.is_some() {
            out.push(merge(tx, i, tally)?);
            continue;
        }
        let types: Vec<String> = e.entity_type.iter().map(|t| (*t).to_owned()).collect();
        let none = Map::new();
        let attributes = e.attributes.unwrap_or(&none);
        let (entity, bytes) =
            create_entity(tx, &caller.part, (e.name, &p.folded), (&types, attributes), caller.now, tally)?;
        let seq = next_id(tx, &caller.part)?;
        let change = EncodedChange {
            family: "entity",
            target: &entity.name,
            op: "create",
            before: None,
            after: &bytes,
            patch: &p.patch,
            source: facts.label.as_deref(),
        };
        record_encoded(tx, caller, seq, change)?;
        created += 1;
        out.push(entity);
    }
    Ok((out, created))
}

/// The id of each endpoint of `facts` (in `facts.ends` order), `create` making the ones not
/// stored yet (it is given the spelling first sent, and `tally`).
pub(super) fn resolve(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    facts: &Facts,
    create: &mut dyn FnMut(&mut WriteTxn<'_>, &str, &mut Tally) -> Result<u64>,
    tally: &mut Tally,
) -> Result<Vec<u64>> {
    let mut ids = Vec::with_capacity(facts.ends.len());
    for (name, folded) in &facts.ends {
        let id = match entity_id_folded(tx, &caller.part, folded)? {
            Some(id) => id,
            None => create(tx, name, tally)?,
        };
        ids.push(id);
    }
    Ok(ids)
}

/// What storing the relations did.
#[derive(Default)]
pub(super) struct Stored {
    pub created: u64,
    /// Relations stored before that the call revised (an earlier start, a later end, attributes).
    pub updated: u64,
    /// Something was created, restored or revised.
    pub changed: bool,
}

/// Stores every relation of `facts` between the endpoints `ids` (from `resolve`), each created
/// one with its history event; `source_of(i)` is relation `i`'s provenance. Count changes go to
/// `tally`.
pub(super) fn store(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    facts: &Facts,
    ids: &[u64],
    source_of: &dyn Fn(usize) -> Source,
    tally: &mut Tally,
) -> Result<Stored> {
    let mut out = Stored::default();
    if facts.relations.is_empty() {
        return Ok(out);
    }
    // Nothing below takes an id from the partition's counter: ids are counted here and the counter
    // is written back once (only if one was taken, so a call that adds nothing writes nothing).
    let first = read_next_id(tx, &caller.part)?;
    let mut next = first;
    // The stored names of the ends, read once each when an event first needs them.
    let mut names: Vec<Option<String>> = vec![None; facts.ends.len()];
    let mut name = |tx: &mut WriteTxn<'_>, end: usize| -> Result<String> {
        if names[end].is_none() {
            let stored = entity_in(tx, &caller.part, ids[end])?.map_or_else(|| facts.ends[end].0.clone(), |e| e.name);
            names[end] = Some(stored);
        }
        Ok(names[end].clone().unwrap_or_default())
    };
    let mut spellings = TypeSpellings::default();
    for (i, p) in facts.relations.iter().enumerate() {
        let rel_type = spellings.resolve(tx, &caller.part, &p.rel_type)?;
        let a = Assertion {
            from: &facts.ends[p.from].0,
            to: &facts.ends[p.to].0,
            rel_type: &rel_type,
            attributes: &p.attributes,
            source: source_of(i),
            agent: &caller.agent,
            replaces: false,
            date: facts.date.as_deref(),
        };
        let mut take = |_: &mut WriteTxn<'_>| {
            next += 1;
            Ok(next - 1)
        };
        // A refusal that depends on what is stored names the relation's own field.
        let (related, bytes) =
            relate_ids(tx, &caller.part, (ids[p.from], ids[p.to]), &fold(&rel_type), (a, caller.now), &mut take, tally)
                .map_err(|e| match e {
                    Error::InvalidArgument(m) => Error::InvalidArgument(format!("facts.relations[{i}].{m}")),
                    other => other,
                })?;
        // Saying a stored fact again changes nothing unless it adds something: no event then.
        let Some(after) = bytes else { continue };
        out.changed = true;
        let op = if related.created {
            "assert"
        } else if related.restored.is_some() {
            "restore"
        } else {
            "merge"
        };
        if op == "merge" {
            out.updated += 1;
        } else {
            out.created += 1;
        }
        // `relate` records the version it revised or restored beside the new one; so does this.
        let before = match (&related.before, op) {
            (Some(b), "merge" | "restore") => {
                Some(serde_json::to_vec(&event_writes::kept(tx, &caller.part, b)?).expect("values serialise"))
            }
            _ => None,
        };
        // The stored record serves as it is unless its writes are kept apart (`fact_writes.rs`).
        let after = if related.relation.writes.is_some() {
            serde_json::to_vec(&event_writes::kept(tx, &caller.part, &related.relation)?).expect("values serialise")
        } else {
            after
        };
        // Filed under the stored spellings, as every fact event is (`relate.rs`).
        let target = format!("{}\0{}\0{}", name(tx, p.from)?, related.relation.rel_type, name(tx, p.to)?);
        let change = EncodedChange {
            family: "fact",
            target: &target,
            op,
            before: before.as_deref(),
            after: &after,
            patch: &p.patch,
            source: None,
        };
        record_encoded(tx, caller, next, change)?;
        next += 1;
    }
    if next != first {
        write_next_id(tx, &caller.part, next)?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::history::{EVENT, Event};
    use crate::knowledge::graph::{Entity, Relation, Source};
    use crate::knowledge::testing::{call, caller, fresh};
    use serde_json::{Value, json};

    fn events(store: &crate::store::Store) -> Vec<Event> {
        let snap = store.snapshot().unwrap();
        snap.prefix(EVENT, b"").unwrap().map(|item| serde_json::from_slice(&item.unwrap().1).unwrap()).collect()
    }

    #[test]
    fn a_bulk_fact_event_is_the_event_record_would_store() {
        let (_dir, store, _part) = fresh();
        let body = json!({"facts": {"relations": [
            {"source": " Priya \"P\" Raman", "target": "Acme", "type": " Works_At ", "attributes": {"team": "infra"}},
            {"source": "priya \"p\" raman", "target": "Berlin", "type": "lives_in"},
        ]}, "date": "2024-05-01"});
        let r = call(&store, &caller(7), "remember", &body).unwrap();
        assert_eq!(r["stored"], json!({"entities": 3, "relations": 2, "passages": 0}));
        let all = events(&store);
        let facts: Vec<&Event> = all.iter().filter(|e| e.family == "fact").collect();
        assert_eq!(facts.len(), 2);
        let first = facts[0];
        assert_eq!(first.target, " Priya \"P\" Raman".trim().to_owned() + "\0Works_At\0Acme");
        assert_eq!((first.op.as_str(), first.agent.as_str(), first.at), ("assert", "claude", 7));
        let rel: Relation = serde_json::from_value(first.after.clone().unwrap()).unwrap();
        assert_eq!(rel.rel_type, "Works_At");
        assert_eq!(rel.valid_from.as_deref(), Some("2024-05-01"), "the call's date is the valid_from");
        assert_eq!(rel.source, Source::Asserted { label: None });
        assert_eq!(rel.id + 1, first.seq, "the event follows its relation");
        let patch = json!({"source": " Priya \"P\" Raman", "target": "Acme", "type": " Works_At ", "attributes": {"team": "infra"}});
        assert_eq!(first.patch, Some(patch));
        assert_eq!(facts[1].patch.as_ref().unwrap()["attributes"], Value::Null);
        // Ids are unique and the counter moved past every one taken.
        let mut seqs: Vec<u64> = all.iter().map(|e| e.seq).collect();
        seqs.dedup();
        assert_eq!(seqs.len(), all.len());
        // The next id the store hands out comes after them.
        let body = json!({"facts": {"relations": [{"source": "Acme", "target": "Berlin", "type": "near"}]}});
        call(&store, &caller(8), "remember", &body).unwrap();
        let next = events(&store);
        assert!(next.last().unwrap().seq > *seqs.iter().max().unwrap());
    }

    #[test]
    fn new_entities_are_created_with_their_events_and_known_ones_merged() {
        let (_dir, store, _part) = fresh();
        let first = json!({"facts": {"entities": [
            {"name": " Acme ", "type": "company", "attributes": {"size": 5}},
            {"name": "ACME", "type": "Company"},
            {"name": "Berlin"},
        ]}});
        let r = call(&store, &caller(3), "remember", &first).unwrap();
        assert_eq!(r["stored"]["entities"], json!(2), "the second Acme is the first");
        let created: Vec<Event> = events(&store).into_iter().filter(|e| e.family == "entity").collect();
        assert_eq!(created.len(), 2, "naming Acme again with nothing new records nothing");
        assert_eq!((created[0].target.as_str(), created[0].op.as_str(), created[0].at), ("Acme", "create", 3));
        let acme: Entity = serde_json::from_value(created[0].after.clone().unwrap()).unwrap();
        assert_eq!((acme.name.as_str(), acme.types.clone()), ("Acme", vec!["company".to_owned()]));
        assert_eq!(acme.attributes["size"], json!(5));
        assert_eq!(acme.id + 1, created[0].seq);
        assert_eq!(created[0].patch, Some(json!({"name": " Acme ", "type": "company", "attributes": {"size": 5}})));
        assert_eq!(created[1].patch, Some(json!({"name": "Berlin", "type": null, "attributes": null})));
        let again = json!({"facts": {"entities": [{"name": "acme", "type": "customer"}, {"name": "Paris"}]}});
        let r = call(&store, &caller(4), "remember", &again).unwrap();
        assert_eq!(r["stored"]["entities"], json!(1));
        let later: Vec<Event> = events(&store).into_iter().filter(|e| e.family == "entity").skip(2).collect();
        let ops: Vec<(&str, &str)> = later.iter().map(|e| (e.target.as_str(), e.op.as_str())).collect();
        assert_eq!(ops, vec![("Acme", "merge"), ("Paris", "create")]);
        let rec = call(&store, &caller(5), "recall", &json!({"subject": "Acme"})).unwrap();
        assert_eq!(rec["state"], json!("answered"), "{rec}");
    }

    #[test]
    fn endpoints_are_resolved_once_by_folded_name() {
        let (_dir, store, part) = fresh();
        call(&store, &caller(1), "remember", &json!({"facts": {"entities": [{"name": "Acme", "type": "company"}]}}))
            .unwrap();
        let body = json!({"facts": {"relations": [
            {"source": "ACME", "target": "Berlin", "type": "located_in"},
            {"source": "acme ", "target": "berlin", "type": "based_in"},
        ]}});
        let r = call(&store, &caller(2), "remember", &body).unwrap();
        assert_eq!(r["stored"], json!({"entities": 1, "relations": 2, "passages": 0}), "Berlin once, Acme found");
        let rec = call(&store, &caller(3), "recall", &json!({"subject": "Berlin"})).unwrap();
        assert_eq!(rec["facts"].as_array().unwrap().len(), 2, "{rec}");
        let counter = || store.snapshot().unwrap().get(crate::knowledge::trees::SEQ, part.prefix()).unwrap();
        let before = counter();
        let again = call(&store, &caller(4), "remember", &body).unwrap();
        assert_eq!(again["already"], json!(true));
        assert_eq!(counter(), before, "a call that adds nothing takes no id");
    }
}
