//! Admission webhooks: the sub-reconcilers of a controller, run on the objects kube-apiserver
//! asks a webhook to admit.
//!
//! - [`AdmissionWebhookAdapter`] runs a tree on each request's object and answers allowed,
//!   refused, or allowed with a JSON Patch of what the tree changed.
//! - [`Admission`] is the exchange the tree reaches through
//!   [`Context::admission`](crate::Context::admission); [`AdmissionDenied`] is the error that
//!   refuses a request with a status of its own.
//! - [`respond`] turns an HTTP request into the answer, for any HTTP server; with the
//!   `webhook-server` feature, `WebhookServer` is an HTTPS server for one or more webhooks.
//! - The wire types ([`AdmissionReview`], [`AdmissionRequest`], [`AdmissionResponse`]) write
//!   the patch as kube-apiserver reads it: base64, with `patchType: JSONPatch`.

mod adapter;
mod denied;
mod exchange;
mod handler;
#[cfg(test)]
mod proptests;
mod review;
#[cfg(feature = "webhook-server")]
mod server;
#[cfg(feature = "webhook-server")]
mod tls;

pub use adapter::AdmissionWebhookAdapter;
pub use denied::AdmissionDenied;
pub use exchange::Admission;
pub use handler::{AdmissionHandler, respond};
pub use review::{
    ADMISSION_API_VERSION, AdmissionKind, AdmissionRequest, AdmissionResource, AdmissionResponse,
    AdmissionReview, AdmissionStatus, Operation,
};
#[cfg(feature = "webhook-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "webhook-server")))]
pub use server::{
    DEFAULT_BODY_READ_TIMEOUT, DEFAULT_MAX_BODY_SIZE, DEFAULT_SHUTDOWN_GRACE_PERIOD, HEALTH_PATH,
    RunningWebhookServer, WebhookServer, WebhookServerError,
};
#[cfg(feature = "webhook-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "webhook-server")))]
pub use tls::{
    CertificateFiles, PemSource, SelfSignedCertificate, TLS_CERT_FILE, TLS_KEY_FILE, TlsConfig,
    TlsError,
};
