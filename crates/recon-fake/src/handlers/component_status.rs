//! `componentstatuses` (`pkg/registry/core/componentstatus/rest.go`): the health of the control
//! plane's components, probed on every read and stored nowhere. The in-memory server runs no
//! scheduler and no controller manager, so they answer as kube-apiserver does when they are not
//! running; its storage is healthy. Tables are printed by `printComponentStatus`.

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use crate::request::call::Call;
use crate::request::negotiate::{Format, negotiate};
use crate::request::reply::Reply;
use crate::request::route::Verb;
use crate::state::State;
use crate::table::ListMeta;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;
use crate::wire::status::{Reason, StatusDetails};

/// Each component with its health check's condition, in the order kube-apiserver lists them.
fn components() -> [(&'static str, &'static str, String); 3] {
    let refused = |port: u16| {
        format!(
            "Get \"https://127.0.0.1:{port}/healthz\": dial tcp 127.0.0.1:{port}: connect: connection refused"
        )
    };
    [
        ("scheduler", "False", refused(10259)),
        ("controller-manager", "False", refused(10257)),
        ("etcd-0", "True", "ok".to_owned()),
    ]
}

fn component_status(name: &str, status: &str, message: &str) -> Value {
    json!({"metadata": {"name": name},
        "conditions": [{"type": "Healthy", "status": status, "message": message}]})
}

impl State {
    /// GET of one component or of the list; a watch is refused.
    pub(crate) fn component_statuses(
        &mut self,
        call: &Call<'_>,
        verb: Verb,
    ) -> Result<Reply, ApiError> {
        let typed = |mut v: Value, kind: &str| {
            v["kind"] = json!(kind);
            v["apiVersion"] = json!("v1");
            serde_json::to_vec(&v).unwrap_or_default()
        };
        match verb {
            Verb::List => {
                let items: Vec<Value> = components()
                    .iter()
                    .map(|(name, status, message)| component_status(name, status, message))
                    .collect();
                if let Ok(Format::Table(version)) = negotiate(call.accept, true) {
                    let items: Vec<Vec<u8>> = items
                        .into_iter()
                        .map(|item| typed(item, "ComponentStatus"))
                        .collect();
                    let table = call.list_table(version, &items, &[], &ListMeta::default())?;
                    return Ok(Reply::json(200, table));
                }
                let list = json!({"metadata": {}, "items": items});
                Ok(Reply::json(200, typed(list, "ComponentStatusList")))
            }
            Verb::Get => {
                let name = call.name();
                components()
                    .iter()
                    .find(|(n, _, _)| *n == name)
                    .map(|(n, status, message)| {
                        let object = typed(component_status(n, status, message), "ComponentStatus");
                        match negotiate(call.accept, false) {
                            Ok(Format::Table(version)) => call.table(version, &object, None),
                            _ => Ok(object),
                        }
                    })
                    .ok_or_else(|| {
                        // The REST storage names the resource by its singular.
                        ApiError::not_found(&GroupResource::new("", "componentstatus"), name)
                    })?
                    .map(|body| Reply::json(200, body))
            }
            _ => Err(ApiError::new(
                405,
                Reason::MethodNotAllowed,
                "watch is not supported on resources of kind \"componentstatuses\"",
            )
            .with_details(StatusDetails {
                kind: "componentstatuses".to_owned(),
                ..StatusDetails::default()
            })),
        }
    }
}
