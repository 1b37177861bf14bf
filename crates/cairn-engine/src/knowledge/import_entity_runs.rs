//! Importing an entity exported as several records, each a run of its attribute writes
//! (`entity_windows.rs`). A record that fits is one record and imports as ever: its writes are
//! replayed when the record stores or changes the entity. Of a split entity's records, the first
//! (`continued: true`, no `follows`) decides whether the series replays (it does when it stores
//! or changes the entity, as a whole record would), and each later one (`follows: n`) replays its
//! writes past the first n. A mark in `k.import_map` keeps, per exported entity, how many of its
//! writes the copy has accounted for and whether the series replays, so a page imported twice
//! replays nothing twice, pages of two exports cut at other places join up, and a record whose
//! predecessor has not come is skipped naming the gap, to import once it has.

use super::import::{IMPORT_MAP, Src, map_key};
use super::import_attributes::Write;
use super::part::Partition;
use crate::error::{Error, Result};
use crate::write::WriteTxn;
use serde_json::{Map, Value};

/// `k.import_map` kind byte of an exported entity's attribute writes accounted for:
/// `part | 'w' | origin | source id` → `count u64 BE | replays u8`.
const WRITES: u8 = b'w';

/// How a record sits among the records of an entity: `follows`, the writes the records before
/// it held (none for the first, or a whole entity); `continued`, whether records follow.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    pub follows: Option<u64>,
    pub continued: bool,
}

impl Run {
    /// The run markers of entity record `r`; `source` is its id, which a split record needs.
    pub(super) fn of(r: &Map<String, Value>, source: Option<Src>) -> std::result::Result<Run, String> {
        let continued = super::import_checks::continued(r)?;
        let follows = match r.get("follows") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().filter(|&n| n >= 1).ok_or("follows: must be a whole number from 1")?),
        };
        if (continued || follows.is_some()) && source.is_none() {
            let field = if follows.is_some() { "follows" } else { "continued" };
            return Err(format!("{field}: a record of an entity split over several needs the entity's `id`"));
        }
        Ok(Run { follows, continued })
    }
}

/// The mark of `source`: writes accounted for, and whether they replay.
fn mark(tx: &mut WriteTxn<'_>, part: &Partition, (origin, id): Src) -> Result<Option<(u64, bool)>> {
    let Some(v) = tx.get(IMPORT_MAP, &map_key(part, WRITES, origin, id))? else { return Ok(None) };
    match v.as_slice() {
        [count @ .., replays] if count.len() == 8 => {
            Ok(Some((u64::from_be_bytes(count.try_into().expect("8 bytes")), *replays == 1)))
        }
        _ => Err(Error::corrupt(None, "an entity writes mark is not 9 bytes")),
    }
}

fn set_mark(tx: &mut WriteTxn<'_>, part: &Partition, (origin, id): Src, (count, replays): (u64, bool)) -> Result<()> {
    let value = [&count.to_be_bytes()[..], &[u8::from(replays)]].concat();
    tx.put(IMPORT_MAP, &map_key(part, WRITES, origin, id), &value)
}

/// The skip reason of a later record of `source` whose predecessor has not been imported, before
/// anything of it is written (`here`: whether the entity `source` maps to is stored; one
/// forgotten since holds none of the writes); `None` when it may import.
pub(super) fn gap(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (source, follows): (Src, u64),
    here: bool,
) -> Result<Option<String>> {
    let held = if here { mark(tx, part, source)?.map_or(0, |(count, _)| count) } else { 0 };
    Ok((held < follows).then(|| {
        format!(
            "follows: this record continues the entity's attribute_writes after its first {follows}, but the copy \
             holds {held} of them: a record of the entity before this one has not been imported (import the \
             export's pages in order)"
        )
    }))
}

/// The writes of record `r` (its `run`, its id `source`) to replay, given whether it stored or
/// changed the entity, with the mark brought up to date.
pub(super) fn replayed(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (source, run): (Option<Src>, Run),
    changed: bool,
    writes: Vec<Write>,
) -> Result<Vec<Write>> {
    let Some(source) = source.filter(|_| run.continued || run.follows.is_some()) else {
        return Ok(if changed { writes } else { Vec::new() });
    };
    let len = writes.len() as u64;
    match run.follows {
        None => {
            // The first record: the series replays when it stores or changes the entity; when
            // it changes nothing, writes it stands for are here already (or were never asked for).
            if changed || mark(tx, part, source)?.is_none() {
                set_mark(tx, part, source, (len, changed))?;
            }
            Ok(if changed { writes } else { Vec::new() })
        }
        Some(follows) => {
            let (held, replays) = mark(tx, part, source)?.expect("`gap` checked the mark first");
            if held >= follows + len {
                return Ok(Vec::new());
            }
            set_mark(tx, part, source, (follows + len, replays))?;
            let skip = usize::try_from(held - follows).expect("fewer than the record's writes");
            Ok(if replays { writes.into_iter().skip(skip).collect() } else { Vec::new() })
        }
    }
}
