//! `NativeMount`: another server's catalog mounted under a prefix (core's `compose`), for the
//! JS `Server.mount`. Only types are converted here; connecting and forwarding are core's.

use std::sync::Mutex;

use napi_derive::napi;
use serde_json::Value;
use toolwire::Server;
use toolwire::compose::{Mount, MountOptions, Upstream};

use crate::errors;
use crate::runtime::runtime;

enum State {
    /// Made, not connected yet: what `connect` mounts.
    Pending(Server, String, Upstream, MountOptions),
    Mounted(Mount),
    Gone,
}

/// A mount: made by `NativeServer.prepareMount`, connected by `connect()`.
#[napi]
pub struct NativeMount {
    state: Mutex<State>,
}

impl NativeMount {
    pub(crate) fn pending(
        server: Server,
        prefix: String,
        upstream: Upstream,
        options: MountOptions,
    ) -> Self {
        NativeMount {
            state: Mutex::new(State::Pending(server, prefix, upstream, options)),
        }
    }

    fn mounted(&self) -> Option<Mount> {
        match &*self.state.lock().unwrap_or_else(|e| e.into_inner()) {
            State::Mounted(mount) => Some(mount.clone()),
            _ => None,
        }
    }
}

#[napi]
impl NativeMount {
    /// Connects and registers the upstream's catalog; the error's description when it fails.
    #[napi]
    pub async fn connect(&self) -> Option<Value> {
        let pending = std::mem::replace(
            &mut *self.state.lock().unwrap_or_else(|e| e.into_inner()),
            State::Gone,
        );
        let State::Pending(server, prefix, upstream, options) = pending else {
            return Some(errors::describe(&toolwire::Error::InvalidArgument(
                "this mount was connected already".into(),
            )));
        };
        let mounted = runtime()
            .spawn(async move { server.mount_with(&prefix, upstream, options).await })
            .await
            .unwrap_or_else(|err| {
                Err(toolwire::Error::InvalidArgument(format!(
                    "the mount was abandoned: {err}"
                )))
            });
        match mounted {
            Ok(mount) => {
                *self.state.lock().unwrap_or_else(|e| e.into_inner()) = State::Mounted(mount);
                None
            }
            Err(err) => Some(errors::describe(&err)),
        }
    }

    /// The prefix ("" before it is connected).
    #[napi(getter)]
    pub fn prefix(&self) -> String {
        self.mounted()
            .map(|mount| mount.prefix().to_owned())
            .unwrap_or_default()
    }

    /// The names and URIs it registered, as this server's clients see them.
    #[napi]
    pub fn registered(&self) -> Vec<String> {
        self.mounted()
            .map(|mount| mount.registered())
            .unwrap_or_default()
    }

    /// Reads the upstream's lists again; the error's description when it fails.
    #[napi]
    pub async fn refresh(&self) -> Option<Value> {
        let mount = self.mounted()?;
        let refreshed = runtime()
            .spawn(async move { mount.refresh().await })
            .await
            .unwrap_or_else(|err| {
                Err(toolwire::Error::InvalidArgument(format!(
                    "the refresh was abandoned: {err}"
                )))
            });
        refreshed.err().map(|err| errors::describe(&err))
    }

    /// Takes what it registered off the server and ends the connection.
    #[napi]
    pub async fn unmount(&self) {
        if let Some(mount) = self.mounted() {
            let _ = runtime().spawn(async move { mount.unmount().await }).await;
        }
    }
}
