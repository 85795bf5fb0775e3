//! `StdioDriver`: stdio served from a host thread, with the host's handlers run on it.
//!
//! The host thread loops on `next`: the driver reads stdin, feeds frames to the session, polls
//! the calls that are waiting (on this thread), writes answers to stdout, and returns the
//! queued calls for the host to run; their results come back with the following `next`. A
//! call whose handler finishes at once is read, run and answered on this one thread.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use toolwire::host::{HostHooks, LocalExecutor};
use toolwire::transport::{FrameError, LineDecoder};
use toolwire::{Outbound, Session};

use crate::errors::ToolwireError;
use crate::queue::{Completion, Work, queue, taking_own_calls};
use crate::runtime::runtime;

thread_local! {
    /// The bell of the driver whose `next` runs on this thread: what it would be rung for
    /// (a woken call, a queued frame) is looked at before that `next` waits anyway.
    static SERVING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Bytes read from stdin at a time.
const READ_CHUNK: usize = 64 * 1024;

/// How long the loop looks for input before it sleeps: a client that sends its next request
/// within this time is served without a wake-up (on this VM a cross-core wake-up costs 3–7 µs,
/// a whole sequential round trip about 8).
const SPIN: std::time::Duration = std::time::Duration::from_micros(50);

/// Frames fed per turn of the loop. A burst of requests is taken in slices: the answers to one
/// slice are written before the next is fed, so the client works on them meanwhile instead
/// of the two ends taking turns (as the engine's own stdio transport does every 16 frames).
const FRAMES_PER_TURN: usize = 16;

/// What other threads write to wake the driver from `poll`: an eventfd on Linux, a pipe on
/// every other Unix (and on Linux when `TOOLWIRE_PORTABLE_IO` asks for the portable paths).
struct Bell {
    /// Polled and drained by the driver.
    fd: OwnedFd,
    /// Written to ring: the eventfd itself, or the pipe's write end.
    ringer: OwnedFd,
    rung: AtomicBool,
}

impl Bell {
    fn new() -> io::Result<Self> {
        #[cfg(target_os = "linux")]
        if !toolwire::transport::portable_io_forced() {
            // SAFETY: eventfd takes no pointers; the result is checked before use.
            let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
            if fd < 0 {
                return Err(io::Error::last_os_error());
            }
            // SAFETY: `fd` is a fresh descriptor that nothing else owns.
            let fd = unsafe { OwnedFd::from_raw_fd(fd) };
            let ringer = fd.try_clone()?;
            return Ok(Bell::from_fds(fd, ringer));
        }
        tracing::debug!("stdio driver: woken through a pipe (the portable bell)");
        let mut ends: [libc::c_int; 2] = [-1, -1];
        // SAFETY: `ends` is a live array of two descriptors for pipe() to fill.
        if unsafe { libc::pipe(ends.as_mut_ptr()) } < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: both are fresh descriptors that nothing else owns.
        let (fd, ringer) =
            unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
        for end in [&fd, &ringer] {
            let raw = end.as_raw_fd();
            // SAFETY: plain fcntl calls on a descriptor we own.
            let set = unsafe {
                libc::fcntl(
                    raw,
                    libc::F_SETFL,
                    libc::fcntl(raw, libc::F_GETFL) | libc::O_NONBLOCK,
                ) >= 0
                    && libc::fcntl(raw, libc::F_SETFD, libc::FD_CLOEXEC) >= 0
            };
            if !set {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(Bell::from_fds(fd, ringer))
    }

    fn from_fds(fd: OwnedFd, ringer: OwnedFd) -> Self {
        Bell {
            fd,
            ringer,
            rung: AtomicBool::new(false),
        }
    }

    fn id(&self) -> usize {
        self as *const Bell as usize
    }

    fn ring(&self) {
        if SERVING.with(std::cell::Cell::get) == self.id() {
            return;
        }
        // One write per wait: later rings before the driver wakes are free.
        if self.rung.swap(true, Ordering::AcqRel) {
            return;
        }
        // Eight bytes: what an eventfd takes (a pipe takes any).
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own descriptor.
        let _ = unsafe {
            libc::write(
                self.ringer.as_raw_fd(),
                (&one as *const u64).cast(),
                size_of::<u64>(),
            )
        };
    }

    fn clear(&self) {
        // An eventfd gives its count in one 8-byte read; a pipe gives what was written.
        let mut drained = [0u8; 64];
        // SAFETY: reads at most 64 bytes into a live buffer; the descriptor is non-blocking.
        let _ = unsafe {
            libc::read(
                self.fd.as_raw_fd(),
                drained.as_mut_ptr().cast(),
                drained.len(),
            )
        };
        self.rung.store(false, Ordering::Release);
    }
}

struct DriverState {
    decoder: LineDecoder,
    /// Reused for every read (a fresh zeroed buffer per read showed up as memset in perf).
    read_buffer: Box<[u8]>,
    /// The part of `read_buffer` read but not fed yet.
    unfed: std::ops::Range<usize>,
    input_open: bool,
    /// The session's shutdown has been started (after EOF or `stop`).
    closing: bool,
    output_broken: bool,
}

/// Serves stdin/stdout from the thread that calls [`next`](Self::next) (see the module docs).
#[derive(uniffi::Object)]
pub struct StdioDriver {
    session: Session,
    outbound: Mutex<Outbound>,
    /// Calls that did not finish at once, polled on the driver's thread.
    tasks: Arc<LocalExecutor>,
    bell: Arc<Bell>,
    listener: Arc<dyn Fn() + Send + Sync>,
    state: Mutex<DriverState>,
    stop_requested: AtomicBool,
    /// Set once the session has drained after the input ended.
    drained: Arc<AtomicBool>,
    /// Encoded work that did not fit the fast path's buffer (see `fast_path`).
    overflow: Mutex<Option<Vec<u8>>>,
    /// The id under which `fast_path` knows this driver, once registered.
    fast_path_id: Mutex<Option<u64>>,
}

impl StdioDriver {
    pub(crate) fn new(server: &toolwire::Server) -> Result<Arc<Self>, ToolwireError> {
        let bell = Arc::new(Bell::new().map_err(|err| ToolwireError::Transport {
            detail: format!("cannot create the driver's wake-up descriptor: {err}"),
        })?);
        let tasks = LocalExecutor::new({
            let bell = bell.clone();
            move || bell.ring()
        });
        let hooks = HostHooks {
            notify: {
                let bell = bell.clone();
                Box::new(move || bell.ring())
            },
            spawn_call: Some({
                let tasks = tasks.clone();
                Box::new(move |task| tasks.spawn(task))
            }),
        };
        let (session, outbound) = Session::hosted(server, runtime().handle().clone(), hooks);
        let listener: Arc<dyn Fn() + Send + Sync> = {
            let bell = bell.clone();
            Arc::new(move || bell.ring())
        };
        queue().listen(listener.clone());
        Ok(Arc::new(StdioDriver {
            session,
            outbound: Mutex::new(outbound),
            tasks,
            bell,
            listener,
            state: Mutex::new(DriverState {
                decoder: LineDecoder::new(server.options().max_frame_bytes),
                read_buffer: vec![0u8; READ_CHUNK].into_boxed_slice(),
                unfed: 0..0,
                input_open: true,
                closing: false,
                output_broken: false,
            }),
            stop_requested: AtomicBool::new(false),
            drained: Arc::new(AtomicBool::new(false)),
            overflow: Mutex::new(None),
            fast_path_id: Mutex::new(None),
        }))
    }

    fn frame(&self, frame: Result<&[u8], FrameError>) {
        match frame {
            Ok(bytes) => self.session.handle_frame(bytes),
            Err(_) => self.session.reject_oversize_frame(),
        }
    }

    /// Ends the input: no more frames are read; calls in flight drain, then `next` ends.
    fn begin_close(&self, state: &mut DriverState) {
        if state.closing {
            return;
        }
        state.closing = true;
        state.input_open = false;
        let session = self.session.clone();
        let drained = self.drained.clone();
        let bell = self.bell.clone();
        runtime().spawn(async move {
            session.shutdown().await;
            drained.store(true, Ordering::Release);
            bell.ring();
        });
    }

    /// Writes every outbound frame queued now to stdout; returns whether there were any.
    fn flush(&self, state: &mut DriverState) -> bool {
        let mut batch = Vec::new();
        {
            let mut outbound = self.outbound.lock().unwrap_or_else(|e| e.into_inner());
            while let Some(frame) = outbound.try_recv() {
                batch.extend_from_slice(frame.as_bytes());
                batch.push(b'\n');
            }
        }
        if batch.is_empty() {
            return false;
        }
        if !state.output_broken
            && let Err(err) = write_all(libc::STDOUT_FILENO, &batch)
        {
            // The client is gone: nothing more can be answered.
            tracing::debug!(%err, "stdout closed; ending the session");
            state.output_broken = true;
            self.session.close();
            self.begin_close(state);
        }
        true
    }

    /// Feeds the next slice of what was read (up to `FRAMES_PER_TURN` frames); returns
    /// whether there was anything to feed.
    fn feed_unfed(&self, state: &mut DriverState) -> bool {
        if state.unfed.is_empty() {
            return false;
        }
        let DriverState {
            decoder,
            read_buffer,
            unfed,
            ..
        } = state;
        let bytes = &read_buffer[unfed.clone()];
        let slice_end = memchr::memchr_iter(b'\n', bytes)
            .nth(FRAMES_PER_TURN - 1)
            .map_or(bytes.len(), |newline| newline + 1);
        decoder.push(&bytes[..slice_end], |frame| self.frame(frame));
        unfed.start += slice_end;
        true
    }

    /// Waits for stdin or the bell, then reads what stdin has (fed by `feed_unfed`; nothing
    /// is read while some is unfed).
    fn wait_and_read(&self, state: &mut DriverState) {
        let mut fds = [
            libc::pollfd {
                fd: self.bell.fd.as_raw_fd(),
                events: libc::POLLIN,
                revents: 0,
            },
            libc::pollfd {
                fd: libc::STDIN_FILENO,
                events: libc::POLLIN,
                revents: 0,
            },
        ];
        let watched = if state.input_open { 2 } else { 1 };
        let spin_until = std::time::Instant::now() + SPIN;
        let ready = loop {
            // SAFETY: `fds` is a live array of `watched` pollfd entries.
            let ready = unsafe { libc::poll(fds.as_mut_ptr(), watched as libc::nfds_t, 0) };
            if ready != 0 || std::time::Instant::now() >= spin_until {
                break ready;
            }
            std::thread::yield_now();
        };
        let ready = if ready == 0 {
            // SAFETY: as above.
            unsafe { libc::poll(fds.as_mut_ptr(), watched as libc::nfds_t, -1) }
        } else {
            ready
        };
        if ready < 0 {
            return; // EINTR: the caller loops
        }
        if fds[0].revents != 0 {
            self.bell.clear();
        }
        if state.input_open && fds[1].revents != 0 {
            let buffer = &mut state.read_buffer;
            // SAFETY: reads at most `buffer.len()` bytes into the live buffer.
            let read =
                unsafe { libc::read(libc::STDIN_FILENO, buffer.as_mut_ptr().cast(), buffer.len()) };
            match read {
                n if n > 0 => state.unfed = 0..n as usize,
                0 => {
                    state.decoder.finish(|frame| self.frame(frame));
                    self.begin_close(state);
                }
                _ => {
                    let err = io::Error::last_os_error();
                    if !matches!(
                        err.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::WouldBlock
                    ) {
                        tracing::debug!(%err, "stdin failed; ending the input");
                        state.decoder.finish(|frame| self.frame(frame));
                        self.begin_close(state);
                    }
                }
            }
        }
    }
}

#[uniffi::export]
impl StdioDriver {
    /// Hands back results of calls taken earlier, then serves until there are calls for the
    /// host to run (returned) or the session has ended (`null`/`nil`). Call it from one
    /// thread only, in a loop.
    pub fn next(&self, completions: Vec<Completion>) -> Option<Work> {
        let outer = SERVING.with(|serving| serving.replace(self.bell.id()));
        let work = self.serve_until_work(completions);
        SERVING.with(|serving| serving.set(outer));
        work
    }

    /// Ends serving as EOF would, from any thread: calls in flight finish, then `next`
    /// returns `null`/`nil`.
    pub fn stop(&self) {
        self.stop_requested.store(true, Ordering::Release);
        self.bell.ring();
    }

    /// Registers this driver for the C function `toolwire_driver_next` (the JVM's fast path:
    /// the same as `next`, without per-call marshalling) and returns its id there.
    pub fn fast_path_id(self: Arc<Self>) -> u64 {
        let mut slot = self.fast_path_id.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(id) = *slot {
            return id;
        }
        let id = crate::fast_path::register(self.clone());
        *slot = Some(id);
        id
    }

    /// Forgets the fast-path registration (the driver is freed once the host lets go of it).
    pub fn release_fast_path(&self) {
        if let Some(id) = self
            .fast_path_id
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
        {
            crate::fast_path::unregister(id);
        }
    }
}

impl StdioDriver {
    pub(crate) fn take_overflow(&self) -> Option<Vec<u8>> {
        self.overflow
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    pub(crate) fn keep_overflow(&self, encoded: Vec<u8>) {
        *self.overflow.lock().unwrap_or_else(|e| e.into_inner()) = Some(encoded);
    }

    /// Results that arrive while kept work is handed out: they still count.
    pub(crate) fn hand_back(&self, completions: Vec<Completion>) {
        if !completions.is_empty() {
            queue().complete(completions);
        }
    }

    fn serve_until_work(&self, completions: Vec<Completion>) -> Option<Work> {
        taking_own_calls(|| {
            // Calls create tokio timers (deadlines, requests to the client) as they go.
            let _runtime = runtime().enter();
            queue().complete(completions);
            let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if self.stop_requested.load(Ordering::Acquire) {
                    self.begin_close(&mut state);
                }
                while self.tasks.run_ready() {}
                self.flush(&mut state);
                let work = queue().take_now();
                if !work.calls.is_empty() || !work.cancelled.is_empty() {
                    return Some(work);
                }
                if self.drained.load(Ordering::Acquire) {
                    // Frames queued while draining were flushed above.
                    if !self.flush(&mut state) {
                        return None;
                    }
                    continue;
                }
                if !self.feed_unfed(&mut state) {
                    self.wait_and_read(&mut state);
                }
            }
        })
    }
}

impl Drop for StdioDriver {
    fn drop(&mut self) {
        queue().unlisten(&self.listener);
        self.session.close();
    }
}

/// Writes all of `bytes` to `fd`, waiting out a non-blocking descriptor's EAGAIN.
fn write_all(fd: RawFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        // SAFETY: writes at most `bytes.len()` bytes from a live slice.
        let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
        if written > 0 {
            bytes = &bytes[written as usize..];
            continue;
        }
        if written == 0 {
            return Err(io::ErrorKind::WriteZero.into());
        }
        let err = io::Error::last_os_error();
        match err.kind() {
            io::ErrorKind::Interrupted => {}
            io::ErrorKind::WouldBlock => {
                let mut pfd = libc::pollfd {
                    fd,
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one live pollfd.
                unsafe { libc::poll(&mut pfd, 1, -1) };
            }
            _ => return Err(err),
        }
    }
    Ok(())
}
