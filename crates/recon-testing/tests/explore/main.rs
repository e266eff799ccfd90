//! Perturbation exploration (issue 37) on small kube-rs controllers, each with one bug seen in
//! real operators and a fixed twin: the exploration reports the buggy one with the right cause
//! and passes the fixed one.
//!
//! Every controller here keeps, for each ConfigMap labelled `role: parent`, a child ConfigMap
//! holding a copy of the parent's `data.want`.

mod patterns;
