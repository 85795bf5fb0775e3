//! Knowing when we are on the JS thread inside a call from JavaScript, where JS functions can
//! be called directly (no hop through a threadsafe function), and hopping there otherwise.

use std::cell::Cell;

use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, Status, sys};

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

/// Rust work for the JS thread, given its env there.
type JsWork = Box<dyn FnOnce(&Env) + Send>;

/// A way onto the JS thread from any thread for Rust work: a weak threadsafe function (it keeps
/// no process alive) whose callback runs the work; its JS function, which a threadsafe function
/// must have, does nothing.
pub(crate) struct Hop(ThreadsafeFunction<JsWork, (), (), Status, false, true>);

impl Hop {
    /// Made on the JS thread of `env`.
    pub(crate) fn new(env: &Env) -> napi::Result<Hop> {
        let nothing = env.create_function_from_closure::<(), (), _>("toolwireHop", |_| Ok(()))?;
        let hop = nothing
            .build_threadsafe_function::<JsWork>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(|call| {
                (call.value)(&call.env);
                Ok(())
            })?;
        Ok(Hop(hop))
    }

    /// Runs `work` on the JS thread: right here when this thread is feeding JavaScript, else
    /// queued (in the order handed). False when the JS thread is gone.
    pub(crate) fn run(&self, work: impl FnOnce(&Env) + Send + 'static) -> bool {
        if let Some(env) = current_env() {
            in_handle_scope(&env, || work(&env));
            return true;
        }
        self.queue(work)
    }

    /// Queues `work` for a later turn of the JS thread, even when called on it: it runs in
    /// the order handed, after all work queued before it. False when the JS thread is gone.
    pub(crate) fn queue(&self, work: impl FnOnce(&Env) + Send + 'static) -> bool {
        self.0
            .call(Box::new(work), ThreadsafeFunctionCallMode::NonBlocking)
            == Status::Ok
    }
}
