//! The Skills extension (`io.modelcontextprotocol/skills`, SEP-2640): Agent Skills served as
//! `skill://` resources. `skills/list` and `skills/get` describe each skill (its SKILL.md
//! frontmatter and every file with its digest and size), `resources/read` reads a file and
//! `resources/directory/read` lists a directory of one.
//!
//! A skill is registered from code ([`Skill::new`] and [`Skill::file`]) or loaded from a
//! directory tree ([`Skill::load_dir`]; `load_skills` on the server loads and reloads one).
//! The files are read once and kept: what a client reads is always what the digests it was
//! given describe.

mod frontmatter;
mod tree;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::catalog::{Resource, ResourceContents};

/// The extension's identifier, in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/skills";
/// The MIME type of a directory resource (`resources/directory/read`).
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// The most files a skill may have, its SKILL.md included (the extension's limit).
pub const MAX_FILES_PER_SKILL: usize = 512;
/// The most bytes a skill's files may add up to (the extension's limit: 16 MiB).
pub const MAX_BYTES_PER_SKILL: u64 = 16 * 1024 * 1024;

const SKILL_MD: &str = "SKILL.md";

/// An Agent Skill: a SKILL.md (YAML frontmatter with `name` and `description`, then
/// Markdown) and the files beside it, served under `skill://<path>/`.
///
/// `path` is one or more `/`-separated segments whose last is the frontmatter's `name`
/// (`"pdf-processing"`, `"acme/billing/refunds"`); a file's path is relative to the skill.
/// Nothing is checked until the skill is registered, where a fault is an
/// [`Error::InvalidDefinition`] naming it.
#[derive(Clone, Debug)]
pub struct Skill {
    path: String,
    files: Vec<(String, Vec<u8>)>,
    /// The directory it was loaded from, if it was (a reload replaces what a root gave).
    source: Option<PathBuf>,
}

impl Skill {
    /// A skill at `path` whose SKILL.md holds `skill_md`.
    pub fn new(path: impl Into<String>, skill_md: impl Into<Vec<u8>>) -> Self {
        Skill {
            path: path.into(),
            files: vec![(SKILL_MD.to_owned(), skill_md.into())],
            source: None,
        }
    }

    /// Adds a file at `relative_path` (`"templates/invoice.md"`) within the skill.
    pub fn file(mut self, relative_path: impl Into<String>, contents: impl Into<Vec<u8>>) -> Self {
        self.files.push((relative_path.into(), contents.into()));
        self
    }

    /// Its path under `skill://`.
    pub fn path(&self) -> &str {
        &self.path
    }

    /// The skills of a directory tree: every directory holding a `SKILL.md` is a skill whose
    /// path is the directory's, relative to `root` (the root's own name when `root` holds
    /// one), and whose files are every file below it (a nested skill's too). Names beginning
    /// with `.` are left out. A path that leaves `root` (a symlink out of it), a skill over
    /// the extension's limits or a SKILL.md the rules refuse is an error naming it.
    pub fn load_dir(root: impl AsRef<Path>) -> Result<Vec<Skill>, Error> {
        let root = root.as_ref();
        let skills = tree::load(root, &tree::canonical_root(root)?)?;
        for skill in &skills {
            CompiledSkill::compile(skill.clone())?;
        }
        Ok(skills)
    }
}

fn invalid(message: impl Into<String>) -> Error {
    Error::InvalidDefinition {
        kind: "skill",
        message: message.into(),
    }
}

/// One file of a skill, as served.
pub(crate) struct SkillFile {
    pub(crate) uri: String,
    name: String,
    mime_type: &'static str,
    bytes: Arc<[u8]>,
    digest: String,
    /// The base64 form of a file read as a blob, made at its first read (up to 16 MiB each).
    base64: std::sync::OnceLock<String>,
}

impl SkillFile {
    fn new(uri: String, name: String, bytes: Vec<u8>) -> Self {
        let digest = crate::wire::hex(&Sha256::digest(&bytes));
        SkillFile {
            mime_type: mime_type(&name, &bytes),
            uri,
            name,
            bytes: bytes.into(),
            digest: format!("sha256:{digest}"),
            base64: std::sync::OnceLock::new(),
        }
    }

    fn size(&self) -> u64 {
        self.bytes.len() as u64
    }

    /// What `resources/read` answers: text when it is text, else base64.
    pub(crate) fn contents(&self) -> ResourceContents {
        let text = self.mime_type.starts_with("text/")
            || matches!(self.mime_type, "application/json" | "application/yaml");
        match std::str::from_utf8(&self.bytes) {
            Ok(utf8) if text => ResourceContents::text(&self.uri, Some(self.mime_type), utf8),
            _ => {
                use base64::Engine as _;
                let encoded = self
                    .base64
                    .get_or_init(|| base64::engine::general_purpose::STANDARD.encode(&self.bytes));
                ResourceContents::blob(&self.uri, Some(self.mime_type), encoded.as_str())
            }
        }
    }

    fn listing(&self) -> Value {
        json!({"uri": self.uri, "name": self.name, "mimeType": self.mime_type, "size": self.size()})
    }
}

/// A file's MIME type from its extension; text or bytes when the extension says nothing.
fn mime_type(name: &str, bytes: &[u8]) -> &'static str {
    let extension = name.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("txt") => "text/plain",
        Some("html" | "htm") => "text/html",
        Some("css") => "text/css",
        Some("csv") => "text/csv",
        Some("js" | "mjs") => "text/javascript",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("xml") => "text/xml",
        Some("svg") => "image/svg+xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("pdf") => "application/pdf",
        Some("zip") => "application/zip",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// A registered skill: checked, its files digested, its entry rendered once.
pub(crate) struct CompiledSkill {
    /// Its SKILL.md's URI: the skill's identity.
    pub(crate) uri: String,
    /// `skill://<path>`: its root directory.
    root: String,
    name: String,
    description: String,
    source: Option<PathBuf>,
    /// Every file, SKILL.md included, by URI.
    files: BTreeMap<String, Arc<SkillFile>>,
    /// The `skills/list` / `skills/get` entry.
    pub(crate) entry: Value,
}

impl CompiledSkill {
    fn compile(skill: Skill) -> Result<Self, Error> {
        let path = skill.path;
        let segments =
            check_path(&path).map_err(|why| invalid(format!("skill path {path:?}: {why}")))?;
        let skill_md = &skill.files[0].1;
        let frontmatter = frontmatter::parse(skill_md)
            .map_err(|why| invalid(format!("skill {path:?}: {why}")))?;
        let name = frontmatter["name"].as_str().unwrap_or_default().to_owned();
        let description = frontmatter["description"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if segments.last().map(String::as_str) != Some(name.as_str()) {
            return Err(invalid(format!(
                "skill {path:?}: the last segment of its path must be its name {name:?}"
            )));
        }
        let root = format!("skill://{}", encode_segments(&segments));
        if skill.files.len() > MAX_FILES_PER_SKILL {
            return Err(invalid(format!(
                "skill {path:?} has {} files; the extension allows {MAX_FILES_PER_SKILL}",
                skill.files.len()
            )));
        }
        let total: u64 = skill
            .files
            .iter()
            .map(|(_, bytes)| bytes.len() as u64)
            .sum();
        if total > MAX_BYTES_PER_SKILL {
            return Err(invalid(format!(
                "skill {path:?} has {total} bytes of files; the extension allows {MAX_BYTES_PER_SKILL}"
            )));
        }
        let mut files = BTreeMap::new();
        for (relative, bytes) in skill.files {
            let parts = check_path(&relative)
                .map_err(|why| invalid(format!("skill {path:?}, file {relative:?}: {why}")))?;
            let uri = format!("{root}/{}", encode_segments(&parts));
            let base = parts.last().cloned().unwrap_or_default();
            if files.contains_key(&uri) {
                return Err(invalid(format!(
                    "skill {path:?} has the file {relative:?} twice"
                )));
            }
            files.insert(uri.clone(), Arc::new(SkillFile::new(uri, base, bytes)));
        }
        let uri = format!("{root}/{SKILL_MD}");
        let resources: Vec<Value> = files
            .values()
            .map(|f| json!({"uri": f.uri, "digest": f.digest, "size": f.size()}))
            .collect();
        let entry = json!({"uri": uri, "frontmatter": frontmatter, "resources": resources});
        Ok(CompiledSkill {
            uri,
            root,
            name,
            description,
            source: skill.source,
            files,
            entry,
        })
    }

    /// Its SKILL.md as `resources/list` shows it.
    fn listed(&self) -> Resource {
        let mut resource = Resource::new(&self.uri, &self.name);
        resource.description = Some(self.description.clone());
        resource.mime_type = Some("text/markdown".into());
        resource.size = self.files.get(&self.uri).map(|f| f.size());
        resource
    }
}

/// The segments of a relative `/`-separated path; refused when it is empty, absolute, or
/// has an empty, `.` or `..` segment, a backslash or a NUL (nothing may leave the skill).
fn check_path(path: &str) -> Result<Vec<String>, String> {
    if path.is_empty() {
        return Err("it is empty".into());
    }
    if path.starts_with('/') {
        return Err("it must be relative".into());
    }
    path.split('/')
        .map(|segment| match segment {
            "" => Err("it has an empty segment".into()),
            "." | ".." => Err("`.` and `..` segments are not allowed".into()),
            s if s.contains(['\\', '\0']) => Err("backslashes and NULs are not allowed".into()),
            s => Ok(s.to_owned()),
        })
        .collect()
}

/// Path segments as URI text: unreserved characters and sub-delimiters as they are, every
/// other byte percent-encoded.
fn encode_segments(segments: &[String]) -> String {
    let mut out = String::new();
    for (i, segment) in segments.iter().enumerate() {
        if i > 0 {
            out.push('/');
        }
        for byte in segment.bytes() {
            if byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=".contains(&byte) {
                out.push(byte as char);
            } else {
                out.push_str(&format!("%{byte:02X}"));
            }
        }
    }
    out
}

/// A child of a directory resource.
pub(crate) enum Child {
    File(Arc<SkillFile>),
    Directory { uri: String, name: String },
}

impl Child {
    pub(crate) fn listing(&self) -> Value {
        match self {
            Child::File(file) => file.listing(),
            Child::Directory { uri, name } => {
                json!({"uri": uri, "name": name, "mimeType": DIRECTORY_MIME_TYPE})
            }
        }
    }
}

/// Every skill served, with the files and directories they make, rebuilt on each change
/// (skills change rarely; reads are lock-free snapshots).
#[derive(Default)]
pub(crate) struct SkillIndex {
    pub(crate) skills: BTreeMap<String, Arc<CompiledSkill>>,
    files: HashMap<String, Arc<SkillFile>>,
    directories: HashMap<String, BTreeMap<String, Child>>,
    /// SKILL.md entries for `resources/list`, by URI.
    pub(crate) listed: BTreeMap<String, Resource>,
}

impl SkillIndex {
    fn build(skills: BTreeMap<String, Arc<CompiledSkill>>) -> Result<Self, Error> {
        let mut files: HashMap<String, Arc<SkillFile>> = HashMap::new();
        let mut directories: HashMap<String, BTreeMap<String, Child>> = HashMap::new();
        for skill in skills.values() {
            directories.entry(skill.root.clone()).or_default();
            for file in skill.files.values() {
                match files.get(&file.uri) {
                    // A nested skill's files are its parent's too: the same bytes, served once.
                    Some(known) if known.bytes != file.bytes => {
                        return Err(invalid(format!(
                            "{} is served by two skills with different contents",
                            file.uri
                        )));
                    }
                    Some(_) => {}
                    None => {
                        files.insert(file.uri.clone(), file.clone());
                    }
                }
                // Each directory between the skill's root and the file lists what is below it.
                let relative = &file.uri[skill.root.len() + 1..];
                let mut parent = skill.root.clone();
                let mut parts = relative.split('/').peekable();
                while let Some(part) = parts.next() {
                    let uri = format!("{parent}/{part}");
                    let child = if parts.peek().is_some() {
                        Child::Directory {
                            uri: uri.clone(),
                            name: decode(part),
                        }
                    } else {
                        Child::File(file.clone())
                    };
                    directories
                        .entry(parent)
                        .or_default()
                        .entry(uri.clone())
                        .or_insert(child);
                    parent = uri;
                }
            }
        }
        let listed = skills
            .values()
            .map(|s| (s.uri.clone(), s.listed()))
            .collect();
        Ok(SkillIndex {
            skills,
            files,
            directories,
            listed,
        })
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.skills.is_empty()
    }

    pub(crate) fn file(&self, uri: &str) -> Option<&Arc<SkillFile>> {
        self.files.get(uri)
    }

    /// The URIs of the files served here and not in `now`.
    pub(crate) fn files_gone_from(&self, now: &SkillIndex) -> Vec<String> {
        self.files
            .keys()
            .filter(|uri| !now.files.contains_key(*uri))
            .cloned()
            .collect()
    }

    pub(crate) fn entry(&self, uri: &str) -> Option<&Value> {
        self.skills.get(uri).map(|s| &s.entry)
    }

    /// The children of a directory resource (a trailing `/` tolerated).
    pub(crate) fn directory(&self, uri: &str) -> Option<&BTreeMap<String, Child>> {
        let uri = uri.strip_suffix('/').unwrap_or(uri);
        self.directories.get(uri)
    }
}

fn decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes
            .get(i + 1..i + 3)
            .and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// What the server's skills are: the current index, replaced whole on each change.
#[derive(Default)]
pub(crate) struct Skills {
    index: std::sync::RwLock<Arc<SkillIndex>>,
}

impl Skills {
    pub(crate) fn snapshot(&self) -> Arc<SkillIndex> {
        self.index.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Applies `change` to the registered skills and rebuilds the index; false when it
    /// changed nothing. `taken` says whether a URI is a registered resource's.
    fn update(
        &self,
        taken: &dyn Fn(&str) -> bool,
        change: impl FnOnce(&mut BTreeMap<String, Arc<CompiledSkill>>) -> Result<bool, Error>,
    ) -> Result<bool, Error> {
        let mut guard = self.index.write().unwrap_or_else(|e| e.into_inner());
        let mut skills = guard.skills.clone();
        if !change(&mut skills)? {
            return Ok(false);
        }
        let index = SkillIndex::build(skills)?;
        if let Some(uri) = index.files.keys().find(|uri| taken(uri)) {
            return Err(invalid(format!(
                "{uri} is already registered as a resource"
            )));
        }
        *guard = Arc::new(index);
        Ok(true)
    }

    pub(crate) fn add(&self, skill: Skill, taken: &dyn Fn(&str) -> bool) -> Result<(), Error> {
        let compiled = Arc::new(CompiledSkill::compile(skill)?);
        self.update(taken, |skills| {
            if skills.contains_key(&compiled.uri) {
                return Err(invalid(format!(
                    "a skill {:?} is already registered",
                    compiled.uri
                )));
            }
            skills.insert(compiled.uri.clone(), compiled);
            Ok(true)
        })
        .map(drop)
    }

    /// Removes the skill whose SKILL.md is at `uri` (or whose path is `uri`).
    pub(crate) fn remove(&self, uri: &str) -> bool {
        let uri = if uri.contains("://") {
            uri.to_owned()
        } else {
            match check_path(uri) {
                Ok(segments) => format!("skill://{}/{SKILL_MD}", encode_segments(&segments)),
                Err(_) => return false,
            }
        };
        self.update(&|_| false, |skills| Ok(skills.remove(&uri).is_some()))
            .unwrap_or(false)
    }

    /// Loads the skills under `root`, replacing what it gave before. All or nothing: on an
    /// error the skills served are as they were.
    pub(crate) fn load_dir(
        &self,
        root: &Path,
        taken: &dyn Fn(&str) -> bool,
    ) -> Result<Reloaded, Error> {
        let source = tree::canonical_root(root)?;
        let mut loaded = Vec::new();
        for mut skill in tree::load(root, &source)? {
            skill.source = Some(source.clone());
            loaded.push(Arc::new(CompiledSkill::compile(skill)?));
        }
        let mut reloaded = Reloaded {
            skills: loaded.len(),
            ..Reloaded::default()
        };
        let digests =
            |skills: &mut dyn Iterator<Item = &Arc<CompiledSkill>>| -> BTreeMap<String, String> {
                skills
                    .flat_map(|s| s.files.values().map(|f| (f.uri.clone(), f.digest.clone())))
                    .collect()
            };
        self.update(taken, |skills| {
            let mine = |s: &CompiledSkill| s.source.as_deref() == Some(source.as_path());
            let before = digests(&mut skills.values().filter(|s| mine(s)));
            skills.retain(|_, s| !mine(s));
            for skill in &loaded {
                if let Some(other) = skills.get(&skill.uri) {
                    let from = other
                        .source
                        .as_ref()
                        .map_or("code".into(), |p| p.display().to_string());
                    return Err(invalid(format!(
                        "{} is already a skill (from {from})",
                        skill.uri
                    )));
                }
                skills.insert(skill.uri.clone(), skill.clone());
            }
            let after = digests(&mut loaded.iter());
            // A file whose bytes changed, or that is gone: its subscribers are told.
            reloaded.updated = before
                .iter()
                .filter(|(uri, digest)| after.get(*uri) != Some(*digest))
                .map(|(uri, _)| uri.clone())
                .collect();
            reloaded.changed = before != after;
            Ok(reloaded.changed)
        })?;
        Ok(reloaded)
    }
}

/// What a load of a skills directory did.
#[derive(Default)]
pub(crate) struct Reloaded {
    /// How many skills the directory has.
    pub(crate) skills: usize,
    /// Whether what is served changed.
    pub(crate) changed: bool,
    /// Files served before whose contents changed or that are gone.
    pub(crate) updated: Vec<String>,
}

/// What the tree under `root` looks like, from its files' metadata (see `tree::fingerprint`).
pub(crate) fn fingerprint(root: &Path) -> Result<u64, Error> {
    tree::fingerprint(root)
}

/// The `capabilities.extensions` entry of a server serving skills.
pub(crate) fn capability() -> Value {
    json!({ "directoryRead": true })
}

/// `data` of the errors naming a URI.
pub(crate) fn uri_data(uri: &str) -> Value {
    json!({ "uri": uri })
}

#[cfg(test)]
mod tests;
