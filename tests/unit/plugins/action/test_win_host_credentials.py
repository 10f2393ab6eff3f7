"""kube-proxy's and flanneld's credential files: their state by component (win_host_credential_state) and their
kubeconfigs and tokens rendered and written by win_host_files' credentials, the tokens never in a result."""

import base64
import hashlib

import pytest
from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_host_credential_state import ActionModule as StateAction
from ansible_collections.kubewin.nodes.plugins.action.win_host_files import ActionModule as FilesAction
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import credential_files as cf

TOKENS = {"kube-proxy": "C:\\etc\\kube-proxy\\token", "flanneld": "C:\\etc\\kube-flannel\\token"}
KUBECONFIGS = {"kube-proxy": "C:\\etc\\kube-proxy\\kubeconfig", "flanneld": "C:\\etc\\kube-flannel\\kubeconfig"}
ACCOUNTS = {"kube-proxy": "kube-system/kubewin-kube-proxy-w1", "flanneld": "kube-flannel/kubewin-flanneld-w1"}
RESTRICTED = "O:BAD:PAI(A;;FA;;;SY)(A;;FA;;;BA)"
SECRET = "eyJhbGciOiJSUzI1NiJ9.secret-token"
SERVER = "https://192.0.2.10:6443"


def _creds(tokens=None, state=None):
    return {"server": SERVER, "ca_data": "Q0E=", "accounts": ACCOUNTS, "tokens": tokens or {},
            "token_files": TOKENS, "kubeconfigs": KUBECONFIGS, "state": state}


def _synced_state():
    configs, dummy = cf.credential_files(SERVER, "Q0E=", ACCOUNTS, {}, TOKENS, KUBECONFIGS)
    return {"sha512": {c["path"]: hashlib.sha512(c["content"].encode()).hexdigest() for c in configs},
            "acls": {c["path"]: RESTRICTED for c in configs}}


@pytest.fixture(scope="module")
def host_key():
    """An RSA key as the host's node_facts makes it: (private key, its RSA.ToXmlString(false))."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    n, e = key.public_key().public_numbers().n, key.public_key().public_numbers().e

    def b64(i):
        return base64.b64encode(i.to_bytes((i.bit_length() + 7) // 8, "big")).decode()
    return key, "<RSAKeyValue><Modulus>%s</Modulus><Exponent>%s</Exponent></RSAKeyValue>" % (b64(n), b64(e))


def _files_host(state, facts=None):
    calls = []

    def record(answer):
        def handler(params):
            calls.append(params)
            return answer
        return handler

    return RemoteHost({"files_state": record(state), "node_sync": record({}), "node_facts": record(facts or {})}), calls


def test_the_state_gives_the_sha512_of_each_token_file_by_component_in_one_read(make_action):
    files = {TOKENS["kube-proxy"]: "ab" * 64, KUBECONFIGS["kube-proxy"]: "cd" * 64}
    acls = {TOKENS["kube-proxy"]: RESTRICTED, KUBECONFIGS["kube-proxy"]: RESTRICTED}
    host = RemoteHost({"files_state": lambda params: {"files": files, "acls": acls}})
    result = make_action(StateAction, {"token_files": TOKENS, "kubeconfigs": KUBECONFIGS}, host).run(task_vars={})
    assert host.names() == ["files_state"]
    assert set(host.calls[0][1]["Files"]) == set(TOKENS.values()) | set(KUBECONFIGS.values())
    assert result["token_files_sha512"] == {"kube-proxy": "ab" * 64, "flanneld": None}
    assert result["sha512"][KUBECONFIGS["kube-proxy"]] == "cd" * 64 and not result["changed"]


def test_no_token_and_kubeconfigs_in_sync_cost_no_remote_operation(make_action):
    host, dummy = _files_host({})
    result = make_action(FilesAction, {"credentials": _creds(state=_synced_state())}, host).run(task_vars={})
    assert result["changed"] is False and host.calls == []


def test_a_kubeconfig_that_drifted_is_written_without_a_token(make_action):
    state = _synced_state()
    state["acls"][KUBECONFIGS["flanneld"]] = "O:BAD:AI(A;ID;FA;;;SY)(A;ID;FA;;;BA)(A;ID;0x1200a9;;;BU)"
    host, calls = _files_host({"files": state["sha512"], "acls": state["acls"]})
    result = make_action(FilesAction, {"credentials": _creds(state=state)}, host).run(task_vars={})
    assert host.names() == ["files_state", "node_sync"] and result["written"] == [KUBECONFIGS["flanneld"]]


def _open_sealed(key, content):
    """What node_sync does with a sealed content (plugin_utils/_host/sealed.py's format), in Python."""
    import hmac

    from cryptography.hazmat.primitives import hashes, padding
    from cryptography.hazmat.primitives.asymmetric import padding as apadding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    tag, wrapped_key, wrapped_mac_key, iv, data, mac = [p if i == 0 else base64.b64decode(p)
                                                        for i, p in enumerate(content.split("."))]
    assert tag == "sealed"
    oaep = apadding.OAEP(mgf=apadding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
    assert hmac.compare_digest(hmac.new(key.decrypt(wrapped_mac_key, oaep), iv + data, hashlib.sha256).digest(), mac)
    d = Cipher(algorithms.AES(key.decrypt(wrapped_key, oaep)), modes.CBC(iv)).decryptor()
    u = padding.PKCS7(128).unpadder()
    return u.update(d.update(data) + d.finalize()) + u.finalize()


def test_an_issued_token_is_written_and_never_in_the_result_or_diff(make_action, host_key):
    # issue 20 item 5 / security-2 N2: the token is sealed to the host's transport key (from its facts), so
    # win_powershell's parameters (echoed in invocation.module_args, logged by module logging) hold no secret
    host, calls = _files_host({})
    action = make_action(FilesAction, {"credentials": _creds(tokens={"flanneld": SECRET}, state=_synced_state())},
                         host, diff=True)
    result = action.run(task_vars={"kubewin_host": {"transport_key": host_key[1]}})
    assert result["changed"] and host.names() == ["files_state", "node_sync"]
    assert TOKENS["flanneld"] in result["written"] and TOKENS["kube-proxy"] not in result["written"]
    assert SECRET not in repr(result)
    token = [f for f in calls[1]["Files"] if f["path"] == TOKENS["flanneld"]]
    assert len(token) == 1
    sent = repr(host.calls)
    for needle in (SECRET, base64.b64encode(SECRET.encode()).decode(), SECRET.split(".")[1]):
        assert needle not in sent
    assert _open_sealed(host_key[0], token[0]["content"]) == SECRET.encode()


def test_without_the_hosts_facts_its_transport_key_is_read_first(make_action, host_key):
    host, calls = _files_host({}, facts={"transport_key": host_key[1]})
    action = make_action(FilesAction, {"credentials": _creds(tokens={"flanneld": SECRET}, state=_synced_state())},
                         host)
    result = action.run(task_vars={})
    assert result["changed"] and host.names() == ["files_state", "node_facts", "node_sync"]
    # the host makes the key only now, for a secret write (a read or a refused run makes none), and the run keeps it
    assert calls[1] == {"MakeTransportKey": True}
    assert result["ansible_facts"]["kubewin_transport_key"] == host_key[1]
    token = [f for f in calls[2]["Files"] if f["path"] == TOKENS["flanneld"]][0]
    assert SECRET not in repr(host.calls) and _open_sealed(host_key[0], token["content"]) == SECRET.encode()


def test_a_key_made_by_an_earlier_write_of_the_run_is_used_without_a_read(make_action, host_key):
    host, calls = _files_host({}, facts={"transport_key": host_key[1]})
    action = make_action(FilesAction, {"credentials": _creds(tokens={"flanneld": SECRET}, state=_synced_state())},
                         host)
    result = action.run(task_vars={"kubewin_host": {"transport_key": None}, "kubewin_transport_key": host_key[1]})
    assert result["changed"] and host.names() == ["files_state", "node_sync"]


def test_a_host_without_a_usable_transport_key_gets_no_secret(make_action):
    host, calls = _files_host({}, facts={"transport_key": "<RSAKeyValue><Modulus>AQAB</Modulus>"
                                                          "<Exponent>AQAB</Exponent></RSAKeyValue>"})
    action = make_action(FilesAction, {"credentials": _creds(tokens={"flanneld": SECRET}, state=_synced_state())},
                         host)
    result = action.run(task_vars={})
    assert result["failed"] and "fewer than 2048" in result["msg"] and "node_sync" not in host.names()


def test_without_a_state_the_kubeconfigs_are_compared_on_the_host(make_action):
    host, dummy = _files_host({})
    result = make_action(FilesAction, {"credentials": _creds()}, host, check_mode=True).run(task_vars={})
    assert result["changed"] and host.names() == ["files_state"]
    assert sorted(result["written"]) == sorted(KUBECONFIGS.values())
