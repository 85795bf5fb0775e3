//! Two linked in-process ends: what one sends, the other receives.

use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

use super::{FrameError, FrameReader, FrameWriter, Transport};

/// One end of an in-memory pair.
pub struct MemoryTransport {
    tx: UnboundedSender<Vec<u8>>,
    rx: UnboundedReceiver<Vec<u8>>,
}

/// Two linked ends: give one to [`Server::serve`](crate::Server::serve), drive the other.
pub fn pair() -> (MemoryTransport, MemoryTransport) {
    let (a_tx, b_rx) = unbounded_channel();
    let (b_tx, a_rx) = unbounded_channel();
    (
        MemoryTransport { tx: a_tx, rx: a_rx },
        MemoryTransport { tx: b_tx, rx: b_rx },
    )
}

impl MemoryTransport {
    /// Sends a frame to the other end; `false` if it is gone.
    pub fn send(&self, frame: impl Into<Vec<u8>>) -> bool {
        self.tx.send(frame.into()).is_ok()
    }

    /// The next frame from the other end; `None` once it is gone and drained.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        self.rx.recv().await
    }

    /// Splits into a sender that can be cloned and a receiver.
    pub fn into_parts(self) -> (MemorySender, MemoryReceiver) {
        (MemorySender { tx: self.tx }, MemoryReceiver { rx: self.rx })
    }
}

/// The sending half of a [`MemoryTransport`]; dropping every clone ends the other side's input.
#[derive(Clone)]
pub struct MemorySender {
    tx: UnboundedSender<Vec<u8>>,
}

impl MemorySender {
    /// Sends a frame; `false` if the other end is gone.
    pub fn send(&self, frame: impl Into<Vec<u8>>) -> bool {
        self.tx.send(frame.into()).is_ok()
    }
}

/// The receiving half of a [`MemoryTransport`].
pub struct MemoryReceiver {
    rx: UnboundedReceiver<Vec<u8>>,
}

impl MemoryReceiver {
    /// The next frame; `None` once the other end is gone and drained.
    pub async fn recv(&mut self) -> Option<Vec<u8>> {
        self.rx.recv().await
    }
}

impl FrameReader for MemoryReceiver {
    async fn read_frame(&mut self) -> Option<Result<Vec<u8>, FrameError>> {
        self.rx.recv().await.map(Ok)
    }
}

impl FrameWriter for MemorySender {
    async fn write_frame(&mut self, frame: &str) -> std::io::Result<()> {
        self.tx
            .send(frame.as_bytes().to_vec())
            .map_err(|_| std::io::Error::new(std::io::ErrorKind::BrokenPipe, "peer gone"))
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Transport for MemoryTransport {
    type Reader = MemoryReceiver;
    type Writer = MemorySender;

    fn split(self) -> (Self::Reader, Self::Writer) {
        let (sender, receiver) = self.into_parts();
        (receiver, sender)
    }
}
