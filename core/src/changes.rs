//! How a server's changes reach the sessions and listen streams that announce them: list
//! changes (tools, resources, prompts), resource updates and task updates are published on a
//! [`ChangeBus`],
//! and every legacy session and every 2026-07-28 `subscriptions/listen` stream reads its own
//! [`ChangeFeed`] of it.
//!
//! The default, [`LocalChangeBus`], carries them within the process. A bus shared between
//! replicas (Redis pub/sub, say) implements the same trait and hands each subscriber a feed
//! filled from its own connection, so a resource updated on one replica is heard on all.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::broadcast;

/// One change a server announces.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Change {
    /// A tool was added or removed.
    ToolsListChanged,
    /// A resource or resource template was added or removed.
    ResourcesListChanged,
    /// A prompt was added or removed.
    PromptsListChanged,
    /// The resource `uri` changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The resource's URI.
        uri: Arc<str>,
    },
    /// The task `id` changed: its status, its open questions or its outcome
    /// (`notifications/tasks`, read from the task store).
    TaskUpdated {
        /// The task's id.
        id: Arc<str>,
    },
}

/// Carries a server's [`Change`]s to every session and listen stream that reads them.
///
/// `publish` must not block: it is called from registration and from handlers. A feed that
/// falls behind may skip changes; it reports how many, and its reader then announces every
/// kind it follows (clients re-read; nothing is silently lost).
pub trait ChangeBus: Send + Sync + 'static {
    /// Sends `change` to every feed open now (on every replica sharing the bus).
    fn publish(&self, change: Change);
    /// A feed of the changes published from now on.
    fn subscribe(&self) -> ChangeFeed;
    /// Whether feeds hear every replica now; a shared bus that lost its connection says why,
    /// and a new `subscriptions/listen` is refused with it (open ones have ended).
    fn check(&self) -> Result<(), crate::Error> {
        Ok(())
    }
}

/// The in-process bus: a bounded broadcast channel. The default of every server.
#[derive(Debug)]
pub struct LocalChangeBus {
    sender: broadcast::Sender<Change>,
}

impl LocalChangeBus {
    /// Changes a slow feed may fall behind by before it skips some.
    pub const DEFAULT_CAPACITY: usize = 1024;

    /// A bus whose feeds may fall `capacity` changes behind (at least 1).
    pub fn new(capacity: usize) -> Self {
        LocalChangeBus {
            sender: broadcast::Sender::new(capacity.max(1)),
        }
    }
}

impl Default for LocalChangeBus {
    fn default() -> Self {
        LocalChangeBus::new(Self::DEFAULT_CAPACITY)
    }
}

impl ChangeBus for LocalChangeBus {
    fn publish(&self, change: Change) {
        // No feed open (no session yet) is fine: nobody is listening.
        let _ = self.sender.send(change);
    }

    fn subscribe(&self) -> ChangeFeed {
        ChangeFeed::new(self.sender.subscribe())
    }
}

/// One reader's view of a [`ChangeBus`]: the changes published since it was opened, in order.
/// Another bus fills a broadcast channel of its own and wraps the receiver.
#[derive(Debug)]
pub struct ChangeFeed {
    receiver: broadcast::Receiver<Change>,
}

impl ChangeFeed {
    /// Wraps the receiving end of a bus's channel.
    pub fn new(receiver: broadcast::Receiver<Change>) -> Self {
        ChangeFeed { receiver }
    }

    /// The next changes to announce, or `None` once the bus is gone. A resource or task update
    /// comes at once; a list change waits `debounce` and takes along everything published
    /// meanwhile, so a burst of registrations is one notification per list.
    pub(crate) async fn next(&mut self, debounce: Duration) -> Option<Changes> {
        let mut changes = Changes::default();
        let first = match self.receiver.recv().await {
            Ok(change) => change,
            Err(broadcast::error::RecvError::Lagged(missed)) => {
                changes.skipped(missed);
                return Some(changes);
            }
            Err(broadcast::error::RecvError::Closed) => return None,
        };
        let lists = !matches!(
            first,
            Change::ResourceUpdated { .. } | Change::TaskUpdated { .. }
        );
        changes.add(first);
        if lists {
            tokio::time::sleep(debounce).await;
            loop {
                match self.receiver.try_recv() {
                    Ok(change) => changes.add(change),
                    Err(broadcast::error::TryRecvError::Lagged(missed)) => changes.skipped(missed),
                    Err(broadcast::error::TryRecvError::Empty) => break,
                    Err(broadcast::error::TryRecvError::Closed) if changes.is_empty() => {
                        return None;
                    }
                    Err(broadcast::error::TryRecvError::Closed) => break,
                }
            }
        }
        Some(changes)
    }
}

/// Changes gathered into one announcement.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Changes {
    pub(crate) tools: bool,
    pub(crate) resources: bool,
    pub(crate) prompts: bool,
    /// Updated resources, in order, each once.
    pub(crate) updated: Vec<Arc<str>>,
    /// Updated tasks, in order, each once.
    pub(crate) tasks_updated: Vec<Arc<str>>,
    /// The feed fell behind: every resource and task its reader follows may have been updated.
    pub(crate) all_updated: bool,
}

impl Changes {
    /// Every list changed and every followed item updated: what a reader announces when it
    /// cannot know what it missed.
    pub(crate) fn everything() -> Changes {
        Changes {
            tools: true,
            resources: true,
            prompts: true,
            all_updated: true,
            ..Changes::default()
        }
    }

    fn add(&mut self, change: Change) {
        match change {
            Change::ToolsListChanged => self.tools = true,
            Change::ResourcesListChanged => self.resources = true,
            Change::PromptsListChanged => self.prompts = true,
            Change::ResourceUpdated { uri } => {
                if !self.updated.contains(&uri) {
                    self.updated.push(uri);
                }
            }
            Change::TaskUpdated { id } => {
                if !self.tasks_updated.contains(&id) {
                    self.tasks_updated.push(id);
                }
            }
        }
    }

    fn skipped(&mut self, missed: u64) {
        tracing::warn!(
            missed,
            "changes came faster than a session or listen stream took them; announcing every kind it follows"
        );
        *self = Changes::everything();
    }

    fn is_empty(&self) -> bool {
        *self == Changes::default()
    }

    /// Calls `announce` for each resource of `followed` to announce as updated: those updated
    /// (looked up, not scanned), or all of them if the feed fell behind.
    pub(crate) fn each_update<F: Followed + ?Sized>(
        &self,
        followed: &F,
        announce: impl FnMut(&str),
    ) {
        each_of(&self.updated, self.all_updated, followed, announce);
    }

    /// The same for tasks: each of `followed` updated (or all, if the feed fell behind).
    pub(crate) fn each_task_update<F: Followed + ?Sized>(
        &self,
        followed: &F,
        announce: impl FnMut(&str),
    ) {
        each_of(&self.tasks_updated, self.all_updated, followed, announce);
    }
}

fn each_of<F: Followed + ?Sized>(
    updated: &[Arc<str>],
    all: bool,
    followed: &F,
    mut announce: impl FnMut(&str),
) {
    if all {
        followed.each(&mut announce);
    } else {
        for item in updated.iter().filter(|item| followed.follows(item)) {
            announce(item);
        }
    }
}

/// A reader's set of followed resource URIs or task ids.
pub(crate) trait Followed {
    fn follows(&self, uri: &str) -> bool;
    fn each(&self, f: &mut dyn FnMut(&str));
}

impl<S: std::hash::BuildHasher> Followed for std::collections::HashSet<String, S> {
    fn follows(&self, uri: &str) -> bool {
        self.contains(uri)
    }
    fn each(&self, f: &mut dyn FnMut(&str)) {
        self.iter().for_each(|uri| f(uri));
    }
}

impl Followed for std::collections::BTreeSet<String> {
    fn follows(&self, uri: &str) -> bool {
        self.contains(uri)
    }
    fn each(&self, f: &mut dyn FnMut(&str)) {
        self.iter().for_each(|uri| f(uri));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_burst_of_list_changes_is_one_announcement_and_updates_come_at_once() {
        let bus = LocalChangeBus::default();
        let mut feed = bus.subscribe();
        bus.publish(Change::ResourceUpdated {
            uri: "a://x".into(),
        });
        bus.publish(Change::ToolsListChanged);
        bus.publish(Change::ToolsListChanged);
        bus.publish(Change::PromptsListChanged);
        let first = feed.next(Duration::ZERO).await.expect("open");
        assert_eq!(first.updated, vec![Arc::<str>::from("a://x")]);
        assert!(!first.tools, "an update does not wait for list changes");
        let second = feed.next(Duration::ZERO).await.expect("open");
        assert!(second.tools && second.prompts && !second.resources);
        assert!(second.updated.is_empty());
    }

    #[tokio::test]
    async fn a_feed_that_falls_behind_announces_everything() {
        let bus = LocalChangeBus::new(2);
        let mut feed = bus.subscribe();
        for _ in 0..5 {
            bus.publish(Change::ResourceUpdated {
                uri: "a://x".into(),
            });
        }
        let changes = feed.next(Duration::ZERO).await.expect("open");
        assert!(changes.tools && changes.resources && changes.prompts);
        let followed: std::collections::BTreeSet<String> = ["a://y".to_owned()].into();
        let mut announced = Vec::new();
        changes.each_update(&followed, |uri| announced.push(uri.to_owned()));
        assert_eq!(
            announced,
            ["a://y"],
            "every followed resource, updated or not"
        );
    }

    #[tokio::test]
    async fn a_dropped_bus_ends_its_feeds() {
        let bus = LocalChangeBus::default();
        let mut feed = bus.subscribe();
        drop(bus);
        assert!(feed.next(Duration::ZERO).await.is_none());
    }
}
