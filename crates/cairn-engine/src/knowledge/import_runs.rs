//! Importing an entity or a fact exported as several records, each a run of its attribute writes
//! (`write_runs.rs`). A record that fits is one record and imports as ever: an entity's writes
//! are replayed when the record stores or changes the entity, a fact's stored with it. Of a split
//! one's records, the first (`continued: true`, no `follows`) decides whether the series replays
//! (it does when it stores or changes the entity, or stores the fact, as a whole record would),
//! and each later one (`follows: n`) replays its writes past the first n. A mark in
//! `k.import_map` keeps, per exported entity or fact, how many of its writes the copy has
//! accounted for and whether the series replays, so a page imported twice replays nothing twice,
//! pages of two exports cut at other places join up, and a record whose predecessor has not come
//! is skipped naming the gap, to import once it has.

use super::import::{IMPORT_MAP, Src, map_key};
use super::part::Partition;
use crate::error::{Error, Result};
use crate::write::WriteTxn;
use serde_json::{Map, Value};

/// What a series of records is of: an entity or a fact, whose source ids are apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Of {
    Entity,
    Fact,
}

impl Of {
    /// The `k.import_map` kind byte of the writes accounted for of an exported entity (`w`) or
    /// fact (`a`): `part | kind | origin | source id` → `count u64 BE | replays u8`.
    fn kind(self) -> u8 {
        match self {
            Of::Entity => b'w',
            Of::Fact => b'a',
        }
    }

    fn name(self) -> &'static str {
        match self {
            Of::Entity => "entity",
            Of::Fact => "fact",
        }
    }

    fn article(self) -> &'static str {
        match self {
            Of::Entity => "an",
            Of::Fact => "a",
        }
    }
}

/// How a record sits among the records of an entity or a fact: `follows`, the writes the records
/// before it held (none for the first, or a whole one); `continued`, whether records follow.
#[derive(Clone, Copy, Debug)]
pub(super) struct Run {
    pub of: Of,
    pub follows: Option<u64>,
    pub continued: bool,
}

impl Run {
    /// The run markers of record `r` of `of`; `source` is its id, which a split record needs.
    pub(super) fn of(r: &Map<String, Value>, of: Of, source: Option<Src>) -> std::result::Result<Run, String> {
        let continued = super::import_checks::continued(r)?;
        let follows = match r.get("follows") {
            None | Some(Value::Null) => None,
            Some(v) => Some(v.as_u64().filter(|&n| n >= 1).ok_or("follows: must be a whole number from 1")?),
        };
        if (continued || follows.is_some()) && source.is_none() {
            let field = if follows.is_some() { "follows" } else { "continued" };
            let (a, what) = (of.article(), of.name());
            return Err(format!("{field}: a record of {a} {what} split over several needs the {what}'s `id`"));
        }
        Ok(Run { of, follows, continued })
    }

    /// Whether the record is one of several.
    pub(super) fn split(self) -> bool {
        self.continued || self.follows.is_some()
    }
}

/// The mark of `source`: writes accounted for, and whether they replay.
fn mark(tx: &mut WriteTxn<'_>, part: &Partition, of: Of, (origin, id): Src) -> Result<Option<(u64, bool)>> {
    let Some(v) = tx.get(IMPORT_MAP, &map_key(part, of.kind(), origin, id))? else { return Ok(None) };
    match v.as_slice() {
        [count @ .., replays] if count.len() == 8 => {
            Ok(Some((u64::from_be_bytes(count.try_into().expect("8 bytes")), *replays == 1)))
        }
        _ => Err(Error::corrupt(None, "an attribute writes mark is not 9 bytes")),
    }
}

fn set_mark(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    of: Of,
    (origin, id): Src,
    (count, replays): (u64, bool),
) -> Result<()> {
    let value = [&count.to_be_bytes()[..], &[u8::from(replays)]].concat();
    tx.put(IMPORT_MAP, &map_key(part, of.kind(), origin, id), &value)
}

/// The skip reason of a later record of `source` whose predecessor has not been imported, before
/// anything of it is written (`here`: whether the entity or fact `source` maps to is stored; one
/// forgotten since holds none of the writes); `None` when it may import.
pub(super) fn gap(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (of, source, follows): (Of, Src, u64),
    here: bool,
) -> Result<Option<String>> {
    let held = if here { mark(tx, part, of, source)?.map_or(0, |(count, _)| count) } else { 0 };
    Ok((held < follows).then(|| {
        let what = of.name();
        format!(
            "follows: this record continues the {what}'s attribute_writes after its first {follows}, but the copy \
             holds {held} of them: a record of the {what} before this one has not been imported (import the \
             export's pages in order)"
        )
    }))
}

/// The writes of record `r` (its `run`, its id `source`) to replay, given whether it stored or
/// changed what it is of, with the mark brought up to date.
pub(super) fn replayed<W>(
    tx: &mut WriteTxn<'_>,
    part: &Partition,
    (source, run): (Option<Src>, Run),
    changed: bool,
    writes: Vec<W>,
) -> Result<Vec<W>> {
    let Some(source) = source.filter(|_| run.split()) else {
        return Ok(if changed { writes } else { Vec::new() });
    };
    let len = writes.len() as u64;
    match run.follows {
        None => {
            // The first record: the series replays when it stores or changes the entity (stores
            // the fact); when it changes nothing, writes it stands for are here already (or were
            // never asked for).
            if changed || mark(tx, part, run.of, source)?.is_none() {
                set_mark(tx, part, run.of, source, (len, changed))?;
            }
            Ok(if changed { writes } else { Vec::new() })
        }
        Some(follows) => {
            let (held, replays) = mark(tx, part, run.of, source)?.expect("`gap` checked the mark first");
            if held >= follows + len {
                return Ok(Vec::new());
            }
            set_mark(tx, part, run.of, source, (follows + len, replays))?;
            let skip = usize::try_from(held - follows).expect("fewer than the record's writes");
            Ok(if replays { writes.into_iter().skip(skip).collect() } else { Vec::new() })
        }
    }
}
