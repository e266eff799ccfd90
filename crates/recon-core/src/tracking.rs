//! Tracking from a reconcile: the request being reconciled observes what it reads.

use kube::Resource;
use kube::api::ListParams;
use kube::core::ObjectList;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::context::Context;
use crate::error::Error;
use crate::object_api::ObjectApi;
use crate::tracker::{Reference, TrackError};

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
        K: Resource<DynamicType = ()> + Serialize + DeserializeOwned,
    {
        self.track(Reference::of::<K>(namespace, name))?;
        match ObjectApi::<K>::new(self.config().client(), &(), namespace, name)
            .get()
            .await
        {
            Ok(object) => Ok(Some(object)),
            Err(kube::Error::Api(status)) if status.code == 404 => Ok(None),
            Err(err) => Err(err.into()),
        }
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
        self.track(Reference::selecting::<K>(namespace, selector))?;
        let request = kube::core::Request::new(K::url_path(&(), namespace))
            .list(&ListParams::default().labels(selector))
            .map_err(kube::Error::BuildRequest)?;
        let list: ObjectList<K> = self.config().client().request(request).await?;
        Ok(list.items)
    }
}
