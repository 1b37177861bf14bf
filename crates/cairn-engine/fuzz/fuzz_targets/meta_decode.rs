//! Any bytes read as a meta page (slot 0 and slot 1): an error or success, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cairn_engine::decode::meta(data);
});
