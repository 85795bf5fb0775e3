//! List watching: each session hears of list changes and of updates to the resources it
//! subscribed to.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::SessionShared;
use crate::wire::notification_frame;

pub(super) struct Watched {
    pub(super) tools: tokio::sync::watch::Receiver<u64>,
    pub(super) catalog: tokio::sync::watch::Receiver<[u64; 2]>,
    /// The resource and prompt list versions when the session subscribed.
    pub(super) catalog_seen: [u64; 2],
    pub(super) updates: tokio::sync::broadcast::Receiver<Arc<str>>,
}

/// Sends one coalesced `list_changed` per burst of changes to each list, once initialized, and
/// `notifications/resources/updated` for subscribed URIs.
pub(super) async fn watch_changes(
    session: std::sync::Weak<SessionShared>,
    mut watched: Watched,
    shutdown: CancellationToken,
    debounce: std::time::Duration,
) {
    let mut seen_catalog = watched.catalog_seen;
    loop {
        let mut tools_changed = false;
        tokio::select! {
            () = shutdown.cancelled() => return,
            changed = watched.tools.changed() => {
                if changed.is_err() { return }
                tools_changed = true;
            }
            changed = watched.catalog.changed() => if changed.is_err() { return },
            update = watched.updates.recv() => {
                let uri = match update {
                    Ok(uri) => uri,
                    Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                        tracing::warn!(missed, "resource updates came faster than this session took them");
                        continue;
                    }
                    Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                };
                let Some(session) = session.upgrade() else { return };
                if session.subscriptions().contains(&*uri) {
                    session.send(notification_frame(
                        "notifications/resources/updated",
                        Some(&json!({"uri": &*uri})),
                    ));
                }
                continue;
            }
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(debounce) => {}
        }
        if watched.tools.has_changed().unwrap_or(false) {
            tools_changed = true;
        }
        watched.tools.borrow_and_update();
        let catalog = *watched.catalog.borrow_and_update();
        let Some(session) = session.upgrade() else {
            return;
        };
        if !session.initialized.load(Ordering::Acquire) {
            seen_catalog = catalog;
            continue;
        }
        let notify = |method: &str| session.send(notification_frame::<Value>(method, None));
        if tools_changed {
            notify("notifications/tools/list_changed");
        }
        if catalog[0] != seen_catalog[0] {
            notify("notifications/resources/list_changed");
        }
        if catalog[1] != seen_catalog[1] {
            notify("notifications/prompts/list_changed");
        }
        seen_catalog = catalog;
    }
}
