//! `memory_recall`: everything about one entity, named by `subject` (exact, case-folded, whole
//! word of a longer name, near spelling) or by an `attribute: {key, value}`. Facts come from both
//! directions with derived facts after them, each cited; `as_of` (ms) reads what the store knew
//! then, `valid_at` what was true then. Nothing is invented: a miss is `nothing_stored` with "did
//! you mean" names of the same partition; an ambiguous or empty subject is `could_not_judge`.

use super::{Caller, parse};
use crate::error::{Error, Result};
use crate::knowledge::cache::{self, Names};
use crate::knowledge::citation::Citer;
use crate::knowledge::graph::{self, Entity, Source, entity_by_id, relation_by_id};
use crate::knowledge::limits::{MAX_NAME_LEN, MAX_RECALL_K, RECALL_K};
use crate::knowledge::recall::facts_of;
use crate::knowledge::wire::{self, FoundBy, check_date};
use crate::knowledge::{SUGGESTIONS, When};
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::text::{LookupOptions, MatchKind, fold, tokens};
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::HashMap;

#[derive(Debug, Deserialize)]
struct Request {
    subject: Option<String>,
    attribute: Option<AttributeIn>,
    as_of: Option<i64>,
    valid_at: Option<String>,
    k: Option<usize>,
    #[serde(default)]
    compact: bool,
}

#[derive(Debug, Deserialize)]
struct AttributeIn {
    key: String,
    value: Value,
}

/// The wire name of a match kind.
pub(super) fn matched(how: MatchKind) -> &'static str {
    match how {
        MatchKind::Exact => "exact",
        MatchKind::CaseFolded => "case",
        MatchKind::WordOfName => "word",
        MatchKind::Near { .. } => "near",
        MatchKind::Prefix => "prefix",
    }
}

/// Whether the entity exists in `snap` (the cache may hold forgotten ones) and was known at `as_of`.
pub(super) fn visible(snap: &Snapshot, caller: &Caller, id: u64, as_of: Option<i64>) -> Result<Option<Entity>> {
    Ok(entity_by_id(snap, &caller.part, id)?.filter(|e| as_of.is_none_or(|t| e.recorded_at <= t)))
}

/// Up to three stored names spelled like `query` (near, then names it begins), same partition.
pub(super) fn did_you_mean(snap: &Snapshot, caller: &Caller, names: &Names, query: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for hit in names.index.lookup(query, LookupOptions { prefix: true, limit: 64 }) {
        if out.len() == SUGGESTIONS {
            break;
        }
        if matches!(hit.how, MatchKind::Near { .. } | MatchKind::Prefix)
            && !out.contains(&hit.name)
            && visible(snap, caller, hit.id, None)?.is_some()
        {
            out.push(hit.name);
        }
    }
    Ok(out)
}

fn check(req: &Request) -> Result<usize> {
    match (&req.subject, &req.attribute) {
        (Some(_), Some(_)) | (None, None) => {
            return Err(Error::InvalidArgument("recall: give exactly one of subject or attribute".into()));
        }
        (Some(s), None) if s.trim().is_empty() || s.len() > MAX_NAME_LEN => {
            return Err(Error::InvalidArgument(format!("subject must be 1..={MAX_NAME_LEN} bytes")));
        }
        (None, Some(a)) if a.key.trim().is_empty() || a.key.len() > MAX_NAME_LEN => {
            return Err(Error::InvalidArgument(format!("attribute.key must be 1..={MAX_NAME_LEN} bytes")));
        }
        _ => {}
    }
    if let Some(v) = &req.valid_at {
        check_date("valid_at", v)?;
    }
    let k = req.k.unwrap_or(RECALL_K);
    if !(1..=MAX_RECALL_K).contains(&k) {
        return Err(Error::InvalidArgument(format!("k must be 1..={MAX_RECALL_K}, got {k}")));
    }
    Ok(k)
}

fn same_value(stored: &Value, wanted: &Value) -> bool {
    match (stored, wanted) {
        (Value::String(a), Value::String(b)) => fold(a) == fold(b),
        (a, b) => a == b,
    }
}

fn answer_none(req: &Request, did_you_mean: Vec<String>) -> Value {
    json!({
        "state": "nothing_stored",
        "subject": null,
        "facts": [],
        "did_you_mean": did_you_mean,
        "seeding": { "matched": null, "query": req.subject },
        "meaning": { "state": "not_armed" },
    })
}

fn could_not_judge(req: &Request, why: &str, candidates: Vec<String>) -> Value {
    json!({
        "state": "could_not_judge",
        "why": why,
        "candidates": candidates,
        "subject": null,
        "facts": [],
        "seeding": { "matched": null, "query": req.subject },
        "meaning": { "state": "not_armed" },
    })
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let req: Request = parse("recall", body)?;
    let k = check(&req)?;
    let snap = store.snapshot()?;
    let when = When { as_of: req.as_of, valid_at: req.valid_at.clone() };
    let (subject, how, others) = if let Some(query) = &req.subject {
        let names = cache::names(store.dir(), &snap, &caller.part)?;
        let mut hits = Vec::new();
        for hit in names.index.lookup(query, LookupOptions { prefix: false, limit: 16 }) {
            if let Some(e) = visible(&snap, caller, hit.id, req.as_of)? {
                hits.push((e, hit.how, hit.score));
            }
        }
        let Some((first, how, score)) = hits.first().cloned() else {
            if tokens(query).is_empty() {
                return Ok(could_not_judge(&req, "the subject is only short or common words", Vec::new()));
            }
            return Ok(answer_none(&req, did_you_mean(&snap, caller, &names, query)?));
        };
        // Two different entities matched equally well by a loose rule: asking beats guessing.
        let tied: Vec<String> = hits
            .iter()
            .filter(|(e, h, s)| *h == how && (*s - score).abs() < f32::EPSILON && e.id != first.id)
            .map(|(e, _, _)| e.name.clone())
            .collect();
        if !tied.is_empty() && !matches!(how, MatchKind::Exact | MatchKind::CaseFolded) {
            let candidates = std::iter::once(first.name.clone()).chain(tied).collect();
            return Ok(could_not_judge(&req, "the subject matches several stored names equally well", candidates));
        }
        (first, matched(how), Vec::new())
    } else {
        let a = req.attribute.as_ref().expect("checked: subject or attribute");
        let mut found: Vec<Entity> = graph::entities(&snap, &caller.part)?
            .into_iter()
            .filter(|e| req.as_of.is_none_or(|t| e.recorded_at <= t))
            .filter(|e| e.attributes.get(a.key.trim()).is_some_and(|v| same_value(v, &a.value)))
            .collect();
        if found.is_empty() {
            return Ok(answer_none(&req, Vec::new()));
        }
        let first = found.remove(0);
        (first, "attribute", found)
    };
    let (facts, derived) = facts_of(&snap, &caller.part, subject.id, &when)?;
    let mut citer = Citer::new(&snap, &caller.part, req.compact);
    let mut names: HashMap<u64, String> = HashMap::from([(subject.id, subject.name.clone())]);
    let mut name_of = |id: u64| -> Result<String> {
        if let Some(n) = names.get(&id) {
            return Ok(n.clone());
        }
        let n = entity_by_id(&snap, &caller.part, id)?.map_or_else(|| id.to_string(), |e| e.name);
        names.insert(id, n.clone());
        Ok(n)
    };
    let mut stored = facts;
    // Newest first: recency ranks facts at one hop.
    stored.sort_by(|a, b| b.relation.recorded_at.cmp(&a.relation.recorded_at).then(b.relation.id.cmp(&a.relation.id)));
    let total = stored.len() + derived.len();
    let mut out = Vec::new();
    for n in stored.iter().take(k) {
        let rel = &n.relation;
        let ends = (name_of(rel.from)?, name_of(rel.to)?);
        let citation = citer.relation(rel, (&ends.0, &ends.1))?;
        let source_date = match &rel.source {
            Source::Document { doc_id, .. } => citer.document(*doc_id)?.and_then(|c| c.doc.date.clone()),
            Source::Asserted { .. } => None,
        };
        let by = FoundBy { seed: &subject.name, hops: 1, reasoning: None };
        out.push(wire::fact(rel, (&ends.0, &ends.1), n.direction, source_date.as_deref(), citation, &by));
    }
    for d in derived.iter().take(k.saturating_sub(out.len())) {
        let Some(base) = relation_by_id(&snap, &caller.part, d.basis[0])? else { continue };
        let ends = (name_of(d.from)?, name_of(d.to)?);
        let base_ends = (name_of(base.from)?, name_of(base.to)?);
        let citation = citer.relation(&base, (&base_ends.0, &base_ends.1))?;
        let basis: Vec<String> = d.basis.iter().map(u64::to_string).collect();
        let reasoning = format!("{} rule over stored fact(s) {}", wire::rule(d.rule), basis.join(", "));
        let by = FoundBy { seed: &subject.name, hops: d.basis.len(), reasoning: Some(reasoning) };
        out.push(wire::derived_fact(d, (&ends.0, &ends.1), &base, citation, &by));
    }
    let mut reply = json!({
        "state": "answered",
        "subject": wire::entity(&subject),
        "facts": out,
        "omitted": total.saturating_sub(k),
        "seeding": { "matched": how, "query": req.subject, "name": subject.name },
        "meaning": { "state": "not_armed" },
    });
    if !others.is_empty() {
        reply["other_matches"] = others.iter().map(|e| json!({ "id": wire::id(e.id), "name": e.name })).collect();
    }
    Ok(reply)
}
