//! Native stdio for `serveStdio`: the JS thread's own libuv loop watches stdin (a `uv_poll_t`),
//! the bytes are read without blocking and fed to the session right there, and answers are
//! written to stdout directly. Node's stream objects (and their per-chunk events) are skipped;
//! calls still run on the JS thread, inside a callback scope so Promise jobs and `nextTick`s
//! run after each burst as they would after any I/O callback.
//!
//! Stdin must be a pipe or a socket (as when a client spawns the server); anything else (a
//! terminal, a file) is served by the JavaScript stream path instead.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{c_int, c_void};
use std::fs::File;
#[cfg(target_os = "linux")]
use std::fs::OpenOptions;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd};
use std::os::unix::fs::FileTypeExt;
#[cfg(target_os = "linux")]
use std::os::unix::fs::OpenOptionsExt;
use std::panic::AssertUnwindSafe;
use std::ptr;
use std::sync::Arc;

use napi::{Env, sys};

use crate::connection::ConnectionCore;
use crate::js_thread;
use crate::runtime::runtime;

/// Storage for a libuv `uv_poll_t` (about 160 bytes on 64-bit Unix); its first field is the
/// handle's `void* data`, which points back at the pump.
#[repr(C, align(16))]
struct UvPoll([u8; 512]);

type PollCallback = unsafe extern "C" fn(handle: *mut UvPoll, status: c_int, events: c_int);
type CloseCallback = unsafe extern "C" fn(handle: *mut UvPoll);

// libuv is linked into Node and its symbols are exported to addons.
unsafe extern "C" {
    fn uv_poll_init(event_loop: *mut sys::uv_loop_s, handle: *mut UvPoll, fd: c_int) -> c_int;
    fn uv_poll_start(handle: *mut UvPoll, events: c_int, callback: PollCallback) -> c_int;
    fn uv_poll_stop(handle: *mut UvPoll) -> c_int;
    fn uv_close(handle: *mut UvPoll, callback: Option<CloseCallback>);
}

const UV_READABLE: c_int = 1;
/// Reads per wake-up before letting the event loop run other work.
const READS_PER_WAKE: usize = 16;
/// Rounds of answering calls settled by Promise jobs, per wake-up.
const SETTLE_ROUNDS: usize = 16;
/// How long to look for more input after answering, before sleeping in the event loop.
const LOOK_FOR_INPUT: std::time::Duration = std::time::Duration::from_micros(50);
/// Rounds of read → answer → look per wake-up.
const LOOKS_PER_WAKE: usize = 64;

thread_local! {
    /// The pumps running on this (JS) thread, by connection id, for `stop`.
    static PUMPS: RefCell<HashMap<usize, *mut StdioPump>> = RefCell::new(HashMap::new());
}

pub(crate) struct StdioPump {
    handle: UvPoll,
    env: sys::napi_env,
    core: Arc<ConnectionCore>,
    input: File,
    /// A socket's file status flags before we made it non-blocking (restored at the end).
    restore_flags: Option<c_int>,
    resource: sys::napi_ref,
    async_context: sys::napi_async_context,
    buffer: Box<[u8]>,
    finished: bool,
}

/// Stdin as a non-blocking descriptor of our own, when it is a pipe or a socket; `None` sends
/// `serveStdio` to the JavaScript stream path (also when `TOOLWIRE_PORTABLE_IO` asks for the
/// portable paths).
fn open_input() -> io::Result<Option<(File, Option<c_int>)>> {
    if toolwire::transport::portable_io_forced() {
        tracing::debug!("stdio through JavaScript streams (portable paths forced)");
        return Ok(None);
    }
    let stdin = io::stdin();
    // SAFETY: fd 0 stays open for the process's life; the File is forgotten below, not closed.
    let probe = std::mem::ManuallyDrop::new(unsafe { File::from_raw_fd(stdin.as_raw_fd()) });
    let kind = probe.metadata()?.file_type();
    if kind.is_fifo() {
        // Linux: a new description of the same pipe, whose flags are ours alone. Elsewhere
        // (no /proc) the pipe is shared as a socket is, below.
        #[cfg(target_os = "linux")]
        if let Ok(file) = OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK)
            .open("/proc/self/fd/0")
        {
            return Ok(Some((file, None)));
        }
        return share_nonblocking().map(Some);
    }
    if kind.is_socket() {
        return share_nonblocking().map(Some);
    }
    Ok(None)
}

/// Stdin's own description made non-blocking (a socket cannot be reopened): the flags it had
/// come back with the File, to be restored at the end.
fn share_nonblocking() -> io::Result<(File, Option<c_int>)> {
    // SAFETY: plain fcntl/dup calls on fd 0; the dup'ed descriptor is owned by the File.
    unsafe {
        let flags = libc::fcntl(0, libc::F_GETFL);
        let fd = libc::dup(0);
        if flags < 0 || fd < 0 {
            return Err(io::Error::last_os_error());
        }
        let file = File::from_raw_fd(fd);
        if libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok((file, Some(flags)))
    }
}

/// Stdout as a descriptor of our own (its flags may be non-blocking: writes wait then).
fn open_output() -> io::Result<File> {
    // SAFETY: dup of fd 1; the new descriptor is owned by the File.
    let fd = unsafe { libc::dup(1) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just created and is owned by nobody else.
    Ok(unsafe { File::from_raw_fd(fd) })
}

/// Writes everything, waiting for room when the descriptor is non-blocking and full.
/// Whether `input` becomes readable within `window` (polled without sleeping; yields the CPU
/// between looks so a client on the same core can run).
fn input_arrives_within(input: &File, window: std::time::Duration) -> bool {
    let until = std::time::Instant::now() + window;
    loop {
        let mut look = libc::pollfd {
            fd: input.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd; a zero timeout never blocks.
        if unsafe { libc::poll(&mut look, 1, 0) } != 0 {
            return true;
        }
        if std::time::Instant::now() >= until {
            return false;
        }
        std::thread::yield_now();
    }
}

pub(crate) fn write_all(out: &mut File, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match out.write(bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                let mut wait = libc::pollfd {
                    fd: out.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                };
                // SAFETY: one valid pollfd.
                unsafe { libc::poll(&mut wait, 1, -1) };
            }
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

fn check(status: sys::napi_status, what: &str) -> napi::Result<()> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(napi::Error::new(
            napi::Status::GenericFailure,
            format!("{what} failed (napi status {status})"),
        ))
    }
}

impl StdioPump {
    /// Starts serving stdio for `core` on `env`'s event loop; `false` if stdin is neither a
    /// pipe nor a socket.
    pub(crate) fn start(env: &Env, core: Arc<ConnectionCore>) -> napi::Result<bool> {
        let Some((input, restore_flags)) = open_input()? else {
            return Ok(false);
        };
        let output = open_output()?;
        let raw_env = env.raw();
        let mut event_loop = ptr::null_mut();
        let mut resource_value = ptr::null_mut();
        let mut name = ptr::null_mut();
        let mut resource = ptr::null_mut();
        let mut async_context = ptr::null_mut();
        // SAFETY: we are inside a call from JavaScript on `env`'s thread.
        unsafe {
            check(
                sys::napi_get_uv_event_loop(raw_env, &mut event_loop),
                "napi_get_uv_event_loop",
            )?;
            check(
                sys::napi_create_object(raw_env, &mut resource_value),
                "napi_create_object",
            )?;
            check(
                sys::napi_create_string_utf8(raw_env, c"toolwire.stdio".as_ptr(), 14, &mut name),
                "napi_create_string_utf8",
            )?;
            check(
                sys::napi_create_reference(raw_env, resource_value, 1, &mut resource),
                "napi_create_reference",
            )?;
            check(
                sys::napi_async_init(raw_env, resource_value, name, &mut async_context),
                "napi_async_init",
            )?;
        }
        let fd = input.as_raw_fd();
        let pump = Box::into_raw(Box::new(StdioPump {
            handle: UvPoll([0; 512]),
            env: raw_env,
            core: core.clone(),
            input,
            restore_flags,
            resource,
            async_context,
            buffer: vec![0; 64 * 1024].into_boxed_slice(),
            finished: false,
        }));
        // SAFETY: `pump` is a live, never-moved allocation; libuv owns the handle until its
        // close callback, which frees the pump.
        unsafe {
            let handle = ptr::addr_of_mut!((*pump).handle);
            let status = uv_poll_init(event_loop.cast(), handle, fd);
            if status != 0 {
                drop(Box::from_raw(pump));
                return Err(napi::Error::new(
                    napi::Status::GenericFailure,
                    format!("uv_poll_init failed ({status})"),
                ));
            }
            // The handle's first field, `data`, points back at the pump.
            *handle.cast::<*mut c_void>() = pump.cast();
            let status = uv_poll_start(handle, UV_READABLE, on_readable);
            if status != 0 {
                uv_close(handle, Some(on_closed));
                return Err(napi::Error::new(
                    napi::Status::GenericFailure,
                    format!("uv_poll_start failed ({status})"),
                ));
            }
        }
        *core.sink.lock().unwrap_or_else(|e| e.into_inner()) = Some(output);
        PUMPS.with(|pumps| pumps.borrow_mut().insert(core.id(), pump));
        Ok(true)
    }

    /// Reads what is there and feeds it; returns true at the end of input (the caller flushes).
    fn pump(&mut self) -> bool {
        let env = Env::from_raw(self.env);
        let mut ended = false;
        for _ in 0..READS_PER_WAKE {
            match self.input.read(&mut self.buffer) {
                Ok(0) => {
                    ended = true;
                    break;
                }
                Ok(n) => {
                    self.core.feed(&env, &self.buffer[..n]);
                    if n < self.buffer.len() {
                        // Drained (a short read): the poll handle is level-triggered, so
                        // anything arriving now wakes us again; skip a read that would only
                        // say EAGAIN.
                        break;
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => break,
                Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
                Err(err) => {
                    tracing::debug!(%err, "reading stdin failed");
                    ended = true;
                    break;
                }
            }
        }
        if ended {
            self.core.end_input(&env);
        }
        ended
    }

    /// Runs `work` as an I/O callback of this pump: in a handle scope and a callback scope
    /// (whose close runs the microtasks and `nextTick`s it queued).
    fn in_callback_scope<T>(&mut self, work: impl FnOnce(&mut Self) -> T) -> T {
        let env = self.env;
        let mut handle_scope = ptr::null_mut();
        let mut callback_scope = ptr::null_mut();
        // SAFETY: on the JS thread of `env` (a libuv callback of its loop); scopes are closed
        // below in reverse order.
        let opened = unsafe {
            let mut resource = ptr::null_mut();
            sys::napi_open_handle_scope(env, &mut handle_scope) == sys::Status::napi_ok
                && sys::napi_get_reference_value(env, self.resource, &mut resource)
                    == sys::Status::napi_ok
                && sys::napi_open_callback_scope(
                    env,
                    resource,
                    self.async_context,
                    &mut callback_scope,
                ) == sys::Status::napi_ok
        };
        let result = work(self);
        // SAFETY: as above.
        unsafe {
            if opened {
                sys::napi_close_callback_scope(env, callback_scope);
            }
            if !handle_scope.is_null() {
                sys::napi_close_handle_scope(env, handle_scope);
            }
        }
        result
    }

    /// Stops reading; the session drains on the engine's runtime, then `served` fires.
    fn finish(this: *mut StdioPump) {
        // SAFETY: `this` is a live pump on its JS thread; after `uv_close` it is only freed by
        // the close callback, which runs later on this thread.
        let pump = unsafe { &mut *this };
        if pump.finished {
            return;
        }
        pump.finished = true;
        PUMPS.with(|pumps| pumps.borrow_mut().remove(&pump.core.id()));
        if let Some(flags) = pump.restore_flags {
            // SAFETY: restores the flags read at start on the shared socket description.
            unsafe { libc::fcntl(pump.input.as_raw_fd(), libc::F_SETFL, flags) };
        }
        // SAFETY: the handle was initialised in `start`.
        unsafe {
            let handle = ptr::addr_of_mut!(pump.handle);
            uv_poll_stop(handle);
            uv_close(handle, Some(on_closed));
        }
        let core = pump.core.clone();
        runtime().spawn(async move {
            core.session.shutdown().await;
            core.served.cancel();
        });
    }
}

unsafe extern "C" fn on_readable(handle: *mut UvPoll, status: c_int, _events: c_int) {
    // SAFETY: `data` was set to the pump in `start`, and the pump lives until `on_closed`.
    let pump = unsafe { *handle.cast::<*mut StdioPump>() };
    // No panic may unwind into libuv.
    let ended = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as above; libuv callbacks run on the loop's (JS) thread, one at a time.
        let this = unsafe { &mut *pump };
        if status < 0 {
            // An error on the descriptor: read() reports it (or the end).
            tracing::debug!(status, "stdin poll error");
        }
        let env = Env::from_raw(this.env);
        let core = this.core.clone();
        js_thread::feeding(&env, core.id(), || {
            for round in 1.. {
                let ended = this.in_callback_scope(StdioPump::pump);
                // Promise jobs ran as the scope closed; calls they settled are answered now,
                // not on another turn of the event loop.
                for _ in 0..SETTLE_ROUNDS {
                    if !core.executor.has_work() {
                        break;
                    }
                    this.in_callback_scope(|_| core.drain());
                }
                core.flush();
                // A client answered at once usually sends its next request within tens of
                // µs; catching it here skips a sleep in epoll, whose wake-up on a busy VM
                // costs more than the look (a bounded number of rounds, so timers and other
                // I/O of the loop still get their turn).
                if ended
                    || round >= LOOKS_PER_WAKE
                    || !input_arrives_within(&this.input, LOOK_FOR_INPUT)
                {
                    return ended;
                }
            }
            false
        })
    }))
    .unwrap_or(true);
    if ended {
        StdioPump::finish(pump);
    }
}

unsafe extern "C" fn on_closed(handle: *mut UvPoll) {
    // SAFETY: the last libuv callback of this handle: the pump can go.
    let pump = unsafe { Box::from_raw(*handle.cast::<*mut StdioPump>()) };
    // SAFETY: on the JS thread of `env`, which outlives the pump.
    unsafe {
        sys::napi_async_destroy(pump.env, pump.async_context);
        sys::napi_delete_reference(pump.env, pump.resource);
    }
}

/// Stops `core`'s pump, if one runs on this thread (as at end of input).
pub(crate) fn stop(core: &ConnectionCore) {
    if let Some(pump) = PUMPS.with(|pumps| pumps.borrow().get(&core.id()).copied()) {
        StdioPump::finish(pump);
    }
}
