//! OpenTelemetry (the `otel` feature): the engine's request spans exported over OTLP/HTTP, each
//! continuing the trace its caller names in `_meta.traceparent` / `tracestate` (or the HTTP
//! `traceparent` header).
//!
//! A binary that only wants the export: [`init_otlp`] installs the process's subscriber (the
//! stderr logs of [`crate::logs::init_from_env`] and the spans) and returns a guard whose drop
//! flushes what is buffered. An application with a subscriber of its own adds [`layer`] to it,
//! with a provider from [`otlp_provider`] (or any `SdkTracerProvider` of its own).
//!
//! ```no_run
//! # fn main() -> Result<(), toolwire::Error> {
//! let _telemetry = toolwire::telemetry::init_otlp("http://127.0.0.1:4318", "weather", None)?;
//! // ... serve; spans reach the collector, and are flushed when `_telemetry` drops.
//! # Ok(()) }
//! ```

use opentelemetry::propagation::{Extractor, TextMapPropagator};
use opentelemetry::trace::TracerProvider as _;
use opentelemetry_otlp::WithExportConfig;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use opentelemetry_sdk::trace::SdkTracerProvider;
use serde_json::Value;
use tracing_opentelemetry::OpenTelemetrySpanExt;
use tracing_subscriber::Layer;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

use crate::Error;
pub use opentelemetry_sdk;

/// A tracer provider exporting in batches over OTLP/HTTP (protobuf) to `endpoint`, the
/// collector's base URL (`http://127.0.0.1:4318`; `/v1/traces` is added unless given), as the
/// service `service_name`.
pub fn otlp_provider(endpoint: &str, service_name: &str) -> Result<SdkTracerProvider, Error> {
    let url = if endpoint.trim_end_matches('/').ends_with("/v1/traces") {
        endpoint.to_owned()
    } else {
        format!("{}/v1/traces", endpoint.trim_end_matches('/'))
    };
    let exporter = opentelemetry_otlp::SpanExporter::builder()
        .with_http()
        .with_endpoint(url)
        .build()
        .map_err(|err| Error::InvalidArgument(format!("OTLP exporter for {endpoint:?}: {err}")))?;
    let resource = opentelemetry_sdk::Resource::builder()
        .with_service_name(service_name.to_owned())
        .build();
    Ok(SdkTracerProvider::builder()
        .with_batch_exporter(exporter)
        .with_resource(resource)
        .build())
}

/// A `tracing` layer sending the engine's request spans (and the spans handlers open inside
/// them, at INFO and above) to `provider`.
pub fn layer<S>(provider: &SdkTracerProvider) -> impl Layer<S>
where
    S: tracing::Subscriber + for<'a> tracing_subscriber::registry::LookupSpan<'a>,
{
    tracing_opentelemetry::layer()
        .with_tracer(provider.tracer("toolwire"))
        .with_filter(LevelFilter::INFO)
}

/// Installs the process's subscriber: the stderr logs as [`crate::logs::init_from_env`] makes
/// them (`TOOLWIRE_LOG`, else `default_log`), and the request spans exported over OTLP/HTTP to
/// `endpoint` as `service_name`. Fails when a subscriber is installed already.
pub fn init_otlp(
    endpoint: &str,
    service_name: &str,
    default_log: Option<tracing::Level>,
) -> Result<Telemetry, Error> {
    let provider = otlp_provider(endpoint, service_name)?;
    let logs = crate::logs::env_targets(default_log).unwrap_or_default();
    tracing_subscriber::registry()
        .with(crate::logs::stderr_layer().with_filter(logs))
        .with(layer(&provider))
        .try_init()
        .map_err(|err| Error::InvalidArgument(format!("a tracing subscriber: {err}")))?;
    Ok(Telemetry { provider })
}

/// Keeps the export running; dropping it (or [`shutdown`](Self::shutdown)) flushes the spans
/// not yet sent and stops it.
#[must_use = "dropping it stops the export"]
pub struct Telemetry {
    provider: SdkTracerProvider,
}

impl Telemetry {
    /// Sends what is buffered and stops; errors are the exporter's (e.g. the collector is gone).
    pub fn shutdown(self) -> Result<(), Error> {
        let provider = self.provider.clone();
        drop(self);
        // Dropping ran the shutdown already when it was the last handle; this reports it.
        match provider.shutdown() {
            Ok(()) => Ok(()),
            Err(opentelemetry_sdk::error::OTelSdkError::AlreadyShutdown) => Ok(()),
            Err(err) => Err(Error::InvalidArgument(format!("OTLP export: {err}"))),
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        if let Err(err) = self.provider.force_flush() {
            tracing::warn!(%err, "could not flush the spans");
        }
    }
}

/// `_meta`'s trace keys, for the propagator.
struct MetaCarrier<'a>(&'a serde_json::Map<String, Value>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).and_then(Value::as_str)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

/// Makes `span` a child of the span `meta.traceparent` names (with its `tracestate`), when it
/// names a valid one.
pub(crate) fn continue_trace(span: &tracing::Span, meta: &Value) {
    let Some(meta) = meta.as_object() else {
        return;
    };
    if !meta.contains_key("traceparent") {
        return;
    }
    let parent = TraceContextPropagator::new().extract(&MetaCarrier(meta));
    use opentelemetry::trace::TraceContextExt as _;
    if parent.span().span_context().is_valid() {
        let _ = span.set_parent(parent);
    }
}
