//! Who a request comes from, as kube-apiserver's authenticators tell its handlers
//! (`user.Info`): the name, uid, groups and extra attributes strategies copy into objects (a
//! CertificateSigningRequest's requester) and the review APIs report.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

/// `user.Info` of an authenticated request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UserInfo {
    pub(crate) username: String,
    pub(crate) uid: String,
    pub(crate) groups: Vec<String>,
    /// `extra`, each key with its values.
    pub(crate) extra: Vec<(String, Vec<String>)>,
}

/// The fingerprint the in-memory server's administrator credential stands for: it has no
/// certificate, so a fixed one (kube-apiserver names a client certificate by the SHA-256 of
/// its DER bytes).
const ADMIN_CERTIFICATE_SHA256: &str =
    "2c6b7a3f0d5e8c1b9a4f6e2d7c0b5a8f3e1d9c6b4a2f7e5d0c8b3a6f1e4d9c27";

/// The administrator every request is made by unless it impersonates someone.
pub(crate) static ADMIN: std::sync::LazyLock<UserInfo> = std::sync::LazyLock::new(UserInfo::admin);

impl UserInfo {
    /// Every client of the in-memory server: a cluster administrator authenticated by a client
    /// certificate, as `kubectl` is on a cluster it created (user `admin`, group
    /// `system:masters`).
    pub(crate) fn admin() -> UserInfo {
        UserInfo {
            username: "admin".to_owned(),
            uid: String::new(),
            groups: vec![
                "system:masters".to_owned(),
                "system:authenticated".to_owned(),
            ],
            extra: vec![(
                "authentication.kubernetes.io/credential-id".to_owned(),
                vec![format!("X509SHA256={ADMIN_CERTIFICATE_SHA256}")],
            )],
        }
    }

    /// `extra` as a JSON object of lists, or `None` when there is none.
    pub(crate) fn extra_json(&self) -> Option<Value> {
        (!self.extra.is_empty()).then(|| {
            Value::Object(
                self.extra
                    .iter()
                    .map(|(k, v)| (k.clone(), json!(v)))
                    .collect(),
            )
        })
    }
}
