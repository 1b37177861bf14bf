//! The graph channel's traversal: breadth-first from a context's seeds, at most `MAX_FACTS`
//! relations in all. Each hop shares what is left of that cap among the entities it walks from,
//! so one hub cannot take every place (a seed with few edges keeps all of them, the rest is split
//! evenly among the busier ones), and an entity that cannot keep all its edges keeps first those
//! that link it to another entity of the same hop (a question naming both ends of a fact finds
//! it), then the newest (ids are handed out in write order). Edges are chosen from the adjacency
//! keys alone, so only the kept ones are read: a hub of 20,000 edges costs a key scan, not 20,000
//! relation reads.

use super::graph::{Direction, Neighbour, neighbour};
use super::part::Partition;
use super::present_adjacency::adjacency_at;
use super::recall::{When, seen_at};
use super::trees::adj_prefix;
use crate::error::Result;
use crate::snapshot::Snapshot;
use std::cmp::Reverse;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap, HashSet};

/// The most relations a traversal collects, so a hub entity cannot make a context unbounded.
pub const MAX_FACTS: usize = 500;

/// What a traversal reached: relations with their hop and seed, the seed each reached entity came
/// from, and the entities in the order reached (seeds first).
pub(super) struct Walk {
    pub facts: Vec<(Neighbour, usize, u64)>,
    pub reached: HashMap<u64, u64>,
    pub order: Vec<u64>,
    /// The hop at which each entity was reached (seeds: 0).
    pub depth: HashMap<u64, usize>,
    /// Each seed's own relations the walk kept, seen from the seed (what its derived facts rest on).
    pub own: HashMap<u64, Vec<Neighbour>>,
}

/// One entity of a hop: its edges in the order it keeps them, and how many it has looked at.
struct Side {
    entity: u64,
    edges: Vec<(u64, Direction)>,
    next: usize,
}

/// Breadth-first from the seeds, each relation `when` sees once, ranked by hop, then those
/// between two seeds, then newest.
pub(super) fn walk(snap: &Snapshot, part: &Partition, seed_ids: &[u64], hops: usize, when: &When) -> Result<Walk> {
    let mut walking = Walking {
        snap,
        part,
        when,
        walk: Walk {
            facts: Vec::new(),
            reached: seed_ids.iter().map(|&id| (id, id)).collect(),
            order: seed_ids.to_vec(),
            depth: seed_ids.iter().map(|&id| (id, 0)).collect(),
            own: HashMap::new(),
        },
        facts: BTreeMap::new(),
    };
    let mut frontier: Vec<u64> = seed_ids.to_vec();
    for hop in 1..=hops {
        if walking.facts.len() >= MAX_FACTS || frontier.is_empty() {
            break;
        }
        let sides = sides(snap, part, &frontier, when)?;
        frontier = walking.hop(sides, hop)?;
    }
    let mut facts: Vec<(Neighbour, usize, u64)> = walking.facts.into_values().collect();
    // A fact between two seeds is what a question naming both asks about ("Does Priya Raman work
    // at Contoso?"): it leads its hop, ahead of the seeds' newer facts (found by an audit: eight
    // newer `knows` pushed `works_at` out of k 8).
    let seeds: HashSet<u64> = seed_ids.iter().copied().collect();
    let links = |n: &Neighbour| seeds.contains(&n.relation.from) && seeds.contains(&n.relation.to);
    facts.sort_by_key(|(n, hop, _)| (*hop, Reverse(links(n)), Reverse(n.relation.recorded_at), n.relation.id));
    Ok(Walk { facts, ..walking.walk })
}

/// The entities of a hop with their edges (keys only) in the order each keeps them: those that
/// link it to another entity of the hop first, then the newest. The copies a fact keeps of itself
/// are listed only when the read at `when` may see one (`present_adjacency.rs`).
fn sides(snap: &Snapshot, part: &Partition, frontier: &[u64], when: &When) -> Result<Vec<Side>> {
    let mut sides = Vec::with_capacity(frontier.len());
    for &entity in frontier {
        let edges = adjacency_at(snap, part, entity, &adj_prefix(part, entity), when)?;
        sides.push(Side { entity, edges, next: 0 });
    }
    let mut once: HashSet<u64> = HashSet::new();
    let linking: HashSet<u64> =
        sides.iter().flat_map(|s| s.edges.iter().map(|&(id, _)| id)).filter(|&id| !once.insert(id)).collect();
    for side in &mut sides {
        side.edges.sort_by_key(|&(id, _)| (Reverse(linking.contains(&id)), Reverse(id)));
    }
    Ok(sides)
}

/// A traversal under way: what it reached and the facts it kept, by id.
struct Walking<'a> {
    snap: &'a Snapshot,
    part: &'a Partition,
    when: &'a When,
    walk: Walk,
    facts: BTreeMap<u64, (Neighbour, usize, u64)>,
}

impl Walking<'_> {
    /// Walks one hop from `sides`, sharing the places left; returns the entities it reached first.
    /// Water-filling: each round gives every entity with edges left an even share of what is
    /// left; one with fewer edges than its share takes them all, and what it leaves goes to the
    /// others next round.
    fn hop(&mut self, mut sides: Vec<Side>, hop: usize) -> Result<Vec<u64>> {
        let mut next = Vec::new();
        loop {
            let open: Vec<usize> = (0..sides.len()).filter(|&i| sides[i].next < sides[i].edges.len()).collect();
            let left = MAX_FACTS.saturating_sub(self.facts.len());
            if open.is_empty() || left == 0 {
                return Ok(next);
            }
            let share = left.div_ceil(open.len());
            for i in open {
                let side = &mut sides[i];
                let mut took = 0;
                while took < share && side.next < side.edges.len() && self.facts.len() < MAX_FACTS {
                    let (rel_id, direction) = side.edges[side.next];
                    side.next += 1;
                    if self.keep(side.entity, rel_id, direction, hop, &mut next)? {
                        took += 1;
                    }
                }
            }
        }
    }

    /// Reads edge `rel_id` of `entity` and keeps it when `when` sees it and it is new (a fact two
    /// entities share is kept once, by the first); whether it took a place. A seed's own edges
    /// are noted for its derived facts either way.
    fn keep(
        &mut self,
        entity: u64,
        rel_id: u64,
        direction: Direction,
        hop: usize,
        next: &mut Vec<u64>,
    ) -> Result<bool> {
        let Some(n) = neighbour(self.snap, self.part, rel_id, direction)?
            .map(|n| seen_at(self.snap, self.part, n, self.when))
            .transpose()?
            .flatten()
        else {
            return Ok(false);
        };
        let w = &mut self.walk;
        if hop == 1 {
            w.own.entry(entity).or_default().push(n.clone());
        }
        if self.facts.contains_key(&n.relation.id) {
            return Ok(false);
        }
        let seed = w.reached[&entity];
        if let Entry::Vacant(v) = w.reached.entry(n.other) {
            v.insert(seed);
            w.depth.insert(n.other, hop);
            w.order.push(n.other);
            next.push(n.other);
        }
        self.facts.insert(n.relation.id, (n, hop, seed));
        Ok(true)
    }
}

#[cfg(test)]
mod tests {
    use crate::knowledge::testing::{TODAY, assertion, call, caller, seeded_with};
    use crate::knowledge::{Partition, relate};
    use serde_json::{Map, Value, json};

    /// Hub Corp employs Member 000 … Member 599 (recorded in that order), then Zed Newcomer;
    /// Ann Other works at Globex.
    fn hub() -> (tempfile::TempDir, crate::store::Store, Partition) {
        seeded_with(|tx, p| {
            let none = Map::new();
            for i in 0..600 {
                let member = format!("Member {i:03}");
                relate(tx, p, assertion("Hub Corp", &member, "employs", &none, "a"), 1_000 + i)?;
            }
            relate(tx, p, assertion("Hub Corp", "Zed Newcomer", "employs", &none, "a"), 5_000)?;
            relate(tx, p, assertion("Ann Other", "Globex", "works_at", &none, "a"), 5_001)
        })
    }

    fn texts(c: &Value) -> Vec<String> {
        c["items"].as_array().unwrap().iter().map(|i| i["text"].as_str().unwrap().to_owned()).collect()
    }

    #[test]
    fn a_fact_naming_two_seeds_is_found_past_a_hubs_cap() {
        let (_dir, store, _part) = hub();
        let c = call(&store, &caller(TODAY), "context", &json!({"question": "Does Hub Corp employ Zed Newcomer?"}))
            .unwrap();
        assert_eq!(texts(&c)[0], "Hub Corp employs Zed Newcomer", "{c}");
        assert_eq!(c["grounding"]["verdict"], json!("grounded"), "{c}");
        assert_eq!(c["coverage"]["facts"], json!(500), "{c}");
    }

    #[test]
    fn a_fact_between_two_seeds_leads_their_newer_facts() {
        // Found by an audit: eight newer `knows` facts pushed `works_at` out of k 8.
        let (_dir, store, _part) = seeded_with(|tx, p| {
            let none = Map::new();
            relate(tx, p, assertion("Priya Raman", "Contoso", "works_at", &none, "a"), 1_000)?;
            for i in 0..8 {
                relate(tx, p, assertion("Priya Raman", &format!("Friend {i}"), "knows", &none, "a"), 2_000 + i)?;
            }
            Ok(())
        });
        let c =
            call(&store, &caller(TODAY), "context", &json!({"question": "Does Priya Raman work at Contoso?"})).unwrap();
        assert_eq!(texts(&c)[0], "Priya Raman works_at Contoso", "{c}");
        assert_eq!(c["grounding"]["verdict"], json!("grounded"), "{c}");
    }

    #[test]
    fn a_hub_shows_its_newest_facts_and_leaves_other_seeds_their_share() {
        let (_dir, store, _part) = hub();
        let ask = |q: &str| call(&store, &caller(TODAY), "context", &json!({"question": q, "k": 100})).unwrap();
        let c = ask("Who does Hub Corp employ?");
        let facts: Vec<String> = texts(&c).into_iter().filter(|t| t.starts_with("Hub Corp employs")).collect();
        assert_eq!(
            facts[..3],
            ["Hub Corp employs Zed Newcomer", "Hub Corp employs Member 599", "Hub Corp employs Member 598"]
        );
        assert!(!facts.contains(&"Hub Corp employs Member 000".to_owned()), "the oldest is past the cap: {c}");
        // Its facts' inverse readings ("Zed Newcomer employed_by Hub Corp") take no place from them.
        let c = call(&store, &caller(TODAY), "context", &json!({"question": "Who does Hub Corp employ?"})).unwrap();
        let items = c["items"].as_array().unwrap();
        assert!(items.iter().all(|i| i["derived"].is_null()), "{c}");
        // Every item is one of its facts: their type is the question's word, "employ".
        assert_eq!(items.iter().filter(|i| i["kind"] == json!("fact")).count(), 8, "{c}");
        // The hub comes first in the question, yet the other seed's fact is still walked.
        let c = ask("Does Hub Corp or Ann Other work at Globex?");
        assert!(texts(&c).contains(&"Ann Other works_at Globex".to_owned()), "{c}");
    }
}
