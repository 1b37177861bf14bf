//! Any bytes read as a data-file page: an error or success, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cairn_engine::decode::page(data);
});
