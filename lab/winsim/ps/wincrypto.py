# Test-lab only: the .NET Framework 4.x cryptography members the kubewin.nodes scripts call.
"""A machine key store of RSA keys (CspParameters, RSACryptoServiceProvider, CspKeyContainerInfo,
CryptoKeySecurity), HMACSHA256 and AesCryptoServiceProvider, as .NET Framework 4.8 documents them on
Microsoft Learn; what is not modelled fails as "not supported by the lab interpreter" (stricter).

- ``CspParameters``: KeyContainerName, Flags (``CspProviderFlags``: UseMachineKeyStore 1,
  UseDefaultKeyContainer 2, UseNonExportableKey 4, UseExistingKey 8, UseArchivableKey 16,
  UseUserProtectedKey 32, NoPrompt 64, CreateEphemeralKey 128), CryptoKeySecurity. Only the machine key
  store is modelled (NoFlags is 0; the scripts run as an administrator over WinRM; a user key store would follow the
  account).
- ``RSACryptoServiceProvider(CspParameters)`` / ``(Int32, CspParameters)``: opens the named container, or
  creates it with that key size (1024 when none is given: "the default key size" of the
  ``RSACryptoServiceProvider(CspParameters)`` constructor is 1024 bits in .NET Framework) when it does not
  exist; with UseExistingKey a missing container is the CryptographicException "Keyset does not exist". An
  existing container keeps its key and its exportability (UseNonExportableKey applies only when the key is
  made); the parameters' CryptoKeySecurity is applied to it too (the stricter reading, see the constructor).
- ``ToXmlString(false)``: <RSAKeyValue><Modulus/><Exponent/></RSAKeyValue>; ``ToXmlString(true)`` of a
  non-exportable key: "Key not valid for use in specified state.".
- ``Decrypt(Byte[], Boolean)``: true is OAEP with SHA-1 (the only OAEP of this overload); false (PKCS#1
  v1.5) is not used by the scripts and not modelled. A wrong key or a damaged ciphertext:
  "Error occurred while decoding OAEP padding.".
- ``PersistKeyInCsp``: true for a key in a named container (the ``RSACryptoServiceProvider(CspParameters)``
  constructors), settable. With it false, ``Clear()`` or ``Dispose()`` deletes the key and its container
  (Microsoft Learn, RSACryptoServiceProvider.PersistKeyInCsp: "automatically set to true when you specify a key
  container name in a CspParameters object"; its example RSADeleteKeyInCSP deletes the key by setting it to
  false and calling Clear; Clear releases all resources, that is Dispose). With it true they only release the
  object: the container stays. After either, the object is disposed and any further use fails (stricter:
  ObjectDisposedException "Safe handle has been closed").
- ``HMACSHA256``: Key (any length), ComputeHash(Byte[]).
- ``AesCryptoServiceProvider``: Key (16, 24 or 32 bytes, else "Specified key is not a valid size for this
  algorithm."), IV (16 bytes, else "Specified initialization vector (IV) does not match the block size for
  this algorithm."), Mode CBC and Padding PKCS7 by default (SymmetricAlgorithm.Mode / .Padding);
  CreateDecryptor().TransformFinalBlock(Byte[], Int32, Int32): bad padding is "Padding is invalid and cannot
  be removed.".

The keys live in the host's state (``machine_keys``: {container: {pem, exportable, sddl}}), like the files
in C:\\ProgramData\\Microsoft\\Crypto\\RSA\\MachineKeys, so a test can plant one another user made.
``CspKeyContainerInfo.UniqueKeyContainerName`` names the container's file there ("the unique key container name",
Microsoft Learn; the lab's name is a hash of the container name and a fixed machine GUID, Windows' form): reading it
puts the file in the simulated drive with the container's owner and access rules, and Clear of a non-persisted key
deletes it with the container.

The audit section (SACL): .NET Framework enables SeSecurityPrivilege (Privilege class, which throws
PrivilegeNotHeldException "The process does not possess the 'SeSecurityPrivilege' privilege which is required for
this operation." when the token lacks it) whenever it writes or reads a key container's SACL: writing, when the
CryptoKeySecurity's audit rules were modified, which the one-argument ``SetSecurityDescriptorSddlForm(String)`` does
(it is ``(sddl, AccessControlSections.All)``: referencesource objectsecurity.cs; Utils.SetKeySetSecurityInfo,
cryptography/utils.cs), and reading, on every ``CspKeyContainerInfo.CryptoKeySecurity`` get (GetKeySetSecurityInfo
with AccessControlSections.All: icspasymmetricalgorithm.cs, utils.cs). Whether the connecting account holds "Manage
auditing and security log" is the host's policy: the lab's account does not (the stricter choice) unless the host
state's ``privileges`` lists SeSecurityPrivilege.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import hmac
import os
import re

from .builtins import VOID, TypeInfo, _bytes
from .values import NetObject, PSEnum, to_str

_FLAGS = {"noflags": 0, "usemachinekeystore": 1, "usedefaultkeycontainer": 2, "usenonexportablekey": 4,
          "useexistingkey": 8, "usearchivablekey": 16, "useuserprotectedkey": 32, "noprompt": 64,
          "createephemeralkey": 128}
_FLAG_NAMES = {v: n for n, v in (("UseMachineKeyStore", 1), ("UseDefaultKeyContainer", 2),
                                 ("UseNonExportableKey", 4), ("UseExistingKey", 8), ("UseArchivableKey", 16),
                                 ("UseUserProtectedKey", 32), ("NoPrompt", 64), ("CreateEphemeralKey", 128))}
_FLAGS_TYPE = "System.Security.Cryptography.CspProviderFlags"
# What a key made without CryptoKeySecurity gets in the lab: the stricter guess (the creator, an
# administrator here, owns it; SYSTEM and Administrators have access).
_DEFAULT_KEY_SDDL = "O:BAD:P(A;;GA;;;SY)(A;;GA;;;BA)"


def _crypto_error(interp, node, what, nargs, message):
    err = interp.error('Exception calling "%s" with "%d" argument(s): "%s"' % (what, nargs, message), node,
                       "System.Management.Automation.MethodInvocationException", "CryptographicException")
    err.record.inner_type = "System.Security.Cryptography.CryptographicException"
    return err


def _flags(interp, value, node, t=None):
    """[CspProviderFlags]'A, B' (an enum converts from its names joined by commas) or a value."""
    if isinstance(value, PSEnum) and value.type_name == _FLAGS_TYPE:
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        bits = value
    else:
        bits = 0
        for part in to_str(value).split(","):
            key = part.strip().lower()
            if key not in _FLAGS:
                known = ", ".join(_FLAG_NAMES[v] for v in sorted(_FLAG_NAMES))
                raise interp.error('Cannot convert value "%s" to type "%s". Error: "Unable to match the identifier '
                                   'name %s to a valid enumerator name. Specify one of the following enumerator '
                                   'names and try again: %s"' % (to_str(value), _FLAGS_TYPE, part.strip(), known),
                                   node, "System.Management.Automation.PSInvalidCastException", "RuntimeException",
                                   "InvalidArgument")
            bits |= _FLAGS[key]
    names = [_FLAG_NAMES[v] for v in sorted(_FLAG_NAMES) if bits & v]
    return PSEnum(_FLAGS_TYPE, ", ".join(names) or "NoFlags", bits)


def _byte(interp, value, node, t):
    from .builtins import _parse_int
    return _parse_int(interp, value, node, t, 0, 255)


def _need_security_privilege(interp, node, what, nargs):
    """Reading or writing a SACL: .NET enables SeSecurityPrivilege, or throws when the token lacks it."""
    if "SeSecurityPrivilege" not in (interp.host.host.state.get("privileges") or []):
        err = interp.error('Exception calling "%s" with "%d" argument(s): "The process does not possess the '
                           '\'SeSecurityPrivilege\' privilege which is required for this operation."' % (what, nargs),
                           node, "System.Management.Automation.MethodInvocationException", "PrivilegeNotHeldException")
        err.record.inner_type = "System.Security.AccessControl.PrivilegeNotHeldException"
        raise err


def _key_file(container):
    """C:\\ProgramData\\Microsoft\\Crypto\\RSA\\MachineKeys\\<unique name> of a container."""
    return ("C:\\ProgramData\\Microsoft\\Crypto\\RSA\\MachineKeys\\%s_6c1f7a0e-8d7c-4a5e-9b41-2f0d3c5e7a19"
            % hashlib.md5(container.lower().encode("utf-8")).hexdigest())


def _owner_dacl(sddl):
    m = re.match(r"^O:([A-Z]{2}|S-[0-9-]+)(D:.*)$", sddl)
    if not m:
        raise ValueError(sddl)
    return m.group(1), m.group(2)


class CryptoKeySecurity(NetObject):
    """System.Security.AccessControl.CryptoKeySecurity: SetSecurityDescriptorSddlForm(String) marks every section
    modified (it is (sddl, AccessControlSections.All): owner, group, access and audit; objectsecurity.cs
    UpdateWithNewSecurityDescriptor), (String, sections) only those; the Get form takes the sections to return."""

    type_name = "System.Security.AccessControl.CryptoKeySecurity"

    def __init__(self, sddl=None):
        self.sddl = sddl
        self.modified = set()

    def m_setsecuritydescriptorsddlform(self, interp, node, sddl, *sections):
        if len(sections) > 1:
            interp.unsupported("CryptoKeySecurity.SetSecurityDescriptorSddlForm with more arguments", node)
        which = {"owner", "group", "access", "audit"}
        if sections:
            which = {p.strip().lower() for p in to_str(sections[0]).split(",")}
            if which == {"all"}:
                which = {"owner", "group", "access", "audit"}
            if not which <= {"owner", "group", "access", "audit"} or not {"owner", "access"} <= which:
                interp.unsupported("CryptoKeySecurity sections %r" % to_str(sections[0]), node)
        self.modified = which
        try:
            _owner_dacl(to_str(sddl))
        except ValueError:
            raise interp.error('Exception calling "SetSecurityDescriptorSddlForm" with "1" argument(s): "The SDDL '
                               'form of a security descriptor object is invalid."', node,
                               "System.Management.Automation.MethodInvocationException", "ArgumentException") from None
        self.sddl = to_str(sddl)
        return VOID

    def m_getsecuritydescriptorsddlform(self, interp, node, sections):
        owner, dacl = _owner_dacl(self.sddl)
        which = sorted(p.strip().lower() for p in to_str(sections).split(","))
        if which == ["owner"]:
            return "O:" + owner
        if which == ["access", "owner"]:
            return "O:%s%s" % (owner, dacl)
        interp.unsupported("GetSecurityDescriptorSddlForm(%r)" % to_str(sections), node)


class CspParameters(NetObject):
    type_name = "System.Security.Cryptography.CspParameters"

    def __init__(self):
        self.container, self.flags, self.security = None, _flags(None, 0, None), None

    def ps_get(self, name):
        from .values import MISSING
        return {"keycontainername": self.container, "flags": self.flags,
                "cryptokeysecurity": self.security}.get(name.lower(), MISSING)

    def ps_set(self, name, value, interp, node):
        low = name.lower()
        if low == "keycontainername":
            self.container = to_str(value)
        elif low == "flags":
            self.flags = _flags(interp, value, node)
        elif low == "cryptokeysecurity" and isinstance(value, CryptoKeySecurity):
            self.security = value
        else:
            interp.unsupported("setting CspParameters.%s" % name, node)


class CspKeyContainerInfo(NetObject):
    type_name = "System.Security.Cryptography.CspKeyContainerInfo"

    def __init__(self, container, record, interp):
        self.container, self.record, self.interp = container, record, interp
        self.host = interp.host.host

    def prop_uniquekeycontainername(self):
        from ansible_collections.ansible.windows.plugins.module_utils import winsim_files
        path = _key_file(self.container)
        local = self.host.local_path(path)
        os.makedirs(os.path.dirname(local), exist_ok=True)
        if not os.path.exists(local):
            with open(local, "w") as f:
                f.write("key container %s" % self.container)
        owner, dacl = _owner_dacl(self.record["sddl"])
        winsim_files.set_sddl(self.host, path, dacl)
        winsim_files.set_owner(self.host, path, owner)
        return path.rsplit("\\", 1)[1]

    def prop_exportable(self):
        return bool(self.record["exportable"])

    def prop_keycontainername(self):
        return self.container

    def prop_machinekeystore(self):
        return True

    def prop_cryptokeysecurity(self):
        # a property getter that throws: PowerShell reports it as "Exception getting ..."
        _need_security_privilege(self.interp, None, "get_CryptoKeySecurity", 0)  # all sections, the SACL too
        return CryptoKeySecurity(self.record["sddl"])


class RSACryptoServiceProvider(NetObject):
    type_name = "System.Security.Cryptography.RSACryptoServiceProvider"

    def __init__(self, interp, node, args):
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import rsa

        if len(args) == 1 and isinstance(args[0], CspParameters):
            size, csp = 1024, args[0]
        elif len(args) == 2 and isinstance(args[0], int) and isinstance(args[1], CspParameters):
            size, csp = args
        else:
            interp.unsupported("RSACryptoServiceProvider other than (CspParameters) or (Int32, CspParameters)", node)
        if not csp.container or not csp.flags.value & 1 or csp.flags.value & ~(1 | 4 | 8):
            interp.unsupported("RSACryptoServiceProvider outside the machine key store, without a container name "
                               "or with flags %s" % csp.flags.name, node)
        keys = interp.host.host.state.setdefault("machine_keys", {})
        record = keys.get(csp.container)
        if csp.security is not None and "audit" in csp.security.modified and (record is not None or not
                                                                               csp.flags.value & 8):
            # Utils.GetKeyPairHelper applies CryptoKeySecurity (its modified sections) to the container it opened
            # or made: with the audit section that is a SACL write (stricter: before any key is made)
            _need_security_privilege(interp, node, ".ctor", len(args))
        if record is None:
            if csp.flags.value & 8:
                raise _crypto_error(interp, node, ".ctor", len(args), "Keyset does not exist\r\n")
            key = rsa.generate_private_key(public_exponent=65537, key_size=int(size))
            record = {"pem": key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()).decode("ascii"),
                      "exportable": not csp.flags.value & 4,
                      "sddl": csp.security.sddl if csp.security and csp.security.sddl else _DEFAULT_KEY_SDDL}
            keys[csp.container] = record
        elif csp.security is not None and csp.security.sddl:
            # The stricter reading where unknown: .NET Framework's key-pair helper applies the parameters'
            # CryptoKeySecurity to the container it opened, not only to one it made (Utils.GetKeyPairHelper
            # calls SetKeySetSecurityInfo whenever CryptoKeySecurity is set), so an administrator opening a
            # container another user made (and granted access to) takes it over: its owner no longer tells.
            record["sddl"] = csp.security.sddl
        self.container, self.record, self.interp = csp.container, record, interp
        self.keys, self.persist, self.disposed = keys, True, False
        self.key = serialization.load_pem_private_key(record["pem"].encode("ascii"), password=None)

    def _live(self, interp, node, what, nargs):
        if self.disposed:
            raise _crypto_error(interp, node, what, nargs, "Safe handle has been closed")

    def prop_persistkeyincsp(self):
        return self.persist

    def ps_set(self, name, value, interp, node):
        if name.lower() != "persistkeyincsp":
            interp.unsupported("setting RSACryptoServiceProvider.%s" % name, node)
        self._live(interp, node, "set_PersistKeyInCsp", 1)
        self.persist = bool(value)

    def _release(self):
        if not self.disposed and not self.persist and self.keys.get(self.container) is self.record:
            del self.keys[self.container]  # the container and its key are gone (CryptAcquireContext DELETEKEYSET)
            local = self.interp.host.host.local_path(_key_file(self.container))
            if os.path.exists(local):
                os.remove(local)
        self.disposed = True

    def m_clear(self, interp, node):
        self._release()
        return VOID

    def prop_cspkeycontainerinfo(self):
        return CspKeyContainerInfo(self.container, self.record, self.interp)

    def prop_keysize(self):
        return self.key.key_size

    def m_toxmlstring(self, interp, node, include_private):
        self._live(interp, node, "ToXmlString", 1)
        if include_private is not False:
            if not self.record["exportable"]:
                raise _crypto_error(interp, node, "ToXmlString", 1, "Key not valid for use in specified state.\r\n")
            interp.unsupported("ToXmlString($true)", node)
        numbers = self.key.public_key().public_numbers()

        def b64(n):
            return base64.b64encode(n.to_bytes((n.bit_length() + 7) // 8, "big")).decode("ascii")
        return "<RSAKeyValue><Modulus>%s</Modulus><Exponent>%s</Exponent></RSAKeyValue>" % (b64(numbers.n),
                                                                                          b64(numbers.e))

    def m_decrypt(self, interp, node, data, oaep):
        from cryptography.hazmat.primitives import hashes
        from cryptography.hazmat.primitives.asymmetric import padding

        if oaep is not True:
            interp.unsupported("RSACryptoServiceProvider.Decrypt without OAEP", node)
        self._live(interp, node, "Decrypt", 2)
        try:
            return list(self.key.decrypt(bytes(_bytes(interp, data, node)), padding.OAEP(
                mgf=padding.MGF1(algorithm=hashes.SHA1()), algorithm=hashes.SHA1(), label=None)))
        except ValueError:
            raise _crypto_error(interp, node, "Decrypt", 2, "Error occurred while decoding OAEP padding.\r\n") from None

    def m_dispose(self, interp, node):
        self._release()
        return VOID


class HMACSHA256(NetObject):
    type_name = "System.Security.Cryptography.HMACSHA256"

    def __init__(self):
        import os
        self.key = list(os.urandom(64))  # the parameterless constructor's random key

    def ps_set(self, name, value, interp, node):
        if name.lower() != "key":
            interp.unsupported("setting HMACSHA256.%s" % name, node)
        self.key = _bytes(interp, value, node)

    def m_computehash(self, interp, node, data):
        return list(hmac.new(bytes(self.key), bytes(_bytes(interp, data, node)), hashlib.sha256).digest())

    def m_dispose(self, interp, node):
        return VOID


class AesCryptoServiceProvider(NetObject):
    type_name = "System.Security.Cryptography.AesCryptoServiceProvider"

    def __init__(self):
        import os
        self.key, self.iv = list(os.urandom(32)), list(os.urandom(16))

    def ps_set(self, name, value, interp, node):
        low = name.lower()
        data = _bytes(interp, value, node)
        if low == "key":
            if len(data) not in (16, 24, 32):
                raise interp.error('Exception setting "Key": "Specified key is not a valid size for this algorithm."',
                                   node, "System.Management.Automation.SetValueInvocationException",
                                   "ExceptionWhenSetting")
            self.key = data
        elif low == "iv":
            if len(data) != 16:
                raise interp.error('Exception setting "IV": "Specified initialization vector (IV) does not match the '
                                   'block size for this algorithm."', node,
                                   "System.Management.Automation.SetValueInvocationException", "ExceptionWhenSetting")
            self.iv = data
        else:
            interp.unsupported("setting AesCryptoServiceProvider.%s" % name, node)

    def m_createdecryptor(self, interp, node):
        return AesDecryptor(self.key, self.iv)

    def m_dispose(self, interp, node):
        return VOID


class AesDecryptor(NetObject):
    type_name = "System.Security.Cryptography.CapiSymmetricAlgorithm"

    def __init__(self, key, iv):
        self.key, self.iv = bytes(key), bytes(iv)

    def m_transformfinalblock(self, interp, node, data, offset, count):
        from cryptography.hazmat.primitives import padding
        from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes

        block = bytes(_bytes(interp, data, node))[int(offset):int(offset) + int(count)]
        if len(block) % 16:
            raise _crypto_error(interp, node, "TransformFinalBlock", 3, "The input data is not a complete block.\r\n")
        d = Cipher(algorithms.AES(self.key), modes.CBC(self.iv)).decryptor()
        padded = d.update(block) + d.finalize()
        try:
            u = padding.PKCS7(128).unpadder()
            return list(u.update(padded) + u.finalize())
        except ValueError:
            raise _crypto_error(interp, node, "TransformFinalBlock", 3,
                                "Padding is invalid and cannot be removed.\r\n") from None

    def m_dispose(self, interp, node):
        return VOID


def _wrap_new_object(inner):
    def new_object(interp, b, items, node):
        name = re.sub(r"^system\.", "", to_str(b.get("TypeName")).lower())
        args = b.get("ArgumentList")
        args = [] if args is None else (args if isinstance(args, list) else [args])
        if name == "security.accesscontrol.cryptokeysecurity" and not args:
            return [CryptoKeySecurity()]
        if name == "security.cryptography.cspparameters" and not args:
            return [CspParameters()]
        if name == "security.cryptography.rsacryptoserviceprovider":
            return [RSACryptoServiceProvider(interp, node, args)]
        if name == "security.cryptography.hmacsha256" and not args:
            return [HMACSHA256()]
        if name == "security.cryptography.aescryptoserviceprovider" and not args:
            return [AesCryptoServiceProvider()]
        return inner(interp, b, items, node)
    return new_object


def register(interp):
    """After winfiles.register: New-Object learns the crypto types, the rest goes to the earlier New-Object."""
    cmdlet = copy.copy(interp.cmdlets["new-object"])  # the registered one is shared by every interpreter
    cmdlet.fn = _wrap_new_object(cmdlet.fn)
    interp.cmdlets["new-object"] = cmdlet
    t = interp.types
    t["security.cryptography.cspproviderflags"] = TypeInfo(
        "CspProviderFlags", _FLAGS_TYPE, convert=_flags, is_instance=lambda v: isinstance(v, PSEnum)
        and v.type_name == _FLAGS_TYPE,
        statics={n: PSEnum(_FLAGS_TYPE, n, v) for v, n in _FLAG_NAMES.items()})
    t["byte"] = TypeInfo("byte", "System.Byte", convert=_byte,
                         is_instance=lambda v: isinstance(v, int) and not isinstance(v, bool) and 0 <= v < 256)
