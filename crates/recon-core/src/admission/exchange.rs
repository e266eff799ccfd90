//! The admission request being handled and the response being built, as the reconcile context
//! carries them to every step of the tree.

use std::sync::{Mutex, MutexGuard, PoisonError};

use super::review::{AdmissionRequest, AdmissionResponse, AdmissionStatus};

/// One admission exchange: the request, the HTTP request that carried it, and the response the
/// adapter will send. Sub-reconcilers reach it with
/// [`Context::admission`](crate::Context::admission), to read who asks and what, or to shape
/// the answer (warnings, audit annotations, a refusal with a status of their choosing).
///
/// ```
/// use recon_core::admission::{Admission, AdmissionRequest, AdmissionResponse};
/// # use k8s_openapi::api::core::v1::ConfigMap;
/// # let cm: ConfigMap = serde_json::from_value(serde_json::json!({"metadata": {"name": "c"}})).unwrap();
/// let admission = Admission::new(AdmissionRequest::create(&cm).with_uid("u-1"));
/// admission.update_response(|response| response.warnings.push("deprecated field".into()));
/// assert_eq!(admission.response().warnings, ["deprecated field"]);
/// assert!(admission.response().allowed, "admitted unless a step says otherwise");
/// ```
#[derive(Debug)]
pub struct Admission {
    request: AdmissionRequest,
    http_request: http::Request<()>,
    response: Mutex<AdmissionResponse>,
}

impl Admission {
    /// The exchange for `request`, with an allowing response, as if posted to `/`.
    pub fn new(request: AdmissionRequest) -> Self {
        let http_request = http::Request::post("/")
            .body(())
            .unwrap_or_else(|_| http::Request::new(()));
        Self::with_http_request(request, http_request)
    }

    /// The exchange for `request`, carried by `http_request` (its method, URI and headers).
    pub fn with_http_request(request: AdmissionRequest, http_request: http::Request<()>) -> Self {
        let response = AdmissionResponse::allow(request.uid.clone());
        Admission {
            request,
            http_request,
            response: Mutex::new(response),
        }
    }

    /// The admission request.
    pub fn request(&self) -> &AdmissionRequest {
        &self.request
    }

    /// The HTTP request that carried it: its path tells which webhook was called.
    pub fn http_request(&self) -> &http::Request<()> {
        &self.http_request
    }

    /// The response as it stands.
    pub fn response(&self) -> AdmissionResponse {
        self.lock().clone()
    }

    /// Changes the response. `change` must not reach this exchange again (through the
    /// context, say): the response is locked while it runs.
    pub fn update_response<T>(&self, change: impl FnOnce(&mut AdmissionResponse) -> T) -> T {
        change(&mut self.lock())
    }

    /// Refuses the request with `status`, unless a refusal is already set.
    pub(crate) fn deny_unless_denied(&self, status: AdmissionStatus) {
        let mut response = self.lock();
        response.allowed = false;
        if response.status.is_none() {
            response.status = Some(status);
        }
    }

    pub(crate) fn into_response(self) -> AdmissionResponse {
        self.response
            .into_inner()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// A step that panicked while changing the response leaves it as it was changed so far.
    fn lock(&self) -> MutexGuard<'_, AdmissionResponse> {
        self.response.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
