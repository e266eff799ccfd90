//! The Function's Service, in front of its pods.

use k8s_openapi::api::core::v1::{Service, ServicePort, ServiceSpec};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use recon_core::{ChildReconciler, Context, Error, UpdatingObjectManager};

use crate::function::Function;
use crate::naming::{
    child_meta, failure, labels, merge_labels, name_of, port_of, selector_labels, status_of,
};
use crate::{CONDITIONS, SERVICE_PORT};

pub(crate) fn desired_service(function: &Function) -> Service {
    Service {
        metadata: child_meta(name_of(function), labels(function)),
        spec: Some(ServiceSpec {
            selector: Some(selector_labels(function)),
            ports: Some(vec![ServicePort {
                name: Some("http".to_owned()),
                port: SERVICE_PORT,
                target_port: Some(IntOrString::Int(port_of(function))),
                protocol: Some("TCP".to_owned()),
                ..ServicePort::default()
            }]),
            ..ServiceSpec::default()
        }),
        ..Service::default()
    }
}

/// Copies what the operator owns of a Service: its labels, selector and ports. What the API
/// server allocates (`clusterIP`, ...) stays as stored.
pub(crate) fn merge_service(current: &mut Service, desired: &Service) {
    merge_labels(&mut current.metadata, &desired.metadata);
    let Some(want) = desired.spec.as_ref() else {
        return;
    };
    let spec = current.spec.get_or_insert_default();
    spec.selector = want.selector.clone();
    spec.ports = want.ports.clone();
}

pub(crate) fn service() -> ChildReconciler<Function, Service> {
    ChildReconciler::new(
        UpdatingObjectManager::new(merge_service),
        |_ctx, function: &Function| Ok(Some(desired_service(function))),
        reflect_service,
    )
    .named("Service")
}

pub(crate) fn reflect_service(
    ctx: &Context,
    function: &mut Function,
    child: Result<Option<&Service>, Error>,
) -> Result<(), Error> {
    let namespace = function.metadata.namespace.clone().unwrap_or_default();
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    match child {
        Ok(Some(service)) => {
            conditions.mark_true("ServiceReady", "ServiceReady", "");
            let name = service.metadata.name.clone().unwrap_or_default();
            status.url = Some(format!("http://{name}.{namespace}.svc.cluster.local"));
            status.service_name = Some(name);
        }
        Ok(None) => {
            conditions.mark_unknown("ServiceReady", "NoService", "the Service does not exist");
            status.service_name = None;
            status.url = None;
        }
        Err(err) => {
            let (reason, message) = failure(&err);
            conditions.mark_false("ServiceReady", &reason, &message);
            status.service_name = None;
            status.url = None;
        }
    }
    Ok(())
}
