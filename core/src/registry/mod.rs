//! The tool registry: definitions with their compiled schemas, handlers and limits.
//!
//! Reads (every `tools/call`) take a snapshot `Arc` under a short read lock; writes are
//! copy-on-write and publish the change for sessions to send `list_changed`.

mod schema;
pub(crate) mod search;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock, RwLock, Weak};

use crate::changes::{Change, ChangeBus};
use crate::limiter::Limiter;
use crate::metrics::{Metrics, Series};
use crate::protocol::tool::valid_tool_name;
use crate::protocol::{ProtocolVersion, Tool};
use crate::wire::json_text;
use crate::{Error, ToolHandler};
pub(crate) use schema::{CompiledSchema, describe_violations};
pub use schema::{Violation, invalid_arguments_text, invalid_prompt_arguments_text};
pub use search::ToolSearch;

/// A registered tool, ready to dispatch.
pub(crate) struct RegisteredTool {
    pub(crate) def: Tool,
    pub(crate) input: Arc<CompiledSchema>,
    pub(crate) output: Option<Arc<CompiledSchema>>,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) limiter: Option<Limiter>,
    /// Arguments mirrored in `Mcp-Param-{Name}` headers (`x-mcp-header`, 2026-07-28): the
    /// header name, lower-cased, and the property.
    pub(crate) param_headers: Vec<ParamHeader>,
    /// The `tools/list` entry, serialised once per protocol version on first use.
    listing: [OnceLock<String>; ProtocolVersion::ALL.len()],
    /// Where its calls are counted (`None`: metrics off).
    pub(crate) series: Option<Arc<Series>>,
    /// Only an MCP Apps view may call it (`visibility: ["app"]`): not offered to clients that
    /// do not render views.
    pub(crate) app_only: bool,
    /// Which registration this is (a tool redefined under its name is a change).
    pub(crate) generation: u64,
}

impl RegisteredTool {
    /// This tool's `tools/list` entry (compact JSON) for `version`.
    pub(crate) fn listing(&self, version: ProtocolVersion) -> &str {
        self.listing[version.index()].get_or_init(|| json_text(&self.def.to_json(version)))
    }
}

/// One `x-mcp-header` annotation of an input property.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ParamHeader {
    /// `mcp-param-{name}`, lower-cased.
    pub(crate) header: String,
    pub(crate) property: String,
    pub(crate) kind: ParamKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ParamKind {
    String,
    Integer,
    Boolean,
}

/// The `x-mcp-header` annotations of an input schema, checked: a header token, unique without
/// regard to case, on a top-level property of type string, integer or boolean.
fn param_headers(tool: &str, schema: &serde_json::Value) -> Result<Vec<ParamHeader>, Error> {
    let invalid = |message: String| Error::InvalidSchema {
        tool: tool.to_owned(),
        which: "inputSchema",
        message,
    };
    let mut headers: Vec<ParamHeader> = Vec::new();
    let Some(properties) = schema.get("properties").and_then(|p| p.as_object()) else {
        return Ok(headers);
    };
    for (property, spec) in properties {
        let Some(annotation) = spec.get("x-mcp-header") else {
            continue;
        };
        let Some(name) = annotation.as_str() else {
            return Err(invalid(format!(
                "x-mcp-header of {property:?} must be a string"
            )));
        };
        let token = !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b));
        if !token {
            return Err(invalid(format!(
                "x-mcp-header {name:?} of {property:?} is not an HTTP header token"
            )));
        }
        let kind = match spec.get("type").and_then(|t| t.as_str()) {
            Some("string") => ParamKind::String,
            Some("integer") => ParamKind::Integer,
            Some("boolean") => ParamKind::Boolean,
            _ => {
                return Err(invalid(format!(
                    "x-mcp-header on {property:?} needs \"type\" string, integer or boolean"
                )));
            }
        };
        let header = format!("mcp-param-{}", name.to_ascii_lowercase());
        if headers.iter().any(|h| h.header == header) {
            return Err(invalid(format!(
                "x-mcp-header {name:?} is used twice (names are compared without case)"
            )));
        }
        headers.push(ParamHeader {
            header,
            property: property.clone(),
            kind,
        });
    }
    Ok(headers)
}

pub(crate) type ToolMap = BTreeMap<String, Arc<RegisteredTool>>;

pub(crate) struct ToolRegistry {
    tools: RwLock<Arc<ToolMap>>,
    /// Counts the changes of `tools`, changed under its write lock: what was built from one
    /// snapshot (the search's index) knows when it is stale without holding the map.
    version: std::sync::atomic::AtomicU64,
    /// Set once the server is built: registrations before that announce nothing.
    changes: OnceLock<Arc<dyn ChangeBus>>,
    max_queued: usize,
    /// Compiled schemas by their JSON text: tools with the same schema share one validator
    /// (a compiled validator costs kilobytes; servers often repeat a schema across tools).
    schemas: Mutex<SchemaCache>,
    /// The server's metrics, where each tool gets its series.
    metrics: Arc<Metrics>,
}

#[derive(Default)]
struct SchemaCache {
    by_text: HashMap<Arc<str>, Weak<CompiledSchema>>,
    /// Entries of removed tools are swept when the map reaches this size.
    sweep_at: usize,
}

impl ToolRegistry {
    pub(crate) fn new(max_queued: usize, metrics: Arc<Metrics>) -> Self {
        ToolRegistry {
            tools: RwLock::new(Arc::new(BTreeMap::new())),
            version: std::sync::atomic::AtomicU64::new(0),
            changes: OnceLock::new(),
            max_queued,
            schemas: Mutex::default(),
            metrics,
        }
    }

    fn compile(
        &self,
        schema: &serde_json::Value,
        tool: &str,
        which: &'static str,
    ) -> Result<Arc<CompiledSchema>, Error> {
        let text: Arc<str> = json_text(schema).into();
        let mut cache = self.schemas.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(compiled) = cache.by_text.get(&text).and_then(Weak::upgrade) {
            return Ok(compiled);
        }
        // The text is kept once: the cache's key and the schema's own copy are one string.
        let compiled = Arc::new(CompiledSchema::compile_text(
            schema,
            text.clone(),
            tool,
            which,
        )?);
        if cache.by_text.len() >= cache.sweep_at {
            cache
                .by_text
                .retain(|_, compiled| compiled.strong_count() > 0);
            cache.sweep_at = (cache.by_text.len() * 2).max(64);
        }
        cache.by_text.insert(text, Arc::downgrade(&compiled));
        Ok(compiled)
    }

    /// Checks and compiles a tool; does not register it.
    pub(crate) fn prepare(
        &self,
        def: Tool,
        handler: Arc<dyn ToolHandler>,
    ) -> Result<RegisteredTool, Error> {
        if !valid_tool_name(&def.name) {
            return Err(Error::InvalidToolName { name: def.name });
        }
        let input = self.compile(&def.input_schema, &def.name, "inputSchema")?;
        let output = def
            .output_schema
            .as_ref()
            .map(|schema| self.compile(schema, &def.name, "outputSchema"))
            .transpose()?;
        let param_headers = param_headers(&def.name, &def.input_schema)?;
        let limiter = match def.max_concurrency {
            Some(0) => {
                return Err(Error::InvalidArgument(format!(
                    "max_concurrency of tool {:?} must be at least 1",
                    def.name
                )));
            }
            Some(limit) => Some(Limiter::new(limit, self.max_queued)),
            None => None,
        };
        let series = self.metrics.tool_series(&def.name);
        Ok(RegisteredTool {
            def,
            input,
            output,
            handler,
            limiter,
            param_headers,
            listing: Default::default(),
            series,
            app_only: false,
            generation: crate::catalog::next_generation(),
        })
    }

    pub(crate) fn insert(&self, tool: RegisteredTool) -> Result<(), Error> {
        self.insert_unless(tool, |_| None)
    }

    /// `insert`, unless `refuse` (asked under the registry's lock, so that nothing it depends on
    /// and changes only under that lock can change meanwhile) names a reason not to.
    pub(crate) fn insert_unless(
        &self,
        tool: RegisteredTool,
        refuse: impl FnOnce(&str) -> Option<Error>,
    ) -> Result<(), Error> {
        {
            let mut guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
            if guard.contains_key(&tool.def.name) {
                return Err(Error::DuplicateTool {
                    name: tool.def.name.clone(),
                });
            }
            if let Some(refused) = refuse(&tool.def.name) {
                return Err(refused);
            }
            Arc::make_mut(&mut guard).insert(tool.def.name.clone(), Arc::new(tool));
            self.version
                .fetch_add(1, std::sync::atomic::Ordering::Release);
        }
        self.announce();
        Ok(())
    }

    pub(crate) fn remove(&self, name: &str) -> bool {
        let removed = {
            let mut guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
            let removed =
                guard.contains_key(name) && Arc::make_mut(&mut guard).remove(name).is_some();
            if removed {
                self.version
                    .fetch_add(1, std::sync::atomic::Ordering::Release);
            }
            removed
        };
        if removed {
            self.announce();
        }
        removed
    }

    /// From now on, changes are published on `bus`.
    pub(crate) fn announce_to(&self, bus: Arc<dyn ChangeBus>) {
        let _ = self.changes.set(bus);
    }

    fn announce(&self) {
        if let Some(bus) = self.changes.get() {
            bus.publish(Change::ToolsListChanged);
        }
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    /// Whether some tool may run as a task (the server then offers the tasks extension).
    pub(crate) fn has_task_tools(&self) -> bool {
        self.snapshot()
            .values()
            .any(|tool| tool.def.task_support != crate::tasks::TaskSupport::Never)
    }

    pub(crate) fn snapshot(&self) -> Arc<ToolMap> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Runs `look` with the tools while none can be added or removed.
    pub(crate) fn while_unchanged<T>(&self, look: impl FnOnce(&ToolMap) -> T) -> T {
        let guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
        look(&guard)
    }

    /// The tools and which change of them this is.
    pub(crate) fn versioned_snapshot(&self) -> (u64, Arc<ToolMap>) {
        let tools = self.tools.read().unwrap_or_else(|e| e.into_inner());
        let version = self.version.load(std::sync::atomic::Ordering::Acquire);
        (version, tools.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Context, ToolError, ToolOutput};
    use serde_json::{Value, json};

    async fn noop(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(""))
    }

    fn tool(name: &str, schema: Value) -> Tool {
        Tool::new(name).input_schema(schema)
    }

    #[test]
    fn tools_with_one_schema_share_its_validator() {
        let registry = ToolRegistry::new(16, Metrics::new(true));
        let schema = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let a = registry
            .prepare(tool("a", schema.clone()), Arc::new(noop))
            .unwrap();
        let b = registry.prepare(tool("b", schema), Arc::new(noop)).unwrap();
        let c = registry
            .prepare(tool("c", json!({"type": "object"})), Arc::new(noop))
            .unwrap();
        assert!(Arc::ptr_eq(&a.input, &b.input));
        assert!(!Arc::ptr_eq(&a.input, &c.input));
        // Shared, it still validates as its own.
        assert!(!b.input.violations(&json!({"q": 1})).is_empty());
        assert!(c.input.violations(&json!({"q": 1})).is_empty());
    }

    #[test]
    fn a_schema_no_tool_uses_any_more_is_compiled_again() {
        let registry = ToolRegistry::new(16, Metrics::new(true));
        let schema = json!({"type": "object", "required": ["x"]});
        let first = registry
            .prepare(tool("a", schema.clone()), Arc::new(noop))
            .unwrap();
        let weak = Arc::downgrade(&first.input);
        drop(first);
        assert!(
            weak.upgrade().is_none(),
            "the cache holds no strong reference"
        );
        let again = registry.prepare(tool("a", schema), Arc::new(noop)).unwrap();
        assert!(!again.input.violations(&json!({})).is_empty());
    }

    #[test]
    fn an_invalid_schema_is_refused_every_time() {
        let registry = ToolRegistry::new(16, Metrics::new(true));
        for _ in 0..2 {
            let refused = registry.prepare(tool("a", json!({"type": "string"})), Arc::new(noop));
            assert!(matches!(refused, Err(Error::InvalidSchema { .. })));
        }
    }
}
