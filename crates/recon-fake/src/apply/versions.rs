//! Managers that wrote through another version. kube-apiserver's field manager converts the
//! objects it compares into each manager's version (structured-merge-diff's
//! `reconcileManagedFieldsWithSchemaChanges`, then `update`): a manager whose version is no
//! longer served is dropped, and an object that does not fit a manager's version (with
//! `strategy: None` nothing is pruned on the way, so a field only the request's version
//! declares) fails the conversion. Recorded in the `versions/` scenarios: an apply fails with a
//! 500, an update is stored with no managedFields at all.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

use recon_apimachinery::json::Value;

use super::managed::ManagedFields;
use super::schema::Schema;
use super::typed;

/// Converts an object into another apiVersion of its kind (`(object, apiVersion)`).
pub type Converter = fn(&Value, &str) -> Value;

/// The structural schema of every version served, by apiVersion (`group/version`), and how
/// objects convert between them when they are not the same but for `apiVersion`.
#[derive(Debug, Clone, Default)]
pub struct ServedSchemas {
    by_api_version: BTreeMap<String, Arc<Schema>>,
    convert: Option<Converter>,
}

impl ServedSchemas {
    /// The schemas of the versions served, each with its apiVersion.
    pub fn new(schemas: impl IntoIterator<Item = (String, Arc<Schema>)>) -> Self {
        ServedSchemas {
            by_api_version: schemas.into_iter().collect(),
            convert: None,
        }
    }

    /// Versions an object converts between with `convert` (a built-in kind's conversion).
    pub fn converting(mut self, convert: Converter) -> Self {
        self.convert = Some(convert);
        self
    }

    /// `obj` in `api_version`, with that version's schema, when its fields differ from the
    /// other versions' (a built-in kind's versions): each manager's ownership is compared in
    /// its own version then (structured-merge-diff `Updater.update`).
    pub(super) fn converted(&self, obj: &Value, api_version: &str) -> Option<(Value, &Schema)> {
        let convert = self.convert?;
        let schema = self.by_api_version.get(api_version)?;
        Some((convert(obj, api_version), schema))
    }
}

/// The first conversion failure of `live` into the version of a manager that wrote through
/// another version than `own` (`reconcileManagedFieldsWithSchemaChanges`; unserved versions
/// are skipped there).
pub(super) fn reconcile(
    m: &ManagedFields,
    live: &Value,
    own: &str,
    served: &ServedSchemas,
) -> Result<(), String> {
    for version in other_versions(m, own) {
        if let Some(schema) = served.by_api_version.get(version) {
            convert(&in_version(live, version, served), schema)?;
        }
    }
    Ok(())
}

/// `obj` converted into `version` when the versions convert, else as it is.
fn in_version<'a>(obj: &'a Value, version: &str, served: &ServedSchemas) -> Cow<'a, Value> {
    match served.convert {
        Some(convert) => Cow::Owned(convert(obj, version)),
        None => Cow::Borrowed(obj),
    }
}

/// `update`'s conversions: drops the managers of versions no longer served, then converts the
/// new object into each other manager's version. (Upstream converts the old object too; it is
/// the live one [`reconcile`] converted first, so that cannot fail here.)
pub(super) fn update(
    m: &mut ManagedFields,
    new: &Value,
    own: &str,
    served: &ServedSchemas,
) -> Result<(), String> {
    m.sets.retain(|id, set| {
        let kept = set.api_version == own || served.by_api_version.contains_key(&set.api_version);
        if !kept {
            m.times.remove(id);
        }
        kept
    });
    for version in other_versions(m, own) {
        if let Some(schema) = served.by_api_version.get(version) {
            convert(&in_version(new, version, served), schema)
                .map_err(|e| format!("failed to convert new object: {e}"))?;
        }
    }
    Ok(())
}

/// The versions other managers wrote through, each once, in order.
fn other_versions<'a>(m: &'a ManagedFields, own: &str) -> Vec<&'a str> {
    let mut versions: Vec<&str> = m
        .sets
        .values()
        .map(|s| s.api_version.as_str())
        .filter(|v| *v != own)
        .collect();
    versions.sort_unstable();
    versions.dedup();
    versions
}

/// `ObjectToTyped` in that version: the object as it is must fit the schema.
fn convert(obj: &Value, schema: &Schema) -> Result<(), String> {
    let errs = typed::validate(obj, schema, true);
    if errs.is_empty() {
        Ok(())
    } else {
        Err(typed::join_errors(&errs))
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn entry(manager: &str, api_version: &str) -> Value {
        json!({"manager": manager, "operation": "Update", "apiVersion": api_version,
            "time": "2024-01-01T00:00:00Z", "fieldsType": "FieldsV1",
            "fieldsV1": {"f:spec": {"f:size": {}}}})
    }

    fn schema(spec: Value) -> Arc<Schema> {
        let openapi = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": spec}}});
        Arc::new(Schema::from_openapi_v3(&openapi).unwrap())
    }

    fn managers(entries: Vec<Value>) -> ManagedFields {
        ManagedFields::from_object(&json!({"metadata": {"managedFields": entries}})).unwrap()
    }

    #[test]
    fn a_manager_of_a_version_no_longer_served_is_dropped() {
        let mut m = managers(vec![entry("old", "x.io/v1alpha1"), entry("new", "x.io/v1")]);
        let served = ServedSchemas::new([(
            "x.io/v1".to_owned(),
            schema(json!({"size": {"type": "integer"}})),
        )]);
        let object = json!({"apiVersion": "x.io/v1", "kind": "X", "spec": {"size": 1}});
        update(&mut m, &object, "x.io/v1", &served).unwrap();
        let left = m.to_value().unwrap();
        assert_eq!(left.as_array().unwrap().len(), 1, "{left}");
        assert_eq!(left[0]["manager"], "new");
    }

    #[test]
    fn an_object_another_version_does_not_declare_fails_to_convert() {
        let m = managers(vec![entry("old", "x.io/v1alpha1")]);
        let served = ServedSchemas::new([
            (
                "x.io/v1alpha1".to_owned(),
                schema(json!({"size": {"type": "integer"}})),
            ),
            (
                "x.io/v1".to_owned(),
                schema(json!({"size": {"type": "integer"}, "shade": {"type": "string"}})),
            ),
        ]);
        let live =
            json!({"apiVersion": "x.io/v1", "kind": "X", "spec": {"size": 1, "shade": "dark"}});
        assert_eq!(
            reconcile(&m, &live, "x.io/v1", &served),
            Err(".spec.shade: field not declared in schema".to_owned())
        );
        let fits = json!({"apiVersion": "x.io/v1", "kind": "X", "spec": {"size": 1}});
        assert_eq!(reconcile(&m, &fits, "x.io/v1", &served), Ok(()));
        let mut m = m;
        assert_eq!(
            update(&mut m, &live, "x.io/v1", &served),
            Err(
                "failed to convert new object: .spec.shade: field not declared in schema"
                    .to_owned()
            )
        );
    }
}
