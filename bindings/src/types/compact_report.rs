use napi_derive::napi;

use super::count;

/// What a compaction changed.
#[napi(object)]
pub struct BindingCompactReport {
    pub pages_before: f64,
    pub pages_after: f64,
    pub bytes_zeroed: f64,
}

impl From<cairn_engine::CompactReport> for BindingCompactReport {
    fn from(r: cairn_engine::CompactReport) -> Self {
        BindingCompactReport {
            pages_before: count(r.pages_before),
            pages_after: count(r.pages_after),
            bytes_zeroed: count(r.bytes_zeroed),
        }
    }
}
