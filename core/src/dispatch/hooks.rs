//! How a host that runs its own event loop takes part in a session: defined here, where sessions
//! use them, and re-exported by `toolwire::host` for the bindings.

use std::future::Future;

/// A tool call that did not finish when first polled, handed to [`HostHooks::spawn_call`].
pub type CallTask = std::pin::Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// How a host that runs its own event loop takes part in a session
/// ([`Session::hosted`](crate::Session::hosted)).
///
/// The host feeds frames with [`Session::handle_frame`](crate::Session::handle_frame) on its
/// loop's thread; a call is first polled right there, so a handler that answers at once runs on
/// that thread too.
pub struct HostHooks {
    /// Runs after every outbound frame is queued, on whatever thread queued it: the host
    /// schedules a drain of [`Outbound::try_recv`](crate::Outbound::try_recv) on its loop. It
    /// must be quick.
    pub notify: Box<dyn Fn() + Send + Sync>,
    /// Takes each call that did not finish at its first poll; the host polls it to completion
    /// (on its loop, waking on the task's waker). `None`: it runs as a task on the runtime.
    pub spawn_call: Option<Box<dyn Fn(CallTask) + Send + Sync>>,
}
