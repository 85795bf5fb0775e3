//! The tasks extension (`io.modelcontextprotocol/tasks`): tool calls that outlive their request.
//!
//! A 2026-07-28 `tools/call` from a client that declares the extension, to a tool whose
//! [`TaskSupport`] allows it, becomes a task when the handler needs a while or asks the client
//! something: the call answers `resultType: "task"` at once, the handler keeps running, and the
//! client polls `tasks/get`, answers questions with `tasks/update` and may `tasks/cancel`.
//! Inside a task `ctx.elicit` / `sample` / `list_roots` park the handler until `tasks/update`
//! brings the answer, so one handler serves a legacy session, a modern request and a task.
//!
//! Records live in a [`TaskStore`] (in memory by default); the running handlers, their
//! cancellation and their open questions live in this process. With a store shared between
//! replicas, `tasks/update` and `tasks/cancel` may come to a replica other than the one
//! running the handler: that one changes the record and sends the runner a [`TaskSignal`].

mod store;

#[cfg(feature = "redis")]
pub(crate) use store::{full, full_for_client};

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};
use tokio::sync::oneshot;

use crate::Error;
use crate::cancel::CallCancel;
use crate::changes::{Change, ChangeBus};
use crate::protocol::input::check_response_shape;
use crate::wire::ErrorObject;
pub use store::{MemoryTaskStore, TaskAction, TaskRecord, TaskSignal, TaskStatus, TaskStore};

/// The extension's identifier, in capabilities.
pub const EXTENSION: &str = "io.modelcontextprotocol/tasks";

/// Whether a tool may run as a task: part of a tool's definition, so defined with it.
pub use crate::protocol::TaskSupport;

/// Whether a request's client capabilities declare the extension.
pub(crate) fn declared(client_capabilities: &Value) -> bool {
    client_capabilities
        .get("extensions")
        .and_then(|extensions| extensions.get(EXTENSION))
        .is_some()
}

/// `requiredCapabilities` naming the extension (-32021's data).
pub(crate) fn required_capabilities() -> Value {
    json!({ "extensions": { EXTENSION: {} } })
}

/// A fresh task id: 128 bits from the OS's random source, as 32 hex digits. No fallback: a
/// guessable id would hand one client's task to another.
fn new_task_id() -> Result<String, String> {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).map_err(|err| format!("no random source for a task id: {err}"))?;
    Ok(crate::wire::hex(&bytes))
}

/// Settings of a server's tasks.
#[derive(Clone, Debug)]
pub(crate) struct TaskSettings {
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
    pub(crate) max_tasks: usize,
    pub(crate) max_per_principal: usize,
}

/// The server's tasks: the store, and the ones running here.
pub(crate) struct Tasks {
    store: Arc<dyn TaskStore>,
    /// Where a task's changes are announced (`notifications/tasks` on listen streams).
    changes: Arc<dyn ChangeBus>,
    running: Mutex<HashMap<String, Arc<LiveTask>>>,
    settings: TaskSettings,
    /// Set once the reaper runs (it starts with the first task, on the runtime serving it).
    reaper: AtomicBool,
    metrics: Arc<crate::metrics::Metrics>,
}

impl Tasks {
    pub(crate) fn new(
        store: Arc<dyn TaskStore>,
        changes: Arc<dyn ChangeBus>,
        settings: TaskSettings,
        metrics: Arc<crate::metrics::Metrics>,
    ) -> Self {
        Tasks {
            store,
            changes,
            running: Mutex::default(),
            settings,
            reaper: AtomicBool::new(false),
            metrics,
        }
    }

    /// Tasks whose handler runs in this process now.
    pub(crate) fn running_here(&self) -> usize {
        self.running().len()
    }

    /// Whether the store never blocks or waits outside this process.
    pub(crate) fn in_process(&self) -> bool {
        self.store.in_process()
    }

    /// Changes the stored task and announces it, if it exists and has not ended. Returns
    /// whether it changed.
    fn update_running(
        &self,
        id: &str,
        change: &mut dyn FnMut(&mut TaskRecord),
    ) -> Result<bool, Error> {
        let mut changed = false;
        self.store.update(id, &mut |task| {
            // A shared store may run this again on a fresh copy: only the last run counts.
            changed = false;
            if !task.status.is_terminal() {
                change(task);
                task.last_updated_at = SystemTime::now();
                changed = true;
            }
        })?;
        // Only a real change is announced: an ended task stays silent.
        if changed {
            self.changes
                .publish(Change::TaskUpdated { id: Arc::from(id) });
        }
        Ok(changed)
    }

    /// The same where nobody waits for the outcome (the handler's own progress and end): a
    /// store that cannot be reached is logged, and the lease ends the task if it stays so.
    fn update_or_log(&self, id: &str, change: &mut dyn FnMut(&mut TaskRecord)) {
        if let Err(err) = self.update_running(id, change) {
            tracing::warn!(task = id, %err, "the task store missed a change of a running task");
        }
    }

    fn running(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<LiveTask>>> {
        self.running.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Creates the task for a call that is becoming one: stored (so an immediate `tasks/get`
    /// finds it) before the call answers. `finished`: the handler's outcome if it already
    /// ended. An error says why no task could be made (the store is full, no random source).
    pub(crate) fn create(
        self: &Arc<Self>,
        live: &Arc<LiveTask>,
        principal: Option<String>,
        finished: Option<Finished>,
    ) -> Result<TaskRecord, String> {
        if !self.start_reaper() {
            // No runtime for a reaper: each create purges instead.
            self.store.purge_expired(SystemTime::now());
        }
        let now = SystemTime::now();
        let mut record = TaskRecord {
            id: new_task_id()?,
            principal,
            status: TaskStatus::Working,
            status_message: None,
            created_at: now,
            last_updated_at: now,
            ttl: self.settings.ttl,
            poll_interval: self.settings.poll_interval,
            input_requests: Map::new(),
            result: None,
            error: None,
        };
        let mut questions = live.lock();
        if let Some(finished) = finished {
            finished.apply(&mut record);
        } else if !questions.open.is_empty() {
            record.status = TaskStatus::InputRequired;
            record.input_requests = questions.requests();
        }
        self.store
            .insert(
                record.clone(),
                self.settings.max_tasks,
                self.settings.max_per_principal,
            )
            .map_err(|err| match err {
                Error::Busy(why) => {
                    self.metrics.refused(crate::metrics::Limit::Tasks);
                    why
                }
                other => other.to_string(),
            })?;
        if !record.status.is_terminal() {
            questions.task_id = Some(record.id.clone());
            self.running().insert(record.id.clone(), live.clone());
        }
        Ok(record)
    }

    /// The task `id` as `principal` may see it: another principal's task is as good as unknown.
    pub(crate) fn get(
        self: &Arc<Self>,
        id: &str,
        principal: Option<&str>,
    ) -> Result<Option<TaskRecord>, ErrorObject> {
        // A replica that only reads tasks made elsewhere sweeps and announces too (a read may
        // end a dead replica's task, and the reaper drains what the store ended).
        self.start_reaper();
        Ok(self
            .store
            .get(id)
            .map_err(|err| unreachable_store(&err))?
            .filter(|task| task.principal.as_deref() == principal))
    }

    /// `tasks/update`: answers the open questions named in `responses` (other keys are
    /// ignored) before returning, so the next `tasks/get` already shows what is still open.
    /// A malformed answer to an open question refuses the whole update (-32602), and every
    /// question stays open. A task running on another replica gets its answers through the
    /// store's signal.
    pub(crate) fn answer(
        &self,
        task: &TaskRecord,
        responses: &Map<String, Value>,
    ) -> Result<(), ErrorObject> {
        if self.running().contains_key(&task.id) {
            return self.answer_here(&task.id, responses);
        }
        if task.status.is_terminal() {
            return Ok(());
        }
        for (key, answer) in responses {
            if let Some(question) = task.input_requests.get(key) {
                let method = question["method"].as_str().unwrap_or_default();
                check_response_shape(method, key, answer)?;
            }
        }
        let mut answered = Map::new();
        self.update_running(&task.id, &mut |record| {
            answered = responses
                .iter()
                .filter(|(key, _)| record.input_requests.remove(*key).is_some())
                .map(|(key, answer)| (key.clone(), answer.clone()))
                .collect();
            if record.input_requests.is_empty() {
                record.status = TaskStatus::Working;
            }
        })
        .map_err(|err| unreachable_store(&err))?;
        if answered.is_empty() {
            return Ok(());
        }
        self.store
            .signal(&TaskSignal {
                id: task.id.clone(),
                action: TaskAction::Answer(answered),
            })
            .map_err(|err| unreachable_store(&err))
    }

    /// Answers to a task whose handler runs in this process.
    fn answer_here(&self, id: &str, responses: &Map<String, Value>) -> Result<(), ErrorObject> {
        let Some(live) = self.running().get(id).cloned() else {
            return Ok(());
        };
        let mut questions = live.lock();
        for (key, answer) in responses {
            if let Some(question) = questions.open.get(key) {
                let method = question.request["method"].as_str().unwrap_or_default();
                check_response_shape(method, key, answer)?;
            }
        }
        let mut answered = false;
        for (key, answer) in responses {
            if let Some(question) = questions.open.remove(key) {
                // A handler that stopped waiting (cancelled) no longer takes it: fine.
                let _ = question.answer.send(answer.clone());
                answered = true;
            }
        }
        if answered {
            let open = questions.requests();
            self.update_running(id, &mut |task| {
                task.status = if open.is_empty() {
                    TaskStatus::Working
                } else {
                    TaskStatus::InputRequired
                };
                task.input_requests = open.clone();
            })
            .map_err(|err| unreachable_store(&err))?;
        }
        Ok(())
    }

    /// `tasks/cancel`: `cancelled` is stored first, then the handler's cancellation fires (here,
    /// or through the store's signal on the replica running it). A terminal task stays as it is.
    pub(crate) fn cancel(&self, id: &str) -> Result<(), ErrorObject> {
        let changed = self
            .update_running(id, &mut |task| {
                task.status = TaskStatus::Cancelled;
                task.status_message = Some("Cancelled by the client".into());
                task.input_requests.clear();
            })
            .map_err(|err| unreachable_store(&err))?;
        if !self.cancel_here(id) && changed {
            self.store
                .signal(&TaskSignal {
                    id: id.to_owned(),
                    action: TaskAction::Cancel,
                })
                .map_err(|err| unreachable_store(&err))?;
        }
        Ok(())
    }

    /// Stops the handler of task `id` if it runs here; returns whether it did.
    fn cancel_here(&self, id: &str) -> bool {
        let live = self.running().remove(id);
        let Some(live) = live else { return false };
        live.cancel.cancel();
        live.lock().open.clear();
        true
    }

    /// A signal from another replica: acted on if the task runs here.
    fn on_signal(&self, signal: TaskSignal) {
        match signal.action {
            TaskAction::Answer(answers) => {
                if let Err(error) = self.answer_here(&signal.id, &answers) {
                    // Checked by the replica that took the update: only a store failure here.
                    tracing::warn!(task = %signal.id, ?error, "answers from another replica were not taken");
                }
            }
            TaskAction::Cancel => {
                self.cancel_here(&signal.id);
            }
        }
    }

    /// The handler ended: its outcome is stored, unless the task already ended (cancelled).
    pub(crate) fn finish(&self, live: &LiveTask, finished: Finished) {
        let Some(id) = live.lock().task_id.clone() else {
            return;
        };
        self.running().remove(&id);
        self.update_or_log(&id, &mut |task| finished.clone().apply(task));
    }

    /// A question asked inside a running task: stored with the others still open.
    fn asked(&self, id: &str, open: Map<String, Value>) {
        self.update_or_log(id, &mut |task| {
            task.status = TaskStatus::InputRequired;
            task.input_requests = open.clone();
        });
    }

    /// A progress message from a running task's handler, shown as its status message.
    pub(crate) fn progressed(&self, id: &str, message: &str) {
        self.update_or_log(id, &mut |task| {
            task.status_message = Some(message.to_owned());
        });
    }

    /// Expired records go even when no new task comes: a task on the runtime serving the
    /// server purges the store once a second while the server lives (it holds only a weak
    /// reference); with a shared store it also renews the leases of the tasks running here,
    /// announces those whose replica died, and acts on signals from other replicas. A handler
    /// still running at its task's expiry is ended by its own call (`run_may_be_task`).
    /// Returns whether a reaper runs.
    fn start_reaper(self: &Arc<Self>) -> bool {
        if self.reaper.load(Ordering::Acquire) {
            return true;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return false;
        };
        if self.reaper.swap(true, Ordering::AcqRel) {
            return true;
        }
        if let Some(mut signals) = self.store.signals() {
            let tasks = Arc::downgrade(self);
            runtime.spawn(async move {
                loop {
                    let signal = match signals.recv().await {
                        Ok(signal) => signal,
                        Err(tokio::sync::broadcast::error::RecvError::Lagged(missed)) => {
                            tracing::warn!(missed, "signals to tasks came faster than taken");
                            continue;
                        }
                        Err(tokio::sync::broadcast::error::RecvError::Closed) => return,
                    };
                    let Some(tasks) = tasks.upgrade() else { return };
                    tasks.on_signal(signal);
                }
            });
        }
        let tasks = Arc::downgrade(self);
        runtime.spawn(async move {
            let mut tick = tokio::time::interval(Duration::from_secs(1));
            tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                tick.tick().await;
                let Some(tasks) = tasks.upgrade() else { return };
                let running: Vec<String> = tasks.running().keys().cloned().collect();
                tasks.store.renew_leases(&running);
                tasks.store.purge_expired(SystemTime::now());
                for id in tasks.store.lapsed() {
                    tasks
                        .changes
                        .publish(Change::TaskUpdated { id: Arc::from(id) });
                }
            }
        });
        true
    }
}

/// -32603 for a task store that cannot be reached: a defined answer, never "unknown task".
fn unreachable_store(err: &Error) -> ErrorObject {
    ErrorObject::internal(format!(
        "Internal error: the task store cannot be reached ({err}); retry later"
    ))
}

/// How a task's handler ended.
#[derive(Clone, Debug)]
pub(crate) enum Finished {
    /// Its answer, as `tools/call` would have returned it (`isError` ones too).
    Completed(Value),
    /// A JSON-RPC error.
    Failed(Value),
    /// Cancelled before it answered.
    Cancelled,
}

impl Finished {
    fn apply(self, task: &mut TaskRecord) {
        task.input_requests.clear();
        task.last_updated_at = SystemTime::now();
        match self {
            Finished::Completed(result) => {
                task.status = TaskStatus::Completed;
                task.status_message = None;
                task.result = Some(result);
            }
            Finished::Failed(error) => {
                task.status = TaskStatus::Failed;
                task.status_message = error
                    .get("message")
                    .and_then(Value::as_str)
                    .map(|m| format!("Tool execution failed: {m}"));
                task.error = Some(error);
            }
            Finished::Cancelled => {
                task.status = TaskStatus::Cancelled;
                task.status_message = None;
            }
        }
    }
}

/// A call that may become a task, and then is one: its cancellation and open questions.
pub(crate) struct LiveTask {
    pub(crate) cancel: Arc<CallCancel>,
    questions: Mutex<Questions>,
    /// Fired when the handler asks something: a call waiting to see whether it becomes a task
    /// becomes one now.
    asked: tokio::sync::Notify,
    tasks: std::sync::Weak<Tasks>,
}

#[derive(Default)]
struct Questions {
    /// Set once the task exists.
    task_id: Option<String>,
    open: HashMap<String, OpenQuestion>,
    /// Keys are never reused in a task's life: `q1`, `q2`, …
    asked: u64,
}

struct OpenQuestion {
    request: Value,
    answer: oneshot::Sender<Value>,
}

impl Questions {
    fn requests(&self) -> Map<String, Value> {
        let mut keys: Vec<_> = self.open.keys().collect();
        // In the order asked: a client shows them as the handler asked them.
        keys.sort_by_key(|key| key.get(1..).and_then(|n| n.parse::<u64>().ok()));
        keys.into_iter()
            .map(|key| (key.clone(), self.open[key].request.clone()))
            .collect()
    }
}

impl LiveTask {
    pub(crate) fn new(tasks: &Arc<Tasks>, cancel: Arc<CallCancel>) -> Arc<Self> {
        Arc::new(LiveTask {
            cancel,
            questions: Mutex::default(),
            asked: tokio::sync::Notify::new(),
            tasks: Arc::downgrade(tasks),
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Questions> {
        self.questions.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Completes when the handler has asked a question (at once if it already has).
    pub(crate) async fn asked(&self) {
        loop {
            let notified = self.asked.notified();
            if !self.lock().open.is_empty() {
                return;
            }
            notified.await;
        }
    }

    /// Asks the client through the task: each question is listed by `tasks/get` until
    /// `tasks/update` answers it. Waits for every answer, or ends with [`Error::Cancelled`].
    pub(crate) async fn ask(&self, questions: Vec<(String, Value)>) -> Result<Vec<Value>, Error> {
        if questions.is_empty() {
            return Ok(Vec::new());
        }
        let mut waiting = Vec::with_capacity(questions.len());
        {
            let mut open = self.lock();
            for (method, params) in questions {
                open.asked += 1;
                let key = format!("q{}", open.asked);
                let (answer, answered) = oneshot::channel();
                let request = json!({"method": method, "params": params});
                open.open.insert(key, OpenQuestion { request, answer });
                waiting.push(answered);
            }
            if let (Some(id), Some(tasks)) = (&open.task_id, self.tasks.upgrade()) {
                tasks.asked(id, open.requests());
            }
        }
        self.asked.notify_waiters();
        let mut answers = Vec::with_capacity(waiting.len());
        for answered in waiting {
            tokio::select! {
                answer = answered => answers.push(answer.map_err(|_| Error::Cancelled)?),
                () = self.cancel.cancelled() => return Err(Error::Cancelled),
            }
        }
        Ok(answers)
    }

    /// A progress message, once the call is a task.
    pub(crate) fn progressed(&self, message: &str) {
        let id = self.lock().task_id.clone();
        if let (Some(id), Some(tasks)) = (id, self.tasks.upgrade()) {
            tasks.progressed(&id, message);
        }
    }
}
