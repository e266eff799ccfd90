//! Go's `%v` of decoded JSON, as structured-merge-diff's error texts print values; the order,
//! equality and `ToString` of values are [`recon_apimachinery::value`]'s.

use recon_apimachinery::go_json::{Num, go_float};
use serde_json::Value;

/// Go's `%v` of an `interface{}` holding decoded JSON (used inside upstream error texts).
pub(super) fn go_v(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".to_owned(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => match Num::of(n) {
            Num::Int(i) => i.to_string(),
            Num::Float(f) => go_float(f),
        },
        Value::String(s) => s.clone(),
        Value::Array(items) => {
            let parts: Vec<String> = items.iter().map(go_v).collect();
            format!("[{}]", parts.join(" "))
        }
        Value::Object(m) => {
            let parts: Vec<String> = m.iter().map(|(k, v)| format!("{k}:{}", go_v(v))).collect();
            format!("map[{}]", parts.join(" "))
        }
    }
}

#[cfg(test)]
mod tests {
    use recon_apimachinery::go_json::go_type;
    use recon_apimachinery::go_quote;
    use serde_json::json;

    use super::*;

    #[test]
    fn go_v_and_go_type_match_go() {
        assert_eq!(go_v(&json!([1])), "[1]");
        assert_eq!(go_v(&json!({"a": null, "b": 1.5})), "map[a:<nil> b:1.5]");
        assert_eq!(go_type(&json!("x")), "string");
        assert_eq!(go_quote("tab\there\u{1}"), "\"tab\\there\\x01\"");
    }
}
