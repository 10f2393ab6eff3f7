"""kubewin.nodes.win_image_pull: one remote operation per image, the pull only where crictl inspecti did not find it,
none in check mode; a malformed reference refused before any remote operation."""

from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_image_pull import ActionModule


class FakeCrictl:
    def __init__(self, have=()):
        self.have = set(have)
        self.host = RemoteHost({"image_pull": self.pull})

    def pull(self, params):
        present = params["Image"] in self.have
        answer = {"crictl": True, "present": present, "code": None, "output": [], "seconds": 0}
        if params["Pull"] and not present:
            self.have.add(params["Image"])
            answer.update(code=0, output=["Image is up to date for sha256:1"], seconds=3)
        return answer


IMAGE = "mcr.microsoft.com/windows/servercore:ltsc2022"


def test_pulled_once_then_not_again(make_action):
    fake = FakeCrictl()
    first = make_action(ActionModule, {"image": IMAGE, "timeout": 90}, fake.host).run(task_vars={})
    assert first["changed"] and not first.get("failed") and first["seconds"] == 3
    assert fake.host.calls[0][1]["Pull"] is True and fake.host.calls[0][1]["TimeoutSeconds"] == 90
    again = make_action(ActionModule, {"image": IMAGE}, fake.host).run(task_vars={})
    assert not again["changed"] and again["present"] and len(fake.host.calls) == 2


def test_check_mode_only_looks(make_action):
    fake = FakeCrictl()
    result = make_action(ActionModule, {"image": IMAGE}, fake.host, check_mode=True).run(task_vars={})
    assert result["changed"] and fake.have == set() and fake.host.calls[0][1]["Pull"] is False


def test_a_malformed_reference_costs_no_remote_operation(make_action):
    fake = FakeCrictl()
    result = make_action(ActionModule, {"image": "Servercore:ltsc2022"}, fake.host).run(task_vars={})
    assert result["failed"] and "not an image reference" in result["msg"] and fake.host.calls == []
