//! Owner references to a case's given objects, written without knowing their uids: a given
//! object without a uid gets one derived from what it is ([`given_uid`]), so a test can name it
//! before the case runs.

use serde::Serialize;
use serde_json::{Value, json};

/// The uid a case's cluster gives a `given` object that has none: derived from its
/// `apiVersion`'s group, its kind, namespace and name, so the same object gets the same uid in
/// every case and every run, whatever else the case holds. Formatted as a version-8 (custom)
/// UUID.
///
/// ```
/// let uid = recon_testing::given_uid("example.com/v1", "Widget", Some("default"), "w");
/// assert_eq!(uid, recon_testing::given_uid("example.com/v2", "Widget", Some("default"), "w"));
/// assert_ne!(uid, recon_testing::given_uid("example.com/v1", "Widget", Some("default"), "x"));
/// assert_eq!(&uid[14..15], "8");
/// ```
pub fn given_uid(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> String {
    let group = api_version.rsplit_once('/').map_or("", |(g, _)| g);
    let identity = format!("{group}\0{kind}\0{}\0{name}", namespace.unwrap_or(""));
    let mut bytes = [0u8; 16];
    bytes[..8].copy_from_slice(&fnv1a(identity.as_bytes(), 0xcbf2_9ce4_8422_2325).to_be_bytes());
    bytes[8..].copy_from_slice(&fnv1a(identity.as_bytes(), 0x6c62_272e_07bb_0142).to_be_bytes());
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// 64-bit FNV-1a from `basis`: stable across platforms and Rust versions, unlike std's hasher.
fn fnv1a(data: &[u8], basis: u64) -> u64 {
    data.iter().fold(basis, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The uid [`given_uid`] derives for `object` from what it is.
pub(crate) fn derived_uid(object: &Value) -> String {
    let text = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let meta = &object["metadata"];
    given_uid(
        &text(&object["apiVersion"]),
        &text(&object["kind"]),
        meta["namespace"].as_str(),
        &text(&meta["name"]),
    )
}

/// The uid of `object` as its case's cluster holds it: its own, or [`given_uid`].
fn uid_of(object: &Value) -> String {
    match object["metadata"]["uid"].as_str() {
        Some(uid) if !uid.is_empty() => uid.to_owned(),
        _ => derived_uid(object),
    }
}

fn reference(owner: &impl Serialize) -> Value {
    let owner = serde_json::to_value(owner).unwrap_or(Value::Null);
    json!({
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": owner["metadata"]["name"],
        "uid": uid_of(&owner),
        "controller": true,
    })
}

/// The owner reference of a child that `owner` (a case's given object, or the case's
/// resource) controls, as recon's child reconcilers and Go's `SetControllerReference` write
/// it: `controller` and `blockOwnerDeletion` set.
///
/// ```
/// use serde_json::json;
///
/// let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
///     "metadata": {"name": "w", "namespace": "default"}});
/// let expected_child = json!({"apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "w-config", "namespace": "default",
///         "ownerReferences": [recon_testing::controller_reference(&widget)]}});
/// assert_eq!(expected_child["metadata"]["ownerReferences"][0]["uid"],
///     recon_testing::given_uid("example.com/v1", "Widget", Some("default"), "w"));
/// ```
pub fn controller_reference(owner: &impl Serialize) -> Value {
    let mut r = reference(owner);
    r["blockOwnerDeletion"] = json!(true);
    r
}

/// As [`controller_reference`], the way kube's `Resource::controller_owner_ref` writes it:
/// `controller` set, no `blockOwnerDeletion`.
pub fn kube_controller_reference(owner: &impl Serialize) -> Value {
    reference(owner)
}
