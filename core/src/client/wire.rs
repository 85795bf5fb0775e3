//! What a [`Client`](super::Client) talks over: a session of a server in this process, or a
//! remote one (a spawned process's stdio, Streamable HTTP), each giving frames up the same way.

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::sync::mpsc;

use crate::dispatch::{Outbound, Session};

/// How many frames a remote wire holds for the client's reader before it stops reading its
/// transport (the remote then waits, as a pipe or a socket makes it).
pub(super) const INCOMING_QUEUED: usize = 1024;

/// One frame from a remote server, and the request of ours it came in answer to when the
/// transport says so (a Streamable HTTP POST's stream): a question the server asks there is
/// about that request.
pub(crate) struct Incoming {
    pub(crate) frame: String,
    pub(crate) about: Option<u64>,
}

/// A transport to a server in another process.
pub(crate) trait Remote: Send + Sync + 'static {
    /// Sends one message; `request` is its id when it is a request of ours. `false` when it
    /// cannot be sent (the transport is gone or will not take more).
    fn send(&self, message: &Value, request: Option<u64>) -> bool;
    /// Ends the connection in order (closes the process's stdin, deletes the HTTP session),
    /// after which the incoming frames end.
    fn shutdown(&self) -> BoxFuture<'static, ()>;
    /// Ends it at once.
    fn close(&self);
    /// Says what the other end is, for errors: "`python server.py` (spawned)", a URL.
    fn describe(&self) -> String;
    /// Whether each incoming frame says which request it is about, when it is about one
    /// (Streamable HTTP's streams do; stdio does not).
    fn names_requests(&self) -> bool {
        false
    }
}

/// The client's end of the connection.
pub(super) enum Wire {
    Local(Session),
    Remote(Box<dyn Remote>),
}

impl Wire {
    pub(super) fn send(&self, message: &Value, request: Option<u64>) -> bool {
        match self {
            Wire::Local(session) => {
                session.handle_frame(message.to_string().as_bytes());
                true
            }
            Wire::Remote(remote) => remote.send(message, request),
        }
    }

    pub(super) async fn shutdown(&self) {
        match self {
            Wire::Local(session) => session.shutdown().await,
            Wire::Remote(remote) => remote.shutdown().await,
        }
    }

    pub(super) fn close(&self) {
        match self {
            Wire::Local(session) => session.close(),
            Wire::Remote(remote) => remote.close(),
        }
    }

    pub(super) fn names_requests(&self) -> bool {
        match self {
            Wire::Local(_) => false,
            Wire::Remote(remote) => remote.names_requests(),
        }
    }

    pub(super) fn describe(&self) -> String {
        match self {
            Wire::Local(_) => "a server in this process".to_owned(),
            Wire::Remote(remote) => remote.describe(),
        }
    }
}

/// The frames coming up, from either kind of wire.
pub(super) enum Frames {
    Local(Outbound),
    Remote(mpsc::Receiver<Incoming>),
}

impl Frames {
    pub(super) async fn next(&mut self) -> Option<Incoming> {
        match self {
            Frames::Local(outbound) => outbound
                .recv()
                .await
                .map(|frame| Incoming { frame, about: None }),
            Frames::Remote(incoming) => incoming.recv().await,
        }
    }
}
