//! `--payloads`: big payloads and the cost of input validation, against a server run with its
//! bench tools (`--bench-tools`; bench/payloads).
//!
//! - `take_text` (a `--payload-bytes` string argument), `give_text` (a text answer of that many
//!   bytes) and `give_structured` (structured content of about that many bytes): one call at a
//!   time, then 8 in flight; MB/s counts the payload's bytes (10^6 bytes a MB), not the
//!   envelope's.
//! - `validate_big` (bench/schemas/big.json) against `validate_small` (a trivial schema that
//!   lets other properties through): both get the same document, so the bytes parsed are the
//!   same and only the schema differs; the difference of the server's CPU per call is what its
//!   validation costs. A document that breaks a pattern deep inside (through two `$ref`s) is
//!   sent once first: whether the server refuses it is reported, not required. With
//!   `--validation-only`, only these phases, twice, the second pass reported.
//!
//! Every answer is checked: lengths, characters, every structured item.

use std::rc::Rc;
use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};

use crate::Plan;
use crate::conn::Conn;
use crate::proc_stats;
use crate::scenarios::{Until, check_call_text, closed_loop, round};

/// Bytes of one `give_structured` item, as every server counts them.
const ITEM_BYTES: u64 = 64;
/// `give_text`'s characters, repeated.
const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
/// Calls in flight in the concurrent phases.
const IN_FLIGHT: usize = 8;
/// Order lines in the validation document (about 13 KB of JSON).
const LINES: usize = 20;

pub async fn stdio(plan: &Plan, payload_bytes: u64) -> Result<Value, String> {
    let conn = Rc::new(Conn::spawn_initialized(&plan.command).await?);
    let mut report = serde_json::Map::new();
    if plan.validation_only {
        // The first pass is thrown away: a JVM is still compiling the validator in it.
        validation(plan, &conn).await?;
        report.insert("validation".into(), validation(plan, &conn).await?);
        report.insert("validation_pass".into(), json!("second of two"));
        return close(conn, report).await;
    }
    report.insert("payload_bytes".into(), json!(payload_bytes));

    // take_text: the argument is built once; the answer is its length.
    let text: String = ALPHABET
        .iter()
        .cycle()
        .take(payload_bytes as usize)
        .map(|&b| b as char)
        .collect();
    let params = Rc::new(json!({"name": "take_text", "arguments": {"text": text}}).to_string());
    let expected = Rc::new(payload_bytes.to_string());
    let take = phases(plan, &conn, payload_bytes, "take_text", move |conn| {
        let (params, expected) = (params.clone(), expected.clone());
        async move {
            let (answer, _, id) = conn.request("tools/call", &params).await?;
            check_call_text(&answer.line, id, Some(&expected))?;
            Ok(answer.line.len())
        }
    })
    .await?;
    report.insert("take_text".into(), take);

    let params =
        Rc::new(json!({"name": "give_text", "arguments": {"bytes": payload_bytes}}).to_string());
    let give = phases(plan, &conn, payload_bytes, "give_text", move |conn| {
        let params = params.clone();
        async move {
            let (answer, _, id) = conn.request("tools/call", &params).await?;
            check_text_answer(&answer.line, id, payload_bytes)?;
            Ok(answer.line.len())
        }
    })
    .await?;
    report.insert("give_text".into(), give);

    let params = Rc::new(
        json!({"name": "give_structured", "arguments": {"bytes": payload_bytes}}).to_string(),
    );
    let structured = phases(plan, &conn, payload_bytes, "give_structured", move |conn| {
        let params = params.clone();
        async move {
            let (answer, _, id) = conn.request("tools/call", &params).await?;
            check_structured_answer(&answer.line, id, payload_bytes / ITEM_BYTES)?;
            Ok(answer.line.len())
        }
    })
    .await?;
    report.insert("give_structured".into(), structured);

    report.insert("validation".into(), validation(plan, &conn).await?);
    close(conn, report).await
}

async fn close(conn: Rc<Conn>, report: serde_json::Map<String, Value>) -> Result<Value, String> {
    let conn = Rc::try_unwrap(conn).map_err(|_| "connection still shared")?;
    conn.close().await?;
    Ok(Value::Object(report))
}

/// Warm-up (a quarter phase, at least two calls), then one call at a time and `IN_FLIGHT` at
/// once, each for a phase. `call` returns the answer's size on the wire.
async fn phases<F, Fut>(
    plan: &Plan,
    conn: &Rc<Conn>,
    payload_bytes: u64,
    name: &str,
    call: F,
) -> Result<Value, String>
where
    F: Fn(Rc<Conn>) -> Fut + Clone + 'static,
    Fut: Future<Output = Result<usize, String>> + 'static,
{
    let answer_bytes = call(conn.clone()).await?;
    closed_loop(1, Until::Elapsed(plan.phase / 4), {
        let (conn, call) = (conn.clone(), call.clone());
        move |_| {
            let fut = call(conn.clone());
            async move { fut.await.map(|_| ()) }
        }
    })
    .await?;
    let mut out = serde_json::Map::new();
    out.insert("answer_bytes".into(), json!(answer_bytes));
    for (label, workers) in [("sequential", 1), ("in_flight", IN_FLIGHT)] {
        let before = proc_stats::cpu_time(conn.pid);
        plan.announce(&format!("{name} {label}"), "started");
        let (calls, elapsed) = closed_loop(workers, Until::Elapsed(plan.phase), {
            let (conn, call) = (conn.clone(), call.clone());
            move |_| {
                let fut = call(conn.clone());
                async move { fut.await.map(|_| ()) }
            }
        })
        .await?;
        plan.announce(&format!("{name} {label}"), "ended");
        let after = proc_stats::cpu_time(conn.pid);
        out.insert(
            label.into(),
            summary(calls, elapsed, payload_bytes, before, after, workers),
        );
    }
    Ok(Value::Object(out))
}

fn summary(
    calls: u64,
    elapsed: Duration,
    payload_bytes: u64,
    before: Option<Duration>,
    after: Option<Duration>,
    workers: usize,
) -> Value {
    let seconds = elapsed.as_secs_f64();
    json!({
        "in_flight": workers,
        "calls": calls,
        "calls_per_s": round(calls as f64 / seconds, 1),
        "mb_per_s": round((calls * payload_bytes) as f64 / seconds / 1e6, 1),
        "server_cpu_us_per_call": round(proc_stats::cpu_us_per(before, after, calls), 1),
    })
}

#[derive(Deserialize)]
struct Reply<R> {
    id: u64,
    result: Option<R>,
}

fn reply<'a, R: Deserialize<'a>>(line: &'a [u8], id: u64) -> Result<R, String> {
    let head = || String::from_utf8_lossy(&line[..line.len().min(300)]).into_owned();
    let parsed: Reply<R> = serde_json::from_slice(line).map_err(|e| format!("{e}: {}", head()))?;
    if parsed.id != id {
        return Err(format!("expected id {id}: {}", head()));
    }
    parsed
        .result
        .ok_or_else(|| format!("an error instead of a result: {}", head()))
}

#[derive(Deserialize)]
struct TextResult<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(rename = "isError", default)]
    is_error: Option<bool>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(borrow)]
    text: Option<std::borrow::Cow<'a, str>>,
}

/// `give_text`: one text of `bytes` bytes, the alphabet repeated.
fn check_text_answer(line: &[u8], id: u64, bytes: u64) -> Result<(), String> {
    let result: TextResult<'_> = reply(line, id)?;
    if result.is_error == Some(true) {
        return Err("give_text: an isError result".into());
    }
    let text = result
        .content
        .first()
        .and_then(|b| b.text.as_deref())
        .ok_or("give_text: no text block")?;
    let right = text.len() as u64 == bytes
        && text
            .bytes()
            .zip(ALPHABET.iter().cycle())
            .all(|(got, want)| got == *want);
    if !right {
        return Err(format!(
            "give_text: expected {bytes} bytes of the alphabet, got {} bytes",
            text.len()
        ));
    }
    Ok(())
}

#[derive(Deserialize)]
struct StructuredResult<'a> {
    #[serde(borrow)]
    content: Vec<Block<'a>>,
    #[serde(rename = "structuredContent")]
    structured: Items<'a>,
}

#[derive(Deserialize)]
struct Items<'a> {
    #[serde(borrow)]
    items: Vec<Item<'a>>,
}

#[derive(Deserialize)]
struct Item<'a> {
    id: u64,
    #[serde(borrow)]
    name: std::borrow::Cow<'a, str>,
    #[serde(borrow)]
    tags: Vec<std::borrow::Cow<'a, str>>,
}

/// `give_structured`: `count` items, each right, and a text block (the JSON text for older
/// clients: its spacing is each server's own, so only its presence and size are checked).
fn check_structured_answer(line: &[u8], id: u64, count: u64) -> Result<(), String> {
    let result: StructuredResult<'_> = reply(line, id)?;
    let items = &result.structured.items;
    if items.len() as u64 != count {
        return Err(format!(
            "give_structured: {} items, expected {count}",
            items.len()
        ));
    }
    for (n, item) in items.iter().enumerate() {
        if item.id != n as u64
            || item.name != format!("item-{n:06}")
            || item.tags != ["alpha", "beta", "gamma"]
        {
            return Err(format!("give_structured: item {n} is wrong"));
        }
    }
    let text = result
        .content
        .first()
        .and_then(|b| b.text.as_deref())
        .unwrap_or_default();
    if (text.len() as u64) < count * 50 {
        return Err(format!(
            "give_structured: the text block has {} bytes, too few for {count} items",
            text.len()
        ));
    }
    Ok(())
}

/// A realistic order for `validate_big`, the same every run: `lines` lines, contacts with
/// addresses, every optional part present.
pub fn big_document(lines: usize) -> Value {
    let address = |n: usize| {
        json!({
            "line1": format!("{} Harbour Street", 10 + n),
            "line2": format!("Unit {n}"),
            "city": "Rotterdam",
            "region": "South Holland",
            "postal_code": format!("30{n:02} AB"),
            "country": "NL"
        })
    };
    let contact = |n: usize, role: &str| {
        json!({
            "name": format!("Contact Person {n}"),
            "title": "Procurement lead",
            "email": format!("contact.{n}@example-shop.nl"),
            "phone": format!("+31100000{n:03}"),
            "role": role,
            "language": "nl-NL",
            "address": address(n)
        })
    };
    let categories = ["hardware", "software", "service", "subscription", "other"];
    let order_lines: Vec<Value> = (0..lines)
        .map(|n| {
            json!({
                "sku": format!("ABC-{:06}", 1000 + n * 7),
                "description": format!("Line item number {n}, a plain description of what was ordered"),
                "category": categories[n % categories.len()],
                "quantity": 1 + n % 9,
                "unit_price": {"amount": 9.5 + n as f64, "currency": "EUR"},
                "discount_pct": (n % 4) as f64 * 2.5,
                "weight_g": 250 * (n + 1),
                "hs_code": format!("{:08}", 84713000 + n),
                "origin_country": "DE",
                "backorder": n % 5 == 0,
                "tags": ["bulk", format!("batch-{n}"), "priority"],
                "attributes": [
                    {"key": "colour", "value": "graphite"},
                    {"key": "size", "value": format!("{}", 38 + n % 8)},
                    {"key": "warranty_years", "value": "2"}
                ]
            })
        })
        .collect();
    json!({
        "request_id": "3f2b8c1e-9a4d-4e7b-8c21-5d6e7f8a9b0c",
        "created_at": "2026-11-27T10:15:30Z",
        "schema_version": 3,
        "locale": "en-GB",
        "dry_run": false,
        "customer": {
            "id": "C00421337",
            "name": "Example Shop B.V.",
            "tier": "gold",
            "segment": "mid-market",
            "vat_id": "NL123456789B01",
            "since": "2019-04-01",
            "credit_limit": {"amount": 50000, "currency": "EUR"},
            "contacts": [contact(1, "buyer"), contact(2, "billing"), contact(3, "shipping")],
            "billing_address": address(7),
            "shipping_address": address(8),
            "preferences": {
                "language": "nl",
                "timezone": "Europe/Amsterdam",
                "newsletter": true,
                "channels": ["email", "phone"]
            }
        },
        "order": {
            "number": "SO-20261127",
            "po_number": "PO-4471-B",
            "currency": "EUR",
            "lines": order_lines,
            "subtotal": {"amount": 1234.5, "currency": "EUR"},
            "tax": {"amount": 259.25, "currency": "EUR"},
            "total": {"amount": 1493.75, "currency": "EUR"},
            "coupon": "WINTER2026",
            "notes": "Deliver to the loading dock at the back; call ahead."
        },
        "shipping": {
            "method": "express",
            "carrier": "dhl",
            "tracking": "JD014600006281234567",
            "insured": true,
            "requested_date": "2026-12-02",
            "instructions": "Fragile: keep upright.",
            "package": {"length_cm": 60, "width_cm": 40, "height_cm": 35.5, "weight_kg": 12.75}
        },
        "payment": {
            "method": "invoice",
            "terms_days": 30,
            "billing_contact": contact(2, "billing")
        },
        "metadata": {
            "source": "api",
            "campaign": "winter-sale-2026",
            "labels": ["b2b", "repeat"],
            "referrer": "https://partner.example.com/catalogue",
            "session_id": "a8F3kL0pQ7rS2tU9vW4xY6zB"
        },
        "flags": {"priority": 2, "gift": false, "express": true, "fragile": true},
        "audit": {
            "created_by": "svc.orders",
            "ip": "192.0.2.44",
            "user_agent": "orders-client/4.2",
            "request_path": "/v2/orders"
        }
    })
}

/// [`big_document`] with one attribute key of one line breaking its pattern (`$defs/code`,
/// reached through `line_item` and `attribute`).
pub fn bad_document(lines: usize) -> Value {
    let mut doc = big_document(lines);
    doc["order"]["lines"][lines / 2]["attributes"][1]["key"] = json!("Not A Code!");
    doc
}

/// Whether an answer refuses the call: a JSON-RPC error, or an `isError` result.
fn refused(answer: &Value) -> bool {
    answer.get("error").is_some() || answer["result"]["isError"] == json!(true)
}

async fn validation(plan: &Plan, conn: &Rc<Conn>) -> Result<Value, String> {
    let doc = big_document(LINES);
    let document_bytes = doc.to_string().len();
    let bad = json!({"name": "validate_big", "arguments": bad_document(LINES)}).to_string();
    let (answer, _, _) = conn.request("tools/call", &bad).await?;
    let answer = answer.json();
    let refuses = refused(&answer);
    let bad_answer: String = answer
        .pointer("/error/message")
        .or_else(|| answer.pointer("/result/content/0/text"))
        .and_then(Value::as_str)
        .unwrap_or_default()
        .chars()
        .take(200)
        .collect();

    let big = Rc::new(json!({"name": "validate_big", "arguments": doc}).to_string());
    let expected_big = Rc::new(format!("lines={LINES}"));
    let mut small_args = doc;
    small_args["text"] = json!("x");
    let small = Rc::new(json!({"name": "validate_small", "arguments": small_args}).to_string());
    let big_phases = phases(plan, conn, 0, "validate_big", move |conn| {
        let (params, expected) = (big.clone(), expected_big.clone());
        async move {
            let (answer, _, id) = conn.request("tools/call", &params).await?;
            check_call_text(&answer.line, id, Some(&expected))?;
            Ok(answer.line.len())
        }
    })
    .await?;
    let small_phases = phases(plan, conn, 0, "validate_small", move |conn| {
        let params = small.clone();
        async move {
            let (answer, _, id) = conn.request("tools/call", &params).await?;
            check_call_text(&answer.line, id, Some("ok"))?;
            Ok(answer.line.len())
        }
    })
    .await?;
    let cpu = |phases: &Value| phases["in_flight"]["server_cpu_us_per_call"].as_f64();
    let validation_us = match (cpu(&big_phases), cpu(&small_phases)) {
        (Some(big), Some(small)) => json!(round(big - small, 1)),
        _ => Value::Null,
    };
    Ok(json!({
        "document_bytes": document_bytes,
        "lines": LINES,
        "refuses_bad_argument": refuses,
        "bad_argument_answer": bad_answer,
        "validate_big": big_phases,
        "validate_small": small_phases,
        "validation_us_per_call": validation_us,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_document_is_the_same_every_time_and_the_bad_one_differs_deep_inside() {
        assert_eq!(big_document(LINES), big_document(LINES));
        let bad = bad_document(LINES);
        assert_ne!(bad, big_document(LINES));
        assert_eq!(
            bad["order"]["lines"][10]["attributes"][1]["key"],
            "Not A Code!"
        );
    }

    #[test]
    fn a_right_text_passes_and_a_short_or_wrong_one_fails() {
        let line = |text: &str| {
            format!(
                r#"{{"jsonrpc":"2.0","id":3,"result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
            )
        };
        assert!(check_text_answer(line("abcdefghij").as_bytes(), 3, 10).is_ok());
        assert!(check_text_answer(line("abcdefghi").as_bytes(), 3, 10).is_err());
        assert!(check_text_answer(line("abcdefghiX").as_bytes(), 3, 10).is_err());
        assert!(check_text_answer(line("abcdefghij").as_bytes(), 4, 10).is_err());
    }

    #[test]
    fn structured_items_are_each_checked() {
        let items: Vec<Value> = (0..3)
            .map(|n| json!({"id": n, "name": format!("item-{n:06}"), "tags": ["alpha", "beta", "gamma"]}))
            .collect();
        let good = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "content": [{"type": "text", "text": "x".repeat(200)}],
            "structuredContent": {"items": items}
        }});
        assert!(check_structured_answer(good.to_string().as_bytes(), 1, 3).is_ok());
        assert!(check_structured_answer(good.to_string().as_bytes(), 1, 4).is_err());
        let mut wrong = good.clone();
        wrong["result"]["structuredContent"]["items"][1]["name"] = json!("item-9");
        assert!(check_structured_answer(wrong.to_string().as_bytes(), 1, 3).is_err());
        let mut no_text = good;
        no_text["result"]["content"] = json!([]);
        assert!(check_structured_answer(no_text.to_string().as_bytes(), 1, 3).is_err());
    }

    #[test]
    fn an_error_or_an_is_error_result_is_a_refusal() {
        assert!(refused(
            &json!({"error": {"code": -32602, "message": "bad"}})
        ));
        assert!(refused(
            &json!({"result": {"isError": true, "content": []}})
        ));
        assert!(!refused(
            &json!({"result": {"content": [{"type": "text", "text": "lines=20"}]}})
        ));
    }
}
