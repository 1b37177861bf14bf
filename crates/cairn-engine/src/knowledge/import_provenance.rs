//! A fact record's `provenance` as import reads it: the fact's own (`{kind, doc_id?, label,
//! agent, forgotten?}`) and `also`, each other provenance that stated it with when it did
//! (`fact_sources.rs`). Everything is checked before anything is written (`read`); a document id
//! is then mapped to this store's, or held for the document's record to come (`source`).

use super::fact_sources::{Also, states};
use super::graph::{Relation, Source};
use super::ids::next_id;
use super::import::{DOCUMENT, Field, IMPORT_MAP, Src, id_field, mapped, opt_str, reserved_key, set_map, time_field};
use super::import_checks::{fact_times, label_ok};
use super::import_rules::{not_future, own_author};
use super::origin::Origin;
use super::part::Partition;
use super::records::encode;
use super::trees::{DOC, REL, rel_key};
use crate::error::Result;
use crate::write::WriteTxn;
use serde_json::{Map, Value};

/// One provenance as the record gives it, checked.
struct Given {
    label: Option<String>,
    /// A document's source id, and whether it was forgotten at the source.
    doc: Option<(u64, bool)>,
    agent: Option<String>,
}

/// The record's provenances, checked: its own, then each of `also` with its `recorded_at` and
/// `source_date`.
struct Provenance {
    own: Given,
    also: Vec<(Given, i64, Option<String>)>,
}

/// One provenance object `p`; `at` names it in a skip reason (`provenance.`).
fn given(p: &Map<String, Value>, at: &str) -> Field<Given> {
    let label = opt_str(p, "label").and_then(|l| label_ok("label", l.as_deref()).map(|()| l));
    let label = label.map_err(|e| format!("{at}{e}"))?;
    let agent = p.get("agent").and_then(Value::as_str).map(str::to_owned);
    let doc = match p.get("kind").and_then(Value::as_str) {
        Some("asserted") | None => None,
        Some("document") => {
            let id = id_field(p, "doc_id").map_err(|e| format!("{at}{e}"))?;
            let forgotten = match p.get("forgotten") {
                None | Some(Value::Null | Value::Bool(false)) => false,
                Some(Value::Bool(true)) => true,
                Some(_) => return Err(format!("{at}forgotten: must be true or false")),
            };
            Some((id, forgotten))
        }
        Some(other) => return Err(format!("{at}kind: {other:?} is not document or asserted")),
    };
    Ok(Given { label, doc, agent })
}

/// Record `r`'s provenances, checked as import checks a record: `also` entries each name a
/// `recorded_at` not later than `now`, a `source_date` read as a fact's, and (for an agent
/// token, `who`) the importing agent.
fn read(r: &Map<String, Value>, who: (&str, bool), now: i64) -> Field<Provenance> {
    let Some(p) = r.get("provenance").and_then(Value::as_object) else {
        return Ok(Provenance { own: Given { label: None, doc: None, agent: None }, also: Vec::new() });
    };
    let own = given(p, "provenance.")?;
    let mut also = Vec::new();
    match p.get("also") {
        None | Some(Value::Null) => {}
        Some(Value::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let at = format!("provenance.also[{i}].");
                let entry = item.as_object().ok_or_else(|| format!("provenance.also[{i}]: must be an object"))?;
                let said = given(entry, &at)?;
                let field = |e: String| format!("{at}{e}");
                let recorded_at = time_field(entry, "recorded_at").map_err(field)?;
                let recorded_at = recorded_at.ok_or_else(|| format!("{at}recorded_at: required"))?;
                not_future("recorded_at", Some(recorded_at), now).map_err(field)?;
                own_author("agent", said.agent.as_deref(), who).map_err(field)?;
                let source_date = opt_str(entry, "source_date").map_err(field)?;
                fact_times(None, None, source_date.as_deref(), &Map::new()).map_err(field)?;
                also.push((said, recorded_at, source_date));
            }
        }
        Some(_) => return Err("provenance.also: must be an array".into()),
    }
    Ok(Provenance { own, also })
}

/// `said` as stored here: a document id mapped, or held (reserved) for the document to come;
/// a document forgotten at the source gets an id no document will take, so its citation reads
/// `source_forgotten` there as here.
fn source(tx: &mut WriteTxn<'_>, part: &Partition, origin: Origin, said: Given) -> Result<(Source, Option<String>)> {
    let Some((id, forgotten)) = said.doc else {
        return Ok((Source::Asserted { label: said.label }, said.agent));
    };
    let source: Src = (origin, id);
    let local = if let Some(local) = mapped(tx, part, DOCUMENT, source)? {
        local
    } else {
        let reserved = next_id(tx, part)?;
        set_map(tx, part, DOCUMENT, source, reserved)?;
        if !forgotten {
            tx.put(IMPORT_MAP, &reserved_key(part, reserved), &[])?;
        }
        reserved
    };
    Ok((Source::Document { doc_id: local, label: said.label }, said.agent))
}

/// Record `r`'s provenances, checked (`read`: a skip reason) and then stored as this store
/// names them: the fact's own source and its writer (the provenance's agent, else the record's
/// `agent`, else the importer's), and its other provenances, each by its agent or the importer.
pub(super) fn of_record(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (origin, r): (Origin, &Map<String, Value>),
    (agent, all_agents): (&str, bool),
    now: i64,
) -> Result<Field<(Source, String, Vec<Also>)>> {
    let p = match read(r, (agent, all_agents), now) {
        Ok(p) => p,
        Err(e) => return Ok(Err(e)),
    };
    let (own, own_agent) = source(tx, part, origin, p.own)?;
    let writer = own_agent
        .or_else(|| r.get("agent").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| agent.to_owned());
    let mut also = Vec::new();
    for (said, recorded_at, source_date) in p.also {
        let (source, by) = source(tx, part, origin, said)?;
        also.push(Also { source, agent: by.unwrap_or_else(|| agent.to_owned()), recorded_at, source_date });
    }
    Ok(Ok((own, writer, also)))
}

/// Adds to `have`, a fact stored here that a record says too, the record's provenances (`said`)
/// it lacks; whether it wrote. A document not stored here yet is left out: its id is only held,
/// and its text may turn out to be one this store has (`repoint_citations`), which the fact may
/// cite already.
pub(super) fn merge(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    have: &Relation,
    said: impl Iterator<Item = Also>,
) -> Result<bool> {
    let mut rel = have.clone();
    for also in said {
        if let Source::Document { doc_id, .. } = also.source
            && tx.get(DOC, &part.key(&[&doc_id.to_be_bytes()]))?.is_none()
        {
            continue;
        }
        if !states(&rel, &also.source) {
            rel.also.push(also);
        }
    }
    if rel == *have {
        return Ok(false);
    }
    // Only its provenance changes: nothing to count.
    tx.put(REL, &rel_key(part, rel.id), &encode(&rel))?;
    super::source_index::refile(tx, part, Some(have), Some(&rel))?;
    Ok(true)
}
