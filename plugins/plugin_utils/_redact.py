# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""Credentials taken out of text before the support bundle writes it (on the controller): what is redacted and how."""

from __future__ import annotations

import base64
import binascii
import re

MARK = "[REDACTED]"

# A PEM private key, also one cut by a log's tail (no END line) or written on one line with \n escapes.
# A key already redacted is left as it is: read again without its END line, it would take the rest of the text.
_PEM = re.compile(r"-----BEGIN ([A-Z0-9 ]*)PRIVATE KEY-----(?!\[REDACTED\]).*?(?:-----END \1PRIVATE KEY-----|\Z)",
                  re.S)
# A bootstrap token (kubeadm: [a-z0-9]{6}.[a-z0-9]{16}, bootstraputil.BootstrapTokenRegexp).
_BOOTSTRAP = re.compile(r"(?<![A-Za-z0-9])[a-z0-9]{6}\.[a-z0-9]{16}(?![A-Za-z0-9])")
# A JSON Web Token (ServiceAccount tokens, OIDC id tokens): three base64url parts, the header starting '{"'.
_JWT = re.compile(r"eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*")
# Authorization headers and bearer tokens in log lines.
_BEARER = re.compile(r"(?i)(\b(?:bearer|basic)\s+)[A-Za-z0-9._~+/=-]{8,}")
# user:password@ in a URL (a proxy setting in a service's environment).
_USERINFO = re.compile(r"(://)[^/\s:@\"']+:[^/\s@\"']+@")
# ... and in a proxy variable's value without a scheme (HTTPS_PROXY=user:pass@proxy:3128, which Go takes as http://).
_PROXY_USERINFO = re.compile(r"(?i)(\b(?:https?|all|no|ftp)_proxy[\"']?[ \t]*[:=][ \t]*[\"']?)"
                             r"[^/\s:@\"']+:[^/\s@\"']+@")
# A field or flag whose name ends in a credential word, and its value: YAML (token: x), JSON ("token": "x"),
# TOML (password = "x"), env (FOO_TOKEN=x), flags (--token=x, --token x).
_KEYWORDS = r"(?:token|password|passwd|secret|client-key-data|client_key_data|identitytoken|auth|apikey|api-key)"
_FIELD = re.compile(r"(?i)((?<![A-Za-z0-9])[A-Za-z0-9_.-]*" + _KEYWORDS + r"[\"']?[ \t]*[:=][ \t]*)"
                    r"(?![\"']?\[REDACTED\])"
                    r"(\"[^\"\n]*\"|'[^'\n]*'|[^\s,}\"']+)")
_FLAG = re.compile(r"(?i)(--[A-Za-z0-9-]*" + _KEYWORDS + r"[ \t]+)(?!-|[\"']?\[REDACTED\])(\"[^\"\n]*\"|\S+)")
# A long base64 run, decoded and redacted whole when what it encodes holds a credential (client-key-data, a Secret's
# data, a token encoded once more).
_BASE64 = re.compile(r"[A-Za-z0-9+/]{20,}={0,2}")


def _value(match):
    value = match.group(2)
    quote = value[0] if value[0] in "\"'" else ""
    return match.group(1) + quote + MARK + quote  # a quoted value stays quoted (the JSON files stay JSON)


def _encodes_credential(text, depth=2):
    """Whether base64 ``text`` decodes to text that holds a credential, itself or base64 once more (client-key-data
    encoded again)."""
    try:
        decoded = base64.b64decode(text + "=" * (-len(text) % 4), validate=True).decode("utf-8")
    except (binascii.Error, ValueError):
        return False
    if _redact_plain(decoded)[1]:
        return True
    return depth > 1 and any(_encodes_credential(m.group(0), depth - 1) for m in _BASE64.finditer(decoded))


def _redact_plain(text):
    count = 0
    for pattern, repl in ((_PEM, lambda m: "-----BEGIN %sPRIVATE KEY-----%s" % (m.group(1), MARK)),
                          (_JWT, MARK), (_BOOTSTRAP, MARK), (_BEARER, lambda m: m.group(1) + MARK),
                          (_USERINFO, lambda m: m.group(1) + MARK + "@"),
                          (_PROXY_USERINFO, lambda m: m.group(1) + MARK + "@"), (_FIELD, _value), (_FLAG, _value)):
        text, n = pattern.subn(repl, text)
        count += n
    return text, count


def redact(text):
    """``text`` with every credential replaced by [REDACTED], and how many were; base64 that encodes one too."""
    if not text:
        return text, 0
    text, count = _redact_plain(text)
    encoded = [0]

    def one(match):
        if not _encodes_credential(match.group(0)):
            return match.group(0)
        encoded[0] += 1
        return MARK
    text = _BASE64.sub(one, text)
    return text, count + encoded[0]
