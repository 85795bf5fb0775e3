//! Serving a session: its outbound stream's end, `serve_until`'s stop and drain, and a serve
//! loop that goes to sleep once its client falls quiet.

mod common;

use std::time::Duration;

use common::call;
use serde_json::{Value, json};

#[tokio::test]
async fn dropping_a_session_ends_its_outbound_stream() {
    let server = toolwire_demo::build_server().unwrap();
    let (session, mut outbound) = server.session().unwrap();
    session.handle_frame(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#);
    drop(session);
    assert_eq!(
        outbound.recv().await.as_deref(),
        Some(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#)
    );
    let end = tokio::time::timeout(Duration::from_secs(2), outbound.recv()).await;
    assert_eq!(
        end,
        Ok(None),
        "the stream must end once the session is gone"
    );
}

#[tokio::test]
async fn serve_until_stops_reading_and_drains() {
    let server = toolwire_demo::build_server().unwrap();
    let (ours, theirs) = toolwire::transport::memory::pair();
    let stop = toolwire::CancellationToken::new();
    let serve = tokio::spawn({
        let server = server.clone();
        let stop = stop.clone();
        async move { server.serve_until(theirs, stop).await }
    });
    let (tx, mut rx) = ours.into_parts();
    tx.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#.to_vec());
    rx.recv().await.unwrap();
    tx.send(br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":200}}}"#.to_vec());
    // Frames are handled in order: once the ping after it is answered, the call is in flight.
    tx.send(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#.to_vec());
    let pong: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
    assert_eq!(pong, json!({"jsonrpc": "2.0", "id": 2, "result": {}}));
    stop.cancel();
    // The call in flight still finishes and is answered; then serving ends with the input open.
    let answer: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "slept 200 ms");
    tokio::time::timeout(Duration::from_secs(2), serve)
        .await
        .expect("serve ended")
        .unwrap()
        .unwrap();
    drop(tx);
}

#[tokio::test]
async fn server_stop_ends_every_serve_and_http_server_and_serving_starts_again() {
    let server = toolwire_demo::build_server().unwrap();
    let serve_one = |server: toolwire::Server| {
        let (ours, theirs) = toolwire::transport::memory::pair();
        let never = toolwire::CancellationToken::new();
        let serve = tokio::spawn(async move { server.serve_until(theirs, never).await });
        (ours, serve)
    };
    let (first, first_serve) = serve_one(server.clone());
    let (second, second_serve) = serve_one(server.clone());
    let http = server
        .serve_http(
            "127.0.0.1:0",
            toolwire::transport::http::HttpOptions::default(),
        )
        .await
        .unwrap();
    let (tx, mut rx) = first.into_parts();
    tx.send(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec());
    rx.recv().await.unwrap();
    let mine = server.stop_token();
    server.stop();
    assert!(mine.is_cancelled());
    for serve in [first_serve, second_serve] {
        tokio::time::timeout(Duration::from_secs(5), serve)
            .await
            .expect("the serve ended at stop()")
            .unwrap()
            .unwrap();
    }
    tokio::time::timeout(Duration::from_secs(5), http.wait())
        .await
        .expect("the HTTP server ended at stop()");
    drop((tx, second));
    // A serve started after stop() is not stopped by it.
    assert!(!server.stop_token().is_cancelled());
    let (again, again_serve) = serve_one(server.clone());
    let (tx, mut rx) = again.into_parts();
    tx.send(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#.to_vec());
    let pong: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
    assert_eq!(pong["id"], 1);
    drop(tx);
    again_serve.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_stop_between_calling_serve_and_its_first_poll_still_ends_it() {
    let server = toolwire_demo::build_server().unwrap();
    let (ours, theirs) = toolwire::transport::memory::pair();
    // The serve and the HTTP server are asked for, not yet run; stop() comes first.
    let serving = server.serve(theirs);
    let http = server.serve_http(
        "127.0.0.1:0",
        toolwire::transport::http::HttpOptions::default(),
    );
    server.stop();
    tokio::time::timeout(Duration::from_secs(5), serving)
        .await
        .expect("the serve ended, though its input stays open")
        .unwrap();
    let http = http.await.unwrap();
    tokio::time::timeout(Duration::from_secs(5), http.wait())
        .await
        .expect("the HTTP server ended");
    drop(ours);
}

/// CPU time this thread has used so far (`/proc/thread-self/stat`, in clock ticks of 10 ms).
fn this_thread_cpu() -> Duration {
    let stat = std::fs::read_to_string("/proc/thread-self/stat").unwrap();
    let fields: Vec<&str> = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .collect();
    let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
    Duration::from_millis(ticks * 10)
}

/// After each frame the serve loop looks for the next one for a while before the runtime
/// sleeps (`ServerOptions::idle_poll`): a client calling in a tight loop keeps it looking, and
/// once the client falls quiet it must stop within the ceiling, not spin on.
#[tokio::test(flavor = "current_thread")]
async fn a_served_client_that_falls_quiet_costs_no_cpu() {
    let server = toolwire_demo::build_server().unwrap();
    let (ours, theirs) = toolwire::transport::memory::pair();
    let serve = tokio::spawn({
        let server = server.clone();
        async move { server.serve(theirs).await }
    });
    // The client runs on a thread of its own, calling `echo` with 100 µs between answer and
    // request, the pace that grows the window to its ceiling (that sleep is the client's pace,
    // the workload of this test). It hands its ends back once its last call is answered.
    let (finished, client_done) = tokio::sync::oneshot::channel();
    let client = std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let ends = runtime.block_on(async move {
            let (tx, mut rx) = ours.into_parts();
            tx.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{}}}"#.to_vec());
            rx.recv().await.unwrap();
            for id in 1..=300 {
                tx.send(call(id, "echo", json!({"text": "hi"})).to_string());
                let answer: Value = serde_json::from_slice(&rx.recv().await.unwrap()).unwrap();
                assert_eq!(answer["id"], id);
                std::thread::sleep(Duration::from_micros(100));
            }
            (tx, rx)
        });
        let _ = finished.send(ends);
    });
    // Awaited, not joined: this thread runs the serve loop the client is talking to.
    let ends = tokio::time::timeout(Duration::from_secs(30), client_done)
        .await
        .expect("the client's 300 calls were answered within 30 s");
    client.join().expect("the client's calls were answered");
    let (tx, _rx) = ends.expect("the client handed back its ends");
    // The client is quiet now (its input still open): this thread, which runs the serve loop,
    // must go to sleep. The one timed wait left in this test is the measurement itself: CPU
    // spent over a span of real time with no input, well past the idle-poll ceiling.
    let before = this_thread_cpu();
    tokio::time::sleep(Duration::from_millis(400)).await;
    let spent = this_thread_cpu() - before;
    assert!(
        spent <= Duration::from_millis(50),
        "the serve loop kept the thread busy for {spent:?} of 400 ms with no input"
    );
    drop(tx);
    tokio::time::timeout(Duration::from_secs(5), serve)
        .await
        .expect("serving ends with the input")
        .unwrap()
        .unwrap();
}

/// A client that sends `requests` frames as fast as the server reads them and takes its
/// answers only once `open` is set: the reads and the written answers are counted.
mod flooding {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use tokio::sync::watch;
    use toolwire::transport::{FrameError, FrameReader, FrameWriter, Transport};

    pub struct Flood {
        pub requests: usize,
        pub read: Arc<AtomicUsize>,
        pub written: Arc<AtomicUsize>,
        pub open: watch::Receiver<bool>,
    }

    pub struct Reader {
        requests: usize,
        read: Arc<AtomicUsize>,
    }

    pub struct Writer {
        written: Arc<AtomicUsize>,
        open: watch::Receiver<bool>,
    }

    impl Transport for Flood {
        type Reader = Reader;
        type Writer = Writer;
        fn split(self) -> (Reader, Writer) {
            let reader = Reader {
                requests: self.requests,
                read: self.read,
            };
            let writer = Writer {
                written: self.written,
                open: self.open,
            };
            (reader, writer)
        }
    }

    impl FrameReader for Reader {
        async fn read_frame(&mut self) -> Option<Result<Vec<u8>, FrameError>> {
            let n = self.read.load(Ordering::Acquire);
            if n >= self.requests {
                return None;
            }
            self.read.store(n + 1, Ordering::Release);
            let frame = if n == 0 {
                r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"flood","version":"1"}}}"#.to_owned()
            } else {
                format!(
                    r#"{{"jsonrpc":"2.0","id":{n},"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"{}"}}}}}}"#,
                    "x".repeat(100)
                )
            };
            Some(Ok(frame.into_bytes()))
        }
    }

    impl FrameWriter for Writer {
        async fn write_frame(&mut self, _frame: &str) -> std::io::Result<()> {
            // A client that does not read: the write waits until it does.
            let _ = self.open.wait_for(|open| *open).await;
            self.written.fetch_add(1, Ordering::AcqRel);
            Ok(())
        }

        async fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
}

#[tokio::test(start_paused = true)]
async fn a_client_that_does_not_read_stops_the_reading_and_loses_nothing() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    let mut options = toolwire::ServerOptions::default();
    options.max_outbound_bytes = 16 * 1024;
    let server = toolwire_demo::build_server_with(options).unwrap();
    let requests = 10_000;
    let read = Arc::new(AtomicUsize::new(0));
    let written = Arc::new(AtomicUsize::new(0));
    let (open, opened) = tokio::sync::watch::channel(false);
    let serve = tokio::spawn({
        let server = server.clone();
        let flood = flooding::Flood {
            requests,
            read: read.clone(),
            written: written.clone(),
            open: opened,
        };
        async move { server.serve(flood).await }
    });
    // Paused time moves on only once every task waits: the server has read what it will
    // read while its answers are not taken.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let read_while_stuck = read.load(Ordering::Acquire);
    // Each echo answer is about 170 bytes: 16 KiB hold about a hundred of them.
    assert!(
        read_while_stuck < 200,
        "{read_while_stuck} requests read by a server whose answers were not taken"
    );
    assert_eq!(written.load(Ordering::Acquire), 0);
    // The client reads again: the server reads the rest, and every request is answered.
    open.send(true).unwrap();
    serve.await.unwrap().unwrap();
    assert_eq!(read.load(Ordering::Acquire), requests);
    assert_eq!(written.load(Ordering::Acquire), requests);
}
