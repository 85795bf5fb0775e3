//! What tasks leave behind once they expire, in live heap bytes counted by the allocator itself
//! (`bench/tasks-soak` reports resident set sizes, which include what the allocator keeps).
//!
//! 10,000 `confirm_delete` tasks over one in-process session: each is created by its question,
//! then answered (three in four; the handler resumes and completes with its result) or
//! cancelled, and read to its end. The store is then purged as its reaper would purge it once
//! the tasks' time to live has passed. Two such rounds: a leak would show as live bytes that
//! stay after each.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::Arc;
use std::sync::atomic::{AtomicIsize, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use toolwire::tasks::MemoryTaskStore;
use toolwire::{Outbound, ServerOptions, Session, TaskStore};

/// The system allocator, counting the bytes it has handed out and not yet been given back.
struct Counting;

static LIVE: AtomicIsize = AtomicIsize::new(0);

fn change(bytes: usize, sign: isize) {
    LIVE.fetch_add(sign * bytes as isize, Ordering::Relaxed);
}

// SAFETY: every call is passed to `System` unchanged; the counter only reads the layouts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract for `alloc`, passed on.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            change(layout.size(), 1);
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            change(layout.size(), 1);
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract for `dealloc`, passed on.
        unsafe { System.dealloc(ptr, layout) };
        change(layout.size(), -1);
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: the caller's contract for `realloc`, passed on.
        let moved = unsafe { System.realloc(ptr, layout, new_size) };
        if !moved.is_null() {
            change(layout.size(), -1);
            change(new_size, 1);
        }
        moved
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn live_bytes() -> isize {
    LIVE.load(Ordering::Relaxed)
}

const TASKS: u64 = 10_000;
const TTL: Duration = Duration::from_secs(600);

struct Client {
    session: Session,
    outbound: Outbound,
    next_id: u64,
}

impl Client {
    /// Sends a 2026-07-28 request declaring the tasks extension and form elicitation, and
    /// returns its result (every request here answers with exactly one frame).
    async fn request(&mut self, method: &str, mut params: Value) -> Value {
        self.next_id += 1;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {
                "elicitation": {"form": {}},
                "extensions": {"io.modelcontextprotocol/tasks": {}}
            }
        });
        let message =
            json!({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params});
        self.session.handle_frame(message.to_string().as_bytes());
        let frame = tokio::time::timeout(Duration::from_secs(10), self.outbound.recv())
            .await
            .expect("an answer within 10 s")
            .expect("the session is open");
        let answer: Value = serde_json::from_str(&frame).expect("the server sends JSON");
        assert_eq!(answer["id"], json!(self.next_id), "{answer}");
        answer["result"].clone()
    }

    /// Creates, answers or cancels, and reads to its end each of `count` tasks.
    async fn round(&mut self, count: u64) {
        let mut answered = Vec::new();
        for i in 0..count {
            let created = self
                .request(
                    "tools/call",
                    json!({"name": "confirm_delete", "arguments": {"filename": format!("f{i}")}}),
                )
                .await;
            assert_eq!(created["status"], "input_required", "{created}");
            let id = created["taskId"].as_str().expect("a task id").to_owned();
            if i % 4 == 3 {
                self.request("tasks/cancel", json!({"taskId": id})).await;
            } else {
                let answer = json!({"q1": {"action": "accept", "content": {"confirm": true}}});
                self.request(
                    "tasks/update",
                    json!({"taskId": id, "inputResponses": answer}),
                )
                .await;
                answered.push((id, i));
            }
        }
        // Each answered handler resumes on the runtime; every read below is a request and its
        // answer, and the handler has usually completed by the first one.
        for (id, i) in answered {
            let mut reads = 0;
            loop {
                let task = self.request("tasks/get", json!({"taskId": id})).await;
                if task["status"] == "completed" {
                    assert_eq!(
                        task["result"]["content"][0]["text"],
                        format!("Deleted f{i}")
                    );
                    break;
                }
                reads += 1;
                assert!(reads < 10_000, "task {id} did not complete: {task}");
                tokio::task::yield_now().await;
            }
        }
    }
}

/// What the reaper does once the tasks' time to live has passed.
fn expire_all(store: &MemoryTaskStore) {
    let gone = store.purge_expired(SystemTime::now() + TTL + Duration::from_secs(1));
    assert!(gone > 0);
    assert!(store.is_empty(), "{} tasks left", store.len());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn expired_tasks_leave_no_live_memory_behind() {
    let store = Arc::new(MemoryTaskStore::default());
    let mut options = ServerOptions::default();
    options.task_ttl = TTL;
    options.max_tasks = 2 * TASKS as usize;
    options.max_tasks_per_principal = 2 * TASKS as usize;
    let server =
        toolwire_demo::conformance::build_conformance_server_with_store(options, store.clone())
            .expect("the conformance server builds");
    let (session, outbound) = server.session().expect("inside a runtime");
    let mut client = Client {
        session,
        outbound,
        next_id: 0,
    };

    // A first small round lets everything made once (schemas compiled, tables sized, the
    // reaper started) be made before the count starts.
    client.round(200).await;
    expire_all(&store);
    let start = live_bytes();

    let mut kept_per_task = Vec::new();
    let mut left_after = Vec::new();
    for _ in 0..2 {
        client.round(TASKS).await;
        kept_per_task.push((live_bytes() - start) / TASKS as isize);
        expire_all(&store);
        left_after.push(live_bytes() - start);
    }
    println!(
        "live heap: {start} bytes before the rounds; per kept task {kept_per_task:?} bytes; \
         left after each round's expiry {left_after:?} bytes"
    );
    for kept in &kept_per_task {
        assert!(*kept > 0, "a kept task costs something: {kept_per_task:?}");
    }
    // What a round leaves is what the session itself still holds (its id table's room, and
    // the like): a few KiB at most, against the megabytes the round kept.
    for left in &left_after {
        assert!(
            *left < 64 * 1024,
            "a round left {left} bytes behind: {left_after:?}"
        );
    }
}
