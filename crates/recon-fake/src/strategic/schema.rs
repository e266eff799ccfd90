//! Patch metadata of built-in kinds: the `patchStrategy` and `patchMergeKey`
//! struct tags of `k8s.io/api` (`core/v1`, `apps/v1`, `batch/v1`, `policy/v1`,
//! `autoscaling/v2`) and `k8s.io/apimachinery` `pkg/apis/meta/v1/types.go`,
//! read from the types at kubernetes/api@10b39a39 and
//! kubernetes/apimachinery@eed236ce.
//!
//! Only fields whose tags change the merge, and the struct fields leading to
//! them, are listed; every other field behaves like an untagged one (objects
//! merge key by key, lists are replaced). A few untagged fields are listed on
//! purpose to document that they are replaced (`managedFields`,
//! `tolerations`, `spec.finalizers` of a Namespace).

/// The patch strategy of one field.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PatchStrategy {
    /// No tag: an object merges key by key, a list is replaced by the patch's list.
    Default,
    /// `patchStrategy:"merge"` with `patchMergeKey:"<key>"`: a list of objects
    /// merged element by element, matching elements on `key`.
    Merge {
        /// The merge key (`patchMergeKey`).
        key: &'static str,
    },
    /// `patchStrategy:"merge"` without a merge key: a list of scalars merged as
    /// a set (existing values kept, new ones added, duplicates dropped).
    MergePrimitive,
    /// `patchStrategy:"replace"` on an object field: the patch's object
    /// replaces the stored one (policy/v1 `PodDisruptionBudgetSpec.selector`).
    Replace,
}

/// Patch metadata of one built-in kind, keyed by JSON field paths.
#[derive(Debug)]
pub struct PatchSchema {
    group: &'static str,
    kind: &'static str,
    root: &'static Node,
}

impl PatchSchema {
    pub(super) fn cursor(&self) -> Cursor {
        Cursor(Some(self.root))
    }
}

/// The fields of one Go struct that matter to the merge.
#[derive(Debug)]
pub(super) struct Node {
    fields: &'static [Field],
}

impl Node {
    fn field(&self, name: &str) -> Option<&'static Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// One struct field: its JSON name, tags, and the struct it (or, for a list,
/// its element) is, when that struct has listed fields.
#[derive(Debug)]
pub(super) struct Field {
    name: &'static str,
    strategy: PatchStrategy,
    /// Whether the tag also carries `retainKeys`. Only the tests read it: the
    /// server honours a `$retainKeys` directive on any object.
    #[cfg(test)]
    retain_keys: bool,
    child: Option<&'static Node>,
}

/// Position in the schema while merging: the struct whose fields are being
/// merged, or `None` below an unlisted field.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cursor(Option<&'static Node>);

impl Cursor {
    /// `LookupPatchMetadataForStruct`/`ForSlice`: the schema of `key`'s value
    /// (of its elements for a list) and its strategy.
    pub(super) fn field(self, key: &str) -> (Cursor, PatchStrategy) {
        match self.0.and_then(|n| n.field(key)) {
            Some(f) => (Cursor(f.child), f.strategy),
            None => (Cursor(None), PatchStrategy::Default),
        }
    }
}

const fn obj(name: &'static str, child: &'static Node) -> Field {
    Field {
        name,
        strategy: PatchStrategy::Default,
        #[cfg(test)]
        retain_keys: false,
        child: Some(child),
    }
}

const fn string_map(name: &'static str) -> Field {
    Field {
        name,
        strategy: PatchStrategy::Default,
        #[cfg(test)]
        retain_keys: false,
        child: None,
    }
}

const fn replace_list(name: &'static str) -> Field {
    string_map(name)
}

const fn keyed(name: &'static str, key: &'static str, child: Option<&'static Node>) -> Field {
    Field {
        name,
        strategy: PatchStrategy::Merge { key },
        #[cfg(test)]
        retain_keys: false,
        child,
    }
}

const fn keyed_retain(
    name: &'static str,
    key: &'static str,
    child: Option<&'static Node>,
) -> Field {
    Field {
        name,
        strategy: PatchStrategy::Merge { key },
        #[cfg(test)]
        retain_keys: true,
        child,
    }
}

const fn set(name: &'static str) -> Field {
    Field {
        name,
        strategy: PatchStrategy::MergePrimitive,
        #[cfg(test)]
        retain_keys: false,
        child: None,
    }
}

// --- meta/v1 -------------------------------------------------------------

/// `ObjectMeta`: `finalizers` `patchStrategy:"merge"`, `ownerReferences`
/// `patchStrategy:"merge" patchMergeKey:"uid"`; `managedFields` untagged.
static OBJECT_META: Node = Node {
    fields: &[
        string_map("labels"),
        string_map("annotations"),
        set("finalizers"),
        keyed("ownerReferences", "uid", None),
        replace_list("managedFields"),
    ],
};

static META_ONLY: Node = Node {
    fields: &[obj("metadata", &OBJECT_META)],
};

/// Any status whose only tagged field is `conditions` keyed by `type`
/// (Deployment, ReplicaSet, StatefulSet, DaemonSet, ReplicationController,
/// Job, Namespace, Service (`metav1.Condition`), PodDisruptionBudget,
/// HorizontalPodAutoscaler v2).
static CONDITIONS_STATUS: Node = Node {
    fields: &[keyed("conditions", "type", None)],
};

// --- core/v1 pods ----------------------------------------------------------

/// `Container` and `EphemeralContainerCommon`.
static CONTAINER: Node = Node {
    fields: &[
        keyed("ports", "containerPort", None),
        keyed("env", "name", None),
        keyed("volumeMounts", "mountPath", None),
        keyed("volumeDevices", "devicePath", None),
    ],
};

static PVC_TEMPLATE: Node = Node {
    fields: &[obj("metadata", &OBJECT_META)],
};

static EPHEMERAL_VOLUME_SOURCE: Node = Node {
    fields: &[obj("volumeClaimTemplate", &PVC_TEMPLATE)],
};

/// `Volume` (its `VolumeSource` is inlined).
static VOLUME: Node = Node {
    fields: &[obj("ephemeral", &EPHEMERAL_VOLUME_SOURCE)],
};

static POD_SPEC: Node = Node {
    fields: &[
        keyed_retain("volumes", "name", Some(&VOLUME)),
        keyed("initContainers", "name", Some(&CONTAINER)),
        keyed("containers", "name", Some(&CONTAINER)),
        keyed("ephemeralContainers", "name", Some(&CONTAINER)),
        keyed("imagePullSecrets", "name", None),
        keyed("hostAliases", "ip", None),
        keyed("topologySpreadConstraints", "topologyKey", None),
        keyed("schedulingGates", "name", None),
        keyed_retain("resourceClaims", "name", None),
        // Alpha since 1.37.
        keyed("evictionResponders", "name", None),
        replace_list("tolerations"),
    ],
};

static NODE_ALLOCATABLE_CLAIM_STATUS: Node = Node {
    fields: &[
        keyed("mapping", "name", None),
        keyed("overhead", "name", None),
    ],
};

static POD_STATUS: Node = Node {
    fields: &[
        keyed("conditions", "type", None),
        keyed("podIPs", "ip", None),
        keyed("hostIPs", "ip", None),
        keyed_retain("resourceClaimStatuses", "name", None),
        keyed(
            "nodeAllocatableResourceClaimStatuses",
            "resourceClaimName",
            Some(&NODE_ALLOCATABLE_CLAIM_STATUS),
        ),
    ],
};

static POD: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &POD_SPEC),
        obj("status", &POD_STATUS),
    ],
};

static POD_TEMPLATE_SPEC: Node = Node {
    fields: &[obj("metadata", &OBJECT_META), obj("spec", &POD_SPEC)],
};

static POD_TEMPLATE: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("template", &POD_TEMPLATE_SPEC),
    ],
};

// --- workloads -------------------------------------------------------------

/// `spec` of ReplicaSet, StatefulSet, DaemonSet and ReplicationController:
/// only the pod template has tagged fields (StatefulSet's
/// `volumeClaimTemplates` is untagged, hence replaced).
static TEMPLATED_SPEC: Node = Node {
    fields: &[obj("template", &POD_TEMPLATE_SPEC)],
};

static TEMPLATED_WORKLOAD: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &TEMPLATED_SPEC),
        obj("status", &CONDITIONS_STATUS),
    ],
};

/// `DeploymentSpec.strategy` is `patchStrategy:"retainKeys"`.
static DEPLOYMENT_SPEC: Node = Node {
    fields: &[
        Field {
            name: "strategy",
            strategy: PatchStrategy::Default,
            #[cfg(test)]
            retain_keys: true,
            child: None,
        },
        obj("template", &POD_TEMPLATE_SPEC),
    ],
};

static DEPLOYMENT: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &DEPLOYMENT_SPEC),
        obj("status", &CONDITIONS_STATUS),
    ],
};

/// `JobSchedulingConfiguration` (alpha).
static JOB_SCHEDULING: Node = Node {
    fields: &[keyed("resourceClaims", "name", None)],
};

static JOB_SPEC: Node = Node {
    fields: &[
        obj("template", &POD_TEMPLATE_SPEC),
        obj("scheduling", &JOB_SCHEDULING),
    ],
};

static JOB: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &JOB_SPEC),
        obj("status", &CONDITIONS_STATUS),
    ],
};

static JOB_TEMPLATE_SPEC: Node = Node {
    fields: &[obj("metadata", &OBJECT_META), obj("spec", &JOB_SPEC)],
};

static CRON_JOB_SPEC: Node = Node {
    fields: &[obj("jobTemplate", &JOB_TEMPLATE_SPEC)],
};

static CRON_JOB: Node = Node {
    fields: &[obj("metadata", &OBJECT_META), obj("spec", &CRON_JOB_SPEC)],
};

// --- other core/v1 kinds -----------------------------------------------------

static SERVICE_SPEC: Node = Node {
    fields: &[keyed("ports", "port", None)],
};

static SERVICE: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &SERVICE_SPEC),
        obj("status", &CONDITIONS_STATUS),
    ],
};

/// `NamespaceSpec.finalizers` is untagged: replaced, unlike `metadata.finalizers`.
static NAMESPACE_SPEC: Node = Node {
    fields: &[replace_list("finalizers")],
};

static NAMESPACE: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &NAMESPACE_SPEC),
        obj("status", &CONDITIONS_STATUS),
    ],
};

/// `ServiceAccount.secrets` is keyed by `name`; `imagePullSecrets` is untagged.
static SERVICE_ACCOUNT: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        keyed("secrets", "name", None),
        replace_list("imagePullSecrets"),
    ],
};

static NODE_SPEC: Node = Node {
    fields: &[set("podCIDRs")],
};

static NODE_STATUS: Node = Node {
    fields: &[
        keyed("addresses", "type", None),
        keyed("conditions", "type", None),
    ],
};

static NODE: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &NODE_SPEC),
        obj("status", &NODE_STATUS),
    ],
};

static VOLUME_HEALTH_STATUS: Node = Node {
    fields: &[keyed("healthConditions", "status", None)],
};

static PVC_STATUS: Node = Node {
    fields: &[
        keyed("conditions", "type", None),
        obj("healthStatus", &VOLUME_HEALTH_STATUS),
    ],
};

static PVC: Node = Node {
    fields: &[obj("metadata", &OBJECT_META), obj("status", &PVC_STATUS)],
};

// --- policy/v1 ---------------------------------------------------------------

/// `PodDisruptionBudgetSpec.selector` is `patchStrategy:"replace"`.
static PDB_SPEC: Node = Node {
    fields: &[Field {
        name: "selector",
        strategy: PatchStrategy::Replace,
        #[cfg(test)]
        retain_keys: false,
        child: None,
    }],
};

static PDB: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("spec", &PDB_SPEC),
        obj("status", &CONDITIONS_STATUS),
    ],
};

/// autoscaling/v2 `HorizontalPodAutoscalerStatus.conditions` keyed by `type`.
static HPA: Node = Node {
    fields: &[
        obj("metadata", &OBJECT_META),
        obj("status", &CONDITIONS_STATUS),
    ],
};

const fn kind(group: &'static str, kind: &'static str, root: &'static Node) -> PatchSchema {
    PatchSchema { group, kind, root }
}

static SCHEMAS: &[PatchSchema] = &[
    kind("", "Pod", &POD),
    kind("", "PodTemplate", &POD_TEMPLATE),
    kind("", "ReplicationController", &TEMPLATED_WORKLOAD),
    kind("", "Service", &SERVICE),
    kind("", "ConfigMap", &META_ONLY),
    kind("", "Secret", &META_ONLY),
    kind("", "Namespace", &NAMESPACE),
    kind("", "ServiceAccount", &SERVICE_ACCOUNT),
    kind("", "Event", &META_ONLY),
    kind("", "Node", &NODE),
    kind("", "PersistentVolume", &META_ONLY),
    kind("", "PersistentVolumeClaim", &PVC),
    kind("", "Endpoints", &META_ONLY),
    kind("", "LimitRange", &META_ONLY),
    kind("", "ResourceQuota", &META_ONLY),
    kind("apps", "Deployment", &DEPLOYMENT),
    kind("apps", "ReplicaSet", &TEMPLATED_WORKLOAD),
    kind("apps", "StatefulSet", &TEMPLATED_WORKLOAD),
    kind("apps", "DaemonSet", &TEMPLATED_WORKLOAD),
    kind("batch", "Job", &JOB),
    kind("batch", "CronJob", &CRON_JOB),
    kind("policy", "PodDisruptionBudget", &PDB),
    kind("autoscaling", "HorizontalPodAutoscaler", &HPA),
    kind("events.k8s.io", "Event", &META_ONLY),
    kind("coordination.k8s.io", "Lease", &META_ONLY),
    kind("discovery.k8s.io", "EndpointSlice", &META_ONLY),
    kind("networking.k8s.io", "Ingress", &META_ONLY),
    kind("networking.k8s.io", "IngressClass", &META_ONLY),
    kind("networking.k8s.io", "NetworkPolicy", &META_ONLY),
    kind("rbac.authorization.k8s.io", "Role", &META_ONLY),
    kind("rbac.authorization.k8s.io", "ClusterRole", &META_ONLY),
    kind("rbac.authorization.k8s.io", "RoleBinding", &META_ONLY),
    kind(
        "rbac.authorization.k8s.io",
        "ClusterRoleBinding",
        &META_ONLY,
    ),
    kind("scheduling.k8s.io", "PriorityClass", &META_ONLY),
    kind("storage.k8s.io", "StorageClass", &META_ONLY),
];

static METADATA_ONLY: PatchSchema = kind("", "", &META_ONLY);

/// The patch metadata of a built-in kind (`group` is `""` for the core group),
/// or `None` for a kind not in the table.
///
/// The table is version-agnostic: it follows the preferred versions (`v1`,
/// `apps/v1`, `batch/v1`, `policy/v1`, `autoscaling/v2`).
pub fn schema_for(group: &str, kind: &str) -> Option<&'static PatchSchema> {
    SCHEMAS.iter().find(|s| s.group == group && s.kind == kind)
}

/// A schema knowing only `metadata` (`ObjectMeta`), usable for built-in kinds
/// missing from [`schema_for`] whose other fields carry no patch tags.
pub fn metadata_only() -> &'static PatchSchema {
    &METADATA_ONLY
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;
    use recon_apimachinery::json;
    use recon_apimachinery::json::{Map, Value};

    use super::*;

    fn schema(group: &str, kind: &str) -> &'static PatchSchema {
        schema_for(group, kind).expect("kind in table")
    }

    fn pod() -> &'static PatchSchema {
        schema("", "Pod")
    }

    /// How a list field is patched.
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    enum ListStrategy {
        /// The patch's list replaces the stored list.
        Replace,
        /// Element-wise merge of a list of objects on `key`.
        Merge {
            /// The merge key (`patchMergeKey`).
            key: &'static str,
        },
        /// Set-union merge of a list of scalars.
        MergePrimitive,
    }

    /// Patch metadata of one field, as returned by [`lookup`].
    #[derive(Clone, Copy, Debug, PartialEq, Eq)]
    struct FieldMeta {
        /// The field's patch strategy.
        strategy: PatchStrategy,
        /// Whether the tag also carries `retainKeys` (`patchStrategy:"retainKeys"`
        /// or `"merge,retainKeys"`). It only matters to clients that build
        /// patches; the server honours a `$retainKeys` directive on any object.
        retain_keys: bool,
        /// Whether the path names a field listed in the table (unlisted fields are
        /// reported as [`PatchStrategy::Default`]).
        known: bool,
    }

    impl FieldMeta {
        /// The strategy the field has when it holds a list.
        fn list_strategy(&self) -> ListStrategy {
            match self.strategy {
                PatchStrategy::Merge { key } => ListStrategy::Merge { key },
                PatchStrategy::MergePrimitive => ListStrategy::MergePrimitive,
                PatchStrategy::Default | PatchStrategy::Replace => ListStrategy::Replace,
            }
        }
    }

    /// Patch metadata of the field at `path`, a sequence of JSON field names
    /// from the object's root; list elements are stepped through, so
    /// `["spec", "containers", "env"]` is the `env` list of every container.
    fn lookup(schema: &PatchSchema, path: &[&str]) -> FieldMeta {
        let mut node = Some(schema.root);
        let mut meta = FieldMeta {
            strategy: PatchStrategy::Default,
            retain_keys: false,
            known: false,
        };
        for name in path {
            let field = node.and_then(|n| n.field(name));
            meta = match field {
                Some(f) => FieldMeta {
                    strategy: f.strategy,
                    retain_keys: f.retain_keys,
                    known: true,
                },
                None => FieldMeta {
                    strategy: PatchStrategy::Default,
                    retain_keys: false,
                    known: false,
                },
            };
            node = field.and_then(|f| f.child);
        }
        meta
    }

    /// The table as JSON, for inspection: `{"fields": {"<name>": {"strategy":
    /// "default"|"merge"|"mergePrimitive"|"replace", "key": "<mergeKey>",
    /// "retainKeys": bool, "fields": {…}}}}`.
    fn describe(node: &Node) -> Value {
        let mut fields = Map::new();
        for field in node.fields {
            let (strategy, key) = match field.strategy {
                PatchStrategy::Default => ("default", ""),
                PatchStrategy::Merge { key } => ("merge", key),
                PatchStrategy::MergePrimitive => ("mergePrimitive", ""),
                PatchStrategy::Replace => ("replace", ""),
            };
            let mut entry = Map::new();
            entry.insert("strategy".into(), Value::from(strategy));
            entry.insert("key".into(), Value::from(key));
            entry.insert("retainKeys".into(), Value::from(field.retain_keys));
            if let Some(child) = field.child
                && let Value::Object(described) = describe(child)
            {
                entry.extend(described);
            }
            fields.insert(field.name.into(), Value::Object(entry));
        }
        let mut out = Map::new();
        out.insert("fields".into(), Value::Object(fields));
        Value::Object(out)
    }

    #[test]
    fn schema_lookup_reports_the_struct_tags() {
        let deploy = schema("apps", "Deployment");
        let env = lookup(deploy, &["spec", "template", "spec", "containers", "env"]);
        assert_eq!(env.strategy, PatchStrategy::Merge { key: "name" });
        assert_eq!(env.list_strategy(), ListStrategy::Merge { key: "name" });
        assert!(env.known);
        let finalizers = lookup(deploy, &["metadata", "finalizers"]);
        assert_eq!(finalizers.list_strategy(), ListStrategy::MergePrimitive);
        let strategy = lookup(deploy, &["spec", "strategy"]);
        assert!(strategy.retain_keys);
        let volumes = lookup(pod(), &["spec", "volumes"]);
        assert_eq!(
            (volumes.strategy, volumes.retain_keys),
            (PatchStrategy::Merge { key: "name" }, true)
        );
        let tolerations = lookup(pod(), &["spec", "tolerations"]);
        assert_eq!(tolerations.list_strategy(), ListStrategy::Replace);
        let unknown = lookup(pod(), &["spec", "nope", "deeper"]);
        assert!(!unknown.known);
        assert_eq!(
            lookup(pod(), &["spec", "topologySpreadConstraints"]).strategy,
            PatchStrategy::Merge { key: "topologyKey" }
        );
        assert_eq!(
            lookup(
                pod(),
                &[
                    "spec",
                    "volumes",
                    "ephemeral",
                    "volumeClaimTemplate",
                    "metadata",
                    "ownerReferences"
                ]
            )
            .strategy,
            PatchStrategy::Merge { key: "uid" }
        );
    }

    #[test]
    fn every_covered_kind_knows_object_meta() {
        let mut count = 0;
        for (group, kind) in SCHEMAS.iter().map(|s| (s.group, s.kind)) {
            let s = schema(group, kind);
            assert_eq!((s.group, s.kind), (group, kind));
            assert_eq!(
                lookup(s, &["metadata", "ownerReferences"]).strategy,
                PatchStrategy::Merge { key: "uid" },
                "{group}/{kind}"
            );
            count += 1;
        }
        assert!(count >= 30);
        assert!(schema_for("example.com", "Widget").is_none());
        assert_eq!(
            lookup(metadata_only(), &["metadata", "finalizers"]).strategy,
            PatchStrategy::MergePrimitive
        );
    }

    #[test]
    fn describe_lists_the_table() {
        let d = describe(schema("", "Service").root);
        assert_eq!(
            d["fields"]["spec"]["fields"]["ports"],
            json!({"strategy": "merge", "key": "port", "retainKeys": false})
        );
    }
}
