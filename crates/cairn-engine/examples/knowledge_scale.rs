//! Scale check of the knowledge verbs: 100k entities and 300k relations stored through
//! `remember` (one facts call per 1,000 entities), then recall (1 hop, with derived facts) and
//! context (2 hops) latency by name. A measurement, not a test (about a minute in release):
//! `cargo run -p cairn-engine --release --example knowledge_scale`.

// The allocator the binding uses, so these measurements match the product. The binding also
// keeps freed memory and declines huge pages: run with `MIMALLOC_PURGE_DELAY=-1 MIMALLOC_ALLOW_THP=0`
// (mimalloc reads both from the environment before `main`).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::{Caller, call};
use cairn_engine::{Store, StoreOptions};
use rand::{Rng, SeedableRng, rngs::StdRng};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const ENTITIES: usize = 100_000;
const RELATIONS_PER_ENTITY: usize = 3;
const BATCH: usize = 1000;
const TYPES: [&str; 5] = ["knows", "works_with", "located_in", "part_of", "manages"];

fn name(i: usize) -> String {
    format!("Entity {i:06}")
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    // Index into a sorted sample: truncation picks the lower neighbour, which is what we want.
    #[allow(clippy::cast_sign_loss, clippy::cast_precision_loss, reason = "a small positive sample index")]
    let at = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[at]
}

fn timed(store: &Store, caller: &Caller, verb: &str, bodies: &[Value]) -> (Duration, Duration) {
    let mut took: Vec<Duration> = bodies
        .iter()
        .map(|b| {
            let t = Instant::now();
            let reply = call(store, verb, caller, &serde_json::to_vec(b).unwrap()).unwrap();
            let elapsed = t.elapsed();
            let reply: Value = serde_json::from_slice(&reply).unwrap();
            assert_eq!(reply["state"], json!("answered"), "{verb} {b}: {reply}");
            elapsed
        })
        .collect();
    took.sort();
    (percentile(&took, 0.5), percentile(&took, 0.95))
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: 256 << 20, ..StoreOptions::default() }).unwrap();
    let caller = Caller { part: Partition::new("local", "bench", "default").unwrap(), agent: "bench".into(), now: 1 };
    let mut rng = StdRng::seed_from_u64(7);
    let started = Instant::now();
    for batch in 0..ENTITIES / BATCH {
        let ids = batch * BATCH..(batch + 1) * BATCH;
        let entities: Vec<Value> = ids.clone().map(|i| json!({"name": name(i), "type": "node"})).collect();
        let relations: Vec<Value> = ids
            .flat_map(|i| (0..RELATIONS_PER_ENTITY).map(move |r| (i, r)))
            .map(|(i, r)| {
                let target = rng.random_range(0..(batch + 1) * BATCH);
                let target = if target == i { (i + 1) % ENTITIES } else { target };
                json!({"source": name(i), "target": name(target), "type": TYPES[(i + r) % TYPES.len()]})
            })
            .collect();
        let body = json!({"facts": {"entities": entities, "relations": relations}});
        call(&store, "remember", &caller, &serde_json::to_vec(&body).unwrap()).unwrap();
    }
    let ingest = started.elapsed();
    let probes: Vec<usize> = (0..200).map(|_| rng.random_range(0..ENTITIES)).collect();
    let first = Instant::now();
    call(&store, "recall", &caller, br#"{"subject": "Entity 000001"}"#).unwrap();
    let cold = first.elapsed();
    let recalls: Vec<Value> = probes.iter().map(|&i| json!({"subject": name(i), "k": 50})).collect();
    let (r50, r95) = timed(&store, &caller, "recall", &recalls);
    // One edit away: found through the cached name index (near spelling).
    let near: Vec<Value> =
        probes.iter().map(|&i| json!({"subject": name(i).replacen("Entity", "Entitty", 1)})).collect();
    let (n50, n95) = timed(&store, &caller, "recall", &near);
    let one: Vec<Value> = probes.iter().map(|&i| json!({"question": name(i), "hops": 1, "k": 8})).collect();
    let (c1_50, c1_95) = timed(&store, &caller, "context", &one);
    let two: Vec<Value> = probes.iter().map(|&i| json!({"question": name(i), "hops": 2, "k": 8})).collect();
    let (c2_50, c2_95) = timed(&store, &caller, "context", &two);
    // Writes between reads: each adds a name, so the cached names grow a delta, not a rebuild.
    let mut writes = Vec::new();
    let mut after_write = Vec::new();
    for round in 0..20 {
        let text = format!("Newcomer {round} met {} and {} today.", name(round * 7), name(round * 11));
        let body =
            json!({"content": text, "facts": {"entities": [{"name": format!("Newcomer {round}"), "type": "person"}]}});
        let t = Instant::now();
        let reply = call(&store, "remember", &caller, &serde_json::to_vec(&body).unwrap()).unwrap();
        writes.push(t.elapsed());
        let reply: Value = serde_json::from_slice(&reply).unwrap();
        assert_eq!(reply["unlinked_passages"], json!([]), "{reply}");
        let t = Instant::now();
        let near = json!({"subject": format!("Newcommer {round}")});
        let reply: Value =
            serde_json::from_slice(&call(&store, "recall", &caller, &serde_json::to_vec(&near).unwrap()).unwrap())
                .unwrap();
        after_write.push(t.elapsed());
        assert_eq!(reply["subject"]["name"], json!(format!("Newcomer {round}")), "{reply}");
    }
    writes.sort();
    after_write.sort();
    eprintln!(
        "remember content + 1 entity at 100k: p50 {:?} p95 {:?}",
        percentile(&writes, 0.5),
        percentile(&writes, 0.95)
    );
    eprintln!(
        "near recall right after a write: p50 {:?} p95 {:?}",
        percentile(&after_write, 0.5),
        percentile(&after_write, 0.95)
    );
    eprintln!("ingest: {ENTITIES} entities + {} relations in {ingest:?}", ENTITIES * RELATIONS_PER_ENTITY);
    eprintln!("first recall: {cold:?}");
    eprintln!("recall 1-hop (+derived): p50 {r50:?} p95 {r95:?}");
    eprintln!("recall by a near spelling: p50 {n50:?} p95 {n95:?}");
    eprintln!("context hops=1: p50 {c1_50:?} p95 {c1_95:?}");
    eprintln!("context hops=2: p50 {c2_50:?} p95 {c2_95:?}");
    // The cache must make warm reads far cheaper than rebuilding the names (hundreds of ms).
    assert!(r50 < Duration::from_millis(100), "recall p50 {r50:?}");
}
