//! The benchmark scenarios. Every answer is verified; the first wrong one ends the run.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use std::borrow::Cow;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::Plan;
use crate::conn::{Answer, Conn};
use crate::proc_stats;

pub async fn run_all(plan: &Plan) -> Result<Value, String> {
    tokio::task::LocalSet::new().run_until(run(plan)).await
}

/// The slow-tool phase with no server: each of the K workers awaits `tokio::time::sleep`
/// itself, counted as the phase counts calls. Its share of the ideal is the most a server whose
/// slow tool sleeps on tokio can reach on this machine.
pub async fn sleep_ceiling(plan: &Plan, runtime: &str) -> Result<Value, String> {
    let ms = plan.slow_ms;
    let slow = tokio::task::LocalSet::new()
        .run_until(slow_phase(plan, move |_| async move {
            tokio::time::sleep(Duration::from_millis(ms)).await;
            Ok(())
        }))
        .await?;
    Ok(json!({"runtime": runtime, "slow_tool": slow}))
}

/// The slow-tool phase: K workers in a closed loop of `call`, run unmeasured for half a phase
/// and then timed for one. The echo warm-up never runs a server's slow path, and a JIT compiling
/// it (the JVM's C2 took most of a core here) would otherwise be measured with it.
async fn slow_phase<F, Fut>(plan: &Plan, call: F) -> Result<Value, String>
where
    F: Fn(u64) -> Fut + Clone + 'static,
    Fut: Future<Output = Result<(), String>> + 'static,
{
    closed_loop(
        plan.slow_concurrency,
        Until::Elapsed(plan.phase / 2),
        call.clone(),
    )
    .await?;
    plan.announce("slow", "started");
    let (calls, elapsed) =
        closed_loop(plan.slow_concurrency, Until::Elapsed(plan.phase), call).await?;
    plan.announce("slow", "ended");
    let ideal = plan.slow_concurrency as f64 * 1000.0 / plan.slow_ms as f64;
    let rate = calls as f64 / elapsed.as_secs_f64();
    Ok(json!({
        "concurrency": plan.slow_concurrency,
        "sleep_ms": plan.slow_ms,
        "calls_per_s": round(rate, 0),
        "ideal_calls_per_s": ideal,
        "efficiency": round(rate / ideal, 3),
    }))
}

/// An answer's id and result, read without building a tree; `R` is the part of the result
/// that is checked.
#[derive(Deserialize)]
struct Reply<R> {
    id: u64,
    result: Option<R>,
}

/// The result of the answer to request `id` in `line`; `bad` words a failure.
fn reply_result<'a, R: Deserialize<'a>>(
    line: &'a [u8],
    id: u64,
    bad: impl Fn(&str) -> String,
) -> Result<R, String> {
    let parsed: Reply<R> = serde_json::from_slice(line).map_err(|e| bad(&e.to_string()))?;
    if parsed.id != id {
        return Err(bad(&format!("expected id {id}")));
    }
    parsed
        .result
        .ok_or_else(|| bad("an error instead of a result"))
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow)]
    content: Vec<TextBlock<'a>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct TextBlock<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// Checks a `tools/call` answer: the right id, a result that is not an error, and (when
/// given) the expected text.
fn check_call(answer: &Answer, id: u64, expected: Option<&str>) -> Result<(), String> {
    check_call_text(&answer.line, id, expected)
}

/// [`check_call`] on the answer's JSON text (the HTTP scenarios read it from a body).
pub(crate) fn check_call_text(line: &[u8], id: u64, expected: Option<&str>) -> Result<(), String> {
    let bad = |why: &str| format!("{why}: {}", String::from_utf8_lossy(line));
    let result: CallResult<'_> = reply_result(line, id, bad)?;
    if result.is_error == Some(true) {
        return Err(bad("an isError result"));
    }
    let text = result
        .content
        .first()
        .and_then(|b| b.text.as_deref())
        .ok_or_else(|| bad("no text content"))?;
    match expected {
        Some(expected) if text != expected => Err(bad(&format!("expected text {expected:?}"))),
        _ => Ok(()),
    }
}

/// The part of a `tools/list` result that is checked, read without building a tree (as
/// calls are): between two lists the load generator's own work is the client's pause.
#[derive(Deserialize)]
struct ListResult<'a> {
    #[serde(borrow)]
    tools: Vec<ListedTool<'a>>,
}

#[derive(Deserialize)]
struct ListedTool<'a> {
    #[serde(borrow)]
    name: Cow<'a, str>,
    #[serde(rename = "inputSchema")]
    _input_schema: serde::de::IgnoredAny,
}

/// Checks a `tools/list` answer: the right id, and at least `echo`, `sleep` and 100 more
/// tools, each with a name and an input schema. Returns how many tools it lists.
fn check_list_text(line: &[u8], id: u64) -> Result<usize, String> {
    let bad = |why: &str| format!("tools/list: {why}: {}", String::from_utf8_lossy(line));
    let tools = reply_result::<ListResult<'_>>(line, id, bad)?.tools;
    let has = |name: &str| tools.iter().any(|tool| tool.name == name);
    if tools.len() < 102 || !has("echo") || !has("sleep") {
        return Err(format!(
            "tools/list has {} tools; the benchmark needs echo, sleep and 100 more",
            tools.len()
        ));
    }
    Ok(tools.len())
}

/// One verified echo call; returns its latency.
pub(crate) async fn echo(conn: &Conn, n: u64) -> Result<Duration, String> {
    let params = format!(r#"{{"name":"echo","arguments":{{"text":"m{n}"}}}}"#);
    let (answer, sent, id) = conn.request("tools/call", &params).await?;
    check_call(&answer, id, Some(&format!("m{n}")))?;
    Ok(answer.at.duration_since(sent))
}

async fn sleep_call(conn: &Conn, ms: u64) -> Result<(), String> {
    let params = format!(r#"{{"name":"sleep","arguments":{{"ms":{ms}}}}}"#);
    let (answer, _, id) = conn.request("tools/call", &params).await?;
    check_call(&answer, id, None)
}

pub(crate) fn percentile_us(sorted: &[Duration], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = ((sorted.len() as f64 * q) as usize).min(sorted.len() - 1);
    sorted[index].as_secs_f64() * 1e6
}

pub(crate) fn round(value: f64, digits: i32) -> f64 {
    let scale = 10f64.powi(digits);
    (value * scale).round() / scale
}

/// Calls per second and latency percentiles of a sequential phase.
pub(crate) fn latency_summary(mut latencies: Vec<Duration>, elapsed: Duration) -> Value {
    latencies.sort();
    json!({
        "calls": latencies.len(),
        "calls_per_s": round(latencies.len() as f64 / elapsed.as_secs_f64(), 0),
        "p50_us": round(percentile_us(&latencies, 0.50), 1),
        "p99_us": round(percentile_us(&latencies, 0.99), 1),
        "p999_us": round(percentile_us(&latencies, 0.999), 1),
    })
}

/// When a closed loop ends: once a time has passed, or once this many calls were made.
#[derive(Clone, Copy)]
pub(crate) enum Until {
    Elapsed(Duration),
    Calls(u64),
}

/// Runs `workers` loops of `call`, each taking the next call number in turn, until `until`;
/// returns (calls, elapsed). Fails with the first call that fails.
pub(crate) async fn closed_loop<F, Fut>(
    workers: usize,
    until: Until,
    call: F,
) -> Result<(u64, Duration), String>
where
    F: Fn(u64) -> Fut + Clone + 'static,
    Fut: Future<Output = Result<(), String>> + 'static,
{
    let start = Instant::now();
    let count = Rc::new(Cell::new(0u64));
    let mut tasks = Vec::with_capacity(workers);
    for _ in 0..workers {
        let count = count.clone();
        let call = call.clone();
        tasks.push(tokio::task::spawn_local(async move {
            loop {
                let n = count.get();
                let more = match until {
                    Until::Elapsed(phase) => start.elapsed() < phase,
                    Until::Calls(total) => n < total,
                };
                if !more {
                    return Ok::<_, String>(());
                }
                count.set(n + 1);
                call(n).await?;
            }
        }));
    }
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    Ok((count.get(), start.elapsed()))
}

async fn run(plan: &Plan) -> Result<Value, String> {
    let spawned = Instant::now();
    let conn = Rc::new(Conn::spawn_initialized(&plan.command).await?);
    let startup_ms = spawned.elapsed().as_secs_f64() * 1e3;
    let pid = conn.pid;

    // Warm up (JITs, caches, allocator).
    for n in 0..500 {
        echo(&conn, n).await?;
    }

    // Sequential: one call at a time.
    let mut latencies = Vec::new();
    let start = Instant::now();
    let mut n = 1_000_000;
    while start.elapsed() < plan.phase {
        latencies.push(echo(&conn, n).await?);
        n += 1;
    }
    let sequential = latency_summary(latencies, start.elapsed());

    if plan.sequential_only {
        let conn = Rc::try_unwrap(conn).map_err(|_| "connection still shared")?;
        conn.close().await?;
        return Ok(json!({
            "startup_ms": round(startup_ms, 1),
            "sequential": sequential,
            "errors": 0,
        }));
    }

    // Pipelined: K calls in flight; server (and our own) CPU per call from /proc.
    let cpu_before = proc_stats::cpu_time(pid);
    let own_before = proc_stats::cpu_time(std::process::id());
    plan.announce("pipelined", "started");
    let (calls, elapsed) = {
        let conn = conn.clone();
        closed_loop(plan.pipeline, Until::Elapsed(plan.phase), move |n| {
            let conn = conn.clone();
            async move { echo(&conn, 2_000_000 + n).await.map(|_| ()) }
        })
        .await?
    };
    plan.announce("pipelined", "ended");
    let cpu_after = proc_stats::cpu_time(pid);
    let own_after = proc_stats::cpu_time(std::process::id());
    let per_call = |before, after| round(proc_stats::cpu_us_per(before, after, calls), 2);
    let cpu_us_per_call = per_call(cpu_before, cpu_after);
    let client_cpu_us_per_call = per_call(own_before, own_after);
    let pipelined = json!({
        "in_flight": plan.pipeline,
        "calls": calls,
        "calls_per_s": round(calls as f64 / elapsed.as_secs_f64(), 0),
        "server_cpu_us_per_call": cpu_us_per_call,
        "client_cpu_us_per_call": client_cpu_us_per_call,
    });

    if plan.echo_only {
        let conn = Rc::try_unwrap(conn).map_err(|_| "connection still shared")?;
        let peak_rss_kib = proc_stats::peak_rss_kib(pid);
        conn.close().await?;
        return Ok(json!({
            "startup_ms": round(startup_ms, 1),
            "sequential": sequential,
            "pipelined": pipelined,
            "peak_rss_kib": peak_rss_kib,
            "errors": 0,
        }));
    }

    // Slow tool: K concurrent calls of a tool that sleeps `slow_ms`.
    let slow = {
        let conn = conn.clone();
        let ms = plan.slow_ms;
        slow_phase(plan, move |_| {
            let conn = conn.clone();
            async move { sleep_call(&conn, ms).await }
        })
        .await?
    };

    // tools/list, one at a time.
    let mut list_latencies = Vec::new();
    let mut tool_count = 0;
    // The server's CPU per list does not depend on wake-ups or on the client's pace.
    let list_cpu_before = proc_stats::cpu_time(pid);
    // The client's pause: from an answer read to the next list sent (checking it, mostly). A
    // server that polls for its next request after answering sees it as its idle time.
    let mut pauses = Vec::new();
    let mut last_answer: Option<Instant> = None;
    let start = Instant::now();
    while start.elapsed() < plan.phase / 2 || list_latencies.is_empty() {
        let (answer, sent, id) = conn.request("tools/list", "{}").await?;
        if let Some(previous) = last_answer {
            pauses.push(sent.duration_since(previous));
        }
        tool_count = check_list_text(&answer.line, id)?;
        list_latencies.push(answer.at.duration_since(sent));
        last_answer = Some(answer.at);
    }
    let list_cpu_after = proc_stats::cpu_time(pid);
    let lists = list_latencies.len() as u64;
    let list_cpu_us = round(
        proc_stats::cpu_us_per(list_cpu_before, list_cpu_after, lists),
        1,
    );
    list_latencies.sort();
    pauses.sort();
    let list = json!({
        "tools": tool_count,
        "calls": list_latencies.len(),
        "server_cpu_us_per_list": list_cpu_us,
        "p50_us": round(percentile_us(&list_latencies, 0.5), 1),
        "p99_us": round(percentile_us(&list_latencies, 0.99), 1),
        "client_pause_us_p50": round(percentile_us(&pauses, 0.5), 1),
    });

    let peak_rss_kib = proc_stats::peak_rss_kib(pid);
    // What the resident set is made of, read at the same moment.
    let rss_anon_kib = proc_stats::rss_anon_kib(pid);
    let rss_file_kib = proc_stats::rss_file_kib(pid);

    // Memory per call with N calls in flight at once.
    let inflight = if plan.inflight > 0 {
        Some(hold_in_flight(&conn, plan.inflight).await?)
    } else {
        None
    };

    let notifications = conn.notifications.get();
    let conn = Rc::try_unwrap(conn).map_err(|_| "connection still shared")?;
    conn.close().await?;
    Ok(json!({
        "startup_ms": round(startup_ms, 1),
        "sequential": sequential,
        "pipelined": pipelined,
        "slow_tool": slow,
        "tools_list": list,
        "peak_rss_kib": peak_rss_kib,
        "rss_anon_kib": rss_anon_kib,
        "rss_file_kib": rss_file_kib,
        "inflight": inflight,
        "unsolicited_notifications": notifications,
        "errors": 0,
    }))
}

async fn hold_in_flight(conn: &Rc<Conn>, count: usize) -> Result<Value, String> {
    let hold_ms = 6000;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let baseline = proc_stats::rss_kib(conn.pid).ok_or("no /proc status")?;
    let mut tasks = Vec::with_capacity(count);
    for _ in 0..count {
        let conn = conn.clone();
        tasks.push(tokio::task::spawn_local(async move {
            sleep_call(&conn, hold_ms).await
        }));
    }
    // Let every request reach the server, then read its memory while all are held.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let held = proc_stats::rss_kib(conn.pid).ok_or("no /proc status")?;
    for task in tasks {
        task.await.map_err(|e| e.to_string())??;
    }
    let per_call = (held.saturating_sub(baseline) as f64 * 1024.0) / count as f64;
    Ok(json!({
        "calls": count,
        "rss_before_kib": baseline,
        "rss_held_kib": held,
        "bytes_per_call": round(per_call, 0),
    }))
}

#[cfg(test)]
mod tests {
    use super::check_list_text;

    fn list(id: u64, names: &[String]) -> Vec<u8> {
        let tools: Vec<String> = names
            .iter()
            .map(|name| format!(r#"{{"name":"{name}","inputSchema":{{"type":"object"}}}}"#))
            .collect();
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]}}}}"#,
            tools.join(",")
        )
        .into_bytes()
    }

    fn demo_names(extra: usize) -> Vec<String> {
        let mut names = vec!["echo".to_owned(), "sleep".to_owned()];
        names.extend((0..extra).map(|n| format!("extra_{n}")));
        names
    }

    #[test]
    fn a_full_list_passes_and_is_counted() {
        assert_eq!(check_list_text(&list(7, &demo_names(100)), 7), Ok(102));
    }

    #[test]
    fn a_wrong_id_a_short_list_or_a_missing_tool_fails() {
        assert!(check_list_text(&list(8, &demo_names(100)), 7).is_err());
        assert!(check_list_text(&list(7, &demo_names(99)), 7).is_err());
        let mut without_sleep = demo_names(101);
        without_sleep.retain(|name| name != "sleep");
        assert!(check_list_text(&list(7, &without_sleep), 7).is_err());
    }

    #[test]
    fn an_error_a_tool_without_schema_or_broken_json_fails() {
        let error = br#"{"jsonrpc":"2.0","id":7,"error":{"code":-32601,"message":"no"}}"#;
        assert!(check_list_text(error, 7).is_err());
        let no_schema = list(7, &demo_names(100));
        let no_schema = String::from_utf8(no_schema).unwrap().replacen(
            r#","inputSchema":{"type":"object"}"#,
            "",
            1,
        );
        assert!(check_list_text(no_schema.as_bytes(), 7).is_err());
        let mut cut = list(7, &demo_names(100));
        cut.truncate(cut.len() - 3);
        assert!(check_list_text(&cut, 7).is_err());
    }
}
