//! Reading a request: its MCP headers, content negotiation, and its body within the limit.
#![allow(
    clippy::result_large_err,
    reason = "the Err side is the refusal to send, built once on a rare path"
)]

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::StatusCode;
use hyper::header::{self, HeaderMap, HeaderName};

use serde_json::{Map, Value};

use super::replies::{Reply, refusal};
use crate::protocol::ProtocolVersion;
use crate::wire::{Frame, Inbound};

// Names built once: a lookup by `&str` parses and lower-cases the name on every request.
pub(super) static SESSION_HEADER: HeaderName = HeaderName::from_static("mcp-session-id");
pub(super) static VERSION_HEADER: HeaderName = HeaderName::from_static("mcp-protocol-version");
pub(super) static LAST_EVENT_HEADER: HeaderName = HeaderName::from_static("last-event-id");

static TRACEPARENT: HeaderName = HeaderName::from_static("traceparent");
static TRACESTATE: HeaderName = HeaderName::from_static("tracestate");

/// The W3C trace context of the HTTP request (`traceparent`, `tracestate` headers) given to each
/// request of `frame` whose `_meta` names none: a caller may put it on the request or on the
/// HTTP message that carries it, and the engine reads `_meta`. The values are kept only if they
/// are visible ASCII of at most 512 bytes (the W3C limit for `tracestate`).
pub(super) fn trace_into_meta(frame: Frame, headers: &HeaderMap) -> Frame {
    let value = |name: &HeaderName| {
        text_header(headers, name)
            .filter(|v| v.len() <= 512 && v.bytes().all(|b| b.is_ascii_graphic() || b == b' '))
            .map(str::to_owned)
    };
    let Some(traceparent) = value(&TRACEPARENT) else {
        return frame;
    };
    let tracestate = value(&TRACESTATE);
    let give = |inbound: &mut Result<Inbound, crate::wire::Rejection>| {
        let Ok(Inbound::Request { params, .. }) = inbound else {
            return;
        };
        let params = params.get_or_insert_with(|| Value::Object(Map::new()));
        let Some(params) = params.as_object_mut() else {
            return;
        };
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(meta) = meta.as_object_mut()
            && !meta.contains_key("traceparent")
        {
            meta.insert("traceparent".into(), Value::String(traceparent.clone()));
            if let Some(state) = &tracestate {
                meta.insert("tracestate".into(), Value::String(state.clone()));
            }
        }
    };
    match frame {
        Frame::Single(mut inbound) => {
            give(&mut inbound);
            Frame::Single(inbound)
        }
        Frame::Batch(mut items) => {
            items.iter_mut().for_each(give);
            Frame::Batch(items)
        }
    }
}

pub(super) fn text_header<'a>(headers: &'a HeaderMap, name: &HeaderName) -> Option<&'a str> {
    headers.get(name).and_then(|v| v.to_str().ok())
}

/// Whether the `Accept` headers admit `media` (exactly, as `type/*`, or as `*/*`).
pub(super) fn accepts(headers: &HeaderMap, media: &str) -> bool {
    let media = media.as_bytes();
    let family = media.split(|&b| b == b'/').next().unwrap_or(media);
    // Bytes, not `str` patterns: these run on every POST and the values are short.
    headers.get_all(header::ACCEPT).iter().any(|value| {
        value.as_bytes().split(|&b| b == b',').any(|item| {
            let item = media_type(item);
            item.eq_ignore_ascii_case(media)
                || item == b"*/*"
                || item
                    .strip_suffix(b"/*")
                    .is_some_and(|f| f.eq_ignore_ascii_case(family))
        })
    })
}

pub(super) fn is_json(headers: &HeaderMap) -> bool {
    headers
        .get(header::CONTENT_TYPE)
        .is_some_and(|v| media_type(v.as_bytes()).eq_ignore_ascii_case(b"application/json"))
}

/// `type/subtype` of a media range, without its parameters.
pub(super) fn media_type(range: &[u8]) -> &[u8] {
    range
        .split(|&b| b == b';')
        .next()
        .unwrap_or(range)
        .trim_ascii()
}

/// The `MCP-Protocol-Version` header's text, trimmed.
pub(super) fn header_version_text(headers: &HeaderMap) -> Option<&str> {
    text_header(headers, &VERSION_HEADER).map(str::trim)
}

/// The `MCP-Protocol-Version` header: absent, a version we speak, or a 400.
pub(super) fn header_version(headers: &HeaderMap) -> Result<Option<ProtocolVersion>, Reply> {
    let Some(value) = headers.get(&VERSION_HEADER) else {
        return Ok(None);
    };
    let text = value.to_str().unwrap_or("").trim();
    ProtocolVersion::parse_handshake(text)
        .map(Some)
        .ok_or_else(|| {
            let supported: Vec<&str> = ProtocolVersion::HANDSHAKE
                .iter()
                .map(|v| v.as_str())
                .collect();
            refusal(
                StatusCode::BAD_REQUEST,
                &format!(
                    "Bad Request: unsupported MCP-Protocol-Version {text:?} (supported: {})",
                    supported.join(", ")
                ),
            )
        })
}

/// The whole body, refused past `limit` bytes (at once when its declared length is). A body
/// of one frame, as most are, comes back as that frame's bytes (`Collected::to_bytes`).
pub(super) async fn read_body<B>(body: B, limit: usize) -> Result<Bytes, Reply>
where
    B: hyper::body::Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let too_large = || {
        refusal(
            StatusCode::PAYLOAD_TOO_LARGE,
            &format!("Payload Too Large: the body exceeds the limit of {limit} bytes"),
        )
    };
    if body.size_hint().lower() > limit as u64 {
        return Err(too_large());
    }
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => Err(too_large()),
        Err(err) => Err(refusal(
            StatusCode::BAD_REQUEST,
            &format!("Bad Request: reading the body failed: {err}"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use hyper::header::HeaderValue;

    fn with(name: HeaderName, values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(&name, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    #[test]
    fn accept_ranges() {
        let json = "application/json";
        let sse = "text/event-stream";
        let both = with(header::ACCEPT, &["application/json, text/event-stream"]);
        assert!(accepts(&both, json) && accepts(&both, sse));
        let spaced = with(header::ACCEPT, &[" Application/JSON ;q=0.9 ,text/*"]);
        assert!(accepts(&spaced, json) && accepts(&spaced, sse));
        assert!(accepts(&with(header::ACCEPT, &["*/*"]), sse));
        let split = with(header::ACCEPT, &["text/html", "application/json"]);
        assert!(accepts(&split, json) && !accepts(&split, sse));
        assert!(!accepts(
            &with(header::ACCEPT, &["application/jsonx"]),
            json
        ));
        assert!(!accepts(&with(header::ACCEPT, &["application/*x"]), json));
        assert!(!accepts(&HeaderMap::new(), json));
    }

    #[test]
    fn json_content_types() {
        for ok in [
            "application/json",
            "Application/Json; charset=utf-8",
            " application/json ",
        ] {
            assert!(is_json(&with(header::CONTENT_TYPE, &[ok])), "{ok}");
        }
        for bad in ["text/plain", "application/json-seq", ""] {
            assert!(!is_json(&with(header::CONTENT_TYPE, &[bad])), "{bad}");
        }
        assert!(!is_json(&HeaderMap::new()));
    }
}
