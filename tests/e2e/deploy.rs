//! The Kubernetes manifests under `deploy/kubernetes`: every document validates against the
//! Kubernetes schemas (kubernetes-validate, strict) or, for Gateway API and Envoy Gateway
//! kinds, against their CRDs' schemas vendored in `tests/deploy/crds`.

use std::path::Path;

#[test]
fn every_kubernetes_manifest_validates_against_its_schema() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let output = crate::support::command("python3")
        .arg(root.join("tests/deploy/validate_manifests.py"))
        .arg(root.join("deploy/kubernetes"))
        .output()
        .expect("run python3");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !stderr.contains("ModuleNotFoundError"),
        "install the validator with `pip install kubernetes-validate` (scripts/test does): {stderr}"
    );
    assert!(output.status.success(), "{stdout}{stderr}");
    for kind in [
        "Deployment",
        "Service",
        "HorizontalPodAutoscaler",
        "HTTPRoute",
        "BackendTrafficPolicy",
        "SecurityPolicy",
    ] {
        assert!(
            stdout
                .lines()
                .any(|line| line.starts_with("valid ") && line.contains(&format!(" {kind}/"))),
            "{kind} was not checked:\n{stdout}"
        );
    }
}
