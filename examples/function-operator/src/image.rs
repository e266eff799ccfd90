//! Resolving a Function's image, as `docker pull` reads a reference, and the pull policy the
//! API server defaults for it.

use recon_core::SyncReconciler;

use crate::CONDITIONS;
use crate::function::Function;
use crate::naming::status_of;

/// Why an image reference cannot be resolved.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("image {image:?} is not a valid image reference: {reason}")]
pub struct InvalidImage {
    /// The image as given.
    pub image: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

/// Resolves an image reference as `docker pull` reads it: a reference without a registry is
/// on `docker.io` (a single name under `library/`), and one with neither a tag nor a digest
/// means `:latest`.
///
/// ```
/// use function_operator::resolve_image;
///
/// assert_eq!(resolve_image("hello").unwrap(), "docker.io/library/hello:latest");
/// assert_eq!(resolve_image("acme/hello:1.2").unwrap(), "docker.io/acme/hello:1.2");
/// assert_eq!(resolve_image("localhost:5000/hello").unwrap(), "localhost:5000/hello:latest");
/// assert_eq!(
///     resolve_image("ghcr.io/acme/hello@sha256:0123456789abcdef").unwrap(),
///     "ghcr.io/acme/hello@sha256:0123456789abcdef"
/// );
/// assert!(resolve_image("Hello World").is_err());
/// ```
pub fn resolve_image(image: &str) -> Result<String, InvalidImage> {
    let invalid = |reason| InvalidImage {
        image: image.to_owned(),
        reason,
    };
    if image.is_empty() {
        return Err(invalid("it is empty"));
    }
    if image.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(invalid("it contains whitespace"));
    }
    let (name, digest) = match image.split_once('@') {
        Some((name, digest)) => (name, Some(digest)),
        None => (image, None),
    };
    if let Some(digest) = digest {
        let well_formed = digest.split_once(':').is_some_and(|(algorithm, hex)| {
            !algorithm.is_empty()
                && algorithm
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+._-".contains(c))
                && hex.len() >= 8
                && hex.chars().all(|c| c.is_ascii_hexdigit())
        });
        if !well_formed {
            return Err(invalid("its digest is not <algorithm>:<hex>"));
        }
    }
    // A tag is a `:` after the last `/` (a `:` before it is a registry's port).
    let last_slash = name.rfind('/').map_or(0, |i| i + 1);
    let (repository, tag) = match name[last_slash..].rfind(':') {
        Some(i) => (&name[..last_slash + i], Some(&name[last_slash + i + 1..])),
        None => (name, None),
    };
    if let Some(tag) = tag {
        let valid = !tag.is_empty()
            && tag.len() <= 128
            && !tag.starts_with(['.', '-'])
            && tag
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c));
        if !valid {
            return Err(invalid("its tag is not valid"));
        }
    }
    let mut components: Vec<&str> = repository.split('/').collect();
    let first = components.first().copied().unwrap_or_default();
    let has_registry = components.len() > 1
        && (first.contains(['.', ':'])
            || first == "localhost"
            || first.contains(char::is_uppercase));
    let registry = if has_registry {
        let registry = components.remove(0);
        let valid = registry
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || ".-:".contains(c))
            && !registry.starts_with(['.', '-', ':'])
            && !registry.ends_with(['.', '-', ':']);
        if !valid {
            return Err(invalid("its registry is not a host name"));
        }
        registry
    } else {
        "docker.io"
    };
    let path_component = |c: &str| {
        !c.is_empty()
            && c.chars()
                .all(|ch| ch.is_ascii_lowercase() || ch.is_ascii_digit() || "._-".contains(ch))
            && c.starts_with(|ch: char| ch.is_ascii_alphanumeric())
            && c.ends_with(|ch: char| ch.is_ascii_alphanumeric())
    };
    if components.is_empty() || !components.iter().all(|c| path_component(c)) {
        return Err(invalid(
            "its repository must be lowercase letters, digits and separators",
        ));
    }
    let mut resolved = registry.to_owned();
    if !has_registry && components.len() == 1 {
        resolved.push_str("/library");
    }
    for component in components {
        resolved.push('/');
        resolved.push_str(component);
    }
    match (tag, digest) {
        (_, Some(digest)) => {
            if let Some(tag) = tag {
                resolved.push(':');
                resolved.push_str(tag);
            }
            resolved.push('@');
            resolved.push_str(digest);
        }
        (Some(tag), None) => {
            resolved.push(':');
            resolved.push_str(tag);
        }
        (None, None) => resolved.push_str(":latest"),
    }
    Ok(resolved)
}

pub(crate) fn resolve_image_step() -> SyncReconciler<Function> {
    SyncReconciler::<Function>::new("ResolveImage").sync(async |ctx, function| {
        let resolved = resolve_image(&function.spec.image);
        let status = status_of(function);
        let mut conditions = CONDITIONS.manage(&mut status.conditions, ctx.now());
        match resolved {
            Ok(image) => {
                conditions.mark_true("ImageResolved", "Resolved", "");
                status.resolved_image = Some(image);
            }
            Err(err) => {
                conditions.mark_false("ImageResolved", "InvalidImage", &err.to_string());
                status.resolved_image = None;
            }
        }
        Ok(())
    })
}

/// The pull policy kube-apiserver defaults a container to for `image`
/// (`pkg/apis/core/v1/defaults.go`, `SetDefaults_Container`): `Always` for the `latest` tag or
/// none, `IfNotPresent` otherwise. Owned rather than left to defaulting, which happens only
/// at creation: a Function whose image moves from `hello` to `hello:2` would keep `Always`,
/// where one created with `hello:2` gets `IfNotPresent` (found by the exploration's fresh start).
pub(crate) fn pull_policy(image: &str) -> &'static str {
    let (name, digest) = image
        .split_once('@')
        .map_or((image, None), |(n, d)| (n, Some(d)));
    let last = name.rsplit('/').next().unwrap_or(name);
    match last.rsplit_once(':').map(|(_, tag)| tag) {
        Some("latest") => "Always",
        Some(_) => "IfNotPresent",
        None if digest.is_some() => "IfNotPresent",
        None => "Always",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pull_policies_are_what_the_api_server_defaults() {
        for (image, policy) in [
            ("docker.io/library/hello:latest", "Always"),
            ("docker.io/library/hello", "Always"),
            ("localhost:5000/hello", "Always"),
            ("docker.io/library/hello:2", "IfNotPresent"),
            ("localhost:5000/hello:2", "IfNotPresent"),
            (
                "docker.io/library/hello@sha256:0123456789abcdef",
                "IfNotPresent",
            ),
            (
                "docker.io/library/hello:latest@sha256:0123456789abcdef",
                "Always",
            ),
        ] {
            assert_eq!(pull_policy(image), policy, "{image}");
        }
    }

    #[test]
    fn images_resolve_as_docker_pull_reads_them() {
        let cases = [
            ("hello", "docker.io/library/hello:latest"),
            ("hello:1.0", "docker.io/library/hello:1.0"),
            ("acme/hello", "docker.io/acme/hello:latest"),
            ("docker.io/acme/hello:2", "docker.io/acme/hello:2"),
            (
                "ghcr.io/acme/team/hello:v1.2.3",
                "ghcr.io/acme/team/hello:v1.2.3",
            ),
            ("localhost/hello", "localhost/hello:latest"),
            ("localhost:5000/hello", "localhost:5000/hello:latest"),
            (
                "registry.example.com:5000/a/b:c",
                "registry.example.com:5000/a/b:c",
            ),
            (
                "hello@sha256:0123456789abcdef",
                "docker.io/library/hello@sha256:0123456789abcdef",
            ),
            (
                "ghcr.io/acme/hello:1@sha256:0123456789abcdef",
                "ghcr.io/acme/hello:1@sha256:0123456789abcdef",
            ),
        ];
        for (image, resolved) in cases {
            assert_eq!(resolve_image(image).as_deref(), Ok(resolved), "{image}");
        }
    }

    #[test]
    fn malformed_images_are_refused_with_a_reason() {
        let cases = [
            ("", "it is empty"),
            ("hello world", "it contains whitespace"),
            ("hello:", "its tag is not valid"),
            ("hello:-x", "its tag is not valid"),
            (
                "Hello",
                "its repository must be lowercase letters, digits and separators",
            ),
            (
                "acme//hello",
                "its repository must be lowercase letters, digits and separators",
            ),
            (
                "ghcr.io/",
                "its repository must be lowercase letters, digits and separators",
            ),
            ("hello@sha256", "its digest is not <algorithm>:<hex>"),
            ("hello@sha256:xyz", "its digest is not <algorithm>:<hex>"),
            ("-bad.io/hello", "its registry is not a host name"),
            (
                "héllo",
                "its repository must be lowercase letters, digits and separators",
            ),
        ];
        for (image, reason) in cases {
            let err = resolve_image(image).expect_err(image);
            assert_eq!((err.image.as_str(), err.reason), (image, reason));
        }
    }
}
