//! `toolwire-loadgen [options] -- CMD [ARGS…]`
//!
//! Spawns an MCP server speaking stdio (or, with `--http`, Streamable HTTP on a free port), performs the handshake, then runs the benchmark
//! scenarios and prints one JSON report on stdout. Every answer is checked (id and content);
//! any error makes the run fail (exit 1). Phases are bounded by time, so a slow server is
//! measured over the same wall time as a fast one. The client runs on one thread, leaving the
//! other core to the server.

mod bare;
mod cold_start;
mod conn;
mod faults;
mod http;
mod payloads;
mod proc_stats;
mod scenarios;
mod session_per_call;
mod sessions;
mod soak;
mod tasks;

use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

/// What to run, from the command line.
pub struct Plan {
    pub phase: Duration,
    pub pipeline: usize,
    pub slow_ms: u64,
    pub slow_concurrency: usize,
    pub inflight: usize,
    /// Only the sequential phase (for the one-core pass of bench/run).
    pub sequential_only: bool,
    /// Only the echo phases, sequential and pipelined (against the bare ceilings, which have
    /// no slow tool and no list).
    pub echo_only: bool,
    /// Streamable HTTP instead of stdio: the command gets a free port for `{port}`.
    pub http: bool,
    /// Concurrent HTTP clients (sessions), each on its own connection.
    pub http_clients: usize,
    /// With `http`: 2026-07-28 requests (no handshake, no session; `_meta` and the
    /// `Mcp-Method`/`Mcp-Name` headers on every request).
    pub modern: bool,
    /// With `modern`: instead of the echo phases, one MRTR round trip of this tool (it asks
    /// `user_name` in round 1) against two calls of `test_simple_text`, both sequential.
    pub mrtr_tool: Option<String>,
    /// With `modern`: the tasks soak, this many tasks over `http_clients` clients against the
    /// conformance server (its `confirm_delete` tool), then their expiry.
    pub tasks: Option<u64>,
    /// The soak: this many echo calls (stdio pipelined; HTTP with sessions opened and deleted
    /// every `calls_per_session` calls), the server's memory sampled; fails if it keeps growing.
    pub soak: Option<u64>,
    /// With `http`: memory per idle session and per open SSE stream, this many of each.
    pub sessions: Option<u64>,
    /// Faults mixed into load: this many calls against a demo run with `--fault-tools`.
    pub faults: Option<u64>,
    /// `--cold-start N`: N spawns, each timed to its tools/list answer.
    pub cold_start: Option<u64>,
    /// With `--cold-start`: the command speaks no MCP; time it from spawn to exit.
    pub bare: bool,
    pub calls_per_session: u64,
    /// With `http`: every call in a session of its own (handshake, call, DELETE).
    pub session_per_call: bool,
    /// With `session_per_call`: sessions are left open (no DELETE).
    pub abandon: bool,
    /// Say on stderr when each timed phase starts and ends (for tools that sample the server
    /// during one phase, like bench/cost-per-call).
    pub announce: bool,
    /// No server: the slow-tool phase with each worker sleeping on tokio itself.
    pub sleep_ceiling: bool,
    /// With `sleep_ceiling`: on tokio's multi-thread runtime instead of a current-thread one.
    pub multi_thread: bool,
    /// `--payloads`: big payloads and validation cost (bench/payloads), with payloads of this
    /// many bytes.
    pub payloads: Option<u64>,
    /// With `--payloads`: only the validation phases, after a whole unmeasured pass of them
    /// (a JIT's compiling and the big payloads' garbage stay out of the figures).
    pub validation_only: bool,
    pub command: Vec<String>,
}

impl Plan {
    pub fn announce(&self, phase: &str, event: &str) {
        if self.announce {
            eprintln!("toolwire-loadgen: {phase} phase {event}");
        }
    }
}

const USAGE: &str = "usage: toolwire-loadgen [--phase-ms MS] [--pipeline K] [--slow-k K] [--inflight N] -- CMD [ARGS...]
       toolwire-loadgen --sleep-ceiling [--multi-thread] [--phase-ms MS] [--slow-k K]
       toolwire-loadgen --serve-bare-stdio | --serve-bare-http PORT

  --phase-ms MS   wall time of each timed phase (default 3000)
  --pipeline K    calls in flight in the pipelined phase (default 64)
  --slow-k K      concurrent calls of the 10 ms slow tool (default 64)
  --inflight N    also hold N sleep calls in flight at once and measure memory per call (default 0: skip)
  --sequential-only  run only the sequential phase
  --echo-only     run only the echo phases (sequential, pipelined): for the bare ceilings
  --http          Streamable HTTP: CMD gets a free port in place of {port}; N clients, each its own
                  session and connection (sequential latency with one, calls/s with all)
  --clients N     concurrent HTTP clients (default 64)
  --modern        with --http: 2026-07-28 requests (no initialize, no session; _meta and headers)
  --mrtr TOOL     with --modern: time one MRTR round trip of TOOL (round 1 asks user_name, round 2
                  answers it) against two plain calls (test_simple_text), one at a time
  --tasks N       with --modern: the tasks soak against the conformance server (its confirm_delete
                  tool): N tasks created, polled, answered (one in four cancelled) by the clients at
                  once, then the server's memory once they expired (run the server with a short
                  --task-ttl-ms)
  --soak N        N verified echo calls, the server's RSS sampled 40 times; fails when the last
                  quarter's peak is 1% or more above the previous quarter's (stdio: --pipeline in flight; --http: --clients
                  clients, each deleting its session and opening another every K calls)
  --calls-per-session K  with --soak --http (default 100)
  --session-per-call  with --http: each of --clients clients opens a session per call on its
                  keep-alive connection (initialize, initialized, one verified echo, DELETE), as
                  public MCP benchmarks do; sessions/s, latency, CPU and memory over the server's
                  process tree (forked workers counted)
  --abandon       with --session-per-call: sessions are never deleted (reclaimed by the server)
  --sessions N    with --http: N sessions opened (initialize, initialized) over 64 connections from
                  16 loopback addresses, then one standalone SSE stream (GET) per session, each on
                  its own connection held open, then one echo call: the server's RSS at rest, per
                  idle session and per stream (needs `ulimit -n` above N + 128 for both processes)
  --faults N      N calls against a demo run with --fault-tools: of every ten, seven verified echoes
                  and one each of crash, malformed and hang, each of which must be answered with an
                  error (stdio also cancels a long sleep every 50 calls); the server must go on
  --cold-start N  N fresh spawns of the server, each timed from spawn to the answer of tools/list
                  (after initialize and initialized): median, p90, min in ms
  --bare          with --cold-start: a command that speaks no MCP (python -c pass), timed to its exit
  --announce      write \"toolwire-loadgen: PHASE phase started\" (and \"ended\") to stderr
  --sleep-ceiling no server: the slow-tool phase with each worker awaiting tokio::time::sleep
                  itself, on a current-thread runtime as the Rust demo's (bench/ceiling)
  --multi-thread  with --sleep-ceiling: on tokio's multi-thread runtime, as rmcp's
  --serve-bare-stdio      be the stdio ceiling: a server with no MCP that answers the load
                          generator's initialize and echo lines by scanning bytes (bench/run)
  --serve-bare-http PORT  be the HTTP ceiling: the same on hyper, listening on 127.0.0.1:PORT
  --payloads      against a server with its --bench-tools: take_text, give_text and give_structured
                  with --payload-bytes payloads, one call at a time and 8 in flight (MB/s, calls/s,
                  server CPU per call), then validate_big against validate_small (the same
                  document; CPU per call, and whether a deeply invalid one is refused)
  --payload-bytes N  --payloads with payloads of N bytes (default 1048576)
  --validation-only  with --payloads: validate_big against validate_small only, measured in a
                  second pass of both (the first warms a JIT up); --payload-bytes is unused";

fn parse_args() -> Result<Plan, String> {
    let mut plan = Plan {
        phase: Duration::from_millis(3000),
        pipeline: 64,
        slow_ms: 10,
        slow_concurrency: 64,
        inflight: 0,
        sequential_only: false,
        echo_only: false,
        http: false,
        http_clients: 64,
        modern: false,
        mrtr_tool: None,
        tasks: None,
        soak: None,
        sessions: None,
        faults: None,
        cold_start: None,
        bare: false,
        calls_per_session: 100,
        session_per_call: false,
        abandon: false,
        announce: false,
        sleep_ceiling: false,
        multi_thread: false,
        payloads: None,
        validation_only: false,
        command: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        let mut number = |name: &str| -> Result<u64, String> {
            args.next()
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} needs a number"))
        };
        match arg.as_str() {
            "--phase-ms" => plan.phase = Duration::from_millis(number("--phase-ms")?),
            "--pipeline" => plan.pipeline = number("--pipeline")?.max(1) as usize,
            "--slow-k" => plan.slow_concurrency = number("--slow-k")?.max(1) as usize,
            "--inflight" => plan.inflight = number("--inflight")? as usize,
            "--sequential-only" => plan.sequential_only = true,
            "--echo-only" => plan.echo_only = true,
            "--http" => plan.http = true,
            "--announce" => plan.announce = true,
            "--sleep-ceiling" => plan.sleep_ceiling = true,
            "--multi-thread" => plan.multi_thread = true,
            "--clients" => plan.http_clients = number("--clients")?.max(1) as usize,
            "--modern" => plan.modern = true,
            "--mrtr" => plan.mrtr_tool = Some(args.next().ok_or("--mrtr needs a tool name")?),
            "--tasks" => plan.tasks = Some(number("--tasks")?.max(1)),
            "--soak" => plan.soak = Some(number("--soak")?.max(1)),
            "--sessions" => plan.sessions = Some(number("--sessions")?.max(1)),
            "--faults" => plan.faults = Some(number("--faults")?.max(1)),
            "--cold-start" => plan.cold_start = Some(number("--cold-start")?.max(1)),
            "--bare" => plan.bare = true,
            "--payloads" => plan.payloads = Some(plan.payloads.unwrap_or(1024 * 1024)),
            "--payload-bytes" => plan.payloads = Some(number("--payload-bytes")?),
            "--validation-only" => plan.validation_only = true,
            "--session-per-call" => plan.session_per_call = true,
            "--abandon" => plan.abandon = true,
            "--calls-per-session" => plan.calls_per_session = number("--calls-per-session")?.max(1),
            "--" => {
                plan.command = args.collect();
                break;
            }
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if plan.sleep_ceiling != plan.command.is_empty() {
        return Err(if plan.sleep_ceiling {
            "--sleep-ceiling runs no server".into()
        } else {
            "no server command after --".into()
        });
    }
    if plan.modern && !plan.http {
        return Err("--modern goes with --http".into());
    }
    if plan.mrtr_tool.is_some() && !plan.modern {
        return Err("--mrtr goes with --modern".into());
    }
    if plan.tasks.is_some() && !plan.modern {
        return Err("--tasks goes with --modern".into());
    }
    if plan.faults.is_some() && (plan.modern || plan.soak.is_some() || plan.tasks.is_some()) {
        return Err("--faults goes with stdio or legacy --http only".into());
    }
    if plan.soak.is_some() && (plan.modern || plan.tasks.is_some() || plan.mrtr_tool.is_some()) {
        return Err("--soak goes with stdio or legacy --http only".into());
    }
    if plan.sessions.is_some()
        && (!plan.http
            || plan.modern
            || plan.soak.is_some()
            || plan.faults.is_some()
            || plan.tasks.is_some())
    {
        return Err("--sessions goes with legacy --http only".into());
    }
    if plan.session_per_call
        && (!plan.http
            || plan.modern
            || plan.soak.is_some()
            || plan.faults.is_some()
            || plan.sessions.is_some())
    {
        return Err("--session-per-call goes with legacy --http only".into());
    }
    if plan.abandon && !plan.session_per_call {
        return Err("--abandon goes with --session-per-call".into());
    }
    if plan.cold_start.is_some() && (plan.http || plan.soak.is_some() || plan.faults.is_some()) {
        return Err("--cold-start goes with stdio only".into());
    }
    if plan.bare && plan.cold_start.is_none() {
        return Err("--bare goes with --cold-start".into());
    }
    if plan.echo_only
        && (plan.http || plan.cold_start.is_some() || plan.soak.is_some() || plan.faults.is_some())
    {
        return Err("--echo-only goes with the stdio phases only".into());
    }
    if plan.payloads.is_some()
        && (plan.http || plan.soak.is_some() || plan.faults.is_some() || plan.cold_start.is_some())
    {
        return Err("--payloads goes with stdio only, alone".into());
    }
    if plan.validation_only && plan.payloads.is_none() {
        return Err("--validation-only goes with --payloads".into());
    }
    if plan.multi_thread && !plan.sleep_ceiling {
        return Err("--multi-thread goes with --sleep-ceiling".into());
    }
    Ok(plan)
}

fn main() -> ExitCode {
    // The ceilings are servers, not load: they take no other option.
    let mut args = std::env::args().skip(1);
    match (args.next().as_deref(), args.next(), args.next()) {
        (Some("--serve-bare-stdio"), None, None) => return bare::serve_stdio(),
        (Some("--serve-bare-http"), Some(port), None) => return bare::serve_http(&port),
        (Some("--serve-bare-stdio" | "--serve-bare-http"), ..) => {
            eprintln!(
                "toolwire-loadgen: --serve-bare-stdio takes nothing, --serve-bare-http a port\n{USAGE}"
            );
            return ExitCode::from(2);
        }
        _ => {}
    }
    let plan = match parse_args() {
        Ok(plan) => plan,
        Err(err) => {
            eprintln!("toolwire-loadgen: {err}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let mut builder = if plan.multi_thread {
        tokio::runtime::Builder::new_multi_thread()
    } else {
        tokio::runtime::Builder::new_current_thread()
    };
    let runtime = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(err) => {
            eprintln!("toolwire-loadgen: {err}");
            return ExitCode::FAILURE;
        }
    };
    let outcome = if plan.sleep_ceiling {
        let flavor = if plan.multi_thread {
            "tokio, multi-thread"
        } else {
            "tokio, current-thread"
        };
        runtime.block_on(scenarios::sleep_ceiling(&plan, flavor))
    } else if plan.http {
        runtime.block_on(http::run_all(&plan))
    } else if let Some(total) = plan.soak {
        runtime.block_on(tokio::task::LocalSet::new().run_until(soak::stdio(&plan, total)))
    } else if let Some(runs) = plan.cold_start {
        runtime.block_on(
            tokio::task::LocalSet::new().run_until(cold_start::stdio(&plan, runs, plan.bare)),
        )
    } else if let Some(bytes) = plan.payloads {
        runtime.block_on(tokio::task::LocalSet::new().run_until(payloads::stdio(&plan, bytes)))
    } else if let Some(total) = plan.faults {
        runtime.block_on(tokio::task::LocalSet::new().run_until(faults::stdio(&plan, total)))
    } else {
        runtime.block_on(scenarios::run_all(&plan))
    };
    match outcome {
        Ok(report) => {
            println!("{report}");
            ExitCode::SUCCESS
        }
        Err(err) => {
            println!("{}", json!({"error": err}));
            eprintln!("toolwire-loadgen: FAILED: {err}");
            ExitCode::FAILURE
        }
    }
}
