//! What the HTTP transport needs from a session beyond the frame-in, frame-out interface of
//! [`Session::handle_frame`] and [`Outbound`](super::Outbound): answers routed to a request's
//! own stream, how many answers to wait for, and sessions that stand for one exchange.

use std::sync::Arc;

use super::outbound::OutboundSender;
use super::request_stream::RequestStream;
use super::router;
use super::session::current_runtime;
use super::{Session, SessionShared};
use crate::Error;
use crate::Server;
use crate::wire::{Frame, Inbound};

impl Session {
    /// A session for one exchange that stands alone (stateless HTTP), on the current runtime.
    /// Whatever it sends that is not tied to the exchange's request has nowhere to go, so it
    /// has no channel of its own and watches nothing: each request is spared a channel, a
    /// watcher task and three subscriptions to channels that every session shares.
    pub(crate) fn for_one_exchange(
        server: &Server,
        principal: Option<String>,
    ) -> Result<Session, Error> {
        let shared = SessionShared::new(server, current_runtime()?, OutboundSender::Nowhere, None)
            .authenticated(principal);
        Ok(Session {
            shared: Arc::new(shared),
        })
    }

    /// A session for one 2026-07-28 exchange, on the current runtime: modern from the start,
    /// with the principal the transport authenticated (bound into `requestState`).
    pub(crate) fn for_modern_exchange(
        server: &Server,
        principal: Option<String>,
    ) -> Result<Session, Error> {
        let session = Self::for_one_exchange(server, principal)?;
        session
            .shared
            .modern
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(session)
    }

    /// A graceful end begins: long-lived answers (listen streams) close with their result.
    pub(crate) fn begin_drain(&self) {
        self.shared.draining.cancel();
    }

    /// Processes one parsed frame whose answers and related frames go to `stream` (or, without
    /// one, to the session's outbound channel).
    pub(crate) fn handle_parsed(&self, frame: Frame, stream: Option<Arc<RequestStream>>) {
        match stream {
            Some(stream) => {
                router::dispatch_frame(&self.shared, frame, &OutboundSender::Stream(stream))
            }
            None => router::dispatch_frame(&self.shared, frame, &self.shared.out),
        }
    }

    /// How many answers `frame` will get on its stream: one per request (a batch's come as one
    /// array; a batch this session's version does not take gets its one error).
    pub(crate) fn answers_expected(&self, frame: &Frame) -> usize {
        match frame {
            Frame::Single(Ok(Inbound::Request { .. })) => 1,
            Frame::Single(Ok(_)) => 0,
            Frame::Single(Err(rejection)) => usize::from(rejection.reply),
            Frame::Batch(_) if !self.shared.batches_allowed() => 1,
            Frame::Batch(items) => usize::from(items.iter().any(|item| match item {
                Ok(Inbound::Request { .. }) => true,
                Ok(_) => false,
                Err(rejection) => rejection.reply,
            })),
        }
    }
}
