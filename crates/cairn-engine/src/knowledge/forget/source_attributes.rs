//! The entity attributes a `source` forget takes: those set by writes that came under the label
//! (`remember` with `source`, or an imported write that names it, `attribute_time::source_of`).
//! An attribute goes whole, as the `attribute` form takes it (every value, from the record, the
//! attribute index and the entity's events), when every write that set it came under the label;
//! one another write set too stays and is counted as kept, since which value is whose is not the
//! label's to decide. The label is taken out of the entity events that name it.

use super::super::attribute_sources::writes;
use super::super::attribute_time::{set_by, source_of, written_entity};
use super::super::graph::Entity;
use super::super::part::Partition;
use super::super::records::{decode, encode};
use super::super::source_index;
use super::super::trees::{ENT, ent_key};
use super::{Strip, bury, strip_events};
use crate::error::{Error, Result};
use crate::history::{EVENT, Event, TARGET, remove, rewrite, seq_of};
use crate::text::fold;
use crate::write::WriteTxn;
use std::collections::{BTreeMap, BTreeSet};

/// How many attributes went, how many set under the label stayed (another write set them too),
/// and the entities written under the label, which stay.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Taken {
    pub gone: u64,
    pub kept: u64,
    pub entities: BTreeSet<u64>,
}

fn event_at(tx: &mut WriteTxn<'_>, part: &Partition, seq: u64) -> Result<Event> {
    let bytes = tx
        .get(EVENT, &part.key(&[&seq.to_be_bytes()]))?
        .ok_or_else(|| Error::corrupt(None, format!("history event {seq} is indexed but missing")))?;
    decode(&bytes, "history event")
}

/// The entity events of `part` (by sequence number) whose writes came under `label`.
fn labelled(tx: &mut WriteTxn<'_>, part: &Partition, label: &str) -> Result<Vec<Event>> {
    // Those the source index files under the label once it is built (`source_index.rs`), else
    // every entity event, through its target index: `part | entity \0 …`.
    let seqs = if source_index::built(tx)? {
        source_index::events_of(tx, part, label)?
    } else {
        let family = [part.prefix(), b"entity\0"].concat();
        tx.prefix_keys(TARGET, &family)?.iter().map(|key| seq_of(key)).collect::<Result<_>>()?
    };
    let mut out = Vec::new();
    for seq in seqs {
        let event = event_at(tx, part, seq)?;
        if source_of(&event) == Some(label) {
            out.push(event);
        }
    }
    Ok(out)
}

/// How writes of `entity` not under `label` set `key`: not at all (`None`); else whether they set
/// every value the label's writes set too (`Some(true)`: each of its statements is another's too,
/// a restatement among them, `attribute_sources.rs`).
fn set_elsewhere(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    entity: &Entity,
    key: &str,
    label: &str,
) -> Result<Option<bool>> {
    let writes = writes(tx, part, entity)?;
    let (own, others): (Vec<_>, Vec<_>) =
        writes.iter().filter(|(_, set)| set.contains_key(key)).partition(|(event, _)| source_of(event) == Some(label));
    if others.is_empty() {
        return Ok(None);
    }
    Ok(Some(own.iter().all(|(_, set)| others.iter().any(|(_, other)| other.get(key) == set.get(key)))))
}

/// Forgets the attributes set under `label` in `part` (see the module comment).
pub(super) fn forget_labelled_attributes(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    label: &str,
    now: i64,
) -> Result<Taken> {
    let events = labelled(tx, part, label)?;
    // Each entity's keys set under the label, by id.
    let mut keys: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    for (id, set) in events.iter().filter_map(set_by) {
        keys.entry(id).or_default().extend(set.into_iter().map(|(k, _)| k));
    }
    let mut taken = Taken::default();
    // The keys, by entity, whose every value the label stated another write states too: the value
    // stays as that write's, and the label's statements of it go from its events, so forgetting
    // the other label later takes it (else the label's write, kept without its label, would keep
    // it for ever).
    let mut restated: BTreeMap<u64, BTreeSet<String>> = BTreeMap::new();
    for id in events.iter().filter_map(written_entity) {
        if tx.get(ENT, &ent_key(part, id))?.is_some() {
            taken.entities.insert(id);
        }
    }
    for (id, keys) in keys {
        let Some(bytes) = tx.get(ENT, &ent_key(part, id))? else { continue };
        let mut entity: Entity = decode(&bytes, "entity")?;
        let folded = fold(entity.name.trim());
        let mut changed = false;
        for key in keys {
            if !entity.attributes.contains_key(&key) {
                continue;
            }
            if let Some(same) = set_elsewhere(tx, part, &entity, &key, label)? {
                taken.kept += 1;
                if same {
                    restated.entry(id).or_default().insert(key);
                }
                continue;
            }
            entity.attributes.remove(&key);
            super::super::attr_index::remove(tx, part, id, Some(&key))?;
            bury(tx, part, "attribute", &format!("{folded}\0{key}"), now)?;
            strip_events(tx, part, &Strip::Attribute(&folded, &key))?;
            taken.gone += 1;
            changed = true;
        }
        if changed {
            // Only attributes go: the entity and its types stay, so no count changes (`tally.rs`).
            tx.put(ENT, &ent_key(part, id), &encode(&entity))?;
        }
    }
    // The label goes from the events that kept it (read again: `strip_events` edited some), and
    // so do its statements of values another write states.
    for seq in events.iter().map(|e| e.seq) {
        let Some(bytes) = tx.get(EVENT, &part.key(&[&seq.to_be_bytes()]))? else { continue };
        let was: Event = decode(&bytes, "history event")?;
        let mut edited = was.clone();
        let restated = written_entity(&was).and_then(|id| restated.get(&id));
        if let Some(patch) = edited.patch.as_mut().and_then(serde_json::Value::as_object_mut) {
            patch.remove("source");
            if let (Some(keys), Some(set)) = (restated, patch.get_mut("attributes").and_then(|a| a.as_object_mut())) {
                set.retain(|k, _| !keys.contains(k));
            }
        }
        if was.op == "restate" && set_by(&edited).is_none() {
            // It recorded only statements that went.
            remove(tx, part, &was)?;
        } else if edited != was {
            rewrite(tx, part, &was, &edited)?;
        }
    }
    Ok(taken)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::Partition;
    use crate::knowledge::testing::{TODAY, fresh};
    use crate::knowledge::testing_api::{caller, export_pages, notes_verb, verb};
    use crate::store::Store;
    use serde_json::{Value, json};

    fn call(store: &Store, part: &Partition, name: &str, body: &Value) -> Value {
        verb(store, &caller(part, TODAY), name, body).unwrap()
    }

    fn intake(store: &Store, part: &Partition) {
        let body = json!({"source": "intake-form.pdf", "content": "Intake form for Gina Lowe.",
            "facts": {"entities": [{"name": "Gina Lowe", "type": "person",
                                    "attributes": {"diagnosis": "type 2 diabetes"}}]}});
        call(store, part, "remember", &body);
    }

    fn attributes(store: &Store, part: &Partition) -> Value {
        call(store, part, "recall", &json!({"subject": "Gina Lowe"}))["subject"]["attributes"].clone()
    }

    /// Found by an audit: the diagnosis sent with a source stayed after the source was forgotten,
    /// in recall, history and export, and the reply said nothing was kept.
    #[test]
    fn attributes_sent_under_a_source_go_with_it() {
        let (_dir, store, part) = fresh();
        intake(&store, &part);
        assert_eq!(attributes(&store, &part), json!({"diagnosis": "type 2 diabetes"}));
        let reply = call(&store, &part, "forget", &json!({"source": "intake-form.pdf"}));
        assert_eq!(reply["forgotten"]["attributes"], 1, "{reply}");
        assert_eq!(reply["forgotten"]["documents"], 1, "{reply}");
        // Gina stays, stored in her own right, and the reply says so.
        assert_eq!(reply["kept"][0]["what"], "entities", "{reply}");
        assert_eq!(reply["kept"][0]["count"], 1, "{reply}");
        assert_eq!(attributes(&store, &part), json!({}));
        let history = notes_verb(&store, &caller(&part, TODAY), "history", &json!({"subject": "Gina Lowe"}));
        assert!(!history["events"].as_array().unwrap().is_empty(), "{history}");
        let history = history.to_string();
        assert!(!history.contains("diabetes") && !history.contains("intake-form"), "{history}");
        let exported = serde_json::to_string(&export_pages(&store, &part, 500)).unwrap();
        assert!(!exported.contains("diabetes") && !exported.contains("intake-form"), "{exported}");
        let again = call(&store, &part, "forget", &json!({"source": "intake-form.pdf"}));
        assert_eq!(again, json!({"state": "already_forgotten"}));
        assert_eq!(
            call(&store, &part, "forget", &json!({"attribute": {"subject": "Gina Lowe", "key": "diagnosis"}})),
            json!({"state": "already_forgotten"})
        );
    }

    /// An attribute another write set too stays, and the reply says so.
    #[test]
    fn an_attribute_also_set_elsewhere_is_kept_and_reported() {
        let (_dir, store, part) = fresh();
        let clinic =
            json!({"facts": {"entities": [{"name": "Gina Lowe", "attributes": {"diagnosis": "type 2 diabetes"}}]}});
        call(&store, &part, "remember", &clinic);
        intake(&store, &part);
        let reply = call(&store, &part, "forget", &json!({"source": "intake-form.pdf"}));
        assert_eq!(reply["forgotten"]["attributes"], 0, "{reply}");
        let kept: Vec<&Value> =
            reply["kept"].as_array().unwrap().iter().filter(|k| k["what"] == "attributes").collect();
        assert_eq!(kept.len(), 1, "{reply}");
        assert_eq!(kept[0]["count"], 1);
        assert_eq!(attributes(&store, &part), json!({"diagnosis": "type 2 diabetes"}));
    }

    /// The label travels with the writes through export and import, so the copy forgets the same.
    #[test]
    fn a_copy_forgets_the_attributes_of_a_source_too() {
        let (_dir, store, part) = fresh();
        intake(&store, &part);
        let copy = Partition::new("local", "u1", "copy").unwrap();
        for page in export_pages(&store, &part, 500) {
            let reply = call(&store, &copy, "import", &json!({"records": page}));
            assert_eq!(reply["skipped"], json!([]), "{reply}");
        }
        assert_eq!(attributes(&store, &copy), json!({"diagnosis": "type 2 diabetes"}));
        let reply = call(&store, &copy, "forget", &json!({"source": "intake-form.pdf"}));
        assert_eq!(reply["forgotten"]["attributes"], 1, "{reply}");
        assert_eq!(attributes(&store, &copy), json!({}));
    }

    fn joe(label: &str, date: &str) -> Value {
        json!({"source": label, "date": date,
               "facts": {"entities": [{"name": "Jonas Berg", "attributes": {"nickname": "Joe"}}]}})
    }

    fn nickname(store: &Store, part: &Partition) -> Value {
        call(store, part, "recall", &json!({"subject": "Jonas Berg"}))["subject"]["attributes"].clone()
    }

    fn kept_attributes(reply: &Value) -> Value {
        let kept = reply["kept"].as_array().unwrap_or_else(|| panic!("{reply}"));
        kept.iter().find(|k| k["what"] == "attributes").map_or(json!(0), |k| k["count"].clone())
    }

    /// Found by an audit (s30): `nickname: Joe` sent under `hr`, then under `press`, wrote nothing
    /// the second time (`already`); forgetting `hr` took it though `press` says it, and forgetting
    /// `press` was a 404. The second label is recorded; each forget keeps what the other still
    /// states and the last one takes it, in either order, in the store and in a copy of it.
    #[test]
    fn a_value_said_again_under_another_label_is_that_labels_too() {
        for (first, second) in [("hr", "press"), ("press", "hr")] {
            let (_dir, store, part) = fresh();
            assert_eq!(call(&store, &part, "remember", &joe("hr", "2023-05-05"))["already"], json!(false));
            assert_eq!(call(&store, &part, "remember", &joe("press", "2023-06-06"))["already"], json!(false));
            assert_eq!(call(&store, &part, "remember", &joe("press", "2023-07-07"))["already"], json!(true));
            let copy = Partition::new("local", "u1", "copy").unwrap();
            for page in export_pages(&store, &part, 500) {
                assert_eq!(call(&store, &copy, "import", &json!({"records": page}))["skipped"], json!([]));
            }
            for scope in [&part, &copy] {
                let kept = call(&store, scope, "forget", &json!({"source": first}));
                assert_eq!((&kept["forgotten"]["attributes"], kept_attributes(&kept)), (&json!(0), json!(1)), "{kept}");
                assert_eq!(nickname(&store, scope), json!({"nickname": "Joe"}), "{second} still says it");
                let gone = call(&store, scope, "forget", &json!({"source": second}));
                assert_eq!((&gone["forgotten"]["attributes"], kept_attributes(&gone)), (&json!(1), json!(0)), "{gone}");
                assert_eq!(nickname(&store, scope), json!({}));
                let again = call(&store, scope, "forget", &json!({"source": second}));
                assert_eq!(again, json!({"state": "already_forgotten"}));
            }
        }
    }

    /// Said again under the label it was said under, or with nothing new, a value records nothing;
    /// an entity named with an attribute of no known provenance (no write of its history set it)
    /// records nothing either.
    #[test]
    fn a_value_said_again_by_its_own_label_records_nothing() {
        let (_dir, store, part) = fresh();
        call(&store, &part, "remember", &joe("hr", "2023-05-05"));
        let events = || notes_verb(&store, &caller(&part, TODAY), "history", &json!({"subject": "Jonas Berg"}));
        let before = events()["events"].as_array().unwrap().len();
        assert_eq!(call(&store, &part, "remember", &joe("hr", "2024-01-01"))["already"], json!(true));
        let unlabelled = json!({"facts": {"entities": [{"name": "Jonas Berg", "attributes": {"nickname": "Joe"}}]}});
        assert_eq!(
            call(&store, &part, "remember", &unlabelled)["already"],
            json!(false),
            "no label is another provenance"
        );
        assert_eq!(call(&store, &part, "remember", &unlabelled)["already"], json!(true));
        let ops: Vec<Value> = events()["events"].as_array().unwrap().iter().map(|e| e["op"].clone()).collect();
        assert_eq!(ops.len(), before + 1, "{ops:?}");
        assert_eq!(ops.last(), Some(&json!("restate")));
    }
}
