//! `memory_relate`: one typed edge `from` → `to`, missing entities created. `replaces: true` ends
//! the subject's other live edges of that type (kept for `as_of`/`valid_at` reads), and asserting
//! an ended edge again restores it. An assertion dated before a live edge it would replace is
//! older news: it is kept in history, valid until the newer edge starts, and ends nothing.

use super::{Caller, parse};
use crate::error::{Error, Result};
use crate::history::{Change, record};
use crate::knowledge::citation::Citer;
use crate::knowledge::graph::{self, Assertion, Direction, Relation, Source, entity_by_id, relation_by_id};
use crate::knowledge::limits::MAX_NAME_LEN;
use crate::knowledge::relate;
use crate::knowledge::wire::{self, FoundBy, check_date};
use crate::store::Store;
use crate::text::fold;
use crate::write::WriteTxn;
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Debug, Deserialize)]
struct Request {
    from: String,
    to: String,
    #[serde(rename = "type")]
    rel_type: String,
    attributes: Option<Map<String, Value>>,
    #[serde(default)]
    replaces: bool,
    date: Option<String>,
    source: Option<String>,
}

fn check(req: &Request) -> Result<()> {
    for (field, value) in [("from", &req.from), ("to", &req.to), ("type", &req.rel_type)] {
        let len = value.trim().len();
        if len == 0 || len > MAX_NAME_LEN {
            return Err(Error::InvalidArgument(format!("{field} must be 1..={MAX_NAME_LEN} bytes, got {len}")));
        }
    }
    if fold(&req.from) == fold(&req.to) {
        return Err(Error::InvalidArgument("from and to name the same entity".into()));
    }
    if let Some(s) = &req.source
        && (s.trim().is_empty() || s.len() > MAX_NAME_LEN)
    {
        return Err(Error::InvalidArgument(format!("source must be 1..={MAX_NAME_LEN} bytes")));
    }
    if let Some(d) = &req.date {
        check_date("date", d)?;
    }
    for key in ["valid_from", "valid_to"] {
        match req.attributes.as_ref().and_then(|a| a.get(key)) {
            None | Some(Value::Null) => {}
            Some(Value::String(s)) => check_date(&format!("attributes.{key}"), s)?,
            Some(_) => return Err(Error::InvalidArgument(format!("attributes.{key} must be an ISO 8601 string"))),
        }
    }
    Ok(())
}

/// What the write did.
struct Done {
    relation: Relation,
    created: bool,
    ended: Vec<u64>,
    restored: Vec<u64>,
    /// Live edges newer than this assertion: it ends when the first of them starts.
    newer: Vec<u64>,
}

fn write(tx: &mut WriteTxn<'_>, caller: &Caller, req: &Request) -> Result<Done> {
    let part = &caller.part;
    part.register(tx)?;
    let mut attrs = req.attributes.clone().unwrap_or_default();
    attrs.retain(|_, v| !v.is_null());
    if let Some(d) = &req.date {
        attrs.entry("valid_from").or_insert_with(|| Value::String(d.clone()));
    }
    let mut replaces = req.replaces;
    let mut newer = Vec::new();
    if let (true, Some(from)) = (replaces, attrs.get("valid_from").and_then(Value::as_str).map(str::to_owned))
        && let Some(subject) = graph::entity_id_in(tx, part, &req.from)?
    {
        let target = graph::entity_id_in(tx, part, &req.to)?;
        let starts: Vec<(String, u64)> = graph::live_out_of_type(tx, part, subject, &fold(req.rel_type.trim()))?
            .into_iter()
            .filter(|r| Some(r.to) != target)
            .filter_map(|r| r.valid_from.clone().filter(|v| v.as_str() > from.as_str()).map(|v| (v, r.id)))
            .collect();
        if let Some(first) = starts.iter().map(|(v, _)| v.clone()).min() {
            // Older than what is stored: history, valid until the newer edge starts.
            replaces = false;
            newer = starts.into_iter().map(|(_, id)| id).collect();
            let ends_at = match attrs.get("valid_to").and_then(Value::as_str) {
                Some(to) if to < first.as_str() => to.to_owned(),
                _ => first,
            };
            attrs.insert("valid_to".into(), Value::String(ends_at));
        }
    }
    let a = Assertion {
        from: &req.from,
        to: &req.to,
        rel_type: &req.rel_type,
        attributes: &attrs,
        source: Source::Asserted { label: req.source.clone() },
        agent: &caller.agent,
        replaces,
    };
    let related = relate(tx, part, a, caller.now)?;
    let target = format!("{}\0{}\0{}", req.from.trim(), related.relation.rel_type, req.to.trim());
    let patch = json!({
        "from": req.from, "to": req.to, "type": req.rel_type, "attributes": req.attributes,
        "replaces": req.replaces, "date": req.date, "source": req.source,
    });
    for &ended in &related.ended {
        if let Some(rel) = graph::relation_in(tx, part, ended)? {
            let change = Change {
                family: "fact",
                target: &target,
                op: "end",
                before: None,
                after: Some(serde_json::to_value(&rel).expect("relations serialise")),
                patch: Some(patch.clone()),
            };
            record(tx, caller, change)?;
        }
    }
    let op = match (related.created, related.restored.is_some()) {
        (true, true) => "restore",
        (true, false) => "assert",
        (false, _) => "merge",
    };
    let change = Change {
        family: "fact",
        target: &target,
        op,
        before: None,
        after: Some(serde_json::to_value(&related.relation).expect("relations serialise")),
        patch: Some(patch),
    };
    record(tx, caller, change)?;
    Ok(Done {
        relation: related.relation,
        created: related.created,
        ended: related.ended,
        restored: related.restored.into_iter().collect(),
        newer,
    })
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let req: Request = parse("relate", body)?;
    check(&req)?;
    let who = caller.clone();
    let (done, _) = store.write(move |tx| write(tx, &who, &req))?;
    let snap = store.snapshot()?;
    let part = &caller.part;
    let mut citer = Citer::new(&snap, part, false);
    let mut shape = |rel: &Relation| -> Result<Value> {
        let name = |id| -> Result<String> { Ok(entity_by_id(&snap, part, id)?.map_or_else(String::new, |e| e.name)) };
        let names = (name(rel.from)?, name(rel.to)?);
        let citation = citer.relation(rel, (&names.0, &names.1))?;
        let by = FoundBy { seed: &names.0, hops: 0, reasoning: None };
        Ok(wire::fact(rel, (&names.0, &names.1), Direction::Outbound, None, citation, &by))
    };
    let mut list = |ids: &[u64]| -> Result<Vec<Value>> {
        let mut out = Vec::new();
        for &id in ids {
            if let Some(rel) = relation_by_id(&snap, part, id)? {
                out.push(shape(&rel)?);
            }
        }
        Ok(out)
    };
    let ended = list(&done.ended)?;
    let restored = list(&done.restored)?;
    let superseded_by = list(&done.newer)?;
    Ok(json!({
        "fact": shape(&done.relation)?,
        "created": done.created,
        "ended": ended,
        "restored": restored,
        "superseded_by": superseded_by,
    }))
}
