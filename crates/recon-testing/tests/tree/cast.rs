//! `CastResource`: a sub-reconciler written for a duck type (or another typed view) runs on a
//! resource of another type; its changes go back as a JSON patch and every field the duck does
//! not know is kept.

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube::CustomResourceExt;
use kube::api::DynamicObject;
use recon_core::{
    CastResource, Config, Context, Error, Outcome, Request, Setup, SubReconciler, SyncReconciler,
    Trigger,
};
use recon_fake::ApiServer;
use recon_test_fixtures::*;
use recon_testing::{SubReconcilerTests, TestCase, TestEnv};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

/// What a scaler knows of a workload: its metadata and `spec.replicas` (and a `paused` flag
/// with a default, which a Deployment may lack).
#[derive(Clone, Debug, Default, Deserialize, Serialize)]
struct Duck {
    metadata: ObjectMeta,
    #[serde(default)]
    spec: DuckSpec,
}

#[derive(Clone, Debug, Default, Deserialize, Serialize)]
struct DuckSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    replicas: Option<i32>,
    #[serde(default)]
    paused: bool,
}

/// A duck that needs `spec.replicas`.
#[derive(Clone, Debug, Deserialize, Serialize)]
struct StrictDuck {
    metadata: ObjectMeta,
    spec: StrictSpec,
}

#[derive(Clone, Debug, Deserialize, Serialize)]
struct StrictSpec {
    replicas: i32,
}

/// The nested reconciler: does to the duck what the case's metadata says, then fails if asked.
/// A plain `SubReconciler`: the duck is no `kube::Resource`.
#[derive(Default)]
struct Scaler {
    replicas: Option<i32>,
    paused: bool,
    annotate: bool,
    fail: bool,
}

impl Scaler {
    fn from_env(env: &TestEnv) -> Self {
        let flag = |key: &str| env.metadata(key).and_then(Value::as_bool) == Some(true);
        Scaler {
            replicas: env
                .metadata("replicas")
                .and_then(Value::as_i64)
                .and_then(|n| i32::try_from(n).ok()),
            paused: flag("paused"),
            annotate: flag("annotate"),
            fail: flag("fail"),
        }
    }
}

impl SubReconciler<Duck> for Scaler {
    fn name(&self) -> &str {
        "Scaler"
    }

    async fn reconcile(&self, _ctx: &Context, duck: &mut Duck) -> Result<Outcome, Error> {
        if let Some(n) = self.replicas {
            duck.spec.replicas = Some(n);
        }
        if self.paused {
            duck.spec.paused = true;
        }
        if self.annotate {
            duck.metadata
                .annotations
                .get_or_insert_default()
                .insert("scaled".to_owned(), "yes".to_owned());
        }
        if self.fail {
            return Err(Error::msg("the scaler failed"));
        }
        Ok(recon_core::Outcome::done())
    }

    fn setup(&self, setup: &mut Setup) {
        setup.owns::<ConfigMap>();
    }
}

/// The Deployment `web` in `default`, with fields no duck knows: a label, a template, a
/// strategy and a status.
fn web() -> Value {
    json!({
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"tier": "front"}},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "web"}},
            "strategy": {"type": "Recreate"},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "main", "image": "nginx"}]},
            },
        },
        "status": {"replicas": 1, "readyReplicas": 1},
    })
}

fn web_with(edit: impl FnOnce(&mut Value)) -> Value {
    let mut w = web();
    edit(&mut w);
    w
}

fn case() -> TestCase {
    TestCase::sub_reconcile(&web())
}

#[test]
fn cast_to_a_duck() {
    SubReconcilerTests::new()
        .case(
            "a change to the duck is patched back and every field it does not know is kept",
            case()
                .metadata("replicas", &3)
                .expect_resource(&web_with(|w| w["spec"]["replicas"] = json!(3))),
        )
        .case(
            "a metadata change goes back too",
            case()
                .metadata("annotate", &true)
                .expect_resource(&web_with(|w| {
                    w["metadata"]["annotations"] = json!({"scaled": "yes"});
                })),
        )
        .case(
            // The duck reads `paused: false` (its default) and writes it: nothing changed, so
            // the Deployment does not gain a `paused` it never had.
            "an unchanged duck leaves the resource as it was",
            case(),
        )
        .case(
            "setting the value the resource already has changes nothing",
            case().metadata("replicas", &1),
        )
        .case(
            "a changed field the resource lacks is added",
            case()
                .metadata("paused", &true)
                .expect_resource(&web_with(|w| w["spec"]["paused"] = json!(true))),
        )
        .case(
            "a failing nested reconciler still has its changes patched back, then its error returned",
            case()
                .metadata("replicas", &5)
                .metadata("fail", &true)
                .expect_error("the scaler failed")
                .expect_resource(&web_with(|w| w["spec"]["replicas"] = json!(5))),
        )
        .run(|env| CastResource::<Deployment, Duck>::new(Scaler::from_env(env)));
}

#[test]
fn cast_to_a_duck_the_resource_does_not_fit() {
    SubReconcilerTests::new()
        .case(
            "a resource that does not read as the duck is an error naming both types",
            TestCase::sub_reconcile(&web_with(|w| {
                w["spec"].as_object_mut().unwrap().remove("replicas");
            }))
            // The types are named in full: `k8s_openapi::<version>::api::apps::v1::...`.
            .expect_error("Deployment to a tree::cast::StrictDuck: missing field `replicas`"),
        )
        .run(|_| CastResource::<Deployment, StrictDuck>::new(NeverRuns));
}

/// A nested reconciler that fails the case if it runs.
struct NeverRuns;

impl SubReconciler<StrictDuck> for NeverRuns {
    fn name(&self) -> &str {
        "NeverRuns"
    }

    async fn reconcile(&self, _: &Context, _: &mut StrictDuck) -> Result<Outcome, Error> {
        Err(Error::msg("the nested reconciler ran"))
    }
}

/// The Widget CRD with a `spec` that keeps fields its schema does not declare, so that the
/// server stores one the Widget type does not know (it would prune it otherwise).
fn widget_crd_keeping_unknown_spec_fields() -> CustomResourceDefinition {
    let mut crd = Widget::crd();
    let spec = crd.spec.versions[0]
        .schema
        .as_mut()
        .and_then(|s| s.open_api_v3_schema.as_mut())
        .and_then(|s| s.properties.as_mut())
        .and_then(|p| p.get_mut("spec"))
        .expect("the derived schema has spec");
    spec.x_kubernetes_preserve_unknown_fields = Some(true);
    crd
}

/// A Widget held as a `DynamicObject`, with a field the Widget type does not know.
fn dynamic_widget() -> Value {
    json!({
        "apiVersion": "example.com/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": "default"},
        "spec": {"size": 1, "colour": "blue"},
    })
}

#[test]
fn cast_a_dynamic_object_to_its_type() {
    let grow = || {
        SyncReconciler::<Widget>::new("Grow").sync(async |_, w| {
            w.spec.size += 1;
            w.status.get_or_insert_default().ready = Some(true);
            Ok(())
        })
    };
    SubReconcilerTests::new()
        .crd(&widget_crd_keeping_unknown_spec_fields())
        .case(
            "the typed view's changes go back, the field it does not know stays",
            TestCase::sub_reconcile(&dynamic_widget()).expect_resource(&{
                let mut w = dynamic_widget();
                w["spec"]["size"] = json!(2);
                w["status"] = json!({"ready": true});
                w
            }),
        )
        .run(move |_| CastResource::<DynamicObject, Widget>::new(grow()));
}

fn context(server: &ApiServer) -> Context {
    Context::new(
        Config::new(server.client(), "test"),
        Request::namespaced("default", "web"),
    )
}

#[tokio::test]
async fn cast_a_typed_resource_to_a_dynamic_object() {
    let server = ApiServer::new();
    let label = SyncReconciler::<DynamicObject>::new("Label").sync(async |_, o| {
        o.metadata
            .labels
            .get_or_insert_default()
            .insert("seen".to_owned(), "yes".to_owned());
        o.data["spec"]["replicas"] = json!(4);
        Ok(())
    });
    let cast = CastResource::<Deployment, DynamicObject>::new(label);
    let mut deployment: Deployment = from_json(web());

    cast.reconcile(&context(&server), &mut deployment)
        .await
        .unwrap();

    let expected = web_with(|w| {
        w["metadata"]["labels"]["seen"] = json!("yes");
        w["spec"]["replicas"] = json!(4);
    });
    assert_eq!(serde_json::to_value(&deployment).unwrap(), expected);
    assert!(server.requests().is_empty(), "a cast sends nothing");
}

#[tokio::test]
async fn a_change_the_resource_cannot_hold_is_an_error_and_leaves_it_unchanged() {
    let server = ApiServer::new();
    let break_it = SyncReconciler::<DynamicObject>::new("Break").sync(async |_, o| {
        o.data["spec"]["replicas"] = json!("three");
        Ok(())
    });
    let cast = CastResource::<Deployment, DynamicObject>::new(break_it);
    let mut deployment: Deployment = from_json(web());

    let err = cast
        .reconcile(&context(&server), &mut deployment)
        .await
        .unwrap_err()
        .to_string();

    assert!(
        err.starts_with(
            "cannot patch the changes made to the kube_core::dynamic::DynamicObject back onto \
             the k8s_openapi::"
        ) && err.ends_with("Deployment: invalid type: string \"three\", expected i32"),
        "{err}"
    );
    assert_eq!(serde_json::to_value(&deployment).unwrap(), web());
}

#[test]
fn cast_names_itself_after_the_duck_and_forwards_setup() {
    let cast = CastResource::<Deployment, Duck>::new(Scaler::default());
    assert_eq!(cast.name(), "DuckCastResource");
    assert_eq!(cast.named("Scale").name(), "Scale");

    let mut setup = Setup::default();
    CastResource::<Deployment, Duck>::new(Scaler::default()).setup(&mut setup);
    let watches: Vec<(&str, Trigger)> = setup
        .watches()
        .iter()
        .map(|w| (w.resource.kind.as_str(), w.trigger))
        .collect();
    assert_eq!(watches, [("ConfigMap", Trigger::Owner)]);
}

#[tokio::test]
async fn a_failing_nested_reconciler_whose_change_cannot_go_back_reports_both() {
    let server = ApiServer::new();
    let break_and_fail = SyncReconciler::<DynamicObject>::new("BreakAndFail").sync(async |_, o| {
        o.data["spec"]["replicas"] = json!("three");
        Err::<(), _>(Error::msg("the nested reconciler failed"))
    });
    let cast = CastResource::<Deployment, DynamicObject>::new(break_and_fail);
    let mut deployment: Deployment = from_json(web());

    let err = cast
        .reconcile(&context(&server), &mut deployment)
        .await
        .unwrap_err()
        .to_string();

    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert_eq!(lines[0], "the nested reconciler failed");
    assert!(
        lines[1].starts_with("cannot patch the changes made to the "),
        "{err}"
    );
    assert_eq!(serde_json::to_value(&deployment).unwrap(), web());
}

#[tokio::test]
async fn a_typed_view_of_another_kind_reads_the_resource_without_its_type() {
    // A ConfigMap (k8s-openapi) accepts only `apiVersion: v1`, `kind: ConfigMap`: the Widget
    // is read without its own, and the view's metadata change goes back.
    let server = ApiServer::new();
    let label = SyncReconciler::<ConfigMap>::new("Label").sync(async |_, cm| {
        cm.metadata
            .labels
            .get_or_insert_default()
            .insert("seen".to_owned(), "yes".to_owned());
        Ok(())
    });
    let cast = CastResource::<DynamicObject, ConfigMap>::new(label);
    let mut widget: DynamicObject = from_json(dynamic_widget());

    cast.reconcile(&context(&server), &mut widget)
        .await
        .unwrap();

    let mut expected = dynamic_widget();
    expected["metadata"]["labels"] = json!({"seen": "yes"});
    assert_eq!(serde_json::to_value(&widget).unwrap(), expected);
}
