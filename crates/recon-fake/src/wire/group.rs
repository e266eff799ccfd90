//! Names qualified by their API group, printed as kube-apiserver prints them in messages.

use std::fmt;

/// A resource qualified by its API group, printed as kube-apiserver prints it in messages:
/// `widgets.example.com`, or just `configmaps` in the core group.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct GroupResource {
    /// The API group; empty for the core group.
    pub group: String,
    /// The plural resource name.
    pub resource: String,
}

impl GroupResource {
    /// A group and a plural resource name.
    pub fn new(group: impl Into<String>, resource: impl Into<String>) -> Self {
        GroupResource {
            group: group.into(),
            resource: resource.into(),
        }
    }
}

impl fmt::Display for GroupResource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.resource)
        } else {
            write!(f, "{}.{}", self.resource, self.group)
        }
    }
}

/// A kind qualified by its API group, printed `Widget.example.com`, or `ConfigMap` in the core group.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct GroupKind {
    /// The API group; empty for the core group.
    pub group: String,
    /// The kind.
    pub kind: String,
}

impl GroupKind {
    /// A group and a kind.
    pub fn new(group: impl Into<String>, kind: impl Into<String>) -> Self {
        GroupKind {
            group: group.into(),
            kind: kind.into(),
        }
    }
}

impl fmt::Display for GroupKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.group.is_empty() {
            f.write_str(&self.kind)
        } else {
            write!(f, "{}.{}", self.kind, self.group)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn core_group_names_print_without_a_group() {
        assert_eq!(
            GroupResource::new("", "configmaps").to_string(),
            "configmaps"
        );
        assert_eq!(GroupKind::new("", "ConfigMap").to_string(), "ConfigMap");
    }

    #[test]
    fn named_group_names_print_with_the_group_suffix() {
        assert_eq!(
            GroupResource::new("apps", "deployments").to_string(),
            "deployments.apps"
        );
        assert_eq!(
            GroupKind::new("example.com", "Widget").to_string(),
            "Widget.example.com"
        );
    }
}
