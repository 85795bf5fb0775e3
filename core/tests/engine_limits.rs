//! Concurrency limits: the global limit and its queue, a per-tool limit, a cancelled call
//! leaving the queue, and many calls at once.
//!
//! The `slow` tool's 200 ms is its workload; the tests that depend on how calls overlap run in
//! paused time, where the clock moves only when every task waits, straight to the next timer:
//! which call ends first no longer depends on how busy the machine is.

mod common;

use std::time::Duration;

use common::{Client, call, cancel, is_error_text, server_with};
use serde_json::{Value, json};
use toolwire::{Context, Server, ServerOptions, Tool, ToolError, ToolOutput};

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

#[tokio::test(start_paused = true)]
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

#[tokio::test(start_paused = true)]
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
    let took = start.elapsed();
    assert!(
        took >= Duration::from_millis(400) && took < Duration::from_millis(600),
        "two rounds of 200 ms, not {took:?}"
    );
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_queued_call_frees_its_place_at_once() {
    let server = one_running_one_waiting();
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "slow", json!({})));
    client.send(&call(2, "slow", json!({})));
    client.send(&cancel(2));
    // Well before call 1 ends (200 ms), the cancelled call has left the queue: the next one
    // waits instead of being refused. In paused time this sleep returns only once every task
    // has run as far as it can (the cancelled call's included) and 50 ms have passed on a
    // clock that nothing else moves, so call 1 is certainly still running.
    tokio::time::sleep(Duration::from_millis(50)).await;
    client.send(&call(3, "slow", json!({})));
    let first = client.recv().await.unwrap();
    assert_eq!(first["id"], 1, "{first}");
    let second = client.recv().await.unwrap();
    assert_eq!(second["id"], 3);
    assert_eq!(second["result"]["content"][0]["text"], "done");
}

#[tokio::test(start_paused = true)]
async fn cancelling_a_queued_call_frees_its_place() {
    let mut options = ServerOptions::default();
    options.max_concurrent_calls = 1;
    let server = server_with(options, vec![(Tool::new("slow"), slow)]);
    let mut client = Client::initialized(&server).await;
    client.send(&call(1, "slow", json!({})));
    client.send(&call(2, "slow", json!({})));
    client.send(&cancel(2));
    assert_eq!(client.recv().await.unwrap()["id"], 1);
    assert!(client.finish().await.is_empty());
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

fn quick(
    _ctx: Context,
    _args: Value,
) -> futures_util::future::BoxFuture<'static, Result<ToolOutput, ToolError>> {
    Box::pin(async { Ok(ToolOutput::text("quick")) })
}

#[tokio::test(start_paused = true)]
async fn a_greedy_session_waits_behind_its_own_limit_while_others_are_served() {
    let mut options = ServerOptions::default();
    options.max_concurrent_calls = 4;
    options.max_concurrent_calls_per_session = 2;
    let server = server_with(
        options,
        vec![(Tool::new("slow"), slow), (Tool::new("quick"), quick)],
    );
    let mut greedy = Client::initialized(&server).await;
    let mut other = Client::initialized(&server).await;
    let start = tokio::time::Instant::now();
    for id in 1..=10 {
        greedy.send(&call(id, "slow", json!({})));
    }
    // The greedy session holds two of the four slots: the other's call runs at once (paused
    // time: the clock has not moved when its answer comes).
    other.send(&call(1, "quick", json!({})));
    let answer = other.recv().await.unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "quick", "{answer}");
    assert_eq!(start.elapsed(), Duration::ZERO);
    // The greedy session's calls all run, two at a time: five rounds of 200 ms.
    let mut answered = Vec::new();
    for _ in 1..=10 {
        let answer = greedy.recv().await.unwrap();
        assert_eq!(answer["result"]["content"][0]["text"], "done", "{answer}");
        answered.push(answer["id"].as_i64().unwrap());
    }
    answered.sort_unstable();
    assert_eq!(answered, (1..=10).collect::<Vec<_>>());
    assert_eq!(start.elapsed(), Duration::from_millis(1000));
}

#[tokio::test(start_paused = true)]
async fn a_session_past_its_own_queue_is_refused() {
    let mut options = ServerOptions::default();
    options.max_concurrent_calls_per_session = 1;
    options.max_queued_calls = 1;
    let server = server_with(options, vec![(Tool::new("slow"), slow)]);
    let mut client = Client::initialized(&server).await;
    for id in 1..=3 {
        client.send(&call(id, "slow", json!({})));
    }
    let first = client.recv().await.unwrap();
    assert_eq!(first["id"], 3);
    assert!(
        is_error_text(&first)
            .starts_with("Server busy: this session already has 1 calls running and 1 waiting"),
        "{first}"
    );
    assert_eq!(client.recv().await.unwrap()["id"], 1);
    assert_eq!(client.recv().await.unwrap()["id"], 2);
    // Another session is not held back by this one's queue.
    let mut other = Client::initialized(&server).await;
    other.send(&call(1, "slow", json!({})));
    assert_eq!(
        other.recv().await.unwrap()["result"]["content"][0]["text"],
        "done"
    );
}

#[tokio::test(start_paused = true)]
async fn sessions_waiting_calls_count_against_the_servers_one_queue_bound() {
    let mut options = ServerOptions::default();
    options.max_concurrent_calls_per_session = 1;
    options.max_queued_calls = 2;
    let server = server_with(options, vec![(Tool::new("slow"), slow)]);
    let mut first = Client::initialized(&server).await;
    // One runs and two wait: the server's whole queue.
    for id in 1..=3 {
        first.send(&call(id, "slow", json!({})));
    }
    let mut second = Client::initialized(&server).await;
    // The second session's first call runs (its own slot is free); its next one finds no
    // room to wait, as the first session's waiting calls fill the bound.
    second.send(&call(1, "slow", json!({})));
    second.send(&call(2, "slow", json!({})));
    let refused = second.recv().await.unwrap();
    assert_eq!(refused["id"], 2, "{refused}");
    assert!(
        is_error_text(&refused).starts_with("Server busy: this session"),
        "{refused}"
    );
    assert_eq!(second.recv().await.unwrap()["id"], 1);
    for id in 1..=3 {
        assert_eq!(first.recv().await.unwrap()["id"], id);
    }
}
