//! The [`Tracker`]: which requests observe which other objects (by name, or by label selector),
//! so that a change to one of them can re-reconcile its observers. Each track holds for a lease
//! and is renewed by tracking again; a reconciler that stops tracking an object stops observing
//! it once the lease runs out.
//!
//! The rules follow reconciler.io's tracker (forked from Knative's): references carry no
//! version, exactly one of name and selector, and expired entries are dropped when observers
//! are looked up.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use kube::Resource;
use recon_apimachinery::names::{dns1123_label_errors, dns1123_subdomain_name_errors};
use recon_apimachinery::selector::LabelSelector;
use serde::{Deserialize, Serialize};

use super::request::Request;

/// How long a track holds unless renewed: twice controller-runtime's default sync period of
/// 10 hours, as reconciler.io derives its lease from the sync period.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(20 * 60 * 60);

/// What is tracked: one object by name, or the objects of a kind a label selector matches.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::Reference;
///
/// let by_name = Reference::of::<ConfigMap>(Some("default"), "settings");
/// assert_eq!((by_name.group.as_str(), by_name.kind.as_str()), ("", "ConfigMap"));
/// let by_labels = Reference::selecting::<ConfigMap>(None, "app=web");
/// assert_eq!(by_labels.selector.as_deref(), Some("app=web"));
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct Reference {
    /// The API group (empty for the core group). Versions are not tracked: every version of an
    /// object is the same object.
    #[serde(default)]
    pub group: String,
    /// The kind.
    pub kind: String,
    /// The namespace; `None` for a cluster-scoped object, or a selector over all namespaces.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub namespace: Option<String>,
    /// The object's name (exactly one of `name` and `selector`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A label selector in query form, such as `app=web,tier in (a,b)`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub selector: Option<String>,
}

impl Reference {
    /// The object `name` of `kind` in `group`.
    pub fn named(group: &str, kind: &str, namespace: Option<&str>, name: &str) -> Self {
        Reference {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: Some(name.to_owned()),
            selector: None,
        }
    }

    /// The objects of `kind` in `group` whose labels match `selector` (in `namespace`, or in
    /// every namespace).
    pub fn selected(group: &str, kind: &str, namespace: Option<&str>, selector: &str) -> Self {
        Reference {
            group: group.to_owned(),
            kind: kind.to_owned(),
            namespace: namespace.map(str::to_owned),
            name: None,
            selector: Some(selector.to_owned()),
        }
    }

    /// The object `name` of the type `K`.
    pub fn of<K: Resource<DynamicType = ()>>(namespace: Option<&str>, name: &str) -> Self {
        Self::named(&K::group(&()), &K::kind(&()), namespace, name)
    }

    /// The object `object` is, of a kind known at runtime (`dyntype`) or not (`&()`).
    pub fn to_object<K: Resource>(dyntype: &K::DynamicType, object: &K) -> Self {
        let meta = object.meta();
        Self::named(
            &K::group(dyntype),
            &K::kind(dyntype),
            meta.namespace.as_deref(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }

    /// The objects of the type `K` matching `selector`.
    pub fn selecting<K: Resource<DynamicType = ()>>(
        namespace: Option<&str>,
        selector: &str,
    ) -> Self {
        Self::selected(&K::group(&()), &K::kind(&()), namespace, selector)
    }

    /// Checks the reference as reconciler.io's tracker does, and parses its selector.
    fn validate(&self) -> Result<Option<LabelSelector>, TrackError> {
        let invalid = |why: String| TrackError::Invalid {
            reference: self.to_string(),
            why,
        };
        let c_identifier = |s: &str| {
            s.chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        };
        if !c_identifier(&self.kind) {
            return Err(invalid(format!(
                "kind {:?} is not an identifier",
                self.kind
            )));
        }
        if !self.group.is_empty()
            && let Some(why) = dns1123_subdomain_name_errors(&self.group)
                .into_iter()
                .next()
        {
            return Err(invalid(format!("group {:?}: {why}", self.group)));
        }
        if let Some(ns) = &self.namespace
            && let Some(why) = dns1123_label_errors(ns).into_iter().next()
        {
            return Err(invalid(format!("namespace {ns:?}: {why}")));
        }
        match (&self.name, &self.selector) {
            (Some(_), None) => Ok(None),
            (None, Some(selector)) => LabelSelector::parse(selector)
                .map(Some)
                .map_err(|e| invalid(format!("selector {selector:?}: {e}"))),
            _ => Err(invalid("needs exactly one of name and selector".to_owned())),
        }
    }
}

impl std::fmt::Display for Reference {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let group = if self.group.is_empty() {
            "core"
        } else {
            &self.group
        };
        write!(f, "{}.{group}", self.kind)?;
        if let Some(ns) = &self.namespace {
            write!(f, " in {ns}")?;
        }
        match (&self.name, &self.selector) {
            (Some(name), _) => write!(f, " named {name:?}"),
            (None, Some(selector)) => write!(f, " selected by {selector:?}"),
            (None, None) => Ok(()),
        }
    }
}

/// A reference the tracker refuses.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum TrackError {
    /// The reference is malformed.
    #[error("cannot track {reference}: {why}")]
    Invalid {
        /// The reference, as text.
        reference: String,
        /// What is wrong with it.
        why: String,
    },
}

/// One track: `tracker` (the object being reconciled) observes `reference`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct TrackRequest {
    /// The observer.
    pub tracker: Request,
    /// What it observes.
    pub reference: Reference,
}

/// The observers of tracked objects, each for a lease. Cloning shares the state.
///
/// ```
/// use std::time::Duration;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::{Reference, Request, Tracker};
///
/// let tracker = Tracker::new(Duration::from_secs(60));
/// let now: jiff::Timestamp = "2024-01-01T00:00:00Z".parse().unwrap();
/// let web = Request::namespaced("default", "web");
/// tracker.track(Reference::of::<ConfigMap>(Some("default"), "settings"), &web, now).unwrap();
///
/// let mut settings = ConfigMap::default();
/// settings.metadata.namespace = Some("default".into());
/// settings.metadata.name = Some("settings".into());
/// assert_eq!(tracker.observers(&settings, &(), now), [web]);
/// let later = now + jiff::SignedDuration::from_secs(61);
/// assert!(tracker.observers(&settings, &(), later).is_empty(), "the lease ran out");
/// ```
#[derive(Clone)]
pub struct Tracker {
    lease: SignedDuration,
    state: Arc<Mutex<State>>,
}

impl std::fmt::Debug for Tracker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tracker")
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

/// An entry: until when it holds, and its parsed selector.
struct Lease {
    expires: Timestamp,
    selector: Option<LabelSelector>,
}

#[derive(Default)]
struct State {
    /// By (group, kind): each (reference, observer) and its lease.
    entries: HashMap<(String, String), HashMap<(Reference, Request), Lease>>,
    /// Every track, in order, when recording.
    log: Option<Vec<TrackRequest>>,
}

impl Default for Tracker {
    fn default() -> Self {
        Tracker::new(DEFAULT_LEASE)
    }
}

impl Tracker {
    /// A tracker whose tracks hold for `lease` (a zero lease makes every track expire at once).
    pub fn new(lease: Duration) -> Self {
        Tracker {
            lease: SignedDuration::try_from(lease).unwrap_or(SignedDuration::MAX),
            state: Arc::default(),
        }
    }

    /// The same tracker, also keeping a log of every track (for tests: see
    /// [`Tracker::requests`]).
    #[must_use]
    pub fn recording(self) -> Self {
        self.lock().log.get_or_insert_default();
        self
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state stays consistent whatever panicked while holding it: every change is one
        // insert or remove.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// `observer` observes `reference` from `now` until the lease runs out (tracking again
    /// renews it).
    pub fn track(
        &self,
        reference: Reference,
        observer: &Request,
        now: Timestamp,
    ) -> Result<(), TrackError> {
        let selector = reference.validate()?;
        let expires = now.saturating_add(self.lease).unwrap_or(Timestamp::MAX);
        let mut state = self.lock();
        if let Some(log) = &mut state.log {
            log.push(TrackRequest {
                tracker: observer.clone(),
                reference: reference.clone(),
            });
        }
        let kind = (reference.group.clone(), reference.kind.clone());
        state
            .entries
            .entry(kind)
            .or_default()
            .insert((reference, observer.clone()), Lease { expires, selector });
        Ok(())
    }

    /// Who observes `object` at `now`: those tracking it by name, and those whose selector
    /// matches its labels (in its namespace, or in every namespace). Expired tracks are
    /// dropped.
    pub fn observers<K: Resource>(
        &self,
        object: &K,
        dyntype: &K::DynamicType,
        now: Timestamp,
    ) -> Vec<Request> {
        let meta = object.meta();
        let no_labels = BTreeMap::new();
        self.observers_of(
            &K::group(dyntype),
            &K::kind(dyntype),
            meta.namespace.as_deref(),
            meta.name.as_deref().unwrap_or_default(),
            meta.labels.as_ref().unwrap_or(&no_labels),
            now,
        )
    }

    /// [`Tracker::observers`] for an object described by its parts.
    pub fn observers_of(
        &self,
        group: &str,
        kind: &str,
        namespace: Option<&str>,
        name: &str,
        labels: &BTreeMap<String, String>,
        now: Timestamp,
    ) -> Vec<Request> {
        let mut state = self.lock();
        let Some(entries) = state.entries.get_mut(&(group.to_owned(), kind.to_owned())) else {
            return Vec::new();
        };
        entries.retain(|_, lease| lease.expires > now);
        let mut observers = BTreeSet::new();
        for ((reference, observer), lease) in entries.iter() {
            let matches = match (&reference.name, &lease.selector) {
                (Some(tracked), _) => {
                    tracked == name && reference.namespace.as_deref() == namespace
                }
                (None, Some(selector)) => {
                    let in_namespace = reference.namespace.is_none()
                        || reference.namespace.as_deref() == namespace;
                    in_namespace && selector.matches(|key| labels.get(key).map(String::as_str))
                }
                (None, None) => false,
            };
            if matches {
                observers.insert(observer.clone());
            }
        }
        observers.into_iter().collect()
    }

    /// Every track since the tracker started recording (or since [`Tracker::clear_requests`]),
    /// in order, renewals included; empty unless [`Tracker::recording`].
    pub fn requests(&self) -> Vec<TrackRequest> {
        self.lock().log.clone().unwrap_or_default()
    }

    /// Forgets the recorded tracks (the tracks themselves stay).
    pub fn clear_requests(&self) {
        if let Some(log) = &mut self.lock().log {
            log.clear();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(seconds: i64) -> Timestamp {
        Timestamp::from_second(1_700_000_000 + seconds).unwrap()
    }

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn observers(
        tracker: &Tracker,
        ns: Option<&str>,
        name: &str,
        l: &[(&str, &str)],
        now: i64,
    ) -> Vec<String> {
        tracker
            .observers_of("apps", "Deployment", ns, name, &labels(l), at(now))
            .iter()
            .map(ToString::to_string)
            .collect()
    }

    #[test]
    fn a_named_track_matches_only_that_object_in_that_namespace() {
        let tracker = Tracker::new(Duration::from_secs(60));
        let web = Request::namespaced("team", "web");
        tracker
            .track(
                Reference::named("apps", "Deployment", Some("team"), "api"),
                &web,
                at(0),
            )
            .unwrap();
        assert_eq!(
            observers(&tracker, Some("team"), "api", &[], 0),
            ["team/web"]
        );
        assert!(observers(&tracker, Some("other"), "api", &[], 0).is_empty());
        assert!(observers(&tracker, Some("team"), "db", &[], 0).is_empty());
        let other_kind =
            tracker.observers_of("", "ConfigMap", Some("team"), "api", &labels(&[]), at(0));
        assert!(other_kind.is_empty(), "kinds are tracked apart");
    }

    #[test]
    fn a_selector_matches_labels_in_its_namespace_or_in_all_of_them() {
        let tracker = Tracker::new(Duration::from_secs(60));
        let local = Request::namespaced("team", "local");
        let global = Request::cluster("global");
        tracker
            .track(
                Reference::selected("apps", "Deployment", Some("team"), "app=web"),
                &local,
                at(0),
            )
            .unwrap();
        tracker
            .track(
                Reference::selected("apps", "Deployment", None, "app in (web, db)"),
                &global,
                at(0),
            )
            .unwrap();
        assert_eq!(
            observers(&tracker, Some("team"), "x", &[("app", "web")], 0),
            ["global", "team/local"]
        );
        assert_eq!(
            observers(&tracker, Some("other"), "x", &[("app", "web")], 0),
            ["global"]
        );
        assert_eq!(
            observers(&tracker, Some("team"), "x", &[("app", "db")], 0),
            ["global"]
        );
        assert!(observers(&tracker, Some("team"), "x", &[("app", "cache")], 0).is_empty());
    }

    #[test]
    fn a_track_holds_for_its_lease_and_tracking_again_renews_it() {
        let tracker = Tracker::new(Duration::from_secs(60));
        let web = Request::namespaced("team", "web");
        let api = Reference::named("apps", "Deployment", Some("team"), "api");
        tracker.track(api.clone(), &web, at(0)).unwrap();
        assert_eq!(
            observers(&tracker, Some("team"), "api", &[], 59),
            ["team/web"]
        );
        tracker.track(api, &web, at(30)).unwrap();
        assert_eq!(
            observers(&tracker, Some("team"), "api", &[], 89),
            ["team/web"],
            "renewed at 30s"
        );
        assert!(
            observers(&tracker, Some("team"), "api", &[], 90).is_empty(),
            "expired at 90s"
        );
    }

    #[test]
    fn a_zero_lease_expires_at_once() {
        let tracker = Tracker::new(Duration::ZERO);
        let web = Request::namespaced("team", "web");
        tracker
            .track(
                Reference::named("apps", "Deployment", Some("team"), "api"),
                &web,
                at(0),
            )
            .unwrap();
        assert!(observers(&tracker, Some("team"), "api", &[], 0).is_empty());
    }

    #[test]
    fn malformed_references_are_refused_with_the_reason() {
        let tracker = Tracker::default();
        let web = Request::namespaced("team", "web");
        let refused = |reference: Reference| {
            tracker
                .track(reference, &web, at(0))
                .unwrap_err()
                .to_string()
        };
        let mut both = Reference::named("apps", "Deployment", None, "api");
        both.selector = Some("app=web".into());
        assert_eq!(
            refused(both),
            "cannot track Deployment.apps named \"api\": needs exactly one of name and selector"
        );
        let mut neither = Reference::named("apps", "Deployment", None, "api");
        neither.name = None;
        assert!(refused(neither).contains("needs exactly one of name and selector"));
        assert!(
            refused(Reference::named("apps", "Deploy-ment", None, "api"))
                .contains("kind \"Deploy-ment\" is not an identifier")
        );
        assert!(
            refused(Reference::named("Apps!", "Deployment", None, "api"))
                .contains("group \"Apps!\"")
        );
        assert!(
            refused(Reference::named("apps", "Deployment", Some("Team"), "api"))
                .contains("namespace \"Team\"")
        );
        assert!(
            refused(Reference::selected(
                "apps",
                "Deployment",
                None,
                "app in web"
            ))
            .contains("selector \"app in web\"")
        );
        assert!(
            tracker
                .observers_of("apps", "Deployment", None, "api", &labels(&[]), at(0))
                .is_empty(),
            "nothing refused was kept"
        );
    }

    #[test]
    fn a_recording_tracker_logs_every_track_in_order_renewals_included() {
        let tracker = Tracker::default().recording();
        let web = Request::namespaced("team", "web");
        let api = Reference::named("apps", "Deployment", Some("team"), "api");
        tracker.track(api.clone(), &web, at(0)).unwrap();
        tracker.track(api.clone(), &web, at(1)).unwrap();
        let logged = TrackRequest {
            tracker: web.clone(),
            reference: api.clone(),
        };
        assert_eq!(tracker.requests(), [logged.clone(), logged]);
        tracker.clear_requests();
        assert!(tracker.requests().is_empty());
        assert_eq!(
            observers(&tracker, Some("team"), "api", &[], 2),
            ["team/web"],
            "clearing the log keeps the tracks"
        );
        assert!(
            Tracker::default().requests().is_empty(),
            "not recording by default"
        );
    }

    #[test]
    fn a_clone_shares_the_tracks() {
        let tracker = Tracker::default();
        let clone = tracker.clone();
        clone
            .track(
                Reference::named("apps", "Deployment", None, "api"),
                &Request::cluster("c"),
                at(0),
            )
            .unwrap();
        assert_eq!(observers(&tracker, None, "api", &[], 0), ["c"]);
    }
}
