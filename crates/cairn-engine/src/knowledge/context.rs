//! Context for a question: seeds (stored entities the question names), a traversal of their
//! relations, the passages that mention what was reached, and full-text matches, fused by
//! reciprocal rank with a per-item explanation, plus a grounding verdict that says whether one
//! item covers every content word of the question. Nothing is invented: no item, no answer.

use super::docs::{Document, PassageSpan};
use super::graph::{self, Entity, Neighbour, neighbours};
use super::part::Partition;
use super::records::decode;
use super::trees::{DOC, MENTION, PSG};
use crate::error::{Error, Result};
use crate::fts;
use crate::snapshot::Snapshot;
use crate::text::{Linker, char_slice, tokens};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Reciprocal-rank-fusion constant.
pub const RRF_K: f64 = 60.0;
/// The most traversal hops a request may ask for.
pub const MAX_HOPS: usize = 3;

/// A retrieval channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Channel {
    /// A relation reached from a seed.
    Graph,
    /// A passage that mentions a reached entity.
    Mentions,
    /// A BM25 match of the question.
    FullText,
}

/// What an item is.
#[derive(Debug, Clone, PartialEq)]
pub enum ItemKind {
    Fact { relation: super::Relation, hops: usize },
    Passage { doc_id: u64, ordinal: u32, span: PassageSpan, label: Option<String>, date: Option<String> },
}

/// One ranked item, with how it was found.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub text: String,
    pub score: f64,
    /// The channels that found it and its rank (1-based) in each.
    pub ranks: Vec<(Channel, usize)>,
}

/// Whether the items answer the question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grounding {
    /// One item covers every content word of the question.
    Grounded,
    /// Items were found, but no single one covers these content words.
    Related { uncovered: Vec<String> },
    /// Nothing stored matches.
    NothingStored,
}

/// The answer to `context`.
#[derive(Debug, Clone, PartialEq)]
pub struct Context {
    pub grounding: Grounding,
    pub items: Vec<Item>,
    /// The entities the question named.
    pub seeds: Vec<Entity>,
}

/// Ranked, explained items for `question`: at most `k` (1–100), traversing `hops` (0–3).
pub fn context(snap: &Snapshot, part: &Partition, question: &str, hops: usize, k: usize) -> Result<Context> {
    if !(1..=100).contains(&k) || hops > MAX_HOPS {
        return Err(Error::InvalidArgument(format!("k must be 1..=100 and hops 0..={MAX_HOPS}")));
    }
    let mut entities: HashMap<u64, Entity> = graph::entities(snap, part)?.into_iter().map(|e| (e.id, e)).collect();
    let linker = Linker::new(entities.values().map(|e| (e.id, e.name.as_str())));
    let seed_ids: BTreeSet<u64> = linker.find(question).into_iter().map(|m| m.entity).collect();

    // Graph: breadth-first from the seeds, each live relation once, ranked by hop then id.
    let mut reached: BTreeSet<u64> = seed_ids.clone();
    let mut frontier: Vec<u64> = seed_ids.iter().copied().collect();
    let mut facts: BTreeMap<u64, (Neighbour, usize)> = BTreeMap::new();
    for hop in 1..=hops {
        let mut next = Vec::new();
        for entity in frontier {
            for n in neighbours(snap, part, entity)?.into_iter().filter(|n| n.relation.ended_at.is_none()) {
                if reached.insert(n.other) {
                    next.push(n.other);
                }
                facts.entry(n.relation.id).or_insert((n, hop));
            }
        }
        frontier = next;
    }
    let mut graph: Vec<(Neighbour, usize)> = facts.into_values().collect();
    graph.sort_by_key(|(n, hop)| (*hop, n.relation.id));

    // Mentions: passages naming a reached entity, seeds first.
    let mut mentioned: Vec<(u64, u32)> = Vec::new();
    for entity in seed_ids.iter().chain(reached.iter().filter(|e| !seed_ids.contains(e))) {
        for item in snap.prefix(MENTION, &part.key(&[&entity.to_be_bytes()]))? {
            let (key, _) = item?;
            let at = key.get(key.len() - 12..).ok_or_else(|| Error::corrupt(None, "a mention key is too short"))?;
            let passage = (
                u64::from_be_bytes(at[..8].try_into().expect("8 bytes")),
                u32::from_be_bytes(at[8..].try_into().expect("4 bytes")),
            );
            if !mentioned.contains(&passage) {
                mentioned.push(passage);
            }
        }
    }
    let full_text: Vec<(u64, u32)> =
        fts::search(snap, part.raw(), question, k * 3)?.into_iter().map(|h| (h.doc, h.ordinal)).collect();

    // Fusion.
    let mut fused: BTreeMap<(u8, u64, u32), Item> = BTreeMap::new();
    let name = |id: u64| entities.get(&id).map_or_else(|| id.to_string(), |e| e.name.clone());
    for (rank, (n, hop)) in graph.into_iter().enumerate() {
        let text = format!("{} {} {}", name(n.relation.from), n.relation.rel_type, name(n.relation.to));
        let item =
            Item { kind: ItemKind::Fact { relation: n.relation, hops: hop }, text, score: 0.0, ranks: Vec::new() };
        add(&mut fused, (0, item_id(&item), 0), item, Channel::Graph, rank + 1);
    }
    for (channel, list) in [(Channel::Mentions, &mentioned), (Channel::FullText, &full_text)] {
        for (rank, &(doc, ordinal)) in list.iter().enumerate() {
            let item = passage_item(snap, part, doc, ordinal)?;
            add(&mut fused, (1, doc, ordinal), item, channel, rank + 1);
        }
    }
    let mut items: Vec<Item> = fused.into_values().collect();
    items.sort_by(|a, b| b.score.total_cmp(&a.score));
    items.truncate(k);
    let grounding = grounding(question, &items);
    let mut seeds: Vec<Entity> = seed_ids.iter().filter_map(|id| entities.remove(id)).collect();
    seeds.sort_by_key(|e| e.id);
    Ok(Context { grounding, items, seeds })
}

fn item_id(item: &Item) -> u64 {
    match &item.kind {
        ItemKind::Fact { relation, .. } => relation.id,
        ItemKind::Passage { doc_id, .. } => *doc_id,
    }
}

fn add(fused: &mut BTreeMap<(u8, u64, u32), Item>, key: (u8, u64, u32), item: Item, channel: Channel, rank: usize) {
    let entry = fused.entry(key).or_insert(item);
    entry.ranks.push((channel, rank));
    // Ranks are at most a few hundred (k ≤ 100, three times that from full text): exact in f64.
    let rank = f64::from(u32::try_from(rank).unwrap_or(u32::MAX));
    entry.score += 1.0 / (RRF_K + rank);
}

fn passage_item(snap: &Snapshot, part: &Partition, doc_id: u64, ordinal: u32) -> Result<Item> {
    let at = [&doc_id.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
    let span: PassageSpan = decode(
        &snap.get(PSG, &part.key(&[&at]))?.ok_or_else(|| Error::corrupt(None, "a found passage is missing"))?,
        "passage",
    )?;
    let doc: Document = decode(
        &snap
            .get(DOC, &part.key(&[&doc_id.to_be_bytes()]))?
            .ok_or_else(|| Error::corrupt(None, "a passage's document is missing"))?,
        "document",
    )?;
    // The quoted text is sliced from the stored document and checked, never taken on trust.
    let text = char_slice(&doc.text, span.start, span.end)
        .ok_or_else(|| Error::corrupt(None, format!("passage {doc_id}/{ordinal} does not fit its document")))?
        .to_owned();
    Ok(Item {
        kind: ItemKind::Passage { doc_id, ordinal, span, label: doc.label, date: doc.date },
        text,
        score: 0.0,
        ranks: Vec::new(),
    })
}

/// `Grounded` when one item's terms include every content term of the question.
fn grounding(question: &str, items: &[Item]) -> Grounding {
    if items.is_empty() {
        return Grounding::NothingStored;
    }
    let wanted: BTreeSet<String> = tokens(question).into_iter().map(|t| t.term).collect();
    let mut best: Option<BTreeSet<String>> = None;
    for item in items {
        let have: BTreeSet<String> = tokens(&item.text).into_iter().map(|t| t.term).collect();
        let missing: BTreeSet<String> = wanted.difference(&have).cloned().collect();
        if missing.is_empty() {
            return Grounding::Grounded;
        }
        if best.as_ref().is_none_or(|b| missing.len() < b.len()) {
            best = Some(missing);
        }
    }
    Grounding::Related { uncovered: best.unwrap_or_default().into_iter().collect() }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::testing::{assertion, fresh};
    use crate::knowledge::{relate, remember_text};
    use crate::store::Store;
    use serde_json::Map;

    fn seeded() -> (tempfile::TempDir, Store, Partition) {
        let (dir, store, part) = fresh();
        let p = part.clone();
        store
            .write(move |tx| {
                let none = Map::new();
                relate(tx, &p, assertion("Priya Raman", "Acme", "works_at", &none, "a"), 1)?;
                relate(tx, &p, assertion("Acme", "Berlin", "located_in", &none, "a"), 2)?;
                remember_text(tx, &p, "Priya Raman leads the lighthouse project at Acme.", Some("chat"), None, 3)?;
                remember_text(tx, &p, "The canteen serves soup on Fridays.", Some("memo"), None, 4)
            })
            .unwrap();
        (dir, store, part)
    }

    #[test]
    fn seeds_traversal_mentions_and_full_text_are_fused_and_explained() {
        let (_dir, store, part) = seeded();
        let snap = store.snapshot().unwrap();
        let c = context(&snap, &part, "What does Priya Raman lead?", 2, 8).unwrap();
        assert_eq!(c.seeds.iter().map(|e| e.name.as_str()).collect::<Vec<_>>(), vec!["Priya Raman"]);
        let texts: Vec<&str> = c.items.iter().map(|i| i.text.as_str()).collect();
        assert!(texts.contains(&"Priya Raman works_at Acme"), "{texts:?}");
        assert!(texts.contains(&"Acme located_in Berlin"), "two hops reach Berlin: {texts:?}");
        let passage = c.items.iter().find(|i| i.text.contains("lighthouse")).expect("the passage");
        let channels: Vec<Channel> = passage.ranks.iter().map(|(ch, _)| *ch).collect();
        assert_eq!(channels, vec![Channel::Mentions, Channel::FullText], "found two ways, and says so");
        assert!(c.items.windows(2).all(|w| w[0].score >= w[1].score));
        assert!(!texts.iter().any(|t| t.contains("soup")), "unrelated passage: {texts:?}");
        // Hops limit the traversal.
        let c0 = context(&snap, &part, "Priya Raman", 1, 8).unwrap();
        assert!(!c0.items.iter().any(|i| i.text == "Acme located_in Berlin"));
    }

    #[test]
    fn grounding_says_whether_one_item_covers_the_question() {
        let (_dir, store, part) = seeded();
        let snap = store.snapshot().unwrap();
        let c = context(&snap, &part, "Priya Raman lighthouse project", 2, 8).unwrap();
        assert_eq!(c.grounding, Grounding::Grounded);
        let c = context(&snap, &part, "Priya Raman salary", 2, 8).unwrap();
        assert_eq!(c.grounding, Grounding::Related { uncovered: vec!["salari".into()] });
        let c = context(&snap, &part, "quantum chromodynamics", 2, 8).unwrap();
        assert_eq!(c.grounding, Grounding::NothingStored);
        assert!(c.items.is_empty());
    }

    #[test]
    fn other_partitions_and_bad_limits() {
        let (_dir, store, part) = seeded();
        let snap = store.snapshot().unwrap();
        let other = Partition::new("local", "u2", "default").unwrap();
        let c = context(&snap, &other, "Priya Raman lighthouse", 2, 8).unwrap();
        assert_eq!(c.grounding, Grounding::NothingStored);
        for (hops, k) in [(4, 8), (2, 0), (2, 101)] {
            assert_eq!(context(&snap, &part, "Priya", hops, k).unwrap_err().code(), "INVALID_ARGUMENT");
        }
    }
}
