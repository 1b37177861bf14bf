use napi_derive::napi;

use super::count;

/// Counters of an open store.
#[napi(object)]
pub struct BindingStats {
    /// The last committed transaction (decimal string).
    pub txn: String,
    pub page_count: f64,
    pub free_pages: f64,
    pub cache_pages: f64,
    pub cache_capacity_pages: f64,
    pub wal_bytes: f64,
    pub commits: f64,
    pub groups: f64,
    pub checkpoints: f64,
}

impl From<cairn_engine::Stats> for BindingStats {
    fn from(s: cairn_engine::Stats) -> Self {
        BindingStats {
            txn: s.txn.to_string(),
            page_count: count(s.page_count),
            free_pages: count(s.free_pages),
            cache_pages: count(s.cache_pages as u64),
            cache_capacity_pages: count(s.cache_capacity_pages as u64),
            wal_bytes: count(s.wal_bytes),
            commits: count(s.commits),
            groups: count(s.groups),
            checkpoints: count(s.checkpoints),
        }
    }
}
