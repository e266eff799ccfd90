//! API discovery (R4): `/version`, and the documents that say what the server serves: `/api`
//! (`APIVersions`), `/api/{version}` and `/apis/{group}/{version}` (`APIResourceList`), `/apis`
//! (`APIGroupList`) and `/apis/{group}` (`APIGroup`). `/api` and `/apis` also answer in the
//! aggregated form (`apidiscovery.k8s.io/v2` `APIGroupDiscoveryList`) that
//! `kube::discovery::Discovery::run_aggregated` asks for.
//!
//! Every document is built from the registry when it is asked for: a CRD's resources appear
//! once it is established and go when it is removed, as the apiextensions discovery controller
//! makes them do on a real server.

mod aggregated;
mod catalog;
mod legacy;
mod server_version;
pub(crate) mod version_order;

use crate::request::reply::Reply;
use crate::request::route::DiscoveryPath;
use crate::state::State;
use crate::wire::error::ApiError;
use crate::wire::status::Reason;
use catalog::{Catalog, Group, GroupVersion};
use http::Method;

/// The media type of an aggregated discovery document, which the response declares.
const AGGREGATED_MEDIA_TYPE: &str =
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList";

/// The form of a discovery document a request accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Form {
    /// The `meta/v1` documents (`APIVersions`, `APIGroupList`, ...).
    Legacy,
    /// `apidiscovery.k8s.io/v2` `APIGroupDiscoveryList` (only `/api` and `/apis` have it).
    Aggregated,
}

/// A discovery document the catalog has.
enum Found<'c, 'r> {
    CoreVersions(&'c Group<'r>),
    Groups,
    Group(&'c Group<'r>),
    Resources(&'c Group<'r>, &'c GroupVersion<'r>),
}

impl State {
    /// Answers a discovery request from the registry's current content.
    pub(crate) fn discover(
        &self,
        document: &DiscoveryPath,
        method: &Method,
        accept: &str,
        path: &str,
    ) -> Reply {
        // The `/version` handler writes its JSON whatever the request accepts.
        if *document == DiscoveryPath::ServerVersion {
            return if method == Method::GET {
                Reply::json(200, server_version::document())
            } else {
                ApiError::method_not_routed().into()
            };
        }
        let catalog = Catalog::new(&self.registry);
        let Some(found) = find(&catalog, document) else {
            // Unknown groups and versions fall through like any other unserved path.
            return self.not_found(path);
        };
        // The apiextensions group and version handlers answer any method; the routes of
        // `/api`, `/apis` and the compiled-in groups are GET only.
        let crd_handler = match &found {
            Found::Group(group) | Found::Resources(group, _) => group.is_custom_only(),
            Found::CoreVersions(_) | Found::Groups => false,
        };
        if method != Method::GET && !crd_handler {
            return ApiError::method_not_routed().into();
        }
        match negotiate(accept, document.is_root()) {
            Ok(form) => render(&catalog, &found, form),
            Err(err) => err.into(),
        }
    }
}

fn find<'c, 'r>(catalog: &'c Catalog<'r>, document: &DiscoveryPath) -> Option<Found<'c, 'r>> {
    Some(match document {
        DiscoveryPath::ServerVersion => return None,
        DiscoveryPath::CoreVersions => Found::CoreVersions(catalog.group("")?),
        DiscoveryPath::Groups => Found::Groups,
        // `/apis/` names groups only: the core group is not one of them.
        DiscoveryPath::Group(name) if name.is_empty() => return None,
        DiscoveryPath::Group(name) => Found::Group(catalog.group(name)?),
        DiscoveryPath::Resources { group, version } => {
            let group = catalog.group(group)?;
            Found::Resources(group, group.version(version)?)
        }
    })
}

fn render(catalog: &Catalog<'_>, found: &Found<'_, '_>, form: Form) -> Reply {
    match (found, form) {
        (Found::CoreVersions(core), Form::Aggregated) => {
            Reply::typed(AGGREGATED_MEDIA_TYPE, aggregated::document([*core]))
        }
        (Found::Groups, Form::Aggregated) => Reply::typed(
            AGGREGATED_MEDIA_TYPE,
            aggregated::document(catalog.named_groups()),
        ),
        (Found::CoreVersions(core), _) => Reply::json(200, legacy::api_versions(core)),
        (Found::Groups, _) => Reply::json(200, legacy::group_list(catalog.named_groups())),
        (Found::Group(group), _) => Reply::json(200, legacy::group(group)),
        (Found::Resources(group, version), _) => {
            Reply::json(200, legacy::resource_list(group, version))
        }
    }
}

/// Content negotiation for discovery: the first `Accept` entry the server can write wins. The
/// aggregated form counts only where it exists (`aggregated`), and only as v2 (v2beta1 is no
/// longer served); anything else that is not plain JSON is skipped, and a header with nothing
/// acceptable is 406, as the discovery handlers' `WriteObjectNegotiated` answers.
fn negotiate(accept: &str, aggregated: bool) -> Result<Form, ApiError> {
    if accept.trim().is_empty() {
        return Ok(Form::Legacy);
    }
    for option in accept.split(',') {
        let mut parts = option.split(';').map(str::trim);
        let media = parts.next().unwrap_or("");
        if !matches!(media, "application/json" | "application/*" | "*/*") {
            continue;
        }
        let params: Vec<(&str, &str)> = parts.filter_map(|p| p.split_once('=')).collect();
        let param = |key: &str| params.iter().find(|(k, _)| *k == key).map(|(_, v)| *v);
        match (param("as"), param("g"), param("v")) {
            (None, _, _) => return Ok(Form::Legacy),
            (Some("APIGroupDiscoveryList"), Some("apidiscovery.k8s.io"), Some("v2"))
                if aggregated =>
            {
                return Ok(Form::Aggregated);
            }
            _ => {}
        }
    }
    Err(ApiError::new(
        406,
        Reason::NotAcceptable,
        "only the following media types are accepted: application/json",
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBE_AGGREGATED: &str = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

    #[test]
    fn kube_aggregated_accept_header_selects_the_aggregated_form_at_the_roots_only() {
        assert_eq!(negotiate(KUBE_AGGREGATED, true).unwrap(), Form::Aggregated);
        assert_eq!(negotiate(KUBE_AGGREGATED, false).unwrap(), Form::Legacy);
    }

    #[test]
    fn plain_json_and_no_accept_header_get_the_legacy_documents() {
        for accept in ["", "application/json", "application/json, */*", "*/*"] {
            assert_eq!(negotiate(accept, true).unwrap(), Form::Legacy, "{accept}");
        }
    }

    #[test]
    fn v2beta1_alone_falls_back_to_the_legacy_document() {
        let accept = "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";
        assert_eq!(negotiate(accept, true).unwrap(), Form::Legacy);
    }

    #[test]
    fn nothing_acceptable_is_406() {
        for accept in [
            "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList",
            "application/json;as=Table;g=meta.k8s.io;v=v1",
            "text/plain",
        ] {
            assert_eq!(
                negotiate(accept, false).unwrap_err().code(),
                406,
                "{accept}"
            );
        }
    }
}
