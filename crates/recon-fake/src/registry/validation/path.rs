//! Field paths as `field.Path` prints them: `spec.template.spec.containers[0].ports[1].name`,
//! map keys in brackets (`data[key]`).

use std::fmt;

/// A field path under construction; cheap to extend, printed when an error is made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Path(String);

impl Path {
    /// The path of a top-level field.
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

    /// The path of item `i` of the list at this path.
    pub(crate) fn index(&self, i: usize) -> Path {
        Path(format!("{}[{i}]", self.0))
    }

    /// The path of entry `key` of the map at this path.
    pub(crate) fn key(&self, key: &str) -> Path {
        Path(format!("{}[{key}]", self.0))
    }
}

impl fmt::Display for Path {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<Path> for String {
    fn from(path: Path) -> String {
        path.0
    }
}

impl From<&Path> for String {
    fn from(path: &Path) -> String {
        path.0.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_print_as_field_path_prints_them() {
        let spec = Path::new("spec").child("template").child("spec");
        assert_eq!(spec.to_string(), "spec.template.spec");
    }
}
