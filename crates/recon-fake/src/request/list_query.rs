//! The label and field selectors of a list, a watch or a delete-collection.

use recon_apimachinery::selector::{FieldSelector, LabelSelector};

use super::call::Call;
use crate::registry::resource::ResourceType;
use crate::storage::stored::Stored;
use crate::wire::error::ApiError;
use crate::wire::object::decode_body;

/// The `labelSelector` / `fieldSelector` of a list or delete-collection, parsed and checked
/// against the type's supported field labels.
pub(crate) struct ListQuery {
    labels: LabelSelector,
    fields: FieldSelector,
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
                .value(&requirement.field, &serde_json::Map::new())
                .map_err(ApiError::bad_request)?;
        }
        Ok(ListQuery { labels, fields })
    }

    /// The `key=value` pairs every selected object carries: the label index reads only their keys.
    pub(crate) fn required_labels(&self) -> impl Iterator<Item = (&str, &str)> {
        self.labels.required_equalities()
    }

    pub(crate) fn matches(&self, rt: &ResourceType, key: &str, stored: &Stored) -> bool {
        if !self.labels.matches(|k| stored.label(k)) {
            return false;
        }
        // Name and namespace come from the storage key; other fields need the object, once.
        let (namespace, name) = split_key(key);
        let decoded = std::cell::OnceCell::new();
        self.fields.matches(|field| match field {
            "metadata.name" => Some(name.to_owned()),
            "metadata.namespace" if !rt.field_labels.no_namespace => Some(namespace.to_owned()),
            _ => {
                let obj = decoded.get_or_init(|| decode_body(&stored.body));
                rt.field_labels.value(field, obj).ok()
            }
        })
    }
}

/// `(namespace, name)` of a storage key (`<namespace>/<name>`, or `<name>` when cluster-scoped).
pub(crate) fn split_key(key: &str) -> (&str, &str) {
    key.rsplit_once('/').unwrap_or(("", key))
}
