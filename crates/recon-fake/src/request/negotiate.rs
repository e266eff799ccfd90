//! Content negotiation for reads: the object itself, the metadata-only forms kube's metadata
//! API asks for (`PartialObjectMetadata`), or a Table ([`crate::table`]).

use crate::registry::resource::ResourceType;
use crate::table::TableVersion;
use crate::wire::error::ApiError;
use crate::wire::object::{
    DecodeError, Object, decode_body, meta, metadata_document, with_type_meta,
};
use crate::wire::status::Reason;

/// The response form an `Accept` header asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Format {
    /// The object (or list) itself.
    Full,
    /// `meta.k8s.io/v1` `PartialObjectMetadata` (`…List` for lists).
    Metadata,
    /// `meta.k8s.io` `Table`, in this version.
    Table(TableVersion),
}

pub(crate) const PARTIAL: &str = "meta.k8s.io/v1";

/// Content negotiation for reads: JSON, or the metadata-only forms kube's metadata API asks for.
pub(crate) fn negotiate(accept: &str, list: bool) -> Result<Format, ApiError> {
    if accept.trim().is_empty() {
        return Ok(Format::Full);
    }
    let mut refusal = None;
    for option in accept.split(',') {
        let mut params = option.split(';').map(str::trim);
        let media = params.next().unwrap_or("");
        if !matches!(media, "application/json" | "application/*" | "*/*") {
            continue;
        }
        let params: Vec<&str> = params.collect();
        let param = |name: &str| params.iter().find_map(|p| p.strip_prefix(name));
        let as_kind = param("as=");
        if as_kind == Some("Table") {
            // A Table exists in meta.k8s.io v1 and v1beta1 only (response.go,
            // `targetEncodingForTransform`); another group or version skips the option.
            if param("g=") == Some("meta.k8s.io")
                && let Some(version) = param("v=").and_then(TableVersion::parse)
            {
                return Ok(Format::Table(version));
            }
            continue;
        }
        match (as_kind, list) {
            (None, _) => return Ok(Format::Full),
            (Some("PartialObjectMetadata"), false) | (Some("PartialObjectMetadataList"), true) => {
                return Ok(Format::Metadata);
            }
            (Some("PartialObjectMetadata"), true) => {
                refusal =
                    Some("you requested PartialObjectMetadata, but the requested object is a list");
            }
            // Accepted as a media type, refused once the answer is transformed
            // ([`asks_for_a_list`]): a write asking for it still lands.
            (Some("PartialObjectMetadataList"), false) => return Ok(Format::Full),
            _ => {}
        }
    }
    Err(match refusal {
        Some(refusal) => ApiError::new(406, Reason::NotAcceptable, refusal),
        None => not_acceptable(),
    })
}

/// The 406 of an `Accept` header no form satisfies: the serializers a resource is served in
/// (recorded: scenario table/builtin-get-and-list, and custom resources alike).
pub(crate) fn not_acceptable() -> ApiError {
    ApiError::new(
        406,
        Reason::NotAcceptable,
        "only the following media types are accepted: application/json, application/yaml, \
         application/vnd.kubernetes.protobuf",
    )
}

/// For a subresource without a table convertor (every one but `status`): an `Accept` header
/// that only a Table satisfies is not acceptable, and the request is refused before it is
/// served (apiserver/pkg/endpoints/handlers/rest.go, `AllowsMediaTypeTransform`); one that
/// accepts something else too is answered as if it had not asked for a Table (`Some`: the
/// header without its Table options). Recorded in scenario
/// table/autoscaling-quota-csr-apiservice.
pub(crate) fn refuse_table(accept: &str) -> Result<Option<String>, ApiError> {
    if !matches!(negotiate(accept, false), Ok(Format::Table(_))) {
        return Ok(None);
    }
    let others: Vec<&str> = accept
        .split(',')
        .filter(|option| !option.split(';').any(|p| p.trim() == "as=Table"))
        .collect();
    if others.iter().all(|o| o.trim().is_empty()) {
        return Err(not_acceptable());
    }
    let others = others.join(",");
    negotiate(&others, false).map(|_| Some(others))
}

/// Whether the form `accept` asks for one object in is `PartialObjectMetadataList` (which
/// [`negotiate`] lets through as the object itself, to be refused with [`not_a_list`]).
pub(crate) fn asks_for_a_list(accept: &str) -> bool {
    let first_json = accept.split(',').find(|option| {
        let media = option.split(';').next().unwrap_or("").trim();
        matches!(media, "application/json" | "application/*" | "*/*")
    });
    first_json.is_some_and(|option| {
        option
            .split(';')
            .map(str::trim)
            .any(|p| p == "as=PartialObjectMetadataList")
    })
}

/// Why one object cannot be answered as `PartialObjectMetadataList`
/// (apiserver/pkg/endpoints/handlers/response.go, `doTransformObject`): a built-in type's
/// error names its Go type, `*<package>.<Kind>` of `k8s.io/kubernetes/pkg/apis/<package>`
/// (the group's first label, `core` for the core group and for `events.k8s.io`, whose Event
/// is core's); a custom resource, held as unstructured content, meets a plain 500.
pub(crate) fn not_a_list(rt: &ResourceType) -> ApiError {
    if rt.custom {
        return ApiError::internal_unknown("content is not a list");
    }
    let package = match rt.group.as_str() {
        "" | "events.k8s.io" => "core",
        group => group.split('.').next().unwrap_or(group),
    };
    ApiError::new(
        406,
        Reason::NotAcceptable,
        format!(
            "you requested PartialObjectMetadataList, but the requested object is not a list \
             (*{package}.{})",
            rt.kind
        ),
    )
}

/// `PartialObjectMetadata` of the body stored under `key`.
pub(crate) fn partial_metadata(key: &str, body: &[u8]) -> Result<Vec<u8>, DecodeError> {
    let obj = decode_body(key, body)?;
    let inner = match meta(&obj) {
        Some(metadata) => metadata_document(metadata),
        None => metadata_document(&Object::new()),
    };
    Ok(with_type_meta(PARTIAL, "PartialObjectMetadata", &inner))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kube_metadata_accept_headers_select_partial_metadata() {
        let get = "application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1";
        let list = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1";
        assert_eq!(negotiate(get, false).unwrap(), Format::Metadata);
        assert_eq!(negotiate(list, true).unwrap(), Format::Metadata);
        assert_eq!(negotiate("application/json", true).unwrap(), Format::Full);
        assert_eq!(negotiate("", false).unwrap(), Format::Full);
    }

    #[test]
    fn tables_in_meta_v1_and_v1beta1() {
        assert_eq!(
            negotiate("application/json;as=Table;g=meta.k8s.io;v=v1", true).unwrap(),
            Format::Table(TableVersion::V1)
        );
        assert_eq!(
            negotiate("application/json;as=Table;v=v1beta1;g=meta.k8s.io", false).unwrap(),
            Format::Table(TableVersion::V1beta1)
        );
        // kubectl's header: a Table, else the object.
        assert_eq!(
            negotiate(
                "application/json;as=Table;v=v2;g=meta.k8s.io,application/json",
                false
            )
            .unwrap(),
            Format::Full
        );
        assert_eq!(
            negotiate("application/json;as=Table;g=example.com;v=v1", true)
                .unwrap_err()
                .code(),
            406
        );
    }

    #[test]
    fn subresources_refuse_tables_unless_something_else_is_accepted() {
        let table = "application/json;as=Table;g=meta.k8s.io;v=v1";
        assert_eq!(refuse_table(table).unwrap_err().code(), 406);
        assert_eq!(
            refuse_table(&format!("{table}, application/json")).unwrap(),
            Some(" application/json".to_owned())
        );
        assert_eq!(refuse_table("application/json").unwrap(), None);
        assert_eq!(refuse_table("").unwrap(), None);
    }

    #[test]
    fn protobuf_is_not_acceptable() {
        assert_eq!(
            negotiate("application/vnd.kubernetes.protobuf", false)
                .unwrap_err()
                .code(),
            406
        );
    }
}
