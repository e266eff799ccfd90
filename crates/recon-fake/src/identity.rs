//! Whom a client acts as: [`Identity`], for [`ApiServer::client_as`](crate::ApiServer::client_as).

use http::{HeaderName, HeaderValue};

/// A user, service account or set of groups a client impersonates, as `kubectl --as` does: its
/// requests carry the `Impersonate-User` (and `-Group`, `-Uid`, `-Extra-<key>`) headers, and
/// the server authorizes each of them as kube-apiserver's RBAC authorizer would, from the
/// Roles, ClusterRoles and bindings it stores.
///
/// ```
/// use recon_fake::Identity;
///
/// let operator = Identity::service_account("shop", "operator");
/// assert_eq!(operator.name(), "system:serviceaccount:shop:operator");
/// let alice = Identity::user("alice").group("team-a");
/// assert_eq!(alice.groups(), ["team-a"]);
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    name: String,
    groups: Vec<String>,
    uid: Option<String>,
    extra: Vec<(String, String)>,
}

impl Identity {
    /// A user by name. Unless groups are added, it is in `system:authenticated` only.
    pub fn user(name: impl Into<String>) -> Identity {
        Identity {
            name: name.into(),
            groups: Vec::new(),
            uid: None,
            extra: Vec::new(),
        }
    }

    /// A service account: the user `system:serviceaccount:<namespace>:<name>`, in the groups
    /// `system:serviceaccounts`, `system:serviceaccounts:<namespace>` and
    /// `system:authenticated` (unless groups are added).
    pub fn service_account(namespace: &str, name: &str) -> Identity {
        Identity::user(format!("system:serviceaccount:{namespace}:{name}"))
    }

    /// Adds a group.
    pub fn group(mut self, group: impl Into<String>) -> Identity {
        self.groups.push(group.into());
        self
    }

    /// Sets the uid.
    pub fn uid(mut self, uid: impl Into<String>) -> Identity {
        self.uid = Some(uid.into());
        self
    }

    /// Adds a value of an extra attribute.
    pub fn extra(mut self, key: impl Into<String>, value: impl Into<String>) -> Identity {
        self.extra.push((key.into(), value.into()));
        self
    }

    /// The user name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The groups asked for (the server adds the implied ones).
    pub fn groups(&self) -> &[String] {
        &self.groups
    }

    /// The impersonation headers; a value that is not a valid header value is left out.
    pub(crate) fn headers(&self) -> Vec<(HeaderName, HeaderValue)> {
        let mut headers = Vec::new();
        let mut push = |name: HeaderName, value: &str| {
            if let Ok(value) = HeaderValue::from_str(value) {
                headers.push((name, value));
            }
        };
        push(HeaderName::from_static("impersonate-user"), &self.name);
        for group in &self.groups {
            push(HeaderName::from_static("impersonate-group"), group);
        }
        if let Some(uid) = &self.uid {
            push(HeaderName::from_static("impersonate-uid"), uid);
        }
        for (key, value) in &self.extra {
            // Header names are case-insensitive: a key's other characters are escaped as
            // kube-apiserver unescapes them.
            let escaped: String = key
                .bytes()
                .map(|b| match b {
                    b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                        (b as char).to_string()
                    }
                    other => format!("%{other:02X}"),
                })
                .collect();
            if let Ok(name) =
                HeaderName::from_bytes(format!("impersonate-extra-{escaped}").as_bytes())
            {
                push(name, value);
            }
        }
        headers
    }
}
