//! Benchmark anchor: rmcp's server with a hand-written `ServerHandler` (echo, sleep, and
//! tool_000..tool_099), on stdio with rmcp's default multi-thread tokio runtime.

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
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas are objects"),
    }
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
        Anchor { tools: Arc::new(tools) }
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
