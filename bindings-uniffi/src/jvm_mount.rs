//! The Ktor route's whole-body path: plain C functions beside UniFFI, as in `jvm_abi`.
//!
//! A request whose body the route holds whole is answered with one downcall that takes the
//! request in one buffer and writes the whole answer to another, instead of UniFFI's `answer`,
//! `completeResponse` and `close` (each a JNA call allocating native structures, the arguments'
//! `RustBuffer`s and the handle's clone besides). The endpoint is named by an id the route
//! keeps (`toolwire_http_endpoint_keep`), so no handle crosses per request.
//!
//! Request (little-endian): `u32 length, method`, `u32 length, target`, `u32 length, peer`
//! (empty: unknown), `u32 fields`, per field `u32 length, name, u32 length, value`, then
//! `u32 length, body` (all strings UTF-8).
//! Answer: `u8 kind`, then for kind 0 (complete) `u16 status, u32 fields`, per field
//! `u32 length, name, u32 length, value`, `u32 length, body`; for kind 1 (it goes on) the
//! UniFFI handle (`u64`) of an `HttpExchange` the caller now owns; for kind 2 (refused) a
//! UniFFI-serialised `ToolwireError`.

use std::cell::RefCell;
use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::UniFfiTag;
use crate::errors::ToolwireError;
use crate::jvm_abi::{guarded, hand_out, input, output, read_serialised};
use crate::mount::{HttpEndpoint, HttpExchange};

const COMPLETE: u8 = 0;
const GOES_ON: u8 = 1;
const REFUSED: u8 = 2;

fn endpoints() -> &'static Mutex<HashMap<u64, Arc<HttpEndpoint>>> {
    static ENDPOINTS: OnceLock<Mutex<HashMap<u64, Arc<HttpEndpoint>>>> = OnceLock::new();
    ENDPOINTS.get_or_init(Mutex::default)
}

thread_local! {
    /// An answer that did not fit the caller's buffer, for `toolwire_http_kept` right after
    /// (the same thread: the route makes both calls with no suspension between them).
    static KEPT: RefCell<Option<Vec<u8>>> = const { RefCell::new(None) };
}

/// Keeps the UniFFI-serialised `endpoint` (its handle, whose reference this call takes over)
/// for `toolwire_http_answer`, and returns its id (> 0), or 0 when the bytes are malformed.
///
/// # Safety
/// `endpoint` must point to `endpoint_len` readable bytes (or be null with length 0), and once
/// it has 8 bytes they must be a live `HttpEndpoint` handle from UniFFI's converter.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_http_endpoint_keep(
    endpoint: *const u8,
    endpoint_len: usize,
) -> u64 {
    // SAFETY: the caller guarantees the length.
    let endpoint = unsafe { input(endpoint, endpoint_len) };
    guarded(0, || {
        match read_serialised::<Arc<HttpEndpoint>>(endpoint, "endpoint") {
            Ok(endpoint) => {
                static NEXT_ID: AtomicU64 = AtomicU64::new(1);
                let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
                lock_endpoints().insert(id, endpoint);
                id
            }
            Err(err) => {
                tracing::error!(%err, "the Kotlin wrapper sent a malformed endpoint");
                0
            }
        }
    })
}

/// Lets go of a kept endpoint (the route closed it): requests naming it are refused.
#[unsafe(no_mangle)]
pub extern "C" fn toolwire_http_endpoint_forget(endpoint_id: u64) {
    guarded((), || {
        let removed = lock_endpoints().remove(&endpoint_id);
        drop(removed);
    });
}

fn lock_endpoints() -> std::sync::MutexGuard<'static, HashMap<u64, Arc<HttpEndpoint>>> {
    endpoints().lock().unwrap_or_else(|e| e.into_inner())
}

/// Answers the request in `request` (encoded as the module says) with the kept endpoint
/// `endpoint_id`, on the calling thread as far as it can (a queued tool's handler starts right
/// here), and writes the answer to `output`. Returns its length, or `-2 - n` when it needs `n`
/// bytes: it is then kept for `toolwire_http_kept`.
///
/// # Safety
/// `request` must point to `request_len` readable bytes and `output` to `output_capacity`
/// writable bytes, both valid for the duration of the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_http_answer(
    endpoint_id: u64,
    request: *const u8,
    request_len: usize,
    output_data: *mut u8,
    output_capacity: usize,
) -> i64 {
    // SAFETY: the caller guarantees the lengths.
    let (request, out) = unsafe {
        (
            input(request, request_len),
            output(output_data, output_capacity),
        )
    };
    guarded(i64::MIN, || {
        let encoded = match answer(endpoint_id, request) {
            Ok(Answered::Complete(head)) => encode_complete(head),
            Ok(Answered::GoesOn(exchange)) => {
                let handle = <Arc<HttpExchange> as uniffi::Lower<UniFfiTag>>::lower(exchange);
                let mut bytes = vec![GOES_ON];
                bytes.extend_from_slice(&handle.as_raw().to_le_bytes());
                bytes
            }
            Err(err) => {
                let mut bytes = vec![REFUSED];
                <ToolwireError as uniffi::Lower<UniFfiTag>>::write(err, &mut bytes);
                bytes
            }
        };
        hand_out(encoded, out, |kept| {
            KEPT.with(|slot| *slot.borrow_mut() = Some(kept));
        })
    })
}

/// Writes the answer `toolwire_http_answer` kept (it did not fit) to `output`: its length, or
/// `-2 - n` when it still does not fit (it stays kept), or -1 when none is kept.
///
/// # Safety
/// `output` must point to `output_capacity` writable bytes valid for the call's duration.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn toolwire_http_kept(output_data: *mut u8, output_capacity: usize) -> i64 {
    // SAFETY: the caller guarantees the length.
    let out = unsafe { output(output_data, output_capacity) };
    guarded(i64::MIN, || {
        let Some(kept) = KEPT.with(|slot| slot.borrow_mut().take()) else {
            return -1;
        };
        hand_out(kept, out, |kept| {
            KEPT.with(|slot| *slot.borrow_mut() = Some(kept));
        })
    })
}

enum Answered {
    Complete(toolwire::transport::http::ResponseHead),
    GoesOn(Arc<HttpExchange>),
}

fn answer(endpoint_id: u64, mut request: &[u8]) -> Result<Answered, ToolwireError> {
    let malformed = || ToolwireError::Internal {
        detail: "the Kotlin wrapper sent a malformed request".into(),
    };
    let endpoint =
        lock_endpoints()
            .get(&endpoint_id)
            .cloned()
            .ok_or_else(|| ToolwireError::Internal {
                detail: "the endpoint was closed".into(),
            })?;
    let method = take_text(&mut request).ok_or_else(malformed)?;
    let target = take_text(&mut request).ok_or_else(malformed)?;
    let peer = take_text(&mut request).ok_or_else(malformed)?;
    let count = take_u32(&mut request).ok_or_else(malformed)?;
    // Each field takes 8 bytes at least: a count beyond that is a lie, not an allocation.
    let mut fields = Vec::with_capacity((count as usize).min(request.len() / 8));
    for _ in 0..count {
        let name = take_field(&mut request).ok_or_else(malformed)?;
        let value = take_field(&mut request).ok_or_else(malformed)?;
        fields.push((name, value));
    }
    let body = take_field(&mut request).ok_or_else(malformed)?;
    if !request.is_empty() {
        return Err(malformed());
    }
    let peer = peer.parse::<IpAddr>().ok();
    let exchange = crate::queue::on_host_thread(|| {
        endpoint.core().answer(
            method,
            target,
            fields.iter().copied(),
            body.to_vec().into(),
            peer,
        )
    })?;
    Ok(match exchange.complete_response() {
        Some(head) => Answered::Complete(head),
        None => Answered::GoesOn(HttpExchange::wrap(exchange)),
    })
}

fn encode_complete(head: toolwire::transport::http::ResponseHead) -> Vec<u8> {
    let body = head.body.unwrap_or_default();
    let size = 11
        + head
            .headers
            .iter()
            .map(|(name, value)| 8 + name.len() + value.len())
            .sum::<usize>()
        + body.len();
    let mut out = Vec::with_capacity(size);
    out.push(COMPLETE);
    out.extend_from_slice(&head.status.to_le_bytes());
    out.extend_from_slice(&(head.headers.len() as u32).to_le_bytes());
    for (name, value) in &head.headers {
        put_field(&mut out, name.as_bytes());
        put_field(&mut out, value);
    }
    put_field(&mut out, &body);
    out
}

fn put_field(out: &mut Vec<u8>, bytes: &[u8]) {
    // Header fields and a whole body the engine made: each far below 4 GiB.
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

fn take_u32(input: &mut &[u8]) -> Option<u32> {
    let (head, tail) = input.split_first_chunk::<4>()?;
    *input = tail;
    Some(u32::from_le_bytes(*head))
}

fn take_field<'a>(input: &mut &'a [u8]) -> Option<&'a [u8]> {
    let length = take_u32(input)? as usize;
    if input.len() < length {
        return None;
    }
    let (head, tail) = input.split_at(length);
    *input = tail;
    Some(head)
}

fn take_text<'a>(input: &mut &'a [u8]) -> Option<&'a str> {
    std::str::from_utf8(take_field(input)?).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::Server;

    fn request(method: &str, headers: &[(&str, &str)], body: &str) -> Vec<u8> {
        let mut out = Vec::new();
        for text in [method, "/mcp", "127.0.0.1"] {
            put_field(&mut out, text.as_bytes());
        }
        out.extend_from_slice(&(headers.len() as u32).to_le_bytes());
        for (name, value) in headers {
            put_field(&mut out, name.as_bytes());
            put_field(&mut out, value.as_bytes());
        }
        put_field(&mut out, body.as_bytes());
        out
    }

    fn kept_endpoint() -> u64 {
        let server = Server::new("t".into(), "1".into(), None, None).unwrap();
        let endpoint = server.http_endpoint(None, None).unwrap();
        let mut serialised = Vec::new();
        <Arc<HttpEndpoint> as uniffi::Lower<UniFfiTag>>::write(endpoint, &mut serialised);
        // SAFETY: `serialised` holds a live handle the call takes over.
        let id = unsafe { toolwire_http_endpoint_keep(serialised.as_ptr(), serialised.len()) };
        assert!(id > 0);
        id
    }

    #[test]
    fn a_handshake_is_answered_whole_in_one_call() {
        let id = kept_endpoint();
        let initialize = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#;
        let bytes = request(
            "POST",
            &[
                ("host", "127.0.0.1"),
                ("content-type", "application/json"),
                ("accept", "application/json, text/event-stream"),
            ],
            initialize,
        );
        // Too small a buffer: the answer is kept, then handed over whole.
        let mut small = [0u8; 16];
        // SAFETY: each pointer is valid for its length.
        let needed = unsafe {
            toolwire_http_answer(
                id,
                bytes.as_ptr(),
                bytes.len(),
                small.as_mut_ptr(),
                small.len(),
            )
        };
        assert!(needed <= -2, "{needed}");
        let mut out = vec![0u8; (-2 - needed) as usize];
        // SAFETY: `out` is writable for its length.
        let written = unsafe { toolwire_http_kept(out.as_mut_ptr(), out.len()) };
        assert_eq!(written as usize, out.len());
        // SAFETY: as above; nothing is kept any more.
        assert_eq!(
            unsafe { toolwire_http_kept(out.as_mut_ptr(), out.len()) },
            -1
        );

        let mut answer = out.as_slice();
        assert_eq!(answer[0], COMPLETE);
        assert_eq!(u16::from_le_bytes([answer[1], answer[2]]), 200);
        answer = &answer[3..];
        let count = take_u32(&mut answer).unwrap();
        let mut session = None;
        for _ in 0..count {
            let name = take_text(&mut answer).unwrap().to_owned();
            let value = take_text(&mut answer).unwrap();
            if name == "mcp-session-id" {
                session = Some(value.to_owned());
            }
        }
        assert!(session.is_some(), "the session is named");
        let body = take_text(&mut answer).unwrap();
        assert!(body.contains("\"serverInfo\""), "{body}");
        assert!(answer.is_empty());
        toolwire_http_endpoint_forget(id);
    }

    #[test]
    fn bad_requests_are_refused_with_errors_not_panics() {
        let id = kept_endpoint();
        let good = request("POST", &[("host", "127.0.0.1")], "{}");
        // Every cut of a request, and one with bytes after it, is malformed.
        let mut longer = good.clone();
        longer.push(0);
        for bad in [&good[..0], &good[..5], &good[..good.len() - 1], &longer[..]] {
            assert!(matches!(
                answer(id, bad),
                Err(ToolwireError::Internal { detail }) if detail.contains("malformed")
            ));
        }
        // A field count far beyond the bytes: refused, not allocated for.
        let mut lying = Vec::new();
        for text in ["POST", "/mcp", ""] {
            put_field(&mut lying, text.as_bytes());
        }
        lying.extend_from_slice(&u32::MAX.to_le_bytes());
        assert!(answer(id, &lying).is_err());
        // A header name HTTP does not allow: the caller's error, named.
        let bad_name = request("POST", &[("bad name", "x")], "{}");
        assert!(matches!(
            answer(id, &bad_name),
            Err(ToolwireError::InvalidArgument { detail }) if detail.contains("header name")
        ));
        toolwire_http_endpoint_forget(id);
        // A forgotten endpoint refuses.
        assert!(matches!(
            answer(id, &good),
            Err(ToolwireError::Internal { detail }) if detail.contains("closed")
        ));
    }
}
