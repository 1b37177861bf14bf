//! The N-API binding of Cairn's storage engine: a thin mirror of `cairn-engine`, one JavaScript
//! facing type per file, each prefixed `Binding` so a reader knows which side of the boundary it
//! is on. Engine errors become JavaScript errors in `error.rs` only.

// The exported functions are called from JavaScript, where `#[must_use]` cannot reach.
#![allow(clippy::must_use_candidate)]

mod completion;
mod error;
mod job;
mod read_only_store;
mod reply;
mod scan;
mod snapshot;
mod store;
mod types;
mod verb_pool;

// mimalloc instead of the system allocator: the engine's write path makes many short-lived
// allocations (transaction buffers, keys, page images), and measured on the notes and full-text
// examples it cut CPU per write by 12-20%.
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

// mimalloc's `mi_option_set` and the index of `mi_option_purge_delay` in its `mi_option_t` (v3,
// as bundled by libmimalloc-sys 0.1.49, pinned in Cargo.lock; the same index in v2). Declared
// here because the crate's own declarations need its `extended` feature and one more dependency.
unsafe extern "C" {
    fn mi_option_set(option: std::ffi::c_int, value: std::ffi::c_long);
}
const MI_OPTION_PURGE_DELAY: std::ffi::c_int = 15;

/// Tells mimalloc never to hand freed memory back to the OS. With the default (purge after 1 s)
/// the write path's large short-lived buffers (a call's passages, a group's pages and log
/// records) were returned and faulted in again as fresh zeroed huge pages: on the full-text ingest
/// example that was 20-25% of all CPU. The engine's memory is bounded by its configuration (page
/// cache, staged pages, one group in flight), so the retained peak is bounded too.
fn keep_freed_memory() {
    // SAFETY: a plain C call that sets an integer option; mimalloc is this library's allocator.
    unsafe { mi_option_set(MI_OPTION_PURGE_DELAY, -1) };
}

use napi::bindgen_prelude::Object;
use napi_derive::napi;

pub use read_only_store::{BindingReadOnlyStore, open_store_read_only};
pub use snapshot::BindingSnapshot;
pub use store::{BindingStore, open_store};

/// Second guard behind the JavaScript loader's check: this library is compiled for AVX2 and FMA
/// (`.cargo/config.toml`), so a CPU without them must be refused before any engine code runs.
#[napi(module_exports)]
pub fn check_cpu(_exports: Object) -> napi::Result<()> {
    #[cfg(target_arch = "x86_64")]
    for (feature, present) in [
        ("avx2", std::arch::is_x86_feature_detected!("avx2")),
        ("fma", std::arch::is_x86_feature_detected!("fma")),
        ("sse4.2", std::arch::is_x86_feature_detected!("sse4.2")),
        ("pclmulqdq", std::arch::is_x86_feature_detected!("pclmulqdq")),
    ] {
        if !present {
            return Err(napi::Error::from_reason(format!(
                "Cairn's native engine needs a CPU with {feature}, which this one lacks"
            )));
        }
    }
    keep_freed_memory();
    Ok(())
}
