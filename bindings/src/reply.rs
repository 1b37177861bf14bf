//! The answer to one call settled from an engine thread: a write's promise from the syncer thread
//! once its group is durable, a verb's from the verb pool. No thread of libuv's pool waits for it;
//! the promise comes back through the environment's completion channel (`completion.rs`).

use std::marker::PhantomData;

use napi::Env;
use napi::bindgen_prelude::{Object, ToNapiValue};

use crate::completion::Pending;
use crate::error::{Failure, to_napi};

/// Settles one promise exactly once; dropped unsettled (the engine lost the callback or panicked
/// while holding it), it rejects with `STORE_PANIC` rather than leave a promise that never settles.
pub struct Reply<T: ToNapiValue + 'static> {
    pending: Option<Pending>,
    _value: PhantomData<fn() -> T>,
}

impl<T: ToNapiValue + 'static> Reply<T> {
    /// A new promise and its reply. JavaScript thread only.
    pub fn new(env: &Env) -> napi::Result<(Self, Object<'_>)> {
        let (pending, promise) = Pending::new(env)?;
        Ok((Reply { pending: Some(pending), _value: PhantomData }, promise))
    }

    /// Resolves with `result` made a JavaScript value by `into` on the event loop, or rejects with
    /// the coded error.
    pub fn send<R: Send + 'static>(mut self, result: Result<R, Failure>, into: fn(R) -> T) {
        if let Some(pending) = self.pending.take() {
            pending.settle(Box::new(move |env| {
                let value = to_napi(env, result.map(into))?;
                // SAFETY: called on the JavaScript thread of `env` by the completion channel.
                unsafe { T::to_napi_value(env.raw(), value) }
            }));
        }
    }
}

impl<T: ToNapiValue + 'static> Drop for Reply<T> {
    fn drop(&mut self) {
        if let Some(pending) = self.pending.take() {
            let failure = Failure {
                code: "STORE_PANIC",
                message: if std::thread::panicking() {
                    "the storage engine panicked while holding this call".to_owned()
                } else {
                    "the storage engine dropped this call without answering".to_owned()
                },
            };
            pending.settle(Box::new(move |env| Err(failure.into_napi(env))));
        }
    }
}
