#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use toolwire::{Server, Session, Tool, ToolError, ToolOutput};

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap())
}

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| {
        Server::builder("fuzz", "1")
            .tool(
                Tool::new("echo").input_schema(serde_json_schema()),
                |_ctx: toolwire::Context, args: serde_json::Value| async move {
                    Ok::<_, ToolError>(ToolOutput::text(args.to_string()))
                },
            )
            .build()
            .unwrap()
    })
}

fn serde_json_schema() -> serde_json::Value {
    serde_json::from_str(r#"{"type":"object","properties":{"text":{"type":"string"}}}"#).unwrap()
}

// Each input is a sequence of frames separated by newlines, fed to a fresh session after a
// valid initialize; every outbound frame must be valid JSON.
fuzz_target!(|data: &[u8]| {
    let rt = runtime();
    rt.block_on(async {
        let (session, mut outbound) = Session::with_runtime(server(), rt.handle().clone());
        session.handle_frame(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{}}}"#);
        for frame in data.split(|b| *b == b'\n') {
            session.handle_frame(frame);
        }
        session.close();
        while let Some(frame) = outbound.recv().await {
            assert!(serde_json::from_str::<serde_json::Value>(&frame).is_ok(), "{frame}");
        }
    });
});
