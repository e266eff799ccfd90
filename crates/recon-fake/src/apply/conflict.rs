//! Apply conflicts and the 409 they become (apimachinery
//! `pkg/util/managedfields/internal/conflict.go`, `api/errors.NewApplyConflict`).

use recon_apimachinery::fieldpath::Path;
use recon_apimachinery::json;
use recon_apimachinery::json::Value;

use super::managed::ManagerId;

/// A field the applier wants to change that another owner holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// The other owner.
    pub manager: ManagerId,
    /// The contested field.
    pub path: Path,
}

/// The Status message: `Apply failed with 1 conflict: conflict with "m" using v1: .spec.x`, or
/// for several, one `conflicts with <owner>:` line per owner (owners sorted by identity)
/// followed by a `- <path>` line per field.
pub fn conflict_message(conflicts: &[Conflict]) -> String {
    if let [c] = conflicts {
        return format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            c.manager.display(),
            c.path
        );
    }
    let mut owners: Vec<&ManagerId> = conflicts.iter().map(|c| &c.manager).collect();
    owners.sort();
    owners.dedup();
    let mut lines = Vec::new();
    for owner in owners {
        lines.push(format!("conflicts with {}:", owner.display()));
        for c in conflicts.iter().filter(|c| &c.manager == owner) {
            lines.push(format!("- {}", c.path));
        }
    }
    format!(
        "Apply failed with {} conflicts: {}",
        conflicts.len(),
        lines.join("\n")
    )
}

/// The Status causes: one `FieldManagerConflict` per field, in the given order.
pub fn conflict_causes(conflicts: &[Conflict]) -> Vec<Value> {
    conflicts
        .iter()
        .map(|c| {
            json!({
                "reason": "FieldManagerConflict",
                "message": format!("conflict with {}", c.manager.display()),
                "field": c.path.to_string(),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use pretty_assertions::assert_eq;

    use super::*;
    use crate::apply::managed::Operation;

    fn c(m: &str, op: Operation, path: &[&str]) -> Conflict {
        Conflict {
            manager: ManagerId::new(m, op, "probe.example.com/v1", ""),
            path: Path::fields(path),
        }
    }

    /// The whole 409 body the apiserver returns (no name, group or kind in `details`).
    fn conflict_status(conflicts: &[Conflict]) -> Value {
        json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": conflict_message(conflicts),
            "reason": "Conflict",
            "details": {"causes": conflict_causes(conflicts)},
            "code": 409,
        })
    }

    #[test]
    fn one_conflict() {
        let cs = [c("mgr-d", Operation::Update, &["spec", "replicas"])];
        assert_eq!(
            conflict_message(&cs),
            r#"Apply failed with 1 conflict: conflict with "mgr-d" using probe.example.com/v1: .spec.replicas"#
        );
        assert_eq!(
            conflict_causes(&cs),
            [json!({"reason": "FieldManagerConflict",
                "message": "conflict with \"mgr-d\" using probe.example.com/v1",
                "field": ".spec.replicas"})]
        );
    }

    #[test]
    fn several_owners_group_by_owner() {
        let cs = [
            c("mgr-b", Operation::Apply, &["spec", "replicas"]),
            c("mgr-a", Operation::Apply, &["spec", "replicas"]),
        ];
        assert_eq!(
            conflict_message(&cs),
            "Apply failed with 2 conflicts: conflicts with \"mgr-a\":\n- .spec.replicas\nconflicts with \"mgr-b\":\n- .spec.replicas"
        );
        let status = conflict_status(&cs);
        assert_eq!(status["code"], 409);
        assert_eq!(
            status["details"]["causes"][0]["message"],
            "conflict with \"mgr-b\""
        );
    }
}
