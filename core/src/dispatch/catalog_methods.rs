//! The session side of resources, prompts and completion: listing with pagination, reading,
//! subscriptions, rendering prompts, completing arguments.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use serde_json::{Value, json};

use super::SessionShared;
use super::call;
use super::call::id_in_flight;
use super::context::CallState;
use super::modern::{Binding, Envelope, ModernRound};
use super::paging::write_page;
use super::responder::Responder;
use super::visibility::{Asker, Hidden, candidates, if_visible, screen};
use crate::catalog::visibility::{CatalogItem, Guarded};
use crate::catalog::{self, CompletionRequest, PromptRequest, Reference, ResourceRequest};
use crate::handler::{Context, ToolError};
use crate::protocol::ProtocolVersion;
use crate::protocol::method::{Family, Method};
use crate::wire::{ErrorCode, ErrorObject, RequestId, json_text};

pub(crate) fn handle(
    session: &Arc<SessionShared>,
    responder: Responder,
    method: Method,
    params: Option<Value>,
    version: ProtocolVersion,
    modern: Option<Arc<Envelope>>,
) {
    let catalog = &session.server.catalog;
    // A capability the server does not have (nothing of that kind registered) is -32601.
    let offered = match method.family() {
        Family::Resources => catalog.has_resources(),
        Family::Prompts => catalog.has_prompts(),
        Family::Completion => catalog.has_completers(),
        Family::Skills => catalog.has_skills(),
        Family::Lifecycle | Family::Tools | Family::Logging => false,
    };
    if !offered {
        return responder.error(ErrorObject::method_not_found(method.name()));
    }
    let page_size = session.server.options.page_size;
    let stream = responder.out().stream().cloned();
    let asker = Asker {
        stream: stream.as_ref(),
        modern: modern.as_deref(),
    };
    match method {
        Method::ResourcesList => {
            let items = catalog::snapshot(&catalog.resources);
            let skills = catalog.skills.snapshot();
            let views = catalog.views.snapshot();
            let mut candidates = candidates(catalog, items.iter(), |r| &r.def);
            candidates.extend(super::visibility::candidates(
                catalog,
                views.iter(),
                |view| view.resource(),
            ));
            if skills.is_empty() && views.is_empty() {
                return screen(session, asker, candidates, move |hidden| {
                    answer_page(
                        responder,
                        &items,
                        params.as_ref(),
                        page_size,
                        "resources",
                        &hidden,
                        |r| r.def.to_json(version),
                    )
                });
            }
            screen(session, asker, candidates, move |hidden| {
                // Each skill's SKILL.md and each listed view beside the resources, in one URI
                // order.
                let mut merged: BTreeMap<String, Listed<'_>> = items
                    .iter()
                    .map(|(uri, r)| (uri.clone(), Listed::Resource(&r.def)))
                    .collect();
                merged.extend(
                    skills
                        .listed
                        .iter()
                        .map(|(uri, r)| (uri.clone(), Listed::Resource(r))),
                );
                merged.extend(
                    views
                        .iter()
                        .filter(|(_, view)| view.is_listed())
                        .map(|(uri, view)| (uri.clone(), Listed::View(view))),
                );
                answer_page(
                    responder,
                    &merged,
                    params.as_ref(),
                    page_size,
                    "resources",
                    &hidden,
                    |listed| match listed {
                        Listed::Resource(r) => r.to_json(version),
                        Listed::View(view) => view.listing(version),
                    },
                )
            })
        }
        Method::SkillsList => {
            let skills = catalog.skills.snapshot();
            answer_page(
                responder,
                &skills.skills,
                params.as_ref(),
                page_size,
                "skills",
                &Hidden::new(),
                |s| s.entry.clone(),
            )
        }
        Method::SkillsGet => {
            let Some(uri) = string_param(params.as_ref(), "uri") else {
                return responder.error(ErrorObject::invalid_params(
                    "Invalid params: \"uri\" must be a string",
                ));
            };
            match catalog.skills.snapshot().entry(&uri) {
                Some(entry) => responder.result(&json!({ "skill": entry })),
                None => responder.error(
                    ErrorObject::invalid_params(format!("No skill is served at {uri}"))
                        .with_data(crate::skills::uri_data(&uri)),
                ),
            }
        }
        Method::ResourcesDirectoryRead => {
            let Some(uri) = string_param(params.as_ref(), "uri") else {
                return responder.error(ErrorObject::invalid_params(
                    "Invalid params: \"uri\" must be a string",
                ));
            };
            let skills = catalog.skills.snapshot();
            let Some(children) = skills.directory(&uri) else {
                return responder.error(
                    ErrorObject::invalid_params(format!("{uri} is not a directory resource"))
                        .with_data(crate::skills::uri_data(&uri)),
                );
            };
            answer_page(
                responder,
                children,
                params.as_ref(),
                page_size,
                "resources",
                &Hidden::new(),
                crate::skills::Child::listing,
            )
        }
        Method::ResourceTemplatesList => {
            let items = catalog::snapshot(&catalog.templates);
            let candidates = candidates(catalog, items.iter(), |t| &t.def);
            screen(session, asker, candidates, move |hidden| {
                answer_page(
                    responder,
                    &items,
                    params.as_ref(),
                    page_size,
                    "resourceTemplates",
                    &hidden,
                    |t| t.def.to_json(version),
                )
            })
        }
        Method::PromptsList => {
            let items = catalog::snapshot(&catalog.prompts);
            let candidates = candidates(catalog, items.iter(), |p| &p.def);
            screen(session, asker, candidates, move |hidden| {
                answer_page(
                    responder,
                    &items,
                    params.as_ref(),
                    page_size,
                    "prompts",
                    &hidden,
                    |p| p.def.to_json(version),
                )
            })
        }
        Method::ResourcesRead => read(session, responder, params, modern),
        Method::ResourcesSubscribe | Method::ResourcesUnsubscribe => {
            let Some(uri) = string_param(params.as_ref(), "uri") else {
                return responder.error(ErrorObject::invalid_params(
                    "Invalid params: \"uri\" must be a string",
                ));
            };
            let mut subscriptions = session.subscriptions();
            if method == Method::ResourcesSubscribe {
                subscriptions.insert(uri);
            } else {
                subscriptions.remove(&uri);
            }
            drop(subscriptions);
            responder.result(&json!({}));
        }
        Method::PromptsGet => get_prompt(session, responder, params, modern),
        Method::CompletionComplete => complete(session, responder, params, modern),
        // Routed elsewhere by the router; never offered here.
        Method::Initialize
        | Method::Ping
        | Method::ToolsList
        | Method::ToolsCall
        | Method::LoggingSetLevel
        | Method::ServerDiscover
        | Method::SubscriptionsListen
        | Method::TasksGet
        | Method::TasksUpdate
        | Method::TasksCancel => {}
    }
}

/// An entry of `resources/list`: a registered resource (or a skill's SKILL.md), or a view.
enum Listed<'a> {
    Resource(&'a catalog::Resource),
    View(&'a crate::apps::UiResource),
}

fn string_param(params: Option<&Value>, key: &str) -> Option<String> {
    params?.get(key)?.as_str().map(str::to_owned)
}

/// `{"k": "v", …}` → map; `None` if any value is not a string.
fn string_map(value: Option<&Value>) -> Option<BTreeMap<String, String>> {
    match value {
        None | Some(Value::Null) => Some(BTreeMap::new()),
        Some(Value::Object(map)) => map
            .iter()
            .map(|(k, v)| Some((k.clone(), v.as_str()?.to_owned())))
            .collect(),
        Some(_) => None,
    }
}

/// Not found: -32002 in the legacy era; 2026-07-28 retired that code for -32602.
fn not_found(uri: &str, modern: bool) -> ErrorObject {
    let code = if modern {
        ErrorCode::INVALID_PARAMS
    } else {
        ErrorCode::RESOURCE_NOT_FOUND
    };
    ErrorObject::new(code, "Resource not found").with_data(json!({"uri": uri}))
}

/// Opens the round of a prompt or read, or answers the refusal of its state.
fn open_round(
    session: &SessionShared,
    modern: Option<Arc<Envelope>>,
    params: Option<&Value>,
    binding: Binding,
) -> Result<Option<ModernRound>, ErrorObject> {
    let Some(envelope) = modern else {
        return Ok(None);
    };
    let empty = serde_json::Map::new();
    let params = params.and_then(Value::as_object).unwrap_or(&empty);
    ModernRound::open(&session.server, envelope, params, binding).map(Some)
}

/// Answers a handler's input-required error: the questions in a modern round; in a legacy
/// session, an error (the handler can ask there with `ctx.elicit` and wait).
fn answer_input(
    session: &SessionShared,
    responder: Responder,
    modern: Option<&ModernRound>,
    asked: crate::InputRequired,
) {
    match modern {
        Some(m) => m.answer_input_required(&session.server, responder, Some(asked)),
        None => responder.error(ErrorObject::internal(
            "Internal error: the handler asked for input the 2026-07-28 way in a session of an earlier protocol version",
        )),
    }
}

/// Answers with one page of `items`, each rendered to JSON straight into the answer's frame.
fn answer_page<V>(
    responder: Responder,
    items: &BTreeMap<String, V>,
    params: Option<&Value>,
    page_size: Option<usize>,
    list_key: &str,
    hidden: &Hidden,
    render: impl Fn(&V) -> Value,
) {
    // Resource and prompt entries are rendered per request, so their length is not known
    // up front: a few kilobytes, grown as needed.
    responder.result_written(4096, |json| {
        write_page(
            json,
            items,
            params,
            page_size,
            list_key,
            hidden,
            |item, json| json.push_str(&json_text(&render(item))),
        )
    });
}

fn read(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    modern: Option<Arc<Envelope>>,
) {
    let Some(uri) = string_param(params.as_ref(), "uri") else {
        return responder.error(ErrorObject::invalid_params(
            "Invalid params: \"uri\" must be a string",
        ));
    };
    let is_modern = modern.is_some();
    // A skill's file: the bytes read when it was registered, answered at once.
    if let Some(file) = session.server.catalog.skills.snapshot().file(&uri) {
        return responder.result(&json!({ "contents": [file.contents()] }));
    }
    let catalog = &session.server.catalog;
    if catalog.screens() {
        // The first that serves it and that the request may see: its view, its fixed
        // resource, each template that matches.
        let mut serving: Vec<(CatalogItem, Serving)> = Vec::new();
        if let Some(view) = catalog.views.get(&uri) {
            serving.push((view.resource().item(), Serving::View(view)));
        }
        serving.extend(
            catalog
                .resources_serving(&uri)
                .into_iter()
                .map(|found| (found.item.clone(), Serving::Found(found))),
        );
        let keys: Vec<String> = (0..serving.len()).map(|at| at.to_string()).collect();
        let candidates = candidates(catalog, keys.iter().zip(serving.iter()), |(item, _)| item);
        let task_session = session.clone();
        let envelope = modern.clone();
        let stream = responder.out().stream().cloned();
        let asker = Asker {
            stream: stream.as_ref(),
            modern: envelope.as_deref(),
        };
        return screen(session, asker, candidates, move |hidden| {
            let visible = serving
                .into_iter()
                .enumerate()
                .find(|(at, _)| !hidden.contains(&at.to_string()))
                .map(|(_, (_, serving))| serving);
            match visible {
                Some(Serving::View(view)) => responder.result(&view.read()),
                Some(Serving::Found(found)) => {
                    read_found(&task_session, responder, params, modern, uri, found)
                }
                None => responder.error(not_found(&uri, is_modern)),
            }
        });
    }
    // An MCP Apps view: its document, with its `_meta.ui`.
    if let Some(view) = catalog.views.get(&uri) {
        return responder.result(&view.read());
    }
    let Some(found) = catalog.find_resource(&uri) else {
        return responder.error(not_found(&uri, is_modern));
    };
    read_found(session, responder, params, modern, uri, found);
}

/// What serves a URI a request reads.
enum Serving {
    View(Arc<crate::apps::UiResource>),
    Found(catalog::FoundResource),
}

/// Reads `uri` from what serves it.
fn read_found(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    modern: Option<Arc<Envelope>>,
    uri: String,
    found: catalog::FoundResource,
) {
    let is_modern = modern.is_some();
    let binding = Binding::new(
        "resources/read",
        &uri,
        &Value::Null,
        session.principal.as_deref(),
    );
    let round = match open_round(session, modern, params.as_ref(), binding) {
        Ok(round) => round,
        Err(error) => return responder.error(error),
    };
    let live = match LiveRequest::open(session, &responder, params.as_ref(), &uri, round) {
        Ok(live) => live,
        Err(error) => return responder.error(error),
    };
    let task_session = session.clone();
    call::run_task(session, async move {
        let session = task_session;
        let (input_responses, request_state) = live.answers();
        let request = ResourceRequest {
            uri: uri.clone(),
            variables: found.variables,
            mime_type: found.mime_type,
            input_responses,
            request_state,
            ctx: Some(live.context()),
        };
        let read = live.run(&session, || found.handler.read(request)).await;
        let (true, Some(read)) = (live.finish(&session, responder.id()), read) else {
            return responder.suppress();
        };
        match read {
            Ok(contents) => responder.result(&json!({ "contents": contents })),
            Err(mut err) if err.input_required().is_some() => {
                let asked = err.take_input_required().unwrap_or_default();
                answer_input(&session, responder, live.round(), asked);
            }
            Err(err) if err.is_not_found() => responder.error(not_found(&uri, is_modern)),
            Err(err) => responder.error(handler_error(&err, || format!("Reading {uri} failed"))),
        }
    });
}

fn get_prompt(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    modern: Option<Arc<Envelope>>,
) {
    let Some(name) = string_param(params.as_ref(), "name") else {
        return responder.error(ErrorObject::invalid_params(
            "Invalid params: \"name\" must be a string",
        ));
    };
    let Some(prompt) = catalog::snapshot(&session.server.catalog.prompts)
        .get(&name)
        .cloned()
    else {
        return responder.error(ErrorObject::invalid_params(format!(
            "Unknown prompt: {name}"
        )));
    };
    let unknown = format!("Unknown prompt: {name}");
    let task_session = session.clone();
    let envelope = modern.clone();
    let guard = prompt.clone();
    if_visible(
        session,
        envelope.as_deref(),
        &guard.def,
        responder,
        move || ErrorObject::invalid_params(unknown),
        move |responder| render_prompt(&task_session, responder, params, modern, name, prompt),
    );
}

/// Renders a prompt the request may see.
fn render_prompt(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    modern: Option<Arc<Envelope>>,
    name: String,
    prompt: Arc<catalog::RegisteredPrompt>,
) {
    let Some(arguments) = string_map(params.as_ref().and_then(|p| p.get("arguments"))) else {
        return responder.error(ErrorObject::invalid_params(
            "Invalid params: prompt \"arguments\" must be an object of strings",
        ));
    };
    let missing: Vec<&str> = prompt
        .def
        .arguments
        .iter()
        .filter(|a| a.required && !arguments.contains_key(&a.name))
        .map(|a| a.name.as_str())
        .collect();
    if !missing.is_empty() {
        return responder.error(ErrorObject::invalid_params(format!(
            "Invalid params: prompt {name:?} needs the argument(s) {}",
            missing.join(", ")
        )));
    }
    if let Some(unknown) = arguments
        .keys()
        .find(|k| !prompt.def.arguments.iter().any(|a| &a.name == *k))
    {
        return responder.error(ErrorObject::invalid_params(format!(
            "Invalid params: prompt {name:?} takes no argument {unknown:?}"
        )));
    }
    if let Some(checks) = &prompt.checks {
        let violations = checks.violations(&arguments);
        if !violations.is_empty() {
            return responder.error(ErrorObject::invalid_params(
                crate::registry::invalid_prompt_arguments_text(&name, &violations),
            ));
        }
    }
    let binding = Binding::new(
        "prompts/get",
        &name,
        &json!(arguments),
        session.principal.as_deref(),
    );
    let round = match open_round(session, modern, params.as_ref(), binding) {
        Ok(round) => round,
        Err(error) => return responder.error(error),
    };
    let live = match LiveRequest::open(session, &responder, params.as_ref(), &name, round) {
        Ok(live) => live,
        Err(error) => return responder.error(error),
    };
    let task_session = session.clone();
    call::run_task(session, async move {
        let session = task_session;
        let (input_responses, request_state) = live.answers();
        let request = PromptRequest {
            name: name.clone(),
            arguments,
            input_responses,
            request_state,
            ctx: Some(live.context()),
        };
        let rendered = live.run(&session, || prompt.handler.get(request)).await;
        let (true, Some(rendered)) = (live.finish(&session, responder.id()), rendered) else {
            return responder.suppress();
        };
        match rendered {
            Ok(result) => responder.result(&result.to_json()),
            Err(mut err) if err.input_required().is_some() => {
                let asked = err.take_input_required().unwrap_or_default();
                answer_input(&session, responder, live.round(), asked);
            }
            Err(err) => responder.error(handler_error(&err, || format!("Prompt {name:?} failed"))),
        }
    });
}

fn complete(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    modern: Option<Arc<Envelope>>,
) {
    let params = params.unwrap_or(Value::Null);
    let reference = match (
        params.pointer("/ref/type").and_then(Value::as_str),
        params.pointer("/ref/name").and_then(Value::as_str),
        params.pointer("/ref/uri").and_then(Value::as_str),
    ) {
        (Some("ref/prompt"), Some(name), _) => Reference::Prompt(name.to_owned()),
        (Some("ref/resource"), _, Some(uri)) => Reference::ResourceTemplate(uri.to_owned()),
        _ => {
            return responder.error(ErrorObject::invalid_params(
                "Invalid params: \"ref\" must be {type: \"ref/prompt\", name} or {type: \"ref/resource\", uri}",
            ));
        }
    };
    let (Some(argument), Some(value)) = (
        params.pointer("/argument/name").and_then(Value::as_str),
        params.pointer("/argument/value").and_then(Value::as_str),
    ) else {
        return responder.error(ErrorObject::invalid_params(
            "Invalid params: \"argument\" must be {name, value} (strings)",
        ));
    };
    let Some(context) = string_map(params.pointer("/context/arguments")) else {
        return responder.error(ErrorObject::invalid_params(
            "Invalid params: \"context.arguments\" must be an object of strings",
        ));
    };
    let catalog = &session.server.catalog;
    let completion = Completing {
        argument: argument.to_owned(),
        value: value.to_owned(),
        context,
        reference,
    };
    let guard = match &completion.reference {
        _ if !catalog.screens() => None,
        Reference::Prompt(name) => catalog::snapshot(&catalog.prompts)
            .get(name)
            .map(|p| p.def.item()),
        Reference::ResourceTemplate(uri) => catalog::snapshot(&catalog.templates)
            .get(uri)
            .map(|t| t.def.item()),
    };
    match guard {
        Some(guard) => {
            let unknown = no_such(&completion.reference);
            let task_session = session.clone();
            let envelope = modern.clone();
            if_visible(
                session,
                envelope.as_deref(),
                &guard,
                responder,
                move || unknown,
                move |responder| {
                    complete_visible(&task_session, responder, &params, modern, completion)
                },
            )
        }
        _ => complete_visible(session, responder, &params, modern, completion),
    }
}

/// A completion request, read.
struct Completing {
    reference: Reference,
    argument: String,
    value: String,
    context: BTreeMap<String, String>,
}

/// The answer to a completion of a prompt or template that does not exist (or is hidden).
fn no_such(reference: &Reference) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "Invalid params: no such {}",
        match reference {
            Reference::Prompt(name) => format!("prompt {name:?}"),
            Reference::ResourceTemplate(uri) => format!("resource template {uri:?}"),
        }
    ))
}

/// Completes an argument of a prompt or template the request may see.
fn complete_visible(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: &Value,
    modern: Option<Arc<Envelope>>,
    completion: Completing,
) {
    let Completing {
        reference,
        argument,
        value,
        context,
    } = completion;
    let (argument, value) = (argument.as_str(), value.as_str());
    let catalog = &session.server.catalog;
    let known = match &reference {
        Reference::Prompt(name) => catalog::snapshot(&catalog.prompts)
            .get(name)
            .map(|p| p.def.arguments.iter().any(|a| a.name == argument)),
        Reference::ResourceTemplate(uri) => catalog::snapshot(&catalog.templates)
            .get(uri)
            .map(|t| t.pattern.has_variable(argument)),
    };
    match known {
        None => return responder.error(no_such(&reference)),
        Some(false) => {
            return responder.error(ErrorObject::invalid_params(format!(
                "Invalid params: {argument:?} is not an argument of {reference:?}"
            )));
        }
        Some(true) => {}
    }
    // Nothing to suggest is an empty list, not an error; with no completer, a prompt
    // argument's `enum` is what there is to suggest.
    let Some(completer) = catalog.completer(&reference) else {
        let from_enum = match &reference {
            Reference::Prompt(name) => catalog::snapshot(&catalog.prompts)
                .get(name)
                .and_then(|p| p.checks.as_ref()?.complete(argument, value)),
            Reference::ResourceTemplate(_) => None,
        };
        let completion = from_enum.map(catalog::Completion::new).unwrap_or_default();
        return responder.result(&completion.to_json());
    };
    // 2026-07-28: the request's own client info and capabilities reach the completer's context.
    let round = modern.map(|envelope| {
        let binding = Binding::new(
            "completion/complete",
            argument,
            &Value::Null,
            session.principal.as_deref(),
        );
        ModernRound::without_input(envelope, binding)
    });
    let live = match LiveRequest::open(session, &responder, Some(params), argument, round) {
        Ok(live) => live,
        Err(error) => return responder.error(error),
    };
    let request = CompletionRequest {
        reference,
        argument: argument.to_owned(),
        value: value.to_owned(),
        context,
        ctx: Some(live.context()),
    };
    let task_session = session.clone();
    call::run_task(session, async move {
        let session = task_session;
        let completed = live.run(&session, || completer.complete(request)).await;
        let (true, Some(completed)) = (live.finish(&session, responder.id()), completed) else {
            return responder.suppress();
        };
        match completed {
            Ok(completion) => responder.result(&completion.to_json()),
            // The 2026-07-28 spec lets only tools, prompts and reads answer input_required.
            Err(err) if err.input_required().is_some() || live.asked_for_input() => responder
                .error(ErrorObject::internal(
                    "Completion failed: completion/complete cannot ask the client for input",
                )),
            Err(err) => responder.error(handler_error(&err, || "Completion failed".to_owned())),
        }
    });
}

/// The JSON-RPC error for a failed resource, prompt or completion handler: its own code and
/// message when it raised a protocol error (e.g. -32602 for arguments its schema refused),
/// else -32603 with `what` before its message.
fn handler_error(err: &ToolError, what: impl FnOnce() -> String) -> ErrorObject {
    match err.protocol_code() {
        Some(code) => ErrorObject::new(ErrorCode(code), err.message().to_owned()),
        None => ErrorObject::internal(format!("{}: {}", what(), err.message())),
    }
}

/// A resource read, prompt or completion in flight, with the [`Context`] its handler gets:
/// registered like a tool call, so `notifications/cancelled` reaches it (its handler is then
/// dropped and it gets no answer) and another request cannot take its id meanwhile.
struct LiveRequest {
    call: Arc<CallState>,
    serial: u64,
}

impl LiveRequest {
    /// `name` is what the context calls the handler's name (a URI, a prompt, an argument).
    /// A 2026-07-28 request's `round` goes to the context (its client info, capabilities and
    /// answers are the request's own).
    fn open(
        session: &Arc<SessionShared>,
        responder: &Responder,
        params: Option<&Value>,
        name: &str,
        round: Option<ModernRound>,
    ) -> Result<Self, ErrorObject> {
        let Some((serial, cancel)) = session.register_call(responder.id()) else {
            return Err(id_in_flight(responder.id()));
        };
        let call = CallState::new(
            session.clone(),
            responder.out().stream().cloned(),
            responder.id().clone(),
            name.to_owned(),
            cancel,
            round.map(Box::new),
            params.and_then(|p| p.get("_meta")),
        );
        Ok(LiveRequest { call, serial })
    }

    fn round(&self) -> Option<&ModernRound> {
        self.call.modern.as_deref()
    }

    /// 2026-07-28 MRTR: what the client answered this round, and the state it carried back.
    fn answers(&self) -> (serde_json::Map<String, Value>, Option<String>) {
        match self.round() {
            Some(m) => (m.round.responses.clone(), m.round.carried.user.clone()),
            None => Default::default(),
        }
    }

    fn context(&self) -> Context {
        Context::new(self.call.clone())
    }

    /// Whether the handler asked the client something this 2026-07-28 round (`ctx.elicit` & co.).
    fn asked_for_input(&self) -> bool {
        self.round()
            .is_some_and(|m| !m.round.pending().requests.is_empty())
    }

    /// Runs the handler's work, made once the server's lifespan runs, until it is done or
    /// the request is cancelled (then the work is dropped, as a cancelled tool call's is, and
    /// there is nothing to answer). A lifespan that failed to start is the handler's error.
    async fn run<T, W: Future<Output = Result<T, ToolError>>>(
        &self,
        session: &SessionShared,
        work: impl FnOnce() -> W,
    ) -> Option<Result<T, ToolError>> {
        let lifespan = &session.server.lifespan;
        let _inside = if lifespan.is_set() {
            match super::lifespan::call_inside(lifespan, &self.call.cancel).await? {
                Ok(inside) => Some(inside),
                Err(failed) => return Some(Err(ToolError::new(failed.to_string()))),
            }
        } else {
            None
        };
        tokio::select! {
            biased;
            () = self.call.cancel.for_call() => None,
            done = work() => Some(done),
        }
    }

    /// Ends it; false when it was cancelled meanwhile (then it gets no answer).
    fn finish(&self, session: &SessionShared, id: &RequestId) -> bool {
        self.call.finish();
        session.finish_call(id, self.serial)
    }
}
