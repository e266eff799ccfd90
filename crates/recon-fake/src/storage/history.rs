//! The bounded change log behind watch and paginated lists: etcd's revision history as far back
//! as it is retained. Watches replay it from a resourceVersion; continue tokens read lists as they
//! were at their revision by undoing the later changes.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;

use super::stored::Stored;
use crate::wire::group::GroupResource;

/// How many changes a server keeps by default. etcd keeps about five minutes of history; a test
/// that needs an old resourceVersion to expire calls `ApiServer::compact_history`.
pub(crate) const DEFAULT_HISTORY: usize = 10_000;

/// One write to storage.
#[derive(Debug, Clone)]
pub(crate) struct Change {
    pub(crate) revision: u64,
    pub(crate) resource: GroupResource,
    pub(crate) key: String,
    /// The object after the change; for a removal, its last state carrying the removal's
    /// revision (what etcd's watch decodes for a delete).
    pub(crate) object: Stored,
    /// The object before the change; `None` for a creation.
    pub(crate) previous: Option<Stored>,
    pub(crate) removed: bool,
}

/// The retained changes, oldest first, each behind an `Arc`: every new server starts from a
/// copy of the booted one, history and all, and a copy shares the changes.
#[derive(Debug, Clone)]
pub(crate) struct History {
    changes: VecDeque<Arc<Change>>,
    limit: usize,
    /// Changes at or below this revision are gone.
    compacted: u64,
    /// Per resource, the revision its watch cache started at: a custom resource's cache is
    /// filled when its CRD is established, so older revisions are too old for it.
    started: HashMap<GroupResource, u64>,
}

impl History {
    pub(crate) fn new(limit: usize) -> Self {
        History {
            changes: VecDeque::new(),
            limit,
            compacted: 0,
            started: HashMap::new(),
        }
    }

    /// How many changes it keeps.
    pub(crate) fn limit(&self) -> usize {
        self.limit
    }

    /// Keeps at most `limit` changes from now on, forgetting the oldest beyond it.
    pub(crate) fn set_limit(&mut self, limit: usize) {
        self.limit = limit;
        while self.changes.len() > limit {
            if let Some(dropped) = self.changes.pop_front() {
                self.compacted = dropped.revision;
            }
        }
    }

    pub(crate) fn push(&mut self, change: Change) {
        if self.limit == 0 {
            self.compacted = change.revision;
            return;
        }
        while self.changes.len() >= self.limit {
            if let Some(dropped) = self.changes.pop_front() {
                self.compacted = dropped.revision;
            }
        }
        self.changes.push_back(Arc::new(change));
    }

    /// Forgets every change up to `revision`, as etcd's compaction does.
    pub(crate) fn compact(&mut self, revision: u64) {
        while self.changes.front().is_some_and(|c| c.revision <= revision) {
            self.changes.pop_front();
        }
        self.compacted = self.compacted.max(revision);
    }

    /// Marks `resource` as served from `revision` on (its first establishment).
    pub(crate) fn start(&mut self, resource: &GroupResource, revision: u64) {
        self.started.entry(resource.clone()).or_insert(revision);
    }

    /// Forgets when `resource` started: a CRD deleted and created again starts a new cache.
    pub(crate) fn stop(&mut self, resource: &GroupResource) {
        self.started.remove(resource);
    }

    /// The oldest revision a watch or a continued list of `resource` may start from.
    pub(crate) fn oldest(&self, resource: &GroupResource) -> u64 {
        self.compacted
            .max(self.started.get(resource).copied().unwrap_or(0))
    }

    /// The changes of `resource` after `revision`, oldest first.
    pub(crate) fn since<'a>(
        &'a self,
        resource: &'a GroupResource,
        revision: u64,
    ) -> impl DoubleEndedIterator<Item = &'a Change> + 'a {
        let start = self.changes.partition_point(|c| c.revision <= revision);
        self.changes
            .range(start..)
            .map(|c| &**c)
            .filter(move |c| &c.resource == resource)
    }

    /// The changes after `revision` of every resource, oldest first.
    pub(crate) fn all_since(&self, revision: u64) -> impl Iterator<Item = &Change> {
        let start = self.changes.partition_point(|c| c.revision <= revision);
        self.changes.range(start..).map(|c| &**c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn change(revision: u64, resource: &GroupResource) -> Change {
        Change {
            revision,
            resource: resource.clone(),
            key: "ns/a".into(),
            object: Stored::new(&recon_apimachinery::json::Map::new(), revision, None),
            previous: None,
            removed: false,
        }
    }

    #[test]
    fn a_full_history_drops_its_oldest_change_and_moves_the_compaction_point() {
        let cm = GroupResource::new("", "configmaps");
        let mut history = History::new(2);
        for rev in 2..=4 {
            history.push(change(rev, &cm));
        }
        assert_eq!(history.oldest(&cm), 2);
        let revisions: Vec<u64> = history.since(&cm, 0).map(|c| c.revision).collect();
        assert_eq!(revisions, [3, 4]);
    }

    #[test]
    fn a_resource_started_later_is_too_old_before_its_start() {
        let (cm, w) = (
            GroupResource::new("", "configmaps"),
            GroupResource::new("example.com", "widgets"),
        );
        let mut history = History::new(10);
        history.start(&w, 7);
        history.start(&w, 9);
        assert_eq!((history.oldest(&cm), history.oldest(&w)), (0, 7));
        history.compact(8);
        assert_eq!((history.oldest(&cm), history.oldest(&w)), (8, 8));
        history.stop(&w);
        assert_eq!(history.oldest(&w), 8);
    }

    #[test]
    fn since_filters_by_resource_after_the_revision() {
        let (cm, w) = (
            GroupResource::new("", "configmaps"),
            GroupResource::new("example.com", "widgets"),
        );
        let mut history = History::new(10);
        history.push(change(2, &cm));
        history.push(change(3, &w));
        history.push(change(4, &cm));
        let revisions: Vec<u64> = history.since(&cm, 2).map(|c| c.revision).collect();
        assert_eq!(revisions, [4]);
        assert_eq!(history.all_since(2).count(), 2);
    }
}
