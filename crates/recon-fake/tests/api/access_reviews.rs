//! The access reviews through `kube::Api`, decided by the RBAC rules stored in the server as
//! kube-apiserver's authorizer decides them: who may do what, and why.

use k8s_openapi::api::authorization::v1::{
    LocalSubjectAccessReview, ResourceAttributes, SelfSubjectAccessReview, SelfSubjectRulesReview,
    SelfSubjectRulesReviewSpec, SubjectAccessReview, SubjectAccessReviewSpec,
};
use k8s_openapi::api::rbac::v1::{PolicyRule, Role, RoleBinding, RoleRef, Subject};
use kube::Api;
use kube::api::{ObjectMeta, PostParams};
use recon_fake::ApiServer;

fn attributes(verb: &str, group: &str, resource: &str, sub: &str) -> ResourceAttributes {
    ResourceAttributes {
        namespace: Some("team".into()),
        verb: Some(verb.into()),
        group: Some(group.into()),
        resource: Some(resource.into()),
        subresource: (!sub.is_empty()).then(|| sub.into()),
        ..ResourceAttributes::default()
    }
}

/// A Role letting the `team/operator` service account update deployments' status.
async fn grant_status_updates(server: &ApiServer) {
    let roles: Api<Role> = Api::namespaced(server.client(), "team");
    let role = Role {
        metadata: ObjectMeta {
            name: Some("status-writer".into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["apps".into()]),
            resources: Some(vec!["deployments/status".into()]),
            verbs: vec!["update".into(), "patch".into()],
            ..PolicyRule::default()
        }]),
    };
    roles.create(&PostParams::default(), &role).await.unwrap();
    bind(
        server,
        "operator",
        ("Role", "status-writer"),
        ("ServiceAccount", "operator"),
    )
    .await;
}

/// Binds `role` (kind, name) to `subject` (kind, name) in `team`.
async fn bind(server: &ApiServer, name: &str, role: (&str, &str), subject: (&str, &str)) {
    let bindings: Api<RoleBinding> = Api::namespaced(server.client(), "team");
    let binding = RoleBinding {
        metadata: ObjectMeta {
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        role_ref: RoleRef {
            api_group: Some("rbac.authorization.k8s.io".into()),
            kind: role.0.into(),
            name: role.1.into(),
        },
        subjects: Some(vec![Subject {
            kind: subject.0.into(),
            name: subject.1.into(),
            ..Subject::default()
        }]),
    };
    bindings
        .create(&PostParams::default(), &binding)
        .await
        .unwrap();
}

async fn server_with_team() -> ApiServer {
    let server = ApiServer::new();
    grant_status_updates(&server).await;
    server
}

#[tokio::test]
async fn a_subject_access_review_names_the_binding_that_allows() {
    let server = server_with_team().await;
    let reviews: Api<SubjectAccessReview> = Api::all(server.client());
    let ask = |verb: &str, sub: &str| SubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some("system:serviceaccount:team:operator".into()),
            resource_attributes: Some(attributes(verb, "apps", "deployments", sub)),
            ..SubjectAccessReviewSpec::default()
        },
        ..SubjectAccessReview::default()
    };
    let allowed = reviews
        .create(&PostParams::default(), &ask("patch", "status"))
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(allowed.allowed);
    assert_eq!(
        allowed.reason.as_deref(),
        Some(
            "RBAC: allowed by RoleBinding \"operator/team\" of Role \"status-writer\" to \
             ServiceAccount \"operator/team\""
        )
    );
    // The deployment itself is another resource than its status.
    let refused = reviews
        .create(&PostParams::default(), &ask("patch", ""))
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(!refused.allowed);
    assert_eq!(refused.reason, None);
}

#[tokio::test]
async fn a_local_review_must_stay_in_its_namespace() {
    let server = server_with_team().await;
    let reviews: Api<LocalSubjectAccessReview> = Api::namespaced(server.client(), "team");
    let mut review = LocalSubjectAccessReview {
        spec: SubjectAccessReviewSpec {
            user: Some("system:serviceaccount:team:operator".into()),
            resource_attributes: Some(attributes("update", "apps", "deployments", "status")),
            ..SubjectAccessReviewSpec::default()
        },
        ..LocalSubjectAccessReview::default()
    };
    let status = reviews
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(status.allowed);
    if let Some(attributes) = review.spec.resource_attributes.as_mut() {
        attributes.namespace = Some("default".into());
    }
    let kube::Error::Api(refusal) = reviews
        .create(&PostParams::default(), &review)
        .await
        .unwrap_err()
    else {
        panic!("not an API error");
    };
    assert_eq!(refusal.code, 422);
    assert!(
        refusal
            .message
            .ends_with("spec.resourceAttributes.namespace: Invalid value: \"default\": must match metadata.namespace"),
        "{}",
        refusal.message
    );
}

#[tokio::test]
async fn the_requester_is_a_cluster_administrator() {
    let server = ApiServer::new();
    let own: Api<SelfSubjectAccessReview> = Api::all(server.client());
    let mut review = SelfSubjectAccessReview::default();
    review.spec.resource_attributes = Some(attributes(
        "escalate",
        "rbac.authorization.k8s.io",
        "roles",
        "",
    ));
    let status = own
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    assert!(status.allowed);
    let rules: Api<SelfSubjectRulesReview> = Api::all(server.client());
    let review = SelfSubjectRulesReview {
        spec: SelfSubjectRulesReviewSpec {
            namespace: Some("default".into()),
        },
        ..SelfSubjectRulesReview::default()
    };
    let status = rules
        .create(&PostParams::default(), &review)
        .await
        .unwrap()
        .status
        .unwrap();
    // cluster-admin's rule, from its binding to system:masters.
    assert!(status.resource_rules.iter().any(|rule| rule.verbs == ["*"]
        && rule.api_groups.as_deref() == Some(&["*".to_owned()][..])
        && rule.resources.as_deref() == Some(&["*".to_owned()][..])));
    assert!(!status.incomplete);
}

/// `client_as`: the operator's own account, authorized by the Role bound to it; what the Role
/// leaves out is the 403 a cluster gives.
#[tokio::test]
async fn a_client_acting_as_a_service_account_is_held_to_its_roles() {
    use k8s_openapi::api::apps::v1::Deployment;
    use kube::api::{Patch, PatchParams};
    use recon_fake::Identity;
    use serde_json::json;

    let server = server_with_team().await;
    let admin: Api<Deployment> = Api::namespaced(server.client(), "team");
    let deployment: Deployment = serde_json::from_value(json!({
        "metadata": {"name": "web"},
        "spec": {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}
    }))
    .unwrap();
    admin
        .create(&PostParams::default(), &deployment)
        .await
        .unwrap();
    let operator: Api<Deployment> = Api::namespaced(
        server.client_as(Identity::service_account("team", "operator")),
        "team",
    );
    let status = Patch::Merge(json!({"status": {"observedGeneration": 1}}));
    operator
        .patch_status("web", &PatchParams::default(), &status)
        .await
        .unwrap();
    let kube::Error::Api(refusal) = operator
        .patch(
            "web",
            &PatchParams::default(),
            &Patch::Merge(json!({"spec": {"replicas": 2}})),
        )
        .await
        .unwrap_err()
    else {
        panic!("not an API error");
    };
    assert_eq!(refusal.code, 403);
    assert_eq!(
        refusal.message,
        "deployments.apps \"web\" is forbidden: User \"system:serviceaccount:team:operator\" \
         cannot patch resource \"deployments\" in API group \"apps\" in the namespace \"team\""
    );
    // Reading is not granted either: not even the object it may write the status of.
    assert!(operator.get("web").await.is_err());
}

#[tokio::test]
async fn an_impersonated_user_sees_itself_in_its_reviews() {
    use k8s_openapi::api::authentication::v1::SelfSubjectReview;
    use recon_fake::Identity;

    let server = ApiServer::new();
    let client = server.client_as(
        Identity::user("alice")
            .group("team-a")
            .extra("scopes", "read"),
    );
    let review = Api::<SelfSubjectReview>::all(client)
        .create(&PostParams::default(), &SelfSubjectReview::default())
        .await
        .unwrap();
    let user = review.status.unwrap().user_info.unwrap();
    assert_eq!(user.username.as_deref(), Some("alice"));
    assert_eq!(
        user.groups.unwrap(),
        ["team-a".to_owned(), "system:authenticated".to_owned()]
    );
    assert_eq!(user.extra.unwrap()["scopes"], ["read".to_owned()]);
}

/// The bootstrap `edit` role holds its `aggregate-to-edit` parts' rules, as on a cluster whose
/// controller manager aggregated them: an editor may write ConfigMaps but not Roles.
#[tokio::test]
async fn a_user_bound_to_edit_may_do_what_edit_aggregates() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use recon_fake::Identity;

    let server = ApiServer::new();
    bind(&server, "editors", ("ClusterRole", "edit"), ("User", "dev")).await;
    let dev = server.client_as(Identity::user("dev"));
    let mut config = ConfigMap::default();
    config.metadata.name = Some("settings".into());
    Api::<ConfigMap>::namespaced(dev.clone(), "team")
        .create(&PostParams::default(), &config)
        .await
        .unwrap();
    let role = Role {
        metadata: ObjectMeta {
            name: Some("mine".into()),
            ..ObjectMeta::default()
        },
        rules: None,
    };
    let refused = Api::<Role>::namespaced(dev, "team")
        .create(&PostParams::default(), &role)
        .await
        .unwrap_err();
    assert!(
        matches!(refused, kube::Error::Api(ref s) if s.code == 403),
        "{refused}"
    );
}

/// An operator allowed to write Roles may not grant through one what it does not hold itself
/// (escalation prevention): the refusal lists the rules it lacks; once it may `escalate` that
/// Role, the write goes through.
#[tokio::test]
async fn a_role_granting_more_than_its_writer_holds_is_refused_with_the_missing_rules() {
    use recon_fake::Identity;

    let server = server_with_team().await;
    let roles: Api<Role> = Api::namespaced(server.client(), "team");
    let role_writer = Role {
        metadata: ObjectMeta {
            name: Some("role-writer".into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["rbac.authorization.k8s.io".into()]),
            resources: Some(vec!["roles".into()]),
            verbs: vec!["create".into()],
            ..PolicyRule::default()
        }]),
    };
    roles
        .create(&PostParams::default(), &role_writer)
        .await
        .unwrap();
    bind(
        &server,
        "role-writer",
        ("Role", "role-writer"),
        ("ServiceAccount", "operator"),
    )
    .await;
    let operator: Api<Role> = Api::namespaced(
        server.client_as(Identity::service_account("team", "operator")),
        "team",
    );
    let wide = Role {
        metadata: ObjectMeta {
            name: Some("wide".into()),
            ..ObjectMeta::default()
        },
        rules: Some(vec![PolicyRule {
            api_groups: Some(vec!["apps".into()]),
            resources: Some(vec!["deployments/status".into(), "deployments".into()]),
            verbs: vec!["update".into(), "delete".into()],
            ..PolicyRule::default()
        }]),
    };
    let refused = operator
        .create(&PostParams::default(), &wide)
        .await
        .unwrap_err();
    let kube::Error::Api(status) = refused else {
        panic!("not an API error: {refused}");
    };
    assert_eq!(status.code, 403);
    assert_eq!(
        status.message,
        "roles.rbac.authorization.k8s.io \"wide\" is forbidden: user \
         \"system:serviceaccount:team:operator\" (groups=[\"system:serviceaccounts\" \
         \"system:serviceaccounts:team\" \"system:authenticated\"]) is attempting to grant RBAC \
         permissions not currently held:\n\
         {APIGroups:[\"apps\"], Resources:[\"deployments\"], Verbs:[\"update\" \"delete\"]}\n\
         {APIGroups:[\"apps\"], Resources:[\"deployments/status\"], Verbs:[\"delete\"]}"
    );

    let mut escalating = role_writer.clone();
    escalating.metadata.name = Some("escalator".into());
    escalating.rules = Some(vec![PolicyRule {
        api_groups: Some(vec!["rbac.authorization.k8s.io".into()]),
        resources: Some(vec!["roles".into()]),
        verbs: vec!["escalate".into()],
        ..PolicyRule::default()
    }]);
    roles
        .create(&PostParams::default(), &escalating)
        .await
        .unwrap();
    bind(
        &server,
        "escalator",
        ("Role", "escalator"),
        ("ServiceAccount", "operator"),
    )
    .await;
    operator
        .create(&PostParams::default(), &wide)
        .await
        .unwrap();
}

/// A server that records nothing still authorizes an impersonated client: only the
/// administrator's requests skip the authorizer, and only when nothing is logged.
#[tokio::test]
async fn without_a_request_log_an_impersonated_client_is_still_authorized() {
    use k8s_openapi::api::core::v1::ConfigMap;
    use recon_fake::Identity;

    let server = ApiServer::builder().record_requests(false).build();
    let mut config = ConfigMap::default();
    config.metadata.name = Some("settings".into());
    Api::<ConfigMap>::namespaced(server.client(), "team")
        .create(&PostParams::default(), &config)
        .await
        .unwrap();
    let refused = Api::<ConfigMap>::namespaced(server.client_as(Identity::user("dev")), "team")
        .get("settings")
        .await
        .unwrap_err();
    assert!(
        matches!(refused, kube::Error::Api(ref s) if s.code == 403),
        "{refused}"
    );
    assert!(server.requests().is_empty());
}
