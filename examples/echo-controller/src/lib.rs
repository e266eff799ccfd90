//! A kube-rs controller written the way kube's own guide writes one, with no recon in it: for
//! each `Echo`, a ConfigMap `<name>-echo` holding its message (applied server-side, owned by
//! the `Echo`), the message in the `Echo`'s status, and an event. Its tests run [`reconcile`]
//! unchanged in recon-testing tables (`tests/echo`) and a YAML suite (`tests/suites`).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::{Api, ObjectMeta, Patch, PatchParams};
use kube::runtime::controller::Action;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use kube::{Client, CustomResource, Resource, ResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;

/// What an `Echo` asks for: a message to echo.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
#[kube(
    group = "examples.recon.dev",
    version = "v1",
    kind = "Echo",
    namespaced,
    status = "EchoStatus"
)]
pub struct EchoSpec {
    /// The message the ConfigMap holds.
    pub message: String,
}

/// What the controller did last.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
pub struct EchoStatus {
    /// The message last written to the ConfigMap. Left out when unset, so that a status
    /// patch never sends `null`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub echoed: Option<String>,
}

/// The field manager of the controller's writes.
pub const FIELD_MANAGER: &str = "echo-controller";

/// How long until an echoed `Echo` is looked at again.
pub const RESYNC: Duration = Duration::from_secs(300);

/// What the reconcile function is given besides the object.
pub struct Data {
    /// The client it writes with.
    pub client: Client,
    /// The recorder it publishes events with.
    pub recorder: Recorder,
}

impl Data {
    /// The context for `client`.
    pub fn new(client: Client) -> Data {
        let reporter = Reporter {
            controller: FIELD_MANAGER.to_owned(),
            instance: None,
        };
        Data {
            recorder: Recorder::new(client.clone(), reporter),
            client,
        }
    }
}

/// Why a reconcile failed.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The `Echo` has nothing to echo.
    #[error("Echo {0} has an empty message")]
    EmptyMessage(String),
    /// The `Echo` has no uid yet to own its ConfigMap with.
    #[error("Echo {0} has no uid")]
    NoUid(String),
    /// A request failed.
    #[error(transparent)]
    Kube(#[from] kube::Error),
}

/// The name of an `Echo`'s ConfigMap.
pub fn config_map_name(echo: &Echo) -> String {
    format!("{}-echo", echo.name_any())
}

/// Writes the `Echo`'s ConfigMap and status, as `Controller::run` calls it.
pub async fn reconcile(echo: Arc<Echo>, data: Arc<Data>) -> Result<Action, Error> {
    let (namespace, name) = (echo.namespace().unwrap_or_default(), echo.name_any());
    let reference = echo.object_ref(&());
    let message = echo.spec.message.trim();
    if message.is_empty() {
        let event = Event {
            type_: EventType::Warning,
            reason: "EmptyMessage".to_owned(),
            note: Some("Nothing to echo".to_owned()),
            action: "Echo".to_owned(),
            secondary: None,
        };
        data.recorder.publish(&event, &reference).await?;
        return Err(Error::EmptyMessage(name));
    }
    let owner = echo
        .controller_owner_ref(&())
        .ok_or_else(|| Error::NoUid(name.clone()))?;
    let config_map = ConfigMap {
        metadata: ObjectMeta {
            name: Some(config_map_name(&echo)),
            namespace: Some(namespace.clone()),
            owner_references: Some(vec![owner]),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("message".to_owned(), message.to_owned())])),
        ..ConfigMap::default()
    };
    Api::<ConfigMap>::namespaced(data.client.clone(), &namespace)
        .patch(
            &config_map_name(&echo),
            &PatchParams::apply(FIELD_MANAGER).force(),
            &Patch::Apply(&config_map),
        )
        .await?;
    let echoed = echo.status.as_ref().and_then(|s| s.echoed.as_deref());
    if echoed != Some(message) {
        let status = EchoStatus {
            echoed: Some(message.to_owned()),
        };
        Api::<Echo>::namespaced(data.client.clone(), &namespace)
            .patch_status(
                &name,
                &PatchParams::default(),
                &Patch::Merge(json!({ "status": status })),
            )
            .await?;
        let event = Event {
            type_: EventType::Normal,
            reason: "Echoed".to_owned(),
            note: Some(format!(
                "Echoed {message:?} into ConfigMap {}",
                config_map_name(&echo)
            )),
            action: "Echo".to_owned(),
            secondary: None,
        };
        data.recorder.publish(&event, &reference).await?;
    }
    Ok(Action::requeue(RESYNC))
}

/// What `Controller::run` does after a failed reconcile: try again in half a minute.
pub fn error_policy(_echo: Arc<Echo>, _error: &Error, _data: Arc<Data>) -> Action {
    Action::requeue(Duration::from_secs(30))
}
