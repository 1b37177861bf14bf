//! `h.name`: the events of a partition by the entity names they spell, so a knowledge forget
//! finds the events it must remove or redact by prefix instead of decoding every event of the
//! scope (2 s at 100k entities and 300k facts). Keys: `part | folded name \0 | seq` → (), one per
//! distinct folded name an event spells: an entity event's target; a fact event's two ends, and
//! the two ends of the `relate` input it carries (a `replaces` call files its input on the facts
//! it ended, and that input names another entity); the names in an older `forget` event's target
//! (`subject:<name>`, `attribute:<name>\0<key>`, `fact:<from>\0<type>\0<to>`). Names are folded
//! as forgets compare them (`text::fold` of the trimmed name).
//!
//! Stores written before the index have no entries; the first forget that needs it builds it for
//! every partition in its own transaction and sets the marker `h.named` (`ensure`); a store's
//! first write sets it when no event is stored yet (`mark_if_new`).

use super::{EVENT, Event, seq_of};
use crate::error::Result;
use crate::key_text::fit;
use crate::knowledge::Partition;
use crate::text::fold;
use crate::write::WriteTxn;
use serde_json::Value;
use std::collections::BTreeSet;

pub(crate) const NAME: &str = "h.name";
/// `[]` → `[1]` once every event of the store is in `NAME`.
const BUILT: &str = "h.named";

/// `part | folded \0`: the prefix of the events naming `folded`.
pub(crate) fn name_prefix(part: &Partition, folded: &str) -> Vec<u8> {
    part.key(&[&fit(folded, part.prefix().len() + 1 + 8), b"\0"])
}

/// The folded entity names an event of `family` with `target` and input `patch` spells.
pub(crate) fn names_of(family: &str, target: &str, patch: Option<&Value>) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut add = |s: &str| {
        names.insert(fold(s.trim()));
    };
    match family {
        "entity" => add(target),
        "fact" => {
            let mut parts = target.split('\0');
            if let (Some(from), Some(_), Some(to)) = (parts.next(), parts.next(), parts.next()) {
                add(from);
                add(to);
            }
            // A `relate` input names its ends `from`/`to` (its `source` is a label); `remember`'s
            // names them `source`/`target`, the fact's own ends.
            if let Some(p) = patch.filter(|p| p.get("from").is_some()) {
                for end in ["from", "to"] {
                    if let Some(name) = p.get(end).and_then(Value::as_str) {
                        add(name);
                    }
                }
            }
        }
        "forget" => {
            if let Some(rest) = target.strip_prefix("subject:") {
                add(rest);
            } else if let Some(rest) = target.strip_prefix("attribute:") {
                add(rest.split('\0').next().unwrap_or(rest));
            } else if let Some(rest) = target.strip_prefix("fact:") {
                let mut parts = rest.split('\0');
                if let (Some(from), Some(_), Some(to)) = (parts.next(), parts.next(), parts.next()) {
                    add(from);
                    add(to);
                }
            }
        }
        _ => {}
    }
    names
}

/// Indexes event `seq` of `part` under `names`.
pub(crate) fn index(tx: &mut WriteTxn<'_>, part: &Partition, names: &BTreeSet<String>, seq: u64) -> Result<()> {
    for name in names {
        tx.put(NAME, &[name_prefix(part, name), seq.to_be_bytes().to_vec()].concat(), &[])?;
    }
    Ok(())
}

/// Removes the entries of event `seq` of `part` under `names`.
pub(crate) fn unindex(tx: &mut WriteTxn<'_>, part: &Partition, names: &BTreeSet<String>, seq: u64) -> Result<()> {
    for name in names {
        tx.delete(NAME, &[name_prefix(part, name), seq.to_be_bytes().to_vec()].concat())?;
    }
    Ok(())
}

/// The folded names `event` spells.
pub(crate) fn names_of_event(event: &Event) -> BTreeSet<String> {
    names_of(&event.family, &event.target, event.patch.as_ref())
}

/// The sequence numbers of the events of `part` that name `folded`, ascending.
pub(crate) fn naming(tx: &mut WriteTxn<'_>, part: &Partition, folded: &str) -> Result<Vec<u64>> {
    ensure(tx)?;
    tx.prefix_keys(NAME, &name_prefix(part, folded))?.iter().map(|k| seq_of(k)).collect()
}

/// The sequence numbers of the events of `part` that name `a` or those that name `b`, whichever
/// are fewer, ascending: an event naming both (a fact's between them) is among each, so a
/// forget of such a fact reads the shorter list, not a hub's thousands of events. Each list is
/// read a growing stretch at a time, as `knowledge::edge_reads` reads adjacency lists.
pub(crate) fn naming_fewer(tx: &mut WriteTxn<'_>, part: &Partition, (a, b): (&str, &str)) -> Result<Vec<u64>> {
    ensure(tx)?;
    let mut max = 16_usize;
    loop {
        for name in [a, b] {
            if let Some(entries) = tx.prefix_within(NAME, &name_prefix(part, name), max)? {
                return entries.iter().map(|(k, _)| seq_of(k)).collect();
            }
        }
        max = max.saturating_mul(8);
    }
}

/// Marks a store that holds no event yet as indexed, so it never pays `ensure`'s scan (called
/// on a partition's first write: `Partition::register`).
pub(crate) fn mark_if_new(tx: &mut WriteTxn<'_>) -> Result<()> {
    if tx.first_with_prefix(EVENT, b"")?.is_none() && tx.get(BUILT, &[])?.is_none() {
        tx.put(BUILT, &[], &[1])?;
    }
    Ok(())
}

/// Builds the index over every stored event once (stores written before it).
fn ensure(tx: &mut WriteTxn<'_>) -> Result<()> {
    if tx.get(BUILT, &[])?.is_some() {
        return Ok(());
    }
    for (key, bytes) in tx.prefix(EVENT, b"")? {
        let Ok(part) = Partition::of_key(&key) else { continue };
        let Ok(event) = serde_json::from_slice::<Event>(&bytes) else { continue };
        index(tx, &part, &names_of_event(&event), event.seq)?;
    }
    tx.put(BUILT, &[], &[1])
}
