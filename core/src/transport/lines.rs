//! Newline-delimited JSON framing (the stdio transport's), with a bounded line length.

use std::collections::VecDeque;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufWriter};

use super::{FrameError, FrameReader, FrameWriter, StdinSource, StdoutSink, Transport};

/// Splits a byte stream into line frames as it arrives, for hosts that read the stream
/// themselves (a JS event loop): `\r\n` is accepted, blank lines are skipped, and a line
/// longer than the limit is discarded as it streams by (never buffered whole).
#[derive(Debug)]
pub struct LineDecoder {
    line: Vec<u8>,
    oversize: bool,
    max_frame_bytes: usize,
}

impl LineDecoder {
    /// A decoder with the given frame limit.
    pub fn new(max_frame_bytes: usize) -> Self {
        LineDecoder {
            line: Vec::new(),
            oversize: false,
            max_frame_bytes,
        }
    }

    /// Feeds the next bytes; `on_frame` gets each line completed by them, in order.
    pub fn push(&mut self, mut bytes: &[u8], mut on_frame: impl FnMut(Result<&[u8], FrameError>)) {
        while !bytes.is_empty() {
            let (chunk, rest, complete) = match memchr::memchr(b'\n', bytes) {
                Some(pos) => (&bytes[..pos], &bytes[pos + 1..], true),
                None => (bytes, &[][..], false),
            };
            bytes = rest;
            if complete && self.line.is_empty() && !self.oversize {
                // The whole line is in this chunk: hand it over without copying.
                self.emit(chunk, &mut on_frame);
                continue;
            }
            if !self.oversize {
                if self.line.len() + chunk.len() > self.max_frame_bytes {
                    self.oversize = true;
                    self.line = Vec::new();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            if complete {
                let line = std::mem::take(&mut self.line);
                self.emit(&line, &mut on_frame);
            }
        }
    }

    /// The stream ended: a last line without a terminator is still a frame.
    pub fn finish(&mut self, mut on_frame: impl FnMut(Result<&[u8], FrameError>)) {
        if self.oversize || !self.line.is_empty() {
            let line = std::mem::take(&mut self.line);
            self.emit(&line, &mut on_frame);
        }
    }

    fn emit(&mut self, line: &[u8], on_frame: &mut impl FnMut(Result<&[u8], FrameError>)) {
        if std::mem::take(&mut self.oversize) || line.len() > self.max_frame_bytes {
            return on_frame(Err(FrameError::TooLarge {
                limit: self.max_frame_bytes,
            }));
        }
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if !line.iter().all(u8::is_ascii_whitespace) {
            on_frame(Ok(line));
        }
    }
}

/// Reads one frame per line (see [`LineDecoder`] for the rules).
pub struct LineReader<R> {
    inner: R,
    buffer: Box<[u8]>,
    decoder: LineDecoder,
    ready: VecDeque<Result<Vec<u8>, FrameError>>,
    ended: bool,
}

impl<R: AsyncRead + Unpin + Send> LineReader<R> {
    /// A reader with the given frame limit.
    pub fn new(inner: R, max_frame_bytes: usize) -> Self {
        LineReader {
            inner,
            buffer: vec![0; 64 * 1024].into_boxed_slice(),
            decoder: LineDecoder::new(max_frame_bytes),
            ready: VecDeque::new(),
            ended: false,
        }
    }
}

impl<R: AsyncRead + Unpin + Send> FrameReader for LineReader<R> {
    async fn read_frame(&mut self) -> Option<Result<Vec<u8>, FrameError>> {
        loop {
            if let Some(frame) = self.ready.pop_front() {
                return Some(frame);
            }
            if self.ended {
                return None;
            }
            let ready = &mut self.ready;
            let collect =
                |frame: Result<&[u8], FrameError>| ready.push_back(frame.map(<[u8]>::to_vec));
            match self.inner.read(&mut self.buffer).await {
                Ok(0) => {
                    self.ended = true;
                    self.decoder.finish(collect);
                }
                Ok(n) => self.decoder.push(&self.buffer[..n], collect),
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(err) => return Some(Err(err.into())),
            }
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
/// [`Server::serve_stdio`](crate::Server::serve_stdio) and `serve_stdio_until` serve it and
/// refuse a second stdio serve in the process; serving this transport yourself does not.
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

    #[test]
    fn decoder_handles_lines_split_anywhere() {
        let input = b"{\"a\":1}\r\n\n  \n0123456789ABCDEF\n{}\nlast";
        for split in 0..input.len() {
            let mut decoder = LineDecoder::new(10);
            let mut got = Vec::new();
            let mut collect = |f: Result<&[u8], FrameError>| {
                got.push(f.map(<[u8]>::to_vec).map_err(|e| e.to_string()))
            };
            decoder.push(&input[..split], &mut collect);
            decoder.push(&input[split..], &mut collect);
            decoder.finish(&mut collect);
            assert_eq!(got.len(), 4, "split at {split}");
            assert_eq!(got[0].as_deref(), Ok(&b"{\"a\":1}"[..]));
            assert!(got[1].is_err());
            assert_eq!(got[2].as_deref(), Ok(&b"{}"[..]));
            assert_eq!(got[3].as_deref(), Ok(&b"last"[..]));
        }
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
