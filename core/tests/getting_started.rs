//! The test of docs/getting-started/rust.md, which includes the part between the markers.

#[path = "../examples/hello.rs"]
#[allow(dead_code)] // its `main` is the example's
mod hello;

// --8<-- [start:test]
use serde_json::json;
use toolwire::client::{Client, ClientOptions};

#[tokio::test]
async fn greet() -> Result<(), toolwire::Error> {
    let server = hello::server()?;
    let client = Client::connect(&server, ClientOptions::default(), None).await?;
    let result = client
        .call_tool("greet", json!({"name": "Ada"}), None)
        .await?;
    assert_eq!(result["content"][0]["text"], "Hello, Ada!");
    client.close().await;
    Ok(())
}
// --8<-- [end:test]
