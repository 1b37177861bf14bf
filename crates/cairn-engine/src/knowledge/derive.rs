//! Derived relations, computed at read time and never stored: symmetric types read both ways,
//! inverse pairs read from the other end, and transitive types chain up to six links. A recall sees
//! them from either end: the reversed reading of a stored symmetric or inverse relation, and the
//! chains that start or end at the subject. Each derived fact names its rule and the stored
//! relations it rests on.

use super::graph::{Direction, Neighbour, Relation};
use crate::text::fold;
use std::collections::{HashMap, HashSet, VecDeque};

/// Types that hold both ways.
pub const SYMMETRIC: [&str; 3] = ["married_to", "spouse_of", "sibling_of"];
/// Type pairs where each reads as the other from the far end.
pub const INVERSE: [(&str, &str); 4] =
    [("parent_of", "child_of"), ("owns", "owned_by"), ("employs", "employed_by"), ("manages", "managed_by")];
/// Types whose chains hold end to end.
pub const TRANSITIVE: [&str; 3] = ["part_of", "located_in", "contained_in"];
/// The longest chain a transitive derivation follows.
pub const MAX_LINKS: usize = 6;

/// How a derived fact follows from stored ones.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    Symmetric,
    Inverse,
    Transitive,
}

/// A fact that follows from stored relations: `from` —`rel_type`→ `to`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Derived {
    pub from: u64,
    pub to: u64,
    pub rel_type: String,
    pub rule: Rule,
    /// The stored relations it rests on, in chain order.
    pub basis: Vec<u64>,
}

fn inverse_of(folded: &str) -> Option<&'static str> {
    INVERSE.iter().find_map(|&(a, b)| {
        if folded == a {
            Some(b)
        } else if folded == b {
            Some(a)
        } else {
            None
        }
    })
}

/// The one-step derivations around `subject` from its stored relations (`around`, both
/// directions): the symmetric or inverse reading of each, from its other end to its first. Read
/// from an inbound relation it is a fact from `subject`; from an outbound one, a fact about it.
#[must_use]
pub fn around(subject: u64, around: &[Neighbour]) -> Vec<Derived> {
    let mut out = Vec::new();
    for n in around {
        let folded = fold(&n.relation.rel_type);
        let (rel_type, rule) = if SYMMETRIC.contains(&folded.as_str()) {
            (n.relation.rel_type.clone(), Rule::Symmetric)
        } else if let Some(inverse) = inverse_of(&folded) {
            (inverse.to_owned(), Rule::Inverse)
        } else {
            continue;
        };
        let (from, to) = match n.direction {
            Direction::Inbound => (subject, n.other),
            Direction::Outbound => (n.other, subject),
        };
        out.push(Derived { from, to, rel_type, rule, basis: vec![n.relation.id] });
    }
    out
}

/// Transitive chains from `subject`: for each transitive type, every entity reachable by 2 to
/// `MAX_LINKS` outbound relations of that type, by its shortest chain. `outbound(entity)` gives an
/// entity's live outbound relations.
pub fn chains<E>(subject: u64, outbound: impl FnMut(u64) -> Result<Vec<Relation>, E>) -> Result<Vec<Derived>, E> {
    let found = walk(subject, outbound, |r| r.to)?;
    Ok(found
        .into_iter()
        .map(|(to, rel_type, basis)| Derived { from: subject, to, rel_type, rule: Rule::Transitive, basis })
        .collect())
}

/// Transitive chains into `subject`: every entity from which 2 to `MAX_LINKS` relations of one
/// transitive type lead to it, by the shortest chain (its basis in chain order, from that entity).
/// `inbound(entity)` gives an entity's live inbound relations.
pub fn chains_into<E>(subject: u64, inbound: impl FnMut(u64) -> Result<Vec<Relation>, E>) -> Result<Vec<Derived>, E> {
    let found = walk(subject, inbound, |r| r.from)?;
    Ok(found
        .into_iter()
        .map(|(from, rel_type, mut basis)| {
            basis.reverse();
            Derived { from, to: subject, rel_type, rule: Rule::Transitive, basis }
        })
        .collect())
}

/// Breadth-first walks from `subject` over the relations `step` gives, one transitive type at a
/// time, to the entity `next` names: each entity 2 to `MAX_LINKS` links away, the type as first
/// spelled, and the relations walked (from `subject` out), shortest chain first.
fn walk<E>(
    subject: u64,
    mut step: impl FnMut(u64) -> Result<Vec<Relation>, E>,
    next: fn(&Relation) -> u64,
) -> Result<Vec<(u64, String, Vec<u64>)>, E> {
    let mut out = Vec::new();
    for rel_type in TRANSITIVE {
        let mut seen: HashSet<u64> = HashSet::from([subject]);
        let mut path: HashMap<u64, Vec<u64>> = HashMap::new();
        let mut queue = VecDeque::from([(subject, Vec::<u64>::new())]);
        let mut spelling = None;
        while let Some((at, basis)) = queue.pop_front() {
            if basis.len() == MAX_LINKS {
                continue;
            }
            for rel in step(at)? {
                let far = next(&rel);
                if fold(&rel.rel_type) != rel_type || !seen.insert(far) {
                    continue;
                }
                spelling.get_or_insert_with(|| rel.rel_type.clone());
                let mut chain = basis.clone();
                chain.push(rel.id);
                if chain.len() >= 2 {
                    path.insert(far, chain.clone());
                }
                queue.push_back((far, chain));
            }
        }
        let mut found: Vec<(u64, Vec<u64>)> = path.into_iter().collect();
        found.sort_by_key(|(to, chain)| (chain.len(), *to));
        for (to, basis) in found {
            out.push((to, spelling.clone().unwrap_or_else(|| rel_type.to_owned()), basis));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knowledge::Source;
    use serde_json::Map;

    fn rel(id: u64, from: u64, to: u64, t: &str) -> Relation {
        Relation {
            shortened: None,
            id,
            from,
            to,
            rel_type: t.into(),
            attributes: Map::new(),
            valid_from: None,
            valid_to: None,
            recorded_at: 0,
            ended_at: None,
            source: Source::Asserted { label: None },
            agent: "a".into(),
            source_date: None,
        }
    }

    #[test]
    fn symmetric_and_inverse_read_from_the_other_end() {
        let inbound = |r: Relation| Neighbour { other: r.from, relation: r, direction: Direction::Inbound };
        let outbound = |r: Relation| Neighbour { other: r.to, relation: r, direction: Direction::Outbound };
        let got = around(
            1,
            &[
                inbound(rel(10, 2, 1, "Married_To")),
                inbound(rel(11, 3, 1, "parent_of")),
                inbound(rel(12, 4, 1, "knows")),
                outbound(rel(13, 1, 5, "sibling_of")),
                outbound(rel(14, 1, 6, "owns")),
                outbound(rel(15, 1, 7, "knows")),
            ],
        );
        assert_eq!(
            got,
            vec![
                Derived { from: 1, to: 2, rel_type: "Married_To".into(), rule: Rule::Symmetric, basis: vec![10] },
                Derived { from: 1, to: 3, rel_type: "child_of".into(), rule: Rule::Inverse, basis: vec![11] },
                Derived { from: 5, to: 1, rel_type: "sibling_of".into(), rule: Rule::Symmetric, basis: vec![13] },
                Derived { from: 6, to: 1, rel_type: "owned_by".into(), rule: Rule::Inverse, basis: vec![14] },
            ]
        );
    }

    #[test]
    fn transitive_chains_read_into_the_subject_too() {
        // 1 → 2 → 3 part_of: from 3's end, 1 is part of it by 101 then 102.
        let edges = [rel(101, 1, 2, "part_of"), rel(102, 2, 3, "part_of"), rel(103, 4, 3, "located_in")];
        let got = chains_into(3, |e| Ok::<_, ()>(edges.iter().filter(|r| r.to == e).cloned().collect())).unwrap();
        assert_eq!(
            got,
            vec![Derived { from: 1, to: 3, rel_type: "part_of".into(), rule: Rule::Transitive, basis: vec![101, 102] }]
        );
    }

    #[test]
    fn transitive_chains_stop_at_six_links_and_cycles() {
        // 1 → 2 → 3 → … → 9 located_in, and 9 → 1 closing a cycle.
        let mut edges: HashMap<u64, Vec<Relation>> = HashMap::new();
        for i in 1..9 {
            edges.entry(i).or_default().push(rel(100 + i, i, i + 1, "located_in"));
        }
        edges.entry(9).or_default().push(rel(109, 9, 1, "located_in"));
        let got = chains(1, |e| Ok::<_, ()>(edges.get(&e).cloned().unwrap_or_default())).unwrap();
        let reached: Vec<u64> = got.iter().map(|d| d.to).collect();
        assert_eq!(reached, vec![3, 4, 5, 6, 7], "two to six links");
        assert_eq!(got[0].basis, vec![101, 102]);
        assert!(got.iter().all(|d| d.rule == Rule::Transitive && d.basis.len() <= MAX_LINKS));
    }

    #[test]
    fn other_types_do_not_chain() {
        let edges = [rel(1, 1, 2, "knows"), rel(2, 2, 3, "knows")];
        let got = chains(1, |e| Ok::<_, ()>(edges.iter().filter(|r| r.from == e).cloned().collect())).unwrap();
        assert!(got.is_empty());
    }
}
