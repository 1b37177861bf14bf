//! The answer to one write (`write`, or a notes write): a promise settled from the engine's writer
//! thread once the group holding the write is durable. No thread waits for it, so any number of
//! writes can be in flight and share one fsync.

use napi::Env;
use napi::JsDeferred;
use napi::bindgen_prelude::{Buffer, ToNapiValue};

use crate::error::{Failure, to_napi};

/// Makes the promise's value on the JavaScript thread.
type Settle<T> = Box<dyn FnOnce(Env) -> napi::Result<T> + Send>;

/// Settles the promise of one write exactly once; dropped unsettled (the engine lost the callback
/// or panicked while holding it), it rejects with `STORE_PANIC` rather than leave a promise that
/// never settles.
pub struct Reply<T: ToNapiValue + 'static = String>(Option<JsDeferred<T, Settle<T>>>);

impl<T: ToNapiValue + 'static> Reply<T> {
    pub fn new(deferred: JsDeferred<T, Settle<T>>) -> Self {
        Reply(Some(deferred))
    }

    fn settle(mut self, settle: Settle<T>) {
        if let Some(deferred) = self.0.take() {
            deferred.resolve(settle);
        }
    }
}

impl Reply<String> {
    /// Resolves with the transaction id as a decimal string, or rejects with the coded error.
    pub fn send(self, result: Result<u64, Failure>) {
        self.settle(Box::new(move |env| to_napi(env, result.map(|txn| txn.to_string()))));
    }
}

impl Reply<Buffer> {
    /// Resolves with the JSON reply of a notes write, or rejects with the coded error.
    pub fn send_json(self, result: Result<Vec<u8>, Failure>) {
        self.settle(Box::new(move |env| to_napi(env, result.map(Buffer::from))));
    }
}

impl<T: ToNapiValue + 'static> Drop for Reply<T> {
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
