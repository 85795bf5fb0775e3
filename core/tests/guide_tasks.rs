//! The Rust server and test of docs/guides/tasks.md, which includes the parts between the
//! markers.

// --8<-- [start:server]
use std::time::Duration;

use serde_json::{Value, json};
use toolwire::{
    Context, RequestOptions, Server, ServerOptions, TaskSupport, Tool, ToolError, ToolOutput,
};

pub fn archive_server() -> Result<Server, toolwire::Error> {
    let archive = Tool::new("archive")
        .description("Archives a folder once the user confirms.")
        .input_schema(json!({
            "type": "object",
            "properties": {"folder": {"type": "string"}},
            "required": ["folder"]
        }))
        .task_support(TaskSupport::Optional); // a task for clients that can follow one
    let mut options = ServerOptions::default();
    // Finished tasks are kept 15 minutes for their clients to fetch (default: an hour), and
    // clients are told to poll every 100 ms: a confirmation is quick (default: every second).
    options.task_ttl = Duration::from_secs(15 * 60);
    options.task_poll_interval = Duration::from_millis(100);
    Server::builder("archive", "1.0.0")
        .options(options)
        .tool(archive, |ctx: Context, args: Value| async move {
            let folder = args["folder"].as_str().unwrap_or_default();
            let question = json!({
                "message": format!("Archive {folder}?"),
                "requestedSchema": {
                    "type": "object",
                    "properties": {"confirm": {"type": "boolean"}},
                    "required": ["confirm"]
                }
            });
            let answer = ctx.elicit(question, RequestOptions::default()).await?;
            if answer["action"] != "accept" || answer["content"]["confirm"] != true {
                return Ok::<_, ToolError>(ToolOutput::text(format!("{folder} left as it was.")));
            }
            ctx.progress(1.0, Some(2.0), Some("packing")); // in a task: its status message
            Ok(ToolOutput::text(format!("Archived {folder}.")))
        })
        .build()
}
// --8<-- [end:server]

// --8<-- [start:test]
use std::sync::Arc;

use futures_util::FutureExt;
use toolwire::client::{Answerer, Client, ClientOptions};

/// `tasks/get` until the task's status is one of `until`, waiting the `pollIntervalMs` the
/// server asks for between two polls (for at most 10 s: a test must not hang).
async fn poll(client: &Client, task_id: &Value, until: &[&str]) -> Result<Value, toolwire::Error> {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let task = client
            .request("tasks/get", json!({"taskId": task_id}))
            .await?;
        if until.iter().any(|status| task["status"] == *status) {
            return Ok(task);
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the task is still {}",
            task["status"]
        );
        let interval = task["pollIntervalMs"].as_u64().unwrap_or(1000);
        tokio::time::sleep(Duration::from_millis(interval)).await;
    }
}

#[tokio::test]
async fn archive_runs_as_a_task_for_a_client_that_follows_tasks() -> Result<(), toolwire::Error> {
    let mut options = ClientOptions::default();
    options.protocol_version = "2026-07-28".to_owned();
    options.capabilities = json!({
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {}
    });
    let client = Client::connect(&archive_server()?, options, None).await?;
    let call = json!({"name": "archive", "arguments": {"folder": "2025"}});
    let created = client.request("tools/call", call).await?;
    assert_eq!(created["resultType"], "task"); // the call is answered with the task
    let task_id = &created["taskId"];

    let asking = poll(&client, task_id, &["input_required"]).await?;
    let questions = asking["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let (key, question) = questions.iter().next().expect("one question, under a key");
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["message"], "Archive 2025?");
    let yes = json!({"action": "accept", "content": {"confirm": true}});
    let update = json!({"taskId": task_id, "inputResponses": {key.clone(): yes}});
    client.request("tasks/update", update).await?;

    let done = poll(&client, task_id, &["completed", "failed", "cancelled"]).await?;
    assert_eq!(done["status"], "completed");
    assert_eq!(done["result"]["content"][0]["text"], "Archived 2025.");
    client.close().await;
    Ok(())
}

#[tokio::test]
async fn a_client_without_the_extension_gets_the_answer_in_the_call() -> Result<(), toolwire::Error>
{
    let user: Arc<dyn Answerer> = Arc::new(|_method: String, _params: Value| {
        async { Ok(json!({"action": "accept", "content": {"confirm": true}})) }.boxed()
    });
    let mut options = ClientOptions::default();
    options.protocol_version = "2025-11-25".to_owned();
    options.elicitation = true;
    let client = Client::connect(&archive_server()?, options, Some(user)).await?;
    let result = client
        .call_tool("archive", json!({"folder": "2025"}), None)
        .await?;
    client.close().await;
    assert_eq!(result["content"][0]["text"], "Archived 2025.");
    Ok(())
}
// --8<-- [end:test]
