//! Deadlines and cancellation: a call past its deadline, a cancelled call and the handler that
//! ignores it, cancels that stay within their session, and shutdown's drain deadline.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::{Client, call, cancel, is_error_text};
use serde_json::{Value, json};
use toolwire::{Context, Server, ServerOptions, Tool, ToolError, ToolOutput};

/// In paused time, so the deadline is exact and the handler's 30 s sleep costs nothing.
#[tokio::test(start_paused = true)]
async fn deadline_gives_an_error_result_and_cancels_the_handler() {
    // The work the handler hands elsewhere says when it sees the cancellation.
    let observed_cancel = Arc::new(tokio::sync::Notify::new());
    let server = Server::builder("test", "1")
        .tool(Tool::new("stuck").timeout(Duration::from_millis(100)), {
            let observed_cancel = observed_cancel.clone();
            move |ctx: Context, _args: Value| {
                let observed_cancel = observed_cancel.clone();
                async move {
                    let token = ctx.cancellation_token();
                    // Work handed elsewhere sees the cancellation through the token.
                    tokio::spawn(async move {
                        token.cancelled().await;
                        observed_cancel.notify_one();
                    });
                    tokio::time::sleep(Duration::from_secs(30)).await;
                    Ok(ToolOutput::text("never"))
                }
            }
        })
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
    // The call is unregistered before its answer is sent.
    assert_eq!(client.session.calls_in_flight(), 0);
    // A lost cancellation would leave this waiting: paused time then jumps the 5 s at once.
    tokio::time::timeout(Duration::from_secs(5), observed_cancel.notified())
        .await
        .expect("work handed elsewhere sees the cancellation");
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

/// Says when a handler's future is dropped.
struct OnDrop(Arc<tokio::sync::Notify>);

impl Drop for OnDrop {
    fn drop(&mut self) {
        self.0.notify_one();
    }
}

/// A handler that never ends on its own and ignores its cancel; `guard` goes with its future.
async fn pending_until_dropped(guard: OnDrop) -> Result<ToolOutput, ToolError> {
    let _guard = guard;
    std::future::pending::<()>().await;
    Ok(ToolOutput::text("never"))
}

#[tokio::test]
async fn cancelling_a_call_drops_a_handler_that_ignores_it() {
    let dropped = Arc::new(tokio::sync::Notify::new());
    let server = Server::builder("test", "1")
        .tool(Tool::new("forever"), {
            let dropped = dropped.clone();
            move |_ctx: Context, _args: Value| pending_until_dropped(OnDrop(dropped.clone()))
        })
        .build()
        .expect("valid test server");
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "forever", json!({})));
    assert_eq!(
        client.request(json!(9), "ping", json!({})).await["result"],
        json!({})
    );
    client.send(&cancel(1));
    tokio::time::timeout(Duration::from_secs(5), dropped.notified())
        .await
        .expect("the cancelled handler's future is dropped");
    assert!(client.finish().await.is_empty());
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
    b.send(&cancel(1));
    assert_eq!(
        a.recv().await.unwrap()["result"]["content"][0]["text"],
        "slept 200 ms"
    );
    assert_eq!(a.session.protocol_version().unwrap().as_str(), "2025-11-25");
    assert_eq!(b.session.protocol_version().unwrap().as_str(), "2025-06-18");
    assert!(b.finish().await.is_empty());
    assert!(a.finish().await.is_empty());
}

/// In paused time, so the drain deadline is exact.
#[tokio::test(start_paused = true)]
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
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(300) && took < Duration::from_secs(2),
        "shutdown took {took:?}: it waits for the 300 ms drain deadline, not for the long call"
    );
}

/// A cancelled id used again at once: the cancelled call, ending after the new one started,
/// must not unregister it (it stays in flight and answers).
#[tokio::test]
async fn an_id_used_again_after_its_cancel_keeps_the_new_call() {
    let first_ended = Arc::new(tokio::sync::Notify::new());
    let release = Arc::new(tokio::sync::Notify::new());
    let server = Server::builder("test", "1")
        .tool(Tool::new("until_cancelled"), {
            let first_ended = first_ended.clone();
            // Dropped when the cancel ends the call; the call unregisters in that poll.
            move |_ctx: Context, _args: Value| pending_until_dropped(OnDrop(first_ended.clone()))
        })
        .tool(Tool::new("gate"), {
            let release = release.clone();
            move |_ctx: Context, _args: Value| {
                let release = release.clone();
                async move {
                    release.notified().await;
                    Ok::<_, ToolError>(ToolOutput::text("released"))
                }
            }
        })
        .build()
        .expect("valid test server");
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "until_cancelled", json!({})));
    client.send(&cancel(1));
    client.send(&call(1, "gate", json!({})));
    first_ended.notified().await;
    assert_eq!(
        client.session.calls_in_flight(),
        1,
        "the new call is registered"
    );
    release.notify_one();
    let answer = client.recv().await.expect("the new call's answer");
    assert_eq!(answer["id"], 1);
    assert_eq!(answer["result"]["content"][0]["text"], "released");
    assert_eq!(client.session.calls_in_flight(), 0);
    assert!(client.finish().await.is_empty());
}
