//! The whole controller, run until it settles after each of a user's changes.

use bulletin_controller::RETRY;
use recon_testing::explore::UserAction;
use serde_json::json;

use crate::scenario::{bulletin, controller};

#[test]
fn a_posted_bulletin_is_applied_for_the_default_audience_then_archived() {
    let posted = controller()
        .action(UserAction::create(&bulletin(
            json!({"message": "lunch at noon"}),
        )))
        .settle();
    posted.assert_settled();
    let stored = posted
        .world()
        .get("examples.recon.dev/v1", "Bulletin", Some("default"), "news")
        .expect("the bulletin")
        .clone();
    assert_eq!(
        stored["metadata"]["finalizers"],
        json!(["bulletins.examples.recon.dev/withdraw"])
    );
    assert_eq!(
        stored["status"],
        json!({"posted": true, "audience": "staff"})
    );
    posted.assert_object(&json!({"apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": "news-bulletin", "namespace": "default",
                     "ownerReferences": [{"apiVersion": "examples.recon.dev/v1",
                                          "kind": "Bulletin", "name": "news",
                                          "uid": stored["metadata"]["uid"],
                                          "controller": true}]},
        "data": {"message": "lunch at noon", "audience": "staff"}}));

    let archived = controller()
        .action(UserAction::create(&bulletin(
            json!({"message": "lunch at noon"}),
        )))
        .action(UserAction::patch(&bulletin(json!({"archived": true}))))
        .settle();
    archived.assert_settled();
    let config_map = archived
        .world()
        .get("v1", "ConfigMap", Some("default"), "news-bulletin")
        .expect("the ConfigMap");
    assert!(config_map.get("data").is_none(), "{config_map}");
}

#[test]
fn a_deleted_bulletin_is_withdrawn_and_leaves_nothing() {
    let settled = crate::scenario::post_archive_delete(controller()).settle();
    settled
        .assert_settled()
        .assert_absent(&bulletin(json!({})))
        .assert_absent(&json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "news-bulletin", "namespace": "default"}}));
    // The finalizer came off (the bulletin's last patch, not its status's) after the
    // withdrawal was recorded (the last event).
    let writes = settled.writes();
    let last = |prefix: &str| writes.iter().rposition(|w| w.starts_with(prefix));
    let withdrawn = last("POST events.k8s.io/v1 events default/");
    let unfinalized = last("PATCH examples.recon.dev/v1 bulletins default/news,");
    assert!(
        withdrawn.is_some() && withdrawn < unfinalized,
        "{writes:#?}"
    );
}

#[test]
fn the_controller_settles_where_each_user_day_leads() {
    use recon_testing::explore::{SettleCase, SettleTests};

    let config_map = |data: serde_json::Value| {
        let mut object = json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "news-bulletin", "namespace": "default",
                         "ownerReferences": [{"apiVersion": "examples.recon.dev/v1",
                                              "kind": "Bulletin", "name": "news",
                                              "controller": true}]}});
        if !data.is_null() {
            object["data"] = data;
        }
        object
    };
    let create = |spec| UserAction::create(&bulletin(spec));
    SettleTests::new()
        .case(
            "a bulletin naming its audience",
            SettleCase::new()
                .action(create(
                    json!({"message": "fire drill", "audience": "everyone"}),
                ))
                .expect_object(&config_map(
                    json!({"message": "fire drill", "audience": "everyone"}),
                )),
        )
        .case(
            "a bulletin created archived is never posted",
            SettleCase::new()
                .action(create(json!({"message": "old news", "archived": true})))
                .expect_object(&config_map(serde_json::Value::Null)),
        )
        .case(
            "an empty message is retried, never posted",
            SettleCase::new()
                .action(create(json!({"message": " "})))
                .expect_absent(&config_map(serde_json::Value::Null))
                .expect_problem("[Stuck] a reconcile fails forever")
                .expect_problem("has an empty message"),
        )
        // Past three retries of a failing reconcile (every `RETRY`), which make it stuck.
        .run(|| controller().quiet_for(3 * RETRY));
}
