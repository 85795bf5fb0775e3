use std::time::Duration;

use super::apps::Visibility;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::{Icon, ProtocolVersion};
use crate::Error;

/// Whether a tool may run as a task.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TaskSupport {
    /// Never: every call answers in its request (the default).
    #[default]
    Never,
    /// When the client declares the extension and the call takes a while or asks a question;
    /// otherwise in its request.
    Optional,
    /// Only as a task: a client without the extension gets -32021.
    Required,
}

impl TaskSupport {
    /// Reads `"never"`, `"optional"` or `"required"`.
    pub fn parse(text: &str) -> Result<TaskSupport, Error> {
        match text {
            "never" => Ok(TaskSupport::Never),
            "optional" => Ok(TaskSupport::Optional),
            "required" => Ok(TaskSupport::Required),
            other => Err(Error::InvalidArgument(format!(
                "task support {other:?}: one of \"never\", \"optional\", \"required\""
            ))),
        }
    }
}

/// Hints about a tool's behaviour. Clients treat them as untrusted.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may perform destructive updates (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// A tool's definition: what `tools/list` shows, plus its run-time limits.
///
/// Build one with [`Tool::new`] and the builder methods, or read the wire form with
/// [`Tool::from_json`].
#[derive(Clone, Debug, PartialEq)]
pub struct Tool {
    pub(crate) name: String,
    pub(crate) title: Option<String>,
    pub(crate) description: Option<String>,
    pub(crate) input_schema: Value,
    pub(crate) output_schema: Option<Value>,
    pub(crate) annotations: Option<ToolAnnotations>,
    pub(crate) icons: Option<Vec<Icon>>,
    pub(crate) meta: Option<Map<String, Value>>,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_concurrency: Option<usize>,
    pub(crate) task_support: TaskSupport,
    /// Scopes a viewer's token must all hold to see it (never sent).
    pub(crate) required_scopes: Vec<String>,
    /// Tags a viewer must all hold to see it (never sent).
    pub(crate) required_tags: Vec<String>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ToolWire {
    name: String,
    #[serde(default)]
    title: Option<String>,
    #[serde(default)]
    description: Option<String>,
    #[serde(default)]
    input_schema: Option<Value>,
    #[serde(default)]
    output_schema: Option<Value>,
    #[serde(default)]
    annotations: Option<ToolAnnotations>,
    #[serde(default)]
    icons: Option<Vec<Icon>>,
    #[serde(default, rename = "_meta")]
    meta: Option<Map<String, Value>>,
    /// toolwire's own key (never sent): `"never"`, `"optional"` or `"required"`.
    #[serde(default)]
    task_support: Option<String>,
    /// toolwire's own key: the MCP Apps view linked (see [`Tool::ui_resource`]).
    #[serde(default)]
    ui_resource: Option<String>,
    /// toolwire's own key: who may call it, `"model"` and/or `"app"` (see [`Tool::visibility`]).
    #[serde(default)]
    visibility: Option<Vec<String>>,
    /// toolwire's own keys: who may see it (see `Tool::required_scopes`).
    #[serde(default)]
    required_scopes: Vec<String>,
    #[serde(default)]
    required_tags: Vec<String>,
}

impl Tool {
    /// A tool named `name` that takes no arguments (`{"type":"object"}`) until
    /// [`input_schema`](Self::input_schema) says otherwise.
    pub fn new(name: impl Into<String>) -> Self {
        Tool {
            name: name.into(),
            title: None,
            description: None,
            input_schema: json!({"type": "object"}),
            output_schema: None,
            annotations: None,
            icons: None,
            meta: None,
            timeout: None,
            max_concurrency: None,
            task_support: TaskSupport::Never,
            required_scopes: Vec::new(),
            required_tags: Vec::new(),
        }
    }

    /// Reads a definition in its wire form (`name`, `title`, `description`, `inputSchema`,
    /// `outputSchema`, `annotations`, `icons`, `_meta`), as the bindings pass it, plus
    /// toolwire's `taskSupport` (see [`task_support`](Self::task_support)), `requiredScopes`
    /// and `requiredTags` (see [`required_scopes`](Self::required_scopes)), `uiResource` and
    /// `visibility` (MCP Apps: [`ui_resource`](Self::ui_resource),
    /// [`visibility`](Self::visibility)), which are written into `_meta` as the spec has them.
    pub fn from_json(value: Value) -> Result<Self, Error> {
        let wire: ToolWire =
            serde_json::from_value(value).map_err(|err| Error::InvalidDefinition {
                kind: "tool",
                message: err.to_string(),
            })?;
        let mut tool = Tool::new(wire.name);
        tool.title = wire.title;
        tool.description = wire.description;
        if let Some(schema) = wire.input_schema {
            tool.input_schema = schema;
        }
        tool.output_schema = wire.output_schema;
        tool.annotations = wire.annotations;
        tool.icons = wire.icons;
        tool.meta = wire.meta;
        tool.required_scopes = wire.required_scopes;
        tool.required_tags = wire.required_tags;
        if let Some(support) = wire.task_support {
            tool.task_support = TaskSupport::parse(&support)?;
        }
        if let Some(uri) = wire.ui_resource {
            tool = tool.ui_resource(uri);
        }
        if let Some(who) = wire.visibility {
            let who = who
                .iter()
                .map(|v| match v.as_str() {
                    "model" => Ok(Visibility::Model),
                    "app" => Ok(Visibility::App),
                    other => Err(Error::InvalidDefinition {
                        kind: "tool",
                        message: format!(
                            "tool {:?}: visibility holds \"model\" and/or \"app\", not {other:?}",
                            tool.name
                        ),
                    }),
                })
                .collect::<Result<Vec<_>, _>>()?;
            tool = tool.visibility(&who);
        }
        Ok(tool)
    }

    /// Whether calls may run as tasks (the tasks extension; default [`TaskSupport::Never`]).
    /// The handler does not change: inside a task, `ctx.elicit` and the like wait for the
    /// client's `tasks/update`.
    ///
    /// [`TaskSupport::Never`]: TaskSupport::Never
    pub fn task_support(mut self, support: TaskSupport) -> Self {
        self.task_support = support;
        self
    }

    /// The tool's name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The display name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// The JSON Schema of the arguments; its root must be `"type": "object"`.
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = schema;
        self
    }

    /// The JSON Schema that `structuredContent` must satisfy; its root must be an object.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// Behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Icons.
    pub fn icons(mut self, icons: Vec<Icon>) -> Self {
        self.icons = Some(icons);
        self
    }

    /// Free-form `_meta`.
    ///
    /// It replaces the whole `_meta`: call it before [`ui_resource`](Self::ui_resource) and
    /// [`visibility`](Self::visibility), which write into it.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Links the tool to its MCP Apps view, a `ui://` resource registered before the tool
    /// (`_meta.ui.resourceUri`, and the flat `ui/resourceUri` older hosts read).
    pub fn ui_resource(mut self, uri: impl Into<String>) -> Self {
        let uri = Value::String(uri.into());
        self.with_ui(|ui| ui.insert("resourceUri".into(), uri));
        self
    }

    /// Who may call the tool in an MCP Apps host (`_meta.ui.visibility`; both by default). A
    /// tool only the view calls (`[Visibility::App]`) is not offered to clients that do not
    /// render apps.
    pub fn visibility(mut self, who: &[Visibility]) -> Self {
        let who = who.iter().map(|v| Value::from(v.as_str())).collect();
        self.with_ui(|ui| ui.insert("visibility".into(), Value::Array(who)));
        self
    }

    /// Changes `_meta.ui` (made an object if it was not one).
    fn with_ui(&mut self, change: impl FnOnce(&mut Map<String, Value>) -> Option<Value>) {
        let meta = self.meta.get_or_insert_with(Map::new);
        let mut ui = match meta.remove("ui") {
            Some(Value::Object(ui)) => ui,
            _ => Map::new(),
        };
        change(&mut ui);
        meta.insert("ui".into(), Value::Object(ui));
    }

    /// A deadline for each call; past it the call ends with an `isError` result and the
    /// handler is cancelled. Overrides the server default.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// How many calls of this tool may run at once (further calls queue).
    pub fn max_concurrency(mut self, limit: usize) -> Self {
        self.max_concurrency = Some(limit);
        self
    }

    /// The wire form for a client that negotiated `version`: fields the version lacks are left out.
    pub fn to_json(&self, version: ProtocolVersion) -> Value {
        let mut out = Map::new();
        out.insert("name".into(), Value::from(self.name.as_str()));
        if version.has_titles()
            && let Some(title) = &self.title
        {
            out.insert("title".into(), Value::from(title.as_str()));
        }
        if let Some(description) = &self.description {
            out.insert("description".into(), Value::from(description.as_str()));
        }
        out.insert("inputSchema".into(), self.input_schema.clone());
        // A schema whose root is not an object is 2026-07-28's alone: older clients get none.
        if version.has_structured_output()
            && let Some(schema) = &self.output_schema
            && (version.has_any_structured_value() || object_root(schema))
        {
            out.insert("outputSchema".into(), schema.clone());
        }
        if version.has_tool_annotations()
            && let Some(annotations) = &self.annotations
        {
            out.insert("annotations".into(), json!(annotations));
        }
        if version.has_icons()
            && let Some(icons) = &self.icons
        {
            out.insert("icons".into(), json!(icons));
        }
        if let Some(meta) = &self.meta {
            out.insert("_meta".into(), Value::Object(meta.clone()));
        }
        Value::Object(out)
    }
}

/// Tool names (2025-11-25 guidance, enforced): 1–128 of `[A-Za-z0-9_.-]`.
pub(crate) fn valid_tool_name(name: &str) -> bool {
    (1..=128).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

/// Whether a schema describes objects at its root (`"type": "object"`).
fn object_root(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names() {
        assert!(valid_tool_name("admin.tools.list"));
        assert!(valid_tool_name("DATA_EXPORT_v2"));
        assert!(!valid_tool_name(""));
        assert!(!valid_tool_name("has space"));
        assert!(!valid_tool_name("a,b"));
        assert!(!valid_tool_name(&"x".repeat(129)));
    }

    #[test]
    fn version_filtering() {
        let tool = Tool::new("t")
            .title("T")
            .output_schema(json!({"type": "object"}))
            .annotations(ToolAnnotations {
                read_only_hint: Some(true),
                ..Default::default()
            });
        let old = tool.to_json(ProtocolVersion::V2024_11_05);
        assert!(old.get("title").is_none() && old.get("outputSchema").is_none());
        assert!(old.get("annotations").is_none());
        let new = tool.to_json(ProtocolVersion::V2025_11_25);
        assert_eq!(new["title"], "T");
        assert_eq!(new["annotations"]["readOnlyHint"], true);
    }

    #[test]
    fn from_json_reads_the_wire_form() {
        let tool = Tool::from_json(json!({
            "name": "n", "description": "d", "inputSchema": {"type": "object", "properties": {}},
            "_meta": {"k": 1}
        }))
        .unwrap();
        assert_eq!(tool.name(), "n");
        assert_eq!(tool.to_json(ProtocolVersion::LATEST)["_meta"]["k"], 1);
    }
}
