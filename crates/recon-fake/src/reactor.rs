//! Reactors: hooks on matching requests that inject a failure, or run a concurrent writer just
//! before the request is served (the write that lands between a reconciler's GET and its PATCH).
//! A test registers one with a [`ReactorBuilder`](crate::ReactorBuilder); what is here decides
//! which requests each one meets.

use std::sync::Arc;

use futures::future::BoxFuture;

use crate::request::route::Verb;
use crate::wire::error::ApiError;
use crate::wire::group::GroupResource;

/// An error a reactor answers with. The common kinds carry the real message for the request's
/// resource and name.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Failure {
    /// 409 with the optimistic-lock message.
    Conflict,
    /// 404 `NotFound`.
    NotFound,
    /// 409 `AlreadyExists`.
    AlreadyExists,
    /// 500 `InternalError` with this cause.
    Internal(String),
    /// 403 `Forbidden` for the request's object, with this reason (as RBAC or an admission
    /// plugin words it: `pods "p" is forbidden: <reason>`).
    Forbidden(String),
    /// Exactly this error.
    Api(ApiError),
}

impl Failure {
    fn to_error(&self, resource: &GroupResource, name: &str) -> ApiError {
        match self {
            Failure::Conflict => ApiError::optimistic_lock(resource, name),
            Failure::NotFound => ApiError::not_found(resource, name),
            Failure::AlreadyExists => ApiError::already_exists(resource, name),
            Failure::Internal(cause) => ApiError::internal(cause),
            Failure::Forbidden(why) => ApiError::forbidden(resource, name, why),
            Failure::Api(err) => err.clone(),
        }
    }
}

pub(crate) type BeforeHook = Arc<dyn Fn(kube::Client) -> BoxFuture<'static, ()> + Send + Sync>;

/// A mutating admission hook: changes the object a create or update is about to store.
pub(crate) type MutateHook = Arc<dyn Fn(&mut serde_json::Value) + Send + Sync>;

#[derive(Clone)]
pub(crate) enum Action {
    Fail(Failure),
    Before(BeforeHook),
    Mutate(MutateHook),
}

/// Which requests a reactor applies to.
#[derive(Debug, Clone)]
pub(crate) struct Matcher {
    pub(crate) verb: Verb,
    pub(crate) resource: String,
    pub(crate) group: Option<String>,
    /// `None` matches the object itself only, as a subresource is a distinct target.
    pub(crate) subresource: Option<String>,
    pub(crate) namespace: Option<String>,
    pub(crate) name: Option<String>,
}

/// What a request looks like to a reactor.
pub(crate) struct Target<'a> {
    pub(crate) verb: Verb,
    pub(crate) group: &'a str,
    pub(crate) resource: &'a str,
    pub(crate) subresource: Option<&'a str>,
    pub(crate) namespace: Option<&'a str>,
    /// The URL's name, or for a create the name in the body.
    pub(crate) name: Option<String>,
}

impl Matcher {
    fn matches(&self, t: &Target<'_>) -> bool {
        self.verb == t.verb
            && self.resource == t.resource
            && self.group.as_deref().is_none_or(|g| g == t.group)
            && self.subresource.as_deref() == t.subresource
            && self
                .namespace
                .as_deref()
                .is_none_or(|n| Some(n) == t.namespace)
            && self
                .name
                .as_deref()
                .is_none_or(|n| Some(n) == t.name.as_deref())
    }
}

pub(crate) struct Reactor {
    pub(crate) matcher: Matcher,
    pub(crate) action: Action,
    /// How many more times it fires; `None` is always.
    pub(crate) remaining: Option<usize>,
}

/// What the reactors matching one request ask for.
#[derive(Default)]
pub(crate) struct Reactions {
    pub(crate) before: Vec<BeforeHook>,
    pub(crate) mutate: Vec<MutateHook>,
    pub(crate) failure: Option<ApiError>,
}

/// Fires the reactors that match `target`, in registration order: every `before` hook, and the
/// first failure. Exhausted reactors are dropped.
pub(crate) fn react(reactors: &mut Vec<Reactor>, target: &Target<'_>) -> Reactions {
    let mut reactions = Reactions::default();
    for reactor in reactors.iter_mut() {
        if !reactor.matcher.matches(target) {
            continue;
        }
        match &reactor.action {
            Action::Before(hook) => reactions.before.push(hook.clone()),
            Action::Mutate(hook) => reactions.mutate.push(hook.clone()),
            Action::Fail(failure) if reactions.failure.is_none() => {
                let resource = GroupResource::new(target.group, target.resource);
                reactions.failure =
                    Some(failure.to_error(&resource, target.name.as_deref().unwrap_or("")));
            }
            Action::Fail(_) => continue,
        }
        if let Some(n) = reactor.remaining.as_mut() {
            *n = n.saturating_sub(1);
        }
    }
    reactors.retain(|r| r.remaining != Some(0));
    reactions
}
