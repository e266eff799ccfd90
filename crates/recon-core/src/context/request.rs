//! What is being reconciled: the key of one reconcile, which the tracker files observers
//! under and the context carries.

use serde::{Deserialize, Serialize};

/// What is being reconciled: an object's namespace (for namespaced kinds) and name.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// The namespace; `None` for cluster-scoped kinds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The name.
    pub name: String,
}

impl Request {
    /// A request for `name` in `namespace`.
    pub fn namespaced(namespace: &str, name: &str) -> Self {
        Request {
            namespace: Some(namespace.to_owned()),
            name: name.to_owned(),
        }
    }

    /// A request for the cluster-scoped object `name`.
    pub fn cluster(name: &str) -> Self {
        Request {
            namespace: None,
            name: name.to_owned(),
        }
    }
}

impl std::fmt::Display for Request {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.namespace {
            Some(ns) => write!(f, "{ns}/{}", self.name),
            None => f.write_str(&self.name),
        }
    }
}
