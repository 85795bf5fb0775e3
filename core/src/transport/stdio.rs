//! stdin/stdout as async byte streams.
//!
//! tokio's `Stdin`/`Stdout` hand every read and write to a blocking thread. On Linux, when
//! stdio are pipes (as when a client spawns us), we instead reopen them through
//! `/proc/self/fd` as new, non-blocking FIFO descriptions driven by the reactor: no thread
//! hand-off per message, and the flags of the descriptors our parent shares are left alone.
//! Anything else (a terminal, a file, another OS, or [`portable_io_forced`]) falls back to
//! tokio's handles.

use std::io;
use std::pin::Pin;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use crate::Error;
#[cfg(target_os = "linux")]
use tokio::net::unix::pipe;

/// The environment variable that turns off every OS-specific stdio path, in core and in every
/// binding (Linux's `/proc/self/fd` reopen, Linux's eventfd, a host loop's own stdin watch), so
/// the portable paths that other systems run are exercised on Linux too. Any value but empty
/// or `0` turns them off.
pub const PORTABLE_IO_ENV: &str = "TOOLWIRE_PORTABLE_IO";

/// Whether [`PORTABLE_IO_ENV`] asks for the portable paths (read once per process).
pub fn portable_io_forced() -> bool {
    static FORCED: OnceLock<bool> = OnceLock::new();
    *FORCED.get_or_init(|| {
        std::env::var_os(PORTABLE_IO_ENV).is_some_and(|value| !value.is_empty() && value != "0")
    })
}

/// The server's standard input.
pub enum StdinSource {
    /// A FIFO read without blocking threads (Linux).
    #[cfg(target_os = "linux")]
    Pipe(pipe::Receiver),
    /// tokio's blocking-thread stdin: every other case.
    Std(tokio::io::Stdin),
}

/// The process has one stdin: a second loop reading it would split the client's messages
/// between two sessions, so every stdio serve holds this claim while it runs. A binding takes
/// it first, before it changes any state of its own, then serves with
/// [`Server::serve_stdio_claimed`](crate::Server::serve_stdio_claimed).
#[derive(Debug)]
pub struct StdioClaim(());

static STDIO_CLAIMED: AtomicBool = AtomicBool::new(false);

impl StdioClaim {
    /// Claims stdin for one serve, or fails with [`Error::Busy`] while another serve of this
    /// process holds it.
    pub fn take() -> Result<Self, Error> {
        if STDIO_CLAIMED.swap(true, Ordering::AcqRel) {
            return Err(Error::Busy(
                "stdin is already being served by this process".into(),
            ));
        }
        Ok(StdioClaim(()))
    }
}

impl Drop for StdioClaim {
    fn drop(&mut self) {
        STDIO_CLAIMED.store(false, Ordering::Release);
    }
}

/// The server's standard output.
pub enum StdoutSink {
    /// A FIFO written without blocking threads (Linux).
    #[cfg(target_os = "linux")]
    Pipe(pipe::Sender),
    /// tokio's blocking-thread stdout: every other case.
    Std(tokio::io::Stdout),
}

impl StdinSource {
    /// Stdin, as a non-blocking pipe when it is one and this OS lets us reopen it.
    pub fn open() -> Self {
        #[cfg(target_os = "linux")]
        if !portable_io_forced()
            && let Ok(receiver) = pipe::OpenOptions::new().open_receiver("/proc/self/fd/0")
        {
            return StdinSource::Pipe(receiver);
        }
        tracing::debug!("stdio through the portable handles (a blocking thread each way)");
        StdinSource::Std(tokio::io::stdin())
    }
}

impl StdoutSink {
    /// Stdout, as a non-blocking pipe when it is one and this OS lets us reopen it.
    pub fn open() -> Self {
        #[cfg(target_os = "linux")]
        if !portable_io_forced()
            && let Ok(sender) = pipe::OpenOptions::new().open_sender("/proc/self/fd/1")
        {
            return StdoutSink::Pipe(sender);
        }
        StdoutSink::Std(tokio::io::stdout())
    }
}

impl AsyncRead for StdinSource {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            StdinSource::Pipe(p) => Pin::new(p).poll_read(cx, buf),
            StdinSource::Std(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for StdoutSink {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            StdoutSink::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            StdoutSink::Std(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            StdoutSink::Pipe(p) => Pin::new(p).poll_flush(cx),
            StdoutSink::Std(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            #[cfg(target_os = "linux")]
            StdoutSink::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            StdoutSink::Std(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::StdioClaim;
    use crate::Error;

    #[test]
    fn stdin_is_claimed_by_one_serve_at_a_time() {
        let first = StdioClaim::take().expect("nothing else claims stdin in unit tests");
        let second = StdioClaim::take();
        assert!(matches!(second, Err(Error::Busy(_))), "{second:?}");
        drop(first);
        assert!(StdioClaim::take().is_ok(), "the claim ends with the serve");
    }
}
