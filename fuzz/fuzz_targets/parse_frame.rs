#![no_main]

use libfuzzer_sys::fuzz_target;
use toolwire::wire::{Limits, parse_frame};

fuzz_target!(|data: &[u8]| {
    let limits = Limits { max_frame_bytes: 64 * 1024, max_depth: 32 };
    let _ = parse_frame(data, &limits);
});
