//! The Rust replica and test of docs/guides/replicas.md, which includes the parts between the
//! markers. Needs `redis-server` on PATH (`scripts/test-all` installs Debian's package).
#![cfg(feature = "redis")]

#[path = "common/redis_server.rs"]
mod redis_server;

// --8<-- [start:server]
use serde_json::{Value, json};
use toolwire::redis::{Redis, RedisOptions};
use toolwire::{
    Context, RequestOptions, Server, ServerOptions, StateKeys, TaskSupport, Tool, ToolError,
    ToolOutput,
};

/// One replica: every replica gets the same Redis and the same requestState keys.
pub fn replica(redis_url: &str, state_keys: &[String]) -> Result<Server, toolwire::Error> {
    let redis = Redis::connect(redis_url, RedisOptions::default())?; // fails now if unreachable
    let mut options = ServerOptions::default();
    // The first key seals, all open: add the new key second, then move it first, to rotate.
    options.request_state_keys = Some(StateKeys::from_secrets(state_keys)?);
    let archive = Tool::new("archive")
        .description("Archives a folder once the user confirms.")
        .input_schema(json!({
            "type": "object",
            "properties": {"folder": {"type": "string"}},
            "required": ["folder"]
        }))
        .task_support(TaskSupport::Optional);
    let builder = Server::builder("archive", "1.0.0").options(options);
    redis
        .share(builder)
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
            let confirmed = answer["action"] == "accept" && answer["content"]["confirm"] == true;
            Ok::<_, ToolError>(ToolOutput::text(match confirmed {
                true => format!("Archived {folder}."),
                false => format!("{folder} left as it was."),
            }))
        })
        .build()
}
// --8<-- [end:server]

// --8<-- [start:test]
use toolwire::client::{Client, ClientOptions};

/// `tasks/get` until the task's status is one of `until`, waiting the `pollIntervalMs` the
/// server asks for between two polls (for at most 10 s: a test must not hang).
async fn poll(client: &Client, task_id: &Value, until: &[&str]) -> Result<Value, toolwire::Error> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
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
        tokio::time::sleep(std::time::Duration::from_millis(interval)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_made_on_one_replica_is_followed_and_answered_on_the_other()
-> Result<(), toolwire::Error> {
    let redis = redis_server::RedisServer::start(); // a redis-server of the test's own
    let keys = ["a requestState secret of at least 32 bytes, the same on every replica".into()];
    let (a, b) = (replica(&redis.url(), &keys)?, replica(&redis.url(), &keys)?); // two processes' worth
    let mut modern = ClientOptions::default();
    modern.protocol_version = "2026-07-28".to_owned();
    modern.capabilities = json!({
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {}
    });
    let on_a = Client::connect(&a, modern.clone(), None).await?;
    let on_b = Client::connect(&b, modern, None).await?;
    let call = json!({"name": "archive", "arguments": {"folder": "2025"}});
    let task_id = on_a.request("tools/call", call).await?["taskId"].clone();

    let asking = poll(&on_b, &task_id, &["input_required"]).await?; // B reads the task A runs
    let questions = asking["inputRequests"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let key = questions.keys().next().expect("one question").clone();
    let answer = json!({"action": "accept", "content": {"confirm": true}});
    let update = json!({"taskId": task_id, "inputResponses": {key: answer}});
    on_b.request("tasks/update", update).await?; // B passes it to A

    let done = poll(&on_a, &task_id, &["completed", "failed", "cancelled"]).await?;
    assert_eq!(done["result"]["content"][0]["text"], "Archived 2025.");
    on_a.close().await;
    on_b.close().await;
    Ok(())
}
// --8<-- [end:test]
