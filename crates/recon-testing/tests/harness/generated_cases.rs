//! A suite of 1,000 generated cases runs, and every one of them checks something: a wrong
//! expectation in any of them is caught and reported under that case's name.

#[path = "../support/doubler.rs"]
mod doubler;

use recon_testing::{CaseStatus, EventRef};

const CASES: usize = 1_000;

fn failed(report: &recon_testing::Report) -> Vec<&str> {
    report
        .cases
        .iter()
        .filter(|c| c.status != CaseStatus::Passed)
        .map(|c| c.name.as_str())
        .collect()
}

#[tokio::test]
async fn a_thousand_generated_cases_pass() {
    let report = doubler::table(CASES).check(doubler::reconciler).await;
    assert_eq!(report.cases.len(), CASES);
    assert!(failed(&report).is_empty(), "{}", report.render(false));
}

#[tokio::test]
async fn one_wrong_expectation_among_a_thousand_fails_that_case_alone() {
    let table = doubler::table_with(CASES, |i, case| match i {
        501 => case.expect_event(EventRef::normal("Doubled", "not sent")),
        _ => case,
    });

    let report = table.check(doubler::reconciler).await;

    assert_eq!(failed(&report), [doubler::case_name(501)]);
    let text = report.render(false);
    assert!(
        text.contains("expect.events[0]") && text.contains("\"reason\": \"Doubled\""),
        "{text}"
    );
}
