//! What a run saw, in order: the user's actions, every request the controller sent, every
//! watch event it was given, every reconcile it reported, every restart.

use std::fmt;

/// The object a request addresses, read from its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Route {
    /// `v1` or `group/version`; empty for non-resource paths.
    pub(crate) api_version: String,
    pub(crate) resource: String,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

impl Route {
    /// Reads `/api/v1/namespaces/ns/configmaps/name/status` and the like.
    pub(crate) fn parse(path: &str) -> Route {
        let segments: Vec<&str> = path.trim_matches('/').split('/').collect();
        let (api_version, rest) = match segments.as_slice() {
            ["api", version, rest @ ..] => ((*version).to_owned(), rest),
            ["apis", group, version, rest @ ..] => (format!("{group}/{version}"), rest),
            _ => (String::new(), &segments[..0]),
        };
        let (namespace, rest) = match rest {
            ["namespaces", ns, rest @ ..] if !rest.is_empty() => (Some((*ns).to_owned()), rest),
            _ => (None, rest),
        };
        let part = |i: usize| rest.get(i).map(|s| (*s).to_owned());
        Route {
            api_version,
            resource: part(0).unwrap_or_else(|| path.to_owned()),
            namespace,
            name: part(1),
            subresource: part(2),
        }
    }

    /// The object, for messages: `default/web` or `web`.
    pub(crate) fn object(&self, name: Option<&str>) -> Option<String> {
        let name = name.or(self.name.as_deref())?;
        Some(match &self.namespace {
            Some(ns) => format!("{ns}/{name}"),
            None => name.to_owned(),
        })
    }
}

/// A request the controller sent and what became of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Request {
    /// Which controller sent it: 0 for the first, one more after each restart.
    pub(crate) generation: u32,
    /// Its place among the run's requests, from 0.
    pub(crate) index: usize,
    /// Its place among the run's writes, when it is one.
    pub(crate) write: Option<usize>,
    pub(crate) method: String,
    pub(crate) route: Route,
    pub(crate) watch: bool,
    /// A list's or watch's label and field selectors, as sent.
    pub(crate) selectors: String,
    /// The name the answer gave the object (a create's, with `generateName`).
    pub(crate) named: Option<String>,
    /// The answer's status code; 0 when the controller never got one.
    pub(crate) status: u16,
    /// Whether the write changed what the server stores.
    pub(crate) changed: bool,
    /// Whether it was a list the server may serve from its cache (`resourceVersion=0`).
    pub(crate) cached: bool,
    /// What the schedule did to it, if anything.
    pub(crate) perturbed: Option<String>,
}

impl Request {
    /// `POST v1 configmaps default/web-7x2k, answered 201` (no answer: without the code).
    pub(crate) fn answered(&self) -> String {
        match self.status {
            0 => self.words(),
            code => format!("{}, answered {code}", self.words()),
        }
    }

    /// `POST v1 configmaps default/web-7x2k`.
    pub(crate) fn words(&self) -> String {
        let mut out = format!("{} ", self.method);
        if !self.route.api_version.is_empty() {
            out.push_str(&self.route.api_version);
            out.push(' ');
        }
        out.push_str(&self.route.resource);
        if let Some(sub) = &self.route.subresource {
            out.push('/');
            out.push_str(sub);
        }
        if let Some(object) = self.route.object(self.named.as_deref()) {
            out.push(' ');
            out.push_str(&object);
        } else if let Some(ns) = &self.route.namespace {
            out.push_str(&format!(" in {ns}"));
        }
        if self.watch {
            out.push_str(" (watch)");
        }
        out
    }
}

/// A watch event the controller was sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Event {
    pub(crate) generation: u32,
    /// Its place among the run's events, from 0.
    pub(crate) index: usize,
    /// The watched collection (`v1 configmaps`).
    pub(crate) collection: String,
    /// `ADDED`, `MODIFIED` or `DELETED`.
    pub(crate) kind: String,
    /// `namespace/name` of the object.
    pub(crate) object: String,
    pub(crate) revision: u64,
    /// What the schedule did to it, if anything.
    pub(crate) perturbed: Option<String>,
}

/// One line of a run's trace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Entry {
    /// The user acted (numbered from 1).
    Action(usize, String),
    Request(Request),
    Event(Event),
    /// A reconcile ended, with the controller's generation.
    Reconcile(u32, Result<String, String>),
    /// The controller was stopped and a fresh one started.
    Restart(u32, String),
    /// A helper wrote something.
    Helper(String),
    /// The controller's task panicked.
    Panic(u32, String),
}

impl Entry {
    /// The entry as two runs compare it: an Event's name left out, since kube's `Recorder`
    /// (as client-go's) names each Event after the wall clock, `<object>.<nanoseconds in hex>`.
    pub(crate) fn compared(&self) -> Entry {
        match self {
            Entry::Request(r) if r.route.resource == "events" => {
                let mut r = r.clone();
                r.route.name = None;
                r.named = None;
                Entry::Request(r)
            }
            other => other.clone(),
        }
    }
}

/// Whether two traces are the same, as [`Entry::compared`] compares entries.
pub(crate) fn same(a: &[Entry], b: &[Entry]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compared() == y.compared())
}

impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Action(n, words) => write!(f, "user action {n}: {words}"),
            Entry::Request(r) => {
                write!(
                    f,
                    "[{}] request {}: {}",
                    r.generation,
                    r.index + 1,
                    r.words()
                )?;
                match r.status {
                    0 => write!(f, ", no answer")?,
                    code => write!(f, ", answered {code}")?,
                }
                if let Some(what) = &r.perturbed {
                    write!(f, " <- {what}")?;
                }
                Ok(())
            }
            Entry::Event(e) => {
                write!(
                    f,
                    "[{}] event {}: {} {} {} at {}",
                    e.generation,
                    e.index + 1,
                    e.kind,
                    e.collection,
                    e.object,
                    e.revision
                )?;
                if let Some(what) = &e.perturbed {
                    write!(f, " <- {what}")?;
                }
                Ok(())
            }
            Entry::Reconcile(g, Ok(done)) => write!(f, "[{g}] reconciled {done}"),
            Entry::Reconcile(g, Err(e)) => write!(f, "[{g}] reconcile failed: {e}"),
            Entry::Restart(g, why) => write!(f, "[{g}] controller started again ({why})"),
            Entry::Helper(words) => write!(f, "helper: {words}"),
            Entry::Panic(g, message) => write!(f, "[{g}] controller panicked: {message}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_read_group_namespace_name_and_subresource() {
        let r = Route::parse("/apis/apps/v1/namespaces/default/deployments/web/status");
        assert_eq!(r.api_version, "apps/v1");
        assert_eq!(r.resource, "deployments");
        assert_eq!(r.object(None).as_deref(), Some("default/web"));
        assert_eq!(r.subresource.as_deref(), Some("status"));
        let r = Route::parse("/api/v1/namespaces/default");
        assert_eq!(
            (r.resource.as_str(), r.name.as_deref()),
            ("namespaces", Some("default"))
        );
        let r = Route::parse("/api/v1/configmaps");
        assert_eq!(
            (r.resource.as_str(), r.namespace.as_deref()),
            ("configmaps", None)
        );
    }

    fn post(path: &str, named: Option<&str>) -> Entry {
        Entry::Request(Request {
            generation: 0,
            index: 3,
            write: Some(1),
            method: "POST".into(),
            route: Route::parse(path),
            watch: false,
            selectors: String::new(),
            named: named.map(str::to_owned),
            status: 201,
            changed: true,
            cached: false,
            perturbed: None,
        })
    }

    #[test]
    fn traces_are_the_same_whatever_the_wall_clock_named_their_events() {
        let event = |name| post("/apis/events.k8s.io/v1/namespaces/d/events", Some(name));
        assert!(same(
            &[event("web.18ed4b268091a0fe")],
            &[event("web.18ed4b268426662e")]
        ));
        let config_map = |named| post("/api/v1/namespaces/d/configmaps", Some(named));
        assert!(!same(
            &[config_map("web-x7k2q")],
            &[config_map("web-p9z3m")]
        ));
        assert!(!same(&[event("a")], &[]));
    }
}
