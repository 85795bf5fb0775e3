//! Server→client requests (sampling, elicitation, roots): ids from a counter, a pending table,
//! a timeout reset by progress under a hard maximum, and `notifications/cancelled` when abandoned.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tokio::sync::{Notify, oneshot};
use tokio::time::Instant;

use super::SessionShared;
use super::outbound::OutboundSender;
use crate::Error;
use crate::handler::RequestOptions;
use crate::wire::{ErrorObject, RequestId, notification_frame, request_frame};

type Reply = Result<Value, ErrorObject>;

struct Pending {
    reply: oneshot::Sender<Reply>,
    progress: Arc<Notify>,
}

#[derive(Default)]
pub(crate) struct PeerRequests {
    next_id: AtomicI64,
    pending: Mutex<HashMap<i64, Pending>>,
}

impl PeerRequests {
    fn table(&self) -> std::sync::MutexGuard<'_, HashMap<i64, Pending>> {
        self.pending.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Delivers the client's answer; `false` if no request of ours has that id.
    pub(crate) fn resolve(&self, id: &RequestId, reply: Reply) -> bool {
        let RequestId::Number(id) = id else {
            return false;
        };
        match self.table().remove(id) {
            Some(pending) => {
                let _ = pending.reply.send(reply);
                true
            }
            None => false,
        }
    }

    /// Progress from the client on one of our requests restarts its timeout.
    pub(crate) fn touch(&self, token: &Value) {
        if let Some(id) = token.as_i64()
            && let Some(pending) = self.table().get(&id)
        {
            pending.progress.notify_one();
        }
    }

    /// Fails every waiting request with [`Error::Closed`].
    pub(crate) fn close_all(&self) {
        self.table().clear();
    }
}

/// Removes the pending entry and tells the client, unless the answer arrived.
struct PendingGuard<'a> {
    session: &'a SessionShared,
    out: &'a OutboundSender,
    id: i64,
    armed: bool,
    reason: &'static str,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        if self.armed && self.session.peer.table().remove(&self.id).is_some() {
            self.out.send(notification_frame(
                "notifications/cancelled",
                Some(&json!({"requestId": self.id, "reason": self.reason})),
            ));
        }
    }
}

/// Sends `method` to the client on `out` (the stream of the call that asks) and waits for
/// the answer.
pub(crate) async fn peer_request(
    session: &SessionShared,
    out: &OutboundSender,
    method: &str,
    params: Value,
    options: &RequestOptions,
) -> Result<Value, Error> {
    if session.shutdown.is_cancelled() {
        return Err(Error::Closed);
    }
    if !out.has_back_channel() {
        return Err(Error::NoBackChannel {
            method: method.to_owned(),
        });
    }
    let defaults = &session.server.options;
    let timeout = options.timeout.unwrap_or(defaults.client_request_timeout);
    let max_total = options
        .max_timeout
        .unwrap_or(defaults.client_request_max_timeout)
        .max(timeout);
    // Our id doubles as the progress token, so the client can keep a slow answer alive.
    let mut params = match params {
        Value::Object(map) => map,
        Value::Null => serde_json::Map::new(),
        other => {
            return Err(Error::InvalidArgument(format!(
                "{method} params must be an object, not {other}"
            )));
        }
    };
    let id = session.peer.next_id.fetch_add(1, Ordering::Relaxed);
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(serde_json::Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert("progressToken".into(), Value::from(id));
    }
    let (reply_tx, reply_rx) = oneshot::channel();
    let progress = Arc::new(Notify::new());
    session.peer.table().insert(
        id,
        Pending {
            reply: reply_tx,
            progress: progress.clone(),
        },
    );
    let mut guard = PendingGuard {
        session,
        out,
        id,
        armed: true,
        reason: "the request was abandoned",
    };
    out.send(request_frame(id, method, Some(&params)));

    let start = Instant::now();
    let hard_deadline = start + max_total;
    let mut deadline = (start + timeout).min(hard_deadline);
    tokio::pin!(reply_rx);
    loop {
        tokio::select! {
            reply = &mut reply_rx => {
                guard.armed = false;
                return match reply {
                    Ok(Ok(value)) => Ok(value),
                    Ok(Err(error)) => Err(Error::Peer(error)),
                    Err(_) => Err(Error::Closed),
                };
            }
            () = progress.notified() => {
                deadline = (Instant::now() + timeout).min(hard_deadline);
            }
            () = tokio::time::sleep_until(deadline) => {
                guard.reason = "timed out";
                drop(guard);
                return Err(Error::Timeout { after: start.elapsed() });
            }
        }
    }
}
