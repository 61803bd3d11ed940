"""The deployment files say what they must: Dockerfile, compose + HAProxy, Kubernetes manifests.

No container engine or cluster runs here, so the files are read:

* the Dockerfile is parsed into its instructions (continuation lines joined): a CPU-only torch
  of the version ``requirements.txt`` pins, then ``requirements.txt`` itself; the app's files
  and ``.streamlit/config.toml`` copied; a non-root ``USER``; a ``HEALTHCHECK`` on
  ``/_stcore/health`` at the port the command serves; the command runs ``playground.py``;
* ``deploy/haproxy.cfg`` passes ``haproxy -c`` and holds the cookie stickiness, the health
  check and the websocket timeout; compose runs one replica service per ``server`` line;
* every Kubernetes manifest validates against the Kubernetes 1.37 schemas that the
  ``kubernetes-validate`` package ships (strict: unknown fields fail; no network needed), and
  the objects fit together: probes on the health path and the container's port, the Service
  selecting the Deployment's pods, the Ingress pointing at the Service with cookie affinity,
  the autoscaler at the Deployment, the pod's user the image's.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import re
import shlex
import subprocess
import tomllib

import pytest
import yaml
from conftest import REPO, require_haproxy

DEPLOY = REPO / "deploy"
HEALTH = "/_stcore/health"
K8S_FILES = ("deployment.yaml", "service.yaml", "ingress.yaml", "hpa.yaml")


def dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) for each instruction of the Dockerfile, continuation lines joined."""
    instructions, pending = [], ""
    for line in (REPO / "Dockerfile").read_text().splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):  # Docker drops comment lines, inside continuations too
            continue
        if stripped.endswith("\\"):
            pending += stripped[:-1] + " "
            continue
        full = pending + stripped
        pending = ""
        keyword, _, rest = full.partition(" ")
        instructions.append((keyword.upper(), rest.strip()))
    assert not pending, "the Dockerfile ends inside a continued line"
    return instructions


def _all(keyword: str) -> list[str]:
    return [rest for word, rest in dockerfile() if word == keyword]


def _exec_form(text: str) -> list[str]:
    """A JSON-array (exec form) argument, e.g. of CMD."""
    value = json.loads(text)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value), text
    return value


def _pinned(name: str) -> str:
    for line in (REPO / "requirements.txt").read_text().splitlines():
        if match := re.fullmatch(rf"{name}==(\S+)", line.strip()):
            return match.group(1)
    raise AssertionError(f"{name} is not pinned in requirements.txt")


def _port_of_command() -> int:
    (command,) = _all("CMD")
    args = _exec_form(command)
    port = next(a.split("=", 1)[1] for a in args if a.startswith("--server.port="))
    return int(port)


# ---------------------------------------------------------------- Dockerfile
def test_dockerfile_installs_cpu_torch_then_the_pinned_requirements():
    runs = " && ".join(_all("RUN"))
    torch = _pinned("torch")
    assert f'"torch=={torch}+cpu"' in runs or f"torch=={torch}+cpu" in runs  # the version requirements.txt pins
    (index,) = [a for a in _all("ARG") if a.startswith("TORCH_INDEX_URL=")]
    assert index.endswith("/whl/cpu")
    assert "--extra-index-url" in runs and "${TORCH_INDEX_URL}" in runs
    assert runs.index("torch==") < runs.index("pip install -r requirements.txt")
    assert any(c.split()[0] == "requirements.txt" for c in _all("COPY"))
    assert "torch.version.cuda" in runs  # the build fails if a CUDA build slipped in


def test_dockerfile_copies_the_app_and_its_streamlit_config():
    sources = {part.rstrip("/") for copy in _all("COPY") for part in copy.split()[:-1]}
    app = {"playground.py", ".streamlit", "mha", "components", "pages"}
    assert app <= sources, app - sources
    for path in app:
        assert (REPO / path).exists(), path
    workdir = _all("WORKDIR")[-1]
    assert any(copy.split() == [".streamlit/", "./.streamlit/"] for copy in _all("COPY"))
    assert workdir == "/app"  # streamlit run reads ./.streamlit/config.toml from its working directory
    ignored = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()]
    assert not app & set(ignored)


def test_dockerfile_runs_as_a_non_root_user():
    users = _all("USER")
    assert users, "no USER: the container would run as root"
    user = users[-1].split(":")[0]
    assert user not in {"root", "0"}
    assert user.isdigit() and int(user) > 0  # numeric, so Kubernetes' runAsNonRoot can check it
    words = [word for word, _ in dockerfile()]
    last_user = len(words) - 1 - words[::-1].index("USER")
    assert "COPY" not in words[last_user:]  # the app's files stay root's: the user cannot change them


def test_dockerfile_health_check_and_command():
    port = _port_of_command()
    (healthcheck,) = _all("HEALTHCHECK")
    assert f"http://127.0.0.1:{port}{HEALTH}" in healthcheck
    probe = _exec_form(healthcheck.split("CMD", 1)[1].strip())
    assert probe[:2] == ["python", "-c"]
    compile(probe[2], "<healthcheck>", "exec")  # the probe is valid Python
    assert _all("EXPOSE") == [str(port)]
    args = _exec_form(_all("CMD")[0])
    assert args[:5] == ["python", "-m", "streamlit", "run", "playground.py"]
    assert "--server.address=0.0.0.0" in args


def test_dockerfile_settings_come_from_the_environment():
    envs = " ".join(_all("ENV"))
    assert re.search(r"\bATTN_PLAYGROUND_THREADS=\d+\b", envs)
    from mha.threads import THREADS_ENV

    assert THREADS_ENV == "ATTN_PLAYGROUND_THREADS"


def test_streamlit_config_has_no_file_watcher():
    """A watcher scans every loaded module for each new session, on the event loop every session shares."""
    config = tomllib.loads((REPO / ".streamlit" / "config.toml").read_text())
    assert config["server"]["fileWatcherType"] == "none"
    assert config["server"]["runOnSave"] is False


# ---------------------------------------------------------------- HAProxy, compose, the local cluster
@pytest.mark.parametrize(("in_ci", "outcome"), [(True, pytest.fail.Exception), (False, pytest.skip.Exception)])
def test_a_missing_haproxy_fails_in_ci_and_skips_elsewhere(monkeypatch, tmp_path, in_ci, outcome):
    import conftest

    monkeypatch.setenv("PATH", str(tmp_path))  # an empty folder: no haproxy on the PATH
    monkeypatch.setattr(conftest, "IN_CI", in_ci)
    with pytest.raises(outcome, match="haproxy is not installed"):
        require_haproxy()


def _load_cluster_script():
    loader = importlib.machinery.SourceFileLoader("run_local_cluster", str(DEPLOY / "run-local-cluster"))
    spec = importlib.util.spec_from_loader("run_local_cluster", loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def _haproxy_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")]


def test_haproxy_config_is_valid_and_sticky_by_cookie(tmp_path):
    haproxy = require_haproxy()
    text = (DEPLOY / "haproxy.cfg").read_text()
    lines = _haproxy_lines(text)
    for required in (
        "cookie SERVERID insert indirect nocache",
        f"option httpchk GET {HEALTH}",
        "option redispatch",
        "timeout tunnel 1h",
    ):
        assert required in lines, required
    assert not any(line.startswith("balance source") for line in lines)  # never by client address
    check = subprocess.run([haproxy, "-c", "-f", str(DEPLOY / "haproxy.cfg")], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr

    local = _load_cluster_script().local_config(text, 18080, [41001, 41002, 41003])
    local_lines = _haproxy_lines(local)
    assert "bind 127.0.0.1:18080" in local_lines
    servers = [line for line in local_lines if line.startswith("server ")]
    assert servers == [f"server r{n} 127.0.0.1:{41000 + n} check cookie r{n}" for n in (1, 2, 3)]
    assert [line for line in local_lines if not line.startswith(("server ", "bind "))] == [
        line for line in lines if not line.startswith(("server ", "bind "))
    ]  # every other setting is the compose setup's
    (tmp_path / "local.cfg").write_text(local)
    check = subprocess.run([haproxy, "-c", "-f", str(tmp_path / "local.cfg")], capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr


def test_compose_runs_one_replica_per_proxy_server():
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    services = compose["services"]
    servers = [
        line.split() for line in _haproxy_lines((DEPLOY / "haproxy.cfg").read_text()) if line.startswith("server ")
    ]
    port = _port_of_command()
    replicas = sorted(name for name in services if name != "proxy")
    assert replicas == sorted(server[1] for server in servers)
    for server in servers:  # server NAME HOST:PORT check cookie VALUE
        assert server[2] == f"{server[1]}:{port}" and "check" in server and server[-2:] == ["cookie", server[1]]
    for name in replicas:
        build = services[name]["build"]
        assert (DEPLOY / build["context"] / build["dockerfile"]).resolve() == REPO / "Dockerfile"
        assert "ATTN_PLAYGROUND_THREADS" in services[name]["environment"]
    proxy = services["proxy"]
    assert proxy["image"].startswith("haproxy:")
    assert "./haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro" in proxy["volumes"]
    bind = next(line for line in _haproxy_lines((DEPLOY / "haproxy.cfg").read_text()) if line.startswith("bind "))
    assert f"{bind.split(':')[-1]}:{bind.split(':')[-1]}" in proxy["ports"]
    assert {name: dep["condition"] for name, dep in proxy["depends_on"].items()} == dict.fromkeys(
        replicas, "service_healthy"
    )


def test_cluster_script_refuses_bad_arguments():
    for args in ([], ["2"], ["two", "8080"], ["0", "8080"], ["2", "70000"]):
        result = subprocess.run([str(DEPLOY / "run-local-cluster"), *args], capture_output=True, text=True)
        assert result.returncode == 2, (args, result.stderr)
        assert "usage: deploy/run-local-cluster REPLICAS PORT" in result.stderr
        assert result.stdout == ""


def test_setup_installs_haproxy_for_the_tests():
    script = (REPO / "scripts" / "setup-tests.sh").read_text()
    (packages,) = re.findall(r"^apt_packages=\((.*)\)$", script, flags=re.MULTILINE)
    assert "haproxy" in shlex.split(packages)


# ---------------------------------------------------------------- Kubernetes
def _manifests() -> dict[str, dict]:
    docs = {}
    for name in K8S_FILES:
        (doc,) = list(yaml.safe_load_all((DEPLOY / "k8s" / name).read_text()))
        docs[doc["kind"]] = doc
    return docs


@pytest.mark.parametrize("name", K8S_FILES)
def test_kubernetes_manifest_validates_against_the_schema(name):
    import kubernetes_validate

    (doc,) = list(yaml.safe_load_all((DEPLOY / "k8s" / name).read_text()))
    kubernetes_validate.validate(doc, "1.37.0", strict=True)  # raises ValidationError with the path


def test_kubernetes_schema_check_rejects_a_broken_manifest():
    """The validator is not a no-op: a misspelt probe and a port given as text both fail."""
    import kubernetes_validate

    deployment = _manifests()["Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    misspelt = json.loads(json.dumps(deployment))
    misspelt["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = container["readinessProbe"]
    wrong_type = json.loads(json.dumps(deployment))
    wrong_type["spec"]["template"]["spec"]["containers"][0]["ports"][0]["containerPort"] = "8501"
    for broken in (misspelt, wrong_type):
        with pytest.raises(kubernetes_validate.ValidationError):
            kubernetes_validate.validate(broken, "1.37.0", strict=True)


def test_kubernetes_objects_fit_together():
    docs = _manifests()
    deployment, service, ingress, hpa = (
        docs[k] for k in ("Deployment", "Service", "Ingress", "HorizontalPodAutoscaler")
    )
    pod = deployment["spec"]["template"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= pod["metadata"]["labels"].items()
    (container,) = pod["spec"]["containers"]
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": _port_of_command()}
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"] == {"path": HEALTH, "port": "http"}, probe
    assert pod["spec"]["securityContext"]["runAsNonRoot"] is True
    assert str(pod["spec"]["securityContext"]["runAsUser"]) == _all("USER")[-1].split(":")[0]
    assert container["resources"]["requests"]["cpu"] == "2"  # the size the capacity is measured on
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["ATTN_PLAYGROUND_THREADS"] == _all("ENV")[-1].split("=")[1]  # as the image sets it

    assert service["spec"]["selector"].items() <= pod["metadata"]["labels"].items()
    assert [p["targetPort"] for p in service["spec"]["ports"]] == ["http"]

    annotations = ingress["metadata"]["annotations"]
    assert annotations["nginx.ingress.kubernetes.io/affinity"] == "cookie"
    assert annotations["nginx.ingress.kubernetes.io/affinity-mode"] == "persistent"
    assert annotations["nginx.ingress.kubernetes.io/session-cookie-name"]
    assert int(annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"]) >= 3600  # websockets stay open
    assert ingress["spec"]["ingressClassName"] == "nginx"
    backends = [p["backend"]["service"] for rule in ingress["spec"]["rules"] for p in rule["http"]["paths"]]
    assert backends == [{"name": service["metadata"]["name"], "port": {"name": "http"}}]

    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", deployment["metadata"]["name"])
    assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    assert [m["resource"]["name"] for m in hpa["spec"]["metrics"]] == ["cpu"]

    kustomization = yaml.safe_load((DEPLOY / "k8s" / "kustomization.yaml").read_text())
    assert sorted(kustomization["resources"]) == sorted(K8S_FILES)
