//! Tool search over a large catalog: the listing shows the pinned tools and the search's two;
//! `search_tools` ranks every tool the request may see; `call_tool` is the named tool's own
//! call (screening, validation, middleware); every tool stays callable by its name.

mod common;

use async_trait::async_trait;
use common::{Client, is_error_text};
use serde_json::{Value, json};
use toolwire::middleware::{Middleware, RequestInfo, Verdict};
use toolwire::{Context, Server, Tool, ToolError, ToolOutput, ToolSearch, Viewer};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";

async fn echo(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text(args.to_string()))
}

// --8<-- [start:server]
/// A catalog of a few hundred tools, of which `help` is always listed.
fn big_server() -> Server {
    let mut builder = Server::builder("big", "1")
        .tool(
            Tool::new("help").description("What this server can do."),
            echo,
        )
        .tool(
            Tool::new("send_email")
                .title("Send an email")
                .description("Sends a message to one recipient.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"to": {"type": "string", "description": "address"}},
                    "required": ["to"]
                })),
            echo,
        )
        .tool(
            Tool::new("archive_mail").description("Moves old emails to the archive."),
            echo,
        )
        .tool(
            Tool::new("payroll_export")
                .description("Exports the payroll as CSV.")
                .required_scopes(["hr"]),
            echo,
        );
    for n in 0..300 {
        builder = builder.tool(
            Tool::new(format!("metric_{n}")).description(format!("Reads metric number {n}.")),
            echo,
        );
    }
    builder
        .tool_search(ToolSearch::new().pinned(["help"]).max_results(3))
        .build()
        .expect("a valid server")
}
// --8<-- [end:server]

fn names(tools: &Value) -> Vec<String> {
    tools
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

async fn search(client: &mut Client, id: i64, arguments: Value) -> Value {
    client
        .request(
            json!(id),
            "tools/call",
            json!({"name": "search_tools", "arguments": arguments}),
        )
        .await
}

#[tokio::test]
async fn the_listing_offers_the_search_and_the_search_finds_and_calls() {
    let server = big_server();
    let mut client = Client::initialized(&server).await;
    let listed = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(
        names(&listed["result"]["tools"]),
        ["call_tool", "help", "search_tools"]
    );
    let search_tool = &listed["result"]["tools"][2];
    assert_eq!(search_tool["inputSchema"]["required"], json!(["query"]));
    assert_eq!(
        search_tool["inputSchema"]["properties"]["limit"]["maximum"],
        3
    );

    // The name's words rank above a description's; plurals fold; full definitions come back.
    let found = search(&mut client, 2, json!({"query": "emails"})).await;
    let tools = &found["result"]["structuredContent"]["tools"];
    assert_eq!(names(tools), ["send_email", "archive_mail"], "{found}");
    assert_eq!(tools[0]["inputSchema"]["required"], json!(["to"]));
    assert_eq!(tools[0]["title"], "Send an email");
    // The same as text, for clients that read only content.
    let text: Value = serde_json::from_str(
        found["result"]["content"][0]["text"]
            .as_str()
            .unwrap_or_default(),
    )
    .expect("the text is the JSON");
    assert_eq!(&text["tools"], tools);

    // At most max_results, or the limit asked for.
    let many = search(&mut client, 3, json!({"query": "metric"})).await;
    assert_eq!(
        names(&many["result"]["structuredContent"]["tools"]).len(),
        3
    );
    let one = search(&mut client, 4, json!({"query": "metric", "limit": 1})).await;
    assert_eq!(names(&one["result"]["structuredContent"]["tools"]).len(), 1);
    let exact = search(&mut client, 5, json!({"query": "metric_42"})).await;
    assert_eq!(
        names(&exact["result"]["structuredContent"]["tools"])[0],
        "metric_42",
        "{exact}"
    );
    let none = search(&mut client, 6, json!({"query": "zebra"})).await;
    assert_eq!(none["result"]["structuredContent"]["tools"], json!([]));
    // A pinned tool is listed already: a search leaves it out.
    let pinned = search(&mut client, 6, json!({"query": "help"})).await;
    assert_eq!(pinned["result"]["structuredContent"]["tools"], json!([]));

    // call_tool runs the tool found, validated against its own schema.
    let called = client
        .request(
            json!(7),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "send_email", "arguments": {"to": "a@b"}}}),
        )
        .await;
    assert_eq!(called["result"]["content"][0]["text"], r#"{"to":"a@b"}"#);
    let invalid = client
        .request(
            json!(8),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "send_email"}}),
        )
        .await;
    let text = is_error_text(&invalid);
    assert!(text.contains("tool \"send_email\""), "{text}");
    assert!(
        text.contains("\"to\""),
        "send_email's own schema refused it: {text}"
    );
    // Every tool stays callable by its own name.
    let direct = client
        .request(
            json!(9),
            "tools/call",
            json!({"name": "metric_7", "arguments": {"x": 1}}),
        )
        .await;
    assert_eq!(direct["result"]["content"][0]["text"], r#"{"x":1}"#);
}

#[tokio::test]
async fn bad_searches_and_calls_get_defined_answers() {
    let server = big_server();
    let mut client = Client::initialized(&server).await;
    for (id, arguments) in [
        (1, json!({})),
        (2, json!({"query": ""})),
        (3, json!({"query": "x", "limit": 4})),
        (4, json!({"query": "x", "limit": 0})),
        (5, json!({"query": "x".repeat(1001)})),
        (6, json!({"query": 7})),
        (7, json!({"query": "x", "extra": true})),
    ] {
        let answer = search(&mut client, id, arguments).await;
        assert!(is_error_text(&answer).contains("search_tools"), "{answer}");
    }
    let call = |arguments: Value| json!({"name": "call_tool", "arguments": arguments});
    let missing = client
        .request(json!(10), "tools/call", call(json!({"name": "no_such"})))
        .await;
    let direct = client
        .request(json!(10), "tools/call", json!({"name": "no_such"}))
        .await;
    assert_eq!(
        missing, direct,
        "an unknown tool answers the same either way"
    );
    let itself = client
        .request(json!(11), "tools/call", call(json!({"name": "call_tool"})))
        .await;
    assert!(is_error_text(&itself).contains("not itself"), "{itself}");
    let no_name = client
        .request(json!(12), "tools/call", call(json!({"arguments": {}})))
        .await;
    assert!(is_error_text(&no_name).contains("name"), "{no_name}");
    let bad_arguments = client
        .request(
            json!(13),
            "tools/call",
            call(json!({"name": "help", "arguments": [1]})),
        )
        .await;
    let text = is_error_text(&bad_arguments);
    assert!(text.contains("tool \"call_tool\""), "{text}");
    assert!(text.contains("/arguments"), "{text}");
    // The session still serves.
    let listed = client.request(json!(14), "tools/list", json!({})).await;
    assert_eq!(names(&listed["result"]["tools"]).len(), 3);
}

#[tokio::test]
async fn a_search_finds_only_what_the_viewer_may_see() {
    let server = big_server();
    let mut client = Client::initialized(&server).await;
    let guest = search(&mut client, 1, json!({"query": "payroll"})).await;
    assert_eq!(guest["result"]["structuredContent"]["tools"], json!([]));
    let hidden = client
        .request(
            json!(2),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "payroll_export"}}),
        )
        .await;
    let missing = client
        .request(
            json!(2),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "payroll_exports"}}),
        )
        .await;
    assert_eq!(
        hidden.to_string().replace("payroll_export", "NAME"),
        missing.to_string().replace("payroll_exports", "NAME")
    );

    client
        .session
        .identify(Viewer::new(None, vec!["hr".into()], vec![]));
    let staff = search(&mut client, 3, json!({"query": "payroll"})).await;
    // The identify's list_changed may come first.
    let staff = if staff.get("method").is_some() {
        client.recv().await.expect("the answer")
    } else {
        staff
    };
    assert_eq!(
        names(&staff["result"]["structuredContent"]["tools"]),
        ["payroll_export"],
        "{staff}"
    );
}

#[tokio::test]
async fn a_rule_screens_the_matches_before_the_best_are_taken() {
    let server = big_server();
    // Ties rank by name: metric_0, metric_1, metric_10, … The rule hides every metric_1….
    server.visible_when(|item: &toolwire::CatalogItem, _viewer: &Viewer| {
        !item.name.starts_with("metric_1")
    });
    let mut client = Client::initialized(&server).await;
    let found = search(&mut client, 1, json!({"query": "metric"})).await;
    assert_eq!(
        names(&found["result"]["structuredContent"]["tools"]),
        ["metric_0", "metric_2", "metric_20"],
        "{found}"
    );
    let hidden = client
        .request(
            json!(2),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "metric_1"}}),
        )
        .await;
    assert_eq!(hidden["error"]["message"], "Unknown tool: metric_1");
}

#[tokio::test]
async fn a_tool_only_a_view_calls_is_never_found() {
    let html = "<!DOCTYPE html><p>chart</p>";
    let server = Server::builder("apps", "1")
        .ui_resource(toolwire::UiResource::new(
            "ui://apps/chart.html",
            "chart",
            html,
        ))
        .tool(
            Tool::new("chart_refresh")
                .description("Refreshes the chart.")
                .visibility(&[toolwire::Visibility::App]),
            echo,
        )
        .tool(
            Tool::new("chart_export").description("Exports the chart."),
            echo,
        )
        .tool_search(ToolSearch::new())
        .build()
        .expect("a valid server");
    let mut client = Client::initialized(&server).await;
    let found = search(&mut client, 1, json!({"query": "chart"})).await;
    assert_eq!(
        names(&found["result"]["structuredContent"]["tools"]),
        ["chart_export"]
    );
}

/// Refuses every call of `archive_mail`; records the arguments of calls of `send_email`.
#[derive(Default)]
struct NoArchiving {
    sent: std::sync::Mutex<Vec<Value>>,
}

#[async_trait]
impl Middleware for NoArchiving {
    async fn before(&self, request: &RequestInfo) -> Verdict {
        match request.name.as_deref() {
            Some("archive_mail") => return Verdict::ToolError("archiving is off".into()),
            Some("send_email") => self
                .sent
                .lock()
                .unwrap()
                .push(request.arguments.clone().unwrap_or_default()),
            _ => {}
        }
        Verdict::Continue
    }
}

#[tokio::test]
async fn middleware_sees_the_tool_call_tool_calls() {
    let server = big_server();
    let gate = std::sync::Arc::new(NoArchiving::default());
    server.add_middleware(gate.clone());
    let mut client = Client::initialized(&server).await;
    let through = client
        .request(
            json!(1),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "archive_mail"}}),
        )
        .await;
    assert_eq!(is_error_text(&through), "archiving is off");
    let fine = client
        .request(
            json!(2),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "help"}}),
        )
        .await;
    assert_eq!(fine["result"]["content"][0]["text"], "{}", "{fine}");
    // It sees the called tool's arguments, not call_tool's.
    client
        .request(
            json!(3),
            "tools/call",
            json!({"name": "call_tool", "arguments": {"name": "send_email", "arguments": {"to": "ada"}}}),
        )
        .await;
    assert_eq!(*gate.sent.lock().unwrap(), [json!({"to": "ada"})]);
}

#[tokio::test]
async fn the_search_follows_the_catalog_and_can_be_turned_off() {
    let server = big_server();
    let mut client = Client::initialized(&server).await;
    let before = search(&mut client, 1, json!({"query": "translate"})).await;
    assert_eq!(before["result"]["structuredContent"]["tools"], json!([]));

    server
        .add_tool(
            Tool::new("translate").description("Translates text between languages."),
            echo,
        )
        .expect("registered");
    let changed = client.recv().await.expect("a list_changed");
    assert_eq!(changed["method"], "notifications/tools/list_changed");
    let after = search(&mut client, 2, json!({"query": "translate text"})).await;
    assert_eq!(
        names(&after["result"]["structuredContent"]["tools"]),
        ["translate"]
    );
    assert!(server.remove_tool("translate"));
    client.recv().await.expect("a list_changed");
    let gone = search(&mut client, 3, json!({"query": "translate"})).await;
    assert_eq!(gone["result"]["structuredContent"]["tools"], json!([]));

    // The search's names are its own while it is on.
    let clash = server.add_tool(Tool::new("search_tools"), echo);
    assert!(clash.is_err(), "{clash:?}");

    server.tool_search(None).expect("turned off");
    client.recv().await.expect("a list_changed");
    let listed = client.request(json!(4), "tools/list", json!({})).await;
    // Every tool but payroll_export, which the guest may not see.
    assert_eq!(names(&listed["result"]["tools"]).len(), 303);
    let unknown = search(&mut client, 5, json!({"query": "x"})).await;
    assert!(unknown["error"]["message"].is_string(), "{unknown}");

    server
        .add_tool(Tool::new("call_tool"), echo)
        .expect("free again");
    let refused = server.tool_search(ToolSearch::new());
    assert!(
        refused.is_err(),
        "a registered call_tool clashes: {refused:?}"
    );
    server
        .tool_search(ToolSearch::new().call_tool_name("invoke"))
        .expect("another name");
}

#[tokio::test]
async fn the_search_works_in_the_2026_era() {
    let server = big_server();
    let mut client = Client::new(&server);
    let request = |id: i64, method: &str, params: Value| {
        let mut params = params;
        params["_meta"] = json!({PV: "2026-07-28", CC: {}});
        json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
    };
    client.send(&request(1, "tools/list", json!({})));
    let listed = client.recv().await.expect("a list");
    assert_eq!(
        names(&listed["result"]["tools"]),
        ["call_tool", "help", "search_tools"]
    );
    client.send(&request(
        2,
        "tools/call",
        json!({"name": "search_tools", "arguments": {"query": "send email"}}),
    ));
    let found = client.recv().await.expect("an answer");
    assert_eq!(found["result"]["resultType"], "complete", "{found}");
    assert_eq!(
        names(&found["result"]["structuredContent"]["tools"])[0],
        "send_email"
    );
    client.send(&request(
        3,
        "tools/call",
        json!({"name": "call_tool", "arguments": {"name": "send_email", "arguments": {"to": "x"}}}),
    ));
    let called = client.recv().await.expect("an answer");
    assert_eq!(
        called["result"]["content"][0]["text"], r#"{"to":"x"}"#,
        "{called}"
    );
}

#[tokio::test]
async fn with_nothing_screened_the_best_are_found_around_the_pinned_ones() {
    // No requirement and no rule: only the best few are ranked, the pinned ones skipped.
    let server = Server::builder("plain", "1")
        .tool(
            Tool::new("report_daily").description("The daily report."),
            echo,
        )
        .tool(
            Tool::new("report_weekly").description("The weekly report."),
            echo,
        )
        .tool(
            Tool::new("report_monthly").description("The monthly report."),
            echo,
        )
        .tool_search(ToolSearch::new().pinned(["report_daily"]).max_results(2))
        .build()
        .expect("a valid server");
    let mut client = Client::initialized(&server).await;
    let found = search(&mut client, 1, json!({"query": "report"})).await;
    assert_eq!(
        names(&found["result"]["structuredContent"]["tools"]),
        ["report_monthly", "report_weekly"],
        "{found}"
    );
}
