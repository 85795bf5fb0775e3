//! `toolwire-demo [--http PORT]`: the Rust demo server on stdio.

use std::process::ExitCode;

#[tokio::main]
async fn main() -> ExitCode {
    // Logs go to stderr: stdout carries nothing but protocol.
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLWIRE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();

    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        None => {}
        Some("--http") => {
            eprintln!(
                "toolwire-demo: --http is not supported yet (Streamable HTTP lands with issue #7)"
            );
            return ExitCode::from(2);
        }
        Some(other) => {
            eprintln!(
                "toolwire-demo: unknown argument {other:?}\nusage: toolwire-demo [--http PORT]"
            );
            return ExitCode::from(2);
        }
    }

    let server = match toolwire_demo::build_server() {
        Ok(server) => server,
        Err(err) => {
            eprintln!("toolwire-demo: {err}");
            return ExitCode::FAILURE;
        }
    };
    match server.serve_stdio().await {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("toolwire-demo: {err}");
            ExitCode::FAILURE
        }
    }
}
