//! Custom resources validated against their CRD's structural schema, through `kube::Api`: every
//! message and cause below is the one a real kube-apiserver (v1.36, apiextensions-apiserver)
//! answered for the same CRD and object.
//!
//! Where several errors come back, the real server's order among sibling fields varies from
//! request to request (it walks Go maps); the fake visits them in name order.

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams};
use kube::core::Status;
use recon_fake::ApiServer;
use recon_test_fixtures::{from_json, pp, status};
use serde_json::{Value, json};

/// The probe CRD: one field per rule under `spec`, and a status schema.
fn gadget_crd() -> CustomResourceDefinition {
    from_json(json!({
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "gadgets.probe.example.com"},
        "spec": {"group": "probe.example.com", "scope": "Namespaced",
            "names": {"plural": "gadgets", "kind": "Gadget"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                "subresources": {"status": {}},
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                    "spec": {"type": "object", "required": ["size"], "properties": {
                        "size": {"type": "integer"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10},
                        "exMin": {"type": "integer", "minimum": 1, "exclusiveMinimum": true,
                            "maximum": 10, "exclusiveMaximum": true},
                        "mult": {"type": "number", "multipleOf": 2.5},
                        "imult": {"type": "integer", "multipleOf": 3},
                        "color": {"type": "string", "enum": ["red", "blue"]},
                        "num": {"type": "number", "enum": [1, 2.5]},
                        "name": {"type": "string", "minLength": 2, "maxLength": 4},
                        "pat": {"type": "string", "pattern": "^[a-z]+$"},
                        "flag": {"type": "boolean"},
                        "f": {"type": "number"},
                        "nul": {"type": "string", "nullable": true},
                        "i32": {"type": "integer", "format": "int32"},
                        "f32": {"type": "number", "format": "float"},
                        "dt": {"type": "string", "format": "date-time"},
                        "d": {"type": "string", "format": "date"},
                        "b": {"type": "string", "format": "byte"},
                        "u": {"type": "string", "format": "uuid"},
                        "bogus": {"type": "string", "format": "bogus"},
                        "ios": {"x-kubernetes-int-or-string": true},
                        "items": {"type": "array", "minItems": 1, "maxItems": 2,
                            "items": {"type": "string"}},
                        "props": {"type": "object", "minProperties": 1, "maxProperties": 2,
                            "additionalProperties": {"type": "integer"}},
                        "noextra": {"type": "object", "additionalProperties": false},
                        "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "emb": {"type": "object", "x-kubernetes-embedded-resource": true,
                            "x-kubernetes-preserve-unknown-fields": true},
                        "set": {"type": "array", "x-kubernetes-list-type": "set",
                            "items": {"type": "string"}},
                        "map": {"type": "array", "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name", "port"],
                            "items": {"type": "object", "required": ["name"], "properties": {
                                "name": {"type": "string"}, "port": {"type": "integer", "default": 80},
                                "v": {"type": "string"}}}}
                    }},
                    "status": {"type": "object", "properties": {
                        "ready": {"type": "boolean"},
                        "count": {"type": "integer", "minimum": 0}}}
                }}}}]}
    }))
}

fn gadget_resource() -> ApiResource {
    ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("probe.example.com", "v1", "Gadget"),
        "gadgets",
    )
}

async fn server() -> (ApiServer, Api<DynamicObject>) {
    let server = ApiServer::new();
    server
        .install_crd(&gadget_crd())
        .await
        .expect("install CRD");
    let api = Api::namespaced_with(server.client(), "default", &gadget_resource());
    (server, api)
}

fn gadget(name: &str, spec: Value) -> DynamicObject {
    DynamicObject::new(name, &gadget_resource()).data(json!({ "spec": spec }))
}

/// Creates `g` with this spec and returns the error.
async fn create_error(spec: Value) -> Status {
    let (_server, api) = server().await;
    status(api.create(&pp(), &gadget("g", spec)).await)
}

/// A 422 naming `Gadget.probe.example.com "<name>"`, with these (reason, message, field) causes.
fn assert_invalid(status: &Status, name: &str, causes: &[(&str, &str, &str)]) {
    let bodies: Vec<String> = causes
        .iter()
        .map(|(_, message, field)| format!("{field}: {message}"))
        .collect();
    let joined = match bodies.as_slice() {
        [one] => one.clone(),
        many => format!("[{}]", many.join(", ")),
    };
    assert_eq!(
        (status.code, status.reason.as_str(), status.message.as_str()),
        (
            422,
            "Invalid",
            format!("Gadget.probe.example.com \"{name}\" is invalid: {joined}").as_str()
        )
    );
    let details = status.details.as_ref().expect("details");
    assert_eq!(
        (details.group.as_str(), details.kind.as_str()),
        ("probe.example.com", "Gadget")
    );
    let got: Vec<(&str, &str, &str)> = details
        .causes
        .iter()
        .map(|c| (c.reason.as_str(), c.message.as_str(), c.field.as_str()))
        .collect();
    assert_eq!(got, causes);
}

const TYPE: &str = "FieldValueTypeInvalid";
const INVALID: &str = "FieldValueInvalid";

#[tokio::test]
async fn a_valid_object_is_stored_with_its_unknown_fields_pruned() {
    let (_server, api) = server().await;
    let spec = json!({"size": 1, "replicas": 10, "exMin": 9, "mult": 5.0, "imult": 9,
        "color": "blue", "num": 2.5, "name": "äöüß", "pat": "abc", "nul": null,
        "i32": 2147483647, "dt": "2020-01-01T10:00:00Z", "d": "2024-02-29", "b": "aGk=",
        "u": "123e4567-e89b-12d3-a456-426614174000", "bogus": "anything", "ios": "50%",
        "items": ["a"], "props": {"a": 1}, "free": {"x": {"y": 1}},
        "emb": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "A_B"}},
        "set": ["a", "b"], "map": [{"name": "a", "port": 1}, {"name": "a", "port": 2}],
        "unknown": 5});
    let stored = api.create(&pp(), &gadget("ok", spec)).await.expect("valid");
    assert_eq!(stored.data["spec"].get("unknown"), None);
    assert_eq!(stored.data["spec"]["free"], json!({"x": {"y": 1}}));
}

#[tokio::test]
async fn a_wrong_type_is_a_type_error_naming_the_json_type() {
    let s = create_error(json!({"size": "string"})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            TYPE,
            r#"Invalid value: "string": spec.size in body must be of type integer: "string""#,
            "spec.size",
        )],
    );
    let s = create_error(json!({"size": 1, "f": true})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            TYPE,
            r#"Invalid value: "boolean": spec.f in body must be of type number: "boolean""#,
            "spec.f",
        )],
    );
    let s = create_error(json!({"size": 1, "ios": true})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            TYPE,
            r#"Invalid value: "boolean": spec.ios in body must be of type integer,string: "boolean""#,
            "spec.ios",
        )],
    );
}

#[tokio::test]
async fn a_fraction_where_an_integer_belongs_also_fails_the_range_check() {
    let s = create_error(json!({"size": 1.5})).await;
    assert_invalid(
        &s,
        "g",
        &[
            (
                TYPE,
                r#"Invalid value: "number": spec.size in body must be of type integer: "number""#,
                "spec.size",
            ),
            (
                INVALID,
                r#"Invalid value: "": Checked value must be of type integer (default format) in spec.size"#,
                "<nil>",
            ),
        ],
    );
}

#[tokio::test]
async fn a_missing_required_field_and_a_null_one_are_both_required() {
    for spec in [json!({}), json!({"size": null})] {
        let s = create_error(spec).await;
        assert_invalid(
            &s,
            "g",
            &[("FieldValueRequired", "Required value", "spec.size")],
        );
    }
}

#[tokio::test]
async fn a_null_list_item_is_a_type_error() {
    let s = create_error(json!({"size": 1, "items": [null]})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            TYPE,
            r#"Invalid value: "null": spec.items[0] in body must be of type string: "null""#,
            "spec.items[0]",
        )],
    );
}

#[tokio::test]
async fn enum_lists_the_supported_values() {
    let s = create_error(json!({"size": 1, "color": "pink"})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            "FieldValueNotSupported",
            r#"Unsupported value: "pink": supported values: "red", "blue""#,
            "spec.color",
        )],
    );
    let s = create_error(json!({"size": 1, "num": 3})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            "FieldValueNotSupported",
            r#"Unsupported value: 3: supported values: "1", "2.5""#,
            "spec.num",
        )],
    );
    let s = create_error(json!({"size": 1, "color": 5})).await;
    assert_invalid(
        &s,
        "g",
        &[
            (
                TYPE,
                r#"Invalid value: "integer": spec.color in body must be of type string: "integer""#,
                "spec.color",
            ),
            (
                "FieldValueNotSupported",
                r#"Unsupported value: 5: supported values: "red", "blue""#,
                "spec.color",
            ),
        ],
    );
}

#[tokio::test]
async fn bounds_inclusive_and_exclusive() {
    let s = create_error(json!({"size": 1, "replicas": 0, "exMin": 1})).await;
    assert_invalid(
        &s,
        "g",
        &[
            (
                INVALID,
                "Invalid value: 1: spec.exMin in body should be greater than 1",
                "spec.exMin",
            ),
            (
                INVALID,
                "Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
                "spec.replicas",
            ),
        ],
    );
    let s = create_error(json!({"size": 1, "replicas": 11, "exMin": 10})).await;
    assert_invalid(
        &s,
        "g",
        &[
            (
                INVALID,
                "Invalid value: 10: spec.exMin in body should be less than 10",
                "spec.exMin",
            ),
            (
                INVALID,
                "Invalid value: 11: spec.replicas in body should be less than or equal to 10",
                "spec.replicas",
            ),
        ],
    );
}

#[tokio::test]
async fn multiple_of_compares_an_integer_with_the_truncated_factor() {
    // An integral value is an int64 to the validator: the factor 2.5 becomes 2.
    let s = create_error(json!({"size": 1, "mult": 5})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            "Invalid value: 5: spec.mult in body should be a multiple of 2",
            "spec.mult",
        )],
    );
    let s = create_error(json!({"size": 1, "imult": 4})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            "Invalid value: 4: spec.imult in body should be a multiple of 3",
            "spec.imult",
        )],
    );
}

#[tokio::test]
async fn string_length_counts_characters_and_pattern_is_quoted() {
    let s = create_error(json!({"size": 1, "name": "äöüßx"})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            "FieldValueTooLong",
            "Too long: may not be more than 4 bytes",
            "spec.name",
        )],
    );
    let s = create_error(json!({"size": 1, "name": "x"})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            r#"Invalid value: "x": spec.name in body should be at least 2 chars long"#,
            "spec.name",
        )],
    );
    let s = create_error(json!({"size": 1, "pat": "ABC"})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            r#"Invalid value: "ABC": spec.pat in body should match '^[a-z]+$'"#,
            "spec.pat",
        )],
    );
}

#[tokio::test]
async fn formats_are_type_errors_and_unknown_formats_are_ignored() {
    for (field, value, format) in [
        ("dt", "2020-01-01", "date-time"),
        ("d", "2020-13-01", "date"),
        ("b", "!!", "byte"),
        ("u", "xyz", "uuid"),
    ] {
        let s = create_error(json!({"size": 1, field: value})).await;
        assert_invalid(
            &s,
            "g",
            &[(
                TYPE,
                &format!(
                    r#"Invalid value: "{value}": spec.{field} in body must be of type {format}: "{value}""#
                ),
                &format!("spec.{field}"),
            )],
        );
    }
    let s = create_error(json!({"size": 1, "dt": {}})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            TYPE,
            r#"Invalid value: "": spec.dt in body must be of type date-time: """#,
            "spec.dt",
        )],
    );
    let s = create_error(json!({"size": 1, "i32": true})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            TYPE,
            r#"Invalid value: "": spec.i32 in body must be of type int32: """#,
            "spec.i32",
        )],
    );
}

#[tokio::test]
async fn numeric_formats_bound_the_range() {
    let s = create_error(json!({"size": 1, "i32": 3_000_000_000_i64})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            r#"Invalid value: "": Checked value must be of type integer with format int32 in spec.i32"#,
            "<nil>",
        )],
    );
    let s = create_error(json!({"size": 1, "f32": 1e300})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            r#"Invalid value: "": Checked value must be of type number with format float in spec.f32"#,
            "<nil>",
        )],
    );
}

#[tokio::test]
async fn item_and_property_counts() {
    let s = create_error(json!({"size": 1, "items": []})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            "Invalid value: 0: spec.items in body should have at least 1 items",
            "spec.items",
        )],
    );
    let s = create_error(json!({"size": 1, "items": ["a", "b", "c"]})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            "FieldValueTooMany",
            "Too many: 3: must have at most 2 items",
            "spec.items",
        )],
    );
    // A null map value is dropped before validation: nothing is left.
    for props in [json!({}), json!({"a": null})] {
        let s = create_error(json!({"size": 1, "props": props})).await;
        assert_invalid(
            &s,
            "g",
            &[(
                INVALID,
                "Invalid value: 0: spec.props in body should have at least 1 properties",
                "spec.props",
            )],
        );
    }
    let s = create_error(json!({"size": 1, "props": {"a": 1, "b": 2, "c": 3}})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            "FieldValueTooMany",
            "Too many: 3: must have at most 2 items",
            "spec.props",
        )],
    );
}

#[tokio::test]
async fn additional_properties_schema_or_false() {
    let s = create_error(json!({"size": 1, "props": {"a": "x"}})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            TYPE,
            r#"Invalid value: "string": spec.props.a in body must be of type integer: "string""#,
            "spec.props.a",
        )],
    );
    let s = create_error(json!({"size": 1, "noextra": {"a": 1}})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            INVALID,
            r#"Invalid value: "a": spec.noextra.a in body is a forbidden property"#,
            "spec.noextra",
        )],
    );
}

#[tokio::test]
async fn an_embedded_resource_needs_api_version_and_kind() {
    let s = create_error(json!({"size": 1, "emb": {}})).await;
    assert_invalid(
        &s,
        "g",
        &[
            (
                "FieldValueRequired",
                "Required value",
                "spec.emb.apiVersion",
            ),
            ("FieldValueRequired", "Required value", "spec.emb.kind"),
        ],
    );
    let s = create_error(json!({"size": 1, "emb": {"apiVersion": "a/b/c", "kind": ""}})).await;
    assert_invalid(
        &s,
        "g",
        &[
            (
                INVALID,
                r#"Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c"#,
                "spec.emb.apiVersion",
            ),
            (
                INVALID,
                r#"Invalid value: "": must not be empty"#,
                "spec.emb.kind",
            ),
        ],
    );
}

#[tokio::test]
async fn list_types_set_and_map_refuse_duplicates() {
    let s = create_error(json!({"size": 1, "set": ["a", "b", "a"]})).await;
    assert_invalid(
        &s,
        "g",
        &[(
            "FieldValueDuplicate",
            r#"Duplicate value: "a""#,
            "spec.set[2]",
        )],
    );
    let spec = json!({"size": 1, "map": [{"name": "a", "port": 1}, {"name": "a", "port": 1}, {"port": 2}]});
    let s = create_error(spec).await;
    assert_invalid(
        &s,
        "g",
        &[
            ("FieldValueRequired", "Required value", "spec.map[2].name"),
            (
                "FieldValueDuplicate",
                r#"Duplicate value: {"name":"a","port":1}"#,
                "spec.map[1]",
            ),
        ],
    );
}

const SIZE_STRING: (&str, &str, &str) = (
    TYPE,
    r#"Invalid value: "string": spec.size in body must be of type integer: "string""#,
    "spec.size",
);

#[tokio::test]
async fn updates_merge_and_json_patches_are_validated() {
    let (_server, api) = server().await;
    let mut stored = api
        .create(&pp(), &gadget("u", json!({"size": 1})))
        .await
        .unwrap();
    stored.data["spec"]["size"] = json!("string");
    let s = status(api.replace("u", &pp(), &stored).await);
    assert_invalid(&s, "u", &[SIZE_STRING]);

    let merge = json!({"spec": {"size": "string"}});
    let s = status(
        api.patch("u", &PatchParams::default(), &Patch::Merge(&merge))
            .await,
    );
    assert_invalid(&s, "u", &[SIZE_STRING]);

    let ops: json_patch::Patch =
        serde_json::from_value(json!([{"op": "replace", "path": "/spec/size", "value": "string"}]))
            .unwrap();
    let s = status(
        api.patch("u", &PatchParams::default(), &Patch::Json::<()>(ops))
            .await,
    );
    assert_invalid(&s, "u", &[SIZE_STRING]);
}

#[tokio::test]
async fn an_applied_object_is_validated() {
    let (_server, api) = server().await;
    let applied = json!({"apiVersion": "probe.example.com/v1", "kind": "Gadget",
        "metadata": {"name": "a"}, "spec": {"size": 1, "replicas": 0}});
    let params = PatchParams::apply("test");
    let s = status(api.patch("a", &params, &Patch::Apply(&applied)).await);
    assert_invalid(
        &s,
        "a",
        &[(
            INVALID,
            "Invalid value: 0: spec.replicas in body should be greater than or equal to 1",
            "spec.replicas",
        )],
    );
}

#[tokio::test]
async fn a_status_write_validates_status_with_paths_from_status() {
    let (_server, api) = server().await;
    api.create(&pp(), &gadget("s", json!({"size": 1})))
        .await
        .unwrap();
    let merge = json!({"status": {"ready": "yes", "count": -1}});
    let s = status(
        api.patch_status("s", &PatchParams::default(), &Patch::Merge(&merge))
            .await,
    );
    assert_invalid(
        &s,
        "s",
        &[
            (
                INVALID,
                "Invalid value: -1: count in body should be greater than or equal to 0",
                "status.count",
            ),
            (
                TYPE,
                r#"Invalid value: "string": ready in body must be of type boolean: "string""#,
                "status.ready",
            ),
        ],
    );
    // The spec of a status write is ignored, so it is not validated either.
    let merge = json!({"spec": {"size": "x"}, "status": {"ready": true}});
    let written = api
        .patch_status("s", &PatchParams::default(), &Patch::Merge(&merge))
        .await
        .unwrap();
    assert_eq!(written.data["spec"], json!({"size": 1}));
}

#[tokio::test]
async fn an_update_ratchets_errors_in_unchanged_fields() {
    let (server, api) = server().await;
    api.create(&pp(), &gadget("r", json!({"size": 1, "f": 5})))
        .await
        .unwrap();
    // Tighten the schema: `f` at most 1. The stored object no longer passes.
    let crds: Api<CustomResourceDefinition> = Api::all(server.client());
    let tighten: json_patch::Patch = serde_json::from_value(json!([{"op": "add",
        "path": "/spec/versions/0/schema/openAPIV3Schema/properties/spec/properties/f/maximum",
        "value": 1}]))
    .unwrap();
    crds.patch(
        "gadgets.probe.example.com",
        &PatchParams::default(),
        &Patch::Json::<()>(tighten),
    )
    .await
    .unwrap();
    let merge = json!({"spec": {"size": 2}});
    let updated = api
        .patch("r", &PatchParams::default(), &Patch::Merge(&merge))
        .await
        .expect("unchanged invalid field is ratcheted");
    assert_eq!(updated.data["spec"], json!({"size": 2, "f": 5}));
    let merge = json!({"spec": {"f": 4}});
    let s = status(
        api.patch("r", &PatchParams::default(), &Patch::Merge(&merge))
            .await,
    );
    assert_invalid(
        &s,
        "r",
        &[(
            INVALID,
            "Invalid value: 4: spec.f in body should be less than or equal to 1",
            "spec.f",
        )],
    );
}
