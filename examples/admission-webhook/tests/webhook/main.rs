//! The admission webhook's tests: tables, YAML suites, and reviews over HTTPS.

mod https;
mod tables;
