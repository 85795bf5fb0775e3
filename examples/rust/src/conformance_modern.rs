//! The conformance server's 2026-07-28 fixtures: MRTR rounds written both ways (the
//! low-level `InputRequired` answer, and `ctx.elicit`/`ctx.sample` that ask and come back),
//! the per-request capability and log level, the list-change triggers, and a tool whose
//! argument is mirrored in an `Mcp-Param-Region` header.

use serde_json::{Value, json};
use toolwire::{
    Content, Context, Error, InputRequired, LogLevel, Prompt, PromptMessage, PromptRequest,
    PromptResult, RequestOptions, Server, ServerBuilder, Tool, ToolError, ToolOutput,
};

fn tool(name: &str, description: &str) -> Tool {
    Tool::new(name).description(description)
}

fn ask_name() -> Value {
    json!({"message": "What is your name?", "requestedSchema": {"type": "object",
        "properties": {"name": {"type": "string"}}, "required": ["name"]}})
}

fn ask_confirmation() -> Value {
    json!({"message": "Please confirm", "requestedSchema": {"type": "object",
        "properties": {"ok": {"type": "boolean"}}, "required": ["ok"]}})
}

fn sampling(text: &str, max_tokens: u32) -> Value {
    json!({"messages": [{"role": "user", "content": {"type": "text", "text": text}}],
        "maxTokens": max_tokens})
}

/// An accepted elicitation's content, if `key` holds one.
fn accepted<'a>(ctx: &'a Context, key: &str) -> Option<&'a Value> {
    accepted_content(ctx.input_response(key)?)
}

/// An elicitation answer's content, if the user accepted.
pub(crate) fn accepted_content(answer: &Value) -> Option<&Value> {
    (answer.get("action")?.as_str()? == "accept").then(|| answer.get("content"))?
}

pub(crate) fn with_modern_fixtures(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool(
                "test_missing_capability",
                "Needs the client's sampling capability",
            ),
            |ctx: Context, _args: Value| async move {
                if ctx.client_capabilities().get("sampling").is_some() {
                    return Ok(ToolOutput::text(
                        "Client declared sampling capability; proceeding.",
                    ));
                }
                // Without it the engine answers -32021 (2026-07-28) or an error result.
                ctx.sample(sampling("Hello", 10), RequestOptions::default())
                    .await?;
                Ok(ToolOutput::text("unreachable"))
            },
        )
        .tool(
            tool(
                "test_streaming_elicitation",
                "Asks for confirmation through the protocol of the request",
            ),
            |ctx: Context, _args: Value| async move {
                let params = json!({"message": "Please confirm", "requestedSchema": {
                    "type": "object", "properties": {"confirmed": {"type": "boolean"}},
                    "required": ["confirmed"]}});
                let answer = ctx.elicit(params, RequestOptions::default()).await?;
                Ok(ToolOutput::text(format!(
                    "confirmation: {}",
                    answer["action"].as_str().unwrap_or("unknown")
                )))
            },
        )
        .tool(
            tool(
                "test_logging_tool",
                "Logs three messages at the level the request asked for",
            ),
            |ctx: Context, _args: Value| async move {
                ctx.log(LogLevel::Debug, "debug message");
                ctx.log(LogLevel::Info, "info message");
                ctx.log(LogLevel::Warning, "warning message");
                Ok(ToolOutput::text("Logging tool executed"))
            },
        )
        .tool(
            tool(
                "test_x_mcp_header",
                "Echoes a region that is mirrored in the Mcp-Param-Region header",
            )
            .input_schema(json!({"type": "object", "properties": {"region": {
                    "type": "string", "description": "Mirrored into the Mcp-Param-Region header",
                    "x-mcp-header": "Region"}}})),
            |_ctx: Context, args: Value| async move {
                Ok(ToolOutput::text(format!(
                    "region={}",
                    args["region"].as_str().unwrap_or("<none>")
                )))
            },
        )
        .tool(
            tool(
                "test_input_required_result_elicitation",
                "Asks the user's name (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                match accepted(&ctx, "user_name").and_then(|c| c["name"].as_str()) {
                    Some(name) => Ok(ToolOutput::text(format!("Hello, {name}!"))),
                    None => Err(InputRequired::new().elicit("user_name", ask_name()).into()),
                }
            },
        )
        .tool(
            tool(
                "test_input_required_result_sampling",
                "Asks the client's model (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                match ctx.input_response("capital_question") {
                    Some(answer) => Ok(ToolOutput::text(format!(
                        "Model said: {}",
                        answer["content"]["text"].as_str().unwrap_or_default()
                    ))),
                    None => Err(InputRequired::new()
                        .sample(
                            "capital_question",
                            sampling("What is the capital of France?", 100),
                        )
                        .into()),
                }
            },
        )
        .tool(
            tool(
                "test_input_required_result_list_roots",
                "Asks for the client's roots (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                match ctx
                    .input_response("client_roots")
                    .and_then(|a| a["roots"].as_array())
                {
                    Some(roots) => Ok(ToolOutput::text(format!(
                        "Client exposed {} root(s).",
                        roots.len()
                    ))),
                    None => Err(InputRequired::new().list_roots("client_roots").into()),
                }
            },
        )
        .tool(
            tool(
                "test_input_required_result_request_state",
                "Carries state between rounds (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                if accepted(&ctx, "confirm").is_some()
                    && ctx.request_state() == Some("awaiting-confirm")
                {
                    return Ok(ToolOutput::text("state-ok: confirmed"));
                }
                Err(InputRequired::new()
                    .elicit("confirm", ask_confirmation())
                    .state("awaiting-confirm")
                    .into())
            },
        )
        .tool(
            tool(
                "test_input_required_result_multiple_inputs",
                "Asks three questions in one round (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                let all = ["user_name", "greeting", "client_roots"]
                    .iter()
                    .all(|key| ctx.input_response(key).is_some());
                if all && ctx.request_state() == Some("multi") {
                    return Ok(ToolOutput::text("All inputs received."));
                }
                Err(InputRequired::new()
                    .elicit("user_name", ask_name())
                    .sample("greeting", sampling("Generate a greeting", 50))
                    .list_roots("client_roots")
                    .state("multi")
                    .into())
            },
        )
        .tool(
            tool(
                "test_input_required_result_multi_round",
                "Asks two questions, one per round (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                let state: Value = ctx
                    .request_state()
                    .and_then(|s| serde_json::from_str(s).ok())
                    .unwrap_or(Value::Null);
                if let (Some(name), Some(color)) = (
                    state["name"].as_str(),
                    accepted(&ctx, "step2").and_then(|c| c["color"].as_str()),
                ) {
                    return Ok(ToolOutput::text(format!("{name} likes {color}.")));
                }
                if let Some(name) = accepted(&ctx, "step1").and_then(|c| c["name"].as_str()) {
                    return Err(InputRequired::new()
                        .elicit(
                            "step2",
                            json!({"message": "Step 2: What is your favorite color?",
                            "requestedSchema": {"type": "object", "properties": {
                                "color": {"type": "string"}}, "required": ["color"]}}),
                        )
                        .state(json!({"name": name}).to_string())
                        .into());
                }
                Err(InputRequired::new()
                    .elicit(
                        "step1",
                        json!({"message": "Step 1: What is your name?",
                        "requestedSchema": {"type": "object", "properties": {
                            "name": {"type": "string"}}, "required": ["name"]}}),
                    )
                    .state(json!({"step": 1}).to_string())
                    .into())
            },
        )
        .tool(
            tool(
                "test_input_required_result_tampered_state",
                "Refuses a state that was altered (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                if accepted(&ctx, "confirm").is_some() && ctx.request_state() == Some("untampered")
                {
                    return Ok(ToolOutput::text("state verified"));
                }
                Err(InputRequired::new()
                    .elicit("confirm", ask_confirmation())
                    .state("untampered")
                    .into())
            },
        )
        .tool(
            tool(
                "test_input_required_result_capabilities",
                "Asks only what the client can answer (MRTR)",
            ),
            |ctx: Context, _args: Value| async move {
                if ctx.input_response("sample").is_some() || ctx.input_response("ask").is_some() {
                    return Ok(ToolOutput::text("Answered."));
                }
                // The engine also drops kinds the request did not declare.
                Err(InputRequired::new()
                    .sample("sample", sampling("Say hello", 50))
                    .elicit("ask", ask_confirmation())
                    .into())
            },
        )
        .prompt(
            Prompt::new("test_input_required_result_prompt")
                .description("A prompt that asks for context first (MRTR)"),
            |request: PromptRequest| async move {
                let context = request
                    .input_responses
                    .get("user_context")
                    .filter(|a| a["action"] == "accept")
                    .and_then(|a| a["content"]["context"].as_str());
                match context {
                    Some(context) => Ok(PromptResult::new(vec![PromptMessage::user(
                        Content::text(format!("Use the following context: {context}")),
                    )])),
                    None => Err(InputRequired::new()
                        .elicit(
                            "user_context",
                            json!({"message": "What context should the prompt use?",
                            "requestedSchema": {"type": "object", "properties": {
                                "context": {"type": "string"}}, "required": ["context"]}}),
                        )
                        .into()),
                }
            },
        )
}

/// The list-change triggers: each adds and removes an entry (the list ends as it began) and
/// so makes every listener that asked hear of a change.
pub(crate) fn add_triggers(server: &Server) -> Result<(), Error> {
    // Not a harness fixture: the pool test updates a resource on one replica and listens on
    // the others.
    let updates = server.clone();
    server.add_tool(
        tool(
            "test_update_resource",
            "Announces that the resource `uri` changed: listeners hear notifications/resources/updated",
        )
        .input_schema(json!({"type": "object", "properties": {"uri": {"type": "string"}}, "required": ["uri"]})),
        move |_ctx: Context, args: Value| {
            let server = updates.clone();
            async move {
                let uri = args["uri"].as_str().unwrap_or_default();
                server.notify_resource_updated(uri);
                Ok::<_, ToolError>(ToolOutput::text(format!("updated {uri}")))
            }
        },
    )?;
    let tools = server.clone();
    server.add_tool(
        tool(
            "test_trigger_tool_change",
            "Adds and removes a tool: listeners hear tools/list_changed",
        ),
        move |_ctx: Context, _args: Value| {
            let server = tools.clone();
            async move {
                server
                    .add_tool(
                        tool("test_dynamic_tool", "Here for a moment"),
                        |_c: Context, _a: Value| async {
                            Ok::<_, ToolError>(ToolOutput::text("dynamic"))
                        },
                    )
                    .map_err(|e| ToolError::new(e.to_string()))?;
                server.remove_tool("test_dynamic_tool");
                Ok(ToolOutput::text("tool list changed"))
            }
        },
    )?;
    let prompts = server.clone();
    server.add_tool(
        tool(
            "test_trigger_prompt_change",
            "Adds and removes a prompt: listeners hear prompts/list_changed",
        ),
        move |_ctx: Context, _args: Value| {
            let server = prompts.clone();
            async move {
                server
                    .add_prompt(
                        Prompt::new("test_dynamic_prompt").description("Here for a moment"),
                        |_r: PromptRequest| async {
                            Ok(PromptResult::new(vec![PromptMessage::user(Content::text(
                                "dynamic",
                            ))]))
                        },
                    )
                    .map_err(|e| ToolError::new(e.to_string()))?;
                server.remove_prompt("test_dynamic_prompt");
                Ok(ToolOutput::text("prompt list changed"))
            }
        },
    )
}
