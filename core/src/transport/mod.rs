//! Transports carry frames; the session does the rest.
//!
//! | transport | use |
//! |---|---|
//! | [`stdio`] | the client spawned us: one JSON message per line on stdin/stdout |
//! | [`LineTransport`] | the same framing over any byte stream (pipes, sockets) |
//! | [`memory::pair`] | two linked in-process ends, for tests and embedding |
//! | [`http`] | Streamable HTTP: [`Server::serve_http`](crate::Server::serve_http) |
//! | [`Session`](crate::Session) + [`Outbound`](crate::Outbound) | bring your own: feed frames, take frames |

#[cfg(feature = "http")]
pub mod http;
pub(crate) mod idle;
mod lines;
pub mod memory;
mod serve;
mod stdio;

use async_trait::async_trait;

pub use lines::{LineDecoder, LineReader, LineTransport, LineWriter, stdio};
pub use stdio::{PORTABLE_IO_ENV, StdinSource, StdioClaim, StdoutSink, portable_io_forced};

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum FrameError {
    /// The frame was longer than the limit; it was skipped without being buffered.
    #[error("frame exceeds the limit of {limit} bytes")]
    TooLarge {
        /// The limit in bytes.
        limit: usize,
    },
    /// The underlying stream failed.
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

/// The receiving half of a transport; frames are read one at a time.
#[async_trait]
pub trait FrameReader: Send {
    /// The next frame, or `None` at the end of the stream.
    async fn read_frame(&mut self) -> Option<Result<Vec<u8>, FrameError>>;
}

/// The sending half of a transport.
#[async_trait]
pub trait FrameWriter: Send {
    /// Queues one frame (a compact JSON text without a line terminator).
    async fn write_frame(&mut self, frame: &str) -> std::io::Result<()>;
    /// Pushes queued frames out.
    async fn flush(&mut self) -> std::io::Result<()>;
}

/// A bidirectional transport that splits into a reader and a writer.
pub trait Transport: Send {
    /// The receiving half.
    type Reader: FrameReader + 'static;
    /// The sending half.
    type Writer: FrameWriter + 'static;
    /// Splits the transport.
    fn split(self) -> (Self::Reader, Self::Writer);
}
