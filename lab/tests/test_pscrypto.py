"""Issue 20 item 5 (security-2 N2): secret file contents reach node_sync sealed to the host's transport key.
The collection's real node_facts and node_sync scripts run in the lab interpreter over its model of .NET
Framework 4.8's CspParameters / RSACryptoServiceProvider / HMACSHA256 / AesCryptoServiceProvider
(lab/winsim/ps/wincrypto.py, Microsoft Learn per member); the controller side is the collection's
plugin_utils/_host/sealed.py. What crosses as node_sync's parameters holds no plaintext, tampering is
refused before anything is written, and a key container planted by someone else is refused."""

import base64
import json
import os

import pytest
from winsim import core  # noqa: E402
from winsim.ps import winhost  # noqa: E402

from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import sealed  # noqa: E402

SimError = core.SimError

SECRET = "eyJhbGciOiJSUzI1NiJ9.kubewin-lab-secret-token.c2lnbmF0dXJl"
SDDL = "O:BAD:PAI(A;;FA;;;SY)(A;;FA;;;BA)"


@pytest.fixture
def host(tmp_path):
    return core.create_host(str(tmp_path), "w")


def _run(host, sid, parameters):
    with host.open():
        return winhost.run_kubewin_script(host, sid, parameters)["result"]


def _key(host):
    # as a run's first secret write asks for it (plugin_utils/_winremote.py)
    return _run(host, "node_facts", {"MakeTransportKey": True})["transport_key"]


def _files(content, path="C:\\etc\\kube-proxy\\token"):
    return {"Files": [{"path": path, "content": base64.b64encode(content.encode()).decode(), "sddl": SDDL}]}


def test_node_facts_makes_one_non_exportable_machine_key_and_returns_its_public_half(host):
    first = _key(host)
    assert first.startswith("<RSAKeyValue><Modulus>") and "<D>" not in first and "<P>" not in first
    assert sealed.public_key(first).key_size == 2048
    assert _key(host) == first  # made once, then opened
    assert _run(host, "node_facts", {})["transport_key"] == first  # every read returns it
    with host.open():
        record = host.state["machine_keys"][sealed.KEY_CONTAINER]
    assert record["exportable"] is False and record["sddl"] == "O:BAD:P(A;;GA;;;SY)(A;;GA;;;BA)"


def test_sealed_secret_is_written_in_clear_on_the_host_and_is_nowhere_in_the_parameters(host):
    params = sealed.seal_files(_files(SECRET), _key(host))
    text = repr(params)
    assert SECRET not in text and base64.b64encode(SECRET.encode()).decode() not in text
    _run(host, "node_sync", params)
    with open(host.local_path("C:\\etc\\kube-proxy\\token")) as f:
        assert f.read() == SECRET


def test_a_plain_file_still_arrives_as_base64(host):
    _run(host, "node_sync", {"Files": [{"path": "C:\\etc\\x.conf", "content": base64.b64encode(b"a=b").decode(),
                                        "sddl": ""}]})
    with open(host.local_path("C:\\etc\\x.conf"), "rb") as f:
        assert f.read() == b"a=b"


def test_tampered_ciphertext_is_refused_before_anything_is_written(host):
    params = sealed.seal_files(_files(SECRET), _key(host))
    parts = params["Files"][0]["content"].split(".")
    data = bytearray(base64.b64decode(parts[4]))
    data[0] ^= 1
    parts[4] = base64.b64encode(bytes(data)).decode()
    params["Files"][0]["content"] = ".".join(parts)
    with pytest.raises(SimError, match="does not verify"):
        _run(host, "node_sync", params)
    assert not os.path.exists(host.local_path("C:\\etc\\kube-proxy\\token"))


def test_content_sealed_to_another_host_cannot_be_opened(host, tmp_path):
    other = core.create_host(str(tmp_path), "other")
    _key(host)
    params = sealed.seal_files(_files(SECRET), _key(other))
    with pytest.raises(SimError, match="decoding OAEP padding"):
        _run(host, "node_sync", params)


def test_sealed_content_without_the_key_fails_as_net_does(host, tmp_path):
    other = core.create_host(str(tmp_path), "other")
    params = sealed.seal_files(_files(SECRET), _key(other))
    with pytest.raises(SimError, match="Keyset does not exist"):
        _run(host, "node_sync", params)


@pytest.mark.parametrize("exportable", [True, False])
def test_a_key_container_another_user_made_is_refused(host, exportable):
    # a local user may create containers in the machine key store; one made with a key the user knows
    # (imported, then non-exportable) and open to everyone must not become the transport key, whatever
    # .NET does to its security descriptor when it is opened
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    pem = rsa.generate_private_key(public_exponent=65537, key_size=2048).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()).decode()
    with host.open():
        host.state["machine_keys"] = {sealed.KEY_CONTAINER: {
            "pem": pem, "exportable": exportable, "sddl": "O:S-1-5-21-1-2-3-1001D:(A;;GA;;;WD)"}}
    with pytest.raises(SimError, match="was not made by kubewin.nodes"):
        _key(host)
    with host.open():
        assert host.state["machine_keys"][sealed.KEY_CONTAINER]["pem"] == pem


def test_through_ansible_playbook_the_host_receives_only_ciphertext(tmp_path):
    """A user's own tasks through ansible-playbook: win_host_facts, then win_host_files with a secret file
    (no_log, as docs/credentials.md asks), and once without the facts (the key is read first). The
    win_powershell stand-in records each run's invocation.module_args as Ansible.Basic builds them
    (winsim_module.log_module_args): the secret is not there, plain or base64; the file on the host is."""
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_module
    from winsim.testing import Lab

    lab = Lab(tmp_path / "winsim", nodes=1)
    tasks = """
        - name: facts
          kubewin.nodes.win_host_facts: {}
        - name: write
          kubewin.nodes.win_host_files:
            files:
              - {path: 'C:\\\\etc\\\\kube-proxy\\\\token', content: '%s', restricted: true, secret: true}
          no_log: true
    """ % SECRET
    rc, doc, res = lab.play(tasks)
    assert rc == 0, json.dumps(doc)[-3000:]
    assert res["write"]["win-1"]["changed"]
    plays = """
- hosts: kube_windows_nodes
  gather_facts: false
  tasks:
    - name: write without facts
      kubewin.nodes.win_host_files:
        files:
          - {path: 'C:\\\\etc\\\\kube-proxy\\\\token', content: '%s-2', restricted: true, secret: true}
      no_log: true
""" % SECRET
    rc, doc, res = lab.play(None, plays=plays)
    assert rc == 0, json.dumps(doc)[-3000:]
    with open(os.path.join(lab.root, "hosts", "win-1", "C", "etc", "kube-proxy", "token")) as f:
        assert f.read() == SECRET + "-2"
    records = winsim_module.module_args_records(lab.root, "win-1")
    syncs = [r for r in records if r["module"] == "win_powershell"
             and "kubewin.nodes script: node_sync" in r["module_args"]["script"]]
    assert len(syncs) == 2 and all(f["content"].startswith("sealed.") for r in syncs
                                   for f in r["module_args"]["parameters"]["Files"])
    text = json.dumps(records)
    for needle in (SECRET, base64.b64encode(SECRET.encode()).decode(), SECRET.split(".")[1]):
        assert needle not in text


def test_reset_node_sync_deletes_the_transport_key_and_a_second_one_finds_none(host):
    # reset's win_host_files (forget_transport_key) passes ForgetTransportKey to node_sync: the container is
    # opened with UseExistingKey, PersistKeyInCsp = $false, Clear() (Microsoft Learn,
    # RSACryptoServiceProvider.PersistKeyInCsp, example RSADeleteKeyInCSP); a host without one is left as it is
    _key(host)
    _run(host, "node_sync", {"ForgetTransportKey": True})
    with host.open():
        assert sealed.KEY_CONTAINER not in host.state.get("machine_keys", {})
    _run(host, "node_sync", {"ForgetTransportKey": True})
    with host.open():
        assert sealed.KEY_CONTAINER not in host.state.get("machine_keys", {})
    # a later facts read makes a new key (scale-up after reset)
    assert sealed.public_key(_key(host)).key_size == 2048


def _csp_script(body):
    return ("$p = New-Object System.Security.Cryptography.CspParameters\n"
            "$p.KeyContainerName = 'kubewin.nodes-transport'\n"
            "$p.Flags = [System.Security.Cryptography.CspProviderFlags]'UseMachineKeyStore, UseExistingKey'\n"
            "$k = New-Object System.Security.Cryptography.RSACryptoServiceProvider($p)\n" + body)


@pytest.mark.parametrize("body, deleted", [
    ("$Ansible.Result = @{ persist = $k.PersistKeyInCsp }\n$k.Clear()\n", False),  # a named container persists
    ("$k.PersistKeyInCsp = $false\n$k.Clear()\n$Ansible.Result = @{ persist = $k.PersistKeyInCsp }\n", True),
    ("$k.PersistKeyInCsp = $false\n$k.Dispose()\n$Ansible.Result = @{ persist = $false }\n", True),
])
def test_a_named_key_is_deleted_only_when_not_persisted(host, body, deleted):
    _key(host)
    with host.open():
        answer = winhost.execute(host, _csp_script(body), "t", {}, error_action="Stop")
    assert not answer["failed"], answer["error"]
    assert answer["result"]["persist"] is (not deleted)
    with host.open():
        assert (sealed.KEY_CONTAINER not in host.state["machine_keys"]) is deleted


_SACL_CREATE = r"""
$ErrorActionPreference = 'Stop'
$p = New-Object System.Security.Cryptography.CspParameters
$p.KeyContainerName = 'sacl-test'
$p.Flags = [System.Security.Cryptography.CspProviderFlags]'UseMachineKeyStore'
$s = New-Object System.Security.AccessControl.CryptoKeySecurity
$s.SetSecurityDescriptorSddlForm('O:BAD:P(A;;GA;;;SY)(A;;GA;;;BA)')
$p.CryptoKeySecurity = $s
$k = New-Object System.Security.Cryptography.RSACryptoServiceProvider(2048, $p)
$Ansible.Result = @{ owner = $k.CspKeyContainerInfo.CryptoKeySecurity.GetSecurityDescriptorSddlForm('Owner') }
"""


@pytest.mark.parametrize("privileges", [[], ["SeSecurityPrivilege"]])
def test_the_model_needs_the_security_privilege_for_the_sacl_sections_of_a_key(host, privileges):
    """Review R5: SetSecurityDescriptorSddlForm(String) marks every section changed (objectsecurity.cs), so the
    constructor writes the SACL, and the CspKeyContainerInfo.CryptoKeySecurity getter reads all sections: .NET
    enables SeSecurityPrivilege for both (cryptography/utils.cs), which fails where the token lacks it."""
    with host.open():
        host.state["privileges"] = privileges
        answer = winhost.execute(host, _SACL_CREATE, "sacl", {}, error_action="Stop")
    if privileges:
        assert not answer["failed"] and answer["result"]["owner"] == "O:BA", answer
    else:
        assert answer["failed"] and "SeSecurityPrivilege" in json.dumps(answer["error"]), answer


def test_the_transport_key_is_made_and_checked_without_the_security_privilege(host):
    """Review R5: node_facts sets only the owner and access sections and reads the owner of the container's file
    in MachineKeys, so an account without "Manage auditing and security log" gets its facts."""
    with host.open():
        host.state["privileges"] = []
    first = _key(host)
    assert _key(host) == first
    from ansible_collections.ansible.windows.plugins.module_utils import winsim_files
    with host.open():
        keys = os.listdir(host.local_path("C:\\ProgramData\\Microsoft\\Crypto\\RSA\\MachineKeys"))
        assert len(keys) == 1
        assert winsim_files.owner_of(host, "C:\\ProgramData\\Microsoft\\Crypto\\RSA\\MachineKeys\\" + keys[0]) == "BA"


def test_a_mac_that_differs_only_in_case_is_refused(host):
    """Review R7: base64 is case-sensitive; the MAC is compared as bytes (PowerShell's -ne on strings is not)."""
    params = sealed.seal_files(_files(SECRET), _key(host))
    parts = params["Files"][0]["content"].split(".")
    at = next(i for i, c in enumerate(parts[5]) if c.isalpha())
    parts[5] = parts[5][:at] + parts[5][at].swapcase() + parts[5][at + 1:]
    params["Files"][0]["content"] = ".".join(parts)
    with pytest.raises(SimError, match="does not verify"):
        _run(host, "node_sync", params)
    assert not os.path.exists(host.local_path("C:\\etc\\kube-proxy\\token"))


def test_a_read_makes_no_key(host):
    """A facts read (preflight, --check, a run preflight refuses) changes nothing on the host: no key is made."""
    assert _run(host, "node_facts", {})["transport_key"] is None
    with host.open():
        assert sealed.KEY_CONTAINER not in (host.state.get("machine_keys") or {})
