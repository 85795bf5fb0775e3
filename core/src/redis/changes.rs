//! The change bus and the task signals over Redis pub/sub.
//!
//! Every change goes through Redis, the publisher's own included, so each feed sees one
//! publisher's changes in the order it published them (one ordered publishing connection per
//! replica; Redis delivers a channel's messages in order).

use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::Shared;
use crate::Error;
use crate::changes::{Change, ChangeBus, ChangeFeed};
use crate::tasks::{TaskAction, TaskSignal};

/// A [`ChangeBus`] shared by every replica connected to one Redis (see [`Redis`](super::Redis)).
pub struct RedisChangeBus {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for RedisChangeBus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisChangeBus").finish_non_exhaustive()
    }
}

impl RedisChangeBus {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        RedisChangeBus { shared }
    }
}

impl ChangeBus for RedisChangeBus {
    fn publish(&self, change: Change) {
        if let Err(err) = self.shared.outbox.try_send(change) {
            tracing::warn!(%err, "changes came faster than Redis took them; one was dropped");
        }
    }

    fn subscribe(&self) -> ChangeFeed {
        let sender = self
            .shared
            .changes
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        ChangeFeed::new(sender.subscribe())
    }

    fn check(&self) -> Result<(), Error> {
        if self.shared.subscribed.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(Error::Transport(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "the change bus (Redis) cannot be reached",
            )))
        }
    }
}

fn change_to_json(change: &Change) -> Value {
    match change {
        Change::ToolsListChanged => json!({"kind": "tools"}),
        Change::ResourcesListChanged => json!({"kind": "resources"}),
        Change::PromptsListChanged => json!({"kind": "prompts"}),
        Change::ResourceUpdated { uri } => json!({"kind": "resource", "uri": &**uri}),
        Change::TaskUpdated { id } => json!({"kind": "task", "id": &**id}),
    }
}

fn change_from_json(value: &Value) -> Option<Change> {
    let text = |key: &str| value.get(key).and_then(Value::as_str).map(Arc::from);
    Some(match value.get("kind")?.as_str()? {
        "tools" => Change::ToolsListChanged,
        "resources" => Change::ResourcesListChanged,
        "prompts" => Change::PromptsListChanged,
        "resource" => Change::ResourceUpdated { uri: text("uri")? },
        "task" => Change::TaskUpdated { id: text("id")? },
        _ => return None,
    })
}

pub(super) fn signal_to_json(signal: &TaskSignal) -> String {
    match &signal.action {
        TaskAction::Answer(answers) => json!({"id": signal.id, "answer": answers}),
        TaskAction::Cancel => json!({"id": signal.id, "cancel": true}),
    }
    .to_string()
}

fn signal_from_json(value: &Value) -> Option<TaskSignal> {
    let id = value.get("id")?.as_str()?.to_owned();
    let action = match value.get("answer") {
        Some(Value::Object(answers)) => TaskAction::Answer(answers.clone()),
        _ if value.get("cancel") == Some(&Value::Bool(true)) => TaskAction::Cancel,
        _ => return None,
    };
    Some(TaskSignal { id, action })
}

/// The retry delay after the `attempt`th failure in a row: 100 ms doubling to 2 s.
fn backoff(attempt: u32) -> Duration {
    Duration::from_millis(100u64 << attempt.min(5)).min(Duration::from_secs(2))
}

/// Publishes the queued changes, in order, reconnecting when Redis is lost (at most once per
/// backoff, so a change never waits for a reconnect). A change that cannot reach Redis still
/// reaches this replica's own feeds at once: better than losing it here too.
pub(super) async fn publish(shared: Weak<Shared>, mut queued: mpsc::Receiver<Change>) {
    let mut failures = 0;
    let mut connection = None;
    let mut reconnect_at = tokio::time::Instant::now();
    while let Some(change) = queued.recv().await {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        if connection.is_none() && tokio::time::Instant::now() >= reconnect_at {
            connection = strong.client.get_multiplexed_async_connection().await.ok();
        }
        let sent = match connection.as_mut() {
            Some(con) => redis::cmd("PUBLISH")
                .arg(strong.changes_channel())
                .arg(change_to_json(&change).to_string())
                .query_async::<i64>(con)
                .await
                .is_ok(),
            None => false,
        };
        if sent {
            failures = 0;
            continue;
        }
        if connection.take().is_some() || tokio::time::Instant::now() >= reconnect_at {
            failures += 1;
            reconnect_at = tokio::time::Instant::now() + backoff(failures);
            if failures == 1 {
                tracing::warn!("Redis is unreachable: changes reach this replica's listeners only");
            }
        }
        let _ = strong
            .changes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(change);
    }
}

/// Hears changes and signals from Redis while the connection lives; resubscribes when it is
/// lost (ending this replica's feeds first: what was missed meanwhile is unknown).
pub(super) async fn subscribe(shared: Weak<Shared>, first: std::sync::mpsc::SyncSender<()>) {
    let mut failures = 0;
    loop {
        let Some(strong) = shared.upgrade() else {
            return;
        };
        let (changes_channel, signals_channel) =
            (strong.changes_channel(), strong.signals_channel());
        let pubsub = strong.client.get_async_pubsub().await;
        drop(strong);
        let mut pubsub = match pubsub {
            Ok(pubsub) => pubsub,
            Err(err) => {
                failures += 1;
                if failures == 1 {
                    tracing::warn!(%err, "cannot subscribe to Redis; retrying");
                }
                tokio::time::sleep(backoff(failures)).await;
                continue;
            }
        };
        if pubsub.subscribe(&changes_channel).await.is_err()
            || pubsub.subscribe(&signals_channel).await.is_err()
        {
            failures += 1;
            tokio::time::sleep(backoff(failures)).await;
            continue;
        }
        if failures > 0 {
            tracing::info!("subscribed to Redis again");
        }
        failures = 0;
        match shared.upgrade() {
            Some(strong) => strong.subscribed.store(true, Ordering::Release),
            None => return,
        }
        // `connect` may wait for the first time (later ones find the channel full: fine).
        let _ = first.try_send(());
        let mut messages = pubsub.on_message();
        while let Some(message) = messages.next().await {
            let Some(strong) = shared.upgrade() else {
                return;
            };
            let Ok(value) = serde_json::from_slice::<Value>(message.get_payload_bytes()) else {
                continue;
            };
            if message.get_channel_name() == changes_channel {
                if let Some(change) = change_from_json(&value) {
                    let _ = strong
                        .changes
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .send(change);
                }
            } else if let Some(signal) = signal_from_json(&value) {
                let _ = strong.signals.send(signal);
            }
        }
        let Some(strong) = shared.upgrade() else {
            return;
        };
        strong.subscribed.store(false, Ordering::Release);
        tracing::warn!("lost the Redis subscription; listen streams end and resubscribing");
        let capacity = strong.options.change_capacity.max(1);
        *strong.changes.lock().unwrap_or_else(|e| e.into_inner()) =
            tokio::sync::broadcast::Sender::new(capacity);
        drop(strong);
        failures += 1;
        tokio::time::sleep(backoff(failures)).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn changes_and_signals_survive_their_json() {
        for change in [
            Change::ToolsListChanged,
            Change::ResourcesListChanged,
            Change::PromptsListChanged,
            Change::ResourceUpdated {
                uri: "a://b".into(),
            },
            Change::TaskUpdated { id: "t1".into() },
        ] {
            assert_eq!(change_from_json(&change_to_json(&change)), Some(change));
        }
        let mut answers = serde_json::Map::new();
        answers.insert("q1".into(), json!({"action": "accept"}));
        for action in [TaskAction::Answer(answers), TaskAction::Cancel] {
            let signal = TaskSignal {
                id: "t".into(),
                action,
            };
            let text = signal_to_json(&signal);
            let value: Value = serde_json::from_str(&text).expect("json");
            assert_eq!(signal_from_json(&value), Some(signal));
        }
        assert_eq!(change_from_json(&json!({"kind": "nope"})), None);
        assert_eq!(signal_from_json(&json!({"id": "t"})), None);
    }

    #[test]
    fn backoff_grows_to_two_seconds() {
        assert_eq!(backoff(0), Duration::from_millis(100));
        assert_eq!(backoff(1), Duration::from_millis(200));
        assert_eq!(backoff(40), Duration::from_secs(2));
    }
}
