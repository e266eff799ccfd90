//! Property tests of the selector parsers (issue 22): arbitrary strings, and valid selectors
//! with characters inserted, deleted or replaced, never make parsing or matching panic, and a
//! field selector written back from its requirements parses to the same requirements.

use std::collections::HashMap;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngSeed};
use recon_apimachinery::selector::{FieldOp, FieldRequirement, FieldSelector, LabelSelector};
use support::mutation::{edit, mutate};

mod support {
    pub(crate) mod mutation;
}

/// `RECON_PROPTEST_CASES` cases per property (`cargo xtask fuzz` sets it high), else enough to
/// be useful within a second or two of a debug build, from the seed `PROPTEST_RNG_SEED` (the
/// fuzz command sets a new one) or else a fixed one, so that CI explores what the submitter's
/// run explored. (recon-test-fixtures has the same for the other crates; this crate stays
/// free of it.) No failure persistence: a failure prints its minimal input, which belongs in a
/// plain regression test, and nothing is written into the source tree.
fn config() -> Config {
    let cases = std::env::var("RECON_PROPTEST_CASES")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(1000);
    let defaults = Config::default();
    Config {
        cases,
        failure_persistence: None,
        rng_seed: match std::env::var_os("PROPTEST_RNG_SEED") {
            Some(_) => defaults.rng_seed,
            None => RngSeed::Fixed(0x7265_636f_6e00),
        },
        ..defaults
    }
}

/// Selectors the parsers accept, to mutate: mutations of valid input reach the parsers' later
/// states, which arbitrary strings seldom do.
const VALID_LABEL_SELECTORS: &[&str] = &[
    "app=web",
    "app==web,tier!=db",
    "tier in (front,back),!legacy",
    "env notin (prod, staging),team",
    "example.com/key=v-1.2_3",
    "replicas>3,replicas<10",
    "a in (),b notin ()",
    "",
];

const VALID_FIELD_SELECTORS: &[&str] = &[
    "metadata.name=web",
    "metadata.namespace!=kube-system,status.phase==Running",
    "spec.nodeName=a\\,b\\=c\\\\d",
    "metadata.name=",
    "",
];

/// What the mutations insert or substitute: the selectors' operators and punctuation, and
/// characters a parser may handle badly (NUL, multi-byte UTF-8, whitespace, escapes).
const PIECES: &[&str] = &[
    "=", "==", "!=", "!", ",", "in", "notin", " in ", "(", ")", ">", "<", "\\", "/", ".", "-", "_",
    " ", "\t", "\0", "é", "𝄞", "\u{200b}", "a", "0", "9",
];

/// Arbitrary strings, mostly from the selectors' own alphabet so that some parse.
fn selector_text(valid: &'static [&'static str]) -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[a-c=!,() <>\\\\/.inot\t-]{0,40}",
        (
            prop::sample::select(valid),
            prop::collection::vec(edit(), 0..6)
        )
            .prop_map(|(source, edits)| mutate(source, &edits, PIECES)),
    ]
}

/// Labels, or an object's field values, sharing keys and values with the selectors above.
fn string_map() -> impl Strategy<Value = HashMap<String, String>> {
    let word = prop_oneof![
        Just(String::new()),
        "[a-c]",
        Just("app".to_owned()),
        Just("web".to_owned()),
        Just("tier".to_owned()),
        Just("front".to_owned()),
        Just("replicas".to_owned()),
        "[0-9]{1,3}",
        "-?[0-9]{1,20}",
    ];
    prop::collection::hash_map(word.clone(), word, 0..5)
}

/// A field selector's text from its requirements, escaping the value as `EscapeValue` does.
fn render(requirements: &[FieldRequirement]) -> String {
    let terms: Vec<String> = requirements
        .iter()
        .map(|r| {
            let op = match r.op {
                FieldOp::Equals => "=",
                FieldOp::NotEquals => "!=",
            };
            let mut value = String::new();
            for c in r.value.chars() {
                if matches!(c, '\\' | ',' | '=') {
                    value.push('\\');
                }
                value.push(c);
            }
            format!("{}{op}{value}", r.field)
        })
        .collect();
    terms.join(",")
}

/// The requirements in an order that does not depend on how they were written.
fn sorted(requirements: &[FieldRequirement]) -> Vec<(String, bool, String)> {
    let mut out: Vec<_> = requirements
        .iter()
        .map(|r| (r.field.clone(), r.op == FieldOp::Equals, r.value.clone()))
        .collect();
    out.sort();
    out
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn label_selectors_parse_and_match_without_panicking(
        text in selector_text(VALID_LABEL_SELECTORS),
        labels in string_map(),
    ) {
        if let Ok(selector) = LabelSelector::parse(&text) {
            selector.matches(|key| labels.get(key).map(String::as_str));
            // Parsing is a function of the text: the same text, the same selector.
            prop_assert_eq!(LabelSelector::parse(&text), Ok(selector));
        }
    }

    #[test]
    fn field_selectors_parse_match_and_round_trip(
        text in selector_text(VALID_FIELD_SELECTORS),
        fields in string_map(),
    ) {
        if let Ok(selector) = FieldSelector::parse(&text) {
            selector.matches(|field| fields.get(field).cloned());
            let rendered = render(selector.requirements());
            let again = FieldSelector::parse(&rendered);
            prop_assert!(again.is_ok(), "{:?} rendered as {:?}: {:?}", text, rendered, again);
            if let Ok(again) = again {
                prop_assert_eq!(sorted(again.requirements()), sorted(selector.requirements()));
            }
        }
    }
}
