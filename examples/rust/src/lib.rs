//! The demo server of the shared contract, with Rust handlers: `echo`, `add`, `sleep`, `fail`.
//! Every language's demo exposes these same tools; the golden vectors and benchmarks rely on them.

pub mod apps;
pub mod bench_tools;
pub mod conformance;
mod conformance_modern;
mod conformance_tasks;

use std::time::Duration;

use serde_json::{Value, json};
use toolwire::host::json_number;
use toolwire::{Context, Error, Server, ServerOptions, Tool, ToolError, ToolOutput};

/// The demo's instructions, identical in every language.
pub const INSTRUCTIONS: &str =
    "Demo server: echo text, add two numbers, sleep with progress, or fail on purpose.";

/// The example skills every language's conformance server serves (`examples/skills`), or where
/// `TOOLWIRE_SKILLS_DIR` says when the binary runs away from this checkout.
pub fn example_skills_dir() -> std::path::PathBuf {
    std::env::var_os("TOOLWIRE_SKILLS_DIR").map_or_else(
        || std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../skills"),
        std::path::PathBuf::from,
    )
}

/// `builder` with its tasks, changes and legacy sessions' events in `redis`, if given.
pub fn shared(
    builder: toolwire::ServerBuilder,
    redis: Option<&toolwire::redis::Redis>,
) -> toolwire::ServerBuilder {
    match redis {
        Some(redis) => redis.share(builder),
        None => builder,
    }
}

/// The demo server with default options.
pub fn build_server() -> Result<Server, Error> {
    build_server_with(ServerOptions::default())
}

/// The demo server with the given options.
pub fn build_server_with(options: ServerOptions) -> Result<Server, Error> {
    build_server_full(options, 0)
}

/// The demo server with `extra_tools` more tools `tool_000`, `tool_001`, … (for benchmarks of
/// `tools/list`; every language's demo takes the same `--extra-tools N`).
pub fn build_server_full(options: ServerOptions, extra_tools: usize) -> Result<Server, Error> {
    build_server_faulty(options, extra_tools, false)
}

/// [`build_server_full`], and with `fault_tools` the tools that misbehave on purpose, the same
/// in every language's demo (`--fault-tools`, for the fault-injection runs):
/// - `crash`: the handler panics (a host language's handler throws a plain runtime error);
/// - `hang`: the handler never returns; its 200 ms timeout ends the call;
/// - `malformed`: returns a structured result its own output schema refuses.
pub fn build_server_faulty(
    options: ServerOptions,
    extra_tools: usize,
    fault_tools: bool,
) -> Result<Server, Error> {
    build_server_shared(options, extra_tools, fault_tools, None)
}

/// [`build_server_faulty`] whose tasks and changes are shared with other replicas through
/// `redis` (`--redis URL`).
pub fn build_server_shared(
    options: ServerOptions,
    extra_tools: usize,
    fault_tools: bool,
    redis: Option<&toolwire::redis::Redis>,
) -> Result<Server, Error> {
    demo_builder(options, extra_tools, fault_tools, redis).build()
}

/// The builder [`build_server_shared`] builds, for a caller that adds tools of its own first
/// (`--bench-tools`).
pub fn demo_builder(
    options: ServerOptions,
    extra_tools: usize,
    fault_tools: bool,
    redis: Option<&toolwire::redis::Redis>,
) -> toolwire::ServerBuilder {
    let mut builder = shared(
        Server::builder("toolwire-demo", env!("CARGO_PKG_VERSION")),
        redis,
    )
    .title("toolwire demo (Rust)")
    .instructions(INSTRUCTIONS)
    .options(options)
    .tool(
        Tool::new("echo")
            .description("Returns the text it is given.")
            .input_schema(json!({
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "additionalProperties": false
            })),
        echo,
    )
    .tool(
        Tool::new("add")
            .description("Adds two numbers.")
            .input_schema(json!({
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"],
                "additionalProperties": false
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {"sum": {"type": "number"}},
                "required": ["sum"]
            })),
        add,
    )
    .tool(
        Tool::new("sleep")
            .description("Waits ms milliseconds, reporting progress every 100 ms when asked.")
            .input_schema(json!({
                "type": "object",
                "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 60000}},
                "required": ["ms"],
                "additionalProperties": false
            })),
        sleep,
    )
    .tool(
        Tool::new("fail")
            .description("Fails with the given message.")
            .input_schema(json!({
                "type": "object",
                "properties": {"message": {"type": "string"}},
                "required": ["message"],
                "additionalProperties": false
            })),
        fail,
    );
    for i in 0..extra_tools {
        builder = builder.tool(extra_tool(i), extra);
    }
    if fault_tools {
        builder = builder
            .tool(
                Tool::new("crash").description("Panics (a fault injected on purpose)."),
                crash,
            )
            .tool(
                Tool::new("hang")
                    .description("Never returns; its timeout ends the call.")
                    .timeout(Duration::from_millis(200)),
                hang,
            )
            .tool(
                Tool::new("malformed")
                    .description("Returns a result its output schema refuses.")
                    .output_schema(json!({
                        "type": "object",
                        "properties": {"n": {"type": "integer"}},
                        "required": ["n"]
                    })),
                malformed,
            );
    }
    builder
}

/// The message of the `crash` tool's panic; the demo's panic hook keeps it off stderr.
pub const INJECTED_PANIC: &str = "injected fault: crash";

async fn crash(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    panic!("{INJECTED_PANIC}");
}

async fn hang(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    std::future::pending().await
}

async fn malformed(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::structured(json!({"n": "not a number"})))
}

/// The definition of extra tool number `i`, identical across languages.
pub fn extra_tool(i: usize) -> Tool {
    Tool::new(format!("tool_{i:03}"))
        .description(format!("Extra tool number {i} (benchmarks tools/list)."))
        .input_schema(json!({
            "type": "object",
            "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 0}},
            "required": ["q"]
        }))
}

async fn extra(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text(args["q"].as_str().unwrap_or_default()))
}

async fn echo(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let text = args["text"].as_str().unwrap_or_default();
    Ok(ToolOutput::text(text))
}

async fn add(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let a = args["a"].as_f64().unwrap_or_default();
    let b = args["b"].as_f64().unwrap_or_default();
    Ok(ToolOutput::structured(json!({"sum": json_number(a + b)})))
}

async fn sleep(ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let ms = args["ms"].as_u64().unwrap_or_default();
    let total = Duration::from_millis(ms);
    let start = tokio::time::Instant::now();
    let mut ticks = tokio::time::interval_at(
        start + Duration::from_millis(100),
        Duration::from_millis(100),
    );
    let done = tokio::time::sleep(total);
    tokio::pin!(done);
    // Progress counts 100 ms steps (not wall time), so every language reports the same values.
    let mut steps: u64 = 0;
    loop {
        tokio::select! {
            () = &mut done => break,
            _ = ticks.tick(), if ctx.wants_progress() => {
                steps += 1;
                ctx.progress((steps * 100).min(ms) as f64, Some(ms as f64), None);
            }
            () = ctx.cancelled() => return Err(ToolError::new("cancelled")),
        }
    }
    Ok(ToolOutput::text(format!("slept {ms} ms")))
}

async fn fail(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    Err(ToolError::new(args["message"].as_str().unwrap_or_default()))
}
