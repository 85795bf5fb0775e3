//! Sessions at scale (`--http --sessions N`): the server's resident memory per idle Streamable
//! HTTP session and per open standalone SSE stream, N of each.
//!
//! 1. At rest: one warm-up session (initialize, initialized, one echo call), then deleted.
//! 2. N sessions opened (initialize + notifications/initialized each) over [`CONNECTIONS`]
//!    keep-alive connections, every answer checked and every session id distinct; the
//!    connections are then closed, so what stays is the sessions alone.
//! 3. One standalone SSE stream (GET with the session id) per session, each on its own TCP
//!    connection held open; each must be answered `200 text/event-stream`.
//! 4. One echo call on a new connection: the server still answers (a server at its connection
//!    limit answers 503; it is asked again once one stream is let go, and the 503 reported).
//!
//! The connections come from [`ADDRESSES`] loopback addresses, as from that many clients: a
//! server that bounds the sessions one client may hold (toolwire: 1,000 per peer address by
//! default, the least recently used idle one ended beyond it) then holds all N. A session the
//! server ended anyway is caught when its stream is refused.

use std::cell::{Cell, RefCell};
use std::collections::HashSet;
use std::net::{IpAddr, Ipv4Addr};
use std::rc::Rc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use crate::conn::ANSWER_TIMEOUT;
use crate::http::Client;
use crate::proc_stats;
use crate::scenarios::round;

/// Keep-alive connections the sessions are opened over, each opening one session at a time.
const CONNECTIONS: usize = 64;
/// Streams being opened at once (each a new connection): bounded so the server's accept
/// backlog never overflows into SYN retries, which would time the client, not the server.
const OPENING_AT_ONCE: usize = 64;
/// Loopback addresses the client connects from: 127.0.0.2 and up. 16 keeps 10,000 sessions
/// at 625 per address, under toolwire's default per-client limit (1,000).
const ADDRESSES: u8 = 16;

/// A session's id and the address it was opened from (its stream comes from there too).
type Opened = (String, IpAddr);

fn address(worker: usize) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(
        127,
        0,
        0,
        2 + (worker % ADDRESSES as usize) as u8,
    ))
}

/// The resident memory once it holds still: sampled every 100 ms until two samples in a row
/// agree within 0.5%, for at most 3 s. A sleep, not a signal, because nothing tells when a
/// server has finished what the last answer set off: tasks it spawned per session (rmcp),
/// a collector that frees what the handshakes left (V8, CPython's cycle collector).
async fn settled_rss(pid: u32) -> Result<(u64, u64), String> {
    let read = || {
        proc_stats::rss_kib(pid).ok_or_else(|| format!("cannot read the memory of process {pid}"))
    };
    let deadline = Instant::now() + Duration::from_secs(3);
    let mut last = read()?;
    loop {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = read()?;
        if now.abs_diff(last) * 200 <= last || Instant::now() >= deadline {
            let anon = proc_stats::rss_anon_kib(pid).unwrap_or(0);
            return Ok((now, anon));
        }
        last = now;
    }
}

/// The open-file limit of process `pid` (soft), from /proc.
fn open_file_limit(pid: &str) -> Option<u64> {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).ok()?;
    let line = limits.lines().find(|l| l.starts_with("Max open files"))?;
    let soft = line.split_whitespace().nth(3)?;
    if soft == "unlimited" {
        return Some(u64::MAX);
    }
    soft.parse().ok()
}

/// Opens the standalone SSE stream of `session`: the head must say `200` and
/// `text/event-stream`. The connection is returned open; what the server sends on it later
/// (priming events, keep-alive comments) stays in the socket's buffer, unread.
async fn open_stream(
    port: u16,
    local: IpAddr,
    session: &str,
    number: usize,
) -> Result<TcpStream, String> {
    let fail = |what: String| format!("SSE stream {number} (session {session}): {what}");
    let mut stream = Client::connect(port, Some(local)).await.map_err(&fail)?;
    let request = format!(
        "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\
         Mcp-Session-Id: {session}\r\nMcp-Protocol-Version: 2025-11-25\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| fail(format!("write: {e}")))?;
    let mut head = Vec::with_capacity(1024);
    let read_head = async {
        loop {
            if let Some(end) = head.windows(4).position(|w| w == b"\r\n\r\n") {
                return Ok(end);
            }
            if head.len() > 64 * 1024 {
                return Err("an answer head over 64 KiB".to_owned());
            }
            let mut chunk = [0u8; 4096];
            let read = stream
                .read(&mut chunk)
                .await
                .map_err(|e| format!("read: {e}"))?;
            if read == 0 {
                return Err(format!(
                    "the server closed the connection after {:?}",
                    String::from_utf8_lossy(&head)
                ));
            }
            head.extend_from_slice(&chunk[..read]);
        }
    };
    let end = tokio::time::timeout(ANSWER_TIMEOUT, read_head)
        .await
        .map_err(|_| {
            fail(format!(
                "no answer head within {} s",
                ANSWER_TIMEOUT.as_secs()
            ))
        })?
        .map_err(&fail)?;
    let text = String::from_utf8_lossy(&head[..end]);
    let mut lines = text.split("\r\n");
    let status = lines.next().and_then(|l| l.split(' ').nth(1)).unwrap_or("");
    let event_stream = lines.any(|line| {
        line.split_once(':').is_some_and(|(name, value)| {
            name.eq_ignore_ascii_case("content-type")
                && value.trim().starts_with("text/event-stream")
        })
    });
    if status != "200" || !event_stream {
        let body = String::from_utf8_lossy(&head[end + 4..]);
        return Err(fail(format!(
            "answered {text:?} (body so far {body:?}), not 200 text/event-stream"
        )));
    }
    Ok(stream)
}

pub async fn http(port: u16, pid: u32, total: u64) -> Result<Value, String> {
    let total = usize::try_from(total).map_err(|e| e.to_string())?;
    // Each stream is a connection on both sides: the server needs an open file per stream
    // (bench/sessions raises the soft limit to the hard one for both processes).
    let need = total as u64 + 2 * CONNECTIONS as u64;
    for (who, of) in [
        ("the server", pid.to_string()),
        ("the load generator", "self".into()),
    ] {
        match open_file_limit(&of) {
            Some(limit) if limit < need => {
                return Err(format!(
                    "{who} may open {limit} files, fewer than the {need} that {total} streams need (raise `ulimit -n`)"
                ));
            }
            _ => {}
        }
    }
    let reopened = Rc::new(Cell::new(0u64));

    // At rest, after one session has been through the handshake and a call. It is deleted
    // (and checked gone by the DELETE's answer) so the N sessions are all the server holds.
    let mut warm = Client::open(port, reopened.clone(), false).await?;
    warm.initialize().await?;
    if warm.session().is_none() {
        return Err("initialize: no Mcp-Session-Id: the server keeps no sessions".into());
    }
    warm.echo(0).await?;
    warm.delete_session().await?;
    drop(warm);
    let (rest_kib, rest_anon_kib) = settled_rss(pid).await?;

    // N sessions over CONNECTIONS keep-alive connections.
    let started = Instant::now();
    let sessions: Rc<RefCell<Vec<Option<Opened>>>> = Rc::new(RefCell::new(vec![None; total]));
    let next = Rc::new(Cell::new(0usize));
    let mut workers = Vec::new();
    for worker in 0..CONNECTIONS.min(total) {
        let local = address(worker);
        let mut client = Client::open_from(port, reopened.clone(), false, Some(local)).await?;
        let (sessions, next) = (sessions.clone(), next.clone());
        workers.push(tokio::task::spawn_local(async move {
            loop {
                let n = next.get();
                if n >= total {
                    return Ok::<_, String>(client);
                }
                next.set(n + 1);
                // The previous session stays open: this connection just stops carrying it.
                client.take_session();
                client
                    .initialize()
                    .await
                    .map_err(|e| format!("session {n}: {e}"))?;
                let id = client
                    .session()
                    .ok_or_else(|| format!("session {n}: initialize answered no Mcp-Session-Id"))?
                    .to_owned();
                sessions.borrow_mut()[n] = Some((id, local));
            }
        }));
    }
    let mut clients = Vec::new();
    for worker in workers {
        clients.push(worker.await.map_err(|e| e.to_string())??);
    }
    let open_seconds = started.elapsed().as_secs_f64();
    // The connections go; the sessions stay.
    drop(clients);
    let sessions: Vec<Opened> = Rc::try_unwrap(sessions)
        .map_err(|_| "sessions still shared")?
        .into_inner()
        .into_iter()
        .enumerate()
        .map(|(n, s)| s.ok_or_else(|| format!("session {n} was never opened")))
        .collect::<Result<_, _>>()?;
    let distinct: HashSet<&str> = sessions.iter().map(|(id, _)| id.as_str()).collect();
    if distinct.len() != total {
        return Err(format!(
            "{} distinct session ids for {total} sessions",
            distinct.len()
        ));
    }
    let (sessions_kib, sessions_anon_kib) = settled_rss(pid).await?;

    // One standalone SSE stream per session, each connection held open.
    let started = Instant::now();
    let sessions = Rc::new(sessions);
    let streams: Rc<RefCell<Vec<TcpStream>>> = Rc::new(RefCell::new(Vec::with_capacity(total)));
    let next = Rc::new(Cell::new(0usize));
    let mut openers = Vec::new();
    for _ in 0..OPENING_AT_ONCE.min(total) {
        let (sessions, streams, next) = (sessions.clone(), streams.clone(), next.clone());
        openers.push(tokio::task::spawn_local(async move {
            loop {
                let n = next.get();
                let Some((id, local)) = sessions.get(n) else {
                    return Ok::<_, String>(());
                };
                next.set(n + 1);
                let stream = open_stream(port, *local, id, n).await?;
                streams.borrow_mut().push(stream);
            }
        }));
    }
    for opener in openers {
        opener.await.map_err(|e| e.to_string())??;
    }
    let stream_seconds = started.elapsed().as_secs_f64();
    let mut streams = Rc::try_unwrap(streams)
        .map_err(|_| "streams still shared")?
        .into_inner();
    let (streams_kib, streams_anon_kib) = settled_rss(pid).await?;
    // Still open when the memory was read: a stream the server closed meanwhile (ended its
    // session, cut an idle connection) reads as end of file here.
    let mut closed = 0;
    for stream in &mut streams {
        let mut byte = [0u8; 1];
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::ZERO, stream.peek(&mut byte)).await
        {
            closed += 1;
        }
    }
    if closed > 0 {
        return Err(format!(
            "{closed} of {total} SSE streams were closed by the server before the memory was read"
        ));
    }

    // Still answering, on a new connection, with every stream still open if the server takes
    // one more connection; a server at its connection limit (toolwire's default
    // max_connections is 10,000) answers 503, and is asked again once one stream is let go.
    let (id, local) = sessions
        .get(total - 1)
        .cloned()
        .ok_or("no session to call on")?;
    let echo = async |n: u64| {
        let mut client = Client::open_from(port, reopened.clone(), false, Some(local)).await?;
        client.set_session(Some(id.clone()));
        client.echo(n).await
    };
    let refused_with_all_streams = match echo(1).await {
        Ok(_) => None,
        Err(err) if err.contains("HTTP 503") => Some(err),
        Err(err) => {
            return Err(format!(
                "the echo call after {total} sessions and streams: {err}"
            ));
        }
    };
    if refused_with_all_streams.is_some() {
        drop(streams.pop());
        // The server learns the stream is gone when it next polls that connection, which
        // nothing here can observe: asked again as an HTTP client retries a 503, a bounded
        // number of times.
        let mut tries = 0;
        loop {
            tries += 1;
            match echo(2).await {
                Ok(_) => break,
                Err(err) if err.contains("HTTP 503") && tries < 100 => {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                Err(err) => {
                    return Err(format!(
                        "the echo call after {total} sessions and streams, one stream let go, try {tries}: {err}"
                    ));
                }
            }
        }
    }
    let peak_kib = proc_stats::peak_rss_kib(pid);
    drop(streams);

    let per =
        |after: u64, before: u64| round((after as f64 - before as f64) * 1024.0 / total as f64, 0);
    Ok(json!({
        "transport": "http",
        "sessions": total,
        "connections": CONNECTIONS,
        "source_addresses": ADDRESSES,
        "rss_kib_at_rest": rest_kib,
        "rss_kib_with_sessions": sessions_kib,
        "rss_kib_with_streams": streams_kib,
        "rss_anon_kib": [rest_anon_kib, sessions_anon_kib, streams_anon_kib],
        "peak_rss_kib": peak_kib,
        "bytes_per_idle_session": per(sessions_kib, rest_kib),
        "bytes_per_sse_stream": per(streams_kib, sessions_kib),
        "anon_bytes_per_idle_session": per(sessions_anon_kib, rest_anon_kib),
        "anon_bytes_per_sse_stream": per(streams_anon_kib, sessions_anon_kib),
        "seconds_to_open_sessions": round(open_seconds, 2),
        "seconds_to_open_streams": round(stream_seconds, 2),
        "echo_after": "ok",
        "echo_refused_with_all_streams_open": refused_with_all_streams,
        "reopened_idle_connections": reopened.get(),
        "errors": 0,
    }))
}
