//! The CEL expressions of admission policies, compiled as kube-apiserver compiles them when a
//! policy is written (`k8s.io/apiserver/pkg/admission/plugin/cel`, `compile.go` and
//! `composition.go` of 1.36): parsed, type-checked against the admission environment
//! (`object`, `oldObject` and `params` dynamic, `request` and `namespaceObject` typed,
//! `authorizer` and `authorizer.requestResource`, the `variables` composed so far), then
//! their type compared with what the expression must evaluate to.

use std::collections::BTreeMap;
use std::rc::Rc;

use super::check::{self, Features, JSON_PATCH, patch_type};
use super::syntax;
use super::types::{ObjType, Type};

/// Which optional variables an expression sees (`OptionalVariableDeclarations`).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Declarations {
    /// `params`: the policy has a `paramKind` (or, for match conditions, allows params).
    pub(crate) params: bool,
    /// `authorizer` and `authorizer.requestResource`.
    pub(crate) authorizer: bool,
    /// The mutation patch types (`Object{...}`, `JSONPatch{...}`, `jsonpatch.escapeKey`).
    pub(crate) patch_types: bool,
}

/// What an expression must evaluate to (its accessor's `ReturnTypes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Returns {
    /// Validations and match conditions.
    Bool,
    /// Message expressions.
    String,
    /// Audit annotations' values.
    StringOrNull,
    /// Variables: anything.
    Any,
    /// An apply configuration: an `Object`.
    Object,
    /// A JSON patch: a list of `JSONPatch`.
    JsonPatches,
}

impl Returns {
    fn types(self) -> Vec<Type> {
        let object = |name: &str| patch_type(name).map_or(Type::Error, Type::Object);
        match self {
            Returns::Bool => vec![Type::Bool],
            Returns::String => vec![Type::String],
            Returns::StringOrNull => vec![Type::String, Type::Null],
            Returns::Any => Vec::new(),
            Returns::Object => vec![object("Object")],
            Returns::JsonPatches => vec![Type::list(object(JSON_PATCH))],
        }
    }
}

/// A compiler of one policy's expressions (run it within [`super::on_large_stack`]: checking
/// recurses once per node): stateless (no `variables`), or composing its
/// variables (`NewCompositedCompiler`), each compiled variable visible to what is compiled
/// after it as a field of `variables`.
#[derive(Debug, Clone, Default)]
pub(crate) struct PolicyCompiler {
    variables: Option<Vec<(String, Type)>>,
}

impl PolicyCompiler {
    /// The stateless compiler (match conditions, a validating policy without variables).
    pub(crate) fn stateless() -> PolicyCompiler {
        PolicyCompiler { variables: None }
    }

    /// A compiler composing variables (`NewCompositedCompiler`).
    pub(crate) fn composited() -> PolicyCompiler {
        PolicyCompiler {
            variables: Some(Vec::new()),
        }
    }

    /// Whether it composes variables.
    pub(crate) fn composes(&self) -> bool {
        self.variables.is_some()
    }

    /// `CompileCELExpression`: `Err` holds the detail the real server reports
    /// (`compilation failed: ERROR: <input>:1:5: ...`, `must evaluate to bool but got int`).
    pub(crate) fn compile(
        &self,
        source: &str,
        decls: Declarations,
        returns: Returns,
    ) -> Result<(), String> {
        self.output_type(source, decls, returns).map(|_| ())
    }

    /// `CompileAndStoreVariable`: compiles a variable and adds it to `variables`, of its
    /// type (`dyn` when it does not compile or is not a scalar, list or map).
    pub(crate) fn compile_variable(
        &mut self,
        name: &str,
        source: &str,
        decls: Declarations,
    ) -> Result<(), String> {
        let result = self.output_type(source, decls, Returns::Any);
        let ty = result.as_ref().map_or(Type::Dyn, declared);
        if let Some(vars) = &mut self.variables {
            vars.retain(|(n, _)| n != name);
            vars.push((name.to_owned(), ty));
        }
        result.map(|_| ())
    }

    fn output_type(
        &self,
        source: &str,
        decls: Declarations,
        returns: Returns,
    ) -> Result<Type, String> {
        let vars = self.environment(decls);
        let features = Features {
            patch_types: decls.patch_types,
        };
        let checked = syntax::parse(source).and_then(|mut expr| {
            let checked = check::check_in(&mut expr, vars, features);
            if checked.issues.is_empty() {
                Ok(checked.ty)
            } else {
                Err(syntax::render_issues(source, &checked.issues))
            }
        });
        let ty = checked.map_err(|issues| format!("compilation failed: {issues}"))?;
        let wanted = returns.types();
        if wanted.is_empty() || wanted.contains(&ty) {
            return Ok(ty);
        }
        let got = ty.declared();
        Err(match wanted.as_slice() {
            [one] => format!("must evaluate to {} but got {got}", one.declared()),
            many => {
                let names: Vec<String> = many.iter().map(Type::declared).collect();
                format!(
                    "must evaluate to one of [{}] but got {got}",
                    names.join(" ")
                )
            }
        })
    }

    /// The variables an expression sees (`createEnvForOpts`).
    fn environment(&self, decls: Declarations) -> Vec<(String, Type)> {
        let mut vars = vec![
            ("object".to_owned(), Type::Dyn),
            ("oldObject".to_owned(), Type::Dyn),
            ("namespaceObject".to_owned(), namespace_type()),
            ("request".to_owned(), request_type()),
        ];
        if decls.params {
            vars.push(("params".to_owned(), Type::Dyn));
        }
        if decls.authorizer {
            let authz = |name| Type::Opaque(name, Vec::new());
            vars.push((
                "authorizer".to_owned(),
                authz("kubernetes.authorization.Authorizer"),
            ));
            vars.push((
                "authorizer.requestResource".to_owned(),
                authz("kubernetes.authorization.ResourceCheck"),
            ));
        }
        if let Some(composed) = &self.variables {
            vars.push((
                "variables".to_owned(),
                object("kubernetes.variables", composed.iter().cloned().collect()),
            ));
        }
        vars
    }
}

/// `convertCelTypeToDeclType`: scalars kept, lists and maps converted element-wise, anything
/// else `dyn`.
fn declared(t: &Type) -> Type {
    match t {
        Type::Bool
        | Type::Bytes
        | Type::Double
        | Type::Duration
        | Type::Int
        | Type::Null
        | Type::String
        | Type::Timestamp
        | Type::Uint => t.clone(),
        Type::List(e) => Type::list(declared(e)),
        Type::Map(k, v) => Type::map(declared(k), declared(v)),
        _ => Type::Dyn,
    }
}

fn object(name: &str, fields: BTreeMap<String, Type>) -> Type {
    Type::Object(Rc::new(ObjType {
        name: name.to_owned(),
        fields,
    }))
}

fn fields(list: &[(&str, Type)]) -> BTreeMap<String, Type> {
    list.iter()
        .map(|(n, t)| ((*n).to_owned(), t.clone()))
        .collect()
}

/// `BuildRequestType`: `kubernetes.AdmissionRequest`.
fn request_type() -> Type {
    let gvk = object(
        "kubernetes.GroupVersionKind",
        fields(&[
            ("group", Type::String),
            ("version", Type::String),
            ("kind", Type::String),
        ]),
    );
    let gvr = object(
        "kubernetes.GroupVersionResource",
        fields(&[
            ("group", Type::String),
            ("version", Type::String),
            ("resource", Type::String),
        ]),
    );
    let user = object(
        "kubernetes.UserInfo",
        fields(&[
            ("username", Type::String),
            ("uid", Type::String),
            ("groups", Type::list(Type::String)),
            ("extra", Type::map(Type::String, Type::list(Type::String))),
        ]),
    );
    object(
        "kubernetes.AdmissionRequest",
        fields(&[
            ("kind", gvk.clone()),
            ("resource", gvr.clone()),
            ("subResource", Type::String),
            ("requestKind", gvk),
            ("requestResource", gvr),
            ("requestSubResource", Type::String),
            ("name", Type::String),
            ("namespace", Type::String),
            ("operation", Type::String),
            ("userInfo", user),
            ("dryRun", Type::Bool),
            ("options", Type::Dyn),
        ]),
    )
}

/// `BuildNamespaceType`: `kubernetes.Namespace`.
fn namespace_type() -> Type {
    let strings = || Type::list(Type::String);
    let string_map = || Type::map(Type::String, Type::String);
    let spec = object(
        "kubernetes.NamespaceSpec",
        fields(&[("finalizers", strings())]),
    );
    let condition = object(
        "kubernetes.NamespaceCondition",
        fields(&[
            ("status", Type::String),
            ("type", Type::String),
            ("lastTransitionTime", Type::Timestamp),
            ("message", Type::String),
            ("reason", Type::String),
        ]),
    );
    let status = object(
        "kubernetes.NamespaceStatus",
        fields(&[
            ("conditions", Type::list(condition)),
            ("phase", Type::String),
        ]),
    );
    let metadata = object(
        "kubernetes.NamespaceMetadata",
        fields(&[
            ("name", Type::String),
            ("generateName", Type::String),
            ("namespace", Type::String),
            ("labels", string_map()),
            ("annotations", string_map()),
            ("UID", Type::String),
            ("creationTimestamp", Type::Timestamp),
            ("deletionGracePeriodSeconds", Type::Int),
            ("deletionTimestamp", Type::Timestamp),
            ("generation", Type::Int),
            ("resourceVersion", Type::String),
            ("finalizers", strings()),
        ]),
    );
    object(
        "kubernetes.Namespace",
        fields(&[("metadata", metadata), ("spec", spec), ("status", status)]),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: Declarations = Declarations {
        params: true,
        authorizer: true,
        patch_types: false,
    };

    #[test]
    fn policy_variables_are_declared() {
        let c = PolicyCompiler::stateless();
        let ok = "object.spec.replicas > 1 && request.userInfo.username != '' \
                  && namespaceObject.metadata.name != '' && params.x == 1 \
                  && authorizer.requestResource.check('get').allowed() \
                  && authorizer.group('apps').resource('deployments').check('scale').allowed()";
        assert_eq!(c.compile(ok, ALL, Returns::Bool), Ok(()));
        let err = c
            .compile("variables.x == 1", ALL, Returns::Bool)
            .unwrap_err();
        assert!(
            err.starts_with(
                "compilation failed: ERROR: <input>:1:1: undeclared reference to 'variables'"
            ),
            "{err}"
        );
        let no_params = Declarations {
            params: false,
            ..ALL
        };
        assert!(c.compile("params.x", no_params, Returns::Any).is_err());
    }

    #[test]
    fn return_types_are_exact() {
        let c = PolicyCompiler::stateless();
        assert_eq!(
            c.compile("1 + 1", ALL, Returns::Bool),
            Err("must evaluate to bool but got int".to_owned())
        );
        assert_eq!(
            c.compile("object.x", ALL, Returns::Bool),
            Err("must evaluate to bool but got dyn".to_owned())
        );
        assert_eq!(
            c.compile("1", ALL, Returns::StringOrNull),
            Err("must evaluate to one of [string null_type] but got int".to_owned())
        );
        assert_eq!(c.compile("null", ALL, Returns::StringOrNull), Ok(()));
    }

    #[test]
    fn variables_compose_in_order() {
        let mut c = PolicyCompiler::composited();
        assert!(c.compile_variable("a", "1", ALL).is_ok());
        assert!(c.compile_variable("b", "variables.a + 1", ALL).is_ok());
        let err = c.compile_variable("c", "variables.d", ALL).unwrap_err();
        assert!(err.contains("undefined field 'd'"), "{err}");
        assert_eq!(c.compile("variables.b > 1", ALL, Returns::Bool), Ok(()));
    }

    #[test]
    fn patch_types_build_messages() {
        let c = PolicyCompiler::composited();
        let patch = Declarations {
            patch_types: true,
            ..ALL
        };
        assert_eq!(
            c.compile(
                "Object{metadata: Object.metadata{labels: {'a': 'b'}}}",
                patch,
                Returns::Object
            ),
            Ok(())
        );
        assert_eq!(
            c.compile(
                "[JSONPatch{op: 'add', path: '/a/' + jsonpatch.escapeKey('b/c'), value: 1}]",
                patch,
                Returns::JsonPatches
            ),
            Ok(())
        );
        let err = c
            .compile("[JSONPatch{op: 1}]", patch, Returns::JsonPatches)
            .unwrap_err();
        assert!(
            err.contains("expected type of field 'op' is 'string' but provided type is 'int'"),
            "{err}"
        );
        assert!(c.compile("Object{}", ALL, Returns::Object).is_err());
    }
}
