//! Service addresses and node ports, as kube-apiserver's Service REST storage allocates them on
//! create (an update keeps them: the Service type's `prepare_update`): a cluster IP from the service range (10.0.0.0/24, as the real control plane this
//! project records from is started with) unless the Service is headless or an ExternalName, the
//! single-stack IPv4 family fields, and a node port per port of a NodePort or LoadBalancer
//! Service from 30000-32767. What is in use is read from the stored Services, so a delete frees
//! its address and ports.
//!
//! The real allocators pick at random; here the lowest free value above the band each reserves
//! for values asked for by name (the range's first sixteenth, at least 16 addresses; the first
//! 86 ports of the default range).

use std::collections::BTreeSet;
use std::net::Ipv4Addr;

use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::State;
use crate::field::{BadValue, ErrorType, FieldError};
use crate::storage::stored::Stored;
use crate::wire::group::GroupResource;
use crate::wire::object::Object;

const RANGE_BASE: u32 = u32::from_be_bytes([10, 0, 0, 0]);
const RANGE_PREFIX: u32 = 24;
const NODE_PORTS: std::ops::RangeInclusive<u16> = 30000..=32767;

fn range_size() -> u32 {
    1 << (32 - RANGE_PREFIX)
}

/// Whether `ip` is a usable address of the service range (not its network or broadcast address).
fn in_range(ip: Ipv4Addr) -> bool {
    let ip = u32::from(ip);
    ip > RANGE_BASE && ip < RANGE_BASE + range_size() - 1
}

fn services() -> GroupResource {
    GroupResource::new(String::new(), "services".to_owned())
}

/// A Service's cluster IPs and node ports, as its stored body says.
#[derive(Debug, Clone, Default)]
pub(crate) struct Allocation {
    ips: Vec<Ipv4Addr>,
    ports: Vec<u16>,
}

impl Allocation {
    fn of(key: &str, stored: &Stored) -> Allocation {
        let obj = match stored.decode(key) {
            Ok(obj) => obj,
            Err(e) => {
                // Its addresses cannot be read; the others are still allocated.
                tracing::warn!(error = %e, "a Service's allocations cannot be read");
                return Allocation::default();
            }
        };
        let spec = obj.get("spec");
        let ips = spec
            .and_then(|s| s.get("clusterIPs"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .filter_map(|s| s.parse().ok())
            .collect();
        let ports = spec
            .and_then(|s| s.get("ports"))
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|p| p.get("nodePort").and_then(Value::as_u64))
            .filter_map(|p| u16::try_from(p).ok())
            .collect();
        Allocation { ips, ports }
    }
}

impl State {
    /// The cluster IPs and node ports of every stored Service but `except` (its storage key);
    /// only the Services written since the last call are read again.
    fn allocated(&mut self, except: Option<&str>) -> (BTreeSet<Ipv4Addr>, BTreeSet<u16>) {
        self.service_allocations
            .catch_up(self.store.list(&services(), None), Allocation::of);
        let mut ips = BTreeSet::new();
        let mut ports = BTreeSet::new();
        for (key, allocation) in self.service_allocations.iter() {
            if Some(key.as_str()) != except {
                ips.extend(allocation.ips.iter().copied());
                ports.extend(allocation.ports.iter().copied());
            }
        }
        (ips, ports)
    }

    /// Allocates what a new Service needs; `key` is its storage key. Errors are the field
    /// errors of the real 422.
    pub(crate) fn allocate_service(&mut self, obj: &mut Object, key: &str) -> Vec<FieldError> {
        let (used_ips, used_ports) = self.allocated(Some(key));
        let mut errors = Vec::new();
        let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
            return errors;
        };
        let service_type = spec
            .get("type")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_owned();
        let no_cluster_ip = spec
            .get("clusterIP")
            .is_none_or(|ip| ip.is_null() || ip.as_str() == Some(""));
        if let Some(ips) = spec.get("clusterIPs").and_then(Value::as_array)
            && !ips.is_empty()
            && no_cluster_ip
        {
            // `ValidateService`: the addresses may not be given without the primary one.
            errors.push(FieldError::new(
                ErrorType::Invalid,
                "spec.clusterIPs",
                BadValue::Raw(Value::Array(ips.clone().into()).to_string()),
                "must be empty when `clusterIP` is not specified",
            ));
            return errors;
        }
        if service_type != "ExternalName" {
            let requested = spec
                .get("clusterIP")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let ip = match requested.as_str() {
                "None" => Some("None".to_owned()),
                "" => first_free_ip(&used_ips).map(|ip| ip.to_string()),
                asked => match asked.parse::<Ipv4Addr>() {
                    Ok(ip) if !in_range(ip) => {
                        errors.push(ip_error(
                            asked,
                            "the provided network does not match the current range",
                        ));
                        None
                    }
                    Ok(ip) if used_ips.contains(&ip) => {
                        errors.push(ip_error(asked, "provided IP is already allocated"));
                        None
                    }
                    Ok(_) => Some(asked.to_owned()),
                    // Not an address: validation's to refuse (`ValidateService`).
                    Err(_) => None,
                },
            };
            if let Some(ip) = ip {
                // A headless Service without a selector serves every family the cluster
                // could: it requires dual stack.
                let selectorless_headless = ip == "None"
                    && spec
                        .get("selector")
                        .and_then(Value::as_object)
                        .is_none_or(|s| s.is_empty());
                let (families, policy) = if selectorless_headless {
                    (json!(["IPv4", "IPv6"]), "RequireDualStack")
                } else {
                    (json!(["IPv4"]), "SingleStack")
                };
                spec.insert("clusterIP".into(), json!(ip));
                spec.insert("clusterIPs".into(), json!([ip]));
                spec.entry("ipFamilies").or_insert(families);
                spec.entry("ipFamilyPolicy")
                    .or_insert_with(|| json!(policy));
            }
        }
        if matches!(service_type.as_str(), "NodePort" | "LoadBalancer")
            && spec.get("allocateLoadBalancerNodePorts") != Some(&Value::Bool(false))
        {
            let mut taken = used_ports;
            let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
            for (i, port) in ports.into_iter().flatten().enumerate() {
                let Some(port) = port.as_object_mut() else {
                    continue;
                };
                match port
                    .get("nodePort")
                    .and_then(Value::as_i64)
                    .filter(|p| *p != 0)
                {
                    Some(asked) => {
                        let field = format!("spec.ports[{i}].nodePort");
                        let fits = u16::try_from(asked).ok().filter(|p| NODE_PORTS.contains(p));
                        match fits {
                            None => errors.push(FieldError::new(
                                ErrorType::Invalid,
                                field,
                                BadValue::Raw(asked.to_string()),
                                format!(
                                    "provided port is not in the valid range. The range of valid ports is {}-{}",
                                    NODE_PORTS.start(),
                                    NODE_PORTS.end()
                                ),
                            )),
                            Some(p) if !taken.insert(p) => errors.push(FieldError::new(
                                ErrorType::Invalid,
                                field,
                                BadValue::Raw(asked.to_string()),
                                "provided port is already allocated",
                            )),
                            Some(_) => {}
                        }
                    }
                    None => {
                        if let Some(p) = first_free_port(&taken) {
                            taken.insert(p);
                            port.insert("nodePort".into(), json!(p));
                        }
                    }
                }
            }
        }
        errors
    }
}

fn ip_error(asked: &str, why: &str) -> FieldError {
    FieldError::new(
        ErrorType::Invalid,
        "spec.clusterIPs",
        BadValue::Raw(json!([asked]).to_string()),
        format!("failed to allocate IP {asked}: {why}"),
    )
}

fn first_free_ip(used: &BTreeSet<Ipv4Addr>) -> Option<Ipv4Addr> {
    let band = (range_size() / 16).clamp(16, 256);
    (band + 1..range_size() - 1)
        .map(|offset| Ipv4Addr::from(RANGE_BASE + offset))
        .find(|ip| !used.contains(ip))
}

fn first_free_port(used: &BTreeSet<u16>) -> Option<u16> {
    let size = u32::from(NODE_PORTS.end() - NODE_PORTS.start()) + 1;
    let band = u16::try_from((size / 32).clamp(16, 128)).unwrap_or(16);
    (NODE_PORTS.start() + band..=*NODE_PORTS.end()).find(|p| !used.contains(p))
}
