//! The golden wire vectors (`tests/vectors`) replayed by core's replayer
//! (`toolwire::client::vectors`, the one reader of their format) on a session like
//! `connect()`'s, for `Server.replay_vector` (Kotlin's `dev.toolwire.testing.replayVector`).

use serde_json::Value;
use toolwire::Session;
use toolwire::client::vectors::{self, SessionWire};

use crate::connection::new_session;
use crate::errors::{ToolwireError, invalid_json};
use crate::runtime::on_runtime_abortable;

/// Replays `case_json` (one case's JSON text) on a new session of `server`, on the engine's
/// runtime; returns why it failed, or `None`.
pub(crate) async fn replay(
    server: &toolwire::Server,
    case_json: &str,
) -> Result<Option<String>, ToolwireError> {
    let case: Value =
        serde_json::from_str(case_json).map_err(|err| invalid_json("a vector case", err))?;
    let (session, outbound) = new_session(server);
    let closing = CloseOnDrop(session.clone());
    on_runtime_abortable(async move {
        // Dropped with this task, however it ends (passed, failed midway, or aborted because
        // the caller gave up): no call of the case runs on.
        let _closing = closing;
        vectors::replay(SessionWire::new(session, outbound), &case)
            .await
            .err()
    })
    .await
}

/// Ends a session at once when dropped (after a replay that passed, it has already ended and
/// this does nothing).
struct CloseOnDrop(Session);

impl Drop for CloseOnDrop {
    fn drop(&mut self) {
        self.0.close();
    }
}
