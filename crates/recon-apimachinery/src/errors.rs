//! Go's aggregate of errors (`k8s.io/apimachinery/pkg/util/errors`, `aggregate.Error`): how
//! kube-apiserver prints a list of errors as one message.

/// The message of an aggregate of `messages`: `None` when there are none, one message as it
/// is, several deduplicated (first occurrence kept) and bracketed, `[a, b]`.
///
/// ```
/// use recon_apimachinery::errors::aggregate;
///
/// assert_eq!(aggregate(["a".to_owned()]), Some("a".to_owned()));
/// assert_eq!(
///     aggregate(["a".to_owned(), "b".to_owned(), "a".to_owned()]),
///     Some("[a, b]".to_owned())
/// );
/// assert_eq!(aggregate(["a".to_owned(), "a".to_owned()]), Some("a".to_owned()));
/// assert_eq!(aggregate(Vec::<String>::new()), None);
/// ```
pub fn aggregate(messages: impl IntoIterator<Item = String>) -> Option<String> {
    let mut unique: Vec<String> = Vec::new();
    for message in messages {
        if !unique.contains(&message) {
            unique.push(message);
        }
    }
    match unique.len() {
        0 => None,
        1 => unique.pop(),
        _ => Some(format!("[{}]", unique.join(", "))),
    }
}
