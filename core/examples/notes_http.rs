//! The Rust server of docs/guides/http.md (which includes the part between the markers; the
//! test of it is core/tests/guide_http.rs): `cargo run -p toolwire --example notes_http`.

// --8<-- [start:server]
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolwire::transport::http::HttpOptions;
use toolwire::{Context, Server, Tool, ToolError, ToolOutput};

pub fn notes_http_server() -> Result<Server, toolwire::Error> {
    let notes = Arc::new(Mutex::new(Vec::<String>::new()));
    let add_note = Tool::new("add_note")
        .description("Adds a note.")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }));
    Server::builder("notes", "1.0.0")
        .tool(add_note, move |ctx: Context, args: Value| {
            let notes = notes.clone();
            async move {
                ctx.progress(1.0, Some(1.0), Some("saved")); // on the call's SSE stream
                let mut notes = notes.lock().unwrap_or_else(|e| e.into_inner());
                notes.push(args["text"].as_str().unwrap_or_default().to_owned());
                Ok::<_, ToolError>(ToolOutput::text(format!("{} notes", notes.len())))
            }
        })
        .build()
}

// The engine serves HTTP itself at http://127.0.0.1:8000/mcp until the process ends.
#[tokio::main]
async fn main() -> Result<(), toolwire::Error> {
    let server = notes_http_server()?;
    let http = server
        .serve_http("127.0.0.1:8000", HttpOptions::default())
        .await?;
    println!("serving http://{}/mcp", http.local_addr());
    http.wait().await;
    Ok(())
}
// --8<-- [end:server]
