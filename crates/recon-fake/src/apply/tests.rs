//! Tests of the public operations beyond what the real-server replays cover: built-in
//! schemas, untyped objects, identities, the cap, and odd inputs.

use pretty_assertions::assert_eq;
use recon_apimachinery::fieldpath::PathElement;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::compare::compare;
use super::merge::merge;
use super::real_tests::strip_paths;
use super::typed::fields_of;
use super::*;
use crate::wire::nesting::deep_text::{nested, nested_schema, read};

const NOW: &str = "2024-05-01T10:00:00Z";

fn req<'a>(
    manager: &'a str,
    api_version: &'a str,
    kind: &'a str,
    reset: &'a FieldSet,
) -> Request<'a> {
    Request {
        manager,
        api_version,
        kind,
        subresource: "",
        time: Time::parse(NOW).unwrap(),
        reset_fields: reset,
        served: None,
        new_object: None,
        unstructured: false,
    }
}

fn fields(m: &ManagedFields, i: usize) -> Value {
    m.to_value().unwrap()[i]["fieldsV1"].clone()
}

#[test]
fn deployment_apply_uses_the_builtin_table() {
    let schema = Schema::builtin("apps/v1", "Deployment");
    let none = FieldSet::new();
    let r = req("kubectl", "apps/v1", "Deployment", &none);
    let config = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "labels": {"app": "web"}},
        "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}],
                 "env": [{"name": "A", "value": "1"}]}]}}}});
    let out = apply(None, &config, &ManagedFields::new(), &r, false, &schema).unwrap();
    assert!(out.changed);
    // The port key takes the protocol default; the selector is atomic; structs get no ".".
    assert_eq!(
        fields(&out.managed, 0),
        json!({"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {
            "f:replicas": {}, "f:selector": {},
            "f:template": {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:containers": {
                "k:{\"name\":\"nginx\"}": {".": {}, "f:env": {"k:{\"name\":\"A\"}": {".": {}, "f:name": {}, "f:value": {}}},
                    "f:image": {}, "f:name": {},
                    "f:ports": {"k:{\"containerPort\":80,\"protocol\":\"TCP\"}": {".": {}, "f:containerPort": {}}}}}}}}})
    );

    // A second applier adds a sidecar; the first re-applies without its env var.
    let live = out.object;
    let sidecar = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
        "spec": {"template": {"spec": {"containers": [{"name": "proxy", "image": "envoy"}]}}}});
    let m = ManagedFields::from_object(&live).unwrap();
    let out = apply(
        Some(&live),
        &sidecar,
        &m,
        &req("mesh", "apps/v1", "Deployment", &none),
        false,
        &schema,
    )
    .unwrap();
    let names: Vec<&str> = out.object["spec"]["template"]["spec"]["containers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["nginx", "proxy"]);
    let mut again = config.clone();
    again["spec"]["template"]["spec"]["containers"][0]
        .as_object_mut()
        .unwrap()
        .remove("env");
    let m = ManagedFields::from_object(&out.object).unwrap();
    let out = apply(Some(&out.object), &again, &m, &r, false, &schema).unwrap();
    let containers = &out.object["spec"]["template"]["spec"]["containers"];
    assert_eq!(containers[0].get("env"), None);
    assert_eq!(containers[1]["name"], "proxy");

    // A different selector conflicts as one atomic field.
    let mut sel = config.clone();
    sel["spec"]["selector"]["matchLabels"]["tier"] = json!("x");
    let m = ManagedFields::from_object(&out.object).unwrap();
    let err = apply(
        Some(&out.object),
        &sel,
        &m,
        &req("other", "apps/v1", "Deployment", &none),
        false,
        &schema,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.selector"
    );
}

#[test]
fn untyped_objects_are_deduced() {
    let schema = Schema::untyped();
    let none = FieldSet::new();
    let config = json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t", "finalizers": ["f"]},
        "data": {"a": {"b": 1}, "l": [1, 2]}});
    assert_eq!(
        fields_of(&config, &schema).to_fields_v1(),
        json!({"f:apiVersion": {}, "f:data": {".": {}, "f:a": {".": {}, "f:b": {}}, "f:l": {}},
            "f:kind": {}, "f:metadata": {"f:finalizers": {"v:\"f\"": {}}, "f:name": {}}})
    );
    let out = apply(
        None,
        &config,
        &ManagedFields::new(),
        &req("m", "v1", "Thing", &none),
        false,
        &schema,
    )
    .unwrap();
    assert_eq!(
        fields(&out.managed, 0),
        json!({"f:data": {".": {}, "f:a": {".": {}, "f:b": {}}, "f:l": {}}, "f:metadata": {"f:finalizers": {"v:\"f\"": {}}}})
    );
}

#[test]
fn create_with_managed_fields_in_the_body() {
    // Observed on the real server: on create every field is "added", so the supplied owners
    // lose whatever the object sets; owners of absent fields survive, without a time.
    let schema = Schema::untyped();
    let none = FieldSet::new();
    let body = json!({"apiVersion": "v1", "kind": "Thing", "metadata": {"name": "t", "managedFields": [
        {"manager": "old", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:a": {}}}},
        {"manager": "old2", "operation": "Update", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:zz": {}}}}]},
        "data": {"a": 1, "b": 2}});
    let managed =
        ManagedFields::from_request(take_list(&mut body.clone()), None, RequestRules::default());
    let m = record_update(
        managed,
        None,
        &body,
        &req("creator", "v1", "Thing", &none),
        &schema,
    );
    assert_eq!(
        m.to_value().unwrap(),
        json!([
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {"f:zz": {}}}, "manager": "old2", "operation": "Update"},
            {"apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"f:data": {".": {}, "f:a": {}, "f:b": {}}},
                "manager": "creator", "operation": "Update", "time": NOW}
        ])
    );
}

#[test]
fn update_entries_are_per_api_version_and_subresource() {
    let schema = Schema::untyped();
    let none = FieldSet::new();
    let v1 =
        json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"a": 1}});
    let m = record_update(
        ManagedFields::new(),
        None,
        &v1,
        &req("m", "g/v1", "K", &none),
        &schema,
    );
    let mut v2 = v1.clone();
    v2["spec"]["b"] = json!(2);
    let m = record_update(m, Some(&v1), &v2, &req("m", "g/v2", "K", &none), &schema);
    let mut v3 = v2.clone();
    v3["status"] = json!({"s": 1});
    let mut status = req("m", "g/v2", "K", &none);
    status.subresource = "status";
    let m = record_update(m, Some(&v2), &v3, &status, &schema);
    let entries: Vec<(String, String, String)> = m
        .entries()
        .iter()
        .map(|e| {
            (
                e.id.manager().to_owned(),
                e.fields.api_version.clone(),
                e.id.subresource().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [
            ("m".into(), "g/v1".into(), "".into()),
            ("m".into(), "g/v2".into(), "".into()),
            ("m".into(), "g/v2".into(), "status".into()),
        ]
    );
    // An empty manager name is recorded as "unknown".
    let m = record_update(
        ManagedFields::new(),
        None,
        &v1,
        &req("", "g/v1", "K", &none),
        &schema,
    );
    assert_eq!(m.to_value().unwrap()[0]["manager"], "unknown");
}

#[test]
fn cap_ignores_appliers_and_buckets_per_version() {
    let schema = Schema::untyped();
    let none = FieldSet::new();
    let mut obj = json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {}});
    let mut m = ManagedFields::new();
    let applied = json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"applied": 1}});
    let out = apply(
        None,
        &applied,
        &m,
        &req("applier", "g/v1", "K", &none),
        false,
        &schema,
    )
    .unwrap();
    m = out.managed;
    obj["spec"]["applied"] = json!(1);
    for i in 0..12 {
        let mut next = obj.clone();
        next["spec"][format!("f{i:02}")] = json!(i);
        let version = if i % 2 == 0 { "g/v1" } else { "g/v2" };
        let mut r = req("", version, "K", &none);
        let name = format!("u{i:02}");
        r.manager = &name;
        r.time = Time(1_000 + i);
        m = record_update(m, Some(&obj), &next, &r, &schema);
        obj = next;
    }
    let v = m.to_value().unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    // 12 updaters: u00 and u02 (both g/v1, the oldest) fold into one g/v1 bucket.
    assert_eq!(names.len(), 11);
    assert_eq!(names[0], "applier");
    let bucket = v
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["manager"] == "ancient-changes")
        .unwrap();
    assert_eq!(bucket["apiVersion"], "g/v1");
    assert_eq!(
        bucket["fieldsV1"],
        json!({"f:spec": {"f:f00": {}, "f:f02": {}}})
    );
    assert_eq!(bucket["time"], Time(1_002).to_string());
}

#[test]
fn status_apply_on_untracked_object_uses_a_status_bucket() {
    let schema = Schema::untyped();
    let reset = reset_fields("status", true);
    let live = json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"}, "spec": {"a": 1}, "status": {"s": 1}});
    let mut r = req("ctl", "g/v1", "K", &reset);
    r.subresource = "status";
    let config =
        json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"}, "status": {"s": 2}});
    let err = apply(
        Some(&live),
        &config,
        &ManagedFields::new(),
        &r,
        false,
        &schema,
    )
    .unwrap_err();
    assert_eq!(
        err.message(),
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" with subresource \"status\" using g/v1: .status.s"
    );
    let out = apply(
        Some(&live),
        &config,
        &ManagedFields::new(),
        &r,
        true,
        &schema,
    )
    .unwrap();
    let v = out.managed.to_value().unwrap();
    // `status` is not declared in the untyped schema, so it is a member itself.
    assert_eq!(v[0]["fieldsV1"], json!({"f:status": {".": {}, "f:s": {}}}));
    assert_eq!(v[0]["subresource"], "status");
    // before-first-apply held only `status` and `status.s` (spec and metadata are reset
    // there); it loses `s` and keeps the map itself.
    assert_eq!(v[1]["manager"], "before-first-apply");
    assert_eq!(v[1]["subresource"], "status");
    assert_eq!(v[1]["fieldsV1"], json!({"f:status": {}}));
}

#[test]
fn reset_helpers() {
    assert_eq!(
        reset_fields("", true),
        FieldSet::from_paths([Path::fields(&["status"])])
    );
    assert_eq!(reset_fields("", false), FieldSet::new());
    assert_eq!(
        reset_fields("status", true),
        FieldSet::from_paths([Path::fields(&["metadata"]), Path::fields(&["spec"])])
    );
    let mut obj = json!({"spec": {"a": 1, "b": {"c": 1, "d": 2}}, "status": {}});
    let reset =
        FieldSet::from_paths([Path::fields(&["status"]), Path::fields(&["spec", "b", "c"])]);
    strip_paths(&mut obj, &reset);
    assert_eq!(obj, json!({"spec": {"a": 1, "b": {"d": 2}}}));
}

#[test]
fn odd_inputs_do_not_panic() {
    let schemas = [Schema::untyped(), Schema::builtin("apps/v1", "Deployment")];
    let values = [
        json!(null),
        json!("x"),
        json!([1, {"a": null}]),
        json!({}),
        json!({"apiVersion": "", "kind": ""}),
        json!({"apiVersion": "", "kind": "", "metadata": "m", "spec": [{"name": 1}]}),
        json!({"apiVersion": "", "kind": "", "metadata": {"managedFields": "bad", "finalizers": [{"a": 1}, null]},
            "spec": {"template": {"spec": {"containers": [{"image": "x"}, {"name": "a"}, {"name": "a"}, 3]}}}}),
        json!({"apiVersion": "", "kind": "", "spec": {"template": {"spec": {"containers": {"name": "a"}}}}}),
    ];
    let none = FieldSet::new();
    let r = req("m", "", "", &none);
    for schema in &schemas {
        for live in &values {
            let _ = fields_of(live, schema);
            let m = ManagedFields::from_object(live).unwrap_or_default();
            for new in &values {
                let _ = compare(live, new, schema);
                let _ = merge(live, new, schema);
                let _ = record_update(m.clone(), Some(live), new, &r, schema);
                let _ = record_update(m.clone(), None, new, &r, schema);
                for force in [false, true] {
                    let _ = apply(Some(live), new, &m, &r, force, schema);
                    let _ = apply(None, new, &m, &r, force, schema);
                }
            }
        }
    }
    assert!(ManagedFields::from_value(&json!("x")).is_err());
    assert!(ManagedFields::from_value(&json!([1])).is_err());
    assert!(Time::parse("2024-05-01T10:00:00Zé").is_none());
    assert!(PathElement::deserialize("é:x").is_err());
}

/// `g/v1` names `spec.size` what `g/v2` names `spec.replicas`.
fn rename_size(obj: &Value, api_version: &str) -> Value {
    let mut out = obj.clone();
    out["apiVersion"] = json!(api_version);
    let (from, to) = if api_version == "g/v1" {
        ("replicas", "size")
    } else {
        ("size", "replicas")
    };
    if let Some(spec) = out.get_mut("spec").and_then(Value::as_object_mut)
        && let Some(v) = spec.remove(from)
    {
        spec.insert(to.to_owned(), v);
    }
    out
}

#[test]
fn owners_of_another_version_are_compared_in_theirs() {
    let untyped = std::sync::Arc::new(Schema::untyped());
    let served = ServedSchemas::new([
        ("g/v1".to_owned(), untyped.clone()),
        ("g/v2".to_owned(), untyped.clone()),
    ])
    .converting(rename_size);
    let none = FieldSet::new();
    let with_served = |manager, api_version| Request {
        served: Some(&served),
        ..req(manager, api_version, "K", &none)
    };
    let created = json!({"apiVersion": "g/v1", "kind": "K", "metadata": {"name": "x"},
        "spec": {"size": 1, "color": "red"}});
    let m = record_update(
        ManagedFields::new(),
        None,
        &created,
        &with_served("old", "g/v1"),
        &untyped,
    );
    // Through v2, only `replicas` changes: the v1 owner loses `size`, keeps `color`.
    let old = rename_size(&created, "g/v2");
    let mut new = old.clone();
    new["spec"]["replicas"] = json!(2);
    let m = record_update(m, Some(&old), &new, &with_served("new", "g/v2"), &untyped);
    let owners: Vec<(String, Value)> = m
        .to_value()
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["manager"].as_str().unwrap().to_owned(),
                e["fieldsV1"].clone(),
            )
        })
        .collect();
    assert_eq!(
        owners,
        [
            ("new".to_owned(), json!({"f:spec": {"f:replicas": {}}})),
            (
                "old".to_owned(),
                json!({"f:spec": {".": {}, "f:color": {}}})
            ),
        ]
    );
}

/// Levels of the deep CRD schemas and objects below: kube-apiserver 1.36 serves 4,990
/// (`deep/a-crd-schema-as-deep-as-go-reads`, where the CRD is then as deep as Go reads).
pub(super) const DEEP: usize = 5_000;

/// A CRD's `openAPIV3Schema` whose `spec` nests `levels` objects, each declaring one field
/// `a`, around a `leaf` type.
pub(super) fn deep_openapi(levels: usize, leaf: &str) -> Value {
    let spec = nested_schema(levels, &format!(r#"{{"type":"{leaf}"}}"#));
    read(&format!(
        r#"{{"type":"object","properties":{{"spec":{spec}}}}}"#
    ))
}

/// A `Deep` whose `spec` nests `levels` objects with one field `a` around `leaf` (JSON).
fn deep_object(levels: usize, leaf: &str) -> Value {
    read(&format!(
        r#"{{"apiVersion":"x.io/v1","kind":"Deep","metadata":{{"name":"deep"}},"spec":{}}}"#,
        nested(levels, leaf)
    ))
}

/// The `fieldsV1` of `spec` and `levels` fields `a` under it, each owned itself (`.`) when
/// `dotted`, around `leaf`.
fn deep_fields(levels: usize, dotted: bool, leaf: &str) -> Value {
    let open = if dotted {
        r#"{".":{},"f:a":"#
    } else {
        r#"{"f:a":"#
    };
    read(&format!(
        r#"{{"f:spec":{}{leaf}{}}}"#,
        open.repeat(levels),
        "}".repeat(levels)
    ))
}

/// Each manager's `fieldsV1`, by manager name.
fn owners(m: &ManagedFields) -> Vec<(String, Value)> {
    let list = m.to_value().unwrap_or(Value::Null);
    let entries = list.as_array().map_or(&[][..], |a| &a[..]);
    entries
        .iter()
        .map(|e| (str_at(e, "/manager").to_owned(), e["fieldsV1"].clone()))
        .collect()
}

/// A create through a CRD schema as deep as the real server serves owns every level (the
/// `fieldsV1` of `deep/a-crd-schema-as-deep-as-go-reads`), on a test thread's stack.
#[test]
fn an_update_through_a_crd_schema_as_deep_as_go_reads_owns_every_level() {
    let schema =
        std::sync::Arc::new(Schema::from_openapi_v3(&deep_openapi(DEEP, "string")).unwrap());
    let served = ServedSchemas::new([("x.io/v1".to_owned(), schema.clone())]);
    let none = FieldSet::new();
    let r = Request {
        served: Some(&served),
        unstructured: true,
        ..req("creator", "x.io/v1", "Deep", &none)
    };
    let created = deep_object(DEEP, r#""x""#);
    let m = record_update(ManagedFields::new(), None, &created, &r, &schema);
    let got = owners(&m);
    assert!(got == [("creator".to_owned(), deep_fields(DEEP, true, "{}"))]);
}

/// Another manager applies a new deepest value through a CRD schema as deep as the real
/// server serves: a conflict on the deepest field, taken with `force`; then an apply that no
/// longer names it removes it.
#[test]
fn applies_through_a_crd_schema_as_deep_as_go_reads() {
    let schema =
        std::sync::Arc::new(Schema::from_openapi_v3(&deep_openapi(DEEP, "string")).unwrap());
    let served = ServedSchemas::new([("x.io/v1".to_owned(), schema.clone())]);
    let none = FieldSet::new();
    let as_manager = |manager| Request {
        served: Some(&served),
        unstructured: true,
        ..req(manager, "x.io/v1", "Deep", &none)
    };
    let mut live = deep_object(DEEP, r#""x""#);
    let created = record_update(
        ManagedFields::new(),
        None,
        &live,
        &as_manager("creator"),
        &schema,
    );
    created.write_to_unstructured(&mut live);
    let managed = ManagedFields::from_object(&live).unwrap();

    let config = deep_object(DEEP, r#""z""#);
    let deep = as_manager("deep");
    let Err(ApplyError::Conflicts(conflicts)) =
        apply(Some(&live), &config, &managed, &deep, false, &schema)
    else {
        panic!("no conflict");
    };
    let mut deepest = vec!["spec"];
    deepest.extend(vec!["a"; DEEP]);
    assert_eq!(conflicts.len(), 1);
    assert!(conflicts[0].path == Path::fields(&deepest));
    assert!(
        conflict_message(&conflicts)
            == format!(
                "Apply failed with 1 conflict: conflict with \"creator\" using x.io/v1: .spec{}",
                ".a".repeat(DEEP)
            )
    );

    let out = apply(Some(&live), &config, &managed, &deep, true, &schema).unwrap();
    assert!(out.changed && out.object["spec"] == config["spec"]);
    // The creator keeps every level but the deepest.
    let expected = [
        ("deep".to_owned(), deep_fields(DEEP, false, "{}")),
        ("creator".to_owned(), deep_fields(DEEP - 1, true, "{}")),
    ];
    assert!(owners(&out.managed) == expected);

    // The applier no longer names the deepest field: it goes, its map stays, empty.
    let shorter = deep_object(DEEP - 1, "{}");
    let out = apply(
        Some(&out.object),
        &shorter,
        &out.managed,
        &deep,
        false,
        &schema,
    )
    .unwrap();
    assert!(out.changed && out.object["spec"] == shorter["spec"]);
    let expected = [
        ("deep".to_owned(), deep_fields(DEEP - 1, false, "{}")),
        ("creator".to_owned(), deep_fields(DEEP - 1, true, "{}")),
    ];
    assert!(owners(&out.managed) == expected);
}
