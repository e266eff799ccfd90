//! `stash/stash_test.go`: the stash itself, not a reconciler, so plain tests, one per Go test
//! function (its subtests as commented blocks, or one test each where they need a context of
//! their own).
//!
//! Go's `stash.WithContext(ctx)` is a fresh [`Context`] here: each one has a stash of its own
//! (what reconciler.io's root gives each reconcile). Go's stash holds untyped values
//! (`interface{}`), `RetrieveValue` answering `nil` for a key with nothing under it; recon's
//! [`Stash`] is typed, and answers [`StashError::NotFound`]. Go's `Stasher` is recon's
//! [`Stasher`]: `RetrieveOrError` is `retrieve`, `RetrieveOrEmpty` is
//! `retrieve_opt(..).unwrap_or_default()` and `RetrieveOrDie` is a panic on `retrieve`'s error.
//!
//! Left out (Go mechanics Rust makes meaningless):
//! - `TestStash_StashValue_UndecoratedContext` and `TestStash_RetrieveValue_UndecoratedContext`:
//!   Go panics when a `context.Context` was not given a stash with `WithContext`; every recon
//!   `Context` has one, so there is no context without a stash to try.

use std::collections::BTreeMap;

use recon_core::{Config, Context, Request, Stash, StashError, Stasher};
use recon_fake::ApiServer;

/// Go's `stash.WithContext(context.Background())`: a context with a fresh stash.
fn with_context() -> Context {
    let config = Config::new(ApiServer::new().client(), "test");
    Context::new(
        config,
        Request::namespaced("test-namespace", "test-resource"),
    )
}

/// Go's `stash-key`.
const KEY: &str = "stash-key";

// ---- TestStash ----

/// The subtests share one context and one key, each storing a value of another type over the
/// last.
#[tokio::test]
async fn stash() {
    let ctx = with_context();
    let stash: &Stash = ctx.as_ref();

    // "string"
    stash.store(KEY, "value".to_owned());
    assert_eq!(stash.retrieve::<String>(KEY), Ok("value".to_owned()));

    // "int"
    stash.store(KEY, 42_i64);
    assert_eq!(stash.retrieve::<i64>(KEY), Ok(42));

    // "map"
    let map: BTreeMap<String, String> = [("foo".to_owned(), "bar".to_owned())].into();
    stash.store(KEY, map.clone());
    assert_eq!(stash.retrieve::<BTreeMap<String, String>>(KEY), Ok(map));

    // "nil": Go's untyped nil is a typed `None` here.
    stash.store(KEY, None::<String>);
    assert_eq!(stash.retrieve::<Option<String>>(KEY), Ok(None));
    assert!(stash.has(KEY), "a stored None is stored");
}

// ---- TestStash_RetrieveValue_Undefined ----

#[tokio::test]
async fn stash_retrieve_value_undefined() {
    let ctx = with_context();
    let stash: &Stash = ctx.as_ref();

    assert_eq!(
        stash.retrieve::<String>(KEY),
        Err(StashError::NotFound(KEY.to_owned()))
    );
    assert!(!stash.has(KEY));
}

// ---- TestStasher ----

const STASHER: Stasher<String> = Stasher::new("my-key");

#[test]
fn stasher_key() {
    assert_eq!(STASHER.key(), "my-key");
}

/// "no value": "RetrieveOrEmpty", "RetrieveOrError".
#[tokio::test]
async fn stasher_no_value() {
    let ctx = with_context();

    // "RetrieveOrEmpty"
    assert_eq!(STASHER.retrieve_opt(&ctx).unwrap_or_default(), "");
    // "RetrieveOrError"
    assert_eq!(
        STASHER.retrieve(&ctx),
        Err(StashError::NotFound("my-key".to_owned()))
    );
}

/// "no value" / "RetrieveOrDie".
#[tokio::test]
#[should_panic(expected = "no value stashed under \"my-key\"")]
async fn stasher_no_value_retrieve_or_die() {
    let ctx = with_context();

    let value = STASHER.retrieve(&ctx).unwrap_or_else(|e| panic!("{e}"));
    unreachable!("expected to panic, got {value:?}");
}

/// "has value": "RetrieveOrEmpty", "RetrieveOrError", "RetrieveOrDie".
#[tokio::test]
async fn stasher_has_value() {
    let ctx = with_context();
    STASHER.store(&ctx, "hello world".to_owned());

    // "RetrieveOrEmpty"
    assert_eq!(
        STASHER.retrieve_opt(&ctx).unwrap_or_default(),
        "hello world"
    );
    // "RetrieveOrError"
    assert_eq!(STASHER.retrieve(&ctx), Ok("hello world".to_owned()));
    // "RetrieveOrDie"
    assert_eq!(
        STASHER.retrieve(&ctx).unwrap_or_else(|e| panic!("{e}")),
        "hello world"
    );
}

/// "context scoped": another context has a stash of its own.
#[tokio::test]
async fn stasher_context_scoped() {
    let ctx = with_context();
    STASHER.store(&ctx, "hello world".to_owned());
    assert_eq!(
        STASHER.retrieve_opt(&ctx).unwrap_or_default(),
        "hello world"
    );

    let alt_ctx = with_context();
    assert_eq!(STASHER.retrieve_opt(&alt_ctx).unwrap_or_default(), "");
}

/// "Clear".
#[tokio::test]
async fn stasher_clear() {
    let ctx = with_context();
    STASHER.store(&ctx, "hello world".to_owned());
    assert_eq!(
        STASHER.retrieve_opt(&ctx).unwrap_or_default(),
        "hello world"
    );

    // Go's `Clear` returns the value it cleared, as recon's does.
    assert_eq!(STASHER.clear(&ctx), Some("hello world".to_owned()));
    assert_eq!(STASHER.retrieve_opt(&ctx).unwrap_or_default(), "");
}
