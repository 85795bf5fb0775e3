//! JSON Schema compiled once at registration (2020-12 unless `$schema` names another
//! supported draft; no network or file `$ref`).

use std::fmt::Write as _;

use jsonschema::{Draft, Validator};
use serde_json::Value;

use crate::Error;

/// At most this many violations are listed in one result; the rest are counted.
const MAX_LISTED_VIOLATIONS: usize = 32;

const KNOWN_DIALECTS: [(&str, Draft); 5] = [
    (
        "https://json-schema.org/draft/2020-12/schema",
        Draft::Draft202012,
    ),
    (
        "https://json-schema.org/draft/2019-09/schema",
        Draft::Draft201909,
    ),
    ("http://json-schema.org/draft-07/schema", Draft::Draft7),
    ("http://json-schema.org/draft-06/schema", Draft::Draft6),
    ("http://json-schema.org/draft-04/schema", Draft::Draft4),
];

pub(crate) struct CompiledSchema {
    validator: Validator,
}

/// One way an instance fails its schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Violation {
    /// JSON Pointer to the offending value (`""` is the root).
    pub path: String,
    /// What is wrong there.
    pub message: String,
}

impl CompiledSchema {
    pub(crate) fn compile(schema: &Value, tool: &str, which: &'static str) -> Result<Self, Error> {
        let invalid = |message: String| Error::InvalidSchema {
            tool: tool.to_owned(),
            which,
            message,
        };
        let Value::Object(map) = schema else {
            return Err(invalid("the schema must be a JSON object".into()));
        };
        // Arguments are always an object; since 2026-07-28 a result may be any JSON value.
        if which == "inputSchema" && map.get("type").and_then(Value::as_str) != Some("object") {
            return Err(invalid("the root must have \"type\": \"object\"".into()));
        }
        let draft = match map.get("$schema") {
            None => Draft::Draft202012,
            Some(Value::String(uri)) => {
                let trimmed = uri.trim_end_matches('#');
                KNOWN_DIALECTS
                    .iter()
                    .find(|(known, _)| *known == trimmed)
                    .map(|(_, draft)| *draft)
                    .ok_or_else(|| {
                        invalid(format!(
                            "unsupported JSON Schema dialect {uri:?} (supported: 2020-12, 2019-09, draft-07, draft-06, draft-04)"
                        ))
                    })?
            }
            Some(_) => return Err(invalid("\"$schema\" must be a string".into())),
        };
        let validator = jsonschema::options()
            .with_draft(draft)
            .build(schema)
            .map_err(|err| invalid(err.to_string()))?;
        Ok(CompiledSchema { validator })
    }

    pub(crate) fn violations(&self, instance: &Value) -> Vec<Violation> {
        if self.validator.is_valid(instance) {
            return Vec::new();
        }
        self.validator
            .iter_errors(instance)
            .map(|err| Violation {
                path: err.instance_path().as_str().to_owned(),
                message: err.to_string(),
            })
            .collect()
    }
}

/// `headline` then one line per violation: `- at /a/0: 5 is not of type "string"`.
/// The text of the `isError` result for arguments that break their schema: the engine's own
/// schema check and a binding's host-language check (zod refinements) read the same.
pub fn invalid_arguments_text(tool: &str, violations: &[Violation]) -> String {
    describe_violations(&format!("Invalid arguments for tool {tool:?}:"), violations)
}

/// The text of a JSON-RPC -32602 for prompt arguments a host's own schema refused (the
/// engine checks only that required arguments are there and no unknown ones are).
pub fn invalid_prompt_arguments_text(prompt: &str, violations: &[Violation]) -> String {
    describe_violations(
        &format!("Invalid arguments for prompt {prompt:?}:"),
        violations,
    )
}

pub(crate) fn describe_violations(headline: &str, violations: &[Violation]) -> String {
    let mut text = String::from(headline);
    for violation in violations.iter().take(MAX_LISTED_VIOLATIONS) {
        let path = if violation.path.is_empty() {
            "(root)"
        } else {
            violation.path.as_str()
        };
        let _ = write!(text, "\n- at {path}: {}", violation.message);
    }
    if violations.len() > MAX_LISTED_VIOLATIONS {
        let _ = write!(
            text,
            "\n- … and {} more",
            violations.len() - MAX_LISTED_VIOLATIONS
        );
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_violation_with_its_path() {
        let schema = CompiledSchema::compile(
            &json!({"type":"object","properties":{"a":{"type":"number"},"b":{"type":"string"}},"required":["a","b","c"]}),
            "t",
            "inputSchema",
        )
        .unwrap();
        let v = schema.violations(&json!({"a": "x", "b": 1}));
        assert_eq!(v.len(), 3, "{v:?}");
        assert!(v.iter().any(|v| v.path == "/a"));
        assert!(v.iter().any(|v| v.path == "/b"));
        assert!(v.iter().any(|v| v.path.is_empty()));
        assert!(
            schema
                .violations(&json!({"a": 1, "b": "s", "c": null}))
                .is_empty()
        );
    }

    #[test]
    fn refuses_bad_schemas() {
        for bad in [
            json!([]),
            json!({"type": "string"}),
            json!({"type": "object", "$schema": "https://example.com/custom"}),
            json!({"type": "object", "properties": {"a": {"type": "nonsense"}}}),
            json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/s.json"}}}),
        ] {
            assert!(
                CompiledSchema::compile(&bad, "t", "inputSchema").is_err(),
                "{bad} was accepted"
            );
        }
        assert!(
            CompiledSchema::compile(
                &json!({"type": "object", "$schema": "http://json-schema.org/draft-07/schema#"}),
                "t",
                "inputSchema"
            )
            .is_ok()
        );
    }

    #[test]
    fn local_refs_work() {
        let schema = CompiledSchema::compile(
            &json!({"type":"object","$defs":{"n":{"type":"integer"}},"properties":{"a":{"$ref":"#/$defs/n"}}}),
            "t",
            "inputSchema",
        )
        .unwrap();
        assert_eq!(schema.violations(&json!({"a": "x"})).len(), 1);
    }
}
