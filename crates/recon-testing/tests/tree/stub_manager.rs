//! `StubObjectManager` under a `ChildReconciler`: the four things it does (reconciler.io's
//! testing `StubObjectManager`): create, update, delete, or leave the child alone.

use k8s_openapi::api::core::v1::ConfigMap;
use kube::CustomResourceExt;
use recon_core::{ChildReconciler, ResourceReconciler};
use recon_test_fixtures::*;
use recon_testing::{DeleteRef, ReconcilerTests, StubObjectManager};
use serde_json::{Value, json};

use crate::support::*;

const UID: &str = "0b5e7a4c-0000-4000-8000-000000000001";

fn parent(size: i32) -> Widget {
    let mut w = widget("w", size);
    w.metadata.namespace = Some("default".to_owned());
    w.metadata.uid = Some(UID.to_owned());
    w
}

/// The child of `w`, holding `size`, labelled `tier`.
fn child(size: &str, tier: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": "w-child", "namespace": "default", "labels": {"tier": tier},
                        "ownerReferences": [{"apiVersion": "example.com/v1", "kind": "Widget",
                            "name": "w", "uid": UID, "controller": true,
                            "blockOwnerDeletion": true}]},
           "data": {"size": size}})
}

#[test]
fn stub_object_manager() {
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a missing child is created",
            reconcile_w()
                .given(&parent(1))
                .expect_create(&child("1", "web")),
        )
        .case(
            "a child in sync is left alone",
            reconcile_w().given(&parent(1)).given(&child("1", "web")),
        )
        .case(
            "a child with other data or labels is updated",
            reconcile_w()
                .given(&parent(2))
                .given(&child("1", "db"))
                .expect_update(&child("2", "web")),
        )
        .case(
            "a child no longer desired is deleted",
            reconcile_w()
                .given(&parent(0))
                .given(&child("1", "web"))
                .expect_delete(DeleteRef::new("ConfigMap", Some("default"), "w-child")),
        )
        .run(|env| {
            let child = ChildReconciler::<Widget, ConfigMap>::new(
                StubObjectManager::new(),
                |_, w: &Widget| {
                    if w.spec.size == 0 {
                        return Ok(None);
                    }
                    let mut cm = ConfigMap::default();
                    cm.metadata.name = Some("w-child".to_owned());
                    cm.metadata.labels = Some([("tier".to_owned(), "web".to_owned())].into());
                    cm.data = Some([("size".to_owned(), w.spec.size.to_string())].into());
                    Ok(Some(cm))
                },
                |_, _, child| child.map(|_| ()),
            );
            ResourceReconciler::new(env.config(), child)
        });
}

/// A `DynamicObject` child read from a list has no `apiVersion` or `kind`: the stub's update
/// still sends them (reconciler.io's unstructured children always carry them), and a child
/// in sync is still left alone.
#[test]
fn stub_object_manager_with_dynamic_objects() {
    use kube::api::{ApiResource, DynamicObject};
    ReconcilerTests::new()
        .crd(&Widget::crd())
        .case(
            "a child with other data is updated with its type",
            reconcile_w()
                .given(&parent(2))
                .given(&child("1", "web"))
                .expect_update(&child("2", "web")),
        )
        .case(
            "a child in sync is left alone",
            reconcile_w().given(&parent(1)).given(&child("1", "web")),
        )
        .run(|env| {
            let configmaps = ApiResource::erase::<ConfigMap>(&());
            let child = ChildReconciler::<Widget, DynamicObject>::new_with(
                (),
                configmaps.clone(),
                StubObjectManager::new_with(configmaps),
                |_, w: &Widget| {
                    let mut cm = child(&w.spec.size.to_string(), "web");
                    cm["metadata"]
                        .as_object_mut()
                        .expect("metadata")
                        .remove("ownerReferences");
                    cm["metadata"]
                        .as_object_mut()
                        .expect("metadata")
                        .remove("namespace");
                    Ok(Some(serde_json::from_value(cm)?))
                },
                |_, _, child| child.map(|_| ()),
            );
            ResourceReconciler::new(env.config(), child)
        });
}
