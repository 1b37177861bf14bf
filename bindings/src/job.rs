//! Blocking engine work run on the libuv pool as an `AsyncTask`, so the event loop never waits
//! on disk or on a scan. The closure's `Failure` becomes the promise's coded rejection.

use napi::bindgen_prelude::{ToNapiValue, TypeName};
use napi::{Env, Task};

use crate::error::{Failure, guard_failure, to_napi};

type Work<R> = Box<dyn FnOnce() -> Result<R, Failure> + Send>;

/// One piece of engine work whose result resolves a promise.
pub struct Job<R> {
    work: Option<Work<R>>,
}

impl<R> Job<R> {
    pub fn new(work: impl FnOnce() -> Result<R, Failure> + Send + 'static) -> Self {
        Job { work: Some(Box::new(work)) }
    }
}

impl<R: ToNapiValue + TypeName + Send + 'static> Task for Job<R> {
    type Output = Result<R, Failure>;
    type JsValue = R;

    fn compute(&mut self) -> napi::Result<Self::Output> {
        let work = self.work.take().expect("a job runs once");
        Ok(guard_failure(work))
    }

    fn resolve(&mut self, env: Env, output: Self::Output) -> napi::Result<R> {
        to_napi(env, output)
    }
}
