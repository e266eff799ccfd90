use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::apply;
use crate::wire::object::Object;

fn defaulted(group: &str, kind: &str, value: Value) -> Value {
    let mut obj: Object = value.as_object().cloned().expect("an object");
    apply(group, kind, &mut obj);
    Value::Object(obj)
}

fn template(containers: Value) -> Value {
    json!({"metadata": {"labels": {"app": "web"}}, "spec": {"containers": containers}})
}

/// The pod spec defaults every template gets, around `containers`.
fn defaulted_pod_spec(containers: Value) -> Value {
    json!({
        "containers": containers,
        "dnsPolicy": "ClusterFirst",
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
        "securityContext": {},
        "terminationGracePeriodSeconds": 30,
    })
}

fn defaulted_container(name: &str, image: &str, pull: &str) -> Value {
    json!({"name": name, "image": image, "imagePullPolicy": pull, "resources": {},
           "terminationMessagePath": "/dev/termination-log",
           "terminationMessagePolicy": "File"})
}

#[test]
fn a_deployment_gets_its_strategy_limits_and_pod_template_defaults() {
    let got = defaulted(
        "apps",
        "Deployment",
        json!({"spec": {"template": template(json!([{"name": "a", "image": "nginx"}]))}}),
    );
    assert_eq!(
        got["spec"],
        json!({
            "replicas": 1,
            "revisionHistoryLimit": 10,
            "progressDeadlineSeconds": 600,
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": defaulted_pod_spec(json!([defaulted_container("a", "nginx", "Always")])),
            },
        })
    );
}

#[test]
fn what_is_set_is_kept() {
    let sent = json!({"spec": {
        "replicas": 0,
        "strategy": {"type": "Recreate"},
        "template": {"spec": {"restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                              "containers": [{"name": "a", "image": "x:1",
                                              "imagePullPolicy": "Never"}]}},
    }});
    let got = defaulted("apps", "Deployment", sent);
    assert_eq!(got["spec"]["replicas"], 0, "a zero pointer is not nil");
    assert_eq!(got["spec"]["strategy"], json!({"type": "Recreate"}));
    let spec = &got["spec"]["template"]["spec"];
    assert_eq!(spec["restartPolicy"], "Never");
    assert_eq!(spec["terminationGracePeriodSeconds"], 0);
    assert_eq!(spec["containers"][0]["imagePullPolicy"], "Never");
}

#[test]
fn containers_ports_probes_env_and_volumes_are_defaulted() {
    let got = defaulted(
        "",
        "Pod",
        json!({"spec": {
            "containers": [{
                "name": "a", "image": "x:1",
                "ports": [{"containerPort": 80}],
                "readinessProbe": {"httpGet": {"port": 80}},
                "env": [{"name": "N", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
                "resources": {"limits": {"cpu": "1"}},
            }],
            "volumes": [{"name": "none"}, {"name": "c", "configMap": {"name": "c"}}],
        }}),
    );
    let c = &got["spec"]["containers"][0];
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(
        c["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
               "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert_eq!(c["env"][0]["valueFrom"]["fieldRef"]["apiVersion"], "v1");
    assert_eq!(
        c["resources"]["requests"],
        json!({"cpu": "1"}),
        "a Pod requests its limits"
    );
    assert_eq!(got["spec"]["enableServiceLinks"], true);
    assert_eq!(got["spec"]["volumes"][0]["emptyDir"], json!({}));
    assert_eq!(got["spec"]["volumes"][1]["configMap"]["defaultMode"], 420);
}

#[test]
fn a_template_does_not_get_the_pods_own_defaults() {
    let got = defaulted(
        "apps",
        "ReplicaSet",
        json!({"spec": {"template": {"spec": {"containers": [
            {"name": "a", "image": "x:1", "resources": {"limits": {"cpu": "1"}}}]}}}}),
    );
    let spec = &got["spec"]["template"]["spec"];
    assert!(spec.get("enableServiceLinks").is_none());
    assert!(spec["containers"][0]["resources"].get("requests").is_none());
}

#[test]
fn a_service_gets_its_type_affinity_policies_and_target_ports() {
    let got = defaulted(
        "",
        "Service",
        json!({"spec": {"ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}}),
    );
    assert_eq!(
        got["spec"],
        json!({
            "type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
            "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80},
                      {"port": 53, "protocol": "UDP", "targetPort": "dns"}],
        })
    );
    let node_port = defaulted("", "Service", json!({"spec": {"type": "LoadBalancer"}}));
    assert_eq!(node_port["spec"]["externalTrafficPolicy"], "Cluster");
    assert_eq!(node_port["spec"]["allocateLoadBalancerNodePorts"], true);
    let client_ip = defaulted(
        "",
        "Service",
        json!({"spec": {"sessionAffinity": "ClientIP"}}),
    );
    assert_eq!(
        client_ip["spec"]["sessionAffinityConfig"],
        json!({"clientIP": {"timeoutSeconds": 10800}})
    );
}

#[test]
fn a_job_is_labelled_from_its_template_and_gets_its_limits() {
    let got = defaulted(
        "batch",
        "Job",
        json!({"metadata": {"name": "j"}, "spec": {"template": {
            "metadata": {"labels": {"app": "j"}},
            "spec": {"restartPolicy": "Never", "containers": []}}}}),
    );
    assert_eq!(got["metadata"]["labels"], json!({"app": "j"}));
    let spec = &got["spec"];
    for (key, value) in [
        ("completions", json!(1)),
        ("parallelism", json!(1)),
        ("backoffLimit", json!(6)),
        ("completionMode", json!("NonIndexed")),
        ("suspend", json!(false)),
        ("podReplacementPolicy", json!("TerminatingOrFailed")),
        ("manualSelector", json!(false)),
    ] {
        assert_eq!(spec[key], value, "{key}");
    }
    let parallel = defaulted("batch", "Job", json!({"spec": {"parallelism": 3}}));
    assert!(
        parallel["spec"].get("completions").is_none(),
        "work queue jobs keep no count"
    );
}

#[test]
fn a_cron_job_template_gets_pod_defaults_but_not_job_defaults() {
    let got = defaulted(
        "batch",
        "CronJob",
        json!({"spec": {"schedule": "@daily", "jobTemplate": {"spec": {"template": {"spec": {
            "containers": [{"name": "a", "image": "x:1"}]}}}}}}),
    );
    let spec = &got["spec"];
    assert_eq!(spec["concurrencyPolicy"], "Allow");
    assert_eq!(spec["successfulJobsHistoryLimit"], 3);
    assert_eq!(spec["failedJobsHistoryLimit"], 1);
    let job = &spec["jobTemplate"]["spec"];
    assert!(job.get("backoffLimit").is_none());
    assert_eq!(job["template"]["spec"]["dnsPolicy"], "ClusterFirst");
}

#[test]
fn other_groups() {
    let policy = defaulted(
        "networking.k8s.io",
        "NetworkPolicy",
        json!({"spec": {"egress": [{"ports": [{"port": 53}]}]}}),
    );
    assert_eq!(policy["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(policy["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    let hpa = defaulted(
        "autoscaling",
        "HorizontalPodAutoscaler",
        json!({"spec": {}}),
    );
    assert_eq!(hpa["spec"]["minReplicas"], 1);
    assert_eq!(
        hpa["spec"]["metrics"][0]["resource"]["target"]["averageUtilization"],
        80
    );
    assert!(hpa["spec"].get("behavior").is_none());
    let binding = defaulted(
        "rbac.authorization.k8s.io",
        "RoleBinding",
        json!({"subjects": [{"kind": "User", "name": "a"}, {"kind": "ServiceAccount", "name": "b"}]}),
    );
    assert_eq!(
        binding["subjects"][0]["apiGroup"],
        "rbac.authorization.k8s.io"
    );
    assert!(binding["subjects"][1].get("apiGroup").is_none());
    let secret = defaulted("", "Secret", json!({}));
    assert_eq!(secret["type"], "Opaque");
}

#[test]
fn as_stored_drops_empty_lists_and_writes_the_zero_fields_go_keeps() {
    let mut deployment: Object = json!({
        "metadata": {"finalizers": [], "labels": {"a": "b"}},
        "spec": {"template": {"spec": {"tolerations": [], "containers": [{"args": [], "name": "a"}]}}},
        "status": {"conditions": []},
    })
    .as_object()
    .cloned()
    .unwrap();
    super::as_stored("apps", "Deployment", &mut deployment);
    assert_eq!(
        Value::Object(deployment),
        // Fields without omitempty and struct fields are written even when unset: the
        // selector, the strategy, the template's metadata, the container's resources.
        json!({"metadata": {"labels": {"a": "b"}},
               "spec": {"selector": null, "strategy": {}, "template": {"metadata": {}, "spec": {"containers": [{"name": "a", "resources": {}}]}}},
               "status": {}})
    );
    let mut role: Object = json!({"rules": []}).as_object().cloned().unwrap();
    super::as_stored("rbac.authorization.k8s.io", "ClusterRole", &mut role);
    assert_eq!(Value::Object(role), json!({"metadata": {}, "rules": null}));
    let mut event = Object::new();
    super::as_stored("", "Event", &mut event);
    assert_eq!(
        Value::Object(event),
        json!({"metadata": {}, "eventTime": null, "firstTimestamp": null, "lastTimestamp": null,
               "involvedObject": {}, "reportingComponent": "", "reportingInstance": "",
               "source": {}})
    );
}

#[test]
fn fields_of_gates_that_are_off_are_dropped_from_pod_specs() {
    let pod = defaulted(
        "",
        "Pod",
        json!({"spec": {
            "containers": [
                {"name": "a", "image": "x:1", "lifecycle": {"stopSignal": "SIGUSR1"}},
                {"name": "b", "image": "x:1", "lifecycle": {"stopSignal": "SIGUSR1",
                    "preStop": {"exec": {"command": ["true"]}}}},
            ],
            "volumes": [{"name": "v", "projected": {"sources": [
                {"clusterTrustBundle": {"name": "ctb", "path": "ca.pem"}},
                {"configMap": {"name": "cm"}},
            ]}}],
        }}),
    );
    let spec = &pod["spec"];
    assert!(spec["containers"][0].get("lifecycle").is_none(), "{spec}");
    assert_eq!(
        spec["containers"][1]["lifecycle"],
        json!({"preStop": {"exec": {"command": ["true"]}}})
    );
    let sources = &spec["volumes"][0]["projected"]["sources"];
    assert!(sources[0].get("clusterTrustBundle").is_none(), "{sources}");
    assert_eq!(sources[1]["configMap"]["name"], "cm");
}
