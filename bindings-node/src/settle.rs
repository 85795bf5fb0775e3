//! Answers that JavaScript gives later: a wrapper called with a token returns its answer as JSON
//! text at once, or nothing and later calls `settleJson(token, json)` when its Promise settles.
//! The engine awaits a oneshot meanwhile; no thread waits. Resources, prompts, completers and
//! token validators (`catalog.rs`) answer this way.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use napi::bindgen_prelude::{FromNapiValue, FunctionRef, JsValuesTupleIntoVec, Unknown};
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi::{Env, JsValue, Status};
use napi_derive::napi;
use tokio::sync::oneshot;

use crate::js_thread;

/// A wrapper's way in from the runtime's threads (weak: it keeps no process alive).
pub(crate) type Remote<Args> =
    ThreadsafeFunction<Args, Unknown<'static>, Args, Status, false, true>;

/// Calls a JS wrapper with `args`, whose answer is numbered `token`: directly when this thread
/// is feeding JavaScript (a connection), else through `remote` (HTTP sessions), hopping to the
/// JS thread. What it returned: its answer, or the receiver of the answer to come.
pub(crate) async fn call_wrapper<Args>(
    func: &FunctionRef<Args, Unknown<'static>>,
    remote: &Remote<Args>,
    token: u32,
    args: Args,
) -> napi::Result<Returned>
where
    Args: JsValuesTupleIntoVec + Send + 'static,
{
    if let Some(env) = js_thread::current_env() {
        return js_thread::in_handle_scope(&env, || {
            let func = func.borrow_back(&env)?;
            let value = func.call(args)?;
            read_returned(&env, token, value)
        });
    }
    let (tx, rx) = oneshot::channel();
    let status = remote.call_with_return_value(
        args,
        ThreadsafeFunctionCallMode::NonBlocking,
        move |value, env| {
            let _ = tx.send(value.and_then(|value| read_returned(&env, token, value)));
            Ok(())
        },
    );
    if status != Status::Ok {
        return Err(napi::Error::new(status, "the JavaScript thread is gone"));
    }
    rx.await.unwrap_or_else(|_| {
        Err(napi::Error::new(
            Status::GenericFailure,
            "the JavaScript thread stopped before the call ran",
        ))
    })
}

/// Answers JavaScript will settle later, by token.
#[derive(Default)]
struct Pending {
    next: u32,
    waiting: HashMap<u32, oneshot::Sender<String>>,
}

fn pending() -> std::sync::MutexGuard<'static, Pending> {
    static PENDING: OnceLock<Mutex<Pending>> = OnceLock::new();
    PENDING
        .get_or_init(Mutex::default)
        .lock()
        .unwrap_or_else(|e| e.into_inner())
}

/// A token no waiting answer has; dropping it forgets an answer that never came (the request
/// was cancelled meanwhile, or the call failed), so the table does not keep its sender.
pub(crate) struct Token(u32);

impl Token {
    pub(crate) fn new() -> Token {
        let mut pending = pending();
        let mut token = pending.next;
        while pending.waiting.contains_key(&token) {
            token = token.wrapping_add(1);
        }
        pending.next = token.wrapping_add(1);
        Token(token)
    }

    pub(crate) fn number(&self) -> u32 {
        self.0
    }
}

impl Drop for Token {
    fn drop(&mut self) {
        pending().waiting.remove(&self.0);
    }
}

/// Delivers the answer of a wrapper that returned nothing at first.
#[napi]
pub fn settle_json(token: u32, json: String) {
    if let Some(sender) = pending().waiting.remove(&token) {
        let _ = sender.send(json);
    }
}

pub(crate) enum Returned {
    Ready(String),
    Later(oneshot::Receiver<String>),
}

/// Reads what a wrapper returned (on the JS thread, right after it returned, so before
/// `settleJson` can run): its answer, or the receiver of the answer to come.
pub(crate) fn read_returned(env: &Env, token: u32, value: Unknown<'_>) -> napi::Result<Returned> {
    if matches!(
        value.get_type()?,
        napi::ValueType::Undefined | napi::ValueType::Null
    ) {
        let (tx, rx) = oneshot::channel();
        pending().waiting.insert(token, tx);
        return Ok(Returned::Later(rx));
    }
    // SAFETY: `value` is a live value of `env`'s current scope.
    Ok(Returned::Ready(unsafe {
        String::from_napi_value(env.raw(), value.raw())?
    }))
}
