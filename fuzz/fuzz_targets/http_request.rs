#![no_main]
//! Raw HTTP/1.1 requests against a live Streamable HTTP server on 127.0.0.1. `SESSION` in an
//! input stands for the id of a live session opened at start, so mutations reach past the
//! session lookup. Every request must be answered with a well-formed status line (or the
//! connection closed), never a 500; a panic anywhere in the server aborts the run.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::OnceLock;
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use toolwire::transport::http::HttpOptions;
use toolwire::{Context, Server, Tool, ToolError, ToolOutput};

struct Live {
    addr: SocketAddr,
    session: String,
    _runtime: tokio::runtime::Runtime,
}

fn live() -> &'static Live {
    static LIVE: OnceLock<Live> = OnceLock::new();
    LIVE.get_or_init(|| {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime");
        let server = Server::builder("fuzz", "1")
            .tool(Tool::new("echo"), |_ctx: Context, args: serde_json::Value| async move {
                Ok::<_, ToolError>(ToolOutput::text(args.to_string()))
            })
            .build()
            .expect("server");
        let mut options = HttpOptions::default();
        options.max_body_bytes = Some(16 * 1024);
        options.body_read_timeout = Some(Duration::from_millis(500));
        options.header_read_timeout = Some(Duration::from_millis(500));
        let http = runtime
            .block_on(server.serve_http("127.0.0.1:0", options))
            .expect("bind");
        let addr = http.local_addr();
        std::mem::forget(http); // serves for the whole run
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"fuzz","version":"1"}}}"#;
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: {}\r\n\r\n{init}",
            init.len()
        );
        let answer = exchange(addr, request.as_bytes());
        let session = answer
            .lines()
            .find_map(|l| l.strip_prefix("mcp-session-id: "))
            .expect("a session")
            .trim()
            .to_owned();
        Live { addr, session, _runtime: runtime }
    })
}

/// Sends `request`, ends the sending side, reads until the server closes (or 2 s pass: an
/// event stream that stays open is fine).
fn exchange(addr: SocketAddr, request: &[u8]) -> String {
    let mut stream = TcpStream::connect(addr).expect("connect");
    stream.set_read_timeout(Some(Duration::from_secs(2))).expect("timeout");
    let _ = stream.write_all(request);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut answer = Vec::new();
    let _ = stream.read_to_end(&mut answer);
    String::from_utf8_lossy(&answer).into_owned()
}

fuzz_target!(|data: &[u8]| {
    let live = live();
    let mut request = Vec::with_capacity(data.len() + 64);
    let mut rest = data;
    while let Some(at) = rest.windows(7).position(|w| w == b"SESSION") {
        request.extend_from_slice(&rest[..at]);
        request.extend_from_slice(live.session.as_bytes());
        rest = &rest[at + 7..];
    }
    request.extend_from_slice(rest);
    let answer = exchange(live.addr, &request);
    if answer.is_empty() {
        return;
    }
    // An HTTP/1.0 request is answered in HTTP/1.0.
    let status: u16 = answer
        .strip_prefix("HTTP/1.1 ")
        .or_else(|| answer.strip_prefix("HTTP/1.0 "))
        .and_then(|r| r.get(..3))
        .and_then(|c| c.parse().ok())
        .unwrap_or_else(|| panic!("not a status line: {answer:?}"));
    assert!((100..600).contains(&status) && status != 500, "{answer}");
});
