//! A fact's attributes in valid time. A relation record holds each attribute's last write (as an
//! entity record does); once a call says the fact again with attribute values that change what
//! is true from the start it states, the record also keeps the list of its attribute writes
//! (`attribute_writes`), each with the attributes it set, that start (`valid_from` as the call
//! gave it, which its `date` becomes, else when it was written) and when it was recorded. The
//! first entry is what the fact held before: set from the fact's start as it was then.
//! A read at a valid instant (`valid_at`, or now for a plain read) shows, per key, the value of
//! the write with the latest start at or before the instant (a later write wins a tie), among
//! those recorded by `as_of`: the rule entity attributes follow (`attribute_time.rs`). A fact
//! never revised keeps no list and reads its attributes as set at its start, so the list costs
//! nothing there, and the fold runs only for a fact with more than one write. Transaction time
//! needs nothing more: a revision keeps the version known before (`version_of`, graph.rs) for
//! `as_of` reads before it; that version's list is the first writes of the fact's (`WritesIn`).
//! The list is stored apart from the record (`fact_writes.rs`) and read only when a read or a
//! write needs more than the record's attributes.

use super::fact_readings::stored_versions;
use super::fact_writes;
use super::graph::Relation;
use super::part::Partition;
use super::recall::When;
use super::records::encode;
use super::trees::{REL, rel_key};
use super::valid;
use crate::error::Result;
use crate::snapshot::Snapshot;
use crate::time::iso_ms;
use crate::write::WriteTxn;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};
use std::collections::{HashMap, HashSet};

/// One write of a fact's attributes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttributeWrite {
    /// The attributes it set (never `valid_from`/`valid_to`: those are the fact's interval).
    pub set: Map<String, Value>,
    /// When that became true, as stated; `None` (the fact's first attributes, on a fact with no
    /// start) from the fact's start, unbounded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    /// When the store learnt it (ms): for the first entry, when the version holding it was
    /// recorded.
    pub recorded: i64,
}

impl AttributeWrite {
    /// The instant it starts (ms); an unbounded start is before every instant.
    pub(crate) fn start(&self) -> i64 {
        self.from.as_deref().and_then(valid::bound).unwrap_or(i64::MIN)
    }

    /// This write as `on_the_wire` shows it.
    pub(crate) fn on_the_wire(&self) -> Value {
        json!({ "attributes": self.set, "from": self.from, "recorded_at": iso_ms(self.recorded) })
    }
}

/// Where an earlier version of a revised fact finds its attribute writes: the first `n` of record
/// `holder`'s list. A fact's list only grows at its end, so the version known before a revision
/// holds a prefix of it; each version holding its own copy made n revisions store n lists (found
/// by a review: 1,000 revisions of one fact's attributes took 160 MB, each write ~60 ms and a
/// recall ~250 ms, all growing with the square). `holder` is the fact, or, once a restore started
/// the fact's list anew, the copy of the earlier life that keeps it (`moved`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WritesIn {
    pub holder: u64,
    pub n: u32,
}

impl WritesIn {
    /// Points `copy`, the version known before a revision, at its fact's list, which starts with
    /// the writes the fact held then (a list only grows at its end).
    pub(crate) fn point(copy: &mut Relation) {
        if let (Some(holder), Some(kept), None) = (copy.version_of, copy.writes, copy.writes_in) {
            copy.writes_in = Some(WritesIn { holder, n: kept.n });
        }
    }

    /// `point` for an imported earlier version holding a list of its own, at its fact as stored
    /// here (imported first, as export orders them) when the fact's list starts with it, so a copy
    /// keeps one list too. One holding no list of its own (it counts its fact's writes:
    /// `version_writes.rs`) has nothing to point, and its fact's list is not read.
    pub(crate) fn point_at_stored(tx: &mut WriteTxn<'_>, part: &Partition, version: &mut Relation) -> Result<()> {
        let Some(fact) = version.version_of.filter(|_| !version.attribute_writes.is_empty()) else {
            return Ok(());
        };
        let n = u32::try_from(version.attribute_writes.len()).unwrap_or(u32::MAX);
        if version.writes_in.is_none() && fact_writes::first_in(tx, part, fact, n)? == version.attribute_writes {
            version.writes_in = Some(WritesIn { holder: fact, n });
            version.attribute_writes = Vec::new();
        }
        Ok(())
    }

    /// After a restore copied `old`, the fact's ended life, to record `to` and started the fact
    /// anew: its list moves to the copy, and the earlier versions pointing at it point there.
    pub(crate) fn moved(tx: &mut WriteTxn<'_>, part: &Partition, old: &Relation, to: u64) -> Result<()> {
        if old.writes.is_none() {
            return Ok(());
        }
        fact_writes::rename(tx, part, old.id, to)?;
        for mut version in stored_versions::<Relation>(tx, part, (old.from, old.to), &old.rel_type)? {
            if let Some(w) = version.writes_in.filter(|w| w.holder == old.id) {
                version.writes_in = Some(WritesIn { holder: to, ..w });
                tx.put(REL, &rel_key(part, version.id), &encode(&version))?;
            }
        }
        Ok(())
    }

    /// `rel` with its list in memory (its own, or the first writes of the record it points at),
    /// when a read at `when` needs it (every read: `None`); read once a read has found it
    /// visible. A read at or after its last write's start needs none (`Kept::present`), nor one
    /// at no valid instant. A holder gone (forgotten) took its list: the version reads its
    /// attributes as set.
    pub(crate) fn fill(snap: &Snapshot, part: &Partition, rel: &mut Relation, when: Option<&When>) -> Result<()> {
        let needed = when
            .is_none_or(|w| w.valid_instant().is_some_and(|at| !rel.writes.is_some_and(|k| k.present(at, w.as_of))));
        if let Some(w) = rel.writes_in.take() {
            if needed {
                rel.attribute_writes = fact_writes::first(snap, part, w.holder, w.n)?;
            }
        } else if needed && rel.writes.is_some() && rel.attribute_writes.is_empty() {
            rel.attribute_writes = fact_writes::first(snap, part, rel.id, u32::MAX)?;
        }
        Ok(())
    }
}

/// Whether `key` is one of the fact's own valid-time keys, which attributes carry as given.
fn interval_key(key: &str) -> bool {
    key == "valid_from" || key == "valid_to"
}

/// `rel`'s attributes as a read at `when` sees them: at its valid instant when it has one and the
/// fact more than one write; else the record's own.
pub(crate) fn read_at(rel: &mut Relation, when: &When) {
    if rel.attribute_writes.len() < 2 {
        return;
    }
    if let Some(at) = when.valid_instant() {
        rel.attributes = at_instant(rel, &rel.attribute_writes, at, when.as_of);
    }
}

/// The attributes `writes` give `rel` at instant `at` among those recorded by `as_of`: per key of
/// the record, the value of the write with the latest start at or before `at` (a later write wins
/// a tie); a key set only by writes starting later is not true yet and is left out, and a key no
/// write sets keeps the record's value. The fact's interval keys stay as the record holds them.
fn at_instant(rel: &Relation, writes: &[AttributeWrite], at: i64, as_of: Option<i64>) -> Map<String, Value> {
    let mut best: HashMap<&str, ((i64, i64, usize), &Value)> = HashMap::new();
    let mut written: HashSet<&str> = HashSet::new();
    for (i, w) in writes.iter().enumerate() {
        if as_of.is_some_and(|t| w.recorded > t) {
            continue;
        }
        let start = w.start();
        for (key, value) in &w.set {
            written.insert(key);
            let rank = (start, w.recorded, i);
            if start <= at && best.get(key.as_str()).is_none_or(|(r, _)| *r < rank) {
                best.insert(key, (rank, value));
            }
        }
    }
    let mut out = Map::new();
    for (key, value) in &rel.attributes {
        let shown = match best.get(key.as_str()) {
            _ if interval_key(key) => Some(value),
            Some((_, v)) => Some(*v),
            None => (!written.contains(key.as_str())).then_some(value),
        };
        if let Some(v) = shown {
            out.insert(key.clone(), v.clone());
        }
    }
    out
}

/// The one write a fact never revised stands for: its attributes set at its start.
fn first_write(rel: &Relation) -> AttributeWrite {
    let set = rel.attributes.iter().filter(|(k, _)| !interval_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    AttributeWrite { set, from: rel.valid_from.clone(), recorded: rel.recorded_at }
}

/// The writes to append to `stored`'s list (`list` reads it) once a call that sent `attributes`
/// (its `valid_from` being the start it states; without one it starts `now`) says it again at
/// `now`: the call's write when it is news, i.e. some value it sets is not already the one true
/// at its start (saying a value again at a later date confirms it and adds nothing), after the
/// write the fact stands for when it kept no list yet; `None` when it is not news. A start past
/// every write finds the record's attributes true then and reads no list (`Kept::present`).
pub(crate) fn with_write(
    stored: &Relation,
    attributes: &Map<String, Value>,
    now: i64,
    list: &mut dyn FnMut() -> Result<Vec<AttributeWrite>>,
) -> Result<Option<Vec<AttributeWrite>>> {
    let set: Map<String, Value> =
        attributes.iter().filter(|(k, _)| !interval_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    if set.is_empty() {
        return Ok(None);
    }
    let stated = attributes.get("valid_from").and_then(Value::as_str).filter(|s| valid::bound(s).is_some());
    let from = stated.map_or_else(|| iso_ms(now), str::to_owned);
    let start = valid::bound(&from).unwrap_or(now);
    let (true_then, mut added) = match stored.writes {
        None => {
            let first = first_write(stored);
            (at_instant(stored, std::slice::from_ref(&first), start, None), vec![first])
        }
        Some(kept) if kept.present(start, None) => (stored.attributes.clone(), Vec::new()),
        Some(_) => (at_instant(stored, &list()?, start, None), Vec::new()),
    };
    if set.iter().all(|(k, v)| true_then.get(k) == Some(v)) {
        return Ok(None);
    }
    added.push(AttributeWrite { set, from: Some(from), recorded: now });
    Ok(Some(added))
}

/// `writes` as export records and history events show them: `{attributes, from, recorded_at}`,
/// `from` null for attributes set from the start of a fact that has none.
pub(crate) fn on_the_wire(writes: &[AttributeWrite]) -> Value {
    writes.iter().map(AttributeWrite::on_the_wire).collect()
}
