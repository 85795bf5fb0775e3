//! `Host` and `Origin` checks against DNS rebinding and cross-site requests.

const LOOPBACK_NAMES: [&str; 3] = ["localhost", "127.0.0.1", "[::1]"];

enum Rule {
    Any,
    Loopback,
    List(Vec<String>),
}

pub(crate) struct Guard {
    hosts: Rule,
    origins: Rule,
}

impl Guard {
    pub(crate) fn new(
        allowed_hosts: &[String],
        allowed_origins: &[String],
        loopback: bool,
    ) -> Self {
        let list = |values: &[String]| {
            values
                .iter()
                .map(|v| v.trim_end_matches('/').to_ascii_lowercase())
                .collect::<Vec<_>>()
        };
        let hosts = if !allowed_hosts.is_empty() {
            Rule::List(list(allowed_hosts))
        } else if loopback {
            Rule::Loopback
        } else {
            Rule::Any
        };
        let origins = if !allowed_origins.is_empty() {
            Rule::List(list(allowed_origins))
        } else if loopback {
            Rule::Loopback
        } else {
            Rule::List(Vec::new())
        };
        Guard { hosts, origins }
    }

    /// Whether a request with this `Host` header may be served (HTTP/1.1 requires one).
    pub(crate) fn host_allowed(&self, host: Option<&str>) -> bool {
        let Some(host) = host else {
            return matches!(self.hosts, Rule::Any);
        };
        let host = host.trim();
        let name = strip_port(host);
        // Names are compared without case, and without building a lowercase copy per request.
        match &self.hosts {
            Rule::Any => true,
            Rule::Loopback => LOOPBACK_NAMES.iter().any(|n| n.eq_ignore_ascii_case(name)),
            Rule::List(allowed) => allowed
                .iter()
                .any(|a| a.eq_ignore_ascii_case(host) || a.eq_ignore_ascii_case(name)),
        }
    }

    /// Whether a request with this `Origin` header may be served (none: not a browser).
    pub(crate) fn origin_allowed(&self, origin: Option<&str>) -> bool {
        let Some(origin) = origin else {
            return true;
        };
        let origin = origin.trim().trim_end_matches('/').to_ascii_lowercase();
        match &self.origins {
            Rule::Any => true,
            Rule::Loopback => {
                let Some((scheme, rest)) = origin.split_once("://") else {
                    return false;
                };
                matches!(scheme, "http" | "https") && LOOPBACK_NAMES.contains(&strip_port(rest))
            }
            Rule::List(allowed) => allowed.contains(&origin),
        }
    }
}

/// `name:port` → `name`; `[v6]:port` → `[v6]`.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return match host.find(']') {
            Some(end) => &host[..=end],
            None => host,
        };
    }
    match host.rsplit_once(':') {
        Some((name, port)) if port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_rules() {
        let guard = Guard::new(&[], &[], true);
        for host in ["localhost", "127.0.0.1:8080", "[::1]:3000", "LOCALHOST:1"] {
            assert!(guard.host_allowed(Some(host)), "{host}");
        }
        for host in [
            "evil.example.com",
            "evil.example.com:80",
            "127.0.0.1.evil.com",
            "localhost.evil",
        ] {
            assert!(!guard.host_allowed(Some(host)), "{host}");
        }
        assert!(!guard.host_allowed(None));
        assert!(guard.origin_allowed(None));
        assert!(guard.origin_allowed(Some("http://localhost:5173")));
        assert!(guard.origin_allowed(Some("http://[::1]:1")));
        assert!(!guard.origin_allowed(Some("http://evil.example.com")));
        assert!(!guard.origin_allowed(Some("null")));
        assert!(!guard.origin_allowed(Some("file://localhost")));
    }

    #[test]
    fn explicit_lists() {
        let guard = Guard::new(
            &["mcp.example.com".into()],
            &["https://app.example.com/".into()],
            false,
        );
        assert!(guard.host_allowed(Some("mcp.example.com:443")));
        assert!(!guard.host_allowed(Some("localhost")));
        assert!(guard.origin_allowed(Some("https://APP.example.com")));
        assert!(!guard.origin_allowed(Some("http://app.example.com")));
        let open = Guard::new(&[], &[], false);
        assert!(open.host_allowed(Some("anything")));
        assert!(!open.origin_allowed(Some("https://app.example.com")));
    }
}
