use std::fmt;

/// An MCP protocol revision this engine speaks.
///
/// The first four are the legacy era, negotiated once by `initialize`; 2026-07-28 is the
/// modern era, where each request names its version in `_meta` and nothing is negotiated.
/// Every version-dependent behaviour is a method here, so no version comparison is
/// scattered through the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum ProtocolVersion {
    /// 2024-11-05, the first public revision.
    V2024_11_05,
    /// 2025-03-26: batching, tool annotations, audio content.
    V2025_03_26,
    /// 2025-06-18: structured output, elicitation, titles; batching removed.
    V2025_06_18,
    /// 2025-11-25: icons, URL elicitation, JSON Schema 2020-12 by default.
    V2025_11_25,
    /// 2026-07-28: stateless requests, `server/discover`, `resultType`, MRTR,
    /// `subscriptions/listen`, per-request log levels.
    V2026_07_28,
}

impl ProtocolVersion {
    /// Every supported revision, oldest first.
    pub const ALL: [ProtocolVersion; 5] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
        ProtocolVersion::V2026_07_28,
    ];

    /// The revisions `initialize` negotiates (the legacy era), oldest first.
    pub const HANDSHAKE: [ProtocolVersion; 4] = [
        ProtocolVersion::V2024_11_05,
        ProtocolVersion::V2025_03_26,
        ProtocolVersion::V2025_06_18,
        ProtocolVersion::V2025_11_25,
    ];

    /// The revisions a request may name in its `_meta` (the modern era), newest first.
    pub const STATELESS: [ProtocolVersion; 1] = [ProtocolVersion::V2026_07_28];

    /// The newest handshake revision: the answer to an `initialize` asking for one we lack.
    pub const LATEST: ProtocolVersion = ProtocolVersion::V2025_11_25;

    /// Parses a revision string such as `"2025-06-18"`.
    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == text)
    }

    /// Parses a revision `initialize` can negotiate.
    pub fn parse_handshake(text: &str) -> Option<Self> {
        Self::parse(text).filter(|v| !v.is_stateless())
    }

    /// Whether this revision is the modern era's: no handshake, no session.
    pub fn is_stateless(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// Position in [`ALL`](Self::ALL), for per-version tables.
    pub fn index(self) -> usize {
        self as usize
    }

    /// The revision string.
    pub fn as_str(self) -> &'static str {
        match self {
            ProtocolVersion::V2024_11_05 => "2024-11-05",
            ProtocolVersion::V2025_03_26 => "2025-03-26",
            ProtocolVersion::V2025_06_18 => "2025-06-18",
            ProtocolVersion::V2025_11_25 => "2025-11-25",
            ProtocolVersion::V2026_07_28 => "2026-07-28",
        }
    }

    /// JSON-RPC batches are accepted (only 2025-03-26).
    pub fn allows_batches(self) -> bool {
        self == ProtocolVersion::V2025_03_26
    }

    /// `structuredContent` and `outputSchema` exist.
    pub fn has_structured_output(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// `outputSchema` may be any JSON Schema and `structuredContent` any JSON value
    /// (earlier revisions: an object schema, an object).
    pub fn has_any_structured_value(self) -> bool {
        self >= ProtocolVersion::V2026_07_28
    }

    /// Tool `annotations` exist.
    pub fn has_tool_annotations(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// `title` fields exist on tools, prompts, resources and implementations.
    pub fn has_titles(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// `icons` exist.
    pub fn has_icons(self) -> bool {
        self >= ProtocolVersion::V2025_11_25
    }

    /// Audio content blocks exist.
    pub fn has_audio(self) -> bool {
        self >= ProtocolVersion::V2025_03_26
    }

    /// `resource_link` content blocks exist.
    pub fn has_resource_links(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }

    /// The server may send `elicitation/create`.
    pub fn has_elicitation(self) -> bool {
        self >= ProtocolVersion::V2025_06_18
    }
}

impl fmt::Display for ProtocolVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_round_trips() {
        for v in ProtocolVersion::ALL {
            assert_eq!(ProtocolVersion::parse(v.as_str()), Some(v));
        }
        assert_eq!(ProtocolVersion::parse("2099-01-01"), None);
        assert!(ProtocolVersion::V2025_03_26.allows_batches());
        assert!(!ProtocolVersion::V2025_06_18.allows_batches());
        assert_eq!(ProtocolVersion::parse_handshake("2026-07-28"), None);
        assert!(ProtocolVersion::HANDSHAKE.iter().all(|v| !v.is_stateless()));
        assert!(ProtocolVersion::STATELESS.iter().all(|v| v.is_stateless()));
    }
}
