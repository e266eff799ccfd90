//! Comparing what a case expected with what it observed, expectation by expectation, so that
//! every difference is reported with a readable diff.

use serde::Serialize;
use serde_json::{Value, json};

use crate::diff::{json_diff, text_diff};
use crate::expect::{EventRef, Expectations, PatchRef};
use crate::normalize::strip_server_fields;

/// One difference between what a case expected and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Which expectation, such as `expect.statusPatches[0]`.
    pub expectation: String,
    /// What differs: a unified diff (`-expected`, `+actual`) or an explanation.
    pub detail: String,
}

impl Mismatch {
    pub(crate) fn new(expectation: impl Into<String>, detail: impl Into<String>) -> Self {
        Mismatch {
            expectation: expectation.into(),
            detail: detail.into(),
        }
    }
}

/// How to compare.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Options {
    /// Keep the fields the server sets.
    pub(crate) server_fields: bool,
    /// Compare the result of a failed reconcile too (the outcome its error carries).
    pub(crate) result_on_error: bool,
}

fn to_json(value: &impl Serialize) -> Value {
    serde_json::to_value(value).unwrap_or(Value::Null)
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

/// Compares two lists in order: pairs that differ, expectations not observed, observations
/// not expected. `canonical` turns each (expected, actual) pair into the values compared.
fn compare_list<T: Serialize>(
    name: &str,
    expected: &[T],
    observed: &[T],
    canonical: impl Fn(&T, Option<&T>) -> Value,
    out: &mut Vec<Mismatch>,
) {
    for i in 0..expected.len().max(observed.len()) {
        let label = format!("expect.{name}[{i}]");
        match (expected.get(i), observed.get(i)) {
            (Some(e), Some(o)) => {
                let (e, o) = (canonical(e, None), canonical(o, Some(e)));
                if let Some(diff) = json_diff(&e, &o, false) {
                    out.push(Mismatch::new(
                        label,
                        format!("differs (-expected, +actual):\n{diff}"),
                    ));
                }
            }
            (Some(e), None) => out.push(Mismatch::new(
                label,
                format!(
                    "was not observed; expected:\n{}",
                    pretty(&canonical(e, None))
                ),
            )),
            (None, Some(o)) => out.push(Mismatch::new(
                format!("expect.{name}[{i}]"),
                format!(
                    "was observed but not expected:\n{}",
                    pretty(&canonical(o, None))
                ),
            )),
            (None, None) => {}
        }
    }
}

/// An object as compared: without server-set fields unless asked.
fn object(value: &Value, options: Options) -> Value {
    let mut v = value.clone();
    if !options.server_fields {
        strip_server_fields(&mut v);
    }
    v
}

/// A status update as compared: which object, and its status.
fn status_update(value: &Value, options: Options) -> Value {
    let meta = value.get("metadata");
    let mut v = json!({
        "apiVersion": value.get("apiVersion"),
        "kind": value.get("kind"),
        "metadata": {"name": meta.and_then(|m| m.get("name")), "namespace": meta.and_then(|m| m.get("namespace"))},
        "status": value.get("status"),
    });
    if !options.server_fields {
        strip_server_fields(&mut v);
    }
    v
}

/// `item` as compared with `expected` (`None` when `item` is the expectation, or is shown
/// alone): each of the `optional` fields only when the expectation names it, and then as
/// `null` when `item` has none, so that the diff shows both sides.
fn named_only(mut item: Value, expected: Option<&Value>, optional: &[&str]) -> Value {
    if let (Some(expected), Value::Object(map)) = (expected, &mut item) {
        for field in optional {
            if expected.get(field).is_none() {
                map.remove(*field);
            } else {
                map.entry(*field).or_insert(Value::Null);
            }
        }
    }
    item
}

/// A delete as compared: `group` and `dryRun` only when the expectation names them.
fn reference<T: Serialize>(item: &T, expected: Option<&T>) -> Value {
    named_only(
        to_json(item),
        expected.map(to_json).as_ref(),
        &["group", "dryRun"],
    )
}

/// An event as compared: `action`, `reportingController` and `related` (and its `apiVersion`)
/// only when the expectation names them.
fn event(item: &EventRef, expected: Option<&EventRef>) -> Value {
    let expected = expected.map(to_json);
    let mut v = named_only(
        to_json(item),
        expected.as_ref(),
        &["action", "reportingController", "related"],
    );
    if let (Some(expected), Some(related)) = (&expected, v.get_mut("related")) {
        *related = named_only(related.take(), expected.get("related"), &["apiVersion"]);
    }
    v
}

/// Patches: the JSON body without server fields, unless the expectation asks for exact bytes
/// (compared separately, as text).
fn compare_patches(
    name: &str,
    expected: &[PatchRef],
    observed: &[PatchRef],
    options: Options,
    out: &mut Vec<Mismatch>,
) {
    let canonical = |p: &PatchRef, e: Option<&PatchRef>| {
        let mut v = named_only(
            to_json(p),
            e.map(to_json).as_ref(),
            &["group", "fieldManager", "force", "dryRun"],
        );
        if let Value::Object(map) = &mut v {
            map.remove("exact");
            if let Some(body) = map.get_mut("patch") {
                *body = object(body, options);
            }
            if e.is_some_and(|e| e.exact.is_some() && e.patch.is_none()) {
                map.remove("patch");
            }
        }
        v
    };
    compare_list(name, expected, observed, canonical, out);
    for (i, (e, o)) in expected.iter().zip(observed).enumerate() {
        if let Some(exact) = &e.exact {
            let actual = o.exact.as_deref().unwrap_or("");
            if let Some(diff) = text_diff(exact, actual, false) {
                out.push(Mismatch::new(
                    format!("expect.{name}[{i}].exact"),
                    format!("the body on the wire differs (-expected, +actual):\n{diff}"),
                ));
            }
        }
    }
}

/// Every difference between `expected` and `observed` writes, events, tracks, result, (for
/// sub-reconcilers) resource and stash, and (for admission webhooks) response. Errors are
/// compared by the runner, which has them.
pub(crate) fn compare(
    expected: &Expectations,
    observed: &Expectations,
    options: Options,
) -> Vec<Mismatch> {
    let mut out = Vec::new();
    let objects = |v: &Value, _: Option<&Value>| object(v, options);
    compare_list(
        "creates",
        &expected.creates,
        &observed.creates,
        objects,
        &mut out,
    );
    compare_list(
        "updates",
        &expected.updates,
        &observed.updates,
        objects,
        &mut out,
    );
    compare_patches(
        "patches",
        &expected.patches,
        &observed.patches,
        options,
        &mut out,
    );
    compare_patches(
        "applies",
        &expected.applies,
        &observed.applies,
        options,
        &mut out,
    );
    compare_list(
        "deletes",
        &expected.deletes,
        &observed.deletes,
        reference,
        &mut out,
    );
    compare_list(
        "deleteCollections",
        &expected.delete_collections,
        &observed.delete_collections,
        reference,
        &mut out,
    );
    let status = |v: &Value, _: Option<&Value>| status_update(v, options);
    compare_list(
        "statusUpdates",
        &expected.status_updates,
        &observed.status_updates,
        status,
        &mut out,
    );
    compare_patches(
        "statusPatches",
        &expected.status_patches,
        &observed.status_patches,
        options,
        &mut out,
    );
    compare_patches(
        "statusApplies",
        &expected.status_applies,
        &observed.status_applies,
        options,
        &mut out,
    );
    compare_list(
        "events",
        &expected.events,
        &observed.events,
        event,
        &mut out,
    );
    compare_list(
        "tracks",
        &expected.tracks,
        &observed.tracks,
        |t, _| to_json(t),
        &mut out,
    );
    let both_ok = expected.error.is_none() && observed.error.is_none();
    let both_failed = expected.error.is_some() && observed.error.is_some();
    if both_ok || (both_failed && options.result_on_error) {
        // Compared as the controller acts on them (reconciler.io's tables compare results the
        // way controller-runtime treats them: a delay implies the requeue).
        let (e, o) = (
            to_json(&expected.result.as_acted_on()),
            to_json(&observed.result.as_acted_on()),
        );
        if let Some(diff) = json_diff(&e, &o, false) {
            out.push(Mismatch::new(
                "expect.result",
                format!("differs (-expected, +actual):\n{diff}"),
            ));
        }
    }
    if let (Some(_), None) = (&expected.resource, &observed.resource) {
        out.push(Mismatch::new(
            "expect.resource",
            "the sub-reconciler did not run, so there is no resource to compare",
        ));
    }
    if let (Some(e), Some(o)) = (&expected.resource, &observed.resource)
        && let Some(diff) = json_diff(&object(e, options), &object(o, options), false)
    {
        out.push(Mismatch::new(
            "expect.resource",
            format!("differs (-expected, +actual):\n{diff}"),
        ));
    }
    match (&expected.response, &observed.response) {
        (Some(e), Some(o)) => {
            if let Some(diff) = json_diff(e, o, false) {
                out.push(Mismatch::new(
                    "expect.response",
                    format!("differs (-expected, +actual):\n{diff}"),
                ));
            }
        }
        (Some(e), None) => out.push(Mismatch::new(
            "expect.response",
            format!(
                "the webhook gave no response (it did not run to the end); expected:\n{}",
                pretty(e)
            ),
        )),
        (None, _) => {}
    }
    for (key, e) in &expected.stashed {
        match observed.stashed.get(key) {
            None => out.push(Mismatch::new(
                format!("expect.stashed.{key}"),
                "nothing was stashed under this key (a value of a Rust type is only read back \
                 when the table registers it with `stash_type`)",
            )),
            Some(o) => {
                if let Some(diff) = json_diff(e, o, false) {
                    out.push(Mismatch::new(
                        format!("expect.stashed.{key}"),
                        format!("differs (-expected, +actual):\n{diff}"),
                    ));
                }
            }
        }
    }
    out
}
