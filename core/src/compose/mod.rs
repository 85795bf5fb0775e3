//! Another server's catalog as part of this one: a [`Server`] in this process, a process
//! spawned and spoken to over stdio, or a Streamable HTTP server, under a prefix.
//!
//! Each is reached through the engine's own [`Client`], so the three differ only in their
//! wire. The upstream's tools, resources, templates and prompts are registered on this server
//! under the prefix (`weather_forecast`, `docs://weather/readme`); a call to one is forwarded,
//! so this server's limits, middleware, visibility and metrics apply as to any of its own.
//! Progress comes back, a cancelled call is cancelled upstream, and what the upstream asks
//! during a call (elicitation, sampling, roots) is asked of this server's client. When the
//! upstream says its lists changed they are read again, and this server's clients are told.
//! Completion of a mounted prompt's arguments or template's variables is the upstream's.
//! An upstream that went away fails the calls in flight with an error naming it; the next
//! call connects again.

mod names;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures_util::future::BoxFuture;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;

use self::names::{Prefix, unprefixed_uri};
use crate::catalog::{
    Completer, Completion, CompletionRequest, Prompt, PromptHandler, PromptRequest, PromptResult,
    Reference, Resource, ResourceContents, ResourceHandler, ResourceRequest, ResourceTemplate,
};
use crate::client::{Answerer, Client, ClientOptions, Command, Progress};
use crate::dispatch::Server;
use crate::dispatch::modern::LOG_LEVEL_KEY;
use crate::dispatch::server::ServerInner;
use crate::error::Error;
use crate::handler::{Context, RequestOptions, ToolError, ToolHandler};
use crate::protocol::{LogLevel, ProtocolVersion, Tool, ToolOutput};
use crate::wire::{ErrorCode, ErrorObject};

/// Where a mounted catalog comes from.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub enum Upstream {
    /// A server in this process (its own middleware and limits apply too).
    Server(Server),
    /// A process spawned and spoken to over its stdin and stdout.
    Command(Command),
    /// A Streamable HTTP server (`http://` or `https://`), with headers sent on every request.
    Http {
        /// Its MCP endpoint.
        url: String,
        /// Sent with every request (an `Authorization`, say).
        headers: Vec<(String, String)>,
    },
}

impl Upstream {
    /// A Streamable HTTP server at `url`.
    pub fn http(url: impl Into<String>) -> Self {
        Upstream::Http {
            url: url.into(),
            headers: Vec::new(),
        }
    }

    /// From the JSON a binding passes: `{"command": "python", "args": [..], "env": {..},
    /// "cwd": ".."}` or `{"url": "http://..", "headers": {..}}`.
    pub fn from_json(value: &Value) -> Result<Self, Error> {
        let wrong = |what: &str| Error::InvalidArgument(format!("a proxied server's {what}"));
        let Some(given) = value.as_object() else {
            return Err(wrong(
                "settings must be an object with \"command\" or \"url\"",
            ));
        };
        let strings = |key: &str| -> Result<Vec<String>, Error> {
            match given.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|item| {
                        item.as_str()
                            .map(str::to_owned)
                            .ok_or_else(|| wrong(&format!("{key} must be strings")))
                    })
                    .collect(),
                Some(_) => Err(wrong(&format!("{key} must be a list of strings"))),
            }
        };
        let pairs = |key: &str| -> Result<Vec<(String, String)>, Error> {
            match given.get(key) {
                None | Some(Value::Null) => Ok(Vec::new()),
                Some(Value::Object(map)) => map
                    .iter()
                    .map(|(name, value)| {
                        value
                            .as_str()
                            .map(|v| (name.clone(), v.to_owned()))
                            .ok_or_else(|| wrong(&format!("{key} must map names to strings")))
                    })
                    .collect(),
                Some(_) => Err(wrong(&format!("{key} must be an object of strings"))),
            }
        };
        for key in given.keys() {
            let known = [
                "command",
                "args",
                "env",
                "cwd",
                "url",
                "headers",
                // The mount's own (`MountOptions::from_json`).
                "protocolVersion",
                "protocol_version",
            ];
            if !known.contains(&key.as_str()) {
                return Err(wrong(&format!(
                    "settings have no {key:?}: command, args, env, cwd, url, headers, \
                     protocolVersion"
                )));
            }
        }
        match (given.get("command"), given.get("url")) {
            (Some(Value::String(program)), None) => {
                let mut command = Command::new(program.clone(), strings("args")?);
                command.env = pairs("env")?.into_iter().collect();
                command.cwd = match given.get("cwd") {
                    None | Some(Value::Null) => None,
                    Some(Value::String(dir)) => Some(dir.into()),
                    Some(_) => return Err(wrong("cwd must be a string")),
                };
                Ok(Upstream::Command(command))
            }
            (None, Some(Value::String(url))) => Ok(Upstream::Http {
                url: url.clone(),
                headers: pairs("headers")?,
            }),
            (Some(_), Some(_)) => Err(wrong("settings take \"command\" or \"url\", not both")),
            _ => Err(wrong(
                "settings need \"command\" (a string) or \"url\" (a string)",
            )),
        }
    }

    fn describe(&self) -> String {
        match self {
            Upstream::Server(server) => format!("the mounted server {:?}", server.inner.info.name),
            Upstream::Command(command) => command.describe(),
            Upstream::Http { url, .. } => url.clone(),
        }
    }
}

/// How a mount speaks to its upstream.
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct MountOptions {
    /// The protocol version asked for; none: 2026-07-28, falling back to `initialize` with the
    /// latest handshake-era version for a server that does not answer `server/discover`. Give
    /// a handshake-era version (`2025-11-25`) for an upstream whose tools ask their questions
    /// as requests, which 2026-07-28 has no channel for.
    pub protocol_version: Option<String>,
}

impl MountOptions {
    /// Options asking for `version`.
    pub fn protocol_version(version: impl Into<String>) -> Self {
        MountOptions {
            protocol_version: Some(version.into()),
        }
    }

    /// From the JSON a binding passes: its `protocolVersion` (or `protocol_version`) key; the
    /// upstream's keys are [`Upstream::from_json`]'s.
    pub fn from_json(value: &Value) -> Result<Self, Error> {
        let version = value
            .get("protocolVersion")
            .or_else(|| value.get("protocol_version"));
        match version {
            None | Some(Value::Null) => Ok(MountOptions::default()),
            Some(Value::String(version)) => Ok(MountOptions::protocol_version(version.clone())),
            Some(other) => Err(Error::InvalidArgument(format!(
                "a mount's protocolVersion must be a string, not {other}"
            ))),
        }
    }

    fn check(&self) -> Result<(), Error> {
        match &self.protocol_version {
            Some(version) if ProtocolVersion::parse(version).is_none() => {
                Err(Error::InvalidArgument(format!(
                    "{version:?} is not a protocol version toolwire speaks"
                )))
            }
            _ => Ok(()),
        }
    }
}

/// A mounted catalog: what it registered, and the way to take it off.
#[derive(Clone, Debug)]
pub struct Mount {
    upstream: Arc<Mounted>,
}

impl Mount {
    /// The prefix.
    pub fn prefix(&self) -> &str {
        self.upstream.prefix.as_str()
    }

    /// The names (tools, prompts) and URIs (resources, templates) it registered, as this
    /// server's clients see them.
    pub fn registered(&self) -> Vec<String> {
        let registered = lock(&self.upstream.registered);
        registered
            .tools
            .keys()
            .chain(registered.prompts.keys())
            .chain(registered.resources.keys())
            .chain(registered.templates.keys())
            .cloned()
            .collect()
    }

    /// Reads the upstream's lists again now (they are also read when it says they changed).
    pub async fn refresh(&self) -> Result<(), Error> {
        let client = self.upstream.client().await?;
        self.upstream.sync(&client).await
    }

    /// Takes everything it registered off this server and ends the connection.
    pub async fn unmount(&self) {
        self.upstream.stopped.cancel();
        let _ = self.upstream.apply(Catalog::default());
        let client = self.upstream.connection.lock().await.take();
        if let Some(client) = client {
            client.close().await;
        }
    }
}

impl Server {
    /// Mounts `upstream`'s catalog under `prefix`: connects (the handshake in 2026-07-28,
    /// falling back to `initialize` for a server of the handshake era), reads its lists and
    /// registers each item here, its name (`{prefix}_{name}`) or URI
    /// (`scheme://{prefix}/rest`) prefixed. Names already taken here are skipped, with a
    /// warning in the logs. The prefix is letters, digits, `-` and `_`.
    pub async fn mount(&self, prefix: &str, upstream: Upstream) -> Result<Mount, Error> {
        self.mount_with(prefix, upstream, MountOptions::default())
            .await
    }

    /// [`mount`](Self::mount), speaking to the upstream as `options` say.
    pub async fn mount_with(
        &self,
        prefix: &str,
        upstream: Upstream,
        options: MountOptions,
    ) -> Result<Mount, Error> {
        let prefix = Prefix::new(prefix)?;
        options.check()?;
        let mounted = Arc::new(Mounted {
            options,
            prefix,
            described: upstream.describe(),
            upstream,
            server: Arc::downgrade(&self.inner),
            connection: tokio::sync::Mutex::new(None),
            syncing: tokio::sync::Mutex::new(()),
            registered: Mutex::new(Catalog::default()),
            refused: Mutex::new(None),
            stopped: CancellationToken::new(),
        });
        let client = mounted.client().await?;
        mounted.sync(&client).await?;
        Ok(Mount { upstream: mounted })
    }
}

/// The items of one mount, by the name or URI this server shows them under.
#[derive(Default)]
struct Catalog {
    tools: BTreeMap<String, Value>,
    prompts: BTreeMap<String, Value>,
    resources: BTreeMap<String, Value>,
    templates: BTreeMap<String, Value>,
    /// Whether the upstream completes its prompts' and templates' arguments.
    completes: bool,
}

struct Mounted {
    options: MountOptions,
    prefix: Prefix,
    upstream: Upstream,
    described: String,
    /// Weak: the server holds the mount's handlers, which hold the mount.
    server: Weak<ServerInner>,
    connection: tokio::sync::Mutex<Option<Arc<Client>>>,
    /// One reading of the lists at a time: two would race to register.
    syncing: tokio::sync::Mutex<()>,
    registered: Mutex<Catalog>,
    /// The last failed connection and when: calls within a second of it fail at once rather
    /// than each spawning or dialling again.
    refused: Mutex<Option<(Instant, String)>>,
    stopped: CancellationToken,
}

impl std::fmt::Debug for Mounted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mount")
            .field("prefix", &self.prefix.as_str())
            .field("upstream", &self.described)
            .finish_non_exhaustive()
    }
}

/// How long after a failed connection the next call fails at once.
const RECONNECT_AFTER: Duration = Duration::from_secs(1);

/// How long connecting (spawning, the handshake) may take.
const HANDSHAKE_WITHIN: Duration = Duration::from_secs(30);

impl Mounted {
    /// The connection, made again if the last one ended.
    async fn client(self: &Arc<Self>) -> Result<Arc<Client>, Error> {
        if self.stopped.is_cancelled() {
            return Err(self.gone("was unmounted"));
        }
        let mut connection = self.connection.lock().await;
        if let Some(client) = connection.as_ref()
            && !client.is_closed()
        {
            return Ok(client.clone());
        }
        let reconnecting = connection.take().is_some();
        if let Some((when, why)) = lock(&self.refused).as_ref()
            && when.elapsed() < RECONNECT_AFTER
        {
            return Err(Error::Transport(std::io::Error::other(why.clone())));
        }
        let (version, fallback) = match &self.options.protocol_version {
            Some(version) => (version.clone(), None),
            None => (
                ProtocolVersion::V2026_07_28.as_str().to_owned(),
                Some(ProtocolVersion::LATEST.as_str().to_owned()),
            ),
        };
        let options = ClientOptions {
            protocol_version: version,
            fallback_version: fallback,
            elicitation: true,
            sampling: true,
            roots: Some(json!([])),
            // The outer call's own deadline governs; this only bounds a forgotten one.
            request_timeout: Duration::from_secs(3600),
            // Nothing reads them: the listener follows the list changes.
            notifications_kept: 0,
            ..ClientOptions::default()
        };
        let connecting = async {
            match &self.upstream {
                Upstream::Server(server) => Client::connect(server, options, None).await,
                Upstream::Command(command) => Client::spawn(command, options, None).await,
                #[cfg(feature = "http")]
                Upstream::Http { url, headers } => {
                    Client::connect_http(url, headers, options, None).await
                }
                #[cfg(not(feature = "http"))]
                Upstream::Http { .. } => Err(Error::InvalidArgument(
                    "proxying over HTTP needs toolwire's `http` feature".into(),
                )),
            }
        };
        // A program that never answers its handshake must not hold every call for an hour.
        let made = match tokio::time::timeout(HANDSHAKE_WITHIN, connecting).await {
            Ok(made) => made,
            Err(_) => Err(Error::NoAnswer {
                method: "the handshake".into(),
                after: HANDSHAKE_WITHIN,
            }),
        };
        let client = match made {
            Ok(client) => Arc::new(client),
            Err(err) => {
                let why = format!("cannot connect to {}: {err}", self.described);
                *lock(&self.refused) = Some((Instant::now(), why.clone()));
                return Err(Error::Transport(std::io::Error::other(why)));
            }
        };
        lock(&self.refused).take();
        let mount = Arc::downgrade(self);
        let described = self.described.clone();
        client.on_notification(Arc::new(move |method: &str, params: &Value| {
            // A listen stream's first word too: what changed before it opened is read then.
            if method == "notifications/message" {
                // Also relayed to the client whose request it is about, when that is known.
                tracing::debug!(upstream = %described, log = %params, "the upstream logged");
                return;
            }
            let changed = method.ends_with("/list_changed")
                || method == "notifications/subscriptions/acknowledged";
            if !changed {
                return;
            }
            let Some(mount) = mount.upgrade() else {
                return;
            };
            tokio::spawn(async move {
                // The connection as it is: one that ended is made again by the next call,
                // which reads the lists then.
                let client = mount.connection.lock().await.clone();
                let Some(client) = client.filter(|c| !c.is_closed()) else {
                    return;
                };
                if let Err(err) = mount.sync(&client).await {
                    tracing::warn!(upstream = %mount.described, %err, "reading the changed lists failed");
                }
            });
        }));
        if client.is_modern() {
            tokio::spawn(listen(client.clone(), self.stopped.clone()));
        }
        *connection = Some(client.clone());
        drop(connection);
        if reconnecting {
            // It may have changed while away.
            self.sync(&client).await?;
        }
        Ok(client)
    }

    fn gone(&self, what: &str) -> Error {
        Error::Transport(std::io::Error::other(format!("{} {what}", self.described)))
    }

    /// Reads the upstream's lists and makes this server's registrations match them.
    async fn sync(self: &Arc<Self>, client: &Client) -> Result<(), Error> {
        let _one = self.syncing.lock().await;
        let offered = offered(client);
        let mut catalog = Catalog {
            completes: offered("completions"),
            ..Catalog::default()
        };
        if offered("tools") {
            for tool in client.list_tools().await? {
                if let Some(name) = tool.get("name").and_then(Value::as_str) {
                    catalog.tools.insert(self.prefix.name(name), tool);
                }
            }
        }
        if offered("prompts") {
            for prompt in client.list_prompts().await? {
                if let Some(name) = prompt.get("name").and_then(Value::as_str) {
                    catalog.prompts.insert(self.prefix.name(name), prompt);
                }
            }
        }
        if offered("resources") {
            for resource in client.list_resources().await? {
                if let Some(uri) = resource.get("uri").and_then(Value::as_str) {
                    catalog.resources.insert(self.prefix.uri(uri), resource);
                }
            }
            for template in client.list_resource_templates().await? {
                if let Some(uri) = template.get("uriTemplate").and_then(Value::as_str) {
                    catalog.templates.insert(self.prefix.uri(uri), template);
                }
            }
        }
        self.apply(catalog)
    }

    /// Registers what is new or changed in `wanted`, removes what is gone.
    fn apply(self: &Arc<Self>, wanted: Catalog) -> Result<(), Error> {
        let Some(inner) = self.server.upgrade() else {
            return Ok(()); // the server is gone, and its catalog with it
        };
        let server = Server { inner };
        let mut registered = lock(&self.registered);
        // Checked under the lock `unmount` takes: a reading of the lists that finishes after
        // it registers nothing again.
        let wanted = if self.stopped.is_cancelled() {
            Catalog::default()
        } else {
            wanted
        };
        let had = std::mem::take(&mut *registered);
        for (name, old) in &had.tools {
            if wanted.tools.get(name) != Some(old) {
                server.remove_tool(name);
            }
        }
        for (name, old) in &had.prompts {
            if wanted.prompts.get(name) != Some(old) {
                server.remove_prompt(name);
            }
        }
        for (uri, old) in &had.resources {
            if wanted.resources.get(uri) != Some(old) {
                server.remove_resource(uri);
            }
        }
        for (uri, old) in &had.templates {
            if wanted.templates.get(uri) != Some(old) {
                server.remove_resource_template(uri);
            }
        }
        let kept =
            |had: &BTreeMap<String, Value>, key: &str, def: &Value| had.get(key) == Some(def);
        for (name, def) in wanted.tools {
            if kept(&had.tools, &name, &def) || self.add_tool(&server, &name, &def) {
                registered.tools.insert(name, def);
            }
        }
        registered.completes = wanted.completes;
        for (name, def) in wanted.prompts {
            let same = kept(&had.prompts, &name, &def);
            if same || self.add_prompt(&server, &name, &def) {
                let remote = json!({"type": "ref/prompt", "name": def.get("name")});
                let here = Reference::Prompt(name.clone());
                self.follow_completion(
                    &server,
                    here,
                    remote,
                    same && had.completes,
                    wanted.completes,
                );
                registered.prompts.insert(name, def);
            }
        }
        for (uri, def) in wanted.resources {
            if kept(&had.resources, &uri, &def) || self.add_resource(&server, &uri, &def) {
                registered.resources.insert(uri, def);
            }
        }
        for (uri, def) in wanted.templates {
            let same = kept(&had.templates, &uri, &def);
            if same || self.add_template(&server, &uri, &def) {
                let remote = json!({"type": "ref/resource", "uri": def.get("uriTemplate")});
                let here = Reference::ResourceTemplate(uri.clone());
                self.follow_completion(
                    &server,
                    here,
                    remote,
                    same && had.completes,
                    wanted.completes,
                );
                registered.templates.insert(uri, def);
            }
        }
        Ok(())
    }

    /// Completion of `here` (a prompt or template registered for this mount) asks the
    /// upstream about `remote`, its own reference, while the upstream offers completion.
    /// `forwarding` says a forwarder is set already; one is set when the item is new or the
    /// upstream has begun to complete (`completes`), so a completer set here since is kept.
    fn follow_completion(
        self: &Arc<Self>,
        server: &Server,
        here: Reference,
        remote: Value,
        forwarding: bool,
        completes: bool,
    ) {
        match (completes, forwarding) {
            (true, false) => {
                let forward = ForwardCompletion {
                    mount: self.clone(),
                    remote,
                };
                if let Err(err) = server.set_completer(here, forward) {
                    tracing::warn!(upstream = %self.described, %err, "completion is not forwarded");
                }
            }
            (false, true) => server.inner.catalog.remove_completer(&here),
            _ => {}
        }
    }

    fn skipped(&self, kind: &str, name: &str, err: &Error) -> bool {
        tracing::warn!(upstream = %self.described, %err, "the {kind} {name:?} is not mounted");
        false
    }

    fn add_tool(self: &Arc<Self>, server: &Server, name: &str, def: &Value) -> bool {
        let Some(remote) = def.get("name").and_then(Value::as_str) else {
            return false;
        };
        let mut wire = own_keys_only(def, TOOL_KEYS);
        wire.insert("name".into(), json!(name));
        let tool = match Tool::from_json(Value::Object(wire)) {
            Ok(tool) => tool,
            Err(err) => return self.skipped("tool", remote, &err),
        };
        let forward = ForwardTool {
            mount: self.clone(),
            remote: remote.to_owned(),
        };
        match server.add_tool(tool, forward) {
            Ok(()) => true,
            Err(err) => self.skipped("tool", remote, &err),
        }
    }

    fn add_prompt(self: &Arc<Self>, server: &Server, name: &str, def: &Value) -> bool {
        let Some(remote) = def.get("name").and_then(Value::as_str) else {
            return false;
        };
        let mut wire = own_keys_only(def, PROMPT_KEYS);
        wire.insert("name".into(), json!(name));
        let prompt = match Prompt::from_json(Value::Object(wire)) {
            Ok(prompt) => prompt,
            Err(err) => return self.skipped("prompt", remote, &err),
        };
        let forward = ForwardPrompt {
            mount: self.clone(),
            remote: remote.to_owned(),
        };
        match server.add_prompt(prompt, forward) {
            Ok(()) => true,
            Err(err) => self.skipped("prompt", remote, &err),
        }
    }

    fn add_resource(self: &Arc<Self>, server: &Server, uri: &str, def: &Value) -> bool {
        let Some(remote) = def.get("uri").and_then(Value::as_str) else {
            return false;
        };
        let mut wire = own_keys_only(def, RESOURCE_KEYS);
        wire.insert("uri".into(), json!(uri));
        let resource = match Resource::from_json(Value::Object(wire)) {
            Ok(resource) => resource,
            Err(err) => return self.skipped("resource", remote, &err),
        };
        match server.add_resource(
            resource,
            ForwardRead {
                mount: self.clone(),
            },
        ) {
            Ok(()) => true,
            Err(err) => self.skipped("resource", remote, &err),
        }
    }

    fn add_template(self: &Arc<Self>, server: &Server, uri: &str, def: &Value) -> bool {
        let remote = def.get("uriTemplate").and_then(Value::as_str).unwrap_or("");
        let mut wire = own_keys_only(def, TEMPLATE_KEYS);
        wire.insert("uriTemplate".into(), json!(uri));
        let template = match ResourceTemplate::from_json(Value::Object(wire)) {
            Ok(template) => template,
            Err(err) => return self.skipped("resource template", remote, &err),
        };
        match server.add_resource_template(
            template,
            ForwardRead {
                mount: self.clone(),
            },
        ) {
            Ok(()) => true,
            Err(err) => self.skipped("resource template", remote, &err),
        }
    }

    /// Sends `method` upstream for a request of this server's, relaying its progress and
    /// questions, and mapping a lost upstream to an error that names it.
    async fn forward(
        self: &Arc<Self>,
        method: &str,
        params: Value,
        ctx: Option<&Context>,
    ) -> Result<Value, ToolError> {
        let client = self
            .client()
            .await
            .map_err(|err| ToolError::new(err.to_string()))?;
        let mut params = params;
        // A 2026-07-28 upstream logs about a request only at the level it asks for: the level
        // this server's client would hear (a legacy upstream logs at its session's level).
        if let (Some(level), true) = (ctx.and_then(Context::log_level), client.is_modern())
            && let Some(params) = params.as_object_mut()
        {
            let meta = params.entry("_meta").or_insert_with(|| json!({}));
            if let Some(meta) = meta.as_object_mut() {
                meta.insert(LOG_LEVEL_KEY.into(), json!(level.as_str()));
            }
        }
        let progress = ctx.filter(|ctx| ctx.wants_progress()).map(|ctx| {
            let ctx = ctx.clone();
            let relay: Progress = Arc::new(move |params: &Value| {
                if let Some(progress) = params.get("progress").and_then(Value::as_f64) {
                    let total = params.get("total").and_then(Value::as_f64);
                    let message = params.get("message").and_then(Value::as_str);
                    ctx.progress(progress, total, message);
                }
            });
            relay
        });
        let input_needed = CancellationToken::new();
        let asker = ctx.map(|ctx| {
            let relay: Arc<dyn Answerer> = Arc::new(Relay {
                ctx: ctx.clone(),
                input_needed: input_needed.clone(),
            });
            relay
        });
        let sent = client.request_asking(method, params, progress, asker);
        let answer = tokio::select! {
            biased;
            // 2026-07-28 here: the question goes to this server's client as an
            // `input_required` round, and the call comes again with the answer. Looked at
            // first, as relaying it also fails the upstream's request.
            () = input_needed.cancelled() => return Err(ToolError::from(Error::InputRequired)),
            answer = sent => answer,
        };
        if input_needed.is_cancelled() {
            // Relayed within the request's last poll: the same round, seen late.
            return Err(ToolError::from(Error::InputRequired));
        }
        match answer {
            Ok(result) => Ok(result),
            Err(Error::Rpc(error)) if is_transport_failure(&error) => Err(ToolError::new(format!(
                "{} could not be reached: {}; the call was not answered",
                self.described, error.message
            ))),
            Err(Error::Rpc(error)) if client.is_closed() => {
                tracing::debug!(upstream = %self.described, ?error, "the upstream went away");
                Err(ToolError::new(format!(
                    "{} went away before answering; the next call connects again",
                    self.described
                )))
            }
            Err(Error::Rpc(error)) => Err(ToolError::protocol(error.code.0, error.message)),
            Err(err) => Err(ToolError::new(format!("{}: {err}", self.described))),
        }
    }
}

/// Whether an error is the client's transport failing the request (the connection, not the
/// upstream's answer).
fn is_transport_failure(error: &ErrorObject) -> bool {
    error
        .data
        .as_ref()
        .and_then(|data| data.get("transport"))
        .and_then(Value::as_bool)
        == Some(true)
}

/// A 2026-07-28 upstream tells of list changes only on a `subscriptions/listen` stream: one is
/// kept open while the connection lasts (its notifications reach the client's listeners).
async fn listen(client: Arc<Client>, stopped: CancellationToken) {
    let wanted = json!({"notifications": {
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
    }});
    let mut failures = 0u32;
    while !client.is_closed() {
        let listening = client.request_within("subscriptions/listen", wanted.clone(), LISTEN_FOR);
        tokio::select! {
            () = stopped.cancelled() => return,
            ended = listening => match ended {
                // The server ended the stream in order (it is stopping, or moved us on).
                Ok(_) => failures = 0,
                Err(Error::Rpc(refused)) if refused.code == ErrorCode::METHOD_NOT_FOUND => return,
                Err(_) => failures = failures.saturating_add(1),
            },
        }
        // Backing off (to 6.4 s), not waiting for an event: a stream the server closes at once
        // would otherwise be opened again in a tight loop.
        tokio::select! {
            () = stopped.cancelled() => return,
            () = tokio::time::sleep(Duration::from_millis(100 << failures.min(6))) => {}
        }
    }
}

/// How long one listen request may stay open.
const LISTEN_FOR: Duration = Duration::from_secs(365 * 24 * 3600);

impl Drop for Mounted {
    fn drop(&mut self) {
        // Ends the listen stream, which holds the connection.
        self.stopped.cancel();
    }
}

/// Whether the upstream's handshake answer offers `kind` (`tools`, …). One that declared no
/// capabilities at all is asked anyway.
fn offered(client: &Client) -> impl Fn(&str) -> bool + '_ {
    move |kind| {
        let info = client.server_info();
        match info.get("capabilities").and_then(Value::as_object) {
            Some(capabilities) => capabilities.contains_key(kind),
            None => true,
        }
    }
}

/// The wire keys of each kind a mount copies; toolwire's own (`taskSupport`,
/// `requiredScopes`, …) are this server's to set, never the upstream's.
const TOOL_KEYS: &[&str] = &[
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "_meta",
];
const PROMPT_KEYS: &[&str] = &["title", "description", "arguments", "icons", "_meta"];
const RESOURCE_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "mimeType",
    "size",
    "annotations",
    "icons",
    "_meta",
];
const TEMPLATE_KEYS: &[&str] = &[
    "name",
    "title",
    "description",
    "mimeType",
    "annotations",
    "icons",
    "_meta",
];

fn own_keys_only(def: &Value, keys: &[&str]) -> Map<String, Value> {
    def.as_object()
        .map(|def| {
            def.iter()
                .filter(|(key, _)| keys.contains(&key.as_str()))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect()
        })
        .unwrap_or_default()
}

struct ForwardTool {
    mount: Arc<Mounted>,
    remote: String,
}

#[async_trait]
impl ToolHandler for ForwardTool {
    async fn call(&self, ctx: Context, arguments: Value) -> Result<ToolOutput, ToolError> {
        let params = json!({"name": self.remote, "arguments": arguments});
        let result = self.mount.forward("tools/call", params, Some(&ctx)).await?;
        ToolOutput::from_json(result).map_err(|err| {
            ToolError::new(format!("{} answered badly: {err}", self.mount.described))
        })
    }
}

struct ForwardPrompt {
    mount: Arc<Mounted>,
    remote: String,
}

#[async_trait]
impl PromptHandler for ForwardPrompt {
    async fn get(&self, request: PromptRequest) -> Result<PromptResult, ToolError> {
        let params = json!({"name": self.remote, "arguments": request.arguments});
        let result = self
            .mount
            .forward("prompts/get", params, request.ctx.as_ref())
            .await?;
        PromptResult::from_json(result).map_err(|err| {
            ToolError::new(format!("{} answered badly: {err}", self.mount.described))
        })
    }
}

/// Completes a mounted prompt's argument or template's variable by asking the upstream.
struct ForwardCompletion {
    mount: Arc<Mounted>,
    /// The upstream's `ref`.
    remote: Value,
}

#[async_trait]
impl Completer for ForwardCompletion {
    async fn complete(&self, request: CompletionRequest) -> Result<Completion, ToolError> {
        let mut params = json!({
            "ref": self.remote,
            "argument": {"name": request.argument, "value": request.value},
        });
        if !request.context.is_empty() {
            params["context"] = json!({"arguments": request.context});
        }
        let result = match self
            .mount
            .forward("completion/complete", params, request.ctx.as_ref())
            .await
        {
            Ok(result) => result,
            // It stopped completing since it was mounted (a new version of it, say).
            Err(err) if err.protocol_code() == Some(ErrorCode::METHOD_NOT_FOUND.0) => {
                return Ok(Completion::default());
            }
            Err(err) => return Err(err),
        };
        let completion = &result["completion"];
        let Some(values) = completion.get("values").and_then(Value::as_array) else {
            return Err(ToolError::new(format!(
                "{} answered completion/complete without values",
                self.mount.described
            )));
        };
        let values: Vec<String> = values
            .iter()
            .filter_map(|value| value.as_str().map(str::to_owned))
            .collect();
        let mut completion_here = Completion::new(values);
        if let Some(total) = completion.get("total").and_then(Value::as_u64) {
            completion_here.total = Some(total.max(completion_here.values.len() as u64));
        }
        if completion.get("hasMore").and_then(Value::as_bool) == Some(true) {
            completion_here.has_more = true;
        }
        Ok(completion_here)
    }
}

/// Reads a mounted resource, or any resource of a mounted template.
struct ForwardRead {
    mount: Arc<Mounted>,
}

#[async_trait]
impl ResourceHandler for ForwardRead {
    async fn read(&self, request: ResourceRequest) -> Result<Vec<ResourceContents>, ToolError> {
        let prefix = &self.mount.prefix;
        let Some(remote) = unprefixed_uri(prefix, &request.uri) else {
            return Err(ToolError::not_found(format!(
                "{} is not a resource of this mount",
                request.uri
            )));
        };
        let params = json!({"uri": remote});
        let result = self
            .mount
            .forward("resources/read", params, request.ctx.as_ref())
            .await
            .map_err(|err| match err.protocol_code() {
                // Unknown upstream (either era's code): unknown here too.
                Some(-32002 | -32602) => ToolError::not_found(err.message().to_owned()),
                _ => err,
            })?;
        let Some(Value::Array(contents)) = result.get("contents") else {
            return Err(ToolError::new(format!(
                "{} answered resources/read without contents",
                self.mount.described
            )));
        };
        contents
            .iter()
            .map(|item| {
                let mut item = ResourceContents::from_json(item.clone()).map_err(|err| {
                    ToolError::new(format!("{} answered badly: {err}", self.mount.described))
                })?;
                item.uri = prefix.uri(&item.uri);
                Ok(item)
            })
            .collect()
    }
}

/// Answers the upstream's questions about one forwarded request by asking this server's
/// client, through the request's context (so the client's capabilities, the era and the
/// deadlines of this server apply).
struct Relay {
    ctx: Context,
    input_needed: CancellationToken,
}

impl Answerer for Relay {
    fn answer(
        &self,
        method: String,
        params: Value,
    ) -> BoxFuture<'static, Result<Value, ErrorObject>> {
        let ctx = self.ctx.clone();
        let input_needed = self.input_needed.clone();
        Box::pin(async move {
            let asked = match method.as_str() {
                "elicitation/create" => ctx.elicit(params, RequestOptions::default()).await,
                "sampling/createMessage" => ctx.sample(params, RequestOptions::default()).await,
                "roots/list" => {
                    let asked = ctx
                        .ask_all(vec![(method.clone(), params)], RequestOptions::default())
                        .await;
                    match asked {
                        Ok(mut answers) => {
                            Ok(answers.pop().unwrap_or_else(|| json!({"roots": []})))
                        }
                        // A client without roots has none to give.
                        Err(Error::CapabilityNotSupported { .. }) => Ok(json!({"roots": []})),
                        Err(err) => Err(err),
                    }
                }
                _ => return Err(ErrorObject::method_not_found(&method)),
            };
            asked.map_err(|err| match err {
                Error::InputRequired => {
                    input_needed.cancel();
                    ErrorObject::new(
                        ErrorCode(-32000),
                        "the question went to the client; the call comes again with its answer",
                    )
                }
                Error::Peer(error) => error,
                other => ErrorObject::new(ErrorCode(-32603), other.to_string()),
            })
        })
    }

    /// Sent on to this server's client as a log of the request's own (at or above the level
    /// that client set).
    fn logged(&self, params: &Value) {
        let Some(level) = params
            .get("level")
            .and_then(|level| serde_json::from_value::<LogLevel>(level.clone()).ok())
        else {
            return;
        };
        let logger = params.get("logger").and_then(Value::as_str);
        let data = params.get("data").cloned().unwrap_or(Value::Null);
        self.ctx.log_as(level, logger, data);
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
