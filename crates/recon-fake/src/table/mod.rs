//! `as=Table`: the tabular form kubectl asks every verb's answer in
//! (apiserver/pkg/endpoints/handlers/response.go, `asTable`), built by the resource's table
//! convertor: a CRD's additionalPrinterColumns ([`custom`]), the printers of the built-in kinds
//! ([`printers`]), or the default convertor (apiserver/pkg/registry/rest/table.go: Name and
//! Created At).

pub(crate) mod age;
pub(crate) mod custom;
mod document;
pub(crate) mod jsonpath;
mod printers;

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use crate::registry::resource::ResourceType;
use crate::request::negotiate::{Format, negotiate, refuse_table};
use crate::request::route::Query;
use crate::wire::error::ApiError;
use crate::wire::object::{Object, metadata_document, with_type_meta};
use crate::wire::status::Reason;

pub(crate) use document::ListMeta;
use document::{Cell, Column, Row};

/// The version of `meta.k8s.io` the Table is asked in (response.go accepts both).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TableVersion {
    V1,
    V1beta1,
}

impl TableVersion {
    /// The version an `Accept` option's `v=` names, if a Table exists in it.
    pub(crate) fn parse(version: &str) -> Option<Self> {
        match version {
            "v1" => Some(TableVersion::V1),
            "v1beta1" => Some(TableVersion::V1beta1),
            _ => None,
        }
    }

    fn api_version(self) -> &'static str {
        match self {
            TableVersion::V1 => "meta.k8s.io/v1",
            TableVersion::V1beta1 => "meta.k8s.io/v1beta1",
        }
    }
}

/// `TableOptions.includeObject`: what each row's `object` carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum IncludeObject {
    None,
    Object,
    /// The default: the object's `PartialObjectMetadata`.
    Metadata,
}

impl IncludeObject {
    /// The request's `includeObject`, validated as response.go's `optionsForTransform` does
    /// (apimachinery/pkg/apis/meta/v1beta1/validation, `ValidateTableOptions`).
    pub(crate) fn parse(query: &Query) -> Result<Self, ApiError> {
        match query.get("includeObject").unwrap_or("") {
            "" | "Metadata" => Ok(IncludeObject::Metadata),
            "None" => Ok(IncludeObject::None),
            "Object" => Ok(IncludeObject::Object),
            other => Err(ApiError::new(
                400,
                Reason::BadRequest,
                format!(
                    "Unable to convert to Table as requested: includeObject: Invalid value: {}: \
                     must be 'Metadata', 'Object', 'None', or empty",
                    recon_apimachinery::go_quote(other)
                ),
            )),
        }
    }
}

/// Whether objects of `rt` served at `version` are converted from another storage version by
/// a conversion of their own (the served form may not hold all the internal one does), so
/// that their stored form is what a built-in printer reads ([`Item::stored`]).
pub(crate) fn prints_stored(rt: &ResourceType, version: &str) -> bool {
    !rt.custom
        && rt.hooks.convert.is_some()
        && rt.storage.as_ref().is_some_and(|s| s.name != version)
}

/// One request's table: its version, what rows carry, and the server's time for ages.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TableRequest {
    pub(crate) version: TableVersion,
    pub(crate) include: IncludeObject,
    pub(crate) now: Timestamp,
    /// Whether the column definitions are written (a watch writes them in its first event
    /// only: response.go, `watchEmbeddedEncoder.doEncode`).
    pub(crate) headers: bool,
}

/// How a resource's rows are printed.
enum Convertor<'a> {
    /// Name and Created At (rest/table.go).
    Default,
    Builtin(&'static printers::Printer),
    Custom(&'a custom::CustomColumns),
}

/// The convertor of `rt` at `version`, or the 406 of a kind whose printer recon lacks.
fn convertor<'a>(rt: &'a ResourceType, version: &str) -> Result<Convertor<'a>, ApiError> {
    if rt.custom {
        let columns = rt
            .versions
            .iter()
            .find(|v| v.name == version)
            .and_then(|v| v.columns.as_deref());
        return Ok(columns.map_or(Convertor::Default, Convertor::Custom));
    }
    match printers::find(&rt.group, &rt.kind) {
        printers::Found::Ported(printer) => Ok(Convertor::Builtin(printer)),
        printers::Found::NoHandler => Ok(Convertor::Default),
        printers::Found::NotPorted => Err(ApiError::new(
            406,
            Reason::NotAcceptable,
            format!(
                "recon does not print {} ({}) as a Table yet",
                rt.kind,
                rt.group_resource()
            ),
        )),
    }
}

/// Refuses, before anything is served, a request for a Table of a kind recon cannot print yet
/// (see [`printers::Found::NotPorted`]): a write is not made, a watch not opened.
pub(crate) fn check_printable(
    rt: &ResourceType,
    version: &str,
    accept: &str,
) -> Result<(), ApiError> {
    match negotiate(accept, false) {
        Ok(Format::Table(_)) => convertor(rt, version).map(|_| ()),
        _ => Ok(()),
    }
}

/// Whether the `status` of `rt` is served without a table convertor: the built-ins whose
/// `StatusREST` has no `ConvertToTable` (pkg/registry/resource/resourceclaim/storage and
/// devicetaintrule's, resourcepoolstatusrequest's, pkg/registry/scheduling/podgroup's).
pub(crate) fn status_without_table(rt: &ResourceType) -> bool {
    !rt.custom
        && matches!(
            (rt.group.as_str(), rt.kind.as_str()),
            (
                "resource.k8s.io",
                "ResourceClaim" | "DeviceTaintRule" | "ResourcePoolStatusRequest"
            ) | ("scheduling.k8s.io", "PodGroup")
        )
}

/// A subresource other than `status` asked for a Table: built-in subresources have no table
/// convertor and refuse it ([`refuse_table`], which also gives the `Accept` header to answer
/// with instead); a custom resource's `scale` has one
/// (apiextensions-apiserver/pkg/apiserver/customresource_handler.go): its Table is printed by
/// the scale handler ([`scale_table`]), the request's `Accept` kept.
pub(crate) fn refuse_for_subresource(
    rt: &ResourceType,
    subresource: Option<&str>,
    accept: &str,
) -> Result<Option<String>, ApiError> {
    if rt.custom && subresource == Some("scale") {
        return Ok(None);
    }
    refuse_table(accept)
}

/// One object to print: its decoded form and, as served, its bytes (with its `TypeMeta`).
pub(crate) struct Item<'a> {
    pub(crate) object: &'a Object,
    pub(crate) served: &'a [u8],
    /// The object as stored, when it is served in another version than its storage's: a
    /// built-in's printer reads the internal object, which the stored one stands for (an
    /// autoscaling/v1 HorizontalPodAutoscaler is printed from its v2 form).
    pub(crate) stored: Option<&'a Object>,
}

/// The Table of `items`, objects of `rt` served at `version`. `meta` is the list's (or, for one
/// object, its own `resourceVersion`).
pub(crate) fn table(
    rt: &ResourceType,
    version: &str,
    request: &TableRequest,
    items: &[Item<'_>],
    meta: &ListMeta,
) -> Result<Vec<u8>, ApiError> {
    write(&convertor(rt, version)?, request, items, meta)
}

/// The Table of a custom resource's Scale (served as `autoscaling/v1`), printed with the
/// scale's own columns ([`CustomColumns::of_scale`]) as apiextensions-apiserver's scale
/// request scope does (`customresource_handler.go`).
pub(crate) fn scale_table(
    columns: &custom::CustomColumns,
    request: &TableRequest,
    scale: &Item<'_>,
    meta: &ListMeta,
) -> Result<Vec<u8>, ApiError> {
    write(
        &Convertor::Custom(columns),
        request,
        std::slice::from_ref(scale),
        meta,
    )
}

/// The Table of `items` printed by `convertor`.
fn write(
    convertor: &Convertor<'_>,
    request: &TableRequest,
    items: &[Item<'_>],
    meta: &ListMeta,
) -> Result<Vec<u8>, ApiError> {
    let columns: Vec<Column<'_>> = match convertor {
        Convertor::Default => DEFAULT_COLUMNS.to_vec(),
        Convertor::Builtin(printer) => printer.columns.to_vec(),
        Convertor::Custom(custom) => custom.columns(),
    };
    let mut rows = Vec::with_capacity(items.len());
    for item in items {
        let mut row = match convertor {
            Convertor::Default => Row::new(vec![
                Cell::text(name_of(item.object)),
                Cell::text(created_at(item.object)),
            ]),
            Convertor::Builtin(printer) => {
                (printer.row)(item.stored.unwrap_or(item.object), request.now)
            }
            Convertor::Custom(custom) => Row::new(custom.cells(item.object, request.now)),
        };
        row.object = row_object(request, item)?;
        rows.push(row);
    }
    // The default convertor appends to a nil slice: no rows are written `null`.
    let null_rows = rows.is_empty() && matches!(convertor, Convertor::Default);
    // kube-aggregator's APIService convertor writes its columns even without headers
    // (kube-aggregator/pkg/registry/apiservice/etcd/etcd.go).
    let headers =
        request.headers || matches!(convertor, Convertor::Builtin(p) if p.kind == "APIService");
    Ok(document::write(
        request.version.api_version(),
        meta,
        headers.then_some(&columns[..]),
        &rows,
        null_rows,
    ))
}

/// A row's `object`, as response.go's `asTable` sets it for `includeObject`.
fn row_object(request: &TableRequest, item: &Item<'_>) -> Result<Option<Vec<u8>>, ApiError> {
    Ok(match request.include {
        IncludeObject::None => None,
        IncludeObject::Object => Some(item.served.to_vec()),
        IncludeObject::Metadata => {
            let inner = match item.object.get("metadata") {
                Some(Value::Object(metadata)) => metadata_document(metadata),
                _ => metadata_document(&Object::new()),
            };
            Some(with_type_meta(
                request.version.api_version(),
                "PartialObjectMetadata",
                &inner,
            ))
        }
    })
}

/// The default convertor's columns (rest/table.go), described as `ObjectMeta` documents its
/// fields.
const DEFAULT_COLUMNS: [Column<'static>; 2] = [
    Column::new("Name", "string", "name", printers::NAME_DESCRIPTION, 0),
    Column::new(
        "Created At",
        "date",
        "",
        printers::CREATION_TIMESTAMP_DESCRIPTION,
        0,
    ),
];

fn name_of(obj: &Object) -> String {
    metadata_str(obj, "name").to_owned()
}

/// `metadata.<key>` as a string, empty when missing.
fn metadata_str<'a>(obj: &'a Object, key: &str) -> &'a str {
    obj.get("metadata")
        .and_then(|m| m.get(key))
        .and_then(Value::as_str)
        .unwrap_or("")
}

/// The default convertor's Created At: the creation time in RFC 3339, UTC (Go's zero time
/// when unset).
fn created_at(obj: &Object) -> String {
    match creation(obj) {
        Some(t) => recon_apimachinery::gotime::format(recon_apimachinery::gotime::Layout::Time, t),
        None => "0001-01-01T00:00:00Z".to_owned(),
    }
}

/// The object's creation time, if set and readable.
fn creation(obj: &Object) -> Option<Timestamp> {
    timestamp(metadata_str(obj, "creationTimestamp"))
}

/// A `metav1.Time` as written in an object (`None` when empty or unreadable).
fn timestamp(text: &str) -> Option<Timestamp> {
    if text.is_empty() {
        return None;
    }
    recon_apimachinery::gotime::parse(recon_apimachinery::gotime::Layout::Time, text).ok()
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn include_object_is_validated_with_the_servers_words() {
        let query = |q: &str| Query::parse(q);
        assert_eq!(
            IncludeObject::parse(&query("")).unwrap(),
            IncludeObject::Metadata
        );
        assert_eq!(
            IncludeObject::parse(&query("includeObject=None")).unwrap(),
            IncludeObject::None
        );
        let err = IncludeObject::parse(&query("includeObject=All")).unwrap_err();
        assert_eq!(err.code(), 400);
        assert_eq!(
            err.message(),
            "Unable to convert to Table as requested: includeObject: Invalid value: \"All\": \
             must be 'Metadata', 'Object', 'None', or empty"
        );
    }

    #[test]
    fn created_at_is_rfc3339_or_the_zero_time() {
        let obj = json!({"metadata": {"creationTimestamp": "2026-01-02T03:04:05Z"}});
        assert_eq!(created_at(obj.as_object().unwrap()), "2026-01-02T03:04:05Z");
        assert_eq!(created_at(&Object::new()), "0001-01-01T00:00:00Z");
    }
}
