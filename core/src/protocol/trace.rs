//! The W3C trace context of a request: pure data, read from its `_meta` or its HTTP headers.

use serde_json::{Map, Value};

/// The W3C trace context a request carries in its reserved `_meta` keys.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraceContext {
    /// `traceparent`.
    pub traceparent: Option<String>,
    /// `tracestate`.
    pub tracestate: Option<String>,
    /// `baggage`.
    pub baggage: Option<String>,
}

impl TraceContext {
    pub(crate) fn from_meta(meta: Option<&Map<String, Value>>) -> Self {
        let text = |key: &str| {
            meta.and_then(|m| m.get(key))
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        TraceContext {
            traceparent: text("traceparent"),
            tracestate: text("tracestate"),
            baggage: text("baggage"),
        }
    }
}
