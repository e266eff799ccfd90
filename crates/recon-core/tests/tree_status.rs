//! The status-write discipline of `ResourceReconciler`, on the in-memory API server: one write
//! per reconcile, none when nothing changed, each strategy's request on the wire, and what
//! happens when another writer gets there first.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use kube::api::{Api, Patch, PatchParams, PostParams};
use kube::{CustomResource, CustomResourceExt};
use recon_core::fake::{ApiServer, RecordedRequest, RequestOrigin, Verb};
use recon_core::{
    Condition, ConditionSet, Config, ConflictPolicy, EventLog, IntoBoxed, Outcome, Request,
    ResourceReconciler, Sequence, StatusStrategy, SubReconciler, SyncReconciler,
    impl_conditioned_status,
};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, PartialEq, JsonSchema)]
#[kube(
    group = "example.com",
    version = "v1",
    kind = "Task",
    namespaced,
    status = "TaskStatus"
)]
pub struct TaskSpec {
    pub size: i32,
}

#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct TaskStatus {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub observed_generation: Option<i64>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub conditions: Vec<Condition>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub plan: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
}

const TASK: ConditionSet = ConditionSet::living(&["Planned", "Sized"]);
impl_conditioned_status!(TaskStatus, TASK);

const NOW: &str = "2024-05-01T10:00:00Z";

struct Setup {
    server: ApiServer,
    events: EventLog,
    tasks: Api<Task>,
}

async fn setup() -> Setup {
    let server = ApiServer::new();
    server
        .install_crd(&Task::crd())
        .await
        .expect("install Task CRD");
    let tasks: Api<Task> = Api::namespaced(server.client(), "default");
    let task = Task::new("t", TaskSpec { size: 3 });
    tasks
        .create(&PostParams::default(), &task)
        .await
        .expect("create task");
    server.clear_requests();
    Setup {
        server,
        events: EventLog::default(),
        tasks,
    }
}

impl Setup {
    fn config(&self) -> Config {
        Config::new(self.server.client(), "test").with_recorder(self.events.clone())
    }

    fn reconciler(&self, tree: impl SubReconciler<Task> + 'static) -> ResourceReconciler<Task> {
        ResourceReconciler::new(self.config(), tree).manage_status()
    }

    async fn reconcile(&self, reconciler: &ResourceReconciler<Task>) -> Outcome {
        let request = Request::namespaced("default", "t");
        reconciler
            .reconcile_at(&request, NOW.parse().unwrap())
            .await
            .expect("reconcile")
    }

    /// Requests the code under test sent (not the set-up's, not concurrent writers').
    /// A first reconcile leaves the task `Pending`; the log starts after it.
    async fn pending(&self) {
        self.reconcile(&self.reconciler(set_phase("Pending"))).await;
        self.server.clear_requests();
    }

    fn client_requests(&self) -> Vec<RecordedRequest> {
        self.server
            .requests()
            .into_iter()
            .filter(|r| r.origin == RequestOrigin::Client)
            .collect()
    }

    fn status_writes(&self) -> Vec<RecordedRequest> {
        self.client_requests()
            .into_iter()
            .filter(|r| r.subresource.as_deref() == Some("status") && r.verb != Verb::Get)
            .collect()
    }

    async fn stored(&self) -> TaskStatus {
        self.tasks
            .get("t")
            .await
            .unwrap()
            .status
            .unwrap_or_default()
    }
}

/// Sets `status.phase`; `Sized` is true once the task runs.
fn set_phase(phase: &'static str) -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("Phase").sync(move |ctx, task| {
        Box::pin(async move {
            let status = task.status.get_or_insert_default();
            status.phase = Some(phase.to_owned());
            let mut conditions = TASK.manage(&mut status.conditions, ctx.now());
            if phase == "Running" {
                conditions.mark_true("Sized", "Sized", "");
            } else {
                conditions.mark_false("Sized", "Waiting", "not sized yet");
            }
            Ok(())
        })
    })
}

/// Sets `status.message`.
fn set_message(message: &'static str) -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("Message").sync(move |_, task| {
        Box::pin(async move {
            task.status.get_or_insert_default().message = Some(message.to_owned());
            Ok(())
        })
    })
}

fn condition_types(status: &TaskStatus) -> Vec<&str> {
    status.conditions.iter().map(|c| c.type_.as_str()).collect()
}

// ---- one write, or none ----------------------------------------------------------------------

#[tokio::test]
async fn two_sub_reconcilers_changing_status_send_exactly_one_status_write() {
    let s = setup().await;
    let tree = Sequence::new([set_phase("Running").boxed(), set_message("working").boxed()]);
    s.reconcile(&s.reconciler(tree)).await;

    let verbs: Vec<(Verb, Option<String>)> = s
        .client_requests()
        .iter()
        .map(|r| (r.verb, r.subresource.clone()))
        .collect();
    assert_eq!(
        verbs,
        [(Verb::Get, None), (Verb::Patch, Some("status".into()))]
    );
    let stored = s.stored().await;
    assert_eq!(stored.phase.as_deref(), Some("Running"));
    assert_eq!(stored.message.as_deref(), Some("working"));
    assert_eq!(stored.observed_generation, Some(1));
    assert_eq!(condition_types(&stored), ["Planned", "Ready", "Sized"]);
    let ready = stored
        .conditions
        .iter()
        .find(|c| c.type_ == "Ready")
        .unwrap();
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_str()),
        ("Unknown", "Initializing")
    );
}

#[tokio::test]
async fn a_second_reconcile_of_an_unchanged_resource_sends_no_write() {
    let s = setup().await;
    let reconciler = s.reconciler(Sequence::new([
        set_phase("Running").boxed(),
        set_message("working").boxed(),
    ]));
    s.reconcile(&reconciler).await;
    let revision = s.server.resource_version();
    s.server.clear_requests();

    // Later, with a different clock: conditions set again to equal values keep their times.
    let later = "2024-05-02T10:00:00Z".parse().unwrap();
    reconciler
        .reconcile_at(&Request::namespaced("default", "t"), later)
        .await
        .unwrap();

    let verbs: Vec<Verb> = s.client_requests().iter().map(|r| r.verb).collect();
    assert_eq!(verbs, [Verb::Get], "steady state reads and writes nothing");
    assert_eq!(s.server.resource_version(), revision);
}

#[tokio::test]
async fn conditions_that_did_not_change_keep_their_transition_time() {
    let s = setup().await;
    let reconciler = s.reconciler(set_phase("Running"));
    s.reconcile(&reconciler).await;
    let first = s.stored().await;
    // A sub-reconciler that rebuilds the conditions from scratch, stamping them "now".
    let rebuild = SyncReconciler::<Task>::new("Rebuild").sync(|ctx, task| {
        Box::pin(async move {
            let status = task.status.get_or_insert_default();
            status.conditions.clear();
            let mut m = TASK.manage(&mut status.conditions, ctx.now());
            m.initialize();
            m.mark_true("Sized", "Sized", "");
            Ok(())
        })
    });
    let later = "2024-06-01T00:00:00Z".parse().unwrap();
    s.server.clear_requests();
    s.reconciler(rebuild)
        .reconcile_at(&Request::namespaced("default", "t"), later)
        .await
        .unwrap();

    assert!(
        s.status_writes().is_empty(),
        "equal conditions are not a change"
    );
    assert_eq!(s.stored().await.conditions, first.conditions);
}

// ---- each strategy on the wire ---------------------------------------------------------------

#[tokio::test]
async fn the_merge_patch_with_lock_strategy_sends_changed_fields_and_the_resource_version() {
    let s = setup().await;
    let rv = s
        .tasks
        .get("t")
        .await
        .unwrap()
        .metadata
        .resource_version
        .unwrap();
    s.reconcile(
        &s.reconciler(set_message("hello"))
            .on_conflict(ConflictPolicy::Requeue),
    )
    .await;

    let write = &s.status_writes()[0];
    assert_eq!(
        write.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    let body = write.body_json().unwrap();
    assert_eq!(body["metadata"], json!({"resourceVersion": rv}));
    assert_eq!(body["status"]["message"], "hello");
    assert_eq!(body["status"]["observedGeneration"], 1);
    let types: Vec<&str> = body["status"]["conditions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["type"].as_str().unwrap())
        .collect();
    assert_eq!(
        types,
        ["Planned", "Ready", "Sized"],
        "a changed list goes whole"
    );
}

#[tokio::test]
async fn the_merge_patch_strategy_sends_only_the_changed_status_fields() {
    let s = setup().await;
    let reconciler = s
        .reconciler(set_message("one"))
        .status_strategy(StatusStrategy::MergePatch);
    s.reconcile(&reconciler).await;
    s.server.clear_requests();
    s.reconcile(
        &s.reconciler(set_message("two"))
            .status_strategy(StatusStrategy::MergePatch),
    )
    .await;

    let write = &s.status_writes()[0];
    assert_eq!(
        write.content_type.as_deref(),
        Some("application/merge-patch+json")
    );
    assert_eq!(
        write.body_json().unwrap(),
        json!({"status": {"message": "two"}})
    );
}

#[tokio::test]
async fn the_update_strategy_puts_the_whole_object_as_read() {
    let s = setup().await;
    let read = s.tasks.get("t").await.unwrap();
    s.reconcile(
        &s.reconciler(set_message("hello"))
            .status_strategy(StatusStrategy::Update),
    )
    .await;

    let write = &s.status_writes()[0];
    assert_eq!(
        (write.verb, write.content_type.as_deref()),
        (Verb::Update, Some("application/json"))
    );
    let body = write.body_json().unwrap();
    assert_eq!(
        body["metadata"]["resourceVersion"],
        json!(read.metadata.resource_version)
    );
    assert_eq!(body["metadata"]["uid"], json!(read.metadata.uid));
    assert_eq!(body["spec"], json!({"size": 3}));
    assert_eq!(body["status"]["message"], "hello");
    assert_eq!(s.events.events()[0].event.reason, "StatusUpdated");
}

#[tokio::test]
async fn the_apply_strategy_applies_the_whole_status_with_its_field_manager() {
    let s = setup().await;
    let strategy = StatusStrategy::Apply {
        field_manager: "task-controller".into(),
        force: true,
    };
    // The in-memory server does not serve server-side apply yet (it answers 501): this checks
    // what goes on the wire.
    let result = s
        .reconciler(set_message("hello"))
        .status_strategy(strategy)
        .reconcile(&Request::namespaced("default", "t"))
        .await;

    let write = &s.status_writes()[0];
    assert_eq!(
        write.content_type.as_deref(),
        Some("application/apply-patch+yaml")
    );
    assert_eq!(
        write.query_param("fieldManager").as_deref(),
        Some("task-controller")
    );
    assert_eq!(write.query_param("force").as_deref(), Some("true"));
    let body = write.body_json().unwrap();
    assert_eq!(body["apiVersion"], "example.com/v1");
    assert_eq!(body["kind"], "Task");
    assert_eq!(
        body["metadata"],
        json!({"name": "t", "namespace": "default"})
    );
    assert_eq!(body["status"]["message"], "hello");
    assert!(
        body.get("spec").is_none(),
        "apply sends only what this manager owns"
    );
    assert_eq!(
        result.unwrap_err().as_api_error().map(|e| e.code),
        Some(501)
    );
    assert_eq!(s.events.events()[0].event.reason, "StatusPatchFailed");
}

// ---- concurrent writers ------------------------------------------------------------------------

/// Another writer adds condition `Other` and sets `status.plan` between the reconciler's GET and
/// its status write.
fn concurrent_writer(server: &ApiServer, plan: Option<&'static str>) {
    let verb = Verb::Patch;
    let writer = move |client: kube::Client| async move {
        let tasks: Api<Task> = Api::namespaced(client, "default");
        let fresh = tasks.get("t").await.unwrap();
        let mut conditions: Vec<Value> = fresh
            .status
            .unwrap_or_default()
            .conditions
            .iter()
            .map(|c| serde_json::to_value(c).unwrap())
            .collect();
        conditions.push(json!({"type": "Other", "status": "True", "reason": "Other", "message": "", "lastTransitionTime": "2024-01-01T00:00:00Z"}));
        let mut status = json!({"conditions": conditions});
        if let Some(plan) = plan {
            status["plan"] = json!(plan);
        }
        tasks
            .patch_status(
                "t",
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await
            .unwrap();
    };
    server
        .on(verb, "tasks")
        .subresource("status")
        .once()
        .before(writer);
    server
        .on(Verb::Update, "tasks")
        .subresource("status")
        .once()
        .before(writer);
}

#[tokio::test]
async fn merge_patch_without_a_lock_erases_a_concurrent_writers_condition() {
    let s = setup().await;
    s.pending().await;
    concurrent_writer(&s.server, None);

    s.reconcile(
        &s.reconciler(set_phase("Running"))
            .status_strategy(StatusStrategy::MergePatch),
    )
    .await;

    let stored = s.stored().await;
    assert_eq!(stored.phase.as_deref(), Some("Running"));
    assert!(
        !condition_types(&stored).contains(&"Other"),
        "the whole list was replaced"
    );
}

#[tokio::test]
async fn on_conflict_the_reconciles_changes_are_reapplied_to_the_fresh_object() {
    let s = setup().await;
    s.pending().await;
    concurrent_writer(&s.server, None);

    let tree = Sequence::new([set_phase("Running").boxed(), set_message("working").boxed()]);
    s.reconcile(&s.reconciler(tree)).await;

    let writes: Vec<u16> = s.status_writes().iter().map(|w| w.status).collect();
    assert_eq!(
        writes,
        [409, 200],
        "the locked patch conflicts, the re-applied one lands"
    );
    let stored = s.stored().await;
    assert_eq!(
        stored.phase.as_deref(),
        Some("Running"),
        "non-condition fields are re-applied"
    );
    assert_eq!(stored.message.as_deref(), Some("working"));
    assert!(
        condition_types(&stored).contains(&"Other"),
        "the other writer's condition survives"
    );
    let sized = stored
        .conditions
        .iter()
        .find(|c| c.type_ == "Sized")
        .unwrap();
    assert_eq!(sized.status, "True");
}

#[tokio::test]
async fn the_update_strategy_re_reads_and_re_applies_on_conflict_too() {
    let s = setup().await;
    s.pending().await;
    concurrent_writer(&s.server, None);

    s.reconcile(
        &s.reconciler(set_message("working"))
            .status_strategy(StatusStrategy::Update),
    )
    .await;

    let writes: Vec<(Verb, u16)> = s
        .status_writes()
        .iter()
        .map(|w| (w.verb, w.status))
        .collect();
    assert_eq!(writes, [(Verb::Update, 409), (Verb::Update, 200)]);
    let stored = s.stored().await;
    assert_eq!(stored.message.as_deref(), Some("working"));
    assert!(condition_types(&stored).contains(&"Other"));
}

#[tokio::test]
async fn the_requeue_policy_leaves_the_conflict_to_the_next_reconcile() {
    let s = setup().await;
    s.pending().await;
    concurrent_writer(&s.server, None);

    let reconciler = s
        .reconciler(set_message("working"))
        .on_conflict(ConflictPolicy::Requeue);
    let outcome = s.reconcile(&reconciler).await;

    assert!(
        outcome.requeue,
        "the change is not dropped: the request is requeued"
    );
    assert_eq!(s.status_writes().len(), 1);
    assert_eq!(s.stored().await.message, None);
    s.reconcile(&reconciler).await;
    assert_eq!(s.stored().await.message.as_deref(), Some("working"));
}

// ---- seed 002: two reconciles both see an empty plan -------------------------------------------

/// Builds a plan when the status has none, counting the plans it builds.
fn planner(built: Arc<AtomicUsize>) -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("Plan").sync(move |_, task| {
        let built = built.clone();
        Box::pin(async move {
            let status = task.status.get_or_insert_default();
            if status.plan.is_none() {
                built.fetch_add(1, Ordering::SeqCst);
                status.plan = Some("plan-from-this-reconcile".into());
            }
            Ok(())
        })
    })
}

#[tokio::test]
async fn with_the_optimistic_lock_a_double_reconcile_ends_with_one_plan() {
    let s = setup().await;
    let built = Arc::new(AtomicUsize::new(0));
    let reconciler = s.reconciler(planner(built.clone()));
    // The other reconcile saw the same empty plan and wrote its own first.
    concurrent_writer(&s.server, Some("plan-from-the-other-reconcile"));

    let outcome = s.reconcile(&reconciler).await;
    assert!(
        outcome.requeue,
        "both changed status.plan: nothing is overwritten, the request requeues"
    );
    assert_eq!(
        s.stored().await.plan.as_deref(),
        Some("plan-from-the-other-reconcile")
    );

    // The requeued reconcile sees the stored plan and builds none.
    s.reconcile(&reconciler).await;
    assert_eq!(
        built.load(Ordering::SeqCst),
        1,
        "only the first reconcile built one"
    );
    assert_eq!(
        s.stored().await.plan.as_deref(),
        Some("plan-from-the-other-reconcile"),
        "one plan, the first one written"
    );
}

#[tokio::test]
async fn without_the_lock_the_double_reconcile_overwrites_the_first_plan() {
    let s = setup().await;
    let reconciler = s
        .reconciler(planner(Arc::new(AtomicUsize::new(0))))
        .status_strategy(StatusStrategy::MergePatch);
    concurrent_writer(&s.server, Some("plan-from-the-other-reconcile"));

    s.reconcile(&reconciler).await;

    assert_eq!(
        s.stored().await.plan.as_deref(),
        Some("plan-from-this-reconcile"),
        "last write wins: the other reconcile's plan is silently replaced"
    );
}

// ---- events ------------------------------------------------------------------------------------

#[tokio::test]
async fn a_status_write_publishes_a_status_patched_event_about_the_resource() {
    let s = setup().await;
    s.reconcile(&s.reconciler(set_message("hello"))).await;

    let events = s.events.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].event.reason, "StatusPatched");
    assert_eq!(events[0].event.note.as_deref(), Some("Patched status"));
    assert_eq!(events[0].regarding.kind.as_deref(), Some("Task"));
    assert_eq!(events[0].regarding.name.as_deref(), Some("t"));
}
