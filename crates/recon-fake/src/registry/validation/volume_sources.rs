//! What a pod volume's source holds (`pkg/apis/core/validation/validation.go`:
//! `validateVolumeSource` and the `validate<Source>VolumeSource` functions it calls, and the
//! check `ValidateVolumes` adds of claims that ephemeral volumes create).
//!
//! Every source the v1 API still serves is checked, in Go's order and with its quirks (the
//! paths some sources report their contents on, such as `persistentDisk` for a
//! `gcePersistentDisk`). The sources that write files (secret, configMap, downwardAPI,
//! projected) are [`super::volume_files`]'. The PersistentVolumeClaim spec of an ephemeral
//! volume is checked by [`super::claim`].

use std::collections::HashSet;
use std::sync::LazyLock;

use recon_apimachinery::go_quote;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors,
};
use regex::Regex;

use super::claim;
use super::pod::{invalid_int, labels};
use super::pod_security::local_descending_path;
use super::read::{int_at, is_set, list_at, str_at};
use super::volume_files;
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::gotype::quantity;

/// The volume being checked, as the checks of its source need it.
struct Volume<'a> {
    /// Its name.
    name: &'a str,
    /// Its path (`spec.volumes[0]`), where some sources report errors of the volume's name.
    path: &'a Path,
    /// The name of the Pod whose spec holds it (`podMeta.Name`); `None` in a template
    /// (`opts.ResourceIsPod` is false and there is no `podMeta`).
    pod: Option<&'a str>,
}

/// The checks of one source: its value, the path its contents are reported on, the volume.
type Check = fn(Option<&Value>, &Path, &Volume) -> Vec<FieldError>;

/// The sources of `VolumeSource` in the order `validateVolumeSource` checks them: the key, the
/// path a second source is forbidden on (`downwardAPI`'s is misspelt `downwarAPI` there), the
/// path the source's contents are reported on, and the check of those contents.
const SOURCES: &[(&str, &str, &str, Check)] = &[
    ("emptyDir", "emptyDir", "emptyDir", empty_dir),
    ("hostPath", "hostPath", "hostPath", host_path),
    ("gitRepo", "gitRepo", "gitRepo", git_repo),
    (
        "gcePersistentDisk",
        "gcePersistentDisk",
        "persistentDisk",
        gce_persistent_disk,
    ),
    (
        "awsElasticBlockStore",
        "awsElasticBlockStore",
        "awsElasticBlockStore",
        aws_elastic_block_store,
    ),
    ("secret", "secret", "secret", |s, p, _| {
        volume_files::secret(s, p)
    }),
    ("nfs", "nfs", "nfs", nfs),
    ("iscsi", "iscsi", "iscsi", iscsi),
    ("glusterfs", "glusterfs", "glusterfs", glusterfs),
    ("flocker", "flocker", "flocker", flocker),
    (
        "persistentVolumeClaim",
        "persistentVolumeClaim",
        "persistentVolumeClaim",
        persistent_volume_claim,
    ),
    ("rbd", "rbd", "rbd", rbd),
    ("cinder", "cinder", "cinder", cinder),
    ("cephfs", "cephFS", "cephfs", cephfs),
    ("quobyte", "quobyte", "quobyte", quobyte),
    ("downwardAPI", "downwarAPI", "downwardAPI", |s, p, _| {
        volume_files::downward_api(s, p)
    }),
    ("fc", "fc", "fc", fc),
    ("flexVolume", "flexVolume", "flexVolume", flex_volume),
    ("configMap", "configMap", "configMap", |s, p, _| {
        volume_files::config_map(s, p)
    }),
    ("azureFile", "azureFile", "azureFile", azure_file),
    (
        "vsphereVolume",
        "vsphereVolume",
        "vsphereVolume",
        vsphere_volume,
    ),
    (
        "photonPersistentDisk",
        "photonPersistentDisk",
        "photonPersistentDisk",
        photon_persistent_disk,
    ),
    (
        "portworxVolume",
        "portworxVolume",
        "portworxVolume",
        portworx_volume,
    ),
    ("azureDisk", "azureDisk", "azureDisk", azure_disk),
    ("storageos", "storageos", "storageos", storageos),
    ("projected", "projected", "projected", |s, p, _| {
        volume_files::projected(s, p)
    }),
    ("scaleIO", "scaleIO", "scaleIO", scale_io),
    ("csi", "csi", "csi", csi),
    ("ephemeral", "ephemeral", "ephemeral", ephemeral),
    ("image", "image", "image", image),
];

/// `validateVolumeSource` of `volume` at `path`: the first source set is checked, each later
/// one is forbidden, none is required. `pod` is the name of the Pod whose spec holds the
/// volume, `None` for a template.
pub(super) fn volume_source(volume: &Value, pod: Option<&str>, path: &Path) -> Vec<FieldError> {
    let context = Volume {
        name: str_at(Some(volume), "name"),
        path,
        pod,
    };
    let mut errors = Vec::new();
    let mut found = false;
    for (key, reported, contents, check) in SOURCES {
        let Some(source) = volume.get(*key).filter(|s| !s.is_null()) else {
            continue;
        };
        if found {
            errors.push(FieldError::forbidden(
                path.child(reported),
                "may not specify more than 1 volume type",
            ));
        } else {
            found = true;
            errors.extend(check(Some(source), &path.child(contents), &context));
        }
        // Checked of any iSCSI source, the first or not.
        if *key == "iscsi" {
            errors.extend(iscsi_initiator_length(Some(source), &context));
        }
    }
    if !found {
        errors.push(FieldError::required(path, "must specify a volume type"));
    }
    errors
}

/// The claims the ephemeral volumes of the Pod `pod` create (`<pod>-<volume>`), as
/// `ValidateVolumes` gathers them; none for a template or a Pod without a name.
pub(super) fn created_claims(volumes: &[Value], pod: Option<&str>) -> HashSet<String> {
    let Some(pod) = pod.filter(|p| !p.is_empty()) else {
        return HashSet::new();
    };
    volumes
        .iter()
        .filter(|v| is_set(Some(v), "ephemeral"))
        .map(|v| format!("{pod}-{}", str_at(Some(v), "name")))
        .collect()
}

/// `ValidateVolumes`: a claim volume may not name a claim an ephemeral volume creates.
pub(super) fn claim_not_created(
    volume: &Value,
    created: &HashSet<String>,
    path: &Path,
) -> Option<FieldError> {
    let claim = volume
        .get("persistentVolumeClaim")
        .filter(|c| !c.is_null())?;
    let name = str_at(Some(claim), "claimName");
    created.contains(name).then(|| {
        FieldError::invalid(
            path.child("persistentVolumeClaim").child("claimName"),
            name,
            "must not reference a PVC that gets created for an ephemeral volume",
        )
    })
}

/// `field.Required` of the string `key` of `v` when it is empty.
fn required_str(v: Option<&Value>, key: &str, path: &Path) -> Option<FieldError> {
    str_at(v, key)
        .is_empty()
        .then(|| FieldError::required(path.child(key), ""))
}

/// `field.Required` of the list `key` of `v` when it is empty.
fn required_list(v: Option<&Value>, key: &str, path: &Path) -> Option<FieldError> {
    list_at(v, key)
        .is_empty()
        .then(|| FieldError::required(path.child(key), ""))
}

/// `validatePathNoBacksteps`: no `..` element (one error however many there are).
fn no_backsteps(target: &str, path: &Path) -> Option<FieldError> {
    target
        .split('/')
        .any(|part| part == "..")
        .then(|| FieldError::invalid(path, target, "must not contain '..'"))
}

/// The emptyDir check inside `validateVolumeSource`: a size limit that is not negative. (Go
/// does not check the medium.)
fn empty_dir(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let negative = source
        .and_then(|s| s.get("sizeLimit"))
        .and_then(Value::as_str)
        .is_some_and(|limit| quantity::compare(limit, "0") == Some(std::cmp::Ordering::Less));
    if negative {
        return vec![FieldError::forbidden(
            path.child("sizeLimit"),
            "SizeLimit field must be a valid resource quantity",
        )];
    }
    Vec::new()
}

/// The types `validateHostPathType` supports, as `sets.List` sorts them (the unset one first).
const HOST_PATH_TYPES: &[&str] = &[
    "",
    "BlockDevice",
    "CharDevice",
    "Directory",
    "DirectoryOrCreate",
    "File",
    "FileOrCreate",
    "Socket",
];

/// `validateHostPathVolumeSource`: a path (nothing else is checked without one) without
/// backsteps, then `validateHostPathType`.
fn host_path(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    if let Some(error) = required_str(source, "path", path) {
        return vec![error];
    }
    let mut errors: Vec<FieldError> = no_backsteps(str_at(source, "path"), &path.child("path"))
        .into_iter()
        .collect();
    if let Some(kind) = source
        .and_then(|s| s.get("type"))
        .and_then(Value::as_str)
        .filter(|kind| !HOST_PATH_TYPES.contains(kind))
    {
        errors.push(FieldError::not_supported(
            path.child("type"),
            kind,
            HOST_PATH_TYPES,
        ));
    }
    errors
}

/// `validateGitRepoVolumeSource`: a repository, a relative directory without backsteps.
fn git_repo(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = required_str(source, "repository", path)
        .into_iter()
        .collect();
    errors.extend(local_descending_path(
        str_at(source, "directory"),
        &path.child("directory"),
    ));
    errors
}

/// `pdPartitionErrorMsg`, though Go lets a partition be 0.
const PARTITION: &str = "must be between 1 and 255, inclusive";

/// A disk's partition between 0 and 255.
fn partition(source: Option<&Value>, path: &Path) -> Option<FieldError> {
    int_at(source, "partition")
        .filter(|p| !(0..=255).contains(p))
        .map(|p| invalid_int(&path.child("partition"), p, PARTITION))
}

/// `validateGCEPersistentDiskVolumeSource`: a disk name and partition.
fn gce_persistent_disk(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "pdName", path)
        .into_iter()
        .chain(partition(source, path))
        .collect()
}

/// `validateAWSElasticBlockStoreVolumeSource`: a volume ID and partition.
fn aws_elastic_block_store(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "volumeID", path)
        .into_iter()
        .chain(partition(source, path))
        .collect()
}

/// `validateNFSVolumeSource`: a server and an absolute path (an empty one is both required and
/// not absolute).
fn nfs(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = required_str(source, "server", path)
        .into_iter()
        .chain(required_str(source, "path", path))
        .collect();
    let export = str_at(source, "path");
    if !export.starts_with('/') {
        errors.push(FieldError::invalid(
            path.child("path"),
            export,
            "must be an absolute path",
        ));
    }
    errors
}

/// `iscsiInitiatorIqnRegex`, `iscsiInitiatorEuiRegex` and `iscsiInitiatorNaaRegex` (Go's `\d`
/// and `\s` are ASCII; the first is not anchored at its start).
static IQN: LazyLock<Option<Regex>> = LazyLock::new(|| {
    Regex::new(r"iqn\.[0-9]{4}-[0-9]{2}\.([[:alnum:].\-]+)(:[^,;*&$|\t\n\f\r ]+)$").ok()
});
static EUI: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^eui.[[:alnum:]]{16}$").ok());
static NAA: LazyLock<Option<Regex>> = LazyLock::new(|| Regex::new(r"^naa.[[:alnum:]]{32}$").ok());

/// Whether `name` starts with `prefix` and then fails `regex`.
fn bad_format(name: &str, prefix: &str, regex: &LazyLock<Option<Regex>>) -> bool {
    name.starts_with(prefix) && !regex.as_ref().is_some_and(|r| r.is_match(name))
}

/// Whether an IQN or initiator name in the iqn, eui or naa form fails its pattern.
fn bad_iscsi_name(name: &str) -> bool {
    bad_format(name, "iqn", &IQN) || bad_format(name, "eui", &EUI) || bad_format(name, "naa", &NAA)
}

/// `validateISCSIVolumeSource`: a target portal; an IQN in one of its three forms; a LUN
/// between 0 and 255; a secret for CHAP; an initiator name in one of the forms.
fn iscsi(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    const FORMS: &[&str] = &["iqn", "eui", "naa"];
    const STARTING: &str = "must be valid format starting with iqn, eui, or naa";
    let mut errors: Vec<FieldError> = required_str(source, "targetPortal", path)
        .into_iter()
        .collect();
    let iqn = str_at(source, "iqn");
    if iqn.is_empty() {
        errors.push(FieldError::required(path.child("iqn"), ""));
    } else if !FORMS.iter().any(|form| iqn.starts_with(form)) {
        errors.push(FieldError::invalid(path.child("iqn"), iqn, STARTING));
    } else if bad_iscsi_name(iqn) {
        errors.push(FieldError::invalid(
            path.child("iqn"),
            iqn,
            "must be valid format",
        ));
    }
    let lun = int_at(source, "lun").unwrap_or(0);
    if !(0..=255).contains(&lun) {
        errors.push(invalid_int(
            &path.child("lun"),
            lun,
            "must be between 0 and 255, inclusive",
        ));
    }
    let flag = |key: &str| source.and_then(|s| s.get(key)).and_then(Value::as_bool) == Some(true);
    if (flag("discoveryCHAPAuth") || flag("sessionCHAPAuth")) && !is_set(source, "secretRef") {
        errors.push(FieldError::required(path.child("secretRef"), ""));
    }
    if let Some(initiator) = source
        .and_then(|s| s.get("initiatorName"))
        .and_then(Value::as_str)
    {
        // Go reports this path in lower case.
        let at = path.child("initiatorname");
        if !FORMS.iter().any(|form| initiator.starts_with(form)) {
            errors.push(FieldError::invalid(&at, initiator, STARTING));
        }
        if bad_iscsi_name(initiator) {
            errors.push(FieldError::invalid(&at, initiator, "must be valid format"));
        }
    }
    errors
}

/// What `validateVolumeSource` checks of any iSCSI source with an initiator name: the volume
/// name and target portal joined by `:` fit in 64 characters.
fn iscsi_initiator_length(source: Option<&Value>, volume: &Volume) -> Option<FieldError> {
    let joined = volume.name.len() + 1 + str_at(source, "targetPortal").len();
    (is_set(source, "initiatorName") && joined > 64).then(|| {
        FieldError::invalid(
            volume.path.child("name"),
            volume.name,
            "Total length of <volume name>:<iscsi.targetPortal> must be under 64 characters if \
             iscsi.initiatorName is specified.",
        )
    })
}

/// `validateGlusterfsVolumeSource`: endpoints and a path.
fn glusterfs(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "endpoints", path)
        .into_iter()
        .chain(required_str(source, "path", path))
        .collect()
}

/// `validateFlockerVolumeSource`: a dataset name or UUID, not both; a name without `/`.
fn flocker(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let name = str_at(source, "datasetName");
    let uuid = str_at(source, "datasetUUID");
    let mut errors = Vec::new();
    if name.is_empty() && uuid.is_empty() {
        errors.push(FieldError::required(
            path,
            "one of datasetName and datasetUUID is required",
        ));
    }
    if !name.is_empty() && !uuid.is_empty() {
        errors.push(FieldError::invalid(
            path,
            "resource",
            "datasetName and datasetUUID can not be specified simultaneously",
        ));
    }
    if name.contains('/') {
        errors.push(FieldError::invalid(
            path.child("datasetName"),
            name,
            "must not contain '/'",
        ));
    }
    errors
}

/// `validatePersistentClaimVolumeSource`: a claim name.
fn persistent_volume_claim(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "claimName", path)
        .into_iter()
        .collect()
}

/// `validateRBDVolumeSource`: monitors and an image.
fn rbd(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_list(source, "monitors", path)
        .into_iter()
        .chain(required_str(source, "image", path))
        .collect()
}

/// The name of a secret reference, when there is one.
fn secret_ref_name(source: Option<&Value>, key: &str, path: &Path) -> Option<FieldError> {
    let secret = source.and_then(|s| s.get(key)).filter(|r| !r.is_null())?;
    required_str(Some(secret), "name", &path.child(key))
}

/// `validateCinderVolumeSource`: a volume ID, a named secret if any.
fn cinder(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "volumeID", path)
        .into_iter()
        .chain(secret_ref_name(source, "secretRef", path))
        .collect()
}

/// `validateCephFSVolumeSource`: monitors.
fn cephfs(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_list(source, "monitors", path)
        .into_iter()
        .collect()
}

/// `validateQuobyteVolumeSource`: a registry of `host:port` pairs (unless the tenant is too
/// long, which is reported instead), then a volume.
fn quobyte(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    const PAIRS: &str = "must be a host:port pair or multiple pairs separated by commas";
    let registry = str_at(source, "registry");
    let mut errors = Vec::new();
    if registry.is_empty() {
        errors.push(FieldError::required(path.child("registry"), PAIRS));
    } else if str_at(source, "tenant").len() >= 65 {
        errors.push(FieldError::required(
            path.child("tenant"),
            "must be a UUID and may not exceed a length of 64 characters",
        ));
    } else {
        for pair in registry.split(',') {
            if !splits_host_port(pair) {
                errors.push(FieldError::invalid(path.child("registry"), registry, PAIRS));
            }
        }
    }
    errors.extend(required_str(source, "volume", path));
    errors
}

/// Whether `net.SplitHostPort` splits `text` without an error: a port after the last `:`, a
/// host without `:` unless bracketed, brackets only around the host.
fn splits_host_port(text: &str) -> bool {
    let Some(last_colon) = text.rfind(':') else {
        return false;
    };
    let (open_from, close_from) = if text.starts_with('[') {
        match text.find(']') {
            Some(end) if end + 1 == last_colon => (1, end + 1),
            _ => return false,
        }
    } else {
        if text[..last_colon].contains(':') {
            return false;
        }
        (0, 0)
    };
    !text[open_from..].contains('[') && !text[close_from..].contains(']')
}

/// `validateFCVolumeSource`: target WWNs or WWIDs, not both; a LUN between 0 and 255 with
/// target WWNs.
fn fc(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let wwns = list_at(source, "targetWWNs");
    let wwids = list_at(source, "wwids");
    let mut errors = Vec::new();
    if wwns.is_empty() && wwids.is_empty() {
        errors.push(FieldError::required(
            path.child("targetWWNs"),
            "must specify either targetWWNs or wwids, but not both",
        ));
    }
    if !wwns.is_empty() && !wwids.is_empty() {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("targetWWNs"),
            BadValue::Raw(serde_json::to_string(wwns).unwrap_or_default()),
            "targetWWNs and wwids can not be specified simultaneously",
        ));
    }
    if !wwns.is_empty() {
        match int_at(source, "lun") {
            None => errors.push(FieldError::required(
                path.child("lun"),
                "lun is required if targetWWNs is specified",
            )),
            Some(lun) if !(0..=255).contains(&lun) => errors.push(invalid_int(
                &path.child("lun"),
                lun,
                "must be between 0 and 255, inclusive",
            )),
            Some(_) => {}
        }
    }
    errors
}

/// `validateFlexVolumeSource`: a driver; no option in the kubernetes.io or k8s.io namespaces.
/// (Go walks the options in random order, so a scenario gives one such option.)
fn flex_volume(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = required_str(source, "driver", path).into_iter().collect();
    let options = source
        .and_then(|s| s.get("options"))
        .and_then(Value::as_object);
    for key in options.into_iter().flat_map(|o| o.keys()) {
        let namespace = key.split_once('/').map_or(key.as_str(), |(ns, _)| ns);
        let normalized = format!(".{}", namespace.to_lowercase());
        if normalized.ends_with(".kubernetes.io") || normalized.ends_with(".k8s.io") {
            errors.push(FieldError::invalid(
                path.child("options").key(key),
                key,
                "kubernetes.io and k8s.io namespaces are reserved",
            ));
        }
    }
    errors
}

/// `validateAzureFile`: a secret and a share.
fn azure_file(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "secretName", path)
        .into_iter()
        .chain(required_str(source, "shareName", path))
        .collect()
}

/// `validateVsphereVolumeSource`: a volume path.
fn vsphere_volume(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "volumePath", path)
        .into_iter()
        .collect()
}

/// `validatePhotonPersistentDiskVolumeSource`: a disk ID.
fn photon_persistent_disk(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "pdID", path).into_iter().collect()
}

/// `validatePortworxVolumeSource`: a volume ID.
fn portworx_volume(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    required_str(source, "volumeID", path).into_iter().collect()
}

/// The caching modes and disk kinds `validateAzureDisk` supports, as `sets.List` sorts them.
const CACHING_MODES: &[&str] = &["None", "ReadOnly", "ReadWrite"];
const DISK_KINDS: &[&str] = &["Dedicated", "Managed", "Shared"];

/// `validateAzureDisk`: a disk name and URI, supported caching mode and kind, and a URI of the
/// kind's form (a managed disk's a resource path, the others' an `https://` blob).
fn azure_disk(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let mut errors: Vec<FieldError> = required_str(source, "diskName", path)
        .into_iter()
        .chain(required_str(source, "diskURI", path))
        .collect();
    let text = |key: &str| source.and_then(|s| s.get(key)).and_then(Value::as_str);
    if let Some(mode) = text("cachingMode").filter(|m| !CACHING_MODES.contains(m)) {
        errors.push(FieldError::not_supported(
            path.child("cachingMode"),
            mode,
            CACHING_MODES,
        ));
    }
    let kind = text("kind");
    if let Some(kind) = kind.filter(|k| !DISK_KINDS.contains(k)) {
        errors.push(FieldError::not_supported(
            path.child("kind"),
            kind,
            DISK_KINDS,
        ));
    }
    let uri = str_at(source, "diskURI");
    let expected = match kind {
        Some("Managed") if !uri.starts_with("/subscriptions/") => Some(
            "/subscriptions/{sub-id}/resourcegroups/{group-name}/providers/microsoft.compute/disks/{disk-id}",
        ),
        Some(kind) if kind != "Managed" && !uri.starts_with("https://") => {
            Some("https://{account-name}.blob.core.windows.net/{container-name}/{disk-name}.vhd")
        }
        _ => None,
    };
    if let Some(expected) = expected {
        errors.push(FieldError::not_supported(
            path.child("diskURI"),
            uri,
            &[expected],
        ));
    }
    errors
}

/// `validateStorageOSVolumeSource`: a volume name and namespace that are DNS labels, a named
/// secret if any.
fn storageos(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let name = str_at(source, "volumeName");
    if name.is_empty() {
        errors.push(FieldError::required(path.child("volumeName"), ""));
    }
    for (key, value) in [
        ("volumeName", name),
        ("volumeNamespace", str_at(source, "volumeNamespace")),
    ] {
        if !value.is_empty() {
            for message in dns1123_label_errors(value) {
                errors.push(FieldError::invalid(path.child(key), value, message));
            }
        }
    }
    errors.extend(secret_ref_name(source, "secretRef", path));
    errors
}

/// `validateScaleIOVolumeSource`: a gateway, system and volume name.
fn scale_io(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    ["gateway", "system", "volumeName"]
        .into_iter()
        .filter_map(|key| required_str(source, key, path))
        .collect()
}

/// `validateCSIVolumeSource`: `ValidateCSIDriverName`, then the node publish secret's name
/// (required, and a DNS subdomain reported on `csi.name`).
fn csi(source: Option<&Value>, path: &Path, _: &Volume) -> Vec<FieldError> {
    let mut errors = csi_driver_name(str_at(source, "driver"), &path.child("driver"));
    if let Some(secret) = source
        .and_then(|s| s.get("nodePublishSecretRef"))
        .filter(|r| !r.is_null())
    {
        let name = str_at(Some(secret), "name");
        if name.is_empty() {
            errors.push(FieldError::required(
                path.child("nodePublishSecretRef").child("name"),
                "",
            ));
        } else {
            for message in dns1123_subdomain_name_errors(name) {
                errors.push(FieldError::invalid(path.child("name"), name, message));
            }
        }
    }
    errors
}

/// `ValidateCSIDriverName`: required; at most 63 bytes; a DNS subdomain once lower-cased.
fn csi_driver_name(driver: &str, path: &Path) -> Vec<FieldError> {
    if driver.is_empty() {
        return vec![FieldError::required(path, "")];
    }
    let mut errors = Vec::new();
    if driver.len() > 63 {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            path,
            BadValue::Omit,
            "may not be more than 63 bytes",
        ));
    }
    for message in dns1123_subdomain_name_errors(&driver.to_lowercase()) {
        errors.push(FieldError::invalid(path, driver, message));
    }
    errors
}

/// `validateEphemeralVolumeSource`: a claim template (`ValidatePersistentVolumeClaimTemplate`:
/// its metadata, then its spec as a claim's, with the options a new template gets); then, in a
/// Pod, the name of the claim it creates (`<pod>-<volume>`) is an object name.
fn ephemeral(source: Option<&Value>, path: &Path, volume: &Volume) -> Vec<FieldError> {
    let template_path = path.child("volumeClaimTemplate");
    let Some(template) = source
        .and_then(|s| s.get("volumeClaimTemplate"))
        .filter(|t| !t.is_null())
    else {
        return vec![FieldError::required(template_path, "")];
    };
    let mut errors =
        template_object_meta(template.get("metadata"), &template_path.child("metadata"));
    errors.extend(claim::spec(
        template.get("spec"),
        &template_path.child("spec"),
        false,
    ));
    if let Some(pod) = volume.pod.filter(|p| !p.is_empty())
        && !volume.name.is_empty()
    {
        let claim = format!("{pod}-{}", volume.name);
        for message in dns1123_subdomain_name_errors(&claim) {
            errors.push(FieldError::invalid(
                volume.path.child("name"),
                volume.name,
                format!("PVC name {}: {message}", go_quote(&claim)),
            ));
        }
    }
    errors
}

/// `apimachineryvalidation.TotalAnnotationSizeLimitB`.
const ANNOTATIONS_MAX_BYTES: usize = 256 * 1024;

/// The fields of `metav1.ObjectMeta` a template may not set, in Go's field order, with the
/// path `validateFieldAllowList` reports (the Go field name with its first letter lowered).
const TEMPLATE_FORBIDDEN_META: &[(&str, &str)] = &[
    ("name", "name"),
    ("generateName", "generateName"),
    ("namespace", "namespace"),
    ("selfLink", "selfLink"),
    ("uid", "uID"),
    ("resourceVersion", "resourceVersion"),
    ("generation", "generation"),
    ("creationTimestamp", "creationTimestamp"),
    ("deletionTimestamp", "deletionTimestamp"),
    ("deletionGracePeriodSeconds", "deletionGracePeriodSeconds"),
    ("ownerReferences", "ownerReferences"),
    ("finalizers", "finalizers"),
    ("managedFields", "managedFields"),
];

/// `ValidateTemplateObjectMeta`: annotations, labels, and nothing else set. (Go walks the
/// annotations in random order, so a scenario gives one bad key.)
pub(super) fn template_object_meta(meta: Option<&Value>, path: &Path) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let annotations_path = path.child("annotations");
    let annotations = meta
        .and_then(|m| m.get("annotations"))
        .and_then(Value::as_object);
    let mut total = 0;
    for (key, value) in annotations.into_iter().flatten() {
        for message in label_key_errors(&key.to_lowercase()) {
            errors.push(FieldError::invalid(&annotations_path, key, message));
        }
        total += key.len() + value.as_str().map_or(0, str::len);
    }
    if total > ANNOTATIONS_MAX_BYTES {
        errors.push(FieldError::new(
            ErrorType::TooLong,
            &annotations_path,
            BadValue::Omit,
            format!("may not be more than {ANNOTATIONS_MAX_BYTES} bytes"),
        ));
    }
    errors.extend(labels(
        meta.and_then(|m| m.get("labels")),
        &path.child("labels"),
    ));
    for (key, reported) in TEMPLATE_FORBIDDEN_META {
        let set = match meta.and_then(|m| m.get(*key)) {
            None | Some(Value::Null) => false,
            Some(Value::String(s)) => !s.is_empty(),
            Some(Value::Number(n)) => n.as_i64() != Some(0),
            Some(_) => true,
        };
        if set {
            errors.push(FieldError::forbidden(path.child(reported), "cannot be set"));
        }
    }
    errors
}

/// The pull policies `validatePullPolicy` supports, as `sets.List` sorts them.
const PULL_POLICIES: &[&str] = &["Always", "IfNotPresent", "Never"];

/// `validateImageVolumeSource`: in a Pod a reference (a template may leave it to be filled
/// in), and a pull policy (which the defaulting sets).
fn image(source: Option<&Value>, path: &Path, volume: &Volume) -> Vec<FieldError> {
    let mut errors = Vec::new();
    if volume.pod.is_some() {
        errors.extend(required_str(source, "reference", path));
    }
    match str_at(source, "pullPolicy") {
        "Always" | "IfNotPresent" | "Never" => {}
        "" => errors.push(FieldError::required(path.child("pullPolicy"), "")),
        other => errors.push(FieldError::not_supported(
            path.child("pullPolicy"),
            other,
            PULL_POLICIES,
        )),
    }
    errors
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn texts(errors: &[FieldError]) -> Vec<String> {
        errors.iter().map(ToString::to_string).collect()
    }

    #[test]
    fn host_port_pairs_split_as_go_splits_them() {
        assert!(splits_host_port("registry:7861"));
        assert!(splits_host_port("[::1]:7861"));
        assert!(splits_host_port(":7861"));
        assert!(!splits_host_port("registry"));
        assert!(!splits_host_port("::1:7861"));
        assert!(!splits_host_port("[::1]7861"));
        assert!(!splits_host_port("a]:1"));
    }

    #[test]
    fn iscsi_names_follow_their_forms() {
        assert!(!bad_iscsi_name("iqn.2001-04.com.example:storage.disk2"));
        assert!(bad_iscsi_name("iqn.2001-04.com.example"));
        assert!(!bad_iscsi_name("eui.02004567A425678D"));
        assert!(bad_iscsi_name("eui.02004567A425678"));
        assert!(!bad_iscsi_name("other"));
    }

    #[test]
    fn a_second_source_is_forbidden_and_the_first_is_checked() {
        let volume = json!({"name": "v", "nfs": {"server": "s", "path": "export"},
                            "cephfs": {"monitors": []}});
        let path = Path::new("spec").child("volumes").index(0);
        assert_eq!(
            texts(&volume_source(&volume, None, &path)),
            [
                r#"spec.volumes[0].nfs.path: Invalid value: "export": must be an absolute path"#,
                "spec.volumes[0].cephFS: Forbidden: may not specify more than 1 volume type",
            ]
        );
    }

    #[test]
    fn an_ephemeral_volume_names_a_claim_of_its_pod() {
        let volume = json!({"name": "scratch", "ephemeral": {"volumeClaimTemplate": {
            "metadata": {"name": "x"},
            "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}}});
        let path = Path::new("spec").child("volumes").index(0);
        let pod = "p".repeat(250);
        let errors = texts(&volume_source(&volume, Some(&pod), &path));
        assert_eq!(errors.len(), 2, "{errors:?}");
        assert_eq!(
            errors[0],
            "spec.volumes[0].ephemeral.volumeClaimTemplate.metadata.name: Forbidden: cannot be set"
        );
        assert!(errors[1].contains("must be no more than 253 characters"));
        let created = created_claims(&[volume], Some("p"));
        let claim = json!({"name": "data", "persistentVolumeClaim": {"claimName": "p-scratch"}});
        assert!(claim_not_created(&claim, &created, &path).is_some());
    }
}
