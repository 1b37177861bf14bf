//! The cost of `memory_recall {subject}` of a hub: `Me` with `n` live facts of several types
//! (some inverse, some with attributes) to `n` other entities, read with the default `k`, then
//! its second page through `next`, each timed `reads` times after each mark: the median wall
//! time, and the CPU time per read (on a shared machine wall time says mostly how busy it was).
//! A measurement, not a test: `cargo run -p cairn-engine --release --example hub_recall [marks,..] [reads]`.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/calls.rs"]
mod calls;
#[path = "common/cpu.rs"]
mod cpu;

use cairn_engine::{Store, StoreOptions};
use calls::{caller, knowledge_json, timed};
use serde_json::{Value, json};

const T0: i64 = 1_700_000_000_000;
/// The hub's fact types, in turn: plain, an inverse pair's side, one with attributes.
const TYPES: [&str; 5] = ["knows", "works_with", "parent_of", "manages", "likes"];

/// `n` relations from `Me`, `from` on, in batches `remember` takes.
fn grow(store: &Store, (from, upto): (usize, usize)) {
    let relations: Vec<Value> = (from..upto)
        .map(|i| {
            let attributes = if i % 3 == 0 { json!({"since": "2020", "note": format!("met at event {i}")}) } else { json!({}) };
            json!({"source": "Me", "target": format!("Person {i}"), "type": TYPES[i % TYPES.len()], "attributes": attributes})
        })
        .collect();
    for (b, batch) in relations.chunks(500).enumerate() {
        let now = T0 + i64::try_from(from + b).unwrap() * 1_000;
        knowledge_json(store, &caller("bench", now), "remember", &json!({"facts": {"relations": batch}}));
    }
}

#[allow(clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn main() {
    let marks: Vec<usize> = std::env::args()
        .nth(1)
        .map_or_else(|| vec![200, 2_000, 20_000], |a| a.split(',').map(|m| m.parse().unwrap()).collect());
    let reads: u32 = std::env::args().nth(2).map_or(20, |r| r.parse().unwrap());
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let mut done = 0;
    for &mark in &marks {
        grow(&store, (done, mark));
        done = mark;
        let now = T0 + 1_000_000_000;
        let mut next = Value::Null;
        let cpu_at = cpu::process_seconds();
        let (first, _) = timed(reads as usize, |_| {
            let reply = knowledge_json(&store, &caller("bench", now), "recall", &json!({"subject": "Me"}));
            assert_eq!(reply["facts"].as_array().map(Vec::len), Some(50), "{reply}");
            next = reply["next"].clone();
        });
        let first_cpu = (cpu::process_seconds() - cpu_at) * 1e3 / f64::from(reads);
        let cpu_at = cpu::process_seconds();
        let (second, _) = timed(reads as usize, |_| {
            let body = json!({"subject": "Me", "cursor": next});
            let reply = knowledge_json(&store, &caller("bench", now), "recall", &body);
            assert_eq!(reply["facts"].as_array().map(Vec::len), Some(50), "{reply}");
        });
        let second_cpu = (cpu::process_seconds() - cpu_at) * 1e3 / f64::from(reads);
        println!(
            "n={mark:>6}  recall {first:>10.2?} ({first_cpu:.2} ms cpu)  next page {second:>10.2?} ({second_cpu:.2} ms cpu)"
        );
    }
}
