use napi_derive::napi;

use super::count;

/// The integrity checker's verdict on a whole store.
#[napi(object)]
pub struct BindingCheckReport {
    pub ok: bool,
    /// The transaction that was checked (decimal string).
    pub txn: String,
    pub pages_total: f64,
    pub pages_reachable: f64,
    pub pages_free: f64,
    pub trees: Vec<BindingTreeInfo>,
    pub problems: Vec<BindingProblem>,
}

/// One tree and how many entries it holds.
#[napi(object)]
pub struct BindingTreeInfo {
    pub name: String,
    pub entries: f64,
}

/// One thing the checker found wrong.
#[napi(object)]
pub struct BindingProblem {
    pub page: Option<f64>,
    pub tree: Option<String>,
    pub what: String,
}

impl From<cairn_engine::TreeInfo> for BindingTreeInfo {
    fn from(t: cairn_engine::TreeInfo) -> Self {
        BindingTreeInfo { name: t.name, entries: count(t.entries) }
    }
}

impl From<cairn_engine::CheckReport> for BindingCheckReport {
    fn from(r: cairn_engine::CheckReport) -> Self {
        BindingCheckReport {
            ok: r.ok,
            txn: r.txn.to_string(),
            pages_total: count(r.pages_total),
            pages_reachable: count(r.pages_reachable),
            pages_free: count(r.pages_free),
            trees: r.trees.into_iter().map(BindingTreeInfo::from).collect(),
            problems: r
                .problems
                .into_iter()
                .map(|p| BindingProblem { page: p.page.map(count), tree: p.tree, what: p.what })
                .collect(),
        }
    }
}
