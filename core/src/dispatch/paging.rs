//! Paging of the list methods: one page of a sorted list, and the opaque cursor that names
//! where the next page starts.

use std::collections::{BTreeMap, HashSet};
use std::ops::Bound;

use serde_json::Value;

use crate::wire::ErrorObject;

/// Appends one page of a list sorted by key to `json`, as the JSON text of
/// `{"<key>": [...], "nextCursor"?}`, leaving out the keys in `hidden`; `render` appends one
/// item's JSON. A bad cursor is refused before anything is written.
pub(crate) fn write_page<V>(
    json: &mut String,
    items: &BTreeMap<String, V>,
    params: Option<&Value>,
    page_size: Option<usize>,
    list_key: &str,
    hidden: &HashSet<String>,
    render: impl Fn(&V, &mut String),
) -> Result<(), ErrorObject> {
    let after = match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => None,
        Some(Value::String(cursor)) => Some(
            decode_cursor(cursor)
                .ok_or_else(|| ErrorObject::invalid_params("Invalid params: invalid cursor"))?,
        ),
        Some(_) => {
            return Err(ErrorObject::invalid_params(
                "Invalid params: \"cursor\" must be a string",
            ));
        }
    };
    let lower = match &after {
        Some(after) => Bound::Excluded(after.as_str()),
        None => Bound::Unbounded,
    };
    let mut page = items
        .range::<str, _>((lower, Bound::Unbounded))
        .filter(|(key, _)| hidden.is_empty() || !hidden.contains(*key));
    json.push_str("{\"");
    json.push_str(list_key);
    json.push_str("\":[");
    let mut last = None;
    for (index, (key, item)) in page
        .by_ref()
        .take(page_size.unwrap_or(usize::MAX))
        .enumerate()
    {
        if index > 0 {
            json.push(',');
        }
        render(item, json);
        last = Some(key.as_str());
    }
    json.push(']');
    if let Some(last) = last
        && page.next().is_some()
    {
        json.push_str(r#","nextCursor":"#);
        json.push_str(&Value::from(encode_cursor(last)).to_string());
    }
    json.push('}');
    Ok(())
}

const CURSOR_PREFIX: &str = "tw1.";

fn encode_cursor(after: &str) -> String {
    let mut cursor = String::with_capacity(CURSOR_PREFIX.len() + after.len() * 2);
    cursor.push_str(CURSOR_PREFIX);
    crate::wire::push_hex(&mut cursor, after.as_bytes());
    cursor
}

fn decode_cursor(cursor: &str) -> Option<String> {
    let hex = cursor.strip_prefix(CURSOR_PREFIX)?;
    if hex.len() % 2 != 0 {
        return None;
    }
    let bytes = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(hex.get(i..i + 2)?, 16).ok())
        .collect::<Option<Vec<u8>>>()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursors_round_trip() {
        for name in ["a", "admin.tools.list", "ünï"] {
            assert_eq!(decode_cursor(&encode_cursor(name)).as_deref(), Some(name));
        }
        assert_eq!(decode_cursor("garbage"), None);
        assert_eq!(decode_cursor("tw1.f"), None);
        assert_eq!(decode_cursor("tw1.zz"), None);
    }
}
