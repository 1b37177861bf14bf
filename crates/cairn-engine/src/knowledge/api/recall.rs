//! `memory_recall`: everything about one entity, named by `subject` (exact, case-folded, whole
//! word of a longer name, near spelling) or by an `attribute: {key, value}`. Facts come from both
//! directions with derived facts after them, each cited; `as_of` (ms) reads what the store knew
//! then, `valid_at` what was true then. Nothing is invented: a miss is `nothing_stored` with "did
//! you mean" names of the same partition; an ambiguous or empty subject is `could_not_judge`.
//! A reply is one page of `k` facts; its `next` cursor resumes the same request where it ended,
//! read as of the first page (`recall_cursor.rs`).

use super::derived::derived_fact;
use super::recall_cursor::{Binding, Page, given, refused};
use super::{Caller, parse};
use crate::error::{Error, Result};
use crate::knowledge::attr_index;
use crate::knowledge::attribute_time::{attributes_when, entity_when};
use crate::knowledge::cache::{self, Names};
use crate::knowledge::citation::Citer;
use crate::knowledge::derive::Derived;
use crate::knowledge::elsewhere;
use crate::knowledge::graph::{self, Entity, Source, entity_by_id};
use crate::knowledge::limits::{MAX_NAME_LEN, MAX_RECALL_K, RECALL_K};
use crate::knowledge::outside_time::outside_time;
use crate::knowledge::recall::{facts_of, live_neighbours};
use crate::knowledge::valid;
use crate::knowledge::wire::{self, FoundBy};
use crate::knowledge::{MAX_HOPS, Neighbour};
use crate::knowledge::{SUGGESTIONS, When};
use crate::snapshot::Snapshot;
use crate::store::Store;
use crate::text::{LookupOptions, MatchKind, fold, is_common_word, may_name_alone, title_case, tokens};
use serde::Deserialize;
use serde_json::{Value, json};
use std::cmp::Reverse;
use std::collections::{HashMap, HashSet};

/// The most stored names a short subject's `could_not_judge` offers (those holding it as a word).
const SHORT_CANDIDATES: usize = 8;
use unicode_segmentation::UnicodeSegmentation;

#[derive(Debug, Default, Deserialize)]
struct Request {
    subject: Option<String>,
    attribute: Option<AttributeIn>,
    as_of: Option<i64>,
    valid_at: Option<String>,
    k: Option<usize>,
    /// How far to walk from the subject: 1 (its own facts, the default) to 3.
    hops: Option<usize>,
    #[serde(default)]
    compact: bool,
    /// Where to go on: the `next` of the same request's previous page.
    cursor: Option<String>,
    /// From the node: the only scopes the caller's token may use (absent: every one of its
    /// user's), which alone a miss may name as holding the subject (`elsewhere`).
    #[serde(rename = "readableScopes")]
    readable_scopes: Option<Vec<String>>,
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

/// Up to three stored names spelled like `query` (near, then names it begins), then names it
/// holds or abbreviates word by word (`Acme Robotics Inc`, `Priya R.`: `held_or_abbreviated`),
/// same partition.
pub(super) fn did_you_mean(snap: &Snapshot, caller: &Caller, names: &Names, query: &str) -> Result<Vec<String>> {
    suggest(snap, caller, names, query, |how| matches!(how, MatchKind::Near { .. } | MatchKind::Prefix))
}

/// `did_you_mean` for a verb that takes a stored name exactly (up to case), for which a word of
/// a longer name (`Priya` → `Priya Raman`) is a suggestion too: `memory_history {subject}`.
pub(crate) fn names_meant(store: &Store, snap: &Snapshot, caller: &Caller, query: &str) -> Result<Vec<String>> {
    let names = cache::names(store.dir(), snap, &caller.part)?;
    suggest(snap, caller, &names, query, |how| !matches!(how, MatchKind::Exact | MatchKind::CaseFolded))
}

fn suggest(
    snap: &Snapshot,
    caller: &Caller,
    names: &Names,
    query: &str,
    offered: impl Fn(MatchKind) -> bool,
) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let spelled = names
        .lookup(query, LookupOptions { prefix: true, limit: 64, as_name: false })
        .into_iter()
        .filter(|hit| offered(hit.how))
        .map(|hit| (hit.id, hit.name));
    for (id, name) in spelled.chain(names.held_or_abbreviated(query, 16)) {
        if out.len() == SUGGESTIONS {
            break;
        }
        if !out.contains(&name) && visible(snap, caller, id, None)?.is_some() {
            out.push(name);
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
    let k = req.k.unwrap_or(RECALL_K);
    if !(1..=MAX_RECALL_K).contains(&k) {
        return Err(Error::InvalidArgument(format!("k must be 1..={MAX_RECALL_K}, got {k}")));
    }
    if req.hops.is_some_and(|h| !(1..=MAX_HOPS).contains(&h)) {
        return Err(Error::InvalidArgument(format!("hops must be 1..={MAX_HOPS}")));
    }
    Ok(k)
}

/// The most facts beyond the subject's own that `farther` reads: past it, the count of what was
/// cut is a lower bound (`omitted_more`), so a walk into a dense graph stays bounded.
const MAX_FARTHER_READ: usize = 10_000;

/// What `farther` found: the facts kept with their hop, how many more it cut, and whether it
/// stopped reading with more unread.
type Farther = (Vec<(Neighbour, usize)>, usize, bool);

/// The live relations 2..=`hops` links away from `subject`, each once, with the hop it was
/// reached at, nearest first; `first` are the subject's own (hop 1). Keeps `room` of them and
/// counts the rest it saw; `true` when it stopped at `MAX_FARTHER_READ` with more unread.
fn farther(
    snap: &Snapshot,
    caller: &Caller,
    (subject, first): (u64, &[Neighbour]),
    hops: usize,
    room: usize,
    when: &When,
) -> Result<Farther> {
    let mut seen_rel: HashSet<u64> = first.iter().map(|n| n.relation.id).collect();
    let mut seen: HashSet<u64> = HashSet::from([subject]);
    let mut frontier: Vec<u64> = first.iter().map(|n| n.other).filter(|o| seen.insert(*o)).collect();
    let (mut out, mut cut) = (Vec::new(), 0);
    for hop in 2..=hops {
        let mut next = Vec::new();
        for entity in frontier {
            for n in live_neighbours(snap, &caller.part, entity, when)? {
                if out.len() + cut >= MAX_FARTHER_READ {
                    return Ok((out, cut, true));
                }
                if seen_rel.insert(n.relation.id) {
                    if seen.insert(n.other) {
                        next.push(n.other);
                    }
                    if out.len() < room {
                        out.push((n, hop));
                    } else {
                        cut += 1;
                    }
                }
            }
        }
        frontier = next;
    }
    Ok((out, cut, false))
}

fn same_value(stored: &Value, wanted: &Value) -> bool {
    match (stored, wanted) {
        (Value::String(a), Value::String(b)) => fold(a) == fold(b),
        (a, b) => a == b,
    }
}

fn answer_none(req: &Request, did_you_mean: &[String]) -> Value {
    json!({
        "state": "nothing_stored",
        "subject": null,
        "facts": [],
        "did_you_mean": did_you_mean,
        "next": null,
        "seeding": { "matched": null, "query": req.subject },
        "meaning": { "state": "not_armed" },
    })
}

/// Whether a subject is written as a name: every word in Title case ("May", "Nobody At All"),
/// none a determiner. A subject is the caller's explicit choice, so such a one is a name even
/// when its words are common ones, which alone never name anything ("may"). Capitals alone
/// ("MAY") say nothing, and "The" is the article whatever its case: as `memory_context` reads a
/// question's words (`context::written_as_name`), so the two verbs agree.
fn written_as_name(subject: &str) -> bool {
    let mut words = subject.unicode_words().peekable();
    words.peek().is_some() && words.all(|w| title_case(w) && may_name_alone(&fold(w)))
}

fn could_not_judge(req: &Request, why: &str, candidates: &[String]) -> Value {
    json!({
        "state": "could_not_judge",
        "why": why,
        "candidates": candidates,
        "subject": null,
        "facts": [],
        "next": null,
        "seeding": { "matched": null, "query": req.subject },
        "meaning": { "state": "not_armed" },
    })
}

type Found = (Entity, &'static str, Vec<Entity>);

/// The entities holding `a` at `when`, by id, each with its attributes then: with `as_of` or
/// `valid_at` an entity matches by the values it had then (its history). Only the entities the
/// attribute index files under the pair are read (`attr_index.rs`); each is checked here, so the
/// answer is the one a read of every entity gives.
fn by_attribute(snap: &Snapshot, caller: &Caller, a: &AttributeIn, when: &When) -> Result<Vec<Entity>> {
    let key = a.key.trim();
    let mut found = Vec::new();
    for id in attr_index::candidates(snap, &caller.part, key, &a.value)? {
        let Some(e) = entity_by_id(snap, &caller.part, id)? else { continue };
        if when.as_of.is_some_and(|t| e.recorded_at > t) {
            continue;
        }
        // A plain read: a write dated later can change a key's value but never drop the key, so
        // only entities holding the key now need their history read.
        if when.as_of.is_none() && when.valid_at.is_none() && !e.attributes.contains_key(key) {
            continue;
        }
        let attributes = attributes_when(snap, &caller.part, &e, when)?;
        if attributes.get(key).is_some_and(|v| same_value(v, &a.value)) {
            found.push(Entity { attributes, ..e });
        }
    }
    Ok(found)
}

/// The entity the request names, how it matched and any other entities an attribute matched; or
/// the whole reply when there is none to answer about (`nothing_stored`, `could_not_judge`).
fn resolve(
    store: &Store,
    snap: &Snapshot,
    caller: &Caller,
    req: &Request,
    when: &When,
) -> Result<Result<Found, Value>> {
    let exact = match &req.subject {
        // The common case is a name as stored: one point read, no name index.
        Some(query) => graph::entity_by_name(snap, &caller.part, query)?
            .filter(|e| req.as_of.is_none_or(|t| e.recorded_at <= t))
            .map(|e| {
                let how = if e.name == query.as_str() { MatchKind::Exact } else { MatchKind::CaseFolded };
                (e, how)
            }),
        None => None,
    };
    let found = if let Some((e, how)) = exact {
        (e, matched(how), Vec::new())
    } else if let Some(query) = &req.subject {
        let names = cache::names(store.dir(), snap, &caller.part)?;
        let mut hits = Vec::new();
        let as_name = written_as_name(query);
        for hit in names.lookup(query, LookupOptions { prefix: false, limit: 16, as_name }) {
            if let Some(e) = visible(snap, caller, hit.id, req.as_of)? {
                hits.push((e, hit.how, hit.score));
            }
        }
        let Some((first, how, _)) = hits.first().cloned() else {
            // Named exactly but recorded after `as_of`: nothing was stored then, however short
            // the name (`hint_missed` says when it was; found by an audit: "A" said could_not_judge).
            if req.as_of.is_some() && graph::entity_by_name(snap, &caller.part, query)?.is_some() {
                return Ok(Err(answer_none(req, &[])));
            }
            if tokens(query).is_empty() || (!as_name && fold(query).unicode_words().all(is_common_word)) {
                return Ok(Err(could_not_judge(req, "the subject is only short or common words", &[])));
            }
            // Too short to name anything by a loose rule ("Bo"), but a word of stored names
            // ("Bo Lee"): ask which, never say nothing is stored (found by an audit).
            let mut candidates = Vec::new();
            for hit in names.names_with_word(query, 16) {
                if candidates.len() < SHORT_CANDIDATES && visible(snap, caller, hit.id, req.as_of)?.is_some() {
                    candidates.push(hit.name);
                }
            }
            if !candidates.is_empty() {
                let why = "the subject is a short word of several stored names, or of one: say which";
                return Ok(Err(could_not_judge(req, why, &candidates)));
            }
            return Ok(Err(answer_none(req, &did_you_mean(snap, caller, &names, query)?)));
        };
        // Two different entities matched equally well by a loose rule: asking beats guessing.
        let tied: Vec<String> =
            hits.iter().filter(|(e, h, _)| *h == how && e.id != first.id).map(|(e, _, _)| e.name.clone()).collect();
        if !tied.is_empty() && !matches!(how, MatchKind::Exact | MatchKind::CaseFolded) {
            let candidates: Vec<String> = std::iter::once(first.name.clone()).chain(tied).collect();
            return Ok(Err(could_not_judge(req, "the subject matches several stored names equally well", &candidates)));
        }
        (first, matched(how), Vec::new())
    } else {
        let a = req.attribute.as_ref().expect("checked: subject or attribute");
        let mut found = by_attribute(snap, caller, a, when)?;
        if found.is_empty() {
            return Ok(Err(answer_none(req, &[])));
        }
        let first = found.remove(0);
        (first, "attribute", found)
    };
    Ok(Ok(found))
}

/// One stored relation on the wire, cited, with its source's date.
fn stored_fact(citer: &mut Citer<'_>, n: &Neighbour, ends: (&str, &str), by: &FoundBy<'_>) -> Result<Value> {
    let rel = &n.relation;
    let citation = citer.relation(rel, ends)?;
    let source_date = match &rel.source {
        Source::Document { doc_id, .. } => citer.document(*doc_id)?.and_then(|c| c.doc.date.clone()),
        Source::Asserted { .. } => None,
    };
    Ok(wire::fact(rel, ends, n.direction, source_date.as_deref(), &citation, by))
}

/// `reply` (no subject to answer about), with the `outside_time` hint when it is `nothing_stored`
/// only because the subject was first recorded after `as_of`: named exactly (any case), or as a
/// read without `as_of` would match it (a word of the name, a near spelling; found by a review:
/// "Priya" had no hint where "Priya Raman" had one), then with the `name` and how it `matched`.
/// Only the caller's partition is read, as the recall does.
fn hint_missed(
    store: &Store,
    snap: &Snapshot,
    caller: &Caller,
    req: &Request,
    when: &When,
    mut reply: Value,
) -> Result<Value> {
    let (true, Some(_), Some(query)) = (reply["state"] == "nothing_stored", req.as_of, &req.subject) else {
        return Ok(reply);
    };
    if let Some(later) = graph::entity_by_name(snap, &caller.part, query)? {
        if let Some(hint) = outside_time(snap, &caller.part, later.id, when)? {
            reply["outside_time"] = hint;
        }
        return Ok(reply);
    }
    // The entity a read of every time would answer with, if one, and only a loose match is left.
    let always = Request { subject: Some(query.clone()), ..Request::default() };
    if let Ok((later, how, _)) = resolve(store, snap, caller, &always, when)?
        && let Some(mut hint) = outside_time(snap, &caller.part, later.id, when)?
    {
        hint["name"] = json!(later.name);
        hint["matched"] = json!(how);
        reply["outside_time"] = hint;
    }
    Ok(reply)
}

/// The answer-shaping fields of a request, which its cursor is bound to (with the caller).
fn bound_fields(req: &Request, k: usize, valid_at: Option<i64>) -> Value {
    let attribute = req.attribute.as_ref().map(|a| json!([a.key, a.value]));
    json!({
        "subject": req.subject, "attribute": attribute, "k": k, "as_of": req.as_of, "valid_at": valid_at,
        "hops": req.hops.unwrap_or(1), "compact": req.compact,
    })
}

/// The moment a later page reads: what the first page read at its time `read_at`, pinned in
/// transaction time (`as_of`, unless the request named one) so writes since cannot shift the
/// order, and, for a plain read, in valid time too (that "now" was `read_at`).
fn pinned(as_of: Option<i64>, valid_at: Option<i64>, read_at: i64) -> When {
    When {
        as_of: Some(as_of.unwrap_or(read_at)),
        valid_at: valid_at.or(as_of.is_none().then_some(read_at)),
        now: Some(read_at),
    }
}

pub(super) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Result<Value> {
    let mut req: Request = parse("recall", body)?;
    let k = check(&req)?;
    let valid_at = req.valid_at.as_deref().map(|v| valid::parse("valid_at", v)).transpose()?;
    let binding = Binding::new(caller, &bound_fields(&req, k, valid_at));
    let page = req.cursor.as_deref().map(|c| binding.open(c)).transpose()?;
    let snap = store.snapshot()?;
    let when = match page {
        None => When::of_request(req.as_of, valid_at, caller.now),
        Some(p) => {
            let when = pinned(req.as_of, valid_at, p.read_at);
            // The subject is found as the first page found it, by what was stored then.
            req.as_of = when.as_of;
            when
        }
    };
    let (subject, how, others) = match resolve(store, &snap, caller, &req, &when)? {
        Ok(found) => found,
        Err(reply) => {
            let mut reply = hint_missed(store, &snap, caller, &req, &when, reply)?;
            // Nothing here to answer or to choose among (`could_not_judge` with no candidates).
            let none_here = reply["state"] == "nothing_stored" || reply["candidates"] == json!([]);
            if let (true, Some(subject)) = (none_here, &req.subject)
                && let Some(there) = elsewhere::named(&snap, caller, req.readable_scopes.as_deref(), subject)?
            {
                reply["elsewhere"] = there;
            }
            return Ok(reply);
        }
    };
    let first_at = page.map_or(caller.now, |p| p.read_at);
    let read = Read { snap: &snap, caller, when: &when, k, compact: req.compact, page, first_at };
    let mut reply = answer(&read, &req, (&subject, how), &binding)?;
    if !others.is_empty() {
        // At most `k`, as the facts are: an attribute many entities share would otherwise list
        // every one of them (found by an audit: 2,996 names with `k: 1`).
        reply["other_matches"] =
            others.iter().take(k).map(|e| json!({ "id": wire::id(e.id), "name": e.name })).collect();
        if others.len() > k {
            reply["other_matches_omitted"] = json!(others.len() - k);
        }
    }
    Ok(reply)
}

/// One page's read: the snapshot, the caller, its moment, the page size, whether citations are
/// compact, where it starts (none for the first) and the first page's time.
struct Read<'a> {
    snap: &'a Snapshot,
    caller: &'a Caller,
    when: &'a When,
    k: usize,
    compact: bool,
    page: Option<Page>,
    first_at: i64,
}

/// One entry of the whole list a recall pages through.
enum Listed<'a> {
    /// The subject's own stored fact.
    Own(&'a Neighbour),
    /// What follows from the subject's own facts.
    Derived(&'a Derived),
    /// A stored fact farther away, with its hop.
    Far(&'a Neighbour, usize),
}

impl Listed<'_> {
    /// What the entry is, for the hash of the entries a cursor says were given.
    fn key(&self) -> String {
        match self {
            Listed::Own(n) => format!("own {}", n.relation.id),
            Listed::Derived(d) => format!("derived {} {} {} {:?}", d.from, d.to, d.rel_type, d.basis),
            Listed::Far(n, hop) => format!("far {} {hop}", n.relation.id),
        }
    }
}

/// The answered reply for `subject`: the page of its whole list (own stored facts newest first,
/// then what follows from them, then farther hops) that `read` starts, and `next` for the rest.
fn answer(read: &Read<'_>, req: &Request, (subject, how): (&Entity, &str), binding: &Binding) -> Result<Value> {
    let (snap, part, k) = (read.snap, &read.caller.part, read.k);
    let (mut stored, derived) = facts_of(snap, part, subject.id, read.when)?;
    // Newest first: recency ranks facts at one hop. By their keys, each fact then moved once: a
    // hub's thousands of whole relations moved at each step of a comparison sort (stable both).
    stored.sort_by_cached_key(|n| Reverse((n.relation.recorded_at, n.relation.id)));
    let offset = read.page.map_or(0, |p| p.offset);
    let room = (offset + k).saturating_sub(stored.len() + derived.len());
    let (far, cut, more) = farther(snap, read.caller, (subject.id, &stored), req.hops.unwrap_or(1), room, read.when)?;
    let listed: Vec<Listed<'_>> = (stored.iter().map(Listed::Own))
        .chain(derived.iter().map(Listed::Derived))
        .chain(far.iter().map(|(n, hop)| Listed::Far(n, *hop)))
        .collect();
    if let Some(p) = read.page
        && listed.get(..offset).is_none_or(|before| given(subject.id, before.iter().map(Listed::key)) != p.given)
    {
        return Err(refused(
            "the facts its earlier pages gave read differently now (one was forgotten since); send the request \
             again without it",
        ));
    }
    let (out, taken) = render(read, subject, &listed[offset..(offset + k).min(listed.len())])?;
    let end = offset + taken;
    // Every fact after this page, listed or cut by the walk, is counted in `omitted`.
    let omitted = listed.len() - end + cut;
    let next = (omitted > 0).then(|| {
        let given = given(subject.id, listed[..end].iter().map(Listed::key));
        binding.cursor(&Page { offset: end, read_at: read.first_at, given })
    });
    let shown = entity_when(snap, part, subject, read.when)?;
    let mut reply = json!({
        "state": "answered",
        "subject": wire::entity(&shown),
        "facts": out,
        "omitted": omitted,
        "next": next,
        "seeding": { "matched": how, "query": req.subject, "name": subject.name },
        "meaning": { "state": "not_armed" },
    });
    if more {
        // The walk stopped reading: more than `omitted` were cut.
        reply["omitted_more"] = json!(true);
    }
    if omitted > 0 {
        // A model that reads only `facts` would take the first `k` for all there is (found by an
        // audit: a hub's 2,000th fact was not among the default 50, and `state` said answered).
        let left = if more { format!("more than {omitted}") } else { omitted.to_string() };
        let shown = reply["facts"].as_array().map_or(0, Vec::len);
        let facts = if shown == 1 { "fact" } else { "facts" };
        reply["omitted_hint"] = json!(format!(
            "{shown} {facts} shown, {left} left out (the subject's newest first): what you look for may be among those; \
             send the same request with `cursor` set to `next` for the next page, a larger `k` (at most \
             {MAX_RECALL_K}), or ask memory_context the question (a page holds at most {RECALL_PAGE_BYTES} \
             bytes of facts, however large `k`)"
        ));
    }
    if stored.is_empty()
        && let Some(hint) = outside_time(snap, part, subject.id, read.when)?
    {
        reply["outside_time"] = hint;
    }
    Ok(reply)
}

/// A page ends early, before the fact that would take its facts' JSON past this many bytes (about
/// 16,000 tokens, export's default page), though it always holds one: found by an audit, 50 facts
/// whose attributes were 60 KB each made a default recall of 2.4 MB. Facts of a few hundred
/// bytes fill `k` first; `next` continues after the last fact shown.
pub(crate) const RECALL_PAGE_BYTES: usize = 64 * 1024;

/// `listed` on the wire, each cited, as read from `subject`, up to `RECALL_PAGE_BYTES`; with how
/// many entries of `listed` were read (a derived fact whose basis is gone is read, not shown).
fn render(read: &Read<'_>, subject: &Entity, listed: &[Listed<'_>]) -> Result<(Vec<Value>, usize)> {
    let (snap, part) = (read.snap, &read.caller.part);
    let mut citer = Citer::new(snap, part, read.compact);
    let mut names: HashMap<u64, String> = HashMap::from([(subject.id, subject.name.clone())]);
    let mut name_of = |id: u64| -> Result<String> {
        if let Some(n) = names.get(&id) {
            return Ok(n.clone());
        }
        let n = entity_by_id(snap, part, id)?.map_or_else(|| id.to_string(), |e| e.name);
        names.insert(id, n.clone());
        Ok(n)
    };
    let (mut out, mut bytes) = (Vec::new(), 0);
    for (read_so_far, entry) in listed.iter().enumerate() {
        let fact = match entry {
            Listed::Own(n) | Listed::Far(n, _) => {
                let hops = if let Listed::Far(_, hop) = entry { *hop } else { 1 };
                let ends = (name_of(n.relation.from)?, name_of(n.relation.to)?);
                let by = FoundBy { seed: &subject.name, hops, reasoning: None };
                Some(stored_fact(&mut citer, n, (&ends.0, &ends.1), &by)?)
            }
            Listed::Derived(d) => derived_fact(snap, part, &mut citer, d, &subject.name, &mut name_of)?,
        };
        let Some(fact) = fact else { continue };
        let size = serde_json::to_vec(&fact).map_or(0, |v| v.len()) + 1;
        if !out.is_empty() && bytes + size > RECALL_PAGE_BYTES {
            return Ok((out, read_so_far));
        }
        bytes += size;
        out.push(fact);
    }
    Ok((out, listed.len()))
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{TODAY, assert_citations_slice, call, caller, fresh};
    use serde_json::{Value, json};

    /// A self-loop an older store holds (`relate` and `remember` refuse one) is one fact: recall
    /// lists it once, not once outbound and once inbound.
    #[test]
    fn a_stored_self_loop_is_listed_once() {
        let (_dir, store, part) = fresh();
        let none = serde_json::Map::new();
        store
            .write(move |tx| {
                let a = crate::knowledge::testing::assertion("Wanda", "Wanda", "self", &none, "a");
                crate::knowledge::relate(tx, &part, a, 1)
            })
            .unwrap();
        let r = call(&store, &caller(TODAY), "recall", &json!({"subject": "Wanda"})).unwrap();
        let stored: Vec<&Value> =
            r["facts"].as_array().unwrap().iter().filter(|f| f["derived"] != json!(true)).collect();
        assert_eq!(stored.len(), 1, "{r}");
    }

    #[test]
    fn a_read_whose_time_hides_every_fact_says_so() {
        let (_dir, store, _part) = fresh();
        let future = json!({"facts": {"relations": [
            {"source": "Mara", "target": "Oslo", "type": "lives_in", "attributes": {"valid_from": "2999-01-01"}},
            {"source": "Mara", "target": "Bergen", "type": "lives_in", "attributes": {"valid_from": "2990-01-01"}},
        ]}});
        call(&store, &caller(1_000), "remember", &future).unwrap();
        let read = |body: serde_json::Value| call(&store, &caller(TODAY), "recall", &body).unwrap();
        let plain = read(json!({"subject": "Mara"}));
        assert_eq!((&plain["state"], &plain["facts"]), (&json!("answered"), &json!([])));
        assert_eq!(plain["outside_time"], json!({"facts": 2, "next_valid_from": "2990-01-01"}));
        // At a time the facts hold, they show and the hint does not.
        let then = read(json!({"subject": "Mara", "valid_at": "2995-06-01"}));
        assert_eq!(then["facts"].as_array().unwrap().len(), 1);
        assert!(then.get("outside_time").is_none());
        // `as_of` before anything of Mara was recorded: nothing stored then, and when it was.
        let early = read(json!({"subject": "Mara", "as_of": 500}));
        assert_eq!(early["state"], json!("nothing_stored"));
        assert_eq!(early["outside_time"], json!({"facts": 2, "next_recorded_at": "1970-01-01T00:00:01.000Z"}));
        // A name too short to match loosely ("A") is still named exactly (an audit found
        // could_not_judge here).
        call(&store, &caller(1_000), "relate", &json!({"from": "A", "to": "Bee", "type": "knows"})).unwrap();
        let short = read(json!({"subject": "A", "as_of": 500}));
        assert_eq!(short["state"], json!("nothing_stored"), "{short}");
        assert_eq!(short["outside_time"]["next_recorded_at"], json!("1970-01-01T00:00:01.000Z"), "{short}");
        // A subject with no facts at all has no hint.
        call(&store, &caller(1_000), "remember", &json!({"facts": {"entities": [{"name": "Lone"}]}})).unwrap();
        assert!(read(json!({"subject": "Lone"})).get("outside_time").is_none());
    }

    /// `as_of` before a name was recorded: a word of it or a near spelling carries the hint an
    /// exact name does, with the name it matched; another partition's names never give one.
    #[test]
    fn a_loose_name_read_before_its_entity_was_recorded_says_when_it_was() {
        let (_dir, store, _part) = fresh();
        let body =
            json!({"facts": {"relations": [{"source": "Priya Raman", "target": "Northwind", "type": "works_at"}]}});
        call(&store, &caller(1_000), "remember", &body).unwrap();
        let mut elsewhere = caller(1_000);
        elsewhere.part = crate::knowledge::Partition::new("local", "u2", "default").unwrap();
        let other = json!({"facts": {"relations": [{"source": "Tomas Berg", "target": "Rome", "type": "visits"}]}});
        call(&store, &elsewhere, "remember", &other).unwrap();
        let read =
            |subject: &str| call(&store, &caller(TODAY), "recall", &json!({"subject": subject, "as_of": 500})).unwrap();
        for (subject, matched) in [("Priya", "word"), ("Priya Ramen", "near")] {
            let r = read(subject);
            assert_eq!(r["state"], json!("nothing_stored"), "{r}");
            let hint = json!({"facts": 1, "next_recorded_at": "1970-01-01T00:00:01.000Z", "name": "Priya Raman", "matched": matched});
            assert_eq!(r["outside_time"], hint, "{r}");
        }
        assert_eq!(
            read("Priya Raman")["outside_time"],
            json!({"facts": 1, "next_recorded_at": "1970-01-01T00:00:01.000Z"})
        );
        for subject in ["Tomas", "Tomas Berg"] {
            assert!(read(subject).get("outside_time").is_none(), "{subject}");
        }
    }

    #[test]
    fn a_near_spelling_answers_and_says_so() {
        // DESIGN §2 lists spelling-near names among recall's matches; an audit saw "Maria Lopez"
        // answered as Mario Lopez: the reply says how it matched and whom, so the caller can tell.
        let (_dir, store, _part) = fresh();
        let body =
            json!({"facts": {"relations": [{"source": "Mario Lopez", "target": "Acme Corp", "type": "works_at"}]}});
        call(&store, &caller(5), "remember", &body).unwrap();
        let r = call(&store, &caller(6), "recall", &json!({"subject": "Maria Lopez"})).unwrap();
        assert_eq!(r["state"], json!("answered"), "{r}");
        assert_eq!(r["seeding"], json!({"matched": "near", "query": "Maria Lopez", "name": "Mario Lopez"}), "{r}");
        let exact = call(&store, &caller(6), "recall", &json!({"subject": "Mario Lopez"})).unwrap();
        assert_eq!(exact["seeding"]["matched"], json!("exact"), "{exact}");
    }

    #[test]
    fn hops_keep_the_subjects_derived_facts_first_and_count_every_fact_cut() {
        let (_dir, store, _part) = fresh();
        let relations: Vec<Value> = (0..30)
            .map(|i| json!({"source": "Hub Corp", "target": format!("Member {i:02}"), "type": "owns"}))
            .collect();
        call(&store, &caller(5), "remember", &json!({"facts": {"relations": relations}})).unwrap();
        let r = call(&store, &caller(6), "recall", &json!({"subject": "Member 01", "hops": 2, "k": 5})).unwrap();
        let facts = r["facts"].as_array().unwrap();
        let read: Vec<(String, u64)> = facts
            .iter()
            .map(|f| {
                (format!("{} {} {}", f["subject"], f["relation"], f["object"]), f["found_by"]["hops"].as_u64().unwrap())
            })
            .collect();
        assert_eq!(read.len(), 5, "{r}");
        assert_eq!(read[0], ("\"Hub Corp\" \"owns\" \"Member 01\"".to_owned(), 1), "{r}");
        assert_eq!(
            read[1],
            ("\"Member 01\" \"owned_by\" \"Hub Corp\"".to_owned(), 1),
            "the subject's own reading: {r}"
        );
        assert!(read[2..].iter().all(|(_, hop)| *hop == 2), "{r}");
        // 29 facts two hops away, 3 shown.
        assert_eq!(r["omitted"], json!(26), "{r}");
        assert!(r.get("omitted_more").is_none());
        let hint = r["omitted_hint"].as_str().unwrap_or_else(|| panic!("no omitted_hint: {r}"));
        assert!(hint.starts_with("5 facts shown, 26 left out") && hint.contains("larger `k` (at most 1000)"), "{hint}");
        let one = call(&store, &caller(6), "recall", &json!({"subject": "Member 01", "hops": 2, "k": 1})).unwrap();
        let hint = one["omitted_hint"].as_str().unwrap_or_else(|| panic!("no omitted_hint: {one}"));
        assert!(hint.starts_with("1 fact shown, 30 left out"), "{hint}");
        let all = call(&store, &caller(6), "recall", &json!({"subject": "Member 01"})).unwrap();
        assert!(all.get("omitted_hint").is_none(), "nothing left out, no hint: {all}");
    }

    #[test]
    fn hops_walk_beyond_the_subjects_own_facts_each_fact_once() {
        let (_dir, store, _part) = fresh();
        let body = json!({"facts": {"relations": [
            {"source": "Ada", "target": "Ben", "type": "knows"},
            {"source": "Ben", "target": "Cy", "type": "knows"},
            {"source": "Cy", "target": "Dee", "type": "knows"},
            {"source": "Dee", "target": "Ada", "type": "knows"},
        ]}});
        call(&store, &caller(5), "remember", &body).unwrap();
        let facts_at = |hops: Option<usize>| {
            let mut req = json!({"subject": "Ada"});
            if let Some(h) = hops {
                req["hops"] = json!(h);
            }
            let r = call(&store, &caller(6), "recall", &req).unwrap();
            let mut got: Vec<(String, String, u64)> = r["facts"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| {
                    let hop = f["found_by"]["hops"].as_u64().unwrap();
                    (f["subject"].as_str().unwrap().to_owned(), f["object"].as_str().unwrap().to_owned(), hop)
                })
                .collect();
            got.sort();
            got
        };
        let own = vec![("Ada".into(), "Ben".into(), 1), ("Dee".into(), "Ada".into(), 1)];
        assert_eq!(facts_at(None), own);
        assert_eq!(facts_at(Some(1)), own);
        let two = facts_at(Some(2));
        assert_eq!(two.len(), 4, "the ring's four facts, each once: {two:?}");
        assert!(two.contains(&("Ben".into(), "Cy".into(), 2)) && two.contains(&("Cy".into(), "Dee".into(), 2)));
        for bad in [0, 4] {
            let err = call(&store, &caller(6), "recall", &json!({"subject": "Ada", "hops": bad})).unwrap_err();
            assert_eq!(err.code(), "INVALID_ARGUMENT");
        }
    }

    #[test]
    fn derived_facts_show_from_the_object_end_too() {
        // The audit's calls (finding 5): Room 4 part_of Wing B, Wing B part_of Main Hall.
        let (_dir, store, part) = fresh();
        let relate = |from: &str, to: &str, t: &str| {
            call(&store, &caller(5), "relate", &json!({"from": from, "to": to, "type": t})).unwrap()["fact"]["id"]
                .clone()
        };
        let room = relate("Room 4", "Wing B", "part_of");
        let wing = relate("Wing B", "Main Hall", "part_of");
        let manages = relate("Jonas", "Priya", "manages");
        let r = call(&store, &caller(TODAY), "recall", &json!({"subject": "Main Hall"})).unwrap();
        let facts = r["facts"].as_array().unwrap();
        let chain = facts.iter().find(|f| f["derived"] == json!(true)).unwrap_or_else(|| panic!("derived: {r}"));
        assert_eq!(
            (&chain["subject"], &chain["relation"], &chain["object"]),
            (&json!("Room 4"), &json!("part_of"), &json!("Main Hall"))
        );
        assert_eq!(chain["rule"], json!("transitive"));
        assert_eq!(chain["rests_on"], json!([room, wing]), "in chain order");
        assert_eq!(chain["citation"]["source"]["kind"], json!("asserted"));
        assert_eq!(facts.len(), 2, "the stored inbound edge and the chain: {r}");
        // An inverse read from the end that states it: Jonas manages Priya, so Priya is managed_by Jonas.
        let jonas = call(&store, &caller(TODAY), "recall", &json!({"subject": "Jonas"})).unwrap();
        let inverse = jonas["facts"].as_array().unwrap().iter().find(|f| f["derived"] == json!(true)).unwrap();
        assert_eq!(
            (&inverse["subject"], &inverse["relation"], &inverse["object"]),
            (&json!("Priya"), &json!("managed_by"), &json!("Jonas"))
        );
        assert_eq!(inverse["rests_on"], json!([manages]));
        assert_citations_slice(&store, &part, &r);
    }

    /// The derived facts of a recall of `subject` at `TODAY` with `extra` fields, by
    /// `(subject, object)`.
    fn derived_of(store: &crate::store::Store, subject: &str, extra: &Value) -> Vec<Value> {
        let mut body = json!({"subject": subject});
        body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        let r = call(store, &caller(TODAY), "recall", &body).unwrap();
        r["facts"].as_array().unwrap().iter().filter(|f| f["derived"] == json!(true)).cloned().collect()
    }

    fn to<'a>(derived: &'a [Value], object: &str) -> Option<&'a Value> {
        derived.iter().find(|f| f["object"] == json!(object))
    }

    #[test]
    fn a_derived_fact_holds_where_every_fact_it_rests_on_holds() {
        // The audit's calls (finding 2): L1 part_of L2 … L9 from 2020; then L3 part_of X from 2022,
        // replacing L3 part_of L4 (which ends then).
        let (_dir, store, _part) = fresh();
        let mut ids = Vec::new();
        for i in 1..9 {
            let body =
                json!({"from": format!("L{i}"), "to": format!("L{}", i + 1), "type": "part_of", "date": "2020-01-01"});
            ids.push(call(&store, &caller(10 * i), "relate", &body).unwrap()["fact"]["id"].clone());
        }
        let body = json!({"from": "L3", "to": "X", "type": "part_of", "date": "2022-01-01", "replaces": true});
        let x = call(&store, &caller(100), "relate", &body).unwrap();
        assert_eq!(x["ended"][0]["valid_to"], json!("2022-01-01"));
        let now = derived_of(&store, "L1", &json!({}));
        let to_x = to(&now, "X").unwrap_or_else(|| panic!("L1 part_of X: {now:?}"));
        assert_eq!(to_x["rests_on"], json!([ids[0], ids[1], x["fact"]["id"]]));
        assert_eq!((&to_x["valid_from"], &to_x["valid_to"]), (&json!("2022-01-01"), &Value::Null), "{to_x}");
        assert_eq!(to_x["recorded_at"], x["fact"]["recorded_at"], "known since its last fact was");
        assert!(to(&now, "L4").is_none(), "L3 part_of L4 is over: {now:?}");
        let then = derived_of(&store, "L1", &json!({"valid_at": "2021-01-01"}));
        let to_l4 = to(&then, "L4").unwrap_or_else(|| panic!("L1 part_of L4 in 2021: {then:?}"));
        assert_eq!((&to_l4["valid_from"], &to_l4["valid_to"]), (&json!("2020-01-01"), &json!("2022-01-01")), "{to_l4}");
        assert!(to_l4.get("ended_at").is_some(), "it rests on a fact ended since: {to_l4}");
        assert!(to(&then, "X").is_none(), "{then:?}");
        // As known before the replace: the chain had no end.
        let known = derived_of(&store, "L1", &json!({"valid_at": "2021-01-01", "as_of": 90}));
        let to_l4 = to(&known, "L4").unwrap();
        assert_eq!(to_l4["valid_to"], Value::Null, "{to_l4}");
        assert!(to_l4.get("ended_at").is_none(), "{to_l4}");
        assert_eq!(to_l4["recorded_at"], json!("1970-01-01T00:00:00.030Z"));
        // From the far end too: L2 part_of X holds from 2022.
        let into_x = derived_of(&store, "X", &json!({}));
        let l2 = into_x.iter().find(|f| f["subject"] == json!("L2")).unwrap_or_else(|| panic!("{into_x:?}"));
        assert_eq!((&l2["valid_from"], &l2["valid_to"]), (&json!("2022-01-01"), &Value::Null));
    }

    #[test]
    fn links_never_true_together_derive_nothing_and_one_fact_gives_its_interval() {
        let (_dir, store, _part) = fresh();
        for (from, to, t, attributes) in [
            ("Shed", "Farm", "part_of", json!({"valid_to": "2021-01-01"})),
            ("Farm", "Estate", "part_of", json!({"valid_from": "2022-01-01"})),
            ("Jonas", "Kai", "manages", json!({"valid_from": "2020-01-01", "valid_to": "2030-01-01"})),
        ] {
            call(&store, &caller(5), "relate", &json!({"from": from, "to": to, "type": t, "attributes": attributes}))
                .unwrap();
        }
        // `as_of` alone reads the live edges whatever their valid time: both links, never together.
        for extra in [json!({"as_of": TODAY}), json!({})] {
            let d = derived_of(&store, "Shed", &extra);
            assert!(to(&d, "Estate").is_none(), "{extra}: {d:?}");
        }
        let kai = derived_of(&store, "Kai", &json!({}));
        assert_eq!(
            (&kai[0]["rule"], &kai[0]["valid_from"], &kai[0]["valid_to"]),
            (&json!("inverse"), &json!("2020-01-01"), &json!("2030-01-01"))
        );
    }

    #[test]
    fn a_subject_is_answered_with_cited_stored_and_derived_facts() {
        let (_dir, store, part) = fresh();
        let text = "Jonas Weber 👋 manages Priya Raman since März. Room 4 is in Acme HQ. Acme HQ is in Berlin.";
        let body = json!({"content": text, "source": "wiki", "date": "2024-03-01", "facts": {"relations": [
            {"source": "Jonas Weber", "target": "Priya Raman", "type": "manages"},
            {"source": "Room 4", "target": "Acme HQ", "type": "located_in"},
            {"source": "Acme HQ", "target": "Berlin", "type": "located_in"},
        ]}});
        call(&store, &caller(5), "remember", &body).unwrap();
        let r = call(&store, &caller(TODAY), "recall", &json!({"subject": "priya"})).unwrap();
        assert_eq!(r["state"], json!("answered"));
        assert_eq!(r["subject"]["name"], json!("Priya Raman"));
        assert_eq!(r["seeding"]["matched"], json!("word"));
        assert_eq!(r["meaning"]["state"], json!("not_armed"));
        let facts = r["facts"].as_array().unwrap();
        assert_eq!(facts[0]["direction"], json!("inbound"));
        assert_eq!(facts[0]["citation"]["span"]["text"], json!("Jonas Weber 👋 manages Priya Raman since März."));
        assert_eq!(facts[0]["citation"]["span"]["start"], json!(0));
        let derived = facts.iter().find(|f| f["derived"] == json!(true)).expect("managed_by is derived");
        assert_eq!(derived["relation"], json!("managed_by"));
        assert_eq!(derived["rule"], json!("inverse"));
        assert_eq!(derived["rests_on"], json!([facts[0]["id"].clone()]));
        assert_citations_slice(&store, &part, &r);
        let room = call(&store, &caller(TODAY), "recall", &json!({"subject": "Room 4", "compact": true})).unwrap();
        let chain = room["facts"].as_array().unwrap().iter().find(|f| f["rule"] == json!("transitive")).unwrap();
        assert_eq!(chain["object"], json!("Berlin"));
        assert_eq!(chain["rests_on"].as_array().unwrap().len(), 2);
        let span = &room["facts"][0]["citation"]["span"];
        assert!(span.get("text").is_none() && span["start"].is_u64(), "compact drops the quote: {span}");
        // The emoji counts as one code point: Room 4's sentence starts after the first one.
        assert_eq!(span["start"], json!(46));
        assert_citations_slice(&store, &part, &room);
    }

    #[test]
    fn a_citation_quotes_only_a_sentence_that_states_the_fact() {
        let (_dir, store, part) = fresh();
        let body = json!({
            "content": "Priya Raman works at Acme Corp. She is married to Tom Lee. Tom Lee and Priya Raman wed in 2019.",
            "facts": {"relations": [
                {"source": "Priya Raman", "target": "Tom Lee", "type": "married_to"},
                {"source": "Priya Raman", "target": "Globex", "type": "works_at"},
            ]},
        });
        call(&store, &caller(1), "remember", &body).unwrap();
        let r = call(&store, &caller(2), "recall", &json!({"subject": "Tom Lee"})).unwrap();
        for f in r["facts"].as_array().unwrap() {
            assert_eq!(f["citation"]["span"]["text"], json!("Tom Lee and Priya Raman wed in 2019."), "{f}");
        }
        // No sentence names Globex: no quote, and says why, never "Priya Raman works at Acme Corp.".
        let r = call(&store, &caller(2), "recall", &json!({"subject": "Globex"})).unwrap();
        let f = &r["facts"][0];
        assert_eq!(f["citation"]["span"], Value::Null, "{f}");
        assert_eq!(f["citation"]["span_state"], json!("not_quoted"), "{f}");
        assert_citations_slice(&store, &part, &r);
    }

    #[test]
    fn a_subject_written_as_a_name_is_one_even_when_its_words_are_common() {
        let (_dir, store, _part) = fresh();
        call(&store, &caller(1), "relate", &json!({"from": "May Chen", "to": "Acme", "type": "works_at"})).unwrap();
        let may = call(&store, &caller(2), "recall", &json!({"subject": "May"})).unwrap();
        assert_eq!((&may["state"], &may["subject"]["name"]), (&json!("answered"), &json!("May Chen")), "{may}");
        let lower = call(&store, &caller(2), "recall", &json!({"subject": "may"})).unwrap();
        assert_eq!(lower["state"], json!("could_not_judge"), "{lower}");
        let nobody = call(&store, &caller(2), "recall", &json!({"subject": "Nobody At All"})).unwrap();
        assert_eq!(nobody["state"], json!("nothing_stored"), "{nobody}");
    }

    #[test]
    fn other_matches_of_an_attribute_are_at_most_k_and_the_rest_counted() {
        let (_dir, store, _part) = fresh();
        let entities: Vec<_> =
            (0..30).map(|i| json!({"name": format!("Member {i:02}"), "attributes": {"team": "blue"}})).collect();
        call(&store, &caller(1), "remember", &json!({"facts": {"entities": entities}})).unwrap();
        let r = call(&store, &caller(2), "recall", &json!({"attribute": {"key": "team", "value": "blue"}, "k": 5}))
            .unwrap();
        assert_eq!(r["other_matches"].as_array().unwrap().len(), 5, "{r}");
        assert_eq!(r["other_matches_omitted"], json!(24), "{r}");
    }

    /// Found by an audit: "MAY" and "The" recalled "May Chen" and "The Who", where `memory_context`
    /// (and docs/design/text.md) read neither as a name.
    #[test]
    fn capitals_alone_or_a_capitalised_article_are_no_name() {
        let (_dir, store, _part) = fresh();
        let body = json!({"facts": {"entities": [{"name": "The Who", "type": "band"}, {"name": "May Chen", "type": "person"}]}});
        call(&store, &caller(1), "remember", &body).unwrap();
        for subject in ["MAY", "The", "THE", "the"] {
            let r = call(&store, &caller(2), "recall", &json!({ "subject": subject })).unwrap();
            assert_ne!(r["state"], json!("answered"), "{subject}: {r}");
            let c = call(&store, &caller(2), "context", &json!({ "question": subject })).unwrap();
            assert!(c["items"].as_array().unwrap().is_empty(), "{subject}: the two verbs agree: {c}");
        }
        let may = call(&store, &caller(2), "recall", &json!({"subject": "May"})).unwrap();
        assert_eq!(may["subject"]["name"], json!("May Chen"), "{may}");
    }

    #[test]
    fn a_short_word_of_stored_names_asks_which_instead_of_saying_nothing_is_stored() {
        let (_dir, store, _part) = fresh();
        call(&store, &caller(1), "relate", &json!({"from": "Tom Lee", "to": "Bo Lee", "type": "parent_of"})).unwrap();
        let bo = call(&store, &caller(2), "recall", &json!({"subject": "Bo"})).unwrap();
        assert_eq!(bo["state"], json!("could_not_judge"), "{bo}");
        assert_eq!(bo["candidates"], json!(["Bo Lee"]), "{bo}");
        let mut other = caller(3);
        other.part = crate::knowledge::Partition::new("local", "u2", "default").unwrap();
        let theirs = call(&store, &other, "recall", &json!({"subject": "Bo"})).unwrap();
        assert_eq!(theirs["state"], json!("nothing_stored"), "another user's names are no candidates: {theirs}");
        let none = call(&store, &caller(4), "recall", &json!({"subject": "Zu"})).unwrap();
        assert_eq!(none["state"], json!("nothing_stored"), "{none}");
    }

    #[test]
    fn a_subject_that_holds_or_abbreviates_a_stored_name_is_offered_it() {
        // The audit's calls: a title, a company suffix and an initial named nothing and offered nothing.
        let (_dir, store, _part) = fresh();
        call(&store, &caller(1), "relate", &json!({"from": "Priya Raman", "to": "Acme Robotics", "type": "works_at"}))
            .unwrap();
        let mut other = caller(2);
        other.part = crate::knowledge::Partition::new("local", "u2", "default").unwrap();
        call(&store, &other, "relate", &json!({"from": "Priya Rao", "to": "Acme Robotics Group", "type": "works_at"}))
            .unwrap();
        for (subject, meant) in
            [("Dr. Priya Raman", "Priya Raman"), ("Acme Robotics Inc", "Acme Robotics"), ("Priya R.", "Priya Raman")]
        {
            let miss = call(&store, &caller(3), "recall", &json!({"subject": subject})).unwrap();
            assert_eq!(miss["state"], json!("nothing_stored"), "{subject}: {miss}");
            assert_eq!(miss["did_you_mean"], json!([meant]), "{subject}: {miss}");
        }
    }

    #[test]
    fn misses_suggest_only_own_names_and_common_words_cannot_be_judged() {
        let (_dir, store, _part) = fresh();
        call(&store, &caller(1), "relate", &json!({"from": "Priya Raman", "to": "Acme", "type": "works_at"})).unwrap();
        let miss = call(&store, &caller(2), "recall", &json!({"subject": "Pri"})).unwrap();
        assert_eq!(miss["state"], json!("nothing_stored"));
        assert_eq!(miss["did_you_mean"], json!(["Priya Raman"]));
        let mut other = caller(3);
        other.part = crate::knowledge::Partition::new("local", "u2", "default").unwrap();
        let theirs = call(&store, &other, "recall", &json!({"subject": "Pri"})).unwrap();
        assert_eq!(theirs["did_you_mean"], json!([]));
        assert_eq!(
            call(&store, &other, "recall", &json!({"subject": "Acme"})).unwrap()["state"],
            json!("nothing_stored")
        );
        let the = call(&store, &caller(4), "recall", &json!({"subject": "the"})).unwrap();
        assert_eq!(the["state"], json!("could_not_judge"));
        // A short common word never names a longer name alone: "new" is not New York.
        call(&store, &caller(4), "relate", &json!({"from": "New York", "to": "USA", "type": "located_in"})).unwrap();
        let new = call(&store, &caller(4), "recall", &json!({"subject": "new"})).unwrap();
        assert_eq!(new["state"], json!("could_not_judge"), "{new}");
        assert_eq!(new["why"], json!("the subject is only short or common words"));
        let york = call(&store, &caller(4), "recall", &json!({"subject": "York"})).unwrap();
        assert_eq!(york["subject"]["name"], json!("New York"));
        call(&store, &caller(5), "relate", &json!({"from": "Priya Shah", "to": "Globex", "type": "works_at"})).unwrap();
        let two = call(&store, &caller(6), "recall", &json!({"subject": "Priya"})).unwrap();
        assert_eq!(two["state"], json!("could_not_judge"));
        assert_eq!(two["candidates"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn attributes_answer_as_of_and_valid_at_from_the_entity_history() {
        let (_dir, store, _part) = fresh();
        // Writes in September 2026 (ms), about 2022, 2024, and (no date) when written.
        let t = 1_790_000_000_000_i64;
        let kai = |role: &str, date: &str| json!({"facts": {"entities": [{"name": "Kai Moss", "type": "person", "attributes": {"role": role}}]}, "date": date});
        call(&store, &caller(t), "remember", &kai("intern", "2022-01-01")).unwrap();
        call(&store, &caller(t + 1_000), "remember", &kai("engineer", "2024-01-01")).unwrap();
        let team = json!({"facts": {"entities": [{"name": "Kai Moss", "attributes": {"team": "infra"}}]}});
        call(&store, &caller(t + 2_000), "remember", &team).unwrap();
        let attrs = |body: serde_json::Value| {
            call(&store, &caller(t + 3_000), "recall", &body).unwrap()["subject"]["attributes"].clone()
        };
        assert_eq!(attrs(json!({"subject": "Kai Moss"})), json!({"role": "engineer", "team": "infra"}));
        assert_eq!(attrs(json!({"subject": "Kai Moss", "as_of": t + 500})), json!({"role": "intern"}));
        assert_eq!(attrs(json!({"subject": "Kai Moss", "as_of": t + 1_500})), json!({"role": "engineer"}));
        let at = |v: &str| attrs(json!({"subject": "Kai Moss", "valid_at": v}));
        assert_eq!(at("2021-06-01"), json!({}));
        assert_eq!(at("2023-06-01"), json!({"role": "intern"}));
        assert_eq!(at("2025-01-01T00:00:00+01:00"), json!({"role": "engineer"}));
        // Sent without a date, the team is true from when it was written.
        assert_eq!(at("2027-01-01"), json!({"role": "engineer", "team": "infra"}));
        // What the store knew after the first write, as true in 2025: only the intern role.
        let both = attrs(json!({"subject": "Kai Moss", "as_of": t + 500, "valid_at": "2025-01-01"}));
        assert_eq!(both, json!({"role": "intern"}));
    }

    #[test]
    fn recall_by_attribute_and_context_entities_read_the_values_of_their_moment() {
        let (_dir, store, _part) = fresh();
        let t = 1_790_000_000_000_i64;
        let kai = |role: &str, date: &str| json!({"facts": {"entities": [{"name": "Kai Moss", "type": "person", "attributes": {"role": role}}]}, "date": date});
        call(&store, &caller(t), "remember", &kai("intern", "2022-01-01")).unwrap();
        call(&store, &caller(t + 1_000), "remember", &kai("engineer", "2024-01-01")).unwrap();
        let by_role = |role: &str, extra: serde_json::Value| {
            let mut body = json!({"attribute": {"key": "role", "value": role}});
            body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            call(&store, &caller(t + 2_000), "recall", &body).unwrap()
        };
        assert_eq!(by_role("intern", json!({}))["state"], json!("nothing_stored"), "Kai is an engineer now");
        for when in [json!({"valid_at": "2023-01-01"}), json!({"as_of": t + 500})] {
            let r = by_role("intern", when.clone());
            assert_eq!(r["subject"]["name"], json!("Kai Moss"), "{when}: {r}");
            assert_eq!(r["subject"]["attributes"], json!({"role": "intern"}), "{when}");
            assert_eq!(by_role("engineer", when.clone())["state"], json!("nothing_stored"), "{when}");
        }
        assert_eq!(by_role("engineer", json!({"valid_at": "2025-01-01"}))["subject"]["name"], json!("Kai Moss"));
        let entity_attrs = |extra: serde_json::Value| {
            let mut body = json!({"question": "Who is Kai Moss?"});
            body.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
            let c = call(&store, &caller(t + 2_000), "context", &body).unwrap();
            let items = c["items"].as_array().unwrap().clone();
            items.into_iter().find(|i| i["kind"] == json!("entity")).unwrap()["attributes"].clone()
        };
        assert_eq!(entity_attrs(json!({})), json!({"role": "engineer"}));
        assert_eq!(entity_attrs(json!({"valid_at": "2023-01-01"})), json!({"role": "intern"}));
        assert_eq!(entity_attrs(json!({"as_of": t + 500})), json!({"role": "intern"}));
        assert_eq!(entity_attrs(json!({"valid_at": "2021-01-01"})), json!({}));
    }

    #[test]
    fn as_of_before_a_write_never_sees_it_and_attributes_find_subjects() {
        let (_dir, store, _part) = fresh();
        let ents =
            json!({"facts": {"entities": [{"name": "Acme", "type": "company", "attributes": {"ticker": "ACM"}}]}});
        call(&store, &caller(100), "remember", &ents).unwrap();
        call(&store, &caller(200), "relate", &json!({"from": "Acme", "to": "Berlin", "type": "located_in"})).unwrap();
        let before = call(&store, &caller(300), "recall", &json!({"subject": "Acme", "as_of": 99})).unwrap();
        assert_eq!(before["state"], json!("nothing_stored"));
        let mid = call(&store, &caller(300), "recall", &json!({"subject": "Acme", "as_of": 150})).unwrap();
        assert_eq!(mid["facts"], json!([]));
        let by_attr =
            call(&store, &caller(300), "recall", &json!({"attribute": {"key": "ticker", "value": "acm"}})).unwrap();
        assert_eq!(by_attr["subject"]["name"], json!("Acme"));
        assert_eq!(by_attr["seeding"]["matched"], json!("attribute"));
        assert_eq!(by_attr["facts"].as_array().unwrap().len(), 1);
        let k1 = call(&store, &caller(300), "recall", &json!({"subject": "Berlin", "k": 1})).unwrap();
        assert_eq!(k1["facts"].as_array().unwrap().len(), 1);
        for (body, field) in [
            (json!({}), "exactly one"),
            (json!({"subject": "a", "attribute": {"key": "k", "value": 1}}), "exactly one"),
            (json!({"subject": "Acme", "k": 0}), "k must"),
            (json!({"subject": "Acme", "valid_at": "now"}), "valid_at"),
            (json!({"subject": "Acme", "as_of": "2024-01-01"}), "recall"),
        ] {
            let err = call(&store, &caller(1), "recall", &body).unwrap_err();
            assert!(err.to_string().contains(field), "{err} should name {field}");
        }
    }

    #[test]
    fn a_forgotten_name_is_never_served_from_the_cached_names() {
        let (_dir, store, _part) = fresh();
        call(&store, &caller(1), "relate", &json!({"from": "Priya Raman", "to": "Acme", "type": "works_at"})).unwrap();
        // Warm the cache with both names, then forget one.
        assert_eq!(
            call(&store, &caller(2), "recall", &json!({"subject": "Priya"})).unwrap()["state"],
            json!("answered")
        );
        call(&store, &caller(3), "forget", &json!({"subject": "Priya Raman"})).unwrap();
        let r = call(&store, &caller(4), "recall", &json!({"subject": "Priya"})).unwrap();
        assert_eq!(r["state"], json!("nothing_stored"));
        let miss = call(&store, &caller(4), "recall", &json!({"subject": "Priy Raman"})).unwrap();
        assert_eq!(miss["did_you_mean"], json!([]), "{miss}");
        let c = call(&store, &caller(4), "context", &json!({"question": "What about Priya Raman?"})).unwrap();
        assert_eq!(c["seeding"]["seeds"], json!([]), "{c}");
        let r = call(&store, &caller(5), "remember", &json!({"content": "Priya Raman is back."})).unwrap();
        assert_eq!(r["unlinked_passages"], json!([0]), "a forgotten entity is not linked: {r}");
    }

    #[test]
    fn as_of_a_moment_an_entity_shows_the_types_known_then() {
        let (_dir, store, _part) = fresh();
        let typed = |t: &str| json!({"facts": {"entities": [{"name": "Ada Quint", "type": t}]}});
        call(&store, &caller(100), "remember", &typed("person")).unwrap();
        call(&store, &caller(200), "remember", &typed("secret_agent")).unwrap();
        let types_seen = |as_of: Option<i64>| {
            let mut body = json!({"subject": "Ada Quint"});
            if let Some(t) = as_of {
                body["as_of"] = json!(t);
            }
            call(&store, &caller(300), "recall", &body).unwrap()["subject"]["types"].clone()
        };
        assert_eq!(types_seen(Some(150)), json!(["person"]));
        assert_eq!(types_seen(Some(250)), json!(["person", "secret_agent"]));
        assert_eq!(types_seen(None), json!(["person", "secret_agent"]));
        let c = call(&store, &caller(300), "context", &json!({"question": "Who is Ada Quint?", "as_of": 150})).unwrap();
        let entity = c["items"].as_array().unwrap().iter().find(|i| i["kind"] == json!("entity")).cloned();
        assert_eq!(entity.map(|e| e["types"].clone()), Some(json!(["person"])), "{c}");
    }

    #[test]
    fn a_fact_asserted_first_is_cited_once_a_document_states_it() {
        let (_dir, store, _part) = fresh();
        let edge = json!({"source": "Uma Reyes", "target": "Delta Port", "type": "manages"});
        call(&store, &caller(100), "relate", &json!({"from": "Uma Reyes", "to": "Delta Port", "type": "manages"}))
            .unwrap();
        let body = json!({"source": "board-minutes", "content": "Uma Reyes manages Delta Port.", "facts": {"relations": [edge]}});
        let r = call(&store, &caller(200), "remember", &body).unwrap();
        assert_eq!(r["updated"]["relations"], json!(1), "{r}");
        let cited = |as_of: i64| {
            let r = call(&store, &caller(300), "recall", &json!({"subject": "Uma Reyes", "as_of": as_of})).unwrap();
            r["facts"][0]["citation"].clone()
        };
        let now = cited(250);
        assert_eq!(now["source"]["kind"], json!("document"), "{now}");
        assert_eq!(now["span"]["start"], json!(0), "{now}");
        assert_eq!(cited(150)["source"]["kind"], json!("asserted"), "as of before, it was only asserted");
    }
}
