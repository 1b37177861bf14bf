//! The answer to one call settled from an engine thread: a write's promise from the writer thread
//! once its group is durable, a verb's from the verb pool. No thread of libuv's pool waits for it.

use napi::Env;
use napi::JsDeferred;
use napi::bindgen_prelude::ToNapiValue;

use crate::error::{Failure, to_napi};

type Settle<T> = Box<dyn FnOnce(Env) -> napi::Result<T> + Send>;

/// Settles one promise exactly once; dropped unsettled (the engine lost the callback or panicked
/// while holding it), it rejects with `STORE_PANIC` rather than leave a promise that never settles.
pub struct Reply<T: ToNapiValue + 'static>(Option<JsDeferred<T, Settle<T>>>);

impl<T: ToNapiValue + 'static> Reply<T> {
    pub fn new(deferred: JsDeferred<T, Settle<T>>) -> Self {
        Reply(Some(deferred))
    }

    /// Resolves with `result` made a JavaScript value by `into` on the event loop, or rejects with
    /// the coded error.
    pub fn send<R: Send + 'static>(mut self, result: Result<R, Failure>, into: fn(R) -> T) {
        if let Some(deferred) = self.0.take() {
            deferred.resolve(Box::new(move |env| to_napi(env, result.map(into))));
        }
    }
}

impl<T: ToNapiValue + 'static> Drop for Reply<T> {
    fn drop(&mut self) {
        if let Some(deferred) = self.0.take() {
            let failure = Failure {
                code: "STORE_PANIC",
                message: if std::thread::panicking() {
                    "the storage engine panicked while holding this call".to_owned()
                } else {
                    "the storage engine dropped this call without answering".to_owned()
                },
            };
            deferred.resolve(Box::new(move |env| Err(failure.into_napi(env))));
        }
    }
}
