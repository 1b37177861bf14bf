//! A record carrying a list of attribute writes (`attribute_writes`: an entity's, a fact's), cut
//! to a byte bound. Nothing caps how often an entity or a fact is written, so such a record has
//! no size of its own: found by reviews, an entity written 2,000 times made a 347 KB record and a
//! fact related 2,000 times a 309 KB one, on pages asked for at 64 KiB. So, as a note's versions
//! are (`notes::exchange_windows`), a record no empty page could hold is exported as several,
//! each a run of its writes in order, as many as keep the record within the room its page has
//! left (one at least). Each carries the record's own fields; every one but the last says
//! `continued: true`, every one but the first `follows: n`, the number of writes the records
//! before it held, so an import replays each write once and can tell a record whose predecessor
//! has not come (`import_runs.rs`). A record that fits is one record without either field.

use super::export::json_len;
use crate::notes::exchange_windows::Window;
use serde_json::{Value, json};

/// `record` (its fields but `attribute_writes`) with its writes after the first `from` (0: from
/// the first) of `wire` (all of them, as the record carries them), within `room` bytes of JSON
/// unless it holds one write alone; `None` when `from` is past its writes (they were forgotten
/// since the page before). A whole record that fits an empty page of `page` bytes is returned
/// whole, though it may not fit `room`: it then starts the next page, and only a record no page
/// could hold is split.
pub(super) fn cut(mut record: Value, wire: Vec<Value>, (from, room, page): (u64, usize, usize)) -> Option<Window> {
    let total = wire.len() as u64;
    if from > 0 && from >= total {
        return None;
    }
    if wire.is_empty() {
        return Some(Window { record, last: 0, continued: false });
    }
    let mut wire: Vec<Value> = wire.into_iter().skip(usize::try_from(from).unwrap_or(usize::MAX)).collect();
    if from == 0 {
        record["attribute_writes"] = Value::Array(wire);
        // As a page's one record: between its brackets.
        if json_len(&record) + 2 <= page {
            return Some(Window { record, last: total, continued: false });
        }
        let Value::Array(all) = record["attribute_writes"].take() else { unreachable!("set just above") };
        wire = all;
    }
    // The markers a record may take, counted whether or not it does, so the bound holds.
    record["continued"] = json!(true);
    record["follows"] = json!(from);
    record["attribute_writes"] = json!([]);
    let mut bytes = json_len(&record);
    let mut taken = 0;
    for w in &wire {
        // Each with the comma before it (one too many for the first: room to spare).
        let size = json_len(w) + 1;
        if taken > 0 && bytes + size > room {
            break;
        }
        bytes += size;
        taken += 1;
    }
    let continued = taken < wire.len();
    wire.truncate(taken);
    let last = from + taken as u64;
    record["attribute_writes"] = Value::Array(wire);
    let fields = record.as_object_mut().expect("an object");
    if !continued {
        fields.remove("continued");
    }
    if from == 0 {
        fields.remove("follows");
    }
    Some(Window { record, last, continued })
}
