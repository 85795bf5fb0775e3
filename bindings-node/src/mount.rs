//! `NativeHttpEndpoint` and `NativeExchange`: core's mountable Streamable HTTP endpoint, for
//! the request handler of `lib/index.js` (`server.httpHandler()`: node:http, Express, or Web
//! `Request`/`Response`). Only types are converted here: the request head and body chunks in,
//! the response head and body chunks out. Each operation that waits is an `async fn` (a JS
//! Promise) run on the engine's runtime.

use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use napi::Either;
use napi::bindgen_prelude::{Buffer, Function, Unknown};
use napi_derive::napi;
use serde_json::Value;
use tokio::task::{AbortHandle, JoinHandle};
use toolwire::host::HttpSettings;
use toolwire::transport::http::{HttpBody, HttpEndpoint, HttpResponse, RequestBodySender};
use toolwire::{CancellationToken, Server};

use crate::catalog::JsonArgs;
use crate::errors;
use crate::http::{AuthInit, http_options};
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
/// (Node's raw header list; values as Latin-1 strings, as Node writes them).
#[napi(object)]
pub struct ResponseHead {
    pub status: u32,
    pub headers: Vec<String>,
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

fn latin1_string(bytes: &[u8]) -> String {
    bytes.iter().map(|&b| char::from(b)).collect()
}

#[napi]
impl NativeHttpEndpoint {
    /// Starts answering one request: its method, target (path and query), header fields as
    /// `[name, value, ...]` and the client's address. The body follows through the exchange's
    /// `sendBody`. Returns the exchange, or the error's description (a bad header).
    #[napi]
    pub fn exchange(
        &self,
        method: String,
        target: String,
        headers: Vec<String>,
        peer: Option<String>,
    ) -> Either<NativeExchange, Value> {
        let fields: Vec<(Vec<u8>, Vec<u8>)> = headers
            .chunks_exact(2)
            .map(|pair| (latin1_bytes(&pair[0]), latin1_bytes(&pair[1])))
            .collect();
        let request = HttpEndpoint::request(
            &method,
            &target,
            fields.iter().map(|(n, v)| (n.as_slice(), v.as_slice())),
        );
        let (request, sender) = match request {
            Ok(parts) => parts,
            Err(err) => return Either::B(errors::describe(&err)),
        };
        let peer = peer.and_then(|p| p.parse::<IpAddr>().ok());
        let endpoint = self.endpoint.clone();
        let answering = runtime().spawn(async move { endpoint.handle(request, peer).await });
        Either::A(NativeExchange {
            sender: Mutex::new(Some(sender)),
            stop_answering: answering.abort_handle(),
            answering: Mutex::new(Some(answering)),
            body: Arc::new(tokio::sync::Mutex::new(None)),
            hung_up: CancellationToken::new(),
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

#[napi]
pub struct NativeExchange {
    sender: Mutex<Option<RequestBodySender>>,
    answering: Mutex<Option<JoinHandle<HttpResponse>>>,
    /// Drops the answering task (the hang-up before the response head).
    stop_answering: AbortHandle,
    body: Arc<tokio::sync::Mutex<Option<HttpBody>>>,
    /// The client went away: chunks still awaited come back as the end.
    hung_up: CancellationToken,
}

#[napi]
impl NativeExchange {
    /// Hands over a body chunk, resolving once the endpoint has room for it: false when it
    /// reads no more of the body (it answered already, e.g. 413).
    #[napi]
    pub async fn send_body(&self, chunk: Buffer) -> bool {
        let chunk: Vec<u8> = chunk.to_vec();
        let Some(sender) = lock(&self.sender).clone() else {
            return false;
        };
        sender.send(chunk.into()).await
    }

    /// The body is complete.
    #[napi]
    pub fn end_body(&self) {
        lock(&self.sender).take();
    }

    /// The client went away before the body was complete.
    #[napi]
    pub fn abort_body(&self) {
        if let Some(sender) = lock(&self.sender).take() {
            sender.abort();
        }
    }

    /// The response head once it is ready; `null` when the client hung up before.
    #[napi]
    pub async fn response(&self) -> napi::Result<Option<ResponseHead>> {
        let Some(answering) = lock(&self.answering).take() else {
            return Err(napi::Error::from_reason("the response was taken already"));
        };
        let response = match answering.await {
            Ok(response) => response,
            // The client hung up first: nobody waits for the head.
            Err(err) if err.is_cancelled() => return Ok(None),
            Err(err) => {
                return Err(napi::Error::from_reason(format!(
                    "the endpoint failed: {err}"
                )));
            }
        };
        let (head, response_body) = response.into_parts();
        {
            let mut slot = self.body.lock().await;
            if self.hung_up.is_cancelled() {
                // The client went away meanwhile: the body (and a 2026-07-28 request with it)
                // goes now, not when this exchange is freed.
                drop(response_body);
                return Ok(None);
            }
            *slot = Some(response_body);
        }
        let mut headers = Vec::with_capacity(head.headers.len() * 2);
        for (name, value) in &head.headers {
            headers.push(name.as_str().to_owned());
            headers.push(latin1_string(value.as_bytes()));
        }
        Ok(Some(ResponseHead {
            status: u32::from(head.status.as_u16()),
            headers,
        }))
    }

    /// The next body chunk, or `null` at its end or once the client hung up.
    #[napi]
    pub async fn next_chunk(&self) -> Option<Buffer> {
        let body = self.body.clone();
        let hung_up = self.hung_up.clone();
        let chunk = runtime()
            .spawn(async move {
                tokio::select! {
                    biased;
                    () = hung_up.cancelled() => None,
                    chunk = async {
                        match body.lock().await.as_mut() {
                            Some(body) => body.next_chunk().await,
                            None => None,
                        }
                    } => chunk,
                }
            })
            .await
            .ok()
            .flatten()?;
        Some(Buffer::from(Vec::<u8>::from(chunk)))
    }

    /// The client hung up: the response (or the wait for it) is dropped, which cancels a
    /// 2026-07-28 request; an earlier era's call goes on and its stream can be resumed.
    #[napi]
    pub fn close(&self) {
        self.hung_up.cancel();
        lock(&self.sender).take();
        self.stop_answering.abort();
        let body = self.body.clone();
        runtime().spawn(async move {
            body.lock().await.take();
        });
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}
