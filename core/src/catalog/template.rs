//! Matching URIs against RFC 6570 templates of the two forms resource templates use:
//! `{var}` (one or more characters up to the next `/`, `?` or `#`) and `{+var}` (anything).

use std::collections::BTreeMap;

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Var { name: String, reserved: bool },
}

#[derive(Debug, Clone)]
pub(crate) struct UriPattern {
    parts: Vec<Part>,
}

impl UriPattern {
    pub(crate) fn parse(template: &str) -> Result<Self, String> {
        let mut parts = Vec::new();
        let mut rest = template;
        while let Some(open) = rest.find('{') {
            if open > 0 {
                parts.push(Part::Literal(rest[..open].to_owned()));
            }
            let close = rest[open..].find('}').ok_or("an unclosed '{'")? + open;
            let expression = &rest[open + 1..close];
            let (reserved, name) = match expression.strip_prefix('+') {
                Some(name) => (true, name),
                None => (false, expression),
            };
            if name.is_empty()
                || !name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '.')
            {
                return Err(format!(
                    "unsupported expression {{{expression}}} (use {{name}} or {{+name}})"
                ));
            }
            if matches!(parts.last(), Some(Part::Var { .. })) {
                return Err("two variables must be separated by text".into());
            }
            parts.push(Part::Var {
                name: name.to_owned(),
                reserved,
            });
            rest = &rest[close + 1..];
        }
        if rest.contains('}') {
            return Err("a '}' without '{'".into());
        }
        if !rest.is_empty() {
            parts.push(Part::Literal(rest.to_owned()));
        }
        Ok(UriPattern { parts })
    }

    /// Whether the template has a variable `name`.
    pub(crate) fn has_variable(&self, name: &str) -> bool {
        self.parts
            .iter()
            .any(|part| matches!(part, Part::Var { name: n, .. } if n == name))
    }

    /// The variables, if `uri` matches.
    pub(crate) fn matches(&self, uri: &str) -> Option<BTreeMap<String, String>> {
        let mut variables = BTreeMap::new();
        let mut rest = uri;
        let mut parts = self.parts.iter().peekable();
        while let Some(part) = parts.next() {
            match part {
                Part::Literal(text) => rest = rest.strip_prefix(text.as_str())?,
                Part::Var { name, reserved } => {
                    let end = match parts.peek() {
                        // The shortest value followed by the next literal.
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        _ => rest.len(),
                    };
                    let value = &rest[..end];
                    if value.is_empty() || (!reserved && value.contains(['/', '?', '#'])) {
                        return None;
                    }
                    variables.insert(name.clone(), value.to_owned());
                    rest = &rest[end..];
                }
            }
        }
        rest.is_empty().then_some(variables)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_simple_and_reserved_variables() {
        let pattern = UriPattern::parse("test://template/{id}/data").unwrap();
        let vars = pattern.matches("test://template/123/data").unwrap();
        assert_eq!(vars["id"], "123");
        assert!(pattern.matches("test://template/1/2/data").is_none());
        assert!(pattern.matches("test://template//data").is_none());
        assert!(pattern.matches("test://template/123/data/x").is_none());
        let files = UriPattern::parse("file:///{+path}").unwrap();
        assert_eq!(files.matches("file:///a/b.txt").unwrap()["path"], "a/b.txt");
        let two = UriPattern::parse("db://{table}/{row}").unwrap();
        let vars = two.matches("db://users/42").unwrap();
        assert_eq!(
            (vars["table"].as_str(), vars["row"].as_str()),
            ("users", "42")
        );
    }

    #[test]
    fn rejects_templates_it_cannot_match() {
        for bad in ["x://{", "x://{a}{b}", "x://{a b}", "x://}", "x://{?q}"] {
            assert!(UriPattern::parse(bad).is_err(), "{bad}");
        }
    }
}
