//! What `import` (and `load`, which leaves what it does not take to `import`) checks in a record
//! beyond its shape, so a record is refused as the write verbs refuse the same input: the fields a
//! record of each kind may hold (docs/api.md: unknown fields are refused at every level), names
//! and relation types of at most `MAX_NAME_LEN` bytes, and a fact's valid time read as `relate`
//! reads it (`valid::instant`: real days, a zone on a date-time; `valid_to` not before
//! `valid_from`). Each failure is a skip reason starting with the field, as the others are.

use super::graph::{MAX_NAME_LEN, has_control};
use super::valid::instant;
use serde_json::{Map, Value};

/// A record field problem, as a skip reason naming the field.
pub(crate) type Field<T> = std::result::Result<T, String>;

/// The fields each kind of record may hold: every field an export writes, and those an older
/// export wrote (records before `origin`, a header before `withheld`, a note before `versions`
/// lack some; a fact may name its writer as `agent` beside `provenance`). Free-form values
/// (`attributes`, a note's `value`, handoff list items) are not looked into.
const HEADER: &[&str] = &["kind", "format", "version", "scope", "origin", "exported_at", "kinds", "withheld"];
const WITHHELD: &[&str] = &["private_notes", "private_versions"];
const ENTITY: &[&str] =
    &["kind", "id", "name", "types", "attributes", "recorded_at", "origin", "attribute_writes", "continued", "follows"];
const FACT: &[&str] = &[
    "kind",
    "id",
    "from",
    "to",
    "from_name",
    "to_name",
    "type",
    "attributes",
    "valid_from",
    "valid_to",
    "valid_to_before_end",
    "recorded_at",
    "ended_at",
    "source_date",
    "version_of",
    "provenance",
    "agent",
    "origin",
    "attribute_writes",
    "attribute_writes_from_fact",
    "continued",
    "follows",
];
const PROVENANCE: &[&str] = &["kind", "doc_id", "label", "agent", "forgotten", "also"];
/// An entry of `provenance.also`: another provenance of the fact, with when it stated it.
const ALSO: &[&str] = &["kind", "doc_id", "label", "agent", "forgotten", "recorded_at", "source_date"];
const DOCUMENT: &[&str] = &["kind", "id", "text", "label", "date", "ingested_at", "passages", "origin"];
const PASSAGE: &[&str] = &["ordinal", "start", "end"];
const NOTE: &[&str] = &[
    "kind",
    "id",
    "key",
    "visibility",
    "taskId",
    "owner",
    "value",
    "noteKind",
    "private",
    "version",
    "confidence",
    "confidenceBasis",
    "agent",
    "createdAt",
    "updatedAt",
    "versions",
    "continued",
    "follows",
    "origin",
];
const HANDOFF: &[&str] = &[
    "kind",
    "id",
    "taskId",
    "summary",
    "status",
    "decisions",
    "nextSteps",
    "artifacts",
    "blockers",
    "from",
    "to",
    "createdAt",
    "expiresAt",
    "origin",
];

/// The first key of `r` not in `known`, as a skip reason naming it under `at` (`provenance.`).
fn only(r: &Map<String, Value>, known: &[&str], at: &str, what: &str) -> Field<()> {
    match r.keys().find(|k| !known.contains(&k.as_str())) {
        None => Ok(()),
        Some(key) => {
            let shown: String = key.chars().take(64).collect();
            let cut = if shown.len() < key.len() { "…" } else { "" };
            Err(format!("{at}{shown}{cut}: not a field of {what}"))
        }
    }
}

/// Each object of the array `field` holds only `known` fields.
fn only_in_list(r: &Map<String, Value>, (at, field): (&str, &str), known: &[&str], what: &str) -> Field<()> {
    if let Some(Value::Array(items)) = r.get(field) {
        for (i, item) in items.iter().enumerate() {
            if let Value::Object(m) = item {
                only(m, known, &format!("{at}{field}[{i}]."), what)?;
            }
        }
    }
    Ok(())
}

/// Whether record `r` of `kind` (one of the export's kinds) holds only the fields that kind may
/// hold, nested objects included (`provenance`, `withheld`, `passages[i]`, `versions[i]`).
pub(crate) fn known_fields(kind: &str, r: &Map<String, Value>) -> Field<()> {
    match kind {
        "header" => {
            only(r, HEADER, "", "an export header")?;
            if let Some(Value::Object(w)) = r.get("withheld") {
                only(w, WITHHELD, "withheld.", "withheld")?;
            }
            Ok(())
        }
        "entity" => only(r, ENTITY, "", "an entity record"),
        "fact" => {
            only(r, FACT, "", "a fact record")?;
            match r.get("provenance") {
                None | Some(Value::Null) => Ok(()),
                Some(Value::Object(p)) => {
                    only(p, PROVENANCE, "provenance.", "a provenance")?;
                    only_in_list(p, ("provenance.", "also"), ALSO, "another provenance")
                }
                Some(_) => Err("provenance: must be an object".into()),
            }
        }
        "document" => {
            only(r, DOCUMENT, "", "a document record")?;
            only_in_list(r, ("", "passages"), PASSAGE, "a passage")
        }
        "note" => {
            only(r, NOTE, "", "a note record")?;
            only_in_list(r, ("", "versions"), &crate::notes::import::VERSION_FIELDS, "a note version")
        }
        "handoff" => only(r, HANDOFF, "", "a handoff record"),
        _ => Ok(()),
    }
}

/// A name or type as the write verbs take it: 1..=`MAX_NAME_LEN` bytes once trimmed, no control
/// character.
pub(crate) fn name_ok(field: &str, name: &str) -> Field<()> {
    let len = name.trim().len();
    if len == 0 || len > MAX_NAME_LEN {
        return Err(format!("{field}: must be 1..={MAX_NAME_LEN} bytes, got {len}"));
    }
    if has_control(name) {
        return Err(format!("{field}: must not contain control characters"));
    }
    Ok(())
}

/// A label (a document's, or a fact's provenance): at most `MAX_NAME_LEN` bytes, as `source` is.
pub(crate) fn label_ok(field: &str, label: Option<&str>) -> Field<()> {
    match label {
        Some(l) if l.len() > MAX_NAME_LEN => Err(format!("{field}: must be at most {MAX_NAME_LEN} bytes")),
        _ => Ok(()),
    }
}

/// `text` (the record's `field`) as an instant, as `relate` reads its dates.
fn date(field: &str, text: &str) -> Field<i64> {
    instant(text).filter(|_| text.len() <= 64).ok_or_else(|| {
        let shown: String = text.chars().take(64).collect();
        format!("{field}: must be an ISO 8601 date (2024-05-01) or date-time with zone (…T09:30:00Z), got {shown:?}")
    })
}

/// A document's `date`, as `remember` reads its `date`: a real day or a date-time with a zone.
pub(crate) fn document_date(date: Option<&str>) -> Field<()> {
    date.map_or(Ok(()), |d| self::date("date", d).map(|_| ()))
}

/// `valid_from`, `valid_to` (the record's, then the same keys of its `attributes`, which an export
/// carries too) and `source_date`, as `relate` checks `attributes` and `date`: dates that are real
/// days (or date-times with a zone), each interval not ending before it starts.
pub(crate) fn fact_times(
    valid_from: Option<&str>,
    valid_to: Option<&str>,
    source_date: Option<&str>,
    attributes: &Map<String, Value>,
) -> Field<()> {
    let interval = |at: &str, from: Option<&str>, to: Option<&str>| -> Field<()> {
        let from = from.map(|s| date(&format!("{at}valid_from"), s)).transpose()?;
        let to = to.map(|s| date(&format!("{at}valid_to"), s)).transpose()?;
        if let (Some(from), Some(to)) = (from, to)
            && to < from
        {
            return Err(format!("{at}valid_to: must not be earlier than valid_from"));
        }
        Ok(())
    };
    interval("", valid_from, valid_to)?;
    let attr = |key: &str| -> Field<Option<&str>> {
        match attributes.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.as_str())),
            Some(_) => Err(format!("attributes.{key}: must be an ISO 8601 string")),
        }
    };
    interval("attributes.", attr("valid_from")?, attr("valid_to")?)?;
    if let Some(d) = source_date {
        date("source_date", d)?;
    }
    Ok(())
}

/// A split record's `continued` (a note's versions, an entity's or a fact's writes: more records
/// follow).
pub(crate) fn continued(r: &Map<String, Value>) -> Field<bool> {
    match r.get("continued") {
        None | Some(Value::Null | Value::Bool(false)) => Ok(false),
        Some(Value::Bool(true)) => Ok(true),
        Some(_) => Err("continued: must be true or false".into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn map(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            other => panic!("not an object: {other}"),
        }
    }

    #[test]
    fn every_kind_refuses_a_field_it_does_not_hold_and_names_it() {
        for (kind, r, field) in [
            ("header", json!({"kind": "header", "evil": 1}), "evil"),
            ("header", json!({"kind": "header", "withheld": {"private_notes": 0, "x": 1}}), "withheld.x"),
            ("entity", json!({"kind": "entity", "name": "A", "evil": 1}), "evil"),
            ("entity", json!({"kind": "entity", "name": "A", "valid_from": null}), "valid_from"),
            ("fact", json!({"kind": "fact", "name": "A"}), "name"),
            ("fact", json!({"kind": "fact", "provenance": {"kind": "asserted", "evil": 1}}), "provenance.evil"),
            ("fact", json!({"kind": "fact", "provenance": "chat"}), "provenance"),
            (
                "document",
                json!({"kind": "document", "passages": [{"start": 0, "end": 1, "evil": 1}]}),
                "passages[0].evil",
            ),
            ("note", json!({"kind": "note", "versions": [{"version": 1, "evil": 1}]}), "versions[0].evil"),
            ("note", json!({"kind": "note", "supersedes": 1}), "supersedes"),
            ("handoff", json!({"kind": "handoff", "evil": 1}), "evil"),
        ] {
            let reason = known_fields(kind, &map(r.clone())).unwrap_err();
            assert!(reason.starts_with(&format!("{field}: ")), "{r}: {reason}");
        }
        let long = "k".repeat(500);
        let reason = known_fields("entity", &map(json!({ long.clone(): 1 }))).unwrap_err();
        assert!(reason.len() < 200, "a long key is cut in the reason: {reason}");
    }

    #[test]
    fn valid_times_are_checked_as_relate_checks_them() {
        let none = Map::new();
        let bad = |from: Option<&str>, to: Option<&str>| fact_times(from, to, None, &none).unwrap_err();
        assert!(bad(Some("not a date"), None).starts_with("valid_from: "));
        assert!(bad(None, Some("yesterday")).starts_with("valid_to: "));
        assert!(bad(Some("2024-02-30"), None).starts_with("valid_from: "), "no such day");
        assert!(bad(Some("2024-01-01T10:00:00"), None).starts_with("valid_from: "), "a time needs a zone");
        assert!(bad(Some("2024-05-01"), Some("2024-01-01")).starts_with("valid_to: must not be earlier"));
        assert!(fact_times(Some("2024-01-01"), Some("2024-01-01"), Some("2023-12-31"), &none).is_ok());
        assert!(fact_times(Some("2024-01-01T11:00:00+05:00"), Some("2024-01-01T06:00:00Z"), None, &none).is_ok());
        assert!(fact_times(None, None, Some("soon"), &none).unwrap_err().starts_with("source_date: "));
        let attrs = map(json!({"valid_from": "2024-02-30"}));
        assert!(fact_times(None, None, None, &attrs).unwrap_err().starts_with("attributes.valid_from: "));
        let attrs = map(json!({"valid_from": "2024-05-01", "valid_to": "2024-01-01"}));
        assert!(fact_times(None, None, None, &attrs).unwrap_err().starts_with("attributes.valid_to: "));
        let attrs = map(json!({"valid_to": 5}));
        assert!(fact_times(None, None, None, &attrs).unwrap_err().starts_with("attributes.valid_to: "));
    }

    #[test]
    fn a_document_date_is_checked_as_remember_checks_it() {
        assert!(document_date(None).is_ok());
        assert!(document_date(Some("2024-05-01")).is_ok());
        assert!(document_date(Some("2024-05-01T09:30:00Z")).is_ok());
        for bad in ["2024-02-30", "last week", "2024-05-01T09:30:00"] {
            assert!(document_date(Some(bad)).unwrap_err().starts_with("date: "), "{bad}");
        }
    }
}
