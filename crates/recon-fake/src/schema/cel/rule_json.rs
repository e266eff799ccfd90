//! A rule as `field.Error` prints it when a CRD is refused for it: Go's `json.Marshal` of
//! `apiextensions.ValidationRule`.

use recon_apimachinery::go_json::write_go_string as string;

use super::tree::RawRule;

/// `apiextensions.ValidationRule` as JSON (its Go field names, in their order).
pub(super) fn rule(r: &RawRule) -> String {
    let mut out = String::from("{\"Rule\":");
    string(&mut out, &r.rule);
    out.push_str(",\"Message\":");
    string(&mut out, &r.message);
    out.push_str(",\"MessageExpression\":");
    string(&mut out, &r.message_expression);
    out.push_str(",\"Reason\":");
    match &r.reason {
        Some(reason) => string(&mut out, reason),
        None => out.push_str("null"),
    }
    out.push_str(",\"FieldPath\":");
    string(&mut out, &r.field_path);
    out.push_str(",\"OptionalOldSelf\":");
    out.push_str(match r.optional_old_self {
        Some(true) => "true",
        Some(false) => "false",
        None => "null",
    });
    out.push('}');
    out
}
