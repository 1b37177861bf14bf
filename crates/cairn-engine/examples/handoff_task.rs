//! The cost of a task's verbs as its capsules pile up: one task handed off `n` times (each capsule
//! with a summary and a few next steps, about 1 KB), then `handoff_resume {taskId}`, the next
//! `handoff_create` on it, and `handoff_resume {}` for the agent it is addressed to, each timed
//! `reads` times. A measurement, not a test:
//! `cargo run -p cairn-engine --release --example handoff_task [n] [reads]`.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::Caller;
use cairn_engine::notes::api::call;
use cairn_engine::{Store, StoreOptions};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

const T0: i64 = 1_700_000_000_000;

fn caller(agent: &str, now: i64) -> Caller {
    Caller { part: Partition::new("local", "u1", "default").unwrap(), agent: agent.into(), now }
}

fn call_json(store: &Store, caller: &Caller, verb: &str, body: &Value) -> Value {
    let reply: Value =
        serde_json::from_slice(&call(store, verb, caller, &serde_json::to_vec(body).unwrap()).unwrap()).unwrap();
    assert!(reply.get("error").is_none(), "{verb} {body}: {reply}");
    reply
}

fn capsule(i: usize) -> Value {
    let steps: Vec<String> =
        (0..4).map(|s| format!("step {s} of round {i}: run the migration and check the logs")).collect();
    json!({"taskId": "release-2.0", "summary": format!("round {i}: {}", "the release branch is cut and tested; ".repeat(12)),
           "nextSteps": steps, "to": "claude"})
}

/// The median of `reads` runs of `f`.
fn median(reads: usize, mut f: impl FnMut(usize)) -> Duration {
    let mut times: Vec<Duration> = (0..reads)
        .map(|r| {
            let t = Instant::now();
            f(r);
            t.elapsed()
        })
        .collect();
    times.sort();
    times[times.len() / 2]
}

#[allow(clippy::print_stdout, reason = "a measurement script that reports on stdout")]
fn main() {
    let args: Vec<usize> = std::env::args().skip(1).map(|a| a.parse().unwrap()).collect();
    let n = args.first().copied().unwrap_or(2_000);
    let reads = args.get(1).copied().unwrap_or(20);
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(dir.path(), StoreOptions::default()).unwrap();
    for i in 0..n {
        call_json(&store, &caller("codex", T0 + i64::try_from(i).unwrap()), "handoff_create", &capsule(i));
    }
    let now = T0 + i64::try_from(n).unwrap() + 10_000;
    let resume = median(reads, |_| {
        call_json(&store, &caller("claude", now), "handoff_resume", &json!({"taskId": "release-2.0"}));
    });
    let listed = median(reads, |_| {
        call_json(&store, &caller("claude", now), "handoff_resume", &json!({}));
    });
    let create = median(reads, |r| {
        call_json(&store, &caller("codex", now + i64::try_from(r).unwrap()), "handoff_create", &capsule(n + r));
    });
    println!(
        "n={n:>6}  resume {{taskId}} {resume:>10.2?}  resume {{}} {listed:>10.2?}  create (with its sync) {create:>10.2?}"
    );
}
