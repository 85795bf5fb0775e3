//! `toolwire-sleep-ceiling [--phase-ms MS] [--multi-thread]`
//!
//! The load generator's slow-tool probe with no MCP and no second process: 64 tasks, each
//! awaiting `tokio::time::sleep(10 ms)` in a closed loop, counted as the load generator counts
//! calls, on a current-thread runtime as the Rust demo's (`--multi-thread`: on tokio's
//! multi-thread runtime, as rmcp's). Its share of the ideal 6,400 per second is the most a
//! server whose slow tool sleeps on tokio can reach on this machine. Prints one JSON line
//! shaped like the load generator's `slow_tool` report.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

const CONCURRENCY: u64 = 64;
const SLEEP_MS: u64 = 10;

fn main() -> ExitCode {
    let mut phase = Duration::from_millis(3000);
    let mut multi_thread = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--multi-thread" => multi_thread = true,
            "--phase-ms" => match args.next().and_then(|v| v.parse::<u64>().ok()) {
                Some(ms) => phase = Duration::from_millis(ms),
                None => return usage(),
            },
            _ => return usage(),
        }
    }
    let mut builder = if multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("toolwire-sleep-ceiling: {err}");
            return ExitCode::FAILURE;
        }
    };
    let (calls, elapsed) = runtime.block_on(async move {
        let start = Instant::now();
        let deadline = start + phase;
        let count = Arc::new(AtomicU64::new(0));
        let workers: Vec<_> = (0..CONCURRENCY)
            .map(|_| {
                let count = count.clone();
                tokio::spawn(async move {
                    while Instant::now() < deadline {
                        count.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(SLEEP_MS)).await;
                    }
                })
            })
            .collect();
        for worker in workers {
            // A worker only sleeps and counts; it cannot panic.
            let _ = worker.await;
        }
        (count.load(Ordering::Relaxed), start.elapsed())
    });
    let ideal = (CONCURRENCY * 1000 / SLEEP_MS) as f64;
    let rate = calls as f64 / elapsed.as_secs_f64();
    println!(
        "{{\"runtime\":\"tokio, {}\",\"slow_tool\":{{\"concurrency\":{CONCURRENCY},\"sleep_ms\":{SLEEP_MS},\"calls_per_s\":{:.0},\"ideal_calls_per_s\":{ideal:.1},\"efficiency\":{:.3}}}}}",
        if multi_thread {
            "multi-thread"
        } else {
            "current-thread"
        },
        rate,
        rate / ideal
    );
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: toolwire-sleep-ceiling [--phase-ms MS] [--multi-thread]");
    ExitCode::from(2)
}
