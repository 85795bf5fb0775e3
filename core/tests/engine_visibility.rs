//! Per-request visibility: definitions that require scopes or tags, and the server's own rule,
//! decide what each client is shown. A hidden item is absent from lists and answers exactly as
//! an item that does not exist; `list_changed` reaches only the sessions whose view changed.

mod common;

use common::Client;
use serde_json::{Value, json};
use toolwire::catalog::visibility::{CatalogItem, ItemKind};
use toolwire::{
    Completion, Context, Prompt, PromptMessage, PromptResult, Resource, ResourceContents,
    ResourceTemplate, Server, Tool, ToolError, ToolOutput, Viewer,
};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";

// --8<-- [start:server]
/// A notes server: anyone reads the public memo; `admin_reset` needs the `admin` scope, the
/// payroll memo the `hr` tag, files the `files` scope, the review prompt the `staff` tag.
fn notes_server() -> Server {
    let echo = |_ctx: Context, args: Value| async move {
        Ok::<_, ToolError>(ToolOutput::text(args.to_string()))
    };
    let memo = |text: &'static str| {
        move |request: toolwire::ResourceRequest| async move {
            Ok::<_, ToolError>(vec![ResourceContents::text(request.uri, None, text)])
        }
    };
    Server::builder("notes", "1")
        .tool(Tool::new("search"), echo)
        .tool(Tool::new("admin_reset").required_scopes(["admin"]), echo)
        .resource(Resource::new("memo://public", "public"), memo("hello"))
        .resource(
            Resource::new("memo://payroll", "payroll").required_tags(["hr"]),
            memo("salaries"),
        )
        .resource_template(
            ResourceTemplate::new("files://{name}", "files").required_scopes(["files"]),
            memo("a file"),
        )
        .prompt(
            Prompt::new("review")
                .argument(toolwire::PromptArgument::new("topic", true))
                .required_tags(["staff"]),
            |_request: toolwire::PromptRequest| async move {
                Ok::<_, ToolError>(PromptResult::new(vec![PromptMessage::user(
                    toolwire::Content::text("Review it"),
                )]))
            },
        )
        .completer(
            toolwire::Reference::Prompt("review".into()),
            |_request: toolwire::CompletionRequest| async move {
                Ok::<_, ToolError>(Completion::new(vec!["budget".into()]))
            },
        )
        .build()
        .expect("a valid server")
}
// --8<-- [end:server]

fn names(answer: &Value, list: &str, key: &str) -> Vec<String> {
    answer["result"][list]
        .as_array()
        .map(|items| {
            items
                .iter()
                .filter_map(|item| item[key].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// The error (or result) with the name in it swapped for `NAME`: what a hidden item answers
/// must be what a missing one does.
fn shape(answer: &Value, name: &str) -> String {
    let mut answer = answer.clone();
    if let Some(map) = answer.as_object_mut() {
        map.remove("id");
    }
    answer.to_string().replace(name, "NAME")
}

#[tokio::test]
async fn a_client_without_the_scopes_and_tags_sees_none_of_what_requires_them() {
    let server = notes_server();
    let mut client = Client::initialized(&server).await;

    let tools = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["search"]);
    let resources = client.request(json!(2), "resources/list", json!({})).await;
    assert_eq!(names(&resources, "resources", "uri"), ["memo://public"]);
    let templates = client
        .request(json!(3), "resources/templates/list", json!({}))
        .await;
    assert_eq!(
        names(&templates, "resourceTemplates", "uriTemplate"),
        Vec::<String>::new()
    );
    let prompts = client.request(json!(4), "prompts/list", json!({})).await;
    assert_eq!(names(&prompts, "prompts", "name"), Vec::<String>::new());

    // Each hidden item answers exactly as one that does not exist.
    let hidden = client
        .request(json!(5), "tools/call", json!({"name": "admin_reset"}))
        .await;
    let missing = client
        .request(json!(5), "tools/call", json!({"name": "no_such"}))
        .await;
    assert_eq!(shape(&hidden, "admin_reset"), shape(&missing, "no_such"));
    assert!(hidden["error"]["message"].is_string(), "{hidden}");

    let hidden = client
        .request(json!(6), "resources/read", json!({"uri": "memo://payroll"}))
        .await;
    let missing = client
        .request(json!(6), "resources/read", json!({"uri": "memo://nothing"}))
        .await;
    assert_eq!(
        shape(&hidden, "memo://payroll"),
        shape(&missing, "memo://nothing")
    );
    assert_eq!(hidden["error"]["code"], -32002, "{hidden}");

    let hidden = client
        .request(json!(7), "resources/read", json!({"uri": "files://plan"}))
        .await;
    assert_eq!(hidden["error"]["code"], -32002, "{hidden}");

    let hidden = client
        .request(
            json!(8),
            "prompts/get",
            json!({"name": "review", "arguments": {"topic": "x"}}),
        )
        .await;
    let missing = client
        .request(
            json!(8),
            "prompts/get",
            json!({"name": "retro", "arguments": {"topic": "x"}}),
        )
        .await;
    assert_eq!(shape(&hidden, "review"), shape(&missing, "retro"));

    let complete = |name: &str| {
        json!({"ref": {"type": "ref/prompt", "name": name},
               "argument": {"name": "topic", "value": "b"}})
    };
    let hidden = client
        .request(json!(9), "completion/complete", complete("review"))
        .await;
    let missing = client
        .request(json!(9), "completion/complete", complete("retro"))
        .await;
    assert_eq!(shape(&hidden, "review"), shape(&missing, "retro"));
}

#[tokio::test]
async fn scopes_and_tags_show_what_they_unlock_and_the_session_hears_of_it() {
    let server = notes_server();
    let mut client = Client::initialized(&server).await;
    let tools = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["search"]);

    // A token with more scopes and tags (over HTTP: the next request's token).
    client.session.identify(Viewer::new(
        None,
        vec!["admin".into(), "files".into()],
        vec!["hr".into(), "staff".into()],
    ));
    let mut heard = Vec::new();
    for _ in 0..3 {
        let frame = client.recv().await.expect("a list_changed");
        heard.push(frame["method"].as_str().unwrap_or_default().to_owned());
    }
    heard.sort();
    assert_eq!(
        heard,
        [
            "notifications/prompts/list_changed",
            "notifications/resources/list_changed",
            "notifications/tools/list_changed"
        ]
    );

    let tools = client.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["admin_reset", "search"]);
    let called = client
        .request(
            json!(3),
            "tools/call",
            json!({"name": "admin_reset", "arguments": {}}),
        )
        .await;
    assert_eq!(called["result"]["content"][0]["text"], "{}", "{called}");
    let read = client
        .request(json!(4), "resources/read", json!({"uri": "files://plan"}))
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "a file", "{read}");
    let resources = client.request(json!(5), "resources/list", json!({})).await;
    assert_eq!(
        names(&resources, "resources", "uri"),
        ["memo://payroll", "memo://public"]
    );
    let completed = client
        .request(
            json!(6),
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "review"},
                   "argument": {"name": "topic", "value": "b"}}),
        )
        .await;
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["budget"])
    );

    // The same scopes again change nothing: nothing is announced (the ping's answer is next).
    client.session.identify(Viewer::new(
        None,
        vec!["admin".into(), "files".into()],
        vec!["hr".into(), "staff".into()],
    ));
    let pong = client.request(json!(7), "ping", json!({})).await;
    assert_eq!(pong["id"], 7, "{pong}");
}

#[tokio::test]
async fn a_change_is_announced_only_to_the_sessions_that_can_see_it() {
    let server = notes_server();
    let mut admin = Client::initialized(&server).await;
    admin
        .session
        .identify(Viewer::new(None, vec!["admin".into()], vec![]));
    let announced = admin.recv().await.expect("the admin's tools changed");
    assert_eq!(announced["method"], "notifications/tools/list_changed");
    let mut guest = Client::initialized(&server).await;
    // Each session's baseline is taken at `notifications/initialized`: a ping answered
    // afterwards says it was handled.
    let pong = guest.request(json!(0), "ping", json!({})).await;
    assert_eq!(pong["id"], 0);

    server
        .add_tool(
            Tool::new("admin_audit").required_scopes(["admin"]),
            |_ctx: Context, _args: Value| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) },
        )
        .expect("registered");
    let announced = admin.recv().await.expect("the admin hears of it");
    assert_eq!(announced["method"], "notifications/tools/list_changed");

    // The guest cannot see it: its next change is one it can see, and nothing came before.
    server
        .add_tool(
            Tool::new("export"),
            |_ctx: Context, _args: Value| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) },
        )
        .expect("registered");
    let first = guest.recv().await.expect("the guest hears of export");
    assert_eq!(first["method"], "notifications/tools/list_changed");
    let pong = guest.request(json!(1), "ping", json!({})).await;
    assert_eq!(pong["id"], 1, "nothing else was announced: {pong}");
    let tools = guest.request(json!(2), "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["export", "search"]);
}

#[tokio::test]
async fn the_servers_rule_decides_per_request_and_sees_who_asks() {
    let server = notes_server();
    // Beta tools only for clients tagged `beta`; the rule sees the client's info too.
    server
        .add_tool(Tool::new("beta_summarize"), |_ctx: Context, _args: Value| async move {
            Ok::<_, ToolError>(ToolOutput::text("summary"))
        })
        .expect("registered");
    let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let log = seen.clone();
    // --8<-- [start:rule]
    server.visible_when(move |item: &CatalogItem, viewer: &Viewer| {
        if let Some(client) = &viewer.client_info {
            log.lock()
                .unwrap_or_else(|e| e.into_inner())
                .push((item.kind, client.name.clone()));
        }
        !item.name.starts_with("beta_") || viewer.tags.iter().any(|tag| tag == "beta")
    });
    // --8<-- [end:rule]

    let mut client = Client::initialized(&server).await;
    let tools = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["search"]);
    let hidden = client
        .request(json!(2), "tools/call", json!({"name": "beta_summarize"}))
        .await;
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    assert!(
        seen.lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .any(|(kind, client)| *kind == ItemKind::Tool && client == "vector-runner"),
        "the rule saw the client's info"
    );

    client
        .session
        .identify(Viewer::new(None, vec![], vec!["beta".into()]));
    let announced = client.recv().await.expect("the tools changed for it");
    assert_eq!(announced["method"], "notifications/tools/list_changed");
    let tools = client.request(json!(3), "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), ["beta_summarize", "search"]);
}

#[tokio::test]
async fn a_2026_07_28_list_of_a_screened_catalog_is_private_to_its_client() {
    let mut options = toolwire::ServerOptions::default();
    options.cache_scope = toolwire::CacheScope::Public;
    let server = Server::builder("notes", "1")
        .options(options)
        .tool(
            Tool::new("search"),
            |_ctx: Context, _args: Value| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) },
        )
        .build()
        .expect("a valid server");
    let mut client = Client::new(&server);
    let list = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/list",
               "params": {"_meta": {PV: "2026-07-28", CC: {}}}})
    };
    client.send(&list(1));
    let open = client.recv().await.expect("a list");
    assert_eq!(open["result"]["cacheScope"], "public", "{open}");

    server
        .add_tool(
            Tool::new("admin_reset").required_scopes(["admin"]),
            |_ctx: Context, _args: Value| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) },
        )
        .expect("registered");
    client.send(&list(2));
    let screened = client.recv().await.expect("a list");
    assert_eq!(screened["result"]["cacheScope"], "private", "{screened}");
    assert_eq!(names(&screened, "tools", "name"), ["search"]);
}

#[tokio::test]
async fn a_redefined_tool_is_announced_and_a_hidden_resources_updates_are_not() {
    let server = notes_server();
    let mut guest = Client::initialized(&server).await;
    let pong = guest.request(json!(0), "ping", json!({})).await;
    assert_eq!(pong["id"], 0, "the baseline is taken");

    // The same name, another definition: the guest's list changed.
    assert!(server.remove_tool("search"));
    server
        .add_tool(
            Tool::new("search").description("Searches everything"),
            |_ctx: Context, _args: Value| async move { Ok::<_, ToolError>(ToolOutput::text("ok")) },
        )
        .expect("registered");
    let announced = guest.recv().await.expect("the redefinition is announced");
    assert_eq!(announced["method"], "notifications/tools/list_changed");

    // Subscribed to both; only the one it may see is announced.
    for (id, uri) in [(1, "memo://payroll"), (2, "memo://public")] {
        let answer = guest
            .request(json!(id), "resources/subscribe", json!({"uri": uri}))
            .await;
        assert_eq!(answer["result"], json!({}), "{answer}");
    }
    server.notify_resource_updated("memo://payroll");
    server.notify_resource_updated("memo://public");
    let updated = guest.recv().await.expect("an update");
    assert_eq!(updated["method"], "notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "memo://public", "{updated}");
    let pong = guest.request(json!(3), "ping", json!({})).await;
    assert_eq!(pong["id"], 3, "nothing of the payroll memo: {pong}");
}

#[tokio::test]
async fn a_rule_that_panics_hides_what_it_was_asked_about_and_serving_goes_on() {
    let server = notes_server();
    server.visible_when(|item: &CatalogItem, _viewer: &Viewer| -> bool {
        if item.kind == ItemKind::Tool {
            panic!("the rule's feature-flag client is broken");
        }
        true
    });
    let mut client = Client::initialized(&server).await;
    let tools = client.request(json!(1), "tools/list", json!({})).await;
    assert_eq!(names(&tools, "tools", "name"), Vec::<String>::new());
    let resources = client.request(json!(2), "resources/list", json!({})).await;
    assert_eq!(names(&resources, "resources", "uri"), ["memo://public"]);
}

#[tokio::test]
async fn a_view_that_requires_a_scope_is_neither_listed_nor_read_without_it() {
    let view = toolwire::UiResource::from_json(json!({
        "uri": "ui://admin/panel.html",
        "html": "<!DOCTYPE html><html><body>panel</body></html>",
        "requiredScopes": ["admin"],
    }))
    .expect("a valid view");
    let server = notes_server();
    server.add_ui_resource(view).expect("registered");
    assert!(
        toolwire::UiResource::from_json(
            json!({"uri": "ui://x/y.html", "html": "<!DOCTYPE html>", "colour": 1})
        )
        .is_err(),
        "an unknown key is refused"
    );

    let mut guest = Client::initialized(&server).await;
    let resources = guest.request(json!(1), "resources/list", json!({})).await;
    assert_eq!(names(&resources, "resources", "uri"), ["memo://public"]);
    let read = guest
        .request(
            json!(2),
            "resources/read",
            json!({"uri": "ui://admin/panel.html"}),
        )
        .await;
    assert_eq!(read["error"]["code"], -32002, "{read}");

    let mut admin = Client::initialized(&server).await;
    admin
        .session
        .identify(Viewer::new(None, vec!["admin".into()], vec![]));
    let read = admin
        .request(
            json!(3),
            "resources/read",
            json!({"uri": "ui://admin/panel.html"}),
        )
        .await;
    // The list_changed for the new scope (tools, resources) may come before the answer.
    let mut read = read;
    while read.get("method").is_some() {
        read = admin.recv().await.expect("the read");
    }
    assert_eq!(
        read["result"]["contents"][0]["mimeType"], "text/html;profile=mcp-app",
        "{read}"
    );
}
