//! What [`ApiServer::on`](crate::ApiServer::on) returns: a reactor being described, registered
//! with the server's state once its action is given.

use std::future::Future;
use std::sync::Arc;

use crate::client_service::Shared;
use crate::reactor::{Action, BeforeHook, Failure, Matcher, Reactor};
use crate::request::route::Verb;

/// Builds a reactor; see [`ApiServer::on`](crate::ApiServer::on).
#[must_use = "a reactor is registered only by `fail` or `before`"]
pub struct ReactorBuilder<'a> {
    shared: &'a Shared,
    matcher: Matcher,
    times: Option<usize>,
}

impl<'a> ReactorBuilder<'a> {
    pub(crate) fn new(shared: &'a Shared, verb: Verb, resource: &str) -> Self {
        ReactorBuilder {
            shared,
            matcher: Matcher {
                verb,
                resource: resource.to_owned(),
                group: None,
                subresource: None,
                namespace: None,
                name: None,
            },
            times: None,
        }
    }

    /// Only requests in this API group (`""` for the core group).
    pub fn group(mut self, group: &str) -> Self {
        self.matcher.group = Some(group.to_owned());
        self
    }

    /// Only requests on this subresource (`"status"`) instead of the object itself.
    pub fn subresource(mut self, subresource: &str) -> Self {
        self.matcher.subresource = Some(subresource.to_owned());
        self
    }

    /// Only requests in this namespace.
    pub fn namespace(mut self, namespace: &str) -> Self {
        self.matcher.namespace = Some(namespace.to_owned());
        self
    }

    /// Only requests for the object of this name.
    pub fn name(mut self, name: &str) -> Self {
        self.matcher.name = Some(name.to_owned());
        self
    }

    /// Fire for the first matching request only.
    pub fn once(self) -> Self {
        self.times(1)
    }

    /// Fire for the first `n` matching requests only.
    pub fn times(mut self, n: usize) -> Self {
        self.times = Some(n);
        self
    }

    /// Answer matching requests with `failure` instead of serving them; nothing is stored.
    pub fn fail(self, failure: Failure) {
        self.register(Action::Fail(failure));
    }

    /// Run `hook` just before each matching request is served. The hook gets a client of the same
    /// server: what it writes lands first, like a concurrent writer's request. Its requests are
    /// recorded with [`RequestOrigin::Reactor`](crate::RequestOrigin::Reactor) and do not trigger
    /// reactors themselves.
    pub fn before<F, Fut>(self, hook: F)
    where
        F: Fn(kube::Client) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        let hook: BeforeHook = Arc::new(move |client| Box::pin(hook(client)));
        self.register(Action::Before(hook));
    }

    /// Changes the object each matching create or update is about to store, as a mutating
    /// admission webhook does (defaults a webhook fills in, say): the hook runs on the decoded
    /// object after the patch is applied and before validation, and what it changes is stored
    /// and answered. Register it for `Verb::Create`, `Verb::Update` and `Verb::Patch` as
    /// needed: each is its own target, as for any reactor.
    ///
    /// The hook runs without the server's lock, so it may call the server it is registered on
    /// (its request log, its resourceVersion, requests from another thread). Like a webhook,
    /// it may run more than once for one request: when another write changes the object while
    /// the hook runs, it runs again on the new object, as kube-apiserver admits again when its
    /// optimistic update retries.
    ///
    /// ```
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, PostParams};
    /// use recon_fake::{ApiServer, Verb};
    ///
    /// let server = ApiServer::new();
    /// server.on(Verb::Create, "configmaps").mutate(|object| {
    ///     object["data"]["defaulted"] = "yes".into();
    /// });
    /// let api: Api<ConfigMap> = Api::default_namespaced(server.client());
    /// let mut cm = ConfigMap::default();
    /// cm.metadata.name = Some("c".into());
    /// cm.data = Some(Default::default());
    /// let created = api.create(&PostParams::default(), &cm).await.unwrap();
    /// assert_eq!(created.data.unwrap()["defaulted"], "yes");
    /// # });
    /// ```
    pub fn mutate(self, hook: impl Fn(&mut serde_json::Value) + Send + Sync + 'static) {
        self.register(Action::Mutate(Arc::new(hook)));
    }

    fn register(self, action: Action) {
        self.shared.lock().reactors.push(Reactor {
            matcher: self.matcher,
            action,
            remaining: self.times,
        });
    }
}
