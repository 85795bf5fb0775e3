//! MCP Apps (`io.modelcontextprotocol/ui`, SEP-1865): a tool links to an interactive HTML view
//! (a `ui://` resource) that a host renders in a sandboxed iframe; the view calls tools back
//! through the host.
//!
//! A view is a [`UiResource`]: served by `resources/read` with the spec's MIME type and its
//! `_meta.ui` (CSP domains, permissions, domain, border) on the listing and on the content. A
//! tool links to one with [`Tool::ui_resource`](crate::Tool::ui_resource) and says who may
//! call it with [`Tool::visibility`](crate::Tool::visibility); registration refuses what the
//! spec forbids. A tool only the view may call (`visibility: ["app"]`) is not offered to a
//! client that does not render apps, and answers it as an unknown tool.

use std::collections::BTreeMap;
use std::sync::{Arc, RwLock};

use serde_json::{Map, Value, json};

use crate::Error;
use crate::catalog::Resource;
use crate::protocol::Tool;

pub use crate::protocol::apps::{EXTENSION, MIME_TYPE};
/// The flat `_meta` key hosts of the first drafts read a tool's view from (deprecated by the
/// spec, still written beside `_meta.ui.resourceUri` for them).
pub const RESOURCE_URI_META_KEY: &str = "ui/resourceUri";

pub use crate::protocol::Visibility;

/// A view: an HTML5 document served at a `ui://` URI.
#[derive(Clone, Debug)]
pub struct UiResource {
    /// How `resources/list` shows it: the MIME type of views, and `_meta.ui` when set.
    resource: Resource,
    html: String,
    listed: bool,
}

impl UiResource {
    /// The view `html` at `uri` (`ui://…`), called `name` (an empty name: the URI's last
    /// segment).
    pub fn new(uri: impl Into<String>, name: impl Into<String>, html: impl Into<String>) -> Self {
        let uri = uri.into();
        let mut name = name.into();
        if name.is_empty() {
            name = uri
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_owned();
        }
        let mut resource = Resource::new(uri, name);
        resource.mime_type = Some(MIME_TYPE.into());
        UiResource {
            resource,
            html: html.into(),
            listed: true,
        }
    }

    /// From its JSON form, as the bindings pass it: `uri`, `html`, `name` (empty or absent: the
    /// URI's last segment), `title`, `description`, `ui` (its `_meta.ui`, an object), `listed`
    /// (default true), `requiredScopes` and `requiredTags` (see [`required_scopes`]).
    ///
    /// [`required_scopes`]: Self::required_scopes
    pub fn from_json(value: Value) -> Result<Self, Error> {
        #[derive(serde::Deserialize)]
        #[serde(rename_all = "camelCase", deny_unknown_fields)]
        struct Wire {
            uri: String,
            html: String,
            #[serde(default)]
            name: String,
            #[serde(default)]
            title: Option<String>,
            #[serde(default)]
            description: Option<String>,
            #[serde(default)]
            ui: Option<Map<String, Value>>,
            #[serde(default = "listed_by_default")]
            listed: bool,
            #[serde(default)]
            required_scopes: Vec<String>,
            #[serde(default)]
            required_tags: Vec<String>,
        }
        fn listed_by_default() -> bool {
            true
        }
        let wire: Wire = serde_json::from_value(value).map_err(|err| Error::InvalidDefinition {
            kind: "ui resource",
            message: err.to_string(),
        })?;
        let mut view = UiResource::new(wire.uri, wire.name, wire.html)
            .required_scopes(wire.required_scopes)
            .required_tags(wire.required_tags);
        if let Some(title) = wire.title {
            view = view.title(title);
        }
        if let Some(description) = wire.description {
            view = view.description(description);
        }
        if let Some(ui) = wire.ui {
            view = view.ui_meta(ui);
        }
        if !wire.listed {
            view = view.unlisted();
        }
        Ok(view)
    }

    /// A display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource.title = Some(title.into());
        self
    }

    /// What it shows.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource.description = Some(description.into());
        self
    }

    /// Its `_meta.ui`: `csp` (`connectDomains`, `resourceDomains`, `frameDomains`,
    /// `baseUriDomains`: origins the view may reach), `permissions` (`camera`, `microphone`,
    /// `geolocation`, `clipboardWrite`, each `{}`), `domain` (the host-specific origin asked
    /// for) and `prefersBorder`. Checked at registration.
    pub fn ui_meta(mut self, ui: Map<String, Value>) -> Self {
        self.resource.meta = (!ui.is_empty()).then(|| {
            let mut meta = Map::new();
            meta.insert("ui".into(), Value::Object(ui));
            meta
        });
        self
    }

    /// Leaves it out of `resources/list` (the spec allows it for views, which hosts find
    /// through their tools); it is still read by its URI.
    pub fn unlisted(mut self) -> Self {
        self.listed = false;
        self
    }

    /// Shown and read only by viewers whose token holds every one of `scopes` (see
    /// [`Resource::required_scopes`]).
    pub fn required_scopes<S: Into<String>>(mut self, scopes: impl IntoIterator<Item = S>) -> Self {
        self.resource = self.resource.required_scopes(scopes);
        self
    }

    /// Shown and read only by viewers holding every one of `tags`.
    pub fn required_tags<S: Into<String>>(mut self, tags: impl IntoIterator<Item = S>) -> Self {
        self.resource = self.resource.required_tags(tags);
        self
    }

    /// Its URI.
    pub fn uri(&self) -> &str {
        &self.resource.uri
    }

    /// Its listing, which carries its requirements of who sees it.
    pub(crate) fn resource(&self) -> &Resource {
        &self.resource
    }

    pub(crate) fn is_listed(&self) -> bool {
        self.listed
    }

    fn check(&self) -> Result<(), Error> {
        let invalid = |message: String| Error::InvalidDefinition {
            kind: "ui resource",
            message,
        };
        let uri = self.uri();
        if !uri.starts_with("ui://") || uri.len() == "ui://".len() {
            return Err(invalid(format!(
                "{uri:?}: an app's view is served at a ui:// URI"
            )));
        }
        if self.resource.name.is_empty() {
            return Err(invalid(format!("{uri}: a view needs a name")));
        }
        let start = self
            .html
            .trim_start_matches(['\u{feff}', ' ', '\t', '\r', '\n']);
        if !start
            .get(..15)
            .is_some_and(|head| head.eq_ignore_ascii_case("<!doctype html>"))
        {
            return Err(invalid(format!(
                "{uri}: a view must be an HTML5 document (beginning with <!DOCTYPE html>)"
            )));
        }
        let ui = self.resource.meta.as_ref().and_then(|m| m.get("ui"));
        match ui {
            None => Ok(()),
            Some(Value::Object(ui)) => {
                check_ui_meta(ui).map_err(|why| invalid(format!("{uri}: _meta.ui: {why}")))
            }
            Some(_) => Err(invalid(format!("{uri}: _meta.ui must be an object"))),
        }
    }

    /// Its `resources/list` entry, as `version` has resources.
    pub(crate) fn listing(&self, version: crate::protocol::ProtocolVersion) -> Value {
        self.resource.to_json(version)
    }

    /// Its `resources/read` result.
    pub(crate) fn read(&self) -> Value {
        let mut content = json!({"uri": self.uri(), "mimeType": MIME_TYPE, "text": self.html});
        if let Some(meta) = &self.resource.meta {
            content["_meta"] = Value::Object(meta.clone());
        }
        json!({ "contents": [content] })
    }
}

/// `_meta.ui` of a view as the spec types it; keys it does not know are passed on.
fn check_ui_meta(ui: &Map<String, Value>) -> Result<(), String> {
    if let Some(csp) = ui.get("csp") {
        let csp = csp.as_object().ok_or("`csp` must be an object")?;
        for (key, domains) in csp {
            if !matches!(
                key.as_str(),
                "connectDomains" | "resourceDomains" | "frameDomains" | "baseUriDomains"
            ) {
                continue;
            }
            let domains = domains
                .as_array()
                .ok_or_else(|| format!("`csp.{key}` must be an array of origins"))?;
            for domain in domains {
                let domain = domain
                    .as_str()
                    .ok_or_else(|| format!("`csp.{key}` must be an array of origins"))?;
                check_origin(domain).map_err(|why| format!("`csp.{key}`: {domain:?} {why}"))?;
            }
        }
    }
    if let Some(permissions) = ui.get("permissions") {
        let permissions = permissions
            .as_object()
            .ok_or("`permissions` must be an object")?;
        for (name, value) in permissions {
            if !matches!(
                name.as_str(),
                "camera" | "microphone" | "geolocation" | "clipboardWrite"
            ) {
                return Err(format!(
                    "unknown permission {name:?} (camera, microphone, geolocation, clipboardWrite)"
                ));
            }
            if !value.is_object() {
                return Err(format!("permission {name:?} is asked for with {{}}"));
            }
        }
    }
    if ui.get("domain").is_some_and(|d| !d.is_string()) {
        return Err("`domain` must be a string".into());
    }
    if ui.get("prefersBorder").is_some_and(|b| !b.is_boolean()) {
        return Err("`prefersBorder` must be true or false".into());
    }
    Ok(())
}

/// An origin as CSP source lists take it: `scheme://host[:port]`, the host possibly `*.`-led.
fn check_origin(origin: &str) -> Result<(), &'static str> {
    let (scheme, rest) = origin
        .split_once("://")
        .ok_or("is not an origin (scheme://host)")?;
    if !matches!(scheme, "https" | "http" | "wss" | "ws") {
        return Err("must be an http(s) or ws(s) origin");
    }
    let host = match rest.rsplit_once(':') {
        Some((host, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => host,
        _ => rest,
    };
    let bare = host.strip_prefix("*.").unwrap_or(host);
    let well_formed = !bare.is_empty()
        && bare
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'-');
    if !well_formed {
        return Err("is not an origin: a host (optionally `*.` first) and a port, no path");
    }
    Ok(())
}

/// Checks a tool's link to its view and writes it in both forms hosts read
/// (`_meta.ui.resourceUri` and the flat `ui/resourceUri`); `registered` says whether a view is
/// served at a URI. Returns whether only the view may call the tool.
pub(crate) fn link_tool(tool: &mut Tool, registered: &dyn Fn(&str) -> bool) -> Result<bool, Error> {
    let Some(meta) = tool.meta.as_mut() else {
        return Ok(false);
    };
    let invalid = |message: String| Error::InvalidDefinition {
        kind: "tool",
        message,
    };
    let name = tool.name.clone();
    let flat = match meta.get(RESOURCE_URI_META_KEY) {
        None => None,
        Some(Value::String(uri)) => Some(uri.clone()),
        Some(_) => {
            return Err(invalid(format!(
                "tool {name:?}: _meta[\"{RESOURCE_URI_META_KEY}\"] must be a ui:// URI"
            )));
        }
    };
    let ui = match meta.get_mut("ui") {
        None if flat.is_none() => return Ok(false),
        None => {
            meta.insert("ui".into(), json!({}));
            meta.get_mut("ui").and_then(Value::as_object_mut)
        }
        Some(Value::Object(ui)) => Some(ui),
        Some(_) => {
            return Err(invalid(format!(
                "tool {name:?}: _meta.ui must be an object"
            )));
        }
    };
    let Some(ui) = ui else {
        return Ok(false);
    };
    let nested = match ui.get("resourceUri") {
        None => None,
        Some(Value::String(uri)) => Some(uri.clone()),
        Some(_) => {
            return Err(invalid(format!(
                "tool {name:?}: _meta.ui.resourceUri must be a ui:// URI"
            )));
        }
    };
    let uri = match (nested, flat) {
        (Some(nested), Some(flat)) if nested != flat => {
            return Err(invalid(format!(
                "tool {name:?}: _meta.ui.resourceUri ({nested}) and _meta[\"{RESOURCE_URI_META_KEY}\"] ({flat}) differ"
            )));
        }
        (nested, flat) => nested.or(flat),
    };
    let mut visibility = Vec::new();
    match ui.get("visibility") {
        None => {}
        Some(Value::Array(values)) if !values.is_empty() => {
            for value in values {
                let seen = match value.as_str() {
                    Some("model") => Visibility::Model,
                    Some("app") => Visibility::App,
                    _ => {
                        return Err(invalid(format!(
                            "tool {name:?}: visibility holds \"model\" and/or \"app\", not {value}"
                        )));
                    }
                };
                if visibility.contains(&seen) {
                    return Err(invalid(format!(
                        "tool {name:?}: visibility names {value} twice"
                    )));
                }
                visibility.push(seen);
            }
        }
        Some(_) => {
            return Err(invalid(format!(
                "tool {name:?}: visibility is a non-empty array of \"model\" and \"app\""
            )));
        }
    }
    if let Some(uri) = &uri {
        if !uri.starts_with("ui://") {
            return Err(invalid(format!(
                "tool {name:?}: its view {uri:?} must be a ui:// URI"
            )));
        }
        if !registered(uri) {
            return Err(invalid(format!(
                "tool {name:?}: no view is registered at {uri} (register the ui resource first)"
            )));
        }
        ui.insert("resourceUri".into(), json!(uri));
        meta.insert(RESOURCE_URI_META_KEY.into(), json!(uri));
    }
    Ok(visibility == [Visibility::App])
}

/// The views served, by URI.
#[derive(Default)]
pub(crate) struct Views {
    map: RwLock<Arc<BTreeMap<String, Arc<UiResource>>>>,
}

impl Views {
    pub(crate) fn snapshot(&self) -> Arc<BTreeMap<String, Arc<UiResource>>> {
        self.map.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn add(&self, view: UiResource) -> Result<(), Error> {
        view.check()?;
        let mut guard = self.map.write().unwrap_or_else(|e| e.into_inner());
        if guard.contains_key(view.uri()) {
            return Err(Error::InvalidDefinition {
                kind: "ui resource",
                message: format!("a view {:?} is already registered", view.uri()),
            });
        }
        Arc::make_mut(&mut guard).insert(view.uri().to_owned(), Arc::new(view));
        Ok(())
    }

    pub(crate) fn remove(&self, uri: &str) -> bool {
        let mut guard = self.map.write().unwrap_or_else(|e| e.into_inner());
        guard.contains_key(uri) && Arc::make_mut(&mut guard).remove(uri).is_some()
    }

    pub(crate) fn get(&self, uri: &str) -> Option<Arc<UiResource>> {
        self.snapshot().get(uri).cloned()
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.snapshot().is_empty()
    }
}

#[cfg(test)]
mod tests;
