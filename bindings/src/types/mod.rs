//! The plain objects that cross the boundary, one per file. Counts that stay far below 2^53 are
//! numbers; transaction ids are decimal strings, as everywhere in Cairn's API.

mod backup_report;
mod caller;
mod check_report;
mod compact_options;
mod compact_report;
mod stats;
mod store_options;

pub use backup_report::BindingBackupReport;
pub use caller::BindingCaller;
pub use check_report::BindingCheckReport;
pub use compact_options::BindingCompactOptions;
pub use compact_report::BindingCompactReport;
pub use stats::BindingStats;
pub use store_options::BindingStoreOptions;

/// A count as a JavaScript number; page and entry counts never approach 2^53.
#[allow(clippy::cast_precision_loss)] // exact below 2^53, which no page or entry count reaches
pub(crate) fn count(n: u64) -> f64 {
    n as f64
}
