//! The answer to one `write`: a promise settled from the engine's writer thread once the group
//! holding the write is durable. No thread waits for it, so any number of writes can be in flight
//! and share one fsync.

use napi::Env;
use napi::JsDeferred;

use crate::error::{Failure, to_napi};

type Settle = Box<dyn FnOnce(Env) -> napi::Result<String> + Send>;

/// Settles the promise of one write exactly once; dropped unsettled (the engine lost the callback
/// or panicked while holding it), it rejects with `STORE_PANIC` rather than leave a promise that
/// never settles.
pub struct Reply(Option<JsDeferred<String, Settle>>);

impl Reply {
    pub fn new(deferred: JsDeferred<String, Settle>) -> Self {
        Reply(Some(deferred))
    }

    /// Resolves with the transaction id as a decimal string, or rejects with the coded error.
    pub fn send(mut self, result: Result<u64, Failure>) {
        if let Some(deferred) = self.0.take() {
            deferred.resolve(Box::new(move |env| to_napi(env, result.map(|txn| txn.to_string()))));
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(deferred) = self.0.take() {
            let failure = Failure {
                code: "STORE_PANIC",
                message: if std::thread::panicking() {
                    "the storage engine panicked while holding this write".to_owned()
                } else {
                    "the storage engine dropped this write without answering".to_owned()
                },
            };
            deferred.resolve(Box::new(move |env| Err(failure.into_napi(env))));
        }
    }
}
