//! Property tests of server-side apply through the whole server (issue 22): apply bodies,
//! valid, mutated, generated or mangled, written as JSON or YAML, sent by several field managers
//! with and without `force`, to objects that exist and to objects that do not (a ConfigMap, a
//! Deployment with its keyed container lists, a custom resource with every list and map type).
//!
//! After every step: the answer is the applied object (201 when it created it) or a `Status`
//! kube-apiserver could answer; a refused or dry-run apply stores nothing; every stored object
//! reads back with `managedFields` that decode; and the same apply by the same manager, sent
//! again, is a no-op (200, resourceVersion unchanged, nothing stored changes).

use proptest::prelude::*;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use crate::ApiServer;
use crate::proptests::{
    COLLECTIONS, Edit, check_readable, check_stored_as_answered, check_write_answer, config, edits,
    json as json_value, mangle, replace_node, seeded_server, send, snapshot,
};

/// Apply configurations of each kind (indexed as [`COLLECTIONS`]) that overlap in the fields
/// they set, with other values, so that managers share fields and conflict. No names: a step
/// names them.
fn valid_bodies(kind: usize) -> Vec<Value> {
    match kind {
        0 => vec![
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"labels": {"app": "a"}},
                "data": {"k": "v", "mode": "a"}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"annotations": {"note": "b"}, "labels": {"app": "b"}},
                "data": {"k": "w"}, "binaryData": {"bin": "aGk="}}),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"finalizers": ["example.com/f"]}, "data": {"other": ""}}),
        ],
        1 => vec![
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 2,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
                    {"name": "main", "image": "nginx", "ports": [{"containerPort": 80}],
                     "env": [{"name": "A", "value": "1"}]}]}}}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {
                "template": {"spec": {"containers": [{"name": "proxy", "image": "envoy",
                    "ports": [{"containerPort": 8080, "protocol": "TCP"}]}]}}}}),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 3,
                "selector": {"matchLabels": {"app": "d"}},
                "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
                    {"name": "main", "image": "nginx:2", "ports": [{"containerPort": 80, "protocol": "UDP"}]}]}}}}),
        ],
        _ => vec![
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "spec": {"replicas": 1,
                "ports": [{"name": "http", "port": 80}], "tags": ["x", "y"], "args": ["a"],
                "labels": {"a": "b"}, "ref": {"name": "r", "kind": "K"},
                "config": {"free": {"x": [1, 2]}}}, "status": {"ready": true}}),
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "spec": {"replicas": 2,
                "ports": [{"name": "http", "port": 80, "host": "h"}, {"name": "https", "port": 443}],
                "tags": ["y", "z"], "mode": "b"}}),
            json!({"apiVersion": "example.com/v1", "kind": "Thing", "spec": {"args": ["b", "c"],
                "labels": {"c": "d"}, "ref": {"name": "s"}}}),
        ],
    }
}

/// Apply configurations only YAML can write: comments, anchors and aliases, block scalars,
/// tags, an explicit document; `{name}` stands for the step's object name.
const YAML_BODIES: &[&str] = &[
    "# applied by hand\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  labels: &l {app: y}\n  annotations: *l\ndata:\n  k: |\n    one\n    two\n  n: !!str 1\n",
    "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: {name}}\nspec:\n  replicas: 0x2\n  selector: {matchLabels: &m {app: d}}\n  template:\n    metadata: {labels: *m}\n    spec:\n      containers:\n      - name: main\n        image: >-\n          nginx\n...\n",
    "apiVersion: example.com/v1\nkind: Thing\nmetadata:\n  name: {name}\nspec:\n  tags: [x, x]\n  ports:\n  - {name: a, port: 1}\n  - {name: a, port: 1}\n  config: {? k : v, n: ~}\n",
];

/// How a step writes its body.
#[derive(Debug, Clone)]
enum Body {
    /// A valid configuration, its metadata named as the URL.
    Valid(usize),
    /// A valid configuration with the node `steps` lead to replaced.
    Mutated(usize, Vec<usize>, Value),
    /// A generated value as the configuration's `spec` (a ConfigMap's `data`).
    Generated(Value),
    /// A valid configuration's text (JSON or YAML) with bytes edited.
    Mangled(usize, Vec<Edit>),
    /// A hand-written YAML text, its bytes edited (no edits: as written).
    Yaml(usize, Vec<Edit>),
}

#[derive(Debug, Clone)]
struct Step {
    kind: usize,
    existing: bool,
    manager: &'static str,
    force: bool,
    dry_run: bool,
    yaml: bool,
    body: Body,
}

fn step() -> impl Strategy<Value = Step> {
    let body = prop_oneof![
        3 => (0usize..3).prop_map(Body::Valid),
        3 => (0usize..3, prop::collection::vec(any::<usize>(), 0..6), json_value(2))
            .prop_map(|(i, steps, by)| Body::Mutated(i, steps, by)),
        1 => json_value(3).prop_map(Body::Generated),
        2 => (0usize..3, edits()).prop_map(|(i, e)| Body::Mangled(i, e)),
        1 => (0..YAML_BODIES.len(), prop::option::weighted(0.5, edits()))
            .prop_map(|(i, e)| Body::Yaml(i, e.unwrap_or_default())),
    ];
    (
        0usize..3,
        any::<bool>(),
        // `""` leaves `fieldManager` out: an apply without one is a 422.
        prop_oneof![
            9 => prop::sample::select(&["a", "b", "kubectl"][..]),
            1 => Just(""),
        ],
        prop::bool::weighted(0.3),
        prop::bool::weighted(0.1),
        any::<bool>(),
        body,
    )
        .prop_map(
            |(kind, existing, manager, force, dry_run, yaml, body)| Step {
                kind,
                existing,
                manager,
                force,
                dry_run,
                yaml,
                body,
            },
        )
}

fn name(step: &Step) -> &'static str {
    if step.existing { "obj0" } else { "obj1" }
}

fn render(value: &Value, yaml: bool) -> Vec<u8> {
    if yaml {
        serde_saphyr::to_string(value)
            .unwrap_or_else(|_| value.to_string())
            .into_bytes()
    } else {
        value.to_string().into_bytes()
    }
}

/// The valid configuration `i` of the step's kind, named as the step's URL.
fn named(step: &Step, i: usize) -> Value {
    let mut body = valid_bodies(step.kind)[i].clone();
    body["metadata"]["name"] = json!(name(step));
    body
}

fn body_of(step: &Step) -> Vec<u8> {
    match &step.body {
        Body::Valid(i) => render(&named(step, *i), step.yaml),
        Body::Mutated(i, steps, by) => {
            let mut body = named(step, *i);
            replace_node(&mut body, steps, by.clone());
            render(&body, step.yaml)
        }
        Body::Generated(value) => {
            let mut body = named(step, 0);
            let field = if step.kind == 0 { "data" } else { "spec" };
            body[field] = value.clone();
            render(&body, step.yaml)
        }
        Body::Mangled(i, edits) => mangle(render(&named(step, *i), step.yaml), edits),
        Body::Yaml(i, edits) => mangle(
            YAML_BODIES[*i].replace("{name}", name(step)).into_bytes(),
            edits,
        ),
    }
}

fn uri(step: &Step) -> String {
    let mut query = Vec::new();
    if !step.manager.is_empty() {
        query.push(format!("fieldManager={}", step.manager));
    }
    if step.force {
        query.push("force=true".to_owned());
    }
    if step.dry_run {
        query.push("dryRun=All".to_owned());
    }
    format!(
        "{}/{}?{}",
        COLLECTIONS[step.kind].1,
        name(step),
        query.join("&")
    )
}

fn apply(server: &ApiServer, uri: &str, body: &[u8]) -> crate::proptests::Answer {
    send(
        server,
        "PATCH",
        uri,
        Some(b"application/apply-patch+yaml"),
        body.to_vec(),
    )
}

/// Whether a configuration carries a field that makes a repeat of a successful apply fail by
/// design: `resourceVersion` (ignored on create, an optimistic lock after) or `uid` (compared
/// with the object's, which a create gave anew).
fn has_preconditions(body: &[u8]) -> bool {
    let text = String::from_utf8_lossy(body);
    serde_saphyr::from_str::<Value>(&text).is_ok_and(|v| {
        ["/metadata/resourceVersion", "/metadata/uid"]
            .iter()
            .any(|p| v.pointer(p).is_some_and(|x| !x.is_null()))
    })
}

/// Whether a configuration sets a field to null, an empty map or an empty list. Such an apply
/// can settle only on the third: over a map another manager owns, a null or `{}` removes the
/// map, and the same apply again conflicts with that manager or, forced, takes the map
/// (scenario apply/a-null-or-empty-map-applied-over-another-managers-conflicts-on-the-repeat);
/// an empty list over the manager's own items removes the list, and the same apply again
/// writes `[]` back (scenario apply/an-empty-list-applied-over-its-items-settles-on-the-third-apply).
fn has_null_or_empty(body: &[u8]) -> bool {
    fn any(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::Array(items) => items.is_empty() || items.iter().any(any),
            Value::Object(map) => map.is_empty() || map.values().any(any),
            _ => false,
        }
    }
    let text = String::from_utf8_lossy(body);
    serde_saphyr::from_str::<Value>(&text).is_ok_and(|v| any(&v))
}

fn listed(lists: &[Value], kind: usize, name: &str) -> bool {
    lists[kind]["items"]
        .as_array()
        .is_some_and(|items| items.iter().any(|i| i["metadata"]["name"] == name))
}

fn run(steps: &[Step]) -> Result<(), TestCaseError> {
    let server = seeded_server();
    for step in steps {
        let (uri, body) = (uri(step), body_of(step));
        let kind = COLLECTIONS[step.kind].0;
        let before = snapshot(&server);
        let first = apply(&server, &uri, &body);
        let at = || format!("{uri} {}", String::from_utf8_lossy(&body));
        check_write_answer(&first, kind, false)
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", at())))?;
        let after = snapshot(&server);
        if !first.succeeded() || step.dry_run {
            prop_assert_eq!(&after, &before, "{} changed the store", at());
        } else {
            check_stored_as_answered(&server, COLLECTIONS[step.kind].1, &first)
                .map_err(|e| TestCaseError::fail(format!("{}: {e}", at())))?;
            let existed = listed(&before, step.kind, name(step));
            prop_assert_eq!(
                first.status,
                if existed { 200 } else { 201 },
                "{}: {}",
                at(),
                first.text()
            );
            let rv = |a: &crate::proptests::Answer| {
                a.json().map(|o| o["metadata"]["resourceVersion"].clone())
            };
            let mut again = apply(&server, &uri, &body);
            // Some configurations settle on the third apply, as on kube-apiserver: one that owns
            // nothing leaves no managedFields, and the next write records the whole object as
            // `before-first-apply`'s (scenario
            // apply/an-apply-owning-nothing-is-recorded-by-the-next-write); and those of
            // `has_null_or_empty`.
            let owned_nothing = first
                .json()
                .is_some_and(|o| o["metadata"].get("managedFields").is_none());
            let settles_late = owned_nothing || has_null_or_empty(&body);
            let (first, after) = if settles_late && again.succeeded() && rv(&again) != rv(&first) {
                let settled = snapshot(&server);
                let second = std::mem::replace(&mut again, apply(&server, &uri, &body));
                (second, settled)
            } else {
                (first, after)
            };
            if again.succeeded() {
                prop_assert_eq!(again.status, 200, "{}: {}", at(), again.text());
                prop_assert_eq!(rv(&again), rv(&first), "{}: a repeated apply wrote", at());
                prop_assert_eq!(
                    &snapshot(&server),
                    &after,
                    "{}: a repeated apply wrote",
                    at()
                );
            } else {
                prop_assert!(
                    has_preconditions(&body) || (again.status == 409 && has_null_or_empty(&body)),
                    "{}: the repeat failed: {}",
                    at(),
                    again.text()
                );
            }
        }
        check_readable(&server, &snapshot(&server))
            .map_err(|e| TestCaseError::fail(format!("{}: {e}", at())))?;
    }
    Ok(())
}

proptest! {
    #![proptest_config(config(300))]

    #[test]
    fn apply_answers_are_well_formed_and_repeats_are_no_ops(
        steps in prop::collection::vec(step(), 1..5),
    ) {
        run(&steps)?;
    }
}

/// A JSON body rendered compactly or pretty.
fn rendered(value: &Value, pretty: bool) -> Vec<u8> {
    let text = if pretty {
        serde_json::to_string_pretty(value)
    } else {
        serde_json::to_string(value)
    };
    text.unwrap_or_default().into_bytes()
}

proptest! {
    #![proptest_config(config(256))]

    /// The JSON reading of an apply body is taken only where it reads as the YAML reader does.
    #[test]
    fn a_body_read_as_json_reads_as_the_yaml_reader_reads_it(
        doc in json_value(4),
        pretty in any::<bool>(),
        edits in edits(),
    ) {
        let doc = json!({"apiVersion": "v1", "kind": "ConfigMap", "data": doc});
        for body in [rendered(&doc, pretty), mangle(rendered(&doc, pretty), &edits)] {
            if let Some(fast) = super::plain_json_mapping(&body) {
                let slow = super::read_yaml_mapping(&body).map_err(|e| e.to_string());
                prop_assert_eq!(Ok(fast), slow, "{}", String::from_utf8_lossy(&body));
            }
        }
    }
}

#[test]
fn what_the_yaml_reader_might_read_otherwise_is_left_to_it() {
    let long_key = format!(r#"{{"{}":1}}"#, "k".repeat(1001));
    let deep = format!("{}1{}", r#"{"a":"#.repeat(70), "}".repeat(70));
    for body in [
        "{\"a\":\t1}",
        r#"{"a":"\u00e9"}"#,
        r#"{"a":"\/"}"#,
        r#"{"a":1.0}"#,
        r#"{"a":1e3}"#,
        r#"{"a":99999999999999999999}"#,
        r#"{"a":1,"a":2}"#,
        "{\"\u{e9}\":1}",
        "\u{feff}{}",
        "{\"a\":\"\u{7f}\"}",
        "[1]",
        "null",
        "a: 1",
        &long_key,
    ] {
        assert_eq!(super::plain_json_mapping(body.as_bytes()), None, "{body}");
    }
    // Nesting is no reason (issue 36): go-yaml reads flow collections 10000 deep, as deep as
    // the JSON reader, and kube-apiserver applies a 9999-level spec.
    let read = super::plain_json_mapping(deep.as_bytes()).expect("read as JSON");
    assert_eq!(crate::wire::nesting::value_depth(&read), 70);
    let body = br#"{"apiVersion":"v1","data":{"applied":"7"},"kind":"ConfigMap","metadata":{"name":"obj-00007"}}"#;
    let read = json!({"apiVersion": "v1", "data": {"applied": "7"}, "kind": "ConfigMap",
        "metadata": {"name": "obj-00007"}});
    assert_eq!(super::plain_json_mapping(body), Some(read.clone()));
    assert_eq!(super::read_yaml_mapping(body).ok(), Some(read));
}

#[test]
fn integers_and_yaml_looking_strings_read_alike_both_ways() {
    for n in [
        "0",
        "-0",
        "-1",
        "9223372036854775807",
        "-9223372036854775808",
        "18446744073709551615",
        "00",
        "1e2",
        r#"{"<<":{"a":1}}"#,
        r#""*a""#,
        r#""&a b""#,
        r#""!!int 3""#,
        r#""--- ...""#,
        r##""# not a comment""##,
        r#""a: b""#,
        r#""~""#,
        r#""yes""#,
    ] {
        let body = format!(r#"{{"apiVersion":"v1","kind":"ConfigMap","n":{n}}}"#);
        if let Some(fast) = super::plain_json_mapping(body.as_bytes()) {
            let slow = super::read_yaml_mapping(body.as_bytes()).map_err(|e| e.to_string());
            assert_eq!(Ok(fast), slow, "{body}");
        }
    }
}

/// A step of kind `kind` by manager `a`, without force, dry run or YAML, on a new object: the
/// regressions below, each an input the properties above once failed on.
fn plain_step(kind: usize, body: Body) -> Step {
    Step {
        kind,
        existing: false,
        manager: "a",
        force: false,
        dry_run: false,
        yaml: false,
        body,
    }
}

/// Runs `steps` as the apply property does, failing with its message.
fn passes(steps: &[Step]) {
    if let Err(e) = run(steps) {
        panic!("{e}");
    }
}

/// Found on CI: `spec: {}` applied over fields the same manager had set empties the spec,
/// which must stay `{}` (and so be defaulted) for a repeat of the apply to be a no-op.
#[test]
fn an_apply_that_empties_the_spec_repeats_as_a_no_op() {
    passes(&[
        plain_step(2, Body::Valid(1)),
        plain_step(2, Body::Generated(json!({}))),
    ]);
}

/// Found by `cargo xtask fuzz`: a float read back from storage must be the float the request
/// wrote (serde_json's default parsing can be one ulp off), or a repeated apply writes.
#[test]
fn a_float_reads_back_as_written_and_a_repeat_is_a_no_op() {
    let config = json!({"config": {"": -927_725_104.851_791_7}});
    passes(&[plain_step(2, Body::Generated(config))]);
}

/// Found by `cargo xtask fuzz`: an apply that owns nothing is repeated once more before the
/// repeat is a no-op (the real server records `before-first-apply` on the second).
#[test]
fn an_apply_owning_nothing_settles_on_the_third() {
    passes(&[plain_step(2, Body::Generated(json!({"ports": []})))]);
}

/// Found by `cargo xtask fuzz`: a null label applied is stored as `""`, as Go's decoder stores
/// it, not dropped (dropping it changed the object again on every repeat).
#[test]
fn a_null_label_applied_is_an_empty_one_and_a_repeat_is_a_no_op() {
    // The steps lead to `metadata.labels.app` of the second ConfigMap configuration.
    let leads = vec![12_644_985_917_800_074_699, 10_412_655_560_995_967_338, 0];
    let step = Step {
        existing: true,
        force: true,
        ..plain_step(0, Body::Mutated(1, leads, Value::Null))
    };
    assert!(String::from_utf8_lossy(&body_of(&step)).contains(r#""labels":{"app":null}"#));
    passes(&[step]);
}

/// Found by `cargo xtask fuzz`: `data: null` or `data: {}` applied over a map another manager
/// owns succeeds once, and the repeat conflicts (or, forced, writes once more), as on
/// kube-apiserver.
#[test]
fn a_null_or_empty_map_over_another_managers_map_may_conflict_on_the_repeat() {
    for data in [Value::Null, json!({})] {
        let by_b = |force, body| Step {
            existing: true,
            manager: "b",
            force,
            ..plain_step(0, body)
        };
        passes(&[
            by_b(true, Body::Valid(0)),
            by_b(false, Body::Generated(data.clone())),
        ]);
        // Forced, the repeat takes the map from its owner, and the third is the no-op.
        passes(&[
            by_b(true, Body::Valid(0)),
            by_b(true, Body::Generated(data)),
        ]);
    }
}

/// Found by `cargo xtask fuzz`: a set list applied empty over the manager's own items is
/// removed, and the repeat writes `[]` back, as on kube-apiserver.
#[test]
fn an_empty_list_over_its_own_items_settles_on_the_third() {
    let tags = vec![6_710_007_803_241_045_193, 12_587_758_770_420_588_271];
    let emptied = plain_step(2, Body::Mutated(0, tags, json!([])));
    assert!(String::from_utf8_lossy(&body_of(&emptied)).contains(r#""tags":[]"#));
    passes(&[plain_step(2, Body::Valid(0)), emptied]);
}
