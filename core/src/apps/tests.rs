use serde_json::{Map, Value, json};

use super::{UiResource, Views, check_origin, link_tool};
use crate::Tool;
use crate::protocol::Visibility;

const HTML: &str = "<!DOCTYPE html><html><body>hi</body></html>";

fn object(value: Value) -> Map<String, Value> {
    match value {
        Value::Object(map) => map,
        _ => Map::new(),
    }
}

#[test]
fn csp_domains_are_origins() {
    for good in [
        "https://api.example.com",
        "wss://rt.example.com:8443",
        "https://*.cdn.example",
        "http://127.0.0.1:3000",
    ] {
        assert!(check_origin(good).is_ok(), "{good}");
    }
    for bad in [
        "example.com",
        "ftp://example.com",
        "https://example.com/path",
        "https://",
        "https://a b",
    ] {
        assert!(check_origin(bad).is_err(), "{bad}");
    }
}

#[test]
fn a_view_the_spec_forbids_is_refused_naming_the_fault() {
    let views = Views::default();
    let cases = [
        (UiResource::new("https://x/view", "v", HTML), "ui:// URI"),
        (UiResource::new("ui://", "v", HTML), "ui:// URI"),
        (
            UiResource::new("ui://app/view", "v", "<html></html>"),
            "HTML5 document",
        ),
        (
            UiResource::new("ui://app/view", "v", HTML).ui_meta(object(
                json!({"csp": {"connectDomains": ["api.example.com"]}}),
            )),
            "connectDomains",
        ),
        (
            UiResource::new("ui://app/view", "v", HTML)
                .ui_meta(object(json!({"permissions": {"usb": {}}}))),
            "unknown permission",
        ),
        (
            UiResource::new("ui://app/view", "v", HTML)
                .ui_meta(object(json!({"prefersBorder": "yes"}))),
            "prefersBorder",
        ),
    ];
    for (view, expected) in cases {
        let err = views.add(view).expect_err(expected).to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    }
    let fine = UiResource::new("ui://app/view", "v", format!("\n  <!doctype HTML>{HTML}"))
        .ui_meta(object(json!({"csp": {"resourceDomains": ["https://*.cdn.example"]}, "permissions": {"camera": {}}, "prefersBorder": true})));
    views.add(fine.clone()).expect("a valid view");
    assert_eq!(
        UiResource::new("ui://app/named.html", "", HTML)
            .resource
            .name,
        "named.html",
        "named by its URI"
    );
    assert!(views.add(fine).is_err(), "twice");
}

#[test]
fn a_link_is_checked_and_written_in_both_forms() {
    let registered = |uri: &str| uri == "ui://app/view";
    let mut linked = Tool::new("show").ui_resource("ui://app/view");
    assert!(!link_tool(&mut linked, &registered).expect("linked"));
    let meta = linked.meta.clone().expect("meta");
    assert_eq!(meta["ui"], json!({"resourceUri": "ui://app/view"}));
    assert_eq!(meta["ui/resourceUri"], "ui://app/view");

    let mut flat = Tool::new("old").meta(object(json!({"ui/resourceUri": "ui://app/view"})));
    link_tool(&mut flat, &registered).expect("the flat key alone");
    assert_eq!(
        flat.meta.expect("meta")["ui"]["resourceUri"],
        "ui://app/view"
    );

    let mut app_only = Tool::new("tick").visibility(&[Visibility::App]);
    assert!(link_tool(&mut app_only, &registered).expect("no view needed"));

    let cases = [
        (
            Tool::new("a").ui_resource("ui://app/missing"),
            "no view is registered",
        ),
        (Tool::new("b").ui_resource("https://app/view"), "ui:// URI"),
        (Tool::new("c").visibility(&[]), "non-empty array"),
        (
            Tool::new("d").visibility(&[Visibility::App, Visibility::App]),
            "twice",
        ),
        (
            Tool::new("e").meta(object(json!({"ui": {"visibility": ["user"]}}))),
            "\"model\" and/or \"app\"",
        ),
        (
            Tool::new("f").meta(object(json!({"ui": "ui://app/view"}))),
            "must be an object",
        ),
        (
            Tool::new("g").meta(object(
                json!({"ui": {"resourceUri": "ui://app/view"}, "ui/resourceUri": "ui://app/other"}),
            )),
            "differ",
        ),
    ];
    for (mut tool, expected) in cases {
        let err = link_tool(&mut tool, &registered)
            .expect_err(expected)
            .to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    }
}
