//! Replays the golden wire vectors in tests/vectors/ against the Rust demo server, through
//! core's replayer (`toolwire::client::vectors`, which every language calls), over two paths.

use std::path::PathBuf as FilePath;

use serde_json::Value;
use toolwire::client::vectors::{self, SessionWire, Wire};
use toolwire::transport::memory::{self, MemoryReceiver, MemorySender};
use toolwire::{Error, Server, ServerOptions};

/// How the runner reaches the server: both paths must give the same wire behaviour.
#[derive(Clone, Copy, Debug)]
enum Path {
    /// The bring-your-own-transport entry point (what the bindings replay through).
    Session,
    /// `Server::serve` over the in-memory transport pair (the serve loop, as stdio uses it).
    Memory,
}

/// `Server::serve` over the in-memory transport: the serve loop as the replayer's wire.
struct ServeWire {
    tx: MemorySender,
    rx: MemoryReceiver,
    serve: tokio::task::JoinHandle<Result<(), Error>>,
}

impl Wire for ServeWire {
    fn send(&mut self, frame: &[u8]) {
        self.tx.send(frame.to_vec());
    }

    async fn recv(&mut self) -> Option<String> {
        let frame = self.rx.recv().await?;
        Some(String::from_utf8_lossy(&frame).into_owned())
    }

    fn abort(self) {
        self.serve.abort();
    }

    async fn finish(mut self) -> Result<Vec<String>, String> {
        drop(self.tx);
        let mut rest = Vec::new();
        while let Some(frame) = self.rx.recv().await {
            rest.push(String::from_utf8_lossy(&frame).into_owned());
        }
        match self.serve.await {
            Ok(Ok(())) => Ok(rest),
            Ok(Err(err)) => Err(format!("serve ended with {err}")),
            Err(err) => Err(format!("serve task failed: {err}")),
        }
    }
}

fn vectors_dir() -> FilePath {
    FilePath::from(env!("CARGO_MANIFEST_DIR")).join("../tests/vectors")
}

fn server_options(options: Option<&Value>) -> ServerOptions {
    let mut out = ServerOptions::default();
    let Some(options) = options else { return out };
    if let Some(n) = options.get("pageSize").and_then(Value::as_u64) {
        out.page_size = Some(n as usize);
    }
    if let Some(n) = options.get("maxFrameBytes").and_then(Value::as_u64) {
        out.max_frame_bytes = n as usize;
    }
    if let Some(n) = options.get("maxDepth").and_then(Value::as_u64) {
        out.max_depth = n as usize;
    }
    out
}

/// The server a case runs against: the demo of the shared contract, or the conformance server
/// (its tasks-extension fixtures).
fn build_server(case: &Value) -> Result<Server, String> {
    let options = server_options(case.get("options"));
    match case.get("server").and_then(Value::as_str) {
        None | Some("demo") => toolwire_demo::build_server_with(options),
        Some("conformance") if case.get("options").is_some() => {
            return Err("the conformance server takes no options here".into());
        }
        Some("conformance") => toolwire_demo::conformance::build_conformance_server(),
        Some(other) => return Err(format!("unknown server {other:?}")),
    }
    .map_err(|e| format!("server: {e}"))
}

async fn run_case(case: &Value, path: Path) -> Result<(), String> {
    let server = build_server(case)?;
    match path {
        Path::Session => {
            let (session, outbound) = server.session().map_err(|e| e.to_string())?;
            vectors::replay(SessionWire::new(session, outbound), case).await
        }
        Path::Memory => {
            let (ours, theirs) = memory::pair();
            let serve = tokio::spawn(async move { server.serve(theirs).await });
            let (tx, rx) = ours.into_parts();
            vectors::replay(ServeWire { tx, rx, serve }, case).await
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn golden_vectors() {
    let mut files: Vec<FilePath> = std::fs::read_dir(vectors_dir())
        .expect("tests/vectors exists")
        .filter_map(|entry| entry.ok().map(|e| e.path()))
        .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in &files {
        let text = std::fs::read_to_string(file).expect("readable vector file");
        let doc: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{}: invalid JSON: {e}", file.display()));
        for case in doc["cases"].as_array().expect("cases array") {
            cases.push(case.clone());
        }
    }
    assert!(cases.len() >= 60, "only {} vectors", cases.len());
    // Cases are independent sessions: run them all at once, over both paths, and report
    // every failure.
    let runs = cases.iter().flat_map(|case| {
        [Path::Session, Path::Memory].map(|path| async move {
            let name = format!("{} [{path:?}]", case["name"].as_str().unwrap_or("?"));
            (name, run_case(case, path).await)
        })
    });
    let results = futures_util::future::join_all(runs).await;
    let failures: Vec<String> = results
        .iter()
        .filter_map(|(name, r)| r.as_ref().err().map(|e| format!("{name}: {e}")))
        .collect();
    println!(
        "{} vector runs ({} cases over 2 paths), {} failed",
        results.len(),
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "\n{}", failures.join("\n\n"));
}
