//! A client of a server it spawns: JSON-RPC lines on the process's stdin and stdout, its
//! stderr passed to the engine's logs.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_util::future::BoxFuture;
use serde_json::Value;
use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::mpsc;

use super::wire::{INCOMING_QUEUED, Incoming, Remote};
use super::{Answerer, Client, ClientOptions};
use crate::error::Error;

/// The longest line read from the process (64 MiB): a longer one is skipped and logged, so a
/// runaway server cannot make the client hold unbounded memory.
const LONGEST_LINE: usize = 64 << 20;

/// How many frames wait for the process to read its stdin before sending fails.
const OUTGOING_QUEUED: usize = 4096;

/// How long a process has to exit once its stdin is closed, before it is killed (the spec's
/// stdio shutdown: close stdin, wait, then end it).
const EXIT_GRACE: Duration = Duration::from_secs(2);

/// A server to spawn: the program, its arguments, environment and working directory.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Command {
    /// The program (looked up on `PATH` as the OS does).
    pub program: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Variables set for it, on top of this process's environment.
    pub env: BTreeMap<String, String>,
    /// Its working directory; none: this process's.
    pub cwd: Option<PathBuf>,
}

impl Command {
    /// `program` with `args`.
    pub fn new<I, S>(program: impl Into<String>, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Command {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            ..Command::default()
        }
    }

    /// Sets `key` to `value` in its environment.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Self {
        self.env.insert(key.into(), value.into());
        self
    }

    /// Runs it in `dir`.
    pub fn cwd(mut self, dir: impl Into<PathBuf>) -> Self {
        self.cwd = Some(dir.into());
        self
    }

    /// The command line, for errors.
    pub fn describe(&self) -> String {
        let mut line = self.program.clone();
        for arg in &self.args {
            line.push(' ');
            line.push_str(arg);
        }
        format!("`{line}` (spawned)")
    }
}

impl Client {
    /// Spawns `command` and connects to it over its stdio, the handshake done. The process
    /// ends when the client closes (stdin closed, then killed after two seconds) or is dropped.
    pub async fn spawn(
        command: &Command,
        options: ClientOptions,
        answerer: Option<Arc<dyn Answerer>>,
    ) -> Result<Client, Error> {
        if command.program.is_empty() {
            return Err(Error::InvalidArgument(
                "the command to spawn has no program".into(),
            ));
        }
        let mut spawning = tokio::process::Command::new(&command.program);
        spawning
            .args(&command.args)
            .envs(&command.env)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        if let Some(dir) = &command.cwd {
            spawning.current_dir(dir);
        }
        // A group of its own: what a launcher (`npx`, `uv run`, `sh -c`) starts is ended with
        // it, rather than left holding the pipes.
        #[cfg(unix)]
        spawning.process_group(0);
        let described = command.describe();
        let mut child = spawning.spawn().map_err(|err| {
            Error::Transport(std::io::Error::new(
                err.kind(),
                format!("cannot spawn {described}: {err}"),
            ))
        })?;
        let (Some(stdin), Some(stdout), Some(stderr)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            return Err(Error::Transport(std::io::Error::other(format!(
                "{described} has no piped stdio"
            ))));
        };
        let (incoming, frames) = mpsc::channel(INCOMING_QUEUED);
        let (outgoing, to_write) = mpsc::channel(OUTGOING_QUEUED);
        tokio::spawn(write_lines(stdin, to_write));
        tokio::spawn(read_lines(
            BufReader::new(stdout),
            incoming,
            described.clone(),
        ));
        tokio::spawn(log_stderr(BufReader::new(stderr), described.clone()));
        let remote = SpawnedProcess {
            outgoing: Mutex::new(Some(outgoing)),
            group: child.id(),
            child: Arc::new(tokio::sync::Mutex::new(Some(child))),
            described,
        };
        Client::over_remote(Box::new(remote), frames, options, answerer).await
    }
}

/// The process and the queue to its stdin.
struct SpawnedProcess {
    /// Taken on shutdown: its writer then closes stdin.
    outgoing: Mutex<Option<mpsc::Sender<String>>>,
    /// The process group it leads (its pid), on Unix.
    group: Option<u32>,
    child: Arc<tokio::sync::Mutex<Option<Child>>>,
    described: String,
}

/// Ends the process and, on Unix, the group it leads (what it started, if still there). The
/// child itself is killed the portable way in every case.
fn end_process(child: &mut Child, group: Option<u32>) {
    #[cfg(unix)]
    if let Some(pid) = group.and_then(|id| i32::try_from(id).ok())
        && let Some(pid) = rustix::process::Pid::from_raw(pid)
    {
        // Gone already (every member exited) is fine.
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    #[cfg(not(unix))]
    let _ = group;
    let _ = child.start_kill();
}

impl Drop for SpawnedProcess {
    fn drop(&mut self) {
        if let Ok(mut child) = self.child.try_lock()
            && let Some(child) = child.as_mut()
        {
            end_process(child, self.group);
        }
    }
}

impl Remote for SpawnedProcess {
    fn send(&self, message: &Value, _request: Option<u64>) -> bool {
        let outgoing = self.outgoing.lock().unwrap_or_else(|e| e.into_inner());
        let Some(outgoing) = outgoing.as_ref() else {
            return false;
        };
        match outgoing.try_send(message.to_string()) {
            Ok(()) => true,
            Err(mpsc::error::TrySendError::Full(_)) => {
                tracing::warn!(
                    server = %self.described,
                    "the spawned server is not reading its stdin: {OUTGOING_QUEUED} frames wait"
                );
                false
            }
            Err(mpsc::error::TrySendError::Closed(_)) => false,
        }
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        // Dropping the queue's sender ends the writer, which closes stdin.
        self.outgoing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        let (child, group) = (self.child.clone(), self.group);
        Box::pin(async move {
            let Some(mut child) = child.lock().await.take() else {
                return;
            };
            let exited = tokio::time::timeout(EXIT_GRACE, child.wait()).await.is_ok();
            // Also after it exited: what it started goes with it.
            end_process(&mut child, group);
            if !exited {
                let _ = child.wait().await;
            }
        })
    }

    fn close(&self) {
        self.outgoing
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        if let Ok(mut child) = self.child.try_lock()
            && let Some(child) = child.as_mut()
        {
            end_process(child, self.group);
        }
    }

    fn describe(&self) -> String {
        self.described.clone()
    }
}

async fn write_lines(mut stdin: ChildStdin, mut to_write: mpsc::Receiver<String>) {
    while let Some(frame) = to_write.recv().await {
        let written = async {
            stdin.write_all(frame.as_bytes()).await?;
            stdin.write_all(b"\n").await?;
            stdin.flush().await
        };
        if written.await.is_err() {
            return; // the process is gone; its stdout's end tells the client
        }
    }
}

/// Reads newline-delimited frames until the stream ends, skipping empty lines and lines
/// longer than [`LONGEST_LINE`].
async fn read_lines(
    mut stdout: impl AsyncBufRead + Unpin,
    incoming: mpsc::Sender<Incoming>,
    described: String,
) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_bounded_line(&mut stdout, &mut line, LONGEST_LINE).await {
            Ok(Line::End) => return,
            Ok(Line::TooLong) => {
                tracing::warn!(server = %described, "a line over {LONGEST_LINE} bytes was skipped");
            }
            Ok(Line::Read) => {
                let text = String::from_utf8_lossy(&line);
                let frame = text.trim();
                if frame.is_empty() {
                    continue;
                }
                let frame = Incoming {
                    frame: frame.to_owned(),
                    about: None,
                };
                if incoming.send(frame).await.is_err() {
                    return;
                }
            }
            Err(err) => {
                tracing::warn!(server = %described, %err, "reading the server's stdout failed");
                return;
            }
        }
    }
}

async fn log_stderr(mut stderr: impl AsyncBufRead + Unpin, described: String) {
    let mut line = Vec::new();
    loop {
        line.clear();
        match read_bounded_line(&mut stderr, &mut line, 64 << 10).await {
            Ok(Line::Read) => {
                let text = String::from_utf8_lossy(&line);
                tracing::info!(server = %described, "{}", text.trim_end());
            }
            Ok(Line::TooLong) => {}
            Ok(Line::End) | Err(_) => return,
        }
    }
}

enum Line {
    Read,
    TooLong,
    End,
}

/// One line into `line` (without its newline), or the news that it was longer than `longest`
/// (then the rest of it is consumed, not kept).
async fn read_bounded_line(
    reader: &mut (impl AsyncBufRead + Unpin),
    line: &mut Vec<u8>,
    longest: usize,
) -> std::io::Result<Line> {
    let mut too_long = false;
    loop {
        let available = reader.fill_buf().await?;
        if available.is_empty() {
            return Ok(if too_long {
                Line::TooLong
            } else if line.is_empty() {
                Line::End
            } else {
                Line::Read
            });
        }
        let (taken, ended) = match memchr::memchr(b'\n', available) {
            Some(at) => (at + 1, true),
            None => (available.len(), false),
        };
        let content = &available[..if ended { taken - 1 } else { taken }];
        if !too_long {
            if line.len() + content.len() > longest {
                too_long = true;
                line.clear();
            } else {
                line.extend_from_slice(content);
            }
        }
        reader.consume(taken);
        if ended {
            return Ok(if too_long { Line::TooLong } else { Line::Read });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn lines_past_the_bound_are_skipped_and_the_next_read() {
        let text = format!("{}\nshort\n\nlast", "x".repeat(100));
        let mut reader = BufReader::with_capacity(8, text.as_bytes());
        let mut line = Vec::new();
        let mut seen = Vec::new();
        loop {
            line.clear();
            match read_bounded_line(&mut reader, &mut line, 10)
                .await
                .expect("read")
            {
                Line::End => break,
                Line::TooLong => seen.push("<too long>".to_owned()),
                Line::Read => seen.push(String::from_utf8_lossy(&line).into_owned()),
            }
        }
        assert_eq!(seen, ["<too long>", "short", "", "last"]);
    }

    /// What a launcher started goes with it: `sh` starts a `sleep` (holding the pipe `sh`
    /// writes to) and waits; ending the process ends the `sleep` too, which the pipe's end
    /// tells (no writer left).
    #[cfg(unix)]
    #[tokio::test]
    async fn what_the_process_started_is_ended_with_it() {
        use tokio::io::AsyncReadExt;
        let mut launcher = tokio::process::Command::new("sh");
        launcher
            .args(["-c", "sleep 1000 2>/dev/null & echo started; wait"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .process_group(0)
            .kill_on_drop(true);
        let mut child = launcher.spawn().expect("sh");
        let group = child.id();
        let mut stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut line = String::new();
        stdout.read_line(&mut line).await.expect("started");
        end_process(&mut child, group);
        let _ = child.wait().await;
        let mut rest = Vec::new();
        let ended =
            tokio::time::timeout(Duration::from_secs(10), stdout.read_to_end(&mut rest)).await;
        assert!(
            ended.is_ok(),
            "the sleep the launcher started was ended too"
        );
    }

    #[tokio::test]
    async fn a_program_that_cannot_be_spawned_is_a_clear_error() {
        let missing = Command::new("toolwire-no-such-program", ["--x"]);
        let err = Client::spawn(&missing, ClientOptions::default(), None)
            .await
            .expect_err("no such program");
        let text = err.to_string();
        assert!(
            text.contains("cannot spawn `toolwire-no-such-program --x`"),
            "{text}"
        );
    }
}
