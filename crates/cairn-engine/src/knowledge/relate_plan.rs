//! What a `relate` assertion does to the subject's stored edges of its type (`graph::relate`),
//! planned from each edge as the store reads it now (`Edge`): its light `EdgeView` (`edge_view.rs`),
//! as `relate` reads them, or a whole `Relation`, which plans alike (`relate_plan_properties.rs`);
//! the few edges a plan names are then read whole (`Plan::read_whole`). Neither rule reads an
//! earlier version of a revised fact (the fact states it) nor an edge from the subject to itself.

use super::edge_view::Edge;
use super::valid;
use crate::error::{Error, Result};
use crate::time::iso_ms;
use serde_json::{Map, Value};

/// What an assertion does to the subject's edges of its type.
#[derive(Debug, PartialEq)]
pub(crate) struct Plan<T> {
    /// An edge to the same target that already says it: said again (`restated`) when live, else
    /// kept as is.
    pub same: Option<T>,
    /// Edges that end (`ended_at` is set when they are written), in valid time at `end_at`.
    pub end: Vec<T>,
    /// Where the edges in `end` stop in valid time (`replaces`: the assertion's start).
    pub end_at: String,
    /// An edge to the same target whose interval is over, which the assertion brings back.
    pub restored: Option<T>,
    /// Edges starting later in valid time: the assertion is older news.
    pub newer: Vec<u64>,
}

impl<T> Default for Plan<T> {
    fn default() -> Self {
        Plan { same: None, end: Vec::new(), end_at: String::new(), restored: None, newer: Vec::new() }
    }
}

impl<T> Plan<T> {
    /// The plan with each edge it names read whole by `whole`.
    pub(crate) fn read_whole<U>(self, mut whole: impl FnMut(T) -> Result<U>) -> Result<Plan<U>> {
        Ok(Plan {
            same: self.same.map(&mut whole).transpose()?,
            end: self.end.into_iter().map(&mut whole).collect::<Result<_>>()?,
            end_at: self.end_at,
            restored: self.restored.map(&mut whole).transpose()?,
            newer: self.newer,
        })
    }
}

/// Without `replaces`: a live edge to the same target is merged into. Else the ended ones are read
/// at the assertion's start (its `valid_from`, else now): one true there already states it
/// (nothing changes); else the latest one over by then is restored from that start, which a given
/// `valid_to` must follow (`attributes.valid_to` is refused otherwise: restored from now, an end
/// already past would make an interval that runs backwards).
pub(crate) fn plain<T: Edge>(
    attributes: &mut Map<String, Value>,
    records: Vec<T>,
    to: u64,
    now: i64,
) -> Result<Plan<T>> {
    let mut plan = Plan::default();
    let mut ended = Vec::new();
    let mut live = None;
    for rel in records.into_iter().filter(|r| read_against(r) && r.reaches(to)) {
        if rel.ended_at().is_none() {
            live = Some(rel);
        } else {
            ended.push(rel);
        }
    }
    if let Some(live) = live {
        return Ok(said_again(attributes, live, ended));
    }
    if ended.is_empty() {
        return Ok(plan);
    }
    let given = attributes.get("valid_from").and_then(Value::as_str).and_then(valid::bound);
    let start = given.unwrap_or(now);
    if let Some(stated) = ended.iter().find(|r| r.true_at(start)) {
        plan.same = Some(stated.clone());
        return Ok(plan);
    }
    plan.restored = latest(ended.into_iter().filter(|r| r.end().is_some_and(|end| end <= start)));
    if plan.restored.is_some() && given.is_none() {
        if attributes.get("valid_to").and_then(Value::as_str).and_then(valid::bound).is_some_and(|end| end <= now) {
            return Err(Error::InvalidArgument(format!(
                "attributes.valid_to must be later than its start, now ({}): the fact is over and would be restored from now",
                iso_ms(now)
            )));
        }
        // Restored from now: without a start it would also claim its earlier, ended interval.
        attributes.insert("valid_from".into(), Value::String(iso_ms(now)));
    }
    Ok(plan)
}

/// A live edge to the same target said again without `replaces`, read against the assertion's
/// interval (`valid_from`, else the call's `date`; `valid_to`). When the two overlap or meet, the
/// edge is said again (`restated`). Else the edge's history (`ended`, to the same target) is read
/// as for a target with no live edge: one true at the assertion's start already says it; failing
/// that, an edge over before the assertion starts is restored from there (a new life), and an
/// assertion that ends before the edge starts is older news: kept in history, true until the first
/// edge to the target that starts later (unless it ends sooner).
fn said_again<T: Edge>(attributes: &mut Map<String, Value>, live: T, ended: Vec<T>) -> Plan<T> {
    let bound = |key: &str| attributes.get(key).and_then(Value::as_str).and_then(valid::bound);
    let (start, end) = (bound("valid_from"), bound("valid_to"));
    let over = matches!((start, live.end()), (Some(s), Some(e)) if e <= s);
    let before = matches!((end, live.start()), (Some(t), Some(s)) if t < s);
    let mut plan = Plan::default();
    if !over && !before {
        plan.same = Some(live);
        return plan;
    }
    let at_start = |r: &T| start.map_or(r.start().is_none(), |s| r.true_at(s));
    if let Some(stated) = ended.iter().find(|r| at_start(r)) {
        plan.same = Some(stated.clone());
    } else if over {
        plan.restored = Some(live);
    } else {
        let mut later: Vec<T> = ended
            .into_iter()
            .chain([live])
            .filter(|r| r.start().is_some_and(|from| start.is_none_or(|s| from > s)))
            .collect();
        later.sort_by_key(T::start);
        if let Some(first) = later.first()
            && let (Some(from), Some(text)) = (first.start(), first.valid_from())
            && end.is_none_or(|t| t > from)
        {
            attributes.insert("valid_to".into(), Value::String(text.to_owned()));
        }
        plan.newer = later.iter().map(T::id).collect();
    }
    plan
}

/// Whether a plan reads `edge`: not an earlier version of a revised fact, nor from the subject to
/// itself.
fn read_against<T: Edge>(edge: &T) -> bool {
    let (a, b) = edge.ends();
    edge.version_of().is_none() && a != b
}

/// Of the edges to one target, the one whose life is the latest: the live one, else the last
/// ended (an earlier life kept as a copy by a restore ended no later, and was recorded earlier).
fn latest<T: Edge>(edges: impl Iterator<Item = T>) -> Option<T> {
    edges.max_by_key(|r| (r.ended_at().unwrap_or(i64::MAX), r.recorded_at(), std::cmp::Reverse(r.id())))
}

/// The valid-time rules of `replaces` (knowledge-verbs.md "Valid time"). The assertion starts at
/// its `valid_from` (`now` when it has none, which it then gets). Every edge of the type from the
/// subject is read as its interval:
/// - starting later: newer; the assertion is older news, ends (`valid_to`) when the first newer
///   edge starts (unless it ends sooner) and is stored ended;
/// - true at the start, to another target: it ends there (`valid_to` = the start) and is ended;
/// - true at the start, to the same target: the assertion is already stated; nothing new is stored;
/// - over before the start, to the same target: the assertion restores the latest such edge (its
///   earlier life, live or ended, is kept as an ended copy).
pub(crate) fn replace_in_valid_time<T: Edge>(
    attributes: &mut Map<String, Value>,
    records: Vec<T>,
    to: u64,
    now: i64,
) -> Plan<T> {
    let given = attributes.get("valid_from").and_then(Value::as_str).map(|s| (s.to_owned(), valid::bound(s)));
    let (at, start) = match given {
        Some((text, Some(ms))) => (text, ms),
        _ => (iso_ms(now), now),
    };
    attributes.insert("valid_from".into(), Value::String(at.clone()));
    let mut plan = Plan { end_at: at, ..Plan::default() };
    let mut newer: Vec<T> = Vec::new();
    let mut over = Vec::new();
    for rel in records.into_iter().filter(read_against) {
        let covers = rel.end().is_none_or(|end| end > start);
        match (rel.start(), rel.reaches(to), covers) {
            (Some(from), _, _) if from > start => newer.push(rel),
            (_, false, true) => plan.end.push(rel),
            (_, true, true) => plan.same = Some(rel),
            (_, true, false) => over.push(rel),
            (_, false, false) => {}
        }
    }
    if let Some(first) = newer.iter().filter_map(|r| Some((r.start()?, r))).min_by_key(|(ms, _)| *ms) {
        let own_end = attributes.get("valid_to").and_then(Value::as_str).and_then(valid::bound);
        if own_end.is_none_or(|end| end > first.0) {
            let spelled = first.1.valid_from().unwrap_or_default().to_owned();
            attributes.insert("valid_to".into(), Value::String(spelled));
        }
    }
    plan.newer = newer.iter().map(T::id).collect();
    if plan.same.is_none() && plan.newer.is_empty() {
        plan.restored = latest(over.into_iter());
    }
    plan
}
