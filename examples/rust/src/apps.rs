//! MCP Apps: a greeting shown in an interactive view (`examples/apps/greeter.html`), every
//! language's example of the extension (its conformance server serves it too). `say_hello`
//! links to the view; the view calls `shout` back through the host, a tool only the view may
//! call, so clients that render no views never see it.

use serde_json::{Value, json};
use toolwire::{Context, ServerBuilder, Tool, ToolError, ToolOutput, UiResource, Visibility};

/// Where the view is served.
pub const VIEW_URI: &str = "ui://greeter/view.html";

/// `builder` with the greeter's view and its two tools.
pub fn with_greeter(builder: ServerBuilder) -> ServerBuilder {
    let mut ui = serde_json::Map::new();
    ui.insert("prefersBorder".into(), json!(true));
    builder
        .ui_resource(
            UiResource::new(
                VIEW_URI,
                "greeter-view",
                include_str!("../../apps/greeter.html"),
            )
            .description("Shows a greeting, and shouts it on a click")
            .ui_meta(ui),
        )
        .tool(
            Tool::new("say_hello")
                .description("Greets someone by name (in a view, where the client shows them)")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"name": {"type": "string"}},
                    "required": ["name"],
                }))
                .ui_resource(VIEW_URI),
            say_hello,
        )
        .tool(
            Tool::new("shout")
                .description("The text in capitals (called by the greeter's view)")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                }))
                .ui_resource(VIEW_URI)
                .visibility(&[Visibility::App]),
            shout,
        )
}

async fn say_hello(ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let name = args["name"].as_str().unwrap_or("you");
    let greeting = format!("Hello, {name}!");
    // The text is for the model and for clients without views; the view reads the structure.
    let mut output = ToolOutput::text(&greeting);
    if ctx.client_renders_apps() {
        output.structured = Some(json!({"greeting": greeting, "name": name}));
    }
    Ok(output)
}

async fn shout(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    let shouted = args["text"].as_str().unwrap_or_default().to_uppercase();
    let mut output = ToolOutput::text(&shouted);
    output.structured = Some(json!({"shouted": shouted}));
    Ok(output)
}
