//! Notes query and CAS cost by kind, on the data of `bench/notes.bench.mjs` (same generator):
//! 10,000 notes, then queries of one word, two words and a key fragment, one at a time, and CAS
//! writes from 8 threads. A measurement, not a test:
//! `cargo run -p cairn-engine --release --example notes_query [notes] [queries]`.
//! Environment: `ONLY_KIND` (0 one word, 1 two words, 2 key fragment) runs one kind of query;
//! `SAME` repeats the first query of each kind (CPU caches hot: what memory traffic costs);
//! `CACHE_MB` the store's page cache (default 64); `CAS` the number of CAS writes (default 2000).

// The allocator the binding uses, so these measurements match the product. The binding also
// keeps freed memory and declines huge pages: run with `MIMALLOC_PURGE_DELAY=-1 MIMALLOC_ALLOW_THP=0`
// (mimalloc reads both from the environment before `main`).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/calls.rs"]
mod calls;
#[path = "common/cpu.rs"]
mod cpu;

use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::Caller;
use cairn_engine::{Store, StoreOptions};
use calls::call_json;
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const WORDS: &str = "editor theme dark light font mono deploy staging production rollback release branch review \
python rust typescript golang database postgres sqlite cache redis queue worker cron backup \
invoice customer billing refund report dashboard metrics alert oncall incident latency budget \
meeting friday monday sprint roadmap design spec feature flag rollout canary migration schema";
const KINDS: [&str; 4] = ["user_preference", "user_fact", "task_state", "decision"];

/// The bench's generator: JavaScript's `(seed * 1103515245 + 12345) & 0x7fffffff` in doubles.
struct Rand(f64);

impl Rand {
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, reason = "emulates ToInt32")]
    fn next(&mut self) -> f64 {
        let d = self.0 * 1_103_515_245.0 + 12345.0;
        let m = d.rem_euclid(4_294_967_296.0) as u64 & 0x7fff_ffff;
        #[allow(clippy::cast_precision_loss, reason = "31 bits")]
        let s = m as f64;
        self.0 = s;
        s / f64::from(0x7fff_ffff)
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss, clippy::cast_precision_loss, reason = "an index")]
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() * xs.len() as f64).floor() as usize]
    }
}

#[allow(clippy::too_many_lines, clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let n_notes = args.first().copied().unwrap_or(10_000);
    let n_queries = args.get(1).copied().unwrap_or(3000);
    let words: Vec<&str> = WORDS.split(' ').collect();
    let owners = ["priya", "marco", "lin", "sam"];
    let mut rng = Rand(42.0);
    let notes: Vec<Value> = (0..n_notes)
        .map(|i| {
            let w: Vec<&str> = (0..6).map(|_| rng.pick(&words)).collect();
            let owner = rng.pick(&owners);
            json!({ "key": format!("item{i}.{}", w[0]), "value": { "text": format!("{} #{i}", w.join(" ")), "owner": owner },
                    "kind": KINDS[i % 4] })
        })
        .collect();
    let queries: Vec<(usize, String)> = (0..256)
        .map(|i| match i % 3 {
            0 => (0, rng.pick(&words).to_owned()),
            1 => (1, format!("{} {}", rng.pick(&words), rng.pick(&words))),
            _ => {
                #[allow(
                    clippy::cast_possible_truncation,
                    clippy::cast_sign_loss,
                    clippy::cast_precision_loss,
                    reason = "an index"
                )]
                let k = (rng.next() * n_notes as f64).floor() as usize;
                (2, format!("item{k}"))
            }
        })
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let cache: usize = std::env::var("CACHE_MB").map_or(64, |v| v.parse().unwrap());
    let store = Store::open(dir.path(), StoreOptions { cache_bytes: cache << 20, ..StoreOptions::default() }).unwrap();
    let caller = Caller {
        part: Partition::new("local", "bench", "default").unwrap(),
        agent: "bench".into(),
        now: 1_700_000_000_000,
    };
    let t = Instant::now();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..16 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= notes.len() {
                        break;
                    }
                    let mut body = notes[i].clone();
                    body["expectedVersion"] = json!(0);
                    call_json(&store, &caller, "note_write", &body);
                }
            });
        }
    });
    println!("load {n_notes} notes: {:?}", t.elapsed());
    let cas = |i: usize| {
        let n = &notes[(i * 7919) % n_notes];
        let cur = call_json(&store, &caller, "note_list", &json!({ "key": n["key"], "limit": 1 }));
        let version = cur["notes"][0]["version"].as_u64().unwrap();
        let mut value = n["value"].clone();
        value["rev"] = json!(version);
        call_json(
            &store,
            &caller,
            "note_write",
            &json!({ "key": n["key"], "value": value, "expectedVersion": version }),
        );
    };
    let cpu0 = cpu::process_seconds();
    let writer0 = cpu::writer_seconds();
    let n_cas: usize = std::env::var("CAS").map_or(2000, |v| v.parse().unwrap());
    let t = Instant::now();
    let next = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..8 {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= n_cas {
                        break;
                    }
                    cas(i);
                }
            });
        }
    });
    let took = t.elapsed();
    let cpu = cpu::process_seconds() - cpu0;
    let writer = cpu::writer_seconds() - writer0;
    let n = f64::from(u32::try_from(n_cas).unwrap());
    println!(
        "CAS 8 threads: {n_cas} in {took:?} = {:.0}/s, {:.0} us of CPU each ({:.0} us on the writer thread)",
        n / took.as_secs_f64(),
        cpu * 1e6 / n,
        writer * 1e6 / n
    );
    let same = std::env::var("SAME").is_ok();
    let only: Option<usize> = std::env::var("ONLY_KIND").ok().map(|v| v.parse().unwrap());
    let mut by_kind = [(Duration::ZERO, 0u32, 0usize); 3];
    for i in 0..n_queries {
        let (kind, q) = &queries[if same { i % 3 } else { i % queries.len() }];
        if only.is_some_and(|k| k != *kind) {
            continue;
        }
        let t = Instant::now();
        let r = call_json(&store, &caller, "note_list", &json!({ "query": q, "limit": 10 }));
        by_kind[*kind].0 += t.elapsed();
        by_kind[*kind].1 += 1;
        by_kind[*kind].2 += r["notes"].as_array().unwrap().len();
    }
    for (name, (d, n, found)) in ["one word", "two words", "key fragment"].iter().zip(by_kind) {
        println!("{name:>12}: {n} queries, mean {:?}, {found} results", d / n.max(1));
    }
    let total: Duration = by_kind.iter().map(|k| k.0).sum();
    // Over the queries run: with ONLY_KIND, a third of `n_queries`.
    let ran: u32 = by_kind.iter().map(|k| k.1).sum();
    println!("all: mean {:?} = {:.0}/s", total / ran.max(1), f64::from(ran) / total.as_secs_f64());
}
