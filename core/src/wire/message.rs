use std::borrow::Cow;

use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::{ErrorCode, ErrorObject, Limits, RequestId, check_depth};

/// One inbound JSON-RPC message, classified by its keys.
#[derive(Debug, Clone, PartialEq)]
pub enum Inbound {
    /// A request: it has a `method` and an `id`.
    Request {
        /// The id to answer with.
        id: RequestId,
        /// The method name.
        method: String,
        /// `params` (an object when present).
        params: Option<Value>,
    },
    /// A notification: it has a `method` and no `id`; it never gets a reply.
    Notification {
        /// The method name.
        method: String,
        /// `params`, when present.
        params: Option<Value>,
    },
    /// A successful response to a request we sent.
    Result {
        /// The id of our request.
        id: RequestId,
        /// The result.
        result: Value,
    },
    /// An error response (to a request we sent, or with a null id).
    Error {
        /// The id of our request, when it could be read.
        id: Option<RequestId>,
        /// The error.
        error: ErrorObject,
    },
}

/// A message that cannot be processed, and how to answer it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejection {
    /// The id to echo (`None` is sent as `null`).
    pub id: Option<RequestId>,
    /// The error to send.
    pub error: ErrorObject,
    /// False for things that must never be answered (a malformed response).
    pub reply: bool,
}

impl Rejection {
    fn answer(id: Option<RequestId>, error: ErrorObject) -> Self {
        Rejection {
            id,
            error,
            reply: true,
        }
    }

    fn silent(message: &'static str) -> Self {
        Rejection {
            id: None,
            error: ErrorObject::invalid_request(message),
            reply: false,
        }
    }
}

/// A parsed frame: one message or a JSON array of them (a batch).
#[derive(Debug, Clone, PartialEq)]
pub enum Frame {
    /// A single message (or the rejection of the whole frame).
    Single(Result<Inbound, Rejection>),
    /// A non-empty batch; whether batches are allowed is the session's decision.
    Batch(Vec<Result<Inbound, Rejection>>),
}

/// Parses and classifies one frame under `limits`.
///
/// Oversize frames and frames nested too deeply are refused with -32600 before parsing;
/// invalid UTF-8 and invalid JSON are -32700; valid JSON that is not a message is -32600.
pub fn parse_frame(bytes: &[u8], limits: &Limits) -> Frame {
    if bytes.len() > limits.max_frame_bytes {
        return Frame::Single(Err(Rejection::answer(
            None,
            ErrorObject::invalid_request(format!(
                "Invalid request: frame of {} bytes exceeds the limit of {} bytes",
                bytes.len(),
                limits.max_frame_bytes
            )),
        )));
    }
    let text = match std::str::from_utf8(bytes) {
        Ok(text) => text,
        Err(err) => {
            return Frame::Single(Err(Rejection::answer(
                None,
                ErrorObject::parse_error(format!(
                    "Parse error: invalid UTF-8 at byte {}",
                    err.valid_up_to()
                )),
            )));
        }
    };
    if let Err(offset) = check_depth(bytes, limits.max_depth) {
        return Frame::Single(Err(Rejection::answer(
            None,
            ErrorObject::invalid_request(format!(
                "Invalid request: nesting deeper than {} levels (at byte {offset})",
                limits.max_depth
            )),
        )));
    }
    // Fast path: a well-formed single object straight into typed fields.
    if let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(text) {
        return Frame::Single(classify(Parts {
            jsonrpc_ok: envelope.jsonrpc,
            id: envelope.id,
            method: envelope.method.map(|m| Ok(m.into_owned())),
            params: envelope.params,
            result: envelope.result,
            error: envelope.error,
        }));
    }
    // Slow path: find out exactly what is wrong.
    match serde_json::from_str::<Value>(text) {
        Err(err) => Frame::Single(Err(Rejection::answer(
            None,
            ErrorObject::parse_error(format!("Parse error: {err}")),
        ))),
        Ok(Value::Array(items)) if items.is_empty() => Frame::Single(Err(Rejection::answer(
            None,
            ErrorObject::invalid_request("Invalid request: empty batch"),
        ))),
        Ok(Value::Array(items)) => Frame::Batch(items.into_iter().map(classify_value).collect()),
        Ok(other) => Frame::Single(classify_value(other)),
    }
}

#[derive(Deserialize)]
struct Envelope<'a> {
    #[serde(default, deserialize_with = "is_version_2")]
    jsonrpc: bool,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(borrow, default)]
    method: Option<Cow<'a, str>>,
    #[serde(default, deserialize_with = "present")]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

/// Whether `jsonrpc` is "2.0", read without copying it (serde's `Option<Cow<str>>` always
/// copies). Anything but a string fails the fast path, and the slow one says what is wrong.
fn is_version_2<'de, D: Deserializer<'de>>(deserializer: D) -> Result<bool, D::Error> {
    struct Version2;
    impl serde::de::Visitor<'_> for Version2 {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a string")
        }
        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<bool, E> {
            Ok(text == "2.0")
        }
    }
    deserializer.deserialize_str(Version2)
}

/// Keeps an explicit `null` apart from an absent key.
fn present<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

struct Parts {
    jsonrpc_ok: bool,
    id: Option<Value>,
    method: Option<Result<String, ()>>,
    params: Option<Value>,
    result: Option<Value>,
    error: Option<Value>,
}

fn classify_value(value: Value) -> Result<Inbound, Rejection> {
    let Value::Object(mut map) = value else {
        return Err(Rejection::answer(
            None,
            ErrorObject::invalid_request("Invalid request: a message must be a JSON object"),
        ));
    };
    let method = map.remove("method").map(|m| match m {
        Value::String(s) => Ok(s),
        _ => Err(()),
    });
    classify(Parts {
        jsonrpc_ok: map.get("jsonrpc").and_then(Value::as_str) == Some("2.0"),
        id: map.remove("id"),
        method,
        params: map.remove("params"),
        result: map.remove("result"),
        error: map.remove("error"),
    })
}

fn classify(parts: Parts) -> Result<Inbound, Rejection> {
    let id = parts.id.as_ref().and_then(RequestId::from_json);
    let id_invalid = parts.id.is_some() && id.is_none();

    if let Some(method) = parts.method {
        if !parts.jsonrpc_ok {
            return Err(Rejection::answer(
                id,
                ErrorObject::invalid_request("Invalid request: \"jsonrpc\" must be \"2.0\""),
            ));
        }
        let Ok(method) = method else {
            return Err(Rejection::answer(
                id,
                ErrorObject::invalid_request("Invalid request: \"method\" must be a string"),
            ));
        };
        if id_invalid {
            return Err(Rejection::answer(
                None,
                ErrorObject::invalid_request(
                    "Invalid request: \"id\" must be a string or an integer",
                ),
            ));
        }
        let Some(id) = id else {
            return Ok(Inbound::Notification {
                method,
                params: parts.params,
            });
        };
        return match parts.params {
            None | Some(Value::Object(_)) => Ok(Inbound::Request {
                id,
                method,
                params: parts.params,
            }),
            Some(Value::Array(_)) => Err(Rejection::answer(
                Some(id),
                ErrorObject::invalid_params("Invalid params: \"params\" must be an object"),
            )),
            Some(_) => Err(Rejection::answer(
                Some(id),
                ErrorObject::invalid_request("Invalid request: \"params\" must be an object"),
            )),
        };
    }

    match (parts.result, parts.error) {
        (Some(_), Some(_)) => Err(Rejection::silent("response has both result and error")),
        (Some(result), None) => {
            if !parts.jsonrpc_ok {
                return Err(Rejection::silent("response without jsonrpc 2.0"));
            }
            let Some(id) = id else {
                return Err(Rejection::silent("response with an invalid id"));
            };
            Ok(Inbound::Result { id, result })
        }
        (None, Some(error)) => Ok(Inbound::Error {
            id,
            error: lenient_error(error),
        }),
        (None, None) => Err(Rejection::answer(
            id,
            ErrorObject::invalid_request(
                "Invalid request: a message needs \"method\", \"result\" or \"error\"",
            ),
        )),
    }
}

/// A peer's error object, read leniently so a waiting request always resolves.
fn lenient_error(error: Value) -> ErrorObject {
    let mut map = match error {
        Value::Object(map) => map,
        _ => Map::new(),
    };
    let code = map
        .get("code")
        .and_then(Value::as_i64)
        .and_then(|c| i32::try_from(c).ok())
        .map_or(ErrorCode::INTERNAL_ERROR, ErrorCode);
    let message = match map.remove("message") {
        Some(Value::String(s)) => s,
        _ => String::from("(no message)"),
    };
    ErrorObject {
        code,
        message: message.into(),
        data: map.remove("data"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn single(text: &str) -> Result<Inbound, Rejection> {
        match parse_frame(text.as_bytes(), &Limits::default()) {
            Frame::Single(result) => result,
            Frame::Batch(_) => panic!("unexpected batch"),
        }
    }

    #[test]
    fn ids_keep_their_type() {
        let Ok(Inbound::Request { id, .. }) =
            single(r#"{"jsonrpc":"2.0","id":"7","method":"ping"}"#)
        else {
            panic!("not a request")
        };
        assert_eq!(id, RequestId::from("7"));
        let Ok(Inbound::Request { id, .. }) = single(r#"{"jsonrpc":"2.0","id":7,"method":"ping"}"#)
        else {
            panic!("not a request")
        };
        assert_eq!(id, RequestId::Number(7));
    }

    #[test]
    fn classification_by_keys() {
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","method":"x"}"#),
            Ok(Inbound::Notification { .. })
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#),
            Ok(Inbound::Result { .. })
        ));
        assert!(matches!(
            single(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}"#),
            Ok(Inbound::Error { .. })
        ));
        let err = single(r#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        assert_eq!(err.id, None);
        let err = single(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        let err = single(r#"{"jsonrpc":"1.0","id":3,"method":"ping"}"#).unwrap_err();
        assert_eq!(err.id, Some(RequestId::Number(3)));
        let err = single("{").unwrap_err();
        assert_eq!(err.error.code, ErrorCode::PARSE_ERROR);
        let err = single("3").unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
    }

    #[test]
    fn limits_refuse_before_parsing() {
        let limits = Limits {
            max_frame_bytes: 16,
            max_depth: 2,
        };
        let Frame::Single(Err(r)) = parse_frame(&[b' '; 17], &limits) else {
            panic!()
        };
        assert_eq!(r.error.code, ErrorCode::INVALID_REQUEST);
        let Frame::Single(Err(r)) = parse_frame(b"[[[1]]]", &limits) else {
            panic!()
        };
        assert_eq!(r.error.code, ErrorCode::INVALID_REQUEST);
        let Frame::Single(Err(r)) = parse_frame(&[b'"', 0xff, b'"'], &limits) else {
            panic!()
        };
        assert_eq!(r.error.code, ErrorCode::PARSE_ERROR);
    }

    #[test]
    fn batches_are_split() {
        let frame = parse_frame(
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","method":"n"},5]"#,
            &Limits::default(),
        );
        let Frame::Batch(items) = frame else { panic!() };
        assert_eq!(items.len(), 3);
        assert!(items[2].is_err());
    }
}
