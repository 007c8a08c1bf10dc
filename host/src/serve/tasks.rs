//! Long calls as tasks (beyond 1.11.0, `--experimentalTasks`: the MCP Tasks extension,
//! SEP-2663, `io.modelcontextprotocol/tasks`). A client that declares the extension gets, for
//! a call still running after [`TASK_AFTER`], a task instead of a request held open: it polls
//! `tasks/get` (the task's status message says which tool runs), reads the answer
//! there once the task completes, and `tasks/cancel` stops the call and the scripts it started
//! in its pages, so the page is free at once. A call that answers sooner is answered directly.
//! Tasks belong to the connection that made them: no other client can read or cancel them.
//! Over HTTP (`serve`) a connection is an MCP session of one tenant, and a task still runs
//! under that tenant's quotas (its call budget included).

use futures::future::BoxFuture;
use rmcp::ErrorData;
use rmcp::RoleServer;
use rmcp::model::{CallToolResponse, CallToolResult, CreateTaskResult, GetTaskResult};
use rmcp::service::RequestContext;
use rmcp::task_manager::{TaskExit, TaskManager, TaskOptions};
use std::time::{Duration, Instant};

/// A call still running this long after it began becomes a task.
pub const TASK_AFTER: Duration = Duration::from_secs(1);
/// How often a client is asked to poll.
const POLL_INTERVAL_MS: u64 = 500;
/// How long a task (and its answer) is kept after it was created.
const TTL_MS: u64 = 10 * 60 * 1000;

/// The tasks of one connection.
#[derive(Default)]
pub struct CallTasks {
    manager: TaskManager,
}

/// What a call running in the background ends with.
type Joined = Result<Result<CallToolResult, ErrorData>, tokio::task::JoinError>;

/// Stops the scripts a call started in its pages since the instant given (the session's
/// `terminate_scripts`), answering how many it stopped: what a cancellation does besides
/// dropping the call, so that the page is free at once.
pub type Stopper = std::sync::Arc<dyn Fn(Instant) -> BoxFuture<'static, usize> + Send + Sync>;

/// The [`Stopper`] of one session.
pub fn stopper_of(session: crate::session::Session) -> Stopper {
    std::sync::Arc::new(move |since| {
        let session = session.clone();
        Box::pin(async move { session.terminate_scripts(since).await })
    })
}

impl CallTasks {
    /// Whether the client declared the extension on this request's connection.
    pub fn declared(context: &RequestContext<RoleServer>) -> bool {
        context
            .client_capabilities()
            .is_some_and(|capabilities| capabilities.supports_tasks())
    }

    /// Runs `call` (the pipeline's, for `tool`): answered directly if it ends within
    /// [`TASK_AFTER`], as a task otherwise; `stop` stops its scripts when it is cancelled.
    pub async fn run<F>(
        &self,
        context: &RequestContext<RoleServer>,
        stop: Stopper,
        tool: String,
        call: F,
    ) -> Result<CallToolResponse, ErrorData>
    where
        F: Future<Output = Result<CallToolResult, ErrorData>> + Send + 'static,
    {
        let started = Instant::now();
        let mut handle = tokio::spawn(call);
        tokio::select! {
            joined = &mut handle => return answer(joined).map(Into::into),
            _ = tokio::time::sleep(TASK_AFTER) => {}
            _ = context.ct.cancelled() => {
                handle.abort();
                stop(started).await;
                return Err(ErrorData::internal_error("The call was cancelled.", None));
            }
        }
        let options = TaskOptions::new()
            .with_ttl_ms(TTL_MS)
            .with_poll_interval_ms(POLL_INTERVAL_MS)
            .with_status_message(format!("{tool} is running"));
        let task = self.manager.spawn(options, move |task| {
            Box::pin(async move {
                tokio::select! {
                    joined = &mut handle => answer(joined).map_err(TaskExit::Error),
                    _ = task.cancelled() => {
                        handle.abort();
                        let stopped = stop(started).await;
                        tracing::info!(%tool, stopped, "stopped the scripts of a task the client cancelled");
                        Err(TaskExit::Cancelled)
                    }
                }
            })
        });
        Ok(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    pub fn get(&self, task_id: &str) -> Result<GetTaskResult, ErrorData> {
        self.manager.get_task(task_id).map(GetTaskResult::new)
    }

    pub fn cancel(&self, task_id: &str) -> Result<(), ErrorData> {
        self.manager.cancel_task(task_id)
    }

    /// `tasks/update`: no call of this server asks for input mid-task, so there is nothing to
    /// deliver; an unknown task is still an error.
    pub fn update(&self, task_id: &str) -> Result<(), ErrorData> {
        self.manager.update_task(task_id, std::iter::empty())
    }
}

fn answer(joined: Joined) -> Result<CallToolResult, ErrorData> {
    joined.unwrap_or_else(|_| {
        Err(ErrorData::internal_error(
            "devtools-mcp failed while running the call; the server keeps serving. Please report this.",
            None,
        ))
    })
}

/// `capabilities` with the Tasks extension declared.
pub fn declare(
    mut capabilities: rmcp::model::ServerCapabilities,
) -> rmcp::model::ServerCapabilities {
    capabilities
        .extensions
        .get_or_insert_with(Default::default)
        .insert(
            rmcp::model::TASKS_EXTENSION_ID.to_string(),
            Default::default(),
        );
    capabilities
}
