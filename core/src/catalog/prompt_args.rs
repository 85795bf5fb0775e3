//! A prompt's `argumentsSchema`, checked at registration (compiled at its first use): the
//! check `prompts/get` runs before the handler, and the values an argument's `enum` offers for
//! completion.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use super::{Prompt, PromptArgument};
use crate::Error;
use crate::registry::{CompiledSchema, Violation};

pub(crate) struct PromptArguments {
    schema: CompiledSchema,
    /// Per argument, the strings its `enum` (or `const`) allows: what completion offers.
    choices: BTreeMap<String, Vec<String>>,
}

impl PromptArguments {
    /// Compiles `def`'s schema, if it has one; fills `def.arguments` from it when none were
    /// listed, and refuses a schema that names arguments the list does not (a client could
    /// not know to send them).
    pub(crate) fn compile(def: &mut Prompt) -> Result<Option<Self>, Error> {
        let Some(schema) = def.arguments_schema.as_ref() else {
            return Ok(None);
        };
        let name = def.name.clone();
        let invalid = |message: String| Error::InvalidDefinition {
            kind: "prompt",
            message: format!("prompt {name:?}: argumentsSchema: {message}"),
        };
        let Some(object) = schema.as_object() else {
            return Err(invalid("must be a JSON Schema object".into()));
        };
        if object.get("type").and_then(Value::as_str) != Some("object") {
            return Err(invalid("the root must have \"type\": \"object\"".into()));
        }
        let empty = Map::new();
        let properties = match object.get("properties") {
            None => &empty,
            Some(Value::Object(properties)) => properties,
            Some(_) => return Err(invalid("\"properties\" must be an object".into())),
        };
        let required: Vec<&str> = object
            .get("required")
            .and_then(Value::as_array)
            .map(|names| names.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if def.arguments.is_empty() {
            def.arguments = properties
                .iter()
                .map(|(argument, property)| {
                    let text =
                        |key: &str| property.get(key).and_then(Value::as_str).map(str::to_owned);
                    let mut listed =
                        PromptArgument::new(argument, required.contains(&argument.as_str()));
                    listed.title = text("title");
                    listed.description = text("description");
                    listed
                })
                .collect();
        } else {
            if let Some(unlisted) = properties
                .keys()
                .find(|property| !def.arguments.iter().any(|a| &a.name == *property))
            {
                return Err(invalid(format!(
                    "{unlisted:?} is not one of the prompt's arguments"
                )));
            }
            // Listed optional but required by the schema (or the reverse) would be refused at
            // call time for what the listing lets a client leave out.
            if let Some(differs) = def
                .arguments
                .iter()
                .find(|a| a.required != required.contains(&a.name.as_str()))
            {
                return Err(invalid(format!(
                    "argument {:?} is {} in the list but {} in the schema",
                    differs.name,
                    if differs.required {
                        "required"
                    } else {
                        "optional"
                    },
                    if differs.required {
                        "optional"
                    } else {
                        "required"
                    },
                )));
            }
        }
        // Every argument arrives as a string: a schema allowing nothing else is the only one
        // a client can meet.
        if let Some((argument, _)) = properties
            .iter()
            .find(|(_, property)| !allows_only_strings(schema, property, 0))
        {
            return Err(invalid(format!(
                "argument {argument:?} must be a string (prompt arguments are strings)"
            )));
        }
        let compiled = CompiledSchema::compile(schema, &def.name, "inputSchema")
            .map_err(|err| invalid(schema_message(err)))?;
        let choices = properties
            .iter()
            .filter_map(|(argument, property)| {
                let values = string_choices(resolve(schema, property));
                (!values.is_empty()).then(|| (argument.clone(), values))
            })
            .collect();
        Ok(Some(PromptArguments {
            schema: compiled,
            choices,
        }))
    }

    /// What is wrong with `arguments`, each at `/name`; empty when they meet the schema.
    pub(crate) fn violations(&self, arguments: &BTreeMap<String, String>) -> Vec<Violation> {
        let instance = Value::Object(
            arguments
                .iter()
                .map(|(name, value)| (name.clone(), Value::String(value.clone())))
                .collect(),
        );
        self.schema.violations(&instance)
    }

    /// The `enum` values of `argument` that start with `typed`; `None` when it has no `enum`.
    pub(crate) fn complete(&self, argument: &str, typed: &str) -> Option<Vec<String>> {
        let values = self.choices.get(argument)?;
        Some(
            values
                .iter()
                .filter(|value| value.starts_with(typed))
                .cloned()
                .collect(),
        )
    }

    pub(crate) fn completes_any(&self) -> bool {
        !self.choices.is_empty()
    }
}

fn schema_message(err: Error) -> String {
    match err {
        Error::InvalidSchema { message, .. } => message,
        other => other.to_string(),
    }
}

/// A property's schema with a local `$ref` (`#/$defs/…`, `#/definitions/…`) followed once, as
/// hosts write an enum type defined once and referred to.
fn resolve<'a>(root: &'a Value, property: &'a Value) -> &'a Value {
    match property.get("$ref").and_then(Value::as_str) {
        Some(reference) => reference
            .strip_prefix('#')
            .and_then(|pointer| root.pointer(pointer))
            .unwrap_or(property),
        None => property,
    }
}

/// Whether `property` allows strings only (or null, for an argument left out): a `type` of
/// "string", an `enum`/`const` of strings, no type at all, or `anyOf`/`oneOf` of such; a
/// local `$ref` is followed (a few levels: a cycle is refused).
fn allows_only_strings(root: &Value, property: &Value, depth: usize) -> bool {
    if depth > 8 {
        return false;
    }
    let property = resolve(root, property);
    if let Some(options) = property
        .get("anyOf")
        .or_else(|| property.get("oneOf"))
        .and_then(Value::as_array)
    {
        return options
            .iter()
            .all(|option| allows_only_strings(root, option, depth + 1));
    }
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values.iter().all(|v| v.is_string() || v.is_null());
    }
    if let Some(value) = property.get("const") {
        return value.is_string();
    }
    let string_or_null = |kind: &Value| matches!(kind.as_str(), Some("string" | "null"));
    match property.get("type") {
        None => true,
        Some(Value::Array(kinds)) => kinds.iter().all(string_or_null),
        Some(kind) => string_or_null(kind),
    }
}

/// The strings an `enum` or `const` allows; empty when there is no list.
fn string_choices(property: &Value) -> Vec<String> {
    if let Some(values) = property.get("enum").and_then(Value::as_array) {
        return values
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_owned)
            .collect();
    }
    if let Some(value) = property.get("const").and_then(Value::as_str) {
        return vec![value.to_owned()];
    }
    Vec::new()
}
