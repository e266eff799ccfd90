//! What the user does to the cluster between the controller's reconciles.

use std::collections::BTreeMap;
use std::fmt;

use kube::api::{DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::discovery::ApiResource;
use serde::Serialize;
use serde_json::Value;

/// The field manager of the user's applies.
pub const USER_MANAGER: &str = "user";

/// One change the user makes; see [`Scenario::action`](super::Scenario::action).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum UserAction {
    /// Create the object (with its `apiVersion`, `kind` and `metadata`).
    Create(Value),
    /// Server-side apply the object as the field manager `user`, forcing conflicts (the user's
    /// intent wins over a controller's fields).
    Apply(Value),
    /// A JSON merge patch: the object names its target by `apiVersion`, `kind` and `metadata`
    /// (`name`, `namespace`); the rest is the patch.
    Patch(Value),
    /// Delete the object named by `apiVersion`, `kind` and `metadata` (background propagation).
    Delete(Value),
}

/// A user action that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ActionError(String);

impl UserAction {
    /// Create `object`.
    pub fn create(object: &impl Serialize) -> Self {
        UserAction::Create(to_value(object))
    }

    /// Server-side apply `object` as the user.
    pub fn apply(object: &impl Serialize) -> Self {
        UserAction::Apply(to_value(object))
    }

    /// Merge-patch the object `patch` names (by `apiVersion`, `kind`, `metadata.name` and
    /// `metadata.namespace`) with `patch`.
    pub fn patch(patch: &impl Serialize) -> Self {
        UserAction::Patch(to_value(patch))
    }

    /// Delete the object of `kind` in `api_version` named `name` (in `namespace`).
    pub fn delete(api_version: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        let mut metadata = serde_json::Map::new();
        metadata.insert("name".into(), name.into());
        if let Some(ns) = namespace {
            metadata.insert("namespace".into(), ns.into());
        }
        UserAction::Delete(serde_json::json!({
            "apiVersion": api_version, "kind": kind, "metadata": metadata,
        }))
    }

    pub(crate) fn list_from_yaml(yaml: &str) -> Result<Vec<UserAction>, ActionError> {
        let items: Vec<BTreeMap<String, Value>> = serde_saphyr::from_str(yaml)
            .map_err(|e| ActionError(format!("actions are not a YAML list of actions: {e}")))?;
        items
            .into_iter()
            .enumerate()
            .map(|(i, item)| {
                let mut entries = item.into_iter();
                let (Some((verb, object)), None) = (entries.next(), entries.next()) else {
                    return Err(ActionError(format!(
                        "action {}: one key is expected (create, apply, patch or delete)",
                        i + 1
                    )));
                };
                let action = match verb.as_str() {
                    "create" => UserAction::Create(object),
                    "apply" => UserAction::Apply(object),
                    "patch" => UserAction::Patch(object),
                    "delete" => UserAction::Delete(object),
                    other => {
                        return Err(ActionError(format!(
                            "action {}: unknown action `{other}` (create, apply, patch or delete)",
                            i + 1
                        )));
                    }
                };
                action
                    .target()
                    .map_err(|e| ActionError(format!("action {}: {e}", i + 1)))?;
                Ok(action)
            })
            .collect()
    }

    fn object(&self) -> &Value {
        match self {
            UserAction::Create(v)
            | UserAction::Apply(v)
            | UserAction::Patch(v)
            | UserAction::Delete(v) => v,
        }
    }

    fn verb(&self) -> &'static str {
        match self {
            UserAction::Create(_) => "create",
            UserAction::Apply(_) => "apply",
            UserAction::Patch(_) => "patch",
            UserAction::Delete(_) => "delete",
        }
    }

    /// The object the action names.
    pub(crate) fn target(&self) -> Result<Target, String> {
        let object = self.object();
        let text = |field: &str| object.pointer(field).and_then(Value::as_str);
        let api_version = text("/apiVersion").ok_or("the object has no `apiVersion`")?;
        let kind = text("/kind").ok_or("the object has no `kind`")?;
        let name = text("/metadata/name").ok_or("the object has no `metadata.name`")?;
        Ok(Target {
            api_version: api_version.to_owned(),
            kind: kind.to_owned(),
            namespace: text("/metadata/namespace").map(str::to_owned),
            name: name.to_owned(),
        })
    }

    /// Sends the action with `client`.
    pub(crate) async fn perform(&self, client: &kube::Client) -> Result<(), String> {
        let target = self.target()?;
        let (api, resource, _) = crate::dynamic_api::api_for(
            client,
            &target.api_version,
            &target.kind,
            target.namespace.as_deref(),
        )
        .await
        .map_err(|e| format!("{}: {e}", target))?;
        let result = match self {
            UserAction::Create(object) => api
                .create(&PostParams::default(), &dynamic(object, &resource)?)
                .await
                .map(drop),
            UserAction::Apply(object) => api
                .patch(
                    &target.name,
                    &PatchParams::apply(USER_MANAGER).force(),
                    &Patch::Apply(object),
                )
                .await
                .map(drop),
            UserAction::Patch(object) => api
                .patch(&target.name, &PatchParams::default(), &Patch::Merge(object))
                .await
                .map(drop),
            UserAction::Delete(_) => api
                .delete(&target.name, &DeleteParams::default())
                .await
                .map(drop),
        };
        result.map_err(|e| format!("{self}: {e}"))
    }
}

impl fmt::Display for UserAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target() {
            Ok(target) => write!(f, "{} {target}", self.verb()),
            Err(e) => write!(f, "{} ({e})", self.verb()),
        }
    }
}

/// The object an action names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Target {
    pub(crate) api_version: String,
    pub(crate) kind: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: String,
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.api_version, self.kind)?;
        match &self.namespace {
            Some(ns) => write!(f, " {ns}/{}", self.name),
            None => write!(f, " {}", self.name),
        }
    }
}

fn to_value(object: &impl Serialize) -> Value {
    serde_json::to_value(object).unwrap_or_else(|e| Value::String(format!("unserializable: {e}")))
}

fn dynamic(object: &Value, resource: &ApiResource) -> Result<DynamicObject, String> {
    let mut obj: DynamicObject = serde_json::from_value(object.clone())
        .map_err(|e| format!("{} {}: {e}", resource.api_version, resource.kind))?;
    obj.types.get_or_insert_with(|| kube::core::TypeMeta {
        api_version: resource.api_version.clone(),
        kind: resource.kind.clone(),
    });
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn yaml_actions_name_their_objects() {
        let actions = UserAction::list_from_yaml(
            "- create: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}}\n\
             - delete: {apiVersion: v1, kind: ConfigMap, metadata: {name: a, namespace: ns}}\n",
        )
        .unwrap();
        assert_eq!(actions.len(), 2);
        assert_eq!(actions[1].to_string(), "delete v1 ConfigMap ns/a");
    }

    #[test]
    fn a_yaml_action_without_a_name_or_with_two_verbs_is_an_error() {
        let err = UserAction::list_from_yaml("- create: {apiVersion: v1, kind: ConfigMap}\n")
            .unwrap_err();
        assert_eq!(
            err.to_string(),
            "action 1: the object has no `metadata.name`"
        );
        let err =
            UserAction::list_from_yaml("- {create: {apiVersion: v1}, delete: {apiVersion: v1}}\n")
                .unwrap_err();
        assert!(err.to_string().starts_with("action 1: one key"), "{err}");
        let err = UserAction::list_from_yaml("- remove: {}\n").unwrap_err();
        assert!(err.to_string().contains("unknown action `remove`"), "{err}");
        let err = UserAction::list_from_yaml("create: 1\n").unwrap_err();
        assert!(err.to_string().contains("line 1"), "{err}");
    }
}
