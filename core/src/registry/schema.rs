//! JSON Schema checked at registration and compiled for use at its first use (2020-12 unless
//! `$schema` names another supported draft; no network or file `$ref`).
//!
//! A compiled validator costs kilobytes, and in a catalog of thousands of tools most are
//! rarely called: each is compiled at registration to refuse what cannot compile, then dropped,
//! and compiled again when a call first needs it (10,000 tools with distinct schemas held
//! 57 MiB of validators before).

use std::fmt::Write as _;

use std::sync::Arc;

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
    /// The schema's JSON text, kept to compile it again (smaller than the validator, and than
    /// its tree); shared with the registry's cache of schemas by text.
    text: Arc<str>,
    draft: Draft,
    /// Compiled at the first check; the error a schema that compiled at registration cannot
    /// give again, kept as a defined answer should it.
    validator: std::sync::OnceLock<Result<Validator, String>>,
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
        Self::compile_text(schema, crate::wire::json_text(schema).into(), tool, which)
    }

    /// `compile` of a schema whose JSON text is at hand.
    pub(crate) fn compile_text(
        schema: &Value,
        text: Arc<str>,
        tool: &str,
        which: &'static str,
    ) -> Result<Self, Error> {
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
        // Compiled now so that a schema that cannot compile is refused at registration.
        let validator = build(schema, draft).map_err(invalid)?;
        let compiled = CompiledSchema {
            text,
            draft,
            validator: std::sync::OnceLock::new(),
        };
        // A schema nested deeper than the JSON parser reads back cannot be compiled again from
        // its text: it keeps the validator it has.
        if deeper_than(schema, REPARSE_DEPTH) {
            let _ = compiled.validator.set(Ok(validator));
        }
        Ok(compiled)
    }

    /// Compiles it, once: out of line, so the path of every later check stays short.
    #[cold]
    #[inline(never)]
    fn compiled(&self) -> &Result<Validator, String> {
        self.validator.get_or_init(|| {
            let schema: Value = serde_json::from_str(&self.text).map_err(|err| err.to_string())?;
            build(&schema, self.draft)
        })
    }

    pub(crate) fn violations(&self, instance: &Value) -> Vec<Violation> {
        let validator = match self.validator.get() {
            Some(validator) => validator,
            None => self.compiled(),
        };
        let validator = match validator {
            Ok(validator) => validator,
            Err(why) => {
                return vec![Violation {
                    path: String::new(),
                    message: format!("the schema could not be compiled: {why}"),
                }];
            }
        };
        if validator.is_valid(instance) {
            return Vec::new();
        }
        validator
            .iter_errors(instance)
            .map(|err| Violation {
                path: err.instance_path().as_str().to_owned(),
                message: err.to_string(),
            })
            .collect()
    }
}

/// Nesting that `serde_json::from_str` reads back (it stops at 128 levels), with room to spare.
const REPARSE_DEPTH: usize = 100;

/// Whether `value` nests deeper than `limit` arrays and objects (without recursion: a value
/// built in code may nest arbitrarily).
fn deeper_than(value: &Value, limit: usize) -> bool {
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let children: Box<dyn Iterator<Item = &Value>> = match value {
            Value::Array(items) => Box::new(items.iter()),
            Value::Object(members) => Box::new(members.values()),
            _ => continue,
        };
        if depth + 1 > limit {
            return true;
        }
        stack.extend(children.map(|child| (child, depth + 1)));
    }
    false
}

fn build(schema: &Value, draft: Draft) -> Result<Validator, String> {
    jsonschema::options()
        .with_draft(draft)
        .build(schema)
        .map_err(|err| err.to_string())
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

    #[test]
    fn a_schema_is_held_compiled_only_once_something_was_checked_against_it() {
        let schema = CompiledSchema::compile(
            &json!({"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
                    "dependencies": {"a": ["b"]}}),
            "t",
            "inputSchema",
        )
        .unwrap();
        assert!(
            schema.validator.get().is_none(),
            "not held after registration"
        );
        assert!(schema.violations(&json!({"a": 1, "b": 2})).is_empty());
        // Compiled again from its text, draft-07's `dependencies` and all.
        assert_eq!(schema.violations(&json!({"a": 1})).len(), 1);
        assert!(matches!(schema.validator.get(), Some(Ok(_))));
    }

    #[test]
    fn a_schema_too_deep_to_read_back_keeps_its_validator() {
        let mut deep = json!({"type": "string"});
        for _ in 0..110 {
            deep = json!({"type": "object", "properties": {"x": deep}});
        }
        let schema = CompiledSchema::compile(&deep, "t", "inputSchema").unwrap();
        assert!(schema.validator.get().is_some());
        assert!(schema.violations(&json!({"x": {}})).is_empty());
        assert!(!deeper_than(&json!({"a": [1, {"b": 2}]}), 3));
        assert!(deeper_than(&json!({"a": [1, {"b": [2]}]}), 3));
    }
}
