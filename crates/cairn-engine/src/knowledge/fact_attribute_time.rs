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

use super::fact_readings::stored_versions;
use super::graph::{Relation, relation_by_id, relation_in};
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
    fn start(&self) -> i64 {
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
    /// Points `copy`, the version known before a revision (its own list in hand), at its fact's
    /// list as the revision leaves it (`fact_writes`) when that list starts with its own.
    pub(crate) fn point(copy: &mut Relation, fact_writes: &[AttributeWrite]) {
        let (Some(holder), Ok(n)) = (copy.version_of, u32::try_from(copy.attribute_writes.len())) else {
            return;
        };
        if n > 0 && copy.writes_in.is_none() && fact_writes.starts_with(&copy.attribute_writes) {
            copy.writes_in = Some(WritesIn { holder, n });
            copy.attribute_writes = Vec::new();
        }
    }

    /// `point` for an imported earlier version, at its fact as stored here (imported first, as
    /// export orders them), so a copy keeps one list too. One holding no list of its own (it
    /// counts its fact's writes: `version_writes.rs`) has nothing to point, and its fact's list
    /// is not read (read for each, an import of n versions decoded n lists).
    pub(crate) fn point_at_stored(tx: &mut WriteTxn<'_>, part: &Partition, version: &mut Relation) -> Result<()> {
        if version.attribute_writes.is_empty() {
            return Ok(());
        }
        if let Some(fact) = version.version_of.map(|id| relation_in(tx, part, id)).transpose()?.flatten() {
            WritesIn::point(version, &fact.attribute_writes);
        }
        Ok(())
    }

    /// After a restore copied `old`, the fact's ended life, to record `to` and started the fact
    /// anew: the earlier versions pointing at the fact's list point at the copy's.
    pub(crate) fn moved(tx: &mut WriteTxn<'_>, part: &Partition, old: &Relation, to: u64) -> Result<()> {
        if old.attribute_writes.is_empty() {
            return Ok(());
        }
        for mut version in stored_versions::<Relation>(tx, part, (old.from, old.to), &old.rel_type)? {
            if let Some(w) = version.writes_in.filter(|w| w.holder == old.id) {
                version.writes_in = Some(WritesIn { holder: to, ..w });
                tx.put(REL, &rel_key(part, version.id), &encode(&version))?;
            }
        }
        Ok(())
    }

    /// `rel` with its own list in place when it points at another record's: read once a read
    /// has found it visible, so a fact's versions cost one look-up of the list, not one each.
    /// A holder gone (forgotten) leaves the list empty: the version reads its attributes as set.
    pub(crate) fn fill(snap: &Snapshot, part: &Partition, rel: &mut Relation) -> Result<()> {
        if let Some(w) = rel.writes_in.take()
            && let Some(holder) = relation_by_id(snap, part, w.holder)?
        {
            let n = usize::try_from(w.n).unwrap_or(usize::MAX).min(holder.attribute_writes.len());
            rel.attribute_writes = holder.attribute_writes[..n].to_vec();
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

/// The writes of `rel`: its list, or for a fact never revised the one write it stands for, its
/// attributes set at its start.
fn writes_of(rel: &Relation) -> Vec<AttributeWrite> {
    if !rel.attribute_writes.is_empty() {
        return rel.attribute_writes.clone();
    }
    let set = rel.attributes.iter().filter(|(k, _)| !interval_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    vec![AttributeWrite { set, from: rel.valid_from.clone(), recorded: rel.recorded_at }]
}

/// The list `stored` keeps once a call that sent `attributes` (its `valid_from` being the start
/// it states; without one it starts `now`) says it again at `now`: the call's write appended when
/// it is news, i.e. some value it sets is not already the one true at its start (saying a value
/// again at a later date confirms it and adds nothing); `None` when it is not.
pub(crate) fn with_write(stored: &Relation, attributes: &Map<String, Value>, now: i64) -> Option<Vec<AttributeWrite>> {
    let set: Map<String, Value> =
        attributes.iter().filter(|(k, _)| !interval_key(k)).map(|(k, v)| (k.clone(), v.clone())).collect();
    if set.is_empty() {
        return None;
    }
    let stated = attributes.get("valid_from").and_then(Value::as_str).filter(|s| valid::bound(s).is_some());
    let from = stated.map_or_else(|| iso_ms(now), str::to_owned);
    let start = valid::bound(&from).unwrap_or(now);
    let mut writes = writes_of(stored);
    let true_then = at_instant(stored, &writes, start, None);
    if set.iter().all(|(k, v)| true_then.get(k) == Some(v)) {
        return None;
    }
    writes.push(AttributeWrite { set, from: Some(from), recorded: now });
    Some(writes)
}

/// `writes` as export records and history events show them: `{attributes, from, recorded_at}`,
/// `from` null for attributes set from the start of a fact that has none.
pub(crate) fn on_the_wire(writes: &[AttributeWrite]) -> Value {
    writes.iter().map(AttributeWrite::on_the_wire).collect()
}
