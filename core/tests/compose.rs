//! Mounting another server's catalog under a prefix: a server in this process and one over
//! Streamable HTTP, each driven through the outer server by a real client of either era.
//! Names and URIs are prefixed, calls forwarded with their progress, questions and
//! cancellation, the outer server's middleware applies, and the upstream's list changes reach
//! the outer server's clients.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use futures_util::FutureExt;
use serde_json::{Value, json};
use tokio::sync::mpsc;
use toolwire::client::{Answerer, Client, ClientOptions};
use toolwire::compose::Upstream;
use toolwire::middleware::{Middleware, RequestInfo, Verdict};
use toolwire::transport::http::HttpOptions;
use toolwire::{
    Completion, CompletionRequest, Context, ErrorObject, LogLevel, Prompt, PromptArgument,
    PromptMessage, PromptRequest, PromptResult, Reference, RequestOptions, Resource,
    ResourceContents, ResourceRequest, ResourceTemplate, Server, Tool, ToolError, ToolOutput,
};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

async fn echo(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text(format!(
        "echo: {}",
        args["text"].as_str().unwrap_or("")
    )))
}

/// Reports progress twice, then answers.
async fn steps(ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    ctx.progress(1.0, Some(2.0), Some("half"));
    ctx.progress(2.0, Some(2.0), Some("done"));
    Ok(ToolOutput::text("stepped"))
}

/// Logs as it works.
async fn chatty(ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    ctx.log_as(LogLevel::Info, Some("radar"), "warming up");
    ctx.log(LogLevel::Debug, "too fine to hear");
    Ok(ToolOutput::text("warm"))
}

/// Asks the user for a name.
async fn greet(ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
    let asked = json!({
        "message": "Your name?",
        "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}}
    });
    let answer = ctx.elicit(asked, RequestOptions::default()).await?;
    let name = answer["content"]["name"]
        .as_str()
        .unwrap_or("nobody")
        .to_owned();
    Ok(ToolOutput::text(format!("hello, {name}")))
}

/// Sends when dropped.
struct Told(mpsc::UnboundedSender<()>);

impl Drop for Told {
    fn drop(&mut self) {
        let _ = self.0.send(());
    }
}

fn upstream(cancelled: mpsc::UnboundedSender<()>) -> Server {
    let server = Server::builder("weather", "1")
        .tool(
            Tool::new("echo")
                .description("Echoes.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
            echo,
        )
        .tool(Tool::new("steps"), steps)
        .tool(Tool::new("greet"), greet)
        .tool(Tool::new("chatty"), chatty)
        .build()
        .expect("a server");
    server
        .add_tool(Tool::new("wait"), move |ctx: Context, _args: Value| {
            // The engine drops a cancelled call's handler: the guard tells the test.
            let told = Told(cancelled.clone());
            async move {
                let _told = told;
                ctx.cancelled().await;
                Ok(ToolOutput::text("cancelled"))
            }
        })
        .expect("wait");
    let mut readme = Resource::new("docs://readme", "readme");
    readme.mime_type = Some("text/plain".into());
    server
        .add_resource(readme, |request: ResourceRequest| async move {
            Ok(vec![ResourceContents::text(
                request.uri,
                Some("text/plain"),
                "Read me.",
            )])
        })
        .expect("readme");
    server
        .add_resource_template(
            ResourceTemplate::new("forecast://{city}", "forecast"),
            |request: ResourceRequest| async move {
                let city = request.variables.get("city").cloned().unwrap_or_default();
                Ok(vec![ResourceContents::text(
                    request.uri,
                    None,
                    format!("sunny in {city}"),
                )])
            },
        )
        .expect("template");
    let mut prompt = Prompt::new("brief");
    prompt.arguments = vec![PromptArgument::new("city", true)];
    server
        .add_prompt(prompt, |request: PromptRequest| async move {
            let city = request.arguments.get("city").cloned().unwrap_or_default();
            Ok(PromptResult::new(vec![PromptMessage::user(
                toolwire::Content::text(format!("Brief me on {city}.")),
            )]))
        })
        .expect("prompt");
    // Cities completed for the prompt's argument and the template's variable alike.
    let cities = |request: CompletionRequest| async move {
        let typed = request.value.to_lowercase();
        let matching = ["Oslo", "Osaka", "Ottawa", "Lima"]
            .into_iter()
            .filter(|city| city.to_lowercase().starts_with(&typed))
            .map(str::to_owned)
            .collect();
        Ok::<_, ToolError>(Completion::new(matching))
    };
    server
        .set_completer(Reference::Prompt("brief".into()), cities)
        .expect("prompt completion");
    server
        .set_completer(
            Reference::ResourceTemplate("forecast://{city}".into()),
            cities,
        )
        .expect("template completion");
    server
}

/// Counts what reaches the outer server's middleware.
#[derive(Default)]
struct Seen(Mutex<Vec<String>>);

#[async_trait]
impl Middleware for Seen {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        if let Some(name) = &request.name {
            self.0.lock().expect("seen").push(name.clone());
        }
        if request.name.as_deref() == Some("weather_echo")
            && request
                .arguments
                .as_ref()
                .is_some_and(|a| a["text"] == "forbidden")
        {
            return Verdict::ToolError("the gateway refuses that".into());
        }
        Verdict::Continue
    }
}

fn answers_name() -> Arc<dyn Answerer> {
    Arc::new(|method: String, _params: Value| {
        async move {
            if method == "elicitation/create" {
                Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
            } else {
                Err(ErrorObject::method_not_found(&method))
            }
        }
        .boxed()
    })
}

async fn client_of(outer: &Server, version: &str) -> Client {
    let mut options = ClientOptions::default();
    options.protocol_version = version.into();
    options.elicitation = true;
    Client::connect(outer, options, Some(answers_name()))
        .await
        .expect("a client")
}

fn text(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

/// Everything a mount promises, through a client of `version`.
async fn drive(
    outer: &Server,
    seen: &Seen,
    version: &str,
    cancelled: &mut mpsc::UnboundedReceiver<()>,
) {
    let client = client_of(outer, version).await;
    let names: Vec<String> = client
        .list_tools()
        .await
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_owned())
        .collect();
    assert_eq!(
        names,
        [
            "weather_chatty",
            "weather_echo",
            "weather_greet",
            "weather_steps",
            "weather_wait"
        ],
        "{version}"
    );
    let listed = client.list_tools().await.expect("tools");
    let echo = listed
        .iter()
        .find(|tool| tool["name"] == "weather_echo")
        .expect("weather_echo");
    assert_eq!(echo["description"], "Echoes.");
    assert_eq!(echo["inputSchema"]["required"], json!(["text"]));

    let echoed = client
        .call_tool("weather_echo", json!({"text": "hi"}), None)
        .await
        .expect("a call");
    assert_eq!(text(&echoed), "echo: hi");
    // The outer server's schema check and middleware run before anything is forwarded.
    let refused = client
        .call_tool("weather_echo", json!({"text": "forbidden"}), None)
        .await
        .expect("a result");
    assert_eq!(refused["isError"], true);
    assert_eq!(text(&refused), "the gateway refuses that");
    assert!(
        seen.0
            .lock()
            .expect("seen")
            .contains(&"weather_echo".to_owned())
    );

    let heard = Arc::new(Mutex::new(Vec::new()));
    let progress = {
        let heard = heard.clone();
        Arc::new(move |params: &Value| {
            heard.lock().expect("heard").push(params["message"].clone());
        })
    };
    let stepped = client
        .call_tool("weather_steps", json!({}), Some(progress))
        .await
        .expect("a call");
    assert_eq!(text(&stepped), "stepped");
    assert_eq!(
        *heard.lock().expect("heard"),
        [json!("half"), json!("done")],
        "{version}"
    );

    // The upstream's logs about a call reach the caller, at the level the caller asked for.
    let logs = Arc::new(Mutex::new(Vec::new()));
    {
        let logs = logs.clone();
        client.on_notification(Arc::new(move |method: &str, params: &Value| {
            if method == "notifications/message" {
                logs.lock().expect("logs").push(params.clone());
            }
        }));
    }
    let warmed = client
        .request(
            "tools/call",
            json!({
                "name": "weather_chatty",
                "arguments": {},
                "_meta": {"io.modelcontextprotocol/logLevel": "info"},
            }),
        )
        .await
        .expect("a call");
    assert_eq!(text(&warmed), "warm");
    assert_eq!(
        *logs.lock().expect("logs"),
        [json!({"level": "info", "logger": "radar", "data": "warming up"})],
        "{version}"
    );

    let greeted = client
        .call_tool("weather_greet", json!({}), None)
        .await
        .expect("a call");
    assert_eq!(text(&greeted), "hello, Ada", "{version}");

    let read = client
        .read_resource("docs://weather/readme", None)
        .await
        .expect("a read");
    assert_eq!(read["contents"][0]["text"], "Read me.");
    assert_eq!(read["contents"][0]["uri"], "docs://weather/readme");
    let templates = client.list_resource_templates().await.expect("templates");
    assert_eq!(templates[0]["uriTemplate"], "forecast://weather/{city}");
    let forecast = client
        .read_resource("forecast://weather/Oslo", None)
        .await
        .expect("a read");
    assert_eq!(forecast["contents"][0]["text"], "sunny in Oslo");
    let prompt = client
        .get_prompt("weather_brief", json!({"city": "Oslo"}), None)
        .await
        .expect("a prompt");
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Brief me on Oslo."
    );
    // Completion is the upstream's, asked with its own names.
    let completed = client
        .complete(
            json!({"type": "ref/prompt", "name": "weather_brief"}),
            "city",
            "os",
            None,
        )
        .await
        .expect("a completion");
    assert_eq!(completed["values"], json!(["Oslo", "Osaka"]), "{version}");
    let completed = client
        .complete(
            json!({"type": "ref/resource", "uri": "forecast://weather/{city}"}),
            "city",
            "O",
            None,
        )
        .await
        .expect("a completion");
    assert_eq!(completed["values"], json!(["Oslo", "Osaka", "Ottawa"]));
    assert_eq!(completed["hasMore"], false);

    // Given up on here, cancelled upstream.
    let waited = client
        .request_within(
            "tools/call",
            json!({"name": "weather_wait", "arguments": {}}),
            Duration::from_millis(300),
        )
        .await;
    assert!(waited.is_err());
    tokio::time::timeout(Duration::from_secs(10), cancelled.recv())
        .await
        .expect("the upstream call was cancelled")
        .expect("a signal");
    client.close().await;
}

/// Waits for list changes until `weather_radar` is listed (or, `listed` false, is not).
async fn listed_after_changes(
    client: &Client,
    changes: &mut mpsc::UnboundedReceiver<()>,
    listed: bool,
) {
    loop {
        tokio::time::timeout(Duration::from_secs(10), changes.recv())
            .await
            .expect("a list change")
            .expect("a signal");
        let tools = client.list_tools().await.expect("tools");
        if tools.iter().any(|t| t["name"] == "weather_radar") == listed {
            return;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_in_this_process_is_mounted_under_a_prefix() {
    let (cancelled, mut cancellations) = mpsc::unbounded_channel();
    let inner = upstream(cancelled);
    let seen = Arc::new(Seen::default());
    // --8<-- [start:inner]
    let outer = Server::builder("gateway", "1").build().expect("a server");
    let mount = outer
        .mount("weather", Upstream::Server(inner.clone()))
        .await
        .expect("mounted");
    // --8<-- [end:inner]
    outer.add_middleware(seen.clone());
    assert_eq!(mount.registered().len(), 8);
    for version in [LEGACY, MODERN] {
        drive(&outer, &seen, version, &mut cancellations).await;
    }

    // A tool added upstream reaches the outer server's clients as a list change.
    let client = client_of(&outer, LEGACY).await;
    let (changed, mut changes) = mpsc::unbounded_channel();
    client.on_notification(Arc::new(move |method: &str, _: &Value| {
        if method == "notifications/tools/list_changed" {
            let _ = changed.send(());
        }
    }));
    inner.add_tool(Tool::new("radar"), echo).expect("radar");
    listed_after_changes(&client, &mut changes, true).await;
    inner.remove_tool("radar");
    listed_after_changes(&client, &mut changes, false).await;

    mount.unmount().await;
    assert!(client.list_tools().await.expect("tools").is_empty());
    client.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamable_http_server_is_proxied_in_either_era() -> Result<(), toolwire::Error> {
    let (cancelled, mut cancellations) = mpsc::unbounded_channel();
    let inner = upstream(cancelled);
    let http = inner
        .serve_http("127.0.0.1:0", HttpOptions::default())
        .await
        .expect("serving");
    let url = format!("http://{}/mcp", http.local_addr());
    let seen = Arc::new(Seen::default());
    // --8<-- [start:http]
    let outer = Server::builder("gateway", "1").build()?;
    outer.mount("weather", Upstream::http(&url)).await?; // weather_echo, docs://weather/readme, ...
    // --8<-- [end:http]
    outer.add_middleware(seen.clone());
    for version in [LEGACY, MODERN] {
        drive(&outer, &seen, version, &mut cancellations).await;
    }
    http.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upstream_that_cannot_be_reached_is_a_clear_error() {
    let outer = Server::builder("gateway", "1").build().expect("a server");
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let free = listener.local_addr().expect("an address");
    drop(listener);
    let err = outer
        .mount("gone", Upstream::http(format!("http://{free}/mcp")))
        .await
        .expect_err("nothing listens");
    let text = err.to_string();
    assert!(
        text.contains(&format!("cannot connect to http://{free}/mcp")),
        "{text}"
    );
    let err = outer
        .mount("bad prefix", Upstream::http("http://127.0.0.1:1/mcp"))
        .await
        .expect_err("a bad prefix");
    assert!(err.to_string().contains("a mount's prefix"), "{err}");
    let err = Upstream::from_json(&json!({"command": "x", "url": "http://a/"})).expect_err("both");
    assert!(err.to_string().contains("not both"), "{err}");
}
