use napi_derive::napi;

use crate::error::Failure;

/// Options of `openStore`; anything left out takes the engine's default.
#[napi(object)]
pub struct BindingStoreOptions {
    /// Bytes of page cache (default 64 MiB).
    pub cache_bytes: Option<f64>,
    /// WAL size in bytes that triggers a checkpoint (default 64 MiB).
    pub checkpoint_bytes: Option<f64>,
    /// Hours a notes write's `idempotencyKey` is remembered, 1–8760 (default 24).
    pub idempotency_hours: Option<f64>,
    /// Bytes of entity-name indexes the process keeps between calls (default 512 MiB).
    pub name_cache_bytes: Option<f64>,
}

impl BindingStoreOptions {
    /// The engine's options, refusing sizes that are not whole non-negative numbers and hours
    /// outside `IDEMPOTENCY_HOURS`.
    pub fn into_engine(self) -> Result<cairn_engine::StoreOptions, Failure> {
        let mut opts = cairn_engine::StoreOptions::default();
        if let Some(n) = self.cache_bytes {
            opts.cache_bytes =
                usize::try_from(size("cacheBytes", n)?).map_err(|_| Failure::invalid("cacheBytes is too large"))?;
        }
        if let Some(n) = self.checkpoint_bytes {
            opts.checkpoint_bytes = size("checkpointBytes", n)?;
        }
        if let Some(n) = self.idempotency_hours {
            opts.idempotency_hours = hours(n)?;
        }
        if let Some(n) = self.name_cache_bytes {
            opts.name_cache_bytes = usize::try_from(size("nameCacheBytes", n)?)
                .map_err(|_| Failure::invalid("nameCacheBytes is too large"))?;
        }
        Ok(opts)
    }
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked just before
fn size(name: &str, n: f64) -> Result<u64, Failure> {
    if !n.is_finite() || n < 0.0 || n.fract() != 0.0 || n > 9_007_199_254_740_991.0 {
        return Err(Failure::invalid(format!("{name} must be a whole number of bytes, got {n}")));
    }
    Ok(n as u64)
}

#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)] // checked just before
fn hours(n: f64) -> Result<u32, Failure> {
    let range = cairn_engine::IDEMPOTENCY_HOURS;
    if n.fract() != 0.0 || !(f64::from(*range.start())..=f64::from(*range.end())).contains(&n) {
        return Err(Failure::invalid(format!(
            "idempotencyHours must be a whole number of hours, {}–{}, got {n}",
            range.start(),
            range.end()
        )));
    }
    Ok(n as u32)
}
