//! `Mount` and `Upstream`: another server's catalog under a prefix (core's `compose`). Only
//! types are converted here; connecting and forwarding are core's, on the engine's runtime.

use std::collections::HashMap;
use std::sync::Arc;

use toolwire::compose::Upstream as CoreUpstream;

use crate::errors::ToolwireError;
use crate::runtime::on_runtime_abortable;

/// Where a mounted catalog comes from.
#[derive(uniffi::Enum)]
pub enum Upstream {
    /// A server in this process.
    InProcess {
        /// The server mounted.
        server: Arc<crate::server::Server>,
    },
    /// A server to spawn and speak to over its stdin and stdout.
    Command {
        /// The program (looked up on `PATH`).
        program: String,
        /// Its arguments.
        args: Vec<String>,
        /// Variables set for it, on top of this process's environment.
        env: HashMap<String, String>,
        /// Its working directory; none: this process's.
        cwd: Option<String>,
    },
    /// A Streamable HTTP server (`http://` or `https://`).
    Http {
        /// Its MCP endpoint.
        url: String,
        /// Sent with every request (an `Authorization`, say).
        headers: HashMap<String, String>,
    },
}

impl Upstream {
    pub(crate) fn into_core(self) -> CoreUpstream {
        match self {
            Upstream::InProcess { server } => CoreUpstream::Server(server.core().clone()),
            Upstream::Command {
                program,
                args,
                env,
                cwd,
            } => {
                let mut command = toolwire::client::Command::new(program, args);
                command.env = env.into_iter().collect();
                command.cwd = cwd.map(Into::into);
                CoreUpstream::Command(command)
            }
            Upstream::Http { url, headers } => CoreUpstream::Http {
                url,
                headers: headers.into_iter().collect(),
            },
        }
    }
}

/// A catalog mounted with `Server.mount`: what it registered, and the way to take it off.
#[derive(uniffi::Object)]
pub struct Mount {
    pub(crate) mount: toolwire::compose::Mount,
}

#[uniffi::export]
impl Mount {
    /// The prefix.
    pub fn prefix(&self) -> String {
        self.mount.prefix().to_owned()
    }

    /// The names and URIs it registered, as this server's clients see them.
    pub fn registered(&self) -> Vec<String> {
        self.mount.registered()
    }

    /// Reads the upstream's lists again now (they are read when it says they changed, too).
    pub async fn refresh(&self) -> Result<(), ToolwireError> {
        let mount = self.mount.clone();
        on_runtime_abortable(async move { mount.refresh().await })
            .await?
            .map_err(ToolwireError::from)
    }

    /// Takes what it registered off the server and ends the connection.
    pub async fn unmount(&self) -> Result<(), ToolwireError> {
        let mount = self.mount.clone();
        on_runtime_abortable(async move { mount.unmount().await }).await
    }
}
