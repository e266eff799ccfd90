//! Random edits of a valid source, for properties that parsers never panic and fail as the
//! real ones do: a proptest strategy of edits and the function that applies them with pieces
//! of the language (operators, punctuation, characters a parser may handle badly). Shared by
//! the selector properties here and the CEL properties of recon-fake (included there by path).

use proptest::prelude::*;

/// One edit of a source, at a position and with a piece picked by index (modulo the lengths).
#[derive(Debug, Clone)]
pub(crate) enum Edit {
    Insert(usize, usize),
    Delete(usize),
    Replace(usize, usize),
}

/// Any edit.
pub(crate) fn edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        (any::<usize>(), any::<usize>()).prop_map(|(at, piece)| Edit::Insert(at, piece)),
        any::<usize>().prop_map(Edit::Delete),
        (any::<usize>(), any::<usize>()).prop_map(|(at, piece)| Edit::Replace(at, piece)),
    ]
}

/// Applies the edits at character boundaries, so the result stays a `&str`, inserting and
/// substituting `pieces`.
pub(crate) fn mutate(source: &str, edits: &[Edit], pieces: &[&str]) -> String {
    let mut chars: Vec<String> = source.chars().map(String::from).collect();
    for edit in edits {
        match *edit {
            Edit::Insert(at, piece) => {
                let at = at % (chars.len() + 1);
                chars.insert(at, pieces[piece % pieces.len()].to_owned());
            }
            Edit::Delete(at) if !chars.is_empty() => {
                let at = at % chars.len();
                chars.remove(at);
            }
            Edit::Replace(at, piece) if !chars.is_empty() => {
                let at = at % chars.len();
                chars[at] = pieces[piece % pieces.len()].to_owned();
            }
            Edit::Delete(_) | Edit::Replace(..) => {}
        }
    }
    chars.concat()
}
