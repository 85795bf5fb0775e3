//! The responses the endpoint sends: JSON answers, refusals with a JSON-RPC error body, SSE.

use hyper::header::{self, HeaderValue};
use hyper::{Response, StatusCode};

use super::body::{Body, SseBody};
use crate::wire::{ErrorCode, ErrorObject, RequestId, error_frame};

pub(super) type Reply = Response<Body>;

/// JSON-RPC code the SDKs use on HTTP-level refusals (no JSON-RPC request to blame).
const TRANSPORT_ERROR: ErrorCode = ErrorCode(-32000);

pub(super) fn json_reply(status: StatusCode, json: String) -> Reply {
    let mut reply = Response::new(Body::full(json));
    *reply.status_mut() = status;
    reply.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    reply
}

/// An HTTP-level refusal, with a JSON-RPC error body (no id) saying why.
pub(super) fn refusal(status: StatusCode, message: &str) -> Reply {
    let error = ErrorObject::new(TRANSPORT_ERROR, message.to_owned());
    json_reply(status, error_frame(None::<&RequestId>, &error))
}

/// How long a client refused for a full table (429, 503) is told to wait before it tries
/// again (`Retry-After`): sessions end and idle ones are reaped all the time, so soon.
pub(super) const RETRY_AFTER_SECONDS: u32 = 1;

/// A refusal for a limit that frees up by itself, with `Retry-After`.
pub(super) fn retry_later(status: StatusCode, message: &str) -> Reply {
    let mut reply = refusal(status, message);
    reply
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(RETRY_AFTER_SECONDS));
    reply
}

/// A refusal after which the connection closes: what follows on it cannot be trusted to be
/// framed as the peer meant.
pub(super) fn closing_refusal(status: StatusCode, message: &str) -> Reply {
    let mut reply = refusal(status, message);
    reply
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    reply
}

pub(super) fn challenge_reply(status: StatusCode, challenge: &str, message: &str) -> Reply {
    let mut reply = refusal(status, message);
    if let Ok(value) = HeaderValue::from_str(challenge) {
        reply.headers_mut().insert(header::WWW_AUTHENTICATE, value);
    }
    reply
}

pub(super) fn method_not_allowed(allow: &'static str) -> Reply {
    let mut reply = refusal(StatusCode::METHOD_NOT_ALLOWED, "Method Not Allowed");
    reply
        .headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static(allow));
    reply
}

pub(super) fn accepted() -> Reply {
    let mut reply = Response::new(Body::empty());
    *reply.status_mut() = StatusCode::ACCEPTED;
    reply
}

pub(super) fn sse_response(body: SseBody) -> Reply {
    let mut reply = Response::new(Body::Sse(body));
    let headers = reply.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/event-stream"),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-cache"));
    headers.insert("x-accel-buffering", HeaderValue::from_static("no"));
    reply
}

/// A value safe inside a quoted-string of a challenge.
pub(super) fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| *c != '"' && *c != '\\' && !c.is_control())
        .collect()
}

/// The answer as JSON; none (every request was cancelled by the client): 202.
pub(super) fn json_or_accepted(answer: Option<String>) -> Reply {
    match answer {
        Some(answer) => json_reply(StatusCode::OK, answer),
        None => accepted(),
    }
}
