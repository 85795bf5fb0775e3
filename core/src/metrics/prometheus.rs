//! The metrics in the Prometheus text exposition format, written by `prometheus-client`.

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeMetric, NoLabelSet};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use super::{AnswerKind, BUCKETS_SECONDS, Gauges, Limit, Metrics, SeriesReading};

/// `Content-Type` of what [`encode`] writes.
pub(crate) const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

pub(super) fn encode(metrics: &Metrics, gauges: &Gauges) -> String {
    let reading = Reading {
        methods: metrics
            .method_readings()
            .map(|(name, reading)| (name.to_owned(), reading))
            .collect(),
        tools: metrics.tool_readings(),
        refused: Limit::ALL
            .iter()
            .map(|limit| {
                let n = metrics.refused[*limit as usize].load(std::sync::atomic::Ordering::Relaxed);
                (limit.name(), n)
            })
            .collect(),
        sessions: metrics
            .sessions
            .load(std::sync::atomic::Ordering::Relaxed)
            .max(0),
        streams: metrics
            .streams
            .load(std::sync::atomic::Ordering::Relaxed)
            .max(0),
        queued_calls: gauges.queued_calls,
        listen_streams: gauges.listen_streams,
        tasks: gauges.tasks,
    };
    let mut registry = Registry::with_prefix("toolwire");
    registry.register_collector(Box::new(reading));
    let mut text = String::new();
    // Writing to a String cannot fail, and every name and label here is the engine's own.
    if let Err(err) = prometheus_client::encoding::prometheus_text::encode(&mut text, &registry) {
        tracing::error!(%err, "could not write the metrics");
    }
    text
}

/// The counters as read for one scrape.
#[derive(Debug)]
struct Reading {
    methods: Vec<(String, SeriesReading)>,
    tools: Vec<(String, SeriesReading)>,
    refused: Vec<(&'static str, u64)>,
    sessions: i64,
    streams: i64,
    queued_calls: u64,
    listen_streams: u64,
    tasks: u64,
}

impl std::fmt::Debug for SeriesReading {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeriesReading")
            .field("in_flight", &self.in_flight)
            .finish_non_exhaustive()
    }
}

impl Collector for Reading {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        series(
            &mut encoder,
            &self.methods,
            "method",
            ["requests", "Requests answered, by method and outcome"],
            [
                "request_duration",
                "Time from a request's arrival to its answer",
            ],
            ["requests_in_flight", "Requests being handled now"],
        )?;
        series(
            &mut encoder,
            &self.tools,
            "tool",
            ["tool_calls", "Tool calls answered, by tool and outcome"],
            [
                "tool_call_duration",
                "Time from a tool call's arrival to its answer",
            ],
            ["tool_calls_in_flight", "Tool calls being handled now"],
        )?;
        let mut refused = encoder.encode_descriptor(
            "refused",
            "Requests, sessions, connections, streams and tasks refused by a limit",
            None,
            MetricType::Counter,
        )?;
        for (limit, n) in &self.refused {
            ConstCounter::new(*n).encode(refused.encode_family(&[("limit", *limit)])?)?;
        }
        let gauges = [
            (
                "calls_queued",
                "Tool calls waiting for a slot",
                self.queued_calls as i64,
            ),
            ("sessions", "Live sessions (past initialize)", self.sessions),
            (
                "sse_streams",
                "Open Server-Sent Events streams",
                self.streams,
            ),
            (
                "listen_streams",
                "Open subscriptions/listen streams",
                self.listen_streams as i64,
            ),
            (
                "tasks",
                "Tasks held, finished ones until they expire",
                self.tasks as i64,
            ),
        ];
        for (name, help, value) in gauges {
            ConstGauge::new(value).encode(encoder.encode_descriptor(
                name,
                help,
                None,
                MetricType::Gauge,
            )?)?;
        }
        Ok(())
    }
}

/// One family each of outcomes, latencies and in-flight counts, a label `label` per series.
fn series(
    encoder: &mut DescriptorEncoder,
    all: &[(String, SeriesReading)],
    label: &'static str,
    [total, total_help]: [&str; 2],
    [duration, duration_help]: [&str; 2],
    [in_flight, in_flight_help]: [&str; 2],
) -> Result<(), std::fmt::Error> {
    // Methods never called are left out; tools, once registered, show even at zero.
    let shown =
        |reading: &SeriesReading| label == "tool" || reading.count() + reading.in_flight > 0;
    let mut family = encoder.encode_descriptor(total, total_help, None, MetricType::Counter)?;
    for (name, reading) in all.iter().filter(|(_, r)| shown(r)) {
        for (ending, n) in AnswerKind::ALL.iter().zip(&reading.endings) {
            let labels = [(label, name.as_str()), ("outcome", ending.name())];
            ConstCounter::new(*n).encode(family.encode_family(&labels)?)?;
        }
    }
    let mut family = encoder.encode_descriptor(
        duration,
        duration_help,
        Some(&Unit::Seconds),
        MetricType::Histogram,
    )?;
    for (name, reading) in all.iter().filter(|(_, r)| shown(r)) {
        let buckets: Vec<(f64, u64)> = BUCKETS_SECONDS
            .iter()
            .zip(&reading.buckets)
            .scan(0, |below, (le, cumulative)| {
                // The encoder takes each bucket's own count and sums them itself.
                let own = cumulative - *below;
                *below = *cumulative;
                Some((*le, own))
            })
            .collect();
        // `+Inf` is written from the count.
        family
            .encode_family(&[(label, name.as_str())])?
            .encode_histogram::<NoLabelSet>(reading.seconds, reading.count(), &buckets, None)?;
    }
    let mut family =
        encoder.encode_descriptor(in_flight, in_flight_help, None, MetricType::Gauge)?;
    for (name, reading) in all.iter().filter(|(_, r)| shown(r)) {
        ConstGauge::new(reading.in_flight as i64)
            .encode(family.encode_family(&[(label, name.as_str())])?)?;
    }
    Ok(())
}
