//! The engine's own logs on stderr, as the `TOOLWIRE_LOG` environment variable asks (feature
//! `env-logs`): `level` or `target=level,…` (tracing's `Targets` syntax). Stdout is left to the
//! protocol.

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

/// Installs a stderr subscriber filtered by `TOOLWIRE_LOG`, or by `default` when it is unset or
/// unreadable (`None`: then nothing is installed). A subscriber already installed is kept.
pub fn init_from_env(default: Option<tracing::Level>) {
    let filter = std::env::var("TOOLWIRE_LOG")
        .ok()
        .and_then(|spec| spec.parse::<Targets>().ok())
        .or_else(|| default.map(|level| Targets::new().with_default(level)));
    let Some(filter) = filter else {
        return;
    };
    let _ = tracing_subscriber::registry()
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(std::io::stderr)
                .with_ansi(false),
        )
        .with(filter)
        .try_init();
}
