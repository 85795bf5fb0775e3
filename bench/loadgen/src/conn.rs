//! One MCP connection over a spawned server's stdio, with request/response correlation.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::time::Instant;

use futures_util::FutureExt;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, BufWriter};
use tokio::process::{Child, Command};
use tokio::sync::{mpsc, oneshot};

/// An answer (its raw JSON line) and the moment it was read.
pub struct Answer {
    pub line: Vec<u8>,
    pub at: Instant,
}

impl Answer {
    /// The whole message as JSON (for the phases that need more than a text).
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.line).unwrap_or(Value::Null)
    }
}

type Pending = Rc<RefCell<HashMap<u64, oneshot::Sender<Answer>>>>;

/// A server that sends nothing for this long while requests wait has stalled: the run fails
/// with an error instead of waiting forever (the slowest request of any phase takes
/// milliseconds). Only a read of the reader that has to wait is timed, so an answer already
/// there costs no timer.
pub const ANSWER_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(60);

pub struct Conn {
    child: Child,
    pub pid: u32,
    out: mpsc::UnboundedSender<String>,
    pending: Pending,
    next_id: std::cell::Cell<u64>,
    pub notifications: Rc<std::cell::Cell<u64>>,
    /// Set when the server sent nothing for [`ANSWER_TIMEOUT`] while requests waited.
    stalled: Rc<std::cell::Cell<bool>>,
}

#[derive(Deserialize)]
struct Envelope {
    id: Option<u64>,
    method: Option<serde::de::IgnoredAny>,
}

/// Starts a server process: its stderr goes to ours, and it dies with the load generator.
/// `stdio` makes its stdin and stdout (pipes for stdio servers, nothing for HTTP ones).
pub fn start_server(
    command: &[String],
    stdio: fn() -> std::process::Stdio,
) -> Result<Child, String> {
    let program = command.first().ok_or("no server command")?;
    Command::new(program)
        .args(&command[1..])
        .stdin(stdio())
        .stdout(stdio())
        .stderr(std::process::Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start {program:?}: {e}"))
}

impl Conn {
    pub fn spawn(command: &[String]) -> Result<Conn, String> {
        let mut child = start_server(command, std::process::Stdio::piped)?;
        let pid = child.id().ok_or("the server exited at once")?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let stdout = child.stdout.take().ok_or("no stdout")?;

        let (out, mut rx) = mpsc::unbounded_channel::<String>();
        tokio::task::spawn_local(async move {
            let mut writer = BufWriter::with_capacity(64 * 1024, stdin);
            while let Some(line) = rx.recv().await {
                if writer.write_all(line.as_bytes()).await.is_err() {
                    return;
                }
                while let Ok(line) = rx.try_recv() {
                    if writer.write_all(line.as_bytes()).await.is_err() {
                        return;
                    }
                }
                if writer.flush().await.is_err() {
                    return;
                }
            }
        });

        let pending: Pending = Rc::default();
        let notifications = Rc::new(std::cell::Cell::new(0));
        let stalled = Rc::new(std::cell::Cell::new(false));
        {
            let pending = pending.clone();
            let notifications = notifications.clone();
            let stalled = stalled.clone();
            tokio::task::spawn_local(async move {
                let mut reader = BufReader::with_capacity(256 * 1024, stdout);
                // One large buffer, reused: a long answer is not timed through repeated regrowth.
                let mut buffer = Vec::with_capacity(1024 * 1024);
                loop {
                    buffer.clear();
                    // A line already there is taken without a timer or a clock read; only a
                    // read that has to wait is timed. A read cut off (here or by the timer)
                    // keeps what it read in `buffer`, and the next one goes on from there.
                    let read = match reader.read_until(b'\n', &mut buffer).now_or_never() {
                        Some(read) => read,
                        None => loop {
                            match tokio::time::timeout(
                                ANSWER_TIMEOUT,
                                reader.read_until(b'\n', &mut buffer),
                            )
                            .await
                            {
                                Ok(read) => break read,
                                Err(_) if pending.borrow().is_empty() => {}
                                Err(_) => {
                                    stalled.set(true);
                                    pending.borrow_mut().clear();
                                    return;
                                }
                            }
                        },
                    };
                    match read {
                        Ok(0) | Err(_) => {
                            // No answer can come now: fail every call still waiting for one.
                            pending.borrow_mut().clear();
                            return;
                        }
                        Ok(_) => {}
                    }
                    let at = Instant::now();
                    let line = buffer.clone();
                    let Ok(envelope) = serde_json::from_slice::<Envelope>(&line) else {
                        eprintln!(
                            "loadgen: the server wrote a line that is not JSON-RPC: {}",
                            String::from_utf8_lossy(&line)
                        );
                        continue;
                    };
                    if envelope.method.is_some() {
                        notifications.set(notifications.get() + 1);
                        continue;
                    }
                    let Some(id) = envelope.id else {
                        eprintln!(
                            "loadgen: an answer without a numeric id: {}",
                            String::from_utf8_lossy(&line)
                        );
                        continue;
                    };
                    if let Some(waiter) = pending.borrow_mut().remove(&id) {
                        let _ = waiter.send(Answer { line, at });
                    }
                }
            });
        }
        Ok(Conn {
            child,
            pid,
            out,
            pending,
            next_id: std::cell::Cell::new(1),
            notifications,
            stalled,
        })
    }

    /// Sends a request (params as a JSON text) and waits for its answer.
    /// Returns the answer, when the request was sent, and its id.
    pub async fn request(
        &self,
        method: &str,
        params: &str,
    ) -> Result<(Answer, Instant, u64), String> {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let (tx, rx) = oneshot::channel();
        self.pending.borrow_mut().insert(id, tx);
        let line = format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n"
        );
        let sent = Instant::now();
        self.out
            .send(line)
            .map_err(|_| "the server's stdin closed")?;
        let answer = rx.await.map_err(|_| {
            if self.stalled.get() {
                format!(
                    "no answer to {method} id {id}: the server sent nothing for {} s (stalled)",
                    ANSWER_TIMEOUT.as_secs()
                )
            } else {
                format!("no answer to {method} id {id}: the server closed its stdout")
            }
        })?;
        // The reader routed it by id; check_call re-checks the id in the text itself.
        Ok((answer, sent, id))
    }

    /// Spawns the server and completes the handshake (`initialize`, then `initialized`).
    pub async fn spawn_initialized(command: &[String]) -> Result<Conn, String> {
        let conn = Conn::spawn(command)?;
        let (init, _, _) = conn
            .request(
                "initialize",
                r#"{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"toolwire-loadgen","version":"1"}}"#,
            )
            .await?;
        let init = init.json();
        if !init["result"]["protocolVersion"].is_string() {
            return Err(format!("initialize failed: {init}"));
        }
        conn.notify("notifications/initialized");
        Ok(conn)
    }

    /// Sends a request and at once cancels it (`notifications/cancelled`); its answer, if the
    /// server still sends one, is dropped by the reader as an answer nobody waits for.
    pub fn request_and_cancel(&self, method: &str, params: &str) {
        let id = self.next_id.get();
        self.next_id.set(id + 1);
        let _ = self.out.send(format!(
            "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"method\":\"{method}\",\"params\":{params}}}\n\
             {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{{\"requestId\":{id},\"reason\":\"fault run\"}}}}\n"
        ));
    }

    pub fn notify(&self, method: &str) {
        let _ = self
            .out
            .send(format!("{{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}\n"));
    }

    /// Closes the server's stdin and waits for it to exit.
    pub async fn close(mut self) -> Result<(), String> {
        drop(self.out);
        match tokio::time::timeout(std::time::Duration::from_secs(10), self.child.wait()).await {
            Ok(Ok(_status)) => Ok(()),
            Ok(Err(e)) => Err(e.to_string()),
            Err(_) => {
                let _ = self.child.kill().await;
                Err("the server did not exit within 10 s of stdin closing".into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Conn;
    use std::time::Duration;

    #[tokio::test(flavor = "current_thread")]
    async fn a_server_that_ends_its_output_fails_the_waiting_call() {
        tokio::task::LocalSet::new()
            .run_until(async {
                // Reads the request, then exits without answering.
                let server = ["sh", "-c", "read line; exit 0"].map(String::from);
                let conn = Conn::spawn(&server).expect("sh starts");
                let answer =
                    tokio::time::timeout(Duration::from_secs(10), conn.request("ping", "{}"))
                        .await
                        .expect("the call fails instead of waiting for ever");
                let error = answer.err().expect("no answer can come");
                assert!(error.contains("closed its stdout"), "{error}");
            })
            .await;
    }
}
