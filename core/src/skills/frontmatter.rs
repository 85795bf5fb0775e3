//! A SKILL.md's YAML frontmatter, as JSON, and the Agent Skills rules for its `name` and
//! `description`.

use serde_json::{Map, Number, Value};
use yaml_rust2::{Yaml, YamlLoader};

/// What the Agent Skills specification allows a description to be, in characters.
const MAX_DESCRIPTION_CHARS: usize = 1024;
/// Nesting a frontmatter may have: deep enough for any real one, bounded for a hostile one.
const MAX_DEPTH: usize = 32;
/// The most a frontmatter may hold, in bytes: far beyond a real one (a few hundred).
const MAX_FRONTMATTER_BYTES: usize = 64 * 1024;

/// The frontmatter of `skill_md`: the YAML between its opening `---` line and the next `---`
/// line, as a JSON object, with `name` and `description` checked.
pub(crate) fn parse(skill_md: &[u8]) -> Result<Map<String, Value>, String> {
    let text = std::str::from_utf8(skill_md).map_err(|_| "SKILL.md is not UTF-8".to_owned())?;
    let yaml = block(text).ok_or(
        "SKILL.md must begin with YAML frontmatter between two `---` lines (name, description)",
    )?;
    if yaml.len() > MAX_FRONTMATTER_BYTES {
        return Err(format!(
            "SKILL.md's frontmatter is over {MAX_FRONTMATTER_BYTES} bytes"
        ));
    }
    refuse_aliases(yaml)?;
    let documents =
        YamlLoader::load_from_str(yaml).map_err(|err| format!("SKILL.md's frontmatter: {err}"))?;
    let frontmatter = match documents.into_iter().next() {
        Some(Yaml::Hash(hash)) => to_json(Yaml::Hash(hash), 0)?,
        _ => return Err("SKILL.md's frontmatter must be a YAML mapping".into()),
    };
    let Value::Object(frontmatter) = frontmatter else {
        return Err("SKILL.md's frontmatter must be a YAML mapping".into());
    };
    let name = frontmatter.get("name").and_then(Value::as_str);
    let Some(name) = name.filter(|n| !n.is_empty()) else {
        return Err("SKILL.md's frontmatter needs a `name` (a string)".into());
    };
    check_name(name)?;
    let description = frontmatter.get("description").and_then(Value::as_str);
    let Some(description) = description.filter(|d| !d.trim().is_empty()) else {
        return Err("SKILL.md's frontmatter needs a `description` (a non-empty string)".into());
    };
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "SKILL.md's `description` is longer than {MAX_DESCRIPTION_CHARS} characters"
        ));
    }
    Ok(frontmatter)
}

/// The Agent Skills naming rule: 1–64 of `a-z`, `0-9` and `-`, no hyphen first, last or doubled.
pub(crate) fn check_name(name: &str) -> Result<(), String> {
    let allowed = name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if name.is_empty()
        || name.len() > 64
        || !allowed
        || name.starts_with('-')
        || name.ends_with('-')
        || name.contains("--")
    {
        return Err(format!(
            "skill name {name:?} must be 1-64 lowercase letters, digits and hyphens, with no \
             hyphen at either end and none doubled"
        ));
    }
    Ok(())
}

/// Refuses YAML aliases before the document is built: the loader copies an alias's node each
/// time, so a few hundred bytes of nested aliases would build billions of nodes. A frontmatter
/// has no use for them.
fn refuse_aliases(yaml: &str) -> Result<(), String> {
    let mut parser = yaml_rust2::parser::Parser::new_from_str(yaml);
    loop {
        match parser.next_token() {
            Ok((yaml_rust2::parser::Event::StreamEnd, _)) => return Ok(()),
            Ok((yaml_rust2::parser::Event::Alias(_), _)) => {
                return Err("SKILL.md's frontmatter uses a YAML alias (*name): not allowed".into());
            }
            Ok(_) => {}
            Err(err) => return Err(format!("SKILL.md's frontmatter: {err}")),
        }
    }
}

/// The YAML between the opening `---` line and the closing one (a leading BOM allowed).
fn block(text: &str) -> Option<&str> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut at = 0;
    for line in rest.split_inclusive('\n') {
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare
            .strip_prefix("---")
            .is_some_and(|tail| tail.trim_matches([' ', '\t']).is_empty())
        {
            return Some(&rest[..at]);
        }
        at += line.len();
    }
    None
}

/// YAML 1.2 core schema to JSON, as the JavaScript `yaml` package reads it: scalar keys as text.
fn to_json(yaml: Yaml, depth: usize) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "SKILL.md's frontmatter nests deeper than {MAX_DEPTH}"
        ));
    }
    Ok(match yaml {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(text) => match text.parse::<f64>().ok().and_then(Number::from_f64) {
            Some(number) => Value::Number(number),
            // .inf and .nan have no JSON form.
            None => Value::Null,
        },
        Yaml::String(s) => Value::String(s),
        Yaml::Array(items) => Value::Array(
            items
                .into_iter()
                .map(|item| to_json(item, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Yaml::Hash(hash) => {
            let mut map = Map::new();
            for (key, value) in hash {
                let key = match key {
                    Yaml::String(s) => s,
                    Yaml::Integer(i) => i.to_string(),
                    Yaml::Real(r) => r,
                    Yaml::Boolean(b) => b.to_string(),
                    Yaml::Null => String::new(),
                    _ => return Err("SKILL.md's frontmatter has a key that is not text".into()),
                };
                map.insert(key, to_json(value, depth + 1)?);
            }
            Value::Object(map)
        }
        Yaml::Alias(_) | Yaml::BadValue => {
            return Err("SKILL.md's frontmatter has a value YAML cannot read".into());
        }
    })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{check_name, parse};

    #[test]
    fn the_frontmatter_reads_as_the_yaml_core_schema() {
        let md = "---\nname: pdf-tools\ndescription: \"Fill PDFs: forms\"\nversion: 1.0\n\
                  metadata:\n  owner: docs\nallowed-tools: Read Bash\n---\n# Body\n";
        let frontmatter = parse(md.as_bytes()).expect("valid");
        assert_eq!(
            serde_json::Value::Object(frontmatter),
            json!({"name": "pdf-tools", "description": "Fill PDFs: forms", "version": 1.0,
                   "metadata": {"owner": "docs"}, "allowed-tools": "Read Bash"})
        );
        // A BOM, CRLF lines and a closing line with trailing blanks.
        let crlf = "\u{feff}---\r\nname: a\r\ndescription: b\r\n--- \r\nbody";
        assert_eq!(parse(crlf.as_bytes()).expect("valid")["name"], "a");
    }

    #[test]
    fn a_skill_md_without_what_the_spec_requires_is_refused_by_name() {
        let cases = [
            ("# no frontmatter", "must begin with YAML frontmatter"),
            (
                "---\nname: a\ndescription: b\n",
                "must begin with YAML frontmatter",
            ),
            ("---\n- a\n---\n", "must be a YAML mapping"),
            ("---\ndescription: b\n---\n", "needs a `name`"),
            ("---\nname: a\n---\n", "needs a `description`"),
            (
                "---\nname: Bad_Name\ndescription: b\n---\n",
                "lowercase letters",
            ),
            ("---\nname: a\ndescription: [b\n---\n", "frontmatter"),
        ];
        for (md, expected) in cases {
            let err = parse(md.as_bytes()).expect_err(md);
            assert!(err.contains(expected), "{md:?}: {err}");
        }
        // An alias bomb: a few hundred bytes that would expand to a billion nodes.
        let mut bomb =
            String::from("---\nname: a\ndescription: b\nl0: &l0 [x, x, x, x, x, x, x, x, x, x]\n");
        for level in 1..9 {
            let previous = format!("*l{}", level - 1);
            let items = [previous.as_str(); 10].join(", ");
            bomb.push_str(&format!("l{level}: &l{level} [{items}]\n"));
        }
        bomb.push_str("---\n");
        assert!(
            parse(bomb.as_bytes())
                .expect_err("aliases")
                .contains("alias")
        );
        let long = format!("---\nname: a\ndescription: {}\n---\n", "x".repeat(1025));
        assert!(parse(long.as_bytes()).is_err());
        assert!(
            parse(&[0xff, 0xfe])
                .expect_err("not UTF-8")
                .contains("UTF-8")
        );
    }

    #[test]
    fn names_follow_the_agent_skills_rule() {
        for good in ["a", "pdf-processing", "v2", &"a".repeat(64)] {
            assert!(check_name(good).is_ok(), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "A", "a_b", "a.b", &"a".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad}");
        }
    }
}
