//! The demo binary over real stdio: the bad-input suite, framing details, and shutdown on EOF.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Run {
    lines: Vec<Value>,
    status: std::process::ExitStatus,
    elapsed: Duration,
    stderr: String,
}

/// Which stdio path the demo takes: core's async loop on Linux's reopened pipes, the same loop
/// on the portable handles that other systems use (`TOOLWIRE_PORTABLE_IO`), or the bindings'
/// host-thread loop (`--host-thread`), on the native descriptors or the portable ones.
#[derive(Clone, Copy, Debug)]
enum Path {
    Native,
    Portable,
    HostThread,
    HostThreadPortable,
}

impl Path {
    const ALL: [Path; 4] = [
        Path::Native,
        Path::Portable,
        Path::HostThread,
        Path::HostThreadPortable,
    ];

    fn portable(self) -> bool {
        matches!(self, Path::Portable | Path::HostThreadPortable)
    }

    fn host_thread(self) -> bool {
        matches!(self, Path::HostThread | Path::HostThreadPortable)
    }

    /// What the engine's debug log says on this path only.
    fn evidence(self) -> Option<&'static str> {
        match self {
            Path::Native | Path::HostThread => None,
            Path::Portable => Some("stdio through the portable handles"),
            Path::HostThreadPortable => Some("the portable bell"),
        }
    }
}

/// All the demo writes to stdout, until it closes it.
fn read_stdout(child: &mut std::process::Child) -> String {
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout is piped")
        .read_to_string(&mut out)
        .expect("utf-8 stdout");
    out
}

/// Runs the demo, writes `input`, closes stdin, and collects every stdout line.
fn run(input: &[u8]) -> Run {
    run_on(input, Path::Native)
}

fn run_on(input: &[u8], path: Path) -> Run {
    let start = Instant::now();
    let mut command = Command::new(env!("CARGO_BIN_EXE_toolwire-demo"));
    command.env_remove("TOOLWIRE_PORTABLE_IO");
    if path.host_thread() {
        command.arg("--host-thread");
    }
    if path.portable() {
        command
            .env("TOOLWIRE_PORTABLE_IO", "1")
            .env("TOOLWIRE_LOG", "toolwire=debug");
    }
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("demo binary starts");
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_vec();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(&input);
    });
    let mut stderr_pipe = child.stderr.take().unwrap();
    let stderr_reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr_pipe.read_to_string(&mut text);
        text
    });
    let out = read_stdout(&mut child);
    writer.join().unwrap();
    let stderr = stderr_reader.join().unwrap();
    let status = child.wait().unwrap();
    let lines = out
        .lines()
        .map(|line| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("stdout line is not JSON ({e}): {line}"))
        })
        .collect();
    Run {
        lines,
        status,
        elapsed: start.elapsed(),
        stderr,
    }
}

fn line(value: Value) -> Vec<u8> {
    let mut bytes = value.to_string().into_bytes();
    bytes.push(b'\n');
    bytes
}

fn init() -> Vec<u8> {
    let mut bytes = line(
        json!({"jsonrpc": "2.0", "id": "init", "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}),
    );
    bytes.extend(line(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    ));
    bytes
}

fn ping(id: i64) -> Vec<u8> {
    line(json!({"jsonrpc": "2.0", "id": id, "method": "ping"}))
}

fn answer_to(lines: &[Value], id: Value) -> &Value {
    lines
        .iter()
        .find(|l| l.get("id") == Some(&id))
        .unwrap_or_else(|| panic!("no answer to {id} in {lines:?}"))
}

/// The whole suite on every stdio path: the portable ones are what macOS and Windows run.
#[test]
fn bad_input_suite_then_still_serving() {
    for path in Path::ALL {
        bad_input_suite_on(path);
    }
}

fn bad_input_suite_on(path: Path) {
    let mut input = Vec::new();
    // Each bad input is followed by a ping, which must be answered.
    let bad: Vec<(&str, Vec<u8>, Option<i64>)> = vec![
        ("malformed JSON", b"{\"jsonrpc\":\n".to_vec(), Some(-32700)),
        (
            "wrong jsonrpc",
            line(json!({"jsonrpc": "1.0", "id": 1, "method": "ping"})),
            Some(-32600),
        ),
        (
            "null id",
            line(json!({"jsonrpc": "2.0", "id": null, "method": "ping"})),
            Some(-32600),
        ),
        (
            "missing method",
            line(json!({"jsonrpc": "2.0", "id": 2})),
            Some(-32600),
        ),
        (
            "non-object params",
            line(json!({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": 7})),
            Some(-32600),
        ),
        (
            "request before initialize",
            line(json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})),
            Some(-32600),
        ),
        (
            "invalid UTF-8",
            b"{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"p\xffng\"}\n".to_vec(),
            Some(-32700),
        ),
        (
            "deep nesting",
            format!("{}{}\n", "[".repeat(100_000), "]".repeat(100_000)).into_bytes(),
            Some(-32600),
        ),
        (
            "oversize frame",
            {
                let mut big =
                    br#"{"jsonrpc":"2.0","id":6,"method":"ping","params":{"pad":""#.to_vec();
                big.extend(std::iter::repeat_n(b'x', 5 * 1024 * 1024));
                big.extend(b"\"}}\n");
                big
            },
            Some(-32600),
        ),
        ("blank lines", b"\n\r\n   \n".to_vec(), None),
    ];
    let mut expectations = Vec::new();
    for (index, (what, bytes, code)) in bad.into_iter().enumerate() {
        input.extend(bytes);
        let ping_id = 1000 + index as i64;
        input.extend(ping(ping_id));
        expectations.push((what, code, ping_id));
    }
    input.extend(init());
    input.extend(line(json!({"jsonrpc": "2.0", "id": 7, "method": "nope"})));
    input.extend(line(
        json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {"name": "missing"}}),
    ));
    input.extend(line(json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call", "params": {"name": "add", "arguments": {"a": "1", "b": 2}}})));
    input.extend(line(json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call", "params": {"name": "echo", "arguments": {"text": "crlf"}}})));
    input.pop();
    input.extend(b"\r\n");
    input.extend(ping(11));

    let run = run_on(&input, path);
    assert!(
        run.status.success(),
        "{path:?}: exit status {:?}",
        run.status
    );
    if let Some(evidence) = path.evidence() {
        assert!(
            run.stderr.contains(evidence),
            "{path:?} was not taken: {}",
            run.stderr
        );
    }
    let mut cursor = run.lines.iter();
    for (what, code, ping_id) in expectations {
        if let Some(code) = code {
            let error = cursor.next().unwrap_or_else(|| panic!("{what}: no answer"));
            assert_eq!(error["error"]["code"], code, "{what}: {error}");
        }
        let pong = cursor
            .next()
            .unwrap_or_else(|| panic!("{what}: no ping answer"));
        assert_eq!(
            pong,
            &json!({"jsonrpc": "2.0", "id": ping_id, "result": {}}),
            "{what}"
        );
    }
    let lines = &run.lines;
    assert_eq!(answer_to(lines, json!(7))["error"]["code"], -32601);
    assert_eq!(answer_to(lines, json!(8))["error"]["code"], -32602);
    assert_eq!(answer_to(lines, json!(9))["result"]["isError"], true);
    assert_eq!(
        answer_to(lines, json!(10))["result"]["content"][0]["text"],
        "crlf"
    );
    assert_eq!(answer_to(lines, json!(11))["result"], json!({}));
}

#[test]
fn eof_drains_calls_in_flight_then_exits_zero() {
    for path in [Path::Native, Path::HostThread] {
        let mut input = init();
        input.extend(line(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 300}}})));
        let run = run_on(&input, path);
        assert!(run.status.success(), "{path:?}");
        assert_eq!(
            answer_to(&run.lines, json!(1))["result"]["content"][0]["text"],
            "slept 300 ms",
            "{path:?}"
        );
    }
}

#[test]
fn cancelled_call_is_silent_and_does_not_hold_shutdown() {
    let mut input = init();
    input.extend(line(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "sleep", "arguments": {"ms": 20000}}})));
    input.extend(line(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 1}}),
    ));
    let run = run(&input);
    assert!(run.status.success());
    assert!(
        run.lines.iter().all(|l| l.get("id") != Some(&json!(1))),
        "{:?}",
        run.lines
    );
    assert!(
        run.elapsed < Duration::from_secs(4),
        "took {:?}",
        run.elapsed
    );
}

#[test]
fn http_flag_serves_streamable_http_and_sigterm_stops_it() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire-demo"))
        .args(["--http", "0"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("demo binary starts");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut first = String::new();
    std::io::BufRead::read_line(&mut stderr, &mut first).unwrap();
    let url = first
        .trim()
        .strip_prefix("toolwire-demo: listening on ")
        .unwrap_or_else(|| panic!("no listening line: {first:?}"));
    let authority = url
        .strip_prefix("http://")
        .and_then(|rest| rest.strip_suffix("/mcp"))
        .unwrap_or_else(|| panic!("unexpected URL {url}"))
        .to_owned();
    assert!(
        authority.starts_with("127.0.0.1:"),
        "binds loopback: {authority}"
    );
    // A raw HTTP/1.1 initialize: the answer carries a session id and the InitializeResult.
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "stdio-test", "version": "1"}}})
    .to_string();
    let body = body.as_bytes();
    let mut socket = std::net::TcpStream::connect(&authority).unwrap();
    write!(
        socket,
        "POST /mcp HTTP/1.1\r\nHost: {authority}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .unwrap();
    socket.write_all(body).unwrap();
    let mut response = String::new();
    socket.read_to_string(&mut response).unwrap();
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    assert!(
        response.to_ascii_lowercase().contains("mcp-session-id: "),
        "{response}"
    );
    assert!(
        response.contains(r#""protocolVersion":"2025-11-25""#),
        "{response}"
    );
    // SIGTERM ends serving cleanly.
    let killed = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(killed.success());
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let out = read_stdout(&mut child);
    assert!(out.is_empty(), "nothing on stdout over HTTP: {out:?}");
}

#[test]
fn http_options_without_http_are_refused() {
    let output = Command::new(env!("CARGO_BIN_EXE_toolwire-demo"))
        .args(["--stateless"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("go with --http"));
}

fn modern(id: i64, method: &str, params: Value) -> Vec<u8> {
    let mut params = params;
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    line(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
}

/// Over real stdio on every path: the first request decides the era of the connection, and a
/// client that then mixes eras gets a clear error each time while the connection goes on.
#[test]
fn the_first_request_locks_the_era_and_mixed_eras_are_refused() {
    for path in Path::ALL {
        // Modern first: discover and a call answer stamped; initialize is -32022; a listen is
        // acknowledged and, at EOF, ended with its result and (stdio) notifications/cancelled.
        let mut input = modern(1, "server/discover", json!({}));
        input.extend(modern(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        ));
        input.extend(line(json!({"jsonrpc": "2.0", "id": 3, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}})));
        input.extend(modern(
            4,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ));
        let run = run_on(&input, path);
        assert!(run.status.success(), "{path:?}: {}", run.stderr);
        let lines = &run.lines;
        assert_eq!(
            answer_to(lines, json!(1))["result"]["supportedVersions"],
            json!(["2026-07-28"]),
            "{path:?}"
        );
        assert_eq!(
            answer_to(lines, json!(2))["result"]["resultType"],
            "complete",
            "{path:?}"
        );
        assert_eq!(
            answer_to(lines, json!(3))["error"]["code"],
            -32022,
            "{path:?}"
        );
        let ack = lines
            .iter()
            .position(|l| l["method"] == "notifications/subscriptions/acknowledged")
            .unwrap_or_else(|| panic!("{path:?}: no acknowledgement in {lines:?}"));
        let end = lines
            .iter()
            .position(|l| l["id"] == 4)
            .expect("the listen result");
        assert!(ack < end, "{path:?}");
        assert_eq!(
            lines[end]["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            4
        );
        assert!(
            lines
                .iter()
                .any(|l| l["method"] == "notifications/cancelled" && l["params"]["requestId"] == 4),
            "{path:?}: the stdio teardown names the listen id: {lines:?}"
        );

        // Legacy first: the modern request is refused, the session goes on.
        let mut input = init();
        input.extend(modern(5, "tools/list", json!({})));
        input.extend(ping(6));
        let run = run_on(&input, path);
        assert_eq!(
            answer_to(&run.lines, json!(5))["error"]["code"],
            -32600,
            "{path:?}"
        );
        assert_eq!(
            answer_to(&run.lines, json!(6))["result"],
            json!({}),
            "{path:?}"
        );
    }
}
