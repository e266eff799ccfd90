//! What comparisons leave out by default: the fields the API server sets, whose values a test
//! author cannot (and should not have to) predict; and observations written as an author would
//! write them (for regenerated fixtures and snapshots).

use serde_json::Value;

use crate::expect::Expectations;

/// `metadata` fields the server owns.
const SERVER_METADATA: [&str; 5] = [
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "generation",
    "managedFields",
];

/// Removes server-set fields from an object or patch body: the server-owned `metadata` fields
/// (dropping `metadata` if nothing else is left) and the `lastTransitionTime` of
/// `status.conditions`.
pub(crate) fn strip_server_fields(value: &mut Value) {
    let Value::Object(map) = value else { return };
    if let Some(Value::Object(meta)) = map.get_mut("metadata") {
        for field in SERVER_METADATA {
            meta.remove(field);
        }
        if meta.is_empty() {
            map.remove("metadata");
        }
    }
    if let Some(Value::Array(conditions)) =
        map.get_mut("status").and_then(|s| s.get_mut("conditions"))
    {
        for c in conditions {
            if let Value::Object(c) = c {
                c.remove("lastTransitionTime");
            }
        }
    }
}

/// What was `seen`, as an author would write it: without the fields the server sets (unless
/// the case compares them), and with byte-exact bodies, request queries (`fieldManager`,
/// `force`, `dryRun`) and events' `action`, `reportingController` and `related` only where the
/// same item of `old` had them (an author who did not name them does not compare them).
pub(crate) fn as_written(
    seen: &Expectations,
    old: &Expectations,
    server_fields: bool,
) -> Expectations {
    let mut expect = seen.clone();
    let strip = |v: &mut Value| {
        if !server_fields {
            strip_server_fields(v);
        }
    };
    let patch_lists = [
        (&mut expect.patches, &old.patches),
        (&mut expect.applies, &old.applies),
        (&mut expect.status_patches, &old.status_patches),
        (&mut expect.status_applies, &old.status_applies),
    ];
    for (patches, old) in patch_lists {
        for (i, patch) in patches.iter_mut().enumerate() {
            let old = old.get(i);
            if old.is_none_or(|p| p.exact.is_none()) {
                patch.exact = None;
            }
            keep_if(&mut patch.field_manager, old.map(|p| &p.field_manager));
            keep_if(&mut patch.force, old.map(|p| &p.force));
            keep_if(&mut patch.dry_run, old.map(|p| &p.dry_run));
            if let Some(body) = &mut patch.patch {
                strip(body);
            }
        }
    }
    for objects in [
        &mut expect.creates,
        &mut expect.updates,
        &mut expect.status_updates,
    ] {
        objects.iter_mut().for_each(strip);
    }
    if let Some(resource) = &mut expect.resource {
        strip(resource);
    }
    for (i, delete) in expect.deletes.iter_mut().enumerate() {
        keep_if(&mut delete.dry_run, old.deletes.get(i).map(|d| &d.dry_run));
    }
    for (i, delete) in expect.delete_collections.iter_mut().enumerate() {
        let old = old.delete_collections.get(i);
        keep_if(&mut delete.dry_run, old.map(|d| &d.dry_run));
    }
    for (i, event) in expect.events.iter_mut().enumerate() {
        let old = old.events.get(i);
        keep_if(&mut event.action, old.map(|e| &e.action));
        keep_if(
            &mut event.reporting_controller,
            old.map(|e| &e.reporting_controller),
        );
        keep_if(&mut event.related, old.map(|e| &e.related));
        if let (Some(related), Some(Some(old))) = (&mut event.related, old.map(|e| &e.related)) {
            keep_if(&mut related.api_version, Some(&old.api_version));
        }
    }
    expect
}

/// Clears an observed optional field unless the old expectation's counterpart had it.
fn keep_if<T, U>(seen: &mut Option<T>, old: Option<&Option<U>>) {
    if old.is_none_or(Option::is_none) {
        *seen = None;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn server_fields_and_transition_times_are_removed() {
        let mut v = json!({
            "metadata": {"name": "a", "uid": "u", "resourceVersion": "7", "generation": 2},
            "status": {"conditions": [{"type": "Ready", "lastTransitionTime": "t"}]},
        });
        strip_server_fields(&mut v);
        assert_eq!(
            v,
            json!({"metadata": {"name": "a"}, "status": {"conditions": [{"type": "Ready"}]}})
        );
    }

    #[test]
    fn a_lock_only_metadata_disappears_from_a_patch() {
        let mut v = json!({"metadata": {"resourceVersion": "7"}, "status": {"phase": "A"}});
        strip_server_fields(&mut v);
        assert_eq!(v, json!({"status": {"phase": "A"}}));
    }
}
