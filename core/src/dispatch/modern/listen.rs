//! `subscriptions/listen` (2026-07-28): a request whose answer is a stream of the
//! notifications it asked for (list changes, updates of named resources), each tagged with
//! the subscription's id (the request's), until the client ends it or the server does.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Map, Value, json};

use super::envelope::{Envelope, SUBSCRIPTION_ID_KEY};
use super::tasks::extension_missing;
use crate::catalog::visibility::Viewer;
use crate::changes::ChangeFeed;
use crate::dispatch::SessionShared;
use crate::dispatch::outbound::OutboundSender;
use crate::dispatch::responder::Responder;
use crate::dispatch::server::ServerInner;
use crate::dispatch::visibility::{self, List, Seen};
use crate::tasks::{self, Tasks};
use crate::wire::{ErrorObject, RequestId, notification_frame};

/// The server's listen streams: how many are open, against the limit.
pub(crate) struct Listeners {
    open: AtomicUsize,
    max: usize,
}

impl Listeners {
    pub(crate) fn new(max: usize) -> Self {
        Listeners {
            open: AtomicUsize::new(0),
            max,
        }
    }

    fn admit(self: &Arc<Self>) -> Option<ListenSlot> {
        let mut open = self.open.load(Ordering::Relaxed);
        loop {
            if open >= self.max {
                return None;
            }
            match self.open.compare_exchange_weak(
                open,
                open + 1,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(ListenSlot(self.clone())),
                Err(now) => open = now,
            }
        }
    }

    /// Listen streams open now.
    pub(crate) fn open(&self) -> usize {
        self.open.load(Ordering::Relaxed)
    }
}

struct ListenSlot(Arc<Listeners>);

impl Drop for ListenSlot {
    fn drop(&mut self) {
        self.0.open.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The most resource URIs one listen stream may name.
const MAX_URIS: usize = 1024;

/// What a listen stream carries: the client's filter, cut to what this server has.
#[derive(Debug, Default, PartialEq, Eq)]
struct Filter {
    tools: bool,
    prompts: bool,
    resources: bool,
    uris: BTreeSet<String>,
    /// Tasks to follow (`notifications/tasks`; the tasks extension); `None`: none asked for.
    task_ids: Option<BTreeSet<String>>,
}

impl Filter {
    fn read(params: Option<&Value>) -> Result<Filter, ErrorObject> {
        let invalid = |what: &str| {
            ErrorObject::invalid_params(format!("Invalid params: subscriptions/listen {what}"))
        };
        let Some(Value::Object(notifications)) = params.and_then(|p| p.get("notifications")) else {
            return Err(invalid("needs \"notifications\", an object"));
        };
        let flag = |key: &str| match notifications.get(key) {
            None | Some(Value::Null) => Ok(false),
            Some(Value::Bool(b)) => Ok(*b),
            Some(_) => Err(invalid(&format!("\"{key}\" must be a boolean"))),
        };
        let uris = match notifications.get("resourceSubscriptions") {
            None | Some(Value::Null) => BTreeSet::new(),
            Some(Value::Array(items)) if items.len() > MAX_URIS => {
                return Err(invalid(&format!(
                    "\"resourceSubscriptions\" names more than {MAX_URIS} URIs"
                )));
            }
            Some(Value::Array(items)) => items
                .iter()
                .map(|u| u.as_str().map(str::to_owned))
                .collect::<Option<_>>()
                .ok_or_else(|| invalid("\"resourceSubscriptions\" must be a list of URIs"))?,
            Some(_) => return Err(invalid("\"resourceSubscriptions\" must be a list of URIs")),
        };
        let task_ids = match notifications.get("taskIds") {
            None | Some(Value::Null) => None,
            Some(Value::Array(items)) if items.len() > MAX_URIS => {
                return Err(invalid(&format!(
                    "\"taskIds\" names more than {MAX_URIS} tasks"
                )));
            }
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|id| id.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
                    .ok_or_else(|| invalid("\"taskIds\" must be a list of task ids"))?,
            ),
            Some(_) => return Err(invalid("\"taskIds\" must be a list of task ids")),
        };
        Ok(Filter {
            tools: flag("toolsListChanged")?,
            prompts: flag("promptsListChanged")?,
            resources: flag("resourcesListChanged")?,
            uris,
            task_ids,
        })
    }

    fn to_json(&self) -> Value {
        let mut out = Map::new();
        if self.tools {
            out.insert("toolsListChanged".into(), json!(true));
        }
        if self.prompts {
            out.insert("promptsListChanged".into(), json!(true));
        }
        if self.resources {
            out.insert("resourcesListChanged".into(), json!(true));
        }
        if !self.uris.is_empty() {
            out.insert("resourceSubscriptions".into(), json!(self.uris));
        }
        if let Some(task_ids) = &self.task_ids {
            out.insert("taskIds".into(), json!(task_ids));
        }
        Value::Object(out)
    }
}

/// Opens a listen stream: the acknowledgement first, then what was asked for, until the
/// client cancels (stdio: `notifications/cancelled`; HTTP: it closes the stream) or the
/// session drains, which ends it gracefully with the listen result.
pub(crate) fn start(
    session: &Arc<SessionShared>,
    responder: Responder,
    params: Option<Value>,
    envelope: Arc<Envelope>,
) {
    // taskIds without the extension: -32021 first, whatever else is wrong with the request.
    let asks_for_tasks = params
        .as_ref()
        .and_then(|p| p.get("notifications"))
        .and_then(|n| n.get("taskIds"))
        .is_some_and(|ids| !ids.is_null());
    if asks_for_tasks && !tasks::declared(&envelope.client_capabilities) {
        return responder.error(extension_missing(
            "taskIds belong to the tasks extension, which this request did not declare",
        ));
    }
    let mut filter = match Filter::read(params.as_ref()) {
        Ok(filter) => filter,
        Err(error) => return responder.error(error),
    };
    if let Err(err) = session.server.changes.check() {
        // -32603 (HTTP 500): the server's shared state is down, not the request's fault.
        return responder.unstamped().error(ErrorObject::internal(format!(
            "Internal error: changes cannot be followed now ({err}); retry later"
        )));
    }
    // Subscribed before anything is looked at or acknowledged, so no change after it is missed.
    let mut feed = session.server.changes.subscribe();
    let principal = session.principal.clone();
    if let Some(task_ids) = &mut filter.task_ids {
        // Only the caller's own tasks: another's reads as unknown, and is left out.
        let server_tasks = &session.server.tasks;
        let mut kept = BTreeSet::new();
        for id in task_ids.iter() {
            match server_tasks.get(id, principal.as_deref()) {
                Ok(Some(_)) => {
                    kept.insert(id.clone());
                }
                Ok(None) => {}
                Err(error) => return responder.unstamped().error(error),
            }
        }
        *task_ids = kept;
    }
    let catalog = &session.server.catalog;
    // Only what this server can ever send; the acknowledgement tells the client which.
    filter.prompts &= catalog.has_prompts();
    let resources = catalog.has_resources();
    filter.resources &= resources;
    if !resources {
        filter.uris.clear();
    }
    let Some(slot) = session.server.listeners.admit() else {
        session
            .server
            .metrics
            .refused(crate::metrics::Limit::ListenStreams);
        // -32603 (HTTP 500): the server's own limit, not the request's fault.
        return responder.unstamped().error(ErrorObject::internal(format!(
            "Internal error: the server has {} listen streams open, its limit; retry later",
            session.server.options.max_listen_streams
        )));
    };
    let id = responder.id().clone();
    let Some((serial, cancel)) = session.register_call(&id) else {
        let message = format!("Invalid request: id {id} is already used by a request in flight");
        return responder.error(ErrorObject::invalid_request(message));
    };
    let out = responder.out().clone();
    let responder_stream = responder.out().stream().cloned();
    let mut ack = Map::new();
    ack.insert("notifications".into(), filter.to_json());
    ack.insert("_meta".into(), json!({ SUBSCRIPTION_ID_KEY: &id }));
    out.send(notification_frame(
        "notifications/subscriptions/acknowledged",
        Some(&ack),
    ));
    let stream = ListenStream {
        out,
        id,
        filter,
        debounce: session.server.options.list_changed_debounce,
        tasks: session.server.tasks.clone(),
        principal,
        server: session.server.clone(),
        viewer: session.viewer(responder_stream.as_ref(), Some(&envelope)),
        seen: Arc::default(),
    };
    // What the listener sees now, taken with the feed already open, so that a change made
    // after it is compared with it. Without a rule to ask it is taken here and now; a rule is
    // not waited for: each list's first change is then announced whatever it changed.
    if stream.server.catalog.screens() && stream.server.catalog.policy().is_none() {
        let baseline = stream
            .seen
            .clone()
            .baseline(stream.server.clone(), stream.viewer.clone());
        if futures_util::FutureExt::now_or_never(baseline).is_none() {
            tracing::debug!("a listen stream's baseline did not finish at once");
        }
    }
    // Each followed task as it stands now (one that already ended would otherwise never be
    // heard of); a change racing this one is announced again, never lost.
    if let Some(task_ids) = &stream.filter.task_ids {
        for task_id in task_ids {
            stream.notify_task(task_id);
        }
    }
    let draining = session.draining.clone();
    let task_session = session.clone();
    session
        .runtime
        .spawn(session.tasks.track_future(async move {
            let _slot = slot;
            let ended = tokio::select! {
                () = cancel.cancelled() => End::Cancelled,
                () = draining.cancelled() => End::Graceful,
                end = stream.run(&mut feed) => end,
            };
            let still_listed = task_session.finish_call(&stream.id, serial);
            match ended {
                End::Graceful if still_listed => stream.close(responder),
                _ => responder.suppress(),
            }
        }));
}

enum End {
    /// The client cancelled, or the stream is gone: nothing more is sent.
    Cancelled,
    /// The server is ending: the listen result goes out.
    Graceful,
}

struct ListenStream {
    out: OutboundSender,
    id: RequestId,
    filter: Filter,
    debounce: std::time::Duration,
    tasks: Arc<Tasks>,
    principal: Option<String>,
    server: Arc<ServerInner>,
    /// Who listens: a list change is announced only if it changes what they see.
    viewer: Viewer,
    seen: Arc<Seen>,
}

impl ListenStream {
    fn notify(&self, method: &str, mut params: Map<String, Value>) {
        params.insert("_meta".into(), json!({ SUBSCRIPTION_ID_KEY: &self.id }));
        self.out.send(notification_frame(method, Some(&params)));
    }

    /// `notifications/tasks`: the whole task as `tasks/get` shows it now (no `resultType`).
    /// Read when the change is handled, so changes in quick succession may arrive as one.
    fn notify_task(&self, task_id: &str) {
        if let Ok(Some(task)) = self.tasks.get(task_id, self.principal.as_deref()) {
            self.notify("notifications/tasks", task.to_wire(true));
        }
    }

    async fn run(&self, feed: &mut ChangeFeed) -> End {
        while let Some(changes) = feed.next(self.debounce).await {
            let mut updated = Vec::new();
            changes.each_update(&self.filter.uris, |uri| updated.push(uri.to_owned()));
            let screens = self.server.catalog.screens();
            for uri in updated {
                // An update of a resource the listener may not see is not its to hear of.
                if screens && !visibility::sees_uri(&self.server, &self.viewer, &uri).await {
                    continue;
                }
                let mut params = Map::new();
                params.insert("uri".into(), json!(uri));
                self.notify("notifications/resources/updated", params);
            }
            if let Some(task_ids) = &self.filter.task_ids {
                changes.each_task_update(task_ids, |id| self.notify_task(id));
            }
            let lists = [
                (changes.tools && self.filter.tools, List::Tools),
                (changes.resources && self.filter.resources, List::Resources),
                (changes.prompts && self.filter.prompts, List::Prompts),
            ];
            for (changed, list) in lists {
                if changed && self.sees_change(list).await {
                    self.notify(list.notification(), Map::new());
                }
            }
        }
        End::Graceful
    }

    /// Whether a change to `list` changed what this listener sees of it (always, when
    /// nothing is screened).
    async fn sees_change(&self, list: List) -> bool {
        if !self.server.catalog.screens() {
            return true;
        }
        let ticket = self.seen.ticket();
        let digest = visibility::digest(&self.server, &self.viewer, list).await;
        self.seen.changed(list, ticket, digest)
    }

    /// The graceful end: the listen result; on a connection that carries every request
    /// (stdio), also `notifications/cancelled` for the listen id, as the schema requires.
    fn close(&self, responder: Responder) {
        let duplex = responder.out().stream().is_none();
        responder.result(&json!({"_meta": { SUBSCRIPTION_ID_KEY: &self.id }}));
        if duplex {
            self.out.send(notification_frame(
                "notifications/cancelled",
                Some(&json!({"requestId": &self.id, "reason": "the server is shutting down"})),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_reads_what_was_asked_and_refuses_garbage() {
        let read = |v: Value| Filter::read(Some(&json!({ "notifications": v })));
        let filter = read(json!({"toolsListChanged": true, "resourceSubscriptions": ["a://b"]}))
            .expect("valid");
        assert!(filter.tools && !filter.prompts);
        assert_eq!(
            filter.to_json(),
            json!({"toolsListChanged": true, "resourceSubscriptions": ["a://b"]})
        );
        assert!(read(json!({"toolsListChanged": "yes"})).is_err());
        assert!(read(json!({"resourceSubscriptions": [1]})).is_err());
        assert!(Filter::read(Some(&json!({}))).is_err());
    }

    #[test]
    fn the_limit_counts_open_streams() {
        let listeners = Arc::new(Listeners::new(2));
        let a = listeners.admit().expect("first");
        let _b = listeners.admit().expect("second");
        assert!(listeners.admit().is_none());
        drop(a);
        assert_eq!(listeners.open(), 1);
        assert!(listeners.admit().is_some());
    }
}
