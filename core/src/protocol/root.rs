use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// One of the client's roots (`roots/list`): a directory or file the server may work in.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Root {
    /// A `file://` URI.
    pub uri: String,
    /// A display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// `_meta` of the root.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Map<String, Value>>,
}

impl Root {
    /// Reads the `roots` of a `roots/list` result. A malformed answer is the client's fault, so
    /// it is reported as the client's error, with what was wrong.
    pub(crate) fn list_from_result(result: Value) -> Result<Vec<Root>, crate::ErrorObject> {
        let roots = match result {
            Value::Object(mut map) => map.remove("roots"),
            _ => None,
        };
        let Some(roots) = roots else {
            return Err(crate::ErrorObject::new(
                crate::ErrorCode::INVALID_PARAMS,
                "the roots/list result has no \"roots\" array",
            ));
        };
        serde_json::from_value(roots).map_err(|e| {
            crate::ErrorObject::new(
                crate::ErrorCode::INVALID_PARAMS,
                format!("the roots/list result is malformed: {e}"),
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::Root;
    use serde_json::json;

    #[test]
    fn reads_roots_and_refuses_malformed_answers() {
        let roots = Root::list_from_result(
            json!({"roots": [{"uri": "file:///a", "name": "A"}, {"uri": "file:///b", "_meta": {"k": 1}}]}),
        )
        .unwrap();
        assert_eq!(roots.len(), 2);
        assert_eq!(roots[0].name.as_deref(), Some("A"));
        assert_eq!(roots[1].meta.as_ref().unwrap()["k"], 1);
        assert!(Root::list_from_result(json!({})).is_err());
        assert!(Root::list_from_result(json!({"roots": [{"name": "no uri"}]})).is_err());
        assert!(Root::list_from_result(json!([1])).is_err());
    }
}
