//! A server's lifespan from Kotlin or Swift: the hooks are foreign, the gate is core's
//! (`toolwire::Lifespan`): core decides when they run, keeps calls out until the start has
//! returned, and stops it after the last serve and the calls in flight. The host keeps the value.

use std::sync::{Arc, Mutex};

use toolwire::LifespanFuture;

use crate::errors::ToolwireError;
use crate::runtime::{on_runtime, on_runtime_abortable, runtime};

/// What a server sets up before its first call and tears down after serving (Kotlin: `suspend
/// fun`, Swift: `async throws`). The engine runs each on a task of its own, at most once per
/// run: never `start` twice without a `stop` between, and `stop` only after a `start` that
/// returned. Kotlin's wrapper `server.lifespan(start, stop)` is built on it.
#[uniffi::export(with_foreign)]
#[async_trait::async_trait]
pub trait LifespanHooks: Send + Sync {
    /// Sets the app up. An error's `detail` is the message every serve and call waiting for
    /// this start fails with ("the server's lifespan failed to start: …"); the next serve or
    /// call tries again.
    async fn start(&self) -> Result<(), ToolwireError>;

    /// Tears it down: no call is in flight then. An error is logged (the engine's log).
    async fn stop(&self) -> Result<(), ToolwireError>;
}

/// The foreign hooks as core's lifespan.
struct ForeignLifespan(Arc<dyn LifespanHooks>);

impl toolwire::Lifespan for ForeignLifespan {
    fn start(&self) -> LifespanFuture<Result<(), String>> {
        let hooks = self.0.clone();
        // `detail` alone: core words the failure itself.
        Box::pin(async move { hooks.start().await.map_err(|err| err.to_string()) })
    }

    fn stop(&self) -> LifespanFuture<()> {
        let hooks = self.0.clone();
        Box::pin(async move {
            if let Err(err) = hooks.stop().await {
                tracing::error!(%err, "the lifespan's stop failed");
            }
        })
    }
}

/// Sets (or, with `None`, takes away) the server's lifespan hooks.
pub(crate) fn set(server: &toolwire::Server, hooks: Option<Arc<dyn LifespanHooks>>) {
    server.set_lifespan(hooks.map(|hooks| {
        let lifespan: Arc<dyn toolwire::Lifespan> = Arc::new(ForeignLifespan(hooks));
        lifespan
    }));
}

/// Holds the lifespan, waiting for its start (the caller giving up abandons only its wait).
pub(crate) async fn hold(server: &toolwire::Server) -> Result<Arc<LifespanHold>, ToolwireError> {
    let server = server.clone();
    let held = on_runtime_abortable(async move { server.hold_lifespan().await }).await??;
    Ok(LifespanHold::new(held))
}

/// `hold`, blocking the calling thread.
pub(crate) fn hold_blocking(server: &toolwire::Server) -> Result<Arc<LifespanHold>, ToolwireError> {
    let held = runtime().block_on(server.hold_lifespan())?;
    Ok(LifespanHold::new(held))
}

/// A serve's hold on the server's lifespan (`Server.holdLifespan`): the lifespan runs while a
/// hold is held. Freed (Kotlin's `destroy()`/`close()`, Swift's `deinit`) without `release`,
/// it lets go without waiting.
#[derive(uniffi::Object)]
pub struct LifespanHold {
    /// `None` once released.
    held: Mutex<Option<toolwire::LifespanHold>>,
}

impl LifespanHold {
    fn new(held: toolwire::LifespanHold) -> Arc<Self> {
        Arc::new(Self {
            held: Mutex::new(Some(held)),
        })
    }

    fn take(&self) -> Option<toolwire::LifespanHold> {
        self.held.lock().unwrap_or_else(|e| e.into_inner()).take()
    }
}

#[uniffi::export]
impl LifespanHold {
    /// Lets go; when this was the last hold, returns once the lifespan has stopped (after the
    /// calls in flight). A second release does nothing.
    pub async fn release(&self) {
        if let Some(held) = self.take() {
            // Let go even if the caller gives up waiting: the stop runs on regardless.
            let _ = on_runtime(held.release()).await;
        }
    }

    /// `release`, blocking the calling thread.
    pub fn release_blocking(&self) {
        if let Some(held) = self.take() {
            runtime().block_on(held.release());
        }
    }
}
