//! The registry: the resource types the server serves, the built-ins plus one per established
//! CRD, each with the rules of its registry strategy.
//!
//! - [`resource`]: what the server knows about one type;
//! - [`builtins`]: the built-in types, from a table;
//! - [`crd`]: what a CustomResourceDefinition is checked for, and the type it serves;
//! - [`defaults`]: the API defaults of built-in kinds, applied when an object is decoded;
//! - [`events`]: the two Event versions that share one storage;
//! - [`hpa`]: autoscaling/v1 HorizontalPodAutoscalers, converted to and from v2;
//! - [`validation`]: what each built-in kind's strategy validates beyond metadata;
//! - [`storage_hash`]: the `storageVersionHash` discovery lists for a type.

pub(crate) mod builtins;
pub(crate) mod conversion;
pub(crate) mod conversion_webhook;
pub(crate) mod crd;
pub(crate) mod defaults;
pub(crate) mod events;
pub(crate) mod hpa;
pub(crate) mod memo;
pub(crate) mod resource;
pub(crate) mod storage_hash;
pub(crate) mod validation;

use foldhash::{HashMap, HashSet};
use std::borrow::Borrow;
use std::hash::{Hash, Hasher};
use std::sync::{Arc, LazyLock};

use builtins::builtin_types;
use conversion_webhook::ConversionWebhook;
use resource::ResourceType;

use crate::storage::store::StoredStructs;

/// The built-in types, built once per process and shared by every server's registry (which
/// holds its types behind `Arc` and never changes one in place): building them, their
/// field-management schemas above all, was a large part of what each `ApiServer::new` cost, and
/// a table test starts a server per case.
static BUILTINS: LazyLock<Vec<Arc<ResourceType>>> =
    LazyLock::new(|| builtin_types().into_iter().map(Arc::new).collect());

/// The Go struct each built-in resource is stored as ([`ResourceType::stored_struct`]), for
/// the store, which writes an object read back from it (to mark it deleted, to set a status)
/// without its `apiVersion` and `kind`.
pub(crate) static STORED_STRUCTS: LazyLock<Arc<StoredStructs>> = LazyLock::new(|| {
    Arc::new(
        BUILTINS
            .iter()
            .filter_map(|t| Some((t.group_resource(), t.stored_struct()?)))
            .collect(),
    )
});

/// A type's key, `(group, plural)`, looked up by borrowed strings: the owned key borrows as
/// `dyn TypeKey`, which hashes and compares as the pair of strings does, so a lookup (every
/// request makes some) copies neither.
trait TypeKey {
    fn parts(&self) -> (&str, &str);
}

impl TypeKey for (String, String) {
    fn parts(&self) -> (&str, &str) {
        (&self.0, &self.1)
    }
}

impl TypeKey for (&str, &str) {
    fn parts(&self) -> (&str, &str) {
        *self
    }
}

impl<'a> Borrow<dyn TypeKey + 'a> for (String, String) {
    fn borrow(&self) -> &(dyn TypeKey + 'a) {
        self
    }
}

impl Hash for dyn TypeKey + '_ {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.parts().hash(state);
    }
}

impl PartialEq for dyn TypeKey + '_ {
    fn eq(&self, other: &Self) -> bool {
        self.parts() == other.parts()
    }
}

impl Eq for dyn TypeKey + '_ {}

/// The key `(group, plural)`, borrowed.
fn key<'k>(pair: &'k (&'k str, &'k str)) -> &'k (dyn TypeKey + 'k) {
    pair
}

#[derive(Debug, Clone)]
pub(crate) struct Registry {
    types: HashMap<(String, String), Arc<ResourceType>>,
    /// Custom types whose CRD is being deleted: new instances are refused.
    terminating: HashSet<(String, String)>,
    /// The conversion webhooks registered in-process, by group and plural.
    conversion_webhooks: HashMap<(String, String), Arc<dyn ConversionWebhook>>,
}

impl Registry {
    pub(crate) fn with_builtins() -> Self {
        let types = BUILTINS
            .iter()
            .map(|t| ((t.group.clone(), t.plural.clone()), Arc::clone(t)))
            .collect();
        Registry {
            types,
            terminating: HashSet::default(),
            conversion_webhooks: HashMap::default(),
        }
    }

    /// Every served type, in no particular order.
    pub(crate) fn types(&self) -> impl Iterator<Item = &Arc<ResourceType>> + '_ {
        self.types.values()
    }

    /// The type serving `plural` in `group` at `version`.
    pub(crate) fn find(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<Arc<ResourceType>> {
        self.get(group, plural).filter(|t| t.serves(version))
    }

    /// The type of `kind` served at `group`/`version`.
    pub(crate) fn find_kind(
        &self,
        group: &str,
        version: &str,
        kind: &str,
    ) -> Option<Arc<ResourceType>> {
        self.types
            .values()
            .find(|t| t.group == group && t.kind == kind && t.serves(version))
            .cloned()
    }

    /// Every served type, ordered by group and plural (a stable order for controllers' passes).
    pub(crate) fn all(&self) -> Vec<Arc<ResourceType>> {
        let mut types: Vec<Arc<ResourceType>> = self.types.values().cloned().collect();
        types.sort_by(|a, b| (&a.group, &a.plural).cmp(&(&b.group, &b.plural)));
        types
    }

    /// The type of `plural` in `group`, whatever versions it serves.
    pub(crate) fn get(&self, group: &str, plural: &str) -> Option<Arc<ResourceType>> {
        self.types.get(key(&(group, plural))).cloned()
    }

    /// Serves a custom resource type; a built-in of the same name is never replaced (the real
    /// server reports such a CRD as overlapping a built-in resource).
    pub(crate) fn serve_custom(&mut self, mut t: ResourceType) {
        let key = (t.group.clone(), t.plural.clone());
        if let Some(webhook) = t.storage.as_mut().and_then(|s| s.webhook.as_mut()) {
            webhook.handler = self.conversion_webhooks.get(&key).cloned();
        }
        if self.types.get(&key).is_none_or(|existing| existing.custom) {
            self.types.insert(key, Arc::new(t));
        }
    }

    /// Converts the custom resources `plural` of `group` with `webhook` when their CRD says
    /// `strategy: Webhook`, now and whenever the CRD is served again.
    pub(crate) fn serve_conversion(
        &mut self,
        group: &str,
        plural: &str,
        webhook: Arc<dyn ConversionWebhook>,
    ) {
        let key = (group.to_owned(), plural.to_owned());
        self.conversion_webhooks.insert(key.clone(), webhook);
        if let Some(served) = self.types.get(&key).filter(|t| t.custom) {
            let served = ResourceType::clone(served);
            self.serve_custom(served);
        }
    }

    /// Stops serving a custom resource type.
    pub(crate) fn remove_custom(&mut self, group: &str, plural: &str) {
        let key = (group.to_owned(), plural.to_owned());
        if self.types.get(&key).is_some_and(|t| t.custom) {
            self.types.remove(&key);
        }
        self.terminating.remove(&key);
    }

    /// Keeps only the custom types `keep` accepts.
    pub(crate) fn retain_custom(&mut self, keep: impl Fn(&str, &str) -> bool) {
        self.types
            .retain(|(group, plural), t| !t.custom || keep(group, plural));
        let types = &self.types;
        self.terminating.retain(|key| types.contains_key(key));
    }

    pub(crate) fn mark_terminating(&mut self, group: &str, plural: &str) {
        self.terminating
            .insert((group.to_owned(), plural.to_owned()));
    }

    pub(crate) fn is_terminating(&self, group: &str, plural: &str) -> bool {
        self.terminating.contains(key(&(group, plural)))
    }

    /// Whether `group` is one of the compiled-in API groups (`""` is the core group). Their paths
    /// are served by kube-apiserver's own router, which answers misses with a `Status`.
    pub(crate) fn is_builtin_group(&self, group: &str) -> bool {
        self.types.values().any(|t| !t.custom && t.group == group)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_type_is_stored_as_a_recorded_go_struct() {
        let missing: Vec<String> = BUILTINS
            .iter()
            .filter(|t| t.stored_struct().is_none())
            .map(|t| format!("{}/{}", t.group, t.kind))
            .collect();
        assert!(missing.is_empty(), "{missing:?}");
        assert_eq!(STORED_STRUCTS.len(), BUILTINS.len());
    }
}
