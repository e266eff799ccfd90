//! The batch group's printers (pkg/printers/internalversion/printers.go: `printJob`,
//! `printCronJob`).

use jiff::Timestamp;
use recon_apimachinery::json::Value;

use super::super::document::{Cell, Row};
use super::super::{age, timestamp};
use super::{
    AGE, CONTAINERS, IMAGES, NAME, Printer, age_of, at, container_cells, format_label_selector,
    int_at, integer, list_at, name, str_at, text, wide,
};
use crate::wire::object::Object;

/// The Selector column of both kinds: the job's.
const JOB_SELECTOR: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

pub(super) const JOB: Printer = Printer {
    group: "batch",
    kind: "Job",
    columns: &[
        NAME,
        text("Status", "Status of the job."),
        text(
            "Completions",
            "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
        ),
        text("Duration", "Time required to complete the job."),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", JOB_SELECTOR),
    ],
    row: job_row,
};

/// Whether the job's condition of `ty` (the first of it) is `True`.
fn has_condition(obj: &Object, ty: &str) -> bool {
    list_at(obj, &["status", "conditions"])
        .iter()
        .find(|c| c.get("type").and_then(Value::as_str) == Some(ty))
        .is_some_and(|c| c.get("status").and_then(Value::as_str) == Some("True"))
}

fn job_row(obj: &Object, now: Timestamp) -> Row {
    let succeeded = int_at(obj, &["status", "succeeded"]);
    let completions = match at(obj, &["spec", "completions"]).and_then(Value::as_i64) {
        Some(completions) => format!("{succeeded}/{completions}"),
        None => match int_at(obj, &["spec", "parallelism"]) {
            p if p > 1 => format!("{succeeded}/1 of {p}"),
            _ => format!("{succeeded}/1"),
        },
    };
    let time = |key: &str| timestamp(str_at(obj, &["status", key]));
    let duration = match (time("startTime"), time("completionTime")) {
        (None, _) => String::new(),
        (Some(start), None) => age::since(Some(start), now),
        (Some(start), Some(end)) => {
            age::human_duration(end.as_nanosecond() - start.as_nanosecond())
        }
    };
    let deleting = at(obj, &["metadata", "deletionTimestamp"]).is_some_and(|d| !d.is_null());
    let status = if has_condition(obj, "Complete") {
        "Complete"
    } else if has_condition(obj, "Failed") {
        "Failed"
    } else if deleting {
        "Terminating"
    } else if has_condition(obj, "Suspended") {
        "Suspended"
    } else if has_condition(obj, "FailureTarget") {
        "FailureTarget"
    } else if has_condition(obj, "SuccessCriteriaMet") {
        "SuccessCriteriaMet"
    } else {
        "Running"
    };
    let (containers, images) = container_cells(obj, &["spec", "template"]);
    Row::new(vec![
        name(obj),
        Cell::text(status),
        Cell::text(completions),
        Cell::text(duration),
        age_of(obj, now),
        containers,
        images,
        Cell::text(format_label_selector(at(obj, &["spec", "selector"]))),
    ])
}

pub(super) const CRON_JOB: Printer = Printer {
    group: "batch",
    kind: "CronJob",
    columns: &[
        NAME,
        text(
            "Schedule",
            "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
        ),
        text(
            "Timezone",
            "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
        ),
        super::super::document::Column::new(
            "Suspend",
            "boolean",
            "",
            "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
            0,
        ),
        integer("Active", "A list of pointers to currently running jobs."),
        text(
            "Last Schedule",
            "Information when was the last time the job was successfully scheduled.",
        ),
        AGE,
        CONTAINERS,
        IMAGES,
        wide("Selector", JOB_SELECTOR),
    ],
    row: |obj, now| {
        let last_schedule = match str_at(obj, &["status", "lastScheduleTime"]) {
            "" => "<none>".to_owned(),
            t => age::since(timestamp(t), now),
        };
        let time_zone = at(obj, &["spec", "timeZone"])
            .and_then(Value::as_str)
            .unwrap_or("<none>");
        // `printBoolPtr`: the printed bool, in a column that says boolean.
        let suspend = match at(obj, &["spec", "suspend"]).and_then(Value::as_bool) {
            Some(true) => "True",
            Some(false) => "False",
            None => "<unset>",
        };
        let active = list_at(obj, &["status", "active"]).len();
        let (containers, images) =
            container_cells(obj, &["spec", "jobTemplate", "spec", "template"]);
        Row::new(vec![
            name(obj),
            Cell::text(str_at(obj, &["spec", "schedule"])),
            Cell::text(time_zone),
            Cell::text(suspend),
            Cell::Int(i64::try_from(active).unwrap_or(i64::MAX)),
            Cell::text(last_schedule),
            age_of(obj, now),
            containers,
            images,
            Cell::text(format_label_selector(at(
                obj,
                &["spec", "jobTemplate", "spec", "selector"],
            ))),
        ])
    },
};

#[cfg(test)]
mod tests {
    use recon_apimachinery::json;

    use super::*;

    #[test]
    fn jobs_print_status_completions_and_duration() {
        let now: Timestamp = "2026-01-01T01:00:00Z".parse().unwrap();
        let obj = json!({
            "metadata": {"name": "j"},
            "spec": {"parallelism": 3},
            "status": {"succeeded": 1, "startTime": "2026-01-01T00:00:00Z",
                       "conditions": [{"type": "Suspended", "status": "True"}]}
        });
        let row = job_row(obj.as_object().unwrap(), now);
        assert_eq!(
            row.cells[1..4],
            [
                Cell::text("Suspended"),
                Cell::text("1/1 of 3"),
                Cell::text("60m")
            ]
        );
        let done = json!({
            "spec": {"completions": 2},
            "status": {"succeeded": 2, "startTime": "2026-01-01T00:00:00Z",
                       "completionTime": "2026-01-01T00:00:30Z",
                       "conditions": [{"type": "Complete", "status": "True"}]}
        });
        let row = job_row(done.as_object().unwrap(), now);
        assert_eq!(
            row.cells[1..4],
            [Cell::text("Complete"), Cell::text("2/2"), Cell::text("30s")]
        );
    }
}
