//! The answer to one call settled from an engine thread: a write's promise from the syncer thread
//! once its group is durable, a verb's from the verb pool. No thread of libuv's pool waits for it;
//! the promise comes back through the environment's completion channel (`completion.rs`).

use napi::bindgen_prelude::{Object, ToNapiValue};
use napi::{Env, sys};

use crate::completion::Pending;
use crate::error::{Failure, to_napi};

/// Makes a call's result a JavaScript value, on the JavaScript thread.
pub type IntoJs<R> = fn(Env, R) -> napi::Result<sys::napi_value>;

/// Settles one promise exactly once; dropped unsettled (the engine lost the callback or panicked
/// while holding it), it rejects with `STORE_PANIC` rather than leave a promise that never settles.
pub struct Reply(Option<Pending>);

impl Reply {
    /// A new promise and its reply. JavaScript thread only.
    pub fn new(env: &Env) -> napi::Result<(Self, Object<'_>)> {
        let (pending, promise) = Pending::new(env)?;
        Ok((Reply(Some(pending)), promise))
    }

    /// Resolves with `result` made a JavaScript value by `into` on the event loop, or rejects with
    /// the coded error.
    pub fn send<R: Send + 'static>(mut self, result: Result<R, Failure>, into: IntoJs<R>) {
        if let Some(pending) = self.0.take() {
            pending.settle(Box::new(move |env| into(env, to_napi(env, result)?)));
        }
    }
}

impl Drop for Reply {
    fn drop(&mut self) {
        if let Some(pending) = self.0.take() {
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

/// Replies up to this size are copied into a buffer V8 allocates; larger ones are handed over
/// without a copy, as an external buffer whose memory Rust frees when it is collected.
const COPY_BELOW: usize = 64 * 1024;

/// A reply's bytes as a `Buffer`. A small one is copied: an external buffer (a malloc'd,
/// GC-tracked backing store with a finalizer) costs more than copying a few kilobytes.
pub fn bytes(env: Env, bytes: Vec<u8>) -> napi::Result<sys::napi_value> {
    if bytes.len() < COPY_BELOW && !bytes.is_empty() {
        let mut value = std::ptr::null_mut();
        // SAFETY: on the JavaScript thread of `env`; N-API copies `bytes` before returning.
        napi::check_status!(unsafe {
            sys::napi_create_buffer_copy(
                env.raw(),
                bytes.len(),
                bytes.as_ptr().cast(),
                std::ptr::null_mut(),
                &raw mut value,
            )
        })?;
        return Ok(value);
    }
    // SAFETY: on the JavaScript thread of `env`.
    unsafe { napi::bindgen_prelude::Buffer::to_napi_value(env.raw(), bytes.into()) }
}

/// A transaction id as a decimal string (ids are u64, beyond a JavaScript number's exact range).
pub fn txn(env: Env, txn: u64) -> napi::Result<sys::napi_value> {
    // SAFETY: on the JavaScript thread of `env`.
    unsafe { String::to_napi_value(env.raw(), txn.to_string()) }
}
