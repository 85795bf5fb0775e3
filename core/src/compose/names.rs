//! How a mount's items are named here: `{prefix}_{name}` for tools and prompts, the prefix as
//! the URI's first path segment for resources (`docs://readme` → `docs://weather/readme`).

use crate::error::Error;

/// A checked prefix.
pub(super) struct Prefix(String);

/// The longest prefix: names stay within what clients show.
const LONGEST_PREFIX: usize = 64;

impl Prefix {
    pub(super) fn new(prefix: &str) -> Result<Prefix, Error> {
        let fine = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if prefix.is_empty() || prefix.len() > LONGEST_PREFIX || !prefix.chars().all(fine) {
            return Err(Error::InvalidArgument(format!(
                "a mount's prefix is 1 to {LONGEST_PREFIX} letters, digits, '-' or '_', not {prefix:?}"
            )));
        }
        Ok(Prefix(prefix.to_owned()))
    }

    pub(super) fn as_str(&self) -> &str {
        &self.0
    }

    /// A tool's or prompt's name here.
    pub(super) fn name(&self, name: &str) -> String {
        format!("{}_{name}", self.0)
    }

    /// A resource's URI (or a template's) here: the prefix after `scheme://` (or `scheme:`).
    pub(super) fn uri(&self, uri: &str) -> String {
        match split_scheme(uri) {
            Some((scheme, rest)) => format!("{scheme}{}/{rest}", self.0),
            None => format!("{}/{uri}", self.0),
        }
    }
}

/// The upstream's URI for one shown here, if it is one of this prefix's.
pub(super) fn unprefixed_uri(prefix: &Prefix, uri: &str) -> Option<String> {
    let wanted = format!("{}/", prefix.0);
    match split_scheme(uri) {
        Some((scheme, rest)) => rest
            .strip_prefix(&wanted)
            .map(|rest| format!("{scheme}{rest}")),
        None => uri.strip_prefix(&wanted).map(str::to_owned),
    }
}

/// `("scheme://", rest)` or `("scheme:", rest)`; none for a URI without a scheme.
fn split_scheme(uri: &str) -> Option<(&str, &str)> {
    let colon = uri.find(':')?;
    let scheme = &uri[..colon];
    let valid = scheme
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !valid {
        return None;
    }
    let end = if uri[colon..].starts_with("://") {
        colon + 3
    } else {
        colon + 1
    };
    Some((&uri[..end], &uri[end..]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uris_take_the_prefix_and_give_it_back() {
        let prefix = Prefix::new("weather").expect("a prefix");
        for (uri, shown) in [
            ("docs://readme", "docs://weather/readme"),
            ("file:///tmp/a.txt", "file://weather//tmp/a.txt"),
            ("urn:isbn:123", "urn:weather/isbn:123"),
            ("data://{city}/today", "data://weather/{city}/today"),
            ("plain", "weather/plain"),
        ] {
            assert_eq!(prefix.uri(uri), shown);
            assert_eq!(unprefixed_uri(&prefix, shown).as_deref(), Some(uri));
        }
        assert_eq!(unprefixed_uri(&prefix, "docs://other/readme"), None);
        assert_eq!(prefix.name("forecast"), "weather_forecast");
    }

    #[test]
    fn a_prefix_that_would_break_names_is_refused() {
        for bad in ["", "a b", "a/b", "é", &"x".repeat(65)] {
            assert!(Prefix::new(bad).is_err(), "{bad:?}");
        }
        assert!(Prefix::new("my-server_2").is_ok());
    }
}
