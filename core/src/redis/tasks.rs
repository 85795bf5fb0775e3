//! The task store in Redis.
//!
//! Keys (under the prefix): `task:<id>` the record as JSON, expiring with the task;
//! `tasks` and `tasks-of:<principal>` sorted sets of ids by expiry, for the limits;
//! `live` the set of tasks not yet ended, and `lease:<id>` the lease the running replica
//! renews. A task in `live` whose lease is gone lost its replica: the first replica to see it
//! ends it `failed`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::Shared;
use super::changes::signal_to_json;
use crate::Error;
use crate::tasks::{TaskRecord, TaskSignal, TaskStatus, TaskStore};

/// A [`TaskStore`] shared by every replica connected to one Redis (see
/// [`Redis`](super::Redis)).
pub struct RedisTaskStore {
    shared: Arc<Shared>,
    /// Tasks this replica ended because their replica died, not yet announced.
    lapsed: Mutex<Vec<String>>,
}

impl std::fmt::Debug for RedisTaskStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisTaskStore").finish_non_exhaustive()
    }
}

/// The message of a task whose replica died.
pub const LAPSED_MESSAGE: &str =
    "Tool execution failed: the server replica running it stopped (its lease ran out)";

/// How often `update` retries when other replicas keep changing the same task.
const MAX_ATTEMPTS: usize = 32;

/// Refuses a new task when the store is full, else stores it (atomically: replicas inserting
/// at once never overshoot a limit). 0 stored, 1 full overall, 2 full for the principal.
const INSERT: &str = r"
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', ARGV[5])
redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', ARGV[5])
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[6]) then return 1 end
if redis.call('ZCARD', KEYS[3]) >= tonumber(ARGV[7]) then return 2 end
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
redis.call('ZADD', KEYS[2], ARGV[4], ARGV[1])
redis.call('ZADD', KEYS[3], ARGV[4], ARGV[1])
redis.call('PEXPIRE', KEYS[3], ARGV[3])
if ARGV[9] == '1' then
  redis.call('SET', KEYS[4], '1', 'PX', ARGV[8])
  redis.call('SADD', KEYS[5], ARGV[1])
end
return 0
";

#[derive(Serialize, Deserialize)]
struct Stored {
    id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    principal: Option<String>,
    status: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    message: Option<String>,
    created_ms: u64,
    updated_ms: u64,
    ttl_ms: u64,
    poll_ms: u64,
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    input_requests: Map<String, Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    result: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<Value>,
}

fn millis_since_epoch(time: SystemTime) -> u64 {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    u64::try_from(since.as_millis()).unwrap_or(u64::MAX)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

fn encode(task: &TaskRecord) -> String {
    let stored = Stored {
        id: task.id.clone(),
        principal: task.principal.clone(),
        status: task.status.as_str().to_owned(),
        message: task.status_message.clone(),
        created_ms: millis_since_epoch(task.created_at),
        updated_ms: millis_since_epoch(task.last_updated_at),
        ttl_ms: millis(task.ttl),
        poll_ms: millis(task.poll_interval),
        input_requests: task.input_requests.clone(),
        result: task.result.clone(),
        error: task.error.clone(),
    };
    serde_json::to_string(&stored).unwrap_or_default()
}

fn decode(text: &str) -> Result<TaskRecord, Error> {
    let corrupt = |why: String| {
        Error::Transport(std::io::Error::new(
            std::io::ErrorKind::InvalidData,
            format!("a task record in Redis is not one of ours: {why}"),
        ))
    };
    let stored: Stored = serde_json::from_str(text).map_err(|err| corrupt(err.to_string()))?;
    let status = TaskStatus::parse(&stored.status)
        .ok_or_else(|| corrupt(format!("status {}", stored.status)))?;
    let at = |ms: u64| SystemTime::UNIX_EPOCH + Duration::from_millis(ms);
    Ok(TaskRecord {
        id: stored.id,
        principal: stored.principal,
        status,
        status_message: stored.message,
        created_at: at(stored.created_ms),
        last_updated_at: at(stored.updated_ms),
        ttl: Duration::from_millis(stored.ttl_ms),
        poll_interval: Duration::from_millis(stored.poll_ms),
        input_requests: stored.input_requests,
        result: stored.result,
        error: stored.error,
    })
}

impl RedisTaskStore {
    pub(super) fn new(shared: Arc<Shared>) -> Self {
        RedisTaskStore {
            shared,
            lapsed: Mutex::default(),
        }
    }

    fn task_key(&self, id: &str) -> String {
        self.shared.key(&["task", id])
    }

    fn lease_key(&self, id: &str) -> String {
        self.shared.key(&["lease", id])
    }

    /// Ends `id` `failed` if it has not ended: its replica died. Returns the record as it is.
    fn lapse(&self, id: &str) -> Result<Option<TaskRecord>, Error> {
        let mut ended = false;
        let record = self.update(id, &mut |task| {
            ended = !task.status.is_terminal();
            if ended {
                task.status = TaskStatus::Failed;
                task.status_message = Some(LAPSED_MESSAGE.into());
                task.input_requests.clear();
                task.error = Some(serde_json::json!({
                    "code": -32603,
                    "message": LAPSED_MESSAGE,
                }));
                task.last_updated_at = SystemTime::now();
            }
        })?;
        if ended {
            tracing::warn!(
                task = id,
                "a task's replica stopped renewing its lease: failed"
            );
            self.lapsed
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(id.to_owned());
        }
        Ok(record)
    }
}

impl TaskStore for RedisTaskStore {
    fn insert(
        &self,
        task: TaskRecord,
        max_tasks: usize,
        max_per_principal: usize,
    ) -> Result<(), Error> {
        let now = millis_since_epoch(SystemTime::now());
        let ttl = millis(task.ttl).max(1);
        let principal_key = match &task.principal {
            Some(principal) => self.shared.key(&["tasks-of", principal]),
            None => self.shared.key(&["tasks-of-nobody"]),
        };
        let live = !task.status.is_terminal();
        let outcome: i64 = self.shared.command(|con| {
            redis::Script::new(INSERT)
                .key(self.task_key(&task.id))
                .key(self.shared.key(&["tasks"]))
                .key(&principal_key)
                .key(self.lease_key(&task.id))
                .key(self.shared.key(&["live"]))
                .arg(&task.id)
                .arg(encode(&task))
                .arg(ttl)
                .arg(now.saturating_add(ttl))
                .arg(now)
                .arg(max_tasks)
                .arg(max_per_principal)
                .arg(millis(self.shared.options.task_lease).max(1))
                .arg(if live { "1" } else { "0" })
                .invoke(con)
        })?;
        match outcome {
            0 => Ok(()),
            1 => Err(crate::tasks::full(max_tasks)),
            _ => Err(crate::tasks::full_for_client(max_per_principal)),
        }
    }

    fn get(&self, id: &str) -> Result<Option<TaskRecord>, Error> {
        let (text, leased): (Option<String>, bool) = self.shared.command(|con| {
            redis::pipe()
                .get(self.task_key(id))
                .exists(self.lease_key(id))
                .query(con)
        })?;
        let Some(text) = text else { return Ok(None) };
        let task = decode(&text)?;
        if task.status.is_terminal() || leased {
            return Ok(Some(task));
        }
        self.lapse(id)
    }

    fn update(
        &self,
        id: &str,
        change: &mut dyn FnMut(&mut TaskRecord),
    ) -> Result<Option<TaskRecord>, Error> {
        let key = self.task_key(id);
        self.shared.command(|con| {
            for _ in 0..MAX_ATTEMPTS {
                redis::cmd("WATCH").arg(&key).exec(con)?;
                let Some(text) = redis::cmd("GET").arg(&key).query::<Option<String>>(con)? else {
                    redis::cmd("UNWATCH").exec(con)?;
                    return Ok(Ok(None));
                };
                let mut task = match decode(&text) {
                    Ok(task) => task,
                    Err(err) => {
                        redis::cmd("UNWATCH").exec(con)?;
                        return Ok(Err(err));
                    }
                };
                change(&mut task);
                let mut pipe = redis::pipe();
                pipe.atomic()
                    .cmd("SET")
                    .arg(&key)
                    .arg(encode(&task))
                    .arg("KEEPTTL")
                    .ignore();
                if task.status.is_terminal() {
                    pipe.srem(self.shared.key(&["live"]), id)
                        .ignore()
                        .del(self.lease_key(id))
                        .ignore();
                }
                // EXEC answers nil when another replica changed the task after WATCH: again.
                let done: Option<()> = pipe.query(con)?;
                if done.is_some() {
                    return Ok(Ok(Some(task)));
                }
            }
            Ok(Err(Error::Busy(format!(
                "task {id} changed {MAX_ATTEMPTS} times while being changed; retry"
            ))))
        })?
    }

    fn purge_expired(&self, now: SystemTime) -> usize {
        let now = millis_since_epoch(now);
        let live_key = self.shared.key(&["live"]);
        let swept = self.shared.command(|con| {
            let gone: usize = redis::cmd("ZREMRANGEBYSCORE")
                .arg(self.shared.key(&["tasks"]))
                .arg("-inf")
                .arg(now)
                .query(con)?;
            let live: Vec<String> = redis::cmd("SMEMBERS").arg(&live_key).query(con)?;
            let mut pipe = redis::pipe();
            for id in &live {
                pipe.exists(self.task_key(id)).exists(self.lease_key(id));
            }
            let found: Vec<bool> = if live.is_empty() {
                Vec::new()
            } else {
                pipe.query(con)?
            };
            Ok((gone, live, found))
        });
        let (gone, live, found) = match swept {
            Ok(swept) => swept,
            Err(err) => {
                tracing::warn!(%err, "cannot purge expired tasks from Redis");
                return 0;
            }
        };
        for (id, pair) in live.iter().zip(found.chunks(2)) {
            let (stored, leased) = (pair.first() == Some(&true), pair.get(1) == Some(&true));
            if !stored {
                // Expired: nothing left to end.
                let _ = self
                    .shared
                    .command(|con| redis::cmd("SREM").arg(&live_key).arg(id).exec(con));
            } else if !leased && let Err(err) = self.lapse(id) {
                tracing::warn!(%err, task = %id, "cannot end a task whose replica died");
            }
        }
        gone
    }

    fn renew_leases(&self, running: &[String]) {
        if running.is_empty() {
            return;
        }
        let lease = millis(self.shared.options.task_lease).max(1);
        let renewed = self.shared.command(|con| {
            let mut pipe = redis::pipe();
            for id in running {
                pipe.cmd("SET")
                    .arg(self.lease_key(id))
                    .arg("1")
                    .arg("PX")
                    .arg(lease)
                    .ignore();
            }
            pipe.exec(con)
        });
        if let Err(err) = renewed {
            tracing::warn!(%err, "cannot renew the leases of this replica's tasks");
        }
    }

    fn lapsed(&self) -> Vec<String> {
        std::mem::take(&mut *self.lapsed.lock().unwrap_or_else(|e| e.into_inner()))
    }

    fn signal(&self, signal: &TaskSignal) -> Result<(), Error> {
        let message = signal_to_json(signal);
        self.shared.command(|con| {
            redis::cmd("PUBLISH")
                .arg(self.shared.signals_channel())
                .arg(&message)
                .exec(con)
        })
    }

    fn signals(&self) -> Option<tokio::sync::broadcast::Receiver<TaskSignal>> {
        Some(self.shared.signals.subscribe())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_survives_its_json() {
        let created = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_123);
        let mut questions = Map::new();
        questions.insert(
            "q1".into(),
            serde_json::json!({"method": "elicitation/create"}),
        );
        let task = TaskRecord {
            id: "abc".into(),
            principal: Some("ann".into()),
            status: TaskStatus::InputRequired,
            status_message: Some("asking".into()),
            created_at: created,
            last_updated_at: created + Duration::from_millis(5),
            ttl: Duration::from_secs(60),
            poll_interval: Duration::from_millis(250),
            input_requests: questions,
            result: None,
            error: None,
        };
        assert_eq!(decode(&encode(&task)).expect("decoded"), task);
        assert!(decode("{\"id\": 1}").is_err());
        let unknown = encode(&task).replace("input_required", "sleeping");
        assert!(decode(&unknown).is_err());
    }
}
