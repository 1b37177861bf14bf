use napi_derive::napi;

/// Options of `compact`.
#[napi(object)]
pub struct BindingCompactOptions {
    /// Also zero the bytes of freed pages, so forgotten data leaves the disk.
    pub purge: Option<bool>,
}

impl BindingCompactOptions {
    /// The engine's options; purging is off unless asked for.
    pub fn into_engine(options: Option<Self>) -> cairn_engine::CompactOptions {
        cairn_engine::CompactOptions { purge: options.and_then(|o| o.purge).unwrap_or(false) }
    }
}
