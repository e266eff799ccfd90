//! The read access an admission policy's `paramKind` or a binding's `paramRef` needs
//! (`authorizeCreate` / `authorizeUpdate` of `pkg/registry/admissionregistration/*/authz.go`,
//! kube-apiserver 1.36), asked of the authorizer once the object is otherwise valid: a user who
//! is not a superuser must be allowed to `get` every object of the param kind (its resource
//! resolved through what the server serves, else every resource), or to `get` (by name) or
//! `list` (by selector) a binding's params, read from its policy's param kind; else the write
//! is refused with a `Forbidden` error at `spec.paramKind` or `spec.paramRef` naming the user as
//! Go prints a `*user.DefaultInfo`.

use recon_apimachinery::json::Value;

use crate::authz::{Attributes, Target};
use crate::field::FieldError;
use crate::request::call::Call;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::user::UserInfo;
use crate::wire::error::ApiError;
use crate::wire::object::{Object, meta_str};

const GROUP: &str = "admissionregistration.k8s.io";

/// `ParamKind`: its `apiVersion` and `kind`.
#[derive(Debug, Clone, PartialEq, Eq)]
struct ParamKind {
    api_version: String,
    kind: String,
}

impl ParamKind {
    fn of(obj: &Object) -> Option<ParamKind> {
        let p = obj
            .get("spec")?
            .get("paramKind")
            .filter(|p| p.is_object())?;
        let text = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
        Some(ParamKind {
            api_version: text("apiVersion"),
            kind: text("kind"),
        })
    }
}

/// How `%v` prints a `*user.DefaultInfo`: `&{name uid [groups] map[key:[values]]}`, the extra
/// keys sorted.
fn go_user(user: &UserInfo) -> String {
    let mut extra: Vec<&(String, Vec<String>)> = user.extra.iter().collect();
    extra.sort_by(|a, b| a.0.cmp(&b.0));
    let extra: Vec<String> = extra
        .iter()
        .map(|(k, v)| format!("{k}:[{}]", v.join(" ")))
        .collect();
    format!(
        "&{{{} {} [{}] map[{}]}}",
        user.username,
        user.uid,
        user.groups.join(" "),
        extra.join(" ")
    )
}

/// `schema.ParseGroupVersion`: `(group, version)`, `None` when it has more than one slash.
fn parse_group_version(api_version: &str) -> Option<(&str, &str)> {
    if api_version.is_empty() || api_version == "/" {
        return Some(("", ""));
    }
    match api_version.matches('/').count() {
        0 => Some(("", api_version)),
        1 => api_version.split_once('/'),
        _ => None,
    }
}

impl State {
    /// Refuses the write of `new` (over `old` on an update through the main endpoint) when its
    /// user may not read the params it refers to; `Ok` for every other kind and endpoint.
    pub(crate) fn authorize_param_access(
        &self,
        call: &Call<'_>,
        new: &Object,
        old: Option<&Object>,
    ) -> Result<(), ApiError> {
        let rt = &call.rt;
        if rt.custom || rt.group != GROUP || call.path.subresource.is_some() {
            return Ok(());
        }
        // `EscalationAllowed`: a superuser is never checked.
        if call.user.is_privileged() {
            return Ok(());
        }
        let refusal = match rt.kind.as_str() {
            "ValidatingAdmissionPolicy" | "MutatingAdmissionPolicy" => {
                self.policy_refusal(call.user, new, old)
            }
            "ValidatingAdmissionPolicyBinding" => {
                self.binding_refusal(call.user, new, "validatingadmissionpolicies", false)
            }
            "MutatingAdmissionPolicyBinding" => {
                self.binding_refusal(call.user, new, "mutatingadmissionpolicies", true)
            }
            _ => None,
        };
        match refusal {
            None => Ok(()),
            Some((field, why)) => Err(ApiError::invalid(
                &rt.group_kind(),
                meta_str(new, "name"),
                &[FieldError::forbidden(field, why)],
            )),
        }
    }

    /// `(group, version, resource)` to authorize for a param kind: the parsed group and
    /// version, and the resource serving the kind there; `*` for what is not known. `None`
    /// when the apiVersion does not parse, `Some` with resource `*` when nothing serves it.
    fn param_resource(&self, kind: &ParamKind) -> Option<(String, String, Option<String>)> {
        let (group, version) = parse_group_version(&kind.api_version)?;
        let resource = self
            .registry
            .find_kind(group, version, &kind.kind)
            .map(|t| t.plural.clone());
        Some((group.to_owned(), version.to_owned(), resource))
    }

    fn allowed(&self, user: &UserInfo, verb: &str, target: Target) -> bool {
        self.authorize(&Attributes {
            user: user.clone(),
            verb: verb.to_owned(),
            target,
        })
        .allowed
    }

    /// A policy's check (`validatingAdmissionPolicyStrategy.authorize` and its mutating twin):
    /// `get` on every object of the param kind, unless an update keeps the param kind.
    fn policy_refusal(
        &self,
        user: &UserInfo,
        new: &Object,
        old: Option<&Object>,
    ) -> Option<(&'static str, String)> {
        let kind = ParamKind::of(new)?;
        if old.and_then(ParamKind::of).as_ref() == Some(&kind) {
            return None;
        }
        let (group, resource) = match self.param_resource(&kind) {
            Some((group, _, resource)) => (group, resource.unwrap_or_else(|| "*".to_owned())),
            None => ("*".to_owned(), "*".to_owned()),
        };
        let target = Target::Resource {
            namespace: "*".to_owned(),
            group,
            resource,
            subresource: String::new(),
            name: "*".to_owned(),
        };
        if self.allowed(user, "get", target) {
            return None;
        }
        Some((
            "spec.paramKind",
            format!(
                r#"user {} must have "get" permission on all objects of the referenced paramKind (kind={}, apiVersion={})"#,
                go_user(user),
                kind.kind,
                kind.api_version
            ),
        ))
    }

    /// A binding's check (`validatingAdmissionPolicyBindingStrategy.authorize` and its mutating
    /// twin): `get` on the named param or `list` of the selected ones, of the policy's param
    /// kind. An update is checked whenever the binding has a param reference: the strategies
    /// compare references by pointer fields (`parameterNotFoundAction`, `selector`), which two
    /// decoded objects never share. `swapped`: the mutating binding's message, whose verb and
    /// user change places.
    fn binding_refusal(
        &self,
        user: &UserInfo,
        new: &Object,
        policy_plural: &str,
        swapped: bool,
    ) -> Option<(&'static str, String)> {
        let spec = new.get("spec");
        let param_ref = spec
            .and_then(|s| s.get("paramRef"))
            .filter(|p| p.is_object())?;
        let text = |k: &str| {
            param_ref
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned()
        };
        let policy_name = spec
            .and_then(|s| s.get("policyName"))
            .and_then(Value::as_str)
            .unwrap_or("");
        let policy = self
            .registry
            .get(GROUP, policy_plural)
            .and_then(|rt| self.load(&rt, &object_key(None, policy_name)).ok())
            .flatten()
            .map(|(policy, _)| policy);
        let kind = policy.as_ref().and_then(ParamKind::of);
        // What kept the check from narrowing to the param kind's resource.
        enum Widened {
            NoPolicy,
            Unparsed,
            Unresolved,
        }
        let (group, resource, widened) = match (&policy, &kind) {
            (None, _) => ("*".to_owned(), "*".to_owned(), Some(Widened::NoPolicy)),
            (Some(_), None) => ("*".to_owned(), "*".to_owned(), None),
            (Some(_), Some(kind)) => match self.param_resource(kind) {
                None => ("*".to_owned(), "*".to_owned(), Some(Widened::Unparsed)),
                Some((group, _, None)) => (group, "*".to_owned(), Some(Widened::Unresolved)),
                Some((group, _, Some(resource))) => (group, resource, None),
            },
        };
        let name = text("name");
        let verb = if name.is_empty() { "list" } else { "get" };
        let target = Target::Resource {
            namespace: text("namespace"),
            group,
            resource,
            subresource: String::new(),
            name,
        };
        if self.allowed(user, verb, target) {
            return None;
        }
        let who = go_user(user);
        let go_kind = |k: &Option<ParamKind>| {
            k.as_ref().map_or("<nil>".to_owned(), |k| {
                format!("&{{{} {}}}", k.api_version, k.kind)
            })
        };
        let widened_by = |what: String| {
            format!(
                r#"{what} to determine minimum required permissions and user {who} does not have "{verb}" permission for all groups, versions and resources"#
            )
        };
        let why = match widened {
            Some(Widened::NoPolicy) => widened_by(format!("unable to get policy {policy_name}")),
            Some(Widened::Unparsed) => {
                widened_by(format!("unable to parse paramKind {}", go_kind(&kind)))
            }
            Some(Widened::Unresolved) => {
                widened_by(format!("unable to resolve paramKind {}", go_kind(&kind)))
            }
            None if swapped => format!(
                r#"user {verb} does not have "{who}" permission on the object referenced by paramRef"#
            ),
            None => format!(
                r#"user {who} does not have "{verb}" permission on the object referenced by paramRef"#
            ),
        };
        Some(("spec.paramRef", why))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn users_print_as_go_prints_default_info() {
        let user = UserInfo {
            username: "alice".to_owned(),
            uid: String::new(),
            groups: vec!["a".to_owned(), "system:authenticated".to_owned()],
            extra: vec![
                ("z".to_owned(), vec!["1".to_owned()]),
                ("b".to_owned(), vec!["x".to_owned(), "y".to_owned()]),
            ],
        };
        assert_eq!(
            go_user(&user),
            "&{alice  [a system:authenticated] map[b:[x y] z:[1]]}"
        );
    }

    #[test]
    fn group_versions_parse_as_schema_does() {
        assert_eq!(parse_group_version("v1"), Some(("", "v1")));
        assert_eq!(parse_group_version("a.io/v1"), Some(("a.io", "v1")));
        assert_eq!(parse_group_version("a/b/c"), None);
        assert_eq!(parse_group_version(""), Some(("", "")));
    }
}
