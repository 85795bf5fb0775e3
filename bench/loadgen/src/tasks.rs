//! The tasks soak: N tasks created, polled, answered or cancelled by many clients at once over
//! Streamable HTTP (2026-07-28, the tasks extension declared), each checked to its end; then the
//! server's memory, first with every finished task still kept, then once they expired.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Plan;
use crate::http::Client;
use crate::proc_stats;
use crate::scenarios::round;

/// What the soak's requests declare: the modern request's, plus the tasks extension.
const TASKS_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{},"extensions":{"io.modelcontextprotocol/tasks":{}}}}"#;

async fn call(
    client: &mut Client,
    method: &str,
    name: &str,
    params: &str,
) -> Result<Value, String> {
    let (answer, _) = client.request_named(method, Some(name), params).await?;
    let answer: Value = serde_json::from_slice(&answer).map_err(|e| format!("{method}: {e}"))?;
    if answer.get("error").is_some() {
        return Err(format!("{method}: {answer}"));
    }
    Ok(answer["result"].clone())
}

/// Polls the task until its status is one of `wanted` (each poll answered in turn), for at
/// most 30 s: a task that never gets there fails the run instead of holding it.
async fn poll(client: &mut Client, id: &str, wanted: &[&str]) -> Result<(Value, u64), String> {
    let params = format!(r#"{{"taskId":"{id}"}}"#);
    let deadline = Instant::now() + Duration::from_secs(30);
    for polls in 1.. {
        if Instant::now() > deadline {
            return Err(format!("task {id} did not get to {wanted:?} within 30 s"));
        }
        let task = call(client, "tasks/get", id, &params).await?;
        let status = task["status"].as_str().unwrap_or_default();
        if wanted.contains(&status) {
            return Ok((task, polls));
        }
        if matches!(status, "completed" | "failed" | "cancelled") {
            return Err(format!("task {id} ended {status}, not {wanted:?}: {task}"));
        }
    }
    unreachable!()
}

/// One task's whole life; returns the polls it took and whether it was cancelled.
async fn one_task(client: &mut Client, n: u64) -> Result<(u64, bool), String> {
    let file = format!("f{n}.txt");
    let created = call(
        client,
        "tools/call",
        "confirm_delete",
        &format!(r#"{{"name":"confirm_delete","arguments":{{"filename":"{file}"}}}}"#),
    )
    .await?;
    let id = match (created["resultType"].as_str(), created["taskId"].as_str()) {
        (Some("task"), Some(id)) => id.to_owned(),
        _ => return Err(format!("confirm_delete did not become a task: {created}")),
    };
    let (parked, mut polls) = poll(client, &id, &["input_required"]).await?;
    let key = parked["inputRequests"]
        .as_object()
        .and_then(|open| open.keys().next().cloned())
        .ok_or_else(|| format!("no open question: {parked}"))?;
    let cancel = n % 4 == 3;
    if cancel {
        call(
            client,
            "tasks/cancel",
            &id,
            &format!(r#"{{"taskId":"{id}"}}"#),
        )
        .await?;
        let (_, more) = poll(client, &id, &["cancelled"]).await?;
        polls += more;
    } else {
        let answer = r#"{"action":"accept","content":{"confirm":true}}"#;
        let params = format!(r#"{{"taskId":"{id}","inputResponses":{{"{key}":{answer}}}}}"#);
        call(client, "tasks/update", &id, &params).await?;
        let (done, more) = poll(client, &id, &["completed"]).await?;
        polls += more;
        let text = done["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default();
        if text != format!("Deleted {file}") {
            return Err(format!("task {id} answered {done}"));
        }
    }
    Ok((polls, cancel))
}

/// The server's resident memory now.
fn memory(pid: u32) -> Value {
    json!({
        "rss_kib": proc_stats::rss_kib(pid),
        "rss_anon_kib": proc_stats::rss_anon_kib(pid),
    })
}

/// One round: `total` tasks by every client at once, then their expiry.
async fn round_of(
    clients: Vec<Client>,
    pid: u32,
    total: u64,
) -> Result<(Vec<Client>, Value), String> {
    let anon_before = proc_stats::rss_anon_kib(pid);
    let cpu_before = proc_stats::cpu_time(pid);
    let next = Rc::new(Cell::new(0u64));
    let (polls, cancelled) = (Rc::new(Cell::new(0u64)), Rc::new(Cell::new(0u64)));
    let start = Instant::now();
    let mut workers = Vec::new();
    for mut client in clients {
        let (next, polls, cancelled) = (next.clone(), polls.clone(), cancelled.clone());
        workers.push(tokio::task::spawn_local(async move {
            loop {
                let n = next.get();
                if n >= total {
                    return Ok::<_, String>(client);
                }
                next.set(n + 1);
                let (took, was_cancelled) = one_task(&mut client, n).await?;
                polls.set(polls.get() + took);
                cancelled.set(cancelled.get() + u64::from(was_cancelled));
            }
        }));
    }
    let mut clients = Vec::new();
    for worker in workers {
        clients.push(worker.await.map_err(|e| e.to_string())??);
    }
    let elapsed = start.elapsed();
    let cpu = proc_stats::cpu_us_per(cpu_before, proc_stats::cpu_time(pid), total);
    // Every task has ended; the store keeps them all until they expire.
    let kept = memory(pid);
    let anon_kept = proc_stats::rss_anon_kib(pid);
    let waited = Instant::now();
    // A probe task made after all the others: once tasks/get no longer finds it, every task
    // has expired, and the reaper (once a second) has forgotten or is about to forget them.
    let probe = &mut clients[0];
    let created = call(
        probe,
        "tools/call",
        "confirm_delete",
        r#"{"name":"confirm_delete","arguments":{"filename":"probe.txt"}}"#,
    )
    .await?;
    let probe_id = match (created["resultType"].as_str(), created["taskId"].as_str()) {
        (Some("task"), Some(id)) => id.to_owned(),
        _ => return Err(format!("the probe did not become a task: {created}")),
    };
    let params = format!(r#"{{"taskId":"{probe_id}"}}"#);
    call(probe, "tasks/cancel", &probe_id, &params).await?;
    let deadline = Instant::now() + Duration::from_secs(600);
    loop {
        if Instant::now() > deadline {
            return Err("the probe task did not expire within 600 s".into());
        }
        // Found: not expired yet. Gone: -32602 (HTTP 400).
        match probe
            .request_named("tasks/get", Some(&probe_id), &params)
            .await
        {
            Ok(_) => tokio::time::sleep(Duration::from_millis(200)).await,
            Err(why) if why.contains("-32602") => break,
            Err(why) => return Err(why),
        }
    }
    // The reaper's next pass (at most a second later) forgets the probe and any stragglers.
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let after = memory(pid);
    let per_task = match (anon_before, anon_kept) {
        (Some(b), Some(k)) => json!(round(k.saturating_sub(b) as f64 * 1024.0 / total as f64, 0)),
        _ => Value::Null,
    };
    Ok((
        clients,
        json!({
            "tasks": total,
            "cancelled": cancelled.get(),
            "polls": polls.get(),
            "seconds": round(elapsed.as_secs_f64(), 2),
            "tasks_per_s": round(total as f64 / elapsed.as_secs_f64(), 0),
            "server_cpu_us_per_task": round(cpu, 1),
            "memory_all_kept": kept,
            "anon_bytes_per_kept_task": per_task,
            "memory_after_expiry": after,
            "expiry_wait_s": round(waited.elapsed().as_secs_f64(), 1),
        }),
    ))
}

/// Two rounds on one server: the first shows what a burst of tasks costs, the second whether
/// memory keeps growing (a leak) or is reused (the allocator keeps what it was given back).
pub async fn soak(plan: &Plan, port: u16, pid: u32, total: u64) -> Result<Value, String> {
    let reopened = Rc::new(Cell::new(0u64));
    let mut clients = Vec::with_capacity(plan.http_clients);
    for _ in 0..plan.http_clients {
        let mut client = Client::open(port, reopened.clone(), true).await?;
        client.declare(TASKS_META);
        client.initialize().await?;
        clients.push(client);
    }
    let before = memory(pid);
    let (clients, first) = round_of(clients, pid, total).await?;
    let (_, second) = round_of(clients, pid, total).await?;
    Ok(json!({
        "transport": "http",
        "modern": true,
        "clients": plan.http_clients,
        "memory_before": before,
        "rounds": [first, second],
        "reopened_idle_connections": reopened.get(),
        "errors": 0,
    }))
}
