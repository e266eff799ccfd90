//! The Function's ConfigMaps: one holding its environment, and one per key of `spec.configs`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use recon_core::{
    ChildReconciler, ChildSetReconciler, ChildSetResult, Context, Error, UpdatingObjectManager,
};

use crate::function::Function;
use crate::naming::{
    child_meta, config_keys, config_map_name, env_config_map_name, failure, has_label, labels,
    merge_labels, status_of,
};
use crate::{COMPONENT_LABEL, CONDITIONS, CONFIG_KEY_LABEL};

/// Whether `key` may name a config of `spec.configs`: a DNS label (lowercase letters, digits
/// and `-`, starting and ending with a letter or digit) of at most 56 characters, so that its
/// volume name `config-<key>` is a DNS label too.
///
/// ```
/// use function_operator::valid_config_key;
///
/// assert!(valid_config_key("nginx"));
/// assert!(!valid_config_key("Nginx.conf"));
/// ```
pub fn valid_config_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 56
        && key
            .chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !key.starts_with('-')
        && !key.ends_with('-')
}

pub(crate) fn merge_config_map(current: &mut ConfigMap, desired: &ConfigMap) {
    merge_labels(&mut current.metadata, &desired.metadata);
    current.data = desired.data.clone();
}

pub(crate) fn desired_env_config_map(function: &Function) -> ConfigMap {
    let mut labels = labels(function);
    labels.insert(COMPONENT_LABEL.to_owned(), "env".to_owned());
    ConfigMap {
        metadata: child_meta(env_config_map_name(function), labels),
        data: Some(function.spec.env.clone()).filter(|d| !d.is_empty()),
        ..ConfigMap::default()
    }
}

pub(crate) fn env_config_map() -> ChildReconciler<Function, ConfigMap> {
    ChildReconciler::new(
        UpdatingObjectManager::new(merge_config_map),
        |_ctx, function: &Function| Ok(Some(desired_env_config_map(function))),
        reflect_env_config_map,
    )
    .named("EnvConfigMap")
    // The Function owns the config ConfigMaps too: the env ConfigMap is the one marked `env`.
    .our_child(|_, child| has_label(&child.metadata, COMPONENT_LABEL, "env"))
}

pub(crate) fn reflect_env_config_map(
    ctx: &Context,
    function: &mut Function,
    child: Result<Option<&ConfigMap>, Error>,
) -> Result<(), Error> {
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    match child {
        Ok(Some(config_map)) => {
            conditions.mark_true("EnvReady", "ConfigMapReady", "");
            status.env_config_map_name = config_map.metadata.name.clone();
        }
        Ok(None) => {
            conditions.mark_unknown(
                "EnvReady",
                "NoConfigMap",
                "the env ConfigMap does not exist",
            );
            status.env_config_map_name = None;
        }
        Err(err) => {
            let (reason, message) = failure(&err);
            conditions.mark_false("EnvReady", &reason, &message);
            status.env_config_map_name = None;
        }
    }
    Ok(())
}

pub(crate) fn desired_config_maps(function: &Function) -> Vec<ConfigMap> {
    config_keys(function)
        .map(|key| {
            let mut labels = labels(function);
            labels.insert(COMPONENT_LABEL.to_owned(), "config".to_owned());
            labels.insert(CONFIG_KEY_LABEL.to_owned(), key.clone());
            let files = function.spec.configs.get(key).cloned().unwrap_or_default();
            ConfigMap {
                metadata: child_meta(config_map_name(function, key), labels),
                data: Some(files).filter(|d| !d.is_empty()),
                ..ConfigMap::default()
            }
        })
        .collect()
}

pub(crate) fn config_key_of(config_map: &ConfigMap) -> String {
    config_map
        .metadata
        .labels
        .as_ref()
        .and_then(|l| l.get(CONFIG_KEY_LABEL))
        .cloned()
        .unwrap_or_default()
}

pub(crate) fn config_maps() -> ChildSetReconciler<Function, ConfigMap> {
    ChildSetReconciler::new(
        UpdatingObjectManager::new(merge_config_map),
        |_ctx, function: &Function| Ok(desired_config_maps(function)),
        config_key_of,
        reflect_config_maps,
    )
    .named("ConfigMaps")
    .our_child(|_, child| {
        has_label(&child.metadata, COMPONENT_LABEL, "config") && !config_key_of(child).is_empty()
    })
}

pub(crate) fn reflect_config_maps(
    ctx: &Context,
    function: &mut Function,
    set: &ChildSetResult<ConfigMap>,
) -> Result<(), Error> {
    let invalid: Vec<&String> = function
        .spec
        .configs
        .keys()
        .filter(|k| !valid_config_key(k))
        .collect();
    let invalid = (!invalid.is_empty()).then(|| {
        let keys: Vec<String> = invalid.iter().map(|k| format!("{k:?}")).collect();
        format!(
            "config keys must be DNS labels of at most 56 characters: {}",
            keys.join(", ")
        )
    });
    let existing: BTreeMap<String, String> = set
        .children
        .iter()
        .filter_map(|item| {
            let name = item.child.as_ref()?.metadata.name.clone()?;
            Some((item.id.clone(), name))
        })
        .collect();
    let failures: Vec<(String, String)> = set
        .children
        .iter()
        .filter_map(|item| {
            let (reason, message) = failure(item.error.as_ref()?);
            Some((reason, format!("{}: {message}", item.id)))
        })
        .collect();
    let status = status_of(function);
    let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
    if let Some((reason, _)) = failures.first() {
        let messages: Vec<&str> = failures.iter().map(|(_, m)| m.as_str()).collect();
        conditions.mark_false("ConfigReady", reason, &messages.join("; "));
    } else if let Some(message) = invalid {
        conditions.mark_false("ConfigReady", "InvalidConfigKey", &message);
    } else {
        conditions.mark_true("ConfigReady", "ConfigMapsReady", "");
    }
    status.config_maps = existing;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn config_keys_are_dns_labels_short_enough_for_a_volume_name() {
        assert!(valid_config_key("nginx"));
        assert!(valid_config_key("a-1"));
        assert!(valid_config_key(&"x".repeat(56)));
        for key in ["", "-a", "a-", "A", "a.b", "a_b", &"x".repeat(57)] {
            assert!(!valid_config_key(key), "{key:?}");
        }
    }
}
