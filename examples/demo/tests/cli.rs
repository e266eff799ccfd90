//! The `recon-demo` binary's command line: `--help` on stdout with success, a wrong flag on
//! stderr with failure, and a cluster that cannot be used named in an error that points to the
//! in-memory run.

use std::path::PathBuf;
use std::process::{Command, Output};

use recon_demo::cli::{self, Cluster};

/// Runs the binary with `args`, without any kubeconfig or in-cluster settings of the caller's
/// environment, `HOME` in an empty directory.
fn demo(args: &[&str], env: &[(&str, &str)]) -> Output {
    let home = scratch("home");
    let mut command = Command::new(env!("CARGO_BIN_EXE_recon-demo"));
    command
        .args(args)
        .env_remove("KUBECONFIG")
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env_remove("RUST_LOG")
        .env("HOME", &home);
    for (key, value) in env {
        command.env(key, value);
    }
    command
        .output()
        .unwrap_or_else(|e| panic!("cannot run recon-demo: {e}"))
}

/// An empty directory of this test binary's own.
fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("recon-demo-cli-{}", std::process::id()))
        .join(name);
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
    dir
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn help_describes_the_flags_and_namespace_on_stdout_and_succeeds() {
    for flag in ["--help", "-h"] {
        let out = demo(&[flag], &[]);
        let stdout = text(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{flag}: {out:?}");
        assert_eq!(text(&out.stderr), "", "{flag}");
        for needle in [
            "usage: recon-demo [--cluster | --kubeconfig PATH] [--check]",
            "\n  --cluster ",
            "\n  --kubeconfig PATH ",
            "\n  --check ",
            "\n  -h, --help ",
            "namespace `recon-demo`",
            "in-memory API server",
            "RUST_LOG",
        ] {
            assert!(
                stdout.contains(needle),
                "{flag}: no `{needle}` in\n{stdout}"
            );
        }
    }
}

#[test]
fn a_wrong_flag_fails_on_stderr() {
    for (args, message) in [
        (&["--bogus"][..], "unknown argument `--bogus`"),
        (&["--kubeconfig"][..], "--kubeconfig needs a PATH"),
        (&["--check"][..], "add --cluster or --kubeconfig PATH"),
    ] {
        let out = demo(args, &[]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {out:?}");
        assert_eq!(text(&out.stdout), "", "{args:?}");
        assert!(stderr.contains(message), "{args:?}: {stderr}");
        assert!(stderr.contains(cli::USAGE), "{args:?}: {stderr}");
    }
}

#[test]
fn an_unreachable_cluster_is_named_with_a_hint_to_run_without_it() {
    // Port 1 on the loopback: refused at once.
    let kubeconfig = scratch("config").join("unreachable.yaml");
    std::fs::write(
        &kubeconfig,
        "apiVersion: v1
kind: Config
clusters:
- name: nowhere
  cluster:
    server: https://127.0.0.1:1
users:
- name: someone
  user:
    token: not-a-secret
contexts:
- name: nowhere
  context: {cluster: nowhere, user: someone}
current-context: nowhere
",
    )
    .unwrap_or_else(|e| panic!("{}: {e}", kubeconfig.display()));
    let path = kubeconfig.to_string_lossy().into_owned();
    for (args, env) in [
        (vec!["--kubeconfig", path.as_str()], vec![]),
        (vec!["--cluster"], vec![("KUBECONFIG", path.as_str())]),
    ] {
        let out = demo(&args, &env);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {out:?}");
        assert!(
            stderr.contains("cannot reach the cluster at https://127.0.0.1:1/"),
            "{args:?}: {stderr}"
        );
        assert!(stderr.contains(&path), "the kubeconfig is named: {stderr}");
        assert!(stderr.contains("leave out --cluster"), "{stderr}");
        assert_eq!(text(&out.stdout), "", "kube's own error log stays out");
    }
}

#[test]
fn no_kubeconfig_is_said_so_with_a_hint_to_run_without_cluster() {
    let out = demo(&["--cluster"], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(stderr.contains("no kubeconfig found"), "{stderr}");
    assert!(stderr.contains(".kube/config does not exist"), "{stderr}");
    assert!(stderr.contains("leave out --cluster"), "{stderr}");

    let missing = scratch("config").join("missing.yaml");
    let path = missing.to_string_lossy().into_owned();
    let out = demo(&["--kubeconfig", &path], &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        stderr.contains(&format!("cannot read the kubeconfig {path}")),
        "{stderr}"
    );
}

#[test]
fn flags_parse_in_any_order() {
    let run = |args: &[&str]| cli::parse(args.iter().map(|a| (*a).to_owned()));
    assert_eq!(
        run(&[]),
        Ok(cli::Command::Run {
            cluster: None,
            check: false
        })
    );
    assert_eq!(
        run(&["--check", "--kubeconfig", "k.yaml"]),
        Ok(cli::Command::Run {
            cluster: Some(Cluster::Kubeconfig("k.yaml".into())),
            check: true
        })
    );
    assert_eq!(
        run(&["--kubeconfig=k.yaml", "--cluster"]),
        Ok(cli::Command::Run {
            cluster: Some(Cluster::Kubeconfig("k.yaml".into())),
            check: false
        })
    );
    assert_eq!(
        run(&["--cluster", "--check"]),
        Ok(cli::Command::Run {
            cluster: Some(Cluster::Current),
            check: true
        })
    );
    assert_eq!(run(&["--cluster", "--help"]), Ok(cli::Command::Help));
    assert!(run(&["--kubeconfig", "--check"]).is_err());
    assert!(run(&["--kubeconfig="]).is_err());
    assert!(run(&["cluster"]).is_err());
}
