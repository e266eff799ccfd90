//! An in-memory Kubernetes API server that behaves like kube-apiserver, behind a real
//! `kube::Client`.
//!
//! [`ApiServer::new`] builds one and [`ApiServer::client`] hands out `kube::Client`s (built with
//! `kube::Client::new` over a `tower::Service`), so code written against `kube::Api<K>` is
//! tested with the exact requests it sends in production. Every request is recorded
//! ([`ApiServer::requests`]), and reactors ([`ApiServer::on`]) inject failures or concurrent
//! writes.
//!
//! What it models, row by row after kube-apiserver: one global resourceVersion, uid and
//! creationTimestamp, generation rules per type, `generateName`, namespace defaulting,
//! name and metadata validation, optimistic locking, the status subresource, JSON merge and
//! JSON patches, finalizers and `deletionTimestamp`, propagation policies, delete preconditions,
//! label and field selectors, pagination from a consistent snapshot, watch (initial events,
//! selector transitions, bookmarks, streaming lists, the in-stream 410 after
//! [`ApiServer::compact_history`]), server-side apply with `managedFields` on every write,
//! strategic merge patch on built-in kinds, `metav1.Status` errors with the real messages,
//! every built-in resource kube-apiserver serves (with their API defaults, as kube-apiserver's
//! scheme fills them in, and Service addresses and node ports allocated; see the list below)
//! and custom resources from
//! `CustomResourceDefinition`s created
//! through the API, and discovery of them (`/version`, `/api`, `/apis`, the group and
//! group-version documents, aggregated discovery), so `kube::discovery` works against it.
//! Deleting a CRD answers with it `Terminating`; the CRD finalizer then deletes its instances
//! and the CRD on its own, after the response ([`ApiServer::finalize_crds`] runs it at once).
//! Opt-in: strict namespaces (the `NamespaceLifecycle` admission plugin,
//! [`ApiServerBuilder::strict_namespaces`]) and a garbage-collection step that runs what the
//! garbage collector and namespace controller of kube-controller-manager would
//! ([`ApiServer::collect_garbage`]).
//!
//! Custom resources are decoded as apiextensions-apiserver decodes them, with the structural
//! OpenAPI v3 schema of the CRD version a request names: fields the schema does not declare are
//! pruned (unless `x-kubernetes-preserve-unknown-fields`), nulls it does not allow are dropped
//! and `default`s are filled in, on every write and on [`ApiServer::seed`]; reads serve what
//! the storage version's schema makes of the stored object, so changing a CRD's defaults shows
//! on objects written before. The request's `fieldValidation` decides what a dropped field
//! (or a key a JSON body gives twice) costs: a `Warning` (`Warn`, the default; see [`RecordedRequest::warnings`]), a 400 or 422
//! (`Strict`), nothing (`Ignore`).
//!
//! They are then validated on create, update, every kind of patch (the patched or applied
//! result) and `/status` writes (which check `.status` against the status schema), with the
//! real server's 422 messages and causes: `type` (and `x-kubernetes-int-or-string`),
//! `nullable`, `required`, `enum`, `minimum`/`maximum` (exclusive or not), `multipleOf`,
//! `minLength`/`maxLength`, `pattern`, the formats a CRD keeps (`date-time`, `date`, `byte`,
//! `uuid*`, `ipv4`, `ipv6`, `cidr`, `hexcolor`, `k8s-short-name`, `int32`, `float`; other kept
//! formats accept any string for now), `minItems`/`maxItems`, `minProperties`/`maxProperties`,
//! `properties`, `items`, `additionalProperties`, `x-kubernetes-embedded-resource`
//! (`apiVersion` and `kind`), `x-kubernetes-list-type` `set` and `map` duplicates; an update
//! ratchets, as the real server does: errors within a value left unchanged are dropped.
//!
//! Last come the `x-kubernetes-validations` CEL rules, compiled when the CRD is written (a
//! CRD whose rules do not compile, or whose schema is not structural, is refused with the real
//! server's 422): `oldSelf` in transition rules, `messageExpression`, ratcheting.
//!
//! Built-in kinds are decoded into their Go types as kube-apiserver's JSON decoder does, with
//! the OpenAPI v3 schemas recorded from a real kube-apiserver 1.36: a value of the wrong JSON
//! type is a 400 with Go's message (`json: cannot unmarshal string into Go struct field
//! DeploymentSpec.spec.replicas of type int32`), unknown fields are dropped under the same
//! `fieldValidation` rules, and field management follows the list and map rules of the same
//! schemas.
//!
//! Not modelled yet: validation
//! of an embedded resource's `metadata`, conversion webhooks reached over the network (a CRD
//! with `strategy: Webhook` calls the one registered with [`ApiServer::serve_conversion`]),
//! other admission plugins; in decoding built-ins, Go's named types in
//! messages (`string` where Go says `v1.Protocol`).
//!
//! ```
//! # async fn demo() -> Result<(), kube::Error> {
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kube::api::{Api, Patch, PatchParams, PostParams};
//! use recon_fake::ApiServer;
//!
//! let server = ApiServer::new();
//! let api: Api<ConfigMap> = Api::default_namespaced(server.client());
//! let mut cm = ConfigMap::default();
//! cm.metadata.name = Some("settings".into());
//! api.create(&PostParams::default(), &cm).await?;
//!
//! // A stale resourceVersion in a merge patch is an optimistic lock: 409.
//! let stale = serde_json::json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "v"}});
//! let err = api.patch("settings", &PatchParams::default(), &Patch::Merge(&stale)).await.unwrap_err();
//! assert!(matches!(err, kube::Error::Api(s) if s.is_conflict()));
//! # Ok(())
//! # }
//! # tokio::runtime::Runtime::new().unwrap().block_on(demo()).unwrap();
//! ```
#![doc = include_str!("docs/served.md")]

mod api_server;
mod apply;
mod authz;
mod boot;
mod client_service;
mod clock;
mod controllers;
mod field;
mod gotype;
mod handlers;
mod identity;
mod ids;
mod inspect;
mod jsonpatch;
#[cfg(test)]
mod proptests;
pub mod rbac;
mod reactor;
mod reactor_builder;
mod record;
mod registry;
mod request;
mod schema;
mod seed;
mod state;
mod storage;
mod strategic;
mod table;
mod user;
mod wire;

pub use api_server::{ApiServer, ApiServerBuilder};
pub use authz::{Access, AccessTarget};
pub use clock::{Clock, ManualClock, SystemClock};
pub use controllers::report::{GarbageCollection, GcAction, ObjectId, Propagation};
pub use identity::Identity;
pub use reactor::Failure;
pub use reactor_builder::ReactorBuilder;
pub use record::{RecordedRequest, RequestOrigin};
pub use registry::conversion_webhook::{ConversionWebhook, NoAnswer};
pub use request::route::Verb;
pub use seed::SeedError;
pub use wire::error::ApiError;
pub use wire::group::{GroupKind, GroupResource};
pub use wire::status::{Reason, StatusCause, StatusDetails};
