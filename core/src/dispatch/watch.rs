//! List watching: each session hears of list changes and of updates to the resources it
//! subscribed to.
//!
//! One task per server reads the change feed and tells every live session, rather than a task
//! per session: opening a session then costs an entry in a table, not a task spawned (from a
//! host's thread, a wake-up of the runtime) and woken again when the session ends. The task
//! runs while the server has sessions that watch.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use serde_json::json;
use tokio::task::JoinHandle;

use super::SessionShared;
use super::visibility::{List, announce_lists, sees_uri};
use crate::changes::{ChangeBus, Changes};
use crate::wire::notification_frame;

/// The sessions of one server that hear of its changes, and the task that tells them.
#[derive(Default)]
pub(crate) struct Watchers {
    state: Mutex<WatchState>,
    next_key: AtomicU64,
}

#[derive(Default)]
struct WatchState {
    sessions: HashMap<u64, Weak<SessionShared>>,
    task: Option<JoinHandle<()>>,
}

impl Watchers {
    fn state(&self) -> std::sync::MutexGuard<'_, WatchState> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A key for a session about to join.
    pub(crate) fn key(&self) -> u64 {
        self.next_key.fetch_add(1, Ordering::Relaxed)
    }

    /// `session` hears of changes published from now on. The feed is opened here, before the
    /// session handles any frame: a change made before the task first runs is still announced.
    /// The task is started on the session's runtime when none runs (the first session, or the
    /// runtime of the one before has ended). A server served from two runtimes at once keeps
    /// its task on the one it started on: should that runtime end first, the other's sessions
    /// hear nothing until the next session joins and starts it again.
    pub(crate) fn join(self: &Arc<Self>, key: u64, session: &Arc<SessionShared>) {
        let mut state = self.state();
        state.sessions.insert(key, Arc::downgrade(session));
        if state.task.as_ref().is_none_or(JoinHandle::is_finished) {
            let bus = session.server.changes.clone();
            let feed = bus.subscribe();
            state.task = Some(session.runtime.spawn(announce_changes(
                Arc::downgrade(self),
                bus,
                feed,
                session.server.options.list_changed_debounce,
            )));
        }
    }

    /// The session `key` hears no more; the last one to leave stops the task.
    pub(crate) fn leave(&self, key: u64) {
        let mut state = self.state();
        if state.sessions.remove(&key).is_some()
            && state.sessions.is_empty()
            && let Some(task) = state.task.take()
        {
            task.abort();
        }
    }

    /// The sessions that still exist. (Taken out whole: a session whose last reference is
    /// dropped leaves, which takes the lock.)
    fn members(&self) -> Vec<Arc<SessionShared>> {
        self.state()
            .sessions
            .values()
            .filter_map(Weak::upgrade)
            .collect()
    }
}

/// Sends each live session one coalesced `list_changed` per burst of changes to each list, once
/// it is initialized, and `notifications/resources/updated` for the URIs it subscribed to.
async fn announce_changes(
    watchers: Weak<Watchers>,
    bus: Arc<dyn ChangeBus>,
    mut feed: crate::changes::ChangeFeed,
    debounce: Duration,
) {
    loop {
        let changes = match feed.next(debounce).await {
            Some(changes) => changes,
            // A shared bus that lost its connection ends its feeds: once it hears every replica
            // again, follow it anew and announce everything (what was missed is unknown). The
            // in-process bus never ends a feed while its server lives.
            None => {
                // A retry period, not a synchronisation: the bus says when it is back.
                while bus.check().is_err() {
                    tokio::time::sleep(Duration::from_millis(200)).await;
                }
                feed = bus.subscribe();
                Changes::everything()
            }
        };
        let Some(watchers) = watchers.upgrade() else {
            return;
        };
        for session in watchers.members() {
            if !session.shutdown.is_cancelled() {
                announce(&session, &changes);
            }
        }
    }
}

fn announce(session: &Arc<SessionShared>, changes: &Changes) {
    if !changes.updated.is_empty() || changes.all_updated {
        let mut updated = Vec::new();
        changes.each_update(&*session.subscriptions(), |uri| {
            updated.push(uri.to_owned())
        });
        let send = |session: &SessionShared, uri: &str| {
            session.send(notification_frame(
                "notifications/resources/updated",
                Some(&json!({ "uri": uri })),
            ));
        };
        if session.server.catalog.screens() && !updated.is_empty() {
            // An update of a resource it may not see is not its to hear of.
            let viewer = session.viewer(None, None);
            let task_session = session.clone();
            super::call::run_task(session, async move {
                for uri in updated {
                    if sees_uri(&task_session.server, &viewer, &uri).await {
                        send(&task_session, &uri);
                    }
                }
            });
        } else {
            for uri in updated {
                send(session, &uri);
            }
        }
    }
    // Before initialization a client has not listed anything yet: nothing to announce.
    if !session.initialized.load(Ordering::Acquire) {
        return;
    }
    let lists = [
        (changes.tools, List::Tools),
        (changes.resources, List::Resources),
        (changes.prompts, List::Prompts),
    ];
    let changed = lists
        .into_iter()
        .filter_map(|(changed, list)| changed.then_some(list))
        .collect();
    announce_lists(session, changed);
}
