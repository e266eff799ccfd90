//! One resource request, routed and typed: what every verb handler reads.

use std::borrow::Cow;
use std::sync::Arc;

use bytes::Bytes;

use super::negotiate::{Format, asks_for_a_list, negotiate, not_a_list, partial_metadata};
use super::reply::Body;
use super::route::{Query, ResourcePath};
use crate::registry::conversion;
use crate::registry::resource::ResourceType;
use crate::storage::stored::object_key;
use crate::table::{self, IncludeObject, Item, ListMeta, TableRequest, TableVersion};
use crate::user::UserInfo;
use crate::wire::error::ApiError;
use crate::wire::object::{DecodeContext, Object, decode_body, meta, with_type_meta};

/// One resource request, routed and typed.
pub(crate) struct Call<'a> {
    pub(crate) path: &'a ResourcePath,
    pub(crate) rt: Arc<ResourceType>,
    pub(crate) query: &'a Query,
    pub(crate) content_type: &'a str,
    pub(crate) accept: &'a str,
    pub(crate) user_agent: &'a str,
    /// Who the request acts as.
    pub(crate) user: &'a UserInfo,
    pub(crate) body: &'a [u8],
    /// The server's time when the request arrived: tables' ages count to it.
    pub(crate) now: jiff::Timestamp,
}

impl Call<'_> {
    pub(crate) fn api_version(&self) -> String {
        self.rt.api_version(&self.path.version)
    }

    /// The namespace an object of this request lives in (`None` for cluster-scoped types).
    pub(crate) fn namespace(&self) -> Option<&str> {
        if self.rt.namespaced {
            self.path.namespace.as_deref()
        } else {
            None
        }
    }

    pub(crate) fn name(&self) -> &str {
        self.path.name.as_deref().unwrap_or("")
    }

    pub(crate) fn key(&self) -> String {
        object_key(self.namespace(), self.name())
    }

    pub(crate) fn decode_context(&self) -> DecodeContext<'_> {
        DecodeContext {
            kind: &self.rt.kind,
            version: &self.path.version,
        }
    }

    /// Whether the request carries `dryRun=All` (any other value is rejected earlier).
    pub(crate) fn dry_run(&self) -> bool {
        self.query.all("dryRun").any(|v| v == "All")
    }

    /// Whether this is a server-side apply (`application/apply-patch+yaml`).
    pub(crate) fn is_apply(&self) -> bool {
        self.content_type.starts_with("application/apply-patch")
    }

    /// Whether this request's version serves `/status`.
    pub(crate) fn has_status(&self) -> bool {
        self.rt.has_status(&self.path.version)
    }

    /// A stored body as this request's version serves it, in the form the request asked for:
    /// the object, or its `PartialObjectMetadata` (response.go transforms every verb's answer).
    pub(crate) fn object_response(&self, stored: &Bytes) -> Result<Body, ApiError> {
        let format = negotiate(self.accept, false);
        // A built-in's metadata is taken from the object as the server holds it, before any
        // conversion into the request's version (`asPartialObjectMetadata` of
        // staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go).
        if matches!(format, Ok(Format::Metadata)) && !self.rt.custom {
            return Ok(partial_metadata(&self.key(), stored)
                .map_err(|e| e.to_api_error())?
                .into());
        }
        let body = match conversion::body_in_version(&self.rt, &self.path.version, stored)? {
            Cow::Borrowed(_) => stored.clone(),
            Cow::Owned(converted) => Bytes::from(converted),
        };
        let object = || with_type_meta(&self.api_version(), &self.rt.kind, &body);
        match format {
            Ok(Format::Metadata) => Ok(partial_metadata(&self.key(), &object())
                .map_err(|e| e.to_api_error())?
                .into()),
            Ok(Format::Table(version)) => Ok(self.table(version, &object(), Some(stored))?.into()),
            _ if asks_for_a_list(self.accept) => Err(not_a_list(&self.rt)),
            // The stored bytes themselves, shared with the store and the request log.
            _ => Ok(Body::typed(&self.api_version(), &self.rt.kind, &body)),
        }
    }

    /// The Table of one object (as served, with its `TypeMeta`, and as stored when known), for
    /// a request that asked for one in `version`; the table's `resourceVersion` is the
    /// object's.
    pub(crate) fn table(
        &self,
        version: TableVersion,
        object: &[u8],
        stored: Option<&[u8]>,
    ) -> Result<Vec<u8>, ApiError> {
        let decoded = decode_body(&self.key(), object).map_err(|e| e.to_api_error())?;
        let meta = ListMeta {
            resource_version: meta(&decoded)
                .and_then(|m| m.get("resourceVersion"))
                .and_then(recon_apimachinery::json::Value::as_str)
                .unwrap_or("")
                .to_owned(),
            ..ListMeta::default()
        };
        let stored: Vec<&[u8]> = stored.into_iter().collect();
        self.list_table(version, &[object.to_vec()], &stored, &meta)
    }

    /// The Table of a list's `items` (as served, with their `TypeMeta`; `stored`, when given,
    /// the same items as stored), with the list's metadata.
    pub(crate) fn list_table(
        &self,
        version: TableVersion,
        items: &[Vec<u8>],
        stored: &[&[u8]],
        meta: &ListMeta,
    ) -> Result<Vec<u8>, ApiError> {
        let request = TableRequest {
            version,
            include: IncludeObject::parse(self.query)?,
            now: self.now,
            headers: true,
        };
        let decoded: Vec<Object> = items
            .iter()
            .map(|o| decode_body(&self.key(), o).map_err(|e| e.to_api_error()))
            .collect::<Result<_, _>>()?;
        let internal: Vec<Object> =
            if table::prints_stored(&self.rt, &self.path.version) && stored.len() == items.len() {
                stored
                    .iter()
                    .map(|o| decode_body(&self.key(), o).map_err(|e| e.to_api_error()))
                    .collect::<Result<_, _>>()?
            } else {
                Vec::new()
            };
        let rows: Vec<Item<'_>> = decoded
            .iter()
            .zip(items)
            .enumerate()
            .map(|(i, (object, served))| Item {
                object,
                served,
                stored: internal.get(i),
            })
            .collect();
        table::table(&self.rt, &self.path.version, &request, &rows, meta)
    }
}
