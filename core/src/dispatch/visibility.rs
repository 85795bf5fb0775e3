//! The catalog as one request sees it: the definitions' required scopes and tags checked
//! against the request's viewer here, then the server's policy asked once for what is left.
//! Lists leave hidden items out; calls, reads, prompts and completions answer them as unknown.
//!
//! A session (and a 2026-07-28 listen stream) also remembers a digest of what it saw of each
//! list, so a change announces `list_changed` only to those whose view of the list changed.

use std::collections::HashSet;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use super::SessionShared;
use super::modern::Envelope;
use super::request_stream::RequestStream;

/// Where a request came from: the stream its answer goes to (which knows its sender, over
/// HTTP) and its 2026-07-28 envelope.
#[derive(Clone, Copy)]
pub(crate) struct Asker<'a> {
    pub(crate) stream: Option<&'a Arc<RequestStream>>,
    pub(crate) modern: Option<&'a Envelope>,
}
use crate::catalog::visibility::{CatalogItem, Guarded, Viewer};
use crate::catalog::{self, Catalog};

/// The keys (names, URIs, URI templates) a request may not see.
pub(crate) type Hidden = HashSet<String>;

impl SessionShared {
    /// Who this request comes from: its own identity (the token of the HTTP request that
    /// carried it) or else the session's, with the request's client info and version (a
    /// 2026-07-28 request's own).
    pub(crate) fn viewer(
        &self,
        stream: Option<&Arc<RequestStream>>,
        modern: Option<&Envelope>,
    ) -> Viewer {
        let mut viewer = match stream.and_then(|stream| stream.viewer()) {
            Some(own) => Viewer::clone(own),
            None => Viewer::clone(&self.identity()),
        };
        match (modern, self.negotiated.get()) {
            (Some(envelope), _) => {
                viewer.client_info = envelope.client_info.clone();
                viewer.protocol_version = Some(envelope.version);
            }
            (None, Some(negotiated)) => {
                viewer.client_info = (!negotiated.assumed).then(|| negotiated.client_info.clone());
                viewer.protocol_version = Some(negotiated.version);
            }
            (None, None) => {}
        }
        viewer
    }
}

/// The keys of `candidates` that `viewer` may not see: those whose requirements it does not
/// meet, then those the server's policy hides (asked once, for all that are left). Only
/// guarded items are candidates when there is no policy.
pub(crate) async fn hidden(
    catalog: &Catalog,
    viewer: &Viewer,
    candidates: Vec<(String, CatalogItem)>,
) -> Hidden {
    let mut hidden = Hidden::new();
    let mut asked = Vec::new();
    let mut items = Vec::new();
    for (key, item) in candidates {
        if viewer.meets(&item.required_scopes, &item.required_tags) {
            asked.push(key);
            items.push(item);
        } else {
            hidden.insert(key);
        }
    }
    if let Some(policy) = catalog.policy()
        && !items.is_empty()
    {
        // A rule that panics fails closed, as one that errs: its items are hidden.
        let asking = std::panic::AssertUnwindSafe(policy.visible(viewer, &items));
        let verdicts = match futures_util::FutureExt::catch_unwind(asking).await {
            Ok(verdicts) => verdicts,
            Err(_) => {
                tracing::warn!("the visibility rule panicked: its items are hidden");
                Vec::new()
            }
        };
        for (at, key) in asked.into_iter().enumerate() {
            if verdicts.get(at) != Some(&true) {
                hidden.insert(key);
            }
        }
    }
    hidden
}

/// The entries of a list worth screening: every entry when a policy decides, else only
/// those that require something (none when nothing is screened: the common case costs one
/// check).
pub(crate) fn candidates<'a, V: 'a, G: Guarded + 'a>(
    catalog: &Catalog,
    entries: impl Iterator<Item = (&'a String, &'a V)>,
    guard: impl Fn(&V) -> &G,
) -> Vec<(String, CatalogItem)> {
    if !catalog.screens() {
        return Vec::new();
    }
    let everything = catalog.policy().is_some();
    entries
        .filter(|(_, entry)| everything || guard(entry).is_guarded())
        .map(|(key, entry)| (key.clone(), guard(entry).item()))
        .collect()
}

/// Runs `answer` with what the request may not see of `candidates`: here and now when no
/// policy has to be asked (the common case costs no task), else once it answered.
pub(crate) fn screen(
    session: &Arc<SessionShared>,
    asker: Asker<'_>,
    candidates: Vec<(String, CatalogItem)>,
    answer: impl FnOnce(Hidden) + Send + 'static,
) {
    let catalog = &session.server.catalog;
    if candidates.is_empty() {
        return answer(Hidden::new());
    }
    let viewer = session.viewer(asker.stream, asker.modern);
    if catalog.policy().is_none() {
        let hidden = candidates
            .into_iter()
            .filter(|(_, item)| !viewer.meets(&item.required_scopes, &item.required_tags))
            .map(|(key, _)| key)
            .collect();
        return answer(hidden);
    }
    let server = session.server.clone();
    super::call::run_task(session, async move {
        answer(hidden(&server.catalog, &viewer, candidates).await);
    });
}

/// Whether `viewer` may see the resource at `uri`: something that serves it (its view, its
/// fixed resource, a template that matches) is visible to it, or nothing registered serves it
/// (an update the server announces of a URI of its own).
pub(crate) async fn sees_uri(
    server: &super::server::ServerInner,
    viewer: &Viewer,
    uri: &str,
) -> bool {
    let catalog = &server.catalog;
    let mut items: Vec<CatalogItem> = catalog
        .views
        .get(uri)
        .map(|view| view.resource().item())
        .into_iter()
        .collect();
    items.extend(catalog.resources_serving(uri).into_iter().map(|f| f.item));
    if items.is_empty() {
        return true;
    }
    let keys: Vec<String> = (0..items.len()).map(|at| at.to_string()).collect();
    let candidates = candidates(catalog, keys.iter().zip(items.iter()), |item| item);
    hidden(catalog, viewer, candidates).await.len() < items.len()
}

/// Which of the lists a change may concern.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum List {
    Tools,
    Resources,
    Prompts,
}

impl List {
    pub(crate) const ALL: [List; 3] = [List::Tools, List::Resources, List::Prompts];

    fn index(self) -> usize {
        self as usize
    }

    pub(crate) fn notification(self) -> &'static str {
        match self {
            List::Tools => "notifications/tools/list_changed",
            List::Resources => "notifications/resources/list_changed",
            List::Prompts => "notifications/prompts/list_changed",
        }
    }
}

/// A digest of what `viewer` sees of `list`: its visible keys in order (resources with their
/// templates, skills and views).
pub(crate) async fn digest(
    server: &super::server::ServerInner,
    viewer: &Viewer,
    list: List,
) -> u64 {
    let catalog = &server.catalog;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    match list {
        List::Tools => {
            let tools = server.registry.snapshot();
            let candidates = candidates(catalog, tools.iter(), |tool| &tool.def);
            let hidden = hidden(catalog, viewer, candidates).await;
            let tools = tools.iter().map(|(name, tool)| (name, tool.generation));
            keys_digest(&mut hasher, tools, &hidden);
            // Turning the search on or off (or changing it) changes the listing too.
            server
                .search
                .current()
                .map(|search| search.generation())
                .hash(&mut hasher);
        }
        List::Resources => {
            let resources = catalog::snapshot(&catalog.resources);
            let templates = catalog::snapshot(&catalog.templates);
            let mut candidates_of = candidates(catalog, resources.iter(), |r| &r.def);
            candidates_of.extend(candidates(catalog, templates.iter(), |t| &t.def));
            let views = catalog.views.snapshot();
            candidates_of.extend(candidates(catalog, views.iter(), |v| v.resource()));
            let hidden = hidden(catalog, viewer, candidates_of).await;
            let resources = resources.iter().map(|(uri, r)| (uri, r.generation));
            keys_digest(&mut hasher, resources, &hidden);
            let templates = templates.iter().map(|(uri, t)| (uri, t.generation));
            keys_digest(&mut hasher, templates, &hidden);
            // Views and skills' SKILL.md files are few: their listings themselves.
            let listed = |json: serde_json::Value| {
                let mut hasher = std::collections::hash_map::DefaultHasher::new();
                crate::wire::json_text(&json).hash(&mut hasher);
                hasher.finish()
            };
            let latest = crate::protocol::ProtocolVersion::LATEST;
            let views = views
                .iter()
                .map(|(uri, view)| (uri, listed(view.listing(latest))));
            keys_digest(&mut hasher, views, &hidden);
            let skills = catalog.skills.snapshot();
            let skills = skills
                .listed
                .iter()
                .map(|(uri, skill)| (uri, listed(skill.to_json(latest))));
            keys_digest(&mut hasher, skills, &hidden);
        }
        List::Prompts => {
            let prompts = catalog::snapshot(&catalog.prompts);
            let candidates = candidates(catalog, prompts.iter(), |p| &p.def);
            let hidden = hidden(catalog, viewer, candidates).await;
            let prompts = prompts.iter().map(|(name, p)| (name, p.generation));
            keys_digest(&mut hasher, prompts, &hidden);
        }
    }
    hasher.finish()
}

/// Hashes each visible entry: its key and which registration (or listing) it is.
fn keys_digest<'a>(
    hasher: &mut impl Hasher,
    entries: impl Iterator<Item = (&'a String, u64)>,
    hidden: &Hidden,
) {
    for (key, generation) in entries.filter(|(key, _)| !hidden.contains(*key)) {
        key.hash(hasher);
        generation.hash(hasher);
    }
    0xffu8.hash(hasher);
}

/// What one session (or listen stream) last saw of each list, to tell a change that concerns
/// it from one that does not.
#[derive(Default)]
pub(crate) struct Seen {
    /// Per list: the ticket of the look that recorded it, and its digest.
    digests: std::sync::Mutex<[(u64, Option<u64>); 3]>,
    tickets: std::sync::atomic::AtomicU64,
}

impl Seen {
    /// A ticket for a look about to be taken: looks taken one after another may finish in
    /// another order (a rule that answers late), and only a later look replaces an earlier.
    pub(crate) fn ticket(&self) -> u64 {
        self.tickets
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1
    }

    /// Records `digest` for `list`, seen by the look `ticket`: whether it differs from what was
    /// seen (a list never seen counts as changed; a look older than the one recorded changes
    /// nothing).
    pub(crate) fn changed(&self, list: List, ticket: u64, digest: u64) -> bool {
        let mut digests = self.digests.lock().unwrap_or_else(|e| e.into_inner());
        let (recorded_by, recorded) = &mut digests[list.index()];
        if ticket < *recorded_by {
            return false;
        }
        *recorded_by = ticket;
        recorded.replace(digest) != Some(digest)
    }

    /// Records what `viewer` sees of every list now, as the baseline later changes compare to.
    pub(crate) async fn baseline(
        self: Arc<Self>,
        server: Arc<super::server::ServerInner>,
        viewer: Viewer,
    ) {
        let ticket = self.ticket();
        for list in List::ALL {
            let digest = digest(&server, &viewer, list).await;
            self.changed(list, ticket, digest);
        }
    }
}

/// Announces to `session` the lists among `lists` whose view changed for it (every one in
/// `lists` when nothing is screened).
pub(crate) fn announce_lists(session: &Arc<SessionShared>, lists: Vec<List>) {
    if lists.is_empty() {
        return;
    }
    if !session.server.catalog.screens() {
        for list in lists {
            session.send(crate::wire::notification_frame::<serde_json::Value>(
                list.notification(),
                None,
            ));
        }
        return;
    }
    let viewer = session.viewer(None, None);
    let task_session = session.clone();
    let ticket = session.seen.ticket();
    super::call::run_task(session, async move {
        let session = task_session;
        for list in lists {
            let digest = digest(&session.server, &viewer, list).await;
            if session.seen.changed(list, ticket, digest) {
                session.send(crate::wire::notification_frame::<serde_json::Value>(
                    list.notification(),
                    None,
                ));
            }
        }
    });
}

/// Runs `then` with the responder when the request may see `guarded`; else answers `unknown`,
/// what the request would get if it did not exist.
pub(crate) fn if_visible<G: Guarded>(
    session: &Arc<SessionShared>,
    modern: Option<&Envelope>,
    guarded: &G,
    responder: super::responder::Responder,
    unknown: impl FnOnce() -> crate::wire::ErrorObject + Send + 'static,
    then: impl FnOnce(super::responder::Responder) + Send + 'static,
) {
    let key = String::new();
    let candidates = candidates(
        &session.server.catalog,
        std::iter::once((&key, guarded)),
        |g| g,
    );
    let stream = responder.out().stream().cloned();
    let asker = Asker {
        stream: stream.as_ref(),
        modern,
    };
    screen(session, asker, candidates, move |hidden| {
        if hidden.is_empty() {
            then(responder)
        } else {
            responder.error(unknown())
        }
    });
}
