//! `docs/reference/options.md` checked against the code: each row of its two tables whose Rust
//! column is a field of `ServerOptions` or `HttpOptions` (`auth.x`: a field of `BearerAuth`)
//! must give that field's default as this test renders it from `ServerOptions::default()` /
//! `HttpOptions::default()`, and every field must have a row. The other columns (the names in
//! Python, Node and Kotlin/Swift) are checked by `scripts/check-options-reference`.
//!
//! Every field is named in a destructuring of the default value, so a field renamed or removed
//! fails to compile here. The structs are `#[non_exhaustive]`, which outside the crate makes `..`
//! compulsory in such a pattern (E0638): a field added would not fail to compile, so the test
//! also reads the struct's declaration in core's source and fails on a field it does not render.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use toolwire::{CacheScope, ServerOptions};

/// The page, from core's directory.
const PAGE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/reference/options.md");
/// The columns of both tables, in order.
const COLUMNS: [&str; 6] = [
    "Rust field",
    "Python",
    "Node",
    "Kotlin/Swift",
    "Default",
    "Meaning",
];

#[test]
fn the_server_options_table_gives_every_field_and_its_default() {
    let options = ServerOptions::default();
    // Every field named: `..` is only there because the struct is `#[non_exhaustive]` (see the
    // module's comment); `declared_fields` catches a field added.
    let ServerOptions {
        max_frame_bytes,
        max_depth,
        page_size,
        max_concurrent_calls,
        max_concurrent_calls_per_session,
        max_concurrent_calls_per_principal,
        max_queued_calls,
        default_tool_timeout,
        client_request_timeout,
        client_request_max_timeout,
        drain_timeout,
        list_changed_debounce,
        default_log_level,
        idle_poll,
        max_outbound_bytes,
        cache_ttl_ms,
        cache_scope,
        request_state_keys,
        request_state_ttl,
        max_request_state_bytes,
        modern_only,
        max_listen_streams,
        listen_backlog,
        task_after,
        task_ttl,
        task_poll_interval,
        max_tasks,
        max_tasks_per_principal,
        metrics,
        ..
    } = options;
    let rendered = vec![
        ("max_frame_bytes", bytes(max_frame_bytes)),
        ("max_depth", count(max_depth)),
        (
            "page_size",
            match page_size {
                None => "all in one page".to_owned(),
                Some(size) => count(size),
            },
        ),
        ("max_concurrent_calls", count(max_concurrent_calls)),
        (
            "max_concurrent_calls_per_session",
            count(max_concurrent_calls_per_session),
        ),
        (
            "max_concurrent_calls_per_principal",
            count(max_concurrent_calls_per_principal),
        ),
        ("max_queued_calls", count(max_queued_calls)),
        (
            "default_tool_timeout",
            default_tool_timeout.map_or_else(|| "none".to_owned(), duration),
        ),
        ("client_request_timeout", duration(client_request_timeout)),
        (
            "client_request_max_timeout",
            duration(client_request_max_timeout),
        ),
        ("drain_timeout", duration(drain_timeout)),
        ("list_changed_debounce", duration(list_changed_debounce)),
        ("default_log_level", default_log_level.as_str().to_owned()),
        ("idle_poll", duration(idle_poll)),
        ("max_outbound_bytes", bytes(max_outbound_bytes)),
        (
            "cache_ttl_ms",
            duration(Duration::from_millis(cache_ttl_ms)),
        ),
        ("cache_scope", cache_scope_name(cache_scope).to_owned()),
        (
            "request_state_keys",
            match request_state_keys {
                None => "one random key per process".to_owned(),
                Some(_) => "keys given by default (name them on the page)".to_owned(),
            },
        ),
        ("request_state_ttl", duration(request_state_ttl)),
        ("max_request_state_bytes", bytes(max_request_state_bytes)),
        ("modern_only", modern_only.to_string()),
        ("max_listen_streams", count(max_listen_streams)),
        ("listen_backlog", count(listen_backlog)),
        ("task_after", duration(task_after)),
        ("task_ttl", duration(task_ttl)),
        ("task_poll_interval", duration(task_poll_interval)),
        ("max_tasks", count(max_tasks)),
        ("max_tasks_per_principal", count(max_tasks_per_principal)),
        ("metrics", metrics.to_string()),
    ];
    let declared = declared_fields("src/dispatch/options.rs", "ServerOptions", "");
    let errors = compare("## Server options", &rendered, &declared, &[]);
    assert!(
        errors.is_empty(),
        "docs/reference/options.md, server options, is out of date:\n{}",
        errors.join("\n")
    );
}

#[cfg(feature = "http")]
mod http {
    use std::sync::Arc;

    use toolwire::transport::http::{AuthRejection, BearerAuth, EventStore, HttpOptions};

    use super::{bytes, compare, count, declared_fields, duration};

    /// The authorization server given to `BearerAuth::new` below.
    const GIVEN_SERVER: &str = "https://auth.example.com";

    /// Fields with no row of their own, and why.
    const NO_ROW: &[(&str, &str)] = &[(
        // A trait object with no default: it is `BearerAuth::new`'s first argument, and
        // giving one is what turns `auth` on, so the `auth` row names each language's validator.
        "auth.validator",
        "the validator is the `auth` row's",
    )];

    #[test]
    fn the_http_options_table_gives_every_field_and_its_default() {
        let HttpOptions {
            path,
            allowed_hosts,
            allowed_origins,
            stateless,
            response_mode,
            max_sessions,
            max_sessions_per_client,
            session_idle_timeout,
            max_body_bytes,
            header_read_timeout,
            body_read_timeout,
            max_connections,
            sse_retry,
            max_sse_buffered_bytes,
            sse_keep_alive,
            event_store,
            auth,
            metrics_path,
            ..
        } = HttpOptions::default();
        // `auth` is off by default; its fields' defaults are those `BearerAuth::new` leaves.
        let BearerAuth {
            validator: _,
            authorization_servers,
            scopes_supported,
            resource,
            ..
        } = BearerAuth::new(
            |_token: &str| Err(AuthRejection::invalid_token("never asked")),
            GIVEN_SERVER,
        );
        let rendered = vec![
            ("path", format!("`{path}`")),
            (
                "allowed_hosts",
                listed_or(
                    &allowed_hosts,
                    "loopback names on a loopback address, else any",
                ),
            ),
            (
                "allowed_origins",
                listed_or(
                    &allowed_origins,
                    "loopback origins on a loopback address, else none",
                ),
            ),
            ("stateless", stateless.to_string()),
            ("response_mode", response_mode.as_str().to_owned()),
            ("max_sessions", count(max_sessions)),
            ("max_sessions_per_client", count(max_sessions_per_client)),
            (
                "session_idle_timeout",
                session_idle_timeout.map_or_else(|| "never".to_owned(), duration),
            ),
            (
                "max_body_bytes",
                max_body_bytes.map_or_else(|| "the server's `max_frame_bytes`".to_owned(), bytes),
            ),
            (
                "header_read_timeout",
                header_read_timeout.map_or_else(|| "no limit".to_owned(), duration),
            ),
            (
                "body_read_timeout",
                body_read_timeout.map_or_else(|| "no limit".to_owned(), duration),
            ),
            ("max_connections", count(max_connections)),
            ("sse_retry", duration(sse_retry)),
            ("max_sse_buffered_bytes", bytes(max_sse_buffered_bytes)),
            (
                "sse_keep_alive",
                sse_keep_alive.map_or_else(|| "none".to_owned(), duration),
            ),
            ("event_store", event_store_bounds(&event_store)),
            (
                "auth",
                match auth {
                    None => "none".to_owned(),
                    Some(_) => "a validator given by default (name it on the page)".to_owned(),
                },
            ),
            (
                "auth.authorization_servers",
                if authorization_servers == [GIVEN_SERVER] {
                    "the one given to `BearerAuth::new`".to_owned()
                } else {
                    format!("{authorization_servers:?}")
                },
            ),
            (
                "auth.scopes_supported",
                listed_or(&scopes_supported, "none"),
            ),
            (
                "auth.resource",
                resource.map_or_else(|| "`http://<Host><path>`".to_owned(), |r| format!("`{r}`")),
            ),
            (
                "metrics_path",
                metrics_path.map_or_else(|| "not served".to_owned(), |p| format!("`{p}`")),
            ),
        ];
        let mut declared = declared_fields("src/transport/http/mod.rs", "HttpOptions", "");
        declared.extend(declared_fields(
            "src/transport/http/auth.rs",
            "BearerAuth",
            "auth.",
        ));
        let errors = compare("## HTTP options", &rendered, &declared, NO_ROW);
        assert!(
            errors.is_empty(),
            "docs/reference/options.md, HTTP options, is out of date:\n{}",
            errors.join("\n")
        );
    }

    /// A list's items, or `empty` for none.
    fn listed_or(items: &[String], empty: &str) -> String {
        if items.is_empty() {
            empty.to_owned()
        } else {
            items.join(", ")
        }
    }

    /// The default store is a trait object, so its bounds are measured: how many events of one
    /// stream it keeps, and how many ended streams of one session.
    fn event_store_bounds(store: &Arc<dyn EventStore>) -> String {
        // Far more than a bounded store keeps (a count this high reads as unbounded).
        const MANY: usize = 100_000;
        // Events of one stream: `replay` is `None` when some after `after` are gone, so the
        // smallest `after` it answers tells how many are kept.
        for seq in 1..=MANY as u64 {
            store.store("probe", "stream", seq, "event");
        }
        let (mut low, mut high) = (0, MANY as u64);
        while low < high {
            let middle = low + (high - low) / 2;
            if store.replay("probe", "stream", middle).is_some() {
                high = middle;
            } else {
                low = middle + 1;
            }
        }
        let per_stream =
            MANY - usize::try_from(low).expect("`after` is at most the 100,000 events stored");
        store.forget_session("probe");
        // Ended streams of one session: those still replayable after many have ended.
        for stream in 0..MANY / 10 {
            let name = format!("s{stream}");
            store.store("probe", &name, 1, "event");
            store.stream_ended("probe", &name);
        }
        let ended = (0..MANY / 10)
            .filter(|stream| store.replay("probe", &format!("s{stream}"), 0).is_some())
            .count();
        store.forget_session("probe");
        format!(
            "in memory: {} events per stream, {} ended streams per session",
            count(per_stream),
            count(ended)
        )
    }
}

/// Compares the page's table under `heading` with the defaults `rendered` (field, cell), and
/// both with the fields `declared` in the source; `no_row` are fields left out on purpose.
/// Returns what does not match, one line each.
fn compare(
    heading: &str,
    rendered: &[(&str, String)],
    declared: &[String],
    no_row: &[(&str, &str)],
) -> Vec<String> {
    let page = std::fs::read_to_string(PAGE)
        .unwrap_or_else(|err| panic!("reading {PAGE} (the options reference): {err}"));
    let rows = field_rows(&page, heading);
    let mut errors = Vec::new();
    let rendered_names: BTreeSet<&str> = rendered.iter().map(|(field, _)| *field).collect();
    let no_row_names: BTreeSet<&str> = no_row.iter().map(|(field, _)| *field).collect();
    let declared_names: BTreeSet<&str> = declared.iter().map(String::as_str).collect();
    for field in &declared_names {
        if !rendered_names.contains(field) && !no_row_names.contains(field) {
            errors.push(format!(
                "`{field}` is a field this test does not render: name it in the destructuring, \
                 render its default, and give it a row under {heading:?}"
            ));
        }
    }
    for field in rendered_names.iter().chain(&no_row_names) {
        if !declared_names.contains(field) {
            errors.push(format!(
                "`{field}` is rendered or listed by this test but not declared in the source"
            ));
        }
    }
    for (field, want) in rendered {
        match rows.get(*field) {
            None => errors.push(format!(
                "no row for `{field}` under {heading:?} (default {want:?})"
            )),
            Some((line, cell)) if cell != want => errors.push(format!(
                "line {line}: `{field}`: the page's default is {cell:?}, the code's {want:?}"
            )),
            Some(_) => {}
        }
    }
    for (field, (line, _)) in &rows {
        if let Some((_, why)) = no_row.iter().find(|(name, _)| name == field) {
            errors.push(format!(
                "line {line}: a row for `{field}`, which has none on purpose: {why}"
            ));
        } else if !rendered_names.contains(field.as_str())
            && !declared_names.contains(field.as_str())
        {
            errors.push(format!(
                "line {line}: a row for `{field}`, which is no field (misspelt, or removed?)"
            ));
        }
    }
    errors
}

/// The rows under `heading` whose Rust column is a field (one code span of a name, or of
/// `auth.name`): field → (line number, Default cell). Other rows (settings outside the structs)
/// are skipped.
fn field_rows(page: &str, heading: &str) -> BTreeMap<String, (usize, String)> {
    let start = page
        .lines()
        .position(|line| line.trim_end() == heading)
        .unwrap_or_else(|| panic!("{PAGE} has no heading {heading:?}"));
    let mut rows = BTreeMap::new();
    let mut header_seen = false;
    for (index, line) in page.lines().enumerate().skip(start + 1) {
        if line.starts_with("## ") {
            break;
        }
        let Some(inner) = line
            .trim()
            .strip_prefix('|')
            .and_then(|l| l.strip_suffix('|'))
        else {
            continue;
        };
        let cells: Vec<&str> = inner.split('|').map(str::trim).collect();
        if !header_seen {
            assert_eq!(
                cells,
                COLUMNS,
                "line {}: the columns of the table under {heading:?}",
                index + 1
            );
            header_seen = true;
            continue;
        }
        if cells.iter().all(|cell| cell.chars().all(|c| c == '-')) {
            continue; // the delimiter row
        }
        assert_eq!(
            cells.len(),
            COLUMNS.len(),
            "line {}: a row of {} cells under {heading:?} (a `|` inside a cell?)",
            index + 1,
            cells.len()
        );
        let Some(field) = field_name(cells[0]) else {
            continue;
        };
        let previous = rows.insert(field.to_owned(), (index + 1, cells[4].to_owned()));
        assert!(
            previous.is_none(),
            "line {}: a second row for `{field}` under {heading:?}",
            index + 1
        );
    }
    assert!(header_seen, "{PAGE}: no table under {heading:?}");
    rows
}

/// `max_depth` for the cell "`max_depth`" (or "`auth.resource`"); `None` for anything else.
fn field_name(cell: &str) -> Option<&str> {
    let name = cell.strip_prefix('`')?.strip_suffix('`')?;
    let part = |p: &str| {
        p.starts_with(|c: char| c.is_ascii_lowercase() || c == '_')
            && p.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
    };
    let parts: Vec<&str> = name.split('.').collect();
    (parts.len() <= 2 && parts.iter().all(|p| part(p))).then_some(name)
}

/// The fields of `pub struct {name}` in `file` (relative to core), each after `prefix`: the
/// lines of its body at one level of indentation that declare a name, attributes and comments
/// aside (rustfmt's layout).
fn declared_fields(file: &str, name: &str, prefix: &str) -> Vec<String> {
    let path = format!("{}/{file}", env!("CARGO_MANIFEST_DIR"));
    let source =
        std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("reading {path}: {err}"));
    let opening = format!("pub struct {name} {{");
    let mut lines = source.lines().skip_while(|line| line.trim_end() != opening);
    assert!(
        lines.next().is_some(),
        "{path} declares no `{opening}` any more: point this test at where {name} is"
    );
    let mut fields = Vec::new();
    for line in lines {
        if line == "}" {
            return fields;
        }
        let Some(declaration) = line.strip_prefix("    ") else {
            continue;
        };
        if declaration.starts_with([' ', '/', '#']) {
            continue;
        }
        let declaration = declaration
            .strip_prefix("pub ")
            .or_else(|| {
                declaration
                    .strip_prefix("pub(")
                    .and_then(|rest| rest.split_once(") ").map(|(_, after)| after))
            })
            .unwrap_or(declaration);
        let (field, _) = declaration
            .split_once(':')
            .unwrap_or_else(|| panic!("{path}: a line of {name} read as no field: {line:?}"));
        fields.push(format!("{prefix}{}", field.trim()));
    }
    panic!("{path}: the body of {name} does not end (a line `}}`)")
}

/// A count as the page writes it: `64`, `4,096`, `10,000`.
fn count(n: usize) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// A size in bytes: `4 MiB`, `64 KiB`, else the count of bytes.
fn bytes(n: usize) -> String {
    const KIB: usize = 1024;
    const MIB: usize = 1024 * KIB;
    if n > 0 && n.is_multiple_of(MIB) {
        format!("{} MiB", count(n / MIB))
    } else if n > 0 && n.is_multiple_of(KIB) {
        format!("{} KiB", count(n / KIB))
    } else {
        format!("{} bytes", count(n))
    }
}

/// A duration in the largest unit it is a whole number of: `1 h`, `10 min`, `60 s` (a minute
/// stays in seconds), `250 ms`, `200 µs`; zero is `0`.
fn duration(d: Duration) -> String {
    const MICRO: u128 = 1_000;
    const MILLI: u128 = 1_000 * MICRO;
    const SECOND: u128 = 1_000 * MILLI;
    const MINUTE: u128 = 60 * SECOND;
    const HOUR: u128 = 60 * MINUTE;
    let nanos = d.as_nanos();
    let (unit, name) = match nanos {
        0 => return "0".to_owned(),
        n if n.is_multiple_of(HOUR) => (HOUR, "h"),
        n if n.is_multiple_of(MINUTE) && n > MINUTE => (MINUTE, "min"),
        n if n.is_multiple_of(SECOND) => (SECOND, "s"),
        n if n.is_multiple_of(MILLI) => (MILLI, "ms"),
        n if n.is_multiple_of(MICRO) => (MICRO, "µs"),
        _ => (1, "ns"),
    };
    format!("{} {name}", nanos / unit)
}

/// The scope as the bindings spell it (`cache_scope="private"`); a match, so a new scope fails
/// to compile here.
fn cache_scope_name(scope: CacheScope) -> &'static str {
    match scope {
        CacheScope::Private => "private",
        CacheScope::Public => "public",
    }
}
