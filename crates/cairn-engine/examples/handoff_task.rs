//! The cost of a task's verbs as its capsules pile up: one task handed off `n` times (each capsule
//! with a summary and a few next steps, about 1 KB), then `handoff_resume {taskId}`, the next
//! `handoff_create` on it, and `handoff_resume {}` for the agent it is addressed to, each timed
//! `reads` times. A measurement, not a test:
//! `cargo run -p cairn-engine --release --example handoff_task [n] [reads]`.

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[path = "common/calls.rs"]
mod calls;

use cairn_engine::{Store, StoreOptions};
use calls::{call_json, caller, timed};
use serde_json::{Value, json};

const T0: i64 = 1_700_000_000_000;

fn capsule(i: usize) -> Value {
    let steps: Vec<String> =
        (0..4).map(|s| format!("step {s} of round {i}: run the migration and check the logs")).collect();
    json!({"taskId": "release-2.0", "summary": format!("round {i}: {}", "the release branch is cut and tested; ".repeat(12)),
           "nextSteps": steps, "to": "claude"})
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
    let (resume, _) = timed(reads, |_| {
        call_json(&store, &caller("claude", now), "handoff_resume", &json!({"taskId": "release-2.0"}));
    });
    let (listed, _) = timed(reads, |_| {
        call_json(&store, &caller("claude", now), "handoff_resume", &json!({}));
    });
    let (create, _) = timed(reads, |r| {
        call_json(&store, &caller("codex", now + i64::try_from(r).unwrap()), "handoff_create", &capsule(n + r));
    });
    println!(
        "n={n:>6}  resume {{taskId}} {resume:>10.2?}  resume {{}} {listed:>10.2?}  create (with its sync) {create:>10.2?}"
    );
}
