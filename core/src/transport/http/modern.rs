//! A 2026-07-28 POST: one request, no session. Its headers are checked against its body, it
//! is answered by a session that lives for this exchange alone, as JSON or as a stream of
//! its own notifications then its answer; the client closing that stream cancels it.
#![allow(
    clippy::result_large_err,
    reason = "the Err side is the refusal to send, built once on a rare path"
)]

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use hyper::StatusCode;
use hyper::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::Value;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::body::SseBody;
use super::forward::{drain_ready, last_frame};
use super::headers::VERSION_HEADER;
use super::replies::{Reply, accepted, json_reply, sse_response};
use crate::catalog::visibility::{Guarded, Viewer};
use crate::dispatch::modern::{PROTOCOL_VERSION_KEY, check_required_keys, unsupported_version};
use crate::dispatch::{RequestStream, StreamItem, StreamReceiver};
use crate::registry::ParamKind;
use crate::wire::{ErrorCode, ErrorObject, Frame, Inbound, RequestId, error_frame};
use crate::{Server, Session};

static METHOD_HEADER: HeaderName = HeaderName::from_static("mcp-method");
static NAME_HEADER: HeaderName = HeaderName::from_static("mcp-name");

/// The HTTP status of a JSON-RPC error on the modern path: one table.
pub(super) fn status_of(code: ErrorCode) -> StatusCode {
    match code.0 {
        -32601 => StatusCode::NOT_FOUND,
        -32700 | -32600 | -32602 | -32020 | -32021 | -32022 => StatusCode::BAD_REQUEST,
        -32603 => StatusCode::INTERNAL_SERVER_ERROR,
        _ => StatusCode::OK,
    }
}

/// The status for an answer frame: its error's, or 200.
fn status_of_answer(frame: &str) -> StatusCode {
    // Only error answers are parsed; a result is 200 whatever it contains.
    if !frame.contains("\"error\":{\"code\":") {
        return StatusCode::OK;
    }
    serde_json::from_str::<Value>(frame)
        .ok()
        .and_then(|v| v.get("error")?.get("code")?.as_i64())
        .and_then(|code| i32::try_from(code).ok())
        .map_or(StatusCode::OK, |code| status_of(ErrorCode(code)))
}

fn error_reply(id: Option<&RequestId>, error: &ErrorObject) -> Reply {
    json_reply(status_of(error.code), error_frame(id, error))
}

fn mismatch(message: String) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::HEADER_MISMATCH,
        format!("Header mismatch: {message}"),
    )
}

/// A header's value as the body should have it: trimmed, and decoded from the
/// `=?base64?…?=` form. `Err` for characters a header cannot carry or malformed base64.
pub(super) fn header_text(value: &HeaderValue) -> Result<Cow<'_, str>, &'static str> {
    let text = value
        .to_str()
        .map_err(|_| "characters a header value cannot carry")?
        .trim_matches([' ', '\t']);
    let Some(encoded) = text
        .strip_prefix("=?base64?")
        .and_then(|rest| rest.strip_suffix("?="))
    else {
        return Ok(Cow::Borrowed(text));
    };
    let bytes = STANDARD.decode(encoded).map_err(|_| "malformed base64")?;
    String::from_utf8(bytes)
        .map(Cow::Owned)
        .map_err(|_| "base64 of something that is not UTF-8")
}

/// One header against the value the body has for it.
fn expect_header(headers: &HeaderMap, name: &HeaderName, body: &str) -> Result<(), ErrorObject> {
    let mut values = headers.get_all(name).iter();
    let (Some(value), None) = (values.next(), values.next()) else {
        return Err(mismatch(format!(
            "{name} must be sent once, equal to the body's {body:?}"
        )));
    };
    match header_text(value) {
        Ok(text) if *text == *body => Ok(()),
        Ok(text) => Err(mismatch(format!(
            "{name} is {text:?}, the body says {body:?}"
        ))),
        Err(why) => Err(mismatch(format!("{name} has {why}"))),
    }
}

/// Whether the server's visibility rule hides the tool a `tools/call` names from `who`: asked
/// only for a tool whose arguments are mirrored in headers (whose check would otherwise tell
/// that it exists) and whose requirements `who` meets. The rule then sees the request's
/// client info and version as the call itself will.
async fn rule_hides_tool(
    server: &Server,
    method: &str,
    params: Option<&Value>,
    who: &Viewer,
) -> bool {
    let catalog = &server.inner.catalog;
    if method != "tools/call" || catalog.policy().is_none() {
        return false;
    }
    // Through the tool search's `call_tool`, the tool it calls.
    let Some((name, _)) = crate::dispatch::search::called_tool(&server.inner, params) else {
        return false;
    };
    let Some(tool) = server.inner.registry.get(name) else {
        return false;
    };
    if tool.param_headers.is_empty()
        || !who.meets(&tool.def.required_scopes, &tool.def.required_tags)
    {
        return false;
    }
    let Ok(envelope) = crate::dispatch::modern::read_envelope(params, server.options().modern_only)
    else {
        return false;
    };
    let mut viewer = who.clone();
    viewer.client_info = envelope.client_info;
    viewer.protocol_version = Some(envelope.version);
    let candidates = vec![(String::new(), tool.def.item())];
    !crate::dispatch::visibility::hidden(catalog, &viewer, candidates)
        .await
        .is_empty()
}

/// The headers of a modern request against its body: the version, the method, the target
/// and the arguments the tool mirrors in `Mcp-Param-*` headers.
pub(super) fn check_headers(
    server: &Server,
    headers: &HeaderMap,
    method: &str,
    params: Option<&Value>,
    who: &Viewer,
    rule_hides_tool: bool,
) -> Result<(), ErrorObject> {
    let version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str)
        .unwrap_or_default();
    expect_header(headers, &VERSION_HEADER, version)?;
    expect_header(headers, &METHOD_HEADER, method)?;
    let string = |key: &str| params.and_then(|p| p.get(key)).and_then(Value::as_str);
    let target = match method {
        "tools/call" | "prompts/get" => string("name"),
        "resources/read" => string("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => string("taskId"),
        _ => None,
    };
    if let Some(target) = target {
        expect_header(headers, &NAME_HEADER, target)?;
    }
    // A tool only an MCP Apps view calls is unknown to a request that renders no views: its
    // headers are not checked either (their refusal would say the tool is there).
    let renders_apps = || {
        params
            .and_then(|p| p.pointer("/_meta/io.modelcontextprotocol~1clientCapabilities"))
            .is_some_and(crate::protocol::apps::renders)
    };
    // A call through the tool search's `call_tool` mirrors the arguments of the tool it calls,
    // as a direct call of it would: a gateway reading the headers is not bypassed.
    let called = match method {
        "tools/call" => crate::dispatch::search::called_tool(&server.inner, params),
        _ => None,
    };
    if let Some((name, arguments)) = called
        && let Some(tool) = server.inner.registry.get(name)
        && (!tool.app_only || renders_apps())
        && who.meets(&tool.def.required_scopes, &tool.def.required_tags)
        && !rule_hides_tool
    {
        for mirrored in &tool.param_headers {
            let value = arguments
                .and_then(|a| a.get(&mirrored.property))
                .filter(|v| !v.is_null());
            let header = headers.get(mirrored.header.as_str());
            match (value, header) {
                (None, None) => {}
                (None, Some(_)) => {
                    return Err(mismatch(format!(
                        "{} is sent but the argument {:?} is not",
                        mirrored.header, mirrored.property
                    )));
                }
                (Some(_), None) => {
                    return Err(mismatch(format!(
                        "{} is missing for the argument {:?}",
                        mirrored.header, mirrored.property
                    )));
                }
                (Some(value), Some(header)) => {
                    let text = header_text(header)
                        .map_err(|why| mismatch(format!("{} has {why}", mirrored.header)))?;
                    if !param_matches(mirrored.kind, value, &text) {
                        return Err(mismatch(format!(
                            "{} is {text:?}, the argument {:?} is {value}",
                            mirrored.header, mirrored.property
                        )));
                    }
                }
            }
        }
    }
    Ok(())
}

fn param_matches(kind: ParamKind, value: &Value, header: &str) -> bool {
    match kind {
        ParamKind::String => value.as_str() == Some(header),
        ParamKind::Integer => match (value.as_i64(), header.parse::<i64>()) {
            (Some(a), Ok(b)) => a == b,
            _ => value
                .as_f64()
                .zip(header.parse::<f64>().ok())
                .is_some_and(|(a, b)| a == b),
        },
        ParamKind::Boolean => {
            value.as_bool().map(|b| if b { "true" } else { "false" }) == Some(header)
        }
    }
}

/// Whether a POST is for the modern era: its body claims it, or its version header is there
/// and names no handshake version (the ladder then says what is wrong: a body without
/// `_meta` gets -32602, an unknown version -32022, each with its id).
pub(super) fn is_modern(headers: &HeaderMap, frame: &Frame) -> bool {
    let claims = match frame {
        Frame::Single(Ok(Inbound::Request { params, .. }))
        | Frame::Single(Ok(Inbound::Notification { params, .. })) => {
            crate::dispatch::modern::claims_modern(params.as_ref())
        }
        _ => false,
    };
    claims
        || headers.get(&VERSION_HEADER).is_some_and(|value| {
            value
                .to_str()
                .ok()
                .and_then(|v| crate::protocol::ProtocolVersion::parse_handshake(v.trim()))
                .is_none()
        })
}

/// How the endpoint answers: its SSE keep-alive, the frames an answer stream may have waiting
/// for a slow client, and whether it answers in JSON only.
pub(super) struct Answers {
    pub(super) keep_alive: Option<std::time::Duration>,
    pub(super) backlog: usize,
    pub(super) json_only: bool,
}

/// Serves one modern POST.
pub(super) async fn post(
    server: &Server,
    headers: &HeaderMap,
    frame: Frame,
    who: Viewer,
    stop: &CancellationToken,
    answers: Answers,
) -> Reply {
    let Answers {
        keep_alive,
        backlog,
        json_only,
    } = answers;
    let (id, method, params) = match frame {
        Frame::Single(Ok(Inbound::Request { id, method, params })) => (id, method, params),
        // No connection state: a notification (even a cancel) changes nothing here.
        Frame::Single(Ok(_)) => return accepted(),
        Frame::Single(Err(rejection)) => {
            return error_reply(rejection.id.as_ref(), &rejection.error);
        }
        Frame::Batch(_) => {
            return error_reply(
                None,
                &ErrorObject::invalid_request(
                    "Invalid request: 2026-07-28 has no batches; send one request per POST",
                ),
            );
        }
    };
    // A version header nobody speaks, on a body that claims nothing: the version is the error.
    let header = headers
        .get(&VERSION_HEADER)
        .and_then(|v| v.to_str().ok())
        .map(str::trim);
    if let Some(text) = header
        && crate::protocol::ProtocolVersion::parse(text).is_none()
        && !crate::dispatch::modern::claims_modern(params.as_ref())
    {
        return error_reply(
            Some(&id),
            &unsupported_version(&Value::from(text), server.options().modern_only),
        );
    }
    if let Err(error) = check_required_keys(params.as_ref()) {
        return error_reply(Some(&id), &error);
    }
    let hidden = rule_hides_tool(server, &method, params.as_ref(), &who).await;
    if let Err(error) = check_headers(server, headers, &method, params.as_ref(), &who, hidden) {
        return error_reply(Some(&id), &error);
    }
    let Ok(session) = Session::for_modern_exchange(server, who) else {
        return error_reply(
            Some(&id),
            &ErrorObject::internal("Internal error: no runtime"),
        );
    };
    // A client that goes away (the body or the whole exchange dropped) cancels the request.
    let guard = CloseOnDrop(session.clone());
    let (stream, mut items) = RequestStream::new(1, false);
    session.handle_parsed(
        Frame::Single(Ok(Inbound::Request { id, method, params })),
        Some(stream),
    );
    let mut ready = match drain_ready(&mut items) {
        Ok(answer) => return json_reply(status_of_answer(&answer), answer),
        Err(ready) => ready,
    };
    // A server that answers in JSON only: what precedes the answer has nowhere to go.
    if json_only {
        let answer = last_frame(ready, &mut items, drop).await;
        drop(guard);
        return match answer {
            Some(answer) => json_reply(status_of_answer(&answer), answer),
            None => accepted(),
        };
    }
    // Nothing yet: the response waits for its first frame. An answer that comes first is JSON
    // with its own status (a -32021 from a handler that ran a while is still a 400); anything
    // else first makes it a stream.
    if ready.is_empty() {
        match items.recv().await {
            StreamItem::Frame(frame) => match items.try_recv() {
                Some(StreamItem::End) => return json_reply(status_of_answer(&frame), frame),
                next => {
                    ready.push(StreamItem::Frame(frame));
                    ready.extend(next);
                }
            },
            StreamItem::Release => ready.push(StreamItem::Release),
            // Cancelled with nothing said (the server is stopping): no answer to give.
            StreamItem::End => return accepted(),
        }
    }
    let (tx, chunks) = mpsc::unbounded_channel();
    let pending = Arc::new(AtomicUsize::new(0));
    let body = SseBody::new(chunks, keep_alive).counting(pending.clone());
    let stop = stop.clone();
    tokio::spawn(async move {
        let _guard = guard;
        stream_out(&session, ready, items, &tx, &pending, backlog, &stop).await;
    });
    sse_response(body.counted(server.inner.metrics.stream_opened()))
}

/// Forwards the exchange's frames to its SSE body until the answer, the client's going, or a
/// client too slow to take `backlog` frames.
async fn stream_out(
    session: &Session,
    ready: Vec<StreamItem>,
    mut items: StreamReceiver,
    tx: &mpsc::UnboundedSender<bytes::Bytes>,
    pending: &AtomicUsize,
    backlog: usize,
    stop: &CancellationToken,
) {
    let send = |item: StreamItem| -> bool {
        match item {
            StreamItem::Frame(frame) => {
                if pending.load(Ordering::Acquire) >= backlog {
                    tracing::warn!(backlog, "ended a stream whose client took nothing");
                    return false;
                }
                pending.fetch_add(1, Ordering::AcqRel);
                tx.send(super::sse::event("", None, &frame)).is_ok()
            }
            StreamItem::Release => true,
            StreamItem::End => false,
        }
    };
    for item in ready {
        if !send(item) {
            return;
        }
    }
    let mut stopping = false;
    loop {
        tokio::select! {
            item = items.recv() => if !send(item) { return },
            () = tx.closed() => return,
            () = stop.cancelled(), if !stopping => {
                // The server is ending: long-lived answers (listen) close gracefully.
                stopping = true;
                session.begin_drain();
            }
        }
    }
}

struct CloseOnDrop(Session);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        if self.0.calls_in_flight() > 0 {
            tracing::debug!("call cancelled by the client (it closed the request's stream)");
        }
        self.0.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn header_values_are_trimmed_and_decoded() {
        let text =
            |s: &str| header_text(&HeaderValue::from_str(s).expect("value")).map(Cow::into_owned);
        assert_eq!(text("  tools/call ").as_deref(), Ok("tools/call"));
        assert_eq!(text("=?base64?w6lsw6g=?=").as_deref(), Ok("élè"));
        assert!(text("=?base64?w6lsw6g?=").is_err(), "padding");
        assert!(text("=?base64?***?=").is_err(), "alphabet");
        assert_eq!(
            text("=?base64?").as_deref(),
            Ok("=?base64?"),
            "no sentinel: literal"
        );
    }

    #[test]
    fn parameters_compare_by_their_kind() {
        assert!(param_matches(
            ParamKind::Integer,
            &serde_json::json!(42),
            "42"
        ));
        assert!(param_matches(
            ParamKind::Integer,
            &serde_json::json!(42),
            "042"
        ));
        assert!(!param_matches(
            ParamKind::Integer,
            &serde_json::json!(42),
            "43"
        ));
        assert!(param_matches(
            ParamKind::Boolean,
            &serde_json::json!(true),
            "true"
        ));
        assert!(!param_matches(
            ParamKind::String,
            &serde_json::json!("Eu"),
            "eu"
        ));
    }

    #[test]
    fn an_app_only_tool_s_headers_are_not_checked_for_a_request_that_renders_no_views() {
        let html = "<!DOCTYPE html><p>v</p>";
        let schema = serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}});
        let server = Server::builder("apps", "1")
            .ui_resource(crate::UiResource::new("ui://apps/v.html", "v", html))
            .tool(
                crate::Tool::new("tick")
                    .input_schema(schema)
                    .visibility(&[crate::Visibility::App]),
                |_: crate::Context, _: Value| async {
                    Ok::<_, crate::ToolError>(crate::ToolOutput::text("x"))
                },
            )
            .build()
            .expect("server");
        let mut headers = HeaderMap::new();
        headers.insert(&VERSION_HEADER, HeaderValue::from_static("2026-07-28"));
        headers.insert(&METHOD_HEADER, HeaderValue::from_static("tools/call"));
        headers.insert(&NAME_HEADER, HeaderValue::from_static("tick"));
        let params = |caps: Value| {
            serde_json::json!({"name": "tick", "arguments": {"region": "eu"}, "_meta": {
                PROTOCOL_VERSION_KEY: "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": caps}})
        };
        let blind = params(serde_json::json!({}));
        assert!(
            check_headers(
                &server,
                &headers,
                "tools/call",
                Some(&blind),
                &Viewer::default(),
                false,
            )
            .is_ok(),
            "no Mcp-Param refusal that would give the hidden tool away"
        );
        let renders = params(serde_json::json!({"extensions": {
            "io.modelcontextprotocol/ui": {"mimeTypes": ["text/html;profile=mcp-app"]}}}));
        let refused = check_headers(
            &server,
            &headers,
            "tools/call",
            Some(&renders),
            &Viewer::default(),
            false,
        );
        assert!(
            refused.is_err(),
            "its missing Mcp-Param-Region is refused where it is known"
        );
    }

    #[test]
    fn a_call_through_the_tool_search_mirrors_the_called_tool_s_arguments() {
        let schema = serde_json::json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}});
        let server = Server::builder("search", "1")
            .tool(
                crate::Tool::new("tick").input_schema(schema),
                |_: crate::Context, _: Value| async {
                    Ok::<_, crate::ToolError>(crate::ToolOutput::text("x"))
                },
            )
            .tool_search(crate::ToolSearch::new())
            .build()
            .expect("server");
        let mut headers = HeaderMap::new();
        headers.insert(&VERSION_HEADER, HeaderValue::from_static("2026-07-28"));
        headers.insert(&METHOD_HEADER, HeaderValue::from_static("tools/call"));
        headers.insert(&NAME_HEADER, HeaderValue::from_static("call_tool"));
        let params = serde_json::json!({"name": "call_tool",
            "arguments": {"name": "tick", "arguments": {"region": "eu"}},
            "_meta": {PROTOCOL_VERSION_KEY: "2026-07-28"}});
        let check = |headers: &HeaderMap| {
            check_headers(
                &server,
                headers,
                "tools/call",
                Some(&params),
                &Viewer::default(),
                false,
            )
        };
        assert!(check(&headers).is_err(), "Mcp-Param-Region is missing");
        headers.insert("mcp-param-region", HeaderValue::from_static("us"));
        assert!(check(&headers).is_err(), "Mcp-Param-Region contradicts it");
        headers.insert("mcp-param-region", HeaderValue::from_static("eu"));
        assert!(check(&headers).is_ok());
    }

    #[test]
    fn the_status_table() {
        assert_eq!(status_of(ErrorCode(-32601)), StatusCode::NOT_FOUND);
        assert_eq!(status_of(ErrorCode(-32022)), StatusCode::BAD_REQUEST);
        assert_eq!(
            status_of_answer(r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32021,"message":"m"}}"#),
            StatusCode::BAD_REQUEST
        );
        assert_eq!(
            status_of_answer(
                r#"{"jsonrpc":"2.0","id":1,"result":{"t":"\"error\":{\"code\":-32601"}}"#
            ),
            StatusCode::OK
        );
    }
}
