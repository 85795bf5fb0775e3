//! The Rust server and test of docs/guides/resources.md, which includes the parts between the
//! markers.

// --8<-- [start:server]
use std::collections::BTreeMap;

use toolwire::{
    Completion, CompletionRequest, Content, Prompt, PromptArgument, PromptMessage, PromptRequest,
    PromptResult, Reference, Resource, ResourceContents, ResourceRequest, ResourceTemplate, Server,
    ToolError,
};

fn notes() -> BTreeMap<&'static str, &'static str> {
    BTreeMap::from([
        ("2026-11-22", "Busy: three meetings."),
        ("2026-11-23", "Quiet."),
    ])
}

pub fn notes_server() -> Result<Server, toolwire::Error> {
    let summarize = Prompt::new("summarize")
        .description("Summarize a day's notes.")
        .argument(PromptArgument::new("date", true).description("The day, as YYYY-MM-DD."))
        .argument(PromptArgument::new("tone", false).description("How long the summary may be."));
    Server::builder("notes", "1.0.0")
        .resource(
            Resource::new("notes://readme", "readme").mime_type("text/plain"),
            |request: ResourceRequest| async move {
                let text = "One note a day, at notes://day/{date}.";
                Ok(vec![ResourceContents::text(
                    request.uri,
                    Some("text/plain"),
                    text,
                )])
            },
        )
        // A template: its variables are in the request.
        .resource_template(
            ResourceTemplate::new("notes://day/{date}", "notes of a day"),
            |request: ResourceRequest| async move {
                let date = request
                    .variables
                    .get("date")
                    .map(String::as_str)
                    .unwrap_or_default();
                match notes().get(date) {
                    Some(text) => Ok(vec![ResourceContents::text(
                        request.uri,
                        Some("text/plain"),
                        *text,
                    )]),
                    None => Err(ToolError::not_found(format!("no notes on {date}"))), // -32002
                }
            },
        )
        .completer(
            Reference::ResourceTemplate("notes://day/{date}".into()),
            |request: CompletionRequest| async move {
                let dates = notes()
                    .into_keys()
                    .filter(|date| date.starts_with(&request.value));
                Ok(Completion::new(dates.map(String::from).collect()))
            },
        )
        .prompt(summarize, |request: PromptRequest| async move {
            let date = &request.arguments["date"]; // required arguments are checked first
            let tone = request
                .arguments
                .get("tone")
                .map_or("short", String::as_str);
            let day = notes().get(date.as_str()).copied().unwrap_or("none");
            let text = format!("Summarize the notes of {date} ({tone}): {day}");
            Ok(PromptResult::new(vec![PromptMessage::user(Content::text(
                text,
            ))]))
        })
        .completer(
            Reference::Prompt("summarize".into()),
            |request: CompletionRequest| async move {
                let tones: &[&str] = match request.argument.as_str() {
                    "tone" => &["short", "detailed"],
                    _ => &[],
                };
                let matching = tones.iter().filter(|tone| tone.starts_with(&request.value));
                Ok(Completion::new(
                    matching.map(|tone| tone.to_string()).collect(),
                ))
            },
        )
        .build()
}
// --8<-- [end:server]

// --8<-- [start:test]
use serde_json::json;
use toolwire::client::{Client, ClientOptions};

#[tokio::test]
async fn resources_prompts_and_completion() -> Result<(), toolwire::Error> {
    let client = Client::connect(&notes_server()?, ClientOptions::default(), None).await?;

    let templates = client.list_resource_templates().await?;
    assert_eq!(templates[0]["uriTemplate"], "notes://day/{date}");

    let read = client.read_resource("notes://day/2026-11-23", None).await?;
    assert_eq!(read["contents"][0]["text"], "Quiet.");

    let missing = client.read_resource("notes://day/1999-01-01", None).await;
    assert!(matches!(missing, Err(toolwire::Error::Rpc(error)) if error.code.0 == -32002));

    let reference = json!({"type": "ref/resource", "uri": "notes://day/{date}"});
    let dates = client
        .complete(reference, "date", "2026-11-2", None)
        .await?;
    assert_eq!(dates["values"], json!(["2026-11-22", "2026-11-23"]));

    let prompt = client
        .get_prompt("summarize", json!({"date": "2026-11-22"}), None)
        .await?;
    let text = prompt["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("Summarize the notes of 2026-11-22 (short)"),
        "{text}"
    );

    let reference = json!({"type": "ref/prompt", "name": "summarize"});
    let tones = client.complete(reference, "tone", "", None).await?;
    assert_eq!(tones["values"], json!(["short", "detailed"]));

    client.close().await;
    Ok(())
}
// --8<-- [end:test]
