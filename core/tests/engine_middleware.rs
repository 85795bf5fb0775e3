//! Middleware: an allow-list that refuses with an error or an `isError` result, a rate limit
//! that awaits, the outcome and its timing heard by `after` in both eras, order kept for
//! middlewares that do not await, and `initialize` passing none.

mod common;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use common::Client;
use serde_json::{Value, json};
use tokio::sync::Notify;
use toolwire::middleware::{Middleware, Outcome, RequestInfo, Verdict};
use toolwire::{Context, ErrorCode, ErrorObject, Server, Tool, ToolError, ToolOutput};

/// What `before` saw: the method, the name, the protocol version.
type Seen = (String, Option<String>, Option<String>);

/// Refuses `secret` (an error) and `risky` (an isError result); records what it heard.
#[derive(Default)]
struct Gatekeeper {
    seen: Mutex<Vec<Seen>>,
    outcomes: Mutex<Vec<(String, Outcome)>>,
    heard: Notify,
}

impl Gatekeeper {
    /// The outcomes once `count` were heard (`after` runs once the answer is out).
    async fn outcomes(&self, count: usize) -> Vec<(String, Outcome)> {
        loop {
            let heard = self.heard.notified();
            let outcomes = self.outcomes.lock().unwrap().clone();
            if outcomes.len() >= count {
                return outcomes;
            }
            heard.await;
        }
    }
}

#[async_trait]
impl Middleware for Gatekeeper {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        self.seen.lock().unwrap().push((
            request.method.clone(),
            request.name.clone(),
            request.protocol_version.map(|v| v.as_str().to_owned()),
        ));
        match request.name.as_deref() {
            Some("secret") => Verdict::Refuse(ErrorObject::new(
                ErrorCode(-32001),
                "Forbidden: not for you".to_owned(),
            )),
            Some("risky") => Verdict::ToolError(format!(
                "risky is off today (arguments {})",
                request.arguments.clone().unwrap_or(Value::Null)
            )),
            _ => Verdict::Continue,
        }
    }

    fn after(&self, request: &RequestInfo, outcome: &Outcome, elapsed: Duration) {
        assert!(elapsed < Duration::from_secs(60));
        self.outcomes
            .lock()
            .unwrap()
            .push((request.method.clone(), outcome.clone()));
        self.heard.notify_waiters();
    }
}

fn server() -> Server {
    server_with(toolwire::ServerOptions::default())
}

fn server_with(options: toolwire::ServerOptions) -> Server {
    let echo = |_ctx: Context, args: Value| async move {
        Ok::<_, ToolError>(ToolOutput::text(
            args["text"].as_str().unwrap_or("").to_owned(),
        ))
    };
    let fail = |_ctx: Context, _args: Value| async { Err::<ToolOutput, _>(ToolError::new("no")) };
    Server::builder("mw", "1")
        .options(options)
        .tool(Tool::new("echo"), echo)
        .tool(Tool::new("secret"), echo)
        .tool(Tool::new("risky"), echo)
        .tool(Tool::new("fail"), fail)
        .build()
        .unwrap()
}

async fn answer(client: &mut Client, message: Value) -> Value {
    client.send(&message);
    client.recv().await.expect("an answer")
}

#[tokio::test]
async fn before_refuses_and_after_hears_every_outcome() {
    let server = server();
    let gate = Arc::new(Gatekeeper::default());
    server.add_middleware(gate.clone());
    let mut client = Client::initialized(&server).await;
    let call = |id: i64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": {"text": "hi"}}})
    };
    let ok = answer(&mut client, call(1, "echo")).await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
    let refused = answer(&mut client, call(2, "secret")).await;
    assert_eq!(refused["error"]["code"], -32001);
    assert_eq!(refused["error"]["message"], "Forbidden: not for you");
    let risky = answer(&mut client, call(3, "risky")).await;
    assert_eq!(risky["result"]["isError"], true);
    assert_eq!(
        risky["result"]["content"][0]["text"],
        "risky is off today (arguments {\"text\":\"hi\"})"
    );
    let failed = answer(&mut client, call(4, "fail")).await;
    assert_eq!(failed["result"]["isError"], true);
    let unknown = answer(
        &mut client,
        json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "nope"}}),
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
    // A 2026-07-28 request on a connection of its own: its era reaches the middleware.
    let mut modern = Client::new(&server);
    let stateless = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {
        "name": "risky", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let risky_modern = answer(&mut modern, stateless).await;
    assert_eq!(risky_modern["result"]["isError"], true);
    assert_eq!(risky_modern["result"]["resultType"], "complete");

    let outcomes = gate.outcomes(6).await;
    assert_eq!(
        outcomes,
        vec![
            ("tools/call".into(), Outcome::Result),
            ("tools/call".into(), Outcome::Refused),
            ("tools/call".into(), Outcome::Refused),
            ("tools/call".into(), Outcome::ToolError),
            ("tools/call".into(), Outcome::Error(ErrorCode(-32602))),
            ("tools/call".into(), Outcome::Refused),
        ]
    );
    let seen = gate.seen.lock().unwrap().clone();
    assert!(
        !seen.iter().any(|(method, _, _)| method == "initialize"),
        "initialize passes no middleware: {seen:?}"
    );
    assert_eq!(
        seen[0],
        (
            "tools/call".into(),
            Some("echo".into()),
            Some("2025-11-25".into())
        )
    );
    assert_eq!(seen[5].2.as_deref(), Some("2026-07-28"));
}

/// A middleware that awaits (a rate limit waiting for a slot): the request waits with it, and
/// only it; a cancel reaches a request still waiting (no answer, heard as cancelled), and so
/// does the session's end.
#[tokio::test]
async fn a_middleware_that_awaits_holds_its_request() {
    struct Slot {
        open: Notify,
        outcomes: Mutex<Vec<Outcome>>,
        heard: Notify,
    }
    #[async_trait]
    impl Middleware for Slot {
        async fn before(&self, request: &RequestInfo) -> Verdict {
            match request.name.as_deref() {
                Some("echo") => self.open.notified().await,
                Some("stuck") => std::future::pending().await,
                _ => {}
            }
            Verdict::Continue
        }
        fn after(&self, _request: &RequestInfo, outcome: &Outcome, _elapsed: Duration) {
            self.outcomes.lock().unwrap().push(outcome.clone());
            self.heard.notify_waiters();
        }
    }
    // The stuck request below waits out the drain: a short one.
    let mut options = toolwire::ServerOptions::default();
    options.drain_timeout = Duration::from_millis(50);
    let server = server_with(options);
    let slot = Arc::new(Slot {
        open: Notify::new(),
        outcomes: Mutex::new(Vec::new()),
        heard: Notify::new(),
    });
    let outcomes = |count: usize| {
        let slot = slot.clone();
        async move {
            loop {
                let heard = slot.heard.notified();
                let outcomes = slot.outcomes.lock().unwrap().clone();
                if outcomes.len() >= count {
                    return outcomes;
                }
                heard.await;
            }
        }
    };
    server.add_middleware(slot.clone());
    let mut client = Client::initialized(&server).await;
    client.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"text": "late"}}}));
    // The held call does not hold the session: a ping goes ahead and is answered first.
    let ping = client.request(json!(2), "ping", json!({})).await;
    assert_eq!(ping["id"], 2);
    slot.open.notify_one();
    let late = client.recv().await.expect("the held call's answer");
    assert_eq!(late["id"], 1);
    assert_eq!(late["result"]["content"][0]["text"], "late");
    assert_eq!(outcomes(2).await, vec![Outcome::Result, Outcome::Result]);

    // Cancelled while it waits in `before`: no answer, and heard as cancelled.
    client.send(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "stuck", "arguments": {}}}));
    client.send(&common::cancel(3));
    assert_eq!(outcomes(3).await[2], Outcome::Cancelled);
    let ping = client.request(json!(4), "ping", json!({})).await;
    assert_eq!(
        ping["id"], 4,
        "no answer for the cancelled request came first"
    );

    // The session's end reaches a request stuck there: shutdown completes (after the drain).
    client.send(&json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "stuck", "arguments": {}}}));
    let rest = client.finish().await;
    assert!(
        !rest.iter().any(|frame| frame.contains(r#""id":5"#)),
        "the stuck request got no answer: {rest:?}"
    );
    assert_eq!(outcomes(5).await[4], Outcome::Cancelled);
}

/// An around middleware in Rust: refuses `secret` before `next`, forgets `next` for `risky`,
/// and hears how the others ended after it.
struct Audit {
    ended: tokio::sync::mpsc::UnboundedSender<(Option<String>, Outcome)>,
}

#[async_trait]
impl toolwire::middleware::Around for Audit {
    async fn around(
        &self,
        request: RequestInfo,
        next: toolwire::middleware::Next,
    ) -> Result<(), toolwire::middleware::Refusal> {
        match request.name.as_deref() {
            Some("secret") => {
                return Err(toolwire::middleware::Refusal::Error(ErrorObject::new(
                    ErrorCode(-32001),
                    "Forbidden".to_owned(),
                )));
            }
            Some("risky") => return Ok(()),
            _ => {}
        }
        let ended = next.run().await;
        let _ = self.ended.send((request.name, ended.outcome));
        Ok(())
    }
}

#[tokio::test]
async fn an_around_middleware_decides_before_next_and_hears_the_end_after_it() {
    let (ended, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let server = server();
    server.add_around("audit", Audit { ended });
    let mut client = Client::initialized(&server).await;
    let call = |id: i64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": name, "arguments": {"text": "hi"}}})
    };
    let ok = answer(&mut client, call(1, "echo")).await;
    assert_eq!(ok["result"]["content"][0]["text"], "hi");
    assert_eq!(
        heard.recv().await,
        Some((Some("echo".to_owned()), Outcome::Result))
    );
    let refused = answer(&mut client, call(2, "secret")).await;
    assert_eq!(
        (&refused["error"]["code"], &refused["error"]["message"]),
        (&json!(-32001), &json!("Forbidden"))
    );
    let forgot = answer(&mut client, call(3, "risky")).await;
    assert_eq!(forgot["error"]["code"], -32603);
    assert_eq!(
        forgot["error"]["message"],
        "Internal error: middleware audit returned without calling next"
    );
    let failed = answer(&mut client, call(4, "fail")).await;
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(
        heard.recv().await,
        Some((Some("fail".to_owned()), Outcome::ToolError))
    );
}

/// Refuses every call of `wipe`; lets the rest through.
struct NoWipe;

#[async_trait]
impl toolwire::middleware::Around for NoWipe {
    async fn around(
        &self,
        request: RequestInfo,
        next: toolwire::middleware::Next,
    ) -> Result<(), toolwire::middleware::Refusal> {
        if request.name.as_deref() == Some("wipe") {
            return Err(toolwire::middleware::Refusal::ToolError(
                "wipe is off".into(),
            ));
        }
        next.run().await;
        Ok(())
    }
}

#[tokio::test]
async fn an_earlier_around_hears_a_later_ones_refusal() {
    let (ended, mut heard) = tokio::sync::mpsc::unbounded_channel();
    let wipe =
        |_ctx: Context, _args: Value| async { Ok::<_, ToolError>(ToolOutput::text("wiped")) };
    let server = Server::builder("mw", "1")
        .tool(Tool::new("wipe"), wipe)
        .around("audit", Audit { ended })
        .around("no-wipe", NoWipe)
        .build()
        .unwrap();
    let mut client = Client::initialized(&server).await;
    let refused = answer(
        &mut client,
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "wipe"}}),
    )
    .await;
    assert_eq!(refused["result"]["isError"], true);
    assert_eq!(refused["result"]["content"][0]["text"], "wipe is off");
    assert_eq!(
        heard.recv().await,
        Some((Some("wipe".to_owned()), Outcome::Refused))
    );
}
