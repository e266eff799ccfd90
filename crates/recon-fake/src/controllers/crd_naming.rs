//! The naming controller's rules (apiextensions-apiserver
//! `pkg/controller/status/naming_controller.go`): a CRD's requested names are accepted one by
//! one, each if it is the name accepted already or no CRD of the group has accepted it.

use std::collections::BTreeSet;

use recon_apimachinery::go_quote;
use recon_apimachinery::json::{Map, Value};

use crate::wire::object::{Object, strings};

/// `CustomResourceDefinitionNames`, read from `spec.names` or `status.acceptedNames` (an
/// absent field is Go's zero value).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Names {
    plural: String,
    singular: String,
    short_names: Vec<String>,
    kind: String,
    list_kind: String,
    categories: Vec<String>,
}

impl Names {
    fn of(names: Option<&Value>) -> Names {
        let text = |field: &str| {
            names
                .and_then(|n| n.get(field))
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        };
        let list = |field: &str| strings(names.and_then(|n| n.get(field)));
        Names {
            plural: text("plural"),
            singular: text("singular"),
            short_names: list("shortNames"),
            kind: text("kind"),
            list_kind: text("listKind"),
            categories: list("categories"),
        }
    }

    /// The names `crd` asks for.
    pub(crate) fn requested(crd: &Object) -> Names {
        Names::of(crd.get("spec").and_then(|s| s.get("names")))
    }

    /// The names `crd` has been given.
    pub(crate) fn accepted(crd: &Object) -> Names {
        Names::of(crd.get("status").and_then(|s| s.get("acceptedNames")))
    }

    /// As Go encodes the struct: `plural` and `kind` always, the others when set.
    pub(crate) fn to_json(&self) -> Value {
        let mut out = Map::new();
        out.insert("plural".into(), Value::from(self.plural.as_str()));
        if !self.singular.is_empty() {
            out.insert("singular".into(), Value::from(self.singular.as_str()));
        }
        if !self.short_names.is_empty() {
            out.insert("shortNames".into(), Value::from(self.short_names.clone()));
        }
        out.insert("kind".into(), Value::from(self.kind.as_str()));
        if !self.list_kind.is_empty() {
            out.insert("listKind".into(), Value::from(self.list_kind.as_str()));
        }
        if !self.categories.is_empty() {
            out.insert("categories".into(), Value::from(self.categories.clone()));
        }
        Value::Object(out)
    }
}

/// The names the CRDs of one group have accepted (`getAcceptedNamesForGroup`): resources
/// (plurals, singulars, short names) and kinds (kinds, list kinds). A CRD that has accepted
/// none yet adds the empty name, as upstream's does.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct GroupNames {
    resources: BTreeSet<String>,
    kinds: BTreeSet<String>,
}

impl GroupNames {
    /// Adds what `crd` has accepted.
    pub(crate) fn add(&mut self, crd: &Object) {
        let accepted = Names::accepted(crd);
        self.resources.insert(accepted.plural);
        self.resources.insert(accepted.singular);
        self.resources.extend(accepted.short_names);
        self.kinds.insert(accepted.kind);
        self.kinds.insert(accepted.list_kind);
    }
}

/// What the naming controller decides for one CRD (`calculateNamesAndConditions`).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Naming {
    /// The names it accepts: the requested ones that are free, the accepted ones elsewhere.
    pub(crate) names: Names,
    /// Why a name was refused (reason, message): the last refused one says it. `None` when all
    /// were accepted.
    pub(crate) conflict: Option<(&'static str, String)>,
}

/// `equalToAcceptedOrFresh`.
fn free(requested: &str, accepted: &str, used: &BTreeSet<String>) -> Result<(), String> {
    if requested == accepted || !used.contains(requested) {
        return Ok(());
    }
    Err(format!("{} is already in use", go_quote(requested)))
}

/// `requested` into `slot` when it is free; else the conflict, named `reason`.
fn take(
    requested: &str,
    accepted: &str,
    used: &BTreeSet<String>,
    slot: &mut String,
    reason: &'static str,
) -> Option<(&'static str, String)> {
    match free(requested, accepted, used) {
        Ok(()) => {
            requested.clone_into(slot);
            None
        }
        Err(e) => Some((reason, e)),
    }
}

/// The names `crd` is given, `used` being what its group's CRDs (itself included) have accepted.
pub(crate) fn calculate(crd: &Object, used: &GroupNames) -> Naming {
    let requested = Names::requested(crd);
    let accepted = Names::accepted(crd);
    let mut names = accepted.clone();
    // Each requested name is taken when free, or is the reason; a later reason overrides.
    let mut conflict = take(
        &requested.plural,
        &accepted.plural,
        &used.resources,
        &mut names.plural,
        "PluralConflict",
    );
    conflict = take(
        &requested.singular,
        &accepted.singular,
        &used.resources,
        &mut names.singular,
        "SingularConflict",
    )
    .or(conflict);
    if requested.short_names != accepted.short_names {
        // A short name the CRD has already is its own; the others must be free. Go aggregates
        // the errors: one is written as it is, several as a list in brackets.
        let taken: Vec<String> = requested
            .short_names
            .iter()
            .filter(|s| !accepted.short_names.contains(s))
            .filter_map(|s| free(s, "", &used.resources).err())
            .collect();
        match taken.as_slice() {
            [] => names.short_names = requested.short_names.clone(),
            [one] => conflict = Some(("ShortNamesConflict", one.clone())),
            many => conflict = Some(("ShortNamesConflict", format!("[{}]", many.join(", ")))),
        }
    }
    conflict = take(
        &requested.kind,
        &accepted.kind,
        &used.kinds,
        &mut names.kind,
        "KindConflict",
    )
    .or(conflict);
    conflict = take(
        &requested.list_kind,
        &accepted.list_kind,
        &used.kinds,
        &mut names.list_kind,
        "ListKindConflict",
    )
    .or(conflict);
    names.categories = requested.categories;
    Naming { names, conflict }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    fn crd(spec_names: Value, accepted: Value) -> Object {
        let Value::Object(obj) = json!({
            "spec": {"group": "example.com", "names": spec_names},
            "status": {"acceptedNames": accepted},
        }) else {
            unreachable!("an object literal")
        };
        obj
    }

    fn widgets_accepted() -> GroupNames {
        let mut used = GroupNames::default();
        used.add(&crd(
            json!({}),
            json!({"plural": "widgets", "singular": "widget", "shortNames": ["wd"], "kind": "Widget", "listKind": "WidgetList"}),
        ));
        used
    }

    // naming_controller.go: every check runs, and the last refused name gives the reason; the
    // free names are accepted all the same (recorded: crds-lifecycle/a-deleted-crd-frees-its-names).
    #[test]
    fn free_names_are_accepted_and_the_last_conflict_is_the_reason() {
        let gadgets = crd(
            json!({"plural": "gadgets", "singular": "gadget", "kind": "Widget", "listKind": "WidgetList"}),
            json!({"plural": "", "kind": ""}),
        );
        let naming = calculate(&gadgets, &widgets_accepted());
        assert_eq!(
            naming.conflict,
            Some((
                "ListKindConflict",
                "\"WidgetList\" is already in use".into()
            ))
        );
        assert_eq!(
            naming.names.to_json(),
            json!({"plural": "gadgets", "singular": "gadget", "kind": ""})
        );
    }

    #[test]
    fn a_name_a_crd_has_accepted_already_stays_its_own() {
        let widgets = crd(
            json!({"plural": "widgets", "singular": "widget", "shortNames": ["wd", "wdg"], "kind": "Widget", "listKind": "WidgetList"}),
            json!({"plural": "widgets", "singular": "widget", "shortNames": ["wd"], "kind": "Widget", "listKind": "WidgetList"}),
        );
        let naming = calculate(&widgets, &widgets_accepted());
        assert_eq!(naming.conflict, None);
        assert_eq!(
            naming.names,
            Names::requested(&widgets),
            "the new short name is free, the others its own"
        );
    }

    #[test]
    fn short_names_in_use_are_refused_together() {
        let other = crd(
            json!({"plural": "others", "singular": "other", "shortNames": ["wd", "widget", "ot"], "kind": "Other"}),
            json!({"plural": "", "kind": ""}),
        );
        let naming = calculate(&other, &widgets_accepted());
        assert_eq!(
            naming.conflict,
            Some((
                "ShortNamesConflict",
                "[\"wd\" is already in use, \"widget\" is already in use]".into()
            ))
        );
        assert!(naming.names.short_names.is_empty());
        assert_eq!(naming.names.kind, "Other");
    }
}
