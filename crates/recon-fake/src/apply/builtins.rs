//! Schemas for a few built-in kinds, from a small table of the list and map rules their
//! OpenAPI declares (`+listType`, `+listMapKey`, `+structType=atomic`). Everything not in the
//! table is typed as [`Type::Object`]: granular structs, atomic lists.

use serde_json::json;

use super::schema::{ListKind, ListType, OBJECT_MAP, Scalar, Schema, Type, object_meta};

/// A rule at a dotted path; `[]` steps into list items.
enum Rule {
    /// A list keyed by these fields.
    Keyed(&'static [&'static str]),
    /// A map replaced as a whole.
    AtomicMap,
    /// `metav1.ObjectMeta`.
    Meta,
}

/// Key fields with a default in the OpenAPI (`getAssociativeKeyDefault`).
const KEY_DEFAULTS: &[(&str, &str)] = &[("protocol", "TCP")];

const CONTAINER_LISTS: &[&str] = &["containers", "initContainers", "ephemeralContainers"];

/// Rules inside a container, relative to the container item.
const CONTAINER: &[(&str, Rule)] = &[
    ("ports", Rule::Keyed(&["containerPort", "protocol"])),
    ("env", Rule::Keyed(&["name"])),
    ("volumeMounts", Rule::Keyed(&["mountPath"])),
    ("volumeDevices", Rule::Keyed(&["devicePath"])),
];

/// Rules inside a PodSpec.
const POD_SPEC: &[(&str, Rule)] = &[
    ("volumes", Rule::Keyed(&["name"])),
    ("imagePullSecrets", Rule::Keyed(&["name"])),
    ("hostAliases", Rule::Keyed(&["ip"])),
    ("schedulingGates", Rule::Keyed(&["name"])),
    (
        "topologySpreadConstraints",
        Rule::Keyed(&["topologyKey", "whenUnsatisfiable"]),
    ),
];

/// Rules at dotted paths.
type Rules = &'static [(&'static str, Rule)];

/// `(apiVersion, kind, path of the PodSpec or "", other rules)`.
const KINDS: &[(&str, &str, &str, Rules)] = &[
    (
        "v1",
        "Pod",
        "spec",
        &[("status.conditions", Rule::Keyed(&["type"]))],
    ),
    (
        "v1",
        "PodTemplate",
        "template.spec",
        &[("template.metadata", Rule::Meta)],
    ),
    (
        "v1",
        "Service",
        "",
        &[("spec.ports", Rule::Keyed(&["port", "protocol"]))],
    ),
    ("apps/v1", "Deployment", "spec.template.spec", WORKLOAD),
    ("apps/v1", "ReplicaSet", "spec.template.spec", WORKLOAD),
    ("apps/v1", "StatefulSet", "spec.template.spec", WORKLOAD),
    ("apps/v1", "DaemonSet", "spec.template.spec", WORKLOAD),
    (
        "batch/v1",
        "Job",
        "spec.template.spec",
        &[
            ("spec.template.metadata", Rule::Meta),
            ("spec.selector", Rule::AtomicMap),
        ],
    ),
];

const WORKLOAD: &[(&str, Rule)] = &[
    ("spec.template.metadata", Rule::Meta),
    ("spec.selector", Rule::AtomicMap),
    ("status.conditions", Rule::Keyed(&["type"])),
];

impl Schema {
    /// The schema of a built-in kind: the rules from the table above for the kinds it lists,
    /// struct-like granular maps and atomic lists elsewhere, ObjectMeta under `metadata`.
    pub fn builtin(api_version: &str, kind: &str) -> Schema {
        let mut root = Type::Object;
        set_at(&mut root, &["metadata"], object_meta());
        set_at(&mut root, &["apiVersion"], Type::Scalar(Scalar::String));
        set_at(&mut root, &["kind"], Type::Scalar(Scalar::String));
        if let Some((_, _, pod_spec, rules)) = KINDS
            .iter()
            .find(|(v, k, _, _)| *v == api_version && *k == kind)
        {
            for (path, rule) in rules.iter() {
                apply_rule(&mut root, &split(path), rule);
            }
            if !pod_spec.is_empty() {
                let base = split(pod_spec);
                for (path, rule) in POD_SPEC {
                    apply_rule(&mut root, &join(&base, path), rule);
                }
                for list in CONTAINER_LISTS {
                    let items = join(&base, &format!("{list}[]"));
                    apply_rule(&mut root, &join(&base, list), &Rule::Keyed(&["name"]));
                    for (path, rule) in CONTAINER {
                        apply_rule(&mut root, &join(&items, path), rule);
                    }
                }
            }
        }
        Schema { root }
    }
}

fn split(path: &str) -> Vec<String> {
    path.split('.').map(str::to_owned).collect()
}

fn join(base: &[String], path: &str) -> Vec<String> {
    base.iter().cloned().chain(split(path)).collect()
}

fn apply_rule(root: &mut Type, path: &[String], rule: &Rule) {
    let steps: Vec<&str> = path.iter().map(String::as_str).collect();
    let t = match rule {
        Rule::Meta => object_meta(),
        Rule::AtomicMap => {
            let mut m = OBJECT_MAP.clone();
            m.atomic = true;
            Type::Map(Box::new(m))
        }
        Rule::Keyed(keys) => {
            let mut item = OBJECT_MAP.clone();
            for (k, d) in KEY_DEFAULTS {
                if keys.contains(k) {
                    item.defaults.insert((*k).to_owned(), json!(d));
                }
            }
            Type::List(Box::new(ListType {
                elem: Type::Map(Box::new(item)),
                kind: ListKind::Map(keys.iter().map(|k| (*k).to_owned()).collect()),
            }))
        }
    };
    set_at(root, &steps, t);
}

/// Puts `t` at `path`, turning struct-like placeholders on the way into explicit maps; a
/// step ending in `[]` descends into list items.
fn set_at(node: &mut Type, path: &[&str], t: Type) {
    let Some((first, rest)) = path.split_first() else {
        *node = merge_into(std::mem::replace(node, Type::Object), t);
        return;
    };
    let (name, into_items) = match first.strip_suffix("[]") {
        Some(n) => (n, true),
        None => (*first, false),
    };
    if matches!(node, Type::Object) {
        *node = Type::Map(Box::new(OBJECT_MAP.clone()));
    }
    let Type::Map(m) = node else {
        return;
    };
    let child = m.fields.entry(name.to_owned()).or_insert(Type::Object);
    if into_items {
        if let Type::List(l) = child {
            set_at(&mut l.elem, rest, t);
        }
    } else {
        set_at(child, rest, t);
    }
}

/// A rule landing on an already-refined node keeps that node's children.
fn merge_into(old: Type, new: Type) -> Type {
    match (old, new) {
        (Type::Map(old), Type::Map(mut new)) => {
            for (k, v) in old.fields {
                new.fields.entry(k).or_insert(v);
            }
            Type::Map(new)
        }
        (Type::List(old), Type::List(mut new)) => {
            new.elem = merge_into(old.elem, new.elem);
            Type::List(new)
        }
        (_, new) => new,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::apply::schema::ListKind;

    fn at<'a>(t: &'a Type, path: &[&str]) -> &'a Type {
        let mut t = t;
        for step in path {
            t = match (t, step.strip_suffix("[]")) {
                (Type::Map(m), None) => m.fields.get(*step).unwrap(),
                (Type::Map(m), Some(n)) => match m.fields.get(n).unwrap() {
                    Type::List(l) => &l.elem,
                    other => panic!("{other:?}"),
                },
                (other, _) => panic!("{other:?} at {step}"),
            };
        }
        t
    }

    #[test]
    fn deployment_rules() {
        let s = Schema::builtin("apps/v1", "Deployment");
        let containers = at(&s.root, &["spec", "template", "spec", "containers"]);
        assert!(
            matches!(containers, Type::List(l) if l.kind == ListKind::Map(vec!["name".into()]))
        );
        let ports = at(
            &s.root,
            &["spec", "template", "spec", "containers[]", "ports"],
        );
        let Type::List(ports) = ports else { panic!() };
        assert_eq!(
            ports.kind,
            ListKind::Map(vec!["containerPort".into(), "protocol".into()])
        );
        let Type::Map(item) = &ports.elem else {
            panic!()
        };
        assert_eq!(item.defaults.get("protocol"), Some(&json!("TCP")));
        assert!(matches!(at(&s.root, &["spec", "selector"]), Type::Map(m) if m.atomic));
        assert!(matches!(
            at(&s.root, &["status", "conditions"]),
            Type::List(_)
        ));
        assert!(
            matches!(at(&s.root, &["spec", "template", "metadata", "finalizers"]), Type::List(l) if l.kind == ListKind::Set)
        );
    }

    #[test]
    fn unknown_kinds_are_struct_like() {
        let s = Schema::builtin("v1", "ConfigMap");
        let Type::Map(root) = &s.root else { panic!() };
        assert!(root.open_struct);
        assert!(root.fields.contains_key("metadata"));
    }
}
