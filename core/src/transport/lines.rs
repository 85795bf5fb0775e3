//! Newline-delimited JSON framing (the stdio transport's), with a bounded line length.

use async_trait::async_trait;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader, BufWriter};

use super::{FrameError, FrameReader, FrameWriter, StdinSource, StdoutSink, Transport};

/// Reads one frame per line; `\r\n` is accepted, blank lines are skipped, and a line longer
/// than the limit is discarded as it streams by (never buffered whole).
pub struct LineReader<R> {
    inner: BufReader<R>,
    max_frame_bytes: usize,
}

impl<R: AsyncRead + Unpin + Send> LineReader<R> {
    /// A reader with the given frame limit.
    pub fn new(inner: R, max_frame_bytes: usize) -> Self {
        LineReader {
            inner: BufReader::with_capacity(64 * 1024, inner),
            max_frame_bytes,
        }
    }
}

#[async_trait]
impl<R: AsyncRead + Unpin + Send> FrameReader for LineReader<R> {
    async fn read_frame(&mut self) -> Option<Result<Vec<u8>, FrameError>> {
        loop {
            let mut line = Vec::new();
            let mut oversize = false;
            let mut ended = false;
            loop {
                let available = match self.inner.fill_buf().await {
                    Ok(available) => available,
                    Err(err) => return Some(Err(err.into())),
                };
                if available.is_empty() {
                    ended = true;
                    break;
                }
                let (chunk, consumed, complete) = match memchr::memchr(b'\n', available) {
                    Some(pos) => (&available[..pos], pos + 1, true),
                    None => (available, available.len(), false),
                };
                if !oversize {
                    if line.len() + chunk.len() > self.max_frame_bytes {
                        oversize = true;
                        line = Vec::new();
                    } else {
                        line.extend_from_slice(chunk);
                    }
                }
                self.inner.consume(consumed);
                if complete {
                    break;
                }
            }
            if oversize {
                return Some(Err(FrameError::TooLarge {
                    limit: self.max_frame_bytes,
                }));
            }
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            if line.iter().all(u8::is_ascii_whitespace) {
                if ended {
                    return None;
                }
                continue;
            }
            return Some(Ok(line));
        }
    }
}

/// Writes one frame per line through a buffer; [`flush`](FrameWriter::flush) pushes it out.
pub struct LineWriter<W> {
    inner: BufWriter<W>,
}

impl<W: AsyncWrite + Unpin + Send> LineWriter<W> {
    /// A writer over `inner`.
    pub fn new(inner: W) -> Self {
        LineWriter {
            inner: BufWriter::with_capacity(64 * 1024, inner),
        }
    }
}

#[async_trait]
impl<W: AsyncWrite + Unpin + Send> FrameWriter for LineWriter<W> {
    async fn write_frame(&mut self, frame: &str) -> std::io::Result<()> {
        self.inner.write_all(frame.as_bytes()).await?;
        self.inner.write_all(b"\n").await
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush().await
    }
}

/// Newline-delimited JSON over any byte streams.
pub struct LineTransport<R, W> {
    reader: LineReader<R>,
    writer: LineWriter<W>,
}

impl<R, W> LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    /// A transport reading `reader` and writing `writer`, refusing lines over `max_frame_bytes`.
    pub fn new(reader: R, writer: W, max_frame_bytes: usize) -> Self {
        LineTransport {
            reader: LineReader::new(reader, max_frame_bytes),
            writer: LineWriter::new(writer),
        }
    }
}

impl<R, W> Transport for LineTransport<R, W>
where
    R: AsyncRead + Unpin + Send + 'static,
    W: AsyncWrite + Unpin + Send + 'static,
{
    type Reader = LineReader<R>;
    type Writer = LineWriter<W>;

    fn split(self) -> (Self::Reader, Self::Writer) {
        (self.reader, self.writer)
    }
}

/// The stdio transport: stdin in, stdout out. Nothing but protocol goes to stdout; log to stderr.
pub fn stdio(max_frame_bytes: usize) -> LineTransport<StdinSource, StdoutSink> {
    LineTransport::new(StdinSource::open(), StdoutSink::open(), max_frame_bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn frames(input: &[u8], limit: usize) -> Vec<Result<Vec<u8>, String>> {
        let mut reader = LineReader::new(input, limit);
        let mut out = Vec::new();
        while let Some(frame) = reader.read_frame().await {
            out.push(frame.map_err(|e| e.to_string()));
        }
        out
    }

    #[tokio::test]
    async fn splits_lines_and_bounds_them() {
        let got = frames(b"{\"a\":1}\r\n\n  \n0123456789ABCDEF\n{}\nlast", 10).await;
        assert_eq!(got.len(), 4);
        assert_eq!(got[0].as_deref(), Ok(&b"{\"a\":1}"[..]));
        assert!(got[1].is_err());
        assert_eq!(got[2].as_deref(), Ok(&b"{}"[..]));
        assert_eq!(got[3].as_deref(), Ok(&b"last"[..]));
    }

    #[tokio::test]
    async fn oversize_across_buffer_refills() {
        let mut input = vec![b'x'; 200_000];
        input.extend_from_slice(b"\n{}\n");
        let got = frames(&input, 1000).await;
        assert_eq!(got.len(), 2);
        assert!(got[0].is_err());
        assert_eq!(got[1].as_deref(), Ok(&b"{}"[..]));
    }
}
