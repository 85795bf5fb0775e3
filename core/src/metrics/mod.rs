//! Metrics: what the server is doing, counted where it happens.
//!
//! Every request is counted by method, and every `tools/call` also by tool: how many started,
//! how each ended (a result, an `isError` result, an error by kind, cancelled, refused…) and how
//! long it took (a latency histogram). Beside them: calls waiting for a slot, requests refused
//! by a limit (by limit), live sessions, open SSE streams and tasks held.
//!
//! The counters are plain atomics touched where the answer is sent, a few per request; a
//! snapshot ([`Server::metrics`](crate::Server::metrics)) or the Prometheus text
//! ([`Server::metrics_text`](crate::Server::metrics_text)) reads them when asked. Label values
//! come from the server's own tables (method names, registered tools, fixed outcome kinds),
//! never from what a client sends, so a client cannot grow the series.

mod prometheus;

pub(crate) use prometheus::CONTENT_TYPE;

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};

use crate::protocol::method::Method;
use crate::wire::ErrorCode;

/// The latency histogram's upper bounds, in seconds (Prometheus' usual ladder, from 100 µs:
/// most calls of an in-process engine end well under a millisecond).
pub(crate) const BUCKETS_SECONDS: [f64; 16] = [
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
    5.0, 10.0,
];

const BUCKETS_NANOS: [u64; 16] = {
    let mut nanos = [0; 16];
    let mut i = 0;
    while i < 16 {
        nanos[i] = (BUCKETS_SECONDS[i] * 1e9) as u64;
        i += 1;
    }
    nanos
};

/// How a request ended, as counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AnswerKind {
    Result,
    ToolError,
    InputRequired,
    TaskCreated,
    Cancelled,
    Refused,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    /// A code of the implementation-defined range (-32000 to -32099): busy, not found…
    ServerError,
    OtherError,
}

impl AnswerKind {
    const ALL: [AnswerKind; 12] = [
        AnswerKind::Result,
        AnswerKind::ToolError,
        AnswerKind::InputRequired,
        AnswerKind::TaskCreated,
        AnswerKind::Cancelled,
        AnswerKind::Refused,
        AnswerKind::InvalidRequest,
        AnswerKind::MethodNotFound,
        AnswerKind::InvalidParams,
        AnswerKind::InternalError,
        AnswerKind::ServerError,
        AnswerKind::OtherError,
    ];

    pub(crate) fn of_error(code: ErrorCode) -> AnswerKind {
        match code {
            ErrorCode::INVALID_REQUEST => AnswerKind::InvalidRequest,
            ErrorCode::METHOD_NOT_FOUND => AnswerKind::MethodNotFound,
            ErrorCode::INVALID_PARAMS => AnswerKind::InvalidParams,
            ErrorCode::INTERNAL_ERROR => AnswerKind::InternalError,
            ErrorCode(-32099..=-32000) => AnswerKind::ServerError,
            _ => AnswerKind::OtherError,
        }
    }

    /// The `outcome` label and snapshot key.
    pub(crate) fn name(self) -> &'static str {
        match self {
            AnswerKind::Result => "result",
            AnswerKind::ToolError => "tool_error",
            AnswerKind::InputRequired => "input_required",
            AnswerKind::TaskCreated => "task_created",
            AnswerKind::Cancelled => "cancelled",
            AnswerKind::Refused => "refused",
            AnswerKind::InvalidRequest => "invalid_request",
            AnswerKind::MethodNotFound => "method_not_found",
            AnswerKind::InvalidParams => "invalid_params",
            AnswerKind::InternalError => "internal_error",
            AnswerKind::ServerError => "server_error",
            AnswerKind::OtherError => "other_error",
        }
    }
}

/// A limit that refused something.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Limit {
    /// Call slots and their queue (the server's, a session's, a principal's or a tool's), and
    /// the queue of requests waiting for middleware.
    Calls,
    /// Live HTTP sessions (the table's, or one client's share).
    Sessions,
    /// Open HTTP connections.
    Connections,
    /// `subscriptions/listen` streams.
    ListenStreams,
    /// Tasks held (overall or one principal's).
    Tasks,
}

impl Limit {
    const ALL: [Limit; 5] = [
        Limit::Calls,
        Limit::Sessions,
        Limit::Connections,
        Limit::ListenStreams,
        Limit::Tasks,
    ];

    fn name(self) -> &'static str {
        match self {
            Limit::Calls => "calls",
            Limit::Sessions => "sessions",
            Limit::Connections => "connections",
            Limit::ListenStreams => "listen_streams",
            Limit::Tasks => "tasks",
        }
    }
}

/// The counters of one method or one tool, in a few shards: each thread adds to its own
/// (threads take them in turn), so the runtime's worker threads do not fight over one cache
/// line on every request; a reading sums them.
#[derive(Default)]
pub(crate) struct Series {
    shards: [Shard; SHARDS],
}

const SHARDS: usize = 4;

/// One shard's counters, on cache lines of their own (128 bytes: the pair of lines a core
/// prefetches together).
#[derive(Default)]
#[repr(align(128))]
struct Shard {
    started: AtomicU64,
    endings: [AtomicU64; AnswerKind::ALL.len()],
    /// Not cumulative: each request counts in its own bucket (the last is past 10 s).
    buckets: [AtomicU64; BUCKETS_NANOS.len() + 1],
    nanos: AtomicU64,
}

/// This thread's shard.
fn shard() -> usize {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    thread_local! {
        static SHARD: usize = NEXT.fetch_add(1, Ordering::Relaxed) % SHARDS;
    }
    SHARD.with(|shard| *shard)
}

impl Series {
    fn started(&self) {
        self.shards[shard()].started.fetch_add(1, Ordering::Relaxed);
    }

    fn ended(&self, ending: AnswerKind, elapsed: Duration) {
        let nanos = u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX);
        let bucket = BUCKETS_NANOS
            .iter()
            .position(|bound| nanos <= *bound)
            .unwrap_or(BUCKETS_NANOS.len());
        let shard = &self.shards[shard()];
        shard.endings[ending as usize].fetch_add(1, Ordering::Relaxed);
        shard.buckets[bucket].fetch_add(1, Ordering::Relaxed);
        shard.nanos.fetch_add(nanos, Ordering::Relaxed);
    }

    /// What it says now, its shards summed. Read counter by counter, so a request ending
    /// meanwhile may show in one and not yet another; `in_flight` is never negative (a request
    /// may start on one thread and end on another: only the sums mean something).
    fn read(&self) -> SeriesReading {
        let sum = |counter: fn(&Shard) -> &AtomicU64| -> u64 {
            self.shards
                .iter()
                .map(|shard| counter(shard).load(Ordering::Relaxed))
                .sum()
        };
        let endings: Vec<u64> = (0..AnswerKind::ALL.len())
            .map(|i| {
                self.shards
                    .iter()
                    .map(|shard| shard.endings[i].load(Ordering::Relaxed))
                    .sum()
            })
            .collect();
        let mut cumulative = 0;
        let buckets = (0..=BUCKETS_NANOS.len())
            .map(|i| {
                cumulative += self
                    .shards
                    .iter()
                    .map(|shard| shard.buckets[i].load(Ordering::Relaxed))
                    .sum::<u64>();
                cumulative
            })
            .collect();
        let ended: u64 = endings.iter().sum();
        SeriesReading {
            in_flight: sum(|shard| &shard.started).saturating_sub(ended),
            endings,
            buckets,
            seconds: sum(|shard| &shard.nanos) as f64 / 1e9,
        }
    }
}

pub(crate) struct SeriesReading {
    pub(crate) in_flight: u64,
    pub(crate) endings: Vec<u64>,
    /// Cumulative, one per bound and the last for +Inf (the count).
    pub(crate) buckets: Vec<u64>,
    pub(crate) seconds: f64,
}

impl SeriesReading {
    fn add(&mut self, other: &SeriesReading) {
        self.in_flight += other.in_flight;
        for (mine, theirs) in self.endings.iter_mut().zip(&other.endings) {
            *mine += theirs;
        }
        for (mine, theirs) in self.buckets.iter_mut().zip(&other.buckets) {
            *mine += theirs;
        }
        self.seconds += other.seconds;
    }

    fn count(&self) -> u64 {
        self.buckets.last().copied().unwrap_or_default()
    }

    fn to_json(&self) -> Value {
        let outcomes: Map<String, Value> = AnswerKind::ALL
            .iter()
            .zip(&self.endings)
            .filter(|(_, n)| **n > 0)
            .map(|(ending, n)| (ending.name().to_owned(), json!(n)))
            .collect();
        let buckets: Vec<Value> = BUCKETS_SECONDS
            .iter()
            .zip(&self.buckets)
            .map(|(le, n)| json!({"le": le, "count": n}))
            .collect();
        json!({
            "calls": self.count(),
            "inFlight": self.in_flight,
            "outcomes": outcomes,
            "latency": {"count": self.count(), "sumSeconds": self.seconds, "buckets": buckets},
        })
    }
}

/// A server's counters. Shared by its sessions, its tools and its HTTP endpoints.
pub(crate) struct Metrics {
    enabled: bool,
    /// One per method, and the last for methods this server does not know.
    methods: [Series; Method::ALL.len() + 1],
    /// By tool name: a tool removed and added again keeps counting where it was.
    tools: Mutex<BTreeMap<String, Arc<Series>>>,
    refused: [AtomicU64; Limit::ALL.len()],
    sessions: AtomicI64,
    streams: AtomicI64,
}

impl Metrics {
    pub(crate) fn new(enabled: bool) -> Arc<Self> {
        Arc::new(Metrics {
            enabled,
            methods: Default::default(),
            tools: Mutex::default(),
            refused: Default::default(),
            sessions: AtomicI64::new(0),
            streams: AtomicI64::new(0),
        })
    }

    /// The series a tool of this name counts in (`None` when metrics are off).
    pub(crate) fn tool_series(&self, name: &str) -> Option<Arc<Series>> {
        if !self.enabled {
            return None;
        }
        let mut tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        Some(tools.entry(name.to_owned()).or_default().clone())
    }

    pub(crate) fn refused(&self, limit: Limit) {
        if self.enabled {
            self.refused[limit as usize].fetch_add(1, Ordering::Relaxed);
        }
    }

    /// A session past `initialize`: counted live until the returned guard is dropped.
    pub(crate) fn session_opened(self: &Arc<Self>) -> Option<LiveGauge> {
        self.enabled
            .then(|| LiveGauge::new(self.clone(), |m| &m.sessions))
    }

    /// An SSE stream: counted open until the returned guard is dropped.
    pub(crate) fn stream_opened(self: &Arc<Self>) -> Option<LiveGauge> {
        self.enabled
            .then(|| LiveGauge::new(self.clone(), |m| &m.streams))
    }

    /// What a request about to be handled counts in (`None` when metrics are off).
    pub(crate) fn request(self: &Arc<Self>, method: &str) -> Option<Metered> {
        if !self.enabled {
            return None;
        }
        let index = Method::parse(method).map_or(Method::ALL.len(), |m| m as usize);
        // A call counts in its tool's series alone once the tool is known (the method's figures
        // add the tools' up when read): half the counting on the busiest path.
        let counted_start = index != Method::ToolsCall as usize;
        if counted_start {
            self.methods[index].started();
        }
        Some(Metered {
            metrics: self.clone(),
            method: index,
            tool: None,
            counted_start,
            started: Instant::now(),
        })
    }

    /// Everything, with the gauges the server keeps elsewhere read by the caller.
    pub(crate) fn snapshot(&self, gauges: &Gauges) -> Value {
        let mut calls_in_flight = 0;
        let methods: Map<String, Value> = self
            .method_readings()
            .inspect(|(name, reading)| {
                if *name == "tools/call" {
                    calls_in_flight = reading.in_flight;
                }
            })
            .filter(|(_, reading)| reading.count() + reading.in_flight > 0)
            .map(|(name, reading)| (name.to_owned(), reading.to_json()))
            .collect();
        let tools: Map<String, Value> = self
            .tool_readings()
            .into_iter()
            .map(|(name, reading)| (name, reading.to_json()))
            .collect();
        let refused: Map<String, Value> = Limit::ALL
            .iter()
            .map(|limit| {
                let n = self.refused[*limit as usize].load(Ordering::Relaxed);
                (limit.name().to_owned(), json!(n))
            })
            .collect();
        json!({
            "enabled": self.enabled,
            "methods": methods,
            "tools": tools,
            "callsInFlight": calls_in_flight,
            "callsQueued": gauges.queued_calls,
            "refused": refused,
            "sessions": self.sessions.load(Ordering::Relaxed).max(0),
            "streams": self.streams.load(Ordering::Relaxed).max(0),
            "listenStreams": gauges.listen_streams,
            "tasks": gauges.tasks,
        })
    }

    /// Each method's figures; `tools/call`'s are its own (calls of no known tool) and every
    /// tool's together.
    fn method_readings(&self) -> impl Iterator<Item = (&'static str, SeriesReading)> + '_ {
        self.methods.iter().enumerate().map(|(index, series)| {
            let name = Method::ALL.get(index).map_or("other", |m| m.name());
            let mut reading = series.read();
            if index == Method::ToolsCall as usize {
                for (_, tool) in self.tool_readings() {
                    reading.add(&tool);
                }
            }
            (name, reading)
        })
    }

    fn tool_readings(&self) -> Vec<(String, SeriesReading)> {
        let tools = self.tools.lock().unwrap_or_else(|e| e.into_inner());
        tools
            .iter()
            .map(|(name, series)| (name.clone(), series.read()))
            .collect()
    }

    /// The Prometheus text exposition format (version 0.0.4).
    pub(crate) fn text(&self, gauges: &Gauges) -> String {
        prometheus::encode(self, gauges)
    }
}

/// The gauges the server keeps in its own structures, read for a snapshot.
pub(crate) struct Gauges {
    pub(crate) queued_calls: u64,
    pub(crate) listen_streams: u64,
    pub(crate) tasks: u64,
}

/// One live thing (a session, a stream), counted until dropped.
pub(crate) struct LiveGauge {
    metrics: Arc<Metrics>,
    gauge: fn(&Metrics) -> &AtomicI64,
}

impl LiveGauge {
    fn new(metrics: Arc<Metrics>, gauge: fn(&Metrics) -> &AtomicI64) -> Self {
        gauge(&metrics).fetch_add(1, Ordering::Relaxed);
        LiveGauge { metrics, gauge }
    }
}

impl Drop for LiveGauge {
    fn drop(&mut self) {
        (self.gauge)(&self.metrics).fetch_sub(1, Ordering::Relaxed);
    }
}

/// A request being counted: its method's series (and its tool's, for `tools/call`), from its
/// arrival. Carried by its responder; counted once, when the answer is sent (or not).
pub(crate) struct Metered {
    metrics: Arc<Metrics>,
    method: usize,
    tool: Option<Arc<Series>>,
    /// Whether the method's series counted it started (a call counts in its tool's instead).
    counted_start: bool,
    started: Instant,
}

impl Metered {
    /// The call is of this tool.
    pub(crate) fn of_tool(&mut self, series: Arc<Series>) {
        series.started();
        self.tool = Some(series);
    }

    pub(crate) fn ended(self, ending: AnswerKind) {
        let elapsed = self.started.elapsed();
        if let Some(tool) = &self.tool {
            return tool.ended(ending, elapsed);
        }
        let series = &self.metrics.methods[self.method];
        if !self.counted_start {
            series.started();
        }
        series.ended(ending, elapsed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gauges() -> Gauges {
        Gauges {
            queued_calls: 0,
            listen_streams: 0,
            tasks: 0,
        }
    }

    #[test]
    fn a_request_counts_in_its_method_and_its_tool_once() {
        let metrics = Metrics::new(true);
        let mut call = metrics.request("tools/call").expect("enabled");
        call.of_tool(metrics.tool_series("echo").expect("enabled"));
        let snapshot = metrics.snapshot(&gauges());
        assert_eq!(snapshot["callsInFlight"], 1);
        assert_eq!(snapshot["tools"]["echo"]["inFlight"], 1);
        call.ended(AnswerKind::ToolError);
        metrics
            .request("no/such")
            .expect("enabled")
            .ended(AnswerKind::of_error(ErrorCode::METHOD_NOT_FOUND));
        let snapshot = metrics.snapshot(&gauges());
        let echo = &snapshot["tools"]["echo"];
        assert_eq!(echo["calls"], 1);
        assert_eq!(echo["inFlight"], 0);
        assert_eq!(echo["outcomes"], json!({"tool_error": 1}));
        assert_eq!(echo["latency"]["count"], 1);
        // Cumulative: the last bound (10 s) holds the one call.
        assert_eq!(echo["latency"]["buckets"][15]["count"], 1);
        assert_eq!(snapshot["methods"]["tools/call"]["calls"], 1);
        assert_eq!(
            snapshot["methods"]["other"]["outcomes"],
            json!({"method_not_found": 1})
        );
        assert!(snapshot["methods"].get("ping").is_none());
    }

    #[test]
    fn latencies_fall_in_their_buckets() {
        let series = Series::default();
        series.ended(AnswerKind::Result, Duration::from_micros(50));
        series.ended(AnswerKind::Result, Duration::from_micros(100));
        series.ended(AnswerKind::Result, Duration::from_millis(3));
        series.ended(AnswerKind::Result, Duration::from_secs(60));
        let reading = series.read();
        assert_eq!(reading.buckets[0], 2, "≤ 100 µs, bounds inclusive");
        assert_eq!(reading.buckets[4], 2, "≤ 2.5 ms");
        assert_eq!(reading.buckets[5], 3, "≤ 5 ms");
        assert_eq!(reading.buckets[15], 3, "≤ 10 s");
        assert_eq!(reading.count(), 4, "+Inf");
        assert!((reading.seconds - 60.003_15).abs() < 1e-9);
    }

    #[test]
    fn error_codes_are_counted_by_kind() {
        assert_eq!(
            AnswerKind::of_error(ErrorCode(-32602)),
            AnswerKind::InvalidParams
        );
        assert_eq!(
            AnswerKind::of_error(ErrorCode(-32000)),
            AnswerKind::ServerError
        );
        assert_eq!(
            AnswerKind::of_error(ErrorCode(-32099)),
            AnswerKind::ServerError
        );
        assert_eq!(
            AnswerKind::of_error(ErrorCode(-32100)),
            AnswerKind::OtherError
        );
        assert_eq!(AnswerKind::of_error(ErrorCode(7)), AnswerKind::OtherError);
    }

    #[test]
    fn gauges_follow_their_guards_and_nothing_counts_when_off() {
        let metrics = Metrics::new(true);
        let session = metrics.session_opened();
        let stream = metrics.stream_opened();
        metrics.refused(Limit::Sessions);
        let snapshot = metrics.snapshot(&gauges());
        assert_eq!(
            (&snapshot["sessions"], &snapshot["streams"]),
            (&json!(1), &json!(1))
        );
        assert_eq!(snapshot["refused"]["sessions"], 1);
        drop((session, stream));
        let snapshot = metrics.snapshot(&gauges());
        assert_eq!(
            (&snapshot["sessions"], &snapshot["streams"]),
            (&json!(0), &json!(0))
        );

        let off = Metrics::new(false);
        assert!(off.request("ping").is_none());
        assert!(off.tool_series("echo").is_none());
        assert!(off.session_opened().is_none());
        off.refused(Limit::Calls);
        assert_eq!(off.snapshot(&gauges())["refused"]["calls"], 0);
    }
}
