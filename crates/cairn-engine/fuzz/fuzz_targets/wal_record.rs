//! Any bytes read as a write-ahead log (header, records, their batches): never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = cairn_engine::decode::wal_record(data);
});
