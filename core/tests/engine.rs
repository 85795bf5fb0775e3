//! Engine behaviour that the demo tools cannot show: the back-channel, deadlines, limits,
//! list_changed, panics, output validation, logging and progress rules, registration errors.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use common::{Client, matches};
use serde_json::{Value, json};
use toolwire::{
    Context, Error, LogLevel, RequestOptions, Server, ServerOptions, Tool, ToolError, ToolOutput,
};

fn call(id: i64, name: &str, args: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": name, "arguments": args}})
}

fn is_error_text(answer: &Value) -> String {
    assert_eq!(
        answer["result"]["isError"], true,
        "not an error result: {answer}"
    );
    answer["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

type Handler =
    fn(Context, Value) -> futures_util::future::BoxFuture<'static, Result<ToolOutput, ToolError>>;

fn server_with(options: ServerOptions, tools: Vec<(Tool, Handler)>) -> Server {
    let mut builder = Server::builder("test", "1").options(options);
    for (tool, handler) in tools {
        builder = builder.tool(tool, handler);
    }
    builder.build().expect("valid test server")
}

fn back_channel_server() -> Server {
    Server::builder("test", "1")
        .tool(Tool::new("ask"), |ctx: Context, _args: Value| async move {
            let answer = ctx
                .elicit(json!({"message": "Which region?", "requestedSchema": {"type": "object", "properties": {"r": {"type": "string"}}}}))
                .await?;
            Ok(ToolOutput::text(answer["content"]["r"].as_str().unwrap_or("none").to_owned()))
        })
        .tool(Tool::new("sample"), |ctx: Context, _args: Value| async move {
            let answer = ctx.sample(json!({"messages": [], "maxTokens": 5})).await?;
            Ok(ToolOutput::text(answer["model"].as_str().unwrap_or_default().to_owned()))
        })
        .tool(Tool::new("roots"), |ctx: Context, _args: Value| async move {
            match ctx.list_roots().await {
                Ok(roots) => Ok(ToolOutput::text(roots["roots"].to_string())),
                Err(err) => Err(ToolError::new(err.to_string())),
            }
        })
        .tool(Tool::new("slow_answer"), |ctx: Context, _args: Value| async move {
            let opts = RequestOptions::with_timeout(Duration::from_millis(150));
            match ctx.request("roots/list", json!({}), opts).await {
                Ok(_) => Ok(ToolOutput::text("answered")),
                Err(Error::Timeout { .. }) => Ok(ToolOutput::text("timed out")),
                Err(other) => Err(other.into()),
            }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn elicitation_round_trip_with_correlation() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-11-25", json!({"elicitation": {}}))
        .await;
    client.send(&call(1, "ask", json!({})));
    let request = client.recv().await.unwrap();
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"]["message"], "Which region?");
    let id = request["id"].clone();
    assert!(id.is_i64(), "server ids are integers: {id}");
    assert_eq!(request["params"]["_meta"]["progressToken"], id);
    // A response with the right number but the wrong type is not ours.
    client.send(&json!({"jsonrpc": "2.0", "id": id.to_string(), "result": {"action": "accept", "content": {"r": "us"}}}));
    client.send(&json!({"jsonrpc": "2.0", "id": id, "result": {"action": "accept", "content": {"r": "eu"}}}));
    let answer = client.recv().await.unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "eu", "{answer}");
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn back_channel_needs_declared_capabilities() {
    let server = back_channel_server();
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "ask", json!({})));
    let text = is_error_text(&client.recv().await.unwrap());
    assert!(text.contains("elicitation"), "{text}");
    client.send(&call(2, "sample", json!({})));
    assert!(is_error_text(&client.recv().await.unwrap()).contains("sampling"));
    client.send(&call(3, "roots", json!({})));
    assert!(is_error_text(&client.recv().await.unwrap()).contains("roots"));
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn elicitation_needs_a_version_that_has_it() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-03-26", json!({"elicitation": {}}))
        .await;
    client.send(&call(1, "ask", json!({})));
    assert!(is_error_text(&client.recv().await.unwrap()).contains("elicitation"));
}

#[tokio::test]
async fn client_error_answer_reaches_the_handler() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-11-25", json!({"sampling": {}}))
        .await;
    client.send(&call(1, "sample", json!({})));
    let request = client.recv().await.unwrap();
    assert_eq!(request["method"], "sampling/createMessage");
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "error": {"code": -1, "message": "user rejected"}}));
    let text = is_error_text(&client.recv().await.unwrap());
    assert!(text.contains("user rejected"), "{text}");
}

#[tokio::test]
async fn back_channel_timeout_sends_cancelled_and_progress_extends_it() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client.initialize("2025-11-25", json!({"roots": {}})).await;

    // No answer: after 150 ms the server gives up and tells the client.
    client.send(&call(1, "slow_answer", json!({})));
    let request = client.recv().await.unwrap();
    assert_eq!(request["method"], "roots/list");
    let cancelled = client.recv().await.unwrap();
    assert!(
        matches(
            &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": request["id"], "reason": "timed out"}}),
            &cancelled
        ),
        "{cancelled}"
    );
    assert_eq!(
        client.recv().await.unwrap()["result"]["content"][0]["text"],
        "timed out"
    );
    // A late answer to the abandoned request is ignored.
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}}));

    // Progress every 100 ms keeps it alive past 150 ms; then the answer arrives.
    client.send(&call(2, "slow_answer", json!({})));
    let request = client.recv().await.unwrap();
    let token = request["params"]["_meta"]["progressToken"].clone();
    for step in 1..=4 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        client.send(&json!({"jsonrpc": "2.0", "method": "notifications/progress", "params": {"progressToken": token, "progress": step}}));
    }
    client.send(&json!({"jsonrpc": "2.0", "id": request["id"], "result": {"roots": []}}));
    assert_eq!(
        client.recv().await.unwrap()["result"]["content"][0]["text"],
        "answered"
    );
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn cancelling_a_call_cancels_its_back_channel_request() {
    let server = back_channel_server();
    let mut client = Client::new(&server);
    client
        .initialize("2025-11-25", json!({"elicitation": {}}))
        .await;
    client.send(&call(7, "ask", json!({})));
    let request = client.recv().await.unwrap();
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    );
    let cancelled = client.recv().await.unwrap();
    assert_eq!(cancelled["method"], "notifications/cancelled");
    assert_eq!(cancelled["params"]["requestId"], request["id"]);
    assert!(
        client.finish().await.is_empty(),
        "the cancelled call must not answer"
    );
}

#[tokio::test]
async fn deadline_gives_an_error_result_and_cancels_the_handler() {
    let observed_cancel = Arc::new(AtomicBool::new(false));
    let seen = observed_cancel.clone();
    let server = Server::builder("test", "1")
        .tool(
            Tool::new("stuck").timeout(Duration::from_millis(100)),
            move |ctx: Context, _args: Value| {
                let seen = seen.clone();
                async move {
                    let token = ctx.cancellation_token();
                    // Work handed elsewhere sees the cancellation through the token.
                    tokio::spawn(async move {
                        token.cancelled().await;
                        seen.store(true, Ordering::SeqCst);
                    });
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    Ok(ToolOutput::text("never"))
                }
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let answer = client
        .request(json!(1), "tools/call", json!({"name": "stuck"}))
        .await;
    assert_eq!(
        is_error_text(&answer),
        "Tool \"stuck\" timed out after 100 ms"
    );
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(observed_cancel.load(Ordering::SeqCst));
    assert_eq!(client.session.calls_in_flight(), 0);
}

#[tokio::test]
async fn default_deadline_applies_to_tools_without_their_own() {
    let mut options = ServerOptions::default();
    options.default_tool_timeout = Some(Duration::from_millis(50));
    let server = toolwire_demo::build_server_with(options).unwrap();
    let mut client = Client::initialized(&server).await;
    let answer = client
        .request(
            json!(1),
            "tools/call",
            json!({"name": "sleep", "arguments": {"ms": 1000}}),
        )
        .await;
    assert_eq!(
        is_error_text(&answer),
        "Tool \"sleep\" timed out after 50 ms"
    );
}

fn slow(
    _ctx: Context,
    _args: Value,
) -> futures_util::future::BoxFuture<'static, Result<ToolOutput, ToolError>> {
    Box::pin(async {
        tokio::time::sleep(Duration::from_millis(200)).await;
        Ok(ToolOutput::text("done"))
    })
}

/// A server that runs one call at a time and queues one more; `slow` takes 200 ms.
fn one_running_one_waiting() -> Server {
    let mut options = ServerOptions::default();
    options.max_concurrent_calls = 1;
    options.max_queued_calls = 1;
    server_with(options, vec![(Tool::new("slow"), slow)])
}

#[tokio::test]
async fn global_limit_queues_then_refuses() {
    let server = one_running_one_waiting();
    let mut client = Client::initialized(&server).await;
    for id in 1..=3 {
        client.send(&call(id, "slow", json!({})));
    }
    // The third call finds one running and one waiting: refused at once.
    let first = client.recv().await.unwrap();
    assert_eq!(first["id"], 3);
    assert!(
        is_error_text(&first)
            .starts_with("Server busy: the server already has 1 calls running and 1 waiting")
    );
    // A ping is never held back by the limit.
    assert_eq!(
        client.request(json!(9), "ping", json!({})).await["result"],
        json!({})
    );
    assert_eq!(client.recv().await.unwrap()["id"], 1);
    assert_eq!(client.recv().await.unwrap()["id"], 2);
}

#[tokio::test]
async fn per_tool_limit_serialises_only_that_tool() {
    let server = server_with(
        ServerOptions::default(),
        vec![
            (Tool::new("one_at_a_time").max_concurrency(1), slow),
            (Tool::new("free"), slow),
        ],
    );
    let mut client = Client::initialized(&server).await;
    let start = tokio::time::Instant::now();
    client.send(&call(1, "one_at_a_time", json!({})));
    client.send(&call(2, "one_at_a_time", json!({})));
    client.send(&call(3, "free", json!({})));
    client.send(&call(4, "free", json!({})));
    let mut order = Vec::new();
    for _ in 0..4 {
        order.push(client.recv().await.unwrap()["id"].as_i64().unwrap());
    }
    // 1, 3 and 4 run together; 2 waits for 1.
    assert_eq!(order.last(), Some(&2), "{order:?}");
    assert!(start.elapsed() >= Duration::from_millis(400));
}

#[tokio::test]
async fn cancelling_a_queued_call_frees_its_place_at_once() {
    let server = one_running_one_waiting();
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "slow", json!({})));
    client.send(&call(2, "slow", json!({})));
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}),
    );
    // Well before call 1 ends (200 ms), the cancelled call has left the queue: the next one
    // waits instead of being refused.
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.send(&call(3, "slow", json!({})));
    let first = client.recv().await.unwrap();
    assert_eq!(first["id"], 1, "{first}");
    let second = client.recv().await.unwrap();
    assert_eq!(second["id"], 3);
    assert_eq!(second["result"]["content"][0]["text"], "done");
}

#[tokio::test]
async fn cancelling_a_call_drops_a_handler_that_ignores_it() {
    struct OnDrop(Arc<tokio::sync::Notify>);
    impl Drop for OnDrop {
        fn drop(&mut self) {
            self.0.notify_one();
        }
    }
    let dropped = Arc::new(tokio::sync::Notify::new());
    let server = Server::builder("test", "1")
        .tool(Tool::new("forever"), {
            let dropped = dropped.clone();
            move |_ctx: Context, _args: Value| {
                let guard = OnDrop(dropped.clone());
                async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                    Ok::<_, ToolError>(ToolOutput::text("never"))
                }
            }
        })
        .build()
        .expect("valid test server");
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "forever", json!({})));
    assert_eq!(
        client.request(json!(9), "ping", json!({})).await["result"],
        json!({})
    );
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    tokio::time::timeout(Duration::from_secs(5), dropped.notified())
        .await
        .expect("the cancelled handler's future is dropped");
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn cancelling_a_queued_call_frees_its_place() {
    let mut options = ServerOptions::default();
    options.max_concurrent_calls = 1;
    let server = server_with(options, vec![(Tool::new("slow"), slow)]);
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "slow", json!({})));
    client.send(&call(2, "slow", json!({})));
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 2}}),
    );
    assert_eq!(client.recv().await.unwrap()["id"], 1);
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn list_changed_is_coalesced_and_only_after_initialized() {
    let server = toolwire_demo::build_server().unwrap();
    let mut early = Client::new(&server);
    let mut client = Client::initialized(&server).await;
    // Let the initialized notification land before changing the registry.
    assert_eq!(
        client.request(json!(1), "ping", json!({})).await["result"],
        json!({})
    );
    let handler = |_ctx: Context, _args: Value| async { Ok::<_, ToolError>(ToolOutput::text("x")) };
    for name in ["extra_a", "extra_b", "extra_c"] {
        server.add_tool(Tool::new(name), handler).unwrap();
    }
    let note = client.recv().await.unwrap();
    assert_eq!(
        note,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"})
    );
    client
        .silent_for(Duration::from_millis(150))
        .await
        .expect("one notification per burst");
    let list = client.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(list["result"]["tools"].as_array().unwrap().len(), 7);

    assert!(server.remove_tool("extra_b"));
    assert!(!server.remove_tool("extra_b"));
    assert_eq!(
        client.recv().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
    let answer = client
        .request(json!(3), "tools/call", json!({"name": "extra_b"}))
        .await;
    assert_eq!(answer["error"]["code"], -32602);

    early
        .silent_for(Duration::from_millis(100))
        .await
        .expect("no notification before initialize");
}

#[tokio::test]
async fn panicking_handler_is_an_error_result_and_the_server_lives_on() {
    let server = Server::builder("test", "1")
        .tool(
            Tool::new("boom"),
            |_ctx: Context, _args: Value| async move {
                if true {
                    panic!("secret internal detail");
                }
                Ok::<_, ToolError>(ToolOutput::text("unreachable"))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let answer = client
        .request(json!(1), "tools/call", json!({"name": "boom"}))
        .await;
    let text = is_error_text(&answer);
    assert_eq!(text, "Tool \"boom\" failed with an internal error");
    assert!(!answer.to_string().contains("secret"));
    assert_eq!(
        client.request(json!(2), "ping", json!({})).await["result"],
        json!({})
    );
}

#[tokio::test]
async fn output_schema_is_enforced() {
    let schema =
        json!({"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]});
    let server = Server::builder("test", "1")
        .tool(
            Tool::new("wrong").output_schema(schema.clone()),
            |_ctx: Context, _a: Value| async {
                Ok::<_, ToolError>(ToolOutput::structured(json!({"n": "three"})))
            },
        )
        .tool(
            Tool::new("missing").output_schema(schema.clone()),
            |_ctx: Context, _a: Value| async {
                Ok::<_, ToolError>(ToolOutput::text("no structure"))
            },
        )
        .tool(
            Tool::new("failing").output_schema(schema),
            |_ctx: Context, _a: Value| async {
                Err::<ToolOutput, _>(ToolError::new("failed before producing output"))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let text = is_error_text(
        &client
            .request(json!(1), "tools/call", json!({"name": "wrong"}))
            .await,
    );
    assert!(
        text.contains("does not match its outputSchema") && text.contains("/n"),
        "{text}"
    );
    let text = is_error_text(
        &client
            .request(json!(2), "tools/call", json!({"name": "missing"}))
            .await,
    );
    assert!(text.contains("no structured content"), "{text}");
    let text = is_error_text(
        &client
            .request(json!(3), "tools/call", json!({"name": "failing"}))
            .await,
    );
    assert_eq!(text, "failed before producing output");
}

#[tokio::test]
async fn logs_follow_the_session_level_and_progress_only_increases() {
    let server = Server::builder("test", "1")
        .tool(
            Tool::new("chatty"),
            |ctx: Context, _args: Value| async move {
                ctx.log(LogLevel::Debug, "debug line");
                ctx.log_as(LogLevel::Warning, Some("db"), json!({"slow": true}));
                for p in [1.0, 1.0, 0.5, 2.0, f64::NAN] {
                    ctx.progress(p, Some(2.0), Some("working"));
                }
                Ok::<_, ToolError>(ToolOutput::text("ok"))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    client.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "chatty", "_meta": {"progressToken": "p"}}}));
    let frames = [
        client.recv().await.unwrap(),
        client.recv().await.unwrap(),
        client.recv().await.unwrap(),
        client.recv().await.unwrap(),
    ];
    assert_eq!(
        frames[0],
        json!({"jsonrpc": "2.0", "method": "notifications/message", "params": {"level": "warning", "logger": "db", "data": {"slow": true}}})
    );
    assert_eq!(
        frames[1]["params"],
        json!({"progressToken": "p", "progress": 1, "total": 2, "message": "working"})
    );
    assert_eq!(frames[2]["params"]["progress"], 2);
    assert_eq!(frames[3]["id"], 1);

    client
        .request(json!(2), "logging/setLevel", json!({"level": "debug"}))
        .await;
    client.send(&call(3, "chatty", json!({})));
    assert_eq!(client.recv().await.unwrap()["params"]["data"], "debug line");
    assert_eq!(client.recv().await.unwrap()["params"]["level"], "warning");
    assert_eq!(
        client.recv().await.unwrap()["id"],
        3,
        "no progress without a token"
    );
    assert!(client.finish().await.is_empty());
}

#[tokio::test]
async fn registration_errors_are_clear() {
    let noop = |_ctx: Context, _args: Value| async { Ok::<_, ToolError>(ToolOutput::text("")) };
    let build = |tool: Tool| Server::builder("t", "1").tool(tool, noop).build();
    assert!(matches!(
        build(Tool::new("has space")),
        Err(Error::InvalidToolName { .. })
    ));
    assert!(matches!(
        build(Tool::new("")),
        Err(Error::InvalidToolName { .. })
    ));
    let err = build(Tool::new("t").input_schema(json!({"type": "array"}))).unwrap_err();
    assert!(err.to_string().contains("inputSchema"), "{err}");
    let err = build(
        Tool::new("t")
            .input_schema(json!({"type": "object", "$schema": "https://example.com/mine"})),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("unsupported JSON Schema dialect"),
        "{err}"
    );
    let err = build(
        Tool::new("t").output_schema(json!({"type": "object", "properties": {"a": {"type": 5}}})),
    )
    .unwrap_err();
    assert!(err.to_string().contains("outputSchema"), "{err}");
    let err = build(Tool::new("t").input_schema(
        json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/remote.json"}}}),
    ))
    .unwrap_err();
    assert!(
        matches!(err, Error::InvalidSchema { .. }),
        "network $ref must not be fetched: {err}"
    );
    assert!(matches!(
        build(Tool::new("t").max_concurrency(0)),
        Err(Error::InvalidArgument(_))
    ));
    let server = Server::builder("t", "1")
        .tool(Tool::new("dup"), noop)
        .build()
        .unwrap();
    assert!(matches!(
        server.add_tool(Tool::new("dup"), noop),
        Err(Error::DuplicateTool { .. })
    ));
    assert_eq!(server.tool_names(), vec!["dup"]);
}

#[tokio::test]
async fn sessions_are_isolated() {
    let server = toolwire_demo::build_server().unwrap();
    let mut a = Client::new(&server);
    let mut b = Client::new(&server);
    a.initialize("2025-11-25", json!({})).await;
    b.initialize("2025-06-18", json!({})).await;
    a.send(&call(1, "sleep", json!({"ms": 200})));
    b.send(&call(1, "sleep", json!({"ms": 5000})));
    // b cancels its id 1; a's id 1 is unaffected.
    b.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    assert_eq!(
        a.recv().await.unwrap()["result"]["content"][0]["text"],
        "slept 200 ms"
    );
    assert_eq!(a.session.protocol_version().unwrap().as_str(), "2025-11-25");
    assert_eq!(b.session.protocol_version().unwrap().as_str(), "2025-06-18");
    assert!(b.finish().await.is_empty());
    assert!(a.finish().await.is_empty());
}

#[tokio::test]
async fn shutdown_drains_then_cancels_past_the_deadline() {
    let mut options = ServerOptions::default();
    options.drain_timeout = Duration::from_millis(300);
    let server = toolwire_demo::build_server_with(options).unwrap();
    let client = Client::initialized(&server).await;
    client.send(&call(1, "sleep", json!({"ms": 100})));
    client.send(&call(2, "sleep", json!({"ms": 10_000})));
    let start = tokio::time::Instant::now();
    let rest = client.finish().await;
    // The short call's answer is delivered; the long one is cancelled at the deadline.
    assert_eq!(rest.len(), 1, "{rest:?}");
    assert!(rest[0].contains("slept 100 ms"));
    assert!(start.elapsed() < Duration::from_secs(2));
}

#[tokio::test]
async fn many_concurrent_calls_all_answered() {
    let server = toolwire_demo::build_server().unwrap();
    let mut client = Client::initialized(&server).await;
    let n = 2000;
    for id in 0..n {
        client.send(&call(id, "echo", json!({"text": format!("m{id}")})));
    }
    let mut ids = std::collections::HashSet::new();
    for _ in 0..n {
        let answer = client.recv().await.unwrap();
        let id = answer["id"].as_i64().unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], format!("m{id}"));
        ids.insert(id);
    }
    assert_eq!(ids.len(), n as usize);
}

#[tokio::test]
async fn dropping_a_session_ends_its_outbound_stream() {
    let server = toolwire_demo::build_server().unwrap();
    let (session, mut outbound) = server.session().unwrap();
    session.handle_frame(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    drop(session);
    assert_eq!(
        outbound.recv().await.as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
    );
    let end = tokio::time::timeout(Duration::from_secs(2), outbound.recv()).await;
    assert_eq!(
        end,
        Ok(None),
        "the stream must end once the session is gone"
    );
}

#[tokio::test]
async fn serve_until_stops_reading_and_drains() {
    let server = toolwire_demo::build_server().unwrap();
    let (ours, theirs) = toolwire::transport::memory::pair();
    let stop = toolwire::CancellationToken::new();
    let serve = tokio::spawn({
        let server = server.clone();
        let stop = stop.clone();
        async move { server.serve_until(theirs, stop).await }
    });
    let (tx, mut rx) = ours.into_parts();
    tx.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#.to_vec());
    rx.recv().await.unwrap();
    tx.send(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}}"#.to_vec());
    tokio::time::sleep(Duration::from_millis(50)).await;
    stop.cancel();
    // The call in flight still finishes and is answered; then serving ends with the input open.
    let answer: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "slept 200 ms");
    tokio::time::timeout(Duration::from_secs(2), serve)
        .await
        .expect("serve ended")
        .unwrap()
        .unwrap();
    drop(tx);
}

/// A runtime for a host-driven session, whose frames the test thread feeds.
fn host_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// `initialize` and `notifications/initialized` fed straight into a session.
fn initialize_hosted(session: &toolwire::Session) {
    session.handle_frame(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "host", "version": "1"}}})
        .to_string()
        .as_bytes(),
    );
    session.handle_frame(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

/// A host that feeds frames from its own thread (no tokio context there) and takes answers
/// with `try_recv`: quick calls are answered before `handle_frame` returns; answers produced
/// later on the runtime ring the host's notifier.
#[test]
fn host_driven_session_answers_inline_and_notifies_later() {
    let runtime = host_runtime();
    let server = toolwire_demo::build_server().unwrap();
    let (rang, rung) = std::sync::mpsc::channel::<()>();
    let hooks = toolwire::host::HostHooks {
        notify: Box::new(move || {
            let _ = rang.send(());
        }),
        spawn_call: None,
    };
    let (session, mut outbound) =
        toolwire::Session::hosted(&server, runtime.handle().clone(), hooks);
    let take = |outbound: &mut toolwire::Outbound| -> Value {
        let frame = outbound.try_recv().expect("a frame is ready");
        serde_json::from_str(&frame).unwrap()
    };
    initialize_hosted(&session);
    assert_eq!(take(&mut outbound)["id"], 0);
    session.handle_frame(
        call(1, "echo", json!({"text": "now"}))
            .to_string()
            .as_bytes(),
    );
    let answer = take(&mut outbound);
    assert_eq!(answer["result"]["content"][0]["text"], "now");
    assert!(outbound.try_recv().is_none());
    while rung.try_recv().is_ok() {}

    session.handle_frame(call(2, "sleep", json!({"ms": 20})).to_string().as_bytes());
    assert!(
        outbound.try_recv().is_none(),
        "a sleeping call is not answered inline"
    );
    rung.recv_timeout(Duration::from_secs(5))
        .expect("the notifier rings when the answer is queued");
    assert_eq!(take(&mut outbound)["id"], 2);
}

/// With `spawn_call`, a call that is pending after its first poll is handed to the host, which
/// runs it (here: to completion on the test thread); the engine never spawns it itself.
#[test]
fn hosted_session_hands_pending_calls_to_the_host() {
    let runtime = host_runtime();
    let server = toolwire_demo::build_server().unwrap();
    let handed = Arc::new(std::sync::Mutex::new(Vec::<toolwire::host::CallTask>::new()));
    let hooks = toolwire::host::HostHooks {
        notify: Box::new(|| {}),
        spawn_call: Some(Box::new({
            let handed = handed.clone();
            move |task| handed.lock().unwrap().push(task)
        })),
    };
    let (session, mut outbound) =
        toolwire::Session::hosted(&server, runtime.handle().clone(), hooks);
    initialize_hosted(&session);
    assert!(outbound.try_recv().is_some());
    session.handle_frame(
        call(1, "echo", json!({"text": "now"}))
            .to_string()
            .as_bytes(),
    );
    assert!(
        outbound.try_recv().is_some(),
        "a quick call needs no host task"
    );
    session.handle_frame(call(2, "sleep", json!({"ms": 20})).to_string().as_bytes());
    let task = handed
        .lock()
        .unwrap()
        .pop()
        .expect("the pending call was handed over");
    std::thread::sleep(Duration::from_millis(40));
    assert!(outbound.try_recv().is_none(), "nobody ran the task yet");
    runtime.block_on(task);
    let answer: Value = serde_json::from_str(&outbound.try_recv().unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "slept 20 ms");
}

/// `LocalExecutor`: pending calls handed over by `spawn_call` are polled by the host on its
/// own thread; a wake-up from the runtime (the sleep's timer) rings, and `run_ready` then
/// finishes the call there.
#[test]
fn local_executor_polls_handed_calls_on_the_host_thread() {
    let runtime = host_runtime();
    let server = toolwire_demo::build_server().unwrap();
    let (rang, rung) = std::sync::mpsc::channel::<()>();
    let executor = toolwire::host::LocalExecutor::new(move || {
        let _ = rang.send(());
    });
    let hooks = toolwire::host::HostHooks {
        notify: Box::new(|| {}),
        spawn_call: Some(Box::new({
            let executor = executor.clone();
            move |task| executor.spawn(task)
        })),
    };
    let (session, mut outbound) =
        toolwire::Session::hosted(&server, runtime.handle().clone(), hooks);
    initialize_hosted(&session);
    assert!(outbound.try_recv().is_some());
    session.handle_frame(call(1, "sleep", json!({"ms": 20})).to_string().as_bytes());
    assert!(
        executor.has_work(),
        "the handed call waits for its first real poll"
    );
    let _runtime = runtime.enter();
    // The first real poll registers the timer's wake-up; nothing is answered yet.
    while rung.try_recv().is_ok() {}
    assert!(executor.run_ready());
    assert!(!executor.has_work());
    assert!(outbound.try_recv().is_none());
    rung.recv_timeout(Duration::from_secs(5))
        .expect("the timer's wake-up rings the host");
    assert!(executor.run_ready());
    let answer: Value = serde_json::from_str(&outbound.try_recv().unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "slept 20 ms");
    assert!(!executor.run_ready(), "nothing is left to poll");
}

/// CPU time this thread has used so far (`/proc/thread-self/stat`, in clock ticks of 10 ms).
fn this_thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// After each frame the serve loop looks for the next one for a while before the runtime
/// sleeps (`ServerOptions::idle_poll`): a client calling in a tight loop keeps it looking, and
/// once the client falls quiet it must stop within the ceiling, not spin on.
#[tokio::test(flavor = "current_thread")]
async fn a_served_client_that_falls_quiet_costs_no_cpu() {
    let server = toolwire_demo::build_server().unwrap();
    let (ours, theirs) = toolwire::transport::memory::pair();
    let serve = tokio::spawn({
        let server = server.clone();
        async move { server.serve(theirs).await }
    });
    // The client runs on a thread of its own, calling `echo` with 100 µs between answer and
    // request, the pace that grows the window to its ceiling.
    let client = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let (tx, mut rx) = ours.into_parts();
            tx.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#.to_vec());
            rx.recv().await.unwrap();
            for id in 1..=300 {
                tx.send(call(id, "echo", json!({"text": "hi"})).to_string());
                let answer: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
                assert_eq!(answer["id"], id);
                std::thread::sleep(Duration::from_micros(100));
            }
            (tx, rx)
        })
    });
    while !client.is_finished() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let (tx, _rx) = client.join().unwrap();
    // The client is quiet now (its input still open): this thread, which runs the serve loop,
    // must go to sleep.
    let before = this_thread_cpu();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let spent = this_thread_cpu() - before;
    assert!(
        spent <= Duration::from_millis(50),
        "the serve loop kept the thread busy for {spent:?} of 400 ms with no input"
    );
    drop(tx);
    tokio::time::timeout(Duration::from_secs(5), serve)
        .await
        .expect("serving ends with the input")
        .unwrap()
        .unwrap();
}
