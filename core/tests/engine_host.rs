//! Host-driven sessions (`Session::hosted`), as the bindings run them: frames fed from a
//! thread outside tokio, answers taken with `try_recv`, pending calls handed to the host.

mod common;

use std::sync::Arc;
use std::time::Duration;

use common::call;
use serde_json::{Value, json};
use toolwire::{Context, Server, Tool, ToolError, ToolOutput};

/// A runtime for a host-driven session, whose frames the test thread feeds.
fn host_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap()
}

/// `initialize` and `notifications/initialized` fed straight into a session.
fn initialize_hosted(session: &toolwire::Session) {
    session.handle_frame(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                          "clientInfo": {"name": "host", "version": "1"}}})
        .to_string()
        .as_bytes(),
    );
    session.handle_frame(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
}

/// A host that feeds frames from its own thread (no tokio context there) and takes answers
/// with `try_recv`: quick calls are answered before `handle_frame` returns; answers produced
/// later on the runtime ring the host's notifier.
#[test]
fn host_driven_session_answers_inline_and_notifies_later() {
    let runtime = host_runtime();
    let server = toolwire_demo::build_server().unwrap();
    let (rang, rung) = std::sync::mpsc::channel::<()>();
    let hooks = toolwire::host::HostHooks {
        notify: Box::new(move || {
            let _ = rang.send(());
        }),
        spawn_call: None,
    };
    let (session, mut outbound) =
        toolwire::Session::hosted(&server, runtime.handle().clone(), hooks);
    let take = |outbound: &mut toolwire::Outbound| -> Value {
        let frame = outbound.try_recv().expect("a frame is ready");
        serde_json::from_str(&frame).unwrap()
    };
    initialize_hosted(&session);
    assert_eq!(take(&mut outbound)["id"], 0);
    session.handle_frame(
        call(1, "echo", json!({"text": "now"}))
            .to_string()
            .as_bytes(),
    );
    let answer = take(&mut outbound);
    assert_eq!(answer["result"]["content"][0]["text"], "now");
    assert!(outbound.try_recv().is_none());
    while rung.try_recv().is_ok() {}

    session.handle_frame(call(2, "sleep", json!({"ms": 20})).to_string().as_bytes());
    assert!(
        outbound.try_recv().is_none(),
        "a sleeping call is not answered inline"
    );
    rung.recv_timeout(Duration::from_secs(5))
        .expect("the notifier rings when the answer is queued");
    assert_eq!(take(&mut outbound)["id"], 2);
}

/// With `spawn_call`, a call that is pending after its first poll is handed to the host, which
/// runs it (here: to completion on the test thread); the engine never spawns it itself.
#[test]
fn hosted_session_hands_pending_calls_to_the_host() {
    let runtime = host_runtime();
    // `nap` is pending after its first poll (its 20 ms sleep is its workload); its answer
    // names the thread that finished it, which tells who ran the call.
    let server = Server::builder("test", "1")
        .tool(Tool::new("echo"), |_ctx: Context, args: Value| async move {
            Ok::<_, ToolError>(ToolOutput::text(
                args["text"].as_str().unwrap_or_default().to_owned(),
            ))
        })
        .tool(Tool::new("nap"), |_ctx: Context, _args: Value| async {
            tokio::time::sleep(Duration::from_millis(20)).await;
            let finished_on = format!("{:?}", std::thread::current().id());
            Ok::<_, ToolError>(ToolOutput::text(finished_on))
        })
        .build()
        .unwrap();
    let handed = Arc::new(std::sync::Mutex::new(Vec::<toolwire::host::CallTask>::new()));
    let hooks = toolwire::host::HostHooks {
        notify: Box::new(|| {}),
        spawn_call: Some(Box::new({
            let handed = handed.clone();
            move |task| handed.lock().unwrap().push(task)
        })),
    };
    let (session, mut outbound) =
        toolwire::Session::hosted(&server, runtime.handle().clone(), hooks);
    initialize_hosted(&session);
    assert!(outbound.try_recv().is_some());
    session.handle_frame(
        call(1, "echo", json!({"text": "now"}))
            .to_string()
            .as_bytes(),
    );
    assert!(
        outbound.try_recv().is_some(),
        "a quick call needs no host task"
    );
    session.handle_frame(call(2, "nap", json!({})).to_string().as_bytes());
    let task = handed
        .lock()
        .unwrap()
        .pop()
        .expect("the pending call was handed over");
    assert!(outbound.try_recv().is_none(), "nobody ran the task yet");
    runtime.block_on(task);
    let answer: Value = serde_json::from_str(&outbound.try_recv().unwrap()).unwrap();
    // Had the engine spawned the call on the runtime after all (handing the host only a
    // handle to it), a runtime worker would have finished it.
    assert_eq!(
        answer["result"]["content"][0]["text"],
        format!("{:?}", std::thread::current().id()),
        "the host ran the call, on its own thread"
    );
}

/// `LocalExecutor`: pending calls handed over by `spawn_call` are polled by the host on its
/// own thread; a wake-up from the runtime (the sleep's timer) rings, and `run_ready` then
/// finishes the call there.
#[test]
fn local_executor_polls_handed_calls_on_the_host_thread() {
    let runtime = host_runtime();
    let server = toolwire_demo::build_server().unwrap();
    let (rang, rung) = std::sync::mpsc::channel::<()>();
    let executor = toolwire::host::LocalExecutor::new(move || {
        let _ = rang.send(());
    });
    let hooks = toolwire::host::HostHooks {
        notify: Box::new(|| {}),
        spawn_call: Some(Box::new({
            let executor = executor.clone();
            move |task| executor.spawn(task)
        })),
    };
    let (session, mut outbound) =
        toolwire::Session::hosted(&server, runtime.handle().clone(), hooks);
    initialize_hosted(&session);
    assert!(outbound.try_recv().is_some());
    session.handle_frame(call(1, "sleep", json!({"ms": 20})).to_string().as_bytes());
    assert!(
        executor.has_work(),
        "the handed call waits for its first real poll"
    );
    assert_eq!(executor.unfinished(), 1);
    let _runtime = runtime.enter();
    // The first real poll registers the timer's wake-up; nothing is answered yet.
    while rung.try_recv().is_ok() {}
    assert!(executor.run_ready());
    assert!(!executor.has_work());
    assert_eq!(
        executor.unfinished(),
        1,
        "waiting on its timer, not ready, but not finished"
    );
    assert!(outbound.try_recv().is_none());
    rung.recv_timeout(Duration::from_secs(5))
        .expect("the timer's wake-up rings the host");
    assert!(executor.run_ready());
    let answer: Value = serde_json::from_str(&outbound.try_recv().unwrap()).unwrap();
    assert_eq!(answer["result"]["content"][0]["text"], "slept 20 ms");
    assert!(!executor.run_ready(), "nothing is left to poll");
    assert_eq!(executor.unfinished(), 0);
}
