//! `cargo xtask <task>`: project automation. Run without a task to list the tasks.

use std::process::{Command, ExitCode};

/// A task: its name, what it does, and the commands it runs in order.
struct Task {
    name: &'static str,
    about: &'static str,
    steps: &'static [&'static [&'static str]],
}

const TASKS: &[Task] = &[
    Task {
        name: "check",
        about: "what CI and reviewers expect: formatting, clippy (warnings are errors), docs, tests",
        steps: &[
            &["cargo", "fmt", "--all", "--", "--check"],
            &[
                "cargo",
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ],
            &["cargo", "doc", "--workspace", "--no-deps"],
            &["cargo", "test", "--workspace"],
        ],
    },
    Task {
        name: "bench",
        about: "measure the in-memory API server (release build; figures for PERFORMANCE.md)",
        steps: &[&[
            "cargo",
            "bench",
            "-p",
            "recon-core",
            "--bench",
            "fake_apiserver",
        ]],
    },
    Task {
        name: "tour",
        about: "run the in-memory API server tour (the README's run command)",
        steps: &[&["cargo", "run", "-p", "fake-apiserver-tour"]],
    },
];

fn main() -> ExitCode {
    let task = std::env::args().nth(1);
    let Some(task) = task
        .as_deref()
        .and_then(|name| TASKS.iter().find(|t| t.name == name))
    else {
        if let Some(unknown) = task {
            eprintln!("unknown task `{unknown}`\n");
        }
        eprintln!("usage: cargo xtask <task>\n\ntasks:");
        for t in TASKS {
            eprintln!("  {:<8} {}", t.name, t.about);
        }
        return ExitCode::from(2);
    };
    for step in task.steps {
        eprintln!("$ {}", step.join(" "));
        let mut command = Command::new(step[0]);
        command.args(&step[1..]);
        if step[1] == "doc" {
            command.env("RUSTDOCFLAGS", "-D warnings");
        }
        match command.status() {
            Ok(status) if status.success() => {}
            Ok(status) => {
                eprintln!("`{}` failed ({status})", step.join(" "));
                return ExitCode::FAILURE;
            }
            Err(err) => {
                eprintln!("could not run `{}`: {err}", step[0]);
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
