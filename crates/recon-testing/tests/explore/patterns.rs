//! The bug patterns, one test each: the buggy controller is reported, the fixed twin is not.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::{Controller, watcher};
use kube::{Resource, ResourceExt};
use recon_testing::explore::{CauseKind, Report, Scenario, UserAction};
use serde_json::json;

/// The bug a controller has (or, fixed, has not).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    /// Appends to the child on every reconcile.
    Appends,
    /// Writes a new value into the parent on every reconcile.
    ChangesEveryTime,
    /// Creates its child with `generateName` and finds it again only by what it wrote after.
    CreatesTwice,
    /// Creates its child without an owner reference.
    NoOwner,
    /// Swallows the 409 of its child's update (and does not watch children).
    Swallows409,
    /// Updates the child unconditionally from the copy it read.
    OverwritesFromStaleCopy,
    /// Does not watch its children.
    ChildNotWatched,
}

struct Context {
    client: kube::Client,
    bug: Bug,
    buggy: bool,
    reconciles: AtomicU64,
}

fn child_name(parent: &ConfigMap) -> String {
    format!("{}-child", parent.name_any())
}

fn data(pairs: &[(&str, &str)]) -> Option<BTreeMap<String, String>> {
    Some(
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect(),
    )
}

async fn reconcile(parent: Arc<ConfigMap>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "default");
    let want = parent
        .data
        .as_ref()
        .and_then(|d| d.get("want"))
        .cloned()
        .unwrap_or_default();
    let n = ctx.reconciles.fetch_add(1, Ordering::SeqCst);
    let owner = parent.controller_owner_ref(&());
    let mut child = ConfigMap {
        metadata: ObjectMeta {
            name: Some(child_name(&parent)),
            labels: Some(
                [
                    ("role".to_owned(), "child".to_owned()),
                    ("parent".to_owned(), parent.name_any()),
                ]
                .into(),
            ),
            owner_references: owner.map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: data(&[("copy", &want)]),
        ..ConfigMap::default()
    };
    match (ctx.bug, ctx.buggy) {
        (Bug::NoOwner, true) => child.metadata.owner_references = None,
        (Bug::Appends, true) => {
            let old = api.get_opt(&child_name(&parent)).await?;
            let log = old
                .and_then(|c| c.data)
                .and_then(|d| d.get("log").cloned())
                .unwrap_or_default();
            child.data = data(&[("copy", &want), ("log", &format!("{log}+"))]);
        }
        (Bug::ChangesEveryTime, buggy) => {
            let seen = if buggy {
                n.to_string()
            } else {
                "yes".to_owned()
            };
            let patch = json!({"metadata": {"annotations": {"seen": seen}}});
            api.patch(
                &parent.name_any(),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await?;
        }
        (Bug::CreatesTwice, buggy) => {
            return create_by_generate_name(&api, &parent, child, buggy).await;
        }
        (Bug::Swallows409 | Bug::OverwritesFromStaleCopy, _) => {
            if let Some(old) = api.get_opt(&child_name(&parent)).await? {
                return update_child(&api, old, &want, ctx.bug, ctx.buggy).await;
            }
        }
        _ => {}
    }
    // kube's watcher relists after a missed event without telling `owns` what disappeared,
    // so a deleted child is seen again only by a periodic reconcile.
    let next = match (ctx.bug, ctx.buggy) {
        (Bug::ChildNotWatched, false) => Action::requeue(Duration::from_secs(300)),
        _ => Action::await_change(),
    };
    match api.get_opt(&child_name(&parent)).await? {
        None => {
            api.create(&PostParams::default(), &child).await?;
        }
        Some(_) => {
            let patch = json!({"data": child.data});
            api.patch(
                &child_name(&parent),
                &PatchParams::default(),
                &Patch::Merge(&patch),
            )
            .await?;
        }
    }
    Ok(next)
}

/// The child's update from the copy just read: buggy, the 409 is swallowed, or the copy is
/// written back without its resourceVersion.
async fn update_child(
    api: &Api<ConfigMap>,
    mut old: ConfigMap,
    want: &str,
    bug: Bug,
    buggy: bool,
) -> Result<Action, kube::Error> {
    if old
        .data
        .as_ref()
        .and_then(|d| d.get("copy"))
        .map(String::as_str)
        == Some(want)
    {
        return Ok(Action::await_change());
    }
    let name = old.name_any();
    if bug == Bug::OverwritesFromStaleCopy && !buggy {
        let patch = json!({"data": {"copy": want}});
        api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
            .await?;
        return Ok(Action::await_change());
    }
    old.data = data(&[("copy", want)]);
    if bug == Bug::OverwritesFromStaleCopy {
        old.metadata.resource_version = None;
    }
    match api.replace(&name, &PostParams::default(), &old).await {
        Err(kube::Error::Api(status)) if status.code == 409 && buggy => Ok(Action::await_change()),
        Err(e) => Err(e),
        Ok(_) => Ok(Action::await_change()),
    }
}

/// A child named by `generateName`: buggy, it is found again by the parent's annotation
/// written after the create; fixed, by its label first.
async fn create_by_generate_name(
    api: &Api<ConfigMap>,
    parent: &ConfigMap,
    mut child: ConfigMap,
    buggy: bool,
) -> Result<Action, kube::Error> {
    let recorded = parent.annotations().get("child").cloned();
    let existing = if buggy {
        recorded
    } else {
        let selector = format!("parent={}", parent.name_any());
        let found = api.list(&ListParams::default().labels(&selector)).await?;
        found.items.first().map(ResourceExt::name_any).or(recorded)
    };
    let name = match existing {
        Some(name) => {
            let patch = json!({"data": child.data});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
            name
        }
        None => {
            child.metadata.name = None;
            child.metadata.generate_name = Some(format!("{}-", parent.name_any()));
            api.create(&PostParams::default(), &child).await?.name_any()
        }
    };
    if parent.annotations().get("child") != Some(&name) {
        let patch = json!({"metadata": {"annotations": {"child": name}}});
        api.patch(
            &parent.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
    }
    Ok(Action::await_change())
}

fn error_policy(_: Arc<ConfigMap>, _: &kube::Error, _: Arc<Context>) -> Action {
    Action::requeue(Duration::from_secs(5))
}

fn parent(want: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "p", "namespace": "default", "labels": {"role": "parent"}},
           "data": {"want": want}})
}

fn scenario(bug: Bug, buggy: bool) -> Scenario {
    // The appender and the conflict swallower do not watch their children (with a watch, the
    // first would loop and the second would be woken again by the other writer's change).
    let watches_children = match bug {
        Bug::Appends | Bug::Swallows409 => false,
        Bug::ChildNotWatched => !buggy,
        _ => true,
    };
    Scenario::new(format!(
        "{bug:?}{}",
        if buggy { "_buggy" } else { "_fixed" }
    ))
    .controller(move |client| {
        let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
        let context = Arc::new(Context {
            client: client.clone(),
            bug,
            buggy,
            reconciles: AtomicU64::new(0),
        });
        let controller = Controller::new(
            api.clone(),
            watcher::Config::default().labels("role=parent"),
        );
        let controller = if watches_children {
            controller.owns(api, watcher::Config::default().labels("role=child"))
        } else {
            controller
        };
        controller.run(reconcile, error_policy, context)
    })
}

fn explore(scenario: Scenario) -> Report {
    scenario.quiet_for(Duration::from_secs(60)).explore()
}

#[track_caller]
fn assert_found(report: &Report, kind: CauseKind) {
    assert!(
        report.failures_of(kind).next().is_some(),
        "expected a {kind:?} failure:\n{report}"
    );
}

fn create_then_change(scenario: Scenario) -> Scenario {
    scenario
        .action(UserAction::create(&parent("one")))
        .action(UserAction::patch(&parent("two")))
}

#[test]
fn a_reconcile_that_appends_on_every_run_is_caught_by_a_fresh_controller() {
    let report = explore(create_then_change(scenario(Bug::Appends, true)));
    assert_found(&report, CauseKind::ResyncChanged);
    explore(create_then_change(scenario(Bug::Appends, false))).assert_clean();
}

#[test]
fn a_value_written_on_every_reconcile_never_quiesces() {
    let report = explore(create_then_change(scenario(Bug::ChangesEveryTime, true)));
    assert_found(&report, CauseKind::NotQuiescent);
    let failure = report.failures_of(CauseKind::NotQuiescent).next().unwrap();
    assert_eq!(failure.schedules[0], "reference");
    assert!(
        failure.cause.contains("PATCH v1 configmaps default/p"),
        "{}",
        failure.cause
    );
    explore(create_then_change(scenario(Bug::ChangesEveryTime, false))).assert_clean();
}

#[test]
fn a_child_created_twice_when_a_restart_loses_the_create_s_answer() {
    let report = explore(create_then_change(scenario(Bug::CreatesTwice, true)));
    assert_found(&report, CauseKind::Diverged);
    let failure = report.failures_of(CauseKind::Diverged).next().unwrap();
    assert!(
        failure
            .cause
            .contains("extra v1 ConfigMap default/p-<generated 2>"),
        "{report}"
    );
    assert!(
        failure
            .schedules
            .contains(&"restart-after-write:1".to_owned()),
        "{report}"
    );
    explore(create_then_change(scenario(Bug::CreatesTwice, false))).assert_clean();
}

#[test]
fn children_without_owner_references_outlive_their_parent() {
    let delete = UserAction::delete("v1", "ConfigMap", Some("default"), "p");
    let report = explore(
        scenario(Bug::NoOwner, true)
            .action(UserAction::create(&parent("one")))
            .action(delete.clone()),
    );
    assert_found(&report, CauseKind::Leaked);
    explore(
        scenario(Bug::NoOwner, false)
            .action(UserAction::create(&parent("one")))
            .action(delete),
    )
    .assert_clean();
}

#[test]
fn a_swallowed_conflict_loses_the_update() {
    let report = explore(create_then_change(scenario(Bug::Swallows409, true)));
    assert_found(&report, CauseKind::Diverged);
    assert!(
        report.failures_of(CauseKind::Diverged).any(|f| f
            .schedules
            .iter()
            .any(|s| s.starts_with("concurrent-write:"))),
        "{report}"
    );
    explore(create_then_change(scenario(Bug::Swallows409, false))).assert_clean();
}

#[test]
fn an_update_from_a_stale_copy_overwrites_another_writer() {
    let report = explore(create_then_change(scenario(
        Bug::OverwritesFromStaleCopy,
        true,
    )));
    assert_found(&report, CauseKind::LostWrite);
    explore(create_then_change(scenario(
        Bug::OverwritesFromStaleCopy,
        false,
    )))
    .assert_clean();
}

#[test]
fn a_deleted_child_that_is_not_watched_is_never_recreated() {
    let delete = UserAction::delete("v1", "ConfigMap", Some("default"), "p-child");
    let report = explore(
        scenario(Bug::ChildNotWatched, true)
            .action(UserAction::create(&parent("one")))
            .action(delete.clone()),
    );
    assert_found(&report, CauseKind::ResyncChanged);
    // Past the fixed twin's periodic reconcile, which brings back a child whose DELETED
    // event was missed.
    scenario(Bug::ChildNotWatched, false)
        .action(UserAction::create(&parent("one")))
        .action(delete)
        .quiet_for(Duration::from_secs(400))
        .explore()
        .assert_clean();
}

#[test]
fn the_same_schedule_replays_the_same_report() {
    let run = || {
        let report = explore(
            create_then_change(scenario(Bug::CreatesTwice, true)).only("restart-after-write:1"),
        );
        report.to_string()
    };
    let first = run();
    assert!(first.contains("restart-after-write:1"), "{first}");
    assert_eq!(first, run());
}
