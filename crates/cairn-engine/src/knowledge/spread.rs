//! Spreading over passages: how the mentions channel of `context` ranks passages. Each reached
//! entity carries a weight (a seed's by how well and how specifically the question named it; one
//! reached over a relation, half its origin's per hop). A passage scores the weights of the
//! entities it mentions, fully when it is *about* the entity (its document is labelled with the
//! entity's name, or the passage opens with it) and a fifth otherwise. From a passage about an
//! entity, the other entities it names are reached in turn (a mention hop), weighted by how much
//! the sentence naming them shares with the question: "the director of film X" reaches the person
//! X's passage names in its "directed by" sentence before the actors. This is how multi-hop
//! questions are answered without a language model: the bridge entity's own passage is found
//! through the passage of the entity the question names.

use super::docs::{ABOUT, Document, PassageSpan};
use super::graph::entity_by_id;
use super::part::Partition;
use super::records::decode;
use super::trees::{DOC, MENTION, MENTIONED, PSG};
use crate::error::{Error, Result};
use crate::snapshot::Snapshot;
use crate::text::{Linker, char_slice, fold, sentences, tokens};
use std::collections::{BTreeSet, HashMap};

/// Passages read per reached entity, so a hub named in thousands of passages stays cheap.
const PER_ENTITY: usize = 64;
/// Mention links looked at per reached entity when picking those passages.
const SCANNED: usize = 1024;
/// Entities carried into the next mention hop, heaviest first.
const PER_HOP: usize = 32;
/// Entities one passage may hand on in a mention hop.
const PER_PASSAGE: usize = 32;
/// A passage that only mentions an entity counts this share of the entity's weight.
const MENTION_SHARE: f64 = 0.2;
/// A mention hop hands on this share of the weight, times the sentence's relevance.
const HOP_SHARE: f64 = 0.4;

/// An entity the spreading starts from.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Start {
    pub entity: u64,
    pub weight: f64,
    /// The seed it was reached from.
    pub seed: u64,
    /// Mention hops still allowed from it.
    pub hops: usize,
}

/// A passage with its score and the seed whose spreading scored it most.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Scored {
    pub doc: u64,
    pub ordinal: u32,
    pub score: f64,
    pub seed: u64,
}

/// One passage as read once per call.
struct Passage {
    label: Option<String>,
    text: String,
    ingested_at: i64,
}

/// Reads of one call, each document and passage once.
struct Reader<'a> {
    snap: &'a Snapshot,
    part: &'a Partition,
    docs: HashMap<u64, Option<Document>>,
    names: HashMap<u64, Option<String>>,
}

impl Reader<'_> {
    fn passage(&mut self, doc_id: u64, ordinal: u32) -> Result<Option<Passage>> {
        if !self.docs.contains_key(&doc_id) {
            let doc = self.snap.get(DOC, &self.part.key(&[&doc_id.to_be_bytes()]))?;
            let doc: Option<Document> = doc.map(|d| decode(&d, "document")).transpose()?;
            self.docs.insert(doc_id, doc);
        }
        let Some(doc) = self.docs.get(&doc_id).and_then(Option::as_ref) else { return Ok(None) };
        let at = [&doc_id.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
        let Some(span) = self.snap.get(PSG, &self.part.key(&[&at]))? else { return Ok(None) };
        let span: PassageSpan = decode(&span, "passage")?;
        let text = char_slice(&doc.text, span.start, span.end)
            .ok_or_else(|| Error::corrupt(None, format!("passage {doc_id}/{ordinal} does not fit its document")))?;
        Ok(Some(Passage { label: doc.label.clone(), text: text.to_owned(), ingested_at: doc.ingested_at }))
    }

    fn name(&mut self, entity: u64) -> Result<Option<String>> {
        if let Some(n) = self.names.get(&entity) {
            return Ok(n.clone());
        }
        let n = entity_by_id(self.snap, self.part, entity)?.map(|e| e.name);
        self.names.insert(entity, n.clone());
        Ok(n)
    }
}

/// Whether `passage` is about the entity called `name`: its document carries that name as its
/// label, or the passage opens with it.
fn about(passage: &Passage, name: &str) -> bool {
    let name = fold(name);
    if passage.label.as_deref().is_some_and(|l| fold(l) == name) {
        return true;
    }
    // Only the opening words can match: fold those, not the whole passage (this runs per
    // candidate passage per reached entity). One word more than the name covers a whitespace
    // character that folding turns into a space.
    let words = name.split(' ').count() + 1;
    let opening: Vec<&str> = passage.text.split_whitespace().take(words).collect();
    fold(&opening.join(" ")).starts_with(&name)
}

/// The passages of `entity`, `(doc, ordinal)`, at most `PER_ENTITY`: those of documents about it
/// (marked `ABOUT` when linked) first, then the others in key order, among the first `SCANNED`
/// links (keys only: a hub named in thousands of passages stays cheap).
fn mentioning(snap: &Snapshot, part: &Partition, entity: u64) -> Result<Vec<(u64, u32)>> {
    let (mut own, mut others) = (Vec::new(), Vec::new());
    for item in snap.prefix(MENTION, &part.key(&[&entity.to_be_bytes()]))?.take(SCANNED) {
        let (key, value) = item?;
        if value.as_slice() == ABOUT {
            own.push(passage_at(&key)?);
        } else if others.len() < PER_ENTITY {
            others.push(passage_at(&key)?);
        }
    }
    own.extend(others);
    own.truncate(PER_ENTITY);
    Ok(own)
}

/// The `(doc, ordinal)` at the end of a mention key.
fn passage_at(key: &[u8]) -> Result<(u64, u32)> {
    let at = key
        .len()
        .checked_sub(12)
        .map(|i| &key[i..])
        .ok_or_else(|| Error::corrupt(None, "a mention key is too short"))?;
    Ok((
        u64::from_be_bytes(at[..8].try_into().expect("8 bytes")),
        u32::from_be_bytes(at[8..].try_into().expect("4 bytes")),
    ))
}

/// The entities a passage names, at most `PER_PASSAGE`.
fn mentioned_by(snap: &Snapshot, part: &Partition, doc: u64, ordinal: u32) -> Result<Vec<u64>> {
    let at = [&doc.to_be_bytes()[..], &ordinal.to_be_bytes()].concat();
    let mut out = Vec::new();
    for item in snap.prefix(MENTIONED, &part.key(&[&at]))?.take(PER_PASSAGE) {
        let (key, _) = item?;
        let tail = key
            .len()
            .checked_sub(8)
            .map(|i| &key[i..])
            .ok_or_else(|| Error::corrupt(None, "a mentioned key is too short"))?;
        out.push(u64::from_be_bytes(tail.try_into().expect("8 bytes")));
    }
    Ok(out)
}

/// Whether two index terms are the same word for relevance: equal, or sharing their first five
/// letters ("director" and "directed", "performer" and "performed").
fn akin(one: &str, other: &str) -> bool {
    if one == other {
        return true;
    }
    let (mut left, mut right) = (one.chars(), other.chars());
    (0..5).all(|_| matches!((left.next(), right.next()), (Some(l), Some(r)) if l == r))
}

/// How many of the question's `wanted` terms the sentence holds.
fn relevance(sentence: &str, wanted: &BTreeSet<String>) -> usize {
    let have: Vec<String> = tokens(sentence).into_iter().map(|t| t.term).collect();
    wanted.iter().filter(|w| have.iter().any(|h| akin(w, h))).count()
}

/// For each entity `passage` names besides `from`, the relevance of the first sentence naming it
/// and that sentence's position (0 = first).
fn handed_on(
    reader: &mut Reader<'_>,
    passage: &Passage,
    others: &[u64],
    wanted: &BTreeSet<String>,
) -> Result<Vec<(u64, usize, usize)>> {
    let mut named = Vec::new();
    for &id in others {
        if let Some(n) = reader.name(id)? {
            named.push((id, n));
        }
    }
    let mut out: Vec<(u64, usize, usize)> = Vec::new();
    if named.is_empty() {
        return Ok(out);
    }
    let linker = Linker::new(named.iter().map(|(id, n)| (*id, n.as_str())));
    // Cut only once a name is found: most passages a hub's walk reaches hand on to nobody, and
    // cutting sentences (UAX #29, a table search a character) was a third of such a context.
    let mut cuts = None;
    for m in linker.find(&passage.text) {
        if out.iter().any(|(id, _, _)| *id == m.entity) {
            continue;
        }
        let cuts = cuts.get_or_insert_with(|| sentences(&passage.text));
        let at = cuts.iter().position(|s| s.start <= m.start && m.start < s.end.max(s.start + 1)).unwrap_or(0);
        let text = cuts.get(at).and_then(|s| char_slice(&passage.text, s.start, s.end)).unwrap_or(&passage.text);
        out.push((m.entity, relevance(text, wanted), at));
    }
    Ok(out)
}

/// Scores passages by spreading from `start` (see the module note). `wanted` are the question's
/// content terms (index form) not already spelled by a seed's name; `as_of` hides documents
/// stored later. Best first; ties by position.
pub(crate) fn spread(
    snap: &Snapshot,
    part: &Partition,
    start: &[Start],
    wanted: &BTreeSet<String>,
    as_of: Option<i64>,
) -> Result<Vec<Scored>> {
    let mut reader = Reader { snap, part, docs: HashMap::new(), names: HashMap::new() };
    let mut reached: HashMap<u64, f64> = HashMap::new();
    let mut layer: Vec<Start> = start.to_vec();
    let mut scores: HashMap<(u64, u32), (f64, u64, f64)> = HashMap::new();
    while !layer.is_empty() {
        layer.sort_by(|a, b| b.weight.total_cmp(&a.weight).then(a.entity.cmp(&b.entity)));
        layer.truncate(PER_HOP.max(start.len()));
        for s in &layer {
            reached.entry(s.entity).and_modify(|w| *w = w.max(s.weight)).or_insert(s.weight);
        }
        let mut next: HashMap<u64, Start> = HashMap::new();
        for s in &layer {
            let Some(name) = reader.name(s.entity)? else { continue };
            for (doc, ordinal) in mentioning(snap, part, s.entity)? {
                let Some(passage) = reader.passage(doc, ordinal)? else { continue };
                if as_of.is_some_and(|t| passage.ingested_at > t) {
                    continue;
                }
                let is_about = about(&passage, &name);
                let gain = s.weight * if is_about { 1.0 } else { MENTION_SHARE };
                let slot = scores.entry((doc, ordinal)).or_insert((0.0, s.seed, 0.0));
                slot.0 += gain;
                if gain > slot.2 {
                    (slot.1, slot.2) = (s.seed, gain);
                }
                if !is_about || s.hops == 0 {
                    continue;
                }
                let others: Vec<u64> =
                    mentioned_by(snap, part, doc, ordinal)?.into_iter().filter(|o| *o != s.entity).collect();
                for (other, rel, at) in handed_on(&mut reader, &passage, &others, wanted)? {
                    if reached.contains_key(&other) {
                        continue;
                    }
                    // Precision: relevance and sentence positions are small counts.
                    #[allow(clippy::cast_precision_loss)]
                    let weight = s.weight * HOP_SHARE * (1.0 + rel as f64) / (1.0 + 0.25 * at as f64);
                    let entry = next.entry(other).or_insert(Start {
                        entity: other,
                        weight: 0.0,
                        seed: s.seed,
                        hops: s.hops - 1,
                    });
                    if weight > entry.weight {
                        entry.weight = weight;
                        entry.seed = s.seed;
                    }
                }
            }
        }
        layer = next.into_values().collect();
    }
    let mut out: Vec<Scored> =
        scores.into_iter().map(|((doc, ordinal), (score, seed, _))| Scored { doc, ordinal, score, seed }).collect();
    out.sort_by(|a, b| b.score.total_cmp(&a.score).then((a.doc, a.ordinal).cmp(&(b.doc, b.ordinal))));
    Ok(out)
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::fresh;
    use crate::knowledge::testing_api::{caller, verb};
    use serde_json::{Value, json};

    /// The passage titles of a context reply, in order.
    fn sources(reply: &Value) -> Vec<String> {
        reply["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|i| i["kind"] == "passage")
            .map(|i| i["source"].as_str().unwrap_or_default().to_owned())
            .collect()
    }

    #[test]
    fn a_hub_s_own_document_is_found_among_many_that_name_it() {
        let (_dir, store, part) = fresh();
        let who = caller(&part, 1);
        let hub = json!({"facts": {"entities": [{"name": "Ostrava", "type": "city"}], "relations": []}});
        verb(&store, &who, "remember", &hub).unwrap();
        // Far more passages naming the hub than a reader takes per entity, stored before its own.
        let passers: Vec<Value> = (0..150)
            .map(|i| json!({"text": format!("Visitor {i} passed through Ostrava on a rainy day."), "mentions": ["Ostrava"]}))
            .collect();
        verb(&store, &who, "remember", &json!({"passages": passers})).unwrap();
        let own = "Its steelworks closed in 1998 and became a concert venue.";
        verb(&store, &who, "remember", &json!({"content": own, "source": "Ostrava"})).unwrap();
        let reply = verb(&store, &who, "context", &json!({"question": "Ostrava", "k": 40})).unwrap();
        let items = reply["items"].as_array().unwrap();
        let mine = items.iter().find(|i| i["source"] == "Ostrava").expect("the hub's own passage");
        assert_eq!(mine["ranks"]["mentions"], json!(1), "first in the mentions channel: {mine}");
    }

    #[test]
    fn a_bridge_entity_is_reached_through_the_passage_about_the_named_one() {
        let (_dir, store, part) = fresh();
        let who = caller(&part, 1);
        let titles = ["Madame la Presidente", "Frank Lloyd", "Anna Held", "Oliver Morosco"];
        let entities: Vec<Value> = titles.iter().map(|t| json!({"name": t, "type": "topic"})).collect();
        verb(&store, &who, "remember", &json!({"facts": {"entities": entities, "relations": []}})).unwrap();
        let docs = [
            (
                "Madame la Presidente",
                "Madame la Presidente is a 1916 silent comedy produced by Oliver Morosco and directed by \
                 Frank Lloyd. It stars Anna Held.",
            ),
            // The bridge's own document never spells its title: it is linked by its label.
            ("Frank Lloyd", "Frank William George Lloyd (1886 – 1960) was a Scottish film director. He died in 1960."),
            ("Anna Held", "Anna Held was a Polish-born stage performer who starred on Broadway."),
            ("Oliver Morosco", "Oliver Morosco was an American theatrical producer and director of plays."),
        ];
        for (title, text) in docs {
            verb(&store, &who, "remember", &json!({"content": text, "source": title})).unwrap();
        }
        let question = "What is the date of death of the director of film Madame La Presidente?";
        let reply = verb(&store, &who, "context", &json!({"question": question, "k": 8})).unwrap();
        let got = sources(&reply);
        assert_eq!(got.first().map(String::as_str), Some("Madame la Presidente"), "{got:?}");
        let lloyd = got.iter().position(|s| s == "Frank Lloyd").expect("the director's own passage");
        let held = got.iter().position(|s| s == "Anna Held").unwrap_or(usize::MAX);
        assert!(lloyd < held, "the 'directed by' sentence outranks the cast: {got:?}");
        // Without hops no bridge is crossed: the director's passage can only come from full text.
        let reply = verb(&store, &who, "context", &json!({"question": question, "k": 8, "hops": 0})).unwrap();
        for item in reply["items"].as_array().unwrap().iter().filter(|i| i["source"] == "Frank Lloyd") {
            assert!(item["ranks"].get("mentions").is_none(), "{item}");
        }
    }
}
