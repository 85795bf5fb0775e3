//! The golden wire vectors (`tests/vectors`) replayed by core's replayer
//! (`toolwire::client::vectors`, the one reader of their format) on a hosted session, for
//! `toolwire/testing`'s `replayVector`.

use napi::bindgen_prelude::PromiseRaw;
use napi::{Env, Status};
use serde_json::Value;
use toolwire::Server;
use toolwire::client::vectors::{self, SessionWire};

use crate::hosted;
use crate::runtime::runtime;

/// Replays `case` (JSON text) on a new hosted session of `server`, on the engine's runtime;
/// resolves to why it failed, or `None`.
pub(crate) fn replay<'env>(
    env: &'env Env,
    server: &Server,
    case: &str,
) -> napi::Result<PromiseRaw<'env, Option<String>>> {
    let case: Value = serde_json::from_str(case).map_err(|err| {
        napi::Error::new(
            Status::InvalidArg,
            format!("a vector case must be JSON: {err}"),
        )
    })?;
    // The replayer reads the outbound itself, as core's client does.
    let (session, outbound, _hop) = hosted::session(env, server)?;
    let running = runtime().spawn(async move {
        let ending = session.clone();
        let failure = vectors::replay(SessionWire::new(session, outbound), &case)
            .await
            .err();
        // A case that failed midway leaves its session open: end it at once, so that no call
        // of it runs on.
        if failure.is_some() {
            ending.close();
        }
        failure
    });
    env.spawn_future(async move {
        Ok(running
            .await
            .unwrap_or_else(|err| Some(format!("the replay stopped: {err}"))))
    })
}
