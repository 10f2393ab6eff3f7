# Test-lab only: the values the lab's PowerShell interpreter works with.
"""PowerShell values as Python objects.

``None`` is $null, ``bool``/``int``/``float``/``str`` the .NET primitives, ``list`` an object[] array,
:class:`Hashtable` a case-insensitive System.Collections.Hashtable, :class:`PSObject` a
PSCustomObject (ordered, case-insensitive properties), :class:`ErrorRecord` an ErrorRecord,
:class:`NetObject` the base of every other .NET object the lab models (members found by name,
ignoring case).
"""

from __future__ import annotations


class Unsupported(Exception):
    """A construct the lab interpreter does not implement: never caught by the script's try/catch."""


class Hashtable(object):
    """@{}: keys compare case-insensitively (about_Hash_Tables: "keys are not case-sensitive")."""

    type_name = "System.Collections.Hashtable"

    def __init__(self, items=None, ordered=False):
        self._d = {}
        self.ordered = ordered
        for k, v in (items or {}).items():
            self[k] = v

    @staticmethod
    def _k(key):
        return key.lower() if isinstance(key, str) else key

    def __setitem__(self, key, value):
        k = self._k(key)
        if k in self._d:
            self._d[k] = (self._d[k][0], value)
        else:
            self._d[k] = (key, value)

    def __getitem__(self, key):
        return self._d[self._k(key)][1]

    def get(self, key, default=None):
        e = self._d.get(self._k(key))
        return default if e is None else e[1]

    def __contains__(self, key):
        return self._k(key) in self._d

    def remove(self, key):
        self._d.pop(self._k(key), None)

    def keys(self):
        return [e[0] for e in self._d.values()]

    def values(self):
        return [e[1] for e in self._d.values()]

    def items(self):
        return list(self._d.values())

    def __len__(self):
        return len(self._d)


class PSObject(object):
    """[pscustomobject] / ConvertFrom-Json objects: NoteProperties in order, names ignore case."""

    type_name = "System.Management.Automation.PSCustomObject"

    def __init__(self, items=None):
        self.props = Hashtable(items, ordered=True)

    def __str__(self):
        return "@{" + "; ".join("%s=%s" % (k, to_str(v)) for k, v in self.props.items()) + "}"


class ErrorRecord(object):
    type_name = "System.Management.Automation.ErrorRecord"

    def __init__(self, message, exception_type="System.Management.Automation.RuntimeException",
                 fqid="RuntimeException", category="NotSpecified", target=None, where=""):
        self.message = message
        self.exception_type = exception_type
        self.fqid = fqid
        self.category = category
        self.target = target
        self.where = where
        self.inner_type = None  # a MethodInvocationException's inner .NET exception type

    def __str__(self):
        return self.message


class PSEnum(object):
    """An enum value (ServiceControllerStatus ...): compares and converts by name, ignoring case."""

    def __init__(self, type_name, name, value):
        self.type_name, self.name, self.value = type_name, name, value

    def __str__(self):
        return self.name


class NetObject(object):
    """A modelled .NET object. Properties are ``prop_<name>`` (or plain attributes listed in
    ``ps_props``), methods ``m_<name>``; names are matched ignoring case."""

    type_name = "System.Object"
    ps_props = ()

    def ps_get(self, name):
        low = name.lower()
        for attr in dir(self):
            if attr.lower() == "prop_" + low:
                return getattr(self, attr)()
        for p in self.ps_props:
            if p.lower() == low:
                return getattr(self, p)
        return MISSING

    def ps_method(self, name):
        low = "m_" + name.lower()
        for attr in dir(self):
            if attr.lower() == low:
                return getattr(self, attr)
        return None

    def __str__(self):
        return self.type_name


class RefValue(object):
    """[ref]$var: writes go back to the variable."""

    type_name = "System.Management.Automation.PSReference"

    def __init__(self, getter, setter):
        self._get, self._set = getter, setter

    @property
    def value(self):
        return self._get()

    @value.setter
    def value(self, v):
        self._set(v)


class ScriptBlock(object):
    type_name = "System.Management.Automation.ScriptBlock"

    def __init__(self, node, text):
        self.node, self.text = node, text

    def __str__(self):
        return self.text[1:-1] if self.text.startswith("{") else self.text


class _Missing(object):
    def __repr__(self):
        return "MISSING"


MISSING = _Missing()


def type_name(v):
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "System.Boolean"
    if isinstance(v, int):
        return "System.Int32" if -2 ** 31 <= v < 2 ** 31 else "System.Int64"
    if isinstance(v, float):
        return "System.Double"
    if isinstance(v, str):
        return "System.String"
    if isinstance(v, list):
        return "System.Object[]"
    return getattr(v, "type_name", "System.Object")


def format_double(f):
    """[string] of a double: round-trip form (invariant culture), integers without '.0'."""
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "Infinity" if f > 0 else "-Infinity"
    if f == int(f) and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def to_str(v, ofs=" "):
    """PowerShell's conversion to string (LanguagePrimitives.ConvertTo string; arrays joined with $OFS)."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "True" if v else "False"
    if isinstance(v, float):
        return format_double(v)
    if isinstance(v, (int, str)):
        return str(v)
    if isinstance(v, list):
        return ofs.join(to_str(i) for i in v)
    if isinstance(v, Hashtable):
        return "System.Collections.Specialized.OrderedDictionary" if v.ordered else v.type_name
    return str(v)
