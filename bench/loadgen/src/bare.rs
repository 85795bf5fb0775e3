//! The transports' ceilings: servers that speak no MCP at all, answering the load generator's
//! own requests with the bytes an MCP server would send, found by scanning for `"id":`,
//! `"method":"` and the echo's `"text":"` instead of parsing JSON. What the load generator
//! measures against them is the most any MCP server can reach over that transport on this
//! machine with this client: the pipes' or the sockets' cost, the kernel's and the load
//! generator's own.
//!
//! They answer only what the load generator sends (initialize, notifications, `echo` calls
//! whose text has no escapes); anything else gets a JSON-RPC error, which fails the run.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// What a request line asks for.
#[derive(Debug, PartialEq)]
enum Asked<'a> {
    /// No id: a notification, answered with nothing (HTTP: 202).
    Notification,
    Initialize(u64),
    Echo(u64, &'a [u8]),
    /// Anything else (or a request it cannot read): an error answer.
    Other(Option<u64>),
}

fn after<'a>(haystack: &'a [u8], needle: &[u8]) -> Option<&'a [u8]> {
    haystack
        .windows(needle.len())
        .position(|w| w == needle)
        .map(|at| &haystack[at + needle.len()..])
}

fn read_request(line: &[u8]) -> Asked<'_> {
    let Some(id_text) = after(line, b"\"id\":") else {
        return if after(line, b"\"method\":\"").is_some() {
            Asked::Notification
        } else {
            Asked::Other(None)
        };
    };
    // An id it cannot read (not a plain number) still gets an answer: the error.
    let digits = id_text.iter().take_while(|b| b.is_ascii_digit()).count();
    let Some(id) = std::str::from_utf8(&id_text[..digits])
        .ok()
        .and_then(|d| d.parse().ok())
    else {
        return Asked::Other(None);
    };
    let method = after(line, b"\"method\":\"")
        .and_then(|rest| rest.split(|&b| b == b'"').next())
        .unwrap_or_default();
    match method {
        b"initialize" => Asked::Initialize(id),
        b"tools/call" => match after(line, b"\"text\":\"") {
            Some(rest) => match rest.iter().position(|&b| b == b'"') {
                Some(end) if !rest[..end].contains(&b'\\') => Asked::Echo(id, &rest[..end]),
                _ => Asked::Other(Some(id)),
            },
            None => Asked::Other(Some(id)),
        },
        _ => Asked::Other(Some(id)),
    }
}

const INITIALIZE_RESULT: &str = r#"{"capabilities":{"tools":{"listChanged":true}},"protocolVersion":"2025-11-25","serverInfo":{"name":"bare","version":"0"}}"#;

/// Writes the answer to `asked` (the same bytes toolwire's demo sends for an echo); `false`
/// when there is none to send (a notification).
fn write_answer(out: &mut Vec<u8>, asked: &Asked<'_>) -> bool {
    match asked {
        Asked::Notification => return false,
        Asked::Initialize(id) => {
            let _ = write!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{INITIALIZE_RESULT}}}"#
            );
        }
        Asked::Echo(id, text) => {
            let _ = write!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"content":[{{"text":""#
            );
            out.extend_from_slice(text);
            out.extend_from_slice(br#"","type":"text"}]}}"#);
        }
        Asked::Other(id) => {
            let id = id.map_or_else(|| "null".to_owned(), |id| id.to_string());
            let _ = write!(
                out,
                r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32601,"message":"the bare ceiling answers only initialize and echo"}}}}"#
            );
        }
    }
    true
}

/// The stdio ceiling: blocking reads and writes on one thread (no runtime at all), the
/// answers of every line already read written with one flush.
pub fn serve_stdio() -> ExitCode {
    // Reads of 64 KiB bypass stdin's own smaller buffer, so what is left unread here is all
    // that was read: when it is empty, the answers so far go out before the next read waits.
    let mut reader = BufReader::with_capacity(64 * 1024, std::io::stdin());
    let mut writer = BufWriter::with_capacity(64 * 1024, std::io::stdout().lock());
    let mut line = Vec::with_capacity(1024);
    let mut answer = Vec::with_capacity(1024);
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(_) => {}
            Err(err) => {
                eprintln!("bare stdio: {err}");
                return ExitCode::FAILURE;
            }
        }
        answer.clear();
        if write_answer(&mut answer, &read_request(&line)) {
            answer.push(b'\n');
            if writer.write_all(&answer).is_err() {
                return ExitCode::FAILURE;
            }
        }
        if reader.buffer().is_empty() && writer.flush().is_err() {
            return ExitCode::FAILURE;
        }
    }
    let _ = writer.flush();
    ExitCode::SUCCESS
}

/// The HTTP ceiling: hyper's HTTP/1.1 server with the options toolwire's endpoint sets
/// (keep-alive, no writev, TCP_NODELAY) on the multi-thread runtime the Rust demo serves HTTP
/// on; each POST answered as above, with the headers toolwire sends (`content-type`, and
/// `mcp-session-id` on the initialize answer).
pub fn serve_http(port: &str) -> ExitCode {
    let Ok(port) = port.parse::<u16>() else {
        eprintln!("bare http: {port:?} is not a port");
        return ExitCode::from(2);
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("bare http: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(accept_loop(port)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            eprintln!("bare http: {err}");
            ExitCode::FAILURE
        }
    }
}

async fn accept_loop(port: u16) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    let sessions = Arc::new(AtomicU64::new(0));
    loop {
        let (socket, _) = listener.accept().await?;
        let _ = socket.set_nodelay(true);
        let sessions = sessions.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let sessions = sessions.clone();
                async move { Ok::<_, std::convert::Infallible>(answer(request, &sessions).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .writev(false)
                .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                .await;
        });
    }
}

type Reply = hyper::Response<http_body_util::Full<bytes::Bytes>>;

fn reply(status: u16, body: Vec<u8>) -> Reply {
    let mut response = hyper::Response::new(http_body_util::Full::new(bytes::Bytes::from(body)));
    *response.status_mut() =
        hyper::StatusCode::from_u16(status).unwrap_or(hyper::StatusCode::INTERNAL_SERVER_ERROR);
    response
}

async fn answer(request: hyper::Request<hyper::body::Incoming>, sessions: &AtomicU64) -> Reply {
    use http_body_util::BodyExt;
    match *request.method() {
        hyper::Method::POST => {}
        // The load generator ends sessions this way.
        hyper::Method::DELETE => return reply(200, Vec::new()),
        _ => return reply(405, Vec::new()),
    }
    let body = match request.into_body().collect().await {
        Ok(body) => body.to_bytes(),
        Err(_) => return reply(400, Vec::new()),
    };
    let asked = read_request(&body);
    let mut out = Vec::with_capacity(256);
    if !write_answer(&mut out, &asked) {
        return reply(202, Vec::new());
    }
    let mut response = reply(200, out);
    let headers = response.headers_mut();
    headers.insert(
        hyper::header::CONTENT_TYPE,
        hyper::header::HeaderValue::from_static("application/json"),
    );
    if matches!(asked, Asked::Initialize(_)) {
        let session = format!("{:032x}", sessions.fetch_add(1, Ordering::Relaxed) + 1);
        if let Ok(value) = hyper::header::HeaderValue::from_str(&session) {
            headers.insert("mcp-session-id", value);
        }
    }
    response
}

#[cfg(test)]
mod tests {
    use super::{Asked, read_request, write_answer};

    fn answered(line: &str) -> Option<String> {
        let mut out = Vec::new();
        write_answer(&mut out, &read_request(line.as_bytes()))
            .then(|| String::from_utf8(out).unwrap_or_default())
    }

    #[test]
    fn an_echo_is_answered_with_its_text_and_id() {
        let line = r#"{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"echo","arguments":{"text":"m7"}}}"#;
        assert_eq!(read_request(line.as_bytes()), Asked::Echo(42, b"m7"));
        assert_eq!(
            answered(line).as_deref(),
            Some(r#"{"jsonrpc":"2.0","id":42,"result":{"content":[{"text":"m7","type":"text"}]}}"#)
        );
    }

    #[test]
    fn initialize_gets_a_result_and_a_notification_nothing() {
        let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#;
        let answer = answered(init).unwrap_or_default();
        let parsed: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
        assert_eq!(parsed["id"], 0);
        assert!(parsed["result"]["protocolVersion"].is_string());
        assert_eq!(
            answered(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            None
        );
    }

    #[test]
    fn anything_else_is_an_error_answer() {
        for line in [
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":1}}}"#,
            r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\"b"}}}"#,
            "not json",
            r#"{"jsonrpc":"2.0","id":"seven","method":"tools/call","params":{"name":"echo","arguments":{"text":"m1"}}}"#,
        ] {
            let answer = answered(line).unwrap_or_default();
            let parsed: serde_json::Value = serde_json::from_str(&answer).unwrap_or_default();
            assert_eq!(parsed["error"]["code"], -32601, "{line}");
        }
    }
}
