//! [`Conversion`]: one hub version and spokes that convert to and from it, as typed Rust
//! functions, run on objects in any of the versions.

use std::collections::BTreeMap;
use std::fmt;
use std::marker::PhantomData;
use std::sync::Arc;

use kube::Resource;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::error::ConversionError;
use crate::error::BoxError;

/// One step between JSON objects of two versions.
type Step = Arc<dyn Fn(Value) -> Result<Value, StepError> + Send + Sync>;

/// Why a step failed, before the object's name is known to the message.
enum StepError {
    Decode(serde_json::Error),
    Convert(BoxError),
    Encode(serde_json::Error),
}

/// How a spoke version reaches the hub and back.
#[derive(Clone)]
struct Spoke {
    to_hub: Step,
    from_hub: Step,
}

/// The versions of one kind, converted through a hub: every spoke converts to the hub and
/// back, so any version reaches any other (spoke → hub → spoke), as controller-runtime's
/// `Hub` and `Convertible` do. Conversions are plain functions of the typed objects.
///
/// The object's `metadata` passes through untouched but for its labels and annotations, which
/// a conversion may change (kube-apiserver refuses any other metadata change), and `apiVersion`
/// is the desired one.
///
/// ```
/// use kube::CustomResource;
/// use recon_core::conversion::Conversion;
/// use schemars::JsonSchema;
/// use serde::{Deserialize, Serialize};
///
/// #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// #[kube(group = "example.com", version = "v1", kind = "Shape", root = "ShapeV1", namespaced)]
/// pub struct ShapeV1Spec { pub size: i64, pub color: String }
///
/// #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema)]
/// #[kube(group = "example.com", version = "v1alpha1", kind = "Shape", root = "ShapeV1alpha1", namespaced)]
/// pub struct ShapeV1alpha1Spec { pub size: i64 }
///
/// fn up(old: ShapeV1alpha1) -> ShapeV1 {
///     ShapeV1 { metadata: old.metadata, spec: ShapeV1Spec { size: old.spec.size, color: "red".into() } }
/// }
/// fn down(new: ShapeV1) -> ShapeV1alpha1 {
///     ShapeV1alpha1 { metadata: new.metadata, spec: ShapeV1alpha1Spec { size: new.spec.size } }
/// }
///
/// let conversion = Conversion::<ShapeV1>::hub().spoke(up, down);
/// assert_eq!(conversion.hub_version(), "example.com/v1");
/// assert_eq!(conversion.versions(), ["example.com/v1", "example.com/v1alpha1"]);
/// let old = serde_json::json!({
///     "apiVersion": "example.com/v1alpha1", "kind": "Shape",
///     "metadata": {"name": "s", "namespace": "default"}, "spec": {"size": 3}
/// });
/// let new = conversion.convert(old, "example.com/v1").unwrap();
/// assert_eq!(new["apiVersion"], "example.com/v1");
/// assert_eq!(new["spec"], serde_json::json!({"size": 3, "color": "red"}));
/// ```
pub struct Conversion<H> {
    kind: String,
    hub: String,
    spokes: BTreeMap<String, Spoke>,
    hub_type: PhantomData<fn() -> H>,
}

impl<H> Clone for Conversion<H> {
    fn clone(&self) -> Self {
        Conversion {
            kind: self.kind.clone(),
            hub: self.hub.clone(),
            spokes: self.spokes.clone(),
            hub_type: PhantomData,
        }
    }
}

impl<H> fmt::Debug for Conversion<H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Conversion")
            .field("kind", &self.kind)
            .field("hub", &self.hub)
            .field("spokes", &self.spokes.keys().collect::<Vec<_>>())
            .finish()
    }
}

impl<H> Conversion<H>
where
    H: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static,
{
    /// A conversion whose hub is `H`'s version (usually the storage version), with no spokes yet.
    pub fn hub() -> Self {
        Conversion {
            kind: H::kind(&()).into_owned(),
            hub: H::api_version(&()).into_owned(),
            spokes: BTreeMap::new(),
            hub_type: PhantomData,
        }
    }

    /// Adds the spoke `S`, converted to the hub by `to_hub` and back by `from_hub`: infallible
    /// functions, or ones returning a `Result` (see [`spoke_fallible`](Self::spoke_fallible)).
    #[must_use]
    pub fn spoke<S>(
        self,
        to_hub: impl Fn(S) -> H + Send + Sync + 'static,
        from_hub: impl Fn(H) -> S + Send + Sync + 'static,
    ) -> Self
    where
        S: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static,
    {
        self.spoke_fallible(
            move |s| Ok::<_, std::convert::Infallible>(to_hub(s)),
            move |h| Ok::<_, std::convert::Infallible>(from_hub(h)),
        )
    }

    /// Adds the spoke `S` through its `From` conversions: `H: From<S>` and `S: From<H>`.
    #[must_use]
    pub fn spoke_from<S>(self) -> Self
    where
        S: Resource<DynamicType = ()> + Serialize + DeserializeOwned + From<H> + 'static,
        H: From<S>,
    {
        self.spoke(H::from, S::from)
    }

    /// Adds the spoke `S` with conversions that may fail: the error is the conversion's
    /// failure, which kube-apiserver reports for the request that needed it.
    #[must_use]
    pub fn spoke_fallible<S, E1, E2>(
        mut self,
        to_hub: impl Fn(S) -> Result<H, E1> + Send + Sync + 'static,
        from_hub: impl Fn(H) -> Result<S, E2> + Send + Sync + 'static,
    ) -> Self
    where
        S: Resource<DynamicType = ()> + Serialize + DeserializeOwned + 'static,
        E1: Into<BoxError>,
        E2: Into<BoxError>,
    {
        let spoke = Spoke {
            to_hub: typed_step(to_hub),
            from_hub: typed_step(from_hub),
        };
        self.spokes.insert(S::api_version(&()).into_owned(), spoke);
        self
    }
}

impl<H> Conversion<H> {
    /// The kind converted.
    pub fn kind(&self) -> &str {
        &self.kind
    }

    /// The hub's apiVersion.
    pub fn hub_version(&self) -> &str {
        &self.hub
    }

    /// Every apiVersion this conversion reads and writes: the hub, then the spokes in order.
    pub fn versions(&self) -> Vec<&str> {
        std::iter::once(self.hub.as_str())
            .chain(self.spokes.keys().map(String::as_str))
            .collect()
    }

    /// `object` in `desired_api_version`: through the hub unless it is the hub or already in
    /// that version. Metadata but labels and annotations is the object's own.
    pub fn convert(
        &self,
        object: Value,
        desired_api_version: &str,
    ) -> Result<Value, ConversionError> {
        let from = object
            .get("apiVersion")
            .and_then(Value::as_str)
            .ok_or(ConversionError::NoApiVersion)?
            .to_owned();
        if from == desired_api_version {
            return Ok(object);
        }
        let unknown = |api_version: &str, direction| ConversionError::UnknownVersion {
            kind: self.kind.clone(),
            api_version: api_version.to_owned(),
            direction,
        };
        if from != self.hub && !self.spokes.contains_key(&from) {
            return Err(unknown(&from, "from"));
        }
        if desired_api_version != self.hub && !self.spokes.contains_key(desired_api_version) {
            return Err(unknown(desired_api_version, "to"));
        }
        let name = describe(&object);
        let metadata = object.get("metadata").cloned();
        let run = |step: &Step, value: Value, to: &str| {
            step(value).map_err(|e| match e {
                StepError::Decode(source) => ConversionError::Decode {
                    name: name.clone(),
                    api_version: from.clone(),
                    source,
                },
                StepError::Convert(source) => ConversionError::Convert {
                    name: name.clone(),
                    from: from.clone(),
                    to: to.to_owned(),
                    source,
                },
                StepError::Encode(source) => ConversionError::Encode {
                    name: name.clone(),
                    api_version: to.to_owned(),
                    source,
                },
            })
        };
        let hub = match self.spokes.get(&from) {
            Some(spoke) => run(&spoke.to_hub, object, &self.hub)?,
            None => object,
        };
        let mut converted = match self.spokes.get(desired_api_version) {
            Some(spoke) => run(&spoke.from_hub, hub, desired_api_version)?,
            None => hub,
        };
        keep_metadata(&mut converted, metadata);
        if let Some(map) = converted.as_object_mut() {
            map.insert(
                "apiVersion".into(),
                Value::String(desired_api_version.to_owned()),
            );
            map.insert("kind".into(), Value::String(self.kind.clone()));
        }
        Ok(converted)
    }
}

/// A step between two typed versions, as JSON.
fn typed_step<A, B, E>(f: impl Fn(A) -> Result<B, E> + Send + Sync + 'static) -> Step
where
    A: DeserializeOwned,
    B: Serialize,
    E: Into<BoxError>,
{
    Arc::new(move |value| {
        let typed: A = serde_json::from_value(value).map_err(StepError::Decode)?;
        let converted = f(typed).map_err(|e| StepError::Convert(e.into()))?;
        serde_json::to_value(converted).map_err(StepError::Encode)
    })
}

/// The object's metadata as it came, with the labels and annotations the conversion left.
fn keep_metadata(converted: &mut Value, original: Option<Value>) {
    let Some(Value::Object(mut metadata)) = original else {
        return;
    };
    let written = converted.get("metadata");
    for field in ["labels", "annotations"] {
        match written.and_then(|m| m.get(field)).filter(|v| !v.is_null()) {
            Some(value) => {
                metadata.insert(field.to_owned(), value.clone());
            }
            None => {
                metadata.remove(field);
            }
        }
    }
    if let Some(map) = converted.as_object_mut() {
        map.insert("metadata".into(), Value::Object(metadata));
    }
}

/// `namespace/name` of an object, for messages.
fn describe(object: &Value) -> String {
    let meta = |k: &str| {
        object
            .pointer(&format!("/metadata/{k}"))
            .and_then(Value::as_str)
            .unwrap_or("")
    };
    match meta("namespace") {
        "" => meta("name").to_owned(),
        ns => format!("{ns}/{}", meta("name")),
    }
}

#[cfg(test)]
mod tests {
    use kube::CustomResource;
    use schemars::JsonSchema;
    use serde::Deserialize;
    use serde_json::json;

    use super::*;

    mod v2 {
        use super::*;
        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
        #[kube(group = "example.com", version = "v2", kind = "Shape", namespaced)]
        pub struct ShapeSpec {
            pub size: i64,
            pub color: String,
        }
    }
    mod v1 {
        use super::*;
        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
        #[kube(group = "example.com", version = "v1", kind = "Shape", namespaced)]
        pub struct ShapeSpec {
            pub size: i64,
        }
    }
    mod v1alpha1 {
        use super::*;
        #[derive(CustomResource, Clone, Debug, Deserialize, Serialize, JsonSchema, PartialEq)]
        #[kube(
            group = "example.com",
            version = "v1alpha1",
            kind = "Shape",
            namespaced
        )]
        pub struct ShapeSpec {
            pub width: String,
        }
    }

    /// v1 keeps v2's color in an annotation, so nothing is lost on the way down and back.
    fn down(new: v2::Shape) -> v1::Shape {
        let mut metadata = new.metadata;
        metadata
            .annotations
            .get_or_insert_default()
            .insert("example.com/color".into(), new.spec.color);
        v1::Shape {
            metadata,
            spec: v1::ShapeSpec {
                size: new.spec.size,
            },
        }
    }

    fn up(old: v1::Shape) -> v2::Shape {
        let mut metadata = old.metadata;
        let color = metadata
            .annotations
            .as_mut()
            .and_then(|a| a.remove("example.com/color"))
            .unwrap_or_else(|| "red".into());
        if metadata.annotations.as_ref().is_some_and(|a| a.is_empty()) {
            metadata.annotations = None;
        }
        v2::Shape {
            metadata,
            spec: v2::ShapeSpec {
                size: old.spec.size,
                color,
            },
        }
    }

    fn conversion() -> Conversion<v2::Shape> {
        Conversion::<v2::Shape>::hub()
            .spoke(up, down)
            .spoke_fallible(
                |old: v1alpha1::Shape| {
                    let size = old.spec.width.parse::<i64>()?;
                    Ok::<_, std::num::ParseIntError>(v2::Shape {
                        metadata: old.metadata,
                        spec: v2::ShapeSpec {
                            size,
                            color: "red".into(),
                        },
                    })
                },
                |new: v2::Shape| {
                    Ok::<_, std::convert::Infallible>(v1alpha1::Shape {
                        metadata: new.metadata,
                        spec: v1alpha1::ShapeSpec {
                            width: new.spec.size.to_string(),
                        },
                    })
                },
            )
    }

    fn shape(api_version: &str, spec: Value) -> Value {
        json!({"apiVersion": api_version, "kind": "Shape",
            "metadata": {"name": "s", "namespace": "ns", "uid": "u-1", "resourceVersion": "7",
                "labels": {"team": "a"}},
            "spec": spec})
    }

    #[test]
    fn a_spoke_goes_to_the_hub_and_back_without_loss() {
        let c = conversion();
        let hub = shape("example.com/v2", json!({"size": 3, "color": "blue"}));
        let old = c.convert(hub.clone(), "example.com/v1").unwrap();
        assert_eq!(old["apiVersion"], "example.com/v1");
        assert_eq!(old["spec"], json!({"size": 3}));
        assert_eq!(old["metadata"]["annotations"]["example.com/color"], "blue");
        assert_eq!(c.convert(old, "example.com/v2").unwrap(), hub);
    }

    #[test]
    fn one_spoke_reaches_another_through_the_hub() {
        let c = conversion();
        let alpha = shape("example.com/v1alpha1", json!({"width": "4"}));
        let v1 = c.convert(alpha, "example.com/v1").unwrap();
        assert_eq!(v1["spec"], json!({"size": 4}));
        assert_eq!(v1["metadata"]["annotations"]["example.com/color"], "red");
        assert_eq!(
            c.versions(),
            ["example.com/v2", "example.com/v1", "example.com/v1alpha1"]
        );
    }

    #[test]
    fn metadata_stays_the_object_s_own_but_for_labels_and_annotations() {
        let c = Conversion::<v2::Shape>::hub().spoke(
            |old: v1::Shape| {
                let mut metadata = old.metadata;
                metadata.name = Some("renamed".into());
                metadata.labels = None;
                v2::Shape {
                    metadata,
                    spec: v2::ShapeSpec {
                        size: old.spec.size,
                        color: "red".into(),
                    },
                }
            },
            down,
        );
        let out = c
            .convert(
                shape("example.com/v1", json!({"size": 1})),
                "example.com/v2",
            )
            .unwrap();
        assert_eq!(
            out["metadata"],
            json!({"name": "s", "namespace": "ns", "uid": "u-1", "resourceVersion": "7"})
        );
    }

    #[test]
    fn failures_name_the_object_and_the_versions() {
        let c = conversion();
        let bad = shape("example.com/v1alpha1", json!({"width": "wide"}));
        assert_eq!(
            c.convert(bad, "example.com/v2").unwrap_err().to_string(),
            "ns/s: converting example.com/v1alpha1 to example.com/v2: invalid digit found in string"
        );
        let unknown = shape("example.com/v9", json!({}));
        assert_eq!(
            c.convert(unknown, "example.com/v2")
                .unwrap_err()
                .to_string(),
            "Shape has no version example.com/v9 to convert from"
        );
        let to_unknown = shape("example.com/v2", json!({"size": 1, "color": "red"}));
        assert_eq!(
            c.convert(to_unknown, "example.com/v3")
                .unwrap_err()
                .to_string(),
            "Shape has no version example.com/v3 to convert to"
        );
        let unreadable = shape("example.com/v1", json!({"size": "big"}));
        assert!(matches!(
            c.convert(unreadable, "example.com/v2"),
            Err(ConversionError::Decode { .. })
        ));
        assert!(matches!(
            c.convert(json!({"kind": "Shape"}), "example.com/v2"),
            Err(ConversionError::NoApiVersion)
        ));
    }

    #[test]
    fn an_object_already_in_the_desired_version_is_left_as_it_is() {
        let c = conversion();
        let same = shape("example.com/v1", json!({"size": 1, "extra": true}));
        assert_eq!(c.convert(same.clone(), "example.com/v1").unwrap(), same);
    }
}
