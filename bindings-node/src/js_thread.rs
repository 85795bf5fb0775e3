//! Knowing when we are on the JS thread inside a call from JavaScript, where JS functions can
//! be called directly (no hop through a threadsafe function).

use std::cell::Cell;

use napi::{Env, sys};

/// The JavaScript call feeding frames on this thread: its env and which connection it feeds.
#[derive(Clone, Copy)]
struct Feeding {
    env: sys::napi_env,
    connection: usize,
}

thread_local! {
    static FEEDING: Cell<Option<Feeding>> = const { Cell::new(None) };
}

/// The env of the JavaScript call that is feeding frames on this thread, if any.
pub(crate) fn current_env() -> Option<Env> {
    FEEDING
        .with(Cell::get)
        .map(|feeding| Env::from_raw(feeding.env))
}

/// Marks this thread as inside a JavaScript call with `env`, feeding `connection`, for the
/// length of `work`.
pub(crate) fn feeding<T>(env: &Env, connection: usize, work: impl FnOnce() -> T) -> T {
    struct Restore(Option<Feeding>);
    impl Drop for Restore {
        fn drop(&mut self) {
            FEEDING.with(|slot| slot.set(self.0));
        }
    }
    let now = Feeding {
        env: env.raw(),
        connection,
    };
    let _restore = Restore(FEEDING.with(|slot| slot.replace(Some(now))));
    work()
}

/// Runs `work` in a fresh handle scope (values it creates are released when it returns).
pub(crate) fn in_handle_scope<T>(env: &Env, work: impl FnOnce() -> T) -> T {
    let mut scope = std::ptr::null_mut();
    // SAFETY: `env` is the live env of the JavaScript call we are in, on its thread.
    let opened =
        unsafe { sys::napi_open_handle_scope(env.raw(), &mut scope) } == sys::Status::napi_ok;
    let result = work();
    if opened {
        // SAFETY: closes the scope opened above, on the same thread, in LIFO order.
        unsafe { sys::napi_close_handle_scope(env.raw(), scope) };
    }
    result
}

/// True when called while `connection` is being fed on this thread (it drains afterwards).
pub(crate) fn is_feeding(connection: usize) -> bool {
    FEEDING.with(|slot| slot.get().is_some_and(|f| f.connection == connection))
}
