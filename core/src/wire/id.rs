use std::fmt;
use std::sync::Arc;

use serde::{Serialize, Serializer};
use serde_json::Value;

/// A JSON-RPC request id: an integer or a string, echoed back with its exact JSON type
/// (`"7"` and `7` are different ids).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl RequestId {
    /// Reads an id from JSON; `None` for null, floats, booleans, objects, arrays and integers
    /// that do not fit in an `i64`.
    pub fn from_json(value: &Value) -> Option<Self> {
        match value {
            Value::Number(n) => n.as_i64().map(RequestId::Number),
            Value::String(s) => Some(RequestId::String(Arc::from(s.as_str()))),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_json(&self) -> Value {
        match self {
            RequestId::Number(n) => Value::from(*n),
            RequestId::String(s) => Value::from(&**s),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self {
            RequestId::Number(n) => serializer.serialize_i64(*n),
            RequestId::String(s) => serializer.serialize_str(s),
        }
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        RequestId::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        RequestId::String(Arc::from(s))
    }
}
