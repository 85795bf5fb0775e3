//! Skills from a directory tree: every directory holding a `SKILL.md`, with every file below
//! it, read once; nothing outside the root is ever read.

use std::collections::{BTreeMap, HashSet};
use std::fs;
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

/// A file found in the tree: its path relative to the root (as segments), and where it is.
struct Found {
    relative: Vec<String>,
    at: PathBuf,
    len: u64,
}

struct Walk<'a> {
    root: &'a Path,
    shown: &'a Path,
    files: Vec<Found>,
    /// Directories entered, resolved: a symlink back up the tree is entered once.
    entered: HashSet<PathBuf>,
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
                if self.entered.insert(resolved.clone()) {
                    self.visit(&resolved, &here)?;
                }
            } else if metadata.is_file() {
                self.files.push(Found {
                    relative: here,
                    at: resolved,
                    len: metadata.len(),
                });
            }
        }
        Ok(())
    }
}

pub(super) fn load(root: &Path) -> Result<Vec<Skill>, Error> {
    let canonical = canonical_root(root)?;
    let mut walk = Walk {
        root: &canonical,
        shown: root,
        files: Vec::new(),
        entered: HashSet::from([canonical.clone()]),
        entries: 0,
    };
    walk.visit(&canonical, &[])?;
    // Each directory with a SKILL.md is a skill: the files below it, by their path in it.
    let skill_dirs: Vec<&[String]> = walk
        .files
        .iter()
        .filter(|f| f.relative.last().map(String::as_str) == Some(SKILL_MD))
        .map(|f| &f.relative[..f.relative.len() - 1])
        .collect();
    let mut skills = Vec::new();
    for dir in skill_dirs {
        let path = if dir.is_empty() {
            // The root is itself a skill: it is known by its own name.
            canonical
                .file_name()
                .and_then(|n| n.to_str())
                .map(str::to_owned)
                .ok_or_else(|| invalid(format!("{}: a skill root needs a name", root.display())))?
        } else {
            dir.join("/")
        };
        let mine: Vec<&Found> = walk
            .files
            .iter()
            .filter(|f| f.relative.len() > dir.len() && f.relative.starts_with(dir))
            .collect();
        let bytes: u64 = mine.iter().map(|f| f.len).sum();
        if mine.len() > MAX_FILES_PER_SKILL || bytes > MAX_BYTES_PER_SKILL {
            return Err(invalid(format!(
                "skill {path:?} ({} files, {bytes} bytes) is over the extension's limits of \
                 {MAX_FILES_PER_SKILL} files and {MAX_BYTES_PER_SKILL} bytes",
                mine.len()
            )));
        }
        let mut contents = BTreeMap::new();
        for file in mine {
            let read = fs::read(&file.at)
                .map_err(|err| invalid(format!("{}: {err}", file.at.display())))?;
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
