//! Services: types, cluster IPs and families, ports, node ports, external IPs and traffic
//! policies, and what an update may change (`pkg/apis/core/validation/validation.go`).

use std::collections::BTreeSet;

use recon_apimachinery::json;
use recon_apimachinery::json::Value;
use recon_apimachinery::names::{
    dns1123_label_errors, dns1123_subdomain_name_errors, label_key_errors, label_value_errors,
};

use super::ports::{port_num_errors, port_num_or_name_errors};
use super::read::{is_set, list_at, str_at};
use super::service_addresses::{cidr_errors, external_ip_errors};
use crate::field::{BadValue, ErrorType, FieldError, Path};
use crate::wire::object::Object;

/// A Service as its validation sees it.
pub(super) struct Service<'a> {
    spec: Option<&'a Value>,
    /// `spec.clusterIPs`, or on create `[clusterIP]` when only that was given
    /// (`normalizeClusterIPs` of the Service storage, which runs before validation).
    cluster_ips: Vec<&'a str>,
    annotations: Option<&'a Value>,
}

impl<'a> Service<'a> {
    pub(super) fn of(obj: &'a Object, creating: bool) -> Service<'a> {
        let spec = obj.get("spec");
        let mut cluster_ips: Vec<&str> = list_at(spec, "clusterIPs")
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect();
        let cluster_ip = str_at(spec, "clusterIP");
        if creating && cluster_ips.is_empty() && !cluster_ip.is_empty() {
            cluster_ips.push(cluster_ip);
        }
        let annotations = obj.get("metadata").and_then(|m| m.get("annotations"));
        Service {
            spec,
            cluster_ips,
            annotations,
        }
    }

    fn str(&self, key: &str) -> &'a str {
        str_at(self.spec, key)
    }

    fn list(&self, key: &str) -> &'a [Value] {
        list_at(self.spec, key)
    }

    /// `isHeadlessService`.
    fn headless(&self) -> bool {
        self.cluster_ips == ["None"]
    }

    fn cluster_ips_value(&self) -> BadValue {
        if self.cluster_ips.is_empty() {
            // A nil `[]string` marshals as `null`.
            return BadValue::Raw("null".to_owned());
        }
        BadValue::json(&json!(self.cluster_ips))
    }

    fn families(&self) -> Vec<&'a str> {
        self.list("ipFamilies")
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect()
    }

    fn policy_value(&self) -> BadValue {
        BadValue::json(
            self.spec
                .and_then(|s| s.get("ipFamilyPolicy"))
                .unwrap_or(&Value::Null),
        )
    }

    /// `ValidateServiceUpdate`: addresses and families may be added or released, not changed,
    /// a health check node port stays, then the new Service is checked as on create.
    pub(super) fn validate_update(&self, old: &Service<'_>) -> Vec<FieldError> {
        let mut errors = self.upgrade_downgrade_cluster_ips(old);
        errors.extend(self.upgrade_downgrade_families(old));
        errors.extend(self.load_balancer_class_errors(Some(old)));
        // `validateServiceExternalTrafficFieldsUpdate`.
        if old.needs_health_check()
            && self.needs_health_check()
            && self.spec.and_then(|s| s.get("healthCheckNodePort"))
                != old.spec.and_then(|s| s.get("healthCheckNodePort"))
        {
            errors.push(FieldError::forbidden(
                "spec.healthCheckNodePort",
                "field is immutable",
            ));
        }
        errors.extend(self.validate(Some(old)));
        errors
    }

    fn strings(&self, key: &str) -> Vec<&'a str> {
        self.list(key)
            .iter()
            .map(|v| v.as_str().unwrap_or(""))
            .collect()
    }

    /// `spec.loadBalancerClass`: `None` when unset (a nil `*string`).
    fn load_balancer_class(&self) -> Option<&'a str> {
        self.spec
            .and_then(|s| s.get("loadBalancerClass"))
            .filter(|v| !v.is_null())
            .map(|v| v.as_str().unwrap_or(""))
    }

    /// `validateLoadBalancerClassField`: between two LoadBalancer Services the class stays as
    /// it is; a LoadBalancer's class is a qualified name, no other type may have one. On
    /// update it runs before `validateService`, which runs it again without `old`, so an
    /// invalid new class is reported twice.
    fn load_balancer_class_errors(&self, old: Option<&Service<'_>>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let path = Path::new("spec").child("loadBalancerClass");
        let class = self.load_balancer_class();
        let load_balancer = self.str("type") == "LoadBalancer";
        if let Some(old) = old
            && load_balancer
            && old.str("type") == "LoadBalancer"
            && old.load_balancer_class() != class
        {
            // A `*string`, printed as its JSON.
            let value = BadValue::json(&class.map_or(Value::Null, |c| json!(c)));
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &path,
                value,
                "may not change once set",
            ));
        }
        match class {
            Some(class) if load_balancer => {
                for message in label_key_errors(class) {
                    errors.push(FieldError::invalid(&path, class, message));
                }
            }
            Some(_) => errors.push(FieldError::forbidden(
                &path,
                "may only be used when `type` is 'LoadBalancer'",
            )),
            None => {}
        }
        errors
    }

    /// The source ranges of `validateService`: `spec.loadBalancerSourceRanges` (spelt
    /// `LoadBalancerSourceRanges` in the path, as the real one spells it), else the
    /// annotation; values may be padded with spaces; ranges the old Service had, or an
    /// annotation it had unchanged, are not re-checked.
    fn source_range_errors(&self, old: Option<&Service<'_>>) -> Vec<FieldError> {
        const ANNOTATION: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";
        let mut errors = Vec::new();
        let not_load_balancer = self.str("type") != "LoadBalancer";
        let forbidden = |path: &Path| {
            FieldError::forbidden(path, "may only be used when `type` is 'LoadBalancer'")
        };
        let ranges = self.strings("loadBalancerSourceRanges");
        if !ranges.is_empty() {
            let path = Path::new("spec").child("LoadBalancerSourceRanges");
            if not_load_balancer {
                errors.push(forbidden(&path));
            }
            let old_ranges: Vec<&str> = old
                .map(|o| o.strings("loadBalancerSourceRanges"))
                .unwrap_or_default()
                .into_iter()
                .map(str::trim)
                .collect();
            for (i, range) in ranges.iter().enumerate() {
                errors.extend(cidr_errors(range.trim(), &path.index(i), &old_ranges));
            }
            return errors;
        }
        let Some(value) = self.annotation(ANNOTATION) else {
            return errors;
        };
        let path = Path::new("metadata").child("annotations").key(ANNOTATION);
        if not_load_balancer {
            errors.push(forbidden(&path));
        }
        if old.is_some_and(|o| o.annotation(ANNOTATION) == Some(value)) {
            return errors;
        }
        let value = value.trim();
        if !value.is_empty() {
            for range in value.split(',') {
                errors.extend(cidr_errors(range.trim(), &path, &[]));
            }
        }
        errors
    }

    fn annotation(&self, key: &str) -> Option<&'a str> {
        self.annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    }

    /// `validateUpgradeDowngradeClusterIPs`.
    fn upgrade_downgrade_cluster_ips(&self, old: &Service<'_>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.str("type") == "ExternalName" || old.str("type") == "ExternalName" {
            return errors;
        }
        if self.headless() && old.headless() {
            return errors;
        }
        let path = Path::new("spec").child("clusterIPs");
        let changed = |i: usize| {
            FieldError::new(
                ErrorType::Invalid,
                path.index(i),
                self.cluster_ips_value(),
                "may not change once set",
            )
        };
        let (new_ips, old_ips) = (&self.cluster_ips, &old.cluster_ips);
        if new_ips.len() == old_ips.len() {
            for (i, ip) in old_ips.iter().enumerate() {
                if new_ips.get(i) != Some(ip) {
                    errors.push(changed(i));
                }
            }
        } else if old_ips.len() > new_ips.len() {
            if new_ips.is_empty() {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    path.index(0),
                    self.cluster_ips_value(),
                    "primary clusterIP can not be unset",
                ));
            }
            if !new_ips.is_empty() && new_ips.first() != old_ips.first() {
                errors.push(changed(0));
            }
            if new_ips.len() == 1 && self.str("ipFamilyPolicy") != "SingleStack" {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    "spec.ipFamilyPolicy",
                    self.policy_value(),
                    "must be set to 'SingleStack' when releasing the secondary clusterIP",
                ));
            }
        } else if !old_ips.is_empty() && new_ips.first() != old_ips.first() {
            errors.push(changed(0));
        }
        errors
    }

    /// `validateUpgradeDowngradeIPFamilies`.
    fn upgrade_downgrade_families(&self, old: &Service<'_>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        if self.str("type") == "ExternalName" || old.str("type") == "ExternalName" {
            return errors;
        }
        if self.headless() || old.headless() {
            return errors;
        }
        let path = Path::new("spec").child("ipFamilies").index(0);
        let (new, old_families) = (self.families(), old.families());
        let families_value = BadValue::json(&json!(new));
        if new.len() == old_families.len() {
            for (i, family) in old_families.iter().enumerate() {
                if new.get(i) != Some(family) {
                    errors.push(FieldError::new(
                        ErrorType::Invalid,
                        &path,
                        families_value.clone(),
                        "may not change once set",
                    ));
                }
            }
        } else if old_families.len() > new.len() {
            if self.cluster_ips.is_empty() {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &path,
                    families_value,
                    "primary ipFamily can not be unset",
                ));
            }
            if !new.is_empty() && new.first() != old_families.first() {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    &path,
                    self.cluster_ips_value(),
                    "may not change once set",
                ));
            }
            if new.len() == 1 && self.str("ipFamilyPolicy") != "SingleStack" {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    "spec.ipFamilyPolicy",
                    self.policy_value(),
                    "must be set to 'SingleStack' when releasing the secondary ipFamily",
                ));
            }
        } else if !old_families.is_empty() && !new.is_empty() && new.first() != old_families.first()
        {
            errors.push(FieldError::new(
                ErrorType::Invalid,
                &path,
                self.cluster_ips_value(),
                "may not change once set",
            ));
        }
        errors
    }

    /// `apiservice.NeedsHealthCheck`.
    fn needs_health_check(&self) -> bool {
        self.str("type") == "LoadBalancer" && self.str("externalTrafficPolicy") == "Local"
    }

    /// `apiservice.ExternallyAccessible`.
    fn externally_accessible(&self) -> bool {
        match self.str("type") {
            "LoadBalancer" | "NodePort" => true,
            "ClusterIP" => !self.list("externalIPs").is_empty(),
            _ => false,
        }
    }

    /// `validateService`, in its order, with `old` on update (the topology annotations and
    /// the address checks beyond families are not checked here).
    pub(super) fn validate(&self, old: Option<&Service<'_>>) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let spec_path = Path::new("spec");
        let ty = self.str("type");
        let ports = self.list("ports");
        let headless = self.headless();
        if ports.is_empty() && !headless && ty != "ExternalName" {
            errors.push(FieldError::required(spec_path.child("ports"), ""));
        }
        match ty {
            "LoadBalancer" | "NodePort" if headless => errors.push(FieldError::invalid(
                spec_path.child("clusterIPs").index(0),
                "None",
                format!("may not be set to 'None' for {ty} services"),
            )),
            "ExternalName" => {
                let not_here = "may not be set for ExternalName services";
                if !self.cluster_ips.is_empty() {
                    errors.push(FieldError::forbidden(
                        spec_path.child("clusterIPs"),
                        not_here,
                    ));
                }
                if !self.list("ipFamilies").is_empty() {
                    errors.push(FieldError::forbidden(
                        spec_path.child("ipFamilies"),
                        not_here,
                    ));
                }
                if is_set(self.spec, "ipFamilyPolicy") {
                    errors.push(FieldError::forbidden(
                        spec_path.child("ipFamilyPolicy"),
                        not_here,
                    ));
                }
                let name = self.str("externalName");
                let cname = name.strip_suffix('.').unwrap_or(name);
                let path = spec_path.child("externalName");
                if cname.is_empty() {
                    errors.push(FieldError::required(&path, ""));
                } else {
                    for message in dns1123_subdomain_name_errors(cname) {
                        errors.push(FieldError::invalid(&path, cname, message));
                    }
                }
            }
            _ => {}
        }
        let ports_path = spec_path.child("ports");
        let mut names = BTreeSet::new();
        for (i, port) in ports.iter().enumerate() {
            errors.extend(service_port_errors(
                port,
                ports.len() > 1,
                &mut names,
                &ports_path.index(i),
            ));
        }
        // `ValidateLabels` of the selector.
        let selector_path = spec_path.child("selector");
        if let Some(selector) = self
            .spec
            .and_then(|s| s.get("selector"))
            .and_then(Value::as_object)
        {
            for (key, value) in selector {
                for message in label_key_errors(key) {
                    errors.push(FieldError::invalid(&selector_path, key, message));
                }
                let value = value.as_str().unwrap_or("");
                for message in label_value_errors(value) {
                    errors.push(FieldError::invalid(&selector_path, value, message));
                }
            }
        }
        errors.extend(self.session_affinity_errors());
        errors.extend(self.family_errors());
        let ips_path = spec_path.child("externalIPs");
        let old_ips = old.map(|o| o.strings("externalIPs")).unwrap_or_default();
        for (i, ip) in self.strings("externalIPs").into_iter().enumerate() {
            errors.extend(external_ip_errors(ip, &ips_path.index(i), &old_ips));
        }
        let type_path = spec_path.child("type");
        if ty.is_empty() {
            errors.push(FieldError::required(&type_path, ""));
        } else if !["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"].contains(&ty) {
            errors.push(FieldError::not_supported(
                &type_path,
                ty,
                &["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"],
            ));
        }
        let node_port = |p: &Value| p.get("nodePort").and_then(Value::as_i64).unwrap_or(0);
        let port_num = |p: &Value| p.get("port").and_then(Value::as_i64).unwrap_or(0);
        let protocol = |p: &'a Value| str_at(Some(p), "protocol");
        if ty == "ClusterIP" {
            for (i, port) in ports.iter().enumerate() {
                if node_port(port) != 0 {
                    errors.push(FieldError::forbidden(
                        ports_path.index(i).child("nodePort"),
                        "may not be used when `type` is 'ClusterIP'",
                    ));
                }
            }
        }
        let mut node_ports = BTreeSet::new();
        for (i, port) in ports.iter().enumerate() {
            let n = node_port(port);
            if n != 0 && !node_ports.insert((protocol(port), n)) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    ports_path.index(i).child("nodePort"),
                    BadValue::Raw(n.to_string()),
                    "",
                ));
            }
        }
        let mut seen = BTreeSet::new();
        for (i, port) in ports.iter().enumerate() {
            let key = (protocol(port), port_num(port));
            if !seen.insert(key) {
                // The key is an internal `core.ServicePort`, printed as its JSON (Go field
                // names, no tags).
                let value = json!({
                    "Name": "", "Protocol": key.0, "AppProtocol": null, "Port": key.1,
                    "TargetPort": 0, "NodePort": 0,
                });
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    ports_path.index(i),
                    BadValue::go_struct(
                        &value,
                        &[
                            "Name",
                            "Protocol",
                            "AppProtocol",
                            "Port",
                            "TargetPort",
                            "NodePort",
                        ],
                    ),
                    "",
                ));
            }
        }
        errors.extend(self.source_range_errors(old));
        let allocate = spec_path.child("allocateLoadBalancerNodePorts");
        if is_set(self.spec, "allocateLoadBalancerNodePorts") && ty != "LoadBalancer" {
            errors.push(FieldError::forbidden(
                &allocate,
                "may only be used when `type` is 'LoadBalancer'",
            ));
        }
        if ty == "LoadBalancer" && !is_set(self.spec, "allocateLoadBalancerNodePorts") {
            // Without `spec.`, as the real one words it.
            errors.push(FieldError::required("allocateLoadBalancerNodePorts", ""));
        }
        errors.extend(self.load_balancer_class_errors(None));
        errors.extend(self.traffic_policy_errors());
        errors
    }

    /// The session affinity checks of `validateService` and `validateClientIPAffinityConfig`.
    fn session_affinity_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let path = Path::new("spec").child("sessionAffinity");
        let config_path = Path::new("spec").child("sessionAffinityConfig");
        match self.str("sessionAffinity") {
            "" => errors.push(FieldError::required(&path, "")),
            "ClientIP" => {
                let when = "when session affinity type is ClientIP";
                let config = self
                    .spec
                    .and_then(|s| s.get("sessionAffinityConfig"))
                    .filter(|v| !v.is_null());
                let client = config
                    .and_then(|c| c.get("clientIP"))
                    .filter(|v| !v.is_null());
                let timeout = client
                    .and_then(|c| c.get("timeoutSeconds"))
                    .filter(|v| !v.is_null());
                let timeout_path = config_path.child("clientIP").child("timeoutSeconds");
                match (config, client, timeout) {
                    (None, _, _) => errors.push(FieldError::required(&config_path, when)),
                    (_, None, _) => {
                        errors.push(FieldError::required(config_path.child("clientIP"), when))
                    }
                    (_, _, None) => errors.push(FieldError::required(&timeout_path, when)),
                    (_, _, Some(t)) => {
                        let seconds = t.as_i64().unwrap_or(0);
                        if seconds <= 0 || seconds > 86400 {
                            errors.push(FieldError::new(
                                ErrorType::Invalid,
                                &timeout_path,
                                BadValue::Raw(seconds.to_string()),
                                "must be greater than 0 and less than 86400",
                            ));
                        }
                    }
                }
            }
            "None" => {
                if is_set(self.spec, "sessionAffinityConfig") {
                    errors.push(FieldError::forbidden(
                        &config_path,
                        "must not be set when session affinity is None",
                    ));
                }
            }
            other => errors.push(FieldError::not_supported(
                &path,
                other,
                &["ClientIP", "None"],
            )),
        }
        errors
    }

    /// The stand-alone family and policy checks of `ValidateServiceClusterIPsRelatedFields`.
    fn family_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let path = Path::new("spec").child("ipFamilies");
        let mut seen = BTreeSet::new();
        for (i, family) in self.families().into_iter().enumerate() {
            if family != "IPv4" && family != "IPv6" {
                errors.push(FieldError::not_supported(
                    path.index(i),
                    family,
                    &["IPv4", "IPv6"],
                ));
            }
            if !seen.insert(family) {
                errors.push(FieldError::new(
                    ErrorType::Duplicate,
                    path.index(i),
                    BadValue::Str(family.to_owned()),
                    "",
                ));
            }
        }
        let policy = self.str("ipFamilyPolicy");
        if is_set(self.spec, "ipFamilyPolicy")
            && !["PreferDualStack", "RequireDualStack", "SingleStack"].contains(&policy)
        {
            errors.push(FieldError::not_supported(
                "spec.ipFamilyPolicy",
                policy,
                &["PreferDualStack", "RequireDualStack", "SingleStack"],
            ));
        }
        errors
    }

    /// `validateServiceExternalTrafficPolicy`, `validateServiceInternalTrafficFieldsValue` and
    /// `validateServiceTrafficDistribution`.
    fn traffic_policy_errors(&self) -> Vec<FieldError> {
        let mut errors = Vec::new();
        let external = self.str("externalTrafficPolicy");
        let external_path = "spec.externalTrafficPolicy";
        if !self.externally_accessible() {
            if !external.is_empty() {
                errors.push(FieldError::invalid(
                    external_path,
                    external,
                    "may only be set for externally-accessible services",
                ));
            }
        } else if external.is_empty() {
            errors.push(FieldError::required(external_path, ""));
        } else if external != "Cluster" && external != "Local" {
            errors.push(FieldError::not_supported(
                external_path,
                external,
                &["Cluster", "Local"],
            ));
        }
        let health = self
            .spec
            .and_then(|s| s.get("healthCheckNodePort"))
            .and_then(Value::as_i64)
            .unwrap_or(0);
        let health_path = "spec.healthCheckNodePort";
        if !self.needs_health_check() {
            if health != 0 {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    health_path,
                    BadValue::Raw(health.to_string()),
                    "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
                ));
            }
        } else if health == 0 {
            errors.push(FieldError::required(health_path, ""));
        } else {
            for message in port_num_errors(health) {
                errors.push(FieldError::new(
                    ErrorType::Invalid,
                    health_path,
                    BadValue::Raw(health.to_string()),
                    message,
                ));
            }
        }
        let internal_path = "spec.internalTrafficPolicy";
        if !is_set(self.spec, "internalTrafficPolicy") {
            if ["NodePort", "LoadBalancer", "ClusterIP"].contains(&self.str("type")) {
                errors.push(FieldError::required(internal_path, ""));
            }
        } else {
            let internal = self.str("internalTrafficPolicy");
            if internal != "Cluster" && internal != "Local" {
                errors.push(FieldError::not_supported(
                    internal_path,
                    internal,
                    &["Cluster", "Local"],
                ));
            }
        }
        if is_set(self.spec, "trafficDistribution") {
            let supported = ["PreferClose", "PreferSameZone", "PreferSameNode"];
            let value = self.str("trafficDistribution");
            if !supported.contains(&value) {
                errors.push(FieldError::not_supported(
                    "spec.trafficDistribution",
                    value,
                    &supported,
                ));
            }
        }
        errors
    }
}

/// `validateServicePort`.
fn service_port_errors(
    port: &Value,
    require_name: bool,
    names: &mut BTreeSet<String>,
    path: &Path,
) -> Vec<FieldError> {
    let mut errors = Vec::new();
    let port = Some(port);
    let name = str_at(port, "name");
    let name_path = path.child("name");
    if require_name && name.is_empty() {
        errors.push(FieldError::required(&name_path, ""));
    } else if !name.is_empty() {
        for message in dns1123_label_errors(name) {
            errors.push(FieldError::invalid(&name_path, name, message));
        }
        if !names.insert(name.to_owned()) {
            errors.push(FieldError::new(
                ErrorType::Duplicate,
                &name_path,
                BadValue::Str(name.to_owned()),
                "",
            ));
        }
    }
    let number = port
        .and_then(|p| p.get("port"))
        .and_then(Value::as_i64)
        .unwrap_or(0);
    for message in port_num_errors(number) {
        errors.push(FieldError::new(
            ErrorType::Invalid,
            path.child("port"),
            BadValue::Raw(number.to_string()),
            message,
        ));
    }
    let protocol = str_at(port, "protocol");
    if protocol.is_empty() {
        errors.push(FieldError::required(path.child("protocol"), ""));
    } else if !["SCTP", "TCP", "UDP"].contains(&protocol) {
        errors.push(FieldError::not_supported_named(
            path.child("protocol"),
            protocol,
            &["SCTP", "TCP", "UDP"],
        ));
    }
    let target = port
        .and_then(|p| p.get("targetPort"))
        .unwrap_or(&Value::Null);
    errors.extend(port_num_or_name_errors(target, &path.child("targetPort")));
    if let Some(app) = port
        .and_then(|p| p.get("appProtocol"))
        .and_then(Value::as_str)
    {
        for message in label_key_errors(app) {
            errors.push(FieldError::invalid(path.child("appProtocol"), app, message));
        }
    }
    errors
}
