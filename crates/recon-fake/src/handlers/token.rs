//! `serviceaccounts/{name}/token` (a `TokenRequest`, `pkg/registry/core/serviceaccount/storage/
//! token.go`) and `tokenreviews` (`pkg/registry/authentication/tokenreview/storage.go`), with
//! the service account token authenticator behind the review (`pkg/serviceaccount/jwt.go`,
//! `pkg/serviceaccount/claims.go`).
//!
//! Tokens are JWTs with kube-apiserver's claims (`iss`, `sub`, `aud`, `exp`, `iat`, `nbf`, `jti`
//! and the `kubernetes.io` ones naming the namespace, the account and the bound object), signed
//! with HMAC-SHA256 (`HS256`) under a key the process draws at random: the real server signs
//! with its RSA key, which no client checks but through a TokenReview. Times are the server's
//! clock's.

use std::sync::OnceLock;

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jiff::Timestamp;
use recon_apimachinery::go_quote_list;
use recon_apimachinery::gotime::{self, Layout};
use recon_apimachinery::json;
use recon_apimachinery::json::{Map, Value};
use sha2::{Digest, Sha256};

use super::subresource_body::{BodyKind, decode_as, str_at};
use crate::authz::rbac::service_account_username;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::request::call::Call;
use crate::request::reply::Reply;
use crate::state::State;
use crate::storage::stored::object_key;
use crate::wire::error::ApiError;
use crate::wire::group::{GroupKind, GroupResource};
use crate::wire::object::{Object, is_terminating, meta_str, meta_value};

/// The issuer, and the audience tokens get when the request names none: what kube-apiserver
/// is started with (`--service-account-issuer`, whose value is also `--api-audiences`).
pub(crate) const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

const TOKEN_REQUEST: BodyKind = BodyKind {
    group: "authentication.k8s.io",
    versions: &["v1"],
    kind: "TokenRequest",
    internal_package: "authentication",
};

const TOKEN_REVIEW: BodyKind = BodyKind {
    group: "authentication.k8s.io",
    versions: &["v1", "v1beta1"],
    kind: "TokenReview",
    internal_package: "authentication",
};

/// `token.WarnOnlyBoundTokenExpirationSeconds`: the projected volume's default, extended for
/// pod-bound tokens of the server's audience (`--service-account-extend-token-expiration`).
const WARN_ONLY_EXPIRATION: i64 = 3607;
/// `token.ExpirationExtensionSeconds`: one year.
const EXTENDED_EXPIRATION: i64 = 24 * 365 * 60 * 60;
/// What the validator says of a token whose bound object is gone or being deleted.
const INVALIDATED: &str = "service account token has been invalidated";
/// `jwt.DefaultLeeway` of go-jose: one minute either side.
const LEEWAY: i64 = 60;

/// The key tokens are signed with: drawn once per process.
fn signing_key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(|| {
        use std::hash::{BuildHasher, RandomState};
        let mut hasher = Sha256::new();
        for i in 0u64..4 {
            hasher.update(RandomState::new().hash_one(i).to_le_bytes());
        }
        hasher.finalize().into()
    })
}

/// HMAC-SHA256 (RFC 2104) of `message` under `key` (at most one block long).
fn hmac_sha256(key: &[u8], message: &[u8]) -> [u8; 32] {
    const BLOCK: usize = 64;
    let mut block = [0u8; BLOCK];
    block[..key.len().min(BLOCK)].copy_from_slice(&key[..key.len().min(BLOCK)]);
    let inner_pad: Vec<u8> = block.iter().map(|b| b ^ 0x36).collect();
    let outer_pad: Vec<u8> = block.iter().map(|b| b ^ 0x5c).collect();
    let inner = Sha256::new()
        .chain_update(&inner_pad)
        .chain_update(message)
        .finalize();
    Sha256::new()
        .chain_update(&outer_pad)
        .chain_update(inner)
        .finalize()
        .into()
}

/// A compact JWS of `claims`.
fn sign(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(br#"{"alg":"HS256","kid":"recon-fake"}"#);
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    let signed = format!("{header}.{payload}");
    let signature = URL_SAFE_NO_PAD.encode(hmac_sha256(signing_key(), signed.as_bytes()));
    format!("{signed}.{signature}")
}

/// The claims of `token` if this process signed it; `None` for anything else.
fn verify(token: &str) -> Option<Map> {
    let mut parts = token.split('.');
    let (header, payload, signature) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    let decoded: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(header).ok()?).ok()?;
    if decoded.get("alg").and_then(Value::as_str) != Some("HS256") {
        return None;
    }
    let expected = hmac_sha256(signing_key(), format!("{header}.{payload}").as_bytes());
    let given = URL_SAFE_NO_PAD.decode(signature).ok()?;
    // Constant-time comparison: the key is the process's secret.
    if given.len() != expected.len()
        || given
            .iter()
            .zip(expected.iter())
            .fold(0u8, |acc, (a, b)| acc | (a ^ b))
            != 0
    {
        return None;
    }
    match serde_json::from_slice(&URL_SAFE_NO_PAD.decode(payload).ok()?).ok()? {
        Value::Object(claims) => Some(claims),
        _ => None,
    }
}

fn seconds(t: Timestamp) -> i64 {
    t.as_second()
}

impl State {
    /// POST `serviceaccounts/{name}/token`.
    pub(crate) fn request_token(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let mut request = decode_as(call, &TOKEN_REQUEST, &|g, v, k| self.knows(g, v, k))?;
        let name = call.name().to_owned();
        let namespace = call.namespace().unwrap_or("").to_owned();
        let kind = GroupKind::new("authentication.k8s.io", "TokenRequest");
        let body_name = meta_str(&request, "name").to_owned();
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::invalid(
                &kind,
                &name,
                &[FieldError::invalid(
                    "metadata.name",
                    &body_name,
                    "must match the service account name if specified",
                )],
            ));
        }
        let body_namespace = meta_str(&request, "namespace").to_owned();
        if !body_namespace.is_empty() && body_namespace != namespace {
            return Err(ApiError::invalid(
                &kind,
                &name,
                &[FieldError::invalid(
                    "metadata.namespace",
                    &body_namespace,
                    "must match the service account namespace if specified",
                )],
            ));
        }
        let account = self.get_object("serviceaccounts", Some(&namespace), &name)?;
        let mut spec = match request.remove("spec") {
            Some(Value::Object(spec)) => spec,
            _ => Map::new(),
        };
        let audiences = spec
            .get("audiences")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .cloned()
            .unwrap_or_else(|| vec![Value::from(ISSUER)]);
        spec.insert("audiences".into(), Value::Array(audiences.clone().into()));
        // The v1 default.
        let expiration = match spec.get("expirationSeconds") {
            Some(Value::Number(n)) => n.as_i64().unwrap_or(0),
            _ => 3600,
        };
        spec.insert("expirationSeconds".into(), Value::from(expiration));
        // A pointer the response writes as `null` when unset.
        spec.entry("boundObjectRef").or_insert(Value::Null);
        let now = self.clock.now();
        let meta = crate::wire::object::meta_mut(&mut request);
        meta.insert("name".into(), Value::from(name.clone()));
        meta.insert("namespace".into(), Value::from(namespace.clone()));
        meta.insert(
            "creationTimestamp".into(),
            Value::from(gotime::format(Layout::Time, now)),
        );
        meta.insert("uid".into(), Value::from(meta_str(&account, "uid")));
        // `ValidateTokenRequest`.
        let mut errors = Vec::new();
        if expiration < 600 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "spec.expirationSeconds",
                BadValue::Raw(expiration.to_string()),
                "may not specify a duration less than 10 minutes",
            ));
        }
        if expiration > 1 << 32 {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "spec.expirationSeconds",
                BadValue::Raw(expiration.to_string()),
                "may not specify a duration larger than 2^32 seconds",
            ));
        }
        if !errors.is_empty() {
            return Err(ApiError::invalid(&kind, "", &errors));
        }
        let bound = self.bound_object(&spec, &name, &namespace)?;
        let pod_bound = bound.pod.is_some();
        let mut exp = expiration;
        let mut warn_after = None;
        if pod_bound
            && expiration == WARN_ONLY_EXPIRATION
            && audiences.iter().any(|a| a.as_str() == Some(ISSUER))
        {
            warn_after = Some(seconds(now) + expiration);
            exp = EXTENDED_EXPIRATION;
        }
        let mut k8s = json!({
            "namespace": namespace,
            "serviceaccount": {"name": name, "uid": meta_str(&account, "uid")},
        });
        for (claim, object) in [
            ("pod", &bound.pod),
            ("secret", &bound.secret),
            ("node", &bound.node),
        ] {
            if let Some(object) = object {
                k8s[claim] =
                    json!({"name": meta_str(object, "name"), "uid": meta_str(object, "uid")});
            }
        }
        if let Some(warn_after) = warn_after {
            k8s["warnafter"] = Value::from(warn_after);
        }
        let jti = self.ids.uid();
        let claims = json!({
            "aud": audiences,
            "exp": seconds(now) + exp,
            "iat": seconds(now),
            "iss": ISSUER,
            "jti": jti,
            "kubernetes.io": k8s,
            "nbf": seconds(now),
            "sub": service_account_username(&namespace, &name),
        });
        let expires = now
            .checked_add(jiff::SignedDuration::from_secs(expiration))
            .unwrap_or(Timestamp::MAX);
        request.insert("spec".into(), Value::Object(spec));
        request.insert(
            "status".into(),
            json!({"token": sign(&claims), "expirationTimestamp": gotime::format(Layout::Time, expires)}),
        );
        Ok(Reply::json(
            201,
            crate::wire::object::encode_answer(&request),
        ))
    }

    /// The object a TokenRequest's `boundObjectRef` names, checked as `TokenREST.Create` does.
    fn bound_object(&self, spec: &Map, account: &str, namespace: &str) -> Result<Bound, ApiError> {
        let mut bound = Bound::default();
        let Some(reference) = spec.get("boundObjectRef").filter(|r| !r.is_null()) else {
            return Ok(bound);
        };
        let api_version = str_at(Some(reference), &["apiVersion"]);
        let kind = str_at(Some(reference), &["kind"]);
        let name = str_at(Some(reference), &["name"]);
        let group = match api_version.split_once('/') {
            Some((group, _)) => group,
            None => "",
        };
        let uid = match (group, kind) {
            ("", "Pod") => {
                let pod = self.get_object("pods", Some(namespace), name)?;
                let runs_as = str_at(pod.get("spec"), &["serviceAccountName"]);
                if runs_as != account {
                    return Err(ApiError::bad_request(format!(
                        "cannot bind token for serviceaccount \"{account}\" to pod running with different serviceaccount name."
                    )));
                }
                let node = str_at(pod.get("spec"), &["nodeName"]);
                if !node.is_empty() {
                    bound.node = self.get_object("nodes", None, node).ok();
                }
                let uid = meta_str(&pod, "uid").to_owned();
                bound.pod = Some(pod);
                uid
            }
            ("", "Node") => {
                let node = self.get_object("nodes", None, name)?;
                let uid = meta_str(&node, "uid").to_owned();
                bound.node = Some(node);
                uid
            }
            ("", "Secret") => {
                let secret = self.get_object("secrets", Some(namespace), name)?;
                let uid = meta_str(&secret, "uid").to_owned();
                bound.secret = Some(secret);
                uid
            }
            _ => {
                let gvk = match api_version.split_once('/') {
                    Some((g, v)) => format!("{g}/{v}, Kind={kind}"),
                    None => format!("/{api_version}, Kind={kind}"),
                };
                return Err(ApiError::bad_request(format!(
                    "cannot bind token to object of type {gvk}"
                )));
            }
        };
        let want = str_at(Some(reference), &["uid"]);
        if !want.is_empty() && want != uid {
            return Err(ApiError::conflict(
                &GroupResource::new(group, kind),
                name,
                &format!(
                    "the UID in the bound object reference ({want}) does not match the UID in record. The object might have been deleted and then recreated"
                ),
            ));
        }
        Ok(bound)
    }

    /// A stored core object; 404 naming it when missing.
    fn get_object(
        &self,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Object, ApiError> {
        let resource = GroupResource::new("", plural);
        let Some(rt) = self.registry.get("", plural) else {
            return Err(ApiError::not_found(&resource, name));
        };
        match self
            .load(&rt, &object_key(namespace, name))
            .map_err(|e| e.to_api_error())?
        {
            Some((object, _)) => Ok(object),
            None => Err(ApiError::not_found(&resource, name)),
        }
    }

    /// POST `tokenreviews`.
    pub(crate) fn review_token(&mut self, call: &Call<'_>) -> Result<Reply, ApiError> {
        super::decode::check_write_options(call, "CreateOptions")?;
        let mut review = decode_as(call, &TOKEN_REVIEW, &|g, v, k| self.knows(g, v, k))?;
        let spec = review.get("spec").cloned().unwrap_or(Value::Null);
        let token = str_at(Some(&spec), &["token"]).to_owned();
        if token.is_empty() {
            return Err(ApiError::bad_request(
                "token is required for TokenReview in authentication",
            ));
        }
        let requested: Vec<String> = spec
            .get("audiences")
            .and_then(Value::as_array)
            .filter(|a| !a.is_empty())
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_else(|| vec![ISSUER.to_owned()]);
        let status = match self.authenticate(&token, &requested) {
            Ok(Some((user, audiences))) => json!({
                "authenticated": true,
                "user": user,
                "audiences": audiences,
            }),
            Ok(None) => json!({"user": {}, "error": "invalid bearer token"}),
            Err(why) => json!({"user": {}, "error": format!("[invalid bearer token, {why}]")}),
        };
        review.insert("status".into(), status);
        review.entry("metadata").or_insert_with(|| json!({}));
        Ok(Reply::json(
            201,
            crate::wire::object::encode_answer(&review),
        ))
    }

    /// The service account token authenticator: `Ok(None)` for a token this server did not
    /// issue, `Err` for one it did that does not authenticate, else the user and audiences.
    fn authenticate(
        &self,
        token: &str,
        requested: &[String],
    ) -> Result<Option<(Value, Vec<String>)>, String> {
        let Some(claims) = verify(token) else {
            return Ok(None);
        };
        if claims.get("iss").and_then(Value::as_str) != Some(ISSUER) {
            return Ok(None);
        }
        let token_audiences: Vec<String> = match claims.get("aud") {
            Some(Value::String(a)) => vec![a.clone()],
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(Value::as_str)
                .map(str::to_owned)
                .collect(),
            _ => vec![ISSUER.to_owned()],
        };
        let audiences: Vec<String> = token_audiences
            .iter()
            .filter(|a| requested.contains(a))
            .cloned()
            .collect();
        if audiences.is_empty() {
            return Err(format!(
                "token audiences {} is invalid for the target audiences {}",
                go_quote_list(&token_audiences),
                go_quote_list(requested)
            ));
        }
        let now = seconds(self.clock.now());
        let claim = |key: &str| claims.get(key).and_then(Value::as_i64);
        if claim("exp").is_some_and(|exp| now > exp + LEEWAY) {
            return Err("service account token has expired".into());
        }
        if claim("nbf").is_some_and(|nbf| now + LEEWAY < nbf) {
            return Err("service account token is not valid yet".into());
        }
        if claim("iat").is_some_and(|iat| now + LEEWAY < iat) {
            return Err("service account token is issued in the future".into());
        }
        let k8s = claims.get("kubernetes.io");
        let namespace = str_at(k8s, &["namespace"]);
        let name = str_at(k8s, &["serviceaccount", "name"]);
        let uid = str_at(k8s, &["serviceaccount", "uid"]);
        let deleted_before = now - LEEWAY;
        let account = self
            .get_object("serviceaccounts", Some(namespace), name)
            .map_err(|e| e.message().to_owned())?;
        if meta_str(&account, "uid") != uid {
            return Err(format!(
                "service account UID ({}) does not match claim ({uid})",
                meta_str(&account, "uid")
            ));
        }
        if deleted_long_ago(&account, deleted_before) {
            return Err(format!(
                "service account {namespace}/{name} has been deleted"
            ));
        }
        if let Some(secret_ref) = k8s.and_then(|k| k.get("secret")) {
            let secret = self
                .get_object(
                    "secrets",
                    Some(namespace),
                    str_at(Some(secret_ref), &["name"]),
                )
                .map_err(|_| INVALIDATED.to_owned())?;
            let want = str_at(Some(secret_ref), &["uid"]);
            if meta_str(&secret, "uid") != want {
                return Err(format!(
                    "secret UID ({}) does not match service account secret ref claim ({want})",
                    meta_str(&secret, "uid")
                ));
            }
            if deleted_long_ago(&secret, deleted_before) {
                return Err(INVALIDATED.to_owned());
            }
        }
        let mut extra = Map::new();
        let pod_ref = k8s.and_then(|k| k.get("pod"));
        if let Some(pod_ref) = pod_ref {
            let pod_name = str_at(Some(pod_ref), &["name"]);
            let pod = self
                .get_object("pods", Some(namespace), pod_name)
                .map_err(|_| INVALIDATED.to_owned())?;
            if deleted_long_ago(&pod, deleted_before) {
                return Err(INVALIDATED.to_owned());
            }
            let want = str_at(Some(pod_ref), &["uid"]);
            if meta_str(&pod, "uid") != want {
                return Err(format!(
                    "pod UID ({}) does not match service account pod ref claim ({want})",
                    meta_str(&pod, "uid")
                ));
            }
            extra.insert(
                "authentication.kubernetes.io/pod-name".into(),
                json!([pod_name]),
            );
            extra.insert("authentication.kubernetes.io/pod-uid".into(), json!([want]));
        }
        if let Some(node_ref) = k8s.and_then(|k| k.get("node")) {
            let node_name = str_at(Some(node_ref), &["name"]);
            let want = str_at(Some(node_ref), &["uid"]);
            if pod_ref.is_none() {
                let node = self
                    .get_object("nodes", None, node_name)
                    .map_err(|_| INVALIDATED.to_owned())?;
                if deleted_long_ago(&node, deleted_before) {
                    return Err(INVALIDATED.to_owned());
                }
                if meta_str(&node, "uid") != want {
                    return Err(format!(
                        "node UID ({}) does not match service account node ref claim ({want})",
                        meta_str(&node, "uid")
                    ));
                }
            }
            extra.insert(
                "authentication.kubernetes.io/node-name".into(),
                json!([node_name]),
            );
            if !want.is_empty() {
                extra.insert(
                    "authentication.kubernetes.io/node-uid".into(),
                    json!([want]),
                );
            }
        }
        if let Some(jti) = claims.get("jti").and_then(Value::as_str) {
            extra.insert(
                "authentication.kubernetes.io/credential-id".into(),
                json!([format!("JTI={jti}")]),
            );
        }
        let mut user = json!({
            "username": service_account_username(namespace, name),
            "uid": uid,
            "groups": [
                "system:serviceaccounts",
                format!("system:serviceaccounts:{namespace}"),
                "system:authenticated",
            ],
        });
        if !extra.is_empty() {
            user["extra"] = Value::Object(extra);
        }
        Ok(Some((user, audiences)))
    }
}

/// What a TokenRequest's `boundObjectRef` resolved to.
#[derive(Default)]
struct Bound {
    pod: Option<Object>,
    secret: Option<Object>,
    node: Option<Object>,
}

/// Whether `object` was marked deleted before `before` (seconds).
fn deleted_long_ago(object: &Object, before: i64) -> bool {
    is_terminating(object)
        && meta_value(object, "deletionTimestamp")
            .and_then(Value::as_str)
            .and_then(|t| t.parse::<Timestamp>().ok())
            .is_some_and(|t| seconds(t) < before)
}

/// The claims of a token this process minted, for tests: `None` for any other string.
#[cfg(test)]
pub(crate) fn claims_of(token: &str) -> Option<Map> {
    verify(token)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::handlers::subresource_body::int_at;

    #[test]
    fn hmac_matches_rfc_4231_case_2() {
        let mac = hmac_sha256(b"Jefe", b"what do ya want for nothing?");
        let hex: String = mac.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(
            hex,
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
        );
    }

    #[test]
    fn a_signed_token_verifies_and_a_tampered_one_does_not() {
        let token = sign(&json!({"iss": ISSUER, "sub": "x"}));
        assert_eq!(
            claims_of(&token).and_then(|c| c.get("sub").cloned()),
            Some(json!("x"))
        );
        let mut tampered = token.clone();
        tampered.push('A');
        assert!(claims_of(&tampered).is_none());
        assert!(claims_of("not-a-token").is_none());
        assert!(claims_of("a.b.c.d").is_none());
    }

    #[test]
    fn int_at_reads_nested_numbers() {
        assert_eq!(int_at(Some(&json!({"a": {"b": 3}})), &["a", "b"]), 3);
    }
}
