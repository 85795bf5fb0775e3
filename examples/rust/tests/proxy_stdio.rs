//! The demo binary proxied over stdio, spawned by the engine's client: its tools under a
//! prefix, progress relayed, and the process killed in the middle of a call: that call fails
//! naming the upstream, the next one spawns it again.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolwire::Server;
use toolwire::client::{Client, ClientOptions, Command};
use toolwire::compose::Upstream;

fn demo() -> Command {
    Command::new(env!("CARGO_BIN_EXE_toolwire-demo"), Vec::<String>::new())
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

async fn gateway(upstream: Command) -> (Server, Client) {
    // --8<-- [start:spawned]
    let outer = Server::builder("gateway", "1").build().expect("a server");
    // `upstream`: e.g. Command::new("python", ["weather.py"]).env("API_KEY", key)
    outer
        .mount("demo", Upstream::Command(upstream))
        .await
        .expect("mounted");
    // --8<-- [end:spawned]
    let client = Client::connect(&outer, ClientOptions::default(), None)
        .await
        .expect("a client");
    (outer, client)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_server_is_proxied_with_its_progress() {
    let (_outer, client) = gateway(demo()).await;
    let names: Vec<Value> = client
        .list_tools()
        .await
        .expect("tools")
        .iter()
        .map(|t| t["name"].clone())
        .collect();
    assert_eq!(
        names,
        [
            json!("demo_add"),
            json!("demo_echo"),
            json!("demo_fail"),
            json!("demo_sleep")
        ]
    );
    let added = client
        .call_tool("demo_add", json!({"a": 2, "b": 3}), None)
        .await
        .expect("a call");
    assert_eq!(added["structuredContent"], json!({"sum": 5}));
    let failed = client
        .call_tool("demo_fail", json!({"message": "no"}), None)
        .await
        .expect("a result");
    assert_eq!(failed["isError"], true);
    assert_eq!(text(&failed), "no");
    let heard = Arc::new(Mutex::new(0));
    let progress = {
        let heard = heard.clone();
        Arc::new(move |_: &Value| *heard.lock().expect("heard") += 1)
    };
    let slept = client
        .call_tool("demo_sleep", json!({"ms": 250}), Some(progress))
        .await
        .expect("a call");
    assert_eq!(slept["isError"], Value::Null);
    assert!(*heard.lock().expect("heard") >= 1, "progress was relayed");
    client.close().await;
}

#[cfg(unix)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_spawned_server_that_dies_mid_call_fails_that_call_and_is_spawned_again() {
    let dir = std::env::temp_dir().join(format!("toolwire-proxy-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("a directory");
    let pid_file = dir.join("pid");
    // The shell writes its pid, then becomes the demo: the pid is the server's.
    let script = "echo $$ > \"$1\"; exec \"$2\"";
    let upstream = Command::new(
        "sh",
        [
            "-c".to_owned(),
            script.to_owned(),
            "sh".to_owned(),
            pid_file.display().to_string(),
            env!("CARGO_BIN_EXE_toolwire-demo").to_owned(),
        ],
    );
    let (_outer, client) = gateway(upstream).await;
    let (started, mut progressing) = mpsc::unbounded_channel();
    let progress = Arc::new(move |_: &Value| {
        let _ = started.send(());
    });
    let call = client.call_tool("demo_sleep", json!({"ms": 30000}), Some(progress));
    let kill = async {
        progressing.recv().await.expect("the call is running");
        let pid = std::fs::read_to_string(&pid_file).expect("the pid");
        let killed = std::process::Command::new("kill")
            .args(["-9", pid.trim()])
            .status()
            .expect("kill");
        assert!(killed.success());
    };
    let (result, ()) =
        tokio::time::timeout(Duration::from_secs(20), async { tokio::join!(call, kill) })
            .await
            .expect("the call ended rather than hang");
    let result = result.expect("an isError result");
    assert_eq!(result["isError"], true);
    let message = text(&result);
    assert!(message.contains("went away before answering"), "{message}");
    assert!(message.contains("(spawned)"), "{message}");

    let again = client
        .call_tool("demo_echo", json!({"text": "back"}), None)
        .await
        .expect("a call");
    assert_eq!(text(&again), "back");
    client.close().await;
    let _ = std::fs::remove_dir_all(&dir);
}
