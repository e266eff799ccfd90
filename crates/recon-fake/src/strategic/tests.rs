//! One test per rule. Cases marked "upstream:" restate, with Kubernetes field
//! names, a case of `strategicpatch/patch_test.go` (their `mergingList` is a
//! list merged on `name`, `mergingIntList` a merged list of scalars).

use pretty_assertions::assert_eq;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::*;

fn schema(group: &str, kind: &str) -> &'static PatchSchema {
    schema_for(group, kind).expect("kind in table")
}

fn pod() -> &'static PatchSchema {
    schema("", "Pod")
}

fn patched(schema: &PatchSchema, original: Value, patch: Value) -> Value {
    match apply(&original, &patch, schema) {
        Ok(v) => v,
        Err(e) => panic!("unexpected error: {e}"),
    }
}

fn failed(schema: &PatchSchema, original: Value, patch: Value) -> StrategicError {
    match apply(&original, &patch, schema) {
        Ok(v) => panic!("expected an error, got {v}"),
        Err(e) => e,
    }
}

/// The `metav1.Status` JSON body the apiserver writes for this error, or
/// `None` for [`StrategicErrorKind::Panic`], whose body is plain text.
fn to_status(err: &StrategicError) -> Option<Value> {
    let mut status = recon_apimachinery::json::Map::new();
    status.insert("kind".into(), Value::from("Status"));
    status.insert("apiVersion".into(), Value::from("v1"));
    status.insert(
        "metadata".into(),
        Value::Object(recon_apimachinery::json::Map::new()),
    );
    status.insert("status".into(), Value::from("Failure"));
    status.insert("message".into(), Value::from(err.message.clone()));
    match err.kind {
        StrategicErrorKind::Panic => return None,
        StrategicErrorKind::BadRequest => {
            status.insert("reason".into(), Value::from(err.reason));
        }
        StrategicErrorKind::Invalid => {
            status.insert("reason".into(), Value::from(err.reason));
            status.insert(
                "details".into(),
                Value::Object(recon_apimachinery::json::Map::new()),
            );
        }
        StrategicErrorKind::Internal => {}
    }
    status.insert("code".into(), Value::from(err.code));
    Some(Value::Object(status))
}

fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .expect("a list")
        .iter()
        .map(|c| c["name"].as_str().unwrap_or("?"))
        .collect()
}

fn containers(names: &[&str]) -> Value {
    Value::Array(names.iter().map(|n| json!({"name": n})).collect())
}

fn pod_with_containers(list: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": list}})
}

// --- maps ----------------------------------------------------------------------

#[test]
fn null_deletes_a_map_key() {
    let original = json!({"metadata": {"name": "p", "labels": {"a": "1", "b": "2"}}});
    let out = patched(
        pod(),
        original,
        json!({"metadata": {"labels": {"a": null}}}),
    );
    assert_eq!(
        out,
        json!({"metadata": {"name": "p", "labels": {"b": "2"}}})
    );
}

#[test]
fn null_for_a_missing_key_is_ignored() {
    let original = json!({"metadata": {"name": "p"}});
    let out = patched(
        pod(),
        original.clone(),
        json!({"metadata": {"labels": null}}),
    );
    assert_eq!(out, original);
}

#[test]
fn nested_objects_merge_key_by_key() {
    let original = json!({"spec": {"securityContext": {"runAsUser": 1, "fsGroup": 2}}});
    let out = patched(
        pod(),
        original,
        json!({"spec": {"securityContext": {"runAsUser": 5, "runAsGroup": 3}}}),
    );
    assert_eq!(
        out,
        json!({"spec": {"securityContext": {"runAsUser": 5, "fsGroup": 2, "runAsGroup": 3}}})
    );
}

#[test]
fn labels_and_annotations_merge_as_maps() {
    let original = json!({"metadata": {"labels": {"a": "1"}, "annotations": {"x": "y"}}});
    let out = patched(
        schema("", "ConfigMap"),
        original,
        json!({"metadata": {"labels": {"b": "2"}, "annotations": {"x": "z"}}}),
    );
    assert_eq!(
        out,
        json!({"metadata": {"labels": {"a": "1", "b": "2"}, "annotations": {"x": "z"}}})
    );
}

#[test]
fn new_key_takes_the_patch_value_without_nulls_or_directive_objects() {
    // upstream: mergeMap takes an absent key via discardNullValuesFromPatch + removeDirectives.
    let original = json!({"spec": {}});
    let patch = json!({"spec": {"affinity": {
        "nodeAffinity": {"$patch": "replace", "x": 1},
        "podAffinity": {"a": null, "b": [null, {"c": null, "d": 1}]}
    }}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out,
        json!({"spec": {"affinity": {"podAffinity": {"b": [null, {"d": 1}]}}}})
    );
}

#[test]
fn value_of_another_json_type_is_replaced_by_the_patch_value() {
    let original = json!({"spec": {"nodeSelector": "oops"}});
    let out = patched(
        pod(),
        original,
        json!({"spec": {"nodeSelector": {"disk": "ssd", "gone": null}}}),
    );
    assert_eq!(out, json!({"spec": {"nodeSelector": {"disk": "ssd"}}}));
}

#[test]
fn integer_and_float_are_different_types_but_both_replace() {
    let original = json!({"spec": {"replicas": 1}});
    let out = patched(
        schema("apps", "Deployment"),
        original,
        json!({"spec": {"replicas": 2.5}}),
    );
    assert_eq!(out, json!({"spec": {"replicas": 2.5}}));
}

#[test]
fn null_patch_is_a_no_op() {
    let original = json!({"metadata": {"name": "p"}});
    assert_eq!(patched(pod(), original.clone(), Value::Null), original);
}

#[test]
fn empty_patch_returns_the_object_unchanged() {
    let original = pod_with_containers(containers(&["a", "b"]));
    assert_eq!(patched(pod(), original.clone(), json!({})), original);
}

#[test]
fn patch_that_is_not_an_object_is_a_bad_request() {
    for (patch, word) in [
        (json!([1]), "array"),
        (json!("x"), "string"),
        (json!(3), "number"),
        (json!(true), "bool"),
    ] {
        let err = failed(pod(), json!({}), patch);
        assert_eq!(err.code, 400);
        assert_eq!(err.reason, "BadRequest");
        assert_eq!(
            err.message,
            format!(
                "json: cannot unmarshal {word} into Go value of type map[string]interface {{}}"
            )
        );
    }
}

#[test]
fn unparsable_body_is_refused_with_go_s_syntax_error() {
    let err = parse_patch_body(b"{\"metadata\": ").unwrap_err();
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "unexpected end of JSON input")
    );
    let err = parse_patch_body(b"{\"a\":tru}").unwrap_err();
    assert_eq!(
        err.message,
        "invalid character '}' in literal true (expecting 'e')"
    );
    assert_eq!(parse_patch_body(b" {\"a\": 1} ").unwrap(), json!({"a": 1}));
}

// --- merge lists ------------------------------------------------------------------

#[test]
fn containers_merge_by_name_keeping_unpatched_fields() {
    let original = pod_with_containers(json!([
        {"name": "app", "image": "app:1", "args": ["x"]},
        {"name": "side", "image": "side:1"}
    ]));
    let out = patched(
        pod(),
        original,
        json!({"spec": {"containers": [{"name": "app", "image": "app:2"}]}}),
    );
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "app", "image": "app:2", "args": ["x"]},
            {"name": "side", "image": "side:1"}
        ])
    );
}

#[test]
fn new_merge_list_elements_go_before_unmentioned_stored_elements() {
    // mergeSortedSlice takes a stored-only element first only when both it and
    // the patch element are in the stored list; a new element never is.
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a", "b"])),
        json!({"spec": {"containers": [{"name": "c", "image": "c"}]}}),
    );
    assert_eq!(names(&out["spec"]["containers"]), ["c", "a", "b"]);
}

#[test]
fn new_merge_list_element_follows_the_patch_element_before_it() {
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a", "b", "z"])),
        json!({"spec": {"containers": [{"name": "b", "image": "b"}, {"name": "c"}]}}),
    );
    assert_eq!(names(&out["spec"]["containers"]), ["a", "b", "c", "z"]);
}

#[test]
fn merge_list_follows_the_patch_order_for_mentioned_elements() {
    // upstream: "preserve the order from the patch in a merging list 2".
    let original = pod_with_containers(json!([
        {"name": "one"},
        {"name": "two", "image": "b"},
        {"name": "three"}
    ]));
    let patch = json!({"spec": {"containers": [
        {"name": "three", "image": "c"},
        {"name": "one", "image": "a"}
    ]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "two", "image": "b"},
            {"name": "three", "image": "c"},
            {"name": "one", "image": "a"}
        ])
    );
}

#[test]
fn merge_list_elements_mentioned_in_full_take_the_patch_order() {
    // upstream: "preserve the order from the patch in a merging list".
    let original = pod_with_containers(json!([
        {"name": "one"},
        {"name": "two", "image": "b"},
        {"name": "three"}
    ]));
    let patch = json!({"spec": {"containers": [
        {"name": "three", "image": "c"},
        {"name": "one", "image": "a"},
        {"name": "two", "workingDir": "x"}
    ]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "three", "image": "c"},
            {"name": "one", "image": "a"},
            {"name": "two", "image": "b", "workingDir": "x"}
        ])
    );
}

#[test]
fn duplicate_patch_elements_collapse_into_one() {
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a"])),
        json!({"spec": {"containers": [
            {"name": "n", "image": "x"},
            {"name": "n", "workingDir": "/w"}
        ]}}),
    );
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "n", "image": "x", "workingDir": "/w"}, {"name": "a"}])
    );
}

#[test]
fn appended_elements_are_copied_verbatim_apart_from_directive_keys() {
    // mergeSliceWithoutSpecialElements appends the raw patch element; the typed
    // decode upstream then drops the unknown `$patch` key.
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a"])),
        json!({"spec": {"containers": [{
            "name": "n",
            "image": null,
            "resources": {"$patch": "replace", "limits": {"cpu": "1"}}
        }]}}),
    );
    assert_eq!(
        out["spec"]["containers"][0],
        json!({"name": "n", "image": null, "resources": {"limits": {"cpu": "1"}}})
    );
}

#[test]
fn env_merges_by_name_inside_containers() {
    let original = pod_with_containers(json!([{"name": "app", "env": [
        {"name": "A", "value": "1"},
        {"name": "B", "value": "2"}
    ]}]));
    let patch = json!({"spec": {"containers": [{"name": "app", "env": [
        {"name": "B", "value": "3"}
    ]}]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"][0]["env"],
        json!([{"name": "A", "value": "1"}, {"name": "B", "value": "3"}])
    );
}

#[test]
fn container_ports_merge_by_container_port() {
    let original = pod_with_containers(json!([{"name": "app", "ports": [
        {"containerPort": 80, "name": "http"},
        {"containerPort": 443}
    ]}]));
    let patch = json!({"spec": {"containers": [{"name": "app", "ports": [
        {"containerPort": 80, "protocol": "TCP"}
    ]}]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 443}])
    );
}

#[test]
fn merge_keys_compare_like_go_values_so_80_and_80_0_differ() {
    let original = pod_with_containers(json!([{"name": "app", "ports": [{"containerPort": 80}]}]));
    let patch = json!({"spec": {"containers": [{"name": "app", "ports": [
        {"containerPort": 80.0, "name": "f"}
    ]}]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"][0]["ports"],
        json!([{"containerPort": 80.0, "name": "f"}, {"containerPort": 80}])
    );
}

#[test]
fn service_ports_merge_by_port() {
    let original = json!({"spec": {"ports": [{"port": 80, "targetPort": 8080}, {"port": 443}]}});
    let out = patched(
        schema("", "Service"),
        original,
        json!({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}}),
    );
    assert_eq!(
        out["spec"]["ports"],
        json!([{"port": 80, "targetPort": 9090}, {"port": 443}])
    );
}

#[test]
fn volumes_and_volume_mounts_merge_by_their_keys() {
    let original = json!({"spec": {
        "volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {}}],
        "containers": [{"name": "app", "volumeMounts": [{"mountPath": "/a", "name": "a"}]}]
    }});
    let patch = json!({"spec": {
        "volumes": [{"name": "b", "emptyDir": {"medium": "Memory"}}],
        "containers": [{"name": "app", "volumeMounts": [{"mountPath": "/a", "readOnly": true}]}]
    }});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"],
        json!({
            "volumes": [{"name": "a", "emptyDir": {}}, {"name": "b", "emptyDir": {"medium": "Memory"}}],
            "containers": [{"name": "app", "volumeMounts": [{"mountPath": "/a", "name": "a", "readOnly": true}]}]
        })
    );
}

#[test]
fn untagged_lists_are_replaced() {
    let original = json!({"spec": {
        "tolerations": [{"key": "a"}, {"key": "b"}],
        "containers": [{"name": "app", "args": ["x", "y"]}]
    }});
    let patch = json!({"spec": {
        "tolerations": [{"key": "c", "value": null}],
        "containers": [{"name": "app", "args": ["z"]}]
    }});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"],
        json!({
            // Replaced verbatim: upstream's typed decode would turn the null into a zero value.
            "tolerations": [{"key": "c", "value": null}],
            "containers": [{"name": "app", "args": ["z"]}]
        })
    );
}

#[test]
fn managed_fields_are_replaced() {
    let original = json!({"metadata": {"managedFields": [{"manager": "a"}, {"manager": "b"}]}});
    let out = patched(
        schema("", "Secret"),
        original,
        json!({"metadata": {"managedFields": [{"manager": "c"}]}}),
    );
    assert_eq!(
        out,
        json!({"metadata": {"managedFields": [{"manager": "c"}]}})
    );
}

#[test]
fn owner_references_merge_by_uid() {
    let original = json!({"metadata": {"ownerReferences": [
        {"uid": "1", "name": "a", "kind": "ReplicaSet"},
        {"uid": "2", "name": "b", "kind": "ReplicaSet"}
    ]}});
    let patch = json!({"metadata": {"ownerReferences": [{"uid": "2", "controller": true}]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["metadata"]["ownerReferences"],
        json!([
            {"uid": "1", "name": "a", "kind": "ReplicaSet"},
            {"uid": "2", "name": "b", "kind": "ReplicaSet", "controller": true}
        ])
    );
}

#[test]
fn conditions_merge_by_type() {
    let original = json!({"status": {"conditions": [
        {"type": "Available", "status": "False"},
        {"type": "Progressing", "status": "True"}
    ]}});
    let patch = json!({"status": {"conditions": [{"type": "Available", "status": "True"}]}});
    for (group, kind) in [
        ("", "Pod"),
        ("apps", "Deployment"),
        ("apps", "StatefulSet"),
        ("batch", "Job"),
        ("", "Namespace"),
        ("", "Service"),
        ("", "Node"),
    ] {
        let out = patched(schema(group, kind), original.clone(), patch.clone());
        assert_eq!(
            out["status"]["conditions"],
            json!([
                {"type": "Available", "status": "True"},
                {"type": "Progressing", "status": "True"}
            ]),
            "{group}/{kind}"
        );
    }
}

#[test]
fn pod_templates_of_workloads_merge_containers() {
    let template = |list: Value| json!({"spec": {"template": {"spec": {"containers": list}}}});
    for (group, kind) in [
        ("apps", "Deployment"),
        ("apps", "ReplicaSet"),
        ("apps", "StatefulSet"),
        ("apps", "DaemonSet"),
        ("batch", "Job"),
        ("", "ReplicationController"),
    ] {
        let out = patched(
            schema(group, kind),
            template(json!([{"name": "a", "image": "1"}, {"name": "b"}])),
            template(json!([{"name": "a", "image": "2"}])),
        );
        assert_eq!(
            out,
            template(json!([{"name": "a", "image": "2"}, {"name": "b"}])),
            "{group}/{kind}"
        );
    }
    let cron = |list: Value| json!({"spec": {"jobTemplate": {"spec": {"template": {"spec": {"initContainers": list}}}}}});
    let out = patched(
        schema("batch", "CronJob"),
        cron(json!([{"name": "a"}, {"name": "b"}])),
        cron(json!([{"name": "b", "image": "x"}])),
    );
    assert_eq!(
        out,
        cron(json!([{"name": "a"}, {"name": "b", "image": "x"}]))
    );
}

#[test]
fn service_account_secrets_merge_by_name() {
    let original = json!({"secrets": [{"name": "a"}], "imagePullSecrets": [{"name": "x"}]});
    let out = patched(
        schema("", "ServiceAccount"),
        original,
        json!({"secrets": [{"name": "b"}], "imagePullSecrets": [{"name": "y"}]}),
    );
    assert_eq!(
        out,
        json!({"secrets": [{"name": "b"}, {"name": "a"}], "imagePullSecrets": [{"name": "y"}]})
    );
}

#[test]
fn pod_disruption_budget_selector_is_replaced_not_merged() {
    let original = json!({"spec": {"selector": {"matchLabels": {"a": "1"}}, "minAvailable": 1}});
    let out = patched(
        schema("policy", "PodDisruptionBudget"),
        original,
        json!({"spec": {"selector": {"matchLabels": {"b": "2"}}}}),
    );
    assert_eq!(
        out,
        json!({"spec": {"selector": {"matchLabels": {"b": "2"}}, "minAvailable": 1}})
    );
}

// --- primitive merge lists -------------------------------------------------------------

#[test]
fn finalizers_merge_as_an_ordered_set() {
    // upstream: "unique scalars when merging lists".
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let out = patched(
        pod(),
        original,
        json!({"metadata": {"finalizers": ["b", "c"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["a", "b", "c"]));
}

#[test]
fn new_finalizers_go_first_unless_they_follow_a_mentioned_one() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let out = patched(pod(), original, json!({"metadata": {"finalizers": ["c"]}}));
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
}

#[test]
fn finalizers_follow_the_patch_order_then_the_stored_order() {
    let original = json!({"metadata": {"finalizers": ["a", "b"]}});
    let out = patched(
        pod(),
        original,
        json!({"metadata": {"finalizers": ["c", "a"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["c", "a", "b"]));
}

#[test]
fn finalizer_already_present_is_not_duplicated() {
    let original = json!({"metadata": {"finalizers": ["a"]}});
    let out = patched(
        pod(),
        original,
        json!({"metadata": {"finalizers": ["a", "a"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["a"]));
}

#[test]
fn namespace_spec_finalizers_are_replaced() {
    let original =
        json!({"spec": {"finalizers": ["kubernetes"]}, "metadata": {"finalizers": ["x"]}});
    let out = patched(
        schema("", "Namespace"),
        original,
        json!({"spec": {"finalizers": ["other"]}, "metadata": {"finalizers": ["y"]}}),
    );
    assert_eq!(
        out,
        json!({"spec": {"finalizers": ["other"]}, "metadata": {"finalizers": ["y", "x"]}})
    );
}

#[test]
fn node_pod_cidrs_merge_as_a_set() {
    let original = json!({"spec": {"podCIDRs": ["10.0.0.0/24"]}});
    let out = patched(
        schema("", "Node"),
        original,
        json!({"spec": {"podCIDRs": ["10.0.0.0/24", "fd00::/64"]}}),
    );
    assert_eq!(out["spec"]["podCIDRs"], json!(["10.0.0.0/24", "fd00::/64"]));
}

// --- $patch -----------------------------------------------------------------------------

#[test]
fn patch_delete_directive_removes_the_keyed_element() {
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a", "b", "c"])),
        json!({"spec": {"containers": [{"name": "b", "$patch": "delete"}]}}),
    );
    assert_eq!(names(&out["spec"]["containers"]), ["a", "c"]);
}

#[test]
fn patch_delete_directive_removes_every_duplicate() {
    // upstream: "delete all duplicate entries in a merging list".
    let original = pod_with_containers(json!([
        {"name": "1"}, {"name": "1"}, {"name": "2", "image": "a"}, {"name": "3"}, {"name": "3"}
    ]));
    let patch = json!({"spec": {"containers": [
        {"name": "1", "$patch": "delete"},
        {"name": "3", "$patch": "delete"}
    ]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "2", "image": "a"}])
    );
}

#[test]
fn patch_delete_directive_for_a_missing_element_changes_nothing() {
    let original = pod_with_containers(containers(&["a"]));
    let out = patched(
        pod(),
        original.clone(),
        json!({"spec": {"containers": [{"name": "zz", "$patch": "delete"}]}}),
    );
    assert_eq!(out, original);
}

#[test]
fn patch_delete_and_add_in_one_list() {
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a", "b"])),
        json!({"spec": {"containers": [
            {"name": "a", "$patch": "delete"},
            {"name": "c"}
        ]}}),
    );
    assert_eq!(names(&out["spec"]["containers"]), ["c", "b"]);
}

#[test]
fn patch_replace_element_replaces_the_whole_list() {
    let out = patched(
        pod(),
        pod_with_containers(json!([{"name": "a", "image": "1"}, {"name": "b"}])),
        json!({"spec": {"containers": [
            {"$patch": "replace"},
            {"name": "c", "image": "3"},
            {"name": "a"}
        ]}}),
    );
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "c", "image": "3"}, {"name": "a"}])
    );
}

#[test]
fn patch_replace_element_alone_empties_the_list() {
    // upstream: "delete all items from merging list".
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a", "b"])),
        json!({"spec": {"containers": [{"$patch": "replace"}]}}),
    );
    assert_eq!(out["spec"]["containers"], json!([]));
}

#[test]
fn patch_replace_in_an_object_replaces_the_object() {
    // upstream: "add key and delete all keys from map".
    let original = pod_with_containers(json!([{
        "name": "a",
        "resources": {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}
    }]));
    let patch = json!({"spec": {"containers": [{
        "name": "a",
        "resources": {"$patch": "replace", "limits": {"memory": "1Gi"}}
    }]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"][0]["resources"],
        json!({"limits": {"memory": "1Gi"}})
    );
}

#[test]
fn patch_replace_at_the_top_replaces_the_whole_object() {
    // upstream: "delete all keys from map" / "add key and delete all keys from map".
    let out = patched(
        pod(),
        json!({"metadata": {"name": "p"}, "spec": {"x": 1}}),
        json!({"$patch": "replace", "metadata": {"name": "q"}}),
    );
    assert_eq!(out, json!({"metadata": {"name": "q"}}));
}

#[test]
fn patch_delete_in_an_object_empties_it() {
    // upstream: "delete map from nested map".
    let out = patched(
        pod(),
        json!({"metadata": {"labels": {"a": "1", "b": "2"}}}),
        json!({"metadata": {"labels": {"$patch": "delete"}}}),
    );
    assert_eq!(out, json!({"metadata": {"labels": {}}}));
}

#[test]
fn patch_directive_object_for_an_absent_key_adds_nothing() {
    let original = json!({"metadata": {"name": "p"}});
    let out = patched(
        pod(),
        original.clone(),
        json!({"metadata": {"labels": {"$patch": "replace", "a": "1"}}}),
    );
    assert_eq!(out, original);
}

// --- $retainKeys -------------------------------------------------------------------------

#[test]
fn retain_keys_drops_unlisted_fields() {
    let original =
        json!({"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}});
    let patch = json!({"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}});
    let out = patched(schema("apps", "Deployment"), original, patch);
    assert_eq!(out, json!({"spec": {"strategy": {"type": "Recreate"}}}));
}

#[test]
fn retain_keys_switches_a_volume_source() {
    let original = json!({"spec": {"volumes": [{"name": "v", "emptyDir": {}}, {"name": "w", "emptyDir": {}}]}});
    let patch = json!({"spec": {"volumes": [
        {"name": "v", "$retainKeys": ["configMap", "name"], "configMap": {"name": "cm"}}
    ]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["volumes"],
        json!([{"name": "v", "configMap": {"name": "cm"}}, {"name": "w", "emptyDir": {}}])
    );
}

#[test]
fn retain_keys_ignores_nulls_and_list_directives_in_the_patch() {
    let original =
        json!({"metadata": {"finalizers": ["a", "b"], "labels": {"x": "1"}, "name": "p"}});
    let patch = json!({"metadata": {
        "$retainKeys": ["finalizers"],
        "labels": null,
        "$deleteFromPrimitiveList/finalizers": ["a"],
        "$setElementOrder/finalizers": ["b"]
    }});
    let out = patched(pod(), original, patch);
    assert_eq!(out, json!({"metadata": {"finalizers": ["b"]}}));
}

#[test]
fn retain_keys_must_list_every_patched_field() {
    let err = failed(
        schema("apps", "Deployment"),
        json!({"spec": {"strategy": {}}}),
        json!({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}),
    );
    assert_eq!(
        (err.code, err.reason, err.message.as_str()),
        (400, "BadRequest", "invalid patch format of retainKeys")
    );
}

#[test]
fn retain_keys_must_be_a_list() {
    let err = failed(
        pod(),
        json!({"spec": {}}),
        json!({"spec": {"$retainKeys": "x"}}),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (400, "invalid patch format of retainKeys")
    );
}

// --- $deleteFromPrimitiveList ------------------------------------------------------------

#[test]
fn delete_from_primitive_list_removes_the_values() {
    // upstream: "$deleteFromPrimitiveList should delete item from a list with merge patch strategy".
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let out = patched(
        pod(),
        original,
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["b", "zz"]}}),
    );
    assert_eq!(out, json!({"metadata": {"finalizers": ["a", "c"]}}));
}

#[test]
fn delete_from_primitive_list_works_on_untagged_lists_too() {
    // upstream: "... should delete item from a list without merge patch strategy".
    let original = pod_with_containers(json!([{"name": "a", "args": ["1", "2", "3"]}]));
    let patch =
        json!({"spec": {"containers": [{"name": "a", "$deleteFromPrimitiveList/args": ["2"]}]}});
    let out = patched(pod(), original, patch);
    assert_eq!(out["spec"]["containers"][0]["args"], json!(["1", "3"]));
}

#[test]
fn delete_from_primitive_list_of_a_missing_list_adds_nothing() {
    // upstream: "$deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list".
    let original = json!({"metadata": {"name": "p"}});
    let out = patched(
        pod(),
        original.clone(),
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}),
    );
    assert_eq!(out, original);
}

#[test]
fn delete_from_primitive_list_and_additions_combine() {
    let original = json!({"metadata": {"finalizers": ["a", "b", "c"]}});
    let out = patched(
        pod(),
        original,
        json!({"metadata": {"finalizers": ["d"], "$deleteFromPrimitiveList/finalizers": ["a"]}}),
    );
    assert_eq!(out["metadata"]["finalizers"], json!(["d", "b", "c"]));
}

#[test]
fn delete_from_primitive_list_set_to_null_deletes_the_whole_list() {
    let original = json!({"metadata": {"name": "p", "finalizers": ["a"]}});
    let out = patched(
        pod(),
        original,
        json!({"metadata": {"$deleteFromPrimitiveList/finalizers": null}}),
    );
    assert_eq!(out, json!({"metadata": {"name": "p"}}));
}

#[test]
fn delete_from_primitive_list_without_a_slash_is_a_bad_request() {
    let err = failed(
        pod(),
        json!({"metadata": {}}),
        json!({"metadata": {"$deleteFromPrimitiveListfinalizers": ["a"]}}),
    );
    assert_eq!(
        (err.code, err.reason, err.message.as_str()),
        (400, "BadRequest", "invalid patch format of primitive list")
    );
}

// --- $setElementOrder ---------------------------------------------------------------------

#[test]
fn set_element_order_reorders_the_merged_list() {
    // upstream: "add an item in a list and preserve order" (three-way result).
    let original = pod_with_containers(json!([
        {"name": "one", "workingDir": "a"},
        {"name": "two", "image": "2", "workingDir": "b"}
    ]));
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "three"}, {"name": "one"}, {"name": "two"}],
        "containers": [{"name": "three", "image": "3"}]
    }});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "three", "image": "3"},
            {"name": "one", "workingDir": "a"},
            {"name": "two", "image": "2", "workingDir": "b"}
        ])
    );
}

#[test]
fn set_element_order_alone_reorders_and_keeps_server_only_elements_in_place() {
    // upstream: "set elements order in a list with server-only items 3".
    let original = pod_with_containers(containers(&["1", "2", "7", "9", "8", "3", "4"]));
    let patch = json!({"spec": {"$setElementOrder/containers": [
        {"name": "2"}, {"name": "1"}, {"name": "4"}, {"name": "3"}
    ]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        names(&out["spec"]["containers"]),
        ["2", "1", "7", "9", "8", "4", "3"]
    );
}

#[test]
fn set_element_order_applies_deletions() {
    // upstream: "delete an item in a list and preserve order" (three-way result).
    let original = pod_with_containers(json!([
        {"name": "1", "workingDir": "a"},
        {"name": "2", "image": "2", "workingDir": "b"},
        {"name": "3", "image": "3"}
    ]));
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "2"}, {"name": "1"}],
        "containers": [{"name": "3", "$patch": "delete"}]
    }});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "2", "image": "2", "workingDir": "b"}, {"name": "1", "workingDir": "a"}])
    );
}

#[test]
fn set_element_order_of_primitives_with_server_only_values() {
    // upstream: "add an item in a list of primitives and preserve order" (three-way).
    let original = json!({"metadata": {"finalizers": ["1", "4", "2"]}});
    let patch = json!({"metadata": {
        "$setElementOrder/finalizers": ["3", "1", "2"],
        "finalizers": ["3"]
    }});
    let out = patched(pod(), original, patch);
    assert_eq!(out["metadata"]["finalizers"], json!(["3", "1", "4", "2"]));
}

#[test]
fn set_element_order_of_primitives_with_a_deletion() {
    // upstream: "delete an item in a list of primitives and preserve order".
    let original = json!({"metadata": {"finalizers": ["1", "2", "3"]}});
    let patch = json!({"metadata": {
        "$setElementOrder/finalizers": ["2", "1"],
        "$deleteFromPrimitiveList/finalizers": ["3"]
    }});
    let out = patched(pod(), original, patch);
    assert_eq!(out["metadata"]["finalizers"], json!(["2", "1"]));
}

#[test]
fn set_element_order_keeps_duplicates_together() {
    // upstream: "behavior of set element order for a merging (int) list with duplicate".
    let original = pod_with_containers(json!([
        {"name": "1"}, {"name": "2", "image": "dup1"}, {"name": "3"}, {"name": "2", "image": "dup2"}, {"name": "4"}
    ]));
    let patch = json!({"spec": {"$setElementOrder/containers": [
        {"name": "2"}, {"name": "1"}, {"name": "4"}, {"name": "3"}, {"name": "2"}
    ]}});
    let out = patched(pod(), original, patch);
    assert_eq!(
        out["spec"]["containers"],
        json!([
            {"name": "2", "image": "dup1"}, {"name": "2", "image": "dup2"}, {"name": "1"}, {"name": "4"}, {"name": "3"}
        ])
    );
    let out = patched(
        pod(),
        json!({"metadata": {"finalizers": ["1", "2", "3", "2", "4"]}}),
        json!({"metadata": {"$setElementOrder/finalizers": ["2", "1", "4", "3", "2"]}}),
    );
    assert_eq!(
        out["metadata"]["finalizers"],
        json!(["2", "2", "1", "4", "3"])
    );
}

#[test]
fn set_element_order_for_a_list_the_object_lacks_adds_it() {
    // upstream: "$setElementOrder contains item that is not present in the list to be merged".
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "3"}, {"name": "2"}, {"name": "1"}],
        "containers": [{"name": "3", "image": "3"}, {"name": "1", "image": "1"}]
    }});
    let out = patched(pod(), json!({"spec": {}}), patch);
    assert_eq!(
        out["spec"]["containers"],
        json!([{"name": "3", "image": "3"}, {"name": "1", "image": "1"}])
    );
}

#[test]
fn set_element_order_sees_the_stored_array_rewritten_by_the_merge() {
    // Upstream deletes `b` by shifting the stored array in place and appends `d`
    // into the freed slot, so the "stored order" it sorts by is [a, c, d].
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "a"}, {"name": "d"}],
        "containers": [{"name": "b", "$patch": "delete"}, {"name": "d"}]
    }});
    let out = patched(
        pod(),
        pod_with_containers(containers(&["a", "b", "c"])),
        patch,
    );
    assert_eq!(names(&out["spec"]["containers"]), ["a", "c", "d"]);
}

#[test]
fn set_element_order_that_contradicts_the_patch_list_is_an_internal_error() {
    // upstream: "should check if order in $setElementOrder and patch list match".
    let original = pod_with_containers(containers(&["1", "3", "2"]));
    let patch = json!({"spec": {
        "$setElementOrder/containers": [{"name": "1"}, {"name": "2"}, {"name": "3"}],
        "containers": [{"name": "3", "image": "3"}, {"name": "1", "image": "1"}]
    }});
    let err = failed(pod(), original, patch);
    assert_eq!((err.code, err.reason), (500, ""));
    assert_eq!(
        err.message,
        "The order in patch list:\n[map[image:3 name:3] map[image:1 name:1]]\n doesn't match $setElementOrder list:\n[map[name:1] map[name:2] map[name:3]]\n"
    );
}

#[test]
fn set_element_order_must_be_a_list() {
    let err = failed(
        pod(),
        json!({"metadata": {"finalizers": ["a"]}}),
        json!({"metadata": {"$setElementOrder/finalizers": "a"}}),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (500, "expected a []interface {}, but received a string")
    );
}

#[test]
fn set_element_order_without_a_slash_is_a_bad_request() {
    let err = failed(
        pod(),
        json!({"metadata": {}}),
        json!({"metadata": {"$setElementOrder": []}}),
    );
    assert_eq!(
        (err.code, err.reason, err.message.as_str()),
        (
            400,
            "BadRequest",
            "invalid patch format of setElementOrder list"
        )
    );
}

// --- errors ------------------------------------------------------------------------------

#[test]
fn element_without_the_merge_key_is_an_internal_error() {
    // upstream: "missing merge key should error out".
    let err = failed(
        pod(),
        pod_with_containers(containers(&["a"])),
        json!({"spec": {"containers": [{"image": "x"}]}}),
    );
    assert_eq!(err.kind, StrategicErrorKind::Internal);
    assert_eq!(
        (err.code, err.reason, err.message.as_str()),
        (
            500,
            "",
            "map: map[image:x] does not contain declared merge key: name"
        )
    );
}

/// List elements the merge cannot place are internal errors, the element printed as Go's `%v`
/// prints a map: without the merge key (a `$patch: delete` one too), with Go's number and nil
/// formats, or with an unknown directive.
#[test]
fn list_elements_that_cannot_be_merged_are_internal_errors() {
    for (patch, message) in [
        (
            json!({"spec": {"containers": [{"$patch": "delete", "image": "x"}]}}),
            "map: map[$patch:delete image:x] does not contain declared merge key: name",
        ),
        (
            json!({"spec": {"containers": [{
                "image": 1.5, "n": 1_000_000, "x": 1e6, "y": null, "z": [1, {"q": true}], "w": 1e-7
            }]}}),
            "map: map[image:1.5 n:1000000 w:1e-07 x:1e+06 y:<nil> z:[1 map[q:true]]] does not contain declared merge key: name",
        ),
        (
            json!({"spec": {"containers": [{"name": "a", "$patch": "bogus"}]}}),
            "unknown patch type: bogus in map: map[$patch:bogus name:a]",
        ),
    ] {
        let err = failed(pod(), pod_with_containers(containers(&["a"])), patch);
        assert_eq!(err.message, message);
    }
}

#[test]
fn unknown_patch_directive_in_an_object_is_an_internal_error() {
    let err = failed(
        pod(),
        json!({"metadata": {"labels": {"a": "b"}}}),
        json!({"metadata": {"$patch": "foo", "labels": {"a": "c"}}}),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            500,
            "unknown patch type: foo in map: map[$patch:foo labels:map[a:c]]"
        )
    );
}

#[test]
fn non_string_patch_directive_is_printed_with_go_bad_verb_syntax() {
    let err = failed(
        pod(),
        json!({"metadata": {"name": "p"}}),
        json!({"metadata": {"$patch": 1}}),
    );
    assert_eq!(
        err.message,
        "unknown patch type: %!s(int64=1) in map: map[$patch:1]"
    );
}

#[test]
fn patch_merge_directive_in_a_list_is_rejected() {
    let err = failed(
        pod(),
        pod_with_containers(containers(&["a"])),
        json!({"spec": {"containers": [{"$patch": "merge"}]}}),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (500, "merging lists cannot yet be specified in the patch")
    );
}

#[test]
fn list_of_lists_is_unprocessable_with_the_generic_message() {
    let err = failed(
        pod(),
        json!({"metadata": {"finalizers": []}}),
        json!({"metadata": {"finalizers": [["a"]]}}),
    );
    assert_eq!(err.kind, StrategicErrorKind::Invalid);
    assert_eq!(
        (err.code, err.reason, err.message.as_str()),
        (
            422,
            "Invalid",
            "the server rejected our request due to an error in our request"
        )
    );
}

#[test]
fn mixed_element_types_in_a_merge_list_are_an_internal_error() {
    let err = failed(
        pod(),
        json!({"metadata": {"finalizers": ["a"]}}),
        json!({"metadata": {"finalizers": [{"x": 1}]}}),
    );
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            500,
            "list element types are not identical: [[a] [map[x:1]]]"
        )
    );
}

#[test]
fn objects_in_a_primitive_merge_list_have_no_merge_key() {
    let err = failed(
        pod(),
        json!({"metadata": {"finalizers": []}}),
        json!({"metadata": {"finalizers": [{"a": 1}]}}),
    );
    assert_eq!(
        err.message,
        "cannot merge lists without merge key for string"
    );
}

#[test]
fn null_as_first_list_element_panics_like_go() {
    let err = failed(
        pod(),
        json!({"metadata": {"finalizers": []}}),
        json!({"metadata": {"finalizers": [null, "a"]}}),
    );
    assert_eq!(err.kind, StrategicErrorKind::Panic);
    assert_eq!(
        (err.code, err.message.as_str()),
        (
            500,
            "This request caused apiserver to panic. Look in the logs for details."
        )
    );
    assert_eq!(to_status(&err), None);
}

#[test]
fn object_valued_merge_keys_panic_like_go() {
    let err = failed(
        pod(),
        pod_with_containers(containers(&["a"])),
        json!({"spec": {"containers": [{"name": {"x": 1}}]}}),
    );
    assert_eq!(err.kind, StrategicErrorKind::Panic);
}

#[test]
fn status_bodies_match_the_apiserver() {
    let bad = failed(pod(), json!({}), json!([]));
    assert_eq!(
        to_status(&bad),
        Some(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "json: cannot unmarshal array into Go value of type map[string]interface {}",
            "reason": "BadRequest", "code": 400
        }))
    );
    let invalid = failed(
        pod(),
        json!({"metadata": {"finalizers": []}}),
        json!({"metadata": {"finalizers": [[1]]}}),
    );
    assert_eq!(
        to_status(&invalid),
        Some(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "the server rejected our request due to an error in our request",
            "reason": "Invalid", "details": {}, "code": 422
        }))
    );
    let internal = failed(
        pod(),
        json!({"metadata": {"labels": {}}}),
        json!({"metadata": {"labels": {"$patch": "x"}}}),
    );
    assert_eq!(
        to_status(&internal),
        Some(json!({
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": "unknown patch type: x in map: map[$patch:x]",
            "code": 500
        }))
    );
}

// --- depth -----------------------------------------------------------------------------------

/// `{"a": {"a": ... inner}}`, `levels` maps around `inner`.
fn nested(levels: usize, inner: Value) -> Value {
    (0..levels).fold(inner, |inner, _| {
        Value::Object(json::Map::from_iter([("a", inner)]))
    })
}

// A patch and an object as deep as Go reads merge on a test thread's stack: key by key at
// every level, nulls dropped and directive objects left out of what the patch brings, a
// `$patch: replace` at the bottom, and directive keys stripped from the whole result.
#[test]
fn a_patch_as_deep_as_go_reads_merges_without_recursion() {
    // Not `json!` around a deep value, which copies it by recursion.
    let object = |members: Vec<(&str, Value)>| Value::Object(json::Map::from_iter(members));
    let original = nested(
        10_000,
        object(vec![
            ("keep", json!(1)),
            ("gone", json!(2)),
            ("deeper", nested(10, json!(1))),
        ]),
    );
    let brought = json!({"n": null, "d": {"$patch": "delete"}, "v": 1});
    let patch = nested(
        10_000,
        object(vec![("gone", Value::Null), ("new", nested(5_000, brought))]),
    );
    let merged = patched(pod(), original, patch);
    let expected = nested(
        10_000,
        object(vec![
            ("keep", json!(1)),
            ("deeper", nested(10, json!(1))),
            ("new", nested(5_000, json!({"v": 1}))),
        ]),
    );
    assert!(merged == expected);

    let replaced = patched(
        pod(),
        nested(10_000, json!({"x": 1})),
        nested(10_000, json!({"$patch": "replace", "y": 2})),
    );
    assert!(replaced == nested(10_000, json!({"y": 2})));
}

// --- Go formatting --------------------------------------------------------------------------

#[test]
fn values_print_like_go_percent_v() {
    use super::gofmt::fmt_v;
    assert_eq!(fmt_v(&json!([1])), "[1]");
    assert_eq!(fmt_v(&json!({"a": null, "b": 1.5})), "map[a:<nil> b:1.5]");
    assert_eq!(
        fmt_v(&json!({"b": [true, "x"], "a": 1e6})),
        "map[a:1e+06 b:[true x]]"
    );
}

// A value as deep as Go reads prints one container at a time, on a test thread's stack.
#[test]
fn a_value_as_deep_as_go_reads_prints_like_go_percent_v() {
    use super::gofmt::fmt_v;
    let deep = (0..10_000).fold(json!(1.5), |inner, _| {
        Value::Object(recon_apimachinery::json::Map::from_iter([(
            "a",
            Value::Array(vec![inner].into()),
        )]))
    });
    let printed = fmt_v(&deep);
    assert_eq!(
        printed,
        format!("{}1.5{}", "map[a:[".repeat(10_000), "]]".repeat(10_000))
    );
}

#[test]
fn floats_print_like_go_percent_v() {
    use recon_apimachinery::go_json::go_float;
    for (f, s) in [
        (1e6, "1e+06"),
        (123456.0, "123456"),
        (1234567.0, "1.234567e+06"),
        (1.5, "1.5"),
        (0.0001, "0.0001"),
        (0.00001, "1e-05"),
        (-2.5e-7, "-2.5e-07"),
        (1e21, "1e+21"),
        (1e100, "1e+100"),
        (0.1, "0.1"),
        (100.25, "100.25"),
        (1.8446744073709552e19, "1.8446744073709552e+19"),
        (-0.0, "-0"),
    ] {
        assert_eq!(go_float(f), s, "{f}");
    }
}
