//! The serve loop: read frames into a session, write its outbound frames, drain at the end.

use std::time::Instant;

use futures_util::FutureExt;
use tokio_util::sync::CancellationToken;

const FRAMES_PER_YIELD: usize = 16;

use super::idle::IdlePoll;
use super::stdio::StdioClaim;
use super::{FrameError, FrameReader, FrameWriter, Transport, stdio};
use crate::{Error, Server};

impl Server {
    /// Serves one client over `transport` until its input ends; in-flight calls then get
    /// `drain_timeout` to finish before they are cancelled.
    pub fn serve<T: Transport>(
        &self,
        transport: T,
    ) -> impl Future<Output = Result<(), Error>> + use<'_, T> {
        self.serve_until(transport, CancellationToken::new())
    }

    /// [`serve`](Self::serve), also ending when `stop` is cancelled (a signal, a host's
    /// shutdown) or at [`stop`](Self::stop): reading stops (frames already buffered are handled first, at most 16),
    /// then calls in flight drain as at end of input.
    pub fn serve_until<T: Transport>(
        &self,
        transport: T,
        stop: CancellationToken,
    ) -> impl Future<Output = Result<(), Error>> + use<'_, T> {
        // `Server::stop` ends this serve as `stop` does. Its token is taken now, not at the
        // first poll: a `stop()` between this call and that poll (a spawned serve) still ends it.
        let stop_all = self.stop_token();
        self.serve_stopping(transport, stop, stop_all)
    }

    /// Holds the lifespan (started first) while it serves; the last serve to end waits for
    /// its clean-up.
    async fn serve_stopping<T: Transport>(
        &self,
        transport: T,
        stop: CancellationToken,
        stop_all: CancellationToken,
    ) -> Result<(), Error> {
        let hold = self.hold_lifespan().await?;
        let served = self.serve_held(transport, stop, stop_all).await;
        hold.release().await;
        served
    }

    async fn serve_held<T: Transport>(
        &self,
        transport: T,
        stop: CancellationToken,
        stop_all: CancellationToken,
    ) -> Result<(), Error> {
        let (mut reader, mut writer) = transport.split();
        let (session, mut outbound) = self.session()?;
        let backlog = outbound.backlog();
        let max_backlog = self.inner.options.max_outbound_bytes;
        let writer_failed = CancellationToken::new();
        let writer_task = tokio::spawn({
            let writer_failed = writer_failed.clone();
            async move {
                let result = async {
                    while let Some(frame) = outbound.recv().await {
                        writer.write_frame(&frame).await?;
                        // Write whatever else is ready before one flush: one syscall per burst.
                        while let Some(frame) = outbound.try_recv() {
                            writer.write_frame(&frame).await?;
                        }
                        writer.flush().await?;
                    }
                    Ok::<_, std::io::Error>(())
                }
                .await;
                if result.is_err() {
                    writer_failed.cancel();
                }
                result
            }
        });

        let mut outcome = Ok(());
        let mut since_yield = 0usize;
        // Made once: a token's waiter is registered and removed under its lock, too much to
        // pay for every frame.
        let mut ending = std::pin::pin!(async {
            tokio::select! {
                () = writer_failed.cancelled() => {},
                () = stop.cancelled() => {},
                () = stop_all.cancelled() => {},
            }
        });
        let mut idle = IdlePoll::new(self.inner.options.idle_poll);
        loop {
            // Under a burst of buffered frames, let the writer run now and then, so answers
            // start flowing back while the rest of the burst is handled (both ends overlap
            // instead of taking turns).
            since_yield += 1;
            if since_yield >= FRAMES_PER_YIELD {
                since_yield = 0;
                tokio::task::yield_now().await;
                // Frames already read are taken first below, so a stop is seen here as well.
                if stop.is_cancelled() || stop_all.is_cancelled() || writer_failed.is_cancelled() {
                    break;
                }
            }
            // A client that does not take its answers: read nothing more until it has taken
            // them down to half the limit (calls in flight go on; nothing is dropped).
            if backlog.bytes() > max_backlog {
                tracing::debug!(
                    bytes = backlog.bytes(),
                    "the client is not reading its answers; reading paused"
                );
                tokio::select! {
                    () = backlog.down_to(max_backlog / 2) => {}
                    () = &mut ending => break,
                }
            }
            // A frame that is there already costs no clock reads; only a wait is timed.
            let frame = match reader.read_frame().now_or_never() {
                Some(frame) => frame,
                None => {
                    let waiting_since = Instant::now();
                    let frame = tokio::select! {
                        biased;
                        frame = reader.read_frame() => frame,
                        () = &mut ending => break,
                        never = idle.look(waiting_since) => match never {},
                    };
                    idle.waited(waiting_since.elapsed());
                    frame
                }
            };
            match frame {
                Some(Ok(bytes)) => session.handle_frame(&bytes),
                Some(Err(FrameError::TooLarge { .. })) => session.reject_oversize_frame(),
                Some(Err(FrameError::Io(err))) => {
                    outcome = Err(Error::Transport(err));
                    break;
                }
                None => break,
            }
        }
        if writer_failed.is_cancelled() {
            session.close();
        } else {
            session.shutdown().await;
        }
        match writer_task.await {
            Ok(Ok(())) => outcome,
            Ok(Err(err)) if outcome.is_ok() => {
                tracing::debug!(%err, "the client stopped reading");
                Ok(())
            }
            Ok(Err(_)) => outcome,
            Err(join) => Err(Error::Transport(std::io::Error::other(join.to_string()))),
        }
    }

    /// Serves one client over stdin/stdout (see [`stdio`]). Fails with [`Error::Busy`] while
    /// another stdio serve of this process runs.
    pub async fn serve_stdio(&self) -> Result<(), Error> {
        self.serve_stdio_until(CancellationToken::new()).await
    }

    /// [`serve_stdio`](Self::serve_stdio), also ending when `stop` is cancelled (see
    /// [`serve_until`](Self::serve_until)).
    pub async fn serve_stdio_until(&self, stop: CancellationToken) -> Result<(), Error> {
        self.serve_stdio_claimed(StdioClaim::take()?, stop).await
    }

    /// [`serve_stdio_until`](Self::serve_stdio_until) with stdin already claimed; the claim
    /// ends with the serve.
    pub async fn serve_stdio_claimed(
        &self,
        claim: StdioClaim,
        stop: CancellationToken,
    ) -> Result<(), Error> {
        let _claim = claim;
        self.serve_until(stdio(self.inner.options.max_frame_bytes), stop)
            .await
    }
}
