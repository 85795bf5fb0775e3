//! The in-process client (`toolwire::client`): both eras' handshakes, correlation of
//! concurrent requests, answers to the server's questions (as requests and as 2026-07-28
//! rounds), progress, paging, errors as `Error::Rpc`, timeouts that cancel, and close.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::FutureExt;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolwire::client::{Answerer, Client, ClientOptions, Progress};
use toolwire::{
    Context, Error, ErrorObject, RequestOptions, Server, ServerOptions, Tool, ToolError, ToolOutput,
};

const MODERN: &str = "2026-07-28";

fn server() -> Server {
    let mut options = ServerOptions::default();
    options.page_size = Some(2);
    Server::builder("client-test", "7.0")
        .options(options)
        .tool(Tool::new("echo"), |_ctx: Context, args: Value| async move {
            Ok(ToolOutput::text(
                args["text"].as_str().unwrap_or("").to_owned(),
            ))
        })
        .tool(Tool::new("add"), |_ctx: Context, args: Value| async move {
            let sum = args["a"].as_f64().unwrap_or(0.0) + args["b"].as_f64().unwrap_or(0.0);
            Ok(ToolOutput::text(sum.to_string()))
        })
        .tool(
            Tool::new("fail"),
            |_ctx: Context, _args: Value| async move {
                Err::<ToolOutput, _>(ToolError::new("it failed"))
            },
        )
        .tool(Tool::new("ask"), |ctx: Context, _args: Value| async move {
            // The same line asks in a 2026-07-28 round and has its answer in the next; in the
            // legacy era it asks the client over the session.
            let name = ctx
                .elicit(
                    json!({"message": "Name?", "requestedSchema": {"type": "object"}}),
                    RequestOptions::default(),
                )
                .await?;
            let roots = ctx.list_roots(RequestOptions::default()).await?;
            Ok(ToolOutput::text(format!(
                "{} with {} roots",
                name["content"]["name"].as_str().unwrap_or("?"),
                roots.len()
            )))
        })
        .tool(
            Tool::new("count"),
            |ctx: Context, _args: Value| async move {
                for step in 1..=3 {
                    ctx.progress(f64::from(step), Some(3.0), Some("counting"));
                }
                Ok(ToolOutput::text("counted"))
            },
        )
        .tool(Tool::new("gate"), |_ctx: Context, args: Value| async move {
            // Waits until the test's other call has been answered (see the test).
            let _ = args;
            GATE.notified().await;
            Ok(ToolOutput::text("opened"))
        })
        .tool(
            Tool::new("forever"),
            |ctx: Context, _args: Value| async move {
                // The engine drops a cancelled call's future: the guard says it ended.
                let _ended = EndedGuard;
                ctx.cancelled().await;
                Err::<ToolOutput, _>(ToolError::new("cancelled"))
            },
        )
        .build()
        .expect("valid server")
}

static GATE: Notify = Notify::const_new();
static FOREVER_CANCELLED: Notify = Notify::const_new();

struct EndedGuard;

impl Drop for EndedGuard {
    fn drop(&mut self) {
        FOREVER_CANCELLED.notify_one();
    }
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or("")
}

/// Answers elicitation with a name and counts the questions.
fn answering(asked: Arc<Mutex<Vec<String>>>) -> Arc<dyn Answerer> {
    Arc::new(move |method: String, params: Value| {
        asked.lock().unwrap().push(method.clone());
        async move {
            assert_eq!(params["message"], "Name?");
            Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
        }
        .boxed()
    })
}

fn options(version: &str) -> ClientOptions {
    let mut options = ClientOptions::default();
    options.protocol_version = version.to_owned();
    options.elicitation = true;
    options.roots = Some(json!([{"uri": "file:///a"}, {"uri": "file:///b"}]));
    options
}

#[tokio::test]
async fn both_eras_handshake_list_and_call() {
    for version in ["2025-11-25", "2025-06-18", MODERN] {
        let mut options = ClientOptions::default();
        options.protocol_version = version.into();
        let client = Client::connect(&server(), options, None)
            .await
            .expect("connects");
        assert_eq!(client.server()["name"], "client-test", "{version}");
        assert_eq!(client.is_modern(), version == MODERN);
        if version != MODERN {
            assert_eq!(client.server_info()["protocolVersion"], version);
        }
        // Seven tools over pages of two: every page is followed.
        let names: Vec<_> = client
            .list_tools()
            .await
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(
            names,
            ["add", "ask", "count", "echo", "fail", "forever", "gate"],
            "{version}"
        );
        let answer = client
            .call_tool("echo", json!({"text": "hi"}), None)
            .await
            .unwrap();
        assert_eq!(text(&answer), "hi");
        let failed = client.call_tool("fail", Value::Null, None).await.unwrap();
        assert_eq!(failed["isError"], true);
        client.close().await;
    }
}

#[tokio::test]
async fn errors_are_rpc_errors_with_the_servers_code() {
    let client = Client::connect(&server(), ClientOptions::default(), None)
        .await
        .unwrap();
    match client.call_tool("nope", json!({}), None).await {
        Err(Error::Rpc(error)) => assert_eq!(error.code.0, -32602, "{error}"),
        other => panic!("expected an RPC error, got {other:?}"),
    }
    match client.request("no/such", json!({})).await {
        Err(Error::Rpc(error)) => assert_eq!(error.code.0, -32601),
        other => panic!("expected method not found, got {other:?}"),
    }
    // The client still serves after errors.
    assert_eq!(
        text(
            &client
                .call_tool("add", json!({"a": 1, "b": 2}), None)
                .await
                .unwrap()
        ),
        "3"
    );
    client.close().await;
}

#[tokio::test]
async fn the_servers_questions_are_answered_in_either_era() {
    for version in ["2025-11-25", MODERN] {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let client = Client::connect(&server(), options(version), Some(answering(asked.clone())))
            .await
            .unwrap();
        assert_eq!(client.capabilities()["elicitation"], json!({"form": {}}));
        assert_eq!(
            client.capabilities()["roots"],
            json!({"listChanged": false})
        );
        let answer = client.call_tool("ask", json!({}), None).await.unwrap();
        assert_eq!(text(&answer), "Ada with 2 roots", "{version}: {answer}");
        // The host was asked once per question (roots are the client's own answer).
        assert_eq!(*asked.lock().unwrap(), ["elicitation/create"], "{version}");
        client.close().await;
    }
}

#[tokio::test]
async fn a_question_nobody_answers_is_method_not_found() {
    for version in ["2025-11-25", MODERN] {
        // Declared (so the server asks) but with no answerer: the server hears -32601.
        let mut options = options(version);
        options.roots = None;
        let client = Client::connect(&server(), options, None).await.unwrap();
        let outcome = client.call_tool("ask", json!({}), None).await;
        match (version, outcome) {
            // Legacy: the tool's ctx.elicit failed; the tool's error is its result.
            ("2025-11-25", Ok(result)) => assert_eq!(result["isError"], true, "{result}"),
            // Modern: the client could not answer the round itself.
            (MODERN, Err(Error::Rpc(error))) => assert_eq!(error.code.0, -32601),
            (_, other) => panic!("{version}: {other:?}"),
        }
        client.close().await;
    }
}

#[tokio::test]
async fn progress_reaches_the_callback_and_the_notifications() {
    let client = Client::connect(&server(), ClientOptions::default(), None)
        .await
        .unwrap();
    let heard = Arc::new(Mutex::new(Vec::new()));
    let progress: Progress = {
        let heard = heard.clone();
        Arc::new(move |params: &Value| {
            heard
                .lock()
                .unwrap()
                .push(params["progress"].as_f64().unwrap())
        })
    };
    let answer = client
        .call_tool("count", json!({}), Some(progress))
        .await
        .unwrap();
    assert_eq!(text(&answer), "counted");
    assert_eq!(*heard.lock().unwrap(), [1.0, 2.0, 3.0]);
    let progress_seen = client
        .notifications()
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .count();
    assert_eq!(progress_seen, 3);
    client.close().await;
}

#[tokio::test]
async fn concurrent_requests_find_their_callers() {
    let client = Client::connect(&server(), ClientOptions::default(), None)
        .await
        .unwrap();
    // `gate` waits; `echo` sent after it is answered first; then the gate opens.
    let gated = client.call_tool("gate", json!({}), None);
    let rest = async {
        let echoed = client
            .call_tool("echo", json!({"text": "first"}), None)
            .await
            .unwrap();
        GATE.notify_one();
        echoed
    };
    let (gated, echoed) = tokio::join!(gated, rest);
    assert_eq!(text(&gated.unwrap()), "opened");
    assert_eq!(text(&echoed), "first");
    client.close().await;
}

#[tokio::test]
async fn no_answer_in_time_is_no_answer_and_cancels_the_call() {
    let client = Client::connect(&server(), ClientOptions::default(), None)
        .await
        .unwrap();
    let params = json!({"name": "forever", "arguments": {}});
    match client
        .request_within("tools/call", params, Duration::from_millis(50))
        .await
    {
        Err(Error::NoAnswer { method, .. }) => assert_eq!(method, "tools/call"),
        other => panic!("expected no answer, got {other:?}"),
    }
    // The server was told: the tool sees its call cancelled.
    tokio::time::timeout(Duration::from_secs(10), FOREVER_CANCELLED.notified())
        .await
        .expect("the server cancelled the call the client gave up on");
    client.close().await;
}

#[tokio::test]
async fn requests_after_close_fail_as_closed() {
    let client = Client::connect(&server(), ClientOptions::default(), None)
        .await
        .unwrap();
    client.close().await;
    client.close().await; // twice is harmless
    match client.request("ping", json!({})).await {
        Err(Error::Rpc(ErrorObject { code, .. })) => assert_eq!(code.0, -32000),
        other => panic!("expected the closed error, got {other:?}"),
    }
}

#[tokio::test]
async fn a_failed_handshake_is_the_connects_error() {
    // A session that ended before the handshake: `initialize` gets the closed error.
    let (session, outbound) = server().session().unwrap();
    session.close();
    match Client::over(session, outbound, ClientOptions::default(), None).await {
        Err(Error::Rpc(error)) => assert_eq!(error.code.0, -32000, "{error}"),
        other => panic!("expected the handshake to fail, got {other:?}"),
    }
}

#[tokio::test]
async fn a_progress_callback_that_panics_stops_nothing() {
    let client = Client::connect(&server(), ClientOptions::default(), None)
        .await
        .unwrap();
    let progress: Progress = Arc::new(|_params: &Value| panic!("a callback's own bug"));
    let answer = client
        .call_tool("count", json!({}), Some(progress))
        .await
        .unwrap();
    assert_eq!(text(&answer), "counted");
    let echoed = client
        .call_tool("echo", json!({"text": "still"}), None)
        .await
        .unwrap();
    assert_eq!(text(&echoed), "still");
    client.close().await;
}

#[tokio::test]
async fn options_a_client_cannot_have_are_refused() {
    let mut not_an_object = ClientOptions::default();
    not_an_object.capabilities = json!(["sampling"]);
    let mut no_rounds = ClientOptions::default();
    no_rounds.max_input_rounds = 0;
    for options in [not_an_object, no_rounds] {
        match Client::connect(&server(), options, None).await {
            Err(Error::InvalidArgument(message)) => assert!(!message.is_empty()),
            other => panic!("expected the options to be refused, got {other:?}"),
        }
    }
}

#[test]
fn options_from_json_take_either_spelling_and_name_what_is_wrong() {
    let camel = ClientOptions::from_json(json!({
        "protocolVersion": MODERN,
        "clientInfo": {"name": "node", "version": "1"},
        "elicitation": true,
        "roots": [{"uri": "file:///tmp"}],
        "maxInputRounds": 3,
        "timeoutMs": 1500,
    }))
    .unwrap();
    assert_eq!(camel.protocol_version, MODERN);
    assert_eq!(camel.client_info["name"], "node");
    assert!(camel.elicitation && !camel.sampling);
    assert_eq!(camel.roots, Some(json!([{"uri": "file:///tmp"}])));
    assert_eq!(camel.max_input_rounds, 3);
    assert_eq!(camel.request_timeout, Duration::from_millis(1500));
    let snake = ClientOptions::from_json(json!({
        "protocol_version": "2025-06-18",
        "client_info": {"name": "python", "version": "1"},
        "sampling": true,
        "roots": null,
        "request_timeout": 2.5,
    }))
    .unwrap();
    assert_eq!(snake.protocol_version, "2025-06-18");
    assert_eq!(snake.client_info["name"], "python");
    assert!(snake.sampling && snake.roots.is_none());
    assert_eq!(snake.request_timeout, Duration::from_millis(2500));
    let refused = |given: Value| match ClientOptions::from_json(given) {
        Err(Error::InvalidArgument(message)) => message,
        other => panic!("refused, not {other:?}"),
    };
    assert_eq!(
        refused(json!({"timeoutMs": -1})),
        "timeoutMs must be a number of milliseconds >= 0, not -1"
    );
    assert_eq!(
        refused(json!({"request_timeout": "soon"})),
        "timeout must be a number of seconds >= 0, not \"soon\""
    );
    assert!(refused(json!({"elicitation": "yes"})).contains("elicitation must be true or false"));
    assert!(refused(json!({"clientInfo": 3})).contains("clientInfo must be an object"));
    assert!(refused(json!([])).contains("must be an object"));
}
