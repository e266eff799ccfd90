//! The status-write discipline of `ResourceReconciler`, as tables: one write per reconcile, none
//! when nothing changed, each strategy's request on the wire, and what happens when another
//! writer gets there first (seed 002's double reconcile among them).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::task::{Task, TaskStatus, planner, set_message, set_phase};
use kube::CustomResourceExt;
use kube::api::{Api, Patch, PatchParams};
use recon_core::{
    ConflictPolicy, IntoBoxed, Outcome, Request, ResourceReconciler, Sequence, StatusStrategy,
    SubReconciler, SyncReconciler,
};
use recon_fake::{ApiServer, Verb};
use recon_testing::{EventRef, PatchRef, ReconcilerTests, TestCase, TestEnv};
use serde_json::{Value, json};

const NOW: &str = "2024-05-01T10:00:00Z";

fn at(time: &str) -> jiff::Timestamp {
    time.parse().expect("a test timestamp")
}

/// The task `t` in `default`, with `status` unless it is null.
fn task(status: Value) -> Value {
    let mut task = json!({
        "apiVersion": "example.com/v1",
        "kind": "Task",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"size": 3},
    });
    if !status.is_null() {
        task["status"] = status;
    }
    task
}

fn condition(type_: &str, status: &str, reason: &str, message: &str) -> Value {
    json!({"type": type_, "status": status, "reason": reason, "message": message,
           "lastTransitionTime": "2024-05-01T10:00:00Z"})
}

/// The conditions `manage_status` initializes.
fn initialized() -> Value {
    json!([
        condition("Planned", "Unknown", "Initializing", ""),
        condition("Ready", "Unknown", "Initializing", ""),
        condition("Sized", "Unknown", "Initializing", ""),
    ])
}

/// A status `manage_status` has seen once, with `fields` set.
fn status(fields: Value) -> Value {
    let mut status = json!({"observedGeneration": 1, "conditions": initialized()});
    if let (Some(status), Value::Object(fields)) = (status.as_object_mut(), fields) {
        status.extend(fields);
    }
    status
}

/// The conditions once `set_phase("Running")` runs on a pending task: `Sized` turns true, and
/// `Ready` stays false until every dependent is true (knative's `MarkTrue` rule, which
/// reconciler.io keeps).
fn running_after_pending() -> Value {
    json!([
        condition("Planned", "Unknown", "Initializing", ""),
        condition("Ready", "False", "Waiting", "not sized yet"),
        condition("Sized", "True", "Sized", ""),
    ])
}

/// `conditions` with the concurrent writer's `Other` added (conditions are kept sorted by type).
fn with_other(conditions: Value) -> Value {
    let mut all = vec![condition("Other", "True", "Other", "")];
    all.extend(conditions.as_array().cloned().unwrap_or_default());
    Value::Array(all)
}

/// What a first `set_phase("Pending")` reconcile leaves.
fn pending() -> Value {
    json!({
        "observedGeneration": 1,
        "phase": "Pending",
        "conditions": [
            condition("Planned", "Unknown", "Initializing", ""),
            condition("Ready", "False", "Waiting", "not sized yet"),
            condition("Sized", "False", "Waiting", "not sized yet"),
        ],
    })
}

/// What `running_and_working` leaves on a fresh task.
fn running_and_working() -> Value {
    json!({
        "observedGeneration": 1,
        "phase": "Running",
        "message": "working",
        "conditions": [
            condition("Planned", "Unknown", "Initializing", ""),
            condition("Ready", "Unknown", "Initializing", ""),
            condition("Sized", "True", "Sized", ""),
        ],
    })
}

/// The status apply of the task with `status`.
fn status_apply(status: Value) -> PatchRef {
    PatchRef::apply(
        "Task",
        Some("default"),
        "t",
        json!({
            "apiVersion": "example.com/v1",
            "kind": "Task",
            "metadata": {"name": "t", "namespace": "default"},
            "status": status,
        }),
    )
}

/// A task whose `managedFields` say `task-controller` applied `observedGeneration` and the
/// initialized conditions, and `other-controller` applied its condition `Other`.
fn owned_by_two_managers() -> Value {
    let owns = |types: &[&str]| -> Value {
        let entries: serde_json::Map<String, Value> = types
            .iter()
            .map(|t| {
                let fields = json!({".": {}, "f:type": {}, "f:status": {}, "f:reason": {},
                                    "f:message": {}, "f:lastTransitionTime": {}});
                (format!(r#"k:{{"type":"{t}"}}"#), fields)
            })
            .collect();
        Value::Object(entries)
    };
    let entry = |manager: &str, fields: Value| {
        json!({"manager": manager, "operation": "Apply", "subresource": "status",
               "apiVersion": "example.com/v1", "fieldsType": "FieldsV1",
               "time": "2024-05-01T09:00:00Z", "fieldsV1": {"f:status": fields}})
    };
    let mut task = task(status(json!({})));
    task["status"]["conditions"] = with_other(initialized());
    task["metadata"]["managedFields"] = json!([
        entry(
            "task-controller",
            json!({
                "f:observedGeneration": {},
                "f:conditions": owns(&["Planned", "Ready", "Sized"]),
            })
        ),
        entry(
            "other-controller",
            json!({"f:conditions": owns(&["Other"])})
        ),
    ]);
    task
}

fn status_patch(patch: Value) -> PatchRef {
    PatchRef::merge("Task", Some("default"), "t", patch)
}

fn patched() -> EventRef {
    EventRef::normal("StatusPatched", "Patched status")
}

fn reconcile() -> TestCase {
    TestCase::reconcile(Request::namespaced("default", "t")).at(at(NOW))
}

fn tasks() -> ReconcilerTests {
    ReconcilerTests::new().crd(&Task::crd())
}

fn managing(env: &TestEnv, tree: impl SubReconciler<Task> + 'static) -> ResourceReconciler<Task> {
    ResourceReconciler::new(env.config(), tree).manage_status()
}

fn stored(env: &TestEnv) -> Result<TaskStatus, String> {
    let task = env
        .server()
        .stored_as::<Task>(Some("default"), "t")
        .map_err(|e| e.to_string())?
        .ok_or("the task is gone")?;
    Ok(task.status.unwrap_or_default())
}

fn condition_types(status: &TaskStatus) -> Vec<&str> {
    status.conditions.iter().map(|c| c.type_.as_str()).collect()
}

/// Checks `test` on the stored status, failing the case with `what` when it does not hold.
fn stored_status(
    what: &'static str,
    test: impl Fn(&TaskStatus) -> bool + Send + Sync + 'static,
) -> impl Fn(&TestEnv, &recon_testing::Expectations) -> Result<(), String> + Send + Sync + 'static {
    move |env, _| {
        let status = stored(env)?;
        if test(&status) {
            Ok(())
        } else {
            Err(format!("{what}; stored status: {status:?}"))
        }
    }
}

/// Arms another writer that, between the reconciler's GET and its status write, adds the
/// condition `Other` and (when given) sets `status.plan`. It acts once, whichever of PATCH or
/// PUT comes first.
fn concurrent_writer(server: &ApiServer, plan: Option<&'static str>) {
    let writer = move |client: kube::Client| async move {
        let tasks: Api<Task> = Api::namespaced(client, "default");
        let fresh = tasks.get("t").await.expect("the task is stored");
        let mut conditions: Vec<Value> = fresh
            .status
            .unwrap_or_default()
            .conditions
            .iter()
            .map(|c| serde_json::to_value(c).expect("a condition serializes"))
            .collect();
        conditions.push(condition("Other", "True", "Other", ""));
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
            .expect("the other writer's patch lands");
    };
    let acted = Arc::new(AtomicUsize::new(0));
    for verb in [Verb::Patch, Verb::Update] {
        let acted = acted.clone();
        server
            .on(verb, "tasks")
            .subresource("status")
            .once()
            .before(move |client| {
                let first = acted.fetch_add(1, Ordering::SeqCst) == 0;
                async move {
                    if first {
                        writer(client).await;
                    }
                }
            });
    }
}

fn with_concurrent_writer(case: TestCase, plan: Option<&'static str>) -> TestCase {
    case.prepare(move |env| {
        concurrent_writer(env.server(), plan);
        Ok(())
    })
}

// ---- one write, or none ----------------------------------------------------------------------

#[test]
fn phase_and_message() {
    tasks()
        .case(
            "two sub-reconcilers changing status send exactly one status write",
            reconcile()
                .given(&task(Value::Null))
                .expect_status_patch(status_patch(json!({"status": running_and_working()})))
                .expect_event(patched()),
        )
        .case(
            "a reconcile of an unchanged resource sends no write, even later",
            reconcile()
                .at(at("2024-05-02T10:00:00Z"))
                .given(&task(running_and_working())),
        )
        .case(
            "on conflict the reconcile's changes are re-applied to the fresh object",
            with_concurrent_writer(reconcile().given(&task(pending())), None)
                // The locked patch conflicts (409); the one re-applied to the fresh object,
                // locked on its resource version, lands. A changed list goes whole.
                .expect_status_patch(status_patch(json!({"status": {
                    "phase": "Running", "message": "working",
                    "conditions": running_after_pending(),
                }})))
                .expect_status_patch(status_patch(json!({"status": {
                    "phase": "Running", "message": "working",
                    "conditions": with_other(running_after_pending()),
                }})))
                .expect_event(patched())
                .verify(stored_status(
                    "the other writer's condition survives and every change lands",
                    |s| {
                        condition_types(s) == ["Other", "Planned", "Ready", "Sized"]
                            && s.phase.as_deref() == Some("Running")
                            && s.message.as_deref() == Some("working")
                    },
                )),
        )
        .run(|env| {
            managing(
                env,
                Sequence::new([set_phase("Running").boxed(), set_message("working").boxed()]),
            )
        });
}

#[test]
fn rebuilding_conditions() {
    // A sub-reconciler that rebuilds the conditions from scratch, stamping them "now".
    let rebuild = || {
        SyncReconciler::<Task>::new("Rebuild").sync(async |ctx, task| {
            let status = task.status.get_or_insert_default();
            status.conditions.clear();
            let mut m = crate::task::TASK.manage(&mut status.conditions, ctx.now());
            m.initialize();
            m.mark_true("Sized", "Sized", "");
            Ok(())
        })
    };
    tasks()
        .case(
            "conditions rebuilt with equal values keep their transition times and send no write",
            reconcile()
                .at(at("2024-06-01T00:00:00Z"))
                .given(&task(running_and_working()))
                .verify(stored_status(
                    "the stored transition times are those of the first reconcile",
                    |s| {
                        s.conditions
                            .iter()
                            .all(|c| c.last_transition_time.0 == at(NOW))
                    },
                )),
        )
        .run(move |env| managing(env, rebuild()));
}

// ---- each strategy on the wire ---------------------------------------------------------------

#[test]
fn merge_patch_with_lock() {
    tasks()
        .case(
            "the patch holds the changed fields and the resource version read, byte for byte",
            reconcile()
                .given(&task(running_and_working()))
                .expect_status_patch(
                    status_patch(json!({"status": {"message": "hello"}})).exactly(
                        // The given task's resourceVersion (the cluster's boot objects and
                        // installing the CRD took the revisions before it).
                        r#"{"metadata":{"resourceVersion":"208"},"status":{"message":"hello"}}"#,
                    ),
                )
                .expect_event(patched()),
        )
        .run(|env| managing(env, set_message("hello")).on_conflict(ConflictPolicy::Requeue));
}

#[test]
fn merge_patch_with_lock_conditions() {
    tasks()
        .case(
            "a changed condition list is sent whole, not as the one changed entry",
            reconcile()
                .given(&task(pending()))
                .expect_status_patch(status_patch(json!({"status": {
                    "phase": "Running",
                    "conditions": running_after_pending(),
                }})))
                .expect_event(patched()),
        )
        .run(|env| managing(env, set_phase("Running")));
}

#[test]
fn merge_patch() {
    tasks()
        .case(
            "only the changed status fields are sent, without a lock",
            reconcile()
                .given(&task(status(json!({"message": "one"}))))
                .expect_status_patch(
                    status_patch(json!({"status": {"message": "two"}}))
                        .exactly(r#"{"status":{"message":"two"}}"#),
                )
                .expect_event(patched()),
        )
        .run(|env| managing(env, set_message("two")).status_strategy(StatusStrategy::MergePatch));
}

#[test]
fn merge_patch_conditions() {
    tasks()
        .case(
            "without a lock a concurrent writer's condition is erased by the whole list",
            with_concurrent_writer(reconcile().given(&task(pending())), None)
                .expect_status_patch(status_patch(json!({"status": {
                    "phase": "Running",
                    "conditions": running_after_pending(),
                }})))
                .expect_event(patched())
                .verify(stored_status(
                    "the whole list was replaced: Other is gone",
                    |s| {
                        condition_types(s) == ["Planned", "Ready", "Sized"]
                            && s.phase.as_deref() == Some("Running")
                    },
                )),
        )
        .run(|env| managing(env, set_phase("Running")).status_strategy(StatusStrategy::MergePatch));
}

#[test]
fn update() {
    tasks()
        .case(
            "the whole object is put as read, with the new status",
            reconcile()
                .given(&task(status(json!({}))))
                .expect_status_update(&task(status(json!({"message": "hello"}))))
                .expect_event(EventRef::normal("StatusUpdated", "Updated status"))
                .verify(|env, _| {
                    let put = env
                        .server()
                        .requests()
                        .into_iter()
                        .find(|r| r.verb == Verb::Update)
                        .ok_or("no PUT was sent")?;
                    let body = put.body_json().ok_or("the PUT has no JSON body")?;
                    // The lock and identity are those read.
                    if body["metadata"]["resourceVersion"] == "208"
                        && body["metadata"]["uid"].is_string()
                    {
                        Ok(())
                    } else {
                        Err(format!("the PUT lacks what was read: {body}"))
                    }
                }),
        )
        .case(
            "on conflict it re-reads and re-applies too",
            with_concurrent_writer(reconcile().given(&task(pending())), None)
                .expect_status_update(&task(json!({
                    "observedGeneration": 1, "phase": "Pending", "message": "hello",
                    "conditions": pending()["conditions"],
                })))
                .expect_status_update(&task(json!({
                    "observedGeneration": 1, "phase": "Pending", "message": "hello",
                    "conditions": with_other(pending()["conditions"].clone()),
                })))
                .expect_event(EventRef::normal("StatusUpdated", "Updated status"))
                .verify(stored_status("the message lands and Other survives", |s| {
                    s.message.as_deref() == Some("hello") && condition_types(s).contains(&"Other")
                })),
        )
        .run(|env| managing(env, set_message("hello")).status_strategy(StatusStrategy::Update));
}

#[test]
fn apply() {
    tasks()
        .case(
            "what the reconcile changed is applied with the field manager, without the spec",
            reconcile()
                .given(&task(status(json!({}))))
                .expect_status_apply(status_apply(json!({"message": "hello"})))
                .expect_event(EventRef::normal("StatusPatched", "Patched status"))
                .verify(|env, _| {
                    let apply = env
                        .server()
                        .requests()
                        .into_iter()
                        .find(|r| r.verb == Verb::Patch)
                        .ok_or("no PATCH was sent")?;
                    let query = (
                        apply.query_param("fieldManager"),
                        apply.query_param("force"),
                    );
                    if query != (Some("task-controller".into()), Some("true".into())) {
                        return Err(format!("fieldManager and force: {query:?}"));
                    }
                    let stored = env
                        .server()
                        .stored("example.com/v1", "Task", Some("default"), "t")
                        .ok_or("the task is gone")?;
                    let owner = stored["metadata"]["managedFields"]
                        .as_array()
                        .and_then(|entries| {
                            entries.iter().find(|e| e["manager"] == "task-controller")
                        })
                        .ok_or("no managedFields entry for task-controller")?;
                    let message = stored["status"]["message"].clone();
                    if owner["operation"] == "Apply"
                        && owner["subresource"] == "status"
                        && message == "hello"
                    {
                        Ok(())
                    } else {
                        Err(format!("stored: {stored}"))
                    }
                }),
        )
        .case(
            "what the manager applied before is applied again; another manager's condition is not",
            reconcile()
                .given(&owned_by_two_managers())
                .expect_status_apply(status_apply(json!({
                    "observedGeneration": 1,
                    "message": "hello",
                    "conditions": initialized(),
                })))
                .expect_event(EventRef::normal("StatusPatched", "Patched status")),
        )
        .run(|env| {
            managing(env, set_message("hello")).status_strategy(StatusStrategy::Apply {
                field_manager: "task-controller".into(),
                force: true,
            })
        });
}

#[test]
fn requeue_on_conflict() {
    tasks()
        .case(
            "the requeue policy leaves the conflict to the next reconcile",
            with_concurrent_writer(reconcile().given(&task(pending())), None)
                .expect_status_patch(status_patch(json!({"status": {"message": "working"}})))
                .expect_result(Outcome::requeue())
                .verify(stored_status("the change is not written this time", |s| {
                    s.message.is_none()
                })),
        )
        .case(
            "the next reconcile writes the change",
            reconcile()
                .given(&task(pending()))
                .expect_status_patch(status_patch(json!({"status": {"message": "working"}})))
                .expect_event(patched()),
        )
        .run(|env| managing(env, set_message("working")).on_conflict(ConflictPolicy::Requeue));
}

// ---- seed 002: two reconciles both see an empty plan -------------------------------------------

#[test]
fn double_reconcile_with_the_lock() {
    let built = Arc::new(AtomicUsize::new(0));
    let counted = built.clone();
    tasks()
        .case(
            "both changed status.plan: nothing is overwritten and the request requeues",
            // The other reconcile saw the same empty plan and wrote its own first.
            with_concurrent_writer(
                reconcile().given(&task(status(json!({})))),
                Some("plan-from-the-other-reconcile"),
            )
            .expect_status_patch(status_patch(
                json!({"status": {"plan": "plan-from-this-reconcile"}}),
            ))
            .expect_result(Outcome::requeue())
            .verify(stored_status("one plan, the first one written", |s| {
                s.plan.as_deref() == Some("plan-from-the-other-reconcile")
            })),
        )
        .case(
            "the requeued reconcile sees the stored plan and builds none",
            reconcile().given(&task(status(
                json!({"plan": "plan-from-the-other-reconcile"}),
            ))),
        )
        .run(|env| managing(env, planner(counted.clone())));
    assert_eq!(
        built.load(Ordering::SeqCst),
        1,
        "only the conflicting reconcile built a plan"
    );
}

#[test]
fn double_reconcile_without_the_lock() {
    tasks()
        .case(
            "last write wins: the other reconcile's plan is silently replaced",
            with_concurrent_writer(
                reconcile().given(&task(status(json!({})))),
                Some("plan-from-the-other-reconcile"),
            )
            .expect_status_patch(status_patch(
                json!({"status": {"plan": "plan-from-this-reconcile"}}),
            ))
            .expect_event(patched())
            .verify(stored_status(
                "this reconcile's plan replaced the other",
                |s| s.plan.as_deref() == Some("plan-from-this-reconcile"),
            )),
        )
        .run(|env| {
            managing(env, planner(Arc::default())).status_strategy(StatusStrategy::MergePatch)
        });
}

// ---- a snapshot instead of listed expectations ---------------------------------------------------

#[test]
fn snapshots() {
    // Approved with `cargo insta review`; stored in `tests/snapshots/`.
    tasks()
        .snapshots(recon_testing::snapshot!())
        .case(
            "a pending task set running",
            reconcile().given(&task(pending())).snapshot(),
        )
        .run(|env| {
            managing(
                env,
                Sequence::new([set_phase("Running").boxed(), set_message("working").boxed()]),
            )
        });
}

/// The contract of [`StatusStrategy::Apply`]: with `conditions` a list-map keyed by `type`, a
/// reconciler applying its conditions and another manager applying a different condition type
/// own disjoint list entries, so neither clobbers the other and no conflict arises.
#[tokio::test]
async fn apply_lets_disjoint_condition_owners_coexist() {
    let server = ApiServer::new();
    server.install_crd(&Task::crd()).await.unwrap();
    let api: Api<Task> = Api::namespaced(server.client(), "default");
    let created: Task = serde_json::from_value(task(Value::Null)).unwrap();
    api.create(&Default::default(), &created).await.unwrap();
    let other = json!({
        "apiVersion": "example.com/v1",
        "kind": "Task",
        "status": {"conditions": [condition("Other", "True", "Fine", "owned elsewhere")]},
    });
    api.patch_status(
        "t",
        &PatchParams::apply("other-controller"),
        &Patch::Apply(&other),
    )
    .await
    .unwrap();

    let reconciler = ResourceReconciler::new(
        recon_core::Config::new(server.client(), "task-controller"),
        set_message("hello"),
    )
    .manage_status()
    .status_strategy(StatusStrategy::Apply {
        field_manager: "task-controller".into(),
        force: false,
    });
    reconciler
        .reconcile(&Request {
            namespace: Some("default".into()),
            name: "t".into(),
        })
        .await
        .unwrap();

    let stored = api.get_status("t").await.unwrap().status.unwrap();
    let mut types: Vec<&str> = stored.conditions.iter().map(|c| c.type_.as_str()).collect();
    types.sort_unstable();
    assert_eq!(types, ["Other", "Planned", "Ready", "Sized"]);
    assert_eq!(stored.message.as_deref(), Some("hello"));
}

/// Sets `status.message`, then fails.
fn message_then_failure() -> SyncReconciler<Task> {
    SyncReconciler::<Task>::new("MessageThenFailure").sync(async |_, task| {
        task.status.get_or_insert_default().message = Some("half done".into());
        Err::<(), _>(recon_core::Error::msg("the registry is down"))
    })
}

#[test]
fn observed_generation_is_not_recorded_when_a_step_fails() {
    let mut changed_spec = task(status(json!({})));
    changed_spec["metadata"]["generation"] = json!(2);
    tasks()
        .case(
            "what the steps set is written, observedGeneration stays at the last full reconcile",
            reconcile()
                .given(&changed_spec)
                .expect_error("the registry is down")
                .expect_status_patch(status_patch(json!({"status": {"message": "half done"}})))
                .expect_event(patched())
                .verify(stored_status("observedGeneration stays 1", |s| {
                    s.observed_generation == Some(1)
                })),
        )
        .run(|env| managing(env, message_then_failure()));
}
