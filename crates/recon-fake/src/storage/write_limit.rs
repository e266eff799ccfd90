//! etcd's limits on one write. kube-apiserver sends each write to etcd as one transaction
//! (`Txn`) over gRPC, whose client refuses to send a message over 2 MiB (etcd clientv3's
//! `MaxCallSendMsgSize`): `rpc error: code = ResourceExhausted desc = trying to send message
//! larger than max (<size> vs. 2097152)`. Below that, etcd refuses a raft request over its
//! `--max-request-bytes` (1.5 MiB by default): `etcdserver: request is too large`. Either is a
//! plain 500; create, update and every patch but apply first try again without
//! `managedFields`, which can be large (`isTooLargeError` in the REST handlers), and the error
//! is the retry's.
//!
//! The size counted is the transaction's protobuf encoding (`storage/etcd3/store.go`): a create
//! is `If(mod_revision(key) == 0).Then(Put(key, value))`; an update is
//! `If(mod_revision(key) == rev).Then(Put(key, value)).Else(Get(key))`. The key is
//! `/registry/<group>/<resource>/<namespace>/<name>` for a custom resource, and the value its
//! JSON (without `resourceVersion`) and a newline, so the sizes here are etcd's to the byte
//! (measured on kube-apiserver 1.36.2: the scenarios `limits/object-over-the-storage-limit` and
//! `limits/object-over-the-grpc-message-limit`). The raft request adds its header: 14 bytes
//! with the 10-byte request ID the recording etcd used (the ID's length follows the member ID).
//!
//! Built-in kinds are stored as protobuf: their size is that encoding's, computed from the Go
//! types' protobuf fields ([`proto_size`]), without encoding them.

use recon_apimachinery::go_json::go_json;
use recon_apimachinery::json::Value;

use crate::gotype::proto_size::varint_len;
use crate::gotype::{self, proto_size};
use crate::wire::error::ApiError;
use crate::wire::object::Object;

/// etcd's default `--max-request-bytes`.
const MAX_REQUEST_BYTES: usize = 3 << 19;
/// etcd clientv3's default `MaxCallSendMsgSize`.
const MAX_SEND_MESSAGE_BYTES: usize = 2 << 20;
/// A raft request's header beyond the transaction: the field tag (2 bytes) and length of the
/// `RequestHeader`, and the request ID's tag and 10-byte varint.
const RAFT_HEADER_BYTES: usize = 14;
/// What a write can add beyond the request body and the stored object (metadata the server
/// sets, a `managedFields` entry): below the limit by this much, a write fits without measuring.
const SLACK: usize = 64 << 10;

/// Where an object is written in etcd, and how.
#[derive(Debug, Clone)]
pub(crate) struct EtcdWrite {
    /// The etcd key (`/registry/...`).
    pub(crate) key: String,
    /// The revision an update is conditioned on; `None` for a create.
    pub(crate) revision: Option<u64>,
    /// The group of a built-in kind, stored as protobuf; `None` for a custom resource,
    /// stored as JSON.
    pub(crate) protobuf_group: Option<String>,
}

impl EtcdWrite {
    /// The write of the object at `object_key` (`namespace/name` or `name`) of a resource:
    /// `/registry/<group>/<plural>/...` for a custom resource, `/registry/<plural>/...` (and
    /// upstream's few other prefixes) for a built-in one.
    pub(crate) fn new(
        group: &str,
        plural: &str,
        custom: bool,
        object_key: &str,
        revision: Option<u64>,
    ) -> EtcdWrite {
        let prefix = match (custom, plural) {
            (true, _) => format!("{group}/{plural}"),
            (false, "services") => "services/specs".to_owned(),
            (false, "endpoints") => "services/endpoints".to_owned(),
            (false, "nodes") => "minions".to_owned(),
            (false, _) => plural.to_owned(),
        };
        EtcdWrite {
            key: format!("/registry/{prefix}/{object_key}"),
            revision,
            protobuf_group: (!custom).then(|| group.to_owned()),
        }
    }

    /// The protobuf size of the transaction that writes `value_len` bytes.
    fn txn_bytes(&self, value_len: usize) -> usize {
        let key = field(self.key.len());
        // Compare{target: MOD, key, mod_revision}: mod_revision is a oneof, written even at 0.
        let compare = 2 + key + 1 + varint_len(self.revision.unwrap_or(0));
        let put = key + field(value_len);
        let mut txn = field(compare) + field(field(put));
        if self.revision.is_some() {
            // Else(Get(key)): RequestOp{request_range: RangeRequest{key}}.
            txn += field(field(key));
        }
        txn
    }
}

/// A length-delimited field's bytes: a one-byte tag, the length, the payload.
fn field(len: usize) -> usize {
    1 + varint_len(len as u64) + len
}

/// Checks that `obj`, written as `write`, fits etcd's limits; `bound` is the size of what it was made from (the request body and
/// the stored object), so the common small write is not measured. Too large, `managedFields`
/// are dropped when `drop_managed_fields` allows (not for apply), and the object measured
/// again.
pub(crate) fn fit(
    obj: &mut Object,
    write: &EtcdWrite,
    bound: usize,
    drop_managed_fields: bool,
) -> Result<(), ApiError> {
    if bound.saturating_add(SLACK) < MAX_REQUEST_BYTES {
        return Ok(());
    }
    let mut refusal = refused(obj, write);
    if refusal.is_some() && drop_managed_fields {
        let metadata = obj.get_mut("metadata").and_then(|m| m.as_object_mut());
        if metadata.and_then(|m| m.remove("managedFields")).is_some() {
            refusal = refused(obj, write);
        }
    }
    match refusal {
        None => Ok(()),
        Some(message) => Err(ApiError::internal_unknown(message)),
    }
}

/// etcd's (or its client's) error for writing `obj` as `write`, if any.
fn refused(obj: &Object, write: &EtcdWrite) -> Option<String> {
    let txn = write.txn_bytes(stored_len(obj, write.protobuf_group.as_deref()));
    if txn > MAX_SEND_MESSAGE_BYTES {
        return Some(format!(
            "rpc error: code = ResourceExhausted desc = trying to send message larger than max ({txn} vs. {MAX_SEND_MESSAGE_BYTES})"
        ));
    }
    // InternalRaftRequest{header, txn}.
    (field(txn) + RAFT_HEADER_BYTES > MAX_REQUEST_BYTES)
        .then(|| "etcdserver: request is too large".to_owned())
}

/// The bytes etcd holds for `obj`, without `resourceVersion` (which storage clears): for a
/// built-in kind of `protobuf_group`, its protobuf ([`proto_size`]); otherwise its JSON as Go
/// writes it and the encoder's newline.
fn stored_len(obj: &Object, protobuf_group: Option<&str>) -> usize {
    let mut obj = obj.clone();
    if let Some(metadata) = obj.get_mut("metadata").and_then(|m| m.as_object_mut()) {
        metadata.remove("resourceVersion");
    }
    let text = |key: &str| obj.get(key).and_then(Value::as_str).unwrap_or("");
    let (api_version, kind) = (text("apiVersion"), text("kind"));
    let version = api_version.rsplit('/').next().unwrap_or("");
    let protobuf = protobuf_group
        .and_then(|group| gotype::kind_struct(group, version, kind))
        .and_then(|schema| proto_size::stored_len(schema, api_version, kind, &obj));
    protobuf.unwrap_or_else(|| go_json(&Value::Object(obj.clone())).len() + 1)
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;
    use recon_apimachinery::json::Value;

    use super::*;

    /// A Widget as kube-apiserver 1.36.2 stored it, with a blob of `n` bytes.
    fn widget(name: &str, n: usize, generation: u64) -> Object {
        let v = json!({
            "apiVersion": "conformance.example.com/v1",
            "kind": "Widget",
            "metadata": {
                "creationTimestamp": "2026-12-01T22:40:00Z",
                "generation": generation,
                "name": name,
                "namespace": "sz-a",
                "resourceVersion": "538",
                "uid": "0123456789abcdef0123456789abcdef0123",
            },
            "spec": {"blob": "x".repeat(n)},
        });
        v.as_object().cloned().unwrap_or_default()
    }

    fn widget_write(name: &str, revision: Option<u64>) -> EtcdWrite {
        let key = format!("sz-a/{name}");
        EtcdWrite::new("conformance.example.com", "widgets", true, &key, revision)
    }

    fn message(obj: &mut Object, write: &EtcdWrite) -> Option<String> {
        fit(obj, write, usize::MAX, true)
            .err()
            .map(|e| e.message().to_owned())
    }

    #[test]
    fn a_small_write_is_not_measured() {
        let mut small = widget("a", 10, 1);
        assert!(fit(&mut small, &widget_write("a", None), 100, true).is_ok());
    }

    #[test]
    fn over_2_mib_the_grpc_client_refuses_with_the_transaction_s_size() {
        // Measured on kube-apiserver 1.36.2: a create and a merge patch (at revision 538).
        let mut created = widget("big2200000", 2_200_000, 1);
        assert_eq!(
            message(&mut created, &widget_write("big2200000", None)).as_deref(),
            Some(
                "rpc error: code = ResourceExhausted desc = trying to send message larger than max (2200373 vs. 2097152)"
            )
        );
        let mut updated = widget("upd", 2_200_000, 2);
        assert_eq!(
            message(&mut updated, &widget_write("upd", Some(538))).as_deref(),
            Some(
                "rpc error: code = ResourceExhausted desc = trying to send message larger than max (2200409 vs. 2097152)"
            )
        );
    }

    #[test]
    fn over_1_5_mib_etcd_refuses_the_raft_request() {
        // The largest blob a 10-character Widget took on kube-apiserver 1.36.2, and one more.
        let mut fits = widget("b000000001", 1_572_476, 1);
        assert_eq!(message(&mut fits, &widget_write("b000000001", None)), None);
        let mut over = widget("b000000001", 1_572_477, 1);
        assert_eq!(
            message(&mut over, &widget_write("b000000001", None)).as_deref(),
            Some("etcdserver: request is too large")
        );
    }

    #[test]
    fn managed_fields_are_dropped_to_fit_unless_applying() {
        let blob = "x".repeat(MAX_REQUEST_BYTES / 2);
        let with_fields = || {
            let mut obj = widget("a", MAX_REQUEST_BYTES / 2, 1);
            obj["metadata"]["managedFields"] = json!([{"manager": blob}]);
            obj
        };
        let write = widget_write("a", None);
        let mut obj = with_fields();
        assert!(fit(&mut obj, &write, MAX_REQUEST_BYTES, true).is_ok());
        assert_eq!(obj["metadata"].get("managedFields"), None::<&Value>);
        let mut applied = with_fields();
        assert!(fit(&mut applied, &write, MAX_REQUEST_BYTES, false).is_err());
    }

    #[test]
    fn built_in_keys_use_upstream_s_prefixes() {
        let key = |plural| EtcdWrite::new("", plural, false, "ns/a", None).key;
        assert_eq!(key("deployments"), "/registry/deployments/ns/a");
        assert_eq!(key("services"), "/registry/services/specs/ns/a");
    }
}
