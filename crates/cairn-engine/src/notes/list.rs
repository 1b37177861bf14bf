//! `note_list`: the caller's visible notes (current, or as they stood at `as_of`), filtered by
//! `key`, `kind`, `visibility` and `taskId`, optionally ranked by a hybrid `query`, paged by an
//! opaque cursor bound to the whole request. `taskId` is a filter (DESIGN.md §2): only that task's
//! notes, which naming it makes visible; `user` and `agent` notes have no task, so `taskId` with
//! either visibility is refused. `viewTaskId` (not a verb field: `memory_context` sends it) only
//! makes a task's notes visible beside the caller's others. Without `query` notes come in identity order
//! (key, then visibility and owner), which is stable under concurrent writes, and the cursor holds
//! the last identity returned; with `query` they come best first and the cursor holds an offset.
//! A query over current notes reads the index (`index.rs`) and only the page's records.

use super::cursor::{Binding, u64_position};
use super::events::PAGE_BYTES;
use super::fields::{Fields, limit, readable_scopes, short_name};
use super::notes_elsewhere::{Wanted, holds_here, listed_elsewhere};
use super::record::{CUR, Identity, KINDS, NoteRecord, VER, Visibility, check_key};
use super::search::{Features, Query, features, fuse};
use super::visibility::Viewer;
use super::{Outcome, invalid};
use super::{index, list_meant, list_tasks, lookup};
use crate::error::Error;
use crate::knowledge::Partition;
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use crate::store::Store;
use serde_json::{Map, Value, json};
use std::ops::Bound;

/// Cursor position tags.
const AFTER_IDENTITY: u8 = 0;
const AT_OFFSET: u8 = 1;

struct Request {
    key: Option<String>,
    kind: Option<String>,
    visibility: Option<Visibility>,
    task_id: Option<String>,
    view_task_id: Option<String>,
    query: Option<String>,
    as_of: Option<i64>,
    private: bool,
    limit: usize,
    cursor: Option<String>,
    /// Whether an empty first page names what it may have meant (`list_meant`) and the caller's
    /// other scopes holding notes it asks for (`notes_elsewhere`); not a verb field:
    /// `memory_context`, which lists only to rank, sends `false`.
    offer: bool,
    /// The scopes the caller's token may use (`readableScopes`, from the node; absent: every one).
    readable: Option<Vec<String>>,
}

fn parse(body: &[u8]) -> Outcome<Request> {
    let mut f = Fields::parse(body)?;
    let key = f.name("key")?;
    if let Some(k) = &key {
        check_key(k)?;
    }
    let kind = f.string("kind")?;
    if let Some(k) = &kind
        && !KINDS.contains(&k.as_str())
    {
        return Err(invalid("kind", format_args!("must be one of {}, got {k:?}", KINDS.join(", "))));
    }
    let visibility = match f.string("visibility")? {
        Some(v) => Some(Visibility::parse(Some(&v))?),
        None => None,
    };
    let task_id = f.name("taskId")?;
    if let Some(t) = &task_id {
        short_name("taskId", t)?;
    }
    if let Some(v) = visibility
        && v != Visibility::Task
        && task_id.is_some()
    {
        return Err(invalid("taskId", format_args!("filters task notes; {} notes have no task", v.as_str())));
    }
    let view_task_id = f.name("viewTaskId")?;
    if let Some(t) = &view_task_id {
        short_name("viewTaskId", t)?;
    }
    let query = f.string("query")?;
    if let Some(q) = &query
        && (q.trim().is_empty() || q.len() > 4096)
    {
        return Err(invalid("query", "must be 1..=4096 bytes and not blank"));
    }
    let as_of = f.i64("as_of")?;
    let allow_private = f.bool("allowPrivate")?.unwrap_or(false);
    let private = f.bool("includePrivate")?.unwrap_or(false) && allow_private;
    let limit = limit(&mut f)?;
    let cursor = f.string("cursor")?;
    let offer = f.bool("offer")?.unwrap_or(true);
    let readable = readable_scopes(&mut f)?;
    f.finish()?;
    Ok(Request { key, kind, visibility, task_id, view_task_id, query, as_of, private, limit, cursor, offer, readable })
}

/// Runs `note_list` for `caller`.
pub(crate) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let req = parse(body)?;
    if req.visibility == Some(Visibility::Task) && req.task_id.is_none() {
        // Refused once every field is read, naming the tasks that hold notes (`list_tasks`).
        return Err(list_tasks::task_id_required(&store.snapshot()?, &caller.part)?);
    }
    // Hashed only for a cursor given or given out: most lists (a key's note) need neither, and
    // the hash was a seventh of a one-key list on the event loop.
    let binding = std::cell::LazyCell::new(|| {
        Binding::new(
            "note_list",
            caller,
            &json!({
                "key": req.key, "kind": req.kind, "visibility": req.visibility.map(Visibility::as_str),
                "taskId": req.task_id, "viewTaskId": req.view_task_id, "query": req.query, "as_of": req.as_of, "private": req.private,
            }),
        )
    });
    let position = req.cursor.as_deref().map(|c| binding.position(c)).transpose()?;
    let task_id = req.task_id.as_deref().or(req.view_task_id.as_deref());
    let viewer = Viewer { agent: &caller.agent, task_id, private: req.private };
    let snap = store.snapshot()?;
    let Some(text) = &req.query else {
        let after = match position {
            Some(p) if p.first() == Some(&AFTER_IDENTITY) => Some(p[1..].to_vec()),
            Some(_) => return Err(invalid("cursor", "is damaged")),
            None => None,
        };
        let rest: Vec<NoteRecord> = if req.as_of.is_none() {
            // Current notes: seek to the cursor and stop once the page and one more are found.
            let prefix = key_prefix(&caller.part, req.key.as_deref());
            let start = after.as_ref().map(|a| caller.part.key(&[a]));
            let bound = match &start {
                Some(s) if s.as_slice() >= prefix.as_slice() => Bound::Excluded(s.as_slice()),
                _ => Bound::Included(prefix.as_slice()),
            };
            let mut rest = Vec::with_capacity(req.limit + 1);
            for kv in snap.range(CUR, bound, Bound::Unbounded)? {
                let (k, v) = kv?;
                if !k.starts_with(&prefix) || rest.len() > req.limit {
                    break;
                }
                let n = NoteRecord::decode(&v)?;
                if viewer.sees(&n) && req.admits(&n.identity(), &n.kind) {
                    rest.push(n);
                }
            }
            rest
        } else {
            candidates(&snap, caller, req.key.as_deref(), req.as_of)?
                .into_iter()
                .filter(|n| viewer.sees(n) && req.admits(&n.identity(), &n.kind))
                .filter(|n| after.as_ref().is_none_or(|a| n.identity().encode().as_bytes() > a.as_slice()))
                .collect()
        };
        let page = bounded(rest.iter().take(req.limit).map(|n| Ok(n.render())))?;
        let next = (rest.len() > page.len()).then(|| {
            let last = rest[page.len() - 1].identity().encode();
            binding.cursor(&[&[AFTER_IDENTITY][..], last.as_bytes()].concat())
        });
        let empty_first = page.is_empty() && after.is_none();
        let meant = req.meant(&snap, caller, None, empty_first)?;
        let elsewhere = req.elsewhere(&snap, caller, viewer, (empty_first, false))?;
        return Ok(with_meant(json!({ "notes": page, "nextCursor": next }), meant, elsewhere));
    };
    let (offset, pinned) = ranked_position(position.as_deref())?;
    let as_of = req.as_of.or(pinned);
    let query = Query::new(text);
    let end = offset.saturating_add(req.limit);
    // Current notes rank from the index; `as_of` reads, short queries (a substring test) and
    // queries within one key (a few notes) scan. Either way candidates come in note id order,
    // which ties keep.
    let (notes, ranked) = if as_of.is_none() && query.short.is_none() && req.key.is_none() {
        let admit = |m: &index::Meta<'_>| {
            let kind = KINDS.get(usize::from(m.kind)).copied().unwrap_or_default();
            viewer.sees_parts(m.visibility, m.owner, m.private) && req.admits_parts(None, m.visibility, m.owner, kind)
        };
        let (ids, docs): (Vec<u64>, Vec<Features>) =
            lookup::lookup(&snap, &caller.part, &query, &admit)?.into_iter().map(|h| (h.id, h.features)).unzip();
        let ranked = fuse(&query, &docs, end);
        (Found::Indexed(ids), ranked)
    } else {
        let mut notes: Vec<NoteRecord> = candidates(&snap, caller, req.key.as_deref(), as_of)?
            .into_iter()
            .filter(|n| viewer.sees(n) && req.admits(&n.identity(), &n.kind))
            .collect();
        notes.sort_by_key(|n| n.id);
        let docs: Vec<Features> = notes.iter().map(|n| features(&query, &n.search())).collect();
        let ranked = fuse(&query, &docs, end);
        (Found::Read(notes), ranked)
    };
    let page = bounded(ranked.best.iter().skip(offset).take(req.limit).map(|r| {
        let mut note = notes.render(r.index, &snap, &caller.part)?;
        let ranks: Map<String, Value> = r.ranks().map(|(c, k)| (c.to_owned(), json!(k))).collect();
        let channels: Vec<&str> = r.ranks().map(|(c, _)| c).collect();
        note["receipt"] = json!({ "channels": channels, "ranks": ranks, "score": r.score });
        Ok(note)
    }))?;
    let shown_to = offset + page.len();
    let pin = req.as_of.is_none().then(|| as_of.unwrap_or(caller.now));
    let next = (ranked.total > shown_to).then(|| binding.cursor(&ranked_at(shown_to, pin)));
    let empty_first = page.is_empty() && offset == 0;
    let meant = req.meant(&snap, caller, Some(&query), empty_first)?;
    let elsewhere = req.elsewhere(&snap, caller, viewer, (empty_first, true))?;
    Ok(with_meant(json!({ "notes": page, "nextCursor": next }), meant, elsewhere))
}

/// A query's cursor position: the offset into its ranking and, when the list has no `as_of` of its
/// own, the time of its first page, which later pages read the notes as of. A later page ranks
/// them as they stood then: an offset into a ranking that another agent's write between pages
/// reorders repeated or skipped notes (found in QA: a note on both pages after one write). A
/// position given out before (the offset alone) reads the notes as they are now.
fn ranked_position(position: Option<&[u8]>) -> Outcome<(usize, Option<i64>)> {
    let (offset, pinned) = match position {
        Some([AT_OFFSET, at @ ..]) if at.len() == 8 => (u64_position(at)?, None),
        Some([AT_OFFSET, at @ ..]) if at.len() == 16 => (u64_position(&at[..8])?, Some(u64_position(&at[8..])?)),
        Some(_) => return Err(invalid("cursor", "is damaged")),
        None => (0, None),
    };
    Ok((usize::try_from(offset).unwrap_or(usize::MAX), pinned.map(u64::cast_signed)))
}

/// The position `ranked_position` reads.
fn ranked_at(offset: usize, pin: Option<i64>) -> Vec<u8> {
    let mut at = [&[AT_OFFSET][..], &(offset as u64).to_be_bytes()].concat();
    if let Some(t) = pin {
        at.extend(t.to_be_bytes());
    }
    at
}

/// `reply` with `did_you_mean` when an empty first page may have meant some notes (`list_meant`),
/// and `elsewhere` when the caller's other scopes hold notes it asked for (`notes_elsewhere`).
fn with_meant(mut reply: Value, meant: Vec<Value>, elsewhere: Option<Value>) -> Value {
    if !meant.is_empty() {
        reply["did_you_mean"] = Value::Array(meant);
    }
    if let Some(there) = elsewhere {
        reply["elsewhere"] = there;
    }
    reply
}

/// A page of `notes` (rendered lazily, in page order): it ends early, before the note that would
/// take its JSON past `PAGE_BYTES` (history's bound), though it always holds one. Found by an
/// audit: 20 notes of 60 KB values made a default page of 1.2 MB, `limit: 100` 6 MB;
/// `nextCursor` continues after the last note shown.
fn bounded(notes: impl Iterator<Item = Outcome<Value>>) -> Outcome<Vec<Value>> {
    let (mut page, mut bytes) = (Vec::new(), 0);
    for note in notes {
        let note = note?;
        let size = serde_json::to_vec(&note).map_or(0, |v| v.len()) + 1;
        if !page.is_empty() && bytes + size > PAGE_BYTES {
            break;
        }
        bytes += size;
        page.push(note);
    }
    Ok(page)
}

/// The ranked candidates: notes read already (scan), or the ids of index hits, whose records
/// are read only when they make the page.
enum Found {
    Read(Vec<NoteRecord>),
    Indexed(Vec<u64>),
}

impl Found {
    fn render(&self, at: usize, snap: &Snapshot, part: &Partition) -> Outcome<Value> {
        match self {
            Found::Read(notes) => Ok(notes[at].render()),
            Found::Indexed(ids) => {
                let missing = || Error::corrupt(None, format!("indexed note {} is missing", ids[at]));
                let identity = snap.get(index::IDS, &index::id_key(part, ids[at]))?.ok_or_else(missing)?;
                let bytes = snap.get(CUR, &part.key(&[&identity]))?.ok_or_else(missing)?;
                Ok(NoteRecord::decode(&bytes)?.render())
            }
        }
    }
}

impl Request {
    /// What an empty first page (`empty_first`) may have meant (`list_meant`): the notes its
    /// `key` may name, else those of the tasks spelled like its `taskId` (when that task holds
    /// none), else those its `query` (given when the list has one) matches in tasks.
    fn meant(&self, snap: &Snapshot, caller: &Caller, query: Option<&Query>, empty_first: bool) -> Outcome<Vec<Value>> {
        if !self.offer || !empty_first {
            return Ok(Vec::new());
        }
        if let Some(key) = &self.key {
            return Ok(list_meant::keys_meant(snap, caller, key, self.visibility, self.task_id.as_deref())?);
        }
        if let Some(task_id) = &self.task_id {
            return Ok(list_meant::tasks_meant(snap, caller, task_id)?);
        }
        // The index holds current notes only (and no short query), and a task or visibility asked
        // for is looked in already.
        match query {
            Some(q)
                if self.as_of.is_none() && q.short.is_none() && self.task_id.is_none() && self.visibility.is_none() =>
            {
                Ok(list_meant::tasks_matching(snap, caller, q, self.kind.as_deref())?)
            }
            _ => Ok(Vec::new()),
        }
    }

    /// For an empty first page (`empty_first`) of current notes: the caller's other scopes, among
    /// `readable`, holding notes `viewer` sees that the filters admit (`notes_elsewhere`). A
    /// `query`'s page may be empty where notes are (none matched): then only when this scope holds
    /// none the filters admit. An `as_of` list is not looked for elsewhere (versions, not current
    /// notes, would have to be read).
    fn elsewhere(
        &self,
        snap: &Snapshot,
        caller: &Caller,
        viewer: Viewer<'_>,
        (empty_first, queried): (bool, bool),
    ) -> Result<Option<Value>, Error> {
        if !self.offer || !empty_first || self.as_of.is_some() {
            return Ok(None);
        }
        let admit = |visibility: Visibility, owner: &str, private: bool, kind: &str| {
            viewer.sees_parts(visibility, owner, private)
                && self.admits_parts(self.key.as_deref(), visibility, owner, kind)
        };
        let wanted = Wanted { key: self.key.as_deref(), admit: &admit };
        if queried && holds_here(snap, caller, wanted)? {
            return Ok(None);
        }
        listed_elsewhere(snap, caller, self.readable.as_deref(), wanted, queried)
    }

    /// Whether the filters admit a note of this identity and kind.
    fn admits(&self, id: &Identity, kind: &str) -> bool {
        self.admits_parts(Some(&id.key), id.visibility, &id.owner, kind)
    }

    /// `admits`, from an identity's parts; `key` may be unknown (`None`) only when the request
    /// names no key.
    fn admits_parts(&self, key: Option<&str>, visibility: Visibility, owner: &str, kind: &str) -> bool {
        self.key.as_ref().is_none_or(|k| key == Some(k.as_str()))
            && self.kind.as_ref().is_none_or(|k| k == kind)
            && self.visibility.is_none_or(|v| visibility == v)
            && self.task_id.as_ref().is_none_or(|t| visibility == Visibility::Task && owner == t)
    }
}

/// The notes of the partition (of one key, when given), current or as of a time, in identity order.
fn candidates(snap: &Snapshot, caller: &Caller, key: Option<&str>, as_of: Option<i64>) -> Outcome<Vec<NoteRecord>> {
    let prefix = key_prefix(&caller.part, key);
    let Some(as_of) = as_of else {
        return Ok(snap
            .prefix(CUR, &prefix)?
            .map(|kv| kv.and_then(|(_, v)| NoteRecord::decode(&v)))
            .collect::<Result<_, _>>()?);
    };
    // Versions sort by identity, then version: keep the last one written by `as_of`.
    let mut out: Vec<NoteRecord> = Vec::new();
    for kv in snap.prefix(VER, &prefix)? {
        let note = NoteRecord::decode(&kv?.1)?;
        if note.updated_at > as_of {
            continue;
        }
        match out.last_mut() {
            Some(last) if last.identity() == note.identity() => *last = note,
            _ => out.push(note),
        }
    }
    Ok(out)
}

/// `part | key \0` when listing one key, else `part`.
fn key_prefix(part: &Partition, key: Option<&str>) -> Vec<u8> {
    match key {
        Some(k) => part.key(&[k.as_bytes(), b"\0"]),
        None => part.key(&[]),
    }
}
