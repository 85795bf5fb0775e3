//! `toolwire-demo [--extra-tools N [--fault-tools] [--bench-tools] | --conformance [--task-ttl-ms MS] [--max-tasks N]] [--no-metrics] [--idle-poll-us US] [--otlp URL] [--redis URL] [--request-state-key SECRET]... [--host-thread | --http PORT [--host ADDR] [--stateless] [--json | --sse] [--metrics-path PATH]]`:
//! the Rust demo server (or the conformance suite's server) on stdio, or on Streamable HTTP at
//! `http://ADDR:PORT/mcp`. `--host-thread` serves stdio with the loop the bindings use
//! (`toolwire::host::HostStdio`, driven from the main thread), so the tests cover it too.

use std::process::ExitCode;

use toolwire::transport::http::{HttpOptions, ResponseMode};

const USAGE: &str = "usage: toolwire-demo [--extra-tools N [--fault-tools] [--bench-tools] | --conformance [--task-ttl-ms MS] [--max-tasks N]] [--no-metrics] [--idle-poll-us US] [--otlp URL] [--redis URL] [--request-state-key SECRET]... [--host-thread | --http PORT [--host ADDR] [--stateless] [--json | --sse] [--metrics-path PATH]]";

struct Args {
    extra_tools: usize,
    /// The tools that misbehave on purpose (`crash`, `hang`, `malformed`).
    fault_tools: bool,
    /// The payload and validation tools of bench/payloads.
    bench_tools: bool,
    http_port: Option<u16>,
    host: String,
    stateless: bool,
    /// `--json` / `--sse`: every answer as one JSON body / as an SSE stream.
    response_mode: ResponseMode,
    conformance: bool,
    host_thread: bool,
    task_ttl_ms: Option<u64>,
    max_tasks: Option<usize>,
    /// `--no-metrics`: the engine counts nothing (the benchmark's metrics-off side).
    metrics: bool,
    /// `--metrics-path`: serve the Prometheus text there (HTTP).
    metrics_path: Option<String>,
    /// `--idle-poll-us`: the most the serve loop looks for the next request before it sleeps
    /// (`ServerOptions::idle_poll`; 0: never).
    idle_poll_us: Option<u64>,
    /// `--otlp`: export the request spans to this OTLP/HTTP collector (`http://HOST:4318`).
    otlp: Option<String>,
    /// `--redis`: share tasks and changes with the other replicas using this Redis.
    redis: Option<String>,
    /// `--request-state-key` (repeatable): the MRTR `requestState` secrets, the first sealing;
    /// every replica behind one address gets the same ones.
    request_state_keys: Vec<String>,
}

/// A flag's value that must be a number above zero.
fn positive<T: std::str::FromStr + PartialOrd + Default>(
    value: Option<String>,
    flag: &str,
) -> Result<T, String> {
    value
        .and_then(|v| v.parse().ok())
        .filter(|n| *n > T::default())
        .ok_or_else(|| format!("{flag} needs a number above zero"))
}

fn parse_args() -> Result<Args, String> {
    let mut parsed = Args {
        extra_tools: 0,
        fault_tools: false,
        bench_tools: false,
        http_port: None,
        host: "127.0.0.1".into(),
        stateless: false,
        response_mode: ResponseMode::Auto,
        conformance: false,
        host_thread: false,
        task_ttl_ms: None,
        max_tasks: None,
        metrics: true,
        metrics_path: None,
        idle_poll_us: None,
        otlp: None,
        redis: None,
        request_state_keys: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--extra-tools" => {
                parsed.extra_tools = args
                    .next()
                    .and_then(|n| n.parse().ok())
                    .ok_or("--extra-tools needs a count")?;
            }
            "--http" => {
                parsed.http_port = Some(
                    args.next()
                        .and_then(|n| n.parse().ok())
                        .ok_or("--http needs a port (0 picks a free one)")?,
                );
            }
            "--host" => parsed.host = args.next().ok_or("--host needs an address")?,
            "--stateless" => parsed.stateless = true,
            "--json" | "--sse" if parsed.response_mode != ResponseMode::Auto => {
                return Err("--json and --sse: give one".into());
            }
            "--json" => parsed.response_mode = ResponseMode::Json,
            "--sse" => parsed.response_mode = ResponseMode::Sse,
            "--conformance" => parsed.conformance = true,
            "--fault-tools" => parsed.fault_tools = true,
            "--bench-tools" => parsed.bench_tools = true,
            "--host-thread" => parsed.host_thread = true,
            "--no-metrics" => parsed.metrics = false,
            "--idle-poll-us" => {
                parsed.idle_poll_us = Some(
                    args.next()
                        .and_then(|v| v.parse().ok())
                        .ok_or("--idle-poll-us needs a number of microseconds (0: never)")?,
                );
            }
            "--otlp" => parsed.otlp = Some(args.next().ok_or("--otlp needs a collector URL")?),
            "--redis" => parsed.redis = Some(args.next().ok_or("--redis needs a URL")?),
            "--request-state-key" => parsed
                .request_state_keys
                .push(args.next().ok_or("--request-state-key needs a secret")?),
            "--metrics-path" => {
                parsed.metrics_path = Some(args.next().ok_or("--metrics-path needs a path")?);
            }
            "--max-tasks" => parsed.max_tasks = Some(positive(args.next(), "--max-tasks")?),
            "--task-ttl-ms" => parsed.task_ttl_ms = Some(positive(args.next(), "--task-ttl-ms")?),
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    if (parsed.fault_tools || parsed.bench_tools) && parsed.conformance {
        return Err(
            "--fault-tools and --bench-tools go with the demo's tools, not --conformance".into(),
        );
    }
    if parsed.host_thread && parsed.http_port.is_some() {
        return Err("--host-thread serves stdio; it does not go with --http".into());
    }
    if parsed.host_thread && parsed.redis.is_some() {
        return Err("--redis goes with the engine's own loop, not --host-thread".into());
    }
    if parsed.http_port.is_none()
        && (parsed.stateless
            || parsed.response_mode != ResponseMode::Auto
            || parsed.metrics_path.is_some())
    {
        return Err("--stateless, --json, --sse and --metrics-path go with --http".into());
    }
    Ok(parsed)
}

/// The server the arguments ask for.
fn build(args: &Args) -> Result<toolwire::Server, toolwire::Error> {
    let mut options = toolwire::ServerOptions::default();
    options.metrics = args.metrics;
    if let Some(us) = args.idle_poll_us {
        options.idle_poll = std::time::Duration::from_micros(us);
    }
    if !args.request_state_keys.is_empty() {
        options.request_state_keys =
            Some(toolwire::StateKeys::from_secrets(&args.request_state_keys)?);
    }
    let redis = match &args.redis {
        Some(url) => Some(toolwire::redis::Redis::connect(
            url,
            toolwire::redis::RedisOptions::default(),
        )?),
        None => None,
    };
    if args.conformance {
        if let Some(ms) = args.task_ttl_ms {
            options.task_ttl = std::time::Duration::from_millis(ms);
        }
        // Kept tasks, overall and for one principal (all clients are one without auth).
        if let Some(max) = args.max_tasks {
            options.max_tasks = max;
            options.max_tasks_per_principal = max;
        }
        toolwire_demo::conformance::build_conformance_server_shared(options, redis.as_ref())
    } else {
        if args.fault_tools {
            quiet_injected_panics();
        }
        let builder = toolwire_demo::demo_builder(
            options,
            args.extra_tools,
            args.fault_tools,
            redis.as_ref(),
        );
        if args.bench_tools {
            toolwire_demo::bench_tools::register(builder)?.build()
        } else {
            builder.build()
        }
    }
}

/// The `crash` tool's panics are expected: thousands of them in a fault run would bury stderr.
/// Any other panic is reported as before.
fn quiet_injected_panics() {
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let injected = info
            .payload()
            .downcast_ref::<String>()
            .is_some_and(|message| message == toolwire_demo::INJECTED_PANIC);
        if !injected {
            report(info);
        }
    }));
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(args) => args,
        Err(why) => {
            eprintln!("toolwire-demo: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // Logs go to stderr (warnings unless TOOLWIRE_LOG says otherwise): stdout is protocol only.
    // With --otlp the request spans go to the collector too; dropping the guard at the end of
    // main flushes them.
    let _telemetry = match &args.otlp {
        None => {
            toolwire::logs::init_from_env(Some(tracing::Level::WARN));
            None
        }
        Some(url) => {
            match toolwire::telemetry::init_otlp(url, "toolwire-demo", Some(tracing::Level::WARN)) {
                Ok(telemetry) => Some(telemetry),
                Err(err) => {
                    eprintln!("toolwire-demo: {err}");
                    return ExitCode::FAILURE;
                }
            }
        }
    };
    // One client on stdio needs one thread; HTTP serves many clients on every core.
    let runtime = match args.http_port {
        None => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        Some(_) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build(),
    };
    let runtime = match runtime {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("toolwire-demo: cannot start the runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    // Built inside the runtime: a Redis subscription runs on it.
    let server = match runtime.block_on(async { build(&args) }) {
        Ok(server) => server,
        Err(err) => {
            eprintln!("toolwire-demo: {err}");
            return ExitCode::FAILURE;
        }
    };
    if args.host_thread {
        return serve_stdio_from_this_thread(&server);
    }
    let outcome = runtime.block_on(async {
        match args.http_port {
            None => server.serve_stdio().await,
            Some(port) => serve_http(&server, &args, port).await,
        }
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("toolwire-demo: {err}");
            ExitCode::FAILURE
        }
    }
}

/// Stdio through the bindings' loop: this thread drives it, calls run on the engine's runtime.
fn serve_stdio_from_this_thread(server: &toolwire::Server) -> ExitCode {
    let runtime = toolwire::host::runtime().handle().clone();
    match toolwire::host::HostStdio::open(server, runtime) {
        Ok(mut stdio) => {
            // The demo has no work of its own for this thread: serve until the input ends.
            stdio.serve_until(|| false);
            ExitCode::SUCCESS
        }
        Err(err) => {
            eprintln!("toolwire-demo: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn serve_http(
    server: &toolwire::Server,
    args: &Args,
    port: u16,
) -> Result<(), toolwire::Error> {
    let mut options = HttpOptions::default();
    options.stateless = args.stateless;
    options.response_mode = args.response_mode;
    options.metrics_path = args.metrics_path.clone();
    let address = if args.host.contains(':') {
        format!("[{}]:{port}", args.host)
    } else {
        format!("{}:{port}", args.host)
    };
    let http = server.serve_http(&address, options).await?;
    // The handlers first: a launcher may stop the server as soon as it reads the line below,
    // and a SIGTERM before them would kill the process instead of ending serving.
    use tokio::signal::unix::{SignalKind, signal};
    let mut terminate = signal(SignalKind::terminate()).ok();
    let mut interrupt = signal(SignalKind::interrupt()).ok();
    // The one line a launcher waits for: where to connect. Written in one piece: stderr is
    // unbuffered, and `eprintln!` would write the address in parts a reader can see half of.
    let line = format!(
        "toolwire-demo: listening on http://{}/mcp\n",
        http.local_addr()
    );
    let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
    let stop = http.stop_token();
    tokio::spawn(async move {
        async fn received(signal: &mut Option<tokio::signal::unix::Signal>) -> Option<()> {
            match signal {
                Some(signal) => signal.recv().await,
                None => std::future::pending().await,
            }
        }
        tokio::select! {
            _ = received(&mut interrupt) => {}
            _ = received(&mut terminate) => {}
        }
        stop.cancel();
    });
    http.wait().await;
    Ok(())
}
