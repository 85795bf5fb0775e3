//! `Connection`: the engine over a channel of the app's own (feed a message, take messages).

use std::sync::Arc;

use toolwire::{Outbound, Session};

use crate::runtime::{on_runtime, runtime};

/// One MCP session over a transport the app carries itself (a socket, a WebSocket, an
/// in-process pipe). Thread-safe; messages are JSON texts without line terminators.
#[derive(uniffi::Object)]
pub struct Connection {
    session: Session,
    outbound: tokio::sync::Mutex<Outbound>,
}

/// A new session of `server` whose calls run on the engine's runtime: how every session this
/// binding hands out is made (`connect()`, `Server.client`, `Server.replay_vector`), so a
/// foreign handler runs the same way in each.
pub(crate) fn new_session(server: &toolwire::Server) -> (Session, Outbound) {
    Session::with_runtime(server, runtime().handle().clone())
}

impl Connection {
    pub(crate) fn new(server: &toolwire::Server) -> Arc<Self> {
        let (session, outbound) = new_session(server);
        Arc::new(Connection {
            session,
            outbound: tokio::sync::Mutex::new(outbound),
        })
    }
}

#[uniffi::export]
impl Connection {
    /// Handles one inbound message. Never blocks: answers arrive through `recv`.
    pub fn handle_frame(&self, message: String) {
        self.session.handle_frame(message.as_bytes());
    }

    /// `handle_frame` for raw bytes (e.g. a frame that may not be valid UTF-8: it gets the
    /// JSON-RPC parse error the wire would).
    pub fn handle_frame_bytes(&self, frame: Vec<u8>) {
        self.session.handle_frame(&frame);
    }

    /// The next outbound message; `null`/`nil` once the session has ended. Cancelling the
    /// wait (e.g. `withTimeout`) loses no message.
    pub async fn recv(&self) -> Option<String> {
        // Awaited right here, not on the runtime: the channel needs no reactor, and a spawned
        // recv would swallow the message it took after its caller gave up.
        self.outbound.lock().await.recv().await
    }

    /// The next outbound message if one is waiting, without waiting.
    pub fn try_recv(&self) -> Option<String> {
        self.outbound.try_lock().ok()?.try_recv()
    }

    /// Ends the input (like EOF): calls in flight get the drain time and their answers are
    /// still delivered, then `recv` returns `null`/`nil`.
    pub async fn shutdown(&self) {
        let session = self.session.clone();
        let _ = on_runtime(async move { session.shutdown().await }).await;
    }

    /// Ends the session at once: calls in flight are cancelled and nothing more is sent.
    /// Kotlin's `close()` (the generated `AutoCloseable`'s, which UniFFI reserves) does the same
    /// and frees the object; this is Swift's way, and Kotlin's while keeping the object.
    pub fn abort(&self) {
        self.session.close();
    }

    /// The negotiated protocol version, once `initialize` succeeded.
    pub fn protocol_version(&self) -> Option<String> {
        self.session
            .protocol_version()
            .map(|v| v.as_str().to_owned())
    }
}

impl Drop for Connection {
    /// A connection the app let go of ends its session: its calls are cancelled.
    fn drop(&mut self) {
        self.session.close();
    }
}
