//! A POST: its preflight (what it accepts, its media type, its body), the session it is for
//! (found, or opened by an `initialize`), and its answer (JSON or an SSE stream); a stateless
//! endpoint's POST on a throwaway session.
#![allow(
    clippy::result_large_err,
    reason = "the Err side is the refusal to send, built once on a rare path"
)]

use std::sync::Arc;
use std::time::Duration;

use hyper::header::HeaderValue;
use hyper::{HeaderMap, Request, StatusCode};
use serde_json::Value;

use super::ResponseMode;
use super::endpoint::{Connection, Endpoint, RequestBody, session_gone};
use super::forward::{as_items, drain_ready, forward, last_frame};
use super::headers::{
    SESSION_HEADER, accepts, header_version, is_json, read_body, text_header, trace_into_meta,
};
use super::modern;
use super::replies::{Reply, accepted, closing_refusal, json_or_accepted, json_reply, refusal};
use super::sessions::{Client, HttpSession};
use super::sse::SseStream;
use crate::Session;
use crate::catalog::visibility::Viewer;
use crate::dispatch::RequestStream;
use crate::metrics::Limit;
use crate::protocol::ProtocolVersion;
use crate::wire::{Frame, Inbound, error_frame, parse_frame};

pub(super) async fn post(
    endpoint: &Endpoint,
    connection: &Connection,
    request: Request<impl RequestBody>,
    who: Viewer,
) -> Reply {
    let (parts, body) = request.into_parts();
    let headers = &parts.headers;
    let waited = parts.extensions.get::<BodyWaited>().map(|w| w.0);
    let frame = match preflight(endpoint, headers, body, waited.unwrap_or_default()).await {
        Ok(frame) => frame,
        Err(reply) => return reply,
    };
    // The body decides the era (a request naming its version in `_meta`), not the session.
    if modern::is_modern(headers, &frame) {
        return modern::post(
            &endpoint.server,
            headers,
            frame,
            who,
            &endpoint.stop,
            modern::Answers {
                keep_alive: endpoint.options.sse_keep_alive,
                backlog: endpoint.server.inner.options.listen_backlog,
                json_only: endpoint.options.response_mode == ResponseMode::Json,
            },
        )
        .await;
    }
    let version = match header_version(headers) {
        Ok(version) => version,
        Err(reply) => return reply,
    };
    if let Frame::Single(Err(rejection)) = &frame {
        return json_reply(
            StatusCode::BAD_REQUEST,
            error_frame(rejection.id.as_ref(), &rejection.error),
        );
    }
    // What re-opens the session on another replica, kept if the store is shared.
    let initialize_params = match &frame {
        Frame::Single(Ok(Inbound::Request { method, params, .. })) if method == "initialize" => {
            Some(params.clone().unwrap_or(Value::Null))
        }
        _ => None,
    };
    if endpoint.options.stateless {
        return post_stateless(endpoint, frame, version, initialize_params.is_some(), who).await;
    }
    let session_id = text_header(headers, &SESSION_HEADER);
    let http_session = match session_for(
        endpoint,
        connection,
        session_id,
        initialize_params.is_some(),
        who.subject.clone(),
    ) {
        Ok(session) => session,
        Err(reply) => return reply,
    };
    // Each request's token decides what it sees (its stream carries it, so that another request
    // of the session with another token is not answered as this one); the session follows the
    // latest token for what it is told of changes.
    let who = endpoint.options.auth.is_some().then(|| Arc::new(who));
    if let Some(who) = &who {
        http_session.session.identify(Viewer::clone(who));
    }
    let created = session_id.is_none();
    // Held until the new session is listed too: an idle session may be evicted to make room.
    let Some(_busy) = http_session.begin_request() else {
        return session_gone();
    };
    let reply = answer(endpoint, &http_session, frame, who).await;
    if !created {
        return reply;
    }
    if http_session.session.protocol_version().is_none() {
        // initialize failed: the client saw why; no session was opened.
        http_session.terminate();
        return reply;
    }
    admit(endpoint, &http_session, reply, initialize_params)
}

/// What every POST must be before its body is read (it accepts our answers, it is JSON), then
/// the body, read within its bounds and parsed.
async fn preflight(
    endpoint: &Endpoint,
    headers: &HeaderMap,
    body: impl RequestBody,
    waited: Duration,
) -> Result<Frame, Reply> {
    let needs_sse = endpoint.options.response_mode != ResponseMode::Json;
    if !accepts(headers, "application/json")
        || (needs_sse && !accepts(headers, "text/event-stream"))
    {
        let wanted = if needs_sse {
            "application/json and text/event-stream"
        } else {
            "application/json"
        };
        return Err(refusal(
            StatusCode::NOT_ACCEPTABLE,
            &format!("Not Acceptable: the client must accept {wanted}"),
        ));
    }
    if !is_json(headers) {
        return Err(refusal(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "Unsupported Media Type: the body must be application/json",
        ));
    }
    let read = read_body(body, endpoint.max_body);
    let body = match endpoint.options.body_read_timeout {
        // A body that came with its head is read before the deadline is ever armed.
        // A host that waited for the body first (a mounted endpoint's) used up that much of it.
        Some(limit) => tokio::time::timeout(limit.saturating_sub(waited), read)
            .await
            .unwrap_or_else(|_| {
                Err(closing_refusal(
                    StatusCode::REQUEST_TIMEOUT,
                    "Request Timeout: the body did not come in time",
                ))
            }),
        None => read.await,
    }?;
    Ok(trace_into_meta(
        parse_frame(&body, &endpoint.server.inner.limits),
        headers,
    ))
}

/// The session a POST is for: the one its header names, or a new one for an `initialize`.
/// The session limits are checked once initialize has succeeded, when the session is listed
/// (`admit`): a full table may make room then (see `SessionTable::insert`).
fn session_for(
    endpoint: &Endpoint,
    connection: &Connection,
    session_id: Option<&str>,
    initialize: bool,
    owner: Option<String>,
) -> Result<Arc<HttpSession>, Reply> {
    if let Some(id) = session_id {
        return connection.session(id, owner.as_deref());
    }
    if !initialize {
        return Err(refusal(
            StatusCode::BAD_REQUEST,
            "Bad Request: Mcp-Session-Id header is required",
        ));
    }
    let client = Client::new(owner.as_deref(), connection.peer);
    HttpSession::open(
        &endpoint.server,
        owner,
        client,
        endpoint.options.event_store.clone(),
        endpoint.options.sse_retry,
        None,
    )
}

/// Hands the frame to the session and answers: 202 when it holds no request, else JSON or an
/// SSE stream as the response mode and the answers' readiness decide.
/// The caller holds the session busy meanwhile.
async fn answer(
    endpoint: &Endpoint,
    http_session: &Arc<HttpSession>,
    frame: Frame,
    who: Option<Arc<Viewer>>,
) -> Reply {
    let session = &http_session.session;
    let answers = session.answers_expected(&frame);
    if answers == 0 {
        session.handle_parsed(frame, None);
        return accepted();
    }
    let (stream, mut items) = RequestStream::new(answers, true);
    if let Some(who) = who {
        stream.set_viewer(who);
    }
    session.handle_parsed(frame, Some(stream));
    match (endpoint.options.response_mode, drain_ready(&mut items)) {
        (ResponseMode::Json, ready) => {
            let standalone = &http_session.standalone;
            let answer = last_frame(as_items(ready), &mut items, |f| standalone.push(&f));
            json_or_accepted(answer.await)
        }
        (ResponseMode::Auto, Ok(answer)) => json_reply(StatusCode::OK, answer),
        (_, ready) => endpoint.answer_sse(http_session, as_items(ready), items),
    }
}

/// Lists a session its `initialize` opened, making room if the limits allow, and names it in
/// the reply; or ends it and answers the refusal instead.
fn admit(
    endpoint: &Endpoint,
    http_session: &Arc<HttpSession>,
    mut reply: Reply,
    initialize_params: Option<Value>,
) -> Reply {
    let limits = endpoint.session_limits();
    let admission = endpoint.sessions.insert(http_session.clone(), limits);
    let evicted = match admission.into_result(limits) {
        Ok(evicted) => evicted,
        Err(refused) => {
            endpoint.server.inner.metrics.refused(Limit::Sessions);
            http_session.terminate();
            return refused;
        }
    };
    if let Some(evicted) = evicted {
        // Debug, not info: a greedy client makes one per session it opens.
        tracing::debug!(
            session = %evicted.id,
            client = ?evicted.client,
            "ended an idle session to make room for a new one"
        );
        evicted.terminate();
    }
    if let Ok(value) = HeaderValue::from_str(&http_session.id) {
        reply.headers_mut().insert(SESSION_HEADER.clone(), value);
    }
    let record = serde_json::json!({
        "owner": http_session.owner,
        "initialize": initialize_params,
    });
    endpoint
        .options
        .event_store
        .remember_session(&http_session.id, &record.to_string());
    reply
}

/// One POST on its own: a throwaway session, initialized as the version header says.
async fn post_stateless(
    endpoint: &Endpoint,
    frame: Frame,
    version: Option<ProtocolVersion>,
    initialize: bool,
    who: Viewer,
) -> Reply {
    let Ok(session) = Session::for_one_exchange(&endpoint.server, who) else {
        return refusal(StatusCode::INTERNAL_SERVER_ERROR, "no runtime");
    };
    if !initialize {
        session.assume_initialized(version.unwrap_or(ProtocolVersion::V2025_03_26));
    }
    let answers = session.answers_expected(&frame);
    if answers == 0 {
        session.handle_parsed(frame, None);
        return accepted();
    }
    let (stream, mut items) = RequestStream::new(answers, false);
    session.handle_parsed(frame, Some(stream));
    let ready = match (endpoint.options.response_mode, drain_ready(&mut items)) {
        (ResponseMode::Sse, ready) => as_items(ready),
        (_, Ok(answer)) => return json_reply(StatusCode::OK, answer),
        // What precedes the answer has nowhere to go without a session.
        (ResponseMode::Json, Err(ready)) => {
            return json_or_accepted(last_frame(ready, &mut items, drop).await);
        }
        (_, Err(ready)) => ready,
    };
    let sse = SseStream::new("s".into(), None, endpoint.options.sse_retry);
    let reply = endpoint.sse_reply(&sse, false);
    tokio::spawn(async move {
        forward(&sse, ready, items).await;
        sse.end();
        drop(session);
    });
    reply
}

/// How long a host waited for a request's body before handing the request over (a request
/// extension): the body timeout counts it.
#[derive(Clone, Copy, Debug)]
pub(crate) struct BodyWaited(pub(crate) Duration);
