//! Two servers sharing one real Redis (`redis-server` on loopback, started here) act as two
//! replicas: a task made on A is read, answered and cancelled through B; a resource updated on
//! A reaches a listen stream on B; a task whose replica stopped renewing its lease ends
//! `failed`; Redis lost answers defined errors, and everything recovers when it returns.
//!
//! Needs `redis-server` on PATH (`scripts/test-all` installs Debian's package when missing).
#![cfg(feature = "redis")]

mod common;
#[path = "common/redis_server.rs"]
mod redis_server;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant, SystemTime};

use common::Client;
use redis_server::RedisServer;
use serde_json::{Map, Value, json};
use tokio::sync::Notify;
use toolwire::redis::{Redis, RedisOptions};
use toolwire::tasks::{TaskRecord, TaskStatus, TaskStore};
use toolwire::{
    Context, RequestOptions, Resource, ResourceContents, ResourceRequest, Server, ServerOptions,
    TaskSupport, Tool, ToolOutput,
};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";
const TASKS: &str = "io.modelcontextprotocol/tasks";

fn with_tasks() -> Value {
    json!({"elicitation": {}, "extensions": {TASKS: {}}})
}

fn request(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({PV: "2026-07-28", CC: with_tasks()});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

async fn ask(client: &mut Client, message: Value) -> Value {
    client.send(&message);
    loop {
        let frame = client.recv().await.expect("an answer");
        // Listen notifications may interleave: the answer is the frame with our id.
        if frame.get("id") == message.get("id") {
            return frame;
        }
    }
}

/// Opens a listen stream with request `id`: `Ok` once acknowledged, else the error answer.
async fn listen(client: &mut Client, id: i64, notifications: Value) -> Result<(), Value> {
    client.send(&request(
        id,
        "subscriptions/listen",
        json!({"notifications": notifications}),
    ));
    loop {
        let frame = client.recv().await.expect("an answer");
        if frame["id"] == id {
            return Err(frame);
        }
        if frame["method"] == "notifications/subscriptions/acknowledged"
            && frame["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"] == id
        {
            return Ok(());
        }
    }
}

/// Sets `flag` when dropped: the handler's future was dropped (cancelled) or ended.
struct Ended(Arc<AtomicBool>, Arc<Notify>);

impl Drop for Ended {
    fn drop(&mut self) {
        self.0.store(true, Ordering::Release);
        self.1.notify_waiters();
    }
}

struct Replica {
    server: Server,
    held_ended: Arc<AtomicBool>,
    held_ended_notify: Arc<Notify>,
}

fn replica(redis: &RedisServer, lease: Duration) -> Replica {
    let shared = Redis::connect(
        &redis.url(),
        RedisOptions {
            task_lease: lease,
            ..RedisOptions::default()
        },
    )
    .expect("Redis answers");
    let held_ended = Arc::new(AtomicBool::new(false));
    let held_ended_notify = Arc::new(Notify::new());
    let (flag, notify) = (held_ended.clone(), held_ended_notify.clone());
    let mut options = ServerOptions::default();
    // A handler still running at its first pause becomes a task: no timing in these tests.
    options.task_after = Duration::ZERO;
    options.list_changed_debounce = Duration::ZERO;
    let server = Server::builder("replica", "1")
        .options(options)
        .task_store(shared.task_store())
        .change_bus(shared.change_bus())
        .resource(
            Resource::new("test://watched", "watched"),
            |request: ResourceRequest| async move {
                Ok(vec![ResourceContents::text(request.uri, None, "now")])
            },
        )
        .tool(
            Tool::new("greet"),
            |_ctx: Context, _args: Value| async move { Ok(ToolOutput::text("hello")) },
        )
        .tool(
            Tool::new("held").task_support(TaskSupport::Optional),
            move |_ctx: Context, _args: Value| {
                let ended = Ended(flag.clone(), notify.clone());
                async move {
                    let _ended = ended;
                    std::future::pending::<()>().await;
                    Ok(ToolOutput::text("never"))
                }
            },
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
        .build()
        .expect("server");
    Replica {
        server,
        held_ended,
        held_ended_notify,
    }
}

/// Polls `tasks/get` on `client` until the task is `status`.
async fn wait_for(client: &mut Client, task: &str, status: &str) -> Value {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut id = 10_000;
    loop {
        id += 1;
        let got = ask(client, request(id, "tasks/get", json!({"taskId": task}))).await;
        if got["result"]["status"] == status {
            return got["result"].clone();
        }
        assert!(
            Instant::now() < deadline,
            "task {task} never got to {status}: {got}"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn task_id(created: &Value) -> String {
    created["result"]["taskId"]
        .as_str()
        .unwrap_or_else(|| panic!("not a task: {created}"))
        .to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_made_on_one_replica_is_read_answered_and_cancelled_on_another() {
    let redis = RedisServer::start();
    let (a, b) = (
        replica(&redis, Duration::from_secs(5)),
        replica(&redis, Duration::from_secs(5)),
    );
    let (mut on_a, mut on_b) = (Client::new(&a.server), Client::new(&b.server));

    let created = ask(
        &mut on_a,
        request(1, "tools/call", json!({"name": "confirm", "arguments": {}})),
    )
    .await;
    let id = task_id(&created);
    let asked = wait_for(&mut on_b, &id, "input_required").await;
    let keys: Vec<&String> = asked["inputRequests"]
        .as_object()
        .expect("questions")
        .keys()
        .collect();
    assert_eq!(keys, ["q1"], "{asked}");
    let updated = ask(
        &mut on_b,
        request(
            2,
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"q1": {"action": "accept", "content": {"ok": true}}}}),
        ),
    )
    .await;
    assert_eq!(updated["result"]["resultType"], "complete", "{updated}");
    let done = wait_for(&mut on_b, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "answered accept");
    assert!(done.get("inputRequests").is_none(), "{done}");

    // A malformed answer is refused on B as it would be on A.
    let created = ask(
        &mut on_a,
        request(3, "tools/call", json!({"name": "confirm", "arguments": {}})),
    )
    .await;
    let second = task_id(&created);
    wait_for(&mut on_b, &second, "input_required").await;
    let refused = ask(
        &mut on_b,
        request(
            4,
            "tasks/update",
            json!({"taskId": second, "inputResponses": {"q1": "yes"}}),
        ),
    )
    .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");

    // Cancelled on B: stored at once, and A's handler stops.
    let created = ask(
        &mut on_a,
        request(5, "tools/call", json!({"name": "held", "arguments": {}})),
    )
    .await;
    let held = task_id(&created);
    let stopped = a.held_ended_notify.notified();
    let cancelled = ask(
        &mut on_b,
        request(6, "tasks/cancel", json!({"taskId": held})),
    )
    .await;
    assert_eq!(cancelled["result"]["resultType"], "complete", "{cancelled}");
    let now = ask(&mut on_a, request(7, "tasks/get", json!({"taskId": held}))).await;
    assert_eq!(now["result"]["status"], "cancelled", "{now}");
    if !a.held_ended.load(Ordering::Acquire) {
        tokio::time::timeout(Duration::from_secs(10), stopped)
            .await
            .expect("A's handler was cancelled by B's tasks/cancel");
    }
    assert!(!b.held_ended.load(Ordering::Acquire), "B never ran it");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_updated_on_one_replica_reaches_listeners_on_another() {
    let redis = RedisServer::start();
    let (a, b) = (
        replica(&redis, Duration::from_secs(5)),
        replica(&redis, Duration::from_secs(5)),
    );
    let mut on_b = Client::new(&b.server);
    listen(
        &mut on_b,
        1,
        json!({"resourceSubscriptions": ["test://watched"], "toolsListChanged": true}),
    )
    .await
    .expect("listening");
    a.server.notify_resource_updated("test://watched");
    a.server.notify_resource_updated("test://other");
    let heard = on_b.recv().await.expect("the update");
    assert_eq!(
        heard["method"], "notifications/resources/updated",
        "{heard}"
    );
    assert_eq!(heard["params"]["uri"], "test://watched");
    a.server
        .add_tool(
            Tool::new("later"),
            |_ctx: Context, _args: Value| async move { Ok(ToolOutput::text("x")) },
        )
        .expect("added");
    let heard = on_b.recv().await.expect("the list change");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_replica_died_ends_failed_after_its_lease() {
    let redis = RedisServer::start();
    let shared = Redis::connect(
        &redis.url(),
        RedisOptions {
            task_lease: Duration::from_millis(300),
            ..RedisOptions::default()
        },
    )
    .expect("Redis answers");
    let store = shared.task_store();
    let now = SystemTime::now();
    // Stored as a replica stores it when its call becomes a task; nobody renews the lease.
    store
        .insert(
            TaskRecord {
                id: "orphan".into(),
                principal: None,
                status: TaskStatus::Working,
                status_message: None,
                created_at: now,
                last_updated_at: now,
                ttl: Duration::from_secs(60),
                poll_interval: Duration::from_millis(100),
                input_requests: Map::new(),
                result: None,
                error: None,
            },
            10,
            10,
        )
        .expect("stored");
    assert_eq!(
        store.get("orphan").expect("read").expect("there").status,
        TaskStatus::Working
    );
    let deadline = Instant::now() + Duration::from_secs(10);
    let task = loop {
        let task = store.get("orphan").expect("read").expect("kept");
        if task.status != TaskStatus::Working {
            break task;
        }
        assert!(Instant::now() < deadline, "still working after its lease");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(task.status, TaskStatus::Failed);
    assert_eq!(
        task.status_message.as_deref(),
        Some(toolwire::redis::LAPSED_MESSAGE)
    );
    assert_eq!(
        task.error.as_ref().map(|e| e["code"].clone()),
        Some(json!(-32603))
    );
    assert_eq!(store.lapsed(), ["orphan"], "announced once");
    assert!(store.lapsed().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redis_lost_answers_defined_errors_and_everything_recovers() {
    let unreachable = Redis::connect("redis://127.0.0.1:1/0", RedisOptions::default())
        .expect_err("nothing listens on port 1");
    assert!(
        unreachable.to_string().contains("cannot be reached"),
        "{unreachable}"
    );

    let mut redis = RedisServer::start();
    let a = replica(&redis, Duration::from_secs(5));
    let mut client = Client::new(&a.server);
    let mut legacy = Client::initialized(&a.server).await;
    let created = ask(
        &mut client,
        request(1, "tools/call", json!({"name": "held", "arguments": {}})),
    )
    .await;
    let id = task_id(&created);

    redis.stop();
    let got = ask(&mut client, request(2, "tasks/get", json!({"taskId": id}))).await;
    assert_eq!(got["error"]["code"], -32603, "{got}");
    assert!(
        got["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("task store cannot be reached")),
        "{got}"
    );
    // Calls that need no shared state keep working.
    let greeted = ask(
        &mut client,
        request(3, "tools/call", json!({"name": "greet", "arguments": {}})),
    )
    .await;
    assert_eq!(
        greeted["result"]["content"][0]["text"], "hello",
        "{greeted}"
    );
    // A new listen stream is refused once the subscription is known lost.
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut id_seq = 100;
    loop {
        id_seq += 1;
        match listen(&mut client, id_seq, json!({"toolsListChanged": true})).await {
            Err(answer) if answer["error"]["code"] == -32603 => break,
            answer => assert!(
                Instant::now() < deadline,
                "listen still admitted: {answer:?}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }

    // Redis returns (empty: the task was in its memory), and so does everything.
    redis.restart();
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        id_seq += 1;
        let answer = ask(
            &mut client,
            request(
                id_seq,
                "tools/call",
                json!({"name": "held", "arguments": {}}),
            ),
        )
        .await;
        if answer["result"]["resultType"] == "task" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no task after Redis returned: {answer}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The legacy session follows the bus again once it is back: it hears list changes.
    a.server
        .add_tool(
            Tool::new("after"),
            |_ctx: Context, _args: Value| async move { Ok(ToolOutput::text("x")) },
        )
        .expect("added");
    loop {
        let heard = legacy
            .recv()
            .await
            .expect("a list change after Redis returned");
        if heard["method"] == "notifications/tools/list_changed" {
            break;
        }
    }
    loop {
        id_seq += 1;
        match listen(&mut client, id_seq, json!({"toolsListChanged": true})).await {
            Ok(()) => break,
            Err(answer) => assert!(
                Instant::now() < deadline,
                "listen refused after Redis returned: {answer}"
            ),
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
