//! Export of a partition as JSON records, paged. The record kinds are walked in the order of
//! `KINDS`, each by one function over its own tree in key order, so a page boundary is
//! `(kind, last key)` and the cursor (`cursor.rs`) names exactly that; a note too large for its
//! page is several records (`notes::exchange_windows`), and a page may stop between two of them:
//! `(kind, its key, the last version returned)`. Notes and handoffs come last, their records made
//! by the notes engine (`notes::exchange`, `notes::handoff_exchange`).
//! Only live data is exported: forgotten records are gone from the trees, and a document lists
//! only the passages it still has. Private notes are exported only when asked for (`private`:
//! the node allows private notes and the caller sends `includePrivate`); otherwise the header
//! counts them in `withheld.private_notes` (and private earlier versions of the notes it carries
//! in `withheld.private_versions`), so an export never looks complete when it is not. That is all
//! it leaves out of what the reader may read; another agent's own notes, which it may not read,
//! are neither exported nor counted (their existence is not the reader's to learn).

use super::cursor::Cursor;
use super::docs::{Document, PassageSpan};
use super::fact_attribute_time::{self, WritesIn};
use super::graph::{Entity, Relation, Source};
use super::import::{IMPORT_MAP, reserved_key};
use super::origin::Origin;
use super::part::Partition;
use super::records::decode;
use super::trees::{DOC, ENT, PSG, REL, ent_key};
use super::version_writes::{self, Lists};
use crate::error::{Error, Result};
use crate::notes;
use crate::notes::exchange_windows::Window;
use crate::snapshot::Snapshot;
use crate::time::iso_ms;
use serde_json::{Value, json};
use std::ops::Bound;

/// The export format's name and version, as the header record states them.
pub const FORMAT: &str = "cairn.export";
pub const FORMAT_VERSION: u64 = 1;
/// Records per page unless asked otherwise, and the most a page may hold.
pub const DEFAULT_LIMIT: usize = 500;
pub const MAX_LIMIT: usize = 5000;
/// The most bytes a page's `records` array takes as JSON unless the caller asks for less
/// (`maxBytes`): half of the 8 MiB body `memory_import` accepts, so any page sent back as it
/// came is accepted, with room for the request around it and for a client that escapes more than
/// we do (found by an audit: nine 1 MB documents made one 9.5 MB page that import refused with
/// 413). A page still holds at least one record, however large: one larger than the bound comes
/// alone.
pub const PAGE_BYTES: usize = 4 * 1024 * 1024;
/// The least `maxBytes` a caller may ask for.
pub const MIN_PAGE_BYTES: usize = 1024;

/// Whose export this is: whether private notes are asked for (`allowPrivate && includePrivate`),
/// and the agent whose agent-visibility notes it may carry (`None`: every agent's, for an admin).
#[derive(Debug, Clone, Copy)]
pub struct Reader<'a> {
    pub private: bool,
    pub agent: Option<&'a str>,
}

/// Turns one stored value of a kind's tree into its export record (`None`: not exported, as a
/// private note not asked for or another agent's note).
/// `lists` keeps what a page read of the facts its versions belong to (`version_writes::Lists`).
type ToRecord = fn(&Snapshot, &Partition, &[u8], &Reader<'_>, &mut Lists) -> Result<Option<Value>>;

/// Whether a stored value of a kind's tree gives the reader a record (as its `ToRecord` decides,
/// without building the record); `None` for a kind whose every value gives one.
type Exported = Option<fn(&[u8], &Reader<'_>) -> Result<bool>>;

/// Turns one stored value into the export record of its versions (a note's) or writes (an
/// entity's, a fact's) after `from` (0: the first) within `room` bytes of a page of `page` bytes,
/// naming the page's `origin` (`notes::exchange_windows`, `write_runs`): for a value that may
/// need several records, a page able to stop between them. `lists` as for `ToRecord`.
type ToWindow =
    fn(&Snapshot, &Partition, &[u8], &Reader<'_>, (u64, usize, usize), (&Value, &mut Lists)) -> Result<Option<Window>>;

/// How a kind makes its records: one per stored value, or one per window of a value's versions.
#[derive(Clone, Copy)]
enum Make {
    Whole(ToRecord),
    Split(ToWindow),
}

/// One record kind: its name and, for kinds stored one record per key, the tree it walks, how
/// a stored value becomes export records, and whether a value gives one.
struct Kind {
    name: &'static str,
    walk: Option<(&'static str, Make, Exported)>,
}

/// The kinds in export order. The header has no tree: it is one record, first.
const KINDS: [Kind; 6] = [
    Kind { name: "header", walk: None },
    Kind { name: "entity", walk: Some((ENT, Make::Split(entity_window), None)) },
    Kind { name: "fact", walk: Some((REL, Make::Split(fact_window), None)) },
    Kind { name: "document", walk: Some((DOC, Make::Whole(document_record), None)) },
    Kind { name: "note", walk: Some((notes::exchange::TREE, Make::Split(note_window), Some(note_exported))) },
    Kind { name: "handoff", walk: Some((notes::handoff_exchange::TREE, Make::Whole(handoff_record), None)) },
];

fn note_window(
    snap: &Snapshot,
    part: &Partition,
    value: &[u8],
    reader: &Reader<'_>,
    (from, room, _): (u64, usize, usize),
    (origin, _): (&Value, &mut Lists),
) -> Result<Option<Window>> {
    notes::exchange_windows::window(snap, part, value, (reader.private, reader.agent), (from, room), origin)
}

fn entity_window(
    snap: &Snapshot,
    part: &Partition,
    value: &[u8],
    _reader: &Reader<'_>,
    at: (u64, usize, usize),
    (origin, _): (&Value, &mut Lists),
) -> Result<Option<Window>> {
    super::entity_windows::window(snap, part, value, at, origin)
}

/// A fact's record, cut into runs of its attribute writes when no page could hold it whole
/// (`write_runs.rs`; found by a review: a fact related 2,000 times made one 309 KB record on a
/// page asked for at 64 KiB).
fn fact_window(
    snap: &Snapshot,
    part: &Partition,
    value: &[u8],
    _reader: &Reader<'_>,
    at: (u64, usize, usize),
    (origin, lists): (&Value, &mut Lists),
) -> Result<Option<Window>> {
    let mut record = fact_record(snap, part, value, lists)?;
    record["origin"] = origin.clone();
    let wire = match record.as_object_mut().and_then(|r| r.remove("attribute_writes")) {
        Some(Value::Array(writes)) => writes,
        _ => Vec::new(),
    };
    Ok(super::write_runs::cut(record, wire, at))
}

fn note_exported(value: &[u8], reader: &Reader<'_>) -> Result<bool> {
    notes::exchange::exported(value, reader.private, reader.agent)
}

fn handoff_record(
    _snap: &Snapshot,
    _part: &Partition,
    value: &[u8],
    _reader: &Reader<'_>,
    _lists: &mut Lists,
) -> Result<Option<Value>> {
    notes::handoff_exchange::record(value).map(Some)
}

/// The names of the kinds, in export order.
#[must_use]
pub fn kind_names() -> Vec<&'static str> {
    KINDS.iter().map(|k| k.name).collect()
}

fn entity_name(snap: &Snapshot, part: &Partition, id: u64) -> Result<Option<String>> {
    snap.get(ENT, &ent_key(part, id))?.map(|b| decode::<Entity>(&b, "entity").map(|e| e.name)).transpose()
}

/// A fact's provenance as exported: `{kind, doc_id?, label, agent, forgotten?}`.
fn provenance(snap: &Snapshot, part: &Partition, source: &Source, agent: &str) -> Result<Value> {
    Ok(match source {
        Source::Asserted { label } => json!({ "kind": "asserted", "label": label, "agent": agent }),
        Source::Document { doc_id, label } => {
            let mut p = json!({ "kind": "document", "doc_id": doc_id.to_string(), "label": label, "agent": agent });
            // Its document was forgotten (the fact kept): no document record will come, so import
            // must not wait for one (found by an audit: the copy said "source_not_imported").
            if snap.get(DOC, &part.key(&[&doc_id.to_be_bytes()]))?.is_none()
                && snap.get(IMPORT_MAP, &reserved_key(part, *doc_id))?.is_none()
            {
                p["forgotten"] = json!(true);
            }
            p
        }
    })
}

fn fact_record(snap: &Snapshot, part: &Partition, value: &[u8], lists: &mut Lists) -> Result<Value> {
    let mut r: Relation = decode(value, "relation")?;
    // An earlier version counts the writes it holds of its fact's, or, holding writes of its own,
    // travels with them.
    let from_fact = version_writes::count(snap, part, &r, lists)?;
    if from_fact.is_some() {
        r.attribute_writes = Vec::new();
    } else {
        WritesIn::fill(snap, part, &mut r, None)?;
    }
    let mut provenance = provenance(snap, part, &r.source, &r.agent)?;
    if !r.also.is_empty() {
        // Every other provenance that stated it, with when it did, so a copy keeps the fact
        // while any of them is left (`fact_sources.rs`).
        let mut also = Vec::new();
        for a in &r.also {
            let mut entry = self::provenance(snap, part, &a.source, &a.agent)?;
            entry["recorded_at"] = json!(iso_ms(a.recorded_at));
            if let Some(date) = &a.source_date {
                entry["source_date"] = json!(date);
            }
            also.push(entry);
        }
        provenance["also"] = Value::Array(also);
    }
    let mut record = json!({
        "kind": "fact",
        "id": r.id.to_string(),
        "from": r.from.to_string(),
        "to": r.to.to_string(),
        // Names travel with the ids so a fact page imported before its entities' page resolves.
        "from_name": entity_name(snap, part, r.from)?,
        "to_name": entity_name(snap, part, r.to)?,
        "type": r.rel_type,
        "attributes": r.attributes,
        "valid_from": r.valid_from,
        "valid_to": r.valid_to,
        "recorded_at": iso_ms(r.recorded_at),
        "provenance": provenance,
    });
    if let Some(ended) = r.ended_at {
        record["ended_at"] = json!(iso_ms(ended));
    }
    if let Some(said) = &r.source_date {
        record["source_date"] = json!(said);
    }
    if let Some(before) = &r.shortened {
        // The end it had until a `replaces` ended it: an `as_of` read of the copy before
        // `ended_at` sees that one (found by an audit: the copy showed the end too early).
        record["valid_to_before_end"] = json!(before.valid_to);
    }
    if !r.attribute_writes.is_empty() {
        // Which value is true when depends on each write's start (`fact_attribute_time.rs`): the
        // record holds only each key's last write.
        record["attribute_writes"] = fact_attribute_time::on_the_wire(&r.attribute_writes);
    }
    if let Some(n) = from_fact {
        record[version_writes::FIELD] = json!(n);
    }
    if let Some(fact) = r.version_of {
        // An earlier version of a revised fact (exported after it: its id is later), for `as_of`
        // reads on the copy; `import` keeps it a version, never a second fact.
        record["version_of"] = json!(fact.to_string());
    }
    Ok(record)
}

fn document_record(
    snap: &Snapshot,
    part: &Partition,
    value: &[u8],
    _reader: &Reader<'_>,
    _lists: &mut Lists,
) -> Result<Option<Value>> {
    let d: Document = decode(value, "document")?;
    let doc_prefix = part.key(&[&d.id.to_be_bytes()]);
    let mut passages = Vec::new();
    for item in snap.prefix(PSG, &doc_prefix)? {
        let (key, value) = item?;
        let ordinal = key
            .get(doc_prefix.len()..)
            .and_then(|t| t.try_into().ok())
            .map(u32::from_be_bytes)
            .ok_or_else(|| Error::corrupt(None, "a passage key has no ordinal"))?;
        let span: PassageSpan = decode(&value, "passage")?;
        passages.push(json!({ "ordinal": ordinal, "start": span.start, "end": span.end }));
    }
    Ok(Some(json!({
        "kind": "document",
        "id": d.id.to_string(),
        "text": d.text,
        "label": d.label,
        "date": d.date,
        "ingested_at": iso_ms(d.ingested_at),
        "passages": passages,
    })))
}

/// How many bytes `value` takes as JSON.
pub(crate) fn json_len(value: &Value) -> usize {
    /// Counts what the serializer writes, keeping none of it.
    struct Counter(usize);
    impl std::io::Write for Counter {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter(0);
    serde_json::to_writer(&mut counter, value).expect("a JSON value serialises");
    counter.0
}

/// Where the page after a full one starts, the page ending at `after` in kind `at`: at the first
/// stored value from there that gives the reader a record, the values before it (notes not the
/// reader's) passed over; `None` when none is left, so the page holding the last record says
/// there is no next (found by a review: when the last notes were another agent's, that page
/// handed out a cursor to a page of no record). It reads one key of any other kind, and the notes
/// up to the next the reader gets, which the next page would read anyway.
fn next_start(
    snap: &Snapshot,
    part: &Partition,
    mut at: usize,
    mut after: Vec<u8>,
    reader: &Reader<'_>,
) -> Result<Option<Cursor>> {
    while at < KINDS.len() {
        let kind = &KINDS[at];
        let Some((tree, _, exported)) = kind.walk else {
            return Ok(Some(Cursor { kind: kind.name.into(), after, part_way: None }));
        };
        let from = [part.prefix(), &after].concat();
        let lower = if after.is_empty() { Bound::Included(&from[..]) } else { Bound::Excluded(&from[..]) };
        for item in snap.range(tree, lower, Bound::Unbounded)? {
            let (key, value) = item?;
            let Some(suffix) = key.strip_prefix(part.prefix()) else { break };
            if exported.map_or(Ok(true), |given| given(&value, reader))? {
                return Ok(Some(Cursor { kind: kind.name.into(), after, part_way: None }));
            }
            after = suffix.to_vec();
        }
        at += 1;
        after = Vec::new();
    }
    Ok(None)
}

/// A page being filled: its records, the bytes they take as a JSON array (its opening bracket,
/// then each record with the comma or closing bracket after it), and its bounds. A record that
/// would take the page past `page_bytes` starts the next page instead (found by an audit at 440k
/// records: pages asked for 64 KiB and 4 MiB came at up to 66.5 KiB and 4.004 MiB, the record
/// that crossed the bound kept, commas uncounted), as notes, history and recall pages end.
struct Fill<'a> {
    snap: &'a Snapshot,
    part: &'a Partition,
    reader: &'a Reader<'a>,
    origin: Value,
    lists: Lists,
    records: Vec<Value>,
    bytes: usize,
    limit: usize,
    page_bytes: usize,
}

impl Fill<'_> {
    fn full(&self) -> bool {
        self.records.len() == self.limit || self.bytes >= self.page_bytes
    }

    /// Adds `r`, unless it would take a page holding a record already past its bound.
    fn add(&mut self, r: Value) -> bool {
        let size = json_len(&r) + 1;
        if !self.records.is_empty() && self.bytes + size > self.page_bytes {
            return false;
        }
        self.bytes += size;
        self.records.push(r);
        true
    }

    /// Adds the records of one stored value of `kind` (`suffix`: its key past the partition
    /// prefix; `after`: the key returned before it), from its versions after `from` (0: all);
    /// where the next page starts when this one ends before the value's last record: at the
    /// value again, or part-way through its versions once some left.
    fn add_value(
        &mut self,
        (kind, make): (&str, Make),
        value: &[u8],
        (after, suffix): (&[u8], &[u8]),
        mut from: u64,
    ) -> Result<Option<Cursor>> {
        let stop = |from: u64| match from {
            0 => Cursor { kind: kind.into(), after: after.to_vec(), part_way: None },
            v => Cursor { kind: kind.into(), after: suffix.to_vec(), part_way: Some(v) },
        };
        match make {
            Make::Whole(record) => {
                if let Some(mut r) = record(self.snap, self.part, value, self.reader, &mut self.lists)? {
                    r["origin"] = self.origin.clone();
                    if !self.add(r) {
                        return Ok(Some(stop(0)));
                    }
                }
            }
            Make::Split(window) => {
                let room = |f: &Self| f.page_bytes.saturating_sub(f.bytes);
                let at = |f: &Self, from: u64| (from, room(f), f.page_bytes);
                while let Some(w) =
                    window(self.snap, self.part, value, self.reader, at(self, from), (&self.origin, &mut self.lists))?
                {
                    if !self.add(w.record) {
                        return Ok(Some(stop(from)));
                    }
                    if !w.continued {
                        break;
                    }
                    from = w.last;
                    if self.full() {
                        return Ok(Some(stop(from)));
                    }
                }
            }
        }
        Ok(None)
    }
}

/// One page of an export.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub records: Vec<Value>,
    /// Where the next page starts; `None` on the page holding the last record the reader gets
    /// (`next_start`). A next page can still hold none when what it starts at left the store, or
    /// turned private, between the two pages (each reads its own snapshot).
    pub next: Option<String>,
}

/// Up to `limit` records of `part` from `cursor` (the start when `None`), as many as fit in
/// `page_bytes` (at most `PAGE_BYTES`) of JSON as an array, or the one record that does not;
/// `now` stamps the header;
/// `reader` says which notes it may carry (private ones withheld are counted in the header);
/// `origin` (`Origin::of` the store and `part`) is named in the header and in every record, so
/// an import keys each page's ids by where they were handed out, whichever page it reads first.
pub fn export(
    snap: &Snapshot,
    part: &Partition,
    origin: Origin,
    cursor: Option<&str>,
    (limit, page_bytes): (usize, usize),
    now: i64,
    reader: &Reader<'_>,
) -> Result<Page> {
    if limit == 0 || limit > MAX_LIMIT {
        return Err(Error::InvalidArgument(format!("limit must be 1..={MAX_LIMIT}, got {limit}")));
    }
    if !(MIN_PAGE_BYTES..=PAGE_BYTES).contains(&page_bytes) {
        return Err(Error::InvalidArgument(format!(
            "maxBytes: must be {MIN_PAGE_BYTES}..={PAGE_BYTES}, got {page_bytes}"
        )));
    }
    let start = match cursor {
        Some(text) => Cursor::decode(text, part, &kind_names())?,
        None => Cursor { kind: KINDS[0].name.to_owned(), after: Vec::new(), part_way: None },
    };
    let mut at = KINDS.iter().position(|k| k.name == start.kind).expect("decode checks the kind");
    let (mut after, mut part_way) = (start.after, start.part_way);
    let origin = origin.hex().map_or(Value::Null, Value::String);
    let mut fill =
        Fill { snap, part, reader, origin, lists: Lists::new(), records: Vec::new(), bytes: 1, limit, page_bytes };
    while at < KINDS.len() {
        let kind = &KINDS[at];
        let Some((tree, make, _)) = kind.walk else {
            let (_, _, scope) = part.parts();
            let (notes, versions) =
                if reader.private { (0, 0) } else { notes::exchange::private_count(snap, part, reader.agent)? };
            let header = json!({
                "kind": "header",
                "format": FORMAT,
                "version": FORMAT_VERSION,
                "scope": scope,
                "origin": fill.origin,
                "exported_at": iso_ms(now),
                "kinds": kind_names(),
                "withheld": { "private_notes": notes, "private_versions": versions },
            });
            // First on its page, so it always fits (`maxBytes` is at least 1 KiB).
            fill.add(header);
            at += 1;
            after = Vec::new();
            continue;
        };
        let from = [part.prefix(), &after].concat();
        // A page that stopped part-way through a value starts at that value again.
        let lower = if after.is_empty() || part_way.is_some() {
            Bound::Included(&from[..])
        } else {
            Bound::Excluded(&from[..])
        };
        for item in snap.range(tree, lower, Bound::Unbounded)? {
            let (key, value) = item?;
            let Some(suffix) = key.strip_prefix(part.prefix()) else { break };
            // Versions already returned of the value the page before stopped in (if still there).
            let done = part_way.take().filter(|_| suffix == after.as_slice()).unwrap_or(0);
            if fill.full() {
                // More of this kind is stored: the next page starts at the first the reader gets.
                let next = next_start(snap, part, at, after, reader)?;
                return Ok(Page { records: fill.records, next: next.map(|c| c.encode(part)) });
            }
            if let Some(next) = fill.add_value((kind.name, make), &value, (&after, suffix), done)? {
                return Ok(Page { records: fill.records, next: Some(next.encode(part)) });
            }
            after = suffix.to_vec();
        }
        at += 1;
        after = Vec::new();
    }
    Ok(Page { records: fill.records, next: None })
}
