//! One completion channel per JavaScript environment: the way every promise the binding settles
//! from an engine thread gets back to the event loop.
//!
//! napi-rs's `JsDeferred` creates a threadsafe function (a `uv_async` handle, an async resource
//! and an env cleanup hook) per promise, wakes the loop once per promise and closes the handle
//! again afterwards. Here one long-lived threadsafe function serves them all: an engine thread
//! pushes `(promise, result)` onto a queue and signals the loop only when the queue was empty;
//! the loop drains the whole queue in one callback, converting each result to a JavaScript value
//! there (values are only ever made on the JavaScript thread). A group commit that acknowledges
//! eight writes wakes the loop once, not eight times.
//!
//! The threadsafe function is referenced (keeps the loop alive) only while a promise is pending,
//! so a process with nothing in flight exits. The count of pending promises, the reference and
//! the raw `napi_deferred` handles are only touched on the JavaScript thread.

use std::cell::RefCell;
use std::ffi::c_void;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use napi::bindgen_prelude::{Object, ToNapiValue};
use napi::{Env, JsValue, sys};

/// Makes the settled value on the JavaScript thread; an `Err` rejects the promise with it.
pub type Settle = Box<dyn FnOnce(Env) -> napi::Result<sys::napi_value> + Send>;

/// A promise waiting in the queue with what settles it.
struct Settlement {
    deferred: sys::napi_deferred,
    settle: Settle,
}

// SAFETY: the `napi_deferred` is an opaque handle that engine threads only carry; it is used (to
// resolve or reject) on the JavaScript thread alone, in `drain`.
unsafe impl Send for Settlement {}

struct Queue {
    items: Vec<Settlement>,
    /// The environment is gone (its threadsafe function finalized): nothing may call it any more.
    closed: bool,
}

/// The completion channel of one environment.
pub struct Completions {
    env: sys::napi_env,
    tsfn: sys::napi_threadsafe_function,
    queue: Mutex<Queue>,
    /// Held while calling `tsfn`, and by `finalize` to close: set, the threadsafe function is
    /// gone. Apart from `queue` so the loop, woken by the call, never waits for the caller to
    /// let go of the queue.
    signal: Mutex<bool>,
    /// Promises created and not settled yet. JavaScript thread only (atomic just to be `Sync`).
    pending: AtomicUsize,
}

// SAFETY: `env` is only compared and used on its own JavaScript thread; `tsfn` may be called from
// any thread (its purpose), and only under `signal` while not closed, which the finalizer sets
// under that same lock before Node frees it.
unsafe impl Send for Completions {}
unsafe impl Sync for Completions {}

thread_local! {
    /// The channel of the environment running on this thread (a worker has its own thread).
    static CURRENT: RefCell<Option<Arc<Completions>>> = const { RefCell::new(None) };
}

impl Completions {
    /// The channel of `env`, created on first use. JavaScript thread only.
    fn of(env: Env) -> napi::Result<Arc<Completions>> {
        CURRENT.with(|current| {
            let mut current = current.borrow_mut();
            if let Some(c) = current.as_ref().filter(|c| c.env == env.raw() && !c.lock().closed) {
                return Ok(Arc::clone(c));
            }
            let created = Completions::create(env)?;
            *current = Some(Arc::clone(&created));
            Ok(created)
        })
    }

    fn create(env: Env) -> napi::Result<Arc<Completions>> {
        // Engine threads may run this library's code after the environment is gone: keep it mapped.
        napi::bindgen_prelude::retain_current_module_for_unload_safety();
        let raw = env.raw();
        let name = env.create_string("cairn.completions")?;
        let mut tsfn = ptr::null_mut();
        // The channel is built first so the threadsafe function's context can point at it; `tsfn`
        // is written into it before any other thread can see it.
        let mut channel = Arc::new(Completions {
            env: raw,
            tsfn: ptr::null_mut(),
            queue: Mutex::new(Queue { items: Vec::new(), closed: false }),
            signal: Mutex::new(false),
            pending: AtomicUsize::new(0),
        });
        let context = Arc::as_ptr(&channel).cast_mut().cast::<c_void>();
        // SAFETY: a plain N-API call on the JavaScript thread; `context` stays valid because the
        // threadsafe function owns one strong count of the channel (taken below), released by
        // `finalize`.
        napi::check_status!(unsafe {
            sys::napi_create_threadsafe_function(
                raw,
                ptr::null_mut(),
                ptr::null_mut(),
                name.raw(),
                0,
                1,
                context,
                Some(finalize),
                context,
                Some(drain),
                &raw mut tsfn,
            )
        })?;
        Arc::get_mut(&mut channel).expect("the channel is not shared yet").tsfn = tsfn;
        // The strong count `finalize` gives back.
        let _ = Arc::into_raw(Arc::clone(&channel));
        // Idle until a promise is pending: an idle channel must not keep the process alive.
        // SAFETY: on the JavaScript thread, with the threadsafe function just created.
        napi::check_status!(unsafe { sys::napi_unref_threadsafe_function(raw, tsfn) })?;
        Ok(channel)
    }

    fn lock(&self) -> MutexGuard<'_, Queue> {
        // Nothing runs user code under this lock, so a poisoned lock still guards consistent data.
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Queues one settlement; wakes the loop only when the queue was empty (a drain is then not
    /// pending yet). Any thread.
    fn push(&self, item: Settlement) {
        let was_empty = {
            let mut queue = self.lock();
            if queue.closed {
                // The environment is gone and its promises with it.
                return;
            }
            queue.items.push(item);
            queue.items.len() == 1
        };
        if was_empty {
            self.wake();
        }
    }

    /// Calls the threadsafe function once, which runs `drain` on the loop.
    fn wake(&self) {
        let closed = self.signal.lock().unwrap_or_else(PoisonError::into_inner);
        if *closed {
            return;
        }
        // Under `signal`, so `finalize` cannot let Node free the threadsafe function meanwhile.
        // It never blocks: its queue is unbounded.
        // SAFETY: `tsfn` is alive until `finalize` sets `closed`.
        // A failure means the environment is tearing down (`napi_closing`, then
        // `napi_invalid_arg`): `finalize` will drop what is queued with it.
        let _ = unsafe {
            sys::napi_call_threadsafe_function(self.tsfn, ptr::null_mut(), sys::ThreadsafeFunctionCallMode::nonblocking)
        };
    }
}

/// The threadsafe function's callback, on the JavaScript thread: settles every queued promise.
/// `env` is null when Node empties the threadsafe function's queue while tearing down, and then
/// the promises are gone.
unsafe extern "C" fn drain(
    env: sys::napi_env,
    _js_callback: sys::napi_value,
    context: *mut c_void,
    _data: *mut c_void,
) {
    if env.is_null() {
        return;
    }
    // SAFETY: `context` is the channel, kept alive by the count the threadsafe function holds.
    let channel = unsafe { &*context.cast::<Completions>() };
    let items = std::mem::take(&mut channel.lock().items);
    let count = items.len();
    for item in items {
        settle(env, item);
    }
    let pending = channel.pending.load(Ordering::Relaxed).saturating_sub(count);
    channel.pending.store(pending, Ordering::Relaxed);
    if pending == 0 {
        // SAFETY: on the JavaScript thread, and the threadsafe function is alive while it calls us.
        unsafe { sys::napi_unref_threadsafe_function(env, channel.tsfn) };
    }
}

/// Resolves or rejects one promise, in a handle scope of its own so a long drain does not pile up
/// handles.
fn settle(env: sys::napi_env, item: Settlement) {
    let mut scope = ptr::null_mut();
    // SAFETY: on the JavaScript thread, inside the threadsafe function's callback.
    let scoped = unsafe { sys::napi_open_handle_scope(env, &raw mut scope) } == sys::Status::napi_ok;
    let status = match (item.settle)(Env::from_raw(env)) {
        // SAFETY: `deferred` came from `napi_create_promise` in this environment and is settled
        // exactly once (its `Settlement` is consumed here).
        Ok(value) => unsafe { sys::napi_resolve_deferred(env, item.deferred, value) },
        Err(err) => {
            // SAFETY: as above; a coded error made by `Failure::into_napi` is handed back as the
            // very JavaScript object it references.
            let reason = unsafe { napi::Error::to_napi_value(env, err) }.unwrap_or_else(|_| plain_error(env));
            unsafe { sys::napi_reject_deferred(env, item.deferred, reason) }
        }
    };
    if status != sys::Status::napi_ok {
        // A conversion left an exception pending (so the settle call refused): clear it and
        // reject plainly rather than leave the promise pending forever.
        let mut thrown = ptr::null_mut();
        // SAFETY: on the JavaScript thread.
        unsafe {
            sys::napi_get_and_clear_last_exception(env, &raw mut thrown);
            let reason = if thrown.is_null() { plain_error(env) } else { thrown };
            sys::napi_reject_deferred(env, item.deferred, reason);
        }
    }
    if scoped {
        // SAFETY: closes the scope opened above.
        unsafe { sys::napi_close_handle_scope(env, scope) };
    }
}

/// A bare `Error` for a promise whose own value or error could not be made.
fn plain_error(env: sys::napi_env) -> sys::napi_value {
    let message = c"the binding could not convert this call's result";
    let mut text = ptr::null_mut();
    let mut error = ptr::null_mut();
    // SAFETY: on the JavaScript thread; a null result (if these fail too) is passed on, and N-API
    // refuses it without crashing.
    unsafe {
        sys::napi_create_string_utf8(
            env,
            message.as_ptr(),
            isize::try_from(message.count_bytes()).unwrap_or(0),
            &raw mut text,
        );
        sys::napi_create_error(env, ptr::null_mut(), text, &raw mut error);
    }
    error
}

/// Finalizer of the threadsafe function (the environment is tearing down): closes the channel
/// under its lock, so no engine thread calls the threadsafe function again, and drops the strong
/// count the threadsafe function held.
unsafe extern "C" fn finalize(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    // SAFETY: `data` is the pointer `create` leaked one strong count for.
    let channel = unsafe { Arc::from_raw(data.cast::<Completions>().cast_const()) };
    *channel.signal.lock().unwrap_or_else(PoisonError::into_inner) = true;
    let items = {
        let mut queue = channel.lock();
        queue.closed = true;
        std::mem::take(&mut queue.items)
    };
    // Their promises died with the environment; dropping only frees the Rust side.
    drop(items);
}

/// A promise made on the JavaScript thread and settled through its environment's channel.
pub struct Pending {
    channel: Arc<Completions>,
    deferred: sys::napi_deferred,
}

// SAFETY: see `Settlement`: the handle is only used on the JavaScript thread.
unsafe impl Send for Pending {}

impl Pending {
    /// A new promise and the handle that settles it. JavaScript thread only.
    pub fn new(env: &Env) -> napi::Result<(Pending, Object<'_>)> {
        let channel = Completions::of(*env)?;
        let mut deferred = ptr::null_mut();
        let mut promise = ptr::null_mut();
        // SAFETY: on the JavaScript thread of `env`.
        napi::check_status!(unsafe { sys::napi_create_promise(env.raw(), &raw mut deferred, &raw mut promise) })?;
        let pending = channel.pending.load(Ordering::Relaxed);
        if pending == 0 {
            // A promise is pending: keep the loop alive until it settles.
            // SAFETY: on the JavaScript thread; the channel is open (checked by `of`).
            napi::check_status!(unsafe { sys::napi_ref_threadsafe_function(env.raw(), channel.tsfn) })?;
        }
        channel.pending.store(pending + 1, Ordering::Relaxed);
        Ok((Pending { channel, deferred }, Object::from_raw(env.raw(), promise)))
    }

    /// Settles the promise with what `settle` makes on the JavaScript thread. Any thread.
    pub fn settle(self, settle: Settle) {
        self.channel.push(Settlement { deferred: self.deferred, settle });
    }
}
