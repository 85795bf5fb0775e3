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
                        "type": ["object", "null"],
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

/// BM25 parameters: `K1` bounds how much repeating a word adds; `B` how much a field's length
/// against the same field of other tools counts. 0.5 rather than the usual 0.75: a short
/// field is then at most twice as strong as an average one, so a word in a one-line
/// description cannot outweigh the same word in a name.
const K1: f32 = 1.2;
const B: f32 = 0.5;
/// The fields and their weights: the name says most, then the title and the arguments' names,
/// then the descriptions.
const NAME: usize = 0;
const TITLE: usize = 1;
const ARGUMENTS: usize = 2;
const DESCRIPTION: usize = 3;
const ARGUMENT_DESCRIPTIONS: usize = 4;
const FIELD_WEIGHTS: [f32; 5] = [3.0, 2.0, 1.5, 1.0, 0.5];

/// The inverted index of a catalog's tools (app-only tools left out: they are for views, not
/// models).
pub(crate) struct SearchIndex {
    names: Vec<String>,
    terms: HashMap<String, u32>,
    /// Per term: each tool that has it, with its BM25F pseudo-frequency there (each field's
    /// count, normalised by that field's length against its average, weighted, summed).
    postings: Vec<Vec<(u32, f32)>>,
}

impl SearchIndex {
    pub(crate) fn build(tools: &ToolMap) -> Self {
        let mut names = Vec::with_capacity(tools.len());
        let mut terms: HashMap<String, u32> = HashMap::new();
        // Every term occurrence, by tool: (term, field); and each tool's field lengths.
        let mut occurrences: Vec<(u32, u8)> = Vec::new();
        let mut starts: Vec<usize> = Vec::with_capacity(tools.len() + 1);
        let mut lengths: Vec<[f32; 5]> = Vec::with_capacity(tools.len());
        let mut word = String::new();
        for (name, tool) in tools.iter().filter(|(_, tool)| !tool.app_only) {
            starts.push(occurrences.len());
            let mut length = [0.0f32; 5];
            let mut add = |text: &str, field: usize| {
                for_each_term(text, &mut word, |term| {
                    let next = terms.len() as u32;
                    let id = match terms.get(term) {
                        Some(&id) => id,
                        None => {
                            terms.insert(term.to_owned(), next);
                            next
                        }
                    };
                    occurrences.push((id, field as u8));
                    length[field] += 1.0;
                });
            };
            add(name, NAME);
            if let Some(title) = &tool.def.title {
                add(title, TITLE);
            }
            if let Some(description) = &tool.def.description {
                add(description, DESCRIPTION);
            }
            if let Some(properties) = tool
                .def
                .input_schema
                .get("properties")
                .and_then(Value::as_object)
            {
                for (argument, spec) in properties {
                    add(argument, ARGUMENTS);
                    if let Some(text) = spec.get("description").and_then(Value::as_str) {
                        add(text, ARGUMENT_DESCRIPTIONS);
                    }
                }
            }
            names.push(name.clone());
            lengths.push(length);
        }
        starts.push(occurrences.len());
        let count = lengths.len().max(1) as f32;
        let mut average = [0.0f32; 5];
        for length in &lengths {
            for (sum, field) in average.iter_mut().zip(length) {
                *sum += field / count;
            }
        }
        // Per term, the tool it was last counted for and its sum there: a slot per term, so a
        // tool's terms are summed without a search through them.
        let mut slots: Vec<(u32, f32)> = vec![(u32::MAX, 0.0); terms.len()];
        let mut postings: Vec<Vec<(u32, f32)>> = vec![Vec::new(); terms.len()];
        let mut touched: Vec<u32> = Vec::new();
        for (doc, length) in lengths.iter().enumerate() {
            let doc = doc as u32;
            let mut weight = [0.0f32; 5];
            for field in 0..5 {
                let norm = if average[field] > 0.0 {
                    1.0 - B + B * length[field] / average[field]
                } else {
                    1.0
                };
                weight[field] = FIELD_WEIGHTS[field] / norm;
            }
            touched.clear();
            for &(term, field) in &occurrences[starts[doc as usize]..starts[doc as usize + 1]] {
                let slot = &mut slots[term as usize];
                if slot.0 != doc {
                    *slot = (doc, 0.0);
                    touched.push(term);
                }
                slot.1 += weight[usize::from(field)];
            }
            for &term in &touched {
                postings[term as usize].push((doc, slots[term as usize].1));
            }
        }
        terms.shrink_to_fit();
        SearchIndex {
            names,
            terms,
            postings,
        }
    }

    /// The tools that match `query`, best first (ties by name), with their scores: all of
    /// them, or only the best `best` when no more will be looked at.
    pub(crate) fn search(&self, query: &str, best: Option<usize>) -> Vec<(&str, f32)> {
        let count = self.names.len() as f32;
        let mut query_terms: Vec<u32> = Vec::new();
        let mut word = String::new();
        for_each_term(query, &mut word, |term| {
            if let Some(&id) = self.terms.get(term)
                && !query_terms.contains(&id)
            {
                query_terms.push(id);
            }
        });
        // Dense scores: at 10,000 tools, 40 KB cleared beats hashing every posting.
        let mut scores = vec![0.0f32; self.names.len()];
        let mut matched: Vec<u32> = Vec::new();
        for id in query_terms {
            let postings = &self.postings[id as usize];
            let found = postings.len() as f32;
            let idf = (1.0 + (count - found + 0.5) / (found + 0.5)).ln();
            for &(doc, frequency) in postings {
                let score = &mut scores[doc as usize];
                if *score == 0.0 {
                    matched.push(doc);
                }
                *score += idf * frequency * (K1 + 1.0) / (frequency + K1);
            }
        }
        let mut ranked: Vec<(&str, f32)> = matched
            .into_iter()
            .map(|doc| (self.names[doc as usize].as_str(), scores[doc as usize]))
            .collect();
        let order =
            |a: &(&str, f32), b: &(&str, f32)| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0));
        if let Some(best) = best
            && best < ranked.len()
        {
            ranked.select_nth_unstable_by(best, order);
            ranked.truncate(best);
        }
        ranked.sort_unstable_by(order);
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
/// where camelCase changes case (`sendEmail`, `HTTPServer`; the whole word counts too, so
/// `github` finds `GitHub`), lower-cased, plurals folded, stop words and single ASCII letters
/// left out. `word` is scratch space.
fn for_each_term(text: &str, word: &mut String, mut emit: impl FnMut(&str)) {
    let mut whole = String::new();
    let mut emit_word = |word: &mut String| {
        let kept = word.len() > 1 || word.chars().next().is_some_and(|c| c.is_ascii_digit());
        // Stop words as written (folding would make `this` into `thi`).
        if kept && !STOP_WORDS.contains(&word.as_str()) {
            emit(fold_plural(word));
        }
        word.clear();
    };
    word.clear();
    let mut split = false;
    let mut chars = text.chars().peekable();
    let mut before: Option<char> = None;
    loop {
        let next = chars.next();
        // ASCII first: tool texts are mostly ASCII, and Unicode's tables cost more.
        let alphanumeric = next.is_some_and(|c| {
            if c.is_ascii() {
                c.is_ascii_alphanumeric()
            } else {
                c.is_alphanumeric()
            }
        });
        let Some(c) = next.filter(|_| alphanumeric) else {
            emit_word(word);
            if split {
                emit_word(&mut whole);
            }
            whole.clear();
            split = false;
            before = None;
            if next.is_none() {
                break;
            }
            continue;
        };
        if c.is_uppercase()
            && let Some(before) = before
        {
            let after_is_lower = chars.peek().is_some_and(|n| n.is_lowercase());
            // `sendEmail` splits before `E`; `HTTPServer` before the `S` of `Server`.
            if before.is_lowercase()
                || before.is_ascii_digit()
                || (before.is_uppercase() && after_is_lower)
            {
                emit_word(word);
                split = true;
            }
        }
        if c.is_ascii() {
            word.push(c.to_ascii_lowercase());
            whole.push(c.to_ascii_lowercase());
        } else {
            word.extend(c.to_lowercase());
            whole.extend(c.to_lowercase());
        }
        before = Some(c);
    }
}

/// A light English fold, in place, so that a word and its plural meet: `-sses` → `-ss`,
/// `-ies` → `-i` (`ties` → `tie`), a final `s` dropped (not after `s` or `u`, nor after `i`
/// in a word of six letters or more: `class`, `status`, `analysis`), then a final `e` dropped
/// and a final `y` made `i`, then a final `s` once more. So `caches` and `cache` are both
/// `cach`, `queries` and `query` both `queri`, `aliases` and `alias` both `alia`. Not a
/// stemmer: `menus` keeps its `s`, `running` is not `run`.
fn fold_plural(word: &mut String) -> &str {
    if word.len() <= 3 || !word.is_ascii() {
        return word;
    }
    let drop_s = |word: &mut String| {
        let keeps = word.ends_with("ss")
            || word.ends_with("us")
            || (word.ends_with("is") && word.len() >= 6);
        if word.len() > 3 && word.ends_with('s') && !keeps {
            word.truncate(word.len() - 1);
        }
    };
    if word.ends_with("sses") || (word.ends_with("ies") && word.len() > 4) {
        word.truncate(word.len() - 2);
    } else {
        drop_s(word);
    }
    if word.len() > 3 {
        if word.ends_with('e') {
            word.truncate(word.len() - 1);
        } else if word.ends_with('y') {
            word.truncate(word.len() - 1);
            word.push('i');
        }
    }
    drop_s(word);
    word
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
        for_each_term(text, &mut String::new(), |t| out.push(t.to_owned()));
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
        assert_eq!(terms("sendEmail"), ["send", "email", "sendemail"]);
        assert_eq!(
            terms("HTTPServer_status"),
            ["http", "server", "httpserver", "status"]
        );
        assert_eq!(terms("GitHub"), ["git", "hub", "github"]);
        assert_eq!(
            terms("list the files of a directory"),
            ["list", "fil", "directori"]
        );
        assert_eq!(terms("base64 Größe x 7"), ["base64", "größe", "7"]);
        assert_eq!(terms("the thing's"), ["thing"]);
        assert_eq!(terms("this is it"), Vec::<String>::new());
        assert!(terms("").is_empty());
        // A word and its plural meet.
        for (one, many) in [
            ("cache", "caches"),
            ("query", "queries"),
            ("box", "boxes"),
            ("class", "classes"),
            ("status", "statuses"),
            ("size", "sizes"),
            ("cookie", "cookies"),
            ("address", "addresses"),
            ("email", "emails"),
            ("match", "matches"),
            ("policy", "policies"),
            ("tie", "ties"),
            ("alias", "aliases"),
            ("api", "apis"),
            ("wiki", "wikis"),
        ] {
            assert_eq!(terms(one), terms(many), "{one} / {many}");
        }
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
        let ranked = index.search("emails", None);
        let names: Vec<&str> = ranked.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, ["send_email", "archive_logs"]);
        assert!(ranked[0].1 > ranked[1].1);
        // An argument's name and description count too.
        assert_eq!(index.search("pixels width", Some(1))[0].0, "resize_image");
        assert_eq!(index.search("resize", Some(1)).len(), 1);
        assert!(index.search("the of a", None).is_empty());
        assert!(index.search("unheard", Some(3)).is_empty());
    }

    #[test]
    fn a_long_description_does_not_drown_a_match_in_the_name() {
        let long = "Moves records between stores, keeping their history and owners. ".repeat(20);
        let tools = catalog(vec![
            Tool::new("export_invoices").description(long),
            Tool::new("billing_overview").description("Shows invoices."),
        ]);
        let index = SearchIndex::build(&tools);
        let ranked = index.search("invoices", None);
        assert_eq!(ranked[0].0, "export_invoices", "{ranked:?}");
        assert!(
            SearchIndex::build(&ToolMap::new())
                .search("x", None)
                .is_empty()
        );
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
