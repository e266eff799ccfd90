//! `field.Path` as its `String()` prints it: `spec.template.spec.containers[0].ports[1].name`,
//! map keys in brackets and unquoted (`data[key]`), the nil path `<nil>`.

use std::fmt;

/// A field path under construction; cheap to extend, printed when an error is made. The
/// default is the nil path, whose children are top-level fields.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Path(String);

impl Path {
    /// The path of a top-level field (`field.NewPath`).
    pub(crate) fn new(field: &str) -> Path {
        Path(field.to_owned())
    }

    /// The path of field `name` below this one.
    pub(crate) fn child(&self, name: &str) -> Path {
        if self.0.is_empty() {
            return Path::new(name);
        }
        Path(format!("{}.{name}", self.0))
    }

    /// The path of item `i` of the list at this path (`ports[0]`).
    pub(crate) fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    /// The path of entry `key` of the map at this path (`data[key]`), the key unquoted.
    pub(crate) fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }

    /// The steps taken so far, without the `<nil>` of the nil path.
    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("<nil>");
        }
        f.write_str(&self.0)
    }
}

impl From<Path> for String {
    fn from(path: Path) -> String {
        if path.0.is_empty() {
            return path.to_string();
        }
        path.0
    }
}

impl From<&Path> for String {
    fn from(path: &Path) -> String {
        path.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_as_field_path_prints_them() {
        let spec = Path::new("spec").child("template").child("spec");
        assert_eq!(spec.to_string(), "spec.template.spec");
        let port = spec.child("containers").index(0).child("ports").index(1);
        assert_eq!(
            port.to_string(),
            "spec.template.spec.containers[0].ports[1]"
        );
        assert_eq!(Path::new("data").key("a.b").to_string(), "data[a.b]");
    }

    #[test]
    fn the_nil_path_prints_nil_and_its_children_are_top_level() {
        assert_eq!(Path::default().to_string(), "<nil>");
        assert_eq!(String::from(Path::default()), "<nil>");
        assert_eq!(Path::default().child("spec"), Path::new("spec"));
        assert_eq!(Path::default().key("k").to_string(), "[k]");
    }
}
