//! Ownership bookkeeping for one write (structured-merge-diff `merge/update.go`, and the
//! apimachinery managers wrapped around it: `managedfieldsupdater.go`, `stripmeta.go`,
//! `capmanagers.go`).

use std::collections::BTreeMap;
use std::sync::LazyLock;

use recon_apimachinery::json::Value;

use super::compare::{Comparison, compare};
use super::conflict::Conflict;
use super::managed::{ManagedFields, ManagerId, Operation, VersionedSet};
use super::merge::{merge, remove};
use super::schema::Schema;
use super::time::Time;
use super::typed::{ensure_named, fields_of};
use super::versions::{self, ServedSchemas};
use recon_apimachinery::fieldpath::Path;
use recon_apimachinery::fieldpath::{FieldSet, FieldsV1};

/// Update entries kept before the oldest are folded into `ancient-changes`.
pub const MAX_UPDATE_MANAGERS: usize = 10;

/// Fields nobody owns: the apiserver sets them (`stripMeta`).
static STRIPPED: LazyLock<FieldSet> = LazyLock::new(|| {
    let mut s = FieldSet::from_paths([
        Path::fields(&["apiVersion"]),
        Path::fields(&["kind"]),
        Path::fields(&["metadata"]),
    ]);
    for f in [
        "name",
        "namespace",
        "creationTimestamp",
        "selfLink",
        "uid",
        "clusterName",
        "generation",
        "managedFields",
        "resourceVersion",
    ] {
        s.insert(&Path::fields(&["metadata", f]).0);
    }
    s
});

/// Removes the server-owned fields from `id`'s set, dropping the entry if it empties.
fn strip_meta(m: &mut ManagedFields, id: &ManagerId) {
    if let Some(vs) = m.sets.get_mut(id) {
        vs.set.remove(&STRIPPED);
        if vs.set.is_empty() {
            m.sets.remove(id);
        }
    }
}

/// `Updater.update`: owners other than `workflow` lose the fields this write modified or
/// added (or it conflicts, without `force`) and the fields it removed, each compared in the
/// version it wrote through when the served versions convert (`ctx.served`; the writer's own,
/// `ctx.api_version`, else). Returns the comparison in the writer's version.
fn update_owners(
    old: &Value,
    new: &Value,
    sets: &mut BTreeMap<ManagerId, VersionedSet>,
    workflow: Option<&ManagerId>,
    force: bool,
    ctx: &Ctx<'_>,
) -> Result<Comparison, Vec<Conflict>> {
    let (schema, reset) = (ctx.schema, ctx.reset);
    let mut cmp = compare(old, new, schema);
    cmp.exclude(reset);
    // What changed matters only to owners other than the writer (a create has none).
    let others = sets.keys().any(|id| Some(id) != workflow);
    // The comparison in each other version an owner wrote through, once per version.
    let mut in_versions: BTreeMap<String, Comparison> = BTreeMap::new();
    if let Some(served) = ctx.served.filter(|_| others) {
        let own = ctx.api_version;
        for (id, vs) in sets.iter() {
            if Some(id) == workflow
                || vs.api_version == own
                || in_versions.contains_key(&vs.api_version)
            {
                continue;
            }
            let (Some((old_v, schema_v)), Some((new_v, _))) = (
                served.converted(old, &vs.api_version),
                served.converted(new, &vs.api_version),
            ) else {
                continue;
            };
            let mut cmp_v = compare(&old_v, &new_v, schema_v);
            cmp_v.exclude(reset);
            in_versions.insert(vs.api_version.clone(), cmp_v);
        }
    }
    let changed_of = |c: &Comparison| {
        let mut changed = c.modified.clone();
        changed.union_with(&c.added);
        changed
    };
    let changed = if others {
        changed_of(&cmp)
    } else {
        FieldSet::new()
    };
    let changed_in: BTreeMap<&String, FieldSet> = in_versions
        .iter()
        .map(|(version, c)| (version, changed_of(c)))
        .collect();
    let mut conflicts: Vec<(ManagerId, FieldSet)> = Vec::new();
    for (id, vs) in sets.iter() {
        if Some(id) == workflow {
            continue;
        }
        let changed = changed_in.get(&vs.api_version).unwrap_or(&changed);
        let contested = vs.set.intersection(changed);
        if !contested.is_empty() {
            conflicts.push((id.clone(), contested));
        }
    }
    if !force && !conflicts.is_empty() {
        // Upstream walks a Go map here, so its order across owners varies from call to call;
        // this is the identity order.
        return Err(conflicts
            .into_iter()
            .flat_map(|(id, set)| {
                set.paths().into_iter().map(move |path| Conflict {
                    manager: id.clone(),
                    path,
                })
            })
            .collect());
    }
    for (id, contested) in conflicts {
        if let Some(vs) = sets.get_mut(&id) {
            vs.set.remove(&contested);
        }
    }
    for (id, vs) in sets.iter_mut() {
        if Some(id) == workflow {
            continue;
        }
        let removed = in_versions
            .get(&vs.api_version)
            .map_or(&cmp.removed, |c| &c.removed);
        if !removed.is_empty() {
            vs.set.remove(removed);
        }
    }
    sets.retain(|_, vs| !vs.set.is_empty());
    Ok(cmp)
}

/// What every step of one write shares.
pub(super) struct Ctx<'a> {
    pub schema: &'a Schema,
    /// Fields the strategy resets: nobody gains them, changes to them never conflict.
    pub reset: &'a FieldSet,
    pub api_version: &'a str,
    pub time: Time,
    pub served: Option<&'a ServedSchemas>,
}

/// Records a non-apply write by `id` (`managedFieldsUpdater.Update` around `Updater.Update`):
/// the writer gains what it modified or added, every owner loses what changed under it, and
/// the writer's time moves only if it gained something.
pub(super) fn record(
    m: &mut ManagedFields,
    old: &Value,
    new: &Value,
    id: &ManagerId,
    ctx: &Ctx<'_>,
) -> Result<(), String> {
    let reset = ctx.reset;
    if let Some(served) = ctx.served {
        versions::reconcile(m, old, ctx.api_version, served)?;
        versions::update(m, new, ctx.api_version, served)?;
    }
    // Upstream runs this as manager "current-operation" and merges afterwards, so the
    // writer's own previous entry is treated like any other owner's.
    let Ok(cmp) = update_owners(old, new, &mut m.sets, None, true, ctx) else {
        return Ok(());
    };
    let Comparison {
        modified, added, ..
    } = cmp;
    // The smaller set (by its top level) is copied into the larger: a create adds every field
    // and modifies few.
    let breadth = |s: &FieldSet| s.members().len() + s.children().len();
    let (mut gained, fewer) = if breadth(&modified) < breadth(&added) {
        (added, modified)
    } else {
        (modified, added)
    };
    gained.union_with(&fewer);
    gained.remove_recursive(reset);
    gained.remove(&STRIPPED);
    if gained.is_empty() {
        return Ok(());
    }
    let set = match m.sets.remove(id) {
        Some(VersionedSet { mut set, .. }) => {
            set.union_with(&gained);
            set
        }
        None => FieldsV1::from_set(&gained),
    };
    m.sets.insert(
        id.clone(),
        VersionedSet {
            set,
            api_version: ctx.api_version.to_owned(),
            applied: false,
        },
    );
    m.times.insert(id.clone(), ctx.time);
    Ok(())
}

/// `Updater.Apply` plus `stripMeta` and `managedFieldsUpdater.Apply`: merges `config` into
/// `live`, prunes what the applier dropped, settles ownership. Returns the new object and
/// whether it differs from `live`.
pub(super) fn apply(
    m: &mut ManagedFields,
    live: &Value,
    config: &Value,
    id: &ManagerId,
    force: bool,
    ctx: &Ctx<'_>,
) -> Result<(Value, bool), ApplyFailure> {
    let (schema, reset) = (ctx.schema, ctx.reset);
    let merged = merge(live, config, schema).map_err(ApplyFailure::Merge)?;
    let last = m.sets.get(id).map(|vs| vs.set.to_set());
    let set = FieldsV1::from_set(&fields_of(config, schema).recursive_difference(reset));
    m.sets.insert(
        id.clone(),
        VersionedSet {
            set,
            api_version: ctx.api_version.to_owned(),
            applied: true,
        },
    );
    let new = prune(merged, &m.sets, last.as_ref(), schema);
    if let Some(served) = ctx.served {
        versions::update(m, &new, ctx.api_version, served).map_err(ApplyFailure::Conversion)?;
    }
    update_owners(live, &new, &mut m.sets, Some(id), force, ctx)
        .map_err(ApplyFailure::Conflicts)?;
    let changed = !recon_apimachinery::value::equals(live, &new);
    strip_meta(m, id);
    if changed {
        m.times.insert(id.clone(), ctx.time);
    }
    Ok((new, changed))
}

/// Why [`apply`] failed.
pub(super) enum ApplyFailure {
    Merge(String),
    Conflicts(Vec<Conflict>),
    /// An object does not convert into another manager's version.
    Conversion(String),
}

/// `Updater.prune`: removes what the applier applied last time and not now, unless someone
/// (the applier's new configuration included) owns it. The three passes mirror upstream's
/// `RemoveItems`, `addBackOwnedItems` and `addBackDanglingItems`: a removed item goes with
/// its whole subtree, so sub-fields another owner holds inside an item only the applier
/// owned are removed too (verified on the real server).
fn prune(
    merged: Value,
    sets: &BTreeMap<ManagerId, VersionedSet>,
    last: Option<&FieldSet>,
    schema: &Schema,
) -> Value {
    let Some(last) = last.filter(|s| !s.is_empty()) else {
        return merged;
    };
    let merged = &merged;
    let root = Some(&schema.root);
    let named = |s: &FieldSet| ensure_named(s, root);
    let last = named(last);
    let pruned = remove(merged, &last, &schema.root);

    let managed = sets.values().fold(FieldSet::new(), |mut acc, vs| {
        acc.union_with(&vs.set.to_set());
        acc
    });
    let merged_set = named(&fields_of(merged, schema));
    let pruned_set = named(&fields_of(&pruned, schema));
    let unowned = merged_set.difference(&pruned_set.union(&named(&managed)));
    let pruned = remove(merged, &unowned, &schema.root);

    let pruned_set = named(&fields_of(&pruned, schema));
    let dangling = merged_set.difference(&pruned_set).intersection(&last);
    remove(merged, &dangling, &schema.root)
}

/// `capManagersManager`: with more than `max` Update owners, the oldest are folded into one
/// `ancient-changes` entry per apiVersion, which takes the time of the last one folded in.
pub(super) fn cap_update_managers(m: &mut ManagedFields, max: usize) {
    let mut updaters: Vec<ManagerId> = m
        .sets
        .iter()
        .filter(|(_, vs)| !vs.applied)
        .map(|(id, _)| id.clone())
        .collect();
    if updaters.len() <= max {
        return;
    }
    let secs = |id: &ManagerId| m.times.get(id).map_or(0, |t| t.0);
    updaters.sort_by(|a, b| secs(a).cmp(&secs(b)).then_with(|| a.cmp(b)));
    let mut first_by_version: BTreeMap<String, ManagerId> = BTreeMap::new();
    let mut length = updaters.len();
    for id in &updaters {
        if length <= max {
            break;
        }
        let Some(vs) = m.sets.get(id).cloned() else {
            continue;
        };
        let time = m.times.get(id).copied();
        let bucket = ManagerId::new("ancient-changes", Operation::Update, &vs.api_version, "");
        match first_by_version.get(&vs.api_version) {
            Some(first) => {
                if !m.sets.contains_key(&bucket)
                    && let Some(s) = m.sets.remove(first)
                {
                    m.sets.insert(bucket.clone(), s);
                }
                let mut set = m
                    .sets
                    .get(&bucket)
                    .map(|b| b.set.clone())
                    .unwrap_or_default();
                set.union_with(&vs.set.to_set());
                m.sets.insert(
                    bucket.clone(),
                    VersionedSet {
                        set,
                        api_version: vs.api_version.clone(),
                        applied: vs.applied,
                    },
                );
                // When the bucket itself is the one being folded, upstream deletes it here.
                m.sets.remove(id);
                length -= 1;
                match time {
                    Some(t) => m.times.insert(bucket, t),
                    None => m.times.remove(&bucket),
                };
            }
            None => {
                first_by_version.insert(vs.api_version.clone(), id.clone());
            }
        }
    }
}
