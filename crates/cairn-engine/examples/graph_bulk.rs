//! The graph bench's bulk side without Node: entities in `remember` calls of 1,000, then
//! relations in calls of 5,000, four calls in flight, as `bench/graph.bench.mjs` sends them.
//! Prints wall time, items/s and the writer thread's CPU time (steadier than wall time on a
//! shared machine). A measurement, not a test:
//! `cargo run -p cairn-engine --release --example graph_bulk [entities] [remember|load|load-full]`;
//! `load` sends the same graph as one export file (JSON lines, records shaped as the bench's) to
//! the `load` verb instead, `load-full` with every field an export writes. With
//! `GRAPH_BULK_READY=FILE` a load creates FILE and waits 2 s before its clock starts (attach a
//! profiler then); with `GRAPH_BULK_TREES=1` it then prints each tree's entries and bytes.

// The allocator the binding uses, so these measurements match the product. The binding also
// keeps freed memory and declines huge pages: run with `MIMALLOC_PURGE_DELAY=-1 MIMALLOC_ALLOW_THP=0`
// (mimalloc reads both from the environment before `main`).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/cpu.rs"]
mod cpu;

use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::{Caller, call};
use cairn_engine::{Store, StoreOptions};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Instant, SystemTime, UNIX_EPOCH};

const TYPES: [&str; 5] = ["person", "company", "project", "city", "team"];
const RELATION_TYPES: [&str; 7] = ["knows", "works_with", "depends_on", "reviews", "mentors", "funds", "cites"];

/// The bench's mulberry32, so the graph has the same shape.
struct Rng(u32);
impl Rng {
    fn next(&mut self) -> f64 {
        self.0 = self.0.wrapping_add(0x6d2b_79f5);
        let mut t = self.0;
        t = (t ^ (t >> 15)).wrapping_mul(t | 1);
        t ^= t.wrapping_add((t ^ (t >> 7)).wrapping_mul(t | 0x3d));
        f64::from(t ^ (t >> 14)) / 4_294_967_296.0
    }
    #[allow(
        clippy::cast_possible_truncation,
        clippy::cast_sign_loss,
        clippy::cast_precision_loss,
        reason = "small indexes"
    )]
    fn below(&mut self, n: usize) -> usize {
        (self.next() * n as f64) as usize
    }
}

fn name(i: usize) -> String {
    const ONSETS: [&str; 18] =
        ["b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "kr", "st", "tr"];
    const VOWELS: [&str; 7] = ["a", "e", "i", "o", "u", "ai", "eo"];
    let word = |mut n: usize| {
        let mut out = String::new();
        for _ in 0..3 {
            out += ONSETS[n % ONSETS.len()];
            out += VOWELS[(n / ONSETS.len()) % VOWELS.len()];
            n /= ONSETS.len() * VOWELS.len();
        }
        let mut c = out.chars();
        c.next().map(|f| f.to_uppercase().collect::<String>() + c.as_str()).unwrap_or_default()
    };
    format!("{} {}", word(i * 7919 + 13), word(i))
}

fn run_pool(store: &Store, caller: &Caller, bodies: &[Vec<u8>]) {
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::SeqCst);
                    let Some(body) = bodies.get(i) else { break };
                    let reply: Value = serde_json::from_slice(&call(store, "remember", caller, body).unwrap()).unwrap();
                    assert!(reply.get("error").is_none(), "{reply}");
                }
            });
        }
    });
}

#[allow(clippy::too_many_lines, clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn main() {
    let entities: usize = std::env::args().nth(1).map_or(100_000, |a| a.parse().unwrap());
    let relations = entities * 3;
    let mut rng = Rng(42);
    let rels: Vec<(usize, usize, &str)> = (0..relations)
        .map(|_| {
            let s = rng.below(entities);
            let mut t = rng.below(entities);
            if t == s {
                t = (t + 1) % entities;
            }
            (s, t, RELATION_TYPES[rng.below(RELATION_TYPES.len())])
        })
        .collect();
    let ent_bodies: Vec<Vec<u8>> = (0..entities)
        .step_by(1000)
        .map(|i| {
            let list: Vec<Value> =
                (i..(i + 1000).min(entities)).map(|e| json!({"name": name(e), "type": TYPES[e % 5]})).collect();
            serde_json::to_vec(&json!({"facts": {"entities": list, "relations": []}})).unwrap()
        })
        .collect();
    let rel_bodies: Vec<Vec<u8>> = rels
        .chunks(5000)
        .map(|c| {
            let list: Vec<Value> =
                c.iter().map(|(s, t, ty)| json!({"source": name(*s), "target": name(*t), "type": ty})).collect();
            serde_json::to_vec(&json!({"facts": {"entities": [], "relations": list}})).unwrap()
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    // The wall clock: a load refuses records written later than its `now`.
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap().as_millis() as i64;
    let caller = Caller { part: Partition::new("local", "bench", "graph").unwrap(), agent: "bench".into(), now };
    let mode = std::env::args().nth(2);
    if let Some(mode @ ("load" | "load-full")) = mode.as_deref() {
        let full = mode == "load-full";
        let at = "2026-01-01T00:00:00.000Z";
        let mut lines = String::new();
        for e in 0..entities {
            let r = if full {
                json!({"kind": "entity", "id": e.to_string(), "name": name(e), "types": [TYPES[e % 5]],
                    "attributes": {}, "recorded_at": at})
            } else {
                json!({"kind": "entity", "id": e.to_string(), "name": name(e), "types": [TYPES[e % 5]]})
            };
            lines += &r.to_string();
            lines.push('\n');
        }
        for (i, (s, t, ty)) in rels.iter().enumerate() {
            let mut r = json!({"kind": "fact", "id": (entities + i).to_string(), "from": s.to_string(),
                "to": t.to_string(), "from_name": name(*s), "to_name": name(*t), "type": ty, "recorded_at": at});
            if full {
                r["attributes"] = json!({});
                r["valid_from"] = Value::Null;
                r["valid_to"] = Value::Null;
                r["provenance"] = json!({"kind": "asserted", "label": null, "agent": "bench"});
            }
            lines += &r.to_string();
            lines.push('\n');
        }
        if let Ok(ready) = std::env::var("GRAPH_BULK_READY") {
            // A profiler attaches now, so it sees the load and not the generation.
            std::fs::write(&ready, b"").unwrap();
            std::thread::sleep(std::time::Duration::from_secs(2));
        }
        let started = Instant::now();
        let w0 = cpu::writer_seconds();
        let p0 = cpu::process_seconds();
        let reply: Value = serde_json::from_slice(&call(&store, "load", &caller, lines.as_bytes()).unwrap()).unwrap();
        let wall = started.elapsed().as_secs_f64();
        let w1 = cpu::writer_seconds();
        // A triple drawn twice is one live relation (the second is `unchanged`), as in remember.
        let facts = reply["imported"]["facts"].as_u64().unwrap() + reply["unchanged"]["facts"].as_u64().unwrap();
        assert_eq!((facts, reply["skipped"].clone()), (relations as u64, json!([])), "{reply}");
        #[allow(clippy::cast_precision_loss, reason = "a count of items")]
        let items = (entities + relations) as f64;
        let on_disk: u64 = std::fs::read_dir(dir.path()).unwrap().map(|f| f.unwrap().metadata().unwrap().len()).sum();
        println!(
            "load of {} MB: {wall:.2}s = {:.0} items/s; writer cpu {:.2}s; process cpu of the load {:.2}s; \
             store {} MB",
            lines.len() >> 20,
            items / wall,
            w1 - w0,
            cpu::process_seconds() - p0,
            on_disk >> 20
        );
        if std::env::var_os("GRAPH_BULK_TREES").is_some() {
            print_trees(&store);
        }
        return;
    }
    let started = Instant::now();
    let w0 = cpu::writer_seconds();
    run_pool(&store, &caller, &ent_bodies);
    let ent_wall = started.elapsed().as_secs_f64();
    let w1 = cpu::writer_seconds();
    run_pool(&store, &caller, &rel_bodies);
    let wall = started.elapsed().as_secs_f64();
    let w2 = cpu::writer_seconds();
    #[allow(clippy::cast_precision_loss, reason = "a count of items")]
    let items = (entities + relations) as f64;
    println!(
        "entities {entities}: {ent_wall:.2}s (writer {:.2}s); relations {relations}: {:.2}s (writer {:.2}s); \
         total {wall:.2}s = {:.0} items/s; writer cpu {:.2}s; process cpu {:.2}s",
        w1 - w0,
        wall - ent_wall,
        w2 - w1,
        items / wall,
        w2 - w0,
        cpu::process_seconds()
    );
}

/// Each tree's entries and bytes of keys and values (what a load writes, before page overhead),
/// largest first: where a store's size goes.
#[allow(clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn print_trees(store: &Store) {
    let snap = store.snapshot().unwrap();
    let mut rows: Vec<(String, u64, u64, u64)> = Vec::new();
    for t in snap.trees().unwrap() {
        let (mut keys, mut values) = (0_u64, 0_u64);
        for entry in snap.prefix(&t.name, b"").unwrap() {
            let (k, v) = entry.unwrap();
            keys += k.len() as u64;
            values += v.len() as u64;
        }
        rows.push((t.name, t.entries, keys, values));
    }
    rows.sort_by_key(|r| std::cmp::Reverse(r.2 + r.3));
    for (name, entries, keys, values) in rows {
        println!("  {name:<14} {entries:>9} entries  keys {:>6.1} MB  values {:>6.1} MB", mb(keys), mb(values));
    }
}

#[allow(clippy::cast_precision_loss, reason = "a size printed for a person")]
fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}
