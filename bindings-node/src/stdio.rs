//! `serveStdio` on the JS thread's own libuv loop. The stdio loop itself is core's
//! (`toolwire::host::HostStdio`: reading, framing, slicing, writing, end of input, a client
//! that stops reading); this file gives it the JS thread. The loop watches stdin and core's
//! wake-up descriptor with two `uv_poll_t`s and runs a turn when either is readable, with
//! every step that may run handlers inside a callback scope, so Promise jobs and `nextTick`s
//! run after it as they would after any I/O callback.
//!
//! When stdin cannot be read without blocking (a terminal, a file, or `TOOLWIRE_PORTABLE_IO`),
//! `serveStdio` is served by the JavaScript stream path instead; the handle then still holds
//! core's claim on stdin (one stdio serve at a time in a process) until JavaScript releases it.

use std::ffi::{c_int, c_void};
use std::os::fd::AsRawFd;
use std::panic::AssertUnwindSafe;
use std::ptr;

use napi::{Env, sys};
use napi_derive::napi;
use toolwire::CancellationToken;
use toolwire::host::StdioClaim;
use toolwire::host::{HostStdio, StdioWaker};

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

/// The running `serveStdio`: stop it, or wait for it to end. When `streams` is true the
/// engine does not read stdin here: the handle holds core's claim on it while JavaScript's
/// streams carry the bytes, until `release()`.
#[napi]
pub struct NativeStdio {
    /// Core's loop's (none on the stream path, where JavaScript reads).
    waker: Option<StdioWaker>,
    served: CancellationToken,
    /// Core's claim on stdin, held here on the stream path.
    claim: Option<StdioClaim>,
    streams: bool,
}

#[napi]
impl NativeStdio {
    /// Whether JavaScript's streams must carry stdin and stdout (the engine cannot watch stdin
    /// from the event loop: a terminal, a file, `TOOLWIRE_PORTABLE_IO`).
    #[napi(getter)]
    pub fn streams(&self) -> bool {
        self.streams
    }

    /// Ends serving as end of input would: reading stops, calls in flight finish.
    #[napi]
    pub fn stop(&self) {
        if let Some(waker) = &self.waker {
            waker.stop();
        }
    }

    /// The stream path has drained: the claim on stdin ends (another serve may take it).
    #[napi]
    pub fn release(&mut self) {
        if self.claim.take().is_some() {
            self.served.cancel();
        }
    }

    /// Resolves once serving has ended and the session has drained (or, on the stream path,
    /// once the claim was released).
    #[napi]
    pub async fn served(&self) {
        self.served.cancelled().await;
    }
}

/// The pump: core's loop and the two libuv handles that give it turns. Lives until both
/// handles are closed.
struct StdioPump {
    input: UvPoll,
    wake: UvPoll,
    env: sys::napi_env,
    stdio: HostStdio,
    resource: sys::napi_ref,
    async_context: sys::napi_async_context,
    served: CancellationToken,
    open_handles: u8,
    /// The stdin handle was stopped (reading ended; a pipe at its end stays readable).
    input_stopped: bool,
    finished: bool,
}

fn check(status: sys::napi_status, what: &str) -> Result<(), toolwire::Error> {
    if status == sys::Status::napi_ok {
        Ok(())
    } else {
        Err(toolwire::Error::Transport(std::io::Error::other(format!(
            "{what} failed (napi status {status})"
        ))))
    }
}

/// A libuv call's failure (libuv's codes are negated errno values on Unix).
fn uv_failure(what: &str, status: c_int) -> toolwire::Error {
    let os = std::io::Error::from_raw_os_error(-status);
    toolwire::Error::Transport(std::io::Error::new(os.kind(), format!("{what}: {os}")))
}

/// Claims stdin and serves it for `server` on `env`'s event loop; when stdin cannot be watched
/// there, the handle only holds the claim (`streams`).
pub(crate) fn serve(env: &Env, server: &toolwire::Server) -> Result<NativeStdio, toolwire::Error> {
    if !HostStdio::stdin_is_watchable() {
        tracing::debug!(
            "stdio through JavaScript's streams (stdin cannot be watched from the event loop)"
        );
        return Ok(NativeStdio {
            waker: None,
            served: CancellationToken::new(),
            claim: Some(StdioClaim::take()?),
            streams: true,
        });
    }
    let stdio = HostStdio::open(server, runtime().clone())?;
    let Some(input_fd) = stdio.input_fd().map(|fd| fd.as_raw_fd()) else {
        return Err(toolwire::Error::Transport(std::io::Error::other(
            "stdin was watchable but its descriptor is not",
        )));
    };
    let wake_fd = stdio.wake_fd().as_raw_fd();
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
    let served = CancellationToken::new();
    let handle = NativeStdio {
        waker: Some(stdio.waker()),
        served: served.clone(),
        claim: None,
        streams: false,
    };
    let pump = Box::into_raw(Box::new(StdioPump {
        input: UvPoll([0; 512]),
        wake: UvPoll([0; 512]),
        env: raw_env,
        stdio,
        resource,
        async_context,
        served,
        open_handles: 0,
        input_stopped: false,
        finished: false,
    }));
    // SAFETY: `pump` is a live, never-moved allocation; libuv owns each handle from its init
    // until its close callback, and the last close callback frees the pump.
    unsafe {
        for (handle, fd) in [
            (ptr::addr_of_mut!((*pump).input), input_fd),
            (ptr::addr_of_mut!((*pump).wake), wake_fd),
        ] {
            let status = uv_poll_init(event_loop.cast(), handle, fd);
            if status != 0 {
                if (*pump).open_handles == 0 {
                    destroy(pump);
                } else {
                    StdioPump::finish(pump);
                }
                return Err(uv_failure("uv_poll_init", status));
            }
            (*pump).open_handles += 1;
            // The handle's first field, `data`, points back at the pump.
            *handle.cast::<*mut c_void>() = pump.cast();
            let status = uv_poll_start(handle, UV_READABLE, on_readable);
            if status != 0 {
                StdioPump::finish(pump);
                return Err(uv_failure("uv_poll_start", status));
            }
        }
    }
    Ok(handle)
}

impl StdioPump {
    /// Runs `work` as an I/O callback of this pump: in a handle scope and a callback scope
    /// (whose close runs the microtasks and `nextTick`s it queued).
    fn in_callback_scope(
        env: sys::napi_env,
        resource: sys::napi_ref,
        async_context: sys::napi_async_context,
        work: &mut dyn FnMut(),
    ) {
        let mut handle_scope = ptr::null_mut();
        let mut callback_scope = ptr::null_mut();
        // SAFETY: on the JS thread of `env` (a libuv callback of its loop); scopes are closed
        // below in reverse order.
        let opened = unsafe {
            let mut resource_value = ptr::null_mut();
            sys::napi_open_handle_scope(env, &mut handle_scope) == sys::Status::napi_ok
                && sys::napi_get_reference_value(env, resource, &mut resource_value)
                    == sys::Status::napi_ok
                && sys::napi_open_callback_scope(
                    env,
                    resource_value,
                    async_context,
                    &mut callback_scope,
                ) == sys::Status::napi_ok
        };
        work();
        // SAFETY: as above.
        unsafe {
            if opened {
                sys::napi_close_callback_scope(env, callback_scope);
            }
            if !handle_scope.is_null() {
                sys::napi_close_handle_scope(env, handle_scope);
            }
        }
    }

    /// Stops watching; once both handles are closed the pump is freed. `served` resolves.
    fn finish(this: *mut StdioPump) {
        // SAFETY: `this` is a live pump on its JS thread; after `uv_close` it is only freed by
        // the last close callback, which runs later on this thread.
        let pump = unsafe { &mut *this };
        if pump.finished {
            return;
        }
        pump.finished = true;
        pump.served.cancel();
        // SAFETY: each handle counted in `open_handles` was initialised in `serve`.
        unsafe {
            let handles = [ptr::addr_of_mut!(pump.input), ptr::addr_of_mut!(pump.wake)];
            for handle in handles.into_iter().take(usize::from(pump.open_handles)) {
                uv_poll_stop(handle);
                uv_close(handle, Some(on_closed));
            }
        }
    }
}

unsafe extern "C" fn on_readable(handle: *mut UvPoll, status: c_int, _events: c_int) {
    // SAFETY: `data` was set to the pump in `serve`, and the pump lives until `on_closed`.
    let pump = unsafe { *handle.cast::<*mut StdioPump>() };
    // No panic may unwind into libuv.
    let ended = std::panic::catch_unwind(AssertUnwindSafe(|| {
        // SAFETY: as above; libuv callbacks run on the loop's (JS) thread, one at a time.
        let this = unsafe { &mut *pump };
        if this.finished {
            return false;
        }
        if status < 0 {
            // An error on the descriptor: the read reports it (or the end).
            tracing::debug!(status, "stdio poll error");
        }
        let env = Env::from_raw(this.env);
        let (raw_env, resource, async_context) = (this.env, this.resource, this.async_context);
        let woken_by_input = ptr::eq(handle, ptr::addr_of_mut!(this.input));
        let ended = js_thread::feeding(&env, pump as usize, || {
            this.stdio.turn(woken_by_input, |work| {
                StdioPump::in_callback_scope(raw_env, resource, async_context, work)
            })
        });
        if !ended && !this.stdio.is_reading() && !this.input_stopped {
            // The drain's end comes through the bell; stdin would only wake us for nothing.
            this.input_stopped = true;
            // SAFETY: the input handle was initialised and started in `serve`; it is closed
            // (stopped or not) only in `finish`.
            unsafe { uv_poll_stop(ptr::addr_of_mut!(this.input)) };
        }
        ended
    }))
    .unwrap_or(true);
    if ended {
        StdioPump::finish(pump);
    }
}

unsafe extern "C" fn on_closed(handle: *mut UvPoll) {
    // SAFETY: the pump lives until its last handle's close callback, which is this one when
    // the count reaches zero.
    let pump = unsafe { *handle.cast::<*mut StdioPump>() };
    // SAFETY: as above, on the JS thread.
    let this = unsafe { &mut *pump };
    this.open_handles -= 1;
    if this.open_handles == 0 {
        // SAFETY: no handle refers to the pump any more.
        unsafe { destroy(pump) };
    }
}

/// Frees the pump and its napi resources.
///
/// # Safety
/// `pump` came from `Box::into_raw` in `serve`, no libuv handle refers to it, and this runs
/// on the JS thread of its env.
unsafe fn destroy(pump: *mut StdioPump) {
    // SAFETY: as the caller promises.
    let pump = unsafe { Box::from_raw(pump) };
    // SAFETY: on the JS thread of `env`, which outlives the pump.
    unsafe {
        sys::napi_async_destroy(pump.env, pump.async_context);
        sys::napi_delete_reference(pump.env, pump.resource);
    }
}
