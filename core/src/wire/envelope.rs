//! The hot path's reader: one well-formed message's members straight into typed fields, in one
//! pass, with a `tools/call`'s name and arguments taken apart on the way.

use std::borrow::Cow;

use serde::de::{IgnoredAny, MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::{Map, Value};

use super::RequestId;
use super::message::{Frame, Parsed, Parts, PlainCall, classify};

/// One message's members, read in one pass. Anything unexpected (a member of the wrong type,
/// a repeated member, a call's `params` that is not an object) fails this read, and the slow
/// path, which reads the frame as a tree, says what is wrong.
pub(super) struct Envelope<'a> {
    jsonrpc: bool,
    id: Option<Value>,
    method: Option<Cow<'a, str>>,
    params: Option<Params>,
    result: Option<Value>,
    error: Option<Value>,
}

/// `params` as read: a tree, or, after `"method":"tools/call"`, a call's members apart.
enum Params {
    Tree(Value),
    Call(CallMembers),
}

/// A call's `params` members; `rest` holds any other (a repeated one too: the last one wins,
/// as in a tree).
#[derive(Default)]
pub(super) struct CallMembers {
    pub(super) name: Option<Value>,
    pub(super) arguments: Option<Value>,
    pub(super) meta: Option<Value>,
    pub(super) rest: Map<String, Value>,
}

impl CallMembers {
    /// A string `name`, `arguments` absent, `null` or an object, and nothing else.
    fn are_plain(&self) -> bool {
        matches!(self.name, Some(Value::String(_)))
            && matches!(self.arguments, None | Some(Value::Null | Value::Object(_)))
            && self.rest.is_empty()
    }

    pub(super) fn into_tree(self) -> Value {
        let mut tree = Map::new();
        let known = [
            ("name", self.name),
            ("arguments", self.arguments),
            ("_meta", self.meta),
        ];
        for (key, value) in known {
            if let Some(value) = value {
                tree.insert(key.to_owned(), value);
            }
        }
        tree.extend(self.rest);
        Value::Object(tree)
    }
}

impl<'a> Envelope<'a> {
    /// The message as a [`PlainCall`] when it is one, else classified as any other.
    pub(super) fn into_parsed(self) -> Parsed {
        let plain = self.jsonrpc
            && self.method.as_deref() == Some("tools/call")
            && self.result.is_none()
            && self.error.is_none()
            && matches!(&self.params, Some(Params::Call(members)) if members.are_plain());
        let id = match &self.id {
            Some(id) if plain => RequestId::from_json(id),
            _ => None,
        };
        match (id, self.params) {
            (
                Some(id),
                Some(Params::Call(CallMembers {
                    name: Some(Value::String(name)),
                    arguments,
                    meta,
                    ..
                })),
            ) => Parsed::Call(PlainCall {
                id,
                name,
                arguments,
                meta,
            }),
            (_, params) => {
                let message = Envelope { params, ..self };
                Parsed::Frame(Frame::Single(classify(message.into_parts())))
            }
        }
    }

    fn into_parts(self) -> Parts {
        Parts {
            jsonrpc_ok: self.jsonrpc,
            id: self.id,
            method: self.method.map(|m| Ok(m.into_owned())),
            params: self.params.map(|params| match params {
                Params::Tree(tree) => tree,
                Params::Call(members) => members.into_tree(),
            }),
            result: self.result,
            error: self.error,
        }
    }
}

impl<'de> Deserialize<'de> for Envelope<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(EnvelopeVisitor)
    }
}

#[derive(Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Id,
    Method,
    Params,
    Result,
    Error,
    #[serde(other)]
    Other,
}

struct EnvelopeVisitor;

impl<'de> Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope<'de>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Envelope<'de>, A::Error> {
        fn once<T, E: serde::de::Error>(
            slot: &mut Option<T>,
            value: T,
            name: &'static str,
        ) -> Result<(), E> {
            if slot.replace(value).is_some() {
                return Err(E::duplicate_field(name));
            }
            Ok(())
        }
        let mut jsonrpc = None;
        let mut envelope = Envelope {
            jsonrpc: false,
            id: None,
            method: None,
            params: None,
            result: None,
            error: None,
        };
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Jsonrpc => once(&mut jsonrpc, map.next_value::<Version2>()?.0, "jsonrpc")?,
                Member::Id => once(&mut envelope.id, map.next_value()?, "id")?,
                Member::Method => {
                    once(
                        &mut envelope.method,
                        map.next_value::<Text<'de>>()?.0,
                        "method",
                    )?;
                }
                Member::Params => {
                    let params = if envelope.method.as_deref() == Some("tools/call") {
                        Params::Call(map.next_value()?)
                    } else {
                        Params::Tree(map.next_value()?)
                    };
                    once(&mut envelope.params, params, "params")?;
                }
                Member::Result => once(&mut envelope.result, map.next_value()?, "result")?,
                Member::Error => once(&mut envelope.error, map.next_value()?, "error")?,
                Member::Other => {
                    map.next_value::<IgnoredAny>()?;
                }
            }
        }
        envelope.jsonrpc = jsonrpc.unwrap_or(false);
        Ok(envelope)
    }
}

impl<'de> Deserialize<'de> for CallMembers {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = CallMembers;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<CallMembers, A::Error> {
                let mut members = CallMembers::default();
                while let Some(Text(key)) = map.next_key::<Text<'de>>()? {
                    let slot = match key.as_ref() {
                        "name" => &mut members.name,
                        "arguments" => &mut members.arguments,
                        "_meta" => &mut members.meta,
                        _ => {
                            members.rest.insert(key.into_owned(), map.next_value()?);
                            continue;
                        }
                    };
                    let value = map.next_value()?;
                    if slot.is_some() {
                        members.rest.insert(key.into_owned(), value);
                    } else {
                        *slot = Some(value);
                    }
                }
                Ok(members)
            }
        }
        deserializer.deserialize_map(Members)
    }
}

/// Whether `jsonrpc` is "2.0", read without copying it.
struct Version2(bool);

impl<'de> Deserialize<'de> for Version2 {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Check;
        impl Visitor<'_> for Check {
            type Value = Version2;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Version2, E> {
                Ok(Version2(text == "2.0"))
            }
        }
        deserializer.deserialize_str(Check)
    }
}

/// A string borrowed from the frame when it has no escapes (serde's `Cow<str>` always copies).
struct Text<'a>(Cow<'a, str>);

impl<'de> Deserialize<'de> for Text<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Borrowing;
        impl<'de> Visitor<'de> for Borrowing {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a string")
            }
            fn visit_borrowed_str<E: serde::de::Error>(
                self,
                text: &'de str,
            ) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Borrowed(text)))
            }
            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(text.to_owned())))
            }
            fn visit_string<E: serde::de::Error>(self, text: String) -> Result<Text<'de>, E> {
                Ok(Text(Cow::Owned(text)))
            }
        }
        deserializer.deserialize_str(Borrowing)
    }
}
