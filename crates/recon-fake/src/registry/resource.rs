//! What the server knows about each resource type: names, scope, and the per-type rules that
//! kube-apiserver keeps in each registry strategy (status subresource, generation, unconditional
//! update, create-on-update, name format, delete answer).

use crate::storage::write_limit::EtcdWrite;
use recon_apimachinery::go_quote;
use recon_apimachinery::json::{Map, Value};
use recon_apimachinery::names::NameRule;

use crate::wire::group::{GroupKind, GroupResource};

/// When `metadata.generation` is set and bumped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GenerationRule {
    /// The type never sets it (ConfigMap, Secret, ...).
    None,
    /// 1 on create; +1 when `spec` changes, and when `metadata.annotations` change if `annotations`
    /// (Deployment, whose annotations are copied to its ReplicaSets).
    Spec { annotations: bool },
    /// Custom resources: 1 on create; +1 when anything outside `metadata` changes (and outside
    /// `status` when the status subresource is on).
    AllButMetadata,
}

/// What a write to `/status` keeps from the stored object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum StatusWrite {
    /// Custom resources: everything but `.status` comes from the stored object.
    OnlyStatus,
    /// Built-ins: the listed top-level fields / metadata fields are reset to the stored values,
    /// the rest of the request is kept (Deployment keeps annotation and finalizer changes).
    Reset {
        fields: &'static [&'static str],
        metadata: &'static [&'static str],
    },
}

/// `PrepareForCreate`-style hook: edits the object in place.
pub(crate) type Prepare = fn(&mut Map);
/// `PrepareForUpdate`-style hook: edits `new` knowing `old`.
pub(crate) type PrepareUpdate = fn(&mut Map, &Map);
/// Type-specific validation of an object, given the stored one on an update.
pub(crate) type Validate = fn(&Map, Option<&Map>) -> Vec<crate::field::FieldError>;
/// `CheckGracefulDelete`: the grace period for a delete that asked for so many seconds.
pub(crate) type GracePeriod = fn(&Map, Option<i64>) -> i64;
/// The part of `PrepareForCreate` / `PrepareForUpdate` that reads the clock: `(new, old, now)`,
/// `old` absent on a create, `now` an RFC 3339 time.
pub(crate) type Stamp = fn(&mut Map, Option<&Map>, &Value);

/// A built-in's conversion between two of its versions: `(object, from, to)`, the object's
/// `apiVersion` included.
pub(crate) type Convert = fn(&mut Map, &str, &str);

/// Per-type hooks for the built-ins whose strategy does more than a table can say.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct TypeHooks {
    /// `PrepareForCreate` beyond the generic rules (defaults, initial status); the object already
    /// has its name and uid.
    pub(crate) prepare_create: Option<Prepare>,
    /// `PrepareForUpdate` beyond the generic rules: `(new, old)`.
    pub(crate) prepare_update: Option<PrepareUpdate>,
    /// The status strategy's `PrepareForUpdate` beyond resetting the fields it keeps:
    /// `(new, old)`.
    pub(crate) prepare_status_update: Option<PrepareUpdate>,
    /// Type-specific validation run by the strategy on create and update (with the stored
    /// object).
    pub(crate) validate: Option<Validate>,
    /// `CheckGracefulDelete`: the grace period for a delete that asked for `requested` seconds,
    /// `None` when the type deletes without grace.
    pub(crate) grace_period: Option<GracePeriod>,
    /// Times the strategy writes on every create and update, after the other preparations.
    pub(crate) stamp: Option<Stamp>,
    /// How a type served at several versions converts between them; requests through a
    /// version other than the storage one convert ([`super::conversion`]).
    pub(crate) convert: Option<Convert>,
    /// `PrepareForCreate`'s record of who asked (a CertificateSigningRequest's requester),
    /// after [`TypeHooks::prepare_create`].
    pub(crate) requester: Option<Requester>,
}

/// Writes the requesting user into a new object.
pub(crate) type Requester = fn(&mut Map, &crate::user::UserInfo);

/// The default propagation of a delete (`DefaultGarbageCollectionPolicy`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum GcPolicy {
    /// Background: no finalizer unless the request asks for one.
    DeleteDependents,
    /// batch/v1 Job: the `orphan` finalizer unless the request says otherwise.
    OrphanDependents,
    /// Event: propagation options are ignored, no GC finalizer is ever added.
    Unsupported,
}

/// Types whose DELETE the registry overrides.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DeleteBehavior {
    /// The generic store.
    Standard,
    /// Namespace: the first delete marks it Terminating; it goes once `spec.finalizers` empties.
    Namespace,
    /// CustomResourceDefinition: the first delete adds the cleanup finalizer and a Terminating
    /// condition; the apiextensions controllers then remove the instances and the CRD.
    CustomResourceDefinition,
}

/// The field selectors a type supports: `metadata.name`, `metadata.namespace` (unless
/// `no_namespace`), and `extra`, each with the JSON path it reads.
#[derive(Debug, Clone, Default)]
pub(crate) struct FieldLabels {
    pub(crate) extra: Vec<(String, Vec<String>)>,
    /// The type's conversion function rejects `metadata.namespace` (Namespace).
    pub(crate) no_namespace: bool,
    /// How an unsupported field label is reported.
    pub(crate) unsupported: UnsupportedField,
}

/// The two wordings of "this field selector is not supported".
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum UnsupportedField {
    /// A type-specific conversion function: `field label not supported: <label>`.
    #[default]
    NotSupported,
    /// `runtime.DefaultMetaV1FieldSelectorConversion`.
    DefaultConversion,
    /// Job's own wording: `field label "<label>" not supported for Job`.
    NotSupportedForJob,
    /// The wording naming the group, version and kind (`resource.k8s.io/v1, Kind=...`):
    /// `field label not supported for <gvk>: <label>`.
    NotSupportedFor(&'static str),
}

impl FieldLabels {
    /// The value of `label` on `object`, or `Err` with the apiserver's message when the type does
    /// not support that label. A cluster-scoped object's `metadata.namespace` is the empty string.
    pub(crate) fn value(&self, label: &str, object: &Map) -> Result<String, String> {
        let path: Vec<&str> = match label {
            "metadata.name" => vec!["metadata", "name"],
            "metadata.namespace" if !self.no_namespace => vec!["metadata", "namespace"],
            _ => match self.extra.iter().find(|(l, _)| l == label) {
                Some((_, path)) => path.iter().map(String::as_str).collect(),
                None => return Err(self.unsupported_message(label)),
            },
        };
        let mut current = object.get(path[0]);
        for key in &path[1..] {
            current = current.and_then(|v| v.get(*key));
        }
        Ok(match current {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => b.to_string(),
            Some(Value::Number(n)) => n.to_string(),
            _ => String::new(),
        })
    }

    fn unsupported_message(&self, label: &str) -> String {
        match self.unsupported {
            UnsupportedField::NotSupported => format!("field label not supported: {label}"),
            UnsupportedField::DefaultConversion => format!(
                "{} is not a known field selector: only \"metadata.name\", \"metadata.namespace\"",
                go_quote(label)
            ),
            UnsupportedField::NotSupportedForJob => {
                format!("field label {} not supported for Job", go_quote(label))
            }
            UnsupportedField::NotSupportedFor(gvk) => {
                format!("field label not supported for {gvk}: {label}")
            }
        }
    }
}

/// The structural schema field management follows for a version: a CRD's, converted as the CRD
/// is served; a built-in kind's, converted from the recorded OpenAPI the first time a write of
/// that version needs it, once per process (every server shares the built-in types), so a
/// process converts only the kinds its tests write.
#[derive(Debug, Clone)]
pub(crate) enum FieldSchema {
    Converted(std::sync::Arc<crate::apply::Schema>),
    Builtin(std::sync::Arc<BuiltinFieldSchema>),
}

/// A built-in kind's [`FieldSchema`], converted when first read.
#[derive(Debug)]
pub(crate) struct BuiltinFieldSchema {
    api_version: String,
    kind: String,
    converted: std::sync::OnceLock<std::sync::Arc<crate::apply::Schema>>,
}

impl FieldSchema {
    /// The schema of built-in `kind` at `api_version`, converted when first read.
    pub(crate) fn builtin(api_version: String, kind: &str) -> FieldSchema {
        FieldSchema::Builtin(std::sync::Arc::new(BuiltinFieldSchema {
            api_version,
            kind: kind.to_owned(),
            converted: std::sync::OnceLock::new(),
        }))
    }

    /// The schema.
    pub(crate) fn get(&self) -> std::sync::Arc<crate::apply::Schema> {
        match self {
            FieldSchema::Converted(schema) => schema.clone(),
            FieldSchema::Builtin(lazy) => lazy
                .converted
                .get_or_init(|| {
                    std::sync::Arc::new(crate::apply::Schema::builtin(
                        &lazy.api_version,
                        &lazy.kind,
                    ))
                })
                .clone(),
        }
    }
}

/// A built-in kind's schema is the same as another of the same kind and version, converted or
/// not; a CRD's compares as converted.
impl PartialEq for FieldSchema {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (FieldSchema::Converted(a), FieldSchema::Converted(b)) => a == b,
            (FieldSchema::Builtin(a), FieldSchema::Builtin(b)) => {
                (&a.api_version, &a.kind) == (&b.api_version, &b.kind)
            }
            _ => false,
        }
    }
}

/// One served version of a resource.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ServedVersion {
    pub(crate) name: String,
    /// Whether this version serves the `status` subresource.
    pub(crate) status: bool,
    /// The structural schema field management follows (list and map types): a CRD's, or a
    /// built-in type's table.
    pub(crate) schema: Option<FieldSchema>,
    /// Whether discovery lists the `scale` subresource at this version (a CRD that declares it).
    pub(crate) scale: bool,
    /// The schema custom resources of this version are validated against (a CRD's).
    pub(crate) validation: Option<std::sync::Arc<crate::schema::CustomResourceSchema>>,
    /// A CRD version's printer columns (`as=Table`).
    pub(crate) columns: Option<std::sync::Arc<crate::table::custom::CustomColumns>>,
}

/// What discovery says about a type beyond its names and scope (R4).
#[derive(Debug, Clone, Default)]
pub(crate) struct DiscoveryInfo {
    /// The verbs of the resource itself, in the order the real server lists them.
    pub(crate) verbs: &'static [&'static str],
    pub(crate) short_names: Vec<String>,
    pub(crate) categories: Vec<String>,
    /// `storageVersionHash`: set when the storage version is served.
    pub(crate) storage_version_hash: Option<String>,
    /// The subresources a built-in serves besides `status`, `scale` and `finalize`.
    pub(crate) subresources: &'static [SubresourceInfo],
}

/// A subresource as discovery lists it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SubresourceInfo {
    pub(crate) name: &'static str,
    /// The kind it answers when not the resource's own.
    pub(crate) answers: Option<OtherKind>,
    pub(crate) verbs: &'static [&'static str],
}

/// A group, version and kind other than a resource's own, which one of its subresources answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct OtherKind {
    pub(crate) group: &'static str,
    pub(crate) version: &'static str,
    pub(crate) kind: &'static str,
}

impl SubresourceInfo {
    /// A subresource that answers its resource's group and version with `kind`.
    pub(crate) const fn own(
        name: &'static str,
        kind: &'static str,
        verbs: &'static [&'static str],
    ) -> Self {
        SubresourceInfo {
            name,
            answers: Some(OtherKind {
                group: "",
                version: "",
                kind,
            }),
            verbs,
        }
    }

    /// A subresource that answers another group's `kind`.
    pub(crate) const fn other(
        name: &'static str,
        (group, version, kind): (&'static str, &'static str, &'static str),
        verbs: &'static [&'static str],
    ) -> Self {
        SubresourceInfo {
            name,
            answers: Some(OtherKind {
                group,
                version,
                kind,
            }),
            verbs,
        }
    }
}

/// What the REST storage behind a resource keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Serving {
    /// The generic store: objects are kept and served with every verb discovery lists.
    Stored,
    /// Nothing is kept: a POST is answered from the request (a review, a binding).
    CreateOnly,
    /// Nothing is kept: GET and LIST are answered from the server's state (`componentstatuses`).
    ReadOnly,
}

impl OtherKind {
    /// `autoscaling/v1` `Scale`, what every `scale` subresource answers.
    pub(crate) const SCALE: OtherKind = OtherKind {
        group: "autoscaling",
        version: "v1",
        kind: "Scale",
    };
}

/// Everything the server needs to serve one resource type.
#[derive(Debug, Clone)]
pub(crate) struct ResourceType {
    pub(crate) group: String,
    pub(crate) versions: Vec<ServedVersion>,
    pub(crate) kind: String,
    pub(crate) list_kind: String,
    pub(crate) plural: String,
    pub(crate) singular: String,
    pub(crate) namespaced: bool,
    /// Served from a CustomResourceDefinition (unstructured) rather than compiled in.
    pub(crate) custom: bool,
    pub(crate) status_write: StatusWrite,
    pub(crate) generation: GenerationRule,
    /// `AllowUnconditionalUpdate`: an update without resourceVersion is accepted.
    pub(crate) unconditional_update: bool,
    /// `AllowCreateOnUpdate`: PUT of a missing object creates it.
    pub(crate) create_on_update: bool,
    pub(crate) name_rule: NameRule,
    /// `ReturnDeletedObject`: a delete answers with the object rather than a `Status`.
    pub(crate) delete_returns_object: bool,
    pub(crate) gc: GcPolicy,
    pub(crate) delete: DeleteBehavior,
    pub(crate) field_labels: FieldLabels,
    pub(crate) hooks: TypeHooks,
    pub(crate) discovery: DiscoveryInfo,
    /// What its storage keeps.
    pub(crate) serving: Serving,
    /// The group of the internal type when it is another group's (events.k8s.io Events decode
    /// into core Events), which validation errors name.
    pub(crate) internal_group: Option<String>,
    /// The storage version, when it is not the only version served: requests through the
    /// others convert ([`super::conversion`]).
    pub(crate) storage: Option<StorageVersion>,
    /// The field-management schema of each version served, by apiVersion, when there are
    /// several (a CRD's, or a built-in's with its conversion): the field manager converts
    /// managers' entries between them.
    pub(crate) field_versions: Option<std::sync::Arc<crate::apply::ServedSchemas>>,
}

/// The version a type is stored in, and the schema storage reads a custom resource with.
#[derive(Debug, Clone)]
pub(crate) struct StorageVersion {
    pub(crate) name: String,
    pub(crate) schema: Option<std::sync::Arc<crate::schema::CustomResourceSchema>>,
    /// With `strategy: Webhook`, where conversions go.
    pub(crate) webhook: Option<super::conversion_webhook::WebhookEndpoint>,
}

impl ResourceType {
    /// How an object of this type at `object_key` is written to etcd (`revision`: the one an
    /// update is conditioned on).
    pub(crate) fn etcd_write(&self, object_key: &str, revision: Option<u64>) -> EtcdWrite {
        EtcdWrite::new(&self.group, &self.plural, self.custom, object_key, revision)
    }

    /// Whether this is the built-in `kind` of `group`.
    pub(crate) fn is_builtin(&self, group: &str, kind: &str) -> bool {
        !self.custom && self.group == group && self.kind == kind
    }

    /// The Go struct a built-in type's objects are stored as (its preferred version's), which
    /// fixes the order their fields are written in; `None` for a custom type.
    pub(crate) fn stored_struct(&self) -> Option<&'static str> {
        if self.custom {
            return None;
        }
        crate::gotype::stored_struct(&self.group, &self.kind)
    }

    pub(crate) fn group_resource(&self) -> GroupResource {
        GroupResource::new(self.group.clone(), self.plural.clone())
    }

    /// The group and kind validation errors name: the internal type's (`rest.BeforeCreate`
    /// takes it from `ObjectKinds` of the internal object).
    pub(crate) fn group_kind(&self) -> GroupKind {
        let group = self.internal_group.as_ref().unwrap_or(&self.group);
        GroupKind::new(group.clone(), self.kind.clone())
    }

    pub(crate) fn api_version(&self, version: &str) -> String {
        if self.group.is_empty() {
            version.to_owned()
        } else {
            format!("{}/{version}", self.group)
        }
    }

    pub(crate) fn serves(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v.name == version)
    }

    /// Whether `version` has the status subresource.
    pub(crate) fn has_status(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v.name == version && v.status)
    }

    /// The validation schema of `version`, for custom resources.
    pub(crate) fn validation(&self, version: &str) -> Option<&crate::schema::CustomResourceSchema> {
        self.versions
            .iter()
            .find(|v| v.name == version)
            .and_then(|v| v.validation.as_deref())
    }

    /// Whether discovery lists the scale subresource at `version`.
    pub(crate) fn has_scale(&self, version: &str) -> bool {
        self.versions.iter().any(|v| v.name == version && v.scale)
    }

    /// The etcd key kube-apiserver would use, as it appears in storage error messages.
    pub(crate) fn storage_key(&self, namespace: Option<&str>, name: &str) -> String {
        let prefix = if self.custom {
            format!(
                "/registry/apiextensions.kubernetes.io/{}/{}",
                self.group, self.plural
            )
        } else {
            format!("/registry/{}", self.plural)
        };
        match namespace {
            Some(ns) => format!("{prefix}/{ns}/{name}"),
            None => format!("{prefix}/{name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::apply::Schema;

    #[test]
    fn a_built_in_field_schema_is_converted_once_when_first_read() {
        let lazy = FieldSchema::builtin("apps/v1".to_owned(), "Deployment");
        let FieldSchema::Builtin(cell) = &lazy else {
            panic!("a built-in schema is converted lazily");
        };
        assert!(cell.converted.get().is_none(), "converted before any read");
        let first = lazy.get();
        assert_eq!(*first, Schema::builtin("apps/v1", "Deployment"));
        // A copy of the registry's type (every server's) shares the conversion.
        assert!(Arc::ptr_eq(&first, &lazy.clone().get()));
    }

    #[test]
    fn field_schemas_compare_by_kind_when_built_in_and_by_content_when_converted() {
        let deployment = || FieldSchema::builtin("apps/v1".to_owned(), "Deployment");
        assert_eq!(deployment(), deployment());
        assert_ne!(deployment(), FieldSchema::builtin("v1".to_owned(), "Pod"));
        let converted = FieldSchema::Converted(deployment().get());
        assert_eq!(converted, FieldSchema::Converted(deployment().get()));
        assert_ne!(converted, deployment());
    }
}
