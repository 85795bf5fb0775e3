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
use std::time::{Duration, SystemTime};

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

/// Follows the task on a listen stream of `server` (`taskIds`) until it is `status`: the
/// stream shows it as it stands, then each change, so this waits for events, not for time.
async fn wait_for(server: &Server, task: &str, status: &str) -> Value {
    let mut watcher = Client::new(server);
    listen(&mut watcher, 1, json!({"taskIds": [task]}))
        .await
        .expect("following the task");
    loop {
        let heard = watcher
            .recv()
            .await
            .unwrap_or_else(|why| panic!("task {task} never got to {status}: {why}"));
        if heard["method"] == "notifications/tasks" && heard["params"]["status"] == status {
            return heard["params"].clone();
        }
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
    let asked = wait_for(&b.server, &id, "input_required").await;
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
    let done = wait_for(&b.server, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "answered accept");
    assert!(done.get("inputRequests").is_none(), "{done}");

    // A malformed answer is refused on B as it would be on A.
    let created = ask(
        &mut on_a,
        request(3, "tools/call", json!({"name": "confirm", "arguments": {}})),
    )
    .await;
    let second = task_id(&created);
    wait_for(&b.server, &second, "input_required").await;
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
    let shared = Redis::connect(&redis.url(), RedisOptions::default()).expect("Redis answers");
    let store = shared.task_store();
    let now = SystemTime::now();
    let orphan = |id: &str| TaskRecord {
        id: id.into(),
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
    };
    // Stored as a replica stores it when its call becomes a task, with its lease; then nobody
    // renews the lease. Its running out is Redis's expiry of the key: done here at once (the
    // pool test waits for a real one), so the test waits for nothing.
    let mut redis_cli = redis::Client::open(redis.url())
        .and_then(|client| client.get_connection())
        .expect("a connection of the test's");
    for id in ["orphan", "swept"] {
        store.insert(orphan(id), 10, 10).expect("stored");
        let lease: i64 = redis::cmd("PTTL")
            .arg(format!("toolwire:lease:{id}"))
            .query(&mut redis_cli)
            .expect("PTTL");
        assert!(
            (1..=5000).contains(&lease),
            "a lease of the default 5 s: {lease} ms"
        );
        assert_eq!(
            store.get(id).expect("read").expect("there").status,
            TaskStatus::Working
        );
        let _: i64 = redis::cmd("DEL")
            .arg(format!("toolwire:lease:{id}"))
            .query(&mut redis_cli)
            .expect("DEL");
    }
    // Read: the reader ends it.
    let task = store.get("orphan").expect("read").expect("kept");
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
    // Not read by anyone: the once-a-second sweep of every replica ends it.
    store.purge_expired(SystemTime::now());
    assert_eq!(store.lapsed(), ["swept"]);
    let swept = store.get("swept").expect("read").expect("kept");
    assert_eq!(swept.status, TaskStatus::Failed);
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
    let mut listener = Client::new(&a.server);
    listen(&mut listener, 50, json!({"toolsListChanged": true}))
        .await
        .expect("listening");
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
    // The open listen stream ends gracefully once the subscription is known lost (its
    // result: the client listens again) ...
    let ended = loop {
        let frame = listener.recv().await.expect("the listen stream's end");
        if frame["id"] == 50 {
            break frame;
        }
    };
    assert_eq!(ended["result"]["resultType"], "complete", "{ended}");
    // ... and from then on a new one is refused.
    let refused = listen(&mut client, 51, json!({"toolsListChanged": true}))
        .await
        .expect_err("refused while Redis is away");
    assert_eq!(refused["error"]["code"], -32603, "{refused}");

    // Redis returns (empty: the task was in its memory), and so does everything. The legacy
    // session follows the bus again once it hears every replica: it announces every list
    // (what was missed is unknown), then hears new changes.
    redis.restart();
    let heard = legacy
        .recv()
        .await
        .expect("the announcement after Redis returned");
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    while legacy.silent_for(Duration::ZERO).await.is_err() {}
    a.server
        .add_tool(
            Tool::new("after"),
            |_ctx: Context, _args: Value| async move { Ok(ToolOutput::text("x")) },
        )
        .expect("added");
    let heard = loop {
        let frame = legacy
            .recv()
            .await
            .expect("a list change after Redis returned");
        match frame["method"].as_str() {
            // The rest of the announcement above, when it was still on its way at the drain.
            Some("notifications/resources/list_changed" | "notifications/prompts/list_changed") => {
                continue;
            }
            _ => break frame,
        }
    };
    assert_eq!(
        heard["method"], "notifications/tools/list_changed",
        "{heard}"
    );
    listen(&mut client, 52, json!({"toolsListChanged": true}))
        .await
        .expect("listening again");
    // The task store's idle connections died with Redis: the first call after is not refused.
    let again = ask(
        &mut client,
        request(53, "tools/call", json!({"name": "held", "arguments": {}})),
    )
    .await;
    assert_eq!(again["result"]["resultType"], "task", "{again}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_redis_restart_between_two_requests_fails_neither() {
    let mut redis = RedisServer::start();
    let a = replica(&redis, Duration::from_secs(5));
    let mut client = Client::new(&a.server);
    // A read leaves the store an idle connection (and, no task made, no background user).
    let get = |id| request(id, "tasks/get", json!({"taskId": "absent"}));
    let unknown = ask(&mut client, get(1)).await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
    // That connection now leads to a Redis that is gone; the next request finds it closed and
    // goes on a new one instead of failing.
    redis.stop();
    redis.restart();
    let again = ask(&mut client, get(2)).await;
    assert_eq!(
        again["error"]["code"], -32602,
        "unknown, not unreachable: {again}"
    );
}
