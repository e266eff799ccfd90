//! The oracles: what makes a schedule fail. Some a run finds on its own (it never settles, it
//! panics, a reconcile fails forever, something leaked, an invariant broke); the others compare
//! a perturbed run with the reference run (the final world differs, another writer's change
//! was lost).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::perturbation::Perturbation;
use super::run::Outcome;
use super::tap::CONCURRENT_ANNOTATION;
use super::trace::Entry;
use super::world::{History, World};

/// Which oracle a failure comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum CauseKind {
    /// The scenario could not be set up (a CRD, a given object, the controller missing).
    Setup,
    /// A user action the reference run could make failed.
    ActionFailed,
    /// Two reference runs differ: the controller depends on something other than the
    /// schedule (the wall clock, a random value, another thread), and replays are not exact.
    Nondeterministic,
    /// The controller (or building it) panicked, or its stream ended.
    Panicked,
    /// The controller never stopped changing the world.
    NotQuiescent,
    /// A reconcile still failed, again and again, once the world stopped changing.
    Stuck,
    /// The settled world holds an object stuck deleting, or one the controller created that
    /// nothing will delete.
    Leaked,
    /// A user invariant failed.
    Invariant,
    /// Another writer's change to an object was overwritten by the controller.
    LostWrite,
    /// The perturbed run's final world differs from the reference run's.
    Diverged,
    /// A fresh controller started on the settled world changed it.
    ResyncChanged,
    /// A controller started fresh on the user's final spec leaves a world other than the one
    /// the user's sequence of changes left: the result depends on the path (an object left
    /// behind by a rename, a field kept from an older spec).
    PathDependent,
}

/// One thing a schedule found wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Finding {
    pub(crate) kind: CauseKind,
    /// What went wrong; schedules with the same kind and cause are one failure.
    pub(crate) cause: String,
    /// More about it: a diff, the trace.
    pub(crate) detail: String,
}

impl Finding {
    pub(crate) fn new(kind: CauseKind, cause: String) -> Self {
        Finding {
            kind,
            cause,
            detail: String::new(),
        }
    }

    pub(crate) fn with_detail(mut self, detail: String) -> Self {
        self.detail = detail;
        self
    }
}

/// What a perturbed run found: its own findings the reference did not have, and its
/// differences from the reference.
pub(crate) fn judge(
    reference: &Outcome,
    perturbed: &Outcome,
    plan: Perturbation,
    convergence: Option<&super::scenario::Convergence>,
) -> Vec<Finding> {
    if perturbed.inapplicable.is_some() {
        return Vec::new();
    }
    let known: BTreeSet<(CauseKind, &str)> = reference
        .findings
        .iter()
        .map(|f| (f.kind, f.cause.as_str()))
        .collect();
    // A reconcile stuck in the reference run is one failure, whichever error it last met.
    let stuck = known.iter().any(|(kind, _)| *kind == CauseKind::Stuck);
    let mut findings: Vec<Finding> = perturbed
        .findings
        .iter()
        .filter(|f| !known.contains(&(f.kind, f.cause.as_str())))
        .filter(|f| !(stuck && f.kind == CauseKind::Stuck))
        .cloned()
        .collect();
    if perturbed
        .findings
        .iter()
        .any(|f| matches!(f.kind, CauseKind::Panicked | CauseKind::NotQuiescent))
    {
        // A run that did not get to the end has no final world to compare.
        return findings;
    }
    let mut world = perturbed.world.clone();
    if let Some((write, uid)) = perturbed
        .concurrent
        .as_ref()
        .and_then(|w| Some((w, w.uid.as_deref()?)))
    {
        // Only the object the other writer changed counts: not one deleted and made again.
        let object = world.objects().iter().find(|o| o["metadata"]["uid"] == uid);
        if let Some(object) = object
            && !object["metadata"]["annotations"][CONCURRENT_ANNOTATION].is_string()
        {
            let name = write.route.object(None).unwrap_or_default();
            findings.push(
                Finding::new(
                    CauseKind::LostWrite,
                    format!(
                        "another writer's change to {} {name} was overwritten",
                        write.route.resource
                    ),
                )
                .with_detail(format!(
                    "Its annotation {CONCURRENT_ANNOTATION} is gone: the controller wrote the \
                     object from a copy older than that change without a resourceVersion to \
                     stop it."
                )),
            );
        }
        world = without_annotation(&world);
    }
    let diverged = match (convergence, plan) {
        (Some(check), _) => check(&reference.world, &world)
            .err()
            .map(|why| (why, String::new())),
        // The fresh start is the expectation the user's changes are held to; it has no
        // history, so which incarnation of a name an object is does not count.
        (None, Perturbation::FreshStart) => {
            let sides = ("the fresh start", "the user's changes");
            difference(&world, &reference.world, History::Dropped, sides)
        }
        (None, _) => {
            let sides = ("the reference run", "this run");
            difference(&reference.world, &world, History::Kept, sides)
        }
    };
    if let Some((cause, detail)) = diverged {
        let (kind, cause) = match plan {
            Perturbation::FreshStart => (
                CauseKind::PathDependent,
                format!(
                    "the user's changes end elsewhere than a fresh start on their final spec: \
                     {cause}"
                ),
            ),
            _ => (CauseKind::Diverged, cause),
        };
        findings.push(Finding::new(kind, cause).with_detail(detail));
    }
    findings
}

/// How `actual` differs from `expected`, in normal form: a summary that names every object
/// and field path that differ (the cause), and the diffs, their sides named by `sides`.
fn difference(
    expected: &World,
    actual: &World,
    history: History,
    sides: (&str, &str),
) -> Option<(String, String)> {
    let (expected, actual) = (expected.normalized(history), actual.normalized(history));
    let mut summary = Vec::new();
    let mut detail = String::new();
    for (key, want) in &expected {
        match actual.get(key) {
            None => summary.push(format!("missing {key}")),
            Some(got) if got != want => {
                let mut paths = BTreeSet::new();
                differing_paths(want, got, String::new(), &mut paths);
                // Only the incarnation differs in a uid's normal form (`... #2`).
                let incarnation = |o: &Value| {
                    let uid = o["metadata"]["uid"].as_str().unwrap_or_default();
                    uid.rsplit_once('#').map_or("", |(_, n)| n).to_owned()
                };
                let mut line = if paths.remove("/metadata/uid") {
                    format!(
                        "{key} was deleted and made again ({}'s is #{}, {}'s #{})",
                        sides.1,
                        incarnation(got),
                        sides.0,
                        incarnation(want)
                    )
                } else {
                    key.clone()
                };
                if !paths.is_empty() {
                    let paths: Vec<String> = paths.into_iter().collect();
                    line.push_str(&format!(" differs at {}", paths.join(", ")));
                }
                summary.push(line);
                if let Some(diff) = crate::diff::json_diff(want, got, false) {
                    detail.push_str(&format!("{key} (- {}, + {}):\n{diff}\n", sides.0, sides.1));
                }
            }
            Some(_) => {}
        }
    }
    for key in actual.keys().filter(|k| !expected.contains_key(*k)) {
        summary.push(format!("extra {key}"));
    }
    if summary.is_empty() {
        return None;
    }
    Some((
        format!("the final world differs: {}", summary.join("; ")),
        detail,
    ))
}

/// The JSON pointers where `a` and `b` differ (objects compared key by key, anything else as
/// a whole).
fn differing_paths(a: &Value, b: &Value, at: String, out: &mut BTreeSet<String>) {
    match (a, b) {
        (Value::Object(a), Value::Object(b)) => {
            let keys: BTreeSet<&String> = a.keys().chain(b.keys()).collect();
            for key in keys {
                let path = format!("{at}/{key}");
                match (a.get(key), b.get(key)) {
                    (Some(x), Some(y)) if x != y => differing_paths(x, y, path, out),
                    (Some(_), Some(_)) => {}
                    _ => {
                        out.insert(path);
                    }
                }
            }
        }
        _ if a != b => {
            out.insert(if at.is_empty() { "/".to_owned() } else { at });
        }
        _ => {}
    }
}

fn without_annotation(world: &World) -> World {
    world.map_objects(|object| {
        let Some(annotations) = object
            .pointer_mut("/metadata/annotations")
            .and_then(Value::as_object_mut)
        else {
            return;
        };
        annotations.remove(CONCURRENT_ANNOTATION);
        if annotations.is_empty()
            && let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut)
        {
            meta.remove("annotations");
        }
    })
}

/// Where two traces part: a few entries before the first that differs, and what each run did
/// from there.
pub(crate) fn parting(reference: &[Entry], perturbed: &[Entry]) -> String {
    let (a, b): (Vec<String>, Vec<String>) = (
        reference.iter().map(|e| e.compared().to_string()).collect(),
        perturbed.iter().map(|e| e.compared().to_string()).collect(),
    );
    let at = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let from = at.saturating_sub(3);
    let mut out = String::new();
    for line in &a[from..at] {
        out.push_str(&format!("    {line}\n"));
    }
    let side = |lines: &[String], out: &mut String, label: &str| {
        out.push_str(&format!("  {label}:\n"));
        for line in lines.iter().skip(at).take(8) {
            out.push_str(&format!("    {line}\n"));
        }
        if lines.len() > at + 8 {
            out.push_str(&format!("    ... {} more\n", lines.len() - at - 8));
        }
        if lines.len() <= at {
            out.push_str("    (nothing more)\n");
        }
    };
    side(&a, &mut out, "reference run");
    side(&b, &mut out, "this run");
    out
}

/// A finding, the schedule that found it, and where its run parted from the reference.
pub(crate) type Found = (String, Finding, String);

/// Findings grouped by kind and cause, each group's schedules in order.
pub(crate) type Groups = BTreeMap<(CauseKind, String), Vec<Found>>;

/// Failures grouped by cause: kind and cause, with the schedules that found it in order.
pub(crate) fn group(found: Vec<Found>) -> Groups {
    let mut groups = Groups::new();
    for (schedule, finding, parting) in found {
        groups
            .entry((finding.kind, finding.cause.clone()))
            .or_default()
            .push((schedule, finding, parting));
    }
    groups
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn differing_paths_name_leaves_and_missing_keys() {
        let mut out = BTreeSet::new();
        differing_paths(
            &json!({"a": {"b": 1, "c": [1]}, "d": 1}),
            &json!({"a": {"b": 2, "c": [1]}, "e": 1}),
            String::new(),
            &mut out,
        );
        assert_eq!(out.into_iter().collect::<Vec<_>>(), ["/a/b", "/d", "/e"]);
    }

    #[test]
    fn traces_part_at_the_first_entry_that_differs() {
        let a = [
            Entry::Action(1, "create".into()),
            Entry::Helper("x".into()),
            Entry::Helper("y".into()),
        ];
        let b = [Entry::Action(1, "create".into()), Entry::Helper("z".into())];
        let text = parting(&a, &b);
        assert!(text.starts_with("    user action 1: create\n  reference run:\n    helper: x\n    helper: y\n  this run:\n    helper: z\n"), "{text}");
    }
}
