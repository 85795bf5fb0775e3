use serde_json::{Map, Value};

use super::envelope::{CallMembers, Envelope};
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
    match parse_inbound(bytes, limits) {
        Parsed::Frame(frame) => frame,
        Parsed::Call(call) => Frame::Single(Ok(call.into_inbound())),
    }
}

/// A `tools/call` request in its commonest shape (`params` holding `name`, `arguments` and
/// `_meta` at most), read straight into its fields: no tree is built for its `params`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct PlainCall {
    pub(crate) id: RequestId,
    pub(crate) name: String,
    /// `arguments` as given: absent, `null` or an object.
    pub(crate) arguments: Option<Value>,
    /// `_meta` as given, when present.
    pub(crate) meta: Option<Value>,
}

impl PlainCall {
    /// The same request as any other, its `params` a tree again.
    pub(crate) fn into_inbound(self) -> Inbound {
        let members = CallMembers {
            name: Some(Value::String(self.name)),
            arguments: self.arguments,
            meta: self.meta,
            rest: Map::new(),
        };
        Inbound::Request {
            id: self.id,
            method: "tools/call".to_owned(),
            params: Some(members.into_tree()),
        }
    }
}

/// A frame, or a plain tool call taken out of the ordinary path.
#[derive(Debug)]
pub(crate) enum Parsed {
    Call(PlainCall),
    Frame(Frame),
}

/// [`parse_frame`], except that a [`PlainCall`] comes out as one (the session's hot path).
pub(crate) fn parse_inbound(bytes: &[u8], limits: &Limits) -> Parsed {
    let text = match checked_text(bytes, limits) {
        Ok(text) => text,
        Err(rejection) => return Parsed::Frame(Frame::Single(Err(rejection))),
    };
    // Fast path: a well-formed single object straight into typed fields, in one pass.
    if let Ok(envelope) = serde_json::from_str::<Envelope<'_>>(text) {
        return envelope.into_parsed();
    }
    // Slow path: find out exactly what is wrong.
    Parsed::Frame(match serde_json::from_str::<Value>(text) {
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
    })
}

/// The frame's text, once it passed the limits and is UTF-8.
fn checked_text<'a>(bytes: &'a [u8], limits: &Limits) -> Result<&'a str, Rejection> {
    if bytes.len() > limits.max_frame_bytes {
        return Err(Rejection::answer(
            None,
            ErrorObject::invalid_request(format!(
                "Invalid request: frame of {} bytes exceeds the limit of {} bytes",
                bytes.len(),
                limits.max_frame_bytes
            )),
        ));
    }
    let text = std::str::from_utf8(bytes).map_err(|err| {
        Rejection::answer(
            None,
            ErrorObject::parse_error(format!(
                "Parse error: invalid UTF-8 at byte {}",
                err.valid_up_to()
            )),
        )
    })?;
    if let Err(offset) = check_depth(bytes, limits.max_depth) {
        return Err(Rejection::answer(
            None,
            ErrorObject::invalid_request(format!(
                "Invalid request: nesting deeper than {} levels (at byte {offset})",
                limits.max_depth
            )),
        ));
    }
    Ok(text)
}

/// A message's members as either reader found them, for `classify`.
pub(super) struct Parts {
    pub(super) jsonrpc_ok: bool,
    pub(super) id: Option<Value>,
    pub(super) method: Option<Result<String, ()>>,
    pub(super) params: Option<Value>,
    pub(super) result: Option<Value>,
    pub(super) error: Option<Value>,
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

pub(super) fn classify(parts: Parts) -> Result<Inbound, Rejection> {
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
    fn plain_calls_skip_the_tree_and_read_as_any_request() {
        let limits = Limits::default();
        let plain = [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}"#,
            r#"{"method":"tools/call","params":{"arguments":{"a":[1,{"b":null}]},"name":"e\u0063ho"},"id":"x","jsonrpc":"2.0"}"#,
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":null}}"#,
            r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"echo","_meta":{"progressToken":7}}}"#,
        ];
        for text in plain {
            let Parsed::Call(call) = parse_inbound(text.as_bytes(), &limits) else {
                panic!("not a plain call: {text}")
            };
            // The same request the ordinary path reads, tree and all.
            let tree: Value = serde_json::from_str(text).unwrap();
            assert_eq!(Ok(call.into_inbound()), classify_value(tree), "{text}");
        }
        let ordinary = [
            // Another member, a wrong type, or no id: the ordinary path says what it is.
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","task":{}}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":[1]}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":5}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":null,"method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"id":1,"method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"echo"}}"#,
        ];
        for text in ordinary {
            let Parsed::Frame(Frame::Single(parsed)) = parse_inbound(text.as_bytes(), &limits)
            else {
                panic!("not one ordinary message: {text}")
            };
            let tree: Value = serde_json::from_str(text).unwrap();
            assert_eq!(parsed, classify_value(tree), "{text}");
        }
    }

    #[test]
    fn odd_envelopes_read_as_their_tree_says() {
        // Each is read as the whole frame's tree is: no member read twice, a repeated member
        // refused by the fast read, `null` never taken for an absent member.
        let limits = Limits::default();
        let cases = [
            r#"{"jsonrpc":"2.0","id":1,"method":null}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","params":{"name":"echo"},"id":1,"method":"tools/call"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/call","params":{"name":"echo"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":[1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo"},"x":[1]}"#,
        ];
        for text in cases {
            let parsed = match parse_inbound(text.as_bytes(), &limits) {
                Parsed::Call(call) => Ok(call.into_inbound()),
                Parsed::Frame(Frame::Single(parsed)) => parsed,
                Parsed::Frame(Frame::Batch(_)) => panic!("a batch: {text}"),
            };
            let tree: Value = serde_json::from_str(text).unwrap();
            assert_eq!(parsed, classify_value(tree), "{text}");
        }
        // `method: null` is no method at all, never a response.
        let err = single(r#"{"jsonrpc":"2.0","id":1,"method":null,"result":{}}"#).unwrap_err();
        assert_eq!(err.error.code, ErrorCode::INVALID_REQUEST);
        // A JSON array is a batch, never one message read by position.
        let err = single("[]").unwrap_err();
        assert_eq!(err.error.message, "Invalid request: empty batch");
        let Frame::Batch(items) = parse_frame(br#"["2.0",1,"ping"]"#, &limits) else {
            panic!("not a batch")
        };
        assert!(items.iter().all(Result::is_err));
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
