//! The Rust server and test of docs/guides/context.md, which includes the parts between the
//! markers.

// --8<-- [start:server]
use serde_json::{Value, json};
use toolwire::{Context, LogLevel, RequestOptions, Server, Tool, ToolError, ToolOutput};

pub fn travel_server() -> Result<Server, toolwire::Error> {
    let book = Tool::new("book")
        .description("Books a hotel once the user confirms the price.")
        .input_schema(json!({
            "type": "object",
            "properties": {"city": {"type": "string"}, "nights": {"type": "integer"}},
            "required": ["city", "nights"]
        }));
    Server::builder("travel", "1.0.0")
        .tool(book, |ctx: Context, args: Value| async move {
            let (city, nights) = (args["city"].as_str().unwrap_or_default(), &args["nights"]);
            ctx.log(LogLevel::Info, json!({"searching": city})); // at the level the client set
            for (step, doing) in ["searching", "comparing", "holding a room"]
                .iter()
                .enumerate()
            {
                ctx.progress(step as f64 + 1.0, Some(3.0), Some(doing)); // if the client asked
            }
            // Asks the user through the client; `?` passes on a 2026-07-28 round's question.
            // A cancelled call is dropped at its next await; `ctx.is_cancelled()` checks between.
            let question = json!({
                "message": format!("Book {nights} nights in {city} for 480 EUR?"),
                "requestedSchema": {
                    "type": "object",
                    "properties": {"confirm": {"type": "boolean"}},
                    "required": ["confirm"]
                }
            });
            let answer = ctx.elicit(question, RequestOptions::default()).await?;
            let confirmed = answer["action"] == "accept" && answer["content"]["confirm"] == true;
            Ok::<_, ToolError>(ToolOutput::text(match confirmed {
                true => format!("Booked {nights} nights in {city}."),
                false => "Not booked.".to_owned(),
            }))
        })
        .build()
}
// --8<-- [end:server]

// --8<-- [start:test]
use std::sync::{Arc, Mutex};

use futures_util::FutureExt;
use toolwire::client::{Answerer, Client, ClientOptions, Progress};

#[tokio::test]
async fn book_asks_the_user_first() -> Result<(), toolwire::Error> {
    for version in ["2025-11-25", "2026-07-28"] {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let progress = Arc::new(Mutex::new(Vec::new()));
        // The client's elicitation handler: the user says yes.
        let user: Arc<dyn Answerer> = Arc::new({
            let asked = asked.clone();
            move |_method: String, params: Value| {
                asked.lock().unwrap().push(params["message"].clone());
                async { Ok(json!({"action": "accept", "content": {"confirm": true}})) }.boxed()
            }
        });
        let on_progress: Progress = Arc::new({
            let progress = progress.clone();
            move |notification: &Value| {
                progress
                    .lock()
                    .unwrap()
                    .push(notification["message"].clone())
            }
        });
        let mut options = ClientOptions::default();
        options.protocol_version = version.to_owned();
        options.elicitation = true;
        let client = Client::connect(&travel_server()?, options, Some(user)).await?;
        let result = client
            .call_tool(
                "book",
                json!({"city": "Oslo", "nights": 2}),
                Some(on_progress),
            )
            .await?;
        let logs = client
            .notifications()
            .into_iter()
            .filter(|n| n["method"] == "notifications/message")
            .count();
        client.close().await;

        assert_eq!(result["content"][0]["text"], "Booked 2 nights in Oslo.");
        assert_eq!(
            *asked.lock().unwrap(),
            [json!("Book 2 nights in Oslo for 480 EUR?")]
        );
        // In 2026-07-28 a question ends the request and the client sends it again with the
        // answer: the handler runs twice, so what it does before asking, it does twice.
        let rounds = if version == "2025-11-25" { 1 } else { 2 };
        let steps = ["searching", "comparing", "holding a room"].repeat(rounds);
        assert_eq!(*progress.lock().unwrap(), steps);
        // Logs go at the server's default level (info) in 2025-11-25; 2026-07-28 sends them only
        // to a request that names its level (`_meta` "io.modelcontextprotocol/logLevel").
        assert_eq!(logs, if version == "2025-11-25" { 1 } else { 0 });
    }
    Ok(())
}
// --8<-- [end:test]
