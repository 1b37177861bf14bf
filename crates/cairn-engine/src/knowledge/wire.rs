//! Reply shapes shared by the knowledge verbs (DESIGN.md "Reply shapes"): ids as decimal strings,
//! times as ISO 8601 UTC with milliseconds, entities and facts in one spelling everywhere.

use super::derive::{Derived, Rule};
use super::graph::{Direction, Entity, Relation};
use super::shown_attributes::shown;
use crate::error::{Error, Result};
use serde_json::{Map, Value, json};

/// Times in replies: ISO 8601 UTC with milliseconds (one helper for every verb).
pub use crate::time::iso_ms;

/// Checks that `value` (the request field `field`) reads as an ISO 8601 date or date-time with a
/// zone (`knowledge::valid::instant`: valid times are compared as instants).
pub fn check_date(field: &str, value: &str) -> Result<()> {
    super::valid::parse(field, value).map(|_| ())
}

/// An id at the boundary: a decimal string.
#[must_use]
pub fn id(id: u64) -> Value {
    Value::String(id.to_string())
}

/// Parses a decimal-string id from the request field `field`.
pub fn parse_id(field: &str, value: &str) -> Result<u64> {
    value
        .parse::<u64>()
        .ok()
        .filter(|&v| v > 0 && value.bytes().all(|c| c.is_ascii_digit()))
        .ok_or_else(|| Error::InvalidArgument(format!("{field} must be an id (a decimal string), got {value:?}")))
}

/// `{id, name, types, attributes, attributes_omitted?}`: attributes within their bound
/// (`shown_attributes.rs`).
#[must_use]
pub fn entity(e: &Entity) -> Value {
    let (attributes, omitted) = shown(&e.attributes);
    let mut out = json!({ "id": id(e.id), "name": e.name, "types": e.types, "attributes": attributes });
    if let Some(o) = omitted {
        out["attributes_omitted"] = o;
    }
    out
}

/// How a stored fact was reached.
#[derive(Debug, Clone)]
pub struct FoundBy<'a> {
    /// The name of the seed entity the walk started from.
    pub seed: &'a str,
    pub hops: usize,
    pub reasoning: Option<String>,
}

fn found_by(f: &FoundBy<'_>) -> Value {
    let mut out = json!({ "seed": f.seed, "hops": f.hops });
    if let Some(r) = &f.reasoning {
        out["reasoning"] = Value::String(r.clone());
    }
    out
}

/// The fact shape of a stored relation. `subject`/`object` are the names of its `from`/`to` ends
/// (the stored direction); `direction` says which end the recalled entity is. Its attributes are
/// shown within their bound (`shown_attributes.rs`), `attributes_omitted` saying what was left.
#[must_use]
pub fn fact(
    rel: &Relation,
    names: (&str, &str),
    direction: Direction,
    source_date: Option<&str>,
    citation: &Value,
    by: &FoundBy<'_>,
) -> Value {
    let (attributes, omitted) = shown(&without_valid_time(&rel.attributes));
    let mut out = json!({
        "id": id(rel.id),
        "subject": names.0,
        "subject_id": id(rel.from),
        "relation": rel.rel_type,
        "object": names.1,
        "object_id": id(rel.to),
        "direction": match direction { Direction::Outbound => "outbound", Direction::Inbound => "inbound" },
        "attributes": attributes,
        "valid_from": rel.valid_from,
        "valid_to": rel.valid_to,
        "recorded_at": iso_ms(rel.recorded_at),
        "source_date": source_date.or(rel.source_date.as_deref()).or(rel.valid_from.as_deref()),
        "agent": rel.agent,
        "citation": citation,
        "found_by": found_by(by),
    });
    if let Some(end) = rel.ended_at {
        out["ended_at"] = Value::String(iso_ms(end));
    }
    if let Some(o) = omitted {
        out["attributes_omitted"] = o;
    }
    out
}

/// The fact shape of a derived fact: no stored id (`id: null`), `derived: true`, its `rule` and
/// the stored facts it `rests_on`; its citation and `source_date` are those of the first stored
/// fact it rests on, its valid and transaction times where all of them hold (`derive::Span`).
#[must_use]
pub fn derived_fact(d: &Derived, names: (&str, &str), base: &Relation, citation: &Value, by: &FoundBy<'_>) -> Value {
    let mut out = json!({
        "id": Value::Null,
        "subject": names.0,
        "subject_id": id(d.from),
        "relation": d.rel_type,
        "object": names.1,
        "object_id": id(d.to),
        "direction": "derived",
        "derived": true,
        "rule": rule(d.rule),
        "rests_on": d.basis.iter().map(|&b| id(b)).collect::<Vec<_>>(),
        "attributes": {},
        "valid_from": d.span.valid_from,
        "valid_to": d.span.valid_to,
        "recorded_at": iso_ms(d.span.recorded_at),
        "source_date": base.source_date.as_ref().or(base.valid_from.as_ref()),
        "citation": citation,
        "found_by": found_by(by),
    });
    if let Some(end) = d.span.ended_at {
        out["ended_at"] = Value::String(iso_ms(end));
    }
    out
}

/// A rule's name on the wire.
#[must_use]
pub fn rule(r: Rule) -> &'static str {
    match r {
        Rule::Symmetric => "symmetric",
        Rule::Inverse => "inverse",
        Rule::Transitive => "transitive",
    }
}

/// Attributes without the valid-time keys, which the fact carries as its own fields.
fn without_valid_time(attrs: &Map<String, Value>) -> Map<String, Value> {
    attrs.iter().filter(|(k, _)| *k != "valid_from" && *k != "valid_to").map(|(k, v)| (k.clone(), v.clone())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_and_ids_are_checked_by_field() {
        for ok in ["2024-05-01", "2024-05-01T10:00:00Z", "2024-12-31 08:00Z", "2024-12-31T08:00:00.5+01:00"] {
            check_date("date", ok).unwrap();
        }
        for bad in ["yesterday", "2024-13-01", "2024-5-1", "20240501", "2024-05-01X", "2024-12-31 08:00", "2024-02-30"]
        {
            let err = check_date("valid_at", bad).unwrap_err();
            assert!(err.to_string().contains("valid_at"), "{err}");
        }
        assert_eq!(parse_id("fact", "42").unwrap(), 42);
        for bad in ["", "0", "-1", "+4", "4x", "99999999999999999999"] {
            assert!(parse_id("fact", bad).unwrap_err().to_string().contains("fact"));
        }
    }
}
