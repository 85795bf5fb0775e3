//! Benchmark anchor: rmcp's server with a hand-written `ServerHandler` (echo, sleep, and
//! tool_000..tool_099), on stdio with rmcp's default multi-thread tokio runtime.
//! `--bench-tools` adds the tools of bench/payloads (as toolwire's demo does). rmcp has no
//! JSON Schema validator: it declares `validate_big`'s schema but checks no arguments against
//! it (a typed `Parameters<T>` would only check what serde's types can say: no patterns, no
//! bounds), so this anchor validates nothing.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock as Content, ErrorData, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

#[derive(Clone)]
struct Anchor {
    tools: Arc<Vec<Tool>>,
    /// `--bench-tools`: without it their names are unknown tools, as before.
    bench: bool,
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas are objects"),
    }
}

/// The large schema, from the one file every server reads.
const BIG_SCHEMA: &str = include_str!("../../../schemas/big.json");
const ITEM_BYTES: u64 = 64;
const MAX_BYTES: u64 = 64 * 1024 * 1024;
const ALPHABET: &str = "abcdefghijklmnopqrstuvwxyz0123456789";

fn bench_tools() -> Vec<Tool> {
    let bytes = || schema(json!({"type": "object", "properties": {"bytes": {"type": "integer", "minimum": 0, "maximum": MAX_BYTES}}, "required": ["bytes"], "additionalProperties": false}));
    let big: Value = serde_json::from_str(BIG_SCHEMA).expect("bench/schemas/big.json is JSON");
    vec![
        Tool::new(
            "take_text",
            "Answers the length in characters of the text it is given.",
            schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"], "additionalProperties": false})),
        ),
        Tool::new("give_text", "Answers a text of that many ASCII bytes.", bytes()),
        Tool::new("give_structured", "Answers structured content of about that many bytes.", bytes()).with_raw_output_schema(schema(json!({
            "type": "object",
            "properties": {"items": {"type": "array", "items": {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}},
                "required": ["id", "name", "tags"]
            }}},
            "required": ["items"]
        }))),
        Tool::new("validate_big", "Checks an order against a large schema; answers its line count.", schema(big)),
        Tool::new(
            "validate_small",
            "A trivial schema; answers ok.",
            schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
        ),
    ]
}

/// The answer of a bench/payloads tool, or None for another tool.
fn bench_call(name: &str, args: &Option<JsonObject>) -> Option<CallToolResult> {
    let bytes = || arg(args, "bytes").and_then(Value::as_u64).filter(|n| *n <= MAX_BYTES);
    let bad = || CallToolResult::error(vec![Content::text("bytes must be an integer 0..64 MiB")]);
    Some(match name {
        "take_text" => {
            let text = arg(args, "text").and_then(Value::as_str).unwrap_or_default();
            CallToolResult::success(vec![Content::text(text.chars().count().to_string())])
        }
        "give_text" => match bytes() {
            Some(n) => {
                // Whole copies of the alphabet, then cut, as toolwire's demo does.
                let mut text = ALPHABET.repeat(n as usize / ALPHABET.len() + 1);
                text.truncate(n as usize);
                CallToolResult::success(vec![Content::text(text)])
            }
            None => bad(),
        },
        "give_structured" => match bytes() {
            Some(n) => {
                let items: Vec<Value> = (0..n / ITEM_BYTES)
                    .map(|n| json!({"id": n, "name": format!("item-{n:06}"), "tags": ["alpha", "beta", "gamma"]}))
                    .collect();
                // With its JSON text as a text block, as the spec asks.
                CallToolResult::structured(json!({"items": items}))
            }
            None => bad(),
        },
        "validate_big" => {
            let lines = arg(args, "order").and_then(|o| o["lines"].as_array()).map_or(0, Vec::len);
            CallToolResult::success(vec![Content::text(format!("lines={lines}"))])
        }
        "validate_small" => CallToolResult::success(vec![Content::text("ok")]),
        _ => return None,
    })
}

impl Anchor {
    fn new() -> Self {
        let mut tools = vec![
            Tool::new(
                "echo",
                "Returns the text it is given.",
                schema(json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]})),
            ),
            Tool::new(
                "sleep",
                "Waits ms milliseconds.",
                schema(json!({"type": "object", "properties": {"ms": {"type": "integer", "minimum": 0, "maximum": 60000}}, "required": ["ms"]})),
            ),
        ];
        for i in 0..100 {
            tools.push(Tool::new(
                format!("tool_{i:03}"),
                format!("Extra tool number {i} (benchmarks tools/list)."),
                schema(json!({"type": "object", "properties": {"q": {"type": "string"}, "n": {"type": "integer", "minimum": 0}}, "required": ["q"]})),
            ));
        }
        let bench = std::env::args().any(|a| a == "--bench-tools");
        if bench {
            tools.extend(bench_tools());
        }
        Anchor { tools: Arc::new(tools), bench }
    }
}

fn arg<'a>(args: &'a Option<JsonObject>, key: &str) -> Option<&'a Value> {
    args.as_ref().and_then(|a| a.get(key))
}

impl ServerHandler for Anchor {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult { tools: self.tools.as_ref().clone(), ..Default::default() })
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if self.bench
            && let Some(result) = bench_call(request.name.as_ref(), &request.arguments)
        {
            return Ok(result.into());
        }
        let text = match request.name.as_ref() {
            "echo" => match arg(&request.arguments, "text").and_then(Value::as_str) {
                Some(text) => text.to_owned(),
                None => return Ok(CallToolResult::error(vec![Content::text("text must be a string")]).into()),
            },
            "sleep" => match arg(&request.arguments, "ms").and_then(Value::as_u64) {
                Some(ms) if ms <= 60000 => {
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    format!("slept {ms} ms")
                }
                _ => return Ok(CallToolResult::error(vec![Content::text("ms must be an integer 0..60000")]).into()),
            },
            name if name.starts_with("tool_") => arg(&request.arguments, "q").and_then(Value::as_str).unwrap_or_default().to_owned(),
            other => return Err(ErrorData::invalid_params(format!("Unknown tool: {other}"), None)),
        };
        Ok(CallToolResult::success(vec![Content::text(text)]).into())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.iter().position(|a| a == "--http") {
        None => {
            let service = Anchor::new().serve(rmcp::transport::stdio()).await?;
            service.waiting().await?;
        }
        Some(at) => {
            let port: u16 = args.get(at + 1).and_then(|p| p.parse().ok()).ok_or("--http needs a port")?;
            serve_http(port, args.iter().any(|a| a == "--stateful")).await?;
        }
    }
    Ok(())
}

/// rmcp's Streamable HTTP service on hyper, TCP_NODELAY on every socket. Its best mode for
/// throughput is stateless with JSON answers (the default here); `--stateful` keeps sessions
/// and SSE answers, rmcp's default.
async fn serve_http(port: u16, stateful: bool) -> Result<(), Box<dyn std::error::Error>> {
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService, session::local::LocalSessionManager,
    };
    let mut config = StreamableHttpServerConfig::default();
    config.legacy_session_mode = stateful;
    config.json_response = !stateful;
    let anchor = Anchor::new();
    let service = StreamableHttpService::new(move || Ok(anchor.clone()), Arc::new(LocalSessionManager::default()), config);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", port)).await?;
    eprintln!("anchor-rmcp: listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (socket, _) = tokio::select! {
            accepted = listener.accept() => accepted?,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        socket.set_nodelay(true)?;
        let service = hyper_util::service::TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(hyper_util::rt::TokioIo::new(socket), service)
                .await;
        });
    }
}
