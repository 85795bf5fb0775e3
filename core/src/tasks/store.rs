//! Where tasks are kept between polls: the [`TaskStore`] trait and its in-memory default.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use crate::Error;

/// Where a task stands. The last three are terminal: once there, a task never changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TaskStatus {
    /// The tool is running.
    Working,
    /// The tool waits for answers to the task's `inputRequests` (`tasks/update`).
    InputRequired,
    /// The tool answered (an `isError` result included); `result` holds its answer.
    Completed,
    /// The call ended in a JSON-RPC error; `error` holds it.
    Failed,
    /// The client cancelled the task.
    Cancelled,
}

impl TaskStatus {
    /// The status as the wire spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// The status the wire spells `text`, if any ([`as_str`](Self::as_str) read back).
    pub fn parse(text: &str) -> Option<TaskStatus> {
        [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ]
        .into_iter()
        .find(|status| status.as_str() == text)
    }

    /// Completed, failed or cancelled: the task will not change again.
    pub fn is_terminal(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// A task as `tasks/get` shows it, plus who owns it and when it expires.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskRecord {
    /// The id: unguessable, from the OS's random source.
    pub id: String,
    /// The principal (authenticated subject) that created it; `None` without authentication.
    /// Another principal's task reads as unknown.
    pub principal: Option<String>,
    /// Where it stands.
    pub status: TaskStatus,
    /// A human-readable note on the status.
    pub status_message: Option<String>,
    /// When it was created.
    pub created_at: SystemTime,
    /// When its status, questions or outcome last changed.
    pub last_updated_at: SystemTime,
    /// How long after creation it is kept (the `ttlMs` it advertises).
    pub ttl: Duration,
    /// How often a client should poll it.
    pub poll_interval: Duration,
    /// The questions waiting for answers, by key (`input_required` only).
    pub input_requests: Map<String, Value>,
    /// The tool's answer (`completed` only).
    pub result: Option<Value>,
    /// The JSON-RPC error it ended in (`failed` only).
    pub error: Option<Value>,
}

impl TaskRecord {
    /// Whether its time to live has run out at `now`.
    pub fn is_expired(&self, now: SystemTime) -> bool {
        now.duration_since(self.created_at)
            .is_ok_and(|age| age >= self.ttl)
    }

    /// The Task (creation answer) or DetailedTask (`tasks/get`, `notifications/tasks`) fields:
    /// absent fields are left out, never `null`.
    pub(crate) fn to_wire(&self, detailed: bool) -> Map<String, Value> {
        let mut task = Map::new();
        task.insert("taskId".into(), json!(self.id));
        task.insert("status".into(), json!(self.status.as_str()));
        if let Some(message) = &self.status_message {
            task.insert("statusMessage".into(), json!(message));
        }
        task.insert("createdAt".into(), json!(rfc3339(self.created_at)));
        task.insert("lastUpdatedAt".into(), json!(rfc3339(self.last_updated_at)));
        task.insert("ttlMs".into(), json!(millis(self.ttl)));
        task.insert("pollIntervalMs".into(), json!(millis(self.poll_interval)));
        if detailed {
            if self.status == TaskStatus::InputRequired && !self.input_requests.is_empty() {
                task.insert(
                    "inputRequests".into(),
                    Value::Object(self.input_requests.clone()),
                );
            }
            if let Some(result) = &self.result {
                task.insert("result".into(), result.clone());
            }
            if let Some(error) = &self.error {
                task.insert("error".into(), error.clone());
            }
        }
        task
    }
}

/// At least 1: the harness and the schema's readers take 0 as "no time at all".
fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// `2026-11-25T10:30:00.123Z`: RFC 3339 in UTC, to the millisecond.
pub(crate) fn rfc3339(time: SystemTime) -> String {
    let since = time
        .duration_since(SystemTime::UNIX_EPOCH)
        .unwrap_or_default();
    let secs = since.as_secs();
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3600,
        rest % 3600 / 60,
        rest % 60,
        since.subsec_millis()
    )
}

/// The proleptic Gregorian date `days` after 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

/// Keeps the tasks a server created, so any connection (and, with a shared store, any
/// replica) can poll them. The default is [`MemoryTaskStore`]; `toolwire::redis` has one that
/// replicas share.
///
/// Expired tasks read as absent; a store may forget them whenever it likes after that. A store
/// that cannot be reached answers [`Error::Transport`] (the client gets a defined error, never
/// "unknown task").
pub trait TaskStore: Send + Sync + 'static {
    /// Stores a new task. Refuses it with [`Error::Busy`] when the store is full
    /// (`max_tasks` overall, or `max_per_principal` for its principal, counting unexpired
    /// tasks).
    fn insert(
        &self,
        task: TaskRecord,
        max_tasks: usize,
        max_per_principal: usize,
    ) -> Result<(), Error>;
    /// The task `id`, unless it is unknown or expired.
    fn get(&self, id: &str) -> Result<Option<TaskRecord>, Error>;
    /// Changes the task `id` atomically (no other change interleaves; a shared store may call
    /// `change` again on a fresh copy if another replica changed it meanwhile) and returns it
    /// as changed; `None` if it is unknown or expired.
    fn update(
        &self,
        id: &str,
        change: &mut dyn FnMut(&mut TaskRecord),
    ) -> Result<Option<TaskRecord>, Error>;
    /// Forgets every task expired at `now`; returns how many.
    fn purge_expired(&self, now: SystemTime) -> usize;

    /// Replicas only: `running` are the tasks whose handlers run in this process; each keeps its
    /// lease (a task whose replica stops renewing ends `failed`, see [`lapsed`](Self::lapsed)).
    /// Called about once a second.
    fn renew_leases(&self, _running: &[String]) {}
    /// Replicas only: the tasks ended `failed` since the last call because the replica running
    /// them stopped renewing their leases (it died). The server announces each.
    fn lapsed(&self) -> Vec<String> {
        Vec::new()
    }
    /// Replicas only: sends `signal` to the replica whose handler runs the task. A store for
    /// one process has nobody else to tell.
    fn signal(&self, _signal: &TaskSignal) -> Result<(), Error> {
        Ok(())
    }
    /// Replicas only: the signals sent to tasks by other replicas (all of them; a server acts
    /// on those of the tasks it runs). `None`: this store has no other replicas.
    fn signals(&self) -> Option<tokio::sync::broadcast::Receiver<TaskSignal>> {
        None
    }
    /// True when the store keeps its tasks in this process and never blocks or waits on
    /// anything outside it (the default: false, as a shared store may). A mounted endpoint
    /// answers requests that need no host handler on the host's own thread only then
    /// ([`HttpEndpoint::answer`](crate::transport::http::HttpEndpoint::answer)).
    fn in_process(&self) -> bool {
        false
    }
}

/// What one replica asks of the replica running a task.
#[derive(Clone, Debug, PartialEq)]
pub struct TaskSignal {
    /// The task.
    pub id: String,
    /// What to do.
    pub action: TaskAction,
}

/// See [`TaskSignal`].
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum TaskAction {
    /// `tasks/update` came elsewhere: hand these answers (by question key) to the handler.
    Answer(Map<String, Value>),
    /// `tasks/cancel` came elsewhere (the record already says `cancelled`): stop the handler.
    Cancel,
}

/// The store holds `max` tasks: no room for another.
pub(crate) fn full(max: usize) -> Error {
    Error::Busy(format!(
        "the server holds {max} tasks, its limit; retry later"
    ))
}

/// The store holds `max` tasks of this client's: no room for another of its.
pub(crate) fn full_for_client(max: usize) -> Error {
    Error::Busy(format!(
        "the server holds {max} tasks for this client, its limit; retry later"
    ))
}

/// Tasks in this process's memory: what a single server needs.
#[derive(Debug, Default)]
pub struct MemoryTaskStore {
    tasks: Mutex<HashMap<String, TaskRecord>>,
}

impl MemoryTaskStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TaskRecord>> {
        self.tasks.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Tasks held now, expired or not (for tests and metrics).
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether it holds no task.
    pub fn is_empty(&self) -> bool {
        self.lock().is_empty()
    }
}

impl TaskStore for MemoryTaskStore {
    fn in_process(&self) -> bool {
        true
    }

    fn insert(
        &self,
        task: TaskRecord,
        max_tasks: usize,
        max_per_principal: usize,
    ) -> Result<(), Error> {
        let now = SystemTime::now();
        let mut tasks = self.lock();
        if tasks.len() >= max_tasks {
            tasks.retain(|_, t| !t.is_expired(now));
            if tasks.len() >= max_tasks {
                return Err(full(max_tasks));
            }
        }
        let held = tasks
            .values()
            .filter(|t| t.principal == task.principal && !t.is_expired(now))
            .take(max_per_principal)
            .count();
        if held >= max_per_principal {
            return Err(full_for_client(max_per_principal));
        }
        tasks.insert(task.id.clone(), task);
        Ok(())
    }

    fn get(&self, id: &str) -> Result<Option<TaskRecord>, Error> {
        let now = SystemTime::now();
        Ok(self.lock().get(id).filter(|t| !t.is_expired(now)).cloned())
    }

    fn update(
        &self,
        id: &str,
        change: &mut dyn FnMut(&mut TaskRecord),
    ) -> Result<Option<TaskRecord>, Error> {
        let now = SystemTime::now();
        let mut tasks = self.lock();
        let Some(task) = tasks.get_mut(id).filter(|t| !t.is_expired(now)) else {
            return Ok(None);
        };
        change(task);
        Ok(Some(task.clone()))
    }

    fn purge_expired(&self, now: SystemTime) -> usize {
        let mut tasks = self.lock();
        let before = tasks.len();
        tasks.retain(|_, task| !task.is_expired(now));
        let gone = before - tasks.len();
        // After a burst, give the table's room back (a map never shrinks by itself).
        if tasks.capacity() > 64 && tasks.len() < tasks.capacity() / 4 {
            tasks.shrink_to_fit();
        }
        gone
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(id: &str, principal: Option<&str>, ttl: Duration) -> TaskRecord {
        let now = SystemTime::now();
        TaskRecord {
            id: id.into(),
            principal: principal.map(str::to_owned),
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl,
            poll_interval: Duration::from_millis(500),
            input_requests: Map::new(),
            result: None,
            error: None,
        }
    }

    #[test]
    fn a_status_reads_back_as_the_wire_spells_it() {
        for status in [
            TaskStatus::Working,
            TaskStatus::InputRequired,
            TaskStatus::Completed,
            TaskStatus::Failed,
            TaskStatus::Cancelled,
        ] {
            assert_eq!(TaskStatus::parse(status.as_str()), Some(status));
        }
        assert_eq!(TaskStatus::parse("sleeping"), None);
    }

    #[test]
    fn dates_are_rfc3339_utc() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_764_066_600_123);
        assert_eq!(rfc3339(at), "2025-11-25T10:30:00.123Z");
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00.000Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn limits_count_unexpired_tasks_overall_and_per_principal() {
        let store = MemoryTaskStore::default();
        let hour = Duration::from_secs(3600);
        store
            .insert(record("a", Some("ann"), hour), 3, 2)
            .expect("first");
        store
            .insert(record("b", Some("ann"), hour), 3, 2)
            .expect("second");
        let full = |refused: Result<(), Error>| match refused {
            Err(Error::Busy(why)) => why,
            other => panic!("not refused as full: {other:?}"),
        };
        let per_principal = full(store.insert(record("c", Some("ann"), hour), 3, 2));
        assert!(
            per_principal.contains("2 tasks for this client"),
            "{per_principal}"
        );
        store
            .insert(record("c", Some("bo"), hour), 3, 2)
            .expect("bo's");
        let overall = full(store.insert(record("d", Some("cy"), hour), 3, 2));
        assert!(overall.contains("3 tasks, its limit"), "{overall}");
        // Expired tasks make room and read as absent.
        let gone = record("e", None, Duration::ZERO);
        let store = MemoryTaskStore::default();
        store.insert(gone, 1, 1).expect("stored");
        assert!(store.get("e").expect("memory").is_none());
        store.insert(record("f", None, hour), 1, 1).expect("room");
        assert_eq!(
            store.purge_expired(SystemTime::now()),
            0,
            "the full store already made room"
        );
        assert_eq!(store.len(), 1);
    }

    #[test]
    fn the_wire_form_leaves_absent_fields_out() {
        let mut task = record("t", None, Duration::from_secs(60));
        let created = task.to_wire(false);
        for absent in [
            "result",
            "error",
            "inputRequests",
            "statusMessage",
            "requestState",
        ] {
            assert!(!created.contains_key(absent), "{absent}");
        }
        assert_eq!(created["ttlMs"], 60_000);
        task.status = TaskStatus::Completed;
        task.result = Some(json!({"content": []}));
        assert_eq!(task.to_wire(true)["result"], json!({"content": []}));
        assert!(!task.to_wire(false).contains_key("result"));
    }
}
