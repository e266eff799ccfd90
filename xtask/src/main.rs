//! `cargo xtask <task>`: project automation. Run without a task to list the tasks.

use std::process::{Command, ExitCode};

/// A task: its name, what it does, and the commands it runs in order.
struct Task {
    name: &'static str,
    about: &'static str,
    steps: &'static [Step],
}

/// One command, with the environment variables it needs.
struct Step {
    env: &'static [(&'static str, &'static str)],
    command: &'static [&'static str],
}

const fn run(command: &'static [&'static str]) -> Step {
    Step { env: &[], command }
}

impl Step {
    /// The step as a shell line.
    fn line(&self) -> String {
        let env: Vec<String> = self
            .env
            .iter()
            .map(|(k, v)| format!("{k}={v:?} "))
            .collect();
        format!("{}{}", env.concat(), self.command.join(" "))
    }
}

const TASKS: &[Task] = &[
    Task {
        name: "check",
        about: "what CI and reviewers expect: formatting, clippy (warnings are errors), docs, tests",
        steps: &[
            run(&["cargo", "fmt", "--all", "--", "--check"]),
            run(&[
                "cargo",
                "clippy",
                "--workspace",
                "--all-targets",
                "--",
                "-D",
                "warnings",
            ]),
            Step {
                env: &[("RUSTDOCFLAGS", "-D warnings")],
                command: &["cargo", "doc", "--workspace", "--no-deps"],
            },
            run(&["cargo", "test", "--workspace"]),
        ],
    },
    Task {
        name: "bench",
        about: "measure the in-memory API server and the test harness (release build)",
        steps: &[
            run(&[
                "cargo",
                "bench",
                "-p",
                "recon-core",
                "--bench",
                "fake_apiserver",
            ]),
            run(&["cargo", "bench", "-p", "recon-testing", "--bench", "cases"]),
        ],
    },
    Task {
        name: "fixtures",
        about: "regenerate YAML suite expectations and generated manifests (review with git diff)",
        steps: &[
            Step {
                env: &[("RECON_FIXTURES", "overwrite")],
                command: &["cargo", "test", "--workspace"],
            },
            run(&[
                "git", "status", "--short", "--", "fixtures", "crates", "examples",
            ]),
        ],
    },
    Task {
        name: "tour",
        about: "run the in-memory API server tour (the README's run command)",
        steps: &[run(&["cargo", "run", "-p", "fake-apiserver-tour"])],
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
            for step in t.steps {
                eprintln!("  {:<8}   $ {}", "", step.line());
            }
        }
        return ExitCode::from(2);
    };
    for step in task.steps {
        let line = step.line();
        eprintln!("$ {line}");
        let mut command = Command::new(step.command[0]);
        command
            .args(&step.command[1..])
            .envs(step.env.iter().copied());
        match command.status() {
            Ok(status) if status.success() => {}
            Ok(status) => {
                eprintln!("`{line}` failed ({status})");
                return ExitCode::FAILURE;
            }
            Err(err) => {
                eprintln!("could not run `{}`: {err}", step.command[0]);
                return ExitCode::FAILURE;
            }
        }
    }
    ExitCode::SUCCESS
}
