//! What a request asks to do, read from its method, path and query as kube-apiserver's
//! `RequestInfoFactory.NewRequestInfo` reads them (`apiserver/pkg/endpoints/request/
//! requestinfo.go`): a request under `/api` or `/apis` on a resource (its verb from the method,
//! `list`, `watch` or `deletecollection` on a collection, the namespace, resource, name and
//! subresource from the path), or any other path with the method as its verb.

use recon_apimachinery::names::path_segment_errors;
use recon_apimachinery::selector::{FieldOp, FieldSelector};

use super::{Attributes, Target};
use crate::request::route::Query;
use crate::user::UserInfo;

/// The attributes of a request by `user`.
pub(crate) fn attributes(
    user: UserInfo,
    method: &http::Method,
    path: &str,
    query: &Query,
) -> Attributes {
    let non_resource = |user: UserInfo| Attributes {
        user,
        verb: method.as_str().to_lowercase(),
        target: Target::NonResource {
            path: path.to_owned(),
        },
    };
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let mut rest = parts.as_slice();
    let group = match rest {
        ["api", _, _, ..] => {
            rest = &rest[1..];
            ""
        }
        ["apis", group, _, _, ..] => {
            rest = &rest[2..];
            group
        }
        _ => return non_resource(user),
    };
    // The version.
    rest = &rest[1..];
    let mut verb = match *method {
        http::Method::POST => "create",
        http::Method::GET | http::Method::HEAD => "get",
        http::Method::PUT => "update",
        http::Method::PATCH => "patch",
        http::Method::DELETE => "delete",
        _ => "",
    };
    // The verbs a path may start with (`/watch/`, `/proxy/`).
    if let [special @ ("watch" | "proxy"), tail @ ..] = rest {
        if tail.is_empty() {
            // kube-apiserver answers that it cannot tell the kind: nothing to authorize more.
            return non_resource(user);
        }
        verb = special;
        rest = tail;
    }
    let mut namespace = "";
    if let ["namespaces", ns, tail @ ..] = rest {
        namespace = ns;
        if !tail.is_empty() && !matches!(tail[0], "status" | "finalize") {
            rest = tail;
        }
    }
    let (resource, mut name, subresource) = match rest {
        [resource] => (*resource, "", ""),
        [resource, name] => (*resource, *name, ""),
        [resource, name, subresource, ..] if verb != "proxy" => (*resource, *name, *subresource),
        [resource, name, ..] => (*resource, *name, ""),
        [] => ("", "", ""),
    };
    let mut field_name = String::new();
    if name.is_empty() && verb == "get" {
        verb = if query.flag("watch") { "watch" } else { "list" };
        // A list or watch of one object by name is authorized as for that name.
        if let Some(selected) = query.get("fieldSelector").and_then(selected_name) {
            field_name = selected;
        }
    }
    if !field_name.is_empty() {
        name = &field_name;
    }
    if name.is_empty() && verb == "delete" {
        verb = "deletecollection";
    }
    Attributes {
        user,
        verb: verb.to_owned(),
        target: Target::Resource {
            namespace: namespace.to_owned(),
            group: group.to_owned(),
            resource: resource.to_owned(),
            subresource: subresource.to_owned(),
            name: name.to_owned(),
        },
    }
}

/// The name a field selector requires exactly (`RequiresExactMatch("metadata.name")`: its first
/// `metadata.name=` term), when that name is a valid path segment.
fn selected_name(selector: &str) -> Option<String> {
    let parsed = FieldSelector::parse(selector).ok()?;
    let name = parsed
        .requirements()
        .iter()
        .find(|r| r.field == "metadata.name" && r.op == FieldOp::Equals)?
        .value
        .clone();
    path_segment_errors(&name, false).is_empty().then_some(name)
}
