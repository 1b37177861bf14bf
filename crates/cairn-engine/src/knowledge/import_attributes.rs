//! An exported entity's dated attribute writes (`attribute_writes`), replayed by an import: each
//! becomes an `entity` event of op `import` whose input holds what the write set and its `date`,
//! as `remember` leaves one, so `attribute_time.rs` answers reads of the copy at any valid time as
//! at the source. Without them a copy knows only each key's last write, and a value dated later
//! than now would read as true now. A fact record's writes are checked here too and kept on the
//! fact itself, as its source kept them (`fact_attribute_time.rs`).

use super::api::Caller;
use super::fact_attribute_time::AttributeWrite;
use super::valid;
use crate::error::Result;
use crate::history::{Change, record};
use crate::time::{iso_ms, parse_iso_ms};
use crate::write::WriteTxn;
use serde_json::{Map, Value, json};

/// Most writes one record may carry. Nothing caps how often a fact or an entity is revised, so
/// this is far past what real records hold, and a record's size is bounded by its page anyway
/// (found by a review: at 1,000 a fact revised 1,100 times was exported and then skipped on
/// import, and its 1,099 earlier versions with it).
pub(super) const MAX_WRITES: usize = 100_000;

/// One write: the attributes it set, when that became true (a date or a date-time) and, from an
/// export that says so, when its source store learnt it (ms) and the `source` label it came under.
pub(crate) type Write = (Map<String, Value>, String, Option<i64>, Option<String>);

/// The record's `attribute_writes`, checked: an array of `{attributes, from, recorded_at?,
/// source?}`.
pub(super) fn field(r: &Map<String, Value>, now: i64) -> std::result::Result<Vec<Write>, String> {
    let mut writes = Vec::new();
    for (i, item) in items(r)?.iter().enumerate() {
        let at = |what: &str| format!("attribute_writes[{i}].{what}");
        let (attributes, from, recorded) = common(item, &at, now)?;
        let Some(from) = from else {
            return Err(format!("{}: must be an ISO 8601 date or date-time", at("from")));
        };
        let source = match item.get("source") {
            None | Some(Value::Null) => None,
            Some(Value::String(l)) if !l.is_empty() => {
                super::import_checks::label_ok(&at("source"), Some(l))?;
                Some(l.clone())
            }
            Some(_) => return Err(format!("{}: must be a non-empty string", at("source"))),
        };
        only_known(item, &["attributes", "from", "recorded_at", "source"], &at)?;
        writes.push((attributes, from, recorded, source));
    }
    Ok(writes)
}

/// A fact record's `attribute_writes`, checked: an array of `{attributes, from, recorded_at}`,
/// `from` null for attributes set from the start of a fact that has none
/// (`fact_attribute_time.rs`), stored on the fact as they come.
pub(super) fn fact_field(r: &Map<String, Value>, now: i64) -> std::result::Result<Vec<AttributeWrite>, String> {
    let mut writes = Vec::new();
    for (i, item) in items(r)?.iter().enumerate() {
        let at = |what: &str| format!("attribute_writes[{i}].{what}");
        let (set, from, recorded) = common(item, &at, now)?;
        let Some(recorded) = recorded else { return Err(format!("{}: required", at("recorded_at"))) };
        only_known(item, &["attributes", "from", "recorded_at"], &at)?;
        writes.push(AttributeWrite { set, from, recorded });
    }
    Ok(writes)
}

/// The record's `attribute_writes` array (none: empty).
fn items(r: &Map<String, Value>) -> std::result::Result<&[Value], String> {
    match r.get("attribute_writes") {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(items)) if items.len() <= MAX_WRITES => Ok(items),
        Some(_) => Err(format!("attribute_writes: must be an array of at most {MAX_WRITES} writes")),
    }
}

/// What every write holds: the attributes it set, its `from` and its `recorded_at` (ms).
type Common = (Map<String, Value>, Option<String>, Option<i64>);

/// A write's `attributes`, `from` (`None` when null or missing) and `recorded_at`, checked; `at`
/// names a field of it.
fn common(item: &Value, at: &dyn Fn(&str) -> String, now: i64) -> std::result::Result<Common, String> {
    let Some(attributes) = item.get("attributes").and_then(Value::as_object) else {
        return Err(format!("{}: must be an object", at("attributes")));
    };
    crate::json_depth::check_map(&at("attributes"), attributes)?;
    let from = match item.get("from") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_str().filter(|f| valid::instant(f).is_some()) {
            Some(f) => Some(f.to_owned()),
            None => return Err(format!("{}: must be an ISO 8601 date or date-time", at("from"))),
        },
    };
    let recorded = match item.get("recorded_at") {
        None | Some(Value::Null) => None,
        Some(v) => match v.as_str().and_then(parse_iso_ms).filter(|&t| t <= now) {
            Some(t) => Some(t),
            None => return Err(format!("{}: must be an ISO 8601 UTC time, not to come", at("recorded_at"))),
        },
    };
    Ok((attributes.clone(), from, recorded))
}

/// Refuses a field of a write other than `known`.
fn only_known(item: &Value, known: &[&str], at: &dyn Fn(&str) -> String) -> std::result::Result<(), String> {
    match item.as_object().and_then(|o| o.keys().find(|k| !known.contains(&k.as_str()))) {
        Some(extra) => Err(format!("{}: unknown field", at(extra))),
        None => Ok(()),
    }
}

/// Records the writes of entity `id` named `name`, in order.
pub(super) fn record_writes(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    name: &str,
    id: u64,
    writes: &[Write],
) -> Result<()> {
    for (attributes, from, recorded, source) in writes {
        // A dated write a read at its time answers with, though the record may hold a later one.
        super::attr_index::add(tx, &caller.part, id, attributes)?;
        let change = Change {
            family: "entity",
            target: name,
            op: "import",
            before: None,
            after: Some(json!({ "id": id.to_string() })),
            patch: Some({
                let mut patch = json!({ "attributes": attributes, "date": from });
                if let Some(t) = recorded {
                    patch["recorded_at"] = json!(iso_ms(*t));
                }
                if let Some(label) = source {
                    patch["source"] = json!(label);
                }
                patch
            }),
        };
        record(tx, caller, change)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use crate::knowledge::Partition;
    use crate::knowledge::testing::{TODAY, fresh};
    use crate::knowledge::testing_api::{caller, export_pages, verb};
    use serde_json::{Value, json};

    /// Found by an audit: Vera's city was Milan from 2023 and will be Turin from 2030; a copy
    /// made by export and import read Turin as true now, and knew no city at any earlier time.
    #[test]
    fn a_copy_reads_dated_attributes_as_the_source_does() {
        let (_dir, store, _) = fresh();
        let (a, b) = (Partition::new("local", "u1", "a").unwrap(), Partition::new("local", "u1", "b").unwrap());
        for (city, date) in [("Milan", "2023-01-01"), ("Turin", "2030-01-01")] {
            let facts = json!({"entities": [{"name": "Vera Lynx", "type": "person", "attributes": {"city": city}}]});
            verb(&store, &caller(&a, 1_000), "remember", &json!({"date": date, "facts": facts})).unwrap();
        }
        let records: Vec<Value> = export_pages(&store, &a, 500).concat();
        let entity = records.iter().find(|r| r["kind"] == "entity").unwrap();
        assert_eq!(entity["attribute_writes"].as_array().map(Vec::len), Some(2), "{entity}");
        let imported = verb(&store, &caller(&b, 2_000), "import", &json!({"records": records})).unwrap();
        assert!(imported["skipped"].as_array().unwrap().is_empty(), "{imported}");
        let city = |part: &Partition, when: Value| {
            let mut body = json!({"subject": "Vera Lynx"});
            if let Value::Object(extra) = when {
                body.as_object_mut().unwrap().extend(extra);
            }
            let r = verb(&store, &caller(part, TODAY), "recall", &body).unwrap();
            r["subject"]["attributes"]["city"].clone()
        };
        for when in [json!({}), json!({"valid_at": "2031-06-01"}), json!({"valid_at": "2021-06-01"})] {
            assert_eq!(city(&b, when.clone()), city(&a, when.clone()), "{when}");
        }
        assert_eq!(city(&b, json!({})), "Milan");
        // Exported again, the copy carries the same writes.
        let again: Vec<Value> = export_pages(&store, &b, 500).concat();
        let copy = again.iter().find(|r| r["kind"] == "entity").unwrap();
        assert_eq!(copy["attribute_writes"], entity["attribute_writes"]);
    }

    #[test]
    fn bad_writes_skip_the_record_naming_the_field() {
        let (_dir, store, _) = fresh();
        let b = Partition::new("local", "u1", "b").unwrap();
        for (writes, field) in [
            (json!([{"attributes": {"k": 1}, "from": "yesterday"}]), "attribute_writes[0].from"),
            (json!([{"attributes": 5, "from": "2024-01-01"}]), "attribute_writes[0].attributes"),
            (json!([{"attributes": {}, "from": "2024-01-01", "x": 1}]), "attribute_writes[0].x"),
            (json!({"a": 1}), "attribute_writes"),
        ] {
            let record = json!({"kind": "entity", "id": "1", "name": "Ada", "types": [], "attributes": {"k": 1},
                                "recorded_at": "2024-01-01T00:00:00.000Z", "attribute_writes": writes});
            let r = verb(&store, &caller(&b, TODAY), "import", &json!({"records": [record]})).unwrap();
            let why = r["skipped"][0]["reason"].as_str().unwrap_or_else(|| panic!("{r}"));
            assert!(why.starts_with(field), "{field}: {r}");
        }
    }
}
