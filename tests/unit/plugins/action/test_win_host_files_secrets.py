"""A secret file win_host_files writes (the kubelet's bootstrap kubeconfig with its token): sealed to the host's
transport key, never in a result, a diff or win_powershell's parameters."""

import base64
import hashlib

import pytest
from remote_host import RemoteHost

from ansible_collections.kubewin.nodes.plugins.action.win_host_files import ActionModule as FilesAction

PATH = "C:\\etc\\kubernetes\\bootstrap-kubelet.conf"
SECRET = "eyJhbGciOiJSUzI1NiJ9.secret-token"


def _files(secret=SECRET):
    return {"files": [{"path": PATH, "content": "token: " + secret, "restricted": True, "secret": True}]}


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


def test_a_secret_file_is_written_sealed_and_never_in_the_result_or_diff(make_action, host_key):
    # issue 20 item 5 / security-2 N2: the content is sealed to the host's transport key (from its facts), so
    # win_powershell's parameters (echoed in invocation.module_args, logged by module logging) hold no secret
    host, calls = _files_host({})
    action = make_action(FilesAction, _files(), host, diff=True)
    result = action.run(task_vars={"kubewin_host": {"transport_key": host_key[1]}})
    assert result["changed"] and host.names() == ["files_state", "node_sync"]
    assert result["written"] == [PATH]
    assert SECRET not in repr(result)
    token = [f for f in calls[1]["Files"] if f["path"] == PATH]
    assert len(token) == 1
    sent = repr(host.calls)
    for needle in (SECRET, base64.b64encode(SECRET.encode()).decode(), SECRET.split(".")[1]):
        assert needle not in sent
    assert _open_sealed(host_key[0], token[0]["content"]) == ("token: " + SECRET).encode()


def test_without_the_hosts_facts_its_transport_key_is_read_first(make_action, host_key):
    host, calls = _files_host({}, facts={"transport_key": host_key[1]})
    action = make_action(FilesAction, _files(), host)
    result = action.run(task_vars={})
    assert result["changed"] and host.names() == ["files_state", "node_facts", "node_sync"]
    # the host makes the key only now, for a secret write (a read or a refused run makes none), and the run keeps it
    assert calls[1] == {"MakeTransportKey": True}
    assert result["ansible_facts"]["kubewin_transport_key"] == host_key[1]
    token = [f for f in calls[2]["Files"] if f["path"] == PATH][0]
    assert SECRET not in repr(host.calls)
    assert _open_sealed(host_key[0], token["content"]) == ("token: " + SECRET).encode()


def test_a_key_made_by_an_earlier_write_of_the_run_is_used_without_a_read(make_action, host_key):
    host, calls = _files_host({}, facts={"transport_key": host_key[1]})
    action = make_action(FilesAction, _files(), host)
    result = action.run(task_vars={"kubewin_host": {"transport_key": None}, "kubewin_transport_key": host_key[1]})
    assert result["changed"] and host.names() == ["files_state", "node_sync"]


def test_a_host_without_a_usable_transport_key_gets_no_secret(make_action):
    host, calls = _files_host({}, facts={"transport_key": "<RSAKeyValue><Modulus>AQAB</Modulus>"
                                                          "<Exponent>AQAB</Exponent></RSAKeyValue>"})
    action = make_action(FilesAction, _files(), host)
    result = action.run(task_vars={})
    assert result["failed"] and "fewer than 2048" in result["msg"] and "node_sync" not in host.names()
