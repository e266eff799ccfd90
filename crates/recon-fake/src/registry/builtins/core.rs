//! The core/v1 kinds beyond the everyday ones: endpoints, limits and quotas, nodes and
//! persistent volumes (`pkg/registry/core/<resource>/strategy.go`), and the two resources
//! that store nothing (`bindings`, `componentstatuses`).

use recon_apimachinery::names::NameRule;

use super::{builtin, reset, with_status};
use crate::registry::resource::{
    FieldLabels, GenerationRule, ResourceType, Serving, SubresourceInfo,
};

/// `nodes/proxy`: the kubelet's API through the API server.
const NODE_SUBRESOURCES: &[SubresourceInfo] = &[SubresourceInfo::own(
    "proxy",
    "NodeProxyOptions",
    super::PROXY_VERBS,
)];

pub(super) fn types() -> Vec<ResourceType> {
    vec![
        ResourceType {
            // `endpointsStrategy.AllowCreateOnUpdate`.
            create_on_update: true,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("", "v1", "Endpoints", "endpoints", true).short_names(&["ep"])
        },
        ResourceType {
            create_on_update: true,
            field_labels: FieldLabels::default_conversion(),
            ..builtin("", "v1", "LimitRange", "limitranges", true).short_names(&["limits"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::with(&[("spec.unschedulable", &["spec", "unschedulable"])]),
            ..with_status(builtin("", "v1", "Node", "nodes", false))
                .short_names(&["no"])
                .subresources(NODE_SUBRESOURCES)
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::with(&[("name", &["metadata", "name"])]),
            ..with_status(builtin(
                "",
                "v1",
                "PersistentVolume",
                "persistentvolumes",
                false,
            ))
            .short_names(&["pv"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::default_conversion(),
            ..with_status(builtin("", "v1", "ResourceQuota", "resourcequotas", true))
                .short_names(&["quota"])
        },
        ResourceType {
            name_rule: NameRule::DnsSubdomain,
            generation: GenerationRule::None,
            ..builtin("", "v1", "Binding", "bindings", true)
                .serving(Serving::CreateOnly, &["create"])
        },
        ResourceType {
            ..builtin("", "v1", "ComponentStatus", "componentstatuses", false)
                .short_names(&["cs"])
                .serving(Serving::ReadOnly, &["get", "list"])
        },
    ]
}
