//! The cluster's own machinery: controller revisions, certificate signing requests, endpoint
//! slices, API priority and fairness, ingress classes, service CIDRs and IP addresses, runtime
//! classes and priority classes (`pkg/registry/<group>/<resource>/strategy.go`).

use recon_apimachinery::names::NameRule;

use super::{builtin, reset, with_status};
use crate::registry::resource::{FieldLabels, GenerationRule, ResourceType, SubresourceInfo};

/// `certificatesigningrequests/approval`: where approvers write the Approved or Denied
/// condition.
const CSR_SUBRESOURCES: &[SubresourceInfo] = &[SubresourceInfo::own(
    "approval",
    "CertificateSigningRequest",
    &["get", "patch", "update"],
)];

pub(super) fn types() -> Vec<ResourceType> {
    vec![
        ResourceType {
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "apps",
                "v1",
                "ControllerRevision",
                "controllerrevisions",
                true,
            )
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::with(&[("spec.signerName", &["spec", "signerName"])]),
            ..with_status(builtin(
                "certificates.k8s.io",
                "v1",
                "CertificateSigningRequest",
                "certificatesigningrequests",
                false,
            ))
            .short_names(&["csr"])
            .subresources(CSR_SUBRESOURCES)
        },
        ResourceType {
            create_on_update: true,
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "discovery.k8s.io",
                "v1",
                "EndpointSlice",
                "endpointslices",
                true,
            )
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            ..with_status(builtin(
                "flowcontrol.apiserver.k8s.io",
                "v1",
                "FlowSchema",
                "flowschemas",
                false,
            ))
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            ..with_status(builtin(
                "flowcontrol.apiserver.k8s.io",
                "v1",
                "PriorityLevelConfiguration",
                "prioritylevelconfigurations",
                false,
            ))
        },
        ResourceType {
            generation: GenerationRule::Spec { annotations: false },
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "networking.k8s.io",
                "v1",
                "IngressClass",
                "ingressclasses",
                false,
            )
        },
        ResourceType {
            field_labels: FieldLabels::default_conversion(),
            ..builtin("networking.k8s.io", "v1", "IPAddress", "ipaddresses", false)
                .short_names(&["ip"])
        },
        ResourceType {
            status_write: reset(&["spec"], &[]),
            field_labels: FieldLabels::default_conversion(),
            ..with_status(builtin(
                "networking.k8s.io",
                "v1",
                "ServiceCIDR",
                "servicecidrs",
                false,
            ))
        },
        ResourceType {
            field_labels: FieldLabels::default_conversion(),
            ..builtin("node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", false)
        },
        ResourceType {
            name_rule: NameRule::DnsSubdomain,
            field_labels: FieldLabels::default_conversion(),
            ..builtin(
                "scheduling.k8s.io",
                "v1",
                "PriorityClass",
                "priorityclasses",
                false,
            )
            .short_names(&["pc"])
        },
    ]
}
