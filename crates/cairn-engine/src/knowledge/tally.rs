//! The partition's counts (`k.tally`), kept in the transaction that writes the records they
//! count, so `memory_status` reads a few keys per scope instead of decoding every entity and
//! relation (it cost O(all the user's data): 0.6 s at 100k entities and 300k relations).
//!
//! Keys, all under the partition prefix (so `forget {all}` and `delete_user`, which delete every
//! `k.*` key of a partition by prefix, take them too):
//! - `part | 'e'`, `'r'`, `'d'`, `'p'` → entities, live relations (`ended_at` none), documents,
//!   passages;
//! - `part | 'E' | folded type` → entities having that entity type; `part | 'R' | folded type` →
//!   live relations of that type (the type as `key_text::fit` keeps it).
//!
//! Each value is the count (u64 BE) and then the spelling: the first one counted since the count
//! was last zero (the ontology reports it; types match folded, so any spelling names the type).
//! A count that falls to zero is removed, so an emptied partition holds no key here. The empty
//! key is the store's marker that the tally is complete (`tally_build.rs`).
//!
//! Writers record what they change in a `Tally` (pure memory) and `flush` it once, at the end of
//! the operation: a bulk writer then costs one read and one write per touched type, not per record.

use super::graph::{Entity, Relation};
use super::part::Partition;
use crate::error::{Error, Result};
use crate::key_text::fit;
use crate::snapshot::Snapshot;
use crate::text::fold;
use crate::write::WriteTxn;
use std::collections::BTreeMap;

/// The tree of counts.
pub(crate) const TALLY: &str = "k.tally";

pub(crate) const ENTITIES: u8 = b'e';
pub(crate) const RELATIONS: u8 = b'r';
pub(crate) const DOCUMENTS: u8 = b'd';
pub(crate) const PASSAGES: u8 = b'p';
pub(crate) const ENTITY_TYPE: u8 = b'E';
pub(crate) const RELATION_TYPE: u8 = b'R';

/// `part | kind` (a total) or `part | kind | folded type`.
pub(crate) fn key(part: &Partition, kind: u8, folded: Option<&str>) -> Vec<u8> {
    match folded {
        None => part.key(&[&[kind]]),
        Some(f) => part.key(&[&[kind], &fit(f, part.prefix().len() + 1)]),
    }
}

/// A count and its spelling, as stored.
pub(crate) fn decode(value: &[u8]) -> Result<(u64, String)> {
    let (count, spelling) =
        value.split_first_chunk::<8>().ok_or_else(|| Error::corrupt(None, "a tally value is shorter than 8 bytes"))?;
    let spelling = std::str::from_utf8(spelling).map_err(|_| Error::corrupt(None, "a tally spelling is not UTF-8"))?;
    Ok((u64::from_be_bytes(*count), spelling.to_owned()))
}

/// A number of records as a count change.
pub(crate) fn delta(len: usize) -> i64 {
    i64::try_from(len).unwrap_or(i64::MAX)
}

fn encode(count: u64, spelling: &str) -> Vec<u8> {
    [&count.to_be_bytes()[..], spelling.as_bytes()].concat()
}

/// The changes of one key, in order, folded into what applying them one by one to any stored
/// count needs: the net change, the lowest the running sum reached, and the spelling of the first
/// increment after the running sum was last at that low (the spelling the key takes if the
/// stored count plus that low is zero: the count was emptied there and counted anew).
#[derive(Debug, Default)]
struct Change {
    net: i64,
    low: i64,
    after_low: Option<String>,
}

impl Change {
    fn add(&mut self, delta: i64, spelling: &str) {
        if delta > 0 && self.net == self.low && self.after_low.is_none() {
            self.after_low = Some(spelling.to_owned());
        }
        self.net += delta;
        if self.net <= self.low {
            self.low = self.net;
            self.after_low = None;
        }
    }
}

/// Count changes not yet written, by key (keys carry their partition, so one tally may span
/// partitions).
#[derive(Debug, Default)]
pub(crate) struct Tally {
    changes: BTreeMap<Vec<u8>, Change>,
}

impl Tally {
    fn add(&mut self, key: Vec<u8>, delta: i64, spelling: &str) {
        self.changes.entry(key).or_default().add(delta, spelling);
    }

    /// An entity record of `part` goes from `before` to `after` (`None`: absent).
    pub(crate) fn entity(&mut self, part: &Partition, before: Option<&Entity>, after: Option<&Entity>) {
        match (before, after) {
            (None, Some(_)) => self.entities(part, 1),
            (Some(_), None) => self.entities(part, -1),
            _ => {}
        }
        let none: &[String] = &[];
        let (old, new) = (before.map_or(none, |e| &e.types), after.map_or(none, |e| &e.types));
        // Removals first: a type emptied and counted again in one change takes the new spelling.
        for t in old.iter().filter(|t| !new.contains(t)) {
            self.entity_type(part, t, -1);
        }
        for t in new.iter().filter(|t| !old.contains(t)) {
            self.entity_type(part, t, 1);
        }
    }

    /// A relation record of `part` goes from `before` to `after`; only live ones count.
    pub(crate) fn relation(&mut self, part: &Partition, before: Option<&Relation>, after: Option<&Relation>) {
        let (old, new) = (live(before), live(after));
        if let (Some(o), Some(n)) = (old, new)
            && o.rel_type == n.rel_type
        {
            return;
        }
        for (r, delta) in [(old, -1), (new, 1)] {
            if let Some(r) = r {
                self.relation_type(part, &r.rel_type, delta);
            }
        }
    }

    /// `delta` entities of `part` (a bulk writer's sum; `entity` counts one record).
    pub(crate) fn entities(&mut self, part: &Partition, delta: i64) {
        if delta != 0 {
            self.add(key(part, ENTITIES, None), delta, "");
        }
    }

    /// `delta` entities of `part` gained (or lost) type `spelling`.
    pub(crate) fn entity_type(&mut self, part: &Partition, spelling: &str, delta: i64) {
        if delta != 0 {
            self.add(key(part, ENTITY_TYPE, Some(&fold(spelling))), delta, spelling);
        }
    }

    /// `delta` live relations of `part` of type `spelling`, counted in the total too.
    pub(crate) fn relation_type(&mut self, part: &Partition, spelling: &str, delta: i64) {
        if delta != 0 {
            self.add(key(part, RELATIONS, None), delta, "");
            self.add(key(part, RELATION_TYPE, Some(&fold(spelling))), delta, spelling);
        }
    }

    /// `delta` documents added to (or taken from) `part`.
    pub(crate) fn documents(&mut self, part: &Partition, delta: i64) {
        if delta != 0 {
            self.add(key(part, DOCUMENTS, None), delta, "");
        }
    }

    /// `delta` passages added to (or taken from) `part`.
    pub(crate) fn passages(&mut self, part: &Partition, delta: i64) {
        if delta != 0 {
            self.add(key(part, PASSAGES, None), delta, "");
        }
    }

    /// Writes the changes into `tx` (one read and at most one write per key) and forgets them.
    pub(crate) fn flush(&mut self, tx: &mut WriteTxn<'_>) -> Result<()> {
        for (key, c) in std::mem::take(&mut self.changes) {
            if c.net == 0 && c.low == 0 {
                continue;
            }
            let stored = tx.get(TALLY, &key)?.map(|v| decode(&v)).transpose()?;
            let (count, spelling) = stored.unwrap_or((0, String::new()));
            let start = i64::try_from(count).unwrap_or(i64::MAX);
            // A store whose tally is not built yet may count below zero; the build replaces it.
            let now = u64::try_from(start.saturating_add(c.net)).unwrap_or(0);
            let emptied = start.saturating_add(c.low) <= 0;
            let spelling = if emptied { c.after_low.unwrap_or(spelling) } else { spelling };
            match (now, count) {
                (0, 0) => {}
                (0, _) => tx.erase(TALLY, &key)?,
                _ => tx.put(TALLY, &key, &encode(now, &spelling))?,
            }
        }
        Ok(())
    }
}

fn live(r: Option<&Relation>) -> Option<&Relation> {
    r.filter(|r| r.ended_at.is_none())
}

/// `part`'s totals: entities, live relations, documents, passages.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Totals {
    pub entities: u64,
    pub relations: u64,
    pub documents: u64,
    pub passages: u64,
}

/// `part`'s totals as `snap` holds them (four point reads).
pub(crate) fn totals(snap: &Snapshot, part: &Partition) -> Result<Totals> {
    let read = |kind| -> Result<u64> {
        Ok(snap.get(TALLY, &key(part, kind, None))?.map(|v| decode(&v)).transpose()?.map_or(0, |(n, _)| n))
    };
    Ok(Totals {
        entities: read(ENTITIES)?,
        relations: read(RELATIONS)?,
        documents: read(DOCUMENTS)?,
        passages: read(PASSAGES)?,
    })
}

/// Every type of `kind` (`ENTITY_TYPE` or `RELATION_TYPE`) of `part`: spelling and count, in key
/// order (by folded type).
pub(crate) fn types(snap: &Snapshot, part: &Partition, kind: u8) -> Result<Vec<(String, u64)>> {
    let mut out = Vec::new();
    for item in snap.prefix(TALLY, &part.key(&[&[kind]]))? {
        let (count, spelling) = decode(&item?.1)?;
        out.push((spelling, count));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::Change;

    /// Applies `steps` to a stored `count` one at a time, as the tally's rule states it.
    fn one_by_one(mut count: i64, mut spelling: String, steps: &[(i64, &str)]) -> (i64, String) {
        for &(d, s) in steps {
            if count == 0 && d > 0 {
                spelling = s.to_owned();
            }
            count += d;
        }
        (count, spelling)
    }

    #[test]
    fn folded_changes_give_the_spelling_of_applying_them_one_by_one() {
        let cases: &[(i64, &[(i64, &str)])] = &[
            (0, &[(1, "A"), (1, "b")]),
            (1, &[(-1, ""), (1, "B")]),
            (2, &[(-1, ""), (1, "B")]),
            (1, &[(1, "B"), (-2, ""), (1, "C"), (1, "D")]),
            (0, &[(1, "A"), (-1, ""), (1, "B"), (-1, ""), (1, "C")]),
            (3, &[(-3, ""), (2, "X")]),
        ];
        for &(count, steps) in cases {
            let mut c = Change::default();
            for &(d, s) in steps {
                c.add(d, s);
            }
            let emptied = count + c.low <= 0;
            let spelling = if emptied { c.after_low.clone().unwrap() } else { "old".to_owned() };
            assert_eq!((count + c.net, spelling), one_by_one(count, "old".into(), steps), "{count} {steps:?}");
        }
    }
}
