//! Derived relations, computed at read time and never stored: symmetric types read both ways,
//! inverse pairs read from the other end, and transitive types chain up to six links. A recall sees
//! them from either end: the reversed reading of a stored symmetric or inverse relation, and the
//! chains that start or end at the subject. Each derived fact names its rule and the stored
//! relations it rests on, and holds where all of them hold (`Span`): a chain whose links are never
//! true together derives nothing.

use super::graph::{Direction, Neighbour, Relation};
use super::valid;
use crate::text::fold;
use crate::time::iso_ms;
use std::borrow::Cow;
use std::collections::{HashMap, VecDeque};

/// Types that hold both ways.
pub const SYMMETRIC: [&str; 3] = ["married_to", "spouse_of", "sibling_of"];
/// Type pairs where each reads as the other from the far end.
pub const INVERSE: [(&str, &str); 4] =
    [("parent_of", "child_of"), ("owns", "owned_by"), ("employs", "employed_by"), ("manages", "managed_by")];
/// Types whose chains hold end to end.
pub const TRANSITIVE: [&str; 3] = ["part_of", "located_in", "contained_in"];
/// The type a fact of type `folded` (folded) reads as from its far end: itself for a symmetric
/// type, its partner for an inverse one; `None` for any other type.
pub(crate) fn mirror(folded: &str) -> Option<&'static str> {
    let key = rule_key(folded);
    SYMMETRIC.iter().find(|t| **t == key).copied().or_else(|| inverse_of(&key))
}

/// The form a relation type is matched to the rules in: each lower-to-upper case step read as a
/// separator (`childOf`, `ownedBy`: agents write camel case too), then folded (`fold`), with each
/// run of spaces, hyphens and underscores one `_`, so `married to`, `Married-To`, `marriedTo` and
/// `married_to` all read as `married_to` (found by audits: agents write `part of`, `part-of` and
/// `childOf`, and derivation stopped at them). It is also the form two spellings of one type are
/// stored as one by (`type_spelling.rs`). Only the rules and that match read types this way;
/// stored types are keyed by `fold`, and keep their spelling.
#[must_use]
pub(crate) fn rule_key(rel_type: &str) -> String {
    let split = camel_split(rel_type.trim());
    let mut out = String::with_capacity(split.len());
    for c in fold(&split).chars() {
        if matches!(c, ' ' | '-' | '_') {
            if !out.ends_with('_') {
                out.push('_');
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// `rel_type` with a `_` before each upper-case letter that follows a lower-case one or a digit
/// (`childOf` → `child_Of`, `hasCEO` → `has_CEO`, `member_of_2024Team` → `member_of_2024_Team`).
fn camel_split(rel_type: &str) -> Cow<'_, str> {
    if !rel_type.chars().any(char::is_uppercase) {
        return Cow::Borrowed(rel_type);
    }
    let mut split = String::with_capacity(rel_type.len() + 4);
    let mut lower_before = false;
    for c in rel_type.chars() {
        if c.is_uppercase() && lower_before {
            split.push('_');
        }
        lower_before = c.is_lowercase() || c.is_ascii_digit();
        split.push(c);
    }
    Cow::Owned(split)
}

/// The stored (folded) spellings a rule type is looked up under in the adjacency index: each `_`
/// of `rule` as `_`, a space or a hyphen (`part_of`, `part of`, `part-of`). Stored types are
/// keyed by `fold`, so a read by the rule's own spelling alone missed `part of` (the audit's
/// spelling); a run of several separators (`part - of`) is not among them.
#[must_use]
pub(crate) fn spellings(rule: &str) -> Vec<String> {
    let mut out = vec![String::new()];
    for (i, part) in rule.split('_').enumerate() {
        if i > 0 {
            out = out.iter().flat_map(|s| ['_', ' ', '-'].map(|sep| format!("{s}{sep}"))).collect();
        }
        for s in &mut out {
            s.push_str(part);
        }
    }
    out
}

/// The stored (folded) spellings a read of rule type `rule` looks up when it keeps only the
/// relations whose own spelling `rule_key` reads as `rule`: `spellings`, and the fold of the
/// camel-case spelling (`partOf` is stored under `partof`, as a plain `partof` is; the check on
/// the relation's spelling tells them apart).
#[must_use]
pub(crate) fn camel_and_spellings(rule: &str) -> Vec<String> {
    let mut out = spellings(rule);
    if rule.contains('_') {
        out.push(rule.replace('_', ""));
    }
    out
}

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
    /// Where and since when it holds: the meet of theirs.
    pub span: Span,
}

/// Where a derived fact holds in valid time and since when the store knows it, from the facts it
/// rests on, each as the read saw it: valid from the latest of their starts (`None` only when
/// none has one) to the earliest of their ends, recorded when the last of them was (the
/// derivation is known from then), ended in transaction time when the first of them was. Bounds
/// keep the spelling of the fact they come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Span {
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
    pub recorded_at: i64,
    pub ended_at: Option<i64>,
}

impl Span {
    /// One fact's own: its interval (an edge ended without a `valid_to`, from stores written
    /// before `replaces` set one, true until its `ended_at`) and transaction times.
    #[must_use]
    pub fn of(rel: &Relation) -> Span {
        let valid_to = match (&rel.valid_to, rel.ended_at) {
            (Some(to), _) => Some(to.clone()),
            (None, Some(end)) => Some(iso_ms(end)),
            (None, None) => None,
        };
        Span { valid_from: rel.valid_from.clone(), valid_to, recorded_at: rel.recorded_at, ended_at: rel.ended_at }
    }

    fn start(&self) -> Option<i64> {
        self.valid_from.as_deref().and_then(valid::bound)
    }

    fn end(&self) -> Option<i64> {
        self.valid_to.as_deref().and_then(valid::bound)
    }

    /// Where this and `rel` both hold, or `None` when that holds no instant (half-open intervals:
    /// one ending where the other starts never meets it).
    #[must_use]
    pub fn meet(&self, rel: &Relation) -> Option<Span> {
        let other = Span::of(rel);
        // The latest start and the earliest end; an unbounded one gives way to any bound.
        let (start, end) = (other.start(), other.end());
        let valid_from = match (self.start(), start) {
            (Some(mine), Some(theirs)) if theirs > mine => other.valid_from,
            (None, Some(_)) => other.valid_from,
            _ => self.valid_from.clone(),
        };
        let valid_to = match (self.end(), end) {
            (Some(mine), Some(theirs)) if theirs < mine => other.valid_to,
            (None, Some(_)) => other.valid_to,
            _ => self.valid_to.clone(),
        };
        let ended_at = match (self.ended_at, other.ended_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        let recorded_at = self.recorded_at.max(other.recorded_at);
        let span = Span { valid_from, valid_to, recorded_at, ended_at };
        match (span.start(), span.end()) {
            (Some(from), Some(to)) if to <= from => None,
            _ => Some(span),
        }
    }

    /// Whether every instant of `other` is one of this span's.
    fn covers(&self, other: &Span) -> bool {
        let starts_by = match (self.start(), other.start()) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => a <= b,
        };
        let ends_after = match (self.end(), other.end()) {
            (None, _) => true,
            (Some(_), None) => false,
            (Some(a), Some(b)) => a >= b,
        };
        starts_by && ends_after
    }

    /// Holds everywhere, known since ever: what a chain starts from.
    fn everywhere() -> Span {
        Span { valid_from: None, valid_to: None, recorded_at: i64::MIN, ended_at: None }
    }
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
        let folded = rule_key(&n.relation.rel_type);
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
        out.push(Derived { from, to, rel_type, rule, basis: vec![n.relation.id], span: Span::of(&n.relation) });
    }
    out
}

/// Transitive chains from `subject`: for each transitive type, every entity reachable by 2 to
/// `MAX_LINKS` outbound relations of that type that hold together somewhere in valid time, by its
/// shortest such chain. `outbound(entity)` gives an entity's outbound relations as the read sees
/// them.
pub fn chains<E>(subject: u64, outbound: impl FnMut(u64) -> Result<Vec<Relation>, E>) -> Result<Vec<Derived>, E> {
    let found = walk(subject, outbound, |r| r.to)?;
    Ok(found
        .into_iter()
        .map(|(to, rel_type, basis, span)| Derived { from: subject, to, rel_type, rule: Rule::Transitive, basis, span })
        .collect())
}

/// Transitive chains into `subject`: every entity from which 2 to `MAX_LINKS` relations of one
/// transitive type, holding together somewhere in valid time, lead to it, by the shortest such
/// chain (its basis in chain order, from that entity). `inbound(entity)` gives an entity's inbound
/// relations as the read sees them.
pub fn chains_into<E>(subject: u64, inbound: impl FnMut(u64) -> Result<Vec<Relation>, E>) -> Result<Vec<Derived>, E> {
    let found = walk(subject, inbound, |r| r.from)?;
    Ok(found
        .into_iter()
        .map(|(from, rel_type, mut basis, span)| {
            basis.reverse();
            Derived { from, to: subject, rel_type, rule: Rule::Transitive, basis, span }
        })
        .collect())
}

/// The most partial chains one walk of one type extends, so many relations over many different
/// intervals cannot make it unbounded (each entity is read once whatever this is: `step`).
const MAX_PARTIAL_CHAINS: usize = 4_096;

/// A target reached: the type as first spelled, the relations walked (from `subject` out), where
/// they hold together.
type Reached = (u64, String, Vec<u64>, Span);

/// Breadth-first walks from `subject` over the relations `step` gives, one transitive type at a
/// time, to the entity `next` names: each entity 2 to `MAX_LINKS` links away by a chain whose
/// links hold together (their `Span::meet` holds an instant), shortest chain first. An entity is
/// walked on from again only by a chain holding somewhere the chains that reached it before do
/// not all cover, so a chain true at other times than the first is still followed, and cycles end.
fn walk<E>(
    subject: u64,
    mut step: impl FnMut(u64) -> Result<Vec<Relation>, E>,
    next: fn(&Relation) -> u64,
) -> Result<Vec<Reached>, E> {
    let mut out = Vec::new();
    for rel_type in TRANSITIVE {
        let mut reached: HashMap<u64, Vec<Span>> = HashMap::from([(subject, vec![Span::everywhere()])]);
        let mut path: HashMap<u64, (Vec<u64>, Span)> = HashMap::new();
        let mut queue = VecDeque::from([(subject, Vec::<u64>::new(), Span::everywhere())]);
        let mut spelling = None;
        let mut extended = 0;
        while let Some((at, basis, span)) = queue.pop_front() {
            if basis.len() == MAX_LINKS || extended == MAX_PARTIAL_CHAINS {
                continue;
            }
            extended += 1;
            for rel in step(at)? {
                let far = next(&rel);
                if rule_key(&rel.rel_type) != rel_type || far == subject {
                    continue;
                }
                let Some(joint) = span.meet(&rel) else { continue };
                let before = reached.entry(far).or_default();
                if before.iter().any(|s| s.covers(&joint)) {
                    continue;
                }
                before.push(joint.clone());
                spelling.get_or_insert_with(|| rel.rel_type.clone());
                let mut chain = basis.clone();
                chain.push(rel.id);
                if chain.len() >= 2 {
                    path.entry(far).or_insert_with(|| (chain.clone(), joint.clone()));
                }
                queue.push_back((far, chain, joint));
            }
        }
        let mut found: Vec<(u64, (Vec<u64>, Span))> = path.into_iter().collect();
        found.sort_by_key(|(to, (chain, _))| (chain.len(), *to));
        for (to, (basis, span)) in found {
            out.push((to, spelling.clone().unwrap_or_else(|| rel_type.to_owned()), basis, span));
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
            version_of: None,
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
            attribute_writes: Vec::new(),
            writes_in: None,
            writes: None,
            also: Vec::new(),
        }
    }

    /// No bounds, recorded at 0: the span of facts made by `rel`.
    fn open() -> Span {
        Span { valid_from: None, valid_to: None, recorded_at: 0, ended_at: None }
    }

    fn dated(
        id: u64,
        from: u64,
        to: u64,
        (valid_from, valid_to): (Option<&str>, Option<&str>),
        recorded: i64,
    ) -> Relation {
        Relation {
            valid_from: valid_from.map(str::to_owned),
            valid_to: valid_to.map(str::to_owned),
            recorded_at: recorded,
            ..rel(id, from, to, "part_of")
        }
    }

    #[test]
    fn a_chain_holds_where_all_its_links_hold() {
        // 1 → 2 from 2020, 2 → 3 from 2022 until 2024, 3 → 4 until 2023 (recorded last).
        let edges = [
            dated(101, 1, 2, (Some("2020-01-01"), None), 10),
            dated(102, 2, 3, (Some("2022-01-01"), Some("2024-01-01")), 20),
            dated(103, 3, 4, (None, Some("2023-01-01")), 30),
        ];
        let got = chains(1, |e| Ok::<_, ()>(edges.iter().filter(|r| r.from == e).cloned().collect())).unwrap();
        let spans: Vec<(u64, Span)> = got.iter().map(|d| (d.to, d.span.clone())).collect();
        let span = |from: &str, to: &str, recorded_at| Span {
            valid_from: Some(from.into()),
            valid_to: Some(to.into()),
            recorded_at,
            ended_at: None,
        };
        assert_eq!(
            spans,
            vec![(3, span("2022-01-01", "2024-01-01", 20)), (4, span("2022-01-01", "2023-01-01", 30))],
            "the latest start, the earliest end, the last recording"
        );
        // Links that are never true together derive nothing, from either end.
        let apart = [dated(201, 1, 2, (None, Some("2022-01-01")), 0), dated(202, 2, 3, (Some("2022-01-01"), None), 0)];
        assert!(
            chains(1, |e| Ok::<_, ()>(apart.iter().filter(|r| r.from == e).cloned().collect())).unwrap().is_empty()
        );
        assert!(
            chains_into(3, |e| Ok::<_, ()>(apart.iter().filter(|r| r.to == e).cloned().collect())).unwrap().is_empty()
        );
    }

    #[test]
    fn a_chain_true_at_other_times_than_the_first_found_is_still_followed() {
        // 1 → 2 directly until 2021 and, by 1 → 5 → 2, from 2022; only the second reaches on to 3
        // (2 → 3 from 2023), so the chain to 3 is the longer one.
        let edges = [
            dated(1, 1, 2, (None, Some("2021-01-01")), 0),
            dated(2, 1, 5, (Some("2022-01-01"), None), 0),
            dated(3, 5, 2, (None, None), 0),
            dated(4, 2, 3, (Some("2023-01-01"), None), 0),
        ];
        let got = chains(1, |e| Ok::<_, ()>(edges.iter().filter(|r| r.from == e).cloned().collect())).unwrap();
        let to_3 = got.iter().find(|d| d.to == 3).unwrap_or_else(|| panic!("3 is reached: {got:?}"));
        assert_eq!(to_3.basis, vec![2, 3, 4]);
        assert_eq!((to_3.span.valid_from.as_deref(), to_3.span.valid_to.as_deref()), (Some("2023-01-01"), None));
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
                Derived {
                    from: 1,
                    to: 2,
                    rel_type: "Married_To".into(),
                    rule: Rule::Symmetric,
                    basis: vec![10],
                    span: open()
                },
                Derived {
                    from: 1,
                    to: 3,
                    rel_type: "child_of".into(),
                    rule: Rule::Inverse,
                    basis: vec![11],
                    span: open()
                },
                Derived {
                    from: 5,
                    to: 1,
                    rel_type: "sibling_of".into(),
                    rule: Rule::Symmetric,
                    basis: vec![13],
                    span: open()
                },
                Derived {
                    from: 6,
                    to: 1,
                    rel_type: "owned_by".into(),
                    rule: Rule::Inverse,
                    basis: vec![14],
                    span: open()
                },
            ]
        );
    }

    #[test]
    fn a_rule_type_is_looked_up_under_each_separator() {
        assert_eq!(spellings("part_of"), ["part_of", "part of", "part-of"]);
        assert_eq!(spellings("owns"), ["owns"]);
        assert!(spellings("contained_in").iter().all(|s| rule_key(s) == "contained_in"));
        assert_eq!(camel_and_spellings("part_of"), ["part_of", "part of", "part-of", "partof"]);
        assert_eq!(camel_and_spellings("owns"), ["owns"]);
    }

    #[test]
    fn camel_case_types_read_as_the_rules_do() {
        for (spelled, key) in [
            ("childOf", "child_of"),
            ("ParentOf", "parent_of"),
            ("ownedBy", "owned_by"),
            ("marriedTo", "married_to"),
            ("siblingOf", "sibling_of"),
            ("partOf", "part_of"),
            ("Child Of", "child_of"),
            ("CHILD_OF", "child_of"),
            ("hasCEO", "has_ceo"),
        ] {
            assert_eq!(rule_key(spelled), key, "{spelled}");
        }
        // A type written in lower case alone has no step to split at.
        assert_eq!(rule_key("childof"), "childof");
        assert_eq!(mirror("childOf"), Some("parent_of"));
        assert_eq!(mirror("marriedTo"), Some("married_to"));
        let inbound = |r: Relation| Neighbour { other: r.from, relation: r, direction: Direction::Inbound };
        let got = around(1, &[inbound(rel(10, 2, 1, "childOf")), inbound(rel(11, 3, 1, "marriedTo"))]);
        let read: Vec<(u64, u64, &str, Rule)> =
            got.iter().map(|d| (d.from, d.to, d.rel_type.as_str(), d.rule)).collect();
        assert_eq!(read, [(1, 2, "parent_of", Rule::Inverse), (1, 3, "marriedTo", Rule::Symmetric)]);
    }

    #[test]
    fn camel_case_links_chain_and_a_lower_case_one_does_not() {
        let edges = [rel(1, 1, 2, "partOf"), rel(2, 2, 3, "part_of"), rel(3, 3, 4, "partof")];
        let got = chains(1, |e| Ok::<_, ()>(edges.iter().filter(|r| r.from == e).cloned().collect())).unwrap();
        let reached: Vec<(u64, &str)> = got.iter().map(|d| (d.to, d.rel_type.as_str())).collect();
        assert_eq!(reached, [(3, "partOf")], "the first spelling walked names the chain");
    }

    #[test]
    fn transitive_chains_read_into_the_subject_too() {
        // 1 → 2 → 3 part_of: from 3's end, 1 is part of it by 101 then 102.
        let edges = [rel(101, 1, 2, "part_of"), rel(102, 2, 3, "part_of"), rel(103, 4, 3, "located_in")];
        let got = chains_into(3, |e| Ok::<_, ()>(edges.iter().filter(|r| r.to == e).cloned().collect())).unwrap();
        assert_eq!(
            got,
            vec![Derived {
                from: 1,
                to: 3,
                rel_type: "part_of".into(),
                rule: Rule::Transitive,
                basis: vec![101, 102],
                span: open()
            }]
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
