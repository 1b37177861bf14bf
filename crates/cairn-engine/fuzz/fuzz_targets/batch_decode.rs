//! Any bytes as a batch: an error or a batch whose encoding is exactly the input (the encoding
//! has no slack), never a panic.
#![no_main]

use cairn_engine::Batch;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if let Ok(batch) = Batch::decode(data) {
        assert_eq!(batch.encode(), data, "decode then encode changed the bytes");
    }
});
