//! What `relate` plans from in a stored relation (`relate_plan.rs`): its ids, ends, type and
//! times. `replaces` reads every edge of the type from the subject, ended ones included (kept for
//! `as_of` and `valid_at` reads), so the read grows with the subject's history: decoding each
//! record whole (attributes, provenance) cost about half of it (12 ms a call at 3,000 edges, an
//! agent updating `current_task` every session). Without `replaces` every version of the fact
//! itself is read, and a fact said again with new attributes keeps one per revision, each with
//! the attribute writes known then: decoded whole, the versions cost 227 ms a call at 1,000
//! revisions. An `EdgeView` decodes the same bytes skipping the rest; the plan then decodes whole
//! only the few records it changes.

use super::graph::Relation;
use super::valid;
use serde::Deserialize;

/// A stored relation's fields a plan reads; its other fields are skipped when decoding.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub(crate) struct EdgeView {
    pub id: u64,
    pub from: u64,
    pub to: u64,
    #[serde(rename = "type")]
    pub rel_type: String,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
    pub recorded_at: i64,
    pub ended_at: Option<i64>,
    #[serde(default)]
    pub version_of: Option<u64>,
}

/// A stored edge as a plan reads it now (the store's current reading, no `as_of`): a whole
/// `Relation` or its `EdgeView`, which read alike (`relate_plan_properties.rs`).
pub(crate) trait Edge: Clone {
    fn id(&self) -> u64;
    fn ends(&self) -> (u64, u64);
    /// Its type as stored (not folded).
    fn rel_type(&self) -> &str;
    /// The fact it is an earlier version of, kept for `as_of` reads.
    fn version_of(&self) -> Option<u64>;
    fn ended_at(&self) -> Option<i64>;
    fn recorded_at(&self) -> i64;
    fn valid_from(&self) -> Option<&str>;
    fn valid_to(&self) -> Option<&str>;

    /// The start of its valid time (ms); `None` is unbounded.
    fn start(&self) -> Option<i64> {
        self.valid_from().and_then(valid::bound)
    }

    /// The end of its valid time (ms) as the store reads it now, `Relation::valid_end(None)`: its
    /// `valid_to`, else (stores written before `replaces` set one) when it was ended.
    fn end(&self) -> Option<i64> {
        self.valid_to().and_then(valid::bound).or(self.ended_at())
    }

    /// Whether it is true at instant `at` (ms), half-open, as the store reads it now.
    fn true_at(&self, at: i64) -> bool {
        self.start().is_none_or(|from| from <= at) && self.end().is_none_or(|end| at < end)
    }

    /// Whether this edge, with the subject at one end, has `to` at the other.
    fn reaches(&self, to: u64) -> bool {
        let (a, b) = self.ends();
        a == to || b == to
    }
}

/// The two shapes an edge is read in share their field names, so one body serves both.
macro_rules! edge_fields {
    ($($t:ty),*) => {$(
        impl Edge for $t {
            fn id(&self) -> u64 {
                self.id
            }
            fn ends(&self) -> (u64, u64) {
                (self.from, self.to)
            }
            fn rel_type(&self) -> &str {
                &self.rel_type
            }
            fn version_of(&self) -> Option<u64> {
                self.version_of
            }
            fn ended_at(&self) -> Option<i64> {
                self.ended_at
            }
            fn recorded_at(&self) -> i64 {
                self.recorded_at
            }
            fn valid_from(&self) -> Option<&str> {
                self.valid_from.as_deref()
            }
            fn valid_to(&self) -> Option<&str> {
                self.valid_to.as_deref()
            }
        }
    )*};
}

edge_fields!(EdgeView, Relation);
