//! `GET /version`: the server's `version.Info` (apimachinery `pkg/version`).
//!
//! The server reports the Kubernetes minor version that `k8s-openapi` is compiled for (the
//! `v1_*` feature the final binary picks; 1.37 in this workspace's tests, through `latest`), as
//! release `v1.<minor>.0`: clients that look at the version see the API the types describe.
//! Emulation is that same version and the minimum compatibility version the one before, as a
//! real server has them by default. The build fields are fixed placeholders: this server is not
//! built from a Kubernetes commit by Go.

use serde::Serialize;

// Exactly one of these expands: the one for the version k8s-openapi is built for. The last one
// also covers any newer version a later k8s-openapi 0.29 release might add.
k8s_openapi::k8s_if_1_33! {
    const MINOR: u32 = 33;
}
k8s_openapi::k8s_if_1_34! {
    const MINOR: u32 = 34;
}
k8s_openapi::k8s_if_1_35! {
    const MINOR: u32 = 35;
}
k8s_openapi::k8s_if_1_36! {
    const MINOR: u32 = 36;
}
k8s_openapi::k8s_if_ge_1_37! {
    const MINOR: u32 = 37;
}

/// `version.Info`, fields in Go's order.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Info {
    major: String,
    minor: String,
    emulation_major: String,
    emulation_minor: String,
    min_compatibility_major: String,
    min_compatibility_minor: String,
    git_version: String,
    git_commit: &'static str,
    git_tree_state: &'static str,
    build_date: &'static str,
    go_version: &'static str,
    compiler: &'static str,
    platform: &'static str,
}

fn info(minor: u32) -> Info {
    Info {
        major: "1".into(),
        minor: minor.to_string(),
        emulation_major: "1".into(),
        emulation_minor: minor.to_string(),
        min_compatibility_major: "1".into(),
        min_compatibility_minor: minor.saturating_sub(1).to_string(),
        git_version: format!("v1.{minor}.0"),
        git_commit: "0000000000000000000000000000000000000000",
        git_tree_state: "clean",
        build_date: "1970-01-01T00:00:00Z",
        go_version: "go1.25.0",
        compiler: "gc",
        platform: "linux/amd64",
    }
}

/// The `/version` document.
pub(crate) fn document() -> Vec<u8> {
    serde_json::to_vec(&info(MINOR)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_reads_as_kube_expects_it() {
        let parsed: k8s_openapi::apimachinery::pkg::version::Info =
            serde_json::from_slice(&document()).unwrap();
        assert_eq!(parsed.major, "1");
        assert_eq!(parsed.minor, MINOR.to_string());
        assert_eq!(parsed.git_version, format!("v1.{MINOR}.0"));
        assert_eq!(parsed.emulation_minor, Some(MINOR.to_string()));
        assert_eq!(
            parsed.min_compatibility_minor,
            Some((MINOR - 1).to_string())
        );
    }

    #[test]
    fn fields_come_in_go_order() {
        let text = String::from_utf8(serde_json::to_vec(&info(35)).unwrap()).unwrap();
        assert!(
            text.starts_with(r#"{"major":"1","minor":"35","emulationMajor":"1","emulationMinor":"35","minCompatibilityMajor":"1","minCompatibilityMinor":"34","gitVersion":"v1.35.0","#),
            "{text}"
        );
    }
}
