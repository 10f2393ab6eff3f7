# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Secrets sealed to one Windows host's transport key, so that module arguments, PowerShell module logging
(event 4103), transcripts and -vvvvv carry only ciphertext.

The host's node_facts script makes the key when the first secret write of a run asks for it (MakeTransportKey; every
facts read returns an existing one): an RSA key in the machine key store (container
``kubewin.nodes-transport``, not exportable, SYSTEM and Administrators only) and returns its public half
(``RSA.ToXmlString(false)``). The controller seals each secret with a hybrid scheme that Windows PowerShell
5.1 on .NET Framework 4.x can open with members that framework has (Microsoft Learn, .NET Framework 4.8):

- a fresh 256-bit AES key and a fresh 256-bit HMAC key per secret, each encrypted with RSA-OAEP with SHA-1
  (``RSACryptoServiceProvider.Decrypt(Byte[], Boolean)``: fOAEP true is OAEP with SHA-1, the only OAEP that
  class offers; .NET Framework has no ``RSAEncryptionPadding`` overload on RSACryptoServiceProvider before
  4.6 and no ``AesGcm`` at all);
- the content encrypted with AES-256-CBC, PKCS#7 padding, a random IV (``AesCryptoServiceProvider``: Mode
  defaults to CBC and Padding to PKCS7, ``SymmetricAlgorithm.Mode`` / ``.Padding``;
  ``CreateDecryptor().TransformFinalBlock``);
- encrypt-then-MAC: HMAC-SHA256 over IV and ciphertext (``HMACSHA256``, ``HMAC.Key``,
  ``HashAlgorithm.ComputeHash(Byte[])``), checked before anything is decrypted, byte by byte. The MAC detects
  corruption only: its key travels encrypted to the public key, so anyone holding that key can seal a valid
  entry; that the parameters come from the controller is WinRM's to guarantee, not the seal's.

A sealed file entry's ``content`` is ``sealed.<key>.<mac_key>.<iv>.<data>.<mac>`` (each base64, which has no
dot, so a plain base64 content is never taken for one); node_sync opens it with the key container.

PRIVATE to the collection: no compatibility promise outside it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import re

KEY_CONTAINER = "kubewin.nodes-transport"
MIN_KEY_BITS = 2048


class SealError(Exception):
    """The host's transport key is missing or unusable."""


def _b64(data):
    return base64.b64encode(data).decode("ascii")


def public_key(key_xml):
    """The RSA public key of ``RSA.ToXmlString(false)``: <RSAKeyValue><Modulus>..</Modulus><Exponent>..</Exponent>."""
    from cryptography.hazmat.primitives.asymmetric import rsa

    fields = {}
    for name in ("Modulus", "Exponent"):
        m = re.search(r"<%s>\s*([A-Za-z0-9+/=\s]+?)\s*</%s>" % (name, name), key_xml or "")
        if not m:
            raise SealError("the host's transport key is not an RSA public key (no %s in %r)" % (name, key_xml))
        fields[name] = int.from_bytes(base64.b64decode(re.sub(r"\s", "", m.group(1))), "big")
    if fields["Modulus"].bit_length() < MIN_KEY_BITS:
        raise SealError("the host's transport key has %d bits, fewer than %d" % (fields["Modulus"].bit_length(),
                                                                                 MIN_KEY_BITS))
    return rsa.RSAPublicNumbers(fields["Exponent"], fields["Modulus"]).public_key()


def seal(data, key_xml):
    """``data`` (bytes) sealed to the host whose transport key is ``key_xml``:
    'sealed.<key>.<mac_key>.<iv>.<data>.<mac>'."""
    from cryptography.hazmat.primitives import hashes, padding
    from cryptography.hazmat.primitives.asymmetric import padding as apadding
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

    pub = public_key(key_xml)
    aes_key, mac_key, iv = os.urandom(32), os.urandom(32), os.urandom(16)
    padder = padding.PKCS7(128).padder()
    encryptor = Cipher(algorithms.AES(aes_key), modes.CBC(iv)).encryptor()
    ct = encryptor.update(padder.update(data) + padder.finalize()) + encryptor.finalize()
    oaep = apadding.OAEP(mgf=apadding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)
    return ".".join(["sealed", _b64(pub.encrypt(aes_key, oaep)), _b64(pub.encrypt(mac_key, oaep)), _b64(iv),
                     _b64(ct), _b64(hmac.new(mac_key, iv + ct, hashlib.sha256).digest())])


def seal_files(parameters, key_xml):
    """node_sync's parameters with each ``Files`` entry's base64 ``content`` sealed."""
    out = dict(parameters)
    out["Files"] = [dict(f, content=seal(base64.b64decode(f["content"]), key_xml))
                    for f in parameters.get("Files") or []]
    return out


def transport_key(task_vars):
    """The host's transport key: the one a secret write of this run had the host make (kubewin_transport_key), or the
    one its kubewin_host facts found (win_host_facts); None when neither."""
    if (task_vars or {}).get("kubewin_transport_key"):
        return task_vars["kubewin_transport_key"]
    for facts in ((task_vars or {}).get("kubewin_host"), ((task_vars or {}).get("ansible_facts") or {}).get(
            "kubewin_host")):
        if isinstance(facts, dict) and facts.get("transport_key"):
            return facts["transport_key"]
    return None
