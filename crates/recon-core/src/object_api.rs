//! Requests about one object, for any resource type and scope. kube's `Api` constructors are
//! split by scope at compile time, so generic code builds the requests from `Resource::url_path`.

use std::fmt::Debug;
use std::marker::PhantomData;

use kube::Resource;
use kube::api::{GetParams, Patch, PatchParams, PostParams};
use serde::Serialize;
use serde::de::DeserializeOwned;

pub(crate) struct ObjectApi<'a, R> {
    client: &'a kube::Client,
    request: kube::core::Request,
    name: String,
    resource: PhantomData<fn() -> R>,
}

impl<'a, R> ObjectApi<'a, R>
where
    R: Resource + Serialize + DeserializeOwned,
{
    /// The object `name` in `namespace` (`None` for cluster-scoped kinds).
    pub(crate) fn new(
        client: &'a kube::Client,
        dyntype: &R::DynamicType,
        namespace: Option<&str>,
        name: &str,
    ) -> Self {
        ObjectApi {
            client,
            request: kube::core::Request::new(R::url_path(dyntype, namespace)),
            name: name.to_owned(),
            resource: PhantomData,
        }
    }

    /// The object `resource` is.
    pub(crate) fn of(client: &'a kube::Client, dyntype: &R::DynamicType, resource: &R) -> Self {
        let meta = resource.meta();
        Self::new(
            client,
            dyntype,
            meta.namespace.as_deref(),
            meta.name.as_deref().unwrap_or_default(),
        )
    }

    pub(crate) async fn get(&self) -> Result<R, kube::Error> {
        let request = self
            .request
            .get(&self.name, &GetParams::default())
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(request).await
    }

    pub(crate) async fn patch<P: Serialize + Debug>(
        &self,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<R, kube::Error> {
        let request = self
            .request
            .patch(&self.name, params, patch)
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(request).await
    }

    pub(crate) async fn patch_status<P: Serialize + Debug>(
        &self,
        params: &PatchParams,
        patch: &Patch<P>,
    ) -> Result<R, kube::Error> {
        let request = self
            .request
            .patch_subresource("status", &self.name, params, patch)
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(request).await
    }

    pub(crate) async fn replace_status(&self, object: &R) -> Result<R, kube::Error> {
        let body = serde_json::to_vec(object).map_err(kube::Error::SerdeError)?;
        let request = self
            .request
            .replace_subresource("status", &self.name, &PostParams::default(), body)
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(request).await
    }
}
