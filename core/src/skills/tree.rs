//! Skills from a directory tree: every directory holding a `SKILL.md`, with every file below
//! it, read once; nothing outside the root is ever read.

use std::collections::BTreeMap;
use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};

use super::{MAX_BYTES_PER_SKILL, MAX_FILES_PER_SKILL, SKILL_MD, Skill, invalid};
use crate::Error;

/// How deep a tree may go, and how many entries it may have: far beyond any skills tree, and
/// a bound on what a wrong root (`/`) costs before it is refused.
const MAX_DEPTH: usize = 32;
const MAX_ENTRIES: usize = 100_000;

/// `root`, resolved: what a reload of the same directory is known by.
pub(super) fn canonical_root(root: &Path) -> Result<PathBuf, Error> {
    let canonical = fs::canonicalize(root)
        .map_err(|err| invalid(format!("skills directory {}: {err}", root.display())))?;
    if !canonical.is_dir() {
        return Err(invalid(format!(
            "skills directory {} is not a directory",
            root.display()
        )));
    }
    Ok(canonical)
}

/// A file found in the tree: its path relative to the root (as segments), where it resolves,
/// and what it was when found.
struct Found {
    relative: Vec<String>,
    at: PathBuf,
    len: u64,
    modified: Option<std::time::SystemTime>,
    identity: Identity,
}

/// Which file a path resolved to: a file swapped for another between the walk and the read
/// (a symlink put in a path's place) is refused by this. Device and inode where the OS has
/// them; elsewhere, the resolved path is checked against the root again at read time.
#[cfg(unix)]
type Identity = (u64, u64);
#[cfg(not(unix))]
type Identity = ();

#[cfg(unix)]
fn identity(metadata: &fs::Metadata) -> Identity {
    use std::os::unix::fs::MetadataExt;
    (metadata.dev(), metadata.ino())
}

#[cfg(not(unix))]
fn identity(_metadata: &fs::Metadata) -> Identity {}

struct Walk<'a> {
    root: &'a Path,
    shown: &'a Path,
    files: Vec<Found>,
    entries: usize,
}

impl Walk<'_> {
    fn visit(&mut self, dir: &Path, relative: &[String]) -> Result<(), Error> {
        if relative.len() > MAX_DEPTH {
            return Err(invalid(format!(
                "skills directory {}: deeper than {MAX_DEPTH} levels at {}",
                self.shown.display(),
                dir.display()
            )));
        }
        let read = fs::read_dir(dir)
            .map_err(|err| invalid(format!("skills directory {}: {err}", dir.display())))?;
        let mut entries: Vec<_> = read
            .collect::<Result<_, _>>()
            .map_err(|err| invalid(format!("skills directory {}: {err}", dir.display())))?;
        entries.sort_by_key(fs::DirEntry::file_name);
        for entry in entries {
            self.entries += 1;
            if self.entries > MAX_ENTRIES {
                return Err(invalid(format!(
                    "skills directory {} has more than {MAX_ENTRIES} entries",
                    self.shown.display()
                )));
            }
            let path = entry.path();
            let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                return Err(invalid(format!(
                    "{}: the name is not UTF-8",
                    path.display()
                )));
            };
            // Hidden files (.git, .DS_Store) are not part of a skill.
            if name.starts_with('.') {
                continue;
            }
            let link = entry
                .file_type()
                .map_err(|err| invalid(format!("{}: {err}", path.display())))?
                .is_symlink();
            // Resolved, whatever symlinks lead there: it must still be under the root.
            let resolved = fs::canonicalize(&path)
                .map_err(|err| invalid(format!("{}: {err}", path.display())))?;
            if !resolved.starts_with(self.root) {
                return Err(invalid(format!(
                    "{} leads out of the skills directory {} (to {})",
                    path.display(),
                    self.shown.display(),
                    resolved.display()
                )));
            }
            let metadata = fs::metadata(&resolved)
                .map_err(|err| invalid(format!("{}: {err}", path.display())))?;
            let mut here = relative.to_vec();
            here.push(name);
            if metadata.is_dir() {
                // A directory is walked as itself only: a symlink to one inside the root would
                // serve its files twice, under another path, or loop.
                if !link {
                    self.visit(&resolved, &here)?;
                }
            } else if metadata.is_file() {
                self.files.push(Found {
                    relative: here,
                    at: resolved,
                    len: metadata.len(),
                    modified: metadata.modified().ok(),
                    identity: identity(&metadata),
                });
            }
        }
        Ok(())
    }
}

/// Every file of the tree under `root` (resolved as `canonical`), from the metadata alone.
fn walk(root: &Path, canonical: &Path) -> Result<Vec<Found>, Error> {
    let mut walk = Walk {
        root: canonical,
        shown: root,
        files: Vec::new(),
        entries: 0,
    };
    walk.visit(canonical, &[])?;
    Ok(walk.files)
}

/// What the tree looks like without reading a file: each file's path, size and modification
/// time, hashed. A watcher loads the tree again when this changes.
pub(super) fn fingerprint(root: &Path) -> Result<u64, Error> {
    use std::hash::{Hash, Hasher};
    let canonical = canonical_root(root)?;
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    for file in walk(root, &canonical)? {
        file.relative.hash(&mut hasher);
        file.len.hash(&mut hasher);
        file.modified.hash(&mut hasher);
    }
    Ok(hasher.finish())
}

/// A found file's bytes, if it is still the file the walk found and under the limit.
fn read(file: &Found, root: &Path) -> Result<Vec<u8>, Error> {
    let opened =
        fs::File::open(&file.at).map_err(|err| invalid(format!("{}: {err}", file.at.display())))?;
    let metadata = opened
        .metadata()
        .map_err(|err| invalid(format!("{}: {err}", file.at.display())))?;
    let moved = identity(&metadata) != file.identity
        || !fs::canonicalize(&file.at).is_ok_and(|now| now.starts_with(root));
    if moved {
        return Err(invalid(format!(
            "{} changed while the skills were loading; load them again",
            file.at.display()
        )));
    }
    let mut bytes = Vec::new();
    opened
        .take(MAX_BYTES_PER_SKILL + 1)
        .read_to_end(&mut bytes)
        .map_err(|err| invalid(format!("{}: {err}", file.at.display())))?;
    Ok(bytes)
}

/// The skills of the tree under `root` (resolved as `canonical`).
pub(super) fn load(root: &Path, canonical: &Path) -> Result<Vec<Skill>, Error> {
    let files = walk(root, canonical)?;
    // Each directory with a SKILL.md is a skill: the files below it, by their path in it.
    let skill_dirs: Vec<&[String]> = files
        .iter()
        .filter(|f| f.relative.last().map(String::as_str) == Some(SKILL_MD))
        .map(|f| &f.relative[..f.relative.len() - 1])
        .collect();
    // A root that is a skill itself is known by its own name, and the skills below it by
    // paths under that name, so that a nested skill stays under its parent's URI.
    let prefix = if skill_dirs.iter().any(|dir| dir.is_empty()) {
        let name = canonical
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| invalid(format!("{}: a skill root needs a name", root.display())))?;
        vec![name.to_owned()]
    } else {
        Vec::new()
    };
    // Every file of a skill, each read once (a nested skill's files are its parents' too).
    let mut bytes: BTreeMap<&[String], Vec<u8>> = BTreeMap::new();
    let mut skills = Vec::new();
    for dir in skill_dirs {
        let path = [prefix.as_slice(), dir].concat().join("/");
        let mine: Vec<&Found> = files
            .iter()
            .filter(|f| f.relative.len() > dir.len() && f.relative.starts_with(dir))
            .collect();
        let total: u64 = mine.iter().map(|f| f.len).sum();
        if mine.len() > MAX_FILES_PER_SKILL || total > MAX_BYTES_PER_SKILL {
            return Err(invalid(format!(
                "skill {path:?} ({} files, {total} bytes) is over the extension's limits of \
                 {MAX_FILES_PER_SKILL} files and {MAX_BYTES_PER_SKILL} bytes",
                mine.len()
            )));
        }
        let mut contents = BTreeMap::new();
        for file in mine {
            let read = match bytes.get(file.relative.as_slice()) {
                Some(known) => known.clone(),
                None => {
                    let read = read(file, canonical)?;
                    bytes.insert(&file.relative, read.clone());
                    read
                }
            };
            contents.insert(file.relative[dir.len()..].join("/"), read);
        }
        let skill_md = contents.remove(SKILL_MD).unwrap_or_default();
        let mut skill = Skill::new(path, skill_md);
        for (relative, read) in contents {
            skill = skill.file(relative, read);
        }
        skills.push(skill);
    }
    Ok(skills)
}
