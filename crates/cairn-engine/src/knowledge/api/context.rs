//! `memory_context`: a question → ranked, cited items for the calling agent to answer from.
//! Seeds (names and types the question holds) → traversal (`hops`) → passages mentioning what
//! was reached → full text → reciprocal-rank fusion, each item explained (channels, ranks, score)
//! and cited, and a grounding verdict with the question's uncovered words. The meaning channel is
//! an explicit empty slot until an embedding model is armed.

use super::{Caller, parse};
use crate::error::{Error, Result};
use crate::knowledge::cache;
use crate::knowledge::citation::Citer;
use crate::knowledge::context::{Ask, Grounding, ItemKind, context_with};
use crate::knowledge::graph::{Direction, Source, entity_by_id};
use crate::knowledge::limits::{CONTEXT_HOPS, CONTEXT_K, MAX_QUESTION_BYTES};
use crate::knowledge::wire::{self, FoundBy, check_date};
use crate::knowledge::{MAX_HOPS, When};
use crate::store::Store;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::collections::HashMap;

#[derive(Debug, Deserialize)]
struct Request {
    question: String,
    hops: Option<usize>,
    k: Option<usize>,
    as_of: Option<i64>,
    valid_at: Option<String>,
    #[serde(default)]
    compact: bool,
}

fn check(req: &Request) -> Result<Ask> {
    if req.question.trim().is_empty() || req.question.len() > MAX_QUESTION_BYTES {
        return Err(Error::InvalidArgument(format!("question must be 1..={MAX_QUESTION_BYTES} bytes")));
    }
    let hops = req.hops.unwrap_or(CONTEXT_HOPS);
    if hops > MAX_HOPS {
        return Err(Error::InvalidArgument(format!("hops must be 0..={MAX_HOPS}, got {hops}")));
    }
    let k = req.k.unwrap_or(CONTEXT_K);
    if !(1..=100).contains(&k) {
        return Err(Error::InvalidArgument(format!("k must be 1..=100, got {k}")));
    }
    if let Some(v) = &req.valid_at {
        check_date("valid_at", v)?;
    }
    Ok(Ask { hops, k, when: When { as_of: req.as_of, valid_at: req.valid_at.clone() } })
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let req: Request = parse("context", body)?;
    let ask = check(&req)?;
    let snap = store.snapshot()?;
    let part = &caller.part;
    let names = cache::names(store.dir(), &snap, part)?;
    let found = context_with(&snap, part, &names, &req.question, &ask)?;
    let seed_names: HashMap<u64, String> = found.seeding.iter().map(|s| (s.entity.id, s.entity.name.clone())).collect();
    let mut citer = Citer::new(&snap, part, req.compact);
    let mut name_of = |id: u64| -> Result<String> {
        Ok(entity_by_id(&snap, part, id)?.map_or_else(|| id.to_string(), |e| e.name))
    };
    let mut items = Vec::new();
    let mut cited = 0;
    for item in &found.items {
        let seed = item.seed.and_then(|s| seed_names.get(&s).cloned());
        let ranks: Map<String, Value> = item.ranks.iter().map(|(c, r)| (c.name().to_owned(), json!(r))).collect();
        let channels: Vec<&str> = item.ranks.iter().map(|(c, _)| c.name()).collect();
        let mut out = match &item.kind {
            ItemKind::Fact { relation, hops } => {
                let ends = (name_of(relation.from)?, name_of(relation.to)?);
                let citation = citer.relation(relation, (&ends.0, &ends.1))?;
                let source_date = match &relation.source {
                    Source::Document { doc_id, .. } => citer.document(*doc_id)?.and_then(|c| c.doc.date.clone()),
                    Source::Asserted { .. } => None,
                };
                let seed_name = seed.clone().unwrap_or_default();
                let by = FoundBy { seed: &seed_name, hops: *hops, reasoning: None };
                let direction = if item.seed == Some(relation.to) { Direction::Inbound } else { Direction::Outbound };
                cited += 1;
                let mut f = wire::fact(relation, (&ends.0, &ends.1), direction, source_date.as_deref(), citation, &by);
                f["kind"] = json!("fact");
                f
            }
            ItemKind::Passage { doc_id, ordinal, span, label, date } => {
                let citation = match citer.document(*doc_id)? {
                    Some(c) => citer.passage(&c.doc, *span),
                    None => Value::Null,
                };
                cited += 1;
                json!({
                    "kind": "passage", "doc_id": wire::id(*doc_id), "ordinal": ordinal,
                    "source": label, "date": date, "citation": citation,
                })
            }
            ItemKind::Entity { entity } => {
                let mut e = wire::entity(entity);
                e["kind"] = json!("entity");
                e["citation"] = Value::Null;
                e
            }
        };
        out["text"] = json!(item.text);
        out["score"] = json!(item.score);
        out["channels"] = json!(channels);
        out["ranks"] = Value::Object(ranks);
        out["seed"] = json!(seed);
        items.push(out);
    }
    let (verdict, uncovered) = match &found.grounding {
        // Only entities came back: what they say is not quoted from anything.
        Grounding::Grounded | Grounding::Related { .. } if cited == 0 => ("uncited", Vec::new()),
        Grounding::Grounded => ("grounded", Vec::new()),
        Grounding::Related { uncovered } => ("related", uncovered.clone()),
        Grounding::NothingStored => ("nothing_stored", Vec::new()),
        Grounding::CouldNotJudge => ("could_not_judge", Vec::new()),
    };
    let state = match (items.is_empty(), verdict) {
        (true, "could_not_judge") => "could_not_judge",
        (true, _) => "nothing_stored",
        _ => "answered",
    };
    let seeds: Vec<Value> = found
        .seeding
        .iter()
        .map(|s| json!({ "name": s.entity.name, "id": wire::id(s.entity.id), "matched": s.matched, "by": s.by }))
        .collect();
    let c = &found.coverage;
    Ok(json!({
        "state": state,
        "grounding": { "verdict": verdict, "uncovered": uncovered },
        "items": items,
        "seeding": { "seeds": seeds },
        "meaning": { "state": "not_armed" },
        "coverage": {
            "seeds": c.seeds, "reached": c.reached, "facts": c.facts, "mentioned": c.mentioned,
            "full_text": c.full_text, "meaning": null, "hops": ask.hops, "k": ask.k,
        },
    }))
}
