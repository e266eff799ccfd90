//! The networking.k8s.io printers (pkg/printers/internalversion/printers.go: `printIngress`,
//! `printIngressClass`, `printIPAddress`, `printServiceCIDR`).

use recon_apimachinery::json::Value;

use super::super::document::{Cell, Row};
use super::{AGE, NAME, Printer, age_of, at, list_at, name, str_at, text};
use crate::wire::object::Object;

pub(super) const INGRESS: Printer = Printer {
    group: "networking.k8s.io",
    kind: "Ingress",
    columns: &[
        NAME,
        text(
            "Class",
            "The name of the IngressClass resource that should be used for additional configuration",
        ),
        text(
            "Hosts",
            "Hosts that incoming requests are matched against before the ingress rule",
        ),
        text(
            "Address",
            "Address is a list containing ingress points for the load-balancer",
        ),
        text("Ports", "Ports of TLS configurations that open"),
        AGE,
    ],
    row: |obj, now| {
        let class = at(obj, &["spec", "ingressClassName"])
            .and_then(Value::as_str)
            .unwrap_or("<none>");
        let ports = if list_at(obj, &["spec", "tls"]).is_empty() {
            "80"
        } else {
            "80, 443"
        };
        Row::new(vec![
            name(obj),
            Cell::text(class),
            Cell::text(hosts(obj)),
            Cell::text(addresses(obj)),
            Cell::text(ports),
            age_of(obj, now),
        ])
    },
};

/// `formatHosts`: the rules' hosts until three are listed, `+ N more...` (N counting rules past
/// the third, with or without a host) when a rule comes after, `*` for none.
fn hosts(obj: &Object) -> String {
    const MAX: usize = 3;
    let rules = list_at(obj, &["spec", "rules"]);
    let mut hosts: Vec<&str> = Vec::new();
    let mut more = false;
    for rule in rules {
        if hosts.len() == MAX {
            more = true;
            break;
        }
        let host = rule.get("host").and_then(Value::as_str).unwrap_or("");
        if !host.is_empty() {
            hosts.push(host);
        }
    }
    if hosts.is_empty() {
        return "*".to_owned();
    }
    let joined = hosts.join(",");
    if more {
        format!("{joined} + {} more...", rules.len() - MAX)
    } else {
        joined
    }
}

/// `ingressLoadBalancerStatusStringer`, wide: each ingress point's IP, else its hostname, as a
/// sorted set.
fn addresses(obj: &Object) -> String {
    let mut points: Vec<&str> = list_at(obj, &["status", "loadBalancer", "ingress"])
        .iter()
        .filter_map(|i| {
            let field = |k: &str| i.get(k).and_then(Value::as_str).unwrap_or("");
            [field("ip"), field("hostname")]
                .into_iter()
                .find(|s| !s.is_empty())
        })
        .collect();
    points.sort_unstable();
    points.dedup();
    points.join(",")
}

pub(super) const INGRESS_CLASS: Printer = Printer {
    group: "networking.k8s.io",
    kind: "IngressClass",
    columns: &[
        NAME,
        text(
            "Controller",
            "Controller that is responsible for handling this class",
        ),
        text(
            "Parameters",
            "A reference to a resource with additional parameters",
        ),
        AGE,
    ],
    row: |obj, now| {
        let mut name_text = str_at(obj, &["metadata", "name"]).to_owned();
        let default = str_at(
            obj,
            &[
                "metadata",
                "annotations",
                "ingressclass.kubernetes.io/is-default-class",
            ],
        );
        if default == "true" {
            name_text.push_str(" (default)");
        }
        let parameters = match at(obj, &["spec", "parameters"]).filter(|p| p.is_object()) {
            None => "<none>".to_owned(),
            Some(p) => {
                let field = |k: &str| p.get(k).and_then(Value::as_str);
                let kind = field("kind").unwrap_or("");
                let kind = match field("apiGroup") {
                    Some(group) => format!("{kind}.{group}"),
                    None => kind.to_owned(),
                };
                format!("{kind}/{}", field("name").unwrap_or(""))
            }
        };
        Row::new(vec![
            Cell::text(name_text),
            Cell::text(str_at(obj, &["spec", "controller"])),
            Cell::text(parameters),
            age_of(obj, now),
        ])
    },
};

pub(super) const IP_ADDRESS: Printer = Printer {
    group: "networking.k8s.io",
    kind: "IPAddress",
    columns: &[
        NAME,
        text(
            "ParentRef",
            "ParentRef references the resource that an IPAddress is attached to. An IPAddress must reference a parent object.",
        ),
        // No Age column, though each row ends with the age (printers.go declares two columns
        // and prints three cells).
    ],
    row: |obj, now| {
        // The parent as `resource.group[/namespace]/name`, lowercased.
        let parent = match at(obj, &["spec", "parentRef"]).filter(|p| p.is_object()) {
            None => "<none>".to_owned(),
            Some(p) => {
                let field = |k: &str| p.get(k).and_then(Value::as_str).unwrap_or("");
                let mut text = match field("group") {
                    "" => field("resource").to_lowercase(),
                    group => format!("{}.{group}", field("resource")).to_lowercase(),
                };
                if !field("namespace").is_empty() {
                    text = format!("{text}/{}", field("namespace"));
                }
                format!("{text}/{}", field("name"))
            }
        };
        Row::new(vec![name(obj), Cell::text(parent), age_of(obj, now)])
    },
};

pub(super) const SERVICE_CIDR: Printer = Printer {
    group: "networking.k8s.io",
    kind: "ServiceCIDR",
    columns: &[
        NAME,
        text(
            "CIDRs",
            "CIDRs defines the IP blocks in CIDR notation (e.g. \"192.168.0.0/24\" or \"2001:db8::/64\") from which to assign service cluster IPs. Max of two CIDRs is allowed, one of each IP family. This field is immutable.",
        ),
        AGE,
    ],
    row: |obj, now| {
        let cidrs: Vec<&str> = list_at(obj, &["spec", "cidrs"])
            .iter()
            .map(|c| c.as_str().unwrap_or(""))
            .collect();
        Row::new(vec![
            name(obj),
            Cell::text(cidrs.join(",")),
            age_of(obj, now),
        ])
    },
};

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn ingress_hosts_are_capped_at_three() {
        let obj = json!({"spec": {"rules": [
            {"host": "a"}, {}, {"host": "c"}, {"host": "d"}, {"host": "e"}
        ]}});
        assert_eq!(hosts(obj.as_object().unwrap()), "a,c,d + 2 more...");
        let few = json!({"spec": {"rules": [{"host": "a"}, {}, {"host": "c"}, {"host": "d"}]}});
        assert_eq!(hosts(few.as_object().unwrap()), "a,c,d");
        assert_eq!(hosts(&Object::new()), "*");
    }
}
