//! `memory_remember`: text (`content`, `messages` or `passages`), `facts`, or both, stored in one
//! transaction. Entities sent in the call are stored first, so the passages link to them as well
//! as to every stored entity they name; relations from a text-bearing call cite that document.
//! Every limit is checked before the write starts, so a refused call changes nothing.

use std::collections::HashMap;

use super::attribute_keys::trim_keys;
use super::duplicates;
use super::remember_facts::{self, EntityView, RelationView};
use super::{Caller, parse};

use crate::error::{Error, Result};
use crate::fts;
use crate::history::{Change, record};
use crate::knowledge::Partition;
use crate::knowledge::attribute_sources;
use crate::knowledge::cache;
use crate::knowledge::citation::document_source;
use crate::knowledge::docs::{DocHash, NewDocument, NewPassage, document_in, hash_key, store_document, stored_doc};
use crate::knowledge::graph::upsert_counted;
use crate::knowledge::graph::{Entity, Source, entity_by_name_in, entity_exists_in, entity_in};
use crate::knowledge::ids::{read_next_id, write_next_id};
use crate::knowledge::limits::{
    MAX_ENTITIES, MAX_NAME_LEN, MAX_PASSAGE_BYTES, MAX_PASSAGES, MAX_RELATIONS, MAX_TEXT_BYTES,
};
use crate::knowledge::tally::Tally;
use crate::knowledge::valid::check_interval;
use crate::knowledge::wire::{check_date, id};
use crate::store::Store;
use crate::text::{
    Effort, Linker, LookupOptions, MatchKind, Passage, absent_mention, chunk_messages, chunk_text, fold, messages_text,
};
use crate::write::WriteTxn;
use serde::Deserialize;
use serde_json::{Map, Value, json};

#[derive(Debug, Deserialize)]
struct Request {
    content: Option<String>,
    messages: Option<Vec<Turn>>,
    passages: Option<Vec<PassageIn>>,
    facts: Option<Facts>,
    date: Option<String>,
    source: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Turn {
    role: String,
    content: String,
}

#[derive(Debug, Clone, Deserialize)]
struct PassageIn {
    text: String,
    #[serde(default)]
    mentions: Vec<String>,
    key: Option<String>,
}

#[derive(Debug, Default, Deserialize)]
struct Facts {
    #[serde(default)]
    entities: Vec<EntityIn>,
    #[serde(default)]
    relations: Vec<RelationIn>,
}

#[derive(Debug, Clone, Deserialize)]
struct EntityIn {
    name: String,
    #[serde(rename = "type")]
    entity_type: Option<String>,
    attributes: Option<Map<String, Value>>,
}

#[derive(Debug, Clone, Deserialize)]
struct RelationIn {
    source: String,
    target: String,
    #[serde(rename = "type")]
    rel_type: String,
    attributes: Option<Map<String, Value>>,
}

impl EntityIn {
    fn view(&self) -> EntityView<'_> {
        EntityView { name: &self.name, entity_type: self.entity_type.as_deref(), attributes: self.attributes.as_ref() }
    }
}

/// The text of a call, as it will be stored.
enum Text {
    None,
    /// The documents to store: one for `content` or `messages`, one per given passage.
    Some(Vec<DocIn>),
}

/// One document of the call: its text and passages, each with the names it must be linked to.
struct DocIn {
    text: String,
    passages: Vec<(Passage, Vec<String>)>,
    /// For a given passage, its index in the request: an unlinked one is reported by it.
    given: Option<usize>,
    /// Work done before the transaction, off the writer thread: the document's `hash_key` and
    /// each passage's terms (empty until `run` fills them).
    hash: DocHash,
    tokenized: Vec<fts::Tokenized>,
    /// The id reserved for it in the transaction (the call's documents take consecutive ids).
    id: Option<u64>,
}

fn name(field: &str, value: &str) -> Result<()> {
    let len = value.trim().len();
    // Blank is said as such: "must be 1..=1024 bytes, got 0" for " " blamed its length (an audit).
    if len == 0 {
        return Err(Error::InvalidArgument(format!("{field} must not be blank")));
    }
    if len > MAX_NAME_LEN {
        return Err(Error::InvalidArgument(format!("{field} must be 1..={MAX_NAME_LEN} bytes, got {len}")));
    }
    // Invisible code points fold away (`text::fold`): a name of nothing else names nothing.
    if fold(value).is_empty() {
        return Err(Error::InvalidArgument(format!("{field} must hold a visible character")));
    }
    Ok(())
}

/// Every check of the request that needs no store, so a refusal changes nothing.
fn check(req: &Request) -> Result<()> {
    let forms = [req.content.is_some(), req.messages.is_some(), req.passages.is_some()];
    if forms.iter().filter(|&&f| f).count() > 1 {
        return Err(Error::InvalidArgument("remember: give one of content, messages or passages, not several".into()));
    }
    if !forms.contains(&true) && req.facts.is_none() {
        return Err(Error::InvalidArgument("remember: give content, messages, passages or facts".into()));
    }
    if let Some(d) = &req.date {
        check_date("date", d)?;
    }
    if let Some(s) = &req.source {
        name("source", s)?;
    }
    let mut text_bytes = 0;
    if let Some(c) = &req.content {
        if c.trim().is_empty() {
            return Err(Error::InvalidArgument("content must not be empty".into()));
        }
        text_bytes += c.len();
    }
    if let Some(ms) = &req.messages {
        if ms.is_empty() {
            return Err(Error::InvalidArgument("messages must hold at least one turn".into()));
        }
        // Blank as `content` is: turns with nothing said stored "user: \nassistant:   " (an audit).
        if ms.iter().all(|m| m.content.trim().is_empty()) {
            return Err(Error::InvalidArgument("messages must not be blank: every turn's content is empty".into()));
        }
        for (i, m) in ms.iter().enumerate() {
            name(&format!("messages[{i}].role"), &m.role)?;
            text_bytes += m.role.len() + m.content.len() + 2;
        }
    }
    if let Some(ps) = &req.passages {
        if ps.is_empty() || ps.len() > MAX_PASSAGES {
            return Err(Error::InvalidArgument(format!(
                "passages must hold 1..={MAX_PASSAGES} passages, got {}",
                ps.len()
            )));
        }
        for (i, p) in ps.iter().enumerate() {
            if p.text.trim().is_empty() || p.text.len() > MAX_PASSAGE_BYTES {
                return Err(Error::InvalidArgument(format!(
                    "passages[{i}].text must be 1..={MAX_PASSAGE_BYTES} bytes, got {}",
                    p.text.len()
                )));
            }
            for (j, m) in p.mentions.iter().enumerate() {
                name(&format!("passages[{i}].mentions[{j}]"), m)?;
            }
            if let Some(k) = &p.key {
                name(&format!("passages[{i}].key"), k)?;
            }
            text_bytes += p.text.len();
        }
    }
    if text_bytes > MAX_TEXT_BYTES {
        let field = if req.content.is_some() {
            "content"
        } else if req.messages.is_some() {
            "messages"
        } else {
            "passages"
        };
        return Err(Error::InvalidArgument(format!(
            "{field} holds {text_bytes} bytes of text; at most {MAX_TEXT_BYTES}"
        )));
    }
    if let Some(f) = &req.facts {
        check_facts(f, req.date.as_deref())?;
    }
    Ok(())
}

/// The per-call limits of `facts` (DESIGN.md §2), each refusal naming its field; `date` is the
/// call's, the start of relations that give none.
fn check_facts(f: &Facts, date: Option<&str>) -> Result<()> {
    if f.entities.len() > MAX_ENTITIES {
        return Err(Error::InvalidArgument(format!(
            "facts.entities holds {}; at most {MAX_ENTITIES} a call",
            f.entities.len()
        )));
    }
    if f.relations.len() > MAX_RELATIONS {
        return Err(Error::InvalidArgument(format!(
            "facts.relations holds {}; at most {MAX_RELATIONS} a call",
            f.relations.len()
        )));
    }
    for (i, e) in f.entities.iter().enumerate() {
        name(&format!("facts.entities[{i}].name"), &e.name)?;
        if let Some(a) = &e.attributes {
            let field = format!("facts.entities[{i}].attributes");
            crate::json_depth::check_map(&field, a).map_err(Error::InvalidArgument)?;
        }
        if let Some(t) = &e.entity_type {
            name(&format!("facts.entities[{i}].type"), t)?;
        }
    }
    for (i, r) in f.relations.iter().enumerate() {
        name(&format!("facts.relations[{i}].source"), &r.source)?;
        name(&format!("facts.relations[{i}].target"), &r.target)?;
        name(&format!("facts.relations[{i}].type"), &r.rel_type)?;
        // One rule with `relate`: a relation joins two entities, never one to itself.
        if fold(&r.source) == fold(&r.target) {
            return Err(Error::InvalidArgument(format!(
                "facts.relations[{i}].target must not name the same entity as its source"
            )));
        }
        let field = format!("facts.relations[{i}].attributes");
        if let Some(a) = &r.attributes {
            crate::json_depth::check_map(&field, a).map_err(Error::InvalidArgument)?;
        }
        check_interval(&field, r.attributes.as_ref(), date, None)?;
    }
    Ok(())
}

/// The text to store and the passages refused because a mention is absent from their text.
fn text_of(req: &Request) -> (Text, Vec<Value>) {
    // One document of `text`, cut into `spans`, with no mentions to check.
    let one = |text: String, spans: Vec<_>| {
        let passages = spans.into_iter().map(|p| (p, Vec::new())).collect();
        let doc = DocIn { text, passages, given: None, hash: DocHash::default(), id: None, tokenized: Vec::new() };
        (Text::Some(vec![doc]), Vec::new())
    };
    if let Some(c) = &req.content {
        return one(c.clone(), chunk_text(c));
    }
    if let Some(ms) = &req.messages {
        // A turn with nothing said stores nothing, as blank `content` does not (found by a
        // review: turns of "" or "   " among others were each a passage "user: "); a call of
        // only such turns is refused in `check`.
        let said = ms.iter().filter(|m| !m.content.trim().is_empty());
        let turns: Vec<(&str, &str)> = said.map(|m| (m.role.trim(), m.content.as_str())).collect();
        return one(messages_text(&turns), chunk_messages(&turns));
    }
    let Some(ps) = &req.passages else { return (Text::None, Vec::new()) };
    // Each given passage is a document of its own: addressable (forget `passage`), stored once
    // (the same text and date again is `already`), and read without its neighbours.
    let mut rejected = Vec::new();
    let mut docs = Vec::new();
    for (i, p) in ps.iter().enumerate() {
        let body = p.text.trim();
        if let Some(absent) = absent_mention(body, &p.mentions) {
            rejected.push(json!({
                "passage": i,
                "key": p.key,
                "reason": format!("mention {:?} does not occur in the passage text as a whole word", absent.trim()),
            }));
            continue;
        }
        let passage = Passage::plain(0, body.chars().count(), body.to_owned());
        docs.push(DocIn {
            text: body.to_owned(),
            passages: vec![(passage, p.mentions.clone())],
            given: Some(i),
            hash: DocHash::default(),
            id: None,
            tokenized: Vec::new(),
        });
    }
    if docs.is_empty() { (Text::None, rejected) } else { (Text::Some(docs), rejected) }
}

/// A document of the call as it is stored. One stored before keeps the label and time it was
/// first stored with: the same text and date under another `source` is not stored again, so the
/// reply and the call's relations name it as citations will.
struct CallDoc {
    id: u64,
    /// Its text, for relation provenance.
    text: String,
    label: Option<String>,
    ingested_at: i64,
}

/// What the transaction did, for the reply.
#[derive(Default)]
struct Done {
    entities: u64,
    /// Entities stored before that this call changed (types or attributes merged in).
    updated: u64,
    relations: u64,
    /// Relations stored before that this call revised (an earlier start, a later end, attributes).
    updated_relations: u64,
    passages: u32,
    /// The call's documents, new or stored before.
    docs: Vec<CallDoc>,
    changed: bool,
    unlinked: Vec<u32>,
    /// The full-text batch's buffers, freed on the calling thread that made them.
    spent: Option<fts::Spent>,
    /// The entities the call created, in the call's order.
    new_entities: Vec<u64>,
}

/// Stores `e` (created, or merged into the entity of that name); `date` and `source` are the call's,
/// kept in the history event (`remember_facts::entity_patch`).
fn upsert(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    e: &EntityIn,
    (date, label): (Option<&str>, Option<&str>),
    done: &mut Done,
    tally: &mut Tally,
) -> Result<Entity> {
    let part = &caller.part;
    let before = entity_by_name_in(tx, part, &e.name)?;
    if let Some(b) = &before
        && e.entity_type.as_deref().is_none_or(|t| b.types.iter().any(|have| fold(have) == fold(t)))
        && e.attributes.as_ref().is_none_or(|a| a.iter().all(|(k, v)| b.attributes.get(k) == Some(v)))
    {
        // Named again with nothing new (a relation's endpoint, mostly): nothing to write, unless
        // it states attributes under a label none of their writes had (`attribute_sources.rs`).
        if let Some(sent) = &e.attributes
            && attribute_sources::new_statement(tx, part, b, sent, label)?
        {
            done.changed = true;
            let record_value = serde_json::to_value(b).expect("entities serialise");
            let change = Change {
                family: "entity",
                target: &b.name,
                op: "restate",
                before: Some(record_value.clone()),
                after: Some(record_value),
                patch: Some(remember_facts::entity_patch(&e.view(), (date, label))),
            };
            record(tx, caller, change)?;
        }
        return Ok(b.clone());
    }
    let types: Vec<String> = e.entity_type.iter().cloned().collect();
    let attrs = e.attributes.clone().unwrap_or_default();
    let (entity, created) = upsert_counted(tx, part, (&e.name, &types, &attrs), caller.now, tally)?;
    if created || before.as_ref() != Some(&entity) {
        done.changed = true;
        done.entities += u64::from(created);
        done.updated += u64::from(!created);
        let patch = remember_facts::entity_patch(&e.view(), (date, label));
        let change = Change {
            family: "entity",
            target: &entity.name,
            op: if created { "create" } else { "merge" },
            before: before.map(|b| serde_json::to_value(b).expect("entities serialise")),
            after: Some(serde_json::to_value(&entity).expect("entities serialise")),
            patch: Some(patch),
        };
        record(tx, caller, change)?;
    }
    Ok(entity)
}

/// The entity a document is about by its label: a document whose `source` is exactly an entity's
/// name (sent in this call or stored; any case) is about that entity, and every passage of it is
/// linked to it, even where the text calls it otherwise ("Frank William George Lloyd" in the
/// document labelled "Frank Lloyd").
fn labelled(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    names: Option<&cache::Names>,
    sent: &[Entity],
    label: Option<&str>,
) -> Result<Option<u64>> {
    let Some(label) = label else { return Ok(None) };
    let folded = fold(label);
    if let Some(e) = sent.iter().find(|e| fold(&e.name) == folded) {
        return Ok(Some(e.id));
    }
    let Some(names) = names else { return Ok(None) };
    // Capped: only exact and case-folded names are wanted, which a capped lookup finds all of,
    // without the near spellings of every name like the label that a whole one reads.
    let opts = LookupOptions { prefix: false, limit: 4, as_name: false };
    for hit in names.lookup_with(label, opts, Effort::Capped) {
        if matches!(hit.how, MatchKind::Exact | MatchKind::CaseFolded) && entity_exists_in(tx, part, hit.id)? {
            return Ok(Some(hit.id));
        }
    }
    Ok(None)
}

/// How a call's documents are linked: the names of the stored entities, an automaton over the
/// entities sent in the call, and the entity the call's `source` label names. The same for every
/// document of the call, so made once: made per document, 1,000 passages beside 5,000 relations
/// (10,000 names sent) held the writer thread 150 s, every other write waiting.
struct CallLinks<'a> {
    names: Option<&'a cache::Names>,
    sent: Linker,
    about: Option<u64>,
}

/// Stores a new document of the call, its passages linked to stored entities, to the entities
/// sent in the call (`links`) and to each passage's own mentions.
fn store_text(
    tx: &mut WriteTxn<'_>,
    caller: &Caller,
    req: &Request,
    links: &CallLinks<'_>,
    doc_in: DocIn,
    (index, done, tally): (&mut fts::Indexer, &mut Done, &mut Tally),
) -> Result<()> {
    let DocIn { text, passages, given, hash, tokenized, id: reserved } = doc_in;
    let part = &caller.part;
    let label = req.source.as_deref();
    let date = req.date.as_deref();
    let bare = |n: &str| EntityIn { name: n.to_owned(), entity_type: None, attributes: None };
    let CallLinks { names, sent: call_linker, about } = links;
    let about = *about;
    let mut linked = Vec::with_capacity(passages.len());
    let mut tokenized = tokenized.into_iter();
    for (passage, mentions) in passages {
        let mut ids: Vec<u64> = Vec::new();
        // Read under its headings: a passage under `# Platform team` names the platform team.
        let read = passage.index_text();
        let stored = names.as_ref().map(|n| n.find(&read)).unwrap_or_default();
        for m in stored {
            // The cache may still hold a forgotten entity: link only what exists.
            if entity_exists_in(tx, part, m.entity)? {
                ids.push(m.entity);
            }
        }
        ids.extend(call_linker.find(&read).into_iter().map(|m| m.entity));
        for m in &mentions {
            ids.push(upsert(tx, caller, &bare(m), (date, label), done, tally)?.id);
        }
        ids.extend(about);
        linked.push(NewPassage { passage, given: ids, tokenized: tokenized.next() });
    }
    let doc = NewDocument { text: &text, label, date, now: caller.now, about, id: reserved, hash: &hash };
    let stored = store_document(tx, part, &doc, linked, (index, tally), &|_| Vec::new())?;
    done.docs.push(CallDoc {
        id: stored.doc_id,
        text: text.clone(),
        label: label.map(str::to_owned),
        ingested_at: caller.now,
    });
    done.passages += stored.passages;
    match given {
        Some(i) if !stored.unlinked.is_empty() => done.unlinked.push(u32::try_from(i).expect("at most 1,000 passages")),
        Some(_) => {}
        None => done.unlinked.extend(stored.unlinked),
    }
    done.changed = true;
    let change = Change {
        family: "document",
        target: &stored.doc_id.to_string(),
        op: "create",
        before: None,
        after: Some(json!({ "doc_id": id(stored.doc_id), "source": label, "date": date, "passages": stored.passages })),
        patch: None,
    };
    record(tx, caller, change)?;
    Ok(())
}

/// Where each relation sent with text comes from: the call's document that names both its ends,
/// else its source, else the first; `asserted` when the call stored no text. Worked out once for
/// the call, with one automaton over every relation end and one pass over each document: judged
/// pair by pair (an automaton made per name and document, the document folded each time), 100
/// passages beside 1,000 relations named in none spent 4.5 s of the writer thread on it, and the
/// cost grows with passages × relations.
struct Provenance<'a> {
    docs: &'a [CallDoc],
    /// The ends of each relation, as ids of `naming`.
    ends: Vec<(usize, usize)>,
    /// For each distinct end name, the indices of the documents that name it, ascending.
    naming: Vec<Vec<usize>>,
}

impl<'a> Provenance<'a> {
    fn new(docs: &'a [CallDoc], relations: &[RelationIn]) -> Provenance<'a> {
        let mut ids: HashMap<&str, usize> = HashMap::new();
        let mut names: Vec<&str> = Vec::new();
        let mut ends = Vec::with_capacity(relations.len());
        for r in relations {
            let [source, target] = [&r.source, &r.target].map(|name| {
                *ids.entry(name.as_str()).or_insert_with(|| {
                    names.push(name.as_str());
                    names.len() - 1
                })
            });
            ends.push((source, target));
        }
        let mut naming = vec![Vec::new(); names.len()];
        if !docs.is_empty() && !names.is_empty() {
            let linker = Linker::new((0u64..).zip(names.iter().copied()));
            for (d, doc) in docs.iter().enumerate() {
                for id in linker.named_in(&doc.text) {
                    naming[usize::try_from(id).expect("an index of `names`")].push(d);
                }
            }
        }
        Provenance { docs, ends, naming }
    }

    fn source(&self, relation: usize, label: Option<&String>) -> Source {
        let (source, target) = self.ends[relation];
        let (by_source, by_target) = (&self.naming[source], &self.naming[target]);
        let both = by_source.iter().find(|d| by_target.binary_search(d).is_ok());
        let pick = both.or(by_source.first()).map_or(self.docs.first(), |&d| self.docs.get(d));
        match pick {
            Some(d) => Source::Document { doc_id: d.id, label: d.label.clone() },
            None => Source::Asserted { label: label.cloned() },
        }
    }
}

fn write(
    tx: &mut WriteTxn<'_>,
    dir: &std::path::Path,
    caller: &Caller,
    req: &Request,
    (text, mut index): (Text, fts::Indexer),
    facts_in: &remember_facts::Facts,
) -> Result<Done> {
    let part = &caller.part;
    part.register(tx)?;
    // Ids come from one counter, so the entities this call creates are those from here on.
    let first_new = read_next_id(tx, part)?;
    // Before this call creates entities: the cached names describe exactly the stored ones. A
    // facts-only call links nothing and needs none.
    let names = match text {
        Text::Some(_) => Some(cache::names_in(dir, tx, part)?),
        Text::None => None,
    };
    let mut done = Done::default();
    let mut tally = Tally::default();
    let facts = req.facts.as_ref();
    let entities = facts.map_or(&[][..], |f| &f.entities);
    let views: Vec<EntityView<'_>> = entities.iter().map(EntityIn::view).collect();
    let (mut sent, created) = {
        let date = (req.date.as_deref(), req.source.as_deref());
        let mut merge =
            |tx: &mut WriteTxn<'_>, i: usize, t: &mut Tally| upsert(tx, caller, &entities[i], date, &mut done, t);
        remember_facts::store_entities(tx, caller, facts_in, &views, &mut merge, &mut tally)?
    };
    done.entities += created;
    done.changed |= created > 0;
    let bare = |n: &str| EntityIn { name: n.to_owned(), entity_type: None, attributes: None };
    // Each endpoint is resolved (created if new) once, by id; its relations reuse it.
    let ends = {
        let date = (req.date.as_deref(), req.source.as_deref());
        let mut create =
            |tx: &mut WriteTxn<'_>, n: &str, t: &mut Tally| Ok(upsert(tx, caller, &bare(n), date, &mut done, t)?.id);
        remember_facts::resolve(tx, caller, facts_in, &mut create, &mut tally)?
    };
    for id in sent.iter().map(|e| e.id).chain(ends.iter().copied()) {
        if id >= first_new && !done.new_entities.contains(&id) {
            done.new_entities.push(id);
        }
    }
    if matches!(text, Text::Some(_)) {
        // The call's text links to every entity the call names, endpoints included.
        for &end in &ends {
            sent.extend(entity_in(tx, part, end)?);
        }
    }
    if let Text::Some(docs) = text {
        let names = names.as_deref();
        let sent_linker = Linker::new(sent.iter().map(|e| (e.id, e.name.as_str())));
        let about = labelled(tx, part, names, &sent, req.source.as_deref())?;
        let links = CallLinks { names, sent: sent_linker, about };
        // The call's documents take consecutive ids, in the call's order, so the full-text
        // segment laid out before the transaction (`Indexer::prepare`, by position) holds. One
        // stored before leaves its id unused.
        let first = read_next_id(tx, part)?;
        write_next_id(tx, part, first + docs.len() as u64)?;
        for (at, mut d) in (first..).zip(docs) {
            d.id = Some(at);
            if let Some(existing) = stored_doc(tx, part, &mut d.hash, &d.text, req.date.as_deref())? {
                let doc = document_in(tx, part, existing)?
                    .ok_or_else(|| Error::corrupt(None, format!("document {existing} is indexed but not stored")))?;
                done.docs.push(CallDoc { id: existing, text: d.text, label: doc.label, ingested_at: doc.ingested_at });
            } else {
                let counted = (&mut index, &mut done, &mut tally);
                store_text(tx, caller, req, &links, d, counted)?;
            }
        }
        done.spent = Some(index.finish_spent(tx)?);
    }
    let relations = facts.map_or(&[][..], |f| &f.relations);
    let label = req.source.as_ref();
    let provenance = Provenance::new(&done.docs, relations);
    let source_of = |i| provenance.source(i, label);
    let stored = remember_facts::store(tx, caller, facts_in, &ends, &source_of, &mut tally)?;
    // The call's count changes, one write per touched count.
    tally.flush(tx)?;
    done.relations += stored.created;
    done.updated_relations += stored.updated;
    done.changed |= stored.changed;
    Ok(done)
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    run_with_texts(store, caller, body, None)
}

/// `run`, with each passage's text taken from `texts` (same order) when given, in place of the
/// placeholder the body holds.
pub(super) fn run_with_texts(store: &Store, caller: &Caller, body: &[u8], texts: Option<Vec<String>>) -> Result<Value> {
    let mut req: Request = parse("remember", body)?;
    if let Some(texts) = texts {
        let Some(passages) = req.passages.as_mut() else {
            return Err(Error::InvalidArgument("remember: texts were sent beside a body without passages".into()));
        };
        if passages.len() != texts.len() {
            return Err(Error::InvalidArgument(format!(
                "remember: {} texts were sent for {} passages",
                texts.len(),
                passages.len()
            )));
        }
        for (p, text) in passages.iter_mut().zip(texts) {
            p.text = text;
        }
    }
    if let Some(facts) = req.facts.as_mut() {
        for (i, e) in facts.entities.iter_mut().enumerate() {
            trim_keys(&format!("facts.entities[{i}].attributes"), &mut e.attributes)?;
        }
        for (i, r) in facts.relations.iter_mut().enumerate() {
            trim_keys(&format!("facts.relations[{i}].attributes"), &mut r.attributes)?;
        }
    }
    check(&req)?;
    let (mut text, rejected) = text_of(&req);
    let had_text = !matches!(text, Text::None);
    if !had_text && req.facts.is_none() {
        // Every passage was refused: nothing to store.
        return Ok(reply(&Done::default(), false, &rejected));
    }
    // One index batch for the call (each term's postings from all its passages in one block),
    // tokenized here rather than on the writer thread.
    let mut index = fts::Indexer::new(caller.part.raw())?;
    if let Text::Some(docs) = &mut text {
        for d in docs.iter_mut() {
            d.hash = hash_key(&caller.part, &d.text, req.date.as_deref());
            d.tokenized = d.passages.iter().map(|(p, _)| index.tokenize(&p.index_text())).collect::<Result<_>>()?;
        }
        // The segment laid out here too, by each passage's position (document in the call,
        // ordinal); the transaction raises those to the ids it reserves.
        let places: Vec<(u64, u32, &fts::Tokenized)> = (0_u64..)
            .zip(docs.iter())
            .flat_map(|(at, d)| (0_u32..).zip(&d.tokenized).map(move |(ordinal, t)| (at, ordinal, t)))
            .collect();
        index.prepare(&places);
    }
    // The facts' per-item work (folding, attributes, history patches), likewise.
    let entities = req.facts.iter().flat_map(|f| &f.entities).map(EntityIn::view);
    let relations = req.facts.iter().flat_map(|f| &f.relations).map(|r| RelationView {
        source: &r.source,
        target: &r.target,
        rel_type: &r.rel_type,
        attributes: r.attributes.as_ref(),
    });
    let facts = remember_facts::prepare(entities, relations, (req.date.as_deref(), req.source.as_deref()));
    let dir = store.dir().to_path_buf();
    let who = caller.clone();
    let (done, _) = store.write(move |tx| write(tx, &dir, &who, &req, (text, index), &facts))?;
    // Nothing changed: every document (if any) was stored before, with every fact.
    let already = !done.changed;
    let mut out = reply(&done, already, &rejected);
    duplicates::annotate(store, &store.snapshot()?, caller, &done.new_entities, &mut out)?;
    Ok(out)
}

fn reply(done: &Done, already: bool, rejected: &[Value]) -> Value {
    let mut out = json!({
        "stored": { "entities": done.entities, "relations": done.relations, "passages": done.passages },
        "updated": { "entities": done.updated, "relations": done.updated_relations },
        "already": already,
        "extraction": "explicit",
        "linking": "linked",
        "unlinked_passages": done.unlinked,
        "rejected": rejected,
        "meaning": "not_armed",
        "possible_duplicates": [],
    });
    let source = |d: &CallDoc| document_source(d.id, d.label.as_deref(), d.ingested_at);
    if let Some(first) = done.docs.first() {
        out["doc_id"] = id(first.id);
        out["source"] = source(first);
    }
    if done.docs.len() > 1 {
        out["doc_ids"] = done.docs.iter().map(|d| id(d.id)).collect();
        out["sources"] = done.docs.iter().map(source).collect();
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{TODAY, assert_citations_slice, call, caller, fresh};
    use crate::knowledge::trees::{DOC, ENT, REL};
    use serde_json::{Value, json};

    fn tree_sizes(store: &crate::store::Store) -> (u64, u64, u64) {
        let snap = store.snapshot().unwrap();
        (snap.tree_len(ENT).unwrap_or(0), snap.tree_len(REL).unwrap_or(0), snap.tree_len(DOC).unwrap_or(0))
    }

    #[test]
    fn the_same_text_under_another_source_answers_with_the_source_as_stored() {
        let (_dir, store, _part) = fresh();
        let text = |source: &str| {
            json!({"content": "Ada Lovelace wrote the first program.", "date": "1843-01-01", "source": source,
                "facts": {"relations": [{"source": "Ada Lovelace", "target": "first program", "type": "wrote"}]}})
        };
        let first = call(&store, &caller(10), "remember", &text("notes.txt")).unwrap();
        assert_eq!(first["source"]["name"], json!("notes.txt"));
        let again = call(&store, &caller(20), "remember", &text("copy.txt")).unwrap();
        assert_eq!(again["already"], json!(true));
        assert_eq!(again["doc_id"], first["doc_id"]);
        // The reply names the document as stored (and cited), not the label this call sent.
        assert_eq!(again["source"], first["source"]);
        assert_eq!(again["source"]["name"], json!("notes.txt"));
        let recalled = call(&store, &caller(TODAY), "recall", &json!({"subject": "Ada Lovelace"})).unwrap();
        assert_eq!(recalled["facts"][0]["citation"]["source"], first["source"]);
    }

    /// The audit's case: the same content with the same instant written two ways is `already`,
    /// for each text form (a passage of its own is a document too).
    #[test]
    fn the_same_content_at_the_same_instant_spelled_otherwise_is_already() {
        let (_dir, store, _part) = fresh();
        for (form, value) in [
            ("content", json!("Xavier Quillfeather moved to Oslo.")),
            ("passages", json!([{"text": "Olga Petrova moved to Riga.", "mentions": []}])),
            ("messages", json!([{"role": "user", "content": "Mira Lund moved to Bergen."}])),
        ] {
            let body = |date: &str| json!({form: value, "date": date});
            let first = call(&store, &caller(10), "remember", &body("2024-01-01")).unwrap();
            assert_eq!(first["already"], json!(false), "{form}");
            for date in ["2024-01-01T00:00:00Z", "2024-01-01T00:00:00.000+00:00", "2024-01-01T02:00:00+02:00"] {
                let again = call(&store, &caller(20), "remember", &body(date)).unwrap();
                assert_eq!((&again["already"], &again["doc_id"]), (&json!(true), &first["doc_id"]), "{form} {date}");
            }
            let other = call(&store, &caller(30), "remember", &body("2024-01-02T00:00:00Z")).unwrap();
            assert_eq!(other["already"], json!(false), "{form}: another instant");
        }
        assert_eq!(tree_sizes(&store).2, 6);
    }

    #[test]
    fn content_with_facts_links_cites_and_is_stored_once() {
        let (_dir, store, part) = fresh();
        let body = json!({
            "content": "Priya Raman joined Acme in 2024. She leads the storage team. Ünal 🎉 met Priya at Acme's Berlin office.",
            "facts": {
                "entities": [{"name": "Priya Raman", "type": "person"}, {"name": "Acme", "type": "company"}],
                "relations": [{"source": "Priya Raman", "target": "Acme", "type": "works_at"}],
            },
            "date": "2024-05-01",
            "source": "onboarding chat",
        });
        let r = call(&store, &caller(10), "remember", &body).unwrap();
        assert_eq!(r["stored"], json!({"entities": 2, "relations": 1, "passages": 1}));
        assert_eq!(r["already"], json!(false));
        assert_eq!(r["extraction"], json!("explicit"));
        assert_eq!(r["meaning"], json!("not_armed"));
        assert_eq!(r["unlinked_passages"], json!([]));
        assert!(r["doc_id"].is_string());
        let again = call(&store, &caller(20), "remember", &body).unwrap();
        assert_eq!(again["already"], json!(true));
        assert_eq!(again["doc_id"], r["doc_id"]);
        assert_eq!(again["stored"], json!({"entities": 0, "relations": 0, "passages": 0}));
        assert_eq!(again["updated"], json!({"entities": 0, "relations": 0}));
        let role = json!({"facts": {"entities": [{"name": "Priya Raman", "attributes": {"role": "lead"}}]}});
        let changed = call(&store, &caller(25), "remember", &role).unwrap();
        assert_eq!(
            (&changed["stored"]["entities"], &changed["updated"]),
            (&json!(0), &json!({"entities": 1, "relations": 0}))
        );
        assert_eq!(tree_sizes(&store), (2, 1, 1));
        let recalled = call(&store, &caller(TODAY), "recall", &json!({"subject": "Priya"})).unwrap();
        let fact = &recalled["facts"][0];
        assert_eq!(fact["citation"]["source"]["kind"], json!("document"));
        assert_eq!(fact["citation"]["source"]["name"], json!("onboarding chat"));
        assert_eq!(fact["citation"]["span"]["text"], json!("Priya Raman joined Acme in 2024."));
        assert_eq!(fact["source_date"], json!("2024-05-01"));
        assert_citations_slice(&store, &part, &recalled);
    }

    #[test]
    fn messages_are_one_turn_a_passage() {
        let (_dir, store, _part) = fresh();
        let body = json!({"messages": [
            {"role": "user", "content": "Where does Priya work?"},
            {"role": "assistant", "content": "Priya works at Acme.\nShe started in May."},
        ]});
        let r = call(&store, &caller(1), "remember", &body).unwrap();
        assert_eq!(r["stored"]["passages"], json!(2));
        let c = call(&store, &caller(2), "context", &json!({"question": "When did she start?"})).unwrap();
        let texts: Vec<&str> = c["items"].as_array().unwrap().iter().filter_map(|i| i["text"].as_str()).collect();
        assert!(texts.contains(&"assistant: Priya works at Acme. She started in May."), "{texts:?}");
    }

    #[test]
    fn a_turn_with_nothing_said_stores_nothing() {
        let (_dir, store, part) = fresh();
        let body = json!({"messages": [
            {"role": "user", "content": ""},
            {"role": "assistant", "content": "   "},
            {"role": "user", "content": "Priya works at Acme."},
            {"role": "assistant", "content": "\n\t"},
        ]});
        let r = call(&store, &caller(1), "remember", &body).unwrap();
        assert_eq!(r["stored"]["passages"], json!(1), "{r}");
        let records = crate::knowledge::testing_api::export_pages(&store, &part, 500).concat();
        let doc = records.iter().find(|d| d["kind"] == "document").unwrap();
        assert_eq!(doc["text"], "user: Priya works at Acme.");
        // The same words without the blank turns are the same document.
        let again = json!({"messages": [{"role": "user", "content": "Priya works at Acme."}]});
        assert_eq!(call(&store, &caller(2), "remember", &again).unwrap()["already"], json!(true));
    }

    #[test]
    fn a_passage_whose_mention_is_absent_is_rejected_by_name_and_the_others_stored() {
        let (_dir, store, part) = fresh();
        let body = json!({"passages": [
            {"text": "Jonas Weber runs the Berlin office.", "mentions": ["jonas weber"], "key": "p1"},
            {"text": "The canteen serves soup.", "mentions": ["Jonas"], "key": "p2"},
            {"text": "Priyanka visited.", "mentions": ["Priya"]},
        ]});
        let r = call(&store, &caller(1), "remember", &body).unwrap();
        assert_eq!(r["stored"]["passages"], json!(1));
        let rejected = r["rejected"].as_array().unwrap();
        assert_eq!(rejected.len(), 2);
        assert_eq!(rejected[0]["key"], json!("p2"));
        assert_eq!(rejected[1]["passage"], json!(2), "a part of a word is not a mention");
        assert!(rejected[0]["reason"].as_str().unwrap().contains("Jonas"));
        let c = call(&store, &caller(2), "context", &json!({"question": "soup canteen"})).unwrap();
        assert_eq!(c["grounding"]["verdict"], json!("nothing_stored"), "a rejected passage is not stored: {c}");
        let recalled = call(&store, &caller(3), "recall", &json!({"subject": "Jonas Weber"})).unwrap();
        assert_eq!(recalled["state"], json!("answered"), "a mention creates its entity");
        let ctx = call(&store, &caller(4), "context", &json!({"question": "Who runs the Berlin office?"})).unwrap();
        assert_citations_slice(&store, &part, &ctx);
    }

    #[test]
    fn each_given_passage_is_a_document_of_its_own() {
        let (_dir, store, _part) = fresh();
        let body = json!({"passages": [
            {"text": "Jonas Weber runs the Berlin office.", "mentions": ["Jonas Weber"]},
            {"text": "The canteen serves soup.", "mentions": []},
            {"text": "Priya Raman leads storage; Jonas Weber hired her.", "mentions": ["Priya Raman"]},
        ], "facts": {"relations": [{"source": "Jonas Weber", "target": "Priya Raman", "type": "hired"}]}});
        let r = call(&store, &caller(1), "remember", &body).unwrap();
        let ids = r["doc_ids"].as_array().unwrap().clone();
        assert_eq!(ids.len(), 3);
        assert_eq!(r["doc_id"], ids[0]);
        assert_eq!(r["unlinked_passages"], json!([1]), "reported by the passage's index in the call");
        // The relation cites the passage that names both ends.
        let rec = call(&store, &caller(2), "recall", &json!({"subject": "Priya Raman"})).unwrap();
        let fact = rec["facts"].as_array().unwrap().iter().find(|f| f["relation"] == json!("hired")).unwrap();
        assert_eq!(fact["citation"]["source"]["doc_id"], ids[2]);
        assert_eq!(fact["citation"]["span"]["text"], json!("Priya Raman leads storage; Jonas Weber hired her."));
        // Forgetting one passage leaves the others.
        let f = call(&store, &caller(3), "forget", &json!({"passage": ids[1]})).unwrap();
        assert_eq!(f["state"], json!("forgotten"), "{f}");
        let c = call(&store, &caller(4), "context", &json!({"question": "Who runs the Berlin office?"})).unwrap();
        assert!(c["items"].as_array().unwrap().iter().any(|i| i["doc_id"] == ids[0]), "{c}");
        // Again: the two still stored are `already`; the forgotten one comes back as new.
        let again = call(&store, &caller(5), "remember", &body).unwrap();
        assert_eq!(again["stored"]["passages"], json!(1));
        assert_eq!(again["doc_ids"].as_array().unwrap()[0], ids[0]);
    }

    #[test]
    fn a_relation_cites_the_passage_naming_both_ends_else_its_source_else_the_first() {
        let (_dir, store, _part) = fresh();
        let body = json!({"passages": [
            {"text": "The canteen serves soup.", "mentions": []},
            {"text": "Ana Silva leads design.", "mentions": []},
            {"text": "Ana Silva hired Bo Chen.", "mentions": []},
        ], "facts": {"relations": [
            {"source": "Ana Silva", "target": "Bo Chen", "type": "hired"},
            {"source": "Ana Silva", "target": "Cy Diaz", "type": "knows"},
            {"source": "Eve Ng", "target": "Bo Chen", "type": "knows"},
        ]}});
        let r = call(&store, &caller(1), "remember", &body).unwrap();
        let ids = r["doc_ids"].as_array().unwrap().clone();
        let cited = |subject: &str, relation: &str| {
            let rec = call(&store, &caller(2), "recall", &json!({"subject": subject})).unwrap();
            let facts = rec["facts"].as_array().unwrap().clone();
            let fact =
                facts.into_iter().find(|f| f["relation"] == json!(relation) && f["direction"] == json!("outbound"));
            fact.unwrap()["citation"]["source"]["doc_id"].clone()
        };
        assert_eq!(cited("Ana Silva", "hired"), ids[2], "both ends named");
        assert_eq!(cited("Ana Silva", "knows"), ids[1], "the first naming the source");
        assert_eq!(cited("Eve Ng", "knows"), ids[0], "neither named: the first passage");
    }

    #[test]
    fn facts_only_are_asserted_and_again_is_already() {
        let (_dir, store, _part) = fresh();
        let body = json!({"facts": {"relations": [{"source": "Acme", "target": "Berlin", "type": "located_in"}]}});
        let r = call(&store, &caller(1), "remember", &body).unwrap();
        assert_eq!(r["stored"], json!({"entities": 2, "relations": 1, "passages": 0}));
        assert!(r.get("doc_id").is_none());
        let again = call(&store, &caller(2), "remember", &body).unwrap();
        assert_eq!(again["already"], json!(true));
        let recalled = call(&store, &caller(3), "recall", &json!({"subject": "Acme"})).unwrap();
        assert_eq!(recalled["facts"][0]["citation"]["source"]["kind"], json!("asserted"));
        assert_eq!(recalled["facts"][0]["citation"]["span_state"], json!("asserted"));
    }

    #[test]
    fn the_calls_date_is_each_facts_source_date_beside_a_given_valid_from() {
        let (_dir, store, _part) = fresh();
        let ann = json!({"source": "Ann", "target": "Globex", "type": "works_at"});
        let bo = json!({"source": "Bo", "target": "Globex", "type": "works_at",
            "attributes": {"valid_from": "2023-01-01"}});
        let body = json!({"date": "2022-01-01", "facts": {"relations": [ann, bo]}});
        call(&store, &caller(1), "remember", &body).unwrap();
        let dates = |subject: &str| {
            let r = call(&store, &caller(TODAY), "recall", &json!({"subject": subject})).unwrap();
            (r["facts"][0]["source_date"].clone(), r["facts"][0]["valid_from"].clone())
        };
        // The date alone is both when the source said it and when it became true.
        assert_eq!(dates("Ann"), (json!("2022-01-01"), json!("2022-01-01")));
        // A given valid_from is when it became true; the source still said it on the call's date.
        assert_eq!(dates("Bo"), (json!("2022-01-01"), json!("2023-01-01")));
    }

    fn refused(body: &Value, field: &str) {
        let (_dir, store, _part) = fresh();
        let err = call(&store, &caller(1), "remember", body).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT");
        assert!(err.to_string().contains(field), "{err} should name {field}");
        assert_eq!(tree_sizes(&store), (0, 0, 0), "a refused call changes nothing");
    }

    #[test]
    fn every_limit_refuses_the_whole_call_by_field() {
        let ents: Vec<Value> = (0..1001).map(|i| json!({"name": format!("e{i}"), "type": "t"})).collect();
        refused(&json!({"facts": {"entities": ents}}), "facts.entities");
        let rels: Vec<Value> =
            (0..5001).map(|i| json!({"source": "a", "target": format!("b{i}"), "type": "t"})).collect();
        refused(&json!({"facts": {"relations": rels}}), "facts.relations");
        refused(&json!({"content": "word ".repeat(220_000)}), "content");
        let many: Vec<Value> = (0..1001).map(|i| json!({"text": format!("p{i}"), "mentions": []})).collect();
        refused(&json!({"passages": many}), "passages");
        refused(&json!({"passages": [{"text": "x".repeat(65 * 1024), "mentions": []}]}), "passages[0].text");
        refused(&json!({"facts": {"entities": [{"name": "n".repeat(1025), "type": "t"}]}}), "facts.entities[0].name");
        refused(
            &json!({"facts": {"relations": [{"source": "a", "target": "b", "type": ""}]}}),
            "facts.relations[0].type",
        );
        refused(&json!({"content": "x", "date": "May 1st"}), "date");
        refused(&json!({"content": "x", "messages": []}), "one of");
        refused(&json!({}), "give content");
        refused(&json!({"content": "   "}), "content");
        let blank_turns = json!([{"role": "user", "content": ""}, {"role": "assistant", "content": "  "}]);
        refused(&json!({"messages": blank_turns}), "messages must not be blank");
        refused(
            &json!({"facts": {"entities": [{"name": " ", "type": "t"}]}}),
            "facts.entities[0].name must not be blank",
        );
        refused(&json!({"content": 5}), "remember");
        let rel = json!({"source": "a", "target": "b", "type": "t", "attributes": {"valid_from": "soon"}});
        refused(&json!({"facts": {"relations": [rel]}}), "facts.relations[0].attributes.valid_from");
        let ok = json!({"source": "a", "target": "b", "type": "t"});
        let inverted = json!({"source": "a", "target": "b", "type": "t", "attributes": {"valid_to": "2023-01-01"}});
        refused(
            &json!({"facts": {"relations": [ok, inverted]}, "date": "2024-01-01"}),
            "facts.relations[1].attributes.valid_to",
        );
    }

    /// `relate` refuses a relation from an entity to itself; so does `remember`, for the whole
    /// call (found by an audit: it stored the self-loop and recall listed it twice).
    #[test]
    fn a_relation_from_an_entity_to_itself_is_refused_as_relate_refuses_it() {
        let wanda = json!({"name": "Wanda", "type": "person"});
        let ok = json!({"source": "Wanda", "target": "Acme", "type": "works_at"});
        let looped = json!({"source": "Wanda", "target": " wanda ", "type": "self"});
        refused(
            &json!({"content": "Atomic test sentence about Wanda.", "facts": {"entities": [wanda], "relations": [ok, looped]}}),
            "facts.relations[1].target",
        );
        let (_dir, store, _part) = fresh();
        let err =
            call(&store, &caller(1), "relate", &json!({"from": "Wanda", "to": "WANDA", "type": "self"})).unwrap_err();
        assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
    }

    #[test]
    fn texts_sent_beside_the_body_store_what_texts_inside_it_store() {
        let inline = json!({"passages": [
            {"text": "Jonas Weber runs the Berlin office.", "mentions": ["Jonas Weber"], "key": "a"},
            {"text": "The canteen serves soup.", "mentions": ["Jonas"]},
        ], "date": "2024-05-01"});
        let beside = json!({"passages": [
            {"text": "", "mentions": ["Jonas Weber"], "key": "a"},
            {"text": "", "mentions": ["Jonas"]},
        ], "date": "2024-05-01"});
        let texts = || vec!["Jonas Weber runs the Berlin office.".to_owned(), "The canteen serves soup.".to_owned()];
        let (_a, store_a, _) = fresh();
        let (_b, store_b, _) = fresh();
        let want = call(&store_a, &caller(1), "remember", &inline).unwrap();
        let body = serde_json::to_vec(&beside).unwrap();
        let got = super::super::call_with_texts(&store_b, "remember", &caller(1), &body, texts()).unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&got).unwrap(), want);
        assert_eq!(tree_sizes(&store_b), tree_sizes(&store_a));
        let question = json!({"question": "Who runs the Berlin office?"});
        assert_eq!(
            call(&store_b, &caller(2), "context", &question).unwrap(),
            call(&store_a, &caller(2), "context", &question).unwrap()
        );
        // Again: `already`, as for the same texts inline.
        let again = super::super::call_with_texts(&store_b, "remember", &caller(3), &body, texts()).unwrap();
        assert_eq!(serde_json::from_slice::<Value>(&again).unwrap()["already"], json!(true));
        // A count of texts other than the passages', or another verb, is refused and changes nothing.
        let (_c, store_c, _) = fresh();
        for (verb, texts) in [("remember", vec!["one".to_owned()]), ("relate", texts())] {
            let err = super::super::call_with_texts(&store_c, verb, &caller(1), &body, texts).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT", "{err}");
        }
        let facts = serde_json::to_vec(&json!({"facts": {"entities": [{"name": "Acme"}]}})).unwrap();
        let err = super::super::call_with_texts(&store_c, "remember", &caller(1), &facts, texts()).unwrap_err();
        assert!(err.to_string().contains("without passages"), "{err}");
        // A placeholder left empty fails the passage's check as an empty text does.
        let err =
            super::super::call_with_texts(&store_c, "remember", &caller(1), &body, vec![String::new(), "x".into()])
                .unwrap_err();
        assert!(err.to_string().contains("passages[0].text"), "{err}");
        assert_eq!(tree_sizes(&store_c), (0, 0, 0));
    }

    #[test]
    fn the_call_writes_history_events() {
        let (_dir, store, _part) = fresh();
        let body = json!({"content": "Acme is in Berlin.", "facts": {"relations": [{"source": "Acme", "target": "Berlin", "type": "located_in"}]}});
        call(&store, &caller(1), "remember", &body).unwrap();
        let events = store.snapshot().unwrap().tree_len(crate::history::EVENT).unwrap();
        assert_eq!(events, 4, "two entities, one document, one fact");
    }
}
