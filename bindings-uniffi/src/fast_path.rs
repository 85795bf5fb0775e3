//! The stdio driver's loop for JVM hosts, without UniFFI's marshalling.
//!
//! Through JNA every UniFFI call allocates native structures (the call status, each returned
//! buffer) that the JVM tracks and frees on a cleaner thread; profiles of the Kotlin demo
//! showed that bookkeeping, not the engine, as most of a call's cost. This one C function
//! takes primitives and two caller-owned buffers instead, so a batch of calls costs one plain
//! downcall. The work itself is `StdioDriver::next`'s.
//!
//! Input (the results of calls taken earlier), little-endian:
//! `u32 count`, then per result `u64 call_id, u8 kind (0 text, 1 structured JSON, 2 error),
//! u32 length, length bytes of UTF-8`.
//! Output (the next work): `u32 calls`, per call `u64 call_id, u32 tool_key, u32 length,
//! length bytes of arguments JSON`; then `u32 cancelled`, per id `u64`.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::driver::StdioDriver;
use crate::queue::{Completion, Work};
use crate::result::ToolResult;

/// `toolwire_driver_next` returned: the session has ended.
const ENDED: i64 = -1;

fn drivers() -> &'static Mutex<HashMap<u64, Arc<StdioDriver>>> {
    static DRIVERS: OnceLock<Mutex<HashMap<u64, Arc<StdioDriver>>>> = OnceLock::new();
    DRIVERS.get_or_init(Mutex::default)
}

pub(crate) fn register(driver: Arc<StdioDriver>) -> u64 {
    static NEXT_ID: AtomicU64 = AtomicU64::new(1);
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    drivers()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(id, driver);
    id
}

pub(crate) fn unregister(id: u64) {
    drivers()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .remove(&id);
}

/// `StdioDriver::next` for the driver registered as `driver_id`, with results and work in
/// caller-owned buffers. Returns the bytes of work written to `output`, `-1` once the
/// session has ended, or `-2 - n` when the work needs `n` bytes of `output` (it is kept, and
/// the next call, with a larger buffer, returns it).
///
/// # Safety
/// `input` must point to `input_len` readable bytes (or be null with `input_len` 0) and
/// `output` to `output_capacity` writable bytes, both valid for the duration of the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_driver_next(
    driver_id: u64,
    input: *const u8,
    input_len: usize,
    output: *mut u8,
    output_capacity: usize,
) -> i64 {
    let input: &[u8] = if input.is_null() || input_len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `input_len` readable bytes at `input`.
        unsafe { std::slice::from_raw_parts(input, input_len) }
    };
    let output: &mut [u8] = if output.is_null() || output_capacity == 0 {
        &mut []
    } else {
        // SAFETY: the caller guarantees `output_capacity` writable bytes at `output`.
        unsafe { std::slice::from_raw_parts_mut(output, output_capacity) }
    };
    // A panic must not unwind into the JVM.
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        next(driver_id, input, output)
    }))
    .unwrap_or_else(|_| {
        tracing::error!("the stdio driver panicked; ending the session");
        ENDED
    })
}

fn next(driver_id: u64, input: &[u8], output: &mut [u8]) -> i64 {
    let Some(driver) = drivers()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&driver_id)
        .cloned()
    else {
        return ENDED;
    };
    let completions = decode_completions(input);
    let encoded = match driver.take_overflow() {
        Some(encoded) => {
            driver.hand_back(completions);
            encoded
        }
        None => match driver.next(completions) {
            None => return ENDED,
            Some(work) => encode_work(&work),
        },
    };
    if encoded.len() > output.len() {
        let needed = encoded.len() as i64;
        driver.keep_overflow(encoded);
        return -2 - needed;
    }
    output[..encoded.len()].copy_from_slice(&encoded);
    encoded.len() as i64
}

/// Malformed input (it comes from our own Kotlin code) ends the batch where it breaks.
fn decode_completions(mut input: &[u8]) -> Vec<Completion> {
    let Some(count) = take_u32(&mut input) else {
        return Vec::new();
    };
    let mut completions = Vec::with_capacity(count.min(4096) as usize);
    for _ in 0..count {
        let (Some(call_id), Some(kind), Some(length)) = (
            take_u64(&mut input),
            take_u8(&mut input),
            take_u32(&mut input),
        ) else {
            break;
        };
        let Some(bytes) = take_bytes(&mut input, length as usize) else {
            break;
        };
        let text = String::from_utf8_lossy(bytes).into_owned();
        let result = match kind {
            0 => ToolResult::Text { text },
            1 => ToolResult::Structured { json: text },
            _ => ToolResult::Error { detail: text },
        };
        completions.push(Completion { call_id, result });
    }
    completions
}

fn encode_work(work: &Work) -> Vec<u8> {
    let size = 8
        + work
            .calls
            .iter()
            .map(|c| 16 + c.arguments_json.len())
            .sum::<usize>()
        + 8 * work.cancelled.len();
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(&(work.calls.len() as u32).to_le_bytes());
    for call in &work.calls {
        out.extend_from_slice(&call.call_id.to_le_bytes());
        out.extend_from_slice(&call.tool_key.to_le_bytes());
        out.extend_from_slice(&(call.arguments_json.len() as u32).to_le_bytes());
        out.extend_from_slice(call.arguments_json.as_bytes());
    }
    out.extend_from_slice(&(work.cancelled.len() as u32).to_le_bytes());
    for id in &work.cancelled {
        out.extend_from_slice(&id.to_le_bytes());
    }
    out
}

fn take_bytes<'a>(input: &mut &'a [u8], n: usize) -> Option<&'a [u8]> {
    if input.len() < n {
        return None;
    }
    let (head, tail) = input.split_at(n);
    *input = tail;
    Some(head)
}

fn take_u8(input: &mut &[u8]) -> Option<u8> {
    take_bytes(input, 1).map(|b| b[0])
}

fn take_u32(input: &mut &[u8]) -> Option<u32> {
    take_bytes(input, 4).and_then(|b| b.try_into().ok().map(u32::from_le_bytes))
}

fn take_u64(input: &mut &[u8]) -> Option<u64> {
    take_bytes(input, 8).and_then(|b| b.try_into().ok().map(u64::from_le_bytes))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completions_round_trip_and_malformed_input_stops_cleanly() {
        let mut input = Vec::new();
        input.extend_from_slice(&2u32.to_le_bytes());
        for (id, kind, text) in [(7u64, 0u8, "hi"), (9, 2, "boom")] {
            input.extend_from_slice(&id.to_le_bytes());
            input.push(kind);
            input.extend_from_slice(&(text.len() as u32).to_le_bytes());
            input.extend_from_slice(text.as_bytes());
        }
        let done = decode_completions(&input);
        assert_eq!(done.len(), 2);
        assert_eq!(done[0].call_id, 7);
        assert!(matches!(&done[0].result, ToolResult::Text { text } if text == "hi"));
        assert!(matches!(&done[1].result, ToolResult::Error { detail } if detail == "boom"));
        // Cut anywhere: never a panic, only the whole entries before the cut.
        for cut in 0..input.len() {
            let partial = decode_completions(&input[..cut]);
            assert!(partial.len() <= 2);
        }
        // A length beyond the buffer.
        let mut lying = 1u32.to_le_bytes().to_vec();
        lying.extend_from_slice(&1u64.to_le_bytes());
        lying.push(0);
        lying.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_completions(&lying).is_empty());
    }

    #[test]
    fn work_encoding_is_the_documented_layout() {
        let work = Work {
            calls: vec![crate::queue::PendingCall {
                call_id: 3,
                tool_key: 5,
                arguments_json: "{}".into(),
            }],
            cancelled: vec![11],
        };
        let bytes = encode_work(&work);
        let mut expected = 1u32.to_le_bytes().to_vec();
        expected.extend_from_slice(&3u64.to_le_bytes());
        expected.extend_from_slice(&5u32.to_le_bytes());
        expected.extend_from_slice(&2u32.to_le_bytes());
        expected.extend_from_slice(b"{}");
        expected.extend_from_slice(&1u32.to_le_bytes());
        expected.extend_from_slice(&11u64.to_le_bytes());
        assert_eq!(bytes, expected);
    }

    #[test]
    fn an_unknown_driver_reads_as_ended() {
        let mut out = [0u8; 16];
        assert_eq!(next(u64::MAX, &[], &mut out), ENDED);
    }
}
