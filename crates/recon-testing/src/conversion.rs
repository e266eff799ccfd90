//! Tables for conversions between a custom resource's versions: each case converts an object
//! with a [`Conversion`] and compares the result; every case that converts also converts back
//! and flags what did not survive the round trip (a lossy conversion makes kube-apiserver
//! serve an object differently through each version, and lose data on the next write).

use std::fmt::Write as _;
use std::path::Path;

use recon_core::conversion::Conversion;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::diff::{json_diff, use_color};
use crate::yaml::{self, FixtureError};

/// One conversion case.
///
/// ```
/// use recon_testing::ConversionCase;
/// use serde_json::json;
///
/// let case = ConversionCase::new("v1alpha1 gains the default color", json!({
///     "apiVersion": "example.com/v1alpha1", "kind": "Shape",
///     "metadata": {"name": "s"}, "spec": {"size": 3}
/// }), "example.com/v1")
/// .expect(json!({
///     "apiVersion": "example.com/v1", "kind": "Shape",
///     "metadata": {"name": "s"}, "spec": {"size": 3, "color": "red"}
/// }));
/// # let _ = case;
/// ```
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[non_exhaustive]
pub struct ConversionCase {
    /// The case's name.
    pub name: String,
    // Inputs.
    /// The object, in its own version.
    pub given: Value,
    /// The apiVersion to convert it to.
    #[serde(rename = "desiredAPIVersion")]
    pub desired_api_version: String,
    // Outputs.
    /// The converted object, compared whole as JSON; `None` checks only that it converts.
    #[serde(default)]
    pub expect: Option<Value>,
    /// The conversion fails with a message containing this text.
    #[serde(default)]
    pub error: Option<String>,
    /// The conversion is lossy on purpose: no round-trip check.
    #[serde(default)]
    pub lossy: bool,
}

/// A file of conversion cases.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConversionFile {
    cases: Vec<ConversionCase>,
}

impl ConversionCase {
    /// Converts `given` (any serialisable object: a typed resource or JSON) to `desired`.
    pub fn new(name: impl Into<String>, given: impl Serialize, desired: impl Into<String>) -> Self {
        ConversionCase {
            name: name.into(),
            given: serde_json::to_value(given).unwrap_or(Value::Null),
            desired_api_version: desired.into(),
            expect: None,
            error: None,
            lossy: false,
        }
    }

    /// The object the conversion must give.
    #[must_use]
    pub fn expect(mut self, expected: impl Serialize) -> Self {
        self.expect = Some(serde_json::to_value(expected).unwrap_or(Value::Null));
        self
    }

    /// The conversion must fail, with a message containing `text`.
    #[must_use]
    pub fn error(mut self, text: impl Into<String>) -> Self {
        self.error = Some(text.into());
        self
    }

    /// Skips the round-trip check.
    #[must_use]
    pub fn lossy(mut self) -> Self {
        self.lossy = true;
        self
    }
}

/// A table of [`ConversionCase`]s for one [`Conversion`]. [`run`](Self::run) reports every
/// mismatch of every case, each with a diff, and panics if there was any.
///
/// ```
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use recon_core::conversion::Conversion;
/// use recon_testing::{ConversionCase, ConversionTests};
/// use serde_json::json;
///
/// let cm = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}});
/// ConversionTests::new(Conversion::<ConfigMap>::hub())
///     .case(ConversionCase::new("the hub to itself", cm.clone(), "v1").expect(cm.clone()))
///     .case(ConversionCase::new("an unknown version", cm, "v2").error("no version v2"))
///     .run();
/// ```
#[derive(Debug)]
pub struct ConversionTests<H> {
    conversion: Conversion<H>,
    cases: Vec<ConversionCase>,
}

impl<H> ConversionTests<H> {
    /// A table for `conversion`, with no cases yet.
    pub fn new(conversion: Conversion<H>) -> Self {
        ConversionTests {
            conversion,
            cases: Vec::new(),
        }
    }

    /// A table for `conversion` with the cases of the YAML file at `path`:
    ///
    /// ```yaml
    /// cases:
    /// - name: one host is the domain
    ///   given: {apiVersion: example.com/v1, kind: Website, metadata: {name: blog}, spec: {hosts: [blog.example.com]}}
    ///   desiredAPIVersion: example.com/v1alpha1
    ///   expect: {apiVersion: example.com/v1alpha1, kind: Website, metadata: {name: blog}, spec: {domain: blog.example.com}}
    /// - name: no such version
    ///   given: {apiVersion: example.com/v1, kind: Website, metadata: {name: blog}, spec: {hosts: []}}
    ///   desiredAPIVersion: example.com/v9
    ///   error: no version example.com/v9
    /// ```
    ///
    /// A file that cannot be read, or a case that does not parse, is an error naming the file,
    /// line and field.
    pub fn from_yaml_file(
        conversion: Conversion<H>,
        path: impl AsRef<Path>,
    ) -> Result<Self, FixtureError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| FixtureError::new(path, format!("cannot read it: {e}")))?;
        Self::from_yaml_str(conversion, path, &text)
    }

    /// [`from_yaml_file`](Self::from_yaml_file) of `text`, said to come from `origin`.
    pub fn from_yaml_str(
        conversion: Conversion<H>,
        origin: impl AsRef<Path>,
        text: &str,
    ) -> Result<Self, FixtureError> {
        let file: ConversionFile = yaml::parse(origin.as_ref(), text)?;
        Ok(ConversionTests {
            conversion,
            cases: file.cases,
        })
    }

    /// Adds a case.
    #[must_use]
    pub fn case(mut self, case: ConversionCase) -> Self {
        self.cases.push(case);
        self
    }

    /// Runs every case; panics with every mismatch if any case failed.
    #[track_caller]
    pub fn run(&self) {
        let failures = self.failures(use_color());
        if !failures.is_empty() {
            panic!(
                "{} of {} conversion cases failed:\n\n{}",
                failures.len(),
                self.cases.len(),
                failures.join("\n")
            );
        }
    }

    /// What went wrong in each failing case, one text each (empty when all pass).
    pub fn failures(&self, color: bool) -> Vec<String> {
        let mut names = std::collections::BTreeSet::new();
        let mut failures = Vec::new();
        for case in &self.cases {
            let mut out = String::new();
            if !names.insert(case.name.as_str()) {
                let _ = writeln!(out, "the name is used by an earlier case");
            }
            self.check(case, color, &mut out);
            if !out.is_empty() {
                failures.push(format!("case {:?}:\n{out}", case.name));
            }
        }
        failures
    }

    fn check(&self, case: &ConversionCase, color: bool, out: &mut String) {
        let converted = self
            .conversion
            .convert(case.given.clone(), &case.desired_api_version);
        let converted = match (converted, &case.error) {
            (Err(err), Some(text)) => {
                if !err.to_string().contains(text.as_str()) {
                    let _ = writeln!(out, "failed with {err:?}, not with {text:?}");
                }
                return;
            }
            (Ok(object), Some(text)) => {
                let _ = writeln!(
                    out,
                    "converted, where it should fail with {text:?}:\n{object:#}"
                );
                return;
            }
            (Err(err), None) => {
                let _ = writeln!(out, "failed: {err}");
                return;
            }
            (Ok(object), None) => object,
        };
        if let Some(expected) = &case.expect
            && let Some(diff) = json_diff(expected, &converted, color)
        {
            let _ = writeln!(out, "the converted object differs:\n{diff}");
        }
        if case.lossy {
            return;
        }
        let from = case
            .given
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        match self.conversion.convert(converted, from) {
            Ok(back) => {
                if let Some(diff) = json_diff(&case.given, &back, color) {
                    let _ = writeln!(
                        out,
                        "lossy: converted to {} and back to {from}, the object changed \
                         (keep what a version cannot hold in an annotation, or mark the case lossy):\n{diff}",
                        case.desired_api_version
                    );
                }
            }
            Err(err) => {
                let _ = writeln!(out, "converting back to {from} failed: {err}");
            }
        }
    }
}

/// Converts each of `objects` to every version of `conversion` and back, and panics listing
/// every one that did not come back unchanged: the round-trip property for a whole set of
/// examples at once.
#[track_caller]
pub fn assert_round_trips<H>(
    conversion: &Conversion<H>,
    objects: impl IntoIterator<Item = impl Serialize>,
) {
    let mut table = ConversionTests::new(conversion.clone());
    for (i, object) in objects.into_iter().enumerate() {
        let object = serde_json::to_value(object).unwrap_or(Value::Null);
        for version in conversion.versions() {
            let name = format!("object {i} through {version}");
            table = table.case(ConversionCase::new(name, object.clone(), version));
        }
    }
    table.run();
}
