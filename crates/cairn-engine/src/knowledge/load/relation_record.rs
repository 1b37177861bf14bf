//! A load's `k.rel` records, written as `serde_json` writes a `Relation`. Most facts of a load
//! have no attributes, valid time or source date, only a type and an agent among a handful:
//! their records are written straight from the JSON of those few strings, encoded once. Building
//! a `Relation` (its type and agent copied) and serialising it, per fact, measured a fifth of the
//! writer's time in a load; a fact with any of those fields still goes through `Relation`.

use super::{NewFact, Plan};
use crate::knowledge::graph::{Relation, Source};

/// The strings facts share, as JSON.
pub(super) struct RelationRecords<'p> {
    plan: &'p Plan,
    /// Each spelling of a type, and each agent, as a JSON string.
    types: Vec<String>,
    agents: Vec<String>,
}

fn json(s: &str) -> String {
    serde_json::to_string(s).expect("strings serialise")
}

fn push_number(out: &mut Vec<u8>, n: impl std::fmt::Display) {
    use std::io::Write;
    write!(out, "{n}").expect("writing to memory does not fail");
}

impl<'p> RelationRecords<'p> {
    pub(super) fn of(plan: &'p Plan) -> RelationRecords<'p> {
        RelationRecords {
            plan,
            types: plan.spellings.iter().map(|t| json(t)).collect(),
            agents: plan.agents.iter().map(|a| json(a)).collect(),
        }
    }

    /// Appends fact `f`'s record (id `id`, between entities `from` and `to`) to `out`.
    pub(super) fn write(&self, f: &NewFact, (id, from, to): (u64, u64, u64), out: &mut Vec<u8>) {
        if f.extra.is_some() {
            let record = self.relation(f, (id, from, to));
            serde_json::to_writer(out, &record).expect("records serialise");
            return;
        }
        out.extend_from_slice(b"{\"id\":");
        push_number(out, id);
        out.extend_from_slice(b",\"from\":");
        push_number(out, from);
        out.extend_from_slice(b",\"to\":");
        push_number(out, to);
        out.extend_from_slice(b",\"type\":");
        out.extend_from_slice(self.types[f.spelling as usize].as_bytes());
        out.extend_from_slice(b",\"attributes\":{},\"valid_from\":null,\"valid_to\":null,\"recorded_at\":");
        push_number(out, f.recorded_at);
        out.extend_from_slice(b",\"ended_at\":");
        match f.ended_at {
            Some(t) => push_number(out, t),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b",\"source\":{\"kind\":\"asserted\",\"label\":");
        match &f.label {
            Some(label) => serde_json::to_writer(&mut *out, label).expect("strings serialise"),
            None => out.extend_from_slice(b"null"),
        }
        out.extend_from_slice(b"},\"agent\":");
        out.extend_from_slice(self.agents[f.agent as usize].as_bytes());
        out.push(b'}');
    }

    /// Fact `f` as a `Relation`.
    fn relation(&self, f: &NewFact, (id, from, to): (u64, u64, u64)) -> Relation {
        let extra = f.extra.as_deref();
        Relation {
            shortened: None,
            version_of: None,
            id,
            from,
            to,
            rel_type: self.plan.spellings[f.spelling as usize].clone(),
            attributes: extra.map(|x| x.attributes.clone()).unwrap_or_default(),
            valid_from: extra.and_then(|x| x.valid_from.clone()),
            valid_to: extra.and_then(|x| x.valid_to.clone()),
            recorded_at: f.recorded_at,
            ended_at: f.ended_at,
            source: Source::Asserted { label: f.label.clone() },
            agent: self.plan.agents[f.agent as usize].clone(),
            source_date: extra.and_then(|x| x.source_date.clone()),
            // A line carrying attribute writes is not the fast path's: `import` stores it.
            attribute_writes: Vec::new(),
            writes_in: None,
            writes: None,
            // So is a line whose provenance names others (`provenance.also`).
            also: Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{FactExtra, NewFact, Plan};
    use super::RelationRecords;
    use proptest::prelude::*;

    fn fact(spelling: u32, agent: u32, ended: Option<i64>, label: Option<String>, extra: bool) -> NewFact {
        NewFact {
            from: 0,
            to: 1,
            spelling,
            folded_type: spelling,
            recorded_at: 1_700_000_000_123,
            ended_at: ended,
            label,
            agent,
            extra: extra.then(|| {
                Box::new(FactExtra {
                    attributes: serde_json::json!({"since": 2020}).as_object().unwrap().clone(),
                    valid_from: Some("2020-01-01".into()),
                    valid_to: None,
                    source_date: Some("2019-05-01".into()),
                })
            }),
        }
    }

    proptest! {
        /// Every record written straight is byte for byte what serialising its `Relation` gives,
        /// for types, agents and labels that need escapes or not, ended or live.
        #[test]
        fn records_are_what_serialising_a_relation_gives(
            ty in "[a-z_\"\\\\é\u{1}]{1,12}",
            agent in "[a-z\"\\\\\u{7f}]{1,8}",
            label in proptest::option::of("[ -~\u{0}-\u{1f}ü]{0,20}"),
            ended in proptest::option::of(0i64..2_000_000_000_000),
            extra in any::<bool>(),
            ids in (0u64..u64::MAX, 0u64..u64::MAX, 0u64..u64::MAX),
        ) {
            let plan = Plan { spellings: vec!["knows".into(), ty], agents: vec!["bench".into(), agent], ..Plan::default() };
            let records = RelationRecords::of(&plan);
            let f = fact(1, 1, ended, label, extra);
            let mut out = Vec::new();
            records.write(&f, ids, &mut out);
            prop_assert_eq!(out, serde_json::to_vec(&records.relation(&f, ids)).unwrap());
        }
    }
}
