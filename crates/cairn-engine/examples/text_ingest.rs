//! Passage ingest as `bench/text.bench.mjs` drives it, without Node: `remember` with 500 passages a
//! call from 4 threads, then `context` queries. Reads the passages from a JSON file
//! (`{"passages": [...], "queries": [...]}`, e.g. dumped from `bench/lib/text-data.mjs`) named by
//! `CAIRN_TEXT_FILE`. A measurement, not a test:
//! `cargo run -p cairn-engine --release --example text_ingest`.

#![allow(clippy::cast_precision_loss, reason = "rates and sizes printed for a person, far below 2^52")]

// The allocator the binding uses, so these measurements match the product. The binding also
// declines huge pages: run with `MIMALLOC_ALLOW_THP=0` (mimalloc reads it before `main`).
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

// As the binding sets it (bindings/src/lib.rs `keep_freed_memory`): freed memory stays with
// mimalloc instead of going back to the OS (`mi_option_purge_delay`, index 15, = -1).
unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}

#[path = "common/cpu.rs"]
mod cpu;

use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::{Caller, call};
use cairn_engine::{Store, StoreOptions};
use serde_json::{Value, json};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

const BATCH: usize = 500;
const THREADS: usize = 4;

fn main() {
    // SAFETY: a plain C call that sets an integer option of the allocator in use.
    unsafe { mi_option_set(15, -1) };
    let file = std::env::var("CAIRN_TEXT_FILE").unwrap_or_else(|_| "/tmp/text-passages.json".into());
    let data: Value = serde_json::from_slice(&std::fs::read(&file).expect("the passages file")).unwrap();
    let limit: usize = std::env::var("CAIRN_BENCH_PASSAGES").map_or(100_000, |v| v.parse().unwrap());
    let passages: Vec<&str> =
        data["passages"].as_array().unwrap().iter().take(limit).map(|p| p.as_str().unwrap()).collect();
    let queries: Vec<&str> = data["queries"].as_array().unwrap().iter().map(|q| q.as_str().unwrap()).collect();
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    let caller = Caller { part: Partition::new("local", "bench", "text").unwrap(), agent: "bench".into(), now: 1 };
    let next = AtomicUsize::new(0);
    // CPU spent before the ingest (reading and parsing the passages file) is not the ingest's.
    let (writer_before, all_before) = (cpu::writer_seconds(), cpu::process_seconds());
    eprintln!("before ingest: RSS {:.0} MB", cpu::rss_bytes() as f64 / 1e6);
    let started = Instant::now();
    let mut lap = Instant::now();
    let done = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            s.spawn(|| {
                loop {
                    let start = next.fetch_add(BATCH, Ordering::SeqCst);
                    if start >= passages.len() {
                        break;
                    }
                    let end = (start + BATCH).min(passages.len());
                    let body: Vec<Value> =
                        passages[start..end].iter().map(|t| json!({"text": t, "mentions": []})).collect();
                    let reply =
                        call(&store, "remember", &caller, &serde_json::to_vec(&json!({"passages": body})).unwrap())
                            .unwrap();
                    let reply: Value = serde_json::from_slice(&reply).unwrap();
                    assert!(reply.get("error").is_none(), "{reply}");
                    done.fetch_add(end - start, Ordering::SeqCst);
                }
            });
        }
        // Progress every 20k passages, from the main thread.
        let mut shown = 0;
        while done.load(Ordering::SeqCst) < passages.len() {
            std::thread::sleep(std::time::Duration::from_millis(50));
            let d = done.load(Ordering::SeqCst);
            if d >= shown + 20_000 {
                let secs = lap.elapsed().as_secs_f64();
                eprintln!(
                    "{d:>7} passages, last {} at {:.0}/s, RSS {:.0} MB",
                    d - shown,
                    (d - shown) as f64 / secs,
                    cpu::rss_bytes() as f64 / 1e6
                );
                shown = d;
                lap = Instant::now();
            }
        }
    });
    let secs = started.elapsed().as_secs_f64();
    eprintln!("ingest: {} passages in {secs:.2}s = {:.0}/s", passages.len(), passages.len() as f64 / secs);
    let (writer, all) = (cpu::writer_seconds(), cpu::process_seconds());
    let (writer, all) = (writer - writer_before, all - all_before);
    let per = |s: f64| s * 1e6 / passages.len() as f64;
    eprintln!(
        "cpu: writer {writer:.2}s ({:.0} us a passage), all threads {all:.2}s ({:.0} us a passage)",
        per(writer),
        per(all)
    );
    // The calling threads have exited: their CPU is what the live threads do not account for.
    let live = cpu::by_thread();
    let mut named = 0.0;
    for (name, secs) in &live {
        eprintln!("  thread {name}: {secs:.2}s ({:.1} us a passage, whole run)", per(*secs));
        named += secs;
    }
    eprintln!("  callers (exited): {:.1} us a passage", per(cpu::process_seconds() - named));
    let mut took = Vec::new();
    for q in &queries {
        let t = Instant::now();
        let body = json!({"question": q, "hops": 0, "k": 8});
        call(&store, "context", &caller, &serde_json::to_vec(&body).unwrap()).unwrap();
        took.push(t.elapsed().as_secs_f64() * 1000.0);
    }
    took.sort_by(f64::total_cmp);
    eprintln!("context p50 {:.3} ms, p95 {:.3} ms", took[took.len() / 2], took[took.len() * 95 / 100]);
    let size: u64 = std::fs::read_dir(dir.path()).unwrap().map(|e| e.unwrap().metadata().unwrap().len()).sum();
    eprintln!("store files: {:.1} MB", size as f64 / 1e6);
}
