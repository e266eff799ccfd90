//! Reads that track: the context's reads record, in the config's [`Tracker`](super::Tracker),
//! that the request being reconciled observes what it read.

use kube::Resource;
use kube::api::{ApiResource, DynamicObject, GetParams, ListParams};
use kube::core::ObjectList;
use serde::de::DeserializeOwned;

use super::Context;
use super::tracker::{Reference, TrackError};
use crate::error::Error;

impl Context {
    /// The request being reconciled observes `reference`, from the request time on.
    pub fn track(&self, reference: Reference) -> Result<(), TrackError> {
        self.config()
            .tracker()
            .track(reference, self.request(), self.now())
    }

    /// Tracks the object `name` of type `K`, then reads it: `None` when it does not exist (it
    /// stays tracked, so its creation re-reconciles this request).
    ///
    /// ```no_run
    /// # async fn demo(ctx: &recon_core::Context) -> Result<(), recon_core::Error> {
    /// use k8s_openapi::api::core::v1::ConfigMap;
    ///
    /// let settings: Option<ConfigMap> = ctx.track_and_get(Some("default"), "settings").await?;
    /// # Ok(()) }
    /// ```
    pub async fn track_and_get<K>(
        &self,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>, Error>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        self.get_tracked(&(), namespace, name).await
    }

    /// Tracks the objects of type `K` matching `selector` (in `namespace`, or in every
    /// namespace), then lists them.
    ///
    /// ```no_run
    /// # async fn demo(ctx: &recon_core::Context) -> Result<(), recon_core::Error> {
    /// use k8s_openapi::api::core::v1::Secret;
    ///
    /// let certificates: Vec<Secret> = ctx.track_and_list(Some("default"), "app=web").await?;
    /// # Ok(()) }
    /// ```
    pub async fn track_and_list<K>(
        &self,
        namespace: Option<&str>,
        selector: &str,
    ) -> Result<Vec<K>, Error>
    where
        K: Resource<DynamicType = ()> + Clone + DeserializeOwned,
    {
        self.list_tracked(&(), namespace, selector).await
    }

    /// [`Context::track_and_get`] for a kind known at runtime.
    ///
    /// ```no_run
    /// # async fn demo(ctx: &recon_core::Context) -> Result<(), recon_core::Error> {
    /// use kube::api::{ApiResource, GroupVersionKind};
    ///
    /// let gizmos = ApiResource::from_gvk(&GroupVersionKind::gvk("example.com", "v1", "Gizmo"));
    /// let gizmo = ctx.track_and_get_with(&gizmos, None, "g1").await?;
    /// # let _ = gizmo; Ok(()) }
    /// ```
    pub async fn track_and_get_with(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<DynamicObject>, Error> {
        self.get_tracked(resource, namespace, name).await
    }

    /// [`Context::track_and_list`] for a kind known at runtime.
    ///
    /// ```
    /// use k8s_openapi::api::core::v1::ConfigMap;
    /// use kube::api::{Api, ApiResource, PostParams};
    /// use recon_core::{Config, Context, Request, Tracker};
    ///
    /// # tokio::runtime::Runtime::new().unwrap().block_on(async {
    /// # let server = recon_fake::ApiServer::new();
    /// # let mut web = ConfigMap::default();
    /// # web.metadata.name = Some("web".into());
    /// # web.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
    /// # Api::<ConfigMap>::default_namespaced(server.client()).create(&PostParams::default(), &web).await.unwrap();
    /// let tracker = Tracker::default();
    /// let config = Config::new(server.client(), "demo").with_tracker(tracker.clone());
    /// let ctx = Context::new(config, Request::namespaced("default", "site"));
    ///
    /// let config_maps = ApiResource::erase::<ConfigMap>(&());
    /// let found = ctx.track_and_list_with(&config_maps, Some("default"), "app=web").await.unwrap();
    /// assert_eq!(found.len(), 1);
    /// // The selection is tracked: a new match re-reconciles `site`.
    /// let mut api = ConfigMap::default();
    /// api.metadata.namespace = Some("default".into());
    /// api.metadata.labels = Some([("app".to_owned(), "web".to_owned())].into());
    /// let observers = tracker.observers(&api, &(), jiff::Timestamp::now());
    /// assert_eq!(observers, [Request::namespaced("default", "site")]);
    /// # });
    /// ```
    pub async fn track_and_list_with(
        &self,
        resource: &ApiResource,
        namespace: Option<&str>,
        selector: &str,
    ) -> Result<Vec<DynamicObject>, Error> {
        self.list_tracked(resource, namespace, selector).await
    }

    async fn get_tracked<K: Resource + DeserializeOwned>(
        &self,
        dyntype: &K::DynamicType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<K>, Error> {
        self.track(Reference::named(
            &K::group(dyntype),
            &K::kind(dyntype),
            namespace,
            name,
        ))?;
        let request = kube::core::Request::new(K::url_path(dyntype, namespace))
            .get(name, &GetParams::default())
            .map_err(kube::Error::BuildRequest)?;
        match self.config().client().request::<K>(request).await {
            Ok(object) => Ok(Some(object)),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    async fn list_tracked<K: Resource + Clone + DeserializeOwned>(
        &self,
        dyntype: &K::DynamicType,
        namespace: Option<&str>,
        selector: &str,
    ) -> Result<Vec<K>, Error> {
        self.track(Reference::selected(
            &K::group(dyntype),
            &K::kind(dyntype),
            namespace,
            selector,
        ))?;
        let request = kube::core::Request::new(K::url_path(dyntype, namespace))
            .list(&ListParams::default().labels(selector))
            .map_err(kube::Error::BuildRequest)?;
        let list: ObjectList<K> = self.config().client().request(request).await?;
        Ok(list.items)
    }
}
