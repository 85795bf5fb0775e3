//! Search over a large tool catalog: the listing shows a few pinned tools and two of the
//! engine's own, `search_tools` (ranked full-text search) and `call_tool` (calls what the
//! search found), so a catalog of thousands of tools does not fill a model's context.
//!
//! Ranking is BM25F (Robertson & Zaragoza): BM25 over one document per tool whose fields
//! count with weights (a word in the name says more than one in a long description). BM25
//! because tool texts are short and uneven in length, and its two effects are what such texts
//! need: a word's weight saturates (a description repeating "file" ten times is not ten times
//! about files) and a long description's matches count for less than a short one's. It needs no
//! model, no network and no training, is deterministic, and costs microseconds per query at
//! 10,000 tools.

use std::collections::{BTreeSet, HashMap};

use serde::Deserialize;
use serde_json::{Value, json};

use super::ToolMap;
use crate::Error;
use crate::protocol::Tool;
use crate::protocol::tool::valid_tool_name;

/// The most results one search may return.
pub(crate) const MAX_SEARCH_RESULTS: usize = 50;
/// The longest query accepted, in characters.
pub(crate) const MAX_QUERY_CHARS: usize = 1_000;

/// How a server offers a large catalog: a search tool and a call tool in place of the full
/// listing (see [`Server::tool_search`](crate::Server::tool_search)).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ToolSearch {
    /// Tools listed as usual, beside the two of the search.
    pub pinned: BTreeSet<String>,
    /// The most tools one search returns (1 to 50; 5 by default).
    pub max_results: usize,
    /// The search tool's name (`"search_tools"` by default).
    pub search_tool_name: String,
    /// The call tool's name (`"call_tool"` by default).
    pub call_tool_name: String,
}

impl Default for ToolSearch {
    fn default() -> Self {
        ToolSearch {
            pinned: BTreeSet::new(),
            max_results: 5,
            search_tool_name: "search_tools".to_owned(),
            call_tool_name: "call_tool".to_owned(),
        }
    }
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolSearchWire {
    #[serde(default)]
    pinned: Vec<String>,
    #[serde(default)]
    max_results: Option<usize>,
    #[serde(default)]
    search_tool_name: Option<String>,
    #[serde(default)]
    call_tool_name: Option<String>,
}

impl ToolSearch {
    /// The defaults: nothing pinned, 5 results, `search_tools` and `call_tool`.
    pub fn new() -> Self {
        Self::default()
    }

    /// Lists these tools as usual besides the search (those most calls need).
    pub fn pinned<I, S>(mut self, names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.pinned = names.into_iter().map(Into::into).collect();
        self
    }

    /// The most tools one search returns.
    pub fn max_results(mut self, max_results: usize) -> Self {
        self.max_results = max_results;
        self
    }

    /// Names the search tool.
    pub fn search_tool_name(mut self, name: impl Into<String>) -> Self {
        self.search_tool_name = name.into();
        self
    }

    /// Names the call tool.
    pub fn call_tool_name(mut self, name: impl Into<String>) -> Self {
        self.call_tool_name = name.into();
        self
    }

    /// As bindings pass it: `{"pinned"?, "maxResults"?, "searchToolName"?, "callToolName"?}`;
    /// other keys are refused.
    pub fn from_json(value: &Value) -> Result<Self, Error> {
        let wire: ToolSearchWire =
            serde_json::from_value(value.clone()).map_err(|err| Error::InvalidDefinition {
                kind: "tool search",
                message: err.to_string(),
            })?;
        let defaults = ToolSearch::default();
        let search = ToolSearch {
            pinned: wire.pinned.into_iter().collect(),
            max_results: wire.max_results.unwrap_or(defaults.max_results),
            search_tool_name: wire.search_tool_name.unwrap_or(defaults.search_tool_name),
            call_tool_name: wire.call_tool_name.unwrap_or(defaults.call_tool_name),
        };
        search.check()?;
        Ok(search)
    }

    /// Refuses settings no client could use.
    pub(crate) fn check(&self) -> Result<(), Error> {
        let invalid = |message: String| {
            Err(Error::InvalidDefinition {
                kind: "tool search",
                message,
            })
        };
        if !(1..=MAX_SEARCH_RESULTS).contains(&self.max_results) {
            return invalid(format!(
                "max_results must be 1 to {MAX_SEARCH_RESULTS}, not {}",
                self.max_results
            ));
        }
        for name in [&self.search_tool_name, &self.call_tool_name] {
            if !valid_tool_name(name) {
                return invalid(format!("{name:?} is not a valid tool name"));
            }
        }
        if self.search_tool_name == self.call_tool_name {
            return invalid(format!(
                "the search and call tools need two names, not {:?} twice",
                self.call_tool_name
            ));
        }
        if let Some(name) = self.pinned.iter().find(|name| self.is_own(name)) {
            return invalid(format!(
                "{name:?} is the search's own tool; it cannot be pinned"
            ));
        }
        Ok(())
    }

    /// Whether `name` is one of the search's two tools.
    pub(crate) fn is_own(&self, name: &str) -> bool {
        name == self.search_tool_name || name == self.call_tool_name
    }

    /// The search tool's definition.
    pub(crate) fn search_tool(&self) -> Tool {
        Tool::new(&self.search_tool_name).input_schema(json!({
                "type": "object",
                "properties": {
                    "query": {
                        "type": "string",
                        "minLength": 1,
                        "maxLength": MAX_QUERY_CHARS,
                        "description": "What the tool should do, in a few words (\"send an email\", \"resize image\")."
                    },
                    "limit": {
                        "type": "integer",
                        "minimum": 1,
                        "maximum": self.max_results,
                        "description": format!("The most tools to return ({} at most).", self.max_results)
                    }
                },
                "required": ["query"],
                "additionalProperties": false
            }))
        .title("Search tools")
        .description(format!(
            "Finds this server's tools by what they do and returns the best matches' full \
             definitions (name, description, input schema), best first. Call one with {}.",
            self.call_tool_name
        ))
        .output_schema(json!({
            "type": "object",
            "properties": {"tools": {"type": "array", "items": {"type": "object"}}},
            "required": ["tools"]
        }))
        .annotations(crate::protocol::ToolAnnotations {
            read_only_hint: Some(true),
            open_world_hint: Some(false),
            ..Default::default()
        })
    }

    /// The call tool's definition.
    pub(crate) fn call_tool(&self) -> Tool {
        Tool::new(&self.call_tool_name).input_schema(json!({
                "type": "object",
                "properties": {
                    "name": {
                        "type": "string",
                        "minLength": 1,
                        "description": format!("The tool's name, as {} returned it.", self.search_tool_name)
                    },
                    "arguments": {
                        "type": "object",
                        "description": "The tool's arguments, as its input schema describes them."
                    }
                },
                "required": ["name"],
                "additionalProperties": false
            }))
        .title("Call a tool")
        .description(format!(
            "Calls a tool that {} found, with its arguments, and returns its result.",
            self.search_tool_name
        ))
    }
}

/// BM25 parameters: `K1` bounds how much repeating a word adds; `B` how much a long text's
/// matches are discounted.
const K1: f32 = 1.2;
const B: f32 = 0.75;
/// Field weights: the name says most, then the title and the arguments' names, then the
/// descriptions.
const NAME_WEIGHT: f32 = 3.0;
const TITLE_WEIGHT: f32 = 2.0;
const ARGUMENT_WEIGHT: f32 = 1.5;
const DESCRIPTION_WEIGHT: f32 = 1.0;
const ARGUMENT_DESCRIPTION_WEIGHT: f32 = 0.5;

/// The inverted index of a catalog's tools (app-only tools left out: they are for views, not
/// models).
pub(crate) struct SearchIndex {
    names: Vec<String>,
    terms: HashMap<String, u32>,
    /// Per term: each tool that has it, with its weighted frequency there.
    postings: Vec<Vec<(u32, f32)>>,
    /// Per tool: its weighted length.
    lengths: Vec<f32>,
    average_length: f32,
}

impl SearchIndex {
    pub(crate) fn build(tools: &ToolMap) -> Self {
        let mut index = SearchIndex {
            names: Vec::new(),
            terms: HashMap::new(),
            postings: Vec::new(),
            lengths: Vec::new(),
            average_length: 0.0,
        };
        let mut frequencies: HashMap<String, f32> = HashMap::new();
        for (name, tool) in tools.iter().filter(|(_, tool)| !tool.app_only) {
            let doc = index.names.len() as u32;
            frequencies.clear();
            let mut length = 0.0;
            let mut add = |text: &str, weight: f32| {
                for_each_term(text, |term| {
                    *frequencies.entry(term).or_insert(0.0) += weight;
                    length += weight;
                });
            };
            add(name, NAME_WEIGHT);
            if let Some(title) = &tool.def.title {
                add(title, TITLE_WEIGHT);
            }
            if let Some(description) = &tool.def.description {
                add(description, DESCRIPTION_WEIGHT);
            }
            if let Some(properties) = tool
                .def
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
            {
                for (argument, spec) in properties {
                    add(argument, ARGUMENT_WEIGHT);
                    if let Some(description) = spec.get("description").and_then(Value::as_str) {
                        add(description, ARGUMENT_DESCRIPTION_WEIGHT);
                    }
                }
            }
            for (term, frequency) in frequencies.drain() {
                let next = index.postings.len() as u32;
                let id = *index.terms.entry(term).or_insert(next);
                if id == next {
                    index.postings.push(Vec::new());
                }
                index.postings[id as usize].push((doc, frequency));
            }
            index.names.push(name.clone());
            index.lengths.push(length);
        }
        let total: f32 = index.lengths.iter().sum();
        index.average_length = if index.names.is_empty() {
            1.0
        } else {
            (total / index.names.len() as f32).max(f32::MIN_POSITIVE)
        };
        index.terms.shrink_to_fit();
        index.postings.iter_mut().for_each(Vec::shrink_to_fit);
        index
    }

    /// The tools that match `query`, best first (ties by name), with their scores.
    pub(crate) fn search(&self, query: &str) -> Vec<(&str, f32)> {
        let count = self.names.len() as f32;
        let mut query_terms = BTreeSet::new();
        for_each_term(query, |term| {
            query_terms.insert(term);
        });
        let mut scores: HashMap<u32, f32> = HashMap::new();
        for term in &query_terms {
            let Some(&id) = self.terms.get(term) else {
                continue;
            };
            let postings = &self.postings[id as usize];
            let found = postings.len() as f32;
            let idf = (1.0 + (count - found + 0.5) / (found + 0.5)).ln();
            for &(doc, frequency) in postings {
                let norm = 1.0 - B + B * self.lengths[doc as usize] / self.average_length;
                let weight = idf * frequency * (K1 + 1.0) / (frequency + K1 * norm);
                *scores.entry(doc).or_insert(0.0) += weight;
            }
        }
        let mut ranked: Vec<(&str, f32)> = scores
            .into_iter()
            .map(|(doc, score)| (self.names[doc as usize].as_str(), score))
            .collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
        ranked
    }

    /// How many tools it holds.
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.names.len()
    }
}

/// Words too common to tell tools apart.
const STOP_WORDS: &[&str] = &[
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on",
    "or", "that", "the", "this", "to", "with",
];

/// Calls `emit` with each term of `text`: words split at anything not a letter or digit and
/// where camelCase changes case (`sendEmail`, `HTTPServer`), lower-cased, plurals folded
/// (`files` → `file`, `queries` → `query`), stop words left out.
fn for_each_term(text: &str, mut emit: impl FnMut(String)) {
    let chars: Vec<char> = text.chars().collect();
    let mut word = String::new();
    let mut flush = |word: &mut String| {
        if !word.is_empty() {
            let term = fold_plural(word);
            if !STOP_WORDS.contains(&term.as_str()) {
                emit(term);
            }
            word.clear();
        }
    };
    for (at, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            flush(&mut word);
            continue;
        }
        if c.is_uppercase() && at > 0 {
            let before = chars[at - 1];
            let after_is_lower = chars.get(at + 1).is_some_and(|n| n.is_lowercase());
            // `sendEmail` splits before `E`; `HTTPServer` before the `S` of `Server`.
            if before.is_lowercase()
                || before.is_ascii_digit()
                || (before.is_uppercase() && after_is_lower)
            {
                flush(&mut word);
            }
        }
        word.extend(c.to_lowercase());
    }
    flush(&mut word);
}

/// A light English plural fold, so `email` finds `emails` and `query` finds `queries`.
fn fold_plural(word: &str) -> String {
    let count = word.chars().count();
    if count <= 3 || !word.is_ascii() {
        return word.to_owned();
    }
    if let Some(stem) = word.strip_suffix("ies") {
        return format!("{stem}y");
    }
    for suffix in ["sses", "xes", "ches", "shes", "zes"] {
        if word.ends_with(suffix) {
            return word[..word.len() - 2].to_owned();
        }
    }
    if word.ends_with("ss") || word.ends_with("us") || word.ends_with("is") {
        return word.to_owned();
    }
    match word.strip_suffix('s') {
        Some(stem) => stem.to_owned(),
        None => word.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry::RegisteredTool;
    use crate::{Context, ToolError, ToolOutput};
    use std::sync::Arc;

    async fn noop(_ctx: Context, _args: Value) -> Result<ToolOutput, ToolError> {
        Ok(ToolOutput::text(""))
    }

    fn terms(text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for_each_term(text, |t| out.push(t));
        out
    }

    fn catalog(tools: Vec<Tool>) -> ToolMap {
        let registry = super::super::ToolRegistry::new(8, crate::metrics::Metrics::new(false));
        tools
            .into_iter()
            .map(|tool| {
                let prepared: RegisteredTool = registry
                    .prepare(tool, Arc::new(noop))
                    .expect("a valid tool");
                (prepared.def.name.clone(), Arc::new(prepared))
            })
            .collect()
    }

    #[test]
    fn words_split_at_case_and_punctuation_and_fold_plurals() {
        assert_eq!(terms("sendEmail"), ["send", "email"]);
        assert_eq!(terms("HTTPServer_status"), ["http", "server", "status"]);
        assert_eq!(
            terms("list the files of a directory"),
            ["list", "file", "directory"]
        );
        assert_eq!(terms("queries, boxes; classes"), ["query", "box", "class"]);
        assert_eq!(terms("base64 Größe"), ["base64", "größe"]);
        assert!(terms("").is_empty());
    }

    #[test]
    fn a_word_in_the_name_ranks_above_one_in_a_description() {
        let tools = catalog(vec![
            Tool::new("archive_logs")
                .description("Moves old logs aside; the email team asked for it."),
            Tool::new("send_email").description("Sends a message to a recipient."),
            Tool::new("resize_image").input_schema(json!({
                "type": "object",
                "properties": {"width": {"type": "integer", "description": "pixels"}}
            })),
        ]);
        let index = SearchIndex::build(&tools);
        assert_eq!(index.len(), 3);
        let ranked = index.search("emails");
        let names: Vec<&str> = ranked.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["send_email", "archive_logs"]);
        assert!(ranked[0].1 > ranked[1].1);
        // An argument's name and description count too.
        assert_eq!(index.search("pixels width")[0].0, "resize_image");
        assert!(index.search("the of a").is_empty());
        assert!(index.search("unheard").is_empty());
    }

    #[test]
    fn settings_no_client_could_use_are_refused() {
        assert!(ToolSearch::new().max_results(0).check().is_err());
        assert!(ToolSearch::new().max_results(51).check().is_err());
        assert!(
            ToolSearch::new()
                .call_tool_name("search_tools")
                .check()
                .is_err()
        );
        assert!(
            ToolSearch::new()
                .search_tool_name("no spaces")
                .check()
                .is_err()
        );
        assert!(ToolSearch::new().pinned(["call_tool"]).check().is_err());
        assert!(ToolSearch::from_json(&json!({"maxResult": 3})).is_err());
        let read = ToolSearch::from_json(&json!({"pinned": ["echo"], "maxResults": 8}))
            .expect("valid settings");
        assert_eq!(read, ToolSearch::new().pinned(["echo"]).max_results(8));
    }
}
