//! `tools/call`: lookup → argument validation → admission → handler under cancel and deadline
//! → output validation → answer (or silence, when cancelled).

use std::future::{Future, poll_fn};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::task::Poll;

use futures_util::FutureExt;
use serde_json::{Map, Value};

use super::SessionShared;
use super::context::CallState;
use super::modern::tasks::{answer_created, extension_missing};
use super::modern::{Binding, Envelope, ModernRound};
use super::responder::Responder;
use crate::InputRequired;
use crate::cancel::CallCancel;
use crate::handler::Context;
use crate::limiter::{Admission, Limiter};
use crate::metrics::{Limit, Metrics};
use crate::protocol::{ProtocolVersion, ToolOutput};
use crate::registry::{RegisteredTool, describe_violations, invalid_arguments_text};
use crate::tasks::{self, Finished, LiveTask, TaskSupport};
use crate::wire::{ErrorObject, RequestId};
use tokio::sync::OwnedSemaphorePermit;

pub(crate) fn start(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    version: ProtocolVersion,
    modern: Option<Arc<Envelope>>,
) {
    let Some(Value::Object(given)) = params else {
        return responder.error(ErrorObject::invalid_params(
            "Invalid params: tools/call needs params with a tool \"name\"",
        ));
    };
    // Taken apart in one pass: cheaper than two `remove`s from the B-tree, and the rest
    // (`_meta`, a modern call's fields) is usually empty.
    let (mut name, mut arguments, mut params) = (None, None, Map::new());
    for (key, value) in given {
        match key.as_str() {
            "name" => name = Some(value),
            "arguments" => arguments = Some(value),
            _ => {
                params.insert(key, value);
            }
        }
    }
    let name = match name {
        Some(Value::String(name)) => name,
        _ => {
            return responder.error(ErrorObject::invalid_params(
                "Invalid params: \"name\" must be a string",
            ));
        }
    };
    let arguments = match arguments {
        None | Some(Value::Null) => Value::Object(Map::new()),
        Some(arguments @ Value::Object(_)) => arguments,
        Some(_) => {
            return responder.error(ErrorObject::invalid_params(
                "Invalid params: \"arguments\" must be an object",
            ));
        }
    };
    start_parsed(session, responder, name, arguments, params, version, modern);
}

/// A call whose `name` and `arguments` (an object) were read; `params` holds its other members.
pub(crate) fn start_parsed(
    session: &Arc<SessionShared>,
    responder: Responder,
    name: String,
    arguments: Value,
    params: Map<String, Value>,
    version: ProtocolVersion,
    modern: Option<Arc<Envelope>>,
) {
    if let Some(search) = session.server.search.current()
        && search.settings.is_own(&name)
    {
        return super::search::call_own(
            session, responder, search, name, arguments, params, version, modern,
        );
    }
    let Some(tool) = session.server.registry.get(&name) else {
        return responder.error(ErrorObject::invalid_params(format!("Unknown tool: {name}")));
    };
    if tool.app_only && session.hides_app_only_tools(modern.as_deref()) {
        return responder.error(ErrorObject::invalid_params(format!("Unknown tool: {name}")));
    }
    if session.server.catalog.screens() {
        return screened_call(
            session, responder, tool, name, arguments, params, version, modern,
        );
    }
    start_visible(
        session, responder, tool, name, arguments, params, version, modern,
    );
}

/// A call of a tool some viewers may not see: started once the request is known to see it;
/// otherwise answered as a call of a tool that does not exist.
#[inline(never)]
#[allow(
    clippy::too_many_arguments,
    reason = "the call's parts, passed on whole"
)]
fn screened_call(
    session: &Arc<SessionShared>,
    responder: Responder,
    tool: Arc<RegisteredTool>,
    name: String,
    arguments: Value,
    params: Map<String, Value>,
    version: ProtocolVersion,
    modern: Option<Arc<Envelope>>,
) {
    let unknown = format!("Unknown tool: {name}");
    let task_session = session.clone();
    let guard = tool.clone();
    let envelope = modern.clone();
    super::visibility::if_visible(
        session,
        envelope.as_deref(),
        &guard.def,
        responder,
        move || ErrorObject::invalid_params(unknown),
        move |responder| {
            start_visible(
                &task_session,
                responder,
                tool,
                name,
                arguments,
                params,
                version,
                modern,
            )
        },
    );
}

/// A call of a tool the request may see.
#[allow(
    clippy::too_many_arguments,
    reason = "the call's parts, passed on whole"
)]
fn start_visible(
    session: &Arc<SessionShared>,
    mut responder: Responder,
    tool: Arc<RegisteredTool>,
    name: String,
    arguments: Value,
    params: Map<String, Value>,
    version: ProtocolVersion,
    modern: Option<Arc<Envelope>>,
) {
    responder.count_tool(tool.series.as_ref());
    let violations = tool.input.violations(&arguments);
    if !violations.is_empty() {
        let text = invalid_arguments_text(&name, &violations);
        return responder.tool_result(&ToolOutput::error(text), version);
    }
    let mut modern = match modern {
        None => None,
        Some(envelope) => match open_modern_call(session, envelope, &name, &arguments, &params) {
            Ok(call) => Some(call),
            Err(error) => return responder.error(error),
        },
    };
    let may_be_task = match (&modern, tool.def.task_support) {
        (None, _) | (_, TaskSupport::Never) => false,
        (Some(call), support) => {
            let declared = tasks::declared(&call.envelope.client_capabilities);
            if support == TaskSupport::Required && !declared {
                return responder.error(extension_missing(&format!(
                    "tool {name:?} runs only as a task; declare the tasks extension"
                )));
            }
            declared
        }
    };
    let Some((serial, cancel)) = session.register_call(responder.id()) else {
        let error = id_in_flight(responder.id());
        return responder.error(error);
    };
    if may_be_task && let Some(call) = &mut modern {
        call.task = Some(LiveTask::new(&session.server.tasks, cancel.clone()));
    }
    let call = CallState::new(
        session.clone(),
        responder.out().stream().cloned(),
        responder.id().clone(),
        name,
        cancel,
        modern,
        params.get("_meta"),
    );
    let task = run(
        session.clone(),
        tool,
        call,
        responder,
        arguments,
        serial,
        version,
    );
    run_task(session, task);
}

/// A request's `_meta.progressToken`, when it is one (a string or an integer).
pub(crate) fn progress_token(meta: Option<&Value>) -> Option<Value> {
    meta.and_then(|meta| meta.get("progressToken"))
        .filter(|token| token.is_string() || token.is_i64() || token.is_u64())
        .cloned()
}

/// The error for a request whose id another request in flight has.
pub(crate) fn id_in_flight(id: &RequestId) -> ErrorObject {
    ErrorObject::invalid_request(format!(
        "Invalid request: id {id} is already used by a request in flight"
    ))
}

/// A 2026-07-28 call's round: out of line, so the legacy path stays small enough to inline.
#[inline(never)]
fn open_modern_call(
    session: &SessionShared,
    envelope: Arc<Envelope>,
    name: &str,
    arguments: &Value,
    params: &Map<String, Value>,
) -> Result<Box<ModernRound>, ErrorObject> {
    let binding = Binding::new("tools/call", name, arguments, session.principal.as_deref());
    ModernRound::open(&session.server, envelope, params, binding).map(Box::new)
}

/// Runs a request's work: polled once right here (a call that finishes at once costs no
/// task spawn, and a host feeding frames from its own thread, a JS event loop, runs its
/// quick handlers on that thread); if pending it goes on as a task (the host's, if it takes
/// them), whose first poll registers its real wake-ups.
pub(crate) fn run_task(session: &SessionShared, work: impl Future<Output = ()> + Send + 'static) {
    // The request's span, when spans are wanted, goes with its work.
    let span = if super::trace::spans_wanted() {
        tracing::Span::current()
    } else {
        tracing::Span::none()
    };
    let mut task = Box::pin(
        session
            .tasks
            .track_future(tracing::Instrument::instrument(work, span)),
    );
    let finished = {
        let _runtime = session.runtime.enter();
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        task.as_mut().poll(&mut cx).is_ready()
    };
    if !finished {
        match &session.spawn_call {
            Some(spawn_call) => spawn_call(task),
            None => {
                session.runtime.spawn(task);
            }
        }
    }
}

/// A call's work. A plain fn returning an `async move` block, not an `async fn`: an async fn
/// keeps its arguments twice in its state (as arguments and as the locals they are moved into),
/// and the Responder alone is 192 bytes. Under 1 KiB, the boxed call is allocated from the
/// allocator's per-thread cache instead of its slower general path (1,232 bytes before).
#[allow(
    clippy::manual_async_fn,
    reason = "an async fn would hold its arguments twice in its state"
)]
fn run(
    session: Arc<SessionShared>,
    tool: Arc<RegisteredTool>,
    call: Arc<CallState>,
    responder: Responder,
    arguments: Value,
    serial: u64,
    version: ProtocolVersion,
) -> impl Future<Output = ()> + Send + 'static {
    async move {
        if let Some(live) = call.modern.as_ref().and_then(|m| m.task.clone()) {
            // Boxed: its state would otherwise grow every call's future, task or not.
            return Box::pin(run_may_be_task(
                session, tool, call, responder, arguments, serial, live,
            ))
            .await;
        }
        let outcome = execute(&session, &tool, &call, arguments).await;
        call.finish();
        // A cancel may land while the handler is finishing (it can even make the handler
        // return early): whether the call was still registered decides, not which future won.
        let cancelled = !session.finish_call(responder.id(), serial);
        if cancelled {
            return responder.suppress();
        }
        answer(&session, &tool, &call, responder, outcome, version);
    }
}

/// Answers a call in its request.
fn answer(
    session: &SessionShared,
    tool: &RegisteredTool,
    call: &CallState,
    responder: Responder,
    outcome: Outcome,
    version: ProtocolVersion,
) {
    match (outcome, &call.modern) {
        (Outcome::Cancelled, _) => responder.suppress(),
        (Outcome::Failed(error), _) => responder.error(*error),
        (Outcome::Answer(output), None) => responder.tool_result(&output, version),
        (Outcome::Input(_), None) => responder.tool_result(
            &ToolOutput::error(format!(
                "Tool {:?} asked for input the 2026-07-28 way in a session of protocol \
                 version {version}; use ctx.elicit (it waits for the answer there)",
                tool.def.name
            )),
            version,
        ),
        (outcome, Some(m)) => answer_modern(session, responder, m, outcome, version),
    }
}

/// A call that may become a task (2026-07-28, the client declared the extension, the tool
/// allows it). It answers in its request if the handler ends within `task_after` without
/// asking anything (a task-only tool's answer then comes as a task already ended), or if it
/// returns `input_required` itself (MRTR rounds come before a task). Otherwise it becomes a
/// task: stored, answered `resultType: "task"`, and the handler runs on, detached from the
/// request, until its outcome is stored.
async fn run_may_be_task(
    session: Arc<SessionShared>,
    tool: Arc<RegisteredTool>,
    call: Arc<CallState>,
    responder: Responder,
    arguments: Value,
    serial: u64,
    live: Arc<LiveTask>,
) {
    let version = ProtocolVersion::V2026_07_28;
    let required = tool.def.task_support == TaskSupport::Required;
    let mut work = std::pin::pin!(execute(&session, &tool, &call, arguments));
    let early = tokio::select! {
        biased;
        outcome = &mut work => Some(outcome),
        () = live.asked() => None,
        () = tokio::time::sleep(session.server.options.task_after) => None,
    };
    let tasks = &session.server.tasks;
    let principal = session.principal.clone();
    let created = match early {
        Some(outcome) => {
            call.finish();
            if !session.finish_call(responder.id(), serial) {
                return responder.suppress();
            }
            let signalled = call.modern.as_ref().is_some_and(|m| m.round.has_signal());
            // A task-only tool's answer comes as a task already ended; anything else (and an
            // answer over a signal, which the request's answer reports) stays in the request.
            let ends_a_task = required
                && match &outcome {
                    Outcome::Answer(_) => !signalled,
                    Outcome::Failed(_) => true,
                    Outcome::Input(_) | Outcome::Cancelled => false,
                };
            if !ends_a_task {
                return answer(&session, &tool, &call, responder, outcome, version);
            }
            let finished = outcome.finished(&tool.def.name);
            match tasks.create(&live, principal, Some(finished)) {
                Ok(record) => return answer_created(&session.server, responder, &record),
                Err(why) => return responder.error(no_task(&why)),
            }
        }
        None => tasks.create(&live, principal, None),
    };
    let record = match created {
        Ok(record) => record,
        Err(why) => {
            call.cancel.cancel();
            session.finish_call(responder.id(), serial);
            return responder.error(no_task(&why));
        }
    };
    // From here the task is the call's: the request's end (a closed stream, the session's
    // close) no longer cancels it; `tasks/cancel` and the task's expiry do.
    session.finish_call(responder.id(), serial);
    answer_created(&session.server, responder, &record);
    // Progress and logs have no request to travel with any more (a progress message becomes
    // the task's status message instead).
    call.finish();
    // The task ends at the latest when it expires, or when its session ends gracefully (stdio:
    // the process is about to exit).
    let outcome = tokio::select! {
        outcome = &mut work => outcome,
        () = tokio::time::sleep(session.server.options.task_ttl) => {
            call.cancel.cancel();
            Outcome::Cancelled
        }
        () = session.draining.cancelled() => {
            call.cancel.cancel();
            Outcome::Cancelled
        }
    };
    let finished = outcome.finished(&tool.def.name);
    tasks.finish(&live, finished);
}

fn no_task(why: &str) -> ErrorObject {
    ErrorObject::internal(format!(
        "Internal error: the call could not become a task: {why}"
    ))
}

/// A 2026-07-28 call's answer: what its round asked for, or its output, stamped.
#[inline(never)]
fn answer_modern(
    session: &SessionShared,
    responder: Responder,
    call: &ModernRound,
    outcome: Outcome,
    version: ProtocolVersion,
) {
    let (explicit, output) = match outcome {
        Outcome::Input(asked) => (Some(*asked), None),
        Outcome::Answer(output) => (None, Some(output)),
        // A JSON-RPC error is answered before this (`answer`).
        Outcome::Cancelled | Outcome::Failed(_) => (None, None),
    };
    let answered_cleanly = output.as_ref().is_some_and(|o| !o.is_error);
    let answer = call.answer_signal(&session.server, responder, explicit, answered_cleanly);
    if let (Some(responder), Some(output)) = (answer, output) {
        responder.tool_result(&output, version);
    }
}

enum Outcome {
    Answer(ToolOutput),
    /// A JSON-RPC error ([`crate::ToolError::protocol`]); boxed, as it is rare and large.
    Failed(Box<ErrorObject>),
    /// The handler needs the client's input first (2026-07-28).
    Input(Box<InputRequired>),
    /// The client (or shutdown) cancelled the call: nothing is sent.
    Cancelled,
}

impl Outcome {
    /// How a task whose handler ended so ends: its answer as the call would have carried it,
    /// or its JSON-RPC error.
    fn finished(self, tool: &str) -> Finished {
        let value = |v: serde_json::Result<Value>| v.unwrap_or_default();
        match self {
            Outcome::Answer(output) => Finished::Completed(value(serde_json::to_value(
                output.as_result(ProtocolVersion::V2026_07_28),
            ))),
            Outcome::Failed(error) => Finished::Failed(value(serde_json::to_value(*error))),
            Outcome::Cancelled => Finished::Cancelled,
            Outcome::Input(_) => {
                Finished::Failed(value(serde_json::to_value(ErrorObject::internal(format!(
                    "Internal error: tool {tool:?} returned input_required inside a task; \
                     ctx.elicit and the like wait for tasks/update there"
                )))))
            }
        }
    }
}

async fn execute(
    session: &SessionShared,
    tool: &RegisteredTool,
    call: &Arc<CallState>,
    arguments: Value,
) -> Outcome {
    // Borrowed from the call state, not cloned: each clone and drop of a token takes its lock.
    let cancel = &call.cancel;
    let name = tool.def.name.as_str();
    let deadline = tool
        .def
        .timeout
        .or(session.server.options.default_tool_timeout);
    let metrics = &session.server.metrics;
    // The lifespan first (when one is set): a call waits while it starts, holding no slot, and
    // outside its own deadline (a slow start is not the tool's time).
    let lifespan = &session.server.lifespan;
    let _inside = if lifespan.is_set() {
        match super::lifespan::call_inside(lifespan, cancel).await {
            None => return Outcome::Cancelled,
            Some(Ok(inside)) => Some(inside),
            Some(Err(failed)) => return Outcome::Answer(ToolOutput::error(failed.to_string())),
        }
    } else {
        None
    };
    let work = async {
        // The session's own limit first: calls past it wait there, holding none of the
        // server's slots, so other sessions are served meanwhile.
        let session_limit = session.call_limiter.as_ref();
        let _session = match admit(metrics, session_limit, cancel, || "this session".into()).await {
            Ok(permit) => permit,
            Err(refused) => return refused,
        };
        // Then the principal's, shared by all its sessions and stateless requests.
        let principal_limit = session.principal_limiter.as_deref();
        let _principal =
            match admit(metrics, principal_limit, cancel, || "this principal".into()).await {
                Ok(permit) => permit,
                Err(refused) => return refused,
            };
        let server_limit = Some(&session.server.call_limiter);
        let _global = match admit(metrics, server_limit, cancel, || "the server".into()).await {
            Ok(permit) => permit,
            Err(refused) => return refused,
        };
        let _per_tool = match admit(metrics, tool.limiter.as_ref(), cancel, || {
            format!("tool {name:?}")
        })
        .await
        {
            Ok(permit) => permit,
            Err(refused) => return refused,
        };
        if cancel.is_cancelled() {
            return None;
        }
        let handler = tool.handler.call(Context::new(call.clone()), arguments);
        let mut handler = std::pin::pin!(AssertUnwindSafe(handler).catch_unwind());
        // Most handlers finish on their first poll, and that needs no waiting for a cancel.
        let outcome = match poll_fn(|cx| Poll::Ready(handler.as_mut().poll(cx))).await {
            Poll::Ready(outcome) => outcome,
            Poll::Pending => tokio::select! {
                biased;
                () = cancel.for_call() => return None,
                outcome = handler => outcome,
            },
        };
        Some(match outcome {
            Ok(Ok(output)) => Outcome::Answer(check_output(tool, output)),
            Ok(Err(mut error)) => match (error.take_input_required(), error.protocol_code()) {
                (Some(asked), _) => Outcome::Input(Box::new(asked)),
                (None, Some(code)) => Outcome::Failed(Box::new(ErrorObject::new(
                    crate::wire::ErrorCode(code),
                    error.message().to_owned(),
                ))),
                (None, None) => Outcome::Answer(ToolOutput::error(error.message())),
            },
            Err(panic) => {
                let detail = panic
                    .downcast_ref::<&str>()
                    .map(|s| (*s).to_owned())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                tracing::error!(tool = name, panic = %detail, "tool handler panicked");
                Outcome::Answer(ToolOutput::error(format!(
                    "Tool {name:?} failed with an internal error"
                )))
            }
        })
    };
    let outcome = match deadline {
        None => work.await,
        // Boxed: a timer is over 100 bytes of every call's state, and most tools have none.
        Some(deadline) => match Box::pin(tokio::time::timeout(deadline, work)).await {
            Ok(outcome) => outcome,
            Err(_) => {
                // The handler's future is dropped; work it handed elsewhere sees the token.
                cancel.cancel();
                Some(Outcome::Answer(ToolOutput::error(format!(
                    "Tool {name:?} timed out after {} ms",
                    deadline.as_millis()
                ))))
            }
        },
    };
    outcome.unwrap_or(Outcome::Cancelled)
}

/// A slot of `limiter` (none to take when there is no limiter), or how the call ends instead:
/// refused as busy (`what` names whose limit, made only then), or `None` when cancelled.
async fn admit(
    metrics: &Metrics,
    limiter: Option<&Limiter>,
    cancel: &CallCancel,
    what: impl FnOnce() -> String,
) -> Result<Option<OwnedSemaphorePermit>, Option<Outcome>> {
    let Some(limiter) = limiter else {
        return Ok(None);
    };
    match limiter.admit(cancel).await {
        Admission::Admitted(permit) => Ok(Some(permit)),
        Admission::Overloaded { limit, max_queued } => {
            metrics.refused(Limit::Calls);
            Err(Some(Outcome::Answer(overloaded(
                &what(),
                limit,
                max_queued,
            ))))
        }
        Admission::Cancelled => Err(None),
    }
}

fn overloaded(what: &str, limit: usize, max_queued: usize) -> ToolOutput {
    ToolOutput::error(format!(
        "Server busy: {what} already has {limit} calls running and {max_queued} waiting; retry later"
    ))
}

/// `structuredContent` must match the declared `outputSchema` (skipped for error results).
fn check_output(tool: &RegisteredTool, output: ToolOutput) -> ToolOutput {
    if output.is_error {
        return output;
    }
    let name = tool.def.name.as_str();
    let Some(schema) = &tool.output else {
        return output;
    };
    let Some(structured) = &output.structured else {
        tracing::error!(
            tool = name,
            "declared an outputSchema but returned no structuredContent"
        );
        return ToolOutput::error(format!(
            "Tool {name:?} declared an outputSchema but returned no structured content"
        ));
    };
    let violations = schema.violations(structured);
    if violations.is_empty() {
        return output;
    }
    tracing::error!(
        tool = name,
        "structuredContent does not match the outputSchema"
    );
    ToolOutput::error(describe_violations(
        &format!("Tool {name:?} returned structured content that does not match its outputSchema:"),
        &violations,
    ))
}
