//! The scenario: install the CRDs, start the operators, create a Gateway and a Function, edit
//! what they depend on, ask the admission webhooks, delete, stop.

use std::fmt::Debug;
use std::future::Future;

use admission_webhook::{MUTATE_PATH, VALIDATE_PATH, WebhookClient, webhook_server, widget_review};
use function_operator::{Function, FunctionSpec};
use gateway_operator::{Gateway, GatewaySpec, SETTINGS_HASH_ANNOTATION};
use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use kube::api::{DeleteParams, Patch, PatchParams, PostParams};
use kube::{Api, CustomResourceExt, Resource};
use recon_core::admission::SelfSignedCertificate;
use serde_json::{Value, json};
use tokio::sync::watch;

use crate::kubelet;
use crate::observe::{describe_conditions, others_events};
use crate::operators::{self, Activity, Operator};
use crate::output::Output;
use crate::summary::{StepReport, Summary};
use crate::target::Target;
use crate::{DemoError, WAIT};

/// The namespace the demo's objects live in.
pub const NAMESPACE: &str = "recon-demo";

/// The controller names the operators publish their events as.
const OPERATORS: [&str; 2] = ["function-operator", "gateway-operator"];

/// The scenario as it runs.
struct Demo<'a> {
    target: &'a Target,
    user: kube::Client,
    output: Output,
    activity: Activity,
    summary: Summary,
}

/// Plays the scenario on `target`; what happens is printed as it happens (through
/// `tracing`), and the summary returned, with the transcript of what was printed.
pub async fn run(target: &Target) -> Result<Summary, DemoError> {
    let output = Output::default();
    let mut demo = Demo {
        target,
        user: target.user_client(),
        activity: Activity::new(output.clone(), target.server().cloned()),
        output,
        summary: Summary {
            target: if target.is_in_memory() {
                "the in-memory API server".to_owned()
            } else {
                "a cluster".to_owned()
            },
            ..Summary::default()
        },
    };
    let (stop, stopping) = watch::channel(false);

    demo.announce("install the CRDs and the namespace");
    for crd in [
        function_operator::crd(),
        gateway_operator::crd(),
        admission_webhook::Widget::crd(),
    ] {
        target.install_crd(&crd).await?;
    }
    demo.ensure_namespace().await?;
    demo.end_step("install the CRDs and the namespace");

    demo.announce("start the operators under kube's Controller");
    // Each runs as its service account, with the rights its own RBAC manifest grants.
    let function_controller = operators::start(
        Operator::new(OPERATORS[0], &demo.activity),
        function_operator::reconciler,
        &target
            .operator_client(function_operator::RBAC_MANIFEST)
            .await?,
        NAMESPACE,
        stopping.clone(),
    );
    let gateway_controller = operators::start(
        Operator::new(OPERATORS[1], &demo.activity),
        gateway_operator::reconciler,
        &target
            .operator_client(gateway_operator::RBAC_MANIFEST)
            .await?,
        NAMESPACE,
        stopping.clone(),
    );
    let kubelet = match target {
        Target::Cluster(client, _) if kubelet::has_no_nodes(client).await => {
            demo.output
                .note("the cluster has no nodes: the demo plays the kubelet for its Pods");
            Some(kubelet::spawn(
                demo.user.clone(),
                NAMESPACE,
                demo.output.clone(),
                stopping.clone(),
            ))
        }
        _ => None,
    };
    let _others = others_events(
        demo.user.clone(),
        NAMESPACE,
        &OPERATORS,
        demo.output.clone(),
    );
    demo.end_step("start the operators under kube's Controller");

    demo.gateway().await?;
    demo.function().await?;
    demo.webhooks().await?;
    demo.delete_function().await?;

    demo.announce("stop the operators");
    let _ = stop.send(true);
    for task in [function_controller, gateway_controller]
        .into_iter()
        .chain(kubelet)
    {
        let _ = task.await;
    }
    demo.end_step("stop the operators");
    demo.summary.events = demo.activity.events();
    demo.summary.transcript = demo.output.transcript();
    Ok(demo.summary)
}

impl Demo<'_> {
    fn announce(&self, step: &str) {
        self.output.step(step);
    }

    /// Ends the step `name`, with the writes the operators sent in it.
    fn end_step(&mut self, name: &str) {
        self.summary.steps.push(StepReport {
            name: name.to_owned(),
            writes: self.activity.take_step_writes(),
        });
    }

    async fn ensure_namespace(&self) -> Result<(), DemoError> {
        let namespaces: Api<Namespace> = Api::all(self.user.clone());
        let namespace: Namespace =
            serde_json::from_value(json!({"metadata": {"name": NAMESPACE}})).unwrap_or_default();
        let params = PatchParams::apply("recon-demo");
        namespaces
            .patch(NAMESPACE, &params, &Patch::Apply(&namespace))
            .await
            .map_err(|e| DemoError::kube("creating the namespace", e))?;
        Ok(())
    }

    /// A Gateway and its settings; then the settings change and its Deployment rolls.
    async fn gateway(&mut self) -> Result<(), DemoError> {
        let step = "create the gateway's settings and a Gateway";
        self.announce(step);
        let configmaps: Api<ConfigMap> = Api::namespaced(self.user.clone(), NAMESPACE);
        let gateways: Api<Gateway> = Api::namespaced(self.user.clone(), NAMESPACE);
        let settings: ConfigMap = serde_json::from_value(json!({
            "metadata": {"name": "edge-settings"},
            "data": {"listen": ":8443", "upstream": "http://hello.recon-demo.svc", "timeout": "5s"},
        }))
        .unwrap_or_default();
        configmaps
            .create(&PostParams::default(), &settings)
            .await
            .map_err(|e| DemoError::kube(step, e))?;
        let mut gateway = Gateway::new(
            "edge",
            GatewaySpec {
                settings: "edge-settings".to_owned(),
                replicas: Some(2),
                image: None,
                pod_labels: None,
            },
        );
        gateway.metadata.namespace = Some(NAMESPACE.to_owned());
        gateways
            .create(&PostParams::default(), &gateway)
            .await
            .map_err(|e| DemoError::kube(step, e))?;
        let first = self.gateway_rollout(None).await?;
        self.end_step(step);

        let step = "change the gateway's settings: its Deployment rolls";
        self.announce(step);
        configmaps
            .patch(
                "edge-settings",
                &PatchParams::default(),
                &Patch::Merge(json!({"data": {"timeout": "30s"}})),
            )
            .await
            .map_err(|e| DemoError::kube(step, e))?;
        let second = self.gateway_rollout(Some(&first)).await?;
        self.end_step(step);
        self.summary.state.push(format!(
            "Gateway edge: {} (settings hash changed: {})",
            conditions_of(&gateways, "edge").await?,
            first != second
        ));
        Ok(())
    }

    /// Waits until the Gateway's Deployment carries a settings hash other than `previous`, makes
    /// it available (in memory), and waits for the Gateway to be ready; returns the hash.
    async fn gateway_rollout(&self, previous: Option<&str>) -> Result<String, DemoError> {
        let gateways: Api<Gateway> = Api::namespaced(self.user.clone(), NAMESPACE);
        let deployments: Api<Deployment> = Api::namespaced(self.user.clone(), NAMESPACE);
        let name = wait_for("the Gateway to name its Deployment", || async {
            gateways
                .get_opt("edge")
                .await
                .ok()
                .flatten()
                .and_then(|g| g.status.and_then(|s| s.deployment_name))
        })
        .await?;
        let hash = wait_for(
            "the gateway's Deployment to carry the settings hash",
            || async {
                deployments
                    .get_opt(&name)
                    .await
                    .ok()
                    .flatten()
                    .and_then(|d| template_annotation(&d, SETTINGS_HASH_ANNOTATION))
                    .filter(|hash| Some(hash.as_str()) != previous)
            },
        )
        .await?;
        self.operators_finish().await;
        let short: String = hash.chars().take(12).collect();
        self.output
            .note(format!("rollout Deployment {name}: settings hash {short}…"));
        self.play_deployment_controller(&name).await?;
        let gateway_ready = || async {
            let gateway = gateways.get_opt("edge").await.ok().flatten()?;
            is_ready(&gateway).then_some(())
        };
        wait_for("the Gateway to be ready", gateway_ready).await?;
        // On a cluster the Deployment controller goes on after the Deployment first reads
        // Available (the old pods still terminating), and the Gateway follows each status it
        // writes: the step ends once the rollout is complete and the Gateway has seen it.
        wait_for("the gateway's rollout to complete", || async {
            let deployment = deployments.get_opt(&name).await.ok().flatten()?;
            rollout_complete(&deployment).then_some(())
        })
        .await?;
        wait_for("the Gateway to be ready", gateway_ready).await?;
        self.activity.settle().await;
        Ok(hash)
    }

    /// A Function: its children and its readiness; then a new image.
    async fn function(&mut self) -> Result<(), DemoError> {
        let step = "create a Function";
        self.announce(step);
        let functions: Api<Function> = Api::namespaced(self.user.clone(), NAMESPACE);
        let mut function = Function::new(
            "hello",
            FunctionSpec {
                image: "example/hello:1.0".to_owned(),
                replicas: Some(1),
                port: None,
                env: [("GREETING".to_owned(), "hello".to_owned())].into(),
                configs: [(
                    "routes".to_owned(),
                    [("default".to_owned(), "/ -> hello".to_owned())].into(),
                )]
                .into(),
            },
        );
        function.metadata.namespace = Some(NAMESPACE.to_owned());
        functions
            .create(&PostParams::default(), &function)
            .await
            .map_err(|e| DemoError::kube(step, e))?;
        self.function_rollout("docker.io/example/hello:1.0").await?;
        self.end_step(step);

        let step = "change the Function's image";
        self.announce(step);
        functions
            .patch(
                "hello",
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"image": "example/hello:2.0"}})),
            )
            .await
            .map_err(|e| DemoError::kube(step, e))?;
        self.function_rollout("docker.io/example/hello:2.0").await?;
        self.end_step(step);
        let function = functions
            .get("hello")
            .await
            .map_err(|e| DemoError::kube("reading the Function", e))?;
        let status = function.status.clone().unwrap_or_default();
        self.summary.state.push(format!(
            "Function hello: {}; image {}; url {}",
            describe_conditions(&serde_json::to_value(&function).unwrap_or_default()),
            status.resolved_image.unwrap_or_default(),
            status.url.unwrap_or_default()
        ));
        Ok(())
    }

    /// Waits until the Function's Deployment runs `image`, makes it available (in memory), and
    /// waits for the Function to be ready.
    async fn function_rollout(&self, image: &str) -> Result<(), DemoError> {
        let functions: Api<Function> = Api::namespaced(self.user.clone(), NAMESPACE);
        let deployments: Api<Deployment> = Api::namespaced(self.user.clone(), NAMESPACE);
        wait_for("the Function's Deployment to run its image", || async {
            let deployment = deployments.get_opt("hello").await.ok().flatten()?;
            let value = serde_json::to_value(&deployment).ok()?;
            (value.pointer("/spec/template/spec/containers/0/image")? == image).then_some(())
        })
        .await?;
        self.operators_finish().await;
        self.output
            .note(format!("rollout Deployment hello: image {image}"));
        self.play_deployment_controller("hello").await?;
        wait_for("the Function to be ready", || async {
            let function = functions.get_opt("hello").await.ok().flatten()?;
            let ready = is_ready(&function);
            let current = function
                .status
                .as_ref()
                .and_then(|s| s.resolved_image.as_deref())
                == Some(image);
            (ready && current).then_some(())
        })
        .await?;
        self.activity.settle().await;
        Ok(())
    }

    /// In memory, the played Deployment controller waits until the operators have finished what
    /// they do with the change (their status, their events): what happens then prints in the
    /// same order on every run. A cluster's own controller waits for nobody.
    async fn operators_finish(&self) {
        if self.target.is_in_memory() {
            self.activity.settle().await;
        }
    }

    /// In memory, reports the Deployment `name` available, as kube-controller-manager's
    /// Deployment controller would once its pods run. On a cluster, the cluster does it.
    async fn play_deployment_controller(&self, name: &str) -> Result<(), DemoError> {
        if !self.target.is_in_memory() {
            return Ok(());
        }
        let deployments: Api<Deployment> = Api::namespaced(self.user.clone(), NAMESPACE);
        let step = format!("reporting the Deployment {name} available");
        let deployment = deployments
            .get(name)
            .await
            .map_err(|e| DemoError::kube(&step, e))?;
        // Read through JSON: `Deployment.spec` is optional or not depending on the Kubernetes
        // version k8s-openapi is built for.
        let replicas = serde_json::to_value(&deployment)
            .ok()
            .and_then(|d| d.pointer("/spec/replicas").and_then(Value::as_i64))
            .unwrap_or(1);
        let status = json!({"status": {
            "observedGeneration": deployment.metadata.generation,
            "replicas": replicas, "updatedReplicas": replicas,
            "readyReplicas": replicas, "availableReplicas": replicas,
            "conditions": [{"type": "Available", "status": "True",
                            "reason": "MinimumReplicasAvailable", "message": "Deployment has minimum availability."}],
        }});
        // Said before it is done: the reconcile it causes may end before the write returns.
        self.output.note(format!(
            "(playing the Deployment controller) Deployment {name}: {replicas} available"
        ));
        deployments
            .patch_status(name, &PatchParams::default(), &Patch::Merge(status))
            .await
            .map_err(|e| DemoError::kube(&step, e))?;
        Ok(())
    }

    /// Starts the admission webhooks over HTTPS and asks them about two widgets.
    async fn webhooks(&mut self) -> Result<(), DemoError> {
        let step = "ask the admission webhooks over HTTPS";
        self.announce(step);
        let webhook_error = |e: &dyn std::fmt::Display| DemoError::Webhook(e.to_string());
        let certificate =
            SelfSignedCertificate::generate(&["127.0.0.1"]).map_err(|e| webhook_error(&e))?;
        let tls = certificate.tls_config().map_err(|e| webhook_error(&e))?;
        let server = webhook_server(tls, self.target.client())
            .start(([127, 0, 0, 1], 0).into())
            .await
            .map_err(|e| webhook_error(&e))?;
        let client = WebhookClient::trusting(server.local_addr(), certificate.cert_pem())
            .map_err(|e| webhook_error(&*e))?;
        for (path, spec) in [
            (MUTATE_PATH, json!({"team": "blue"})),
            (VALIDATE_PATH, json!({"size": 50})),
        ] {
            let widget = json!({"apiVersion": "example.com/v1", "kind": "Widget",
                                "metadata": {"name": "widget", "namespace": NAMESPACE}, "spec": spec});
            let review = widget_review("demo-1", "CREATE", Some(widget), None);
            let answer = client
                .post_json(path, review.to_string())
                .await
                .map_err(|e| webhook_error(&*e))?;
            let answer: Value =
                serde_json::from_slice(answer.body()).map_err(|e| webhook_error(&e))?;
            let line = describe_answer(path, &spec, &answer);
            self.output.note(format!("webhook {line}"));
            self.summary.webhooks.push(line);
        }
        server.shutdown().await;
        self.end_step(step);
        Ok(())
    }

    /// Deletes the Function: its children go with it (their owner references).
    async fn delete_function(&mut self) -> Result<(), DemoError> {
        let step = "delete the Function: its children are garbage collected";
        self.announce(step);
        let functions: Api<Function> = Api::namespaced(self.user.clone(), NAMESPACE);
        functions
            .delete("hello", &DeleteParams::default())
            .await
            .map_err(|e| DemoError::kube(step, e))?;
        if let Target::InMemory(server) = self.target {
            // kube-controller-manager's garbage collector, played on request.
            let collected = server.collect_garbage();
            self.output.note(format!(
                "(playing the garbage collector) removed {} objects",
                collected.removed().len()
            ));
        }
        let deployments: Api<Deployment> = Api::namespaced(self.user.clone(), NAMESPACE);
        wait_for("the Function's Deployment to be collected", || async {
            matches!(deployments.get_opt("hello").await, Ok(None)).then_some(())
        })
        .await?;
        self.end_step(step);
        self.summary.state.push(
            "Function hello: deleted; its Deployment, Service and ConfigMaps collected".to_owned(),
        );
        Ok(())
    }
}

/// Polls `check` until it gives a value, for at most [`WAIT`].
pub(crate) async fn wait_for<T, F, Fut>(what: &str, check: F) -> Result<T, DemoError>
where
    F: Fn() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let poll = async {
        loop {
            if let Some(value) = check().await {
                return value;
            }
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
    };
    tokio::time::timeout(WAIT, poll)
        .await
        .map_err(|_| DemoError::Timeout {
            what: what.to_owned(),
        })
}

/// Whether a Deployment's controller has caught up with its spec and every replica is the new,
/// available one (read through JSON: `Deployment.spec` is optional or not depending on the
/// Kubernetes version k8s-openapi is built for).
fn rollout_complete(deployment: &Deployment) -> bool {
    let Ok(value) = serde_json::to_value(deployment) else {
        return false;
    };
    let int = |pointer: &str| value.pointer(pointer).and_then(Value::as_i64);
    let wanted = int("/spec/replicas").unwrap_or(1);
    int("/status/observedGeneration") >= int("/metadata/generation")
        && [
            "/status/replicas",
            "/status/updatedReplicas",
            "/status/availableReplicas",
        ]
        .iter()
        .all(|p| int(p).unwrap_or(0) == wanted)
}

fn template_annotation(deployment: &Deployment, key: &str) -> Option<String> {
    let value = serde_json::to_value(deployment).ok()?;
    value
        .pointer("/spec/template/metadata/annotations")?
        .get(key)?
        .as_str()
        .map(str::to_owned)
}

fn is_ready<K: serde::Serialize>(object: &K) -> bool {
    let value = serde_json::to_value(object).unwrap_or_default();
    value
        .pointer("/status/conditions")
        .and_then(Value::as_array)
        .is_some_and(|conditions| {
            conditions
                .iter()
                .any(|c| c["type"] == "Ready" && c["status"] == "True")
        })
}

async fn conditions_of<K>(api: &Api<K>, name: &str) -> Result<String, DemoError>
where
    K: Resource + Clone + Debug + serde::de::DeserializeOwned + serde::Serialize,
{
    let object = api
        .get(name)
        .await
        .map_err(|e| DemoError::kube(&format!("reading {name}"), e))?;
    Ok(describe_conditions(
        &serde_json::to_value(&object).unwrap_or_default(),
    ))
}

/// `/mutate {"team":"blue"}: allowed, patch add /metadata/labels, add /spec/size`.
fn describe_answer(path: &str, spec: &Value, answer: &Value) -> String {
    let response = &answer["response"];
    let decision = if response["allowed"] == true {
        "allowed".to_owned()
    } else {
        format!(
            "refused {} ({})",
            response["status"]["code"],
            response["status"]["message"].as_str().unwrap_or("")
        )
    };
    let patch = match response.get("patch").and_then(Value::as_str) {
        None => String::new(),
        Some(encoded) => decode_patch(encoded)
            .map(|ops| {
                let ops: Vec<String> = ops
                    .iter()
                    .map(|op| {
                        format!(
                            "{} {}",
                            op["op"].as_str().unwrap_or("?"),
                            op["path"].as_str().unwrap_or("?")
                        )
                    })
                    .collect();
                format!(", patch {}", ops.join(", "))
            })
            .unwrap_or_else(|e| format!(", a patch that does not decode: {e}")),
    };
    format!("{path} spec {spec}: {decision}{patch}")
}

/// The RFC 6902 operations of a base64 `patch`, as kube-apiserver reads it.
fn decode_patch(encoded: &str) -> Result<Vec<Value>, String> {
    use base64::Engine as _;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|e| e.to_string())?;
    serde_json::from_slice(&bytes).map_err(|e| e.to_string())
}
