//! GET of one object and of a collection: selectors, storage-key order, the list resourceVersion
//! (the current revision), and the response forms the real server writes (custom resource lists
//! carry typed items, built-in lists do not; `PartialObjectMetadata` on request).

use bytes::Bytes;
use recon_apimachinery::json::Value;

use crate::registry::conversion;
use crate::request::call::Call;
use crate::request::list_options::ListOptions;
use crate::request::list_query::{ListQuery, Scope, split_key};
use crate::request::negotiate::{Format, PARTIAL, negotiate, partial_metadata};
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::Stored;
use crate::table::{self, TableVersion};
use crate::wire::error::ApiError;
use crate::wire::object::{DecodeError, with_type_meta};

impl State {
    pub(crate) fn get(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        let format = negotiate(call.accept, false)?;
        let key = call.key();
        let Some(stored) = self.store.get(&call.rt.group_resource(), &key) else {
            return Err(ApiError::not_found(&call.rt.group_resource(), call.name()));
        };
        let body = match format {
            Format::Full | Format::Table(_) => {
                call.object_response(stored.served(&key).map_err(unreadable)?)?
            }
            Format::Metadata => partial_metadata(&key, &stored.body)
                .map_err(unreadable)?
                .into(),
        };
        Ok(Reply::json(200, body))
    }

    pub(crate) fn list(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        let format = negotiate(call.accept, true)?;
        let options = ListOptions::parse(call.query, false)?;
        let query = ListQuery::parse(call)?;
        let point = self.read_point(call, &options)?;
        if point.current && point.start.is_none() && options.limit == 0 && format == Format::Full {
            return Ok(Reply::json(200, self.list_matching(call, &query)?.0));
        }
        let selective = ["labelSelector", "fieldSelector"]
            .iter()
            .any(|p| call.query.get(p).is_some_and(|s| !s.trim().is_empty()));
        let page = self.page(call, &query, &point, options.limit, selective)?;
        let meta = ListMeta {
            revision: point.revision,
            continue_token: page.continue_token.as_deref().unwrap_or(""),
            remaining: page.remaining,
        };
        let body = match format {
            Format::Full => {
                let api_version = call.api_version();
                let items: Vec<Bytes> = page
                    .items
                    .iter()
                    .map(|(key, stored)| item_body(call, &api_version, key, stored))
                    .collect::<Result<_, _>>()?;
                list_body(
                    &call.rt.list_kind,
                    &api_version,
                    &meta,
                    &items,
                    call.rt.custom,
                )
            }
            Format::Metadata => {
                let items: Vec<Vec<u8>> = page
                    .items
                    .iter()
                    .map(|(key, stored)| partial_metadata(key, &stored.body).map_err(unreadable))
                    .collect::<Result<_, _>>()?;
                list_body("PartialObjectMetadataList", PARTIAL, &meta, &items, false)
            }
            Format::Table(version) => {
                let api_version = call.api_version();
                let items: Vec<Vec<u8>> = page
                    .items
                    .iter()
                    .map(|(key, stored)| typed_item(call, &api_version, key, stored))
                    .collect::<Result<_, _>>()?;
                let stored: Vec<&[u8]> = page.items.iter().map(|(_, s)| &s.body[..]).collect();
                list_table(call, version, &meta, &items, &stored)?
            }
        };
        Ok(Reply::json(200, body))
    }

    /// The stored objects a list selects, with their storage keys, in key order. etcd3's
    /// `GetList` decodes every object it reads before filtering, so one that does not decode
    /// fails the list whether or not it is selected (the first, in key order).
    fn matching<'a>(
        &'a self,
        call: &'a Call<'_>,
        query: &ListQuery,
    ) -> Result<Vec<(&'a String, &'a Stored)>, ApiError> {
        let resource = call.rt.group_resource();
        match query.scope(call) {
            Scope::Key(key) => {
                if let Some(stored) = self.store.get(&resource, &key) {
                    stored.served(&key).map_err(unreadable)?;
                }
            }
            Scope::Prefix(prefix) => {
                if let Some(e) = self.store.first_unreadable(&resource, &prefix) {
                    return Err(unreadable(e));
                }
            }
        }
        let required: Vec<(&str, &str)> = query.required_labels().collect();
        let mut selected = Vec::new();
        for (key, stored) in self
            .store
            .list_labelled(&resource, call.namespace(), &required)
        {
            if query.matches(&call.rt, key, stored).map_err(unreadable)? {
                selected.push((key, stored));
            }
        }
        Ok(selected)
    }

    /// The list response for `call`, and the names of its items.
    pub(crate) fn list_matching(
        &mut self,
        call: &Call<'_>,
        query: &ListQuery,
    ) -> Result<(Vec<u8>, Vec<String>), ApiError> {
        // A label this list selects on is indexed from now on, for the next list's sake.
        self.store.index_labels(
            &call.rt.group_resource(),
            query.required_labels().map(|(name, _)| name),
        );
        let api_version = call.api_version();
        let mut names = Vec::new();
        let mut items: Vec<Bytes> = Vec::new();
        for (key, stored) in self.matching(call, query)? {
            names.push(split_key(key).1.to_owned());
            items.push(item_body(call, &api_version, key, stored)?);
        }
        let meta = ListMeta {
            revision: self.store.revision(),
            continue_token: "",
            remaining: None,
        };
        let body = list_body(
            &call.rt.list_kind,
            &api_version,
            &meta,
            &items,
            call.rt.custom,
        );
        Ok((body, names))
    }
}

/// A list item: custom resource lists carry typed items, built-in lists do not.
fn item_body(
    call: &Call<'_>,
    api_version: &str,
    key: &str,
    stored: &Stored,
) -> Result<Bytes, ApiError> {
    let body = stored.served(key).map_err(unreadable)?;
    Ok(if call.rt.custom {
        let body = conversion::body_in_version(&call.rt, &call.path.version, body)?;
        Bytes::from(with_type_meta(api_version, &call.rt.kind, &body))
    } else if conversion::converts(&call.rt, &call.path.version) {
        Bytes::from(conversion::body_in_version(&call.rt, &call.path.version, body)?.into_owned())
    } else {
        body.clone()
    })
}

/// A list item as a Table row carries it: in the request's version, with its `TypeMeta`
/// (response.go converts each row's object to the request's version).
fn typed_item(
    call: &Call<'_>,
    api_version: &str,
    key: &str,
    stored: &Stored,
) -> Result<Vec<u8>, ApiError> {
    let body = stored.served(key).map_err(unreadable)?;
    let body = conversion::body_in_version(&call.rt, &call.path.version, body)?;
    Ok(with_type_meta(api_version, &call.rt.kind, &body))
}

/// The Table of a list's items, with the list's metadata.
fn list_table(
    call: &Call<'_>,
    version: TableVersion,
    meta: &ListMeta<'_>,
    items: &[Vec<u8>],
    stored: &[&[u8]],
) -> Result<Vec<u8>, ApiError> {
    let table_meta = table::ListMeta {
        resource_version: meta.revision.to_string(),
        continue_token: meta.continue_token.to_owned(),
        remaining: meta.remaining,
    };
    call.list_table(version, items, stored, &table_meta)
}

/// A read of an object whose body does not decode, answered as the real server answers it.
pub(crate) fn unreadable(e: DecodeError) -> ApiError {
    e.to_api_error()
}

/// `ListMeta`: the list's revision, and where the next page starts.
struct ListMeta<'a> {
    revision: u64,
    continue_token: &'a str,
    remaining: Option<usize>,
}

/// A list document. Custom resource lists are unstructured, which the server writes with sorted
/// keys and an explicit empty `continue`; typed lists follow their Go field order.
fn list_body<I: AsRef<[u8]>>(
    kind: &str,
    api_version: &str,
    meta: &ListMeta<'_>,
    items: &[I],
    unstructured: bool,
) -> Vec<u8> {
    let quote = |s: &str| Value::String(s.to_owned()).to_string();
    let rv = quote(&meta.revision.to_string());
    let remaining = meta
        .remaining
        .map(|n| format!(r#","remainingItemCount":{n}"#))
        .unwrap_or_default();
    // What comes before and after the items, which are written once, straight into the body.
    let (head, tail) = if unstructured {
        (
            format!(r#"{{"apiVersion":{},"items":"#, quote(api_version)),
            format!(
                r#","kind":{},"metadata":{{"continue":{}{remaining},"resourceVersion":{rv}}}}}"#,
                quote(kind),
                quote(meta.continue_token),
            ),
        )
    } else {
        let continue_field = if meta.continue_token.is_empty() {
            String::new()
        } else {
            format!(r#","continue":{}"#, quote(meta.continue_token))
        };
        (
            format!(
                r#"{{"kind":{},"apiVersion":{},"metadata":{{"resourceVersion":{rv}{continue_field}{remaining}}},"items":"#,
                quote(kind),
                quote(api_version)
            ),
            "}".to_owned(),
        )
    };
    let items_len = items.iter().map(|i| i.as_ref().len() + 1).sum::<usize>() + 1;
    let mut out = Vec::with_capacity(head.len() + items_len + tail.len());
    out.extend_from_slice(head.as_bytes());
    out.push(b'[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        out.extend_from_slice(item.as_ref());
    }
    out.push(b']');
    out.extend_from_slice(tail.as_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn list_documents_differ_for_typed_and_unstructured_lists() {
        let items = vec![br#"{"metadata":{"name":"a"}}"#.to_vec()];
        let at = |revision| ListMeta {
            revision,
            continue_token: "",
            remaining: None,
        };
        assert_eq!(
            String::from_utf8(list_body("ConfigMapList", "v1", &at(7), &items, false)).unwrap(),
            r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a"}}]}"#
        );
        assert_eq!(
            String::from_utf8(list_body::<Bytes>(
                "WidgetList",
                "example.com/v1",
                &at(7),
                &[],
                true
            ))
            .unwrap(),
            r#"{"apiVersion":"example.com/v1","items":[],"kind":"WidgetList","metadata":{"continue":"","resourceVersion":"7"}}"#
        );
    }
}
