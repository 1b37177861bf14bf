//! `note_list`: the caller's visible notes (current, or as they stood at `as_of`), filtered by
//! `key`, `kind`, `visibility` and `taskId`, optionally ranked by a hybrid `query`, paged by an
//! opaque cursor bound to the whole request. Without `query` notes come in identity order
//! (key, then visibility and owner), which is stable under concurrent writes, and the cursor holds
//! the last identity returned; with `query` they come best first and the cursor holds an offset.

use super::cursor::{Binding, u64_position};
use super::fields::{Fields, limit, short_name};
use super::record::{CUR, KINDS, NoteRecord, VER, Visibility, check_key};
use super::search::rank;
use super::visibility::Viewer;
use super::{Outcome, invalid};
use crate::knowledge::api::Caller;
use crate::snapshot::Snapshot;
use crate::store::Store;
use serde_json::{Map, Value, json};

/// Cursor position tags.
const AFTER_IDENTITY: u8 = 0;
const AT_OFFSET: u8 = 1;

struct Request {
    key: Option<String>,
    kind: Option<String>,
    visibility: Option<Visibility>,
    task_id: Option<String>,
    query: Option<String>,
    as_of: Option<i64>,
    private: bool,
    limit: usize,
    cursor: Option<String>,
}

fn parse(body: &[u8]) -> Outcome<Request> {
    let mut f = Fields::parse(body)?;
    let key = f.string("key")?;
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
    let task_id = f.string("taskId")?;
    if let Some(t) = &task_id {
        short_name("taskId", t)?;
    }
    if visibility == Some(Visibility::Task) && task_id.is_none() {
        return Err(invalid("taskId", "is required to list task notes"));
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
    f.finish()?;
    Ok(Request { key, kind, visibility, task_id, query, as_of, private, limit, cursor })
}

/// Runs `note_list` for `caller`.
pub(crate) fn run(store: &Store, caller: &Caller, body: &[u8]) -> Outcome<Value> {
    let req = parse(body)?;
    let binding = Binding::new(
        "note_list",
        caller,
        &json!({
            "key": req.key, "kind": req.kind, "visibility": req.visibility.map(Visibility::as_str),
            "taskId": req.task_id, "query": req.query, "as_of": req.as_of, "private": req.private,
        }),
    );
    let position = req.cursor.as_deref().map(|c| binding.position(c)).transpose()?;
    let viewer = Viewer { agent: &caller.agent, task_id: req.task_id.as_deref(), private: req.private };
    let snap = store.snapshot()?;
    let notes: Vec<NoteRecord> = candidates(&snap, caller, &req)?
        .into_iter()
        .filter(|n| viewer.sees(n))
        .filter(|n| req.kind.as_ref().is_none_or(|k| &n.kind == k))
        .filter(|n| req.visibility.is_none_or(|v| n.visibility() == v))
        .filter(|n| req.visibility != Some(Visibility::Task) || n.task_id() == req.task_id.as_deref())
        .collect();
    match &req.query {
        None => {
            let after = match position {
                Some(p) if p.first() == Some(&AFTER_IDENTITY) => Some(p[1..].to_vec()),
                Some(_) => return Err(invalid("cursor", "is damaged")),
                None => None,
            };
            let rest: Vec<&NoteRecord> = notes
                .iter()
                .filter(|n| after.as_ref().is_none_or(|a| n.identity().encode().as_bytes() > a.as_slice()))
                .collect();
            let page: Vec<Value> = rest.iter().take(req.limit).map(|n| n.render()).collect();
            let next = (rest.len() > req.limit).then(|| {
                let last = rest[req.limit - 1].identity().encode();
                binding.cursor(&[&[AFTER_IDENTITY][..], last.as_bytes()].concat())
            });
            Ok(json!({ "notes": page, "nextCursor": next }))
        }
        Some(q) => {
            let offset = match position {
                Some(p) if p.first() == Some(&AT_OFFSET) => {
                    usize::try_from(u64_position(&p[1..])?).unwrap_or(usize::MAX)
                }
                Some(_) => return Err(invalid("cursor", "is damaged")),
                None => 0,
            };
            let texts: Vec<String> = notes.iter().map(NoteRecord::search_text).collect();
            let ranked = rank(q, &texts);
            let page: Vec<Value> = ranked
                .iter()
                .skip(offset)
                .take(req.limit)
                .map(|r| {
                    let mut note = notes[r.index].render();
                    let ranks: Map<String, Value> = r.ranks.iter().map(|(c, k)| ((*c).to_owned(), json!(k))).collect();
                    let channels: Vec<&str> = r.ranks.iter().map(|(c, _)| *c).collect();
                    note["receipt"] = json!({ "channels": channels, "ranks": ranks, "score": r.score });
                    note
                })
                .collect();
            let end = offset.saturating_add(req.limit);
            let next =
                (ranked.len() > end).then(|| binding.cursor(&[&[AT_OFFSET][..], &(end as u64).to_be_bytes()].concat()));
            Ok(json!({ "notes": page, "nextCursor": next }))
        }
    }
}

/// The notes of the partition (of one key, when given), current or as of a time, in identity order.
fn candidates(snap: &Snapshot, caller: &Caller, req: &Request) -> Outcome<Vec<NoteRecord>> {
    let part = &caller.part;
    let prefix = match &req.key {
        Some(k) => part.key(&[k.as_bytes(), b"\0"]),
        None => part.key(&[]),
    };
    let Some(as_of) = req.as_of else {
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
