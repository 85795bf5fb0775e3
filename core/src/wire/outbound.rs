//! Serialisation of outbound messages into compact single-line JSON frames.

use serde::Serialize;

use super::{ErrorObject, RequestId};

const VERSION: &str = "2.0";

#[derive(Serialize)]
struct ResultOut<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct ErrorOut<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct NotificationOut<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

#[derive(Serialize)]
struct RequestOut<'a, T: Serialize + ?Sized> {
    jsonrpc: &'static str,
    id: i64,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a T>,
}

fn to_frame<T: Serialize>(message: &T) -> String {
    // Serialising our own types into a String cannot fail: no maps with non-string keys,
    // no failing Serialize impls. Fall back to an internal error frame all the same.
    serde_json::to_string(message).unwrap_or_else(|err| {
        tracing::error!(%err, "failed to serialise an outbound message");
        String::from(
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32603,"message":"Internal error: failed to serialise a message"}}"#,
        )
    })
}

/// `{"jsonrpc":"2.0","id":…,"result":…}`
pub(crate) fn result_frame<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> String {
    to_frame(&ResultOut {
        jsonrpc: VERSION,
        id,
        result,
    })
}

/// `{"jsonrpc":"2.0","id":…,"result":…}` around a result that `write` appends as compact JSON
/// (about `result_len` bytes), so a long result is written once, straight into its frame.
pub(crate) fn result_frame_with<E>(
    id: &RequestId,
    result_len: usize,
    write: impl FnOnce(&mut String) -> Result<(), E>,
) -> Result<String, E> {
    let id = to_frame(id);
    let mut frame = String::with_capacity(result_len + id.len() + 32);
    frame.push_str(r#"{"jsonrpc":"2.0","id":"#);
    frame.push_str(&id);
    frame.push_str(r#","result":"#);
    write(&mut frame)?;
    frame.push('}');
    Ok(frame)
}

/// `{"jsonrpc":"2.0","id":…|null,"error":…}`
pub(crate) fn error_frame(id: Option<&RequestId>, error: &ErrorObject) -> String {
    to_frame(&ErrorOut {
        jsonrpc: VERSION,
        id,
        error,
    })
}

/// `{"jsonrpc":"2.0","method":…,"params":…}`
pub(crate) fn notification_frame<T: Serialize + ?Sized>(
    method: &str,
    params: Option<&T>,
) -> String {
    to_frame(&NotificationOut {
        jsonrpc: VERSION,
        method,
        params,
    })
}

/// `{"jsonrpc":"2.0","id":…,"method":…,"params":…}` for a server-to-client request.
pub(crate) fn request_frame<T: Serialize + ?Sized>(
    id: i64,
    method: &str,
    params: Option<&T>,
) -> String {
    to_frame(&RequestOut {
        jsonrpc: VERSION,
        id,
        method,
        params,
    })
}
