//! Cold start, the first thing a desktop host feels when it spawns a stdio server: the wall
//! time from spawning the process to the answer of `tools/list` (after `initialize` and
//! `notifications/initialized` on the same pipe), each run a new process. `--bare` times a
//! command that speaks no MCP from spawn to its exit (`python -c pass`, `node -e 0`): the
//! interpreter's own start, the floor under its servers'.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::Plan;
use crate::conn::{Conn, start_server};
use crate::scenarios::{percentile_us, round};

pub async fn stdio(plan: &Plan, runs: u64, bare: bool) -> Result<Value, String> {
    let mut times = Vec::with_capacity(runs as usize);
    let mut tools = 0;
    for _ in 0..runs {
        let start = Instant::now();
        if bare {
            let status = start_server(&plan.command, std::process::Stdio::null)?
                .wait()
                .await
                .map_err(|e| e.to_string())?;
            times.push(start.elapsed());
            if !status.success() {
                return Err(format!("the command failed: {status}"));
            }
            continue;
        }
        let conn = Conn::spawn_initialized(&plan.command).await?;
        let (list, _, _) = conn.request("tools/list", "{}").await?;
        times.push(start.elapsed());
        let list = list.json();
        tools = list["result"]["tools"]
            .as_array()
            .ok_or_else(|| format!("tools/list failed: {list}"))?
            .len();
        conn.close().await?;
    }
    times.sort();
    let ms = |q: f64| round(percentile_us(&times, q) / 1000.0, 1);
    Ok(json!({
        "cold_start": if bare { "spawn to exit" } else { "spawn to the tools/list answer" },
        "runs": runs,
        "tools": if bare { Value::Null } else { json!(tools) },
        "median_ms": ms(0.5),
        "p90_ms": ms(0.9),
        "min_ms": round(times.first().copied().unwrap_or(Duration::ZERO).as_secs_f64() * 1000.0, 1),
    }))
}
