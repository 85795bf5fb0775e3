//! What a 2026-07-28 request says about itself in `params._meta`, read and checked before
//! anything else runs: the validation ladder every transport shares.

use serde_json::{Map, Value, json};

use crate::protocol::{Implementation, LogLevel, ProtocolVersion, TraceContext};
use crate::wire::{ErrorCode, ErrorObject};

pub(crate) const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
pub(crate) const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
pub(crate) const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
pub(crate) const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
pub(crate) const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
pub(crate) const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";

/// One modern request's own declarations: nothing carries over from earlier requests.
#[derive(Debug)]
pub(crate) struct Envelope {
    pub(crate) version: ProtocolVersion,
    pub(crate) client_capabilities: Value,
    pub(crate) client_info: Option<Implementation>,
    /// The floor for this request's `notifications/message`; `None`: send none.
    pub(crate) log_level: Option<LogLevel>,
    pub(crate) trace: TraceContext,
}

/// Whether a request claims the modern era: its `_meta` names a protocol version.
pub(crate) fn claims_modern(params: Option<&Value>) -> bool {
    meta_claims_modern(params.and_then(|params| params.get("_meta")))
}

/// Whether a request's `_meta` names a protocol version (see [`claims_modern`]).
pub(crate) fn meta_claims_modern(meta: Option<&Value>) -> bool {
    meta.and_then(Value::as_object)
        .is_some_and(|meta| meta.contains_key(PROTOCOL_VERSION_KEY))
}

fn meta_of(params: Option<&Value>) -> Option<&Map<String, Value>> {
    params?.get("_meta")?.as_object()
}

/// The versions a request may name, for `-32022` and `server/discover`.
pub(crate) fn supported_versions() -> Vec<&'static str> {
    ProtocolVersion::STATELESS
        .iter()
        .map(|v| v.as_str())
        .collect()
}

/// The first rung: both required keys are there (`-32602` otherwise). Separate from the rest
/// because HTTP checks its headers between this and the version.
pub(crate) fn check_required_keys(params: Option<&Value>) -> Result<(), ErrorObject> {
    let Some(params) = params else {
        return Err(missing("the request has no params"));
    };
    if !params.is_object() {
        return Err(ErrorObject::invalid_params(
            "Invalid params: params must be an object",
        ));
    }
    let Some(meta) = meta_of(Some(params)) else {
        return Err(missing("params has no _meta object"));
    };
    for key in [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY] {
        if !meta.contains_key(key) {
            return Err(missing(&format!("_meta has no {key:?}")));
        }
    }
    Ok(())
}

fn missing(what: &str) -> ErrorObject {
    ErrorObject::invalid_params(format!(
        "Invalid params: {what}; every 2026-07-28 request carries _meta with \
         {PROTOCOL_VERSION_KEY:?} and {CLIENT_CAPABILITIES_KEY:?}"
    ))
}

/// The whole ladder: required keys (`-32602`), a version we speak (`-32022`), well-formed
/// capabilities, client info and log level (`-32602`). `modern_only`: the server serves no
/// `initialize` (what the `-32022` says it speaks).
pub(crate) fn read_envelope(
    params: Option<&Value>,
    modern_only: bool,
) -> Result<Envelope, ErrorObject> {
    check_required_keys(params)?;
    let empty = Map::new();
    let meta = meta_of(params).unwrap_or(&empty);
    let requested = meta.get(PROTOCOL_VERSION_KEY).unwrap_or(&Value::Null);
    let version = requested
        .as_str()
        .and_then(ProtocolVersion::parse)
        .filter(|v| v.is_stateless())
        .ok_or_else(|| unsupported_version(requested, modern_only))?;
    let client_capabilities = match meta.get(CLIENT_CAPABILITIES_KEY) {
        Some(caps @ Value::Object(_)) => caps.clone(),
        _ => {
            return Err(ErrorObject::invalid_params(format!(
                "Invalid params: {CLIENT_CAPABILITIES_KEY:?} must be an object"
            )));
        }
    };
    let client_info = match meta.get(CLIENT_INFO_KEY) {
        None | Some(Value::Null) => None,
        Some(info) => Some(
            serde_json::from_value::<Implementation>(info.clone()).map_err(|_| {
                ErrorObject::invalid_params(format!(
                    "Invalid params: {CLIENT_INFO_KEY:?} must be an object with \"name\" and \"version\""
                ))
            })?,
        ),
    };
    let log_level = match meta.get(LOG_LEVEL_KEY) {
        None | Some(Value::Null) => None,
        Some(level) => Some(level.as_str().and_then(LogLevel::parse).ok_or_else(|| {
            ErrorObject::invalid_params(format!(
                "Invalid params: {LOG_LEVEL_KEY:?} must be one of debug, info, notice, warning, \
                 error, critical, alert, emergency"
            ))
        })?),
    };
    Ok(Envelope {
        version,
        client_capabilities,
        client_info,
        log_level,
        trace: TraceContext::from_meta(Some(meta)),
    })
}

/// `-32022`, naming what we speak and echoing what was asked. A `modern_only` server serves no
/// `initialize`, so the message offers it only when the server does.
pub(crate) fn unsupported_version(requested: &Value, modern_only: bool) -> ErrorObject {
    let supported = supported_versions();
    let handshake = if modern_only {
        ""
    } else {
        " (and 2024-11-05 to 2025-11-25 through initialize)"
    };
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!(
            "Unsupported protocol version {requested}; this server speaks {} per request{handshake}",
            supported.join(", ")
        ),
    )
    .with_data(json!({"supported": supported, "requested": requested}))
}

/// `-32022` for an `initialize` this connection will not serve: the server speaks 2026-07-28 only,
/// or an earlier request on the connection chose 2026-07-28. Says which, and what to do.
pub(crate) fn initialize_refused(requested: &Value, modern_only: bool) -> ErrorObject {
    let supported = supported_versions();
    let why = if modern_only {
        format!(
            "this server speaks only {}, per request, with no initialize",
            supported.join(", ")
        )
    } else {
        format!(
            "this connection already speaks {}, chosen by an earlier request on it; \
             initialize (2024-11-05 to 2025-11-25) needs a connection of its own",
            supported.join(", ")
        )
    };
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("initialize refused: {why}"),
    )
    .with_data(json!({"supported": supported, "requested": requested}))
}

/// `-32021`: the request needs a capability the client did not declare on it.
pub(crate) fn missing_capability(required: Value, why: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("Missing required client capability: {why}"),
    )
    .with_data(json!({"requiredCapabilities": required}))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(meta: Value) -> Value {
        json!({"_meta": meta})
    }

    #[test]
    fn the_ladder_refuses_in_order() {
        let code = |p: Option<Value>| read_envelope(p.as_ref(), false).err().map(|e| e.code.0);
        assert_eq!(code(None), Some(-32602));
        assert_eq!(code(Some(json!({}))), Some(-32602));
        assert_eq!(
            code(Some(params(json!({PROTOCOL_VERSION_KEY: "2026-07-28"})))),
            Some(-32602)
        );
        assert_eq!(
            code(Some(params(
                json!({PROTOCOL_VERSION_KEY: "2099-01-01", CLIENT_CAPABILITIES_KEY: {}})
            ))),
            Some(-32022)
        );
        assert_eq!(
            code(Some(params(
                json!({PROTOCOL_VERSION_KEY: "2025-11-25", CLIENT_CAPABILITIES_KEY: {}})
            ))),
            Some(-32022),
            "a handshake version is not a per-request version"
        );
        assert_eq!(
            code(Some(params(
                json!({PROTOCOL_VERSION_KEY: "2026-07-28", CLIENT_CAPABILITIES_KEY: {}, LOG_LEVEL_KEY: "loud"})
            ))),
            Some(-32602)
        );
        let ok = read_envelope(
            Some(&params(json!({
                PROTOCOL_VERSION_KEY: "2026-07-28",
                CLIENT_CAPABILITIES_KEY: {"sampling": {}},
                LOG_LEVEL_KEY: "warning",
                "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
            }))),
            false,
        )
        .expect("valid");
        assert_eq!(ok.log_level, Some(LogLevel::Warning));
        assert!(ok.client_info.is_none(), "clientInfo is optional");
        assert!(ok.trace.traceparent.is_some());
    }

    #[test]
    fn a_refused_initialize_says_why() {
        let locked = initialize_refused(&json!("2025-11-25"), false);
        assert!(
            locked.message.contains("chosen by an earlier request"),
            "{}",
            locked.message
        );
        assert_eq!(locked.data.expect("data")["requested"], "2025-11-25");
        let only = initialize_refused(&json!("2024-11-05"), true);
        assert!(
            only.message.contains("speaks only 2026-07-28"),
            "{}",
            only.message
        );
        assert_eq!(only.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    }

    #[test]
    fn unsupported_version_data_names_both_sides() {
        let error = unsupported_version(&json!("2099-01-01"), false);
        assert!(
            error.message.contains("through initialize"),
            "{}",
            error.message
        );
        let data = error.data.expect("data");
        assert_eq!(data["requested"], "2099-01-01");
        assert_eq!(data["supported"], json!(["2026-07-28"]));
        // A server that serves no initialize does not offer it.
        let only = unsupported_version(&json!("2099-01-01"), true);
        assert!(!only.message.contains("initialize"), "{}", only.message);
    }
}
