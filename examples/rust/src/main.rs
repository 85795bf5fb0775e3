//! `toolwire-demo [--extra-tools N] [--http PORT]`: the Rust demo server on stdio.

use std::process::ExitCode;

const USAGE: &str = "usage: toolwire-demo [--extra-tools N] [--http PORT]";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    // Logs go to stderr (warnings unless TOOLWIRE_LOG says otherwise): stdout is protocol only.
    toolwire::logs::init_from_env(Some(tracing::Level::WARN));

    let mut extra_tools = 0;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--extra-tools" => match args.next().and_then(|n| n.parse().ok()) {
                Some(n) => extra_tools = n,
                None => {
                    eprintln!("toolwire-demo: --extra-tools needs a count\n{USAGE}");
                    return ExitCode::from(2);
                }
            },
            "--http" => {
                eprintln!(
                    "toolwire-demo: --http is not supported yet (Streamable HTTP lands with issue #7)"
                );
                return ExitCode::from(2);
            }
            other => {
                eprintln!("toolwire-demo: unknown argument {other:?}\n{USAGE}");
                return ExitCode::from(2);
            }
        }
    }

    let options = toolwire::ServerOptions::default();
    let server = match toolwire_demo::build_server_full(options, extra_tools) {
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
