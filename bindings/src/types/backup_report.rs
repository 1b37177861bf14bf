use napi_derive::napi;

use super::count;

/// What an online backup copied.
#[napi(object)]
pub struct BindingBackupReport {
    /// The transaction the copy is consistent at (decimal string).
    pub txn: String,
    pub pages: f64,
    pub bytes: f64,
}

impl From<cairn_engine::BackupReport> for BindingBackupReport {
    fn from(r: cairn_engine::BackupReport) -> Self {
        BindingBackupReport { txn: r.txn.to_string(), pages: count(r.pages), bytes: count(r.bytes) }
    }
}
