//! List watching: each session hears of list changes and of updates to the resources it
//! subscribed to.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::SessionShared;
use crate::changes::ChangeFeed;
use crate::wire::notification_frame;

/// Sends one coalesced `list_changed` per burst of changes to each list, once initialized, and
/// `notifications/resources/updated` for subscribed URIs.
pub(super) async fn watch_changes(
    session: std::sync::Weak<SessionShared>,
    mut feed: ChangeFeed,
    shutdown: CancellationToken,
    debounce: std::time::Duration,
) {
    loop {
        let changes = tokio::select! {
            () = shutdown.cancelled() => return,
            changes = feed.next(debounce) => match changes {
                Some(changes) => changes,
                None => return,
            },
        };
        let Some(session) = session.upgrade() else {
            return;
        };
        if !changes.updated.is_empty() || changes.all_updated {
            changes.each_update(&*session.subscriptions(), |uri| {
                session.send(notification_frame(
                    "notifications/resources/updated",
                    Some(&json!({ "uri": uri })),
                ));
            });
        }
        // Before initialization a client has not listed anything yet: nothing to announce.
        if !session.initialized.load(Ordering::Acquire) {
            continue;
        }
        let notify = |method: &str| session.send(notification_frame::<Value>(method, None));
        if changes.tools {
            notify("notifications/tools/list_changed");
        }
        if changes.resources {
            notify("notifications/resources/list_changed");
        }
        if changes.prompts {
            notify("notifications/prompts/list_changed");
        }
    }
}
