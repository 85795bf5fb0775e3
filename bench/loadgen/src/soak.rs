//! The soak: many verified echo calls, the server's resident memory sampled as they go.
//! - stdio: one session, `pipeline` calls in flight.
//! - HTTP: `http_clients` clients, each opening a session, making `calls_per_session` calls and
//!   deleting it, over and over, so sessions come and go throughout.
//!
//! Forty samples; the run fails when the last quarter grows by 1% or more: its highest sample
//! against the highest of the quarter before it. Peaks, not single samples, because a runtime
//! with a garbage collector (V8, the JVM) saws up and down between collections; a leak raises
//! every peak, a sawtooth does not.

use std::cell::Cell;
use std::rc::Rc;
use std::time::Instant;

use serde_json::{Value, json};

use crate::Plan;
use crate::conn::Conn;
use crate::http::Client;
use crate::proc_stats;
use crate::scenarios::{Until, closed_loop, round};

const SAMPLES: u64 = 40;
/// The last quarter may grow by less than this, in percent.
const GROWTH_LIMIT_PCT: f64 = 1.0;

/// The resident memory samples, taken as the calls pass each fortieth of the total.
struct Samples {
    pid: u32,
    every: u64,
    kib: Vec<u64>,
}

impl Samples {
    fn new(pid: u32, total: u64) -> Samples {
        Samples {
            pid,
            every: (total / SAMPLES).max(1),
            kib: Vec::new(),
        }
    }

    /// After call `n` (counting from 1): a sample when it ends a fortieth. A sample that
    /// cannot be read (no /proc, the server gone) fails the run rather than passing unmeasured.
    fn after(&mut self, n: u64) -> Result<(), String> {
        if n.is_multiple_of(self.every) {
            let kib = proc_stats::rss_kib(self.pid).ok_or_else(|| {
                format!("cannot read the resident memory of process {}", self.pid)
            })?;
            self.kib.push(kib);
        }
        Ok(())
    }

    /// The report, and whether the last quarter held still.
    fn verdict(&self) -> (Value, bool) {
        let quarter = self.kib.len().div_ceil(4);
        let last = &self.kib[self.kib.len() - quarter..];
        let before =
            &self.kib[self.kib.len().saturating_sub(2 * quarter)..self.kib.len() - quarter];
        let peak = |samples: &[u64]| samples.iter().copied().max().unwrap_or(0);
        let start = peak(before).max(1);
        let growth = (peak(last) as f64 - start as f64) * 100.0 / start as f64;
        let pass = growth < GROWTH_LIMIT_PCT;
        let report = json!({
            "rss_kib_samples": self.kib,
            "rss_kib_first": self.kib.first(),
            "rss_kib_last": self.kib.last(),
            "last_quarter_peak_growth_pct": round(growth, 3),
            "growth_limit_pct": GROWTH_LIMIT_PCT,
            "pass": pass,
        });
        (report, pass)
    }
}

fn finish(mut report: Value, samples: &Samples) -> Result<Value, String> {
    let (verdict, pass) = samples.verdict();
    report["memory"] = verdict;
    if pass {
        Ok(report)
    } else {
        Err(format!(
            "the server's memory grew by {}% over the last quarter of the soak (limit {GROWTH_LIMIT_PCT}%): {report}",
            report["memory"]["last_quarter_peak_growth_pct"]
        ))
    }
}

/// `total` echo calls over stdio, `plan.pipeline` in flight.
pub async fn stdio(plan: &Plan, total: u64) -> Result<Value, String> {
    let conn = Rc::new(Conn::spawn_initialized(&plan.command).await?);
    let samples = Rc::new(std::cell::RefCell::new(Samples::new(conn.pid, total)));
    let (_, elapsed) = closed_loop(plan.pipeline, Until::Calls(total), {
        let (conn, samples) = (conn.clone(), samples.clone());
        move |n| {
            let (conn, samples) = (conn.clone(), samples.clone());
            async move {
                crate::scenarios::echo(&conn, n).await?;
                samples.borrow_mut().after(n + 1)
            }
        }
    })
    .await?;
    let samples = Rc::try_unwrap(samples)
        .map_err(|_| "samples still shared")?
        .into_inner();
    let report = json!({
        "transport": "stdio",
        "calls": total,
        "in_flight": plan.pipeline,
        "seconds": round(elapsed.as_secs_f64(), 1),
        "calls_per_s": round(total as f64 / elapsed.as_secs_f64(), 0),
        "errors": 0,
    });
    let conn = Rc::try_unwrap(conn).map_err(|_| "connection still shared")?;
    conn.close().await?;
    finish(report, &samples)
}

/// `total` echo calls over HTTP by `plan.http_clients` clients, each deleting its session and
/// opening a new one every `calls_per_session` calls.
pub async fn http(
    plan: &Plan,
    port: u16,
    pid: u32,
    total: u64,
    calls_per_session: u64,
) -> Result<Value, String> {
    let reopened = Rc::new(Cell::new(0u64));
    let samples = Rc::new(std::cell::RefCell::new(Samples::new(pid, total)));
    let next = Rc::new(Cell::new(0u64));
    let sessions = Rc::new(Cell::new(0u64));
    let start = Instant::now();
    let mut workers = Vec::new();
    for _ in 0..plan.http_clients {
        let mut client = Client::open(port, reopened.clone(), false).await?;
        let (samples, next, sessions) = (samples.clone(), next.clone(), sessions.clone());
        workers.push(tokio::task::spawn_local(async move {
            loop {
                if next.get() >= total {
                    return Ok::<_, String>(());
                }
                client.initialize().await?;
                sessions.set(sessions.get() + 1);
                for _ in 0..calls_per_session {
                    let n = next.get();
                    if n >= total {
                        break;
                    }
                    next.set(n + 1);
                    client.echo(n).await?;
                    samples.borrow_mut().after(n + 1)?;
                }
                client.delete_session().await?;
            }
        }));
    }
    for worker in workers {
        worker.await.map_err(|e| e.to_string())??;
    }
    let elapsed = start.elapsed();
    let samples = Rc::try_unwrap(samples)
        .map_err(|_| "samples still shared")?
        .into_inner();
    let report = json!({
        "transport": "http",
        "calls": total,
        "clients": plan.http_clients,
        "calls_per_session": calls_per_session,
        "sessions_opened_and_deleted": sessions.get(),
        "seconds": round(elapsed.as_secs_f64(), 1),
        "calls_per_s": round(total as f64 / elapsed.as_secs_f64(), 0),
        "reopened_idle_connections": reopened.get(),
        "errors": 0,
    });
    finish(report, &samples)
}
