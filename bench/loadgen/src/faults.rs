//! Faults mixed into load, against a demo started with `--fault-tools`. Of every ten calls,
//! seven are `echo` (each answer verified) and one each goes to `crash` (the handler panics or
//! throws), `malformed` (a result its output schema refuses) and `hang` (never returns; the
//! tool's 200 ms timeout ends it). Over stdio, every 50th call also starts a long `sleep` and
//! cancels it at once. Every echo must succeed, every fault must be answered with an error
//! (a JSON-RPC error or an `isError` result), and the server must still answer afterwards.

use std::cell::{Cell, RefCell};
use std::collections::BTreeMap;
use std::rc::Rc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::Plan;
use crate::conn::Conn;
use crate::http::Client;
use crate::proc_stats;
use crate::scenarios::{Until, closed_loop, round};

/// What call `n` is: `None` for an echo, else the fault tool.
fn fault_of(n: u64) -> Option<&'static str> {
    match n % 10 {
        3 => Some("crash"),
        6 => Some("malformed"),
        9 => Some("hang"),
        _ => None,
    }
}

/// How each fault was answered, by tool and kind of answer.
#[derive(Default)]
struct Tally {
    answers: BTreeMap<String, u64>,
    echoes: u64,
    cancelled: u64,
}

impl Tally {
    /// Records the answer to a fault call; a success is a failure of the run.
    fn fault(&mut self, tool: &str, answer: &[u8]) -> Result<(), String> {
        let value: Value = serde_json::from_slice(answer).map_err(|e| {
            format!(
                "{tool}: an answer that is not JSON ({e}): {}",
                String::from_utf8_lossy(answer)
            )
        })?;
        let kind = if let Some(code) = value["error"]["code"].as_i64() {
            format!("JSON-RPC error {code}")
        } else if value["result"]["isError"] == true {
            "isError result".to_owned()
        } else {
            return Err(format!("{tool} succeeded: {value}"));
        };
        *self.answers.entry(format!("{tool}: {kind}")).or_default() += 1;
        Ok(())
    }

    fn report(&self) -> Value {
        json!({
            "echoes_verified": self.echoes,
            "faults": self.answers,
            "cancelled_sleeps": self.cancelled,
        })
    }
}

fn call_params(tool: &str, n: u64) -> String {
    match tool {
        "echo" => format!(r#"{{"name":"echo","arguments":{{"text":"m{n}"}}}}"#),
        other => format!(r#"{{"name":"{other}","arguments":{{}}}}"#),
    }
}

/// `total` calls over stdio, `plan.pipeline` in flight.
pub async fn stdio(plan: &Plan, total: u64) -> Result<Value, String> {
    let conn = Rc::new(Conn::spawn_initialized(&plan.command).await?);
    let rss_before = proc_stats::rss_kib(conn.pid);
    let tally = Rc::new(RefCell::new(Tally::default()));
    let (_, elapsed) = closed_loop(plan.pipeline, Until::Calls(total), {
        let (conn, tally) = (conn.clone(), tally.clone());
        move |n| {
            let (conn, tally) = (conn.clone(), tally.clone());
            async move {
                if n % 50 == 25 {
                    conn.request_and_cancel(
                        "tools/call",
                        r#"{"name":"sleep","arguments":{"ms":60000}}"#,
                    );
                    tally.borrow_mut().cancelled += 1;
                }
                match fault_of(n) {
                    None => {
                        crate::scenarios::echo(&conn, n).await?;
                        tally.borrow_mut().echoes += 1;
                    }
                    Some(tool) => {
                        let (answer, _, _) =
                            conn.request("tools/call", &call_params(tool, n)).await?;
                        tally.borrow_mut().fault(tool, &answer.line)?;
                    }
                }
                Ok(())
            }
        }
    })
    .await?;
    // Still serving after all of it.
    let (pong, _, _) = conn.request("ping", "{}").await?;
    if !pong.json()["result"].is_object() {
        return Err(format!("ping after the faults: {}", pong.json()));
    }
    let rss_after = proc_stats::rss_kib(conn.pid);
    let report = json!({
        "transport": "stdio",
        "calls": total,
        "in_flight": plan.pipeline,
        "seconds": round(elapsed.as_secs_f64(), 1),
        "outcomes": tally.borrow().report(),
        "rss_kib_before": rss_before,
        "rss_kib_after": rss_after,
        "errors": 0,
    });
    let conn = Rc::try_unwrap(conn).map_err(|_| "connection still shared")?;
    conn.close().await?;
    Ok(report)
}

/// `total` calls over HTTP by `plan.http_clients` clients, each its own session.
pub async fn http(plan: &Plan, port: u16, pid: u32, total: u64) -> Result<Value, String> {
    let reopened = Rc::new(Cell::new(0u64));
    let tally = Rc::new(RefCell::new(Tally::default()));
    let next = Rc::new(Cell::new(0u64));
    let rss_before = proc_stats::rss_kib(pid);
    let start = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..plan.http_clients {
        let mut client = Client::open(port, reopened.clone(), false).await?;
        client.initialize().await?;
        let (tally, next) = (tally.clone(), next.clone());
        workers.push(tokio::task::spawn_local(async move {
            loop {
                let n = next.get();
                if n >= total {
                    return Ok::<_, String>(client);
                }
                next.set(n + 1);
                match fault_of(n) {
                    None => {
                        client.echo(n).await?;
                        tally.borrow_mut().echoes += 1;
                    }
                    Some(tool) => {
                        let (answer, _) = client
                            .request_named("tools/call", Some(tool), &call_params(tool, n))
                            .await?;
                        tally.borrow_mut().fault(tool, &answer)?;
                    }
                }
            }
        }));
    }
    let mut clients = Vec::new();
    for worker in workers {
        clients.push(worker.await.map_err(|e| e.to_string())??);
    }
    let elapsed = start.elapsed();
    // Still serving after all of it, on every session.
    for (c, client) in clients.iter_mut().enumerate() {
        client.echo(9_000_000 + c as u64).await?;
    }
    let report = json!({
        "transport": "http",
        "calls": total,
        "clients": plan.http_clients,
        "seconds": round(elapsed.as_secs_f64(), 1),
        "outcomes": tally.borrow().report(),
        "rss_kib_before": rss_before,
        "rss_kib_after": proc_stats::rss_kib(pid),
        "errors": 0,
    });
    Ok(report)
}
