//! `NativeHttpEndpoint` and `NativeExchange`: core's mountable Streamable HTTP endpoint, for
//! the request handler of `lib/mount.js` (`server.httpHandler()`: node:http, Express, or Web
//! `Request`/`Response`). Only types are converted here: the request head and body chunks in,
//! the response head and body chunks out. Each operation that waits is an `async fn` (a JS
//! Promise) run on the engine's runtime.

use std::net::IpAddr;
use std::sync::Arc;

use napi::bindgen_prelude::{Buffer, Function, Unknown};
use napi::{Either, Env};
use napi_derive::napi;
use serde_json::Value;
use toolwire::Server;
use toolwire::host::HttpSettings;
use toolwire::transport::http::{HttpEndpoint, HttpExchange};

use crate::catalog::JsonArgs;
use crate::errors;
use crate::http::{AuthInit, http_options};
use crate::js_thread;
use crate::runtime::runtime;

/// `serveHttp`'s options less the listener's (the app's server has those).
#[napi(object)]
pub struct EndpointInit {
    pub path: Option<String>,
    pub stateless: Option<bool>,
    /// `"auto"`, `"json"` or `"sse"`.
    pub response_mode: Option<String>,
    pub json_response: Option<bool>,
    pub allowed_hosts: Option<Vec<String>>,
    pub allowed_origins: Option<Vec<String>>,
    pub max_sessions: Option<u32>,
    pub max_sessions_per_client: Option<u32>,
    /// 0 turns reaping off.
    pub session_idle_timeout_ms: Option<u32>,
    /// 0: no limit.
    pub body_read_timeout_ms: Option<u32>,
    pub max_sse_buffered_bytes: Option<u32>,
    pub authorization_servers: Option<Vec<String>>,
    pub resource_url: Option<String>,
}

/// The response head: the status and the header fields as `[name, value, name, value, ...]`
/// (Node's raw header list; values as Latin-1 strings, as Node writes them), and the whole body
/// when it is complete (`content-length` is then among the fields); `null`: it streams.
#[napi(object)]
pub struct ResponseHead {
    pub status: u32,
    pub headers: Vec<String>,
    pub body: Option<Buffer>,
}

/// A streamed body's chunks that were ready, joined, and whether the body ended.
#[napi(object)]
pub struct ReadyChunks {
    pub chunks: Buffer,
    pub ended: bool,
}

impl From<toolwire::transport::http::ResponseHead> for ResponseHead {
    fn from(head: toolwire::transport::http::ResponseHead) -> Self {
        let mut headers = Vec::with_capacity(head.headers.len() * 2);
        for (name, value) in head.headers {
            headers.push(name);
            headers.push(latin1_string(&value));
        }
        ResponseHead {
            status: u32::from(head.status),
            headers,
            body: head.body.map(|body| Buffer::from(Vec::<u8>::from(body))),
        }
    }
}

#[napi]
pub struct NativeHttpEndpoint {
    endpoint: Arc<HttpEndpoint>,
}

impl NativeHttpEndpoint {
    /// The endpoint, or the engine's error (a refused option); the outer error is napi's own.
    pub(crate) fn create(
        server: &Server,
        init: EndpointInit,
        token_validator: Option<Function<'_, JsonArgs, Unknown<'static>>>,
    ) -> napi::Result<Either<Self, Value>> {
        let settings = HttpSettings {
            path: init.path,
            stateless: init.stateless.unwrap_or(false),
            response_mode: None,
            json_response: init.json_response.unwrap_or(false),
            allowed_hosts: init.allowed_hosts.unwrap_or_default(),
            allowed_origins: init.allowed_origins.unwrap_or_default(),
            max_sessions: init.max_sessions.map(|limit| limit as usize),
            max_sessions_per_client: init.max_sessions_per_client.map(|limit| limit as usize),
            session_idle_timeout_ms: init.session_idle_timeout_ms.map(u64::from),
            header_read_timeout_ms: None,
            body_read_timeout_ms: init.body_read_timeout_ms.map(u64::from),
            max_connections: None,
            max_sse_buffered_bytes: init.max_sse_buffered_bytes.map(|bytes| bytes as usize),
            metrics_path: None,
        };
        let auth = AuthInit {
            validator: token_validator,
            authorization_servers: init.authorization_servers,
            resource_url: init.resource_url,
        };
        let endpoint = http_options(settings, init.response_mode, auth)?.and_then(|options| {
            // Idle sessions are reaped on the engine's runtime.
            let _entered = runtime().enter();
            server.http_endpoint(options)
        });
        Ok(errors::or_described(endpoint.map(|endpoint| {
            NativeHttpEndpoint {
                endpoint: Arc::new(endpoint),
            }
        })))
    }
}

/// A header name or value from JavaScript: a Latin-1 string as Node and `Headers` give them
/// (each character one byte); one with wider characters is sent as its UTF-8.
fn latin1_bytes(text: &str) -> Vec<u8> {
    text.chars()
        .map(|c| u8::try_from(u32::from(c)).ok())
        .collect::<Option<Vec<u8>>>()
        .unwrap_or_else(|| text.as_bytes().to_vec())
}

/// Header fields as bytes, names and values.
type Fields = Vec<(Vec<u8>, Vec<u8>)>;

/// A request's header fields from Node's `[name, value, ...]` list, as bytes, and the client's
/// address (unparsable: unknown).
fn request_fields(headers: &[String], peer: Option<String>) -> (Fields, Option<IpAddr>) {
    let fields = headers
        .chunks_exact(2)
        .map(|pair| (latin1_bytes(&pair[0]), latin1_bytes(&pair[1])))
        .collect();
    (fields, peer.and_then(|p| p.parse::<IpAddr>().ok()))
}

fn latin1_string(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

#[napi]
impl NativeHttpEndpoint {
    /// Starts answering one request: its method, target (path and query), header fields as
    /// `[name, value, ...]` and the client's address. The body follows through the exchange's
    /// `sendBody`; `waitedMs`: how long the app waited for it already (the body timeout counts
    /// it). Returns the exchange, or the error's description (a bad header).
    #[napi]
    pub fn exchange(
        &self,
        method: String,
        target: String,
        headers: Vec<String>,
        peer: Option<String>,
        waited_ms: Option<u32>,
    ) -> Either<NativeExchange, Value> {
        let (fields, peer) = request_fields(&headers, peer);
        let fields = fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice()));
        let waited = std::time::Duration::from_millis(waited_ms.map_or(0, u64::from));
        match self
            .endpoint
            .exchange_after(&method, &target, fields, peer, waited)
        {
            Ok(exchange) => Either::A(NativeExchange { exchange }),
            Err(err) => Either::B(errors::describe(&err)),
        }
    }

    /// Answers one request whose body the app has whole (`null`: none): complete at once when
    /// it needs nothing that has yet to happen (`completeResponse()`), else as `exchange`'s
    /// answer. Handlers are called right here, on the JS thread, as in a `connect()` session:
    /// a tool that returns its result (not a Promise) completes the answer with no hop.
    /// Returns the exchange, or the error's description (a bad header).
    #[napi]
    pub fn answer(
        &self,
        env: Env,
        method: String,
        target: String,
        headers: Vec<String>,
        body: Option<Buffer>,
        peer: Option<String>,
    ) -> Either<NativeExchange, Value> {
        let (fields, peer) = request_fields(&headers, peer);
        let fields = fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice()));
        let body = body.map(|body| body.to_vec().into()).unwrap_or_default();
        let feeding = Arc::as_ptr(&self.endpoint) as usize;
        let answered = js_thread::feeding(&env, feeding, || {
            self.endpoint.answer(&method, &target, fields, body, peer)
        });
        match answered {
            Ok(exchange) => Either::A(NativeExchange { exchange }),
            Err(err) => Either::B(errors::describe(&err)),
        }
    }

    /// Bodies up to this many bytes may be read whole before `answer` (the engine's rule).
    #[napi(getter)]
    pub fn whole_body_bytes(&self) -> u32 {
        u32::try_from(self.endpoint.whole_body_bytes()).unwrap_or(u32::MAX)
    }

    /// Milliseconds a client may take to send a request's body (`null`: no limit).
    #[napi(getter)]
    pub fn body_read_timeout_ms(&self) -> Option<u32> {
        self.endpoint
            .body_read_timeout()
            // setTimeout's longest delay (a longer one fires at once).
            .map(|timeout| {
                u32::try_from(timeout.as_millis())
                    .map_or(i32::MAX as u32, |ms| ms.min(i32::MAX as u32))
            })
    }

    /// Ends every session (their calls in flight finish first); resolves when they have.
    #[napi]
    pub async fn shutdown(&self) {
        let endpoint = self.endpoint.clone();
        let _ = runtime()
            .spawn(async move { endpoint.shutdown().await })
            .await;
    }
}

/// Core's `HttpExchange`, its waits as Promises.
#[napi]
pub struct NativeExchange {
    exchange: HttpExchange,
}

#[napi]
impl NativeExchange {
    /// Hands over a body chunk, resolving once the endpoint has room for it: false when it
    /// reads no more of the body (it answered already, e.g. 413).
    #[napi]
    pub async fn send_body(&self, chunk: Buffer) -> bool {
        let chunk: Vec<u8> = chunk.to_vec();
        self.exchange.send_body(chunk.into()).await
    }

    /// Hands over a body chunk if the endpoint has room for it now: whether it took it (false:
    /// it reads no more), or `null` when it has no room (then `sendBody`).
    #[napi]
    pub fn try_send_body(&self, chunk: Buffer) -> Option<bool> {
        self.exchange.try_send_body(chunk.to_vec().into()).ok()
    }

    /// The body is complete.
    #[napi]
    pub fn end_body(&self) {
        self.exchange.end_body();
    }

    /// The client went away before the body was complete.
    #[napi]
    pub fn abort_body(&self) {
        self.exchange.abort_body();
    }

    /// The whole response when `answer` completed it at once; `null` otherwise.
    #[napi]
    pub fn complete_response(&self) -> Option<ResponseHead> {
        self.exchange.complete_response().map(ResponseHead::from)
    }

    /// The response head when it is ready now (its body: the whole one, or `null` when it
    /// streams: then `readyChunks` and `nextChunk`); `null` when it is not (then `response`).
    #[napi]
    pub fn ready_response(&self) -> Option<ResponseHead> {
        self.exchange.ready_response().map(ResponseHead::from)
    }

    /// The streamed body's chunks ready now, joined (up to about `maxBytes`), and whether it
    /// ended (or the client hung up). Empty and not ended: wait with `nextChunk`.
    #[napi]
    pub fn ready_chunks(&self, max_bytes: u32) -> ReadyChunks {
        let (chunks, ended) = self.exchange.ready_chunks(max_bytes as usize);
        ReadyChunks {
            chunks: Buffer::from(Vec::<u8>::from(chunks)),
            ended,
        }
    }

    /// The response head once it is ready (with the whole body when complete); `null` when
    /// the client hung up before.
    #[napi]
    pub async fn response(&self) -> napi::Result<Option<ResponseHead>> {
        let head = self
            .exchange
            .response()
            .await
            .map_err(|err| napi::Error::from_reason(err.to_string()))?;
        Ok(head.map(ResponseHead::from))
    }

    /// The next body chunk, or `null` at its end or once the client hung up.
    #[napi]
    pub async fn next_chunk(&self) -> Option<Buffer> {
        let chunk = self.exchange.next_chunk().await?;
        Some(Buffer::from(Vec::<u8>::from(chunk)))
    }

    /// The client hung up: the response (or the wait for it) is dropped, which cancels a
    /// 2026-07-28 request; an earlier era's call goes on and its stream can be resumed.
    #[napi]
    pub fn close(&self) {
        self.exchange.hang_up();
    }
}
