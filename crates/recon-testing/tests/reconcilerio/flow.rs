//! `reconcilers/flow_test.go`: `IfThen`, `While`, `ForEach`, `TryCatch` and `OverrideSetup`
//! reconciling a [`TestResource`] as sub-reconcilers.
//!
//! Go's `RequeueAfter: n` (nanoseconds) is [`nanos`]`(n)` here.
//!
//! Skipped (Go-only mechanics):
//! - `TestIfThen_Validate`, `TestWhile_Validate`, `TestForEach_Validate`,
//!   `TestTryCatch_Validate`, `TestOverrideSetup_Validate`: `Validate` checks required fields
//!   set at runtime; recon's constructors take them, so a missing one does not compile.
//!
//! Adapted: `TestForEach` iterates the containers of `spec.template`, a field the Rust
//! `TestResource` leaves out; the containers come from the case's metadata instead, and the
//! expected resource has no template.

use std::time::Duration;

use kube::CustomResourceExt;
use recon_core::{
    Error, ForEach, IfThen, Outcome, OverrideSetup, SubReconciler, SyncReconciler, TryCatch, While,
};
use recon_testing::{ErrorSpec, SubReconcilerTests, TestCase, TestEnv};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::test_resource::{TestResource, TestResourceStatus, test_resource};

/// Go's `time.Duration(n)`.
pub fn nanos(n: u64) -> Duration {
    Duration::from_nanos(n)
}

fn sub_tests() -> SubReconcilerTests {
    SubReconcilerTests::new().crd(&TestResource::crd())
}

/// The case's `key` metadata as a string, if any.
fn meta_str<'a>(env: &'a TestEnv, key: &str) -> Option<&'a str> {
    env.metadata(key).and_then(Value::as_str)
}

/// [`test_resource`] with these spec fields.
fn with_spec(fields: &[(&str, &str)]) -> TestResource {
    let mut r = test_resource();
    for (k, v) in fields {
        r.spec.fields.insert((*k).to_owned(), (*v).to_owned());
    }
    r
}

/// [`test_resource`] with these status fields.
fn with_status(fields: &[(&str, &str)]) -> TestResource {
    let mut r = test_resource();
    let status = r.status.get_or_insert_with(TestResourceStatus::default);
    for (k, v) in fields {
        status.fields.insert((*k).to_owned(), (*v).to_owned());
    }
    r
}

/// A step setting `spec.fields[field] = called` and returning `RequeueAfter: delay`, failing
/// with the case's `error_key` metadata if there is one.
fn sets(field: &'static str, delay: u64, error: Option<String>) -> SyncReconciler<TestResource> {
    SyncReconciler::<TestResource>::new(field).sync_with(
        (field, delay, error),
        async |_, &(field, delay, ref error), r| {
            r.spec.fields.insert(field.to_owned(), "called".to_owned());
            let outcome = Outcome::requeue_after(nanos(delay));
            match error {
                Some(e) => Err(Error::msg(e).with_outcome(outcome)),
                None => Ok(outcome),
            }
        },
    )
}

#[test]
fn if_then() {
    let case = |condition: bool| {
        TestCase::sub_reconcile(&test_resource()).metadata("Condition", &condition)
    };
    let errors = |c: TestCase| {
        c.metadata("ThenError", &"then error")
            .metadata("ElseError", &"else error")
    };
    sub_tests()
        .case(
            "then",
            case(true)
                .expect_resource(&with_spec(&[("then", "called")]))
                .expect_result(Outcome::requeue_after(nanos(1))),
        )
        .case(
            "then error",
            errors(case(true))
                .expect_resource(&with_spec(&[("then", "called")]))
                .expect_error("then error")
                .expect_result(Outcome::requeue_after(nanos(1))),
        )
        .case(
            "else",
            case(false)
                .expect_resource(&with_spec(&[("else", "called")]))
                .expect_result(Outcome::requeue_after(nanos(2))),
        )
        .case(
            "else error",
            errors(case(false))
                .expect_resource(&with_spec(&[("else", "called")]))
                .expect_error("else error")
                .expect_result(Outcome::requeue_after(nanos(2))),
        )
        .run(|env| {
            let condition = env
                .metadata("Condition")
                .and_then(Value::as_bool)
                .unwrap_or_default();
            let then_error = meta_str(env, "ThenError").map(str::to_owned);
            let else_error = meta_str(env, "ElseError").map(str::to_owned);
            IfThen::new(
                "IfThen",
                move |_, _: &TestResource| condition,
                sets("then", 1, then_error),
            )
            .otherwise(sets("else", 2, else_error))
        });
}

#[test]
fn while_loop() {
    let iterations =
        |n: usize| TestCase::sub_reconcile(&test_resource()).metadata("Iterations", &n);
    sub_tests()
        .case(
            "return immediately",
            iterations(0)
                .expect_resource(&test_resource())
                .expect_result(Outcome::done()),
        )
        .case(
            "return after 10 iterations",
            iterations(10)
                .expect_resource(&with_spec(&[("iterations", "10")]))
                .expect_result(Outcome::requeue_after(nanos(990))),
        )
        .case(
            "halt after default max iterations",
            iterations(1000)
                .expect_resource(&with_spec(&[("iterations", "100")]))
                .expect_error("exceeded max iterations: 100")
                .expect_result(Outcome::requeue_after(nanos(900))),
        )
        .case(
            "return before custom max iterations",
            iterations(5)
                .metadata("MaxIterations", &10)
                .expect_resource(&with_spec(&[("iterations", "5")]))
                .expect_result(Outcome::requeue_after(nanos(995))),
        )
        .case(
            "halt after custom max iterations",
            iterations(1000)
                .metadata("MaxIterations", &10)
                .expect_resource(&with_spec(&[("iterations", "10")]))
                .expect_error("exceeded max iterations: 10")
                .expect_result(Outcome::requeue_after(nanos(990))),
        )
        .run(|env| {
            let desired = env
                .metadata("Iterations")
                .and_then(Value::as_u64)
                .unwrap_or_default() as usize;
            let body = SyncReconciler::<TestResource>::new("Iterate").sync(async |ctx, r| {
                let i = While::<TestResource>::iteration(ctx).unwrap_or_default() + 1;
                r.spec.fields.insert("iterations".to_owned(), i.to_string());
                Ok(Outcome::requeue_after(nanos(1000 - i as u64)))
            });
            let looped = While::new(
                "While",
                move |ctx, _: &TestResource| {
                    While::<TestResource>::iteration(ctx).unwrap_or_default() != desired
                },
                body,
            );
            match env.metadata("MaxIterations").and_then(Value::as_u64) {
                Some(max) => looped.max_iterations(Some(max as usize)),
                None => looped,
            }
        });
}

/// The part of a Go `corev1.Container` the `TestForEach` case reads.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
struct Container {
    name: String,
    image: String,
}

fn containers(list: &[(&str, &str)]) -> Vec<Container> {
    list.iter()
        .map(|(name, image)| Container {
            name: (*name).to_owned(),
            image: (*image).to_owned(),
        })
        .collect()
}

#[test]
fn for_each() {
    let case = |list: &[(&str, &str)]| {
        TestCase::sub_reconcile(&test_resource()).metadata("Containers", &containers(list))
    };
    sub_tests()
        .case(
            "empty items",
            TestCase::sub_reconcile(&test_resource()).expect_resource(&test_resource()),
        )
        .case(
            "each container",
            case(&[("hello", "world"), ("foo", "bar")])
                .expect_resource(&with_status(&[("hello", "world-0-2"), ("foo", "bar-1-2")])),
        )
        .case(
            "terminate iteration on error",
            case(&[("hello", "world"), ("die", "die"), ("foo", "bar")])
                .expect_resource(&with_status(&[("hello", "world-0-3")]))
                .expect_error(""),
        )
        .run(|env| {
            let list: Vec<Container> = env
                .metadata("Containers")
                .map(|v| serde_json::from_value(v.clone()).expect("containers"))
                .unwrap_or_default();
            let each = SyncReconciler::<TestResource>::new("Each").sync(async |ctx, r| {
                let cursor = ForEach::<TestResource, Container>::cursor(ctx)
                    .ok_or_else(|| Error::msg("no cursor"))?;
                if cursor.item.name == "die" {
                    return Err(Error::msg("exit early"));
                }
                r.status.get_or_insert_default().fields.insert(
                    cursor.item.name.clone(),
                    format!("{}-{}-{}", cursor.item.image, cursor.index, cursor.length),
                );
                Ok(())
            });
            ForEach::new("ForEach", move |_, _: &TestResource| Ok(list.clone()), each)
        });
}

#[test]
fn try_catch() {
    let all = |c: TestCase| {
        c.expect_resource(&with_spec(&[
            ("try", "called"),
            ("catch", "called"),
            ("finally", "called"),
        ]))
    };
    let try_and_catch =
        |c: TestCase| c.expect_resource(&with_spec(&[("try", "called"), ("catch", "called")]));
    let case = |catch: &str| TestCase::sub_reconcile(&test_resource()).metadata("Catch", &catch);
    sub_tests()
        .case(
            "catch rethrow",
            try_and_catch(case("rethrow").metadata("TryError", &"try"))
                .expect_error("try")
                .expect_result(Outcome::requeue_after(nanos(3))),
        )
        .case(
            "catch and suppress error",
            try_and_catch(case("suppress").metadata("TryError", &"try"))
                .expect_result(Outcome::requeue_after(nanos(3))),
        )
        .case(
            "catch and inject error",
            try_and_catch(case("inject"))
                .expect_error("catch")
                .expect_result(Outcome::requeue_after(nanos(2))),
        )
        .case(
            "finally",
            all(case("rethrow").metadata("Finally", &true))
                .expect_result(Outcome::requeue_after(nanos(1))),
        )
        .case(
            "finally with try error",
            all(case("rethrow")
                .metadata("TryError", &"try")
                .metadata("Finally", &true))
            .expect_error("try")
            .expect_result(Outcome::requeue_after(nanos(1))),
        )
        .case(
            "finally error overrides try error",
            all(case("rethrow")
                .metadata("TryError", &"try")
                .metadata("Finally", &true)
                .metadata("FinallyError", &"finally"))
            .expect_error(ErrorSpec::exactly("finally"))
            .expect_result(Outcome::requeue_after(nanos(1))),
        )
        .run(|env| {
            let try_error = meta_str(env, "TryError").map(str::to_owned);
            let finally_error = meta_str(env, "FinallyError").map(str::to_owned);
            let tried = TryCatch::new("TryCatch", sets("try", 3, try_error));
            let caught = match meta_str(env, "Catch") {
                Some("rethrow") => tried.catch(async |_, r, result| {
                    r.spec
                        .fields
                        .insert("catch".to_owned(), "called".to_owned());
                    result
                }),
                Some("suppress") => tried.catch(async |_, r, result| {
                    r.spec
                        .fields
                        .insert("catch".to_owned(), "called".to_owned());
                    Ok(result.unwrap_or_else(|err| err.outcome()))
                }),
                Some("inject") => tried.catch(async |_, r, _| {
                    r.spec
                        .fields
                        .insert("catch".to_owned(), "called".to_owned());
                    Err(Error::msg("catch").with_outcome(Outcome::requeue_after(nanos(2))))
                }),
                _ => tried,
            };
            if env.metadata("Finally").is_some() {
                caught.finally(sets("finally", 1, finally_error))
            } else {
                caught
            }
        });
}

#[test]
fn override_setup() {
    sub_tests()
        .case(
            "calls reconcile",
            TestCase::sub_reconcile(&test_resource())
                .expect_resource(&with_spec(&[("reconciler", "called")]))
                .expect_result(Outcome::requeue()),
        )
        .run(|_| {
            let nested =
                SyncReconciler::<TestResource>::new("SyncReconciler").sync(async |_, r| {
                    r.spec
                        .fields
                        .insert("reconciler".to_owned(), "called".to_owned());
                    Ok(Outcome::requeue())
                });
            // Go's nested reconciler has a failing Setup that OverrideSetup never calls; recon's
            // setup cannot fail, so the override is only a replacement here.
            let overridden = OverrideSetup::new("OverrideSetup").reconciler(nested);
            debug_assert_eq!(overridden.name(), "OverrideSetup");
            overridden
        });
}
