//! The 2026-07-28 era through the bring-your-own-transport entry point: MRTR rounds both ways
//! (a handler that returns `InputRequired`, and `ctx.elicit` that asks and comes back), the
//! sealed state, per-request capabilities and log level, and listen streams.

mod common;

use std::time::Duration;

use common::{Client, matches};
use serde_json::{Value, json};
use toolwire::{
    Context, InputRequired, LogLevel, Prompt, PromptMessage, PromptRequest, PromptResult,
    RequestOptions, Resource, ResourceContents, ResourceRequest, Server, ServerOptions, StateKeys,
    Tool, ToolOutput,
};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";
const LL: &str = "io.modelcontextprotocol/logLevel";
const SUB: &str = "io.modelcontextprotocol/subscriptionId";

fn meta(caps: Value) -> Value {
    json!({PV: "2026-07-28", CC: caps})
}

fn call(id: i64, name: &str, extra: Value) -> Value {
    let mut params = json!({"name": name, "arguments": {}, "_meta": meta(json!({"elicitation": {}, "sampling": {}}))});
    if let (Some(params), Value::Object(extra)) = (params.as_object_mut(), extra) {
        params.extend(extra);
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn name_question() -> Value {
    json!({"message": "Name?", "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}})
}

fn server_with_keys(keys: Option<StateKeys>) -> Server {
    let mut options = ServerOptions::default();
    options.request_state_keys = keys;
    options.list_changed_debounce = Duration::from_millis(5);
    Server::builder("modern", "1")
        .options(options)
        .tool(
            Tool::new("greet"),
            |ctx: Context, _args: Value| async move {
                // Replay style: the same line asks in round 1 and has its answer in round 2.
                let answer = ctx
                    .elicit(name_question(), RequestOptions::default())
                    .await?;
                let color = ctx
                    .elicit(json!({"message": "Color?"}), RequestOptions::default())
                    .await?;
                Ok(ToolOutput::text(format!(
                    "{} likes {}",
                    answer["content"]["name"].as_str().unwrap_or("?"),
                    color["content"]["c"].as_str().unwrap_or("?")
                )))
            },
        )
        .tool(
            Tool::new("stateful"),
            |ctx: Context, _args: Value| async move {
                match (ctx.request_state(), ctx.input_response("ok")) {
                    (Some("step-1"), Some(_)) => Ok(ToolOutput::text("done")),
                    _ => Err(InputRequired::new()
                        .elicit("ok", json!({"message": "OK?"}))
                        .state("step-1")
                        .into()),
                }
            },
        )
        .tool(
            Tool::new("swallow"),
            |ctx: Context, _args: Value| async move {
                // A handler that ignores the error still gets its question asked.
                let _ = ctx
                    .sample(
                        json!({"messages": [], "maxTokens": 5}),
                        RequestOptions::default(),
                    )
                    .await;
                Ok(ToolOutput::text("swallowed"))
            },
        )
        .tool(
            Tool::new("fallback"),
            |ctx: Context, _args: Value| async move {
                // Written for both eras: without sampling it answers on its own.
                match ctx
                    .sample(
                        json!({"messages": [], "maxTokens": 5}),
                        RequestOptions::default(),
                    )
                    .await
                {
                    Ok(_) => Ok(ToolOutput::text("sampled")),
                    Err(toolwire::Error::CapabilityNotSupported { .. }) => {
                        Ok(ToolOutput::text("fell back"))
                    }
                    Err(err) => Err(err.into()),
                }
            },
        )
        .tool(
            Tool::new("needs"),
            |ctx: Context, _args: Value| async move {
                ctx.sample(
                    json!({"messages": [], "maxTokens": 5}),
                    RequestOptions::default(),
                )
                .await?;
                Ok(ToolOutput::text("sampled"))
            },
        )
        .tool(Tool::new("pair"), |ctx: Context, _args: Value| async move {
            // The batch form: both questions in one round.
            let answers = ctx
                .ask_all(
                    vec![
                        ("elicitation/create".to_owned(), name_question()),
                        (
                            "sampling/createMessage".to_owned(),
                            json!({"messages": [], "maxTokens": 5}),
                        ),
                    ],
                    RequestOptions::default(),
                )
                .await?;
            Ok(ToolOutput::text(format!(
                "{} / {}",
                answers[0]["content"]["name"].as_str().unwrap_or("?"),
                answers[1]["content"]["text"].as_str().unwrap_or("?")
            )))
        })
        .tool(Tool::new("odd"), |ctx: Context, _args: Value| async move {
            let asked = ctx
                .ask_all(
                    vec![("tools/list".to_owned(), json!({}))],
                    RequestOptions::default(),
                )
                .await;
            Ok(ToolOutput::text(match asked {
                Err(toolwire::Error::InvalidArgument(why)) => why,
                other => format!("unexpected {other:?}"),
            }))
        })
        .tool(Tool::new("logs"), |ctx: Context, _args: Value| async move {
            ctx.log(LogLevel::Debug, "d");
            ctx.log(LogLevel::Warning, "w");
            Ok(ToolOutput::text("logged"))
        })
        .tool(
            Tool::new("trace"),
            |ctx: Context, _args: Value| async move {
                Ok(ToolOutput::text(
                    ctx.trace_context().traceparent.unwrap_or_default(),
                ))
            },
        )
        .resource(
            Resource::new("test://r", "r"),
            |request: ResourceRequest| async move {
                Ok(vec![ResourceContents::text(request.uri, None, "r")])
            },
        )
        .prompt(Prompt::new("p"), |request: PromptRequest| async move {
            match request.input_responses.get("ctx") {
                Some(answer) => Ok(PromptResult::new(vec![PromptMessage::user(
                    toolwire::Content::text(answer["content"]["v"].as_str().unwrap_or("?")),
                )])),
                None => Err(InputRequired::new()
                    .elicit("ctx", json!({"message": "Context?"}))
                    .into()),
            }
        })
        .build()
        .expect("valid server")
}

fn server() -> Server {
    server_with_keys(None)
}

async fn answer(client: &mut Client, message: Value) -> Value {
    client.send(&message);
    client.recv().await.expect("an answer")
}

#[tokio::test]
async fn a_replayed_elicit_advances_one_question_per_round() {
    let server = server();
    let mut client = Client::new(&server);
    let first = answer(&mut client, call(1, "greet", json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    assert!(
        first["result"].get("requestState").is_none(),
        "nothing to carry yet"
    );
    let requests = first["result"]["inputRequests"]
        .as_object()
        .expect("requests");
    let (name_key, request) = requests.iter().next().expect("one question");
    assert_eq!(request["method"], "elicitation/create");
    assert_eq!(request["params"], name_question());

    let name = json!({"action": "accept", "content": {"name": "Ann"}});
    let second = answer(
        &mut client,
        call(2, "greet", json!({"inputResponses": {name_key: name}})),
    )
    .await;
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    let state = second["result"]["requestState"]
        .as_str()
        .expect("the name travels in the state");
    let color_key = second["result"]["inputRequests"]
        .as_object()
        .expect("requests")
        .keys()
        .next()
        .expect("key")
        .clone();
    assert_ne!(&color_key, name_key);

    // Round 3 answers only the new question; the first answer comes from the sealed state.
    let third = answer(
        &mut client,
        call(
            3,
            "greet",
            json!({
                "inputResponses": {color_key: {"action": "accept", "content": {"c": "blue"}}},
                "requestState": state,
            }),
        ),
    )
    .await;
    assert_eq!(
        third["result"]["content"][0]["text"], "Ann likes blue",
        "{third}"
    );
    assert_eq!(third["result"]["resultType"], "complete");
}

#[tokio::test]
async fn the_batch_form_asks_every_missing_question_in_one_round() {
    let server = server();
    let mut client = Client::new(&server);
    let first = answer(&mut client, call(1, "pair", json!({}))).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let requests = first["result"]["inputRequests"]
        .as_object()
        .expect("requests");
    assert_eq!(requests.len(), 2, "both questions at once: {first}");
    let key_of = |method: &str| {
        requests
            .iter()
            .find(|(_, request)| request["method"] == method)
            .map(|(key, _)| key.clone())
            .expect("asked")
    };
    let (name_key, sample_key) = (
        key_of("elicitation/create"),
        key_of("sampling/createMessage"),
    );

    // Only one answered: the other is asked again, alone; the answer given is kept.
    let name = json!({"action": "accept", "content": {"name": "Ann"}});
    let second = answer(
        &mut client,
        call(
            2,
            "pair",
            json!({"inputResponses": {name_key.clone(): name}}),
        ),
    )
    .await;
    assert_eq!(second["result"]["resultType"], "input_required", "{second}");
    let again = second["result"]["inputRequests"]
        .as_object()
        .expect("requests");
    assert_eq!(
        again.keys().collect::<Vec<_>>(),
        vec![&sample_key],
        "{second}"
    );
    let state = second["result"]["requestState"]
        .as_str()
        .expect("the name travels in the state");

    let sampled =
        json!({"role": "assistant", "content": {"type": "text", "text": "hi"}, "model": "m"});
    let third = answer(
        &mut client,
        call(
            3,
            "pair",
            json!({"inputResponses": {sample_key: sampled}, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(third["result"]["content"][0]["text"], "Ann / hi", "{third}");

    // A method that is no question for the client is refused before anything is asked.
    let odd = answer(&mut client, call(4, "odd", json!({}))).await;
    let text = odd["result"]["content"][0]["text"].as_str().unwrap_or("");
    assert!(text.contains("\"tools/list\" is not a question"), "{odd}");
}

#[tokio::test]
async fn state_is_verified_and_bound_to_its_request() {
    let server = server();
    let mut client = Client::new(&server);
    let first = answer(&mut client, call(1, "stateful", json!({}))).await;
    let state = first["result"]["requestState"]
        .as_str()
        .expect("state")
        .to_owned();
    assert_ne!(state, "step-1", "the client sees ciphertext only");
    let ok = json!({"ok": {"action": "accept"}});
    let done = answer(
        &mut client,
        call(
            2,
            "stateful",
            json!({"inputResponses": ok, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");

    let refused = json!({"jsonrpc": "2.0", "id": 3, "error": {"code": -32602, "message": "Invalid or expired requestState"}});
    let tampered = answer(
        &mut client,
        call(
            3,
            "stateful",
            json!({"inputResponses": ok, "requestState": format!("{state}-TAMPERED")}),
        ),
    )
    .await;
    assert!(matches(&refused, &tampered), "{tampered}");
    // The same state on another tool, or with other arguments, does not open.
    let elsewhere = answer(
        &mut client,
        call(3, "greet", json!({"requestState": state})),
    )
    .await;
    assert!(matches(&refused, &elsewhere), "{elsewhere}");
    let mut other_args = call(
        3,
        "stateful",
        json!({"inputResponses": ok, "requestState": state}),
    );
    other_args["params"]["arguments"] = json!({"x": 1});
    assert!(matches(&refused, &answer(&mut client, other_args).await));
}

#[tokio::test]
async fn shared_keys_open_state_across_servers_and_rotation_keeps_it_open() {
    let old = StateKeys::from_secrets(&["a".repeat(32)]).expect("keys");
    let rotated = StateKeys::from_secrets(&["b".repeat(32), "a".repeat(32)]).expect("keys");
    let mut one = Client::new(&server_with_keys(Some(old)));
    let first = answer(&mut one, call(1, "stateful", json!({}))).await;
    let state = first["result"]["requestState"].clone();
    let mut other = Client::new(&server_with_keys(Some(rotated)));
    let done = answer(
        &mut other,
        call(
            2,
            "stateful",
            json!({"inputResponses": {"ok": {"action": "accept"}}, "requestState": state}),
        ),
    )
    .await;
    assert_eq!(done["result"]["content"][0]["text"], "done", "{done}");
    // An ephemeral key of another process does not.
    let mut stranger = Client::new(&server());
    let refused = answer(&mut stranger, call(2, "stateful", json!({"inputResponses": {"ok": {"action": "accept"}}, "requestState": first["result"]["requestState"]}))).await;
    assert_eq!(refused["error"]["code"], -32602);
}

#[tokio::test]
async fn undeclared_capabilities_are_never_asked_for() {
    let server = server();
    let mut client = Client::new(&server);
    // The handler lets the error end it: the engine answers -32021 naming sampling.
    let mut request = call(1, "needs", json!({}));
    request["params"]["_meta"] = meta(json!({}));
    let refused = answer(&mut client, request).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    // With sampling declared, the swallowed question is asked anyway.
    let asked = answer(&mut client, call(2, "swallow", json!({}))).await;
    assert_eq!(asked["result"]["resultType"], "input_required", "{asked}");
    // A low-level answer whose every question is of an undeclared kind: -32021 too (its state
    // alone would only bring the client back to the same question).
    let mut request = call(3, "stateful", json!({}));
    request["params"]["_meta"] = meta(json!({"sampling": {}}));
    let refused = answer(&mut client, request).await;
    assert_eq!(
        refused["error"]["data"]["requiredCapabilities"],
        json!({"elicitation": {}}),
        "{refused}"
    );
}

#[tokio::test]
async fn a_handler_that_falls_back_keeps_its_answer() {
    let server = server();
    let mut client = Client::new(&server);
    let mut request = call(1, "fallback", json!({}));
    request["params"]["_meta"] = meta(json!({}));
    let answer = answer(&mut client, request).await;
    assert_eq!(
        answer["result"]["content"][0]["text"], "fell back",
        "{answer}"
    );
}

#[tokio::test]
async fn a_failed_probe_leaves_the_connection_free_to_initialize() {
    let server = server();
    let mut client = Client::new(&server);
    let mut probe = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": meta(json!({}))}});
    probe["params"]["_meta"][PV] = json!("2099-01-01");
    assert_eq!(answer(&mut client, probe).await["error"]["code"], -32022);
    let init = client.initialize("2025-11-25", json!({})).await;
    assert_eq!(init["result"]["protocolVersion"], "2025-11-25", "{init}");
}

#[tokio::test]
async fn prompts_answer_input_required_too() {
    let server = server();
    let mut client = Client::new(&server);
    let get = |id: i64, extra: Value| {
        let mut params = json!({"name": "p", "_meta": meta(json!({"elicitation": {}}))});
        if let (Some(p), Value::Object(extra)) = (params.as_object_mut(), extra) {
            p.extend(extra);
        }
        json!({"jsonrpc": "2.0", "id": id, "method": "prompts/get", "params": params})
    };
    let first = answer(&mut client, get(1, json!({}))).await;
    assert_eq!(
        first["result"]["inputRequests"]["ctx"]["method"], "elicitation/create",
        "{first}"
    );
    let second = answer(
        &mut client,
        get(
            2,
            json!({"inputResponses": {"ctx": {"action": "accept", "content": {"v": "here"}}}}),
        ),
    )
    .await;
    assert_eq!(
        second["result"]["messages"][0]["content"]["text"], "here",
        "{second}"
    );
    assert_eq!(second["result"]["resultType"], "complete");
}

#[tokio::test]
async fn logs_follow_the_request_level_and_none_without_one() {
    let server = server();
    let mut client = Client::new(&server);
    let quiet = answer(&mut client, call(1, "logs", json!({}))).await;
    assert_eq!(
        quiet["result"]["content"][0]["text"], "logged",
        "no log without a level: {quiet}"
    );
    let mut request = call(2, "logs", json!({}));
    request["params"]["_meta"][LL] = json!("info");
    client.send(&request);
    let log = client.recv().await.expect("the warning");
    assert_eq!(log["method"], "notifications/message");
    assert_eq!(
        log["params"]["level"], "warning",
        "debug is under the floor: {log}"
    );
    let done = client.recv().await.expect("answer");
    assert_eq!(done["id"], 2);
}

#[tokio::test]
async fn the_trace_context_reaches_the_handler() {
    let server = server();
    let mut client = Client::new(&server);
    let mut request = call(1, "trace", json!({}));
    request["params"]["_meta"]["traceparent"] =
        json!("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
    let answer = answer(&mut client, request).await;
    assert_eq!(
        answer["result"]["content"][0]["text"],
        "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    );
}

fn listen(id: i64, notifications: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {"notifications": notifications, "_meta": meta(json!({}))}})
}

#[tokio::test]
async fn a_listen_stream_hears_what_it_asked_for_tagged_then_ends_gracefully() {
    let server = server();
    let mut client = Client::new(&server);
    client.send(&listen(
        9,
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://r"]}),
    ));
    let ack = client.recv().await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    assert_eq!(
        ack["params"]["notifications"],
        json!({"toolsListChanged": true, "resourceSubscriptions": ["test://r"]})
    );
    assert_eq!(ack["params"]["_meta"][SUB], 9);

    // A prompt change is not asked for; a tool change and an update of test://r are.
    server.remove_prompt("p");
    server.notify_resource_updated("test://other");
    server.notify_resource_updated("test://r");
    let update = client.recv().await.expect("update");
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{update}"
    );
    assert_eq!(
        update["params"],
        json!({"uri": "test://r", "_meta": {SUB: 9}})
    );
    assert!(server.remove_tool("logs"));
    let changed = client.recv().await.expect("list change");
    assert_eq!(
        changed,
        json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed", "params": {"_meta": {SUB: 9}}})
    );

    // A graceful end: the listen result, then (a duplex connection) the cancel for its id.
    let rest = client.finish().await;
    let rest: Vec<Value> = rest
        .iter()
        .map(|f| serde_json::from_str(f).expect("json"))
        .collect();
    assert_eq!(rest.len(), 2, "{rest:?}");
    assert!(
        matches(
            &json!({"jsonrpc": "2.0", "id": 9, "result": {"resultType": "complete", "_meta": {SUB: 9, "io.modelcontextprotocol/serverInfo": "$any"}}}),
            &rest[0]
        ),
        "{rest:?}"
    );
    assert_eq!(rest[1]["method"], "notifications/cancelled");
    assert_eq!(rest[1]["params"]["requestId"], 9);
}

#[tokio::test]
async fn listen_streams_are_bounded() {
    let mut options = ServerOptions::default();
    options.max_listen_streams = 1;
    let server = Server::builder("s", "1")
        .options(options)
        .build()
        .expect("server");
    let mut client = Client::new(&server);
    client.send(&listen(1, json!({})));
    assert_eq!(
        client.recv().await.expect("ack")["method"],
        "notifications/subscriptions/acknowledged"
    );
    client.send(&listen(2, json!({})));
    let refused = client.recv().await.expect("refusal");
    assert_eq!(refused["id"], 2);
    assert_eq!(refused["error"]["code"], -32603);
    // The first one ended by its client frees the slot.
    client.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    );
    let mut admitted = None;
    for id in 3..200 {
        client.send(&listen(id, json!({})));
        let frame = client.recv().await.expect("frame");
        if frame["method"] == "notifications/subscriptions/acknowledged" {
            admitted = Some(id);
            break;
        }
        // The cancelled stream's task may not have let go yet: wait for it, not for time.
        tokio::task::yield_now().await;
    }
    assert!(admitted.is_some(), "a slot came free");
}

#[tokio::test]
async fn a_modern_only_server_refuses_initialize_naming_its_versions() {
    let mut options = ServerOptions::default();
    options.modern_only = true;
    let server = Server::builder("s", "1")
        .options(options)
        .build()
        .expect("server");
    let mut client = Client::new(&server);
    let refused = client.initialize("2025-11-25", json!({})).await;
    assert_eq!(refused["error"]["code"], -32022, "{refused}");
    assert_eq!(refused["error"]["data"]["supported"], json!(["2026-07-28"]));
    // Nor is any other request served the legacy way.
    let legacy = client.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(legacy["error"]["code"], -32602, "{legacy}");
}

#[tokio::test]
async fn any_output_value_in_2026_07_28_and_its_text_for_older_clients() {
    let server = Server::builder("s", "1")
        .tool(
            Tool::new("pair").output_schema(json!({"type": "array", "items": {"type": "integer"}})),
            |_ctx: Context, _args: Value| async move { Ok(ToolOutput::structured(json!([1, 2]))) },
        )
        .build()
        .expect("an array output schema registers");
    let mut modern = Client::new(&server);
    let listed = answer(&mut modern, json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta(json!({}))}})).await;
    assert_eq!(
        listed["result"]["tools"][0]["outputSchema"]["type"],
        "array"
    );
    let called = answer(&mut modern, call(2, "pair", json!({}))).await;
    assert_eq!(
        called["result"]["structuredContent"],
        json!([1, 2]),
        "{called}"
    );
    let mut legacy = Client::initialized(&server).await;
    let listed = legacy.request(json!(1), "tools/list", json!({})).await;
    assert!(
        listed["result"]["tools"][0].get("outputSchema").is_none(),
        "{listed}"
    );
    let called = legacy
        .request(
            json!(2),
            "tools/call",
            json!({"name": "pair", "arguments": {}}),
        )
        .await;
    assert!(
        called["result"].get("structuredContent").is_none(),
        "{called}"
    );
    assert_eq!(called["result"]["content"][0]["text"], "[1,2]");
    // Arguments stay objects, and a schema that points outside itself is refused.
    assert!(
        Server::builder("s", "1")
            .tool(
                Tool::new("t").input_schema(json!({"type": "array"})),
                |_c: Context, _a: Value| async move { Ok(ToolOutput::text("")) }
            )
            .build()
            .is_err()
    );
    let external =
        json!({"type": "object", "properties": {"a": {"$ref": "https://example.com/schema.json"}}});
    assert!(
        Server::builder("s", "1")
            .tool(
                Tool::new("t").input_schema(external),
                |_c: Context, _a: Value| async move { Ok(ToolOutput::text("")) }
            )
            .build()
            .is_err()
    );
}

/// A bus of the test's own, shared by two servers as replicas would share one: it counts what
/// passes and hands the rest to the in-process bus.
struct SharedBus {
    local: toolwire::LocalChangeBus,
    published: std::sync::atomic::AtomicUsize,
}

impl toolwire::ChangeBus for SharedBus {
    fn publish(&self, change: toolwire::Change) {
        self.published
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.local.publish(change);
    }

    fn subscribe(&self) -> toolwire::ChangeFeed {
        self.local.subscribe()
    }
}

#[tokio::test]
async fn servers_sharing_a_change_bus_hear_each_others_updates() {
    let bus = std::sync::Arc::new(SharedBus {
        local: toolwire::LocalChangeBus::default(),
        published: std::sync::atomic::AtomicUsize::new(0),
    });
    let replica = |name: &str| {
        Server::builder(name, "1")
            .change_bus(bus.clone())
            .resource(
                Resource::new("test://r", "r"),
                |request: ResourceRequest| async move {
                    Ok(vec![ResourceContents::text(request.uri, None, "r")])
                },
            )
            .build()
            .expect("valid server")
    };
    let (a, b) = (replica("a"), replica("b"));
    let mut client = Client::new(&b);
    client.send(&listen(1, json!({"resourceSubscriptions": ["test://r"]})));
    let ack = client.recv().await.expect("ack");
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // Updated on replica a, heard on b's stream.
    a.notify_resource_updated("test://r");
    let update = client.recv().await.expect("update");
    assert_eq!(
        update["method"], "notifications/resources/updated",
        "{update}"
    );
    assert_eq!(update["params"]["uri"], "test://r");
    assert_eq!(update["params"]["_meta"][SUB], 1);
    assert_eq!(
        bus.published.load(std::sync::atomic::Ordering::Relaxed),
        1,
        "registration before build publishes nothing; the update once"
    );
}

/// A 2026-07-28 completion's context is the request's own (its client info), and a completer
/// cannot ask the client for input (only tools, prompts and reads may answer input_required).
#[tokio::test]
async fn a_completion_has_the_requests_client_info_and_cannot_ask_for_input() {
    use toolwire::{Completion, CompletionRequest, PromptArgument, Reference};
    let server = Server::builder("modern", "1")
        .prompt(
            Prompt::new("p").argument(PromptArgument::new("who", false)),
            |_request: PromptRequest| async { Ok(PromptResult::new(vec![])) },
        )
        .completer(
            Reference::Prompt("p".into()),
            |request: CompletionRequest| async move {
                let ctx = request.ctx.expect("a context");
                if request.value == "ask" {
                    ctx.elicit(name_question(), RequestOptions::default())
                        .await?;
                }
                let client = ctx.client_info().map(|c| c.name.clone());
                Ok(Completion::new(vec![client.unwrap_or_default()]))
            },
        )
        .build()
        .unwrap();
    let mut client = Client::new(&server);
    let complete = |id: i64, value: &str| {
        let mut meta = meta(json!({"elicitation": {}}));
        meta["io.modelcontextprotocol/clientInfo"] = json!({"name": "phone", "version": "2"});
        json!({"jsonrpc": "2.0", "id": id, "method": "completion/complete", "params": {
            "ref": {"type": "ref/prompt", "name": "p"},
            "argument": {"name": "who", "value": value},
            "_meta": meta}})
    };
    let named = answer(&mut client, complete(1, "a")).await;
    assert_eq!(
        named["result"]["completion"]["values"],
        json!(["phone"]),
        "{named}"
    );
    let asked = answer(&mut client, complete(2, "ask")).await;
    assert_eq!(asked["error"]["code"], -32603, "{asked}");
    assert!(
        asked["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot ask the client for input"),
        "{asked}"
    );
}
