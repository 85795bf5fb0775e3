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

use std::future::Future;

pub use lines::{LineReader, LineTransport, LineWriter, stdio};
// Binding plumbing, at home in `toolwire::host`; these paths go in the next release.
#[doc(hidden)]
pub use lines::LineDecoder;
#[doc(hidden)]
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

/// The receiving half of a transport; frames are read one at a time. Implement its methods as
/// `async fn`s. Not boxed (no `async_trait`): a frame read costs no allocation of its own.
pub trait FrameReader: Send {
    /// The next frame, or `None` at the end of the stream. Dropping the future before it is
    /// ready must lose no frame: the serve loop looks for a frame without waiting first.
    fn read_frame(&mut self) -> impl Future<Output = Option<Result<Vec<u8>, FrameError>>> + Send;
}

/// The sending half of a transport. Implement its methods as `async fn`s.
pub trait FrameWriter: Send {
    /// Queues one frame (a compact JSON text without a line terminator).
    fn write_frame(&mut self, frame: &str) -> impl Future<Output = std::io::Result<()>> + Send;
    /// Pushes queued frames out.
    fn flush(&mut self) -> impl Future<Output = std::io::Result<()>> + Send;
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
