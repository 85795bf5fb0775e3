//! The conformance server's tasks-extension fixtures (the alpha harness's `tasks-*`
//! scenarios): ordinary handlers, marked with how they may run as tasks. Nothing in them
//! knows about tasks: the engine decides when a call becomes one, and inside a task
//! `ctx.elicit` waits for the client's `tasks/update`.

use std::time::Duration;

use serde_json::{Value, json};

use crate::conformance_modern::accepted_content;
use toolwire::{
    Context, InputRequired, RequestOptions, ServerBuilder, TaskSupport, Tool, ToolError, ToolOutput,
};

fn tool(name: &str, description: &str, schema: Value, support: TaskSupport) -> Tool {
    Tool::new(name)
        .description(description)
        .input_schema(schema)
        .task_support(support)
}

fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

fn elicit_form(message: &str, properties: Value, required: &[&str]) -> Value {
    json!({"mode": "form", "message": message, "requestedSchema":
        {"type": "object", "properties": properties, "required": required}})
}

pub(crate) fn with_task_fixtures(builder: ServerBuilder) -> ServerBuilder {
    builder
        .tool(
            tool(
                "greet",
                "Greets by name",
                json!({"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}),
                TaskSupport::Never,
            ),
            |_ctx: Context, args: Value| async move {
                let name = args["name"].as_str().unwrap_or_default();
                Ok(ToolOutput::text(format!("Hello, {name}!")))
            },
        )
        .tool(
            tool(
                "slow_compute",
                "Computes for the given number of seconds",
                json!({"type": "object", "properties": {
                    "seconds": {"type": "integer", "minimum": 0},
                    "label": {"type": "string"}}}),
                TaskSupport::Optional,
            ),
            |_ctx: Context, args: Value| async move {
                let seconds = args["seconds"].as_u64().unwrap_or(0);
                let label = args["label"].as_str().unwrap_or("default");
                // Cancelling the task drops this future: the sleep ends with it.
                tokio::time::sleep(Duration::from_secs(seconds)).await;
                Ok(ToolOutput::text(format!(
                    "Computation {label:?} completed after {seconds}s"
                )))
            },
        )
        .tool(
            tool(
                "failing_job",
                "Runs a second, then fails (a tool error: the task completes)",
                no_arguments(),
                TaskSupport::Required,
            ),
            |_ctx: Context, _args: Value| async move {
                tokio::time::sleep(Duration::from_secs(1)).await;
                Err::<ToolOutput, _>(ToolError::new("failing_job always fails"))
            },
        )
        .tool(
            tool(
                "protocol_error_job",
                "Fails with a JSON-RPC error (the task fails)",
                no_arguments(),
                TaskSupport::Required,
            ),
            |_ctx: Context, _args: Value| async move {
                Err::<ToolOutput, _>(ToolError::protocol(
                    -32603,
                    "protocol_error_job: internal failure",
                ))
            },
        )
        .tool(
            tool(
                "confirm_delete",
                "Asks for confirmation before deleting a file",
                json!({"type": "object", "properties": {"filename": {"type": "string"}}, "required": ["filename"]}),
                TaskSupport::Optional,
            ),
            |ctx: Context, args: Value| async move {
                let filename = args["filename"].as_str().unwrap_or_default().to_owned();
                let answer = ctx
                    .elicit(
                        elicit_form(
                            &format!("Delete {filename}?"),
                            json!({"confirm": {"type": "boolean"}}),
                            &["confirm"],
                        ),
                        RequestOptions::default(),
                    )
                    .await?;
                let confirmed = accepted_content(&answer)
                    .and_then(|content| content["confirm"].as_bool())
                    .unwrap_or(false);
                Ok(ToolOutput::text(if confirmed {
                    format!("Deleted {filename}")
                } else {
                    format!("Kept {filename}")
                }))
            },
        )
        .tool(
            tool(
                "multi_input",
                "Asks two questions at once",
                no_arguments(),
                TaskSupport::Optional,
            ),
            |ctx: Context, _args: Value| async move {
                let answers = ctx
                    .ask_all(
                        vec![
                            (
                                "elicitation/create".to_owned(),
                                elicit_form("Your name?", json!({"name": {"type": "string"}}), &[]),
                            ),
                            (
                                "elicitation/create".to_owned(),
                                elicit_form(
                                    "Proceed?",
                                    json!({"confirm": {"type": "boolean"}}),
                                    &[],
                                ),
                            ),
                        ],
                        RequestOptions::default(),
                    )
                    .await?;
                let name = answers
                    .first()
                    .and_then(accepted_content)
                    .and_then(|content| content["name"].as_str())
                    .unwrap_or("?");
                Ok(ToolOutput::text(format!("Got both answers ({name})")))
            },
        )
        .tool(
            tool(
                "test_tool_with_task",
                "Asks for a name (an MRTR round), then greets as a task",
                no_arguments(),
                TaskSupport::Required,
            ),
            |ctx: Context, _args: Value| async move {
                let Some(name) = ctx
                    .input_response("user_name")
                    .and_then(accepted_content)
                    .and_then(|content| content["name"].as_str())
                else {
                    return Err(InputRequired::new()
                        .elicit(
                            "user_name",
                            elicit_form(
                                "What is your name?",
                                json!({"name": {"type": "string"}}),
                                &["name"],
                            ),
                        )
                        .into());
                };
                Ok(ToolOutput::text(format!("Hello, {name}!")))
            },
        )
}
