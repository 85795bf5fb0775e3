//! The tasks extension through the bring-your-own-transport entry point: when a call becomes a
//! task, polling it, answering its questions (parked `ctx.elicit`), cancelling it, how it ends
//! (completed, failed, cancelled), and the -32021 / -32602 / -32601 answers.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::Client;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolwire::{
    Context, InputRequired, RequestOptions, Server, ServerOptions, TaskSupport, Tool, ToolError,
    ToolOutput,
};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";
const TASKS: &str = "io.modelcontextprotocol/tasks";

fn with_tasks() -> Value {
    json!({"elicitation": {}, "sampling": {}, "extensions": {TASKS: {}}})
}

fn request(id: i64, method: &str, mut params: Value, caps: Value) -> Value {
    params["_meta"] = json!({PV: "2026-07-28", CC: caps});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

fn call(id: i64, name: &str, arguments: Value, caps: Value) -> Value {
    request(
        id,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        caps,
    )
}

struct Fixture {
    server: Server,
    release: Arc<Notify>,
}

fn fixture() -> Fixture {
    fixture_with(ServerOptions::default())
}

fn fixture_with(mut options: ServerOptions) -> Fixture {
    let release = Arc::new(Notify::new());
    // Any handler still running at its first pause becomes a task: no timing in these tests.
    options.task_after = Duration::ZERO;
    let gate = release.clone();
    let server = Server::builder("tasks", "1")
        .options(options)
        .tool(
            Tool::new("greet").input_schema(json!({"type": "object", "properties": {"name": {"type": "string"}}})),
            |_ctx: Context, args: Value| async move {
                Ok(ToolOutput::text(format!("Hello, {}!", args["name"].as_str().unwrap_or("?"))))
            },
        )
        .tool(
            Tool::new("held").task_support(TaskSupport::Optional),
            move |_ctx: Context, _args: Value| {
                let gate = gate.clone();
                async move {
                    gate.notified().await;
                    Ok(ToolOutput::text("released"))
                }
            },
        )
        .tool(
            Tool::new("instant").task_support(TaskSupport::Optional),
            |_ctx: Context, _args: Value| async move { Ok(ToolOutput::text("at once")) },
        )
        .tool(
            Tool::new("only_task").task_support(TaskSupport::Required),
            |_ctx: Context, _args: Value| async move { Ok(ToolOutput::text("done as a task")) },
        )
        .tool(
            Tool::new("confirm").task_support(TaskSupport::Optional),
            |ctx: Context, _args: Value| async move {
                let answer = ctx
                    .elicit(json!({"message": "Sure?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}), RequestOptions::default())
                    .await?;
                Ok(ToolOutput::text(format!("answered {}", answer["action"].as_str().unwrap_or("?"))))
            },
        )
        .tool(
            Tool::new("two").task_support(TaskSupport::Optional),
            |ctx: Context, _args: Value| async move {
                let answers = ctx
                    .ask_all(
                        vec![
                            ("elicitation/create".to_owned(), json!({"message": "First?"})),
                            ("elicitation/create".to_owned(), json!({"message": "Second?"})),
                        ],
                        RequestOptions::default(),
                    )
                    .await?;
                Ok(ToolOutput::text(format!("{} answers", answers.len())))
            },
        )
        .tool(
            Tool::new("broken").task_support(TaskSupport::Required),
            |_ctx: Context, _args: Value| async move {
                tokio::task::yield_now().await;
                Err(ToolError::protocol(-32603, "broken: internal failure"))
            },
        )
        .tool(
            Tool::new("fails").task_support(TaskSupport::Required),
            |_ctx: Context, _args: Value| async move {
                tokio::task::yield_now().await;
                Err(ToolError::new("fails always"))
            },
        )
        .tool(
            Tool::new("asks_first").task_support(TaskSupport::Required),
            |ctx: Context, _args: Value| async move {
                // MRTR before the task: the low-level form answers in the request.
                match ctx.input_response("name") {
                    Some(answer) => {
                        let name = answer["content"]["name"].as_str().unwrap_or("?").to_owned();
                        tokio::task::yield_now().await;
                        Ok(ToolOutput::text(format!("Hello, {name}!")))
                    }
                    None => Err(InputRequired::new()
                        .elicit("name", json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}}))
                        .into()),
                }
            },
        )
        .build()
        .expect("valid server");
    Fixture { server, release }
}

/// The id of the task a `tools/call` answered with.
fn task_id(answer: &Value) -> String {
    let id = answer["result"]["taskId"].as_str();
    id.unwrap_or_else(|| panic!("not a task: {answer}"))
        .to_owned()
}

async fn ask(client: &mut Client, message: Value) -> Value {
    client.send(&message);
    client.recv().await.expect("an answer")
}

async fn get(client: &mut Client, id: i64, task: &str) -> Value {
    ask(
        client,
        request(id, "tasks/get", json!({"taskId": task}), with_tasks()),
    )
    .await
}

/// Polls until the task reaches `status` (or a terminal one): each poll is answered in turn,
/// and the handler's progress is what moves it.
async fn wait_for(client: &mut Client, task: &str, status: &str) -> Value {
    let mut last = Value::Null;
    // The handlers run on this test's one thread: a few polls are enough, never thousands.
    for id in 1000..11_000 {
        last = get(client, id, task).await;
        let now = last["result"]["status"].as_str().unwrap_or_default();
        if now == status || ["completed", "failed", "cancelled"].contains(&now) {
            return last["result"].clone();
        }
        tokio::task::yield_now().await;
    }
    panic!("task {task} never got to {status}: {last}")
}

#[tokio::test]
async fn discover_offers_the_extension_and_a_slow_call_becomes_a_task() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let discover = ask(
        &mut client,
        request(1, "server/discover", json!({}), json!({})),
    )
    .await;
    assert_eq!(
        discover["result"]["capabilities"]["extensions"][TASKS],
        json!({}),
        "{discover}"
    );
    assert!(discover["result"]["capabilities"].get("tasks").is_none());

    let created = ask(&mut client, call(2, "held", json!({}), with_tasks())).await;
    let task = &created["result"];
    assert_eq!(task["resultType"], "task", "{created}");
    assert_eq!(task["status"], "working");
    for absent in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "ttl",
        "pollInterval",
    ] {
        assert!(task.get(absent).is_none(), "{absent} in {created}");
    }
    assert!(task["ttlMs"].as_u64().is_some_and(|ttl| ttl > 0));
    assert!(
        task["createdAt"]
            .as_str()
            .is_some_and(|at| at.ends_with('Z'))
    );
    assert_eq!(
        task["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "tasks"
    );
    let id = task["taskId"].as_str().expect("id").to_owned();
    assert_eq!(id.len(), 32, "128 random bits");

    let polled = get(&mut client, 3, &id).await;
    assert_eq!(polled["result"]["status"], "working", "{polled}");
    assert_eq!(polled["result"]["resultType"], "complete");
    fixture.release.notify_one();
    let done = wait_for(&mut client, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "released");
    assert!(done.get("requestState").is_none());
}

#[tokio::test]
async fn without_the_extension_there_is_no_task() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    // An optional tool answers in its request; the v1 `task` param promotes nothing.
    let mut plain = call(1, "instant", json!({}), json!({}));
    plain["params"]["task"] = json!({"ttl": 60000, "pollInterval": 100});
    let answer = ask(&mut client, plain).await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "at once",
        "{answer}"
    );
    assert!(answer["result"].get("taskId").is_none());
    // A task-only tool: -32021 naming the extension.
    let refused = ask(&mut client, call(2, "only_task", json!({}), json!({}))).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS],
        json!({})
    );
    // The task methods, whatever the id: -32021 first.
    for (id, method) in [(3, "tasks/get"), (4, "tasks/update"), (5, "tasks/cancel")] {
        let refused = ask(
            &mut client,
            request(id, method, json!({"taskId": "gate-test"}), json!({})),
        )
        .await;
        assert_eq!(refused["error"]["code"], -32021, "{method}: {refused}");
    }
    // With it: an unknown id is -32602; removed methods are -32601.
    let unknown = get(&mut client, 6, "nonexistent").await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    for (id, method) in [(7, "tasks/result"), (8, "tasks/list")] {
        let removed = ask(
            &mut client,
            request(id, method, json!({"taskId": "x"}), with_tasks()),
        )
        .await;
        assert_eq!(removed["error"]["code"], -32601, "{method}: {removed}");
    }
}

#[tokio::test]
async fn a_quick_answer_stays_in_its_request_unless_the_tool_runs_only_as_a_task() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let quick = ask(&mut client, call(1, "instant", json!({}), with_tasks())).await;
    assert_eq!(quick["result"]["resultType"], "complete", "{quick}");
    let task = ask(&mut client, call(2, "only_task", json!({}), with_tasks())).await;
    assert_eq!(task["result"]["resultType"], "task", "{task}");
    assert_eq!(
        task["result"]["status"], "completed",
        "it had already ended"
    );
    let id = task_id(&task);
    let done = get(&mut client, 3, &id).await;
    assert_eq!(
        done["result"]["result"]["content"][0]["text"], "done as a task",
        "{done}"
    );
}

#[tokio::test]
async fn a_question_inside_a_task_waits_for_tasks_update() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let created = ask(&mut client, call(1, "confirm", json!({}), with_tasks())).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    let id = task_id(&created);
    let parked = wait_for(&mut client, &id, "input_required").await;
    assert_eq!(parked["status"], "input_required", "{parked}");
    let questions = parked["inputRequests"].as_object().expect("questions");
    let (key, question) = questions.iter().next().expect("one");
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["message"], "Sure?");
    // Unknown keys are ignored, and answered without a look at their value.
    let ack = ask(
        &mut client,
        request(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"unknown-key": {"ignored": true}}}),
            with_tasks(),
        ),
    )
    .await;
    assert_eq!(
        ack["result"],
        json!({"resultType": "complete", "_meta": ack["result"]["_meta"]}),
        "{ack}"
    );
    assert_eq!(
        get(&mut client, 3, &id).await["result"]["status"],
        "input_required"
    );
    let ack = ask(&mut client, request(4, "tasks/update", json!({"taskId": id, "inputResponses": {key.clone(): {"action": "accept", "content": {"ok": true}}}}), with_tasks())).await;
    assert!(ack["result"].get("status").is_none(), "{ack}");
    let done = wait_for(&mut client, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "answered accept",
        "{done}"
    );
    assert!(done.get("inputRequests").is_none());
}

#[tokio::test]
async fn questions_asked_together_may_be_answered_one_at_a_time() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let created = ask(&mut client, call(1, "two", json!({}), with_tasks())).await;
    let id = task_id(&created);
    let parked = wait_for(&mut client, &id, "input_required").await;
    let keys: Vec<String> = parked["inputRequests"]
        .as_object()
        .expect("questions")
        .keys()
        .cloned()
        .collect();
    assert_eq!(keys.len(), 2, "both open at once: {parked}");
    let answer = json!({"action": "accept", "content": {}});
    ask(
        &mut client,
        request(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {keys[0].clone(): answer}}),
            with_tasks(),
        ),
    )
    .await;
    // Already current when the ack came back.
    let partly = get(&mut client, 3, &id).await;
    assert_eq!(partly["result"]["status"], "input_required", "{partly}");
    let open: Vec<&String> = partly["result"]["inputRequests"]
        .as_object()
        .expect("open")
        .keys()
        .collect();
    assert_eq!(open, vec![&keys[1]]);
    ask(
        &mut client,
        request(
            4,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {keys[1].clone(): answer}}),
            with_tasks(),
        ),
    )
    .await;
    let done = wait_for(&mut client, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "2 answers", "{done}");
}

#[tokio::test]
async fn cancel_ends_a_task_at_once_and_a_terminal_task_stays_as_it_is() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let created = ask(&mut client, call(1, "confirm", json!({}), with_tasks())).await;
    let id = task_id(&created);
    wait_for(&mut client, &id, "input_required").await;
    let ack = ask(
        &mut client,
        request(2, "tasks/cancel", json!({"taskId": id}), with_tasks()),
    )
    .await;
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack["result"].get(absent).is_none(), "{absent} in {ack}");
    }
    let cancelled = get(&mut client, 3, &id).await;
    assert_eq!(
        cancelled["result"]["status"], "cancelled",
        "set before the ack: {cancelled}"
    );
    assert!(cancelled["result"].get("inputRequests").is_none());
    let again = ask(
        &mut client,
        request(4, "tasks/cancel", json!({"taskId": id}), with_tasks()),
    )
    .await;
    assert!(again.get("error").is_none(), "{again}");
    assert_eq!(
        get(&mut client, 5, &id).await["result"]["status"],
        "cancelled"
    );
}

#[tokio::test]
async fn a_protocol_error_fails_the_task_and_a_tool_error_completes_it() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let broken = ask(&mut client, call(1, "broken", json!({}), with_tasks())).await;
    let id = task_id(&broken);
    let failed = wait_for(&mut client, &id, "failed").await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(
        failed["error"],
        json!({"code": -32603, "message": "broken: internal failure"})
    );
    assert!(failed.get("result").is_none());

    let fails = ask(&mut client, call(2, "fails", json!({}), with_tasks())).await;
    let id = task_id(&fails);
    let completed = wait_for(&mut client, &id, "completed").await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_eq!(completed["result"]["isError"], true);
}

#[tokio::test]
async fn mrtr_rounds_come_before_the_task() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let first = ask(&mut client, call(1, "asks_first", json!({}), with_tasks())).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(first["result"].get("taskId").is_none());
    let mut second = call(2, "asks_first", json!({}), with_tasks());
    second["params"]["inputResponses"] =
        json!({"name": {"action": "accept", "content": {"name": "Alice"}}});
    if let Some(state) = first["result"].get("requestState") {
        second["params"]["requestState"] = state.clone();
    }
    let created = ask(&mut client, second).await;
    assert_eq!(created["result"]["resultType"], "task", "{created}");
    assert!(created["result"].get("requestState").is_none());
    assert!(created["result"].get("inputRequests").is_none());
    let id = task_id(&created);
    let done = wait_for(&mut client, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Hello, Alice!",
        "{done}"
    );
}

#[tokio::test]
async fn a_legacy_session_never_sees_tasks() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let init = client.initialize("2025-11-25", with_tasks()).await;
    assert!(
        init["result"]["capabilities"].get("extensions").is_none(),
        "{init}"
    );
    let answer = ask(&mut client, common::call(1, "only_task", json!({}))).await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "done as a task",
        "{answer}"
    );
    let unknown = ask(
        &mut client,
        json!({"jsonrpc": "2.0", "id": 2, "method": "tasks/get", "params": {"taskId": "x"}}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32601, "{unknown}");
}

#[tokio::test]
async fn a_malformed_answer_is_refused_and_the_question_stays_open() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let created = ask(&mut client, call(1, "confirm", json!({}), with_tasks())).await;
    let id = task_id(&created);
    let parked = wait_for(&mut client, &id, "input_required").await;
    let key = parked["inputRequests"]
        .as_object()
        .expect("open")
        .keys()
        .next()
        .expect("one")
        .clone();
    let refused = ask(
        &mut client,
        request(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key.clone(): "yes"}}),
            with_tasks(),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let still = get(&mut client, 3, &id).await;
    assert!(
        still["result"]["inputRequests"].get(&key).is_some(),
        "{still}"
    );
}

#[tokio::test(start_paused = true)]
async fn a_task_still_running_when_it_expires_is_cancelled() {
    let mut options = ServerOptions::default();
    options.task_ttl = Duration::from_secs(60);
    let fixture = fixture_with(options);
    let mut client = Client::new(&fixture.server);
    let created = ask(&mut client, call(1, "confirm", json!({}), with_tasks())).await;
    let id = task_id(&created);
    wait_for(&mut client, &id, "input_required").await;
    // The clock moves past the task's deadline (paused time: no real waiting).
    tokio::time::advance(Duration::from_secs(61)).await;
    let ended = wait_for(&mut client, &id, "cancelled").await;
    assert_eq!(ended["status"], "cancelled", "{ended}");
}

#[tokio::test]
async fn a_listen_stream_follows_the_tasks_it_names() {
    let fixture = fixture();
    let mut client = Client::new(&fixture.server);
    let created = ask(&mut client, call(1, "confirm", json!({}), with_tasks())).await;
    let id = task_id(&created);
    wait_for(&mut client, &id, "input_required").await;
    // Without the extension: -32021.
    let listen = |rid: i64, caps: Value| {
        request(
            rid,
            "subscriptions/listen",
            json!({"notifications": {"taskIds": [id, "not-a-task"]}}),
            caps,
        )
    };
    let refused = ask(&mut client, listen(2, json!({}))).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    // Even when the taskIds are malformed: the missing extension is said first.
    let malformed = request(
        20,
        "subscriptions/listen",
        json!({"notifications": {"taskIds": "x"}}),
        json!({}),
    );
    let refused = ask(&mut client, malformed).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    // With it: the acknowledgement names the tasks it follows (unknown ones left out).
    let ack = ask(&mut client, listen(3, with_tasks())).await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    assert_eq!(ack["params"]["notifications"]["taskIds"], json!([id]));
    // Then each followed task as it stands.
    let now = client.recv().await.expect("the task now");
    assert_eq!(now["method"], "notifications/tasks", "{now}");
    assert_eq!(now["params"]["status"], "input_required");
    client.send(&request(
        4,
        "tasks/cancel",
        json!({"taskId": id}),
        with_tasks(),
    ));
    let mut frames = [
        client.recv().await.expect("a frame"),
        client.recv().await.expect("a frame"),
    ];
    frames.sort_by_key(|frame| frame.get("id").is_some());
    let (notification, cancelled) = (&frames[0], &frames[1]);
    assert_eq!(
        notification["method"], "notifications/tasks",
        "{notification}"
    );
    assert_eq!(notification["params"]["taskId"], json!(id));
    assert_eq!(notification["params"]["status"], "cancelled");
    assert!(notification["params"].get("resultType").is_none());
    assert_eq!(
        notification["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        3
    );
    assert_eq!(cancelled["id"], 4, "{cancelled}");
}
