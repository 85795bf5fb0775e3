//! The router: each inbound message to its handler, through the one method table.

use std::sync::Arc;

use serde_json::{Value, json};

use super::lifecycle;
use super::middleware::{Middleware, Observer, RequestInfo, Verdict, WaitingSlot, decide};
use super::modern;
use super::modern::EraChoice;
use super::outbound::OutboundSender;
use super::paging::write_page;
use super::responder::{BatchCollector, ReplyTarget, Responder};
use super::visibility::{Asker, Hidden, candidates, screen};
use super::{SessionShared, call};
use crate::protocol::ProtocolVersion;
use crate::protocol::method::Method;
use crate::wire::{ErrorObject, Frame, Inbound, PlainCall, RequestId, error_frame};

pub(super) fn dispatch_frame(session: &Arc<SessionShared>, frame: Frame, out: &OutboundSender) {
    match frame {
        Frame::Single(Ok(message)) => dispatch(session, message, ReplyTarget::Direct, out),
        Frame::Single(Err(rejection)) => {
            if rejection.reply {
                out.answer(Some(error_frame(rejection.id.as_ref(), &rejection.error)));
            } else {
                tracing::debug!(reason = %rejection.error.message, "dropped an unanswerable message");
            }
        }
        Frame::Batch(items) => dispatch_batch(session, items, out),
    }
}

/// A plain `tools/call` in an initialized legacy session with no middleware and no spans
/// wanted, whose `_meta` claims no modern version, goes straight to the call, its `params`
/// never made a tree; any other takes the ordinary path, where each of those is looked at.
pub(super) fn dispatch_plain_call(
    session: &Arc<SessionShared>,
    call: PlainCall,
    out: &OutboundSender,
) {
    let legacy = match session.negotiated.get() {
        Some(negotiated)
            if !modern::meta_claims_modern(call.meta.as_ref())
                && !session.modern.load(std::sync::atomic::Ordering::Acquire)
                && !session.server.options.modern_only
                && session.server.middleware.current().is_none()
                && !super::trace::spans_wanted() =>
        {
            negotiated.version
        }
        _ => return dispatch(session, call.into_inbound(), ReplyTarget::Direct, out),
    };
    let metered = session.server.metrics.request("tools/call");
    let responder = Responder::new(out.clone(), call.id, ReplyTarget::Direct).metered(metered);
    let arguments = match call.arguments {
        None | Some(Value::Null) => Value::Object(serde_json::Map::new()),
        Some(arguments) => arguments,
    };
    // `_meta` (a progress token, a trace context) is the only other member a plain call has.
    let mut params = serde_json::Map::new();
    if let Some(meta) = call.meta {
        params.insert("_meta".to_owned(), meta);
    }
    call::start_parsed(
        session, responder, call.name, arguments, params, legacy, None,
    );
}

fn dispatch(
    session: &Arc<SessionShared>,
    message: Inbound,
    target: ReplyTarget,
    out: &OutboundSender,
) {
    match message {
        Inbound::Request { id, method, params } => {
            let metered = session.server.metrics.request(&method);
            let span = super::trace::request_span(&session.server, &method, params.as_ref(), &id);
            // Entered while the request is dispatched: the work it spawns carries it on.
            let _entered = (!span.is_disabled()).then(|| span.clone().entered());
            let responder = Responder::new(out.clone(), id, target)
                .metered(metered)
                .traced(span);
            // The session (initialize) and discovery come before any rule of the host's.
            if let Some(middlewares) = session.server.middleware.current()
                && method != "initialize"
                && method != "server/discover"
            {
                return through_middleware(session, middlewares, responder, method, params);
            }
            handle_request(session, responder, &method, params);
        }
        Inbound::Notification { method, params } => handle_notification(session, &method, params),
        Inbound::Result { id, result } => {
            if !session.peer.resolve(&id, Ok(result)) {
                tracing::debug!(%id, "ignored a response to no request of ours");
            }
        }
        Inbound::Error {
            id: Some(id),
            error,
        } => {
            if !session.peer.resolve(&id, Err(error)) {
                tracing::debug!(%id, "ignored an error response to no request of ours");
            }
        }
        Inbound::Error { id: None, error } => {
            tracing::warn!(code = %error.code, message = %error.message, "the client reported an error");
        }
    }
}

fn dispatch_batch(
    session: &Arc<SessionShared>,
    items: Vec<Result<Inbound, crate::wire::Rejection>>,
    out: &OutboundSender,
) {
    let version = session.negotiated.get().map(|n| n.version);
    if !session.batches_allowed() {
        let modern = session.modern.load(std::sync::atomic::Ordering::Acquire);
        let why = match version {
            None if modern => {
                "Invalid request: 2026-07-28 has no batches; send each request alone".into()
            }
            Some(version) => {
                format!("Invalid request: batches are not supported in protocol version {version}")
            }
            None => "Invalid request: a batch cannot carry initialize; send it alone".into(),
        };
        out.answer(Some(error_frame(None, &ErrorObject::invalid_request(why))));
        return;
    }
    let answers = items
        .iter()
        .filter(|item| match item {
            Ok(Inbound::Request { .. }) => true,
            Ok(_) => false,
            Err(rejection) => rejection.reply,
        })
        .count();
    let collector = BatchCollector::new(out.clone(), answers.max(1));
    for item in items {
        match item {
            Ok(Inbound::Request { id, method, .. }) if method == "initialize" => {
                Responder::new(out.clone(), id, ReplyTarget::Batch(collector.clone())).error(
                    ErrorObject::invalid_request(
                        "Invalid request: initialize must not be part of a batch",
                    ),
                );
            }
            Ok(message) => {
                dispatch(session, message, ReplyTarget::Batch(collector.clone()), out);
            }
            Err(rejection) if rejection.reply => {
                collector.complete(Some(error_frame(rejection.id.as_ref(), &rejection.error)));
            }
            Err(_) => {}
        }
    }
}

/// The request past the middlewares' `before` (inline when none of them awaits, so the
/// session's order holds), then handled; their `after` hears how it ended.
fn through_middleware(
    session: &Arc<SessionShared>,
    middlewares: Arc<[Arc<dyn Middleware>]>,
    responder: Responder,
    method: String,
    params: Option<Value>,
) {
    let params = super::search::as_called(&session.server, &method, params);
    let modern = matches!(
        modern::era_for(session, &method, params.as_ref()),
        EraChoice::Modern
    );
    let version = if modern {
        Some(ProtocolVersion::V2026_07_28)
    } else {
        session.negotiated.get().map(|n| n.version)
    };
    let request = Arc::new(RequestInfo::new(
        &method,
        params.as_ref(),
        responder.id(),
        session.principal.as_deref(),
        version,
    ));
    let responder = responder.observed(Observer::new(middlewares.clone(), request.clone()));
    let mut deciding = Box::pin(async move { decide(&middlewares, &request).await });
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    // In the session's runtime: a middleware may spawn (a Rust `Around` runs as a task), and a
    // session fed from a thread of the host's own is outside it.
    let first_poll = {
        let _runtime = session.runtime.enter();
        deciding.as_mut().poll(&mut cx)
    };
    if let std::task::Poll::Ready(verdict) = first_poll {
        // Decided at once (no middleware awaited): handled now, in the session's order.
        return after_verdict(session, verdict, responder, &method, params, modern);
    }
    // A middleware awaits. Meanwhile the request counts as waiting, against the bound all
    // waiting calls share, and is in flight, so a cancel or the session's end reaches it.
    let Some(waiting) = WaitingSlot::take(&session.server) else {
        session.server.metrics.refused(crate::metrics::Limit::Calls);
        let busy = ErrorObject::new(
            crate::wire::ErrorCode(-32000),
            "Server busy: too many requests wait for middleware; retry later".to_owned(),
        );
        return responder.error(busy);
    };
    let id = responder.id().clone();
    let Some((serial, cancel)) = session.register_call(&id) else {
        return responder.error(call::id_in_flight(&id));
    };
    let task_session = session.clone();
    call::run_task(session, async move {
        let session = task_session;
        let verdict = tokio::select! {
            biased;
            () = cancel.for_call() => None,
            verdict = deciding => Some(verdict),
        };
        drop(waiting);
        match (session.finish_call(&id, serial), verdict) {
            (true, Some(verdict)) => {
                after_verdict(&session, verdict, responder, &method, params, modern);
            }
            // Cancelled by the client or the session's end: no answer.
            _ => responder.suppress(),
        }
    });
}

fn after_verdict(
    session: &Arc<SessionShared>,
    verdict: Verdict,
    responder: Responder,
    method: &str,
    params: Option<Value>,
    modern: bool,
) {
    match verdict {
        Verdict::Continue => handle_request(session, responder, method, params),
        Verdict::Refuse(error) => responder.refused().error(error),
        Verdict::ToolError(text) if method == "tools/call" => {
            let responder = responder.refused();
            let responder = if modern {
                responder.stamped(session.server.modern_stamp.clone(), false)
            } else {
                responder
            };
            responder.result(&json!({
                "content": [{"type": "text", "text": text}],
                "isError": true,
            }));
        }
        Verdict::ToolError(text) => responder.refused().error(ErrorObject::internal(text)),
    }
}

fn handle_request(
    session: &Arc<SessionShared>,
    responder: Responder,
    method: &str,
    params: Option<Value>,
) {
    match modern::era_for(session, method, params.as_ref()) {
        EraChoice::Legacy => {}
        EraChoice::Modern => return modern::handle_modern(session, responder, method, params),
        EraChoice::Refuse(error) => return responder.error(error),
    }
    // Methods of 2026-07-28 alone do not exist in a legacy session.
    let known = Method::parse(method).filter(|m| m.is_legacy());
    // tools/call checks its id atomically when it registers; other requests check here.
    if known != Some(Method::ToolsCall) && session.inflight_table().contains_key(responder.id()) {
        let message = format!(
            "Invalid request: id {} is already used by a request in flight",
            responder.id()
        );
        return responder.error(ErrorObject::invalid_request(message));
    }
    let Some(method) = known else {
        return responder.error(ErrorObject::method_not_found(method));
    };
    let version = match method {
        Method::Initialize => return lifecycle::initialize(session, responder, params),
        Method::Ping => return responder.result(&json!({})),
        _ => match session.negotiated.get() {
            Some(negotiated) => negotiated.version,
            None => {
                return responder.error(ErrorObject::invalid_request(
                    "Invalid request: the session is not initialized; send initialize first",
                ));
            }
        },
    };
    match method {
        Method::ToolsCall => call::start(session, responder, params, version, None),
        Method::ToolsList => list_tools(session, responder, params, version, None),
        Method::LoggingSetLevel => lifecycle::set_log_level(session, responder, params),
        catalog => {
            super::catalog_methods::handle(session, responder, catalog, params, version, None)
        }
    }
}

pub(super) fn list_tools(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    version: ProtocolVersion,
    modern: Option<&modern::Envelope>,
) {
    // Each entry is serialised once per version; a page is their concatenation, copied
    // once, straight into the answer's frame. The frame is sized for the first page's
    // entries: exact for a list without a cursor, a hint for a later page.
    let mut tools = session.server.registry.snapshot();
    // Tools only an MCP Apps view calls are not offered to a client that renders none.
    if tools.values().any(|tool| tool.app_only) && session.hides_app_only_tools(modern) {
        tools = Arc::new(
            tools
                .iter()
                .filter(|(_, tool)| !tool.app_only)
                .map(|(name, tool)| (name.clone(), tool.clone()))
                .collect(),
        );
    }
    let search = session.server.search.current();
    if let Some(search) = &search {
        tools = Arc::new(search.listing(&tools));
    }
    let page_size = session.server.options.page_size;
    let mut candidates = candidates(&session.server.catalog, tools.iter(), |tool| &tool.def);
    if let Some(search) = &search {
        // The search's own tools are the engine's: no rule hides them.
        candidates.retain(|(name, _)| !search.settings.is_own(name));
    }
    let stream = responder.out().stream().cloned();
    let asker = Asker {
        stream: stream.as_ref(),
        modern,
    };
    let answer = move |hidden: Hidden| {
        let listed_len: usize = tools
            .iter()
            .filter(|(name, _)| !hidden.contains(*name))
            .take(page_size.unwrap_or(usize::MAX))
            .map(|(_, tool)| tool.listing(version).len() + 1)
            .sum();
        responder.result_written(listed_len + 64, |json| {
            write_page(
                json,
                &tools,
                params.as_ref(),
                page_size,
                "tools",
                &hidden,
                |tool, json| json.push_str(tool.listing(version)),
            )
        });
    };
    screen(session, asker, candidates, answer);
}

fn handle_notification(session: &SessionShared, method: &str, params: Option<Value>) {
    let param = |key: &str| params.as_ref().and_then(|p| p.get(key));
    match method {
        "notifications/initialized" => {
            lifecycle::client_initialized(session);
        }
        "notifications/cancelled" => {
            let Some(id) = param("requestId").and_then(RequestId::from_json) else {
                return;
            };
            let call = session.inflight_table().remove(&id);
            match call {
                Some(call) => {
                    tracing::debug!(%id, reason = ?param("reason"), "call cancelled by the client");
                    call.cancel.cancel();
                }
                None => tracing::debug!(%id, "ignored a cancel for no call in flight"),
            }
        }
        "notifications/progress" => {
            if let Some(token) = param("progressToken") {
                session.peer.touch(token);
            }
        }
        other => tracing::debug!(method = other, "ignored a notification"),
    }
}
