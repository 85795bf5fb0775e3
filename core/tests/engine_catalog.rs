//! The tool registry: `list_changed` after changes at run time, and clear errors for tools
//! that cannot be registered.

mod common;

use std::time::Duration;

use common::Client;
use serde_json::{Value, json};
use toolwire::{Context, Error, Server, Tool, ToolError, ToolOutput};

/// Changes are coalesced over a time window (`list_changed_debounce`, 50 ms), so the "nothing
/// else came" checks wait a while. In paused time that wait is exact: the clock moves only once
/// every task waits, so whatever the sessions' watchers would send within the window has been
/// sent by the time it closes, however busy the machine is.
#[tokio::test(start_paused = true)]
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

/// A change made after a session opened but before its watcher first ran is still announced:
/// on this one-thread runtime nothing runs until the test awaits, so the watcher starts only
/// after the resource was added.
#[tokio::test(start_paused = true)]
async fn a_change_before_the_watcher_first_runs_is_announced() {
    let server = Server::builder("t", "1").build().unwrap();
    let mut client = Client::new(&server);
    client.send(&json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}));
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    server
        .add_resource(
            toolwire::Resource::new("memo://new", "new"),
            |request: toolwire::ResourceRequest| async move {
                Ok::<_, ToolError>(vec![toolwire::ResourceContents::text(
                    request.uri,
                    None,
                    "new",
                )])
            },
        )
        .unwrap();
    assert_eq!(client.recv().await.unwrap()["id"], 0);
    assert_eq!(
        client.recv().await.unwrap()["method"],
        "notifications/resources/list_changed"
    );
}

/// One task tells every session of the server's changes: each hears them. It stops with the
/// last session and starts again with the next, which hears the next change as the first did.
#[tokio::test(start_paused = true)]
async fn every_session_hears_a_change_and_the_next_session_after_all_ended_does_too() {
    let server = Server::builder("t", "1").build().unwrap();
    let handler = |_ctx: Context, _args: Value| async { Ok::<_, ToolError>(ToolOutput::text("x")) };
    let mut first = Client::initialized(&server).await;
    let mut second = Client::initialized(&server).await;
    server.add_tool(Tool::new("added"), handler).unwrap();
    for client in [&mut first, &mut second] {
        assert_eq!(
            client.recv().await.unwrap()["method"],
            "notifications/tools/list_changed"
        );
    }
    first.finish().await;
    drop(second);
    let mut third = Client::initialized(&server).await;
    assert!(server.remove_tool("added"));
    assert_eq!(
        third.recv().await.unwrap()["method"],
        "notifications/tools/list_changed"
    );
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

/// A resource, prompt or completion handler that fails with a protocol error answers with its
/// own JSON-RPC code (e.g. -32602 for arguments its schema refused), through a native handler
/// and through the JSON calling convention the bindings use (`{"protocolError": …}`); any
/// other failure stays -32603, and a malformed `protocolError` says so.
#[tokio::test]
async fn handler_protocol_errors_keep_their_code() {
    use toolwire::host::{JsonCallback, ViaJson};
    use toolwire::{Prompt, PromptArgument, PromptRequest, PromptResult};

    struct Answers;
    #[async_trait::async_trait]
    impl JsonCallback for Answers {
        async fn call(&self, request: Value) -> Result<Value, ToolError> {
            Ok(match request["arguments"]["mode"].as_str() {
                Some("bad") => {
                    json!({"protocolError": {"code": -32602, "message": "mode: one of a, b"}})
                }
                Some("malformed") => json!({"protocolError": {"code": "x"}}),
                _ => json!({"error": "plain failure"}),
            })
        }
    }
    let server = Server::builder("t", "1")
        .prompt(
            Prompt::new("native").argument(PromptArgument::new("mode", true)),
            |_request: PromptRequest| async move {
                Err::<PromptResult, _>(ToolError::protocol(
                    -32602,
                    "Invalid arguments for prompt native",
                ))
            },
        )
        .prompt(
            Prompt::new("json").argument(PromptArgument::new("mode", true)),
            ViaJson(Answers),
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let get = |name: &str, mode: &str| json!({"name": name, "arguments": {"mode": mode}});
    let native = client
        .request(json!(1), "prompts/get", get("native", "x"))
        .await;
    assert_eq!(native["error"]["code"], -32602, "{native}");
    assert_eq!(
        native["error"]["message"],
        "Invalid arguments for prompt native"
    );
    let bad = client
        .request(json!(2), "prompts/get", get("json", "bad"))
        .await;
    assert_eq!(
        bad["error"],
        json!({"code": -32602, "message": "mode: one of a, b"})
    );
    let plain = client
        .request(json!(3), "prompts/get", get("json", "other"))
        .await;
    assert_eq!(plain["error"]["code"], -32603, "{plain}");
    assert_eq!(
        plain["error"]["message"],
        "Prompt \"json\" failed: plain failure"
    );
    let malformed = client
        .request(json!(4), "prompts/get", get("json", "malformed"))
        .await;
    assert_eq!(malformed["error"]["code"], -32603, "{malformed}");
    let message = malformed["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("protocolError"), "{malformed}");
}

/// Resource reads, prompts and completions get a context as tools do: the client's info,
/// progress to the request's token, and cancellation (`notifications/cancelled` reaches the
/// handler, and the request is then not answered).
#[tokio::test]
async fn resources_prompts_and_completions_get_a_context() {
    use toolwire::{
        Completion, CompletionRequest, Prompt, PromptArgument, PromptMessage, PromptRequest,
        PromptResult, Reference, Resource, ResourceContents, ResourceRequest,
    };
    let reached = std::sync::Arc::new(tokio::sync::Notify::new());
    let reached_by_read = reached.clone();
    let server = Server::builder("t", "1")
        .prompt(
            Prompt::new("hello").argument(PromptArgument::new("who", false)),
            |request: PromptRequest| async move {
                let ctx = request.ctx.expect("a context");
                ctx.progress(1.0, Some(2.0), Some("half"));
                let client = ctx
                    .client_info()
                    .map(|c| c.name.clone())
                    .unwrap_or_default();
                Ok(PromptResult::new(vec![PromptMessage::user(
                    toolwire::Content::text(format!("hello from {client} ({})", ctx.tool_name())),
                )]))
            },
        )
        .resource(
            Resource::new("memo://slow", "slow"),
            move |request: ResourceRequest| {
                // Dropped with the handler: a cancelled read's handler is dropped, as a tool's.
                let dropped = NotifyOnDrop(reached_by_read.clone());
                async move {
                    let _dropped = dropped;
                    let ctx = request.ctx.expect("a context");
                    ctx.cancelled().await;
                    Ok(vec![ResourceContents::text(
                        "memo://slow",
                        None,
                        "too late",
                    )])
                }
            },
        )
        .completer(
            Reference::Prompt("hello".into()),
            |request: CompletionRequest| async move {
                let ctx = request.ctx.expect("a context");
                Ok(Completion::new(vec![format!(
                    "{}:{}",
                    ctx.tool_name(),
                    request.value
                )]))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;

    let params = json!({"name": "hello", "arguments": {}, "_meta": {"progressToken": "p"}});
    client.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "prompts/get", "params": params}));
    let progress = client.recv().await.unwrap();
    assert_eq!(
        progress["params"],
        json!({"progressToken": "p", "progress": 1, "total": 2, "message": "half"})
    );
    let answer = client.recv().await.unwrap();
    assert_eq!(
        answer["result"]["messages"][0]["content"]["text"],
        "hello from vector-runner (hello)"
    );

    // The cancel reaches the read's handler (it is dropped), and the read is not answered.
    let read = json!({"jsonrpc": "2.0", "id": 2, "method": "resources/read", "params": {"uri": "memo://slow"}});
    client.send(&read);
    client.send(&common::cancel(2));
    reached.notified().await;

    let completion = client
        .request(
            json!(4),
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "hello"}, "argument": {"name": "who", "value": "a"}}),
        )
        .await;
    assert_eq!(
        completion["result"]["completion"]["values"],
        json!(["who:a"])
    );
    let rest = client.finish().await;
    assert!(
        !rest.iter().any(|frame| frame.contains("too late")),
        "{rest:?}"
    );
}

/// Notifies when dropped.
struct NotifyOnDrop(std::sync::Arc<tokio::sync::Notify>);

impl Drop for NotifyOnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// A prompt's `argumentsSchema`: arguments read from it, checked before the handler runs
/// (-32602 naming each one), an `enum` completing its argument with no completer, and a schema
/// that names an unlisted argument refused at registration.
#[tokio::test]
async fn prompt_arguments_schema_checks_and_completes() {
    let schema = json!({
        "type": "object",
        "properties": {
            "city": {"type": "string", "minLength": 2, "description": "Where"},
            "unit": {"$ref": "#/$defs/Unit"},
        },
        "required": ["city"],
        "$defs": {"Unit": {"type": "string", "enum": ["C", "F", "K"]}},
    });
    let rendered = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = rendered.clone();
    let server = Server::builder("t", "1").build().unwrap();
    server
        .add_prompt(
            toolwire::Prompt::new("trip").arguments_schema(schema.clone()),
            move |request: toolwire::PromptRequest| {
                count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                async move {
                    Ok::<_, ToolError>(toolwire::PromptResult::new(vec![
                        toolwire::PromptMessage::user(toolwire::Content::text(format!(
                            "{:?}",
                            request.arguments
                        ))),
                    ]))
                }
            },
        )
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let listed = client.request(json!(1), "prompts/list", json!({})).await;
    assert_eq!(
        listed["result"]["prompts"],
        json!([{"name": "trip", "arguments": [
            {"name": "city", "description": "Where", "required": true},
            {"name": "unit", "required": false},
        ]}]),
        "arguments come from the schema, which is never listed"
    );
    let refused = client
        .request(
            json!(2),
            "prompts/get",
            json!({"name": "trip", "arguments": {"city": "O", "unit": "X"}}),
        )
        .await;
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Invalid arguments for prompt \"trip\":")
            && message.contains("at /city")
            && message.contains("at /unit"),
        "{message}"
    );
    assert_eq!(rendered.load(std::sync::atomic::Ordering::SeqCst), 0);
    let ok = client
        .request(
            json!(3),
            "prompts/get",
            json!({"name": "trip", "arguments": {"city": "Oslo", "unit": "K"}}),
        )
        .await;
    assert!(ok["result"]["messages"].is_array(), "{ok}");
    let completed = client
        .request(
            json!(4),
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "trip"}, "argument": {"name": "unit", "value": ""}}),
        )
        .await;
    assert_eq!(
        completed["result"]["completion"],
        json!({"values": ["C", "F", "K"], "hasMore": false})
    );
    let none = client
        .request(
            json!(5),
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "trip"}, "argument": {"name": "city", "value": "O"}}),
        )
        .await;
    assert_eq!(none["result"]["completion"]["values"], json!([]));

    let unlisted = server
        .add_prompt(
            toolwire::Prompt::new("other")
                .argument(toolwire::PromptArgument::new("city", true))
                .arguments_schema(schema),
            |_request: toolwire::PromptRequest| async {
                Ok::<_, ToolError>(toolwire::PromptResult::new(vec![]))
            },
        )
        .unwrap_err();
    assert!(
        unlisted
            .to_string()
            .contains("\"unit\" is not one of the prompt's arguments"),
        "{unlisted}"
    );
    let not_object = server
        .add_prompt(
            toolwire::Prompt::new("bad").arguments_schema(json!({"type": "string"})),
            |_request: toolwire::PromptRequest| async {
                Ok::<_, ToolError>(toolwire::PromptResult::new(vec![]))
            },
        )
        .unwrap_err();
    assert!(
        not_object.to_string().contains("argumentsSchema"),
        "{not_object}"
    );
}
