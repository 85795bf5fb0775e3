//! The descriptors of the host-thread stdio loop: stdin as it can be read, and the bell that
//! wakes the serving thread. Every OS-specific path here has its portable fallback, which
//! `TOOLWIRE_PORTABLE_IO` forces on Linux.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

use rustix::event::{PollFd, PollFlags};
use rustix::fs::OFlags;

use crate::transport::portable_io_forced;

thread_local! {
    /// The bell of the stdio loop running on this thread, if one is: a ring from this thread
    /// while it runs would only wake it for what it looks at anyway.
    static SERVING: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Marks this thread as the one serving `bell`'s loop while it lives (restored on drop, a
/// panic included).
pub(super) struct ServingGuard {
    outer: usize,
}

impl ServingGuard {
    pub(super) fn enter(bell: &Bell) -> Self {
        ServingGuard {
            outer: SERVING.with(|serving| serving.replace(bell.id())),
        }
    }
}

impl Drop for ServingGuard {
    fn drop(&mut self) {
        SERVING.with(|serving| serving.set(self.outer));
    }
}

/// How other threads wake a [`HostStdio`]'s thread: an eventfd on Linux, a pipe on every other
/// Unix (and on Linux when [`PORTABLE_IO_ENV`](crate::transport::PORTABLE_IO_ENV) is set).
pub(super) struct Bell {
    /// Polled and drained by the serving thread.
    pub(super) fd: OwnedFd,
    /// Written to ring: the eventfd itself, or the pipe's write end.
    ringer: OwnedFd,
    rung: AtomicBool,
}

impl Bell {
    pub(super) fn new() -> io::Result<Self> {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        if !portable_io_forced() {
            use rustix::event::{EventfdFlags, eventfd};
            let fd = eventfd(0, EventfdFlags::NONBLOCK | EventfdFlags::CLOEXEC)?;
            let ringer = fd.try_clone()?;
            return Ok(Bell::from_fds(fd, ringer));
        }
        tracing::debug!("stdio: woken through a pipe (the portable bell)");
        let (fd, ringer) = rustix::pipe::pipe()?;
        for end in [&fd, &ringer] {
            rustix::fs::fcntl_setfl(end, rustix::fs::fcntl_getfl(end)? | OFlags::NONBLOCK)?;
            rustix::io::fcntl_setfd(end, rustix::io::FdFlags::CLOEXEC)?;
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

    pub(super) fn id(&self) -> usize {
        self as *const Bell as usize
    }

    pub(super) fn ring(&self) {
        if SERVING.with(std::cell::Cell::get) == self.id() {
            return;
        }
        self.ring_always();
    }

    pub(super) fn ring_always(&self) {
        // One write per wait: later rings before the thread wakes are free.
        if self.rung.swap(true, Ordering::AcqRel) {
            return;
        }
        // Eight bytes: what an eventfd takes (a pipe takes any). A full pipe already rings.
        let _ = rustix::io::write(&self.ringer, &1u64.to_ne_bytes());
    }

    /// [`clear`](Self::clear), skipped when no ring was written since the last one (only a
    /// ring that sets `rung` writes).
    pub(super) fn clear_if_rung(&self) {
        if self.rung.load(Ordering::Acquire) {
            self.clear();
        }
    }

    pub(super) fn clear(&self) {
        // An eventfd gives its count in one 8-byte read; a pipe gives what was written.
        let mut drained = [0u8; 64];
        let _ = rustix::io::read(&self.fd, &mut drained);
        // After the read: a ring in between is not written (`rung` was still set), but the
        // caller looks at all there is to do after clearing. Before it, a ring's write could
        // be drained with `rung` left set, and no ring would be written again.
        self.rung.store(false, Ordering::Release);
    }
}

/// Stdin as the loop reads it.
pub(super) struct Input {
    pub(super) fd: OwnedFd,
    /// Non-blocking, so an event loop may watch it and read without stalling.
    pub(super) nonblocking: bool,
    /// The flags of a description we share with other processes, to restore at the end.
    restore_flags: Option<OFlags>,
}

impl Input {
    /// Whether [`open`](Self::open) would give a non-blocking stdin an event loop can watch
    /// (a pipe or a socket, unless the portable path is forced).
    pub(super) fn watchable() -> bool {
        if portable_io_forced() {
            return false;
        }
        let Ok(stat) = rustix::fs::fstat(io::stdin().as_fd()) else {
            return false;
        };
        matches!(
            rustix::fs::FileType::from_raw_mode(stat.st_mode),
            rustix::fs::FileType::Fifo | rustix::fs::FileType::Socket
        )
    }

    pub(super) fn open() -> io::Result<Self> {
        let stdin = io::stdin();
        let fd = stdin.as_fd();
        if !portable_io_forced() {
            let kind = rustix::fs::FileType::from_raw_mode(rustix::fs::fstat(fd)?.st_mode);
            match kind {
                rustix::fs::FileType::Fifo => {
                    // Linux: a new description of the same pipe, whose flags are ours alone.
                    #[cfg(any(target_os = "linux", target_os = "android"))]
                    if let Ok(own) = rustix::fs::open(
                        "/proc/self/fd/0",
                        OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC,
                        rustix::fs::Mode::empty(),
                    ) {
                        return Ok(Input {
                            fd: own,
                            nonblocking: true,
                            restore_flags: None,
                        });
                    }
                    return Input::shared_nonblocking(fd);
                }
                rustix::fs::FileType::Socket => return Input::shared_nonblocking(fd),
                _ => {}
            }
        }
        // A file, a terminal, or the portable path: read as it is, when poll says so.
        Ok(Input {
            fd: rustix::io::dup(fd)?,
            nonblocking: false,
            restore_flags: None,
        })
    }

    /// Stdin's own description made non-blocking (a socket cannot be reopened, nor a pipe
    /// without /proc); its flags are restored when serving ends.
    fn shared_nonblocking(fd: BorrowedFd<'_>) -> io::Result<Self> {
        let flags = rustix::fs::fcntl_getfl(fd)?;
        let own = rustix::io::dup(fd)?;
        rustix::fs::fcntl_setfl(&own, flags | OFlags::NONBLOCK)?;
        Ok(Input {
            fd: own,
            nonblocking: true,
            restore_flags: Some(flags),
        })
    }

    pub(super) fn readable_now(&self) -> bool {
        let mut fds = [PollFd::new(&self.fd, PollFlags::IN)];
        matches!(rustix::event::poll(&mut fds, Some(&ZERO)), Ok(n) if n > 0)
    }
}

impl Input {
    /// Reading has ended: a shared description gets its flags back now, not when the loop is
    /// dropped (a host may keep it long after).
    pub(super) fn stop_reading(&mut self) {
        if let Some(flags) = self.restore_flags.take() {
            let _ = rustix::fs::fcntl_setfl(&self.fd, flags);
        }
    }
}

impl Drop for Input {
    fn drop(&mut self) {
        if let Some(flags) = self.restore_flags {
            let _ = rustix::fs::fcntl_setfl(&self.fd, flags);
        }
    }
}

pub(super) const ZERO: rustix::event::Timespec = rustix::event::Timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

/// Writes all of `bytes`, waiting out a non-blocking descriptor's EAGAIN.
pub(super) fn write_all(out: &OwnedFd, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::io::write(out, bytes) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => bytes = &bytes[n..],
            Err(rustix::io::Errno::INTR) => {}
            Err(rustix::io::Errno::AGAIN) => {
                let mut fds = [PollFd::new(out, PollFlags::OUT)];
                let _ = rustix::event::poll(&mut fds, None::<&rustix::event::Timespec>);
            }
            Err(err) => return Err(err.into()),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{Bell, ZERO};

    #[test]
    fn a_bell_rings_once_per_wait_and_clears() {
        let bell = Bell::new().expect("bell");
        let readable = |bell: &Bell| {
            let mut fds = [rustix::event::PollFd::new(
                &bell.fd,
                rustix::event::PollFlags::IN,
            )];
            rustix::event::poll(&mut fds, Some(&ZERO)).expect("poll") > 0
        };
        assert!(!readable(&bell));
        bell.ring();
        bell.ring();
        assert!(readable(&bell));
        bell.clear();
        assert!(!readable(&bell));
        bell.ring();
        assert!(readable(&bell));
    }
}
