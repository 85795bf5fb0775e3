//! List watching: each session hears of list changes and of updates to the resources it
//! subscribed to.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use super::SessionShared;
use crate::changes::{ChangeFeed, Changes};
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
        let next = tokio::select! {
            () = shutdown.cancelled() => return,
            next = feed.next(debounce) => next,
        };
        let changes = match next {
            Some(changes) => changes,
            // A shared bus that lost its connection ends its feeds: once it hears every replica
            // again, follow it anew and announce everything (what was missed is unknown). The
            // in-process bus never ends a feed while its server lives.
            None => {
                let Some(bus) = session.upgrade().map(|s| s.server.changes.clone()) else {
                    return;
                };
                loop {
                    // A retry period, not a synchronisation: the bus says when it is back.
                    tokio::select! {
                        () = shutdown.cancelled() => return,
                        () = tokio::time::sleep(std::time::Duration::from_millis(200)) => {}
                    }
                    if bus.check().is_ok() {
                        break;
                    }
                }
                feed = bus.subscribe();
                Changes::everything()
            }
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
