use cairn_engine::Store;
use cairn_engine::knowledge::Partition;
use cairn_engine::knowledge::api::Caller;
use napi_derive::napi;

use crate::error::Failure;

/// Who is calling a knowledge verb, as the node established it from the token and headers.
#[napi(object)]
pub struct BindingCaller {
    pub tenant: String,
    pub user: String,
    pub scope: String,
    /// The agent the token names; recorded on every write.
    pub agent: String,
    /// The call's clock, milliseconds since the Unix epoch.
    pub now: f64,
}

impl BindingCaller {
    #[allow(clippy::cast_possible_truncation)] // a millisecond clock is an integer well inside i64
    pub fn into_engine(self, store: &Store) -> Result<Caller, Failure> {
        if !self.now.is_finite() || self.now < 0.0 {
            return Err(Failure::invalid("now must be a non-negative number of milliseconds"));
        }
        let part = Partition::new(&self.tenant, &self.user, &self.scope).map_err(Failure::from)?;
        Ok(Caller { part, agent: self.agent, now: store.stamp(self.now as i64) })
    }
}
