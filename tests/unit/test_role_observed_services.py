"""issue 22: the roles' service tasks take preflight's read of their service (kubewin_host.service_definitions) while
nothing in the run has touched it, and read it themselves after the runtime role restarted containerd or the host, or
in the upgrade role (it stops the services first). Rendered by Ansible's templating as the roles write it."""

import pytest
import yaml
from ansible.parsing.dataloader import DataLoader
from ansible.template import Templar
from role_tasks import ROOT, walk

try:  # ansible-core 2.19 templates only text marked trusted, as a role's own YAML is
    from ansible.template import trust_as_template
except ImportError:  # 2.18 templates any text
    def trust_as_template(text):
        return text

SERVICE_MODULES = ("kubewin.nodes.win_host_service", "kubewin.nodes.win_kubelet_service")


def tasks(role):
    return list(walk(yaml.safe_load((ROOT / "roles" / role / "tasks" / "main.yml").read_text())))


def observed_of(role):
    """{service name: the template of its task's observed option} for the role's tasks that define a service."""
    out = {}
    for task in tasks(role):
        for module in SERVICE_MODULES:
            args = task.get(module)
            if args and args.get("state", "started") != "absent":
                out[args.get("name", "kubelet")] = args.get("observed")
    return out


def render(template, **variables):
    shared = yaml.safe_load((ROOT / "roles" / "kubewin" / "vars" / "main.yml").read_text())
    variables["_kubewin_observed_services"] = trust_as_template(shared["_kubewin_observed_services"])
    return Templar(loader=DataLoader(), variables=variables).template(trust_as_template(template))


def test_every_service_the_scale_up_defines_takes_preflights_read_of_it():
    found = {**observed_of("node"), **observed_of("network"), **observed_of("metrics")}
    assert set(found) == {"kubelet", "flanneld", "kube-proxy", "windows_exporter"}
    assert all(found.values()), found


@pytest.mark.parametrize("current, expect", [(None, True), (True, True), (False, False)])
def test_the_read_is_taken_only_while_the_facts_are_current(current, expect):
    kubelet = {"exists": True, "status": "Running", "name": "kubelet"}
    template = observed_of("node")["kubelet"]
    variables = {"kubewin_host": {"service_definitions": {"kubelet": kubelet}}}
    if current is not None:
        variables["_kubewin_facts_current"] = current
    rendered = render(template.replace("default(omit)", "default('OMITTED')"), **variables)
    assert rendered == (kubelet if expect else "OMITTED")


def test_the_runtime_role_marks_the_facts_stale_when_it_restarted_containerd_or_the_host():
    marks = [t for t in tasks("runtime") if "_kubewin_facts_current" in (t.get("ansible.builtin.set_fact") or {})]
    assert len(marks) == 1 and marks[0]["ansible.builtin.set_fact"]["_kubewin_facts_current"] is False
    when = marks[0]["when"]
    assert "_kubewin_containerd_service is changed" in when and "_kubewin_containers_feature is changed" in when
    registered = {t.get("register") for t in tasks("runtime")}
    assert {"_kubewin_containerd_service", "_kubewin_containers_feature"} <= registered


def test_the_upgrade_role_includes_the_service_roles_with_the_facts_marked_stale():
    includes = [t for t in tasks("upgrade") if "ansible.builtin.include_role" in t]
    roles = {t["ansible.builtin.include_role"]["name"]: t.get("vars", {}) for t in includes}
    for role in ("kubewin.nodes.node", "kubewin.nodes.network"):
        assert roles[role].get("_kubewin_facts_current") is False, role


@pytest.mark.parametrize("stopped, expect", [([], True), (["windows_exporter"], False)])
def test_windows_exporter_reads_its_service_itself_once_its_files_task_stopped_it(stopped, expect):
    """A new windows_exporter binary: the files task stops the running service before it replaces it (Windows cannot
    overwrite a running program) and names it in ``stopped``; preflight's read (Running) is then out of date, so the
    service task reads the service itself and starts it. Fails on the old role (it took preflight's read)."""
    exporter = {"exists": True, "status": "Running", "name": "windows_exporter"}
    template = observed_of("metrics")["windows_exporter"]
    rendered = render(template.replace("omit", "'OMITTED'"),
                      kubewin_host={"service_definitions": {"windows_exporter": exporter}},
                      _kubewin_exporter_files_result={"changed": bool(stopped), "stopped": stopped})
    assert rendered == (exporter if expect else "OMITTED")


def test_windows_exporters_download_names_its_service():
    files = [t for t in tasks("metrics") if "kubewin.nodes.win_host_files" in t
             and t["kubewin.nodes.win_host_files"].get("downloads")]
    assert len(files) == 1 and files[0]["register"] == "_kubewin_exporter_files_result"
    resolved = [{"url": "https://m/windows_exporter-0.31.8-amd64.exe", "dest": "C:\\k\\windows_exporter.exe",
                 "sha512": "0" * 128}]
    rendered = render(files[0]["kubewin.nodes.win_host_files"]["downloads"],
                      kubewin_metrics_resolved_downloads=resolved)
    assert rendered == [dict(resolved[0], service="windows_exporter")]
