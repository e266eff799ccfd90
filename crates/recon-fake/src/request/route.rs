//! Request routing: the URL layout of kube-apiserver (core group under `/api/v1`, named groups
//! under `/apis/{group}/{version}`, namespaced paths under `namespaces/{ns}/`, discovery documents
//! at the top of each), and the verb a method plus path shape stands for.

use std::fmt;

use http::Method;

/// What a request is about, once its path is understood.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Route {
    /// A request on a resource collection, object or subresource.
    Resource(ResourcePath),
    /// A discovery document, or the server's version (R4).
    Discovery(DiscoveryPath),
    /// A path the server does not serve: answered with Go's plain-text `404 page not found`.
    Unknown,
}

/// The documents clients read to learn what the server serves (R4).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum DiscoveryPath {
    /// `/version`: the server's `version.Info`.
    ServerVersion,
    /// `/api`: the core group's versions (`APIVersions`).
    CoreVersions,
    /// `/apis`: the named groups (`APIGroupList`).
    Groups,
    /// `/apis/{group}`: one named group (`APIGroup`).
    Group(String),
    /// `/api/{version}` (group `""`) or `/apis/{group}/{version}`: the resources served at one
    /// group version (`APIResourceList`).
    Resources { group: String, version: String },
}

impl DiscoveryPath {
    /// The documents at `/api` and `/apis`, the only ones with an aggregated form.
    pub(crate) fn is_root(&self) -> bool {
        matches!(self, DiscoveryPath::CoreVersions | DiscoveryPath::Groups)
    }
}

/// The parts of a resource URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ResourcePath {
    /// Empty for the core group.
    pub(crate) group: String,
    pub(crate) version: String,
    /// `Some` when the path is under `namespaces/{ns}/`.
    pub(crate) namespace: Option<String>,
    pub(crate) plural: String,
    pub(crate) name: Option<String>,
    pub(crate) subresource: Option<String>,
}

/// The Kubernetes verb of a request (`RequestInfo.Verb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Verb {
    /// `GET` of one object (or of a non-resource path).
    Get,
    /// `GET` of a collection.
    List,
    /// `GET` of a collection with `watch=true`.
    Watch,
    /// `POST` to a collection.
    Create,
    /// `PUT` of an object.
    Update,
    /// `PATCH` of an object.
    Patch,
    /// `DELETE` of an object.
    Delete,
    /// `DELETE` of a collection.
    DeleteCollection,
    /// Any other method, or a method the path shape does not allow.
    Other,
}

impl Verb {
    /// The lower-case name Kubernetes uses (`deletecollection`, `patch`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
            Verb::Other => "other",
        }
    }

    /// The verb of `method` on a path that does (`has_name`) or does not name one object, as
    /// `RequestInfo` derives it: the path shape only splits GET and DELETE; whether the verb is
    /// served on that shape is the router's call.
    pub(crate) fn of(method: &Method, has_name: bool, watch: bool) -> Verb {
        match (method.as_str(), has_name) {
            ("GET", true) => Verb::Get,
            ("GET", false) if watch => Verb::Watch,
            ("GET", false) => Verb::List,
            ("POST", _) => Verb::Create,
            ("PUT", _) => Verb::Update,
            ("PATCH", _) => Verb::Patch,
            ("DELETE", true) => Verb::Delete,
            ("DELETE", false) => Verb::DeleteCollection,
            _ => Verb::Other,
        }
    }

    /// The verb of `method` on a path that names no resource (`/version`, discovery):
    /// `RequestInfo` takes the lower-cased method, which is `get` for a GET.
    pub(crate) fn of_non_resource(method: &Method) -> Verb {
        if method == Method::GET {
            Verb::Get
        } else {
            Verb::Other
        }
    }
}

impl std::str::FromStr for Verb {
    type Err = String;

    /// A verb of its Kubernetes name (`get`, `list`, `watch`, `create`, `update`, `patch`,
    /// `delete`, `deletecollection`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        [
            Verb::Get,
            Verb::List,
            Verb::Watch,
            Verb::Create,
            Verb::Update,
            Verb::Patch,
            Verb::Delete,
            Verb::DeleteCollection,
        ]
        .into_iter()
        .find(|v| v.as_str() == s)
        .ok_or_else(|| format!("{s:?} is not a verb (get, list, watch, create, update, patch, delete, deletecollection)"))
    }
}

impl fmt::Display for Verb {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Splits `path` (without query) into a [`Route`].
pub(crate) fn parse_path(path: &str) -> Route {
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    if segments.iter().any(|s| s.is_empty()) {
        return Route::Unknown;
    }
    if let Some(document) = discovery_path(&segments) {
        return Route::Discovery(document);
    }
    let (group, version, rest) = match segments.as_slice() {
        ["api", version, rest @ ..] => ("", *version, rest),
        ["apis", group, version, rest @ ..] => (*group, *version, rest),
        _ => return Route::Unknown,
    };
    // `namespaces/{ns}/{plural}...` is a namespaced path; `namespaces/{name}[/status|/finalize]`
    // is the Namespace object itself (no resource is called `status` or `finalize`).
    let (namespace, rest) = match rest {
        ["namespaces", ns, plural, tail @ ..]
            if !is_namespace_subresource(plural) || !tail.is_empty() =>
        {
            (Some(percent_decode(ns)), {
                let mut v = vec![*plural];
                v.extend_from_slice(tail);
                v
            })
        }
        other => (None, other.to_vec()),
    };
    let (plural, name, subresource) = match rest.as_slice() {
        [plural] => (*plural, None, None),
        [plural, name] => (*plural, Some(percent_decode(name)), None),
        [plural, name, sub] => (*plural, Some(percent_decode(name)), Some((*sub).to_owned())),
        _ => return Route::Unknown,
    };
    Route::Resource(ResourcePath {
        group: group.to_owned(),
        version: version.to_owned(),
        namespace,
        plural: plural.to_owned(),
        name,
        subresource,
    })
}

/// The discovery document a path names, if it names one.
fn discovery_path(segments: &[&str]) -> Option<DiscoveryPath> {
    let resources = |group: &str, version: &str| DiscoveryPath::Resources {
        group: group.to_owned(),
        version: version.to_owned(),
    };
    Some(match segments {
        ["version"] => DiscoveryPath::ServerVersion,
        ["api"] => DiscoveryPath::CoreVersions,
        ["api", version] => resources("", version),
        ["apis"] => DiscoveryPath::Groups,
        ["apis", group] => DiscoveryPath::Group((*group).to_owned()),
        ["apis", group, version] => resources(group, version),
        _ => return None,
    })
}

fn is_namespace_subresource(segment: &str) -> bool {
    matches!(segment, "status" | "finalize")
}

/// Decodes `%XX` escapes of a path segment; invalid escapes are kept as written.
fn percent_decode(segment: &str) -> String {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
            if let Some(b) = hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                out.push(b);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The query parameters of a request, parsed the way the apiserver reads them: empty pairs
/// (kube-rs writes `?&a=b`) are skipped, `+` is a space.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    pub(crate) fn parse(query: &str) -> Query {
        Query {
            pairs: form_urlencoded::parse(query.as_bytes())
                .filter(|(k, _)| !k.is_empty())
                .map(|(k, v)| (k.into_owned(), v.into_owned()))
                .collect(),
        }
    }

    /// The first value of `key`.
    pub(crate) fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Every value of `key`, in order.
    pub(crate) fn all(&self, key: &str) -> impl Iterator<Item = &str> {
        self.pairs
            .iter()
            .filter(move |(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// A boolean parameter as Go's `strconv.ParseBool` reads it (`1`, `t`, `true`, ...).
    pub(crate) fn flag(&self, key: &str) -> bool {
        matches!(
            self.get(key),
            Some("1" | "t" | "T" | "true" | "TRUE" | "True")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn resource(path: &str) -> ResourcePath {
        match parse_path(path) {
            Route::Resource(r) => r,
            other => panic!("{path} should route to a resource, not {other:?}"),
        }
    }

    #[test]
    fn core_group_namespaced_object_path() {
        let r = resource("/api/v1/namespaces/ns/configmaps/c");
        assert_eq!(r.group, "");
        assert_eq!(r.version, "v1");
        assert_eq!(r.namespace.as_deref(), Some("ns"));
        assert_eq!(r.plural, "configmaps");
        assert_eq!(r.name.as_deref(), Some("c"));
        assert_eq!(r.subresource, None);
    }

    #[test]
    fn named_group_status_subresource_path() {
        let r = resource("/apis/example.com/v1/namespaces/ns/widgets/w/status");
        assert_eq!(r.group, "example.com");
        assert_eq!(r.subresource.as_deref(), Some("status"));
    }

    #[test]
    fn namespace_object_and_its_status_are_cluster_scoped_paths() {
        let r = resource("/api/v1/namespaces/team");
        assert_eq!(
            (r.namespace, r.plural.as_str(), r.name.as_deref()),
            (None, "namespaces", Some("team"))
        );
        let r = resource("/api/v1/namespaces/team/status");
        assert_eq!(
            (r.namespace, r.name.as_deref(), r.subresource.as_deref()),
            (None, Some("team"), Some("status"))
        );
    }

    #[test]
    fn all_namespaces_collection_path() {
        let r = resource("/apis/example.com/v1/widgets");
        assert_eq!((r.namespace, r.name), (None, None));
    }

    #[test]
    fn unknown_prefixes_and_deep_paths_do_not_route() {
        assert_eq!(parse_path("/healthz"), Route::Unknown);
        assert_eq!(parse_path("/api/v1/namespaces/a/b/c/d/e"), Route::Unknown);
        assert_eq!(parse_path("/api/v1//x"), Route::Unknown);
    }

    #[test]
    fn discovery_documents_route_by_depth() {
        let doc = |path| match parse_path(path) {
            Route::Discovery(d) => d,
            other => panic!("{path} should route to a discovery document, not {other:?}"),
        };
        assert_eq!(doc("/version"), DiscoveryPath::ServerVersion);
        assert_eq!(doc("/api"), DiscoveryPath::CoreVersions);
        assert_eq!(doc("/apis"), DiscoveryPath::Groups);
        assert_eq!(doc("/apis/apps"), DiscoveryPath::Group("apps".into()));
        assert_eq!(
            doc("/api/v1"),
            DiscoveryPath::Resources {
                group: String::new(),
                version: "v1".into()
            }
        );
        assert_eq!(
            doc("/apis/example.com/v1"),
            DiscoveryPath::Resources {
                group: "example.com".into(),
                version: "v1".into()
            }
        );
        // One segment deeper is a resource collection.
        assert!(matches!(
            parse_path("/apis/example.com/v1/widgets"),
            Route::Resource(_)
        ));
        assert_eq!(parse_path("/version/x"), Route::Unknown);
    }

    #[test]
    fn non_resource_gets_are_get() {
        assert_eq!(Verb::of_non_resource(&Method::GET), Verb::Get);
        assert_eq!(Verb::of_non_resource(&Method::POST), Verb::Other);
    }

    #[test]
    fn query_skips_empty_pairs_and_decodes_plus_as_space() {
        let q = Query::parse("&labelSelector=env+in+%28a%2Cb%29&watch=true&");
        assert_eq!(q.get("labelSelector"), Some("env in (a,b)"));
        assert!(q.flag("watch"));
        assert!(!q.flag("dryRun"));
    }

    #[test]
    fn percent_escapes_in_names_are_decoded() {
        assert_eq!(
            resource("/api/v1/namespaces/ns/configmaps/a%3Ab")
                .name
                .as_deref(),
            Some("a:b")
        );
    }
}
