//! The Rust getting-started server (docs/getting-started/rust.md includes it; the test of it is
//! core/tests/getting_started.rs): `cargo run -p toolwire --example hello` serves it on stdio.

// --8<-- [start:server]
use serde_json::{Value, json};
use toolwire::{Context, Server, Tool, ToolError, ToolOutput};

pub fn server() -> Result<Server, toolwire::Error> {
    let greet = Tool::new("greet")
        .description("Greets someone by name.")
        .input_schema(json!({
            "type": "object",
            "properties": {"name": {"type": "string"}},
            "required": ["name"]
        }));
    Server::builder("hello", "1.0.0")
        .tool(greet, |_ctx: Context, args: Value| async move {
            // The engine checked the arguments against the schema first.
            let name = args["name"].as_str().unwrap_or_default();
            Ok::<_, ToolError>(ToolOutput::text(format!("Hello, {name}!")))
        })
        .build()
}

#[tokio::main]
async fn main() -> Result<(), toolwire::Error> {
    server()?.serve_stdio().await // until the client hangs up
}
// --8<-- [end:server]
