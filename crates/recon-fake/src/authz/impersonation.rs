//! Impersonation (`apiserver/pkg/endpoints/filters/impersonation/`): a request with an
//! `Impersonate-User` header (and optionally `Impersonate-Group`, `Impersonate-Uid`,
//! `Impersonate-Extra-<key>`) acts as that user. An impersonated service account gets its
//! groups unless groups are asked for; every impersonated user but `system:anonymous` is in
//! `system:authenticated`.

use http::HeaderMap;

use recon_apimachinery::go_quote;

use crate::user::UserInfo;
use crate::wire::error::ApiError;

const USER_HEADER: &str = "impersonate-user";
const GROUP_HEADER: &str = "impersonate-group";
const UID_HEADER: &str = "impersonate-uid";
const EXTRA_PREFIX: &str = "impersonate-extra-";

/// The impersonation headers of a request.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Impersonation {
    user: String,
    groups: Vec<String>,
    uid: String,
    /// `(key, value)` for each value of each `Impersonate-Extra-<key>` header, the key
    /// lower-cased and unescaped.
    extra: Vec<(String, String)>,
}

impl Impersonation {
    /// Reads the headers (Go's `Header.Get` takes the first value of a header).
    pub(crate) fn from_headers(headers: &HeaderMap) -> Impersonation {
        let text = |v: &http::HeaderValue| String::from_utf8_lossy(v.as_bytes()).into_owned();
        let first = |name: &str| headers.get(name).map(text).unwrap_or_default();
        let mut extra = Vec::new();
        let mut names: Vec<&str> = headers
            .keys()
            .map(http::HeaderName::as_str)
            .filter(|name| name.starts_with(EXTRA_PREFIX))
            .collect();
        names.sort_unstable();
        names.dedup();
        for name in names {
            let key = unescape(&name[EXTRA_PREFIX.len()..]);
            for value in headers.get_all(name) {
                extra.push((key.clone(), text(value)));
            }
        }
        Impersonation {
            user: first(USER_HEADER),
            groups: headers.get_all(GROUP_HEADER).iter().map(text).collect(),
            uid: first(UID_HEADER),
            extra,
        }
    }

    /// Whether the request asks to impersonate anyone.
    pub(crate) fn is_requested(&self) -> bool {
        !(self.user.is_empty()
            && self.groups.is_empty()
            && self.uid.is_empty()
            && self.extra.is_empty())
    }
}

/// `url.PathUnescape` of a header's key, the key as it is when it does not unescape.
fn unescape(key: &str) -> String {
    let bytes = key.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = key
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok());
            match hex {
                Some(byte) => {
                    out.push(byte);
                    i += 3;
                    continue;
                }
                None => return key.to_owned(),
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| key.to_owned())
}

/// `serviceaccount.SplitUsername`: the namespace of a service account's user name.
fn service_account_namespace(username: &str) -> Option<&str> {
    let rest = username.strip_prefix("system:serviceaccount:")?;
    let (namespace, name) = rest.split_once(':')?;
    let valid = |s: &str| {
        !s.is_empty() && recon_apimachinery::names::dns1123_subdomain_name_errors(s).is_empty()
    };
    (!name.contains(':') && valid(namespace) && valid(name)).then_some(namespace)
}

/// Go's `%#v` of a list of strings: `[]string{"a", "b"}`, or `[]string(nil)` when empty.
fn go_strings(values: &[String]) -> String {
    if values.is_empty() {
        return "[]string(nil)".to_owned();
    }
    let quoted: Vec<String> = values.iter().map(|v| go_quote(v)).collect();
    format!("[]string{{{}}}", quoted.join(", "))
}

impl Impersonation {
    /// The extras by key, keys sorted (as Go prints a map), values in header order.
    fn extra_by_key(&self) -> Vec<(String, Vec<String>)> {
        let mut extra: Vec<(String, Vec<String>)> = Vec::new();
        for (key, value) in &self.extra {
            match extra.iter_mut().find(|(k, _)| k == key) {
                Some((_, values)) => values.push(value.clone()),
                None => extra.push((key.clone(), vec![value.clone()])),
            }
        }
        extra.sort_by(|a, b| a.0.cmp(&b.0));
        extra
    }

    /// Go's `%#v` of the wanted `*user.DefaultInfo`.
    fn go_value(&self) -> String {
        let extra = self.extra_by_key();
        let extra = if extra.is_empty() {
            "map[string][]string(nil)".to_owned()
        } else {
            let entries: Vec<String> = extra
                .iter()
                .map(|(k, v)| format!("{}:{}", go_quote(k), go_strings(v)))
                .collect();
            format!("map[string][]string{{{}}}", entries.join(", "))
        };
        format!(
            "&user.DefaultInfo{{Name:{}, UID:{}, Groups:{}, Extra:{extra}}}",
            go_quote(&self.user),
            go_quote(&self.uid),
            go_strings(&self.groups)
        )
    }
}

/// The user a request acts as: `requester`, or whom it impersonates; a 400 for a uid, groups or
/// extras without a user name (`processImpersonationHeaders` of
/// `constrained_impersonation.go`, which kube-apiserver 1.36 runs). Every client of the
/// in-memory server is its administrator, whom every impersonation check allows, so none is
/// made here.
pub(crate) fn impersonate(
    requester: &UserInfo,
    asked: &Impersonation,
) -> Result<UserInfo, ApiError> {
    if asked.user.is_empty() {
        if asked.is_requested() {
            return Err(ApiError::bad_request(format!(
                "requested {} without impersonating a user name",
                asked.go_value()
            )));
        }
        return Ok(requester.clone());
    }
    let mut groups = asked.groups.clone();
    if let Some(namespace) = service_account_namespace(&asked.user)
        && asked.groups.is_empty()
    {
        groups = vec![
            "system:serviceaccounts".to_owned(),
            format!("system:serviceaccounts:{namespace}"),
        ];
    }
    let (everyone, already) = if asked.user == "system:anonymous" {
        ("system:unauthenticated", &["system:unauthenticated"][..])
    } else {
        (
            "system:authenticated",
            &["system:authenticated", "system:unauthenticated"][..],
        )
    };
    if !groups.iter().any(|g| already.contains(&g.as_str())) {
        groups.push(everyone.to_owned());
    }
    Ok(UserInfo {
        username: asked.user.clone(),
        uid: asked.uid.clone(),
        groups,
        extra: asked.extra_by_key(),
    })
}
