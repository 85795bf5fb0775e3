//! The 2026-07-28 era: requests that carry their version and capabilities in `_meta`, served
//! with no handshake and no session state. The session machinery (its outbound channel, its
//! calls in flight) is only the transport's; nothing a request declares outlives it.
//!
//! | module | job |
//! |---|---|
//! | `envelope` | the `_meta` ladder: required keys, version, capabilities, log level |
//! | `input`, `state` | MRTR: input-required answers, and the sealed `requestState` |
//! | `listen` | `subscriptions/listen`: list changes and resource updates, tagged |

mod envelope;
mod input;
mod listen;
mod state;
pub(crate) mod tasks;

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Map, Value, json};

pub(crate) use envelope::{
    Envelope, LOG_LEVEL_KEY, claims_modern, initialize_refused, meta_claims_modern,
    missing_capability, read_envelope,
};
#[cfg(feature = "http")]
pub(crate) use envelope::{PROTOCOL_VERSION_KEY, check_required_keys, unsupported_version};
pub(crate) use input::{Round, Signal, keep_declared};
pub(crate) use listen::Listeners;
pub use state::StateKeys;
pub(crate) use state::{Binding, Sealer};

use super::SessionShared;
use super::responder::Responder;
use super::server::ServerInner;
use crate::dispatch::router;
use crate::metrics::AnswerKind;
use crate::protocol::method::Method;
use crate::protocol::{InputRequired, ProtocolVersion};
use crate::wire::ErrorObject;

/// How long a client may cache a list, `server/discover` or a read (2026-07-28 caching).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CacheScope {
    /// Any client or intermediary may cache it across authorization contexts.
    Public,
    /// Only within the same authorization context (the default).
    Private,
}

impl CacheScope {
    fn as_str(self) -> &'static str {
        match self {
            CacheScope::Public => "public",
            CacheScope::Private => "private",
        }
    }
}

/// What every modern result carries, built once per server: `resultType`, the server's
/// identity in `_meta`, and (on cacheable results) the cache hints.
pub(crate) struct ModernStamp {
    fields: Map<String, Value>,
    cache: Map<String, Value>,
    /// The same as JSON members, to splice into results this engine writes as text.
    text: String,
    cached_text: String,
}

impl ModernStamp {
    pub(crate) fn new(server_info: Value, ttl_ms: u64, scope: CacheScope) -> Self {
        let mut fields = Map::new();
        fields.insert("resultType".into(), json!("complete"));
        fields.insert(
            "_meta".into(),
            json!({ envelope::SERVER_INFO_KEY: server_info }),
        );
        let mut cache = Map::new();
        cache.insert("ttlMs".into(), json!(ttl_ms));
        cache.insert("cacheScope".into(), json!(scope.as_str()));
        let members = |map: &Map<String, Value>| {
            let text = Value::Object(map.clone()).to_string();
            text[1..text.len() - 1].to_owned()
        };
        let text = members(&fields);
        let cached_text = format!("{},{}", text, members(&cache));
        ModernStamp {
            fields,
            cache,
            text,
            cached_text,
        }
    }

    /// Adds the stamp to a result object, merging `_meta` with what the result has.
    pub(crate) fn apply(&self, result: &mut Map<String, Value>, cached: bool) {
        for (key, value) in &self.fields {
            match (key.as_str(), result.get_mut(key), value) {
                ("_meta", Some(Value::Object(own)), Value::Object(ours)) => {
                    for (k, v) in ours {
                        own.entry(k.clone()).or_insert_with(|| v.clone());
                    }
                }
                // A handler's own resultType is not ours to override (input_required).
                ("resultType", Some(_), _) => {}
                _ => {
                    result.insert(key.clone(), value.clone());
                }
            }
        }
        if cached {
            for (key, value) in &self.cache {
                result.insert(key.clone(), value.clone());
            }
        }
    }

    /// The members to splice before a written result's closing brace.
    pub(crate) fn text(&self, cached: bool) -> &str {
        if cached {
            &self.cached_text
        } else {
            &self.text
        }
    }
}

impl Method {
    /// Whether the method is served in the modern era (the removed ones answer -32601).
    pub(crate) fn is_modern(self) -> bool {
        !matches!(
            self,
            Method::Initialize
                | Method::Ping
                | Method::LoggingSetLevel
                | Method::ResourcesSubscribe
                | Method::ResourcesUnsubscribe
        )
    }

    /// Whether a legacy session knows it (2026-07-28's own methods it does not).
    pub(crate) fn is_legacy(self) -> bool {
        !matches!(
            self,
            Method::ServerDiscover
                | Method::SubscriptionsListen
                | Method::TasksGet
                | Method::TasksUpdate
                | Method::TasksCancel
        )
    }

    /// Whether its complete results carry cache hints.
    pub(crate) fn is_cacheable(self) -> bool {
        matches!(
            self,
            Method::ServerDiscover
                | Method::ToolsList
                | Method::ResourcesList
                | Method::ResourceTemplatesList
                | Method::ResourcesRead
                | Method::PromptsList
                | Method::SkillsList
                | Method::SkillsGet
                | Method::ResourcesDirectoryRead
        )
    }
}

/// Which era serves a request, and whether it locks its connection to that era.
pub(crate) enum EraChoice {
    Legacy,
    Modern,
    Refuse(ErrorObject),
}

/// The era of a request: the connection's, once set; otherwise the request's own claim,
/// which then sets it (stdio and every duplex transport: one era per connection).
pub(crate) fn era_for(session: &SessionShared, method: &str, params: Option<&Value>) -> EraChoice {
    let claims = claims_modern(params);
    let modern_only = session.server.options.modern_only;
    // A modern-only server has no legacy era at all, whatever the transport assumed.
    if session.modern.load(Ordering::Acquire) || modern_only {
        if method == "initialize" && !claims {
            let requested = params
                .and_then(|p| p.get("protocolVersion"))
                .cloned()
                .unwrap_or(Value::Null);
            return EraChoice::Refuse(initialize_refused(&requested, modern_only));
        }
        return EraChoice::Modern;
    }
    if session.negotiated.get().is_some() {
        return if claims {
            EraChoice::Refuse(ErrorObject::invalid_request(
                "Invalid request: this connection was initialized and speaks the \
                 2025-11-25 era; send 2026-07-28 requests on a connection of their own",
            ))
        } else {
            EraChoice::Legacy
        };
    }
    // Undecided: a modern claim is served modern, and locks the connection once its
    // envelope reads, but for server/discover (see handle_modern): a failed or unanswered
    // probe leaves the client free to fall back to initialize.
    if claims {
        EraChoice::Modern
    } else {
        EraChoice::Legacy
    }
}

/// A modern request: the ladder, then the method table of 2026-07-28.
pub(crate) fn handle_modern(
    session: &Arc<SessionShared>,
    responder: Responder,
    name: &str,
    params: Option<Value>,
) {
    // What the -32022 for an unknown version offers: `initialize` only where this connection
    // (one not locked to 2026-07-28 already) on this server would serve it.
    let no_initialize =
        session.server.options.modern_only || session.modern.load(Ordering::Acquire);
    let envelope = match read_envelope(params.as_ref(), no_initialize) {
        Ok(envelope) => Arc::new(envelope),
        Err(error) => return responder.error(error),
    };
    // server/discover creates no state, so it does not decide the connection's era: a client
    // that probes and falls back to initialize when the answer is late (the AI SDK waits 1 s)
    // gets a handshake-era session. Any other request with a valid envelope does decide it.
    if name != Method::ServerDiscover.name() {
        session.modern.store(true, Ordering::Release);
    }
    let Some(method) = Method::parse(name).filter(|m| m.is_modern()) else {
        return responder.error(ErrorObject::method_not_found(name));
    };
    if method != Method::ToolsCall && session.inflight_table().contains_key(responder.id()) {
        let message = format!(
            "Invalid request: id {} is already used by a request in flight",
            responder.id()
        );
        return responder.error(ErrorObject::invalid_request(message));
    }
    let server = &session.server;
    let stamp = if server.catalog.screens() {
        &server.private_stamp
    } else {
        &server.modern_stamp
    };
    let responder = responder.stamped(stamp.clone(), method.is_cacheable());
    let version = envelope.version;
    match method {
        Method::ServerDiscover => responder.result(&discover_result(&session.server, version)),
        Method::ToolsCall => {
            super::call::start(session, responder, params, version, Some(envelope))
        }
        Method::ToolsList => {
            router::list_tools(session, responder, params, version, Some(&envelope))
        }
        Method::SubscriptionsListen => listen::start(session, responder, params, envelope),
        Method::TasksGet | Method::TasksUpdate | Method::TasksCancel => {
            tasks::handle(session, responder, method, params, &envelope)
        }
        catalog => super::catalog_methods::handle(
            session,
            responder,
            catalog,
            params,
            version,
            Some(envelope),
        ),
    }
}

/// The `server/discover` result (stamped by the responder).
pub(crate) fn discover_result(server: &ServerInner, version: ProtocolVersion) -> Value {
    let mut result = json!({
        "supportedVersions": envelope::supported_versions(),
        "capabilities": server.capabilities(version),
    });
    if let Some(instructions) = &server.instructions {
        result["instructions"] = json!(instructions);
    }
    result
}

/// The server's identity as 2026-07-28 shows it.
pub(crate) fn modern_server_info(server: &ServerInner) -> Value {
    server.server_info(ProtocolVersion::V2026_07_28)
}

/// Answers a modern result that names its own `resultType` (`input_required`, `task`): the
/// server's identity added as on every modern result, its type kept, no cache hints.
pub(crate) fn answer_typed(
    server: &ServerInner,
    responder: Responder,
    mut result: Map<String, Value>,
) {
    let ending = match result.get("resultType").and_then(Value::as_str) {
        Some("input_required") => AnswerKind::InputRequired,
        Some("task") => AnswerKind::TaskCreated,
        _ => AnswerKind::Result,
    };
    server.modern_stamp.apply(&mut result, false);
    responder
        .unstamped()
        .ending(ending)
        .result(&Value::Object(result));
}

/// A 2026-07-28 tool call, prompt or read: its envelope, what came back this round, and what
/// its state is bound to.
pub(crate) struct ModernRound {
    pub(crate) envelope: Arc<Envelope>,
    pub(crate) round: Round,
    pub(crate) binding: Binding,
    /// A tool call that may become a task: questions the round cannot answer wait for
    /// `tasks/update` instead of ending the handler.
    pub(crate) task: Option<Arc<crate::tasks::LiveTask>>,
}

impl ModernRound {
    /// Opens the round: the request's `inputResponses` and its verified `requestState`.
    pub(crate) fn open(
        server: &ServerInner,
        envelope: Arc<Envelope>,
        params: &Map<String, Value>,
        binding: Binding,
    ) -> Result<Self, ErrorObject> {
        let round = Round::open(params, &server.sealer, &binding)?;
        Ok(ModernRound {
            envelope,
            round,
            binding,
            task: None,
        })
    }

    /// The round of a request that cannot ask for input (`completion/complete`: only tools,
    /// prompts and reads may answer `input_required`): its envelope, for the context's client
    /// info and capabilities, and nothing carried.
    pub(crate) fn without_input(envelope: Arc<Envelope>, binding: Binding) -> Self {
        ModernRound {
            envelope,
            round: Round::default(),
            binding,
            task: None,
        }
    }

    /// Answers `input_required`: the questions the handler asked (those the client can take on
    /// this request) and the sealed state of the next round.
    pub(crate) fn answer_input_required(
        &self,
        server: &ServerInner,
        responder: Responder,
        explicit: Option<InputRequired>,
    ) {
        let mut asked = self.round.pending();
        let mut user_state = None;
        if let Some(explicit) = explicit {
            asked.requests.extend(explicit.requests);
            user_state = explicit.state;
        }
        let capabilities = &self.envelope.client_capabilities;
        let (kept, dropped) = keep_declared(asked.requests, capabilities);
        let carried = self.round.carry_on(user_state);
        let carries = carried.user.is_some() || !carried.answers.is_empty();
        if kept.is_empty() && !dropped.is_empty() {
            let mut required = Map::new();
            for cap in &dropped {
                match *cap {
                    "elicitation.url" => {
                        required.insert("elicitation".into(), json!({"url": {}}));
                    }
                    cap => {
                        required.insert(cap.to_owned(), json!({}));
                    }
                }
            }
            return responder.unstamped().error(missing_capability(
                Value::Object(required),
                &format!("the request asks the client for {}", dropped.join(", ")),
            ));
        }
        if kept.is_empty() && !carries {
            return responder.unstamped().error(ErrorObject::internal(
                "Internal error: the handler asked for input but named no input request and no state",
            ));
        }
        let mut result = Map::new();
        result.insert("resultType".into(), json!("input_required"));
        if !kept.is_empty() {
            result.insert("inputRequests".into(), Value::Object(kept));
        }
        if carries {
            match server.sealer.seal(&self.binding, carried) {
                Ok(state) => {
                    result.insert("requestState".into(), json!(state));
                }
                Err(error) => return responder.unstamped().error(error),
            }
        }
        answer_typed(server, responder, result);
    }

    /// The answer for a handler that stopped on a [`Signal`] or returned `explicit`; the
    /// responder back when it did neither (or fell back and answered cleanly).
    pub(crate) fn answer_signal(
        &self,
        server: &ServerInner,
        responder: Responder,
        explicit: Option<InputRequired>,
        answered_cleanly: bool,
    ) -> Option<Responder> {
        match (self.round.take_signal(), explicit) {
            // A handler that fell back on its own and answered cleanly keeps its answer.
            (Some(Signal::MissingCapability(_)), None) if answered_cleanly => Some(responder),
            (Some(Signal::MissingCapability(required)), _) => {
                let what = required.to_string();
                responder.unstamped().error(missing_capability(
                    required,
                    &format!("the handler needs {what}, which this request did not declare"),
                ));
                None
            }
            (Some(Signal::Ask), explicit) => {
                self.answer_input_required(server, responder, explicit);
                None
            }
            (None, Some(explicit)) => {
                self.answer_input_required(server, responder, Some(explicit));
                None
            }
            (None, None) => Some(responder),
        }
    }
}
