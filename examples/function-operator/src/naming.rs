//! The names and labels of a Function's children, and how their failures read as conditions.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use recon_core::Error;

use crate::config_maps::valid_config_key;
use crate::function::{Function, FunctionStatus};
use crate::{DEFAULT_PORT, FUNCTION_LABEL, MANAGED_BY_LABEL, MANAGER};

pub(crate) fn name_of(function: &Function) -> String {
    function.metadata.name.clone().unwrap_or_default()
}

pub(crate) fn env_config_map_name(function: &Function) -> String {
    format!("{}-env", name_of(function))
}

pub(crate) fn config_map_name(function: &Function, key: &str) -> String {
    format!("{}-config-{key}", name_of(function))
}

pub(crate) fn config_volume_name(key: &str) -> String {
    format!("config-{key}")
}

pub(crate) fn port_of(function: &Function) -> i32 {
    function.spec.port.unwrap_or(DEFAULT_PORT)
}

/// What selects a Function's pods.
pub(crate) fn selector_labels(function: &Function) -> BTreeMap<String, String> {
    [(FUNCTION_LABEL.to_owned(), name_of(function))].into()
}

/// The labels of every child.
pub(crate) fn labels(function: &Function) -> BTreeMap<String, String> {
    let mut labels = selector_labels(function);
    labels.insert(MANAGED_BY_LABEL.to_owned(), MANAGER.to_owned());
    labels
}

pub(crate) fn child_meta(name: String, labels: BTreeMap<String, String>) -> ObjectMeta {
    ObjectMeta {
        name: Some(name),
        labels: Some(labels),
        ..ObjectMeta::default()
    }
}

pub(crate) fn has_label(meta: &ObjectMeta, key: &str, value: &str) -> bool {
    meta.labels
        .as_ref()
        .and_then(|l| l.get(key))
        .is_some_and(|v| v == value)
}

/// Copies the desired labels onto `current`, leaving the labels others set.
pub(crate) fn merge_labels(current: &mut ObjectMeta, desired: &ObjectMeta) {
    let Some(wanted) = desired.labels.as_ref().filter(|l| !l.is_empty()) else {
        return;
    };
    let labels = current.labels.get_or_insert_default();
    for (key, value) in wanted {
        if labels.get(key) != Some(value) {
            labels.insert(key.clone(), value.clone());
        }
    }
}

/// The valid keys of `spec.configs`, in order.
pub(crate) fn config_keys(function: &Function) -> impl Iterator<Item = &String> {
    function.spec.configs.keys().filter(|k| valid_config_key(k))
}

/// Why a child could not be written, as a condition reason and message.
pub(crate) fn failure(err: &Error) -> (String, String) {
    match err.as_api_error() {
        Some(status) if status.reason == "AlreadyExists" => (
            "NotOwned".to_owned(),
            format!("{}, and this Function does not own it", status.message),
        ),
        Some(status) if !status.reason.is_empty() => {
            (status.reason.clone(), status.message.clone())
        }
        _ => ("Failed".to_owned(), err.to_string()),
    }
}

pub(crate) fn status_of(function: &mut Function) -> &mut FunctionStatus {
    function.status.get_or_insert_default()
}
