//! MCP Apps (SEP-1865) on the wire, in both eras: a view served with its MIME type and
//! `_meta.ui`, tools linked to it, and a tool only the view calls, hidden from clients that do
//! not render views.

mod common;

use common::Client;
use serde_json::{Map, Value, json};
use toolwire::{Context, Server, Tool, ToolError, ToolOutput, UiResource, Visibility};

const UI: &str = "io.modelcontextprotocol/ui";
const MIME: &str = "text/html;profile=mcp-app";
const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";
const HTML: &str = "<!DOCTYPE html><html><body><p id=greeting></p></body></html>";

fn renders() -> Value {
    json!({"extensions": {UI: {"mimeTypes": [MIME]}}})
}

fn ui_meta() -> Map<String, Value> {
    match json!({"csp": {"connectDomains": ["https://api.example.com"]}, "prefersBorder": true}) {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

// --8<-- [start:server]
/// A greeting shown in a view, and a tool only the view calls.
fn app_server() -> Server {
    Server::builder("greeter", "1")
        // Tools may come before their view in a builder: links are checked in `build`.
        .tool(
            Tool::new("greet").ui_resource("ui://greeter/view.html"),
            |ctx: Context, args: Value| async move {
                let name = args["name"].as_str().unwrap_or("you").to_owned();
                let greeting = format!("Hello, {name}!");
                // The text is for the model and for hosts without views; the view reads the
                // structured content.
                let mut output =
                    ToolOutput::structured(json!({"greeting": greeting, "name": name}));
                if !ctx.client_renders_apps() {
                    output = ToolOutput::text(greeting);
                }
                Ok::<_, ToolError>(output)
            },
        )
        .tool(
            Tool::new("shout")
                .ui_resource("ui://greeter/view.html")
                .visibility(&[Visibility::App]),
            |_ctx: Context, args: Value| async move {
                let text = args["text"].as_str().unwrap_or_default().to_uppercase();
                Ok::<_, ToolError>(ToolOutput::structured(json!({"shouted": text})))
            },
        )
        .ui_resource(
            UiResource::new("ui://greeter/view.html", "greeter-view", HTML)
                .description("Shows the greeting")
                .ui_meta(ui_meta()),
        )
        .build()
        .expect("a valid app server")
}
// --8<-- [end:server]

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

#[tokio::test]
async fn a_client_that_renders_views_sees_the_view_and_every_tool() {
    let server = app_server();
    let mut client = Client::new(&server);
    let init = client.initialize("2025-11-25", renders()).await;
    assert_eq!(
        init["result"]["capabilities"]["extensions"][UI],
        json!({}),
        "{init}"
    );

    let list = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["greet", "shout"]);
    let shout = &list["result"]["tools"][1];
    assert_eq!(
        shout["_meta"],
        json!({"ui": {"resourceUri": "ui://greeter/view.html", "visibility": ["app"]},
               "ui/resourceUri": "ui://greeter/view.html"})
    );

    let resources = client.request(json!(2), "resources/list", json!({})).await;
    assert_eq!(
        resources["result"]["resources"],
        json!([{"uri": "ui://greeter/view.html", "name": "greeter-view", "description": "Shows the greeting",
                "mimeType": MIME, "_meta": {"ui": ui_meta()}}])
    );
    let read = client
        .request(
            json!(3),
            "resources/read",
            json!({"uri": "ui://greeter/view.html"}),
        )
        .await;
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "ui://greeter/view.html", "mimeType": MIME, "text": HTML, "_meta": {"ui": ui_meta()}}])
    );

    let greet = client
        .request(
            json!(4),
            "tools/call",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        greet["result"]["structuredContent"],
        json!({"greeting": "Hello, Ada!", "name": "Ada"})
    );
    let shouted = client
        .request(
            json!(5),
            "tools/call",
            json!({"name": "shout", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(
        shouted["result"]["structuredContent"],
        json!({"shouted": "HI"})
    );
}

#[tokio::test]
async fn a_client_without_views_gets_text_and_never_the_app_only_tool() {
    let server = app_server();
    let mut client = Client::initialized(&server).await;
    let list = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["greet"]);
    let greet = client
        .request(
            json!(2),
            "tools/call",
            json!({"name": "greet", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        greet["result"]["content"],
        json!([{"type": "text", "text": "Hello, Ada!"}])
    );
    let shout = client
        .request(
            json!(3),
            "tools/call",
            json!({"name": "shout", "arguments": {}}),
        )
        .await;
    assert_eq!(shout["error"]["code"], -32602, "{shout}");
    assert_eq!(shout["error"]["message"], "Unknown tool: shout");
}

#[tokio::test]
async fn the_modern_era_decides_per_request() {
    let server = app_server();
    let mut client = Client::new(&server);
    let request = |id: i64, method: &str, params: Value, caps: Value| {
        let mut params = params;
        params["_meta"] = json!({PV: "2026-07-28", CC: caps});
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    };
    client.send(&request(1, "server/discover", json!({}), json!({})));
    let discover = client.recv().await.expect("discover");
    assert_eq!(
        discover["result"]["capabilities"]["extensions"][UI],
        json!({})
    );
    client.send(&request(2, "tools/list", json!({}), renders()));
    assert_eq!(
        tool_names(&client.recv().await.expect("list")),
        ["greet", "shout"]
    );
    client.send(&request(3, "tools/list", json!({}), json!({})));
    assert_eq!(tool_names(&client.recv().await.expect("list")), ["greet"]);
    client.send(&request(
        4,
        "tools/call",
        json!({"name": "shout", "arguments": {"text": "a"}}),
        json!({}),
    ));
    assert_eq!(
        client.recv().await.expect("refusal")["error"]["code"],
        -32602
    );
    client.send(&request(
        5,
        "tools/call",
        json!({"name": "shout", "arguments": {"text": "a"}}),
        renders(),
    ));
    assert_eq!(
        client.recv().await.expect("answer")["result"]["structuredContent"]["shouted"],
        "A"
    );
}

#[tokio::test]
async fn links_and_views_are_checked_when_registered() {
    let server = Server::builder("apps", "1").build().expect("server");
    let err = server
        .add_tool(
            Tool::new("early").ui_resource("ui://apps/later.html"),
            |_: Context, _: Value| async { Ok::<_, ToolError>(ToolOutput::text("x")) },
        )
        .expect_err("no view yet")
        .to_string();
    assert!(
        err.contains("no view is registered at ui://apps/later.html"),
        "{err}"
    );
    let err = server
        .add_ui_resource(UiResource::new("https://apps/view", "v", HTML))
        .expect_err("not ui://")
        .to_string();
    assert!(err.contains("ui:// URI"), "{err}");
    server
        .add_ui_resource(UiResource::new("ui://apps/hidden.html", "hidden", HTML).unlisted())
        .expect("an unlisted view");
    let mut client = Client::initialized(&server).await;
    let list = client.request(json!(1), "resources/list", json!({})).await;
    assert_eq!(list["result"]["resources"], json!([]), "unlisted: {list}");
    let read = client
        .request(
            json!(2),
            "resources/read",
            json!({"uri": "ui://apps/hidden.html"}),
        )
        .await;
    assert_eq!(
        read["result"]["contents"][0]["mimeType"], MIME,
        "still read: {read}"
    );
    assert!(server.remove_resource("ui://apps/hidden.html"));
    let gone = client
        .request(
            json!(3),
            "resources/read",
            json!({"uri": "ui://apps/hidden.html"}),
        )
        .await;
    // Its last resource gone, the server has no resources capability left.
    assert_eq!(gone["error"]["code"], -32601, "{gone}");
    let built = Server::builder("apps", "1")
        .tool(
            Tool::new("dangling").ui_resource("ui://nowhere/view.html"),
            |_: Context, _: Value| async { Ok::<_, ToolError>(ToolOutput::text("x")) },
        )
        .build();
    assert!(built.is_err(), "a builder's tool needs its view too");
}

#[tokio::test]
async fn the_greeter_example_serves_its_view_and_both_tools() {
    use toolwire_demo::apps::{VIEW_URI, with_greeter};
    let server = with_greeter(Server::builder("greeter", "1"))
        .build()
        .expect("the example");
    let mut client = Client::new(&server);
    client.initialize("2025-11-25", renders()).await;
    let list = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(tool_names(&list), ["say_hello", "shout"]);
    let view = client
        .request(json!(2), "resources/read", json!({"uri": VIEW_URI}))
        .await;
    let text = view["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(
        text.starts_with("<!DOCTYPE html>") && text.contains("tools/call"),
        "{view}"
    );
    let hello = client
        .request(
            json!(3),
            "tools/call",
            json!({"name": "say_hello", "arguments": {"name": "Ada"}}),
        )
        .await;
    assert_eq!(
        hello["result"]["structuredContent"],
        json!({"greeting": "Hello, Ada!", "name": "Ada"})
    );
    assert_eq!(
        hello["result"]["content"],
        json!([{"type": "text", "text": "Hello, Ada!"}])
    );
}

#[tokio::test]
async fn stateless_http_hides_nothing_where_capabilities_are_unknown() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use toolwire::transport::http::{HttpOptions, ResponseMode};
    let server = app_server();
    let mut options = HttpOptions::default();
    options.stateless = true;
    options.response_mode = ResponseMode::Json;
    let http = server
        .serve_http("127.0.0.1:0", options)
        .await
        .expect("serving");
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "shout", "arguments": {"text": "hi"}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nhost: {addr}\r\ncontent-type: application/json\r\n\
         accept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-11-25\r\n\
         connection: close\r\ncontent-length: {len}\r\n\r\n{body}",
        addr = http.local_addr(),
        len = body.len()
    );
    let mut socket = tokio::net::TcpStream::connect(http.local_addr())
        .await
        .expect("connect");
    socket.write_all(request.as_bytes()).await.expect("write");
    let mut reply = String::new();
    socket.read_to_string(&mut reply).await.expect("read");
    assert!(
        reply.contains(r#""structuredContent":{"shouted":"HI"}"#),
        "answered: {reply}"
    );
    http.shutdown().await;
}
