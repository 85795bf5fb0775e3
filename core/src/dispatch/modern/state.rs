//! `requestState` sealing: the state a handler hands the client between MRTR rounds comes
//! back attacker-controlled, so it travels encrypted and authenticated (XChaCha20-Poly1305),
//! bound to the request that minted it (method, target, a digest of the arguments, the
//! principal) and to an expiry. Anything that does not open is refused the same way.

use std::sync::OnceLock;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chacha20poly1305::aead::{Aead, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use crate::Error;
use crate::wire::{ErrorObject, json_text, push_json_string};

const PREFIX: &str = "tw1.";
const NONCE_LEN: usize = 24;

/// The keys that seal and open `requestState` (2026-07-28 MRTR): the first seals, every one
/// opens, so a key can be rotated in without breaking rounds already under way.
///
/// The default is one random key made at start-up: state then opens only in the process that
/// sealed it, so replicas behind one address, or a restart between two rounds, need keys
/// shared through [`from_secrets`](Self::from_secrets).
#[derive(Clone)]
pub struct StateKeys {
    ciphers: Vec<XChaCha20Poly1305>,
}

impl std::fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "StateKeys({} keys)", self.ciphers.len())
    }
}

impl StateKeys {
    /// Keys derived from secrets (each at least 32 bytes, e.g. 32 random bytes or a
    /// 64-character hex string); the first seals.
    pub fn from_secrets<S: AsRef<[u8]>>(secrets: &[S]) -> Result<Self, Error> {
        if secrets.is_empty() {
            return Err(Error::InvalidArgument(
                "requestState keys: give at least one secret".into(),
            ));
        }
        let mut ciphers = Vec::with_capacity(secrets.len());
        for secret in secrets {
            let secret = secret.as_ref();
            if secret.len() < 32 {
                return Err(Error::InvalidArgument(format!(
                    "requestState keys: a secret of {} bytes is too short; use at least 32",
                    secret.len()
                )));
            }
            let key = Sha256::new()
                .chain_update(b"toolwire requestState key v1\0")
                .chain_update(secret)
                .finalize();
            ciphers.push(XChaCha20Poly1305::new(&key));
        }
        Ok(StateKeys { ciphers })
    }

    /// One key from the OS's random source, for this process alone.
    pub fn ephemeral() -> Result<Self, Error> {
        let mut secret = [0u8; 32];
        getrandom::fill(&mut secret).map_err(|e| {
            Error::InvalidArgument(format!("requestState keys: no secure random source: {e}"))
        })?;
        Self::from_secrets(&[secret])
    }
}

/// What a sealed state binds: the request it belongs to. The digests are made on first use:
/// most requests carry no state and never ask for input, and hashing every call's arguments
/// would cost more than the rest of its way through the engine.
#[derive(Debug)]
pub(crate) struct Binding {
    pub(crate) method: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub(crate) target: String,
    arguments: Value,
    principal: Option<String>,
    digests: OnceLock<(String, Option<String>)>,
}

impl Binding {
    pub(crate) fn new(
        method: &'static str,
        target: &str,
        arguments: &Value,
        principal: Option<&str>,
    ) -> Self {
        Binding {
            method,
            target: target.to_owned(),
            arguments: arguments.clone(),
            principal: principal.map(str::to_owned),
            digests: OnceLock::new(),
        }
    }

    /// Hex SHA-256 of the canonical arguments, and of the principal if any.
    fn digests(&self) -> &(String, Option<String>) {
        self.digests.get_or_init(|| {
            (
                hex_digest(canonical_json(&self.arguments).as_bytes()),
                self.principal.as_deref().map(|p| hex_digest(p.as_bytes())),
            )
        })
    }
}

/// What travels inside: the handler's own state and the answers gathered in earlier rounds.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub(crate) struct Carried {
    #[serde(rename = "u", default, skip_serializing_if = "Option::is_none")]
    pub(crate) user: Option<String>,
    #[serde(rename = "r", default, skip_serializing_if = "Map::is_empty")]
    pub(crate) answers: Map<String, Value>,
}

#[derive(Serialize, Deserialize)]
struct Sealed {
    v: u8,
    exp: u64,
    /// The server that sealed it: replicas sharing keys are one audience, other servers
    /// sharing a secret are not.
    aud: String,
    m: String,
    t: String,
    a: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    p: Option<String>,
    #[serde(flatten)]
    carried: Carried,
}

pub(crate) struct Sealer {
    keys: StateKeys,
    ttl: Duration,
    max_len: usize,
    audience: String,
}

impl Sealer {
    pub(crate) fn new(keys: StateKeys, ttl: Duration, max_len: usize, audience: &str) -> Self {
        Sealer {
            keys,
            ttl,
            max_len,
            audience: audience.to_owned(),
        }
    }

    /// The sealed text; an error if it would exceed the size cap (the handler carried too much).
    pub(crate) fn seal(&self, binding: &Binding, carried: Carried) -> Result<String, ErrorObject> {
        let (arguments, principal) = binding.digests();
        let sealed = Sealed {
            v: 1,
            exp: now_secs().saturating_add(self.ttl.as_secs().max(1)),
            aud: self.audience.clone(),
            m: binding.method.to_owned(),
            t: binding.target.clone(),
            a: arguments.clone(),
            p: principal.clone(),
            carried,
        };
        let plain = serde_json::to_vec(&sealed)
            .map_err(|e| ErrorObject::internal(format!("Internal error: requestState: {e}")))?;
        let mut nonce = [0u8; NONCE_LEN];
        getrandom::fill(&mut nonce).map_err(|_| {
            ErrorObject::internal("Internal error: no secure random source for requestState")
        })?;
        let cipher = &self.keys.ciphers[0];
        let ciphertext = cipher
            .encrypt(XNonce::from_slice(&nonce), plain.as_slice())
            .map_err(|_| ErrorObject::internal("Internal error: sealing requestState failed"))?;
        let mut raw = Vec::with_capacity(NONCE_LEN + ciphertext.len());
        raw.extend_from_slice(&nonce);
        raw.extend_from_slice(&ciphertext);
        let text = format!("{PREFIX}{}", URL_SAFE_NO_PAD.encode(raw));
        if text.len() > self.max_len {
            return Err(ErrorObject::internal(format!(
                "Internal error: the requestState would be {} bytes, over the limit of {}",
                text.len(),
                self.max_len
            )));
        }
        Ok(text)
    }

    /// What `text` carries, if it opens with one of our keys, is unexpired and was sealed for
    /// this very request. Every failure is the same answer to the client; the reason is logged.
    pub(crate) fn open(&self, text: &str, binding: &Binding) -> Result<Carried, ErrorObject> {
        self.try_open(text, binding).map_err(|reason| {
            tracing::debug!(reason, "refused a requestState");
            ErrorObject::invalid_params("Invalid or expired requestState")
        })
    }

    fn try_open(&self, text: &str, binding: &Binding) -> Result<Carried, &'static str> {
        if text.len() > self.max_len {
            return Err("too long");
        }
        let raw = text
            .strip_prefix(PREFIX)
            .and_then(|b64| URL_SAFE_NO_PAD.decode(b64).ok())
            .ok_or("not ours")?;
        if raw.len() <= NONCE_LEN {
            return Err("truncated");
        }
        let (nonce, ciphertext) = raw.split_at(NONCE_LEN);
        let plain = self
            .keys
            .ciphers
            .iter()
            .find_map(|c| c.decrypt(XNonce::from_slice(nonce), ciphertext).ok())
            .ok_or("does not authenticate")?;
        let sealed: Sealed = serde_json::from_slice(&plain).map_err(|_| "unreadable")?;
        if sealed.v != 1 {
            return Err("unknown version");
        }
        if sealed.exp < now_secs() {
            return Err("expired");
        }
        if sealed.aud != self.audience {
            return Err("sealed by another server");
        }
        let (arguments, principal) = binding.digests();
        if sealed.m != binding.method
            || sealed.t != binding.target
            || &sealed.a != arguments
            || &sealed.p != principal
        {
            return Err("sealed for another request");
        }
        Ok(sealed.carried)
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

pub(crate) fn hex_digest(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut text = String::with_capacity(digest.len() * 2);
    for byte in digest {
        text.push(char::from(HEX[usize::from(byte >> 4)]));
        text.push(char::from(HEX[usize::from(byte & 0x0f)]));
    }
    text
}

/// JSON with object keys sorted at every level, so equal values digest equally whatever the
/// order they were sent in.
pub(crate) fn canonical_json(value: &Value) -> String {
    fn write(value: &Value, out: &mut String) {
        match value {
            Value::Object(map) => {
                let mut keys: Vec<&String> = map.keys().collect();
                keys.sort();
                out.push('{');
                for (i, key) in keys.into_iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    push_json_string(out, key);
                    out.push(':');
                    write(&map[key], out);
                }
                out.push('}');
            }
            Value::Array(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    write(item, out);
                }
                out.push(']');
            }
            other => out.push_str(&json_text(other)),
        }
    }
    let mut out = String::new();
    write(value, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn sealer(keys: StateKeys) -> Sealer {
        Sealer::new(keys, Duration::from_secs(60), 64 * 1024, "server")
    }

    fn binding() -> Binding {
        Binding::new("tools/call", "t", &json!({"b": 1, "a": [2]}), Some("ann"))
    }

    #[test]
    fn a_state_opens_only_for_its_own_request() {
        let sealer = sealer(StateKeys::ephemeral().expect("keys"));
        let carried = Carried {
            user: Some("step-2".into()),
            answers: Map::new(),
        };
        let text = sealer.seal(&binding(), carried.clone()).expect("seal");
        assert_eq!(sealer.open(&text, &binding()).expect("opens"), carried);
        let reordered = Binding::new("tools/call", "t", &json!({"a": [2], "b": 1}), Some("ann"));
        assert!(
            sealer.open(&text, &reordered).is_ok(),
            "key order is not meaning"
        );
        for other in [
            Binding::new("prompts/get", "t", &json!({"b": 1, "a": [2]}), Some("ann")),
            Binding::new("tools/call", "u", &json!({"b": 1, "a": [2]}), Some("ann")),
            Binding::new("tools/call", "t", &json!({"b": 2, "a": [2]}), Some("ann")),
            Binding::new("tools/call", "t", &json!({"b": 1, "a": [2]}), Some("bob")),
            Binding::new("tools/call", "t", &json!({"b": 1, "a": [2]}), None),
        ] {
            assert!(sealer.open(&text, &other).is_err(), "{other:?}");
        }
        let tampered = format!("{text}-TAMPERED");
        let error = sealer.open(&tampered, &binding()).expect_err("tampered");
        assert_eq!(error.code.0, -32602);
        assert_eq!(error.message, "Invalid or expired requestState");
        assert!(sealer.open("plain text", &binding()).is_err());
        assert!(sealer.open("tw1.", &binding()).is_err());
    }

    #[test]
    fn rotation_opens_with_any_key_and_seals_with_the_first() {
        let old = StateKeys::from_secrets(&[[1u8; 32]]).expect("old");
        let ring = StateKeys::from_secrets(&[[2u8; 32], [1u8; 32]]).expect("ring");
        let text = sealer(old.clone())
            .seal(&binding(), Carried::default())
            .expect("seal");
        assert!(sealer(ring.clone()).open(&text, &binding()).is_ok());
        let new = sealer(ring)
            .seal(&binding(), Carried::default())
            .expect("seal");
        assert!(sealer(old).open(&new, &binding()).is_err());
        assert!(StateKeys::from_secrets(&[b"short"]).is_err());
        assert!(StateKeys::from_secrets::<&[u8]>(&[]).is_err());
    }

    #[test]
    fn expired_and_oversized_states_are_refused() {
        let keys = StateKeys::ephemeral().expect("keys");
        let expired = Sealer::new(keys.clone(), Duration::ZERO, 1024, "server");
        // A zero TTL still lives one second; forge an expired one directly instead.
        let sealed = Sealed {
            v: 1,
            exp: now_secs() - 1,
            aud: "server".into(),
            m: "tools/call".into(),
            t: "t".into(),
            a: binding().digests().0.clone(),
            p: binding().digests().1.clone(),
            carried: Carried::default(),
        };
        let nonce = [7u8; NONCE_LEN];
        let ciphertext = keys.ciphers[0]
            .encrypt(
                XNonce::from_slice(&nonce),
                serde_json::to_vec(&sealed).expect("json").as_slice(),
            )
            .expect("encrypt");
        let text = format!(
            "{PREFIX}{}",
            URL_SAFE_NO_PAD.encode([&nonce[..], &ciphertext].concat())
        );
        assert!(expired.open(&text, &binding()).is_err());
        let small = Sealer::new(keys.clone(), Duration::from_secs(60), 64, "server");
        let other = Sealer::new(keys.clone(), Duration::from_secs(60), 1024, "other");
        let mine = Sealer::new(keys, Duration::from_secs(60), 1024, "server")
            .seal(&binding(), Carried::default())
            .expect("seal");
        assert!(
            other.open(&mine, &binding()).is_err(),
            "another server's state"
        );
        let big = Carried {
            user: Some("x".repeat(100)),
            answers: Map::new(),
        };
        assert!(small.seal(&binding(), big).is_err());
    }

    #[test]
    fn canonical_json_sorts_keys_at_every_level() {
        assert_eq!(
            canonical_json(&json!({"b": {"d": 1, "c": [{"f": 0, "e": "x"}]}, "a": null})),
            r#"{"a":null,"b":{"c":[{"e":"x","f":0}],"d":1}}"#
        );
    }
}
