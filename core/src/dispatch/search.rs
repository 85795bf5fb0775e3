//! Tool search served: the listing a search offers, and calls of its two tools. What the search
//! finds is screened like a list (a viewer never finds what it may not see), and a call through
//! `call_tool` is the named tool's own call: the same lookup, screening, validation, limits,
//! tasks and middleware (which sees the named tool, not `call_tool`).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, RwLock};

use serde_json::{Map, Value};

use super::SessionShared;
use super::modern::Envelope;
use super::responder::Responder;
use super::visibility::{Asker, Hidden, candidates, screen};
use crate::Error;
use crate::handler::{Context, ToolError};
use crate::protocol::{ProtocolVersion, ToolOutput};
use crate::registry::search::{SearchIndex, ToolSearch};
use crate::registry::{RegisteredTool, ToolMap, ToolRegistry, invalid_arguments_text};

/// Whether the server offers its tools through a search, and how.
#[derive(Default)]
pub(crate) struct SearchSwitch {
    /// Read first, so a server without search pays one atomic load per call.
    on: AtomicBool,
    state: RwLock<Option<Arc<SearchState>>>,
}

pub(crate) struct SearchState {
    pub(crate) settings: ToolSearch,
    search_tool: Arc<RegisteredTool>,
    call_tool: Arc<RegisteredTool>,
    /// The index, and which change of the catalog it was built from: built again at the first
    /// search after a change.
    index: Mutex<Option<(u64, Arc<SearchIndex>)>>,
    /// Held while an index is built: searches right after a change wait for one build
    /// instead of each making its own; searches of the index in place never take it.
    building: Mutex<()>,
}

impl SearchSwitch {
    pub(crate) fn current(&self) -> Option<Arc<SearchState>> {
        if !self.on.load(Ordering::Acquire) {
            return None;
        }
        self.state.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Turns the search on with `settings`, or off with `None`. Refused when a registered tool
    /// has one of the search's tools' names.
    pub(crate) fn set(
        &self,
        registry: &ToolRegistry,
        settings: Option<ToolSearch>,
    ) -> Result<(), Error> {
        let state = match settings {
            None => None,
            Some(settings) => {
                settings.check()?;
                let own = |def| {
                    registry
                        .prepare(def, Arc::new(served_by_the_engine))
                        .map(Arc::new)
                };
                Some(Arc::new(SearchState {
                    search_tool: own(settings.search_tool())?,
                    call_tool: own(settings.call_tool())?,
                    settings,
                    index: Mutex::new(None),
                    building: Mutex::new(()),
                }))
            }
        };
        // Checked and set while no tool can be registered: a registration checks `reserves`
        // under the same lock, so a tool and the search never end up with one name.
        registry.while_unchanged(|tools| {
            if let Some(search) = &state
                && let Some(taken) = [
                    &search.settings.search_tool_name,
                    &search.settings.call_tool_name,
                ]
                .into_iter()
                .find(|name| tools.contains_key(*name))
            {
                return Err(Error::InvalidDefinition {
                    kind: "tool search",
                    message: format!(
                        "a registered tool is named {taken:?}; give the search's tool another name"
                    ),
                });
            }
            let on = state.is_some();
            let mut slot = self.state.write().unwrap_or_else(|e| e.into_inner());
            *slot = state;
            // Under the lock: two settings at once leave the flag as the state that won.
            self.on.store(on, Ordering::Release);
            Ok(())
        })
    }

    /// Whether a tool of this name would clash with the search's (asked by a registration
    /// under the registry's lock).
    pub(crate) fn reserves(&self, name: &str) -> bool {
        self.current()
            .is_some_and(|state| state.settings.is_own(name))
    }
}

/// The handler the search's own tools are registered with: never run, as their calls are
/// answered by the engine before any handler is looked for.
async fn served_by_the_engine(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::error("This tool is served by the engine"))
}

impl SearchState {
    /// What `tools/list` offers: the pinned tools there are, and the search's two.
    pub(crate) fn listing(&self, tools: &ToolMap) -> ToolMap {
        let mut listed: ToolMap = self
            .settings
            .pinned
            .iter()
            .filter_map(|name| tools.get_key_value(name))
            .map(|(name, tool)| (name.clone(), tool.clone()))
            .collect();
        for own in [&self.search_tool, &self.call_tool] {
            listed.insert(own.def.name.clone(), own.clone());
        }
        listed
    }

    /// Which setting of the search this is.
    pub(crate) fn generation(&self) -> u64 {
        self.search_tool.generation
    }

    /// The index of `tools` (change `version` of the catalog). Built outside the lock: a
    /// search of the index in place does not wait for a build; a newer index is not replaced
    /// by an older one.
    fn index(&self, version: u64, tools: &ToolMap) -> Arc<SearchIndex> {
        let cached = |version| {
            self.index
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .as_ref()
                .filter(|(built_from, _)| *built_from == version)
                .map(|(_, index)| index.clone())
        };
        if let Some(index) = cached(version) {
            return index;
        }
        let _building = self.building.lock().unwrap_or_else(|e| e.into_inner());
        // Built meanwhile by the search that held the lock.
        if let Some(index) = cached(version) {
            return index;
        }
        let index = Arc::new(SearchIndex::build(tools));
        let mut slot = self.index.lock().unwrap_or_else(|e| e.into_inner());
        if slot
            .as_ref()
            .is_none_or(|(built_from, _)| *built_from < version)
        {
            *slot = Some((version, index.clone()));
        }
        index
    }
}

/// A call of one of the search's tools.
#[allow(
    clippy::too_many_arguments,
    reason = "the call's parts, passed on whole"
)]
pub(crate) fn call_own(
    session: &Arc<SessionShared>,
    responder: Responder,
    search: Arc<SearchState>,
    name: String,
    arguments: Value,
    params: Map<String, Value>,
    version: ProtocolVersion,
    modern: Option<Arc<Envelope>>,
) {
    if name == search.settings.call_tool_name {
        let (name, arguments) = match called(&search, &arguments) {
            Ok(called) => called,
            Err(text) => return responder.tool_result(&ToolOutput::error(text), version),
        };
        return super::call::start_parsed(
            session, responder, name, arguments, params, version, modern,
        );
    }
    find(
        session,
        responder,
        search,
        &arguments,
        version,
        modern.as_deref(),
    );
}

/// The tool `call_tool` names and its arguments, or why it cannot be called.
fn called(search: &SearchState, arguments: &Value) -> Result<(String, Value), String> {
    let own = &search.call_tool;
    let violations = own.input.violations(arguments);
    if !violations.is_empty() {
        return Err(invalid_arguments_text(&own.def.name, &violations));
    }
    let name = arguments
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default();
    if name == search.settings.call_tool_name {
        return Err(format!(
            "{name} calls the tools {} finds, not itself",
            search.settings.search_tool_name
        ));
    }
    let inner = match arguments.get("arguments") {
        Some(inner @ Value::Object(_)) => inner.clone(),
        // `null` or absent, as a direct call may leave them (the schema refuses the rest).
        _ => Value::Object(Map::new()),
    };
    Ok((name.to_owned(), inner))
}

/// Answers `search_tools`: the best matches the request may see, as `tools/list` shows them
/// (the pinned tools left out: the client has them already).
fn find(
    session: &Arc<SessionShared>,
    mut responder: Responder,
    search: Arc<SearchState>,
    arguments: &Value,
    version: ProtocolVersion,
    modern: Option<&Envelope>,
) {
    let own = &search.search_tool;
    responder.count_tool(own.series.as_ref());
    let violations = own.input.violations(arguments);
    if !violations.is_empty() {
        let text = invalid_arguments_text(&own.def.name, &violations);
        return responder.tool_result(&ToolOutput::error(text), version);
    }
    let query = arguments
        .get("query")
        .and_then(Value::as_str)
        .unwrap_or_default();
    // An integer by the schema, which lets `3.0` pass.
    let limit = arguments
        .get("limit")
        .and_then(Value::as_f64)
        .map_or(search.settings.max_results, |limit| limit as usize)
        .clamp(1, search.settings.max_results);
    // In flight like any call: its id is taken meanwhile, and a cancel silences it.
    let Some((serial, _cancel)) = session.register_call(responder.id()) else {
        let error = super::call::id_in_flight(responder.id());
        return responder.error(error);
    };
    let (change, tools) = session.server.registry.versioned_snapshot();
    // Unless some may be hidden, only the best few are looked at (pinned ones are skipped).
    let best = (!session.server.catalog.screens()).then(|| limit + search.settings.pinned.len());
    let ranked: Vec<String> = search
        .index(change, &tools)
        .search(query, best)
        .into_iter()
        .filter(|(name, _)| !search.settings.pinned.contains(*name))
        .map(|(name, _)| name.to_owned())
        .collect();
    let found = ranked.iter().filter_map(|name| tools.get_key_value(name));
    let candidates = candidates(&session.server.catalog, found, |tool| &tool.def);
    let stream = responder.out().stream().cloned();
    let asker = Asker {
        stream: stream.as_ref(),
        modern,
    };
    let session_of_call = session.clone();
    screen(session, asker, candidates, move |hidden: Hidden| {
        if !session_of_call.finish_call(responder.id(), serial) {
            return responder.suppress();
        }
        let mut text = String::from("{\"tools\":[");
        let best = ranked
            .iter()
            .filter(|name| !hidden.contains(*name))
            .filter_map(|name| tools.get(name))
            .take(limit);
        for (at, tool) in best.enumerate() {
            if at > 0 {
                text.push(',');
            }
            text.push_str(tool.listing(version));
        }
        text.push_str("]}");
        let output = match serde_json::from_str(&text) {
            Ok(found) => ToolOutput::structured(found),
            Err(err) => ToolOutput::error(format!("Internal error: {err}")),
        };
        responder.tool_result(&output, version);
    });
}

/// The tool a `tools/call` with these params calls and its arguments: the one `call_tool`
/// names, through the search; else its own `name`.
pub(crate) fn called_tool<'a>(
    server: &super::server::ServerInner,
    params: Option<&'a Value>,
) -> Option<(&'a str, Option<&'a Value>)> {
    let name = params?.get("name")?.as_str()?;
    let arguments = params?.get("arguments");
    match server.search.current() {
        Some(search) if name == search.settings.call_tool_name => {
            let inner = arguments?.get("name")?.as_str()?;
            Some((inner, arguments?.get("arguments")))
        }
        _ => Some((name, arguments)),
    }
}

/// A `tools/call` of `call_tool`, as the call of the tool it names (its other members kept),
/// for middleware to decide on: so a rule about a tool holds however it is called, and the
/// call that runs is the one middleware saw, whatever the search's setting by then. Anything
/// else (and a `call_tool` whose arguments are refused, which answers so) is left as it is.
pub(crate) fn as_called(
    server: &super::server::ServerInner,
    method: &str,
    params: Option<Value>,
) -> Option<Value> {
    if method != "tools/call" {
        return params;
    }
    let Some(search) = server.search.current() else {
        return params;
    };
    let Some(Value::Object(mut members)) = params else {
        return params;
    };
    if members.get("name").and_then(Value::as_str) != Some(search.settings.call_tool_name.as_str())
    {
        return Some(Value::Object(members));
    }
    let Some(arguments) = members.get("arguments") else {
        return Some(Value::Object(members));
    };
    if let Ok((name, _)) = called(&search, arguments) {
        // The inner arguments as sent (absent, `null` or an object), as a direct call has them.
        let inner = arguments.get("arguments").cloned();
        members.insert("name".to_owned(), Value::String(name));
        match inner {
            Some(inner) => members.insert("arguments".to_owned(), inner),
            None => members.remove("arguments"),
        };
    }
    Some(Value::Object(members))
}
