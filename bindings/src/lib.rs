//! The N-API binding of Cairn's storage engine: a thin mirror of `cairn-engine`, one JavaScript
//! facing type per file, each prefixed `Binding` so a reader knows which side of the boundary it
//! is on. Engine errors become JavaScript errors in `error.rs` only.

// The exported functions are called from JavaScript, where `#[must_use]` cannot reach.
#![allow(clippy::must_use_candidate)]

mod error;
mod job;
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

use napi::bindgen_prelude::Object;
use napi_derive::napi;

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
    Ok(())
}
