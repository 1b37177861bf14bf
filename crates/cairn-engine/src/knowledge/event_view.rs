//! Stored knowledge records as history events show them (DESIGN.md §2): an event keeps the record
//! as it was written (ids as numbers, times in milliseconds), and replies show it in the product's
//! spelling, ids as decimal strings and times in ISO 8601, like every other reply.

use super::event_writes;
use super::fact_attribute_time;
use super::graph::{Entity, Relation, Source};
use super::shown_attributes::shown;
use super::wire::{id, iso_ms};
use serde::Deserialize;
use serde_json::{Map, Value, json};

/// `value` as a reply shows it, for an event of `family`: entity and fact records respelled, any
/// other payload (or one that does not read as its family's record) unchanged.
#[must_use]
pub fn payload(family: &str, value: &Value) -> Value {
    let respelled = match family {
        "entity" => Entity::deserialize(value).ok().map(|e| entity(&e)),
        "fact" => Relation::deserialize(value).ok().map(|r| relation(&r, event_writes::omitted(value))),
        _ => None,
    };
    respelled.unwrap_or_else(|| value.clone())
}

/// `out` with `attributes` within their bound (`shown_attributes.rs`): an event's `before` and
/// `after` are the whole record, which gathers attributes over every write (found by an audit: the
/// 20th of 20 writes of a 60 KB value showed 1.2 MB twice, a 2.4 MB page); its `patch`, what the
/// write said, is shown whole.
fn with_attributes(mut out: Value, attributes: &Map<String, Value>) -> Value {
    let (kept, omitted) = shown(attributes);
    out["attributes"] = Value::Object(kept);
    if let Some(o) = omitted {
        out["attributes_omitted"] = o;
    }
    out
}

fn entity(e: &Entity) -> Value {
    let out = json!({
        "id": id(e.id),
        "name": e.name,
        "types": e.types,
        "recorded_at": iso_ms(e.recorded_at),
    });
    with_attributes(out, &e.attributes)
}

/// `r` as an event shows it, its record having left out `stored` older writes (`event_writes.rs`).
fn relation(r: &Relation, stored: usize) -> Value {
    let source = match &r.source {
        Source::Asserted { label } => json!({ "kind": "asserted", "label": label }),
        Source::Document { doc_id, label } => json!({ "kind": "document", "doc_id": id(*doc_id), "label": label }),
    };
    let mut out = json!({
        "id": id(r.id),
        "from": id(r.from),
        "to": id(r.to),
        "type": r.rel_type,
        "valid_from": r.valid_from,
        "valid_to": r.valid_to,
        "recorded_at": iso_ms(r.recorded_at),
        "ended_at": r.ended_at.map(iso_ms),
        "source": source,
        "agent": r.agent,
    });
    if !r.attribute_writes.is_empty() {
        // `attributes` is each key's last write; which value is true when is the writes' starts.
        // The newest writes within `SHOWN_ATTRIBUTE_BYTES`, at least one; older ones counted.
        let from = event_writes::left_out(&r.attribute_writes);
        out["attribute_writes"] = fact_attribute_time::on_the_wire(&r.attribute_writes[from..]);
        if from + stored > 0 {
            out[event_writes::OMITTED] = json!(from + stored);
        }
    }
    with_attributes(out, &r.attributes)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::shown_attributes::SHOWN_ATTRIBUTE_BYTES;

    #[test]
    fn entity_and_fact_events_show_ids_as_strings_and_times_in_iso() {
        let e = Entity {
            id: 89,
            name: "Helios Corp".into(),
            types: vec!["company".into()],
            attributes: Map::new(),
            recorded_at: 0,
        };
        let shown = payload("entity", &serde_json::to_value(&e).unwrap());
        assert_eq!(shown["id"], json!("89"));
        assert_eq!(shown["recorded_at"], json!("1970-01-01T00:00:00.000Z"));
        let r = Relation {
            shortened: None,
            version_of: None,
            id: 97,
            from: 91,
            to: 89,
            rel_type: "works_at".into(),
            attributes: Map::new(),
            valid_from: Some("2024-01-01".into()),
            valid_to: None,
            recorded_at: 1_000,
            ended_at: Some(2_000),
            source: Source::Document { doc_id: 95, label: None },
            source_date: None,
            agent: "alice".into(),
            attribute_writes: Vec::new(),
            writes_in: None,
            writes: None,
            also: Vec::new(),
        };
        let shown = payload("fact", &serde_json::to_value(&r).unwrap());
        assert_eq!(
            (&shown["id"], &shown["from"], &shown["to"], &shown["source"]["doc_id"]),
            (&json!("97"), &json!("91"), &json!("89"), &json!("95"))
        );
        assert_eq!(shown["ended_at"], json!("1970-01-01T00:00:02.000Z"));
        assert_eq!(shown["valid_from"], json!("2024-01-01"));
        let numbers = |v: &Value| v.as_object().unwrap().values().filter(|x| x.is_number()).count();
        assert_eq!(numbers(&shown), 0, "no JSON number left: {shown}");
    }

    #[test]
    fn an_entity_of_many_large_attributes_is_shown_within_the_bound() {
        let attributes: Map<String, Value> = (0..20).map(|i| (format!("big{i}"), json!("z".repeat(60_000)))).collect();
        let e = Entity { id: 1, name: "Big".into(), types: vec![], attributes, recorded_at: 0 };
        let shown = payload("entity", &serde_json::to_value(&e).unwrap());
        assert!(serde_json::to_vec(&shown).unwrap().len() < SHOWN_ATTRIBUTE_BYTES + 1024, "{shown}");
        assert_eq!(shown["attributes"], json!({}));
        assert_eq!(shown["attributes_omitted"]["count"], json!(20));
    }

    #[test]
    fn other_payloads_are_shown_as_written() {
        let doc = json!({ "doc_id": "5", "source": "notes", "passages": 2 });
        assert_eq!(payload("document", &doc), doc);
        let odd = json!({ "id": 1 });
        assert_eq!(payload("fact", &odd), odd, "a payload that is not a relation record stays as it is");
    }
}
