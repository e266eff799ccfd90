//! Status conditions: a [`ConditionSet`] names a happy condition (`Ready` for living resources,
//! `Succeeded` for batch ones) and the conditions it depends on; a [`ConditionManager`] changes
//! conditions so that the happy one always summarises its dependents.

use jiff::Timestamp;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use recon_apimachinery::gotime;

/// `metav1.Condition`, as k8s-openapi defines it.
pub use k8s_openapi::apimachinery::pkg::apis::meta::v1::Condition;

/// `True`, `False` or `Unknown`.
pub const TRUE: &str = "True";
/// The `False` condition status.
pub const FALSE: &str = "False";
/// The `Unknown` condition status.
pub const UNKNOWN: &str = "Unknown";

/// Which conditions a status has and how they add up.
///
/// ```
/// use recon_core::ConditionSet;
///
/// const FUNCTION: ConditionSet = ConditionSet::living(&["ImageResolved", "ChildReady"]);
/// assert_eq!(FUNCTION.happy(), "Ready");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConditionSet {
    happy: &'static str,
    happy_reason: &'static str,
    dependents: &'static [&'static str],
}

impl ConditionSet {
    /// For long-lived resources: happy condition `Ready` (reason `Ready`).
    pub const fn living(dependents: &'static [&'static str]) -> Self {
        ConditionSet {
            happy: "Ready",
            happy_reason: "Ready",
            dependents,
        }
    }

    /// For run-to-completion resources: happy condition `Succeeded` (reason `Succeeded`).
    pub const fn batch(dependents: &'static [&'static str]) -> Self {
        ConditionSet {
            happy: "Succeeded",
            happy_reason: "Succeeded",
            dependents,
        }
    }

    /// The same set with another reason for the happy condition when it turns true.
    pub const fn with_happy_reason(mut self, reason: &'static str) -> Self {
        self.happy_reason = reason;
        self
    }

    /// The happy condition type.
    pub fn happy(&self) -> &'static str {
        self.happy
    }

    /// The dependent condition types (the happy type, if listed, is ignored).
    pub fn dependents(&self) -> impl Iterator<Item = &'static str> + '_ {
        let happy = self.happy;
        self.dependents.iter().copied().filter(move |d| *d != happy)
    }

    /// A manager of `conditions` under this set, stamping changes with `now`.
    pub fn manage<'a>(
        &'a self,
        conditions: &'a mut Vec<Condition>,
        now: Timestamp,
    ) -> ConditionManager<'a> {
        ConditionManager {
            set: self,
            conditions,
            now,
        }
    }
}

/// Why a condition could not be cleared.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("condition {0:?} is part of the condition set and cannot be cleared")]
pub struct TerminalConditionError(pub String);

/// Changes conditions under a [`ConditionSet`].
///
/// ```
/// use recon_core::{ConditionSet, conditions::TRUE};
///
/// const SET: ConditionSet = ConditionSet::living(&["ImageResolved"]);
/// let mut conditions = Vec::new();
/// let mut manager = SET.manage(&mut conditions, "2024-05-01T10:00:00Z".parse().unwrap());
/// manager.initialize();
/// manager.mark_true("ImageResolved", "Resolved", "");
/// assert!(manager.is_happy());
/// assert_eq!(manager.get("Ready").unwrap().status, TRUE);
/// ```
#[derive(Debug)]
pub struct ConditionManager<'a> {
    set: &'a ConditionSet,
    conditions: &'a mut Vec<Condition>,
    now: Timestamp,
}

impl ConditionManager<'_> {
    /// The condition of `type_`, if present.
    pub fn get(&self, type_: &str) -> Option<&Condition> {
        self.conditions.iter().find(|c| c.type_ == type_)
    }

    /// Whether the happy condition is `True`.
    pub fn is_happy(&self) -> bool {
        self.get(self.set.happy).is_some_and(|c| c.status == TRUE)
    }

    /// Sets `condition`, replacing one of the same type. An otherwise equal condition is left as
    /// it is (its transition time kept); a changed one is stamped with the request time (whole
    /// seconds). Conditions stay sorted by type.
    pub fn set(&mut self, mut condition: Condition) {
        if let Some(existing) = self.conditions.iter().find(|c| c.type_ == condition.type_) {
            let same = existing.status == condition.status
                && existing.reason == condition.reason
                && existing.message == condition.message
                && existing.observed_generation == condition.observed_generation;
            if same {
                return;
            }
        }
        condition.last_transition_time = Time(gotime::truncate_to_second(self.now));
        self.conditions.retain(|c| c.type_ != condition.type_);
        self.conditions.push(condition);
        self.conditions.sort_by(|a, b| a.type_.cmp(&b.type_));
    }

    fn condition(&self, type_: &str, status: &str, reason: &str, message: &str) -> Condition {
        Condition {
            type_: type_.to_owned(),
            status: status.to_owned(),
            reason: reason.to_owned(),
            message: message.to_owned(),
            last_transition_time: Time(self.now),
            observed_generation: None,
        }
    }

    /// Sets `type_` `True`; when every dependent is then `True`, so is the happy condition.
    pub fn mark_true(&mut self, type_: &str, reason: &str, message: &str) {
        let c = self.condition(type_, TRUE, reason, message);
        self.set(c);
        let all_true = self
            .set
            .dependents()
            .all(|d| self.get(d).is_some_and(|c| c.status == TRUE));
        if all_true {
            let happy = self.condition(self.set.happy, TRUE, self.set.happy_reason, "");
            self.set(happy);
        }
    }

    /// Sets `type_` `False`; a dependent takes the happy condition down with it.
    pub fn mark_false(&mut self, type_: &str, reason: &str, message: &str) {
        let c = self.condition(type_, FALSE, reason, message);
        self.set(c);
        if self.set.dependents().any(|d| d == type_) {
            let happy = self.condition(self.set.happy, FALSE, reason, message);
            self.set(happy);
        }
    }

    /// Sets `type_` `Unknown`. The happy condition becomes `False` if another dependent is
    /// `False` (failures trump unknowns), else `Unknown` if `type_` is a dependent.
    pub fn mark_unknown(&mut self, type_: &str, reason: &str, message: &str) {
        let c = self.condition(type_, UNKNOWN, reason, message);
        self.set(c);
        let failed = self
            .set
            .dependents()
            .any(|d| self.get(d).is_some_and(|c| c.status == FALSE));
        if failed {
            if self.get(self.set.happy).is_none_or(|h| h.status != FALSE) {
                let happy = self.condition(self.set.happy, FALSE, reason, message);
                self.set(happy);
            }
            return;
        }
        if self.set.dependents().any(|d| d == type_) {
            let happy = self.condition(self.set.happy, UNKNOWN, reason, message);
            self.set(happy);
        }
    }

    /// Adds missing conditions: the happy one `Unknown` (reason `Initializing`), and each
    /// dependent `True` if the happy one is `True`, else `Unknown`.
    pub fn initialize(&mut self) {
        if self.get(self.set.happy).is_none() {
            let happy = self.condition(self.set.happy, UNKNOWN, "Initializing", "");
            self.set(happy);
        }
        let status = if self.is_happy() { TRUE } else { UNKNOWN };
        for d in self.set.dependents() {
            if self.get(d).is_none() {
                let c = self.condition(d, status, "Initializing", "");
                self.set(c);
            }
        }
    }

    /// Removes a condition that is not part of the set.
    pub fn clear(&mut self, type_: &str) -> Result<(), TerminalConditionError> {
        if type_ == self.set.happy || self.set.dependents().any(|d| d == type_) {
            return Err(TerminalConditionError(type_.to_owned()));
        }
        self.conditions.retain(|c| c.type_ != type_);
        Ok(())
    }
}

/// The parts of a status that a [`ResourceReconciler`](crate::ResourceReconciler) manages:
/// `observedGeneration` and the conditions of a [`ConditionSet`].
///
/// Implement it by hand or with [`impl_conditioned_status!`](crate::impl_conditioned_status):
///
/// ```
/// use recon_core::{Condition, ConditionSet, impl_conditioned_status};
///
/// #[derive(Default)]
/// struct WidgetStatus {
///     observed_generation: Option<i64>,
///     conditions: Vec<Condition>,
/// }
/// const WIDGET: ConditionSet = ConditionSet::living(&["Synced"]);
/// impl_conditioned_status!(WidgetStatus, WIDGET);
/// ```
pub trait ConditionedStatus: Send + Sync {
    /// The set the conditions follow.
    fn condition_set(&self) -> ConditionSet;
    /// `status.conditions`.
    fn conditions(&self) -> &[Condition];
    /// `status.conditions`, to change.
    fn conditions_mut(&mut self) -> &mut Vec<Condition>;
    /// `status.observedGeneration`.
    fn observed_generation(&self) -> Option<i64>;
    /// Sets `status.observedGeneration`.
    fn set_observed_generation(&mut self, generation: Option<i64>);
}

/// Implements [`ConditionedStatus`] for a status struct with `conditions: Vec<Condition>` and
/// `observed_generation: Option<i64>` fields (or the fields named after the set).
#[macro_export]
macro_rules! impl_conditioned_status {
    ($status:ty, $set:expr) => {
        $crate::impl_conditioned_status!($status, $set, conditions, observed_generation);
    };
    ($status:ty, $set:expr, $conditions:ident, $observed_generation:ident) => {
        impl $crate::ConditionedStatus for $status {
            fn condition_set(&self) -> $crate::ConditionSet {
                $set
            }
            fn conditions(&self) -> &[$crate::Condition] {
                &self.$conditions
            }
            fn conditions_mut(&mut self) -> &mut ::std::vec::Vec<$crate::Condition> {
                &mut self.$conditions
            }
            fn observed_generation(&self) -> ::std::option::Option<i64> {
                self.$observed_generation
            }
            fn set_observed_generation(&mut self, generation: ::std::option::Option<i64>) {
                self.$observed_generation = generation;
            }
        }
    };
}

/// Keeps the transition time of each condition of `current` whose status, reason, message and
/// observed generation equal those of the same type in `original`.
pub(crate) fn keep_transition_times(current: &mut [Condition], original: &[Condition]) {
    for c in current {
        if let Some(o) = original.iter().find(|o| o.type_ == c.type_)
            && o.status == c.status
            && o.reason == c.reason
            && o.message == c.message
            && o.observed_generation == c.observed_generation
        {
            c.last_transition_time = o.last_transition_time.clone();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SET: ConditionSet = ConditionSet::living(&["A", "B"]);

    fn now(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    fn status_of<'a>(conditions: &'a [Condition], t: &str) -> &'a str {
        conditions
            .iter()
            .find(|c| c.type_ == t)
            .map_or("", |c| c.status.as_str())
    }

    #[test]
    fn initialize_adds_unknown_happy_and_dependents() {
        let mut conditions = Vec::new();
        SET.manage(&mut conditions, now("2024-01-01T00:00:00Z"))
            .initialize();
        let types: Vec<&str> = conditions.iter().map(|c| c.type_.as_str()).collect();
        assert_eq!(types, ["A", "B", "Ready"]);
        assert!(
            conditions
                .iter()
                .all(|c| c.status == UNKNOWN && c.reason == "Initializing")
        );
    }

    #[test]
    fn the_happy_condition_turns_true_once_every_dependent_is() {
        let mut conditions = Vec::new();
        let mut m = SET.manage(&mut conditions, now("2024-01-01T00:00:00Z"));
        m.initialize();
        m.mark_true("A", "Done", "");
        assert!(!m.is_happy());
        m.mark_true("B", "Done", "");
        assert!(m.is_happy());
        assert_eq!(m.get("Ready").unwrap().reason, "Ready");
    }

    #[test]
    fn a_false_dependent_makes_the_happy_condition_false_and_trumps_unknown() {
        let mut conditions = Vec::new();
        let mut m = SET.manage(&mut conditions, now("2024-01-01T00:00:00Z"));
        m.initialize();
        m.mark_false("A", "Broken", "a is broken");
        m.mark_unknown("B", "Pending", "b is pending");
        let ready = m.get("Ready").unwrap();
        assert_eq!(
            (ready.status.as_str(), ready.reason.as_str()),
            (FALSE, "Broken")
        );
        assert_eq!(status_of(&conditions, "B"), UNKNOWN);
    }

    #[test]
    fn an_unchanged_condition_keeps_its_transition_time() {
        let mut conditions = Vec::new();
        SET.manage(&mut conditions, now("2024-01-01T00:00:00Z"))
            .mark_true("A", "Done", "");
        SET.manage(&mut conditions, now("2024-06-01T00:00:00Z"))
            .mark_true("A", "Done", "");
        assert_eq!(
            conditions[0].last_transition_time.0,
            now("2024-01-01T00:00:00Z")
        );
        SET.manage(&mut conditions, now("2024-06-01T00:00:00.900Z"))
            .mark_false("A", "Broken", "");
        assert_eq!(
            conditions[0].last_transition_time.0,
            now("2024-06-01T00:00:00Z"),
            "whole seconds"
        );
    }

    #[test]
    fn conditions_of_the_set_cannot_be_cleared() {
        let mut conditions = Vec::new();
        let mut m = SET.manage(&mut conditions, now("2024-01-01T00:00:00Z"));
        m.mark_true("Extra", "Yes", "");
        assert!(m.clear("Ready").is_err());
        assert!(m.clear("Extra").is_ok());
        assert!(m.get("Extra").is_none());
    }

    #[test]
    fn transition_times_are_restored_for_otherwise_equal_conditions() {
        let mut original = Vec::new();
        SET.manage(&mut original, now("2024-01-01T00:00:00Z"))
            .mark_true("A", "Done", "");
        let mut current = Vec::new();
        let mut m = SET.manage(&mut current, now("2024-09-01T00:00:00Z"));
        m.mark_true("A", "Done", "");
        m.mark_false("B", "Broken", "");
        keep_transition_times(&mut current, &original);
        assert_eq!(
            current
                .iter()
                .find(|c| c.type_ == "A")
                .unwrap()
                .last_transition_time
                .0,
            now("2024-01-01T00:00:00Z")
        );
        assert_eq!(
            current
                .iter()
                .find(|c| c.type_ == "B")
                .unwrap()
                .last_transition_time
                .0,
            now("2024-09-01T00:00:00Z")
        );
    }
}
