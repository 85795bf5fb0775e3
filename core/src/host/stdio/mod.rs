//! Stdio served from a host's own thread: the loop every binding whose handlers must run on
//! one thread of theirs (a JS event loop, a JVM thread) uses, so that a call whose handler
//! answers at once is read, run and answered on that thread with no hand-off.
//!
//! [`HostStdio`] owns everything that is stdio: opening stdin and stdout (non-blocking where the
//! OS allows, with a portable fallback), line framing and the frame limit, feeding a burst in
//! slices of 16 frames with the answers written between slices, one write per
//! batch of answers, end of input (the session drains, then serving ends), a client that stops
//! reading (broken pipe: the session ends), and the look for more input before sleeping
//! ([`ServerOptions::idle_poll`](crate::ServerOptions::idle_poll)).
//!
//! The host supplies only its thread and how it is woken, in one of two ways:
//! - a thread that may block calls [`HostStdio::serve_until`] in a loop (the JVM);
//! - an event loop watches [`HostStdio::input_fd`] and [`HostStdio::wake_fd`] and, when either
//!   is readable, runs [`HostStdio::turn`] (Node), wrapping it in whatever its callbacks need.

use std::io;
use std::ops::Range;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use rustix::event::{PollFd, PollFlags};
use tokio::runtime::Handle;

mod fds;

use self::fds::{Bell, Input, ServingGuard, ZERO, write_all};
use super::{HostHooks, LocalExecutor};
use crate::transport::idle::IdlePoll;
use crate::transport::{FrameError, LineDecoder, StdioClaim};
use crate::{Error, Outbound, Server, Session};

/// Frames fed at a time: a burst of requests is taken in slices, and the answers to one slice
/// are written before the next is fed, so the client reads them meanwhile instead of the two
/// ends taking turns (core's async stdio loop yields every as many frames).
const FRAMES_PER_SLICE: usize = 16;

/// Bytes read from stdin at a time.
const READ_CHUNK: usize = 64 * 1024;

/// Rounds of polling woken calls per [`HostStdio::run_calls`] (calls may wake each other).
const CALL_ROUNDS: usize = 64;

/// Host scopes opened per slice for calls that earlier scopes settled (see [`HostStdio::turn`]).
const SETTLE_SCOPES: usize = 16;

/// Slices (or looks) per [`HostStdio::turn`], so a host's loop gets to its other work (timers,
/// other I/O) under a steady stream of input.
const ROUNDS_PER_TURN: usize = 64;

/// Wakes or stops a [`HostStdio`] from any thread. Cheap to clone.
#[derive(Clone)]
pub struct StdioWaker {
    bell: Arc<Bell>,
    stop: Arc<AtomicBool>,
}

impl std::fmt::Debug for StdioWaker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioWaker").finish_non_exhaustive()
    }
}

impl StdioWaker {
    /// Gives the serving thread a turn (for work the host queued for it).
    pub fn wake(&self) {
        self.bell.ring();
    }

    /// Ends serving as end of input would: reading stops, calls in flight finish.
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        self.bell.ring_always();
    }
}

/// Stdio served from the host thread that drives it (see the module docs).
pub struct HostStdio {
    session: Session,
    outbound: Outbound,
    calls: Arc<LocalExecutor>,
    waker: StdioWaker,
    input: Input,
    output: OwnedFd,
    decoder: LineDecoder,
    read_buffer: Box<[u8]>,
    /// The part of `read_buffer` read but not fed yet.
    unfed: Range<usize>,
    input_open: bool,
    /// The session's shutdown has been started (after end of input or a stop).
    closing: bool,
    output_broken: bool,
    /// Set once the session has drained after the input ended.
    drained: Arc<AtomicBool>,
    /// Ends the task that stops this loop at `Server::stop`.
    _watch: tokio_util::sync::DropGuard,
    idle: IdlePoll,
    /// When the thread last went back to waiting (for the look's adaptation).
    idle_since: Option<Instant>,
    answers: Vec<u8>,
    runtime: Handle,
    /// Held while this loop serves, until its drain is over (see `StdioClaim`).
    claim: Option<StdioClaim>,
}

impl std::fmt::Debug for HostStdio {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostStdio")
            .field("input_open", &self.input_open)
            .field("closing", &self.closing)
            .finish_non_exhaustive()
    }
}

impl HostStdio {
    /// Whether stdin can be watched by an event loop ([`input_fd`](Self::input_fd) would be
    /// `Some`): a pipe or a socket, unless the portable path is forced. A host that cannot
    /// watch it reads stdin its own way, holding a [`StdioClaim`] meanwhile.
    pub fn stdin_is_watchable() -> bool {
        Input::watchable()
    }

    /// Opens stdin and stdout for `server`. Calls are polled on the thread that drives this
    /// loop; `runtime` runs the rest (timers, the session's watcher, the drain).
    pub fn open(server: &Server, runtime: Handle) -> Result<Self, Error> {
        let claim = StdioClaim::take()?;
        let bell = Arc::new(Bell::new().map_err(Error::Transport)?);
        let input = Input::open().map_err(Error::Transport)?;
        let output =
            rustix::io::dup(io::stdout().as_fd()).map_err(|err| Error::Transport(err.into()))?;
        let calls = LocalExecutor::new({
            let bell = bell.clone();
            move || bell.ring()
        });
        let hooks = HostHooks {
            notify: {
                let bell = bell.clone();
                Box::new(move || bell.ring())
            },
            spawn_call: Some({
                let calls = calls.clone();
                Box::new(move |task| calls.spawn(task))
            }),
        };
        let (session, outbound) = Session::hosted(server, runtime.clone(), hooks);
        let options = server.options();
        let waker = StdioWaker {
            bell,
            stop: Arc::new(AtomicBool::new(false)),
        };
        // `Server::stop` ends this loop as the host's own stop does; the watch ends with it.
        let served = tokio_util::sync::CancellationToken::new();
        runtime.spawn({
            let stop_all = server.stop_token();
            let served = served.clone();
            let waker = waker.clone();
            async move {
                tokio::select! {
                    () = stop_all.cancelled() => waker.stop(),
                    () = served.cancelled() => {}
                }
            }
        });
        Ok(HostStdio {
            session,
            outbound,
            calls,
            waker,
            _watch: served.drop_guard(),
            input,
            output,
            decoder: LineDecoder::new(options.max_frame_bytes),
            read_buffer: vec![0u8; READ_CHUNK].into_boxed_slice(),
            unfed: 0..0,
            input_open: true,
            closing: false,
            output_broken: false,
            drained: Arc::new(AtomicBool::new(false)),
            idle: IdlePoll::new(options.idle_poll),
            idle_since: None,
            answers: Vec::new(),
            runtime,
            claim: Some(claim),
        })
    }

    /// The session being served.
    pub fn session(&self) -> &Session {
        &self.session
    }

    /// Wakes or stops this loop from any thread.
    pub fn waker(&self) -> StdioWaker {
        self.waker.clone()
    }

    /// Stdin, for an event loop to watch; `None` when it cannot be read without blocking
    /// (a file, a terminal, the portable path): serve it with [`serve_until`](Self::serve_until)
    /// or from the host's own streams then.
    pub fn input_fd(&self) -> Option<BorrowedFd<'_>> {
        self.input.nonblocking.then(|| self.input.fd.as_fd())
    }

    /// Readable when the loop wants a turn (a call woke, a frame was queued, serving ends).
    pub fn wake_fd(&self) -> BorrowedFd<'_> {
        self.waker.bell.fd.as_fd()
    }

    /// Whether serving has ended: the input ended or was stopped and the calls drained.
    pub fn is_done(&self) -> bool {
        self.drained.load(Ordering::Acquire)
    }

    /// Whether stdin is still read; once not, an event loop stops watching it (a pipe at its
    /// end stays readable) and waits for the drain on [`wake_fd`](Self::wake_fd) alone.
    pub fn is_reading(&self) -> bool {
        self.input_open
    }

    /// Runs `work` as this loop's own thread would (wake-ups it causes are not written to the
    /// bell, since the loop looks at everything next): for a host that hands the loop results
    /// before a [`serve_until`](Self::serve_until).
    pub fn as_serving_thread<T>(&self, work: impl FnOnce() -> T) -> T {
        let _serving = ServingGuard::enter(&self.waker.bell);
        work()
    }

    /// One turn for an event loop, when [`input_fd`](Self::input_fd) or
    /// [`wake_fd`](Self::wake_fd) is readable: feeds what stdin has in slices, runs the calls
    /// that are ready, writes the answers after each slice, then looks for more input for a
    /// moment (the adaptive window of `idle_poll`) before it returns. Whatever may run host
    /// handlers runs inside `in_host_scope`, which the host wraps as its own I/O callbacks are
    /// (Node: a callback scope, whose close runs the Promise jobs the handlers queued; calls
    /// those settle are polled in further scopes, up to 16). Returns whether
    /// serving has ended (the host stops watching then). `woken_by_input`: stdin, not the
    /// bell, started this turn (only such waits teach the look how long the client takes).
    pub fn turn(
        &mut self,
        woken_by_input: bool,
        mut in_host_scope: impl FnMut(&mut dyn FnMut()),
    ) -> bool {
        // Calls start tokio timers (deadlines, requests to the client) from their first poll.
        let runtime = self.runtime.clone();
        let _runtime = runtime.enter();
        let bell = self.waker.bell.clone();
        let _serving = ServingGuard::enter(&bell);
        if let Some(since) = self.idle_since.take()
            && woken_by_input
        {
            self.idle.waited(since.elapsed());
        }
        if woken_by_input {
            // No read of the bell unless a ring was written. A ring whose write lands just
            // after this leaves the bell readable: its own turn (not started by input) reads it.
            self.waker.bell.clear_if_rung();
        } else {
            self.waker.bell.clear();
        }
        for round in 1..=ROUNDS_PER_TURN {
            self.check_stop();
            let mut fed = false;
            in_host_scope(&mut || {
                fed = self.feed();
                self.run_calls();
            });
            for _ in 0..SETTLE_SCOPES {
                if !self.has_ready_calls() {
                    break;
                }
                in_host_scope(&mut || {
                    self.run_calls();
                });
            }
            self.flush();
            if self.is_done() {
                break;
            }
            if round == ROUNDS_PER_TURN {
                // The loop's other work gets its turn; this one comes back for the rest.
                break;
            }
            if !fed && (!self.input_open || !self.look_for_input()) {
                break;
            }
        }
        if self.is_done() {
            // Frames queued while draining.
            in_host_scope(&mut || {
                self.run_calls();
            });
            while self.flush() {}
        } else if self.has_ready_calls() || !self.unfed.is_empty() {
            // Work left for a later turn: our own rings were suppressed, so ring for it now.
            self.waker.bell.ring_always();
        }
        self.idle_since = Some(Instant::now());
        self.is_done()
    }

    /// Serves from a thread that may block, until `host_work` says the host has work of its
    /// own to do (returns `true`) or serving has ended (returns `false`). Between its checks it
    /// feeds a slice, runs ready calls, writes answers, and waits for input or a wake-up.
    pub fn serve_until(&mut self, mut host_work: impl FnMut() -> bool) -> bool {
        let runtime = self.runtime.clone();
        let _runtime = runtime.enter();
        let bell = self.waker.bell.clone();
        let _serving = ServingGuard::enter(&bell);
        loop {
            self.check_stop();
            self.run_calls();
            self.flush();
            if host_work() {
                return true;
            }
            if self.drained.load(Ordering::Acquire) {
                // Frames queued while draining were written above.
                self.run_calls();
                if !self.flush() {
                    return false;
                }
                continue;
            }
            if !self.feed() && !self.has_ready_calls() {
                self.wait();
            }
        }
    }

    /// Polls the calls that were woken; returns whether there were any (inside the runtime
    /// context that `turn` and `serve_until` enter).
    fn run_calls(&mut self) -> bool {
        let mut any = false;
        for _ in 0..CALL_ROUNDS {
            if !self.calls.run_ready() {
                break;
            }
            any = true;
        }
        any
    }

    /// Whether woken calls wait to be polled.
    fn has_ready_calls(&self) -> bool {
        self.calls.has_work()
    }

    /// Writes every frame queued now to stdout, in one write; returns whether there were any.
    /// A client that stopped reading ends the session.
    fn flush(&mut self) -> bool {
        self.answers.clear();
        while let Some(frame) = self.outbound.try_recv() {
            self.answers.extend_from_slice(frame.as_bytes());
            self.answers.push(b'\n');
        }
        if self.answers.is_empty() {
            return false;
        }
        if !self.output_broken
            && let Err(err) = write_all(&self.output, &self.answers)
        {
            tracing::debug!(%err, "stdout closed; ending the session");
            self.output_broken = true;
            self.session.close();
            self.begin_close();
        }
        self.answers.clear();
        true
    }

    /// Feeds the next slice of input: what was read and not fed yet, else what stdin has now
    /// (without waiting). Returns whether anything was fed or the input ended.
    fn feed(&mut self) -> bool {
        if self.unfed.is_empty() {
            // A non-blocking read that finds nothing costs what a poll would; a blocking
            // descriptor is polled first.
            if !self.input_open || (!self.input.nonblocking && !self.input.readable_now()) {
                return false;
            }
            self.read();
            if self.unfed.is_empty() {
                return !self.input_open;
            }
        }
        let bytes = &self.read_buffer[self.unfed.clone()];
        let slice_end = memchr::memchr_iter(b'\n', bytes)
            .nth(FRAMES_PER_SLICE - 1)
            .map_or(bytes.len(), |newline| newline + 1);
        let session = &self.session;
        self.decoder
            .push(&bytes[..slice_end], |frame| feed_frame(session, frame));
        self.unfed.start += slice_end;
        true
    }

    /// Reads once into the buffer (empty when nothing was read); the end of input, or a read
    /// that fails, ends the input.
    fn read(&mut self) {
        match rustix::io::read(&self.input.fd, &mut self.read_buffer[..]) {
            Ok(0) => self.end_input(),
            Ok(n) => self.unfed = 0..n,
            Err(rustix::io::Errno::AGAIN | rustix::io::Errno::INTR) => {}
            Err(err) => {
                tracing::debug!(%err, "stdin failed; ending the input");
                self.end_input();
            }
        }
    }

    fn end_input(&mut self) {
        let session = &self.session;
        self.decoder.finish(|frame| feed_frame(session, frame));
        self.begin_close();
    }

    fn check_stop(&mut self) {
        if self.waker.stop.load(Ordering::Acquire) {
            self.begin_close();
        }
    }

    /// No more input is read; calls in flight drain on the runtime, then the bell rings.
    fn begin_close(&mut self) {
        if self.closing {
            return;
        }
        self.closing = true;
        self.input_open = false;
        self.unfed = 0..0;
        // Nothing more is read: a description shared with other processes gets its flags back.
        self.input.stop_reading();
        let session = self.session.clone();
        let drained = self.drained.clone();
        let bell = self.waker.bell.clone();
        // Held until the drain is over, as `Server::serve_stdio` holds it: a serve started
        // meanwhile would share stdout (and a host's redirect of it) with this one's last answers.
        let claim = self.claim.take();
        self.runtime.spawn(async move {
            session.shutdown().await;
            drop(claim);
            drained.store(true, Ordering::Release);
            bell.ring_always();
        });
    }

    /// Looks for input (or a ring of the bell) for the adaptive window, yielding the CPU
    /// between looks so a client on the same core can run; returns whether either came. A
    /// ring found here is cleared: what it rang for is looked at next.
    fn look_for_input(&mut self) -> bool {
        let window = self.idle.window();
        if window.is_zero() {
            return false;
        }
        let since = Instant::now();
        while since.elapsed() < window {
            let (input, bell) = self.ready_now(Some(&ZERO));
            if bell {
                self.waker.bell.clear();
            }
            if input {
                self.idle.waited(since.elapsed());
            }
            if input || bell {
                return true;
            }
            std::thread::yield_now();
        }
        false
    }

    /// Whether stdin (while it is read) and the bell are readable, waiting at most `timeout`
    /// (`None`: until one is).
    fn ready_now(&self, timeout: Option<&rustix::event::Timespec>) -> (bool, bool) {
        let mut fds = [
            PollFd::new(&self.waker.bell.fd, PollFlags::IN),
            PollFd::new(&self.input.fd, PollFlags::IN),
        ];
        let watched = if self.input_open { 2 } else { 1 };
        match rustix::event::poll(&mut fds[..watched], timeout) {
            Ok(_) => (
                watched == 2 && !fds[1].revents().is_empty(),
                !fds[0].revents().is_empty(),
            ),
            // EINTR: the caller loops.
            Err(_) => (false, false),
        }
    }

    /// Blocks until stdin or the bell is readable (after looking for the adaptive window),
    /// then reads what stdin has.
    fn wait(&mut self) {
        let since = Instant::now();
        if self.look_for_input() {
            if self.input_open && self.input.readable_now() {
                self.read();
            }
            return;
        }
        let (input_ready, bell_ready) = self.ready_now(None);
        if bell_ready {
            self.waker.bell.clear();
        }
        if input_ready {
            self.idle.waited(since.elapsed());
            self.read();
        }
    }
}

impl Drop for HostStdio {
    fn drop(&mut self) {
        self.session.close();
    }
}

fn feed_frame(session: &Session, frame: Result<&[u8], FrameError>) {
    match frame {
        Ok(bytes) => session.handle_frame(bytes),
        Err(_) => session.reject_oversize_frame(),
    }
}
