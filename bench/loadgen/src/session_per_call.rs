//! The shape public MCP benchmarks measure (TM Dev Lab's "benchmark-mcp-servers-v2"): each
//! client, on its own keep-alive connection, opens a session for every call (`initialize`,
//! `notifications/initialized`, one verified `tools/call` of `echo`), then deletes it (or, with
//! `--abandon`, leaves it to the server's idle reaping, as clients that just stop do). Server
//! figures are over its whole process tree (ASGI servers and Node's cluster fork workers).

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Plan;
use crate::http::Client;
use crate::proc_stats;
use crate::scenarios::{latency_summary, round};

/// Sessions each client opens, unmeasured, before the timed phase (JITs, pools, workers).
const WARM_UP_SESSIONS: u64 = 20;

/// One session: the handshake, one call, and its end. Returns the call's latency.
async fn one_session(client: &mut Client, n: u64, abandon: bool) -> Result<Duration, String> {
    client.initialize().await?;
    let latency = client.echo(n).await?;
    if client.session().is_some() {
        if abandon {
            client.take_session();
        } else {
            client.delete_session().await?;
        }
    }
    Ok(latency)
}

pub(crate) async fn http(plan: &Plan, port: u16, pid: u32) -> Result<Value, String> {
    let reopened = Rc::new(Cell::new(0u64));
    let mut clients = Vec::with_capacity(plan.http_clients);
    for _ in 0..plan.http_clients {
        clients.push(Client::open(port, reopened.clone(), false).await?);
    }
    let mut warm_up = Vec::new();
    for (c, mut client) in clients.into_iter().enumerate() {
        let abandon = plan.abandon;
        warm_up.push(tokio::task::spawn_local(async move {
            for n in 0..WARM_UP_SESSIONS {
                one_session(&mut client, c as u64 * 1000 + n, abandon).await?;
            }
            Ok::<_, String>(client)
        }));
    }
    let mut clients = Vec::with_capacity(warm_up.len());
    for task in warm_up {
        clients.push(task.await.map_err(|e| e.to_string())??);
    }
    // Workers are forked by now.
    let pids = proc_stats::tree(pid);
    let rss_before = proc_stats::tree_rss_kib(&pids);
    let cpu_before = proc_stats::tree_cpu_time(&pids);
    let own_before = proc_stats::cpu_time(std::process::id());
    let count = Rc::new(Cell::new(0u64));
    let sessions = Rc::new(RefCell::new(Vec::new()));
    let calls = Rc::new(RefCell::new(Vec::new()));
    plan.announce("session-per-call", "started");
    let start = Instant::now();
    let deadline = start + plan.phase;
    let mut tasks = Vec::new();
    for mut client in clients {
        let (count, sessions, calls) = (count.clone(), sessions.clone(), calls.clone());
        let abandon = plan.abandon;
        tasks.push(tokio::task::spawn_local(async move {
            while Instant::now() < deadline {
                let n = count.get();
                count.set(n + 1);
                let opened = Instant::now();
                let call = one_session(&mut client, 5_000_000 + n, abandon).await?;
                sessions.borrow_mut().push(opened.elapsed());
                calls.borrow_mut().push(call);
            }
            Ok::<_, String>(())
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let elapsed = start.elapsed();
    plan.announce("session-per-call", "ended");
    let done = count.get();
    let per_session = |before, after| round(proc_stats::cpu_us_per(before, after, done), 1);
    let server_cpu = per_session(cpu_before, proc_stats::tree_cpu_time(&pids));
    let client_cpu = per_session(own_before, proc_stats::cpu_time(std::process::id()));
    let rss_after = proc_stats::tree_rss_kib(&pids);
    let pss_after = proc_stats::tree_pss_kib(&pids);
    Ok(json!({
        "transport": "http",
        "session_per_call": true,
        "abandon": plan.abandon,
        "clients": plan.http_clients,
        "server_processes": pids.len(),
        "sessions": latency_summary(sessions.take(), elapsed),
        "calls": latency_summary(calls.take(), elapsed),
        "server_cpu_us_per_session": server_cpu,
        "client_cpu_us_per_session": client_cpu,
        "rss_kib_before": rss_before,
        "rss_kib_after": rss_after,
        "pss_kib_after": pss_after,
        "peak_rss_kib": proc_stats::tree_peak_rss_kib(&pids),
        "reopened_idle_connections": reopened.get(),
        "errors": 0,
    }))
}
