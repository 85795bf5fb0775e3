//! stdin/stdout as async byte streams.
//!
//! tokio's `Stdin`/`Stdout` hand every read and write to a blocking thread. When stdio are
//! pipes (as when a client spawns us) we instead reopen them through `/proc/self/fd` as new,
//! non-blocking FIFO descriptions driven by the reactor: no thread hand-off per message, and
//! the flags of the descriptors our parent shares are left alone. Anything else (a terminal,
//! a file) falls back to tokio's handles.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::unix::pipe;

/// The server's standard input.
pub enum StdinSource {
    /// A FIFO read without blocking threads.
    Pipe(pipe::Receiver),
    /// tokio's blocking-thread stdin.
    Std(tokio::io::Stdin),
}

/// The server's standard output.
pub enum StdoutSink {
    /// A FIFO written without blocking threads.
    Pipe(pipe::Sender),
    /// tokio's blocking-thread stdout.
    Std(tokio::io::Stdout),
}

impl StdinSource {
    /// Stdin, as a non-blocking pipe when it is one.
    pub fn open() -> Self {
        match pipe::OpenOptions::new().open_receiver("/proc/self/fd/0") {
            Ok(receiver) => StdinSource::Pipe(receiver),
            Err(_) => StdinSource::Std(tokio::io::stdin()),
        }
    }
}

impl StdoutSink {
    /// Stdout, as a non-blocking pipe when it is one.
    pub fn open() -> Self {
        match pipe::OpenOptions::new().open_sender("/proc/self/fd/1") {
            Ok(sender) => StdoutSink::Pipe(sender),
            Err(_) => StdoutSink::Std(tokio::io::stdout()),
        }
    }
}

impl AsyncRead for StdinSource {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        match self.get_mut() {
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
            StdoutSink::Pipe(p) => Pin::new(p).poll_write(cx, buf),
            StdoutSink::Std(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            StdoutSink::Pipe(p) => Pin::new(p).poll_flush(cx),
            StdoutSink::Std(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        match self.get_mut() {
            StdoutSink::Pipe(p) => Pin::new(p).poll_shutdown(cx),
            StdoutSink::Std(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}
