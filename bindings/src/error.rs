//! The one place engine errors become JavaScript errors. Every error thrown or rejected by the
//! binding is a plain `Error` whose `code` is the engine's stable `Error::code()` and whose message
//! keeps the whole cause chain; TypeScript matches on `code`, never on message text.

use std::any::Any;
use std::error::Error as _;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};

use napi::bindgen_prelude::{JsError, Unknown};
use napi::{Env, Status};

/// An engine failure (or a caught panic) on its way to JavaScript.
#[derive(Debug)]
pub struct Failure {
    pub code: &'static str,
    pub message: String,
}

impl From<cairn_engine::Error> for Failure {
    fn from(err: cairn_engine::Error) -> Self {
        let mut message = err.to_string();
        // Display of an engine error already names its direct source; deeper causes are added.
        let mut cause = err.source().and_then(std::error::Error::source);
        while let Some(c) = cause {
            let _ = write!(message, ": {c}");
            cause = c.source();
        }
        Failure { code: err.code(), message }
    }
}

impl Failure {
    /// The handle was closed on the JavaScript side.
    pub fn closed() -> Self {
        Failure::from(cairn_engine::Error::Closed)
    }

    /// A caller passed something the binding refuses before reaching the engine.
    pub fn invalid(message: impl Into<String>) -> Self {
        Failure::from(cairn_engine::Error::InvalidArgument(message.into()))
    }

    /// A Rust panic, caught before it could unwind into Node.
    pub fn panic(payload: &(dyn Any + Send)) -> Self {
        let what = payload
            .downcast_ref::<&str>()
            .map(|s| (*s).to_owned())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".to_owned());
        Failure { code: "STORE_PANIC", message: format!("the storage engine panicked: {what}") }
    }

    /// Builds the JavaScript `Error` (with its `code` property) and wraps it so napi-rs throws or
    /// rejects with that very object.
    pub fn into_napi(self, env: Env) -> napi::Error {
        let raw = env.raw();
        let js = JsError::from(napi::Error::new(self.code, self.message.clone()));
        // SAFETY: `raw` is the live env of the calling JS thread.
        let value = unsafe { js.into_value(raw) };
        if value.is_null() {
            // The environment is tearing down; nobody can observe a code any more.
            return napi::Error::new(Status::GenericFailure, format!("{}: {}", self.code, self.message));
        }
        // SAFETY: `value` was just created in `raw`.
        napi::Error::from(unsafe { Unknown::from_raw_unchecked(raw, value) })
    }
}

/// Runs `f`, turning an engine error or a panic into a `Failure`.
pub fn guard<T>(f: impl FnOnce() -> Result<T, cairn_engine::Error>) -> Result<T, Failure> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(result) => result.map_err(Failure::from),
        Err(payload) => Err(Failure::panic(payload.as_ref())),
    }
}

/// Like `guard`, for work that already reports `Failure`s.
pub fn guard_failure<T>(f: impl FnOnce() -> Result<T, Failure>) -> Result<T, Failure> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|payload| Err(Failure::panic(payload.as_ref())))
}

/// Converts a `Failure` result into a napi result on the JS thread.
pub fn to_napi<T>(env: Env, result: Result<T, Failure>) -> napi::Result<T> {
    result.map_err(|f| f.into_napi(env))
}
