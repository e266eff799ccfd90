//! Pod specs and pod templates (`SetObjectDefaults_Pod`, and the `PodSpec` walk every
//! workload's template shares): `SetDefaults_PodSpec`, `_Container`, `_Probe`,
//! `_HTTPGetAction`, `_Volume` and the volume sources, `_ObjectFieldSelector`, and the
//! `+default` markers (container port protocol `TCP`, a gRPC probe's empty service).

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::{default_nil, default_zero, field, field_or_new, is_nil, is_zero, items, str_of};
use crate::wire::object::Object;

/// The file mode of a ConfigMap, Secret, downward API or projected volume (0644).
const VOLUME_DEFAULT_MODE: i64 = 0o644;

/// A Pod: `SetDefaults_Pod` (requests from limits, service links, host network ports), then its
/// spec.
pub(super) fn pod(obj: &mut Object) {
    let Some(spec) = field_or_new(obj, "spec") else {
        return;
    };
    for key in ["containers", "initContainers"] {
        for container in items(spec, key) {
            requests_from_limits(container);
        }
    }
    default_nil(spec, "enableServiceLinks", true);
    if spec.get("hostNetwork") == Some(&Value::Bool(true)) {
        for key in ["containers", "initContainers"] {
            for container in items(spec, key) {
                for port in items(container, "ports") {
                    if is_zero(port, "hostPort") {
                        let container_port = port.get("containerPort").cloned();
                        if let Some(p) = container_port {
                            port.insert("hostPort".into(), p);
                        }
                    }
                }
            }
        }
    }
    pod_spec(spec);
}

/// A `PodTemplateSpec`: its spec's defaults, not the Pod's own. (Its `metadata` is a struct,
/// not a pointer: the typed object always carries it.)
pub(crate) fn template(template: &mut Object) {
    default_nil(template, "metadata", json!({}));
    if let Some(spec) = field_or_new(template, "spec") {
        pod_spec(spec);
    }
}

/// A container with limits and no request for a resource requests what it limits.
fn requests_from_limits(container: &mut Object) {
    let Some(resources) = field(container, "resources") else {
        return;
    };
    let Some(Value::Object(limits)) = resources.get("limits").cloned() else {
        return;
    };
    let Some(requests) = field_or_new(resources, "requests") else {
        return;
    };
    for (name, quantity) in limits {
        requests.entry(name).or_insert(quantity);
    }
}

pub(super) fn pod_spec(spec: &mut Object) {
    drop_disabled_fields(spec);
    default_zero(spec, "dnsPolicy", "ClusterFirst");
    default_zero(spec, "restartPolicy", "Always");
    default_nil(spec, "securityContext", json!({}));
    default_nil(spec, "terminationGracePeriodSeconds", 30);
    default_zero(spec, "schedulerName", "default-scheduler");
    for volume in items(spec, "volumes") {
        self::volume(volume);
    }
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, key) {
            container(c);
        }
    }
}

/// What the strategies' `DropDisabledPodFields` / `DropDisabledTemplateFields` remove before
/// anything else reads a pod spec, for the 1.36 gates that are off: a container's
/// `lifecycle.stopSignal` (ContainerStopSignals; an emptied `lifecycle` goes too) and the
/// `clusterTrustBundle` and `podCertificate` projections (ClusterTrustBundleProjection,
/// PodCertificateRequest). An old object could keep them in use only if it was created with
/// them, which it cannot have been, so they are always dropped.
fn drop_disabled_fields(spec: &mut Object) {
    for key in ["initContainers", "containers", "ephemeralContainers"] {
        for c in items(spec, key) {
            let emptied = match field(c, "lifecycle") {
                Some(lifecycle) => lifecycle.remove("stopSignal").is_some() && lifecycle.is_empty(),
                None => false,
            };
            if emptied {
                c.remove("lifecycle");
            }
        }
    }
    for volume in items(spec, "volumes") {
        let Some(projected) = field(volume, "projected") else {
            continue;
        };
        for source in items(projected, "sources") {
            source.remove("clusterTrustBundle");
            source.remove("podCertificate");
        }
    }
}

fn container(c: &mut Object) {
    if is_zero(c, "imagePullPolicy") {
        let policy = if image_tag(str_of(c, "image")) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        c.insert("imagePullPolicy".into(), policy.into());
    }
    // Not a default: `resources` is a struct, not a pointer, so the typed object always
    // carries it.
    default_nil(c, "resources", json!({}));
    default_zero(c, "terminationMessagePath", "/dev/termination-log");
    default_zero(c, "terminationMessagePolicy", "File");
    for port in items(c, "ports") {
        default_zero(port, "protocol", "TCP");
    }
    for env in items(c, "env") {
        if let Some(from) = field(env, "valueFrom") {
            if let Some(field_ref) = field(from, "fieldRef") {
                object_field_selector(field_ref);
            }
            if let Some(file_key) = field(from, "fileKeyRef") {
                default_nil(file_key, "optional", false);
            }
        }
    }
    for key in ["livenessProbe", "readinessProbe", "startupProbe"] {
        if let Some(p) = field(c, key) {
            probe(p);
        }
    }
    if let Some(lifecycle) = field(c, "lifecycle") {
        for key in ["postStart", "preStop"] {
            if let Some(get) = field(lifecycle, key).and_then(|h| field(h, "httpGet")) {
                http_get(get);
            }
        }
    }
}

/// The tag of an image reference (`docker.io/library/nginx:1.27` → `1.27`); `latest` when it
/// names none, as `parsers.ParseImageName` reads it (a digest alone names no tag).
fn image_tag(image: &str) -> &str {
    let without_digest = image.split_once('@').map_or(image, |(name, _)| name);
    let digest = image.contains('@');
    // The tag follows the last `:` after the last `/` (a registry port comes before it).
    let last_segment = without_digest.rsplit('/').next().unwrap_or(without_digest);
    match last_segment.rsplit_once(':') {
        Some((_, tag)) => tag,
        None if digest => "",
        None => "latest",
    }
}

fn probe(p: &mut Object) {
    default_zero(p, "timeoutSeconds", 1);
    default_zero(p, "periodSeconds", 10);
    default_zero(p, "successThreshold", 1);
    default_zero(p, "failureThreshold", 3);
    if let Some(get) = field(p, "httpGet") {
        http_get(get);
    }
    if let Some(grpc) = field(p, "grpc") {
        default_nil(grpc, "service", "");
    }
}

fn http_get(get: &mut Object) {
    default_zero(get, "path", "/");
    default_zero(get, "scheme", "HTTP");
}

fn object_field_selector(selector: &mut Object) {
    default_zero(selector, "apiVersion", "v1");
}

fn volume(v: &mut Object) {
    // A volume naming no source is an emptyDir.
    const SOURCES: &[&str] = &[
        "hostPath",
        "emptyDir",
        "gcePersistentDisk",
        "awsElasticBlockStore",
        "gitRepo",
        "secret",
        "nfs",
        "iscsi",
        "glusterfs",
        "persistentVolumeClaim",
        "rbd",
        "flexVolume",
        "cinder",
        "cephfs",
        "flocker",
        "downwardAPI",
        "fc",
        "azureFile",
        "configMap",
        "vsphereVolume",
        "quobyte",
        "azureDisk",
        "photonPersistentDisk",
        "projected",
        "portworxVolume",
        "scaleIO",
        "storageos",
        "csi",
        "ephemeral",
        "image",
    ];
    if SOURCES.iter().all(|s| is_nil(v, s)) {
        v.insert("emptyDir".into(), json!({}));
    }
    if let Some(host_path) = field(v, "hostPath") {
        default_nil(host_path, "type", "");
    }
    for key in ["secret", "configMap"] {
        if let Some(source) = field(v, key) {
            default_nil(source, "defaultMode", VOLUME_DEFAULT_MODE);
        }
    }
    if let Some(iscsi) = field(v, "iscsi") {
        default_zero(iscsi, "iscsiInterface", "default");
    }
    if let Some(rbd) = field(v, "rbd") {
        default_zero(rbd, "pool", "rbd");
        default_zero(rbd, "user", "admin");
        default_zero(rbd, "keyring", "/etc/ceph/keyring");
    }
    if let Some(downward) = field(v, "downwardAPI") {
        default_nil(downward, "defaultMode", VOLUME_DEFAULT_MODE);
        for item in items(downward, "items") {
            if let Some(field_ref) = field(item, "fieldRef") {
                object_field_selector(field_ref);
            }
        }
    }
    if let Some(azure) = field(v, "azureDisk") {
        default_nil(azure, "cachingMode", "ReadWrite");
        default_nil(azure, "fsType", "ext4");
        default_nil(azure, "readOnly", false);
        default_nil(azure, "kind", "Shared");
    }
    if let Some(projected) = field(v, "projected") {
        default_nil(projected, "defaultMode", VOLUME_DEFAULT_MODE);
        for source in items(projected, "sources") {
            if let Some(downward) = field(source, "downwardAPI") {
                for item in items(downward, "items") {
                    if let Some(field_ref) = field(item, "fieldRef") {
                        object_field_selector(field_ref);
                    }
                }
            }
            if let Some(token) = field(source, "serviceAccountToken") {
                default_nil(token, "expirationSeconds", 3600);
            }
        }
    }
    if let Some(scale_io) = field(v, "scaleIO") {
        default_zero(scale_io, "storageMode", "ThinProvisioned");
        default_zero(scale_io, "fsType", "xfs");
    }
    if let Some(claim) = field(v, "ephemeral")
        .and_then(|e| field(e, "volumeClaimTemplate"))
        .and_then(|t| field(t, "spec"))
    {
        super::core_v1::persistent_volume_claim_spec(claim);
    }
    if let Some(image) = field(v, "image")
        && is_zero(image, "pullPolicy")
    {
        let policy = if image_tag(str_of(image, "reference")) == "latest" {
            "Always"
        } else {
            "IfNotPresent"
        };
        image.insert("pullPolicy".into(), policy.into());
    }
}

#[cfg(test)]
mod tests {
    use super::image_tag;

    #[test]
    fn the_tag_follows_the_last_colon_of_the_last_path_segment() {
        assert_eq!(image_tag("nginx"), "latest");
        assert_eq!(image_tag("nginx:1.27"), "1.27");
        assert_eq!(image_tag("registry.example.com:5000/nginx"), "latest");
        assert_eq!(image_tag("registry.example.com:5000/nginx:v2"), "v2");
        assert_eq!(image_tag("nginx@sha256:abc"), "");
        assert_eq!(image_tag("nginx:1.27@sha256:abc"), "1.27");
    }
}
