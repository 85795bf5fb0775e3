//! The conformance server: the tools, resources and prompts the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`) exercises, with the names and answers it expects.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use toolwire::{
    Completion, Content, Context, Error, Prompt, PromptArgument, PromptMessage, PromptResult,
    Reference, RequestOptions, Resource, ResourceContents, ResourceRequest, ResourceTemplate,
    Server, ServerOptions, TaskStore, Tool, ToolError, ToolOutput,
};

/// A 1×1 red PNG.
pub const RED_PIXEL_PNG: &str =
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";
/// A WAV file of one silent 16-bit sample at 8 kHz.
pub const SILENT_WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQIAAAAAAA==";

fn no_arguments(name: &str, description: &str) -> Tool {
    Tool::new(name).description(description)
}

fn string_arguments(name: &str, description: &str, arguments: &[&str]) -> Tool {
    let properties: serde_json::Map<String, Value> = arguments
        .iter()
        .map(|a| ((*a).to_owned(), json!({"type": "string"})))
        .collect();
    Tool::new(name)
        .description(description)
        .input_schema(json!({
            "type": "object", "properties": properties, "required": arguments,
        }))
}

fn content(blocks: Vec<Value>) -> Result<ToolOutput, ToolError> {
    let blocks = blocks
        .into_iter()
        .map(Content::from_json)
        .collect::<Result<Vec<_>, _>>()?;
    Ok(ToolOutput::content(blocks))
}

async fn elicit_and_report(
    ctx: Context,
    params: Value,
    prefix: &str,
) -> Result<ToolOutput, ToolError> {
    let answer = ctx.elicit(params, RequestOptions::default()).await?;
    Ok(ToolOutput::text(format!(
        "{prefix}action={}, content={}",
        answer["action"].as_str().unwrap_or("unknown"),
        answer.get("content").unwrap_or(&Value::Null)
    )))
}

/// The conformance server.
pub fn build_conformance_server() -> Result<Server, Error> {
    build_conformance_server_with(ServerOptions::default())
}

/// The conformance server with engine options of the caller's (the tasks soak shortens the
/// tasks' time to live).
pub fn build_conformance_server_with(options: ServerOptions) -> Result<Server, Error> {
    build(options, None, None)
}

/// The conformance server whose tasks and changes are shared with other replicas through
/// `redis` (`--conformance --redis URL`: the pool test's replicas).
pub fn build_conformance_server_shared(
    options: ServerOptions,
    redis: Option<&toolwire::redis::Redis>,
) -> Result<Server, Error> {
    build(options, None, redis)
}

/// The conformance server with engine options and a task store of the caller's (a test that
/// purges the store itself, to count what expired tasks leave behind).
pub fn build_conformance_server_with_store(
    options: ServerOptions,
    store: Arc<dyn TaskStore>,
) -> Result<Server, Error> {
    build(options, Some(store), None)
}

fn build(
    options: ServerOptions,
    store: Option<Arc<dyn TaskStore>>,
    redis: Option<&toolwire::redis::Redis>,
) -> Result<Server, Error> {
    let mut builder = crate::shared(
        Server::builder("toolwire-conformance", env!("CARGO_PKG_VERSION")),
        redis,
    );
    if let Some(store) = store {
        builder = builder.task_store(store);
    }
    let builder = builder
        .options(options)
        .tool(
            no_arguments("test_simple_text", "Returns simple text"),
            |_ctx: Context, _args: Value| async move {
                Ok(ToolOutput::text("This is a simple text response for testing."))
            },
        )
        .tool(
            no_arguments("test_image_content", "Returns an image"),
            |_ctx: Context, _args: Value| async move {
                Ok(ToolOutput::content(vec![Content::image(RED_PIXEL_PNG, "image/png")]))
            },
        )
        .tool(
            no_arguments("test_audio_content", "Returns audio"),
            |_ctx: Context, _args: Value| async move {
                Ok(ToolOutput::content(vec![Content::audio(SILENT_WAV, "audio/wav")]))
            },
        )
        .tool(
            no_arguments("test_embedded_resource", "Returns an embedded resource"),
            |_ctx: Context, _args: Value| async move {
                content(vec![json!({"type": "resource", "resource": {
                    "uri": "test://embedded-resource", "mimeType": "text/plain",
                    "text": "This is an embedded resource content."}})])
            },
        )
        .tool(
            no_arguments("test_multiple_content_types", "Returns text, an image and a resource"),
            |_ctx: Context, _args: Value| async move {
                content(vec![
                    json!({"type": "text", "text": "Multiple content types test:"}),
                    json!({"type": "image", "data": RED_PIXEL_PNG, "mimeType": "image/png"}),
                    json!({"type": "resource", "resource": {
                        "uri": "test://mixed-content-resource", "mimeType": "application/json",
                        "text": "{\"test\":\"data\",\"value\":123}"}}),
                ])
            },
        )
        .tool(
            no_arguments("test_tool_with_logging", "Logs three messages while it runs"),
            |ctx: Context, _args: Value| async move {
                ctx.log(toolwire::LogLevel::Info, "Tool execution started");
                tokio::time::sleep(Duration::from_millis(50)).await;
                ctx.log(toolwire::LogLevel::Info, "Tool processing data");
                tokio::time::sleep(Duration::from_millis(50)).await;
                ctx.log(toolwire::LogLevel::Info, "Tool execution completed");
                Ok(ToolOutput::text("Tool with logging executed successfully"))
            },
        )
        .tool(
            no_arguments("test_error_handling", "Always fails"),
            |_ctx: Context, _args: Value| async move {
                Err::<ToolOutput, _>(ToolError::new(
                    "This tool intentionally returns an error for testing",
                ))
            },
        )
        .tool(
            no_arguments("test_tool_with_progress", "Reports progress 0, 50, 100 of 100"),
            |ctx: Context, _args: Value| async move {
                ctx.progress(0.0, Some(100.0), None);
                tokio::time::sleep(Duration::from_millis(50)).await;
                ctx.progress(50.0, Some(100.0), None);
                tokio::time::sleep(Duration::from_millis(50)).await;
                ctx.progress(100.0, Some(100.0), None);
                Ok(ToolOutput::text("Tool with progress executed successfully"))
            },
        )
        .tool(
            string_arguments("test_sampling", "Asks the client's model", &["prompt"]),
            |ctx: Context, args: Value| async move {
                let prompt = args["prompt"].as_str().unwrap_or_default().to_owned();
                let answer = ctx
                    .sample(json!({
                        "messages": [{"role": "user", "content": {"type": "text", "text": prompt}}],
                        "maxTokens": 100,
                    }), RequestOptions::default())
                    .await?;
                let text = answer["content"]["text"].as_str().unwrap_or_default();
                Ok(ToolOutput::text(format!("LLM response: {text}")))
            },
        )
        .tool(
            string_arguments("test_elicitation", "Asks the user", &["message"]),
            |ctx: Context, args: Value| async move {
                let params = json!({
                    "message": args["message"],
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "username": {"type": "string", "description": "User's response"},
                            "email": {"type": "string", "description": "User's email address"},
                        },
                        "required": ["username", "email"],
                    },
                });
                elicit_and_report(ctx, params, "User response: ").await
            },
        )
        .tool(
            no_arguments("test_elicitation_sep1034_defaults", "Elicitation with defaults"),
            |ctx: Context, _args: Value| async move {
                let params = json!({
                    "message": "Please review and update the form fields with defaults",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "User name", "default": "John Doe"},
                            "age": {"type": "integer", "description": "User age", "default": 30},
                            "score": {"type": "number", "description": "User score", "default": 95.5},
                            "status": {"type": "string", "description": "User status",
                                "enum": ["active", "inactive", "pending"], "default": "active"},
                            "verified": {"type": "boolean", "description": "Verified", "default": true},
                        },
                    },
                });
                elicit_and_report(ctx, params, "Elicitation completed: ").await
            },
        )
        .tool(
            no_arguments("test_elicitation_sep1330_enums", "Elicitation with every enum form"),
            |ctx: Context, _args: Value| async move {
                let params = json!({
                    "message": "Please select options from the enum fields",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {
                            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
                            "titledSingle": {"type": "string", "oneOf": [
                                {"const": "value1", "title": "First Option"},
                                {"const": "value2", "title": "Second Option"},
                                {"const": "value3", "title": "Third Option"}]},
                            "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                                "enumNames": ["Option One", "Option Two", "Option Three"]},
                            "untitledMulti": {"type": "array",
                                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
                            "titledMulti": {"type": "array", "items": {"anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"}]}},
                        },
                    },
                });
                elicit_and_report(ctx, params, "Elicitation completed: ").await
            },
        )
        .tool(
            Tool::new("json_schema_2020_12_tool")
                .description("Tool with JSON Schema 2020-12 features")
                .input_schema(json!({
                    "$schema": "https://json-schema.org/draft/2020-12/schema",
                    "type": "object",
                    "$defs": {"address": {"$anchor": "addressDef", "type": "object", "properties": {
                        "street": {"type": "string"}, "city": {"type": "string"}}}},
                    "properties": {
                        "name": {"type": "string"},
                        "address": {"$ref": "#/$defs/address"},
                        "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                        "phone": {"type": "string"},
                        "email": {"type": "string"},
                    },
                    "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
                    "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
                    "then": {"required": ["phone"]},
                    "else": {"required": ["email"]},
                    "additionalProperties": false,
                })),
            |_ctx: Context, args: Value| async move { Ok(ToolOutput::text(args.to_string())) },
        )
        .tool(
            no_arguments("test_reconnection", "Closes its SSE stream mid-call; the answer comes on resumption"),
            |ctx: Context, _args: Value| async move {
                tokio::time::sleep(Duration::from_millis(50)).await;
                ctx.close_sse_stream();
                tokio::time::sleep(Duration::from_millis(200)).await;
                Ok(ToolOutput::text("Reconnection test completed"))
            },
        )
        .resource(
            Resource::new("test://static-text", "Static text")
                .description("A static text resource")
                .mime_type("text/plain"),
            |request: ResourceRequest| async move {
                Ok(vec![ResourceContents::text(
                    request.uri,
                    Some("text/plain"),
                    "This is the content of the static text resource.",
                )])
            },
        )
        .resource(
            Resource::new("test://static-binary", "Static binary")
                .description("A static PNG")
                .mime_type("image/png"),
            |request: ResourceRequest| async move {
                Ok(vec![ResourceContents::blob(request.uri, Some("image/png"), RED_PIXEL_PNG)])
            },
        )
        .resource(
            Resource::new("test://watched-resource", "Watched")
                .description("A resource to subscribe to")
                .mime_type("text/plain"),
            |request: ResourceRequest| async move {
                Ok(vec![ResourceContents::text(request.uri, Some("text/plain"), "Watched resource content")])
            },
        )
        .resource_template(
            ResourceTemplate::new("test://template/{id}/data", "Template data")
                .description("Data for an id")
                .mime_type("application/json"),
            |request: ResourceRequest| async move {
                let id = request.variables.get("id").cloned().unwrap_or_default();
                let text = json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")});
                Ok(vec![ResourceContents::text(request.uri, Some("application/json"), text.to_string())])
            },
        )
        .prompt(
            Prompt::new("test_simple_prompt").description("A prompt without arguments"),
            |_request: toolwire::PromptRequest| async move {
                Ok(PromptResult::new(vec![PromptMessage::user(Content::text(
                    "This is a simple prompt for testing.",
                ))]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_arguments")
                .description("A prompt with two arguments")
                .argument(PromptArgument::new("arg1", true).description("First test argument"))
                .argument(PromptArgument::new("arg2", true).description("Second test argument")),
            |request: toolwire::PromptRequest| async move {
                let arg = |name: &str| request.arguments.get(name).cloned().unwrap_or_default();
                Ok(PromptResult::new(vec![PromptMessage::user(Content::text(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                )))]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_embedded_resource")
                .description("A prompt embedding a resource")
                .argument(PromptArgument::new("resourceUri", true).description("URI of the resource to embed")),
            |request: toolwire::PromptRequest| async move {
                let uri = request.arguments.get("resourceUri").cloned().unwrap_or_default();
                let embedded = Content::from_json(json!({"type": "resource", "resource": {
                    "uri": uri, "mimeType": "text/plain", "text": "Embedded resource content for testing."}}))?;
                Ok(PromptResult::new(vec![
                    PromptMessage::user(embedded),
                    PromptMessage::user(Content::text("Please process the embedded resource above.")),
                ]))
            },
        )
        .prompt(
            Prompt::new("test_prompt_with_image").description("A prompt with an image"),
            |_request: toolwire::PromptRequest| async move {
                Ok(PromptResult::new(vec![
                    PromptMessage::user(Content::image(RED_PIXEL_PNG, "image/png")),
                    PromptMessage::user(Content::text("Please analyze the image above.")),
                ]))
            },
        )
        .completer(
            Reference::Prompt("test_prompt_with_arguments".into()),
            |request: toolwire::CompletionRequest| async move {
                let choices = ["paris", "park", "party", "test", "testing"];
                Ok(Completion::new(
                    choices
                        .iter()
                        .filter(|c| c.starts_with(&request.value))
                        .map(|c| (*c).to_owned())
                        .collect(),
                ))
            },
        );
    // The Skills extension's scenarios read the example skills (examples/skills).
    let builder = builder.skills_dir(crate::example_skills_dir());
    // MCP Apps: the greeter example (examples/apps), for the browser test.
    let builder = crate::apps::with_greeter(builder);
    let builder = crate::conformance_modern::with_modern_fixtures(builder);
    let server = crate::conformance_tasks::with_task_fixtures(builder).build()?;
    crate::conformance_modern::add_triggers(&server)?;
    Ok(server)
}
