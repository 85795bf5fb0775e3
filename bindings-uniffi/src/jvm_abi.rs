//! The Kotlin wrapper's private interface: plain C functions beside UniFFI.
//!
//! Queued tools, the host-thread stdio loop and the call queue are how the Kotlin wrapper
//! (`tool { }`, `runStdio()`) runs handlers on its own threads. They are plumbing, not API, so
//! they are not exported through UniFFI (which would put them in every app's generated
//! Kotlin and Swift); the wrapper binds these functions with JNA direct mapping instead.
//! It is also faster: through JNA every UniFFI call allocates native structures that the JVM
//! frees on a cleaner thread, while these take primitives and caller-owned buffers, so a
//! batch of calls costs one plain downcall.
//!
//! Values that UniFFI already knows (a `Server`, a `ToolDefinition`, a `ToolResult`, a
//! `ToolwireError`) cross in UniFFI's own serialised form (big-endian), written and read by
//! the generated converters on the Kotlin side, so nothing here re-invents their layout.
//!
//! Work (`toolwire_driver_next`, `toolwire_queue_take`), little-endian: `u32 calls`, per call
//! `u64 call_id, u32 tool_key, u32 length, length bytes of arguments JSON`; then
//! `u32 cancelled`, per id `u64`.
//! Results (`toolwire_driver_next`, `toolwire_queue_complete`), little-endian: `u32 count`,
//! then per result `u64 call_id, u8 kind, u32 length, length bytes`, where kind 0 is text,
//! 1 structured JSON, 2 an error message (all UTF-8) and 3 a UniFFI-serialised `ToolResult`.
//!
//! The engine's own logs (`toolwire_logs_*`): the JVM side drains core's bounded log queue on a
//! thread of its own into SLF4J (`EngineLogs.kt`); no engine thread calls into the JVM to log.
//! Records (`toolwire_logs_next`), little-endian: `u32 count`, then per record `u8 level`
//! (1 error … 5 trace), `u32 length, length bytes of target`, `u32 length, length bytes of
//! message` (UTF-8).

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use toolwire::logs;

use crate::UniFfiTag;
use crate::context::CallContext;
use crate::definition::ToolDefinition;
use crate::driver::StdioDriver;
use crate::errors::ToolwireError;
use crate::queue::{Completion, QueuedTool, Work, queue};
use crate::result::ToolResult;
use crate::server::Server;

/// Returned by the functions that hand out work: the session has ended.
const ENDED: i64 = -1;

const TEXT: u8 = 0;
const STRUCTURED: u8 = 1;
const ERROR: u8 = 2;
const SERIALISED: u8 = 3;

fn drivers() -> &'static Mutex<HashMap<u64, Arc<StdioDriver>>> {
    static DRIVERS: OnceLock<Mutex<HashMap<u64, Arc<StdioDriver>>>> = OnceLock::new();
    DRIVERS.get_or_init(Mutex::default)
}

fn driver(id: u64) -> Option<Arc<StdioDriver>> {
    drivers()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .get(&id)
        .cloned()
}

/// Work from `toolwire_queue_take` that did not fit the caller's buffer (one dispatcher
/// thread takes from the queue).
fn queue_overflow() -> &'static Mutex<Option<Vec<u8>>> {
    static OVERFLOW: OnceLock<Mutex<Option<Vec<u8>>>> = OnceLock::new();
    OVERFLOW.get_or_init(Mutex::default)
}

/// The caller's bytes, or none for a null pointer.
///
/// # Safety
/// `data` must point to `len` readable bytes valid for `'a`, or be null.
pub(crate) unsafe fn input<'a>(data: *const u8, len: usize) -> &'a [u8] {
    if data.is_null() || len == 0 {
        &[]
    } else {
        // SAFETY: the caller guarantees `len` readable bytes at `data`.
        unsafe { std::slice::from_raw_parts(data, len) }
    }
}

/// The caller's writable buffer, or none for a null pointer.
///
/// # Safety
/// `data` must point to `capacity` writable bytes valid for `'a`, or be null.
pub(crate) unsafe fn output<'a>(data: *mut u8, capacity: usize) -> &'a mut [u8] {
    if data.is_null() || capacity == 0 {
        &mut []
    } else {
        // SAFETY: the caller guarantees `capacity` writable bytes at `data`.
        unsafe { std::slice::from_raw_parts_mut(data, capacity) }
    }
}

/// Runs `body`; a panic must not unwind into the JVM, so it becomes `on_panic`.
pub(crate) fn guarded<T>(on_panic: T, body: impl FnOnce() -> T) -> T {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|_| {
        tracing::error!("a call from the Kotlin wrapper panicked");
        on_panic
    })
}

/// Writes `error`, UniFFI-serialised, into `out` and returns minus its length (at most
/// `out.len()`: a detail too long for the buffer is cut).
fn refuse(error: ToolwireError, out: &mut [u8]) -> i64 {
    let mut bytes = Vec::new();
    <ToolwireError as uniffi::Lower<UniFfiTag>>::write(error, &mut bytes);
    if bytes.len() > out.len() {
        bytes.clear();
        let detail = "the error's description did not fit the buffer".to_owned();
        <ToolwireError as uniffi::Lower<UniFfiTag>>::write(
            ToolwireError::Internal { detail },
            &mut bytes,
        );
        if bytes.len() > out.len() {
            return i64::MIN;
        }
    }
    out[..bytes.len()].copy_from_slice(&bytes);
    -(bytes.len() as i64)
}

/// Reads a UniFFI-serialised value that must fill `bytes` exactly.
pub(crate) fn read_serialised<T: uniffi::Lift<UniFfiTag>>(
    mut bytes: &[u8],
    what: &str,
) -> Result<T, ToolwireError> {
    let value = T::try_read(&mut bytes).map_err(|err| ToolwireError::Internal {
        detail: format!("the Kotlin wrapper sent a malformed {what}: {err}"),
    })?;
    if !bytes.is_empty() {
        return Err(ToolwireError::Internal {
            detail: format!(
                "the Kotlin wrapper sent {} bytes after a {what}",
                bytes.len()
            ),
        });
    }
    Ok(value)
}

/// Registers a tool whose calls are queued for the host (its `tool_key` names the host's
/// handler and is unique in the process). `server` and `definition` are the UniFFI-serialised
/// `Server` (its handle, whose reference this call takes over) and `ToolDefinition`. Returns 0,
/// or minus the length of the UniFFI-serialised `ToolwireError` written to `error`.
///
/// # Safety
/// Each pointer must be valid for its length (or null with length 0) for the call's duration,
/// and `server`, once it has 8 bytes, must hold a live `Server` handle from UniFFI's converter
/// (the handle is dereferenced).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_queued_tool(
    server: *const u8,
    server_len: usize,
    definition: *const u8,
    definition_len: usize,
    tool_key: u32,
    error: *mut u8,
    error_capacity: usize,
) -> i64 {
    // SAFETY: the caller guarantees the lengths.
    let (server, definition, error) = unsafe {
        (
            input(server, server_len),
            input(definition, definition_len),
            output(error, error_capacity),
        )
    };
    guarded(i64::MIN, || {
        let registered = read_serialised::<Arc<Server>>(server, "server").and_then(|server| {
            let definition = read_serialised::<ToolDefinition>(definition, "tool definition")?;
            let tool = definition.to_tool()?;
            Ok(server.core().add_tool(tool, QueuedTool { key: tool_key })?)
        });
        match registered {
            Ok(()) => 0,
            Err(err) => refuse(err, error),
        }
    })
}

/// Opens stdin and stdout for the UniFFI-serialised `server` (its handle, whose reference
/// this call takes over), served from the thread that then calls `toolwire_driver_next`.
/// Returns the driver's id (> 0), or minus the length of the UniFFI-serialised
/// `ToolwireError` written to `error` (stdin already served: `Busy`).
///
/// # Safety
/// As for `toolwire_queued_tool`.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_stdio_open(
    server: *const u8,
    server_len: usize,
    error: *mut u8,
    error_capacity: usize,
) -> i64 {
    // SAFETY: the caller guarantees the lengths.
    let (server, error) = unsafe { (input(server, server_len), output(error, error_capacity)) };
    guarded(i64::MIN, || {
        let opened = read_serialised::<Arc<Server>>(server, "server")
            .and_then(|server| server.open_stdio_driver());
        match opened {
            Ok(driver) => {
                static NEXT_ID: AtomicU64 = AtomicU64::new(1);
                let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
                drivers()
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id, driver);
                id as i64
            }
            Err(err) => refuse(err, error),
        }
    })
}

/// Ends the driver's serving as end of input would, from any thread: calls in flight
/// finish, then `toolwire_driver_next` returns -1.
#[unsafe(no_mangle)]
pub extern "C" fn toolwire_stdio_stop(driver_id: u64) {
    guarded((), || {
        if let Some(driver) = driver(driver_id) {
            driver.stop();
        }
    });
}

/// Forgets the driver: it is freed once no thread is inside `toolwire_driver_next`.
#[unsafe(no_mangle)]
pub extern "C" fn toolwire_stdio_close(driver_id: u64) {
    guarded((), || {
        let removed = drivers()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&driver_id);
        drop(removed);
    });
}

/// Hands back the results in `input`, then serves until there are calls for the host to run
/// (written to `output`; returns their length), the session has ended (-1), or the work needs
/// `n` bytes of `output` (returns `-2 - n`; the work is kept for the next call, made with a
/// larger buffer).
///
/// # Safety
/// `input` must point to `input_len` readable bytes (or be null with `input_len` 0) and
/// `output` to `output_capacity` writable bytes, both valid for the duration of the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_driver_next(
    driver_id: u64,
    input_data: *const u8,
    input_len: usize,
    output_data: *mut u8,
    output_capacity: usize,
) -> i64 {
    // SAFETY: the caller guarantees the lengths.
    let (input_bytes, out) = unsafe {
        (
            input(input_data, input_len),
            output(output_data, output_capacity),
        )
    };
    guarded(ENDED, || {
        let Some(driver) = driver(driver_id) else {
            return ENDED;
        };
        let completions = decode_completions(input_bytes);
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
        hand_out(encoded, out, |kept| driver.keep_overflow(kept))
    })
}

/// Waits up to `timeout_ms` for queued calls of sessions the engine serves itself (HTTP, a
/// connection, the generated `serveStdio()`) and writes them to `output` like
/// `toolwire_driver_next` (an empty batch when the time ran out).
///
/// # Safety
/// `output` must point to `output_capacity` writable bytes valid for the call's duration.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_queue_take(
    timeout_ms: u64,
    output_data: *mut u8,
    output_capacity: usize,
) -> i64 {
    // SAFETY: the caller guarantees the length.
    let out = unsafe { output(output_data, output_capacity) };
    guarded(ENDED, || {
        let kept = queue_overflow()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let encoded =
            kept.unwrap_or_else(|| encode_work(&queue().take(Duration::from_millis(timeout_ms))));
        hand_out(encoded, out, |kept| {
            *queue_overflow().lock().unwrap_or_else(|e| e.into_inner()) = Some(kept);
        })
    })
}

/// Hands back results of queued calls (encoded as for `toolwire_driver_next`), from any thread.
///
/// # Safety
/// `input` must point to `input_len` readable bytes (or be null with `input_len` 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_queue_complete(input_data: *const u8, input_len: usize) {
    // SAFETY: the caller guarantees the length.
    let input_bytes = unsafe { input(input_data, input_len) };
    guarded((), || queue().complete(decode_completions(input_bytes)));
}

/// The UniFFI handle of a running queued call's `CallContext` (the caller owns the
/// reference), or 0 once the call has ended.
#[unsafe(no_mangle)]
pub extern "C" fn toolwire_call_context(call_id: u64) -> u64 {
    guarded(0, || match queue().context(call_id) {
        Some(context) => {
            let handle =
                <Arc<CallContext> as uniffi::Lower<UniFfiTag>>::lower(CallContext::new(context));
            handle.as_raw()
        }
        None => 0,
    })
}

/// Registers the wrapper's runner of queued calls on the host's own thread (see
/// `queue::HostRunner`): a mounted endpoint's request answered in place on a web server's
/// thread starts its tool's handler right there. Returns 1, or 0 when a runner was registered
/// already (the first stays: the wrapper keeps its callback for the process's life).
#[unsafe(no_mangle)]
pub extern "C" fn toolwire_host_runner(runner: Option<crate::queue::HostRunner>) -> i32 {
    guarded(0, || match runner {
        Some(runner) => i32::from(crate::queue::set_host_runner(runner)),
        None => 0,
    })
}

/// The most log records one `toolwire_logs_next` hands over.
const LOG_BATCH: usize = 256;

/// Log records from `toolwire_logs_next` that did not fit the caller's buffer (one thread
/// drains the logs).
fn logs_overflow() -> &'static Mutex<Option<Vec<u8>>> {
    static OVERFLOW: OnceLock<Mutex<Option<Vec<u8>>>> = OnceLock::new();
    OVERFLOW.get_or_init(Mutex::default)
}

/// Sets the most verbose level of the engine's logs the JVM takes: 1 error … 5 trace, any
/// other number off.
#[unsafe(no_mangle)]
pub extern "C" fn toolwire_logs_level(level: i32) {
    guarded((), || {
        crate::runtime::init_logs();
        let level = u8::try_from(level).ok().and_then(logs::Level::from_number);
        logs::set_max_level(level);
    });
}

/// Waits up to `timeout_ms` for the engine's log records and writes those waiting (encoded as
/// the module says) into `output`. Returns the length written, 0 when none came in time,
/// `ENDED` once the logs are closed and drained, or `-2 - n` when the records need `n` bytes:
/// they are kept for the next call, which should not wait.
///
/// # Safety
/// `output` must point to `output_capacity` writable bytes (or be null with capacity 0).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_logs_next(
    timeout_ms: u64,
    output_data: *mut u8,
    output_capacity: usize,
) -> i64 {
    // SAFETY: the caller guarantees the length.
    let out = unsafe { output(output_data, output_capacity) };
    guarded(ENDED, || {
        crate::runtime::init_logs();
        let kept = logs_overflow()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let encoded = match kept {
            Some(encoded) => encoded,
            None => {
                let drain = logs::drain();
                let Some(first) = drain.recv_timeout(Duration::from_millis(timeout_ms)) else {
                    return if drain.is_closed() { ENDED } else { 0 };
                };
                let mut records = vec![first];
                records.extend(drain.take(LOG_BATCH - 1));
                encode_logs(&records)
            }
        };
        hand_out(encoded, out, |kept| {
            *logs_overflow().lock().unwrap_or_else(|e| e.into_inner()) = Some(kept);
        })
    })
}

/// Ends the engine's logs for the process (the JVM is shutting down): nothing more is
/// queued, and `toolwire_logs_next` hands over what is left, then `ENDED`.
#[unsafe(no_mangle)]
pub extern "C" fn toolwire_logs_close() {
    guarded((), || logs::drain().close());
}

fn encode_logs(records: &[logs::LogRecord]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(&(records.len() as u32).to_le_bytes());
    for record in records {
        out.push(record.level.number());
        // Core bounds messages (16 KiB) and targets are module paths: both fit a u32.
        for text in [&record.target, &record.message] {
            out.extend_from_slice(&(text.len() as u32).to_le_bytes());
            out.extend_from_slice(text.as_bytes());
        }
    }
    out
}

pub(crate) fn hand_out(encoded: Vec<u8>, out: &mut [u8], keep: impl FnOnce(Vec<u8>)) -> i64 {
    if encoded.len() > out.len() {
        let needed = encoded.len() as i64;
        keep(encoded);
        return -2 - needed;
    }
    out[..encoded.len()].copy_from_slice(&encoded);
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
        let text = || String::from_utf8_lossy(bytes).into_owned();
        let result = match kind {
            TEXT => ToolResult::Text { text: text() },
            STRUCTURED => ToolResult::Structured { json: text() },
            ERROR => ToolResult::Error { detail: text() },
            SERIALISED => match read_serialised::<ToolResult>(bytes, "tool result") {
                Ok(result) => result,
                Err(err) => ToolResult::Error {
                    detail: err.to_string(),
                },
            },
            _ => ToolResult::Error {
                detail: format!("the Kotlin wrapper sent a result of unknown kind {kind}"),
            },
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
    fn log_records_are_encoded_as_the_module_says() {
        let record = logs::LogRecord {
            level: logs::Level::Warn,
            target: "toolwire::x".into(),
            message: "héllo".into(),
        };
        let mut expected = 1u32.to_le_bytes().to_vec();
        expected.push(2);
        expected.extend_from_slice(&11u32.to_le_bytes());
        expected.extend_from_slice(b"toolwire::x");
        expected.extend_from_slice(&6u32.to_le_bytes());
        expected.extend_from_slice("héllo".as_bytes());
        assert_eq!(encode_logs(&[record]), expected);
    }

    #[test]
    fn completions_round_trip_and_malformed_input_stops_cleanly() {
        let mut input = Vec::new();
        input.extend_from_slice(&3u32.to_le_bytes());
        let mut serialised = Vec::new();
        <ToolResult as uniffi::Lower<UniFfiTag>>::write(
            ToolResult::Structured { json: "{}".into() },
            &mut serialised,
        );
        for (id, kind, bytes) in [
            (7u64, TEXT, b"hi".to_vec()),
            (9, ERROR, b"boom".to_vec()),
            (11, SERIALISED, serialised),
        ] {
            input.extend_from_slice(&id.to_le_bytes());
            input.push(kind);
            input.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
            input.extend_from_slice(&bytes);
        }
        let done = decode_completions(&input);
        assert_eq!(done.len(), 3);
        assert_eq!(done[0].call_id, 7);
        assert!(matches!(&done[0].result, ToolResult::Text { text } if text == "hi"));
        assert!(matches!(&done[1].result, ToolResult::Error { detail } if detail == "boom"));
        assert!(matches!(&done[2].result, ToolResult::Structured { json } if json == "{}"));
        // Cut anywhere: never a panic, only the whole entries before the cut.
        for cut in 0..input.len() {
            let partial = decode_completions(&input[..cut]);
            assert!(partial.len() <= 3);
        }
        // A length beyond the buffer.
        let mut lying = 1u32.to_le_bytes().to_vec();
        lying.extend_from_slice(&1u64.to_le_bytes());
        lying.push(0);
        lying.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode_completions(&lying).is_empty());
        // A malformed serialised result is that call's error, not a panic.
        let mut junk = 1u32.to_le_bytes().to_vec();
        junk.extend_from_slice(&5u64.to_le_bytes());
        junk.push(SERIALISED);
        junk.extend_from_slice(&2u32.to_le_bytes());
        junk.extend_from_slice(&[0xff, 0xff]);
        let done = decode_completions(&junk);
        assert!(
            matches!(&done[0].result, ToolResult::Error { detail } if detail.contains("malformed"))
        );
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
        // SAFETY: `out` is 16 writable bytes; no input.
        let written = unsafe {
            toolwire_driver_next(u64::MAX, std::ptr::null(), 0, out.as_mut_ptr(), out.len())
        };
        assert_eq!(written, ENDED);
    }

    #[test]
    fn errors_cross_serialised_and_fit_the_buffer() {
        let mut out = [0u8; 256];
        let written = refuse(
            ToolwireError::Busy {
                detail: "stdin".into(),
            },
            &mut out,
        );
        assert!(written < 0);
        let bytes = &out[..(-written) as usize];
        let back = read_serialised::<ToolwireError>(bytes, "error").unwrap();
        assert!(matches!(back, ToolwireError::Busy { detail } if detail == "stdin"));
        // Too long for the buffer: a short Internal error instead.
        let mut small = [0u8; 80];
        let written = refuse(
            ToolwireError::Registration {
                detail: "x".repeat(500),
            },
            &mut small,
        );
        let back =
            read_serialised::<ToolwireError>(&small[..(-written) as usize], "error").unwrap();
        assert!(matches!(back, ToolwireError::Internal { .. }));
    }

    #[test]
    fn a_malformed_server_is_refused_with_an_error() {
        let mut error = [0u8; 256];
        let definition = [0u8; 3];
        // SAFETY: every pointer is valid for its length.
        let written = unsafe {
            toolwire_queued_tool(
                [1u8, 2].as_ptr(),
                2,
                definition.as_ptr(),
                definition.len(),
                1,
                error.as_mut_ptr(),
                error.len(),
            )
        };
        assert!(written < 0);
        let back =
            read_serialised::<ToolwireError>(&error[..(-written) as usize], "error").unwrap();
        assert!(
            matches!(back, ToolwireError::Internal { detail } if detail.contains("malformed server"))
        );
    }
}
