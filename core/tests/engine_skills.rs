//! The Skills extension (SEP-2640) on the wire, in both eras: `skills/list`, `skills/get`,
//! `resources/read` and `resources/directory/read` of skills loaded from a directory tree or
//! registered from code; the tree's refusals and reloads; and extensions a server declares.

mod common;

use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::Client;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};
use toolwire::{Context, Server, ServerOptions, Skill, Tool, ToolOutput};

const PV: &str = "io.modelcontextprotocol/protocolVersion";
const CC: &str = "io.modelcontextprotocol/clientCapabilities";
const SKILLS: &str = "io.modelcontextprotocol/skills";

/// A fresh directory of this test process, removed when dropped.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Dir {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("toolwire-skills-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).expect("temp dir");
        Dir(path)
    }

    fn write(&self, relative: &str, contents: &[u8]) -> &Self {
        let path = self.0.join(relative);
        std::fs::create_dir_all(path.parent().expect("a parent")).expect("dirs");
        std::fs::write(path, contents).expect("write");
        self
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn skill_md(name: &str, description: &str) -> String {
    format!(
        "---\nname: {name}\ndescription: {description}\nmetadata:\n  version: \"2\"\n---\n# {name}\nSee templates/invoice.md.\n"
    )
}

fn digest(bytes: &[u8]) -> String {
    let hex: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    format!("sha256:{hex}")
}

/// pdf-processing (a file in a subdirectory, a binary one) and acme/billing/refunds.
fn tree() -> Dir {
    let dir = Dir::new();
    dir.write(
        "pdf-processing/SKILL.md",
        skill_md("pdf-processing", "Fill PDF forms").as_bytes(),
    )
    .write("pdf-processing/templates/invoice.md", b"# Invoice\n")
    .write(
        "pdf-processing/logo.png",
        &[0x89, b'P', b'N', b'G', 0, 0xff],
    )
    .write(
        "acme/billing/refunds/SKILL.md",
        skill_md("refunds", "Refund policy").as_bytes(),
    )
    .write(".git/config", b"hidden: not part of any skill");
    dir
}

fn modern(id: i64, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({PV: "2026-07-28", CC: {}});
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params})
}

#[tokio::test]
async fn a_tree_of_skills_is_listed_described_and_read_in_the_handshake_era() {
    let dir = tree();
    let server = Server::builder("skills", "1")
        .skills_dir(&dir.0)
        .build()
        .expect("server");
    let mut client = Client::new(&server);
    let init = client.initialize("2025-11-25", json!({})).await;
    let capabilities = &init["result"]["capabilities"];
    assert_eq!(
        capabilities["extensions"][SKILLS],
        json!({"directoryRead": true}),
        "{init}"
    );
    assert!(
        capabilities["resources"].is_object(),
        "skills need the resources capability"
    );

    let list = client.request(json!(1), "skills/list", json!({})).await;
    let skills = list["result"]["skills"].as_array().expect("skills").clone();
    let uris: Vec<&str> = skills
        .iter()
        .map(|s| s["uri"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md"
        ]
    );
    let pdf = &skills[1];
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-processing", "description": "Fill PDF forms", "metadata": {"version": "2"}})
    );
    let md = skill_md("pdf-processing", "Fill PDF forms");
    assert_eq!(
        pdf["resources"],
        json!([
            {"uri": "skill://pdf-processing/SKILL.md", "digest": digest(md.as_bytes()), "size": md.len()},
            {"uri": "skill://pdf-processing/logo.png", "digest": digest(&[0x89, b'P', b'N', b'G', 0, 0xff]), "size": 6},
            {"uri": "skill://pdf-processing/templates/invoice.md", "digest": digest(b"# Invoice\n"), "size": 10},
        ])
    );

    let got = client
        .request(
            json!(2),
            "skills/get",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        )
        .await;
    assert_eq!(got["result"]["skill"], *pdf, "{got}");
    assert!(got["result"].get("nextCursor").is_none());
    let unknown = "skill://mcp-conformance-nonexistent-skill-9f3a2b/SKILL.md";
    let missing = client
        .request(json!(3), "skills/get", json!({"uri": unknown}))
        .await;
    assert_eq!(missing["error"]["code"], -32602, "{missing}");
    assert_eq!(missing["error"]["data"]["uri"], unknown);

    let read = client
        .request(
            json!(4),
            "resources/read",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        )
        .await;
    assert_eq!(
        read["result"]["contents"],
        json!([{"uri": "skill://pdf-processing/SKILL.md", "mimeType": "text/markdown", "text": md}])
    );
    let png = client
        .request(
            json!(5),
            "resources/read",
            json!({"uri": "skill://pdf-processing/logo.png"}),
        )
        .await;
    assert_eq!(png["result"]["contents"][0]["blob"], "iVBORwD/", "{png}");
    assert_eq!(png["result"]["contents"][0]["mimeType"], "image/png");
    let hidden = client
        .request(
            json!(6),
            "resources/read",
            json!({"uri": "skill://.git/config"}),
        )
        .await;
    assert_eq!(hidden["error"]["code"], -32002, "{hidden}");

    let root = client
        .request(
            json!(7),
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing"}),
        )
        .await;
    assert_eq!(
        root["result"]["resources"],
        json!([
            {"uri": "skill://pdf-processing/SKILL.md", "name": "SKILL.md", "mimeType": "text/markdown", "size": md.len()},
            {"uri": "skill://pdf-processing/logo.png", "name": "logo.png", "mimeType": "image/png", "size": 6},
            {"uri": "skill://pdf-processing/templates", "name": "templates", "mimeType": "inode/directory"},
        ]),
        "{root}"
    );
    let sub = client
        .request(
            json!(8),
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing/templates/"}),
        )
        .await;
    assert_eq!(
        sub["result"]["resources"][0]["name"], "invoice.md",
        "a trailing slash is the same directory"
    );
    for not_a_directory in [
        "skill://pdf-processing/SKILL.md",
        "skill://nowhere",
        "skill://acme",
    ] {
        let refused = client
            .request(
                json!(9),
                "resources/directory/read",
                json!({"uri": not_a_directory}),
            )
            .await;
        assert_eq!(
            refused["error"]["code"], -32602,
            "{not_a_directory}: {refused}"
        );
    }

    let resources = client.request(json!(10), "resources/list", json!({})).await;
    assert_eq!(
        resources["result"]["resources"][1],
        json!({"uri": "skill://pdf-processing/SKILL.md", "name": "pdf-processing",
               "description": "Fill PDF forms", "mimeType": "text/markdown", "size": md.len()})
    );
}

#[tokio::test]
async fn the_modern_era_declares_skills_in_discover_and_stamps_their_results() {
    let dir = tree();
    let server = Server::builder("skills", "1")
        .skills_dir(&dir.0)
        .build()
        .expect("server");
    let mut client = Client::new(&server);
    client.send(&modern(1, "server/discover", json!({})));
    let discover = client.recv().await.expect("discover");
    assert_eq!(
        discover["result"]["capabilities"]["extensions"][SKILLS]["directoryRead"],
        true
    );
    for (id, method, params) in [
        (2, "skills/list", json!({})),
        (
            3,
            "skills/get",
            json!({"uri": "skill://pdf-processing/SKILL.md"}),
        ),
        (
            4,
            "resources/directory/read",
            json!({"uri": "skill://pdf-processing"}),
        ),
    ] {
        client.send(&modern(id, method, params));
        let answer = client.recv().await.expect("answer");
        assert_eq!(
            answer["result"]["resultType"], "complete",
            "{method}: {answer}"
        );
        assert!(answer["result"]["ttlMs"].is_u64(), "{method}: {answer}");
        assert!(
            answer["result"]["cacheScope"].is_string(),
            "{method}: {answer}"
        );
    }
    client.send(&modern(
        5,
        "skills/get",
        json!({"uri": "skill://pdf-processing"}),
    ));
    let refused = client.recv().await.expect("refusal");
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
}

// --8<-- [start:from-code]
#[tokio::test]
async fn pages_of_skills_and_directories_follow_the_cursor() {
    let mut options = ServerOptions::default();
    options.page_size = Some(1);
    let mut builder = Server::builder("skills", "1").options(options);
    for name in ["a", "b", "c"] {
        builder = builder.skill(
            Skill::new(name, skill_md(name, "x"))
                .file("one.md", "1")
                .file("two.md", "2"),
        );
    }
    let server = builder.build().expect("server");
    let mut client = Client::initialized(&server).await;
    for (method, params, key, expected) in [
        ("skills/list", json!({}), "skills", 3),
        (
            "resources/directory/read",
            json!({"uri": "skill://b"}),
            "resources",
            3,
        ),
    ] {
        let mut seen = Vec::new();
        let mut params = params;
        loop {
            let page = client.request(json!(1), method, params.clone()).await;
            let items = page["result"][key].as_array().expect("a page");
            assert_eq!(items.len(), 1, "{page}");
            seen.push(items[0]["uri"].clone());
            match page["result"]["nextCursor"].as_str() {
                Some(cursor) => params["cursor"] = json!(cursor),
                None => break,
            }
        }
        assert_eq!(seen.len(), expected, "{method}: {seen:?}");
    }
}
// --8<-- [end:from-code]

#[tokio::test]
async fn without_skills_the_methods_are_not_offered() {
    let server = Server::builder("plain", "1").build().expect("server");
    let mut client = Client::initialized(&server).await;
    for method in ["skills/list", "skills/get", "resources/directory/read"] {
        let answer = client.request(json!(1), method, json!({})).await;
        assert_eq!(answer["error"]["code"], -32601, "{method}: {answer}");
    }
}

// --8<-- [start:reload]
#[tokio::test]
async fn reloading_a_tree_serves_what_changed_and_tells_sessions() {
    let dir = tree();
    let server = Server::builder("skills", "1").build().expect("server");
    assert_eq!(server.load_skills(&dir.0).expect("load"), 2);
    let mut client = Client::initialized(&server).await;
    let invoice = "skill://pdf-processing/templates/invoice.md";
    let subscribed = client
        .request(json!(0), "resources/subscribe", json!({"uri": invoice}))
        .await;
    assert_eq!(subscribed["result"], json!({}), "{subscribed}");
    // The same tree again: nothing changed, nothing said.
    assert_eq!(server.load_skills(&dir.0).expect("reload"), 2);
    dir.write("pdf-processing/templates/invoice.md", b"# Invoice v2\n");
    std::fs::remove_dir_all(dir.0.join("acme")).expect("remove a skill");
    assert_eq!(server.load_skills(&dir.0).expect("reload"), 1);
    // The list changed, and a subscriber of the file that changed hears of it.
    let mut heard = vec![
        client.recv().await.expect("a notification"),
        client.recv().await.expect("another"),
    ];
    heard.sort_by_key(|n| n["method"].to_string());
    assert_eq!(
        heard[0]["method"], "notifications/resources/list_changed",
        "{heard:?}"
    );
    assert_eq!(
        heard[1],
        json!({"jsonrpc": "2.0", "method": "notifications/resources/updated", "params": {"uri": invoice}})
    );
    let read = client
        .request(
            json!(1),
            "resources/read",
            json!({"uri": "skill://pdf-processing/templates/invoice.md"}),
        )
        .await;
    assert_eq!(read["result"]["contents"][0]["text"], "# Invoice v2\n");
    let gone = client
        .request(
            json!(2),
            "skills/get",
            json!({"uri": "skill://acme/billing/refunds/SKILL.md"}),
        )
        .await;
    assert_eq!(gone["error"]["code"], -32602);
    // A reload that fails leaves what is served as it was.
    dir.write("broken/SKILL.md", b"no frontmatter");
    let err = server
        .load_skills(&dir.0)
        .expect_err("a bad SKILL.md")
        .to_string();
    assert!(
        err.contains("broken") && err.contains("frontmatter"),
        "{err}"
    );
    let still = client.request(json!(3), "skills/list", json!({})).await;
    assert_eq!(
        still["result"]["skills"].as_array().map(Vec::len),
        Some(1),
        "{still}"
    );
    assert!(server.remove_skill("pdf-processing"));
    // Removed: the list changed, and the subscriber of one of its files hears it is gone.
    let mut heard = vec![
        client.recv().await.expect("a notification"),
        client.recv().await.expect("another"),
    ];
    heard.sort_by_key(|n| n["method"].to_string());
    assert_eq!(
        heard[0]["method"], "notifications/resources/list_changed",
        "{heard:?}"
    );
    assert_eq!(heard[1]["params"]["uri"], invoice, "{heard:?}");
    let none = client.request(json!(4), "skills/list", json!({})).await;
    assert_eq!(none["error"]["code"], -32601, "no skills left: {none}");
}
// --8<-- [end:reload]

#[tokio::test]
async fn a_watched_tree_is_served_again_when_it_changes() {
    let dir = tree();
    let server = Server::builder("skills", "1").build().expect("server");
    let every = std::time::Duration::from_millis(10);
    assert_eq!(server.watch_skills(&dir.0, every).expect("watch"), 2);
    let mut client = Client::initialized(&server).await;
    // A new skill appears: the watch loads it and sessions are told (the wait is for the
    // notification, bounded by recv's 10 s).
    dir.write(
        "summaries/SKILL.md",
        skill_md("summaries", "Summarise").as_bytes(),
    );
    let notice = client.recv().await.expect("list_changed");
    assert_eq!(
        notice["method"], "notifications/resources/list_changed",
        "{notice}"
    );
    let got = client
        .request(
            json!(1),
            "skills/get",
            json!({"uri": "skill://summaries/SKILL.md"}),
        )
        .await;
    assert_eq!(
        got["result"]["skill"]["frontmatter"]["name"], "summaries",
        "{got}"
    );
    // A broken SKILL.md is not served; what was served stays until the tree is mended.
    dir.write("summaries/SKILL.md", b"no frontmatter");
    dir.write(
        "summaries/SKILL.md",
        skill_md("summaries", "Summarise, mended").as_bytes(),
    );
    loop {
        let notice = client.recv().await.expect("the mended tree is loaded");
        if notice["method"] == "notifications/resources/list_changed" {
            let got = client
                .request(
                    json!(2),
                    "skills/get",
                    json!({"uri": "skill://summaries/SKILL.md"}),
                )
                .await;
            if got["result"]["skill"]["frontmatter"]["description"] == "Summarise, mended" {
                break;
            }
        }
    }
    assert!(
        server
            .watch_skills(&dir.0, std::time::Duration::ZERO)
            .is_err()
    );
}

#[tokio::test]
async fn a_tree_that_leads_outside_its_root_is_refused() {
    let missing = Skill::load_dir("/nonexistent/skills").expect_err("no such directory");
    assert!(
        missing.to_string().contains("/nonexistent/skills"),
        "{missing}"
    );
    let outside = Dir::new();
    outside.write("secret.txt", b"not yours");
    let dir = tree();
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(
            outside.0.join("secret.txt"),
            dir.0.join("pdf-processing/secret.txt"),
        )
        .expect("symlink");
        let err = Skill::load_dir(&dir.0)
            .expect_err("a symlink out")
            .to_string();
        assert!(err.contains("leads out of the skills directory"), "{err}");
        std::fs::remove_file(dir.0.join("pdf-processing/secret.txt")).expect("unlink");
        // A file symlink within the root is followed; a directory symlink is not (its target
        // is walked as itself), so a loop back up the tree is no loop.
        std::os::unix::fs::symlink(
            dir.0.join("pdf-processing/templates"),
            dir.0.join("pdf-processing/again"),
        )
        .expect("symlink");
        std::os::unix::fs::symlink(&dir.0, dir.0.join("pdf-processing/templates/up"))
            .expect("loop");
        std::os::unix::fs::symlink(
            dir.0.join("pdf-processing/logo.png"),
            dir.0.join("pdf-processing/logo-link.png"),
        )
        .expect("file symlink");
        let server = Server::builder("skills", "1")
            .skills_dir(&dir.0)
            .build()
            .expect("inside the root");
        let mut client = Client::initialized(&server).await;
        let got = client
            .request(
                json!(1),
                "skills/get",
                json!({"uri": "skill://pdf-processing/SKILL.md"}),
            )
            .await;
        let uris: Vec<&str> = got["result"]["skill"]["resources"]
            .as_array()
            .map(|r| r.iter().filter_map(|e| e["uri"].as_str()).collect())
            .unwrap_or_default();
        assert_eq!(
            uris,
            [
                "skill://pdf-processing/SKILL.md",
                "skill://pdf-processing/logo-link.png",
                "skill://pdf-processing/logo.png",
                "skill://pdf-processing/templates/invoice.md"
            ]
        );
    }
    // A root that is a skill is known by its name, and its nested skills under it.
    let suite = Dir::new();
    suite
        .write("suite/SKILL.md", skill_md("suite", "x").as_bytes())
        .write("suite/pdf/SKILL.md", skill_md("pdf", "y").as_bytes());
    let paths: Vec<String> = Skill::load_dir(suite.0.join("suite"))
        .expect("a root that is a skill")
        .iter()
        .map(|s| s.path().to_owned())
        .collect();
    assert_eq!(paths, ["suite", "suite/pdf"]);
    let root_skill = Dir::new();
    root_skill.write("SKILL.md", skill_md("ignored", "x").as_bytes());
    let err = Skill::load_dir(&root_skill.0).expect_err("the root's name is not the skill's");
    assert!(err.to_string().contains("must be its name"), "{err}");
    let over = Dir::new();
    over.write("big/SKILL.md", skill_md("big", "x").as_bytes());
    std::fs::write(over.0.join("big/data.bin"), vec![0u8; 16 * 1024 * 1024]).expect("write");
    let err = Skill::load_dir(&over.0)
        .expect_err("over 16 MiB")
        .to_string();
    assert!(err.contains("limits"), "{err}");
}

// --8<-- [start:extensions]
#[tokio::test]
async fn a_server_declares_its_own_extensions_and_a_handler_sees_the_clients() {
    let server = Server::builder("ext", "1")
        .extension("com.example/widgets", json!({"colors": ["red"]}))
        .tool(
            Tool::new("which"),
            |ctx: Context, _args: Value| async move {
                let declared = ctx.client_extension("com.example/widgets").cloned();
                Ok::<_, toolwire::ToolError>(ToolOutput::structured(json!({"declared": declared})))
            },
        )
        .build()
        .expect("server");
    server
        .declare_extension("com.example/gadgets", json!({}))
        .expect("declared");
    let mut client = Client::new(&server);
    let init = client
        .initialize(
            "2025-11-25",
            json!({"extensions": {"com.example/widgets": {"v": 2}}}),
        )
        .await;
    assert_eq!(
        init["result"]["capabilities"]["extensions"],
        json!({"com.example/widgets": {"colors": ["red"]}, "com.example/gadgets": {}})
    );
    let legacy = client
        .request(
            json!(1),
            "tools/call",
            json!({"name": "which", "arguments": {}}),
        )
        .await;
    assert_eq!(
        legacy["result"]["structuredContent"]["declared"],
        json!({"v": 2}),
        "{legacy}"
    );
    let mut modern_client = Client::new(&server);
    let mut request = modern(2, "tools/call", json!({"name": "which", "arguments": {}}));
    request["params"]["_meta"][CC] = json!({"extensions": {"com.example/widgets": {"v": 3}}});
    modern_client.send(&request);
    let answer = modern_client.recv().await.expect("answer");
    assert_eq!(
        answer["result"]["structuredContent"]["declared"],
        json!({"v": 3}),
        "{answer}"
    );

    for (id, settings, expected) in [
        ("no-slash", json!({}), "vendor-prefix/name"),
        ("com.example/x", json!(true), "JSON object"),
        (SKILLS, json!({}), "declared by the engine"),
        (
            "io.modelcontextprotocol/tasks",
            json!({}),
            "declared by the engine",
        ),
    ] {
        let err = server
            .declare_extension(id, settings)
            .expect_err(id)
            .to_string();
        assert!(err.contains(expected), "{id}: {err}");
    }
    let built = Server::builder("bad", "1")
        .extension("bad", json!({}))
        .build();
    assert!(built.is_err());
}
// --8<-- [end:extensions]
