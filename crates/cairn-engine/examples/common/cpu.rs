//! CPU time from `/proc` (Linux; zeros elsewhere), shared by the examples: on a shared machine it
//! says what a run cost when wall time says mostly how busy the machine was.

use std::fs::{read_dir, read_to_string};

/// CPU seconds (user + system) this process has used so far.
pub fn process_seconds() -> f64 {
    read_to_string("/proc/self/stat").map_or(0.0, |s| stat_seconds(&s))
}

/// CPU seconds of the store's writer thread (`cairn-writer`), which every write goes through.
#[allow(dead_code, reason = "not every example measures the writer")]
pub fn writer_seconds() -> f64 {
    let Ok(tasks) = read_dir("/proc/self/task") else { return 0.0 };
    tasks
        .flatten()
        .filter(|t| read_to_string(t.path().join("comm")).is_ok_and(|name| name.trim() == "cairn-writer"))
        .map(|t| read_to_string(t.path().join("stat")).map_or(0.0, |s| stat_seconds(&s)))
        .sum()
}

/// CPU seconds of each live thread of this process, summed by thread name (`comm`).
#[allow(dead_code, reason = "not every example breaks its CPU down by thread")]
pub fn by_thread() -> std::collections::BTreeMap<String, f64> {
    let mut out = std::collections::BTreeMap::new();
    let Ok(tasks) = read_dir("/proc/self/task") else { return out };
    for t in tasks.flatten() {
        let name = read_to_string(t.path().join("comm")).unwrap_or_default().trim().to_owned();
        *out.entry(name).or_insert(0.0) += read_to_string(t.path().join("stat")).map_or(0.0, |s| stat_seconds(&s));
    }
    out
}

/// This process's resident set, in bytes (`VmRSS` of `/proc/self/status`).
#[allow(dead_code, reason = "not every example reports memory")]
pub fn rss_bytes() -> u64 {
    let status = read_to_string("/proc/self/status").unwrap_or_default();
    let kb = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
    kb.unwrap_or(0) * 1024
}

/// utime + stime of a `stat` line: the 12th and 13th fields after the parenthesised name.
fn stat_seconds(stat: &str) -> f64 {
    let rest = stat.rsplit_once(')').map_or("", |(_, r)| r);
    let f: Vec<&str> = rest.split_whitespace().collect();
    let field = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (field(11) + field(12)) / 100.0
}
