//! `cargo xtask <task>`: project automation. Run without a task to list the tasks.

use std::path::Path;
use std::process::{Command, ExitCode};

mod conformance_record;
mod conformance_time;
mod fuzz;
mod layering;
mod measure;
mod peer;

/// A task: its name, what it does, and the commands it runs in order.
struct Task {
    name: &'static str,
    about: &'static str,
    steps: &'static [Step],
    /// Flags that run other steps instead.
    options: &'static [TaskOption],
}

/// `cargo xtask <task> <flag>`: the same task done another way.
struct TaskOption {
    flag: &'static str,
    about: &'static str,
    steps: &'static [Step],
    /// Instead of steps, a task whose work is more than fixed commands.
    run: Option<fn(&Path) -> ExitCode>,
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

/// A task that inspects or measures instead of running fixed commands.
struct Inspection {
    name: &'static str,
    about: &'static str,
    usage: &'static str,
    run: fn(&Path, &[String]) -> ExitCode,
}

const INSPECTIONS: &[Inspection] = &[
    Inspection {
        name: "measure",
        about: "what a newcomer's first `cargo test --workspace` costs: cold and warm wall and CPU time, target size (fresh target/measure; --keep keeps it)",
        usage: "cargo xtask measure [--keep]",
        run: measure::run,
    },
    Inspection {
        name: "layering",
        about: "check that recon-core with default features neither compiles nor imports the in-memory API server",
        usage: "cargo xtask layering",
        run: layering::run,
    },
    Inspection {
        name: "fuzz",
        about: "run the property tests of the parsers and patch engines long (release build, CASES cases each, default 100000, from SEED or a new seed it prints)",
        usage: "cargo xtask fuzz [CASES] [SEED]",
        run: fuzz::run,
    },
];

/// The steps of recording the conformance scenarios with the real server `script` starts (each
/// records only its own server's scenarios), then replaying them all.
macro_rules! record_with {
    ($script:literal) => {
        &[
            // rstest lists the scenario files when it compiles: new ones need a rebuild.
            run(&["touch", "crates/recon-fake/tests/conformance/main.rs"]),
            Step {
                env: &[("RECON_CONFORMANCE", "record")],
                command: &[
                    "bash",
                    $script,
                    "run",
                    "cargo",
                    "test",
                    "-p",
                    "recon-fake",
                    "--test",
                    "conformance",
                    "scenario::",
                ],
            },
            run(&["git", "status", "--short", "--", "fixtures/conformance"]),
            run(&["cargo", "test", "-p", "recon-fake", "--test", "conformance"]),
        ]
    };
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
        options: &[],
    },
    Task {
        name: "bench",
        about: "measure the in-memory API server, the test harness and perturbation exploration (release build)",
        steps: &[
            run(&[
                "cargo",
                "bench",
                "-p",
                "recon-fake",
                "--bench",
                "fake_apiserver",
            ]),
            run(&["cargo", "bench", "-p", "recon-testing", "--bench", "cases"]),
            run(&[
                "cargo",
                "bench",
                "-p",
                "echo-controller",
                "--bench",
                "explore",
            ]),
        ],
        options: &[
            TaskOption {
                flag: "--real",
                about: "also measure a real API server in the same run (xtask/real-apiserver.sh), for the ratio",
                steps: &[run(&[
                    "bash",
                    "xtask/real-apiserver.sh",
                    "run",
                    "cargo",
                    "bench",
                    "-p",
                    "recon-fake",
                    "--bench",
                    "fake_apiserver",
                ])],
                run: None,
            },
            TaskOption {
                flag: "--peer",
                about: "measure recon against kube-fake-client 0.3 (bench/peer, on kube 4) on the same \
                workloads (bench/workload.json), interleaved in one run: both throughputs, memory \
                per object and the ratios, medians of 3 (RECON_BENCH_RUNS); builds the peer once",
                steps: &[],
                run: Some(peer::run),
            },
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
        options: &[],
    },
    Task {
        name: "crds",
        about: "write the examples' CRD manifests to fixtures/crds/ (from their Rust types)",
        steps: &[
            Step {
                env: &[("RECON_FIXTURES", "overwrite")],
                command: &["cargo", "test", "--workspace", "crd_manifest"],
            },
            run(&["git", "status", "--short", "--", "fixtures/crds"]),
        ],
        options: &[],
    },
    Task {
        name: "package",
        about: "package the publishable crates as crates.io would take them",
        steps: &[run(&[
            "cargo",
            "package",
            "-p",
            "recon-apimachinery",
            "-p",
            "recon-fake",
            "-p",
            "recon-core",
            "-p",
            "recon-testing",
            "--no-verify",
        ])],
        options: &[],
    },
    Task {
        name: "demo",
        about: "run the demo: the example operators against the in-memory API server (the README's run command)",
        steps: &[run(&["cargo", "run", "-p", "recon-demo"])],
        options: &[
            TaskOption {
                flag: "--cluster",
                about: "run it against the cluster of the current kubeconfig context",
                steps: &[run(&[
                    "cargo",
                    "run",
                    "-p",
                    "recon-demo",
                    "--",
                    "--cluster",
                ])],
                run: None,
            },
            TaskOption {
                flag: "--real",
                about: "run it against a real control plane of the project's own \
                    (xtask/kube-apiserver.sh, with kube-controller-manager) and check it ends as \
                    the embedded run does",
                steps: &[Step {
                    env: &[("RECON_KUBE_CONTROLLERS", "1")],
                    command: &[
                        "bash",
                        "xtask/kube-apiserver.sh",
                        "run",
                        "bash",
                        "-c",
                        "cargo run -p recon-demo -- --kubeconfig \"$KUBECONFIG\" --check",
                    ],
                }],
                run: None,
            },
        ],
    },
    Task {
        name: "tour",
        about: "run the in-memory API server tour: kube::Api calls and what the server records",
        steps: &[run(&["cargo", "run", "-p", "fake-apiserver-tour"])],
        options: &[],
    },
    Task {
        name: "openapi",
        about: "record the built-in kinds' OpenAPI v3 schemas from a real kube-apiserver into \
            crates/recon-fake/data/openapi.json (typed decoding, field management), their Go \
            field order and always-written fields from the sources KUBE_SRC_GIT holds into \
            data/go-field-order.json, their protobuf fields (etcd's sizes) into \
            data/go-proto-fields.json, and the internal core types validation quotes into \
            data/go-internal-types.json",
        steps: &[
            run(&[
                "bash",
                "xtask/kube-apiserver.sh",
                "run",
                "python3",
                "xtask/record-openapi.py",
                "crates/recon-fake/data/openapi.json",
            ]),
            run(&[
                "python3",
                "xtask/record-go-field-order.py",
                "crates/recon-fake/data/openapi.json",
                "crates/recon-fake/data/go-field-order.json",
            ]),
            run(&[
                "python3",
                "xtask/record-go-proto-fields.py",
                "crates/recon-fake/data/openapi.json",
                "crates/recon-fake/data/go-proto-fields.json",
            ]),
            run(&[
                "python3",
                "xtask/record-go-internal-types.py",
                "crates/recon-fake/data/go-internal-types.json",
            ]),
        ],
        options: &[],
    },
    Task {
        name: "conformance",
        about: "replay the scenarios recorded from a real API server against the in-memory one",
        steps: &[
            // rstest lists the scenario files when it compiles: new ones need a rebuild.
            run(&["touch", "crates/recon-fake/tests/conformance/main.rs"]),
            run(&["cargo", "test", "-p", "recon-fake", "--test", "conformance"]),
        ],
        options: &[
            TaskOption {
                flag: "--record",
                about: "record the custom-resource scenarios again from a real server \
                    (xtask/real-apiserver.sh), then replay",
                steps: record_with!("xtask/real-apiserver.sh"),
                run: None,
            },
            TaskOption {
                flag: "--time",
                about: "time the recorded scenarios on both real servers and in memory, in one \
                    run, and print the ratio per server (needs both servers, as --record and \
                    --record-builtin do); the tests built as `cargo test` builds them",
                steps: &[],
                run: Some(conformance_time::debug),
            },
            TaskOption {
                flag: "--time-release",
                about: "the same, with the tests built in release mode (`cargo test --release`), \
                    as the real servers' Go is",
                steps: &[],
                run: Some(conformance_time::release),
            },
            TaskOption {
                flag: "--record-builtin",
                about: "record the built-in kinds' scenarios (`server: kube-apiserver`) from a real \
                    kube-apiserver (xtask/kube-apiserver.sh; its first install needs KUBE_SRC_GIT), \
                    each `deep/` one on a server of its own, then replay",
                steps: &[],
                run: Some(conformance_record::builtin),
            },
        ],
    },
];

fn print_usage() {
    eprintln!("usage: cargo xtask <task> [flag]\n\ntasks:");
    for t in TASKS {
        eprintln!("  {:<12} {}", t.name, t.about);
        for step in t.steps {
            eprintln!("  {:<12}   $ {}", "", step.line());
        }
        for option in t.options {
            eprintln!("  {:<12} {}", format!("  {}", option.flag), option.about);
            for step in option.steps {
                eprintln!("  {:<12}   $ {}", "", step.line());
            }
        }
    }
    for inspection in INSPECTIONS {
        eprintln!("  {:<12} {}", inspection.name, inspection.about);
        eprintln!("  {:<12}   $ {}", "", inspection.usage);
    }
}

/// The exit code of a task that returns an error as text: the error printed after `task`.
fn exit_code(task: &str, result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{task}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let task = args.next();
    // Steps name paths from the repository root, wherever cargo was started.
    let manifest_dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let root = manifest_dir.parent().unwrap_or(manifest_dir);
    if let Some(inspection) = INSPECTIONS.iter().find(|i| Some(i.name) == task.as_deref()) {
        let rest: Vec<String> = args.collect();
        return (inspection.run)(root, &rest);
    }
    let flag = args.next();
    let Some(task) = task
        .as_deref()
        .and_then(|name| TASKS.iter().find(|t| t.name == name))
    else {
        if let Some(unknown) = task {
            eprintln!("unknown task `{unknown}`\n");
        }
        print_usage();
        return ExitCode::from(2);
    };
    let steps = match flag.as_deref() {
        None => task.steps,
        Some(flag) => match task.options.iter().find(|o| o.flag == flag) {
            Some(TaskOption { run: Some(run), .. }) => return run(root),
            Some(option) => option.steps,
            None => {
                eprintln!("task `{}` has no flag `{flag}`\n", task.name);
                print_usage();
                return ExitCode::from(2);
            }
        },
    };
    for step in steps {
        let line = step.line();
        eprintln!("$ {line}");
        let mut command = Command::new(step.command[0]);
        command
            .args(&step.command[1..])
            .envs(step.env.iter().copied())
            .current_dir(root);
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
