//! Replays of requests made against a real kube-apiserver (v1.36, see `REAL.md`), asserting
//! the exact managedFields, objects and errors it returned. The harness below plays the
//! server's part around this module: the custom-resource strategy resets, JSON merge patch,
//! and the no-op check.

use pretty_assertions::assert_eq;
use recon_apimachinery::fieldpath::PathElement;
use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};

use super::*;

const API: &str = "probe.example.com/v1";

/// `ssaprobes`: spec and status preserve unknown fields (probe/crd1.json).
fn probes_schema() -> Schema {
    Schema::from_openapi_v3(&json!({"type": "object", "properties": {
        "spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}))
    .unwrap()
}

/// `ssalists`: every list and map kind (probe/crd2.json).
fn lists_schema() -> Schema {
    Schema::from_openapi_v3(&json!({"type": "object", "properties": {
        "spec": {"type": "object", "properties": {
            "atomicList": {"type": "array", "x-kubernetes-list-type": "atomic", "items": {"type": "string"}},
            "plainList": {"type": "array", "items": {"type": "string"}},
            "setList": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "intSet": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "integer"}},
            "mapList": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"}, "v": {"type": "string"}, "w": {"type": "string"},
                    "tags": {"type": "object", "additionalProperties": {"type": "string"}}}}},
            "multiKey": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port", "protocol"],
                "items": {"type": "object", "required": ["port", "protocol"], "properties": {
                    "port": {"type": "integer"}, "protocol": {"type": "string"}, "name": {"type": "string"}}}},
            "atomicMap": {"type": "object", "x-kubernetes-map-type": "atomic", "properties": {
                "a": {"type": "string"}, "b": {"type": "string"}}},
            "atomicStrMap": {"type": "object", "x-kubernetes-map-type": "atomic", "additionalProperties": {"type": "string"}},
            "granularMap": {"type": "object", "additionalProperties": {"type": "string"}},
            "nested": {"type": "object", "properties": {"x": {"type": "string"}, "y": {"type": "integer"},
                "deep": {"type": "object", "properties": {"z": {"type": "string"}}}}},
            "replicas": {"type": "integer"},
            "name": {"type": "string"},
            "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}},
        "status": {"type": "object", "properties": {
            "conditions": {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["type"],
                "items": {"type": "object", "required": ["type"], "properties": {
                    "type": {"type": "string"}, "status": {"type": "string"}, "reason": {"type": "string"}}}},
            "phase": {"type": "string"}}}}}))
    .unwrap()
}

fn t(s: &str) -> Time {
    Time::parse(s).unwrap()
}

/// RFC 7396.
fn merge_patch(target: &Value, patch: &Value) -> Value {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            let mut out = t.clone();
            for (k, v) in p {
                if v.is_null() {
                    out.remove(k);
                } else {
                    let merged = merge_patch(out.get(k).unwrap_or(&Value::Null), v);
                    out.insert(k.clone(), merged);
                }
            }
            Value::Object(out)
        }
        (_, Value::Object(_)) => merge_patch(&json!({}), patch),
        _ => patch.clone(),
    }
}

/// Removes the field paths of `reset` (and what lies under them) from an object.
pub(super) fn strip_paths(obj: &mut Value, reset: &FieldSet) {
    let Value::Object(map) = obj else { return };
    strip_map(map, reset);
}

fn strip_map(map: &mut Map, reset: &FieldSet) {
    for pe in reset.members() {
        if let PathElement::Field(name) = pe {
            map.remove(name);
        }
    }
    for (pe, sub) in reset.children() {
        if let PathElement::Field(name) = pe
            && let Some(Value::Object(child)) = map.get_mut(name)
        {
            strip_map(child, sub);
        }
    }
}

/// The Status `reason` the apiserver answers an [`ApplyError`] with (empty for the 500s,
/// which upstream does not classify).
fn reason(e: &ApplyError) -> &'static str {
    match e.code() {
        400 => "BadRequest",
        409 => "Conflict",
        _ => "",
    }
}

/// One custom resource with a status subresource, kept the way the apiserver keeps it.
struct Server {
    schema: Schema,
    kind: &'static str,
    object: Value,
    /// Bumped on every write, like the resourceVersion.
    writes: u32,
}

impl Server {
    fn new(schema: Schema, kind: &'static str) -> Self {
        Server {
            schema,
            kind,
            object: Value::Null,
            writes: 0,
        }
    }

    fn request<'a>(
        &self,
        manager: &'a str,
        sub: &'a str,
        time: Time,
        reset: &'a FieldSet,
    ) -> Request<'a> {
        Request {
            manager,
            api_version: API,
            kind: self.kind,
            subresource: sub,
            time,
            reset_fields: reset,
            served: None,
            new_object: None,
            unstructured: false,
        }
    }

    /// The custom-resource strategies: main writes keep the old status, `/status` writes keep
    /// everything but status (and the managedFields just computed).
    fn reset(&self, mut new: Value, sub: &str) -> Value {
        let old = &self.object;
        if old.is_null() {
            strip_paths(&mut new, &reset_fields("", true));
            return new;
        }
        if sub == "status" {
            let mut kept = old.clone();
            match new.get("status") {
                Some(s) => kept["status"] = s.clone(),
                None => strip_paths(&mut kept, &reset_fields("", true)),
            }
            kept["metadata"]["managedFields"] = new["metadata"]["managedFields"].clone();
            if new["metadata"].get("managedFields").is_none() {
                kept["metadata"]
                    .as_object_mut()
                    .unwrap()
                    .remove("managedFields");
            }
            return kept;
        }
        match old.get("status") {
            Some(s) => new["status"] = s.clone(),
            None => strip_paths(&mut new, &reset_fields("", true)),
        }
        new
    }

    /// Stores `new` unless it equals the stored object once managedFields times are ignored.
    fn store(&mut self, mut new: Value) -> &Value {
        if let (Value::Object(n), Value::Object(o)) = (&mut new, &self.object) {
            restore_unchanged_times(n, o);
        }
        if new != self.object {
            self.object = new;
            self.writes += 1;
        }
        &self.object
    }

    fn create(&mut self, manager: &str, body: Value, time: Time) -> &Value {
        let reset = reset_fields("", true);
        let req = self.request(manager, "", time, &reset);
        let managed = ManagedFields::from_request(
            take_list(&mut body.clone()),
            None,
            RequestRules::default(),
        );
        let managed = record_update(managed, None, &body, &req, &self.schema);
        let mut new = body;
        managed.write_to(&mut new);
        let new = self.reset(new, "");
        self.store(new)
    }

    fn patch(&mut self, manager: &str, sub: &str, patch: Value, time: Time) -> &Value {
        let reset = reset_fields(sub, true);
        let req = self.request(manager, sub, time, &reset);
        let mut new = merge_patch(&self.object, &patch);
        let rules = RequestRules {
            subresource: !sub.is_empty(),
            empty_list_resets: false,
        };
        let managed = ManagedFields::from_request(take_list(&mut new), Some(&self.object), rules);
        let managed = record_update(managed, Some(&self.object), &new, &req, &self.schema);
        managed.write_to(&mut new);
        let new = self.reset(new, sub);
        self.store(new)
    }

    fn put(&mut self, manager: &str, body: Value, time: Time) -> &Value {
        let reset = reset_fields("", true);
        let req = self.request(manager, "", time, &reset);
        let managed = ManagedFields::from_request(
            take_list(&mut body.clone()),
            Some(&self.object),
            RequestRules::default(),
        );
        let managed = record_update(managed, Some(&self.object), &body, &req, &self.schema);
        let mut new = body;
        managed.write_to(&mut new);
        let new = self.reset(new, "");
        self.store(new)
    }

    fn apply(
        &mut self,
        manager: &str,
        sub: &str,
        body: Value,
        force: bool,
        time: Time,
    ) -> Result<&Value, ApplyError> {
        let reset = reset_fields(sub, true);
        let req = self.request(manager, sub, time, &reset);
        let live = (!self.object.is_null()).then_some(&self.object);
        let managed = match live {
            Some(l) => ManagedFields::from_object(l).unwrap(),
            None => ManagedFields::new(),
        };
        let out = apply(live, &body, &managed, &req, force, &self.schema)?;
        let new = self.reset(out.object, sub);
        Ok(self.store(new))
    }

    fn managed(&self) -> Value {
        self.object["metadata"]["managedFields"].clone()
    }

    fn body(&self) -> Value {
        let mut v = self.object.clone();
        let m = v.as_object_mut().unwrap();
        m.remove("metadata");
        m.remove("apiVersion");
        m.remove("kind");
        v
    }
}

fn entry(manager: &str, op: &str, time: Option<&str>, fields: Value) -> Value {
    let mut e = json!({"apiVersion": API, "fieldsType": "FieldsV1", "fieldsV1": fields,
        "manager": manager, "operation": op});
    if let Some(t) = time {
        e["time"] = json!(t);
    }
    e
}

fn status_entry(manager: &str, op: &str, time: Option<&str>, fields: Value) -> Value {
    let mut e = entry(manager, op, time, fields);
    e["subresource"] = json!("status");
    e
}

fn conflict_of(r: Result<&Value, ApplyError>) -> (String, Vec<Value>) {
    match r {
        Err(ApplyError::Conflicts(c)) => (conflict_message(&c), conflict_causes(&c)),
        other => panic!("expected a conflict, got {other:?}"),
    }
}

#[test]
fn create_then_merge_patch() {
    let mut s = Server::new(probes_schema(), "SsaProbe");
    let t0 = "2026-11-21T07:21:55Z";
    s.create(
        "mgr-a",
        json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "c1",
            "labels": {"app": "x", "tier": "web"}, "annotations": {"a": "1"}, "finalizers": ["example.com/f"]},
            "spec": {"replicas": 1, "list": [1, 2], "m": {"k": "v", "n": {"deep": true}}, "empty": {}, "nul": null, "s": "str"},
            "status": {"phase": "ignored"}}),
        t(t0),
    );
    assert_eq!(
        s.managed(),
        json!([entry(
            "mgr-a",
            "Update",
            Some(t0),
            json!({
            "f:metadata": {"f:annotations": {".": {}, "f:a": {}}, "f:finalizers": {".": {}, "v:\"example.com/f\"": {}},
                "f:labels": {".": {}, "f:app": {}, "f:tier": {}}},
            "f:spec": {".": {}, "f:empty": {}, "f:list": {}, "f:m": {".": {}, "f:k": {}, "f:n": {".": {}, "f:deep": {}}},
                "f:nul": {}, "f:replicas": {}, "f:s": {}}})
        )])
    );
    assert!(s.object.get("status").is_none());
    s.patch(
        "mgr-b",
        "",
        json!({"metadata": {"labels": {"app": "y", "new": "z"}}, "spec": {"replicas": 2, "m": {"k2": "v2"}, "list": [3]}}),
        t(t0),
    );
    assert_eq!(
        s.managed(),
        json!([
            entry(
                "mgr-a",
                "Update",
                Some(t0),
                json!({
                "f:metadata": {"f:annotations": {".": {}, "f:a": {}}, "f:finalizers": {".": {}, "v:\"example.com/f\"": {}},
                    "f:labels": {".": {}, "f:tier": {}}},
                "f:spec": {".": {}, "f:empty": {}, "f:m": {".": {}, "f:k": {}, "f:n": {".": {}, "f:deep": {}}},
                    "f:nul": {}, "f:s": {}}})
            ),
            entry(
                "mgr-b",
                "Update",
                Some(t0),
                json!({
                "f:metadata": {"f:labels": {"f:app": {}, "f:new": {}}},
                "f:spec": {"f:list": {}, "f:m": {"f:k2": {}}, "f:replicas": {}}})
            )
        ])
    );
}

fn l1_fields() -> Value {
    json!({"f:metadata": {"f:labels": {"f:a": {}}}, "f:spec": {
        "f:atomicList": {}, "f:atomicMap": {}, "f:atomicStrMap": {},
        "f:free": {"f:q": {}, "f:r": {".": {}, "f:s": {}}},
        "f:granularMap": {"f:g1": {}},
        "f:intSet": {"v:10": {}, "v:9": {}},
        "f:mapList": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:tags": {"f:t": {}}, "f:v": {}},
            "k:{\"name\":\"b\"}": {".": {}, "f:name": {}, "f:v": {}}},
        "f:multiKey": {"k:{\"port\":10,\"protocol\":\"UDP\"}": {".": {}, "f:port": {}, "f:protocol": {}},
            "k:{\"port\":9,\"protocol\":\"TCP\"}": {".": {}, "f:name": {}, "f:port": {}, "f:protocol": {}}},
        "f:nested": {"f:deep": {"f:z": {}}, "f:x": {}},
        "f:plainList": {}, "f:replicas": {},
        "f:setList": {"v:\"s1\"": {}, "v:\"s2\"": {}}}})
}

fn l1() -> Server {
    let mut s = Server::new(lists_schema(), "SsaList");
    s.apply(
        "mgr-a",
        "",
        json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l1", "labels": {"a": "1"}},
            "spec": {"atomicList": ["x", "y"], "plainList": ["p"], "setList": ["s1", "s2"], "intSet": [10, 9],
                "mapList": [{"name": "a", "v": "1", "tags": {"t": "1"}}, {"name": "b", "v": "2"}],
                "multiKey": [{"port": 9, "protocol": "TCP", "name": "n9"}, {"port": 10, "protocol": "UDP"}],
                "atomicMap": {"a": "1"}, "atomicStrMap": {"k": "v"}, "granularMap": {"g1": "1"},
                "nested": {"x": "x", "deep": {"z": "z"}}, "replicas": 1, "free": {"q": [1], "r": {"s": 1}}},
            "status": {"phase": "ignored"}}),
        false,
        t("2026-11-21T07:22:26Z"),
    )
    .unwrap();
    s
}

fn l1_body(spec: &str) -> Value {
    let mut v: Value = serde_json::from_str(spec).unwrap();
    v["apiVersion"] = json!(API);
    v["kind"] = json!("SsaList");
    v["metadata"] = json!({"name": "l1"});
    v
}

#[test]
fn apply_create_all_list_kinds() {
    let s = l1();
    assert_eq!(
        s.managed(),
        json!([entry(
            "mgr-a",
            "Apply",
            Some("2026-11-21T07:22:26Z"),
            l1_fields()
        )])
    );
    assert_eq!(
        s.body(),
        json!({"spec": {"atomicList": ["x", "y"], "atomicMap": {"a": "1"}, "atomicStrMap": {"k": "v"},
            "free": {"q": [1], "r": {"s": 1}}, "granularMap": {"g1": "1"}, "intSet": [10, 9],
            "mapList": [{"name": "a", "tags": {"t": "1"}, "v": "1"}, {"name": "b", "v": "2"}],
            "multiKey": [{"name": "n9", "port": 9, "protocol": "TCP"}, {"port": 10, "protocol": "UDP"}],
            "nested": {"deep": {"z": "z"}, "x": "x"}, "plainList": ["p"], "replicas": 1, "setList": ["s1", "s2"]}})
    );
}

#[test]
fn apply_shared_conflict_force() {
    let mut s = l1();
    let a_time = Some("2026-11-21T07:22:26Z");
    let now = t("2026-11-21T07:23:00Z");

    // Same values: shared ownership, no time for the new applier, still a write.
    let writes = s.writes;
    s.apply(
        "mgr-b",
        "",
        l1_body(r#"{"spec":{"replicas":1,"nested":{"x":"x"}}}"#),
        false,
        now,
    )
    .unwrap();
    assert_eq!(s.writes, writes + 1);
    assert_eq!(
        s.managed(),
        json!([
            entry(
                "mgr-b",
                "Apply",
                None,
                json!({"f:spec": {"f:nested": {"f:x": {}}, "f:replicas": {}}})
            ),
            entry("mgr-a", "Apply", a_time, l1_fields())
        ])
    );

    let (msg, causes) = conflict_of(s.apply(
        "mgr-c",
        "",
        l1_body(r#"{"spec":{"replicas":2}}"#),
        false,
        now,
    ));
    assert_eq!(
        msg,
        "Apply failed with 2 conflicts: conflicts with \"mgr-a\":\n- .spec.replicas\nconflicts with \"mgr-b\":\n- .spec.replicas"
    );
    assert_eq!(
        causes,
        [
            json!({"reason": "FieldManagerConflict", "message": "conflict with \"mgr-a\"", "field": ".spec.replicas"}),
            json!({"reason": "FieldManagerConflict", "message": "conflict with \"mgr-b\"", "field": ".spec.replicas"}),
        ]
    );

    let (msg, causes) = conflict_of(s.apply(
        "mgr-c",
        "",
        l1_body(r#"{"spec":{"replicas":2,"nested":{"x":"q","deep":{"z":"w"}},"atomicList":["z"],"granularMap":{"g1":"2"}}}"#),
        false,
        now,
    ));
    assert_eq!(
        msg,
        "Apply failed with 7 conflicts: conflicts with \"mgr-a\":\n- .spec.atomicList\n- .spec.replicas\n- .spec.granularMap.g1\n- .spec.nested.x\n- .spec.nested.deep.z\nconflicts with \"mgr-b\":\n- .spec.replicas\n- .spec.nested.x"
    );
    let fields: Vec<&str> = causes
        .iter()
        .map(|c| c["field"].as_str().unwrap())
        .collect();
    assert_eq!(
        fields,
        [
            ".spec.atomicList",
            ".spec.replicas",
            ".spec.granularMap.g1",
            ".spec.nested.x",
            ".spec.nested.deep.z",
            ".spec.replicas",
            ".spec.nested.x"
        ]
    );

    // force: ownership moves; mgr-b is left with nothing and disappears.
    let t1 = "2026-11-21T07:23:27Z";
    s.apply(
        "mgr-c",
        "",
        l1_body(r#"{"spec":{"replicas":2,"nested":{"x":"q"}}}"#),
        true,
        t(t1),
    )
    .unwrap();
    let mut a_fields = l1_fields();
    a_fields["f:spec"]
        .as_object_mut()
        .unwrap()
        .remove("f:replicas");
    a_fields["f:spec"]["f:nested"] = json!({"f:deep": {"f:z": {}}});
    assert_eq!(
        s.managed(),
        json!([
            entry("mgr-a", "Apply", a_time, a_fields.clone()),
            entry(
                "mgr-c",
                "Apply",
                Some(t1),
                json!({"f:spec": {"f:nested": {"f:x": {}}, "f:replicas": {}}})
            )
        ])
    );
    assert_eq!(s.object["spec"]["replicas"], 2);

    // A merge patch takes replicas from the applier.
    s.patch(
        "mgr-d",
        "",
        json!({"spec": {"replicas": 3, "nested": {"y": 5}}}),
        t(t1),
    );
    assert_eq!(
        s.managed(),
        json!([
            entry("mgr-a", "Apply", a_time, a_fields),
            entry(
                "mgr-c",
                "Apply",
                Some(t1),
                json!({"f:spec": {"f:nested": {"f:x": {}}}})
            ),
            entry(
                "mgr-d",
                "Update",
                Some(t1),
                json!({"f:spec": {"f:nested": {"f:y": {}}, "f:replicas": {}}})
            )
        ])
    );

    let (msg, causes) = conflict_of(s.apply(
        "mgr-e",
        "",
        l1_body(r#"{"spec":{"replicas":4}}"#),
        false,
        now,
    ));
    assert_eq!(
        msg,
        "Apply failed with 1 conflict: conflict with \"mgr-d\" using probe.example.com/v1: .spec.replicas"
    );
    assert_eq!(
        causes,
        [
            json!({"reason": "FieldManagerConflict", "message": "conflict with \"mgr-d\" using probe.example.com/v1", "field": ".spec.replicas"})
        ]
    );
    let (msg, _) = conflict_of(s.apply(
        "mgr-e",
        "",
        l1_body(r#"{"spec":{"replicas":4,"nested":{"y":6}}}"#),
        false,
        now,
    ));
    assert_eq!(
        msg,
        "Apply failed with 2 conflicts: conflicts with \"mgr-d\" using probe.example.com/v1:\n- .spec.replicas\n- .spec.nested.y"
    );
}

fn l2_body(labels: Value, spec: Value) -> Value {
    json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l2", "labels": labels}, "spec": spec})
}

fn l2() -> Server {
    let mut s = Server::new(lists_schema(), "SsaList");
    let t0 = t("2026-11-21T07:23:31Z");
    s.apply(
        "mgr-a",
        "",
        l2_body(
            json!({"l1": "1", "l2": "2"}),
            json!({"replicas": 1, "nested": {"x": "a", "y": 1}, "mapList": [{"name": "a", "v": "1"}, {"name": "b", "v": "2"}],
                "setList": ["s1", "s2"], "granularMap": {"g1": "1", "g2": "2"}, "free": {"m": {"x": 1}}}),
        ),
        false,
        t0,
    )
    .unwrap();
    let b = json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l2"},
        "spec": {"nested": {"x": "a"}, "mapList": [{"name": "c", "v": "3"}], "setList": ["s2", "s3"], "granularMap": {"g2": "2"}}});
    s.apply("mgr-b", "", b, false, t0).unwrap();
    s.patch(
        "mgr-d",
        "",
        json!({"spec": {"free": {"m": {"y": 2}}, "mapList": [{"name": "a", "v": "1", "w": "dw"}, {"name": "b", "v": "2"}, {"name": "c", "v": "3"}]}}),
        t0,
    );
    s
}

const T31: Option<&str> = Some("2026-11-21T07:23:31Z");

fn l2_b_fields() -> Value {
    json!({"f:spec": {"f:granularMap": {"f:g2": {}}, "f:mapList": {"k:{\"name\":\"c\"}": {".": {}, "f:name": {}, "f:v": {}}},
        "f:nested": {"f:x": {}}, "f:setList": {"v:\"s2\"": {}, "v:\"s3\"": {}}}})
}

#[test]
fn apply_removes_dropped_fields() {
    let mut s = l2();
    assert_eq!(
        s.managed(),
        json!([
            entry(
                "mgr-a",
                "Apply",
                T31,
                json!({"f:metadata": {"f:labels": {"f:l1": {}, "f:l2": {}}}, "f:spec": {
                "f:free": {"f:m": {".": {}, "f:x": {}}}, "f:granularMap": {"f:g1": {}, "f:g2": {}},
                "f:mapList": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}, "f:v": {}}, "k:{\"name\":\"b\"}": {".": {}, "f:name": {}, "f:v": {}}},
                "f:nested": {"f:x": {}, "f:y": {}}, "f:replicas": {}, "f:setList": {"v:\"s1\"": {}, "v:\"s2\"": {}}}})
            ),
            entry("mgr-b", "Apply", T31, l2_b_fields()),
            entry(
                "mgr-d",
                "Update",
                T31,
                json!({"f:spec": {"f:free": {"f:m": {"f:y": {}}}, "f:mapList": {"k:{\"name\":\"a\"}": {"f:w": {}}}}})
            )
        ])
    );
    assert_eq!(
        s.body(),
        json!({"spec": {"free": {"m": {"x": 1, "y": 2}}, "granularMap": {"g1": "1", "g2": "2"},
            "mapList": [{"name": "a", "v": "1", "w": "dw"}, {"name": "b", "v": "2"}, {"name": "c", "v": "3"}],
            "nested": {"x": "a", "y": 1}, "replicas": 1, "setList": ["s1", "s2", "s3"]}})
    );

    // Dropping `free.m` removes it with mgr-d's `y` and leaves `free: {}`: structured-merge-diff
    // v6.3 keeps a container its removals emptied (kube-apiserver v1.36.2 answered 200 with
    // `free: {}`; older servers left `null` and failed validation with 422).
    let dropped = apply(
        Some(&s.object),
        &l2_body(json!({"l1": "1"}), json!({"replicas": 1, "mapList": [{"name": "b", "v": "2"}], "setList": ["s1"], "granularMap": {"g1": "1"}})),
        &ManagedFields::from_object(&s.object).unwrap(),
        &s.request("mgr-a", "", t("2026-11-21T07:23:32Z"), &reset_fields("", true)),
        false,
        &s.schema,
    )
    .unwrap();
    assert_eq!(dropped.object["spec"]["free"], json!({}));

    let t33 = "2026-11-21T07:23:33Z";
    let again = l2_body(
        json!({"l1": "1"}),
        json!({"replicas": 1, "mapList": [{"name": "b", "v": "2"}], "setList": ["s1"], "granularMap": {"g1": "1"}, "free": {"m": {"x": 1}}}),
    );
    s.apply("mgr-a", "", again.clone(), false, t(t33)).unwrap();
    let expected = json!([
        entry("mgr-b", "Apply", T31, l2_b_fields()),
        entry(
            "mgr-a",
            "Apply",
            Some(t33),
            json!({"f:metadata": {"f:labels": {"f:l1": {}}}, "f:spec": {
            "f:free": {"f:m": {".": {}, "f:x": {}}}, "f:granularMap": {"f:g1": {}},
            "f:mapList": {"k:{\"name\":\"b\"}": {".": {}, "f:name": {}, "f:v": {}}},
            "f:replicas": {}, "f:setList": {"v:\"s1\"": {}}}})
        ),
        entry(
            "mgr-d",
            "Update",
            T31,
            json!({"f:spec": {"f:free": {"f:m": {"f:y": {}}}}})
        )
    ]);
    assert_eq!(s.managed(), expected);
    // Item `a` went with mgr-d's `w`; `nested.x`, `s2` and `g2` stay for mgr-b.
    assert_eq!(
        s.body(),
        json!({"spec": {"free": {"m": {"x": 1, "y": 2}}, "granularMap": {"g1": "1", "g2": "2"},
            "mapList": [{"name": "b", "v": "2"}, {"name": "c", "v": "3"}], "nested": {"x": "a"},
            "replicas": 1, "setList": ["s1", "s2", "s3"]}})
    );
    assert_eq!(s.object["metadata"]["labels"], json!({"l1": "1"}));

    // A no-op re-apply does not write, and keeps the time.
    let writes = s.writes;
    s.apply("mgr-a", "", again, false, t("2026-11-21T07:23:40Z"))
        .unwrap();
    assert_eq!(s.writes, writes);
    assert_eq!(s.managed(), expected);
}

#[test]
fn status_subresource_entries() {
    let mut s = l2();
    s.apply(
        "mgr-a",
        "",
        l2_body(
            json!({"l1": "1"}),
            json!({"replicas": 1, "mapList": [{"name": "b", "v": "2"}], "setList": ["s1"], "granularMap": {"g1": "1"}, "free": {"m": {"x": 1}}}),
        ),
        false,
        t("2026-11-21T07:23:33Z"),
    )
    .unwrap();
    let t40 = "2026-11-21T07:23:40Z";
    s.apply(
        "mgr-s",
        "status",
        l2_body(
            json!({"fromstatus": "1"}),
            json!({"replicas": 9}),
        )
        .as_object()
        .cloned()
        .map(|mut o| {
            o.insert("status".into(), json!({"phase": "Running", "conditions": [{"type": "Ready", "status": "True"}]}));
            Value::Object(o)
        })
        .unwrap(),
        false,
        t(t40),
    )
    .unwrap();
    let s_entry = |fields: Value| status_entry("mgr-s", "Apply", Some(t40), fields);
    let conds = json!({"k:{\"type\":\"Ready\"}": {".": {}, "f:status": {}, "f:type": {}}});
    assert_eq!(
        s.managed()[2],
        s_entry(json!({"f:status": {"f:conditions": conds, "f:phase": {}}}))
    );
    assert_eq!(s.object["spec"]["replicas"], 1);
    assert_eq!(s.object["metadata"]["labels"], json!({"l1": "1"}));
    assert_eq!(s.object["status"]["phase"], "Running");

    s.patch(
        "mgr-s2",
        "status",
        json!({"metadata": {"labels": {"x": "y"}}, "spec": {"replicas": 7}, "status": {"phase": "Done"}}),
        t(t40),
    );
    let mf = s.managed();
    assert_eq!(mf[2], s_entry(json!({"f:status": {"f:conditions": conds}})));
    assert_eq!(
        mf[4],
        status_entry(
            "mgr-s2",
            "Update",
            Some(t40),
            json!({"f:status": {"f:phase": {}}})
        )
    );
    assert_eq!(s.object["spec"]["replicas"], 1);

    // Main-endpoint apply carrying status: owns no status field, but its time is set because
    // the merged object differed.
    let main = json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l2"},
        "status": {"phase": "Main"}, "spec": {"replicas": 1}});
    s.apply("mgr-m", "", main, false, t(t40)).unwrap();
    let mf = s.managed();
    let managers: Vec<&str> = mf
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(
        managers,
        ["mgr-b", "mgr-a", "mgr-m", "mgr-s", "mgr-d", "mgr-s2"]
    );
    assert_eq!(
        s.managed()[2],
        entry(
            "mgr-m",
            "Apply",
            Some(t40),
            json!({"f:spec": {"f:replicas": {}}})
        )
    );
    assert_eq!(s.object["status"]["phase"], "Done");
}

#[test]
fn update_manager_cap() {
    let mut s = Server::new(probes_schema(), "SsaProbe");
    s.create("creator", json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "cap2"}, "spec": {"base": 1}}),
        t("2026-11-21T07:24:05Z"));
    let times = [
        "07:24:07", "07:24:08", "07:24:09", "07:24:10", "07:24:11", "07:24:12", "07:24:13",
        "07:24:14", "07:24:15", "07:24:17", "07:24:18",
    ];
    for (i, tm) in times.iter().enumerate() {
        let n = i + 1;
        s.patch(
            &format!("m{n:02}"),
            "",
            json!({"spec": {format!("f{n:02}"): n}}),
            t(&format!("2026-11-21T{tm}Z")),
        );
    }
    let at = |tm: &str| format!("2026-11-21T{tm}Z");
    let own = |f: &str| json!({"f:spec": {format!("f:{f}"): {}}});
    let mut expected = vec![entry(
        "ancient-changes",
        "Update",
        Some(&at("07:24:08")),
        json!({"f:spec": {".": {}, "f:base": {}, "f:f01": {}, "f:f02": {}}}),
    )];
    for (i, tm) in times.iter().enumerate().skip(2) {
        let n = i + 1;
        expected.push(entry(
            &format!("m{n:02}"),
            "Update",
            Some(&at(tm)),
            own(&format!("f{n:02}")),
        ));
    }
    assert_eq!(s.managed(), Value::Array(expected.into()));

    s.patch("m12", "", json!({"spec": {"f12": 12}}), t(&at("07:24:19")));
    assert_eq!(
        s.managed()[0],
        entry(
            "ancient-changes",
            "Update",
            Some(&at("07:24:09")),
            json!({"f:spec": {".": {}, "f:base": {}, "f:f01": {}, "f:f02": {}, "f:f03": {}}})
        )
    );
    s.patch("m05", "", json!({"spec": {"f05": 55}}), t(&at("07:24:20")));
    s.patch("m13", "", json!({"spec": {"f13": 13}}), t(&at("07:24:21")));
    let mf = s.managed();
    assert_eq!(
        mf[0],
        entry(
            "ancient-changes",
            "Update",
            Some(&at("07:24:10")),
            json!({"f:spec": {".": {}, "f:base": {}, "f:f01": {}, "f:f02": {}, "f:f03": {}, "f:f04": {}}})
        )
    );
    let order: Vec<&str> = mf
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    assert_eq!(
        order,
        [
            "ancient-changes",
            "m06",
            "m07",
            "m08",
            "m09",
            "m10",
            "m11",
            "m12",
            "m05",
            "m13"
        ]
    );
}

#[test]
fn request_managed_fields() {
    let mut s = Server::new(probes_schema(), "SsaProbe");
    let t25 = "2026-11-21T07:24:25Z";
    s.create("creator", json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "mfo", "labels": {"a": "1"}},
        "spec": {"x": 1, "y": {"z": 2}}}), t(t25));
    let creator = json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:x": {}, "f:y": {".": {}, "f:z": {}}}});
    assert_eq!(
        s.managed(),
        json!([entry("creator", "Update", Some(t25), creator)])
    );

    // `[]` is dropped for custom resources: no write at all.
    let writes = s.writes;
    s.patch("p1", "", json!({"metadata": {"managedFields": []}}), t(t25));
    assert_eq!(s.writes, writes);

    s.patch("p2", "", json!({"spec": {"x": 2}}), t(t25));
    s.apply("mgr-a", "", json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "mfo"}, "spec": {"w": 1}}), false, t(t25))
        .unwrap();
    assert_eq!(
        s.managed(),
        json!([
            entry("mgr-a", "Apply", Some(t25), json!({"f:spec": {"f:w": {}}})),
            entry(
                "creator",
                "Update",
                Some(t25),
                json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}}, "f:spec": {".": {}, "f:y": {".": {}, "f:z": {}}}})
            ),
            entry("p2", "Update", Some(t25), json!({"f:spec": {"f:x": {}}}))
        ])
    );

    // `[{}]` resets; later updates are not tracked.
    s.patch(
        "p1",
        "",
        json!({"metadata": {"managedFields": [{}]}}),
        t(t25),
    );
    assert!(s.object["metadata"].get("managedFields").is_none());
    s.patch("p2", "", json!({"spec": {"x": 3}}), t(t25));
    assert!(s.object["metadata"].get("managedFields").is_none());

    // Applying then: everything already there belongs to before-first-apply.
    let w2 = json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "mfo"}, "spec": {"w": 2}});
    let (msg, _) = conflict_of(s.apply("mgr-a", "", w2.clone(), false, t(t25)));
    assert_eq!(
        msg,
        "Apply failed with 1 conflict: conflict with \"before-first-apply\" using probe.example.com/v1: .spec.w"
    );
    let t36 = "2026-11-21T07:24:36Z";
    s.apply("mgr-a", "", w2, true, t(t36)).unwrap();
    assert_eq!(
        s.managed(),
        json!([
            entry("mgr-a", "Apply", Some(t36), json!({"f:spec": {"f:w": {}}})),
            entry(
                "before-first-apply",
                "Update",
                Some(t36),
                json!({"f:metadata": {"f:labels": {".": {}, "f:a": {}}},
                "f:spec": {".": {}, "f:x": {}, "f:y": {".": {}, "f:z": {}}}})
            )
        ])
    );

    // PUT with a valid list replaces it; the writer's entry comes on top.
    let t37 = "2026-11-21T07:24:37Z";
    let mut body = s.object.clone();
    body["spec"]["x"] = json!(4);
    body["metadata"]["managedFields"] = json!([
        {"manager": "custom", "operation": "Update", "apiVersion": API, "time": "2020-01-01T00:00:00Z",
            "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:y": {}}}},
        {"manager": "custom2", "operation": "Apply", "apiVersion": API, "fieldsType": "FieldsV1", "fieldsV1": {"f:spec": {"f:w": {}}}}
    ]);
    s.put("putter", body, t(t37));
    assert_eq!(
        s.managed(),
        json!([
            entry("custom2", "Apply", None, json!({"f:spec": {"f:w": {}}})),
            entry(
                "custom",
                "Update",
                Some("2020-01-01T00:00:00Z"),
                json!({"f:spec": {"f:y": {}}})
            ),
            entry(
                "putter",
                "Update",
                Some(t37),
                json!({"f:spec": {"f:x": {}}})
            )
        ])
    );

    // Invalid lists are ignored; unknown element kinds dropped; the last duplicate wins.
    let t40 = "2026-11-21T07:24:40Z";
    let put_mf = |s: &mut Server, mf: Value| {
        let mut body = s.object.clone();
        body["spec"]["x"] = json!(body["spec"]["x"].as_i64().unwrap() + 1);
        body["metadata"]["managedFields"] = mf;
        s.put("putter2", body, t(t40));
        s.managed()
    };
    let mf = |m: &str, fields: Value| json!({"manager": m, "operation": "Update", "apiVersion": API, "fieldsType": "FieldsV1", "fieldsV1": fields});
    let got = put_mf(
        &mut s,
        json!([{"manager": "bogus", "operation": "Bogus", "apiVersion": API, "fieldsType": "FieldsV1", "fieldsV1": {}}]),
    );
    assert_eq!(
        got,
        json!([
            entry("custom2", "Apply", None, json!({"f:spec": {"f:w": {}}})),
            entry(
                "custom",
                "Update",
                Some("2020-01-01T00:00:00Z"),
                json!({"f:spec": {"f:y": {}}})
            ),
            entry(
                "putter2",
                "Update",
                Some(t40),
                json!({"f:spec": {"f:x": {}}})
            )
        ])
    );
    let unk = json!([
        entry("unk", "Update", None, json!({"f:spec": {"f:y": {}}})),
        entry(
            "putter2",
            "Update",
            Some(t40),
            json!({"f:spec": {"f:x": {}}})
        )
    ]);
    assert_eq!(
        put_mf(
            &mut s,
            json!([mf("unk", json!({"f:spec": {"f:y": {}, "x:zzz": {}}}))])
        ),
        unk
    );
    assert_eq!(
        put_mf(
            &mut s,
            json!([mf("badk", json!({"f:spec": {"k:notjson": {}}}))])
        ),
        unk
    );
    assert_eq!(
        put_mf(
            &mut s,
            json!([{"manager": "nft", "operation": "Update", "apiVersion": API, "fieldsV1": {}}])
        ),
        unk
    );
    assert_eq!(
        put_mf(
            &mut s,
            json!([
                mf("dup", json!({"f:spec": {"f:y": {}}})),
                mf("dup", json!({"f:spec": {"f:w": {}}}))
            ])
        ),
        json!([
            entry("dup", "Update", None, json!({"f:spec": {"f:w": {}}})),
            entry(
                "putter2",
                "Update",
                Some(t40),
                json!({"f:spec": {"f:x": {}}})
            )
        ])
    );

    // `managedFields: null` in an apply body is allowed and counts as a change.
    let t44 = "2026-11-21T07:24:44Z";
    s.apply("mgr-a", "", json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "mfo", "managedFields": null}, "spec": {"w": 2}}), false, t(t44))
        .unwrap();
    assert_eq!(
        s.managed()[0],
        entry("mgr-a", "Apply", Some(t44), json!({"f:spec": {"f:w": {}}}))
    );
}

#[test]
fn same_name_update_and_apply() {
    let mut s = Server::new(probes_schema(), "SsaProbe");
    let t49 = "2026-11-21T07:24:49Z";
    let body = |spec: Value| json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "self"}, "spec": spec});
    s.create("same", body(json!({"a": 1, "b": {"c": 1}})), t(t49));
    let (msg, _) = conflict_of(s.apply("same", "", body(json!({"a": 2})), false, t(t49)));
    assert_eq!(
        msg,
        "Apply failed with 1 conflict: conflict with \"same\" using probe.example.com/v1: .spec.a"
    );
    s.apply("same", "", body(json!({"a": 1})), false, t(t49))
        .unwrap();
    let update = entry(
        "same",
        "Update",
        Some(t49),
        json!({"f:spec": {".": {}, "f:a": {}, "f:b": {".": {}, "f:c": {}}}}),
    );
    assert_eq!(
        s.managed(),
        json!([
            entry("same", "Apply", None, json!({"f:spec": {"f:a": {}}})),
            update.clone()
        ])
    );
    let status = json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "self"}, "status": {"s": 1}});
    s.apply("same", "status", status, false, t(t49)).unwrap();
    let on_status = status_entry("same", "Apply", Some(t49), json!({"f:status": {"f:s": {}}}));
    assert_eq!(
        s.managed(),
        json!([
            entry("same", "Apply", None, json!({"f:spec": {"f:a": {}}})),
            on_status.clone(),
            update.clone()
        ])
    );
    // Applying nothing drops the applier's entry; the Update owner keeps `a`.
    s.apply(
        "same",
        "",
        json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "self"}}),
        false,
        t(t49),
    )
    .unwrap();
    assert_eq!(s.managed(), json!([on_status, update]));
    assert_eq!(s.object["spec"], json!({"a": 1, "b": {"c": 1}}));
}

#[test]
fn atomic_values_sets_and_keyed_lists() {
    let mut s = Server::new(lists_schema(), "SsaList");
    let body = |spec: Value| json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l3"}, "spec": spec});
    let t53 = "2026-11-21T07:24:53Z";
    s.apply("mgr-a", "", body(json!({"atomicList": ["a", "b"], "atomicMap": {"a": "1", "b": "2"}, "setList": ["x", "y"],
        "mapList": [{"name": "p", "v": "1"}, {"name": "q", "v": "2"}], "multiKey": [{"port": 80, "protocol": "TCP"}], "replicas": 3})),
        false, t(t53)).unwrap();
    let a = entry(
        "mgr-a",
        "Apply",
        Some(t53),
        json!({"f:spec": {"f:atomicList": {}, "f:atomicMap": {},
        "f:mapList": {"k:{\"name\":\"p\"}": {".": {}, "f:name": {}, "f:v": {}}, "k:{\"name\":\"q\"}": {".": {}, "f:name": {}, "f:v": {}}},
        "f:multiKey": {"k:{\"port\":80,\"protocol\":\"TCP\"}": {".": {}, "f:port": {}, "f:protocol": {}}},
        "f:replicas": {}, "f:setList": {"v:\"x\"": {}, "v:\"y\"": {}}}}),
    );
    assert_eq!(s.managed(), json!([a.clone()]));

    let (msg, _) = conflict_of(s.apply(
        "mgr-b",
        "",
        body(json!({"atomicList": ["c"], "atomicMap": {"a": "1"}})),
        false,
        t(t53),
    ));
    assert_eq!(
        msg,
        "Apply failed with 2 conflicts: conflicts with \"mgr-a\":\n- .spec.atomicList\n- .spec.atomicMap"
    );
    s.apply(
        "mgr-b",
        "",
        body(json!({"atomicList": ["a", "b"], "atomicMap": {"a": "1", "b": "2"}})),
        false,
        t(t53),
    )
    .unwrap();
    assert_eq!(
        s.managed()[0],
        entry(
            "mgr-b",
            "Apply",
            None,
            json!({"f:spec": {"f:atomicList": {}, "f:atomicMap": {}}})
        )
    );

    let t54 = "2026-11-21T07:24:54Z";
    s.apply("mgr-b", "", body(json!({"setList": ["w", "y", "z"], "mapList": [{"name": "o", "v": "0"}, {"name": "q", "w": "b"}, {"name": "r"}],
        "multiKey": [{"port": 80, "protocol": "UDP"}]})), false, t(t54)).unwrap();
    assert_eq!(
        s.managed(),
        json!([
            a,
            entry(
                "mgr-b",
                "Apply",
                Some(t54),
                json!({"f:spec": {
            "f:mapList": {"k:{\"name\":\"o\"}": {".": {}, "f:name": {}, "f:v": {}}, "k:{\"name\":\"q\"}": {".": {}, "f:name": {}, "f:w": {}},
                "k:{\"name\":\"r\"}": {".": {}, "f:name": {}}},
            "f:multiKey": {"k:{\"port\":80,\"protocol\":\"UDP\"}": {".": {}, "f:port": {}, "f:protocol": {}}},
            "f:setList": {"v:\"w\"": {}, "v:\"y\"": {}, "v:\"z\"": {}}}})
            )
        ])
    );
    assert_eq!(
        s.body(),
        json!({"spec": {"atomicList": ["a", "b"], "atomicMap": {"a": "1", "b": "2"},
            "mapList": [{"name": "p", "v": "1"}, {"name": "o", "v": "0"}, {"name": "q", "v": "2", "w": "b"}, {"name": "r"}],
            "multiKey": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"}], "replicas": 3, "setList": ["x", "w", "y", "z"]}})
    );

    let meta = json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l3",
        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "cm", "uid": "1234"}],
        "finalizers": ["a.com/b"], "annotations": {"x": "y"}}});
    let t12 = "2026-11-21T07:25:12Z";
    s.apply("mgr-o", "", meta, false, t(t12)).unwrap();
    assert_eq!(
        s.managed()[2],
        entry(
            "mgr-o",
            "Apply",
            Some(t12),
            json!({"f:metadata": {"f:annotations": {"f:x": {}},
            "f:finalizers": {"v:\"a.com/b\"": {}}, "f:ownerReferences": {"k:{\"uid\":\"1234\"}": {}}}})
        )
    );
}

#[test]
fn apply_errors() {
    let mut s = Server::new(lists_schema(), "SsaList");
    let now = t("2026-11-21T07:25:00Z");
    let err = |s: &mut Server, body: Value| s.apply("mgr-d", "", body, false, now).unwrap_err();
    let with = |api: Value, kind: Value| {
        let mut b = json!({"metadata": {"name": "l3"}});
        if !api.is_null() {
            b["apiVersion"] = api;
        }
        if !kind.is_null() {
            b["kind"] = kind;
        }
        b
    };
    for (body, msg) in [
        (
            with(json!("probe.example.com/v2"), json!("SsaList")),
            "invalid object type: probe.example.com/v2, Kind=SsaList",
        ),
        (
            with(json!("other.example.com/v1"), json!("SsaList")),
            "invalid object type: other.example.com/v1, Kind=SsaList",
        ),
        (
            with(json!(API), json!("Other")),
            "invalid object type: probe.example.com/v1, Kind=Other",
        ),
        (
            with(json!(API), Value::Null),
            "invalid object type: probe.example.com/v1, Kind=",
        ),
        (
            with(Value::Null, json!("SsaList")),
            "invalid object type: /, Kind=SsaList",
        ),
    ] {
        let e = err(&mut s, body);
        assert_eq!(
            (e.code(), reason(&e), e.message().as_str()),
            (400, "BadRequest", msg)
        );
    }
    let e = err(
        &mut s,
        json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l3", "managedFields": []}}),
    );
    assert_eq!(
        (e.code(), e.message()),
        (400, "metadata.managedFields must be nil".to_owned())
    );

    let prefix = "failed to create typed patch object (/l3; probe.example.com/v1, Kind=SsaList): ";
    for (spec, msg) in [
        (
            json!({"mapList": [{"name": "p", "v": "1"}, {"name": "p", "v": "2"}]}),
            ".spec.mapList: duplicate entries for key [name=\"p\"]",
        ),
        (
            json!({"setList": ["x", "x"]}),
            ".spec.setList: duplicate entries for key [=\"x\"]",
        ),
        (
            json!({"mapList": [{"v": "1"}]}),
            ".spec.mapList: element 0: associative list with keys has an element that omits all key fields [\"name\"] (and doesn't have default values for any key fields)",
        ),
        (
            json!({"replicas": "x"}),
            ".spec.replicas: expected numeric (int or float), got string",
        ),
        (
            json!({"nested": [1]}),
            ".spec.nested: expected map, got &{[1]}",
        ),
    ] {
        let e = err(
            &mut s,
            json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l3"}, "spec": spec}),
        );
        assert_eq!(
            (e.code(), reason(&e), e.message()),
            (500, "", format!("{prefix}{msg}"))
        );
    }
}

#[test]
fn emptied_lists_and_maps() {
    let mut s = Server::new(lists_schema(), "SsaList");
    let body = |spec: Value| json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l4"}, "spec": spec});
    let t32 = "2026-11-21T07:31:32Z";
    s.apply("mgr-a", "", body(json!({"setList": ["s1"], "mapList": [{"name": "a"}], "granularMap": {"g": "1"}, "replicas": 1})), false, t(t32))
        .unwrap();
    // `setList: []` owns nothing, so the applied item is pruned and the key goes away.
    s.apply("mgr-a", "", body(json!({"setList": [], "mapList": [{"name": "a"}], "granularMap": {"g": "1"}, "replicas": 1})), false, t(t32))
        .unwrap();
    let fields = json!({"f:spec": {"f:granularMap": {"f:g": {}}, "f:mapList": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}}, "f:replicas": {}}});
    assert_eq!(
        s.managed(),
        json!([entry("mgr-a", "Apply", Some(t32), fields)])
    );
    assert_eq!(
        s.body(),
        json!({"spec": {"granularMap": {"g": "1"}, "mapList": [{"name": "a"}], "replicas": 1}})
    );
    // `granularMap: {}` owns the map but not `g`: `g` is pruned and the map left empty, as
    // kube-apiserver v1.36.2 answers (an older structured-merge-diff left `null`, then 422).
    let out = apply(
        Some(&s.object),
        &body(json!({"mapList": [{"name": "a"}], "granularMap": {}, "replicas": 1})),
        &ManagedFields::from_object(&s.object).unwrap(),
        &s.request("mgr-a", "", t(t32), &reset_fields("", true)),
        false,
        &s.schema,
    )
    .unwrap();
    assert_eq!(out.object["spec"]["granularMap"], json!({}));
    // Undeclared fields are refused.
    for (b, field) in [
        (
            json!({"apiVersion": API, "kind": "SsaList", "metadata": {"name": "l4", "bogus": 1}, "spec": {"replicas": 1}}),
            ".metadata.bogus",
        ),
        (body(json!({"replicas": 1, "bogus": 1})), ".spec.bogus"),
    ] {
        let e = s.apply("mgr-a", "", b, false, t(t32)).unwrap_err();
        assert_eq!(
            e.message(),
            format!(
                "failed to create typed patch object (/l4; probe.example.com/v1, Kind=SsaList): {field}: field not declared in schema"
            )
        );
    }
    // A PUT without `replicas` takes it from the applier.
    let mut put = s.object.clone();
    put["spec"].as_object_mut().unwrap().remove("replicas");
    s.put("putter", put, t(t32));
    let fields = json!({"f:spec": {"f:granularMap": {"f:g": {}}, "f:mapList": {"k:{\"name\":\"a\"}": {".": {}, "f:name": {}}}}});
    assert_eq!(
        s.managed(),
        json!([entry("mgr-a", "Apply", Some(t32), fields)])
    );
}

#[test]
fn updates_that_gain_nothing() {
    let mut s = Server::new(probes_schema(), "SsaProbe");
    let t38 = "2026-11-21T07:31:38Z";
    s.create("creator", json!({"apiVersion": API, "kind": "SsaProbe", "metadata": {"name": "rm"}, "spec": {"a": 1, "b": 2, "m": {"k": 1}}}), t(t38));
    // Only removals: the remover gets no entry, the owner loses the fields.
    s.patch(
        "remover",
        "",
        json!({"spec": {"a": null, "m": null}}),
        t("2026-11-21T07:31:39Z"),
    );
    let creator = entry(
        "creator",
        "Update",
        Some(t38),
        json!({"f:spec": {".": {}, "f:b": {}}}),
    );
    assert_eq!(s.managed(), json!([creator.clone()]));
    // Rewriting an owned value unchanged: no write, no new time.
    let writes = s.writes;
    s.patch(
        "creator",
        "",
        json!({"spec": {"b": 2}}),
        t("2026-11-21T07:31:40Z"),
    );
    assert_eq!(s.writes, writes);
    // A status write by the same manager is a separate entry; the new subtree is a member.
    let t41 = "2026-11-21T07:31:41Z";
    s.patch("creator", "status", json!({"status": {"s": 1}}), t(t41));
    assert_eq!(
        s.managed(),
        json!([
            creator,
            status_entry(
                "creator",
                "Update",
                Some(t41),
                json!({"f:status": {".": {}, "f:s": {}}})
            )
        ])
    );
}
