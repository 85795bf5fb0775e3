//! The tools of bench/payloads (`--bench-tools`), the same in every demo and SDK anchor:
//! - `take_text {text}`: answers the text's length in characters;
//! - `give_text {bytes}`: answers a text block of that many ASCII bytes;
//! - `give_structured {bytes}`: answers `{"items": [...]}` of `bytes / 64` items (about that
//!   many bytes of compact JSON) as structured content, checked against its output schema,
//!   with its JSON text as a text block for older clients;
//! - `validate_big`: the large input schema of bench/schemas/big.json; answers `lines=N`;
//! - `validate_small {text}`: a trivial schema (other properties allowed, so the load generator
//!   can send the same document and only the schema differs); answers `ok`.

use serde_json::{Value, json};
use toolwire::{Context, ServerBuilder, Tool, ToolError, ToolOutput};

/// The large schema, compiled into the demo from the one file every server reads.
pub const BIG_SCHEMA: &str = include_str!("../../../bench/schemas/big.json");

/// Bytes of one structured item, as every server counts them.
pub const ITEM_BYTES: u64 = 64;

/// The most bytes a payload tool makes (the schema's maximum): a bound, not a benchmark size.
const MAX_BYTES: u64 = 64 * 1024 * 1024;

/// The characters of `give_text`'s answer, repeated.
const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyz0123456789";

fn bytes_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"bytes": {"type": "integer", "minimum": 0, "maximum": MAX_BYTES}},
        "required": ["bytes"],
        "additionalProperties": false
    })
}

/// `builder` with the five tools.
pub fn register(builder: ServerBuilder) -> Result<ServerBuilder, toolwire::Error> {
    let big: Value =
        serde_json::from_str(BIG_SCHEMA).map_err(|err| toolwire::Error::InvalidSchema {
            tool: "validate_big".into(),
            which: "inputSchema",
            message: err.to_string(),
        })?;
    Ok(builder
        .tool(
            Tool::new("take_text")
                .description("Answers the length in characters of the text it is given.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                    "additionalProperties": false
                })),
            take_text,
        )
        .tool(
            Tool::new("give_text")
                .description("Answers a text of that many ASCII bytes.")
                .input_schema(bytes_schema()),
            give_text,
        )
        .tool(
            Tool::new("give_structured")
                .description("Answers structured content of about that many bytes.")
                .input_schema(bytes_schema())
                .output_schema(json!({
                    "type": "object",
                    "properties": {"items": {"type": "array", "items": {
                        "type": "object",
                        "properties": {
                            "id": {"type": "integer"},
                            "name": {"type": "string"},
                            "tags": {"type": "array", "items": {"type": "string"}}
                        },
                        "required": ["id", "name", "tags"]
                    }}},
                    "required": ["items"]
                })),
            give_structured,
        )
        .tool(
            Tool::new("validate_big")
                .description("Checks an order against a large schema; answers its line count.")
                .input_schema(big),
            validate_big,
        )
        .tool(
            Tool::new("validate_small")
                .description("A trivial schema; answers ok.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            validate_small,
        ))
}

fn bytes_arg(args: &Value) -> Result<u64, ToolError> {
    args["bytes"]
        .as_u64()
        .filter(|n| *n <= MAX_BYTES)
        .ok_or_else(|| ToolError::new("bytes must be an integer 0..64 MiB"))
}

async fn take_text(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let text = args["text"].as_str().unwrap_or_default();
    Ok(ToolOutput::text(text.chars().count().to_string()))
}

async fn give_text(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let bytes = bytes_arg(&args)? as usize;
    // Whole copies of the alphabet, then cut: a char at a time would cost more than the
    // engine's part of the call, which is what the benchmark measures.
    let mut text = ALPHABET.repeat(bytes / ALPHABET.len() + 1);
    text.truncate(bytes);
    Ok(ToolOutput::text(text))
}

async fn give_structured(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let count = bytes_arg(&args)? / ITEM_BYTES;
    let items: Vec<Value> = (0..count)
        .map(|n| json!({"id": n, "name": format!("item-{n:06}"), "tags": ["alpha", "beta", "gamma"]}))
        .collect();
    Ok(ToolOutput::structured(json!({"items": items})))
}

async fn validate_big(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let lines = args["order"]["lines"].as_array().map_or(0, Vec::len);
    Ok(ToolOutput::text(format!("lines={lines}")))
}

async fn validate_small(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text("ok"))
}
