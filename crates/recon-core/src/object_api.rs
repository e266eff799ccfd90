//! Requests about one object, for any resource type and scope. kube's `Api` constructors are
//! split by scope at compile time, so generic code builds the requests from `Resource::url_path`.

use std::fmt::Debug;
use std::marker::PhantomData;

use kube::Resource;
use kube::api::{DeleteParams, GetParams, ListParams, Patch, PatchParams, PostParams};
use kube::core::ObjectList;
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

    /// Creates `object` (in the namespace this api was made for; the name is the object's own).
    pub(crate) async fn create(&self, object: &R) -> Result<R, kube::Error> {
        let body = serde_json::to_vec(object).map_err(kube::Error::SerdeError)?;
        let request = self
            .request
            .create(&PostParams::default(), body)
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(request).await
    }

    /// Replaces the object with `object` (PUT; its resourceVersion is the precondition).
    pub(crate) async fn replace(&self, object: &R) -> Result<R, kube::Error> {
        let body = serde_json::to_vec(object).map_err(kube::Error::SerdeError)?;
        let request = self
            .request
            .replace(&self.name, &PostParams::default(), body)
            .map_err(kube::Error::BuildRequest)?;
        self.client.request(request).await
    }

    /// Deletes the object, on the condition that it is still the one with `uid` (a object
    /// re-created under the same name in between is left alone).
    pub(crate) async fn delete(&self, uid: Option<&str>) -> Result<(), kube::Error> {
        let mut params = DeleteParams::default();
        if let Some(uid) = uid {
            params = params.preconditions(kube::api::Preconditions {
                uid: Some(uid.to_owned()),
                resource_version: None,
            });
        }
        let request = self
            .request
            .delete(&self.name, &params)
            .map_err(kube::Error::BuildRequest)?;
        // The answer is the object (still terminating) or a Status; either way it is gone soon.
        self.client
            .request::<serde_json::Value>(request)
            .await
            .map(drop)
    }

    /// Lists the objects of this kind in the namespace this api was made for (every namespace
    /// for `None`).
    pub(crate) async fn list(&self, params: &ListParams) -> Result<Vec<R>, kube::Error>
    where
        R: Clone,
    {
        let request = self
            .request
            .list(params)
            .map_err(kube::Error::BuildRequest)?;
        let list: ObjectList<R> = self.client.request(request).await?;
        Ok(list.items)
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
