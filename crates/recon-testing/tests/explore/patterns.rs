//! The bug patterns, one test each: the buggy controller is reported, the fixed twin is not.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, DeleteParams, ListParams, ObjectMeta, Patch, PatchParams, PostParams};
use kube::runtime::controller::Action;
use kube::runtime::finalizer::{self, finalizer};
use kube::runtime::reflector::ObjectRef;
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
    /// Deletes the children its cached parent no longer wants, without a fresh read.
    DeletesOnStaleRead,
    /// The same, its cache filled by streaming lists.
    DeletesOnStaleStream,
    /// Records a change as made before making it.
    MarksDoneFirst,
    /// Removes its finalizer although the cleanup it guards failed.
    FinalizerIgnoresFailure,
    /// Fails on the NotFound of the parent an object refers to, and is retried forever.
    RetriesNotFound,
    /// Names its child after the spec and leaves the old child behind when the name changes.
    RenameLeavesOld,
}

/// The finalizer of `FinalizerIgnoresFailure`'s controller.
const FINALIZER: &str = "explore.recon.dev/cleanup";

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

fn want(object: &ConfigMap) -> String {
    object
        .data
        .as_ref()
        .and_then(|d| d.get("want"))
        .cloned()
        .unwrap_or_default()
}

/// The child `name` of `parent`, owned by it, holding a copy of `want`.
fn child_named(parent: &ConfigMap, name: String, want: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(name),
            labels: Some(
                [
                    ("role".to_owned(), "child".to_owned()),
                    ("parent".to_owned(), parent.name_any()),
                ]
                .into(),
            ),
            owner_references: parent.controller_owner_ref(&()).map(|o| vec![o]),
            ..ObjectMeta::default()
        },
        data: data(&[("copy", want)]),
        ..ConfigMap::default()
    }
}

async fn reconcile(parent: Arc<ConfigMap>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "default");
    let want = want(&parent);
    let n = ctx.reconciles.fetch_add(1, Ordering::SeqCst);
    let mut child = child_named(&parent, child_name(&parent), &want);
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
        (Bug::DeletesOnStaleRead | Bug::DeletesOnStaleStream, buggy) => {
            return keep_wanted_children(&api, &parent, buggy).await;
        }
        (Bug::MarksDoneFirst, buggy) => return two_steps(&api, &parent, child, buggy).await,
        (Bug::RenameLeavesOld, buggy) => return follow_rename(&api, &parent, buggy).await,
        _ => {}
    }
    // kube's watcher relists after a missed event without telling `owns` what disappeared,
    // so a deleted child is seen again only by a periodic reconcile.
    let next = match (ctx.bug, ctx.buggy) {
        (Bug::ChildNotWatched, false) => Action::requeue(Duration::from_secs(300)),
        _ => Action::await_change(),
    };
    ensure_child(&api, &child).await?;
    Ok(next)
}

/// Creates `child`, or brings its data up to date.
async fn ensure_child(api: &Api<ConfigMap>, child: &ConfigMap) -> Result<(), kube::Error> {
    let name = child.name_any();
    match api.get_opt(&name).await? {
        None => {
            api.create(&PostParams::default(), child).await?;
        }
        Some(_) => {
            let patch = json!({"data": child.data});
            api.patch(&name, &PatchParams::default(), &Patch::Merge(&patch))
                .await?;
        }
    }
    Ok(())
}

/// The names of the children `parent` wants: one per comma-separated word of `want`.
fn wanted_children(parent: &ConfigMap) -> BTreeSet<String> {
    want(parent)
        .split(',')
        .filter(|w| !w.is_empty())
        .map(|w| format!("{}-{w}", parent.name_any()))
        .collect()
}

/// Makes the children the parent wants and deletes the others. Buggy, the parent the
/// decision rests on is the cached copy, which a restarted controller's stale cache serves
/// from the past; fixed, a child is deleted only once a fresh read agrees.
async fn keep_wanted_children(
    api: &Api<ConfigMap>,
    parent: &ConfigMap,
    buggy: bool,
) -> Result<Action, kube::Error> {
    let wanted = wanted_children(parent);
    for name in &wanted {
        ensure_child(api, &child_named(parent, name.clone(), "")).await?;
    }
    let selector = format!("parent={}", parent.name_any());
    for child in api.list(&ListParams::default().labels(&selector)).await? {
        let name = child.name_any();
        if wanted.contains(&name) || child.metadata.deletion_timestamp.is_some() {
            continue;
        }
        if !buggy {
            let fresh = api.get(&parent.name_any()).await?;
            if wanted_children(&fresh).contains(&name) {
                continue;
            }
        }
        api.delete(&name, &DeleteParams::default()).await?;
    }
    Ok(Action::await_change())
}

/// A change made in two writes, the child's data and a record on the parent that it is
/// made, trusted by the next reconcile. Buggy, the record is written first.
async fn two_steps(
    api: &Api<ConfigMap>,
    parent: &ConfigMap,
    child: ConfigMap,
    buggy: bool,
) -> Result<Action, kube::Error> {
    let want = want(parent);
    if parent.annotations().get("applied") == Some(&want) {
        return Ok(Action::await_change());
    }
    let (name, params) = (parent.name_any(), PatchParams::default());
    let record = Patch::Merge(json!({"metadata": {"annotations": {"applied": want}}}));
    if buggy {
        api.patch(&name, &params, &record).await?;
    }
    ensure_child(api, &child).await?;
    if !buggy {
        api.patch(&name, &params, &record).await?;
    }
    Ok(Action::await_change())
}

/// One child named after `want`. Buggy, a child under the old name stays.
async fn follow_rename(
    api: &Api<ConfigMap>,
    parent: &ConfigMap,
    buggy: bool,
) -> Result<Action, kube::Error> {
    let name = format!("{}-{}", parent.name_any(), want(parent));
    ensure_child(api, &child_named(parent, name.clone(), "")).await?;
    if !buggy {
        let selector = format!("parent={}", parent.name_any());
        for child in api.list(&ListParams::default().labels(&selector)).await? {
            if child.name_any() != name && child.metadata.deletion_timestamp.is_none() {
                api.delete(&child.name_any(), &DeleteParams::default())
                    .await?;
            }
        }
    }
    Ok(Action::await_change())
}

/// The external resource the parent's finalizer guards (a ConfigMap plays it; nothing owns
/// it, as nothing in the cluster owns a cloud bucket).
fn external_name(parent: &ConfigMap) -> String {
    format!("{}-external", parent.name_any())
}

/// kube's finalizer helper around an external resource. Buggy, a failed cleanup is
/// swallowed, so the finalizer goes although the resource stays.
async fn reconcile_with_finalizer(
    parent: Arc<ConfigMap>,
    ctx: Arc<Context>,
) -> Result<Action, finalizer::Error<kube::Error>> {
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "default");
    finalizer(&api, FINALIZER, parent, |event| async {
        match event {
            finalizer::Event::Apply(parent) => {
                let external = ConfigMap {
                    metadata: ObjectMeta {
                        name: Some(external_name(&parent)),
                        labels: Some([("role".to_owned(), "external".to_owned())].into()),
                        ..ObjectMeta::default()
                    },
                    ..ConfigMap::default()
                };
                if api.get_opt(&external_name(&parent)).await?.is_none() {
                    api.create(&PostParams::default(), &external).await?;
                }
            }
            finalizer::Event::Cleanup(parent) => {
                match api
                    .delete(&external_name(&parent), &DeleteParams::default())
                    .await
                {
                    Err(kube::Error::Api(status)) if status.code == 404 => {}
                    Err(e) if !ctx.buggy => return Err(e),
                    _ => {}
                }
            }
        }
        Ok(Action::await_change())
    })
    .await
}

fn finalizer_error_policy(
    _: Arc<ConfigMap>,
    _: &finalizer::Error<kube::Error>,
    _: Arc<Context>,
) -> Action {
    Action::requeue(Duration::from_secs(5))
}

/// A user of a parent (a ConfigMap labelled `role: user` naming it in `data.uses`) copies its
/// parent's `want`. Buggy, the parent's NotFound fails the reconcile, which the error policy
/// retries for ever; fixed, the user records that its parent is missing and waits for it.
async fn reconcile_user(user: Arc<ConfigMap>, ctx: Arc<Context>) -> Result<Action, kube::Error> {
    let api: Api<ConfigMap> = Api::namespaced(ctx.client.clone(), "default");
    let uses = user
        .data
        .as_ref()
        .and_then(|d| d.get("uses"))
        .cloned()
        .unwrap_or_default();
    let parent = if ctx.buggy {
        Some(api.get(&uses).await?)
    } else {
        api.get_opt(&uses).await?
    };
    let copied = parent.map_or_else(|| "<parent missing>".to_owned(), |p| want(&p));
    if user.annotations().get("copied") != Some(&copied) {
        let patch = json!({"metadata": {"annotations": {"copied": copied}}});
        api.patch(
            &user.name_any(),
            &PatchParams::default(),
            &Patch::Merge(&patch),
        )
        .await?;
    }
    // A parent's DELETED event missed while a watch was down is never replayed: kube's
    // watcher relists without telling `watches` what disappeared.
    Ok(Action::requeue(Duration::from_secs(300)))
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

fn context(client: &kube::Client, bug: Bug, buggy: bool) -> Arc<Context> {
    Arc::new(Context {
        client: client.clone(),
        bug,
        buggy,
        reconciles: AtomicU64::new(0),
    })
}

fn scenario(bug: Bug, buggy: bool) -> Scenario {
    // The appender and the conflict swallower do not watch their children (with a watch, the
    // first would loop and the second would be woken again by the other writer's change).
    let watches_children = match bug {
        Bug::Appends | Bug::Swallows409 => false,
        Bug::ChildNotWatched => !buggy,
        _ => true,
    };
    // What makes a cache stale after a restart: lists at `resourceVersion=0`, which kube
    // sends for `any_semantic` only when paging is off.
    let parents = match bug {
        Bug::DeletesOnStaleRead => watcher::Config {
            page_size: None,
            ..watcher::Config::default().any_semantic()
        },
        // A streaming list starts at `resourceVersion=0` too.
        Bug::DeletesOnStaleStream => watcher::Config::default().streaming_lists(),
        _ => watcher::Config::default(),
    }
    .labels("role=parent");
    let scenario = Scenario::new(format!(
        "{bug:?}{}",
        if buggy { "_buggy" } else { "_fixed" }
    ));
    match bug {
        Bug::FinalizerIgnoresFailure => scenario.controller(move |client| {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
            Controller::new(api, parents.clone()).run(
                reconcile_with_finalizer,
                finalizer_error_policy,
                context(&client, bug, buggy),
            )
        }),
        Bug::RetriesNotFound => scenario.controller(move |client| {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
            let controller =
                Controller::new(api.clone(), watcher::Config::default().labels("role=user"));
            let users = controller.store();
            controller
                .watches(api, parents.clone(), move |parent| {
                    let name = parent.name_any();
                    users
                        .state()
                        .into_iter()
                        .filter(|u| u.data.as_ref().and_then(|d| d.get("uses")) == Some(&name))
                        .map(|u| ObjectRef::from_obj(&*u))
                        .collect::<Vec<_>>()
                })
                .run(reconcile_user, error_policy, context(&client, bug, buggy))
        }),
        _ => scenario.controller(move |client| {
            let api: Api<ConfigMap> = Api::namespaced(client.clone(), "default");
            let controller = Controller::new(api.clone(), parents.clone());
            let controller = if watches_children {
                controller.owns(api, watcher::Config::default().labels("role=child"))
            } else {
                controller
            };
            controller.run(reconcile, error_policy, context(&client, bug, buggy))
        }),
    }
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

#[rstest::rstest]
#[case::listed(Bug::DeletesOnStaleRead)]
#[case::streamed(Bug::DeletesOnStaleStream)]
fn a_child_deleted_on_a_stale_read_after_a_restart(#[case] bug: Bug) {
    let report = explore(
        scenario(bug, true)
            .action(UserAction::create(&parent("a")))
            .action(UserAction::patch(&parent("a,b"))),
    );
    let failure = report
        .failures_of(CauseKind::Diverged)
        .find(|f| f.cause.contains("default/p-b was deleted and made again"))
        .unwrap_or_else(|| panic!("expected p-b deleted and made again:\n{report}"));
    assert!(
        failure.schedules[0].starts_with("stale-restart-after-write:"),
        "{report}"
    );
    explore(
        scenario(bug, false)
            .action(UserAction::create(&parent("a")))
            .action(UserAction::patch(&parent("a,b"))),
    )
    .assert_clean();
}

#[test]
fn a_two_step_change_left_half_done_by_a_restart() {
    let report = explore(create_then_change(scenario(Bug::MarksDoneFirst, true)));
    let failure = report
        .failures_of(CauseKind::Diverged)
        .find(|f| {
            f.schedules
                .iter()
                .any(|s| s.starts_with("restart-after-write:"))
        })
        .unwrap_or_else(|| panic!("expected a restart to leave the change half done:\n{report}"));
    assert!(failure.cause.contains("default/p-child"), "{report}");
    explore(create_then_change(scenario(Bug::MarksDoneFirst, false))).assert_clean();
}

#[test]
fn a_finalizer_removed_although_its_cleanup_failed() {
    let actions = |s: Scenario| {
        s.action(UserAction::create(&parent("one")))
            .action(UserAction::delete("v1", "ConfigMap", Some("default"), "p"))
    };
    let report = explore(actions(scenario(Bug::FinalizerIgnoresFailure, true)));
    let failure = report
        .failures_of(CauseKind::Leaked)
        .next()
        .unwrap_or_else(|| panic!("expected the external resource leaked:\n{report}"));
    assert!(
        failure.cause.contains("ConfigMap default/p-external"),
        "{report}"
    );
    assert!(
        failure.schedules.iter().any(|s| s.starts_with("fail:")),
        "{report}"
    );
    explore(actions(scenario(Bug::FinalizerIgnoresFailure, false))).assert_clean();
}

#[test]
fn a_deleted_parent_s_not_found_retried_forever() {
    let user = json!({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "u", "namespace": "default", "labels": {"role": "user"}},
                      "data": {"uses": "p"}});
    let actions = |s: Scenario| {
        s.action(UserAction::create(&parent("one")))
            .action(UserAction::create(&user))
            .action(UserAction::delete("v1", "ConfigMap", Some("default"), "p"))
    };
    // Past the periodic reconcile of the fixed twin.
    let explore = |s: Scenario| s.quiet_for(Duration::from_secs(400)).explore();
    let report = explore(actions(scenario(Bug::RetriesNotFound, true)));
    let failure = report
        .failures_of(CauseKind::Stuck)
        .next()
        .unwrap_or_else(|| panic!("expected a reconcile failing forever:\n{report}"));
    assert_eq!(failure.schedules[0], "reference", "{report}");
    assert!(failure.cause.contains("NotFound"), "{report}");
    explore(actions(scenario(Bug::RetriesNotFound, false))).assert_clean();
}

#[test]
fn a_renamed_child_leaves_the_old_one_behind() {
    let report = explore(create_then_change(scenario(Bug::RenameLeavesOld, true)));
    let failure = report
        .failures_of(CauseKind::PathDependent)
        .next()
        .unwrap_or_else(|| panic!("expected the old child found by a fresh start:\n{report}"));
    assert_eq!(failure.schedules, ["fresh-start"], "{report}");
    assert!(
        failure.cause.ends_with("extra v1 ConfigMap default/p-one"),
        "{report}"
    );
    explore(create_then_change(scenario(Bug::RenameLeavesOld, false))).assert_clean();
}

#[test]
fn a_fresh_start_is_not_checked_when_an_action_needs_the_controller() {
    let report = explore(
        scenario(Bug::ChildNotWatched, false)
            .action(UserAction::create(&parent("one")))
            .action(UserAction::delete(
                "v1",
                "ConfigMap",
                Some("default"),
                "p-child",
            ))
            .quiet_for(Duration::from_secs(400))
            .only("fresh-start"),
    );
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.notes.len(), 1, "{report}");
    assert!(
        report.notes[0].starts_with("fresh-start not checked: user action 2 (delete"),
        "{report}"
    );
}

#[test]
fn a_failing_schedule_is_kept_as_a_yaml_regression_test() {
    let buggy = || create_then_change(scenario(Bug::CreatesTwice, true));
    let report = explore(buggy().only("restart-after-write:1"));
    let failure = report.failures_of(CauseKind::Diverged).next().unwrap();
    // The YAML entry the report offers, kept in a file and run again.
    let (_, yaml) = failure
        .regression
        .split_once("runs:\n")
        .unwrap_or_else(|| panic!("no YAML form in:\n{}", failure.regression));
    let path = std::env::temp_dir().join(format!("recon-kept-{}.yaml", std::process::id()));
    std::fs::write(&path, yaml).unwrap();
    let kept = explore(buggy().kept(&path));
    assert_eq!(kept.explored, 1, "{kept}");
    let again = kept.failures_of(CauseKind::Diverged).next().unwrap();
    assert_eq!(again.cause, failure.cause);
    assert_eq!(again.schedules, ["restart-after-write:1"]);

    // A file that keeps nothing of the scenario is a set-up failure naming it.
    let fixed = explore(create_then_change(scenario(Bug::CreatesTwice, false)).kept(&path));
    let setup = fixed.failures_of(CauseKind::Setup).next().unwrap();
    assert!(
        setup
            .cause
            .contains("no schedule of scenario `CreatesTwice_fixed`")
            && setup.cause.contains(&path.display().to_string()),
        "{fixed}"
    );
    std::fs::write(&path, "- scenario: CreatesTwice_buggy\n  schedule: nap:1\n").unwrap();
    let bad = explore(buggy().kept(&path));
    assert!(
        bad.failures_of(CauseKind::Setup)
            .any(|f| f.cause.contains("`nap:1` is not a schedule id")),
        "{bad}"
    );
    std::fs::write(&path, "- scenario: x\n  shedule: restart-at-end\n").unwrap();
    let typo = explore(buggy().kept(&path));
    assert!(
        typo.failures_of(CauseKind::Setup)
            .any(|f| f.cause.contains("shedule")),
        "{typo}"
    );
    std::fs::remove_file(&path).unwrap();
}

#[test]
fn events_named_after_the_wall_clock_replay_alike() {
    use kube::runtime::events::{Event, EventType, Recorder, Reporter};

    // kube's `Recorder` (as client-go's) names an Event `<object>.<wall-clock nanos in hex>`.
    async fn reconcile(cm: Arc<ConfigMap>, recorder: Arc<Recorder>) -> Result<Action, kube::Error> {
        let event = Event {
            type_: EventType::Normal,
            reason: "Seen".into(),
            note: None,
            action: "Reconcile".into(),
            secondary: None,
        };
        recorder.publish(&event, &cm.object_ref(&())).await?;
        Ok(Action::await_change())
    }
    let report = Scenario::new("events")
        .controller(|client| {
            let reporter = Reporter {
                controller: "recorder".into(),
                instance: None,
            };
            let recorder = Arc::new(Recorder::new(client.clone(), reporter));
            let api: Api<ConfigMap> = Api::namespaced(client, "default");
            Controller::new(api, watcher::Config::default().labels("role=parent")).run(
                reconcile,
                |_, _, _| Action::requeue(Duration::from_secs(5)),
                recorder,
            )
        })
        .action(UserAction::create(&parent("one")))
        .action(UserAction::patch(&parent("two")))
        .explore();
    report.assert_clean();
    assert!(report.explored > 10, "{report}");
}

#[test]
fn a_settled_controller_is_checked_by_hand() {
    let settled = create_then_change(scenario(Bug::Appends, false)).settle();
    settled
        .assert_settled()
        .assert_object(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "p-child", "namespace": "default",
                         "labels": {"role": "child", "parent": "p"},
                         "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "p",
                                              "uid": settled.world().get("v1", "ConfigMap", Some("default"), "p")
                                                  .unwrap()["metadata"]["uid"],
                                              "controller": true}]},
            "data": {"copy": "two"}}))
        .assert_absent(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "p-other", "namespace": "default"}}));
    assert_eq!(
        settled.writes()[0],
        "POST v1 configmaps default/p-child, answered 201"
    );

    let looping = create_then_change(scenario(Bug::ChangesEveryTime, true)).settle();
    assert!(
        looping.problems()[0].starts_with("[NotQuiescent] the controller never stops writing"),
        "{looping}"
    );
    let missing = Scenario::new("nothing").settle();
    assert!(missing.problems()[0].contains("no controller"), "{missing}");
}

#[test]
#[should_panic(expected = "v1 ConfigMap default/p-child differs once settled")]
fn a_settled_object_that_differs_fails_with_a_diff() {
    create_then_change(scenario(Bug::Appends, false))
        .settle()
        .assert_object(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "p-child", "namespace": "default"}, "data": {"copy": "one"}}));
}

#[test]
fn a_settle_table_reports_each_case_that_fails() {
    use recon_testing::explore::{SettleCase, SettleTests};

    let child = |copy: &str| {
        json!({"apiVersion": "v1", "kind": "ConfigMap",
               "metadata": {"name": "p-child", "namespace": "default"}, "data": {"copy": copy}})
    };
    let report = SettleTests::new()
        .case(
            "a wrong copy",
            SettleCase::new()
                .action(UserAction::create(&parent("one")))
                .expect_object(&child("two")),
        )
        .case(
            "a problem expected, and found",
            SettleCase::new()
                .action(UserAction::create(&parent("one")))
                .expect_problem("[NotQuiescent]"),
        )
        .case(
            "writes that differ",
            SettleCase::new()
                .action(UserAction::create(&parent("one")))
                .expect_writes(&["POST v1 configmaps default/p-child, answered 201"]),
        )
        .check(|| scenario(Bug::ChangesEveryTime, true));
    let failed: Vec<&str> = report.failures.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(failed, ["a wrong copy", "writes that differ"], "{report}");
    let text = report.to_string();
    assert!(text.starts_with("2 of 3 cases failed"), "{text}");
    // The first case never settled: that is a problem it did not expect, besides the diff.
    assert!(
        text.contains("unexpected problem: [NotQuiescent]"),
        "{text}"
    );
    assert!(
        text.contains("v1 ConfigMap default/p-child differs once settled"),
        "{text}"
    );
    assert!(text.contains("writes differ:"), "{text}");
}
