//! The tool registry: definitions with their compiled schemas, handlers and limits.
//!
//! Reads (every `tools/call`) take a snapshot `Arc` under a short read lock; writes are
//! copy-on-write and bump a generation that sessions watch to send `list_changed`.

mod schema;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock, RwLock};

use tokio::sync::watch;

use crate::dispatch::Limiter;
use crate::protocol::tool::valid_tool_name;
use crate::protocol::{ProtocolVersion, Tool};
use crate::{Error, ToolHandler};
pub(crate) use schema::{CompiledSchema, describe_violations};
pub use schema::{Violation, invalid_arguments_text};

/// A registered tool, ready to dispatch.
pub(crate) struct RegisteredTool {
    pub(crate) def: Tool,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) handler: Arc<dyn ToolHandler>,
    pub(crate) limiter: Option<Limiter>,
    /// The `tools/list` entry, serialised once per protocol version on first use.
    listing: [OnceLock<String>; ProtocolVersion::ALL.len()],
}

impl RegisteredTool {
    /// This tool's `tools/list` entry (compact JSON) for `version`.
    pub(crate) fn listing(&self, version: ProtocolVersion) -> &str {
        self.listing[version.index()].get_or_init(|| self.def.to_json(version).to_string())
    }
}

pub(crate) type ToolMap = BTreeMap<String, Arc<RegisteredTool>>;

pub(crate) struct ToolRegistry {
    tools: RwLock<Arc<ToolMap>>,
    generation: watch::Sender<u64>,
    max_queued: usize,
}

impl ToolRegistry {
    pub(crate) fn new(max_queued: usize) -> Self {
        ToolRegistry {
            tools: RwLock::new(Arc::new(BTreeMap::new())),
            generation: watch::Sender::new(0),
            max_queued,
        }
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
        let input = CompiledSchema::compile(&def.input_schema, &def.name, "inputSchema")?;
        let output = def
            .output_schema
            .as_ref()
            .map(|schema| CompiledSchema::compile(schema, &def.name, "outputSchema"))
            .transpose()?;
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
        Ok(RegisteredTool {
            def,
            input,
            output,
            handler,
            limiter,
            listing: Default::default(),
        })
    }

    pub(crate) fn insert(&self, tool: RegisteredTool) -> Result<(), Error> {
        {
            let mut guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
            if guard.contains_key(&tool.def.name) {
                return Err(Error::DuplicateTool {
                    name: tool.def.name.clone(),
                });
            }
            Arc::make_mut(&mut guard).insert(tool.def.name.clone(), Arc::new(tool));
        }
        self.generation.send_modify(|g| *g += 1);
        Ok(())
    }

    pub(crate) fn remove(&self, name: &str) -> bool {
        let removed = {
            let mut guard = self.tools.write().unwrap_or_else(|e| e.into_inner());
            guard.contains_key(name) && Arc::make_mut(&mut guard).remove(name).is_some()
        };
        if removed {
            self.generation.send_modify(|g| *g += 1);
        }
        removed
    }

    pub(crate) fn get(&self, name: &str) -> Option<Arc<RegisteredTool>> {
        self.tools
            .read()
            .unwrap_or_else(|e| e.into_inner())
            .get(name)
            .cloned()
    }

    pub(crate) fn snapshot(&self) -> Arc<ToolMap> {
        self.tools.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    pub(crate) fn subscribe(&self) -> watch::Receiver<u64> {
        self.generation.subscribe()
    }
}
