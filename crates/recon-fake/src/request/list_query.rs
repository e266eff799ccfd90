//! The label and field selectors of a list, a watch or a delete-collection, and the storage keys
//! such a request reads.

use recon_apimachinery::names::dns1123_label_errors;
use recon_apimachinery::selector::{FieldOp, FieldSelector, LabelSelector};

use super::call::Call;
use crate::registry::resource::ResourceType;
use crate::storage::stored::{Stored, object_key};
use crate::wire::error::ApiError;
use crate::wire::object::DecodeError;

/// The `labelSelector` / `fieldSelector` of a list or delete-collection, parsed and checked
/// against the type's supported field labels.
pub(crate) struct ListQuery {
    labels: LabelSelector,
    fields: FieldSelector,
}

/// The storage keys a list or watch reads (and so decodes, each of them, before any selector
/// filters them).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Scope {
    /// One object.
    Key(String),
    /// Every key starting with this (`<namespace>/`, or `""` for all).
    Prefix(String),
}

impl Scope {
    pub(crate) fn contains(&self, key: &str) -> bool {
        match self {
            Scope::Key(k) => k == key,
            Scope::Prefix(p) => key.starts_with(p.as_str()),
        }
    }
}

impl ListQuery {
    pub(crate) fn parse(call: &Call<'_>) -> Result<Self, ApiError> {
        let labels = LabelSelector::parse(call.query.get("labelSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.0))?;
        let fields = FieldSelector::parse(call.query.get("fieldSelector").unwrap_or(""))
            .map_err(|e| ApiError::bad_request(e.0))?;
        for requirement in fields.requirements() {
            call.rt
                .field_labels
                .value(&requirement.field, &recon_apimachinery::json::Map::new())
                .map_err(ApiError::bad_request)?;
        }
        Ok(ListQuery { labels, fields })
    }

    /// Whether the selectors select everything.
    pub(crate) fn is_everything(&self) -> bool {
        self.labels.is_empty() && self.fields.requirements().is_empty()
    }

    /// The `key=value` pairs every selected object carries: the label index reads only their keys.
    pub(crate) fn required_labels(&self) -> impl Iterator<Item = (&str, &str)> {
        self.labels.required_equalities()
    }

    /// Whether the object stored at `key` is selected; `Err` when the selectors need the object
    /// and its body does not decode.
    pub(crate) fn matches(
        &self,
        rt: &ResourceType,
        key: &str,
        stored: &Stored,
    ) -> Result<bool, DecodeError> {
        if !self.labels.matches(|k| stored.label(k)) {
            return Ok(false);
        }
        // Name and namespace come from the storage key; other fields need the object.
        let (namespace, name) = split_key(key);
        let from_key = |field: &str| {
            field == "metadata.name"
                || (field == "metadata.namespace" && !rt.field_labels.no_namespace)
        };
        let object = if self
            .fields
            .requirements()
            .iter()
            .all(|r| from_key(&r.field))
        {
            None
        } else {
            Some(stored.decode(key)?)
        };
        Ok(self.fields.matches(|field| match field {
            "metadata.name" => Some(name.to_owned()),
            "metadata.namespace" if !rt.field_labels.no_namespace => Some(namespace.to_owned()),
            _ => object
                .as_ref()
                .and_then(|obj| rt.field_labels.value(field, obj).ok()),
        }))
    }

    /// The value an `=` / `==` requirement on `field` asks for (`RequiresExactMatch`).
    fn exact(&self, field: &str) -> Option<&str> {
        self.fields
            .requirements()
            .iter()
            .find(|r| r.field == field && r.op == FieldOp::Equals)
            .map(|r| r.value.as_str())
    }

    /// The keys a list or watch of `call` reads (`Store.ListPredicate`, `Store.WatchPredicate`):
    /// a selector naming a namespace narrows a request made across namespaces to it
    /// (`MatchesSingleNamespace`), and one naming an object, once its namespace is known, to
    /// that one key (`MatchesSingle`). Neither applies to a continued list.
    pub(crate) fn scope(&self, call: &Call<'_>) -> Scope {
        if call.query.get("continue").is_some_and(|c| !c.is_empty()) {
            return Scope::Prefix(call.namespace().map(prefix_of).unwrap_or_default());
        }
        let namespace = match call.namespace() {
            Some(ns) => Some(ns),
            None if call.rt.namespaced => self
                .exact("metadata.namespace")
                .filter(|ns| dns1123_label_errors(ns).is_empty()),
            None => None,
        };
        match self.exact("metadata.name") {
            Some(name) if namespace.is_some() || !call.rt.namespaced => {
                Scope::Key(object_key(namespace, name))
            }
            _ => Scope::Prefix(namespace.map(prefix_of).unwrap_or_default()),
        }
    }
}

fn prefix_of(namespace: &str) -> String {
    format!("{namespace}/")
}

/// `(namespace, name)` of a storage key (`<namespace>/<name>`, or `<name>` when cluster-scoped).
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}
