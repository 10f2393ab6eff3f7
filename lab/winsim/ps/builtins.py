# Test-lab only: operators, types, methods and host-independent cmdlets of the lab interpreter.
from __future__ import annotations

import base64
import json
import re
import struct

from .values import (
    MISSING,
    ErrorRecord,
    Hashtable,
    NetObject,
    PSEnum,
    PSObject,
    RefValue,
    ScriptBlock,
    Unsupported,
    to_str,
    type_name,
)


# ---------------------------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------------------------
class TypeInfo(object):
    type_name = "System.RuntimeType"

    def __init__(self, name, full, convert=None, is_instance=None, statics=None):
        self.name, self.full = name, full
        self._convert, self._is = convert, is_instance
        self.statics = {k.lower(): v for k, v in (statics or {}).items()}

    def convert(self, interp, value, node):
        if self._convert is None:
            interp.unsupported("conversion to [%s]" % self.name, node)
        return self._convert(interp, value, node, self)

    def is_instance(self, value):
        if self._is is None:
            raise Unsupported("not supported by the lab interpreter: -is [%s]" % self.name)
        return self._is(value)

    def static_get(self, interp, name, node):
        v = self.statics.get(name.lower(), MISSING)
        if v is MISSING:
            interp.unsupported("[%s]::%s" % (self.name, name), node)
        return v(interp) if callable(v) and name.lower() in getattr(self, "properties", ()) else v

    def static_call(self, interp, name, args, node):
        fn = self.statics.get(name.lower())
        if fn is None or not callable(fn):
            interp.unsupported("[%s]::%s()" % (self.name, name), node)
        return fn(interp, node, *args)

    def __str__(self):
        return self.full


def _cannot_convert(interp, value, tinfo, node, detail=None):
    msg = 'Cannot convert the "%s" value of type "%s" to type "%s".' % (to_str(value), type_name(value), tinfo.full)
    if detail:
        msg = 'Cannot convert value "%s" to type "%s". Error: "%s"' % (to_str(value), tinfo.full, detail)
    fqid = "InvalidCastFromStringToInteger" if detail else "InvalidCastConstructorException"
    return interp.error(msg, node, "System.Management.Automation.PSInvalidCastException", fqid, "InvalidArgument")


def _conv_string(interp, v, node, t):
    # spec §6.8: $null -> '' ; arrays are joined with $OFS
    return to_str(v)


def _parse_int(interp, v, node, t, lo, hi):
    if v is None:
        return 0
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, PSEnum):
        v = v.value
    if isinstance(v, float):
        r = round(v)  # banker's rounding, like [int] in .NET (Math.Round, MidpointRounding.ToEven)
    elif isinstance(v, int):
        r = v
    elif isinstance(v, str):
        s = v.strip()
        try:
            r = int(s, 16) if s.lower().startswith("0x") else int(s)
        except ValueError:
            try:
                r = round(float(s))
            except ValueError:
                raise _cannot_convert(interp, v, t, node, "Input string was not in a correct format.") from None
    elif isinstance(v, list) and len(v) == 1:
        return _parse_int(interp, v[0], node, t, lo, hi)
    else:
        raise _cannot_convert(interp, v, t, node)
    if not lo <= r <= hi:
        raise _cannot_convert(interp, v, t, node, "Value was either too large or too small for %s."
                              % ("an Int32" if hi == 2 ** 31 - 1 else "a UInt32" if hi == 2 ** 32 - 1 else "an Int64"))
    return r


def _int_type(lo, hi):
    return lambda interp, v, node, t: _parse_int(interp, v, node, t, lo, hi)


def _conv_bool(interp, v, node, t):
    from .interp import is_true
    return is_true(v)


def _conv_object(interp, v, node, t):
    return v


def _conv_hashtable(interp, v, node, t):
    if v is None:
        return None
    if isinstance(v, Hashtable):
        return v
    raise _cannot_convert(interp, v, t, node)


def _conv_pscustomobject(interp, v, node, t):
    if isinstance(v, Hashtable):
        return PSObject(dict(v.items()))
    return v


def _conv_ordered(interp, v, node, t):
    if isinstance(v, Hashtable):
        return Hashtable(dict(v.items()), ordered=True)
    interp.unsupported("[ordered] of something else than a hash literal", node)


def _conv_switch(interp, v, node, t):
    from .interp import SwitchValue, is_true
    return v if isinstance(v, SwitchValue) else SwitchValue(is_true(v))


def _conv_nullstring(interp, v, node, t):
    interp.unsupported("[NullString] conversion", node)


class ArrayType(TypeInfo):
    """[T[]]: a scalar becomes a one-element array, each element converted; $null stays $null
    (spec §6.5, §9.4)."""

    def __init__(self, element):
        TypeInfo.__init__(self, element.name + "[]", element.full + "[]")
        self.element = element

    def convert(self, interp, value, node):
        from .interp import enumerate_value
        if value is None:
            return None
        items = enumerate_value(value) if isinstance(value, list) or hasattr(value, "ps_enumerate") else [value]
        return [self.element.convert(interp, i, node) for i in items]

    def is_instance(self, value):
        return isinstance(value, list)


class ListType(TypeInfo):
    def __init__(self, element):
        TypeInfo.__init__(self, "List[%s]" % element.name, "System.Collections.Generic.List`1[[%s]]" % element.full)
        self.element = element
        self.statics = {"new": self._new}

    def _new(self, interp, node, *args):
        if args:
            interp.unsupported("List[T]::new(arguments)", node)
        return GenericList(self)

    def is_instance(self, value):
        return isinstance(value, GenericList)


class GenericList(NetObject):
    def __init__(self, ltype):
        self.ltype = ltype
        self.items = []
        self.type_name = ltype.full

    def ps_enumerate(self):
        return list(self.items)

    def prop_count(self):
        return len(self.items)

    def ps_index(self, key):
        i = int(key)
        return self.items[i] if -len(self.items) <= i < len(self.items) else None

    def m_add(self, interp, node, value):
        self.items.append(self.ltype.element.convert(interp, value, node))
        return VOID

    def m_toarray(self, interp, node):
        return list(self.items)

    def m_contains(self, interp, node, value):
        # List<T>.Contains: EqualityComparer<T>.Default, so ordinal (case-sensitive) for strings
        return self.ltype.element.convert(interp, value, node) in self.items


class StackType(TypeInfo):
    def __init__(self, element):
        TypeInfo.__init__(self, "Stack[%s]" % element.name, "System.Collections.Generic.Stack`1[[%s]]" % element.full)
        self.element = element
        self.statics = {"new": self._new}

    def _new(self, interp, node, *args):
        if args:
            interp.unsupported("Stack[T]::new(arguments)", node)
        return GenericStack(self)

    def is_instance(self, value):
        return isinstance(value, GenericStack)


class GenericStack(NetObject):
    """Stack<T>: Push, Pop (InvalidOperationException when empty), Count; enumerates last pushed first."""

    def __init__(self, stype):
        self.stype = stype
        self.items = []
        self.type_name = stype.full

    def ps_enumerate(self):
        return list(reversed(self.items))

    def prop_count(self):
        return len(self.items)

    def m_push(self, interp, node, value):
        self.items.append(self.stype.element.convert(interp, value, node))
        return VOID

    def m_pop(self, interp, node):
        if not self.items:
            raise interp.error('Exception calling "Pop" with "0" argument(s): "Stack empty."', node,
                               "System.Management.Automation.MethodInvocationException", "InvalidOperationException")
        return self.items.pop()


class _Void(object):
    pass


VOID = _Void()


def _is_str(v):
    return isinstance(v, str)


def core_types():
    i32 = _int_type(-2 ** 31, 2 ** 31 - 1)
    t = {
        "string": TypeInfo("string", "System.String", _conv_string, _is_str),
        "int": TypeInfo("int", "System.Int32", i32, lambda v: isinstance(v, int) and not isinstance(v, bool)),
        "int32": TypeInfo("int", "System.Int32", i32, lambda v: isinstance(v, int) and not isinstance(v, bool)),
        "long": TypeInfo("long", "System.Int64", _int_type(-2 ** 63, 2 ** 63 - 1)),
        "uint32": TypeInfo("uint32", "System.UInt32", _int_type(0, 2 ** 32 - 1)),
        "bool": TypeInfo("bool", "System.Boolean", _conv_bool, lambda v: isinstance(v, bool)),
        "object": TypeInfo("object", "System.Object", _conv_object, lambda v: v is not None),
        "hashtable": TypeInfo("hashtable", "System.Collections.Hashtable", _conv_hashtable,
                              lambda v: isinstance(v, Hashtable)),
        "pscustomobject": TypeInfo("pscustomobject", "System.Management.Automation.PSObject", _conv_pscustomobject,
                                   lambda v: isinstance(v, PSObject)),
        "ordered": TypeInfo("ordered", "System.Collections.Specialized.OrderedDictionary", _conv_ordered),
        "switch": TypeInfo("switch", "System.Management.Automation.SwitchParameter", _conv_switch),
        "array": TypeInfo("array", "System.Array", lambda i, v, n, t: v if isinstance(v, list) else [v],
                          lambda v: isinstance(v, list)),
        "ref": TypeInfo("ref", "System.Management.Automation.PSReference"),
        "management.automation.errorrecord": TypeInfo(
            "ErrorRecord", "System.Management.Automation.ErrorRecord", None, lambda v: isinstance(v, ErrorRecord)),
        "nullstring": TypeInfo("NullString", "System.Management.Automation.Language.NullString", _conv_nullstring,
                               statics={"Value": NULLSTRING}),
        "convert": TypeInfo("Convert", "System.Convert", statics={
            "ToBase64String": lambda interp, node, data: base64.b64encode(bytes(_bytes(interp, data, node))).decode(),
            "FromBase64String": _from_base64}),
        "bitconverter": TypeInfo("BitConverter", "System.BitConverter", statics={
            "GetBytes": _get_bytes, "ToInt32": _to_int32}),
    }
    t["object[]"] = ArrayType(t["object"])
    t["string[]"] = ArrayType(t["string"])
    return t


class _NullString(object):
    type_name = "System.Management.Automation.Language.NullString"


NULLSTRING = _NullString()


def _bytes(interp, data, node):
    if not isinstance(data, list) or any(not isinstance(b, int) or not 0 <= b < 256 for b in data):
        interp.unsupported("byte[] from %s" % type_name(data), node)
    return data


def _from_base64(interp, node, text):
    try:
        return list(base64.b64decode(to_str(text), validate=True))
    except ValueError:
        raise interp.error('Exception calling "FromBase64String" with "1" argument(s): "The input is not a valid '
                           'Base-64 string as it contains a non-base 64 character, more than two padding characters, '
                           'or an illegal character among the padding characters. "', node,
                           "System.Management.Automation.MethodInvocationException", "FormatException") from None


def _get_bytes(interp, node, value):
    """BitConverter.GetBytes: the overload is chosen by the argument's type; only [uint32] and [int]
    values are modelled (the lab tracks no separate uint type: an int >= 2**31 counts as UInt32)."""
    if not isinstance(value, int) or isinstance(value, bool):
        interp.unsupported("BitConverter.GetBytes of %s" % type_name(value), node)
    return list(struct.pack("<I" if value >= 0 else "<i", value))


def _to_int32(interp, node, data, start):
    return struct.unpack("<i", bytes(_bytes(interp, data, node))[int(start):int(start) + 4])[0]


# ---------------------------------------------------------------------------------------------
# Operators
# ---------------------------------------------------------------------------------------------
def to_number(interp, v, node):
    if isinstance(v, bool):
        return int(v)
    if isinstance(v, (int, float)):
        return v
    if v is None:
        return 0
    if isinstance(v, PSEnum):
        return v.value
    if isinstance(v, str):
        s = v.strip()
        if s == "":
            return 0
        try:
            return int(s, 16) if s.lower().startswith("0x") else int(s)
        except ValueError:
            try:
                return float(s)
            except ValueError:
                pass
    raise interp.error('Cannot convert value "%s" to type "System.Int32". Error: "Input string was not in a correct '
                       'format."' % to_str(v), node, "System.Management.Automation.RuntimeException",
                       "InvalidCastFromStringToInteger", "InvalidArgument")


def _eq(interp, a, b, case=False):
    """about_Comparison_Operators: the right operand is converted to the left one's type; strings
    compare ignoring case unless -c."""
    if a is None:
        return b is None
    if b is None:
        return False
    if isinstance(a, str):
        bs = to_str(b)
        return a == bs if case else a.lower() == bs.lower()
    if isinstance(a, bool):
        from .interp import is_true
        return a == is_true(b)
    if isinstance(a, (int, float)):
        try:
            return a == to_number(interp, b, None)
        except Exception:
            return False
    if isinstance(a, PSEnum):
        if isinstance(b, PSEnum):
            return a.value == b.value
        if isinstance(b, str):
            return a.name.lower() == b.lower()
        return a.value == b
    return a is b or a == b


def _cmp(interp, a, b, node):
    if isinstance(a, str):
        x, y = a.lower(), to_str(b).lower()
    else:
        x, y = to_number(interp, a, node), to_number(interp, b, node)
    return (x > y) - (x < y)


def binary(interp, op, left, right, node):
    from .interp import enumerate_value, like_to_regex
    case = False
    given = op
    if op.startswith("-c") and op not in ("-contains",):
        case, op = True, "-" + op[2:]
    elif op.startswith("-i") and op not in ("-in", "-is", "-isnot"):
        op = "-" + op[2:]
    if op in ("-eq", "-ne", "-like", "-notlike", "-match", "-notmatch", "-lt", "-le", "-gt", "-ge"):
        enum = None if isinstance(left, list) else getattr(left, "ps_enumerate", None)
        if isinstance(left, list) or enum is not None:
            # spec §7.8.4, about_Comparison_Operators: with a collection on the left (an array, a List[T], any
            # enumerable but a string or hashtable) the operator filters its elements, one level deep, with
            # the operator as written (-ceq stays case-sensitive); the result is an array, so its truth is
            # that of the array (@(0) is false). -match/-notmatch then do not set $Matches ("If the input is
            # a collection, the -match and -notmatch operators return the matching members of that
            # collection, but the operator doesn't populate the $Matches variable").
            items = left if enum is None else list(enum())
            out = []
            for i in items:
                if isinstance(i, list) or getattr(i, "ps_enumerate", None) is not None:
                    # an element that is itself a collection is compared as one object, never filtered again
                    if op not in ("-eq", "-ne"):
                        interp.unsupported("%s on a collection element that is a collection" % given, node)
                    keep = (i is right) == (op == "-eq")
                elif op in ("-match", "-notmatch"):
                    rx = _regex(interp, to_str(right), node, case)
                    keep = (rx.search(to_str(i)) is not None) == (op == "-match")
                else:
                    keep = binary(interp, given, i, right, node) is True
                if keep:
                    out.append(i)
            return out
        if op == "-eq":
            return _eq(interp, left, right, case)
        if op == "-ne":
            return not _eq(interp, left, right, case)
        if op in ("-like", "-notlike"):
            rx = like_to_regex(to_str(right))
            if case:  # -clike / -cnotlike: about_Comparison_Operators, case-sensitive variants
                rx = re.compile(rx.pattern.replace("(?si:", "(?s:", 1), re.S)
            m = rx.match(to_str(left)) is not None
            return m if op == "-like" else not m
        if op in ("-match", "-notmatch"):
            rx = _regex(interp, to_str(right), node, case)
            m = rx.search(to_str(left))
            if m is not None:
                h = Hashtable()
                h[0] = m.group(0)
                for i, g in enumerate(m.groups(), 1):
                    if g is not None:
                        h[i] = g
                for k, g in m.groupdict().items():
                    if g is not None:
                        h[k] = g
                interp.set_var("Matches", h)
            return (m is not None) if op == "-match" else m is None
        c = _cmp(interp, left, right, node)
        return {"-lt": c < 0, "-le": c <= 0, "-gt": c > 0, "-ge": c >= 0}[op]
    if op in ("-contains", "-notcontains", "-in", "-notin"):
        coll, item = (left, right) if op in ("-contains", "-notcontains") else (right, left)
        items = enumerate_value(coll) if coll is not None else [None]
        found = any(_eq(interp, i, item, case) for i in items)
        return found if op in ("-contains", "-in") else not found
    if op == "-join":
        return to_str(right).join(to_str(i) for i in enumerate_value(left))
    if op == "-split":
        parts = _regex(interp, to_str(right), node, case).split(to_str(left))
        return parts
    if op == "-replace":
        if isinstance(right, list):
            pat, rep = to_str(right[0]), to_str(right[1]) if len(right) > 1 else ""
        else:
            pat, rep = to_str(right), ""
        rx = _regex(interp, pat, node, case)
        return rx.sub(_net_substitution(rx, rep), to_str(left))
    if op == "-f":
        return format_string(interp, to_str(left), right if isinstance(right, list) else [right], node)
    if op == "+":
        if left is None:
            return right
        if isinstance(left, list):
            return left + (right if isinstance(right, list) else [right])
        if isinstance(left, str):
            return left + to_str(right)
        if isinstance(left, Hashtable):
            if not isinstance(right, Hashtable):
                interp.unsupported("hashtable + %s" % type_name(right), node)
            h = Hashtable(dict(left.items()))
            for k, v in right.items():
                if k in h:
                    raise interp.error("Item has already been added. Key in dictionary: '%s'  Key being added: '%s'"
                                       % (k, k), node, "System.ArgumentException")
                h[k] = v
            return h
        return _arith(interp, "+", left, right, node)
    if op in ("-", "*", "/", "%"):
        if op == "*" and isinstance(left, str):
            return left * int(to_number(interp, right, node))
        return _arith(interp, op, left, right, node)
    if op in ("-band", "-bor", "-bxor"):
        a, b = int(to_number(interp, left, node)), int(to_number(interp, right, node))
        return {"-band": a & b, "-bor": a | b, "-bxor": a ^ b}[op]
    if op == "..":
        # about_Operators, "Range operator": the integers from the left bound to the right one, both included,
        # counting down when the left one is larger; both bounds are converted to int
        a, b = (int(interp.convert(v, interp.resolve_type("int"), node)) for v in (left, right))
        step = 1 if a <= b else -1
        return list(range(a, b + step, step))
    if op == "-xor":
        from .interp import is_true
        return is_true(left) != is_true(right)
    interp.unsupported("operator %s" % op, node)


def _arith(interp, op, left, right, node):
    a, b = to_number(interp, left, node), to_number(interp, right, node)
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if b == 0:
        raise interp.error("Attempted to divide by zero.", node, "System.DivideByZeroException",
                           "RuntimeException")
    if op == "/":
        # about_Arithmetic_Operators: integer division gives a double unless the result is whole
        q = a / b
        return int(q) if isinstance(a, int) and isinstance(b, int) and a % b == 0 else q
    return a % b if (a >= 0) == (b >= 0) or a % b == 0 else a % b - b


def _regex(interp, pattern, node, case=False):
    if re.search(r"\(\?<\w+>", pattern):
        pattern = re.sub(r"\(\?<(\w+)>", r"(?P<\1>", pattern)
    try:
        return re.compile(pattern, 0 if case else re.I)
    except re.error as e:
        interp.unsupported("regular expression %r (%s)" % (pattern, e), node)


_SUBST = re.compile(r"\$(?:(\d+)|\{(\w+)\}|([$&`'+_]))")


def _net_substitution(rx, rep):
    """A -replace replacement string as .NET's Regex.Replace reads it (learn.microsoft.com, "Substitutions in
    Regular Expressions"; RegexParser.ScanDollar): $number and ${name} name a group only when the regex has it
    (all digits are read: $10 with one group is the literal text "$10"), $$ is one $, $& the match, $` and $'
    the text before and after it, $+ the last group, $_ the whole input; any other $ and every backslash are
    literal (a Python replacement would read "\\" as an escape)."""
    def one(m):
        out, pos = [], 0
        for d in _SUBST.finditer(rep):
            out.append(rep[pos:d.start()])
            pos = d.end()
            num, name, sym = d.groups()
            key = int(num) if num is not None else (int(name) if name is not None and name.isdigit() else name)
            if key is not None:
                valid = key <= rx.groups if isinstance(key, int) else key in rx.groupindex
                out.append((m.group(key) or "") if valid else d.group(0))
            elif sym == "$":
                out.append("$")
            elif sym == "&":
                out.append(m.group(0))
            elif sym == "`":
                out.append(m.string[:m.start()])
            elif sym == "'":
                out.append(m.string[m.end():])
            elif sym == "+":
                out.append((m.group(rx.groups) or "") if rx.groups else "")
            else:
                out.append(m.string)
        out.append(rep[pos:])
        return "".join(out)
    return one


_FMT = re.compile(r"\{\{|\}\}|\{(\d+)(?:,(-?\d+))?(?::([^}]*))?\}")


def format_string(interp, fmt, args, node):
    """-f: .NET composite formatting ({index[,alignment][:format]}); the formats modelled are
    X/x (hex, two's complement for negative Int32), D, N0 and none."""
    def one(m):
        if m.group(0) == "{{":
            return "{"
        if m.group(0) == "}}":
            return "}"
        i = int(m.group(1))
        if i >= len(args):
            raise interp.error("Error formatting a string: Index (zero based) must be greater than or equal to zero "
                               "and less than the size of the argument list..", node, "System.FormatException")
        v, spec = args[i], m.group(3)
        if spec:
            kind, digits = spec[0], spec[1:]
            if kind in "xX" and isinstance(v, int):
                n = v & 0xFFFFFFFF if -2 ** 31 <= v < 0 else v & 0xFFFFFFFFFFFFFFFF if v < 0 else v
                s = ("%x" if kind == "x" else "%X") % n
                s = s.rjust(int(digits or 0), "0")
            elif kind in "dD" and isinstance(v, int):
                s = ("-" if v < 0 else "") + str(abs(v)).rjust(int(digits or 0), "0")
            else:
                interp.unsupported("format specifier {%s:%s} for %s" % (i, spec, type_name(v)), node)
        else:
            s = to_str(v)
        if m.group(2):
            w = int(m.group(2))
            s = s.rjust(w) if w > 0 else s.ljust(-w)
        return s
    return _FMT.sub(one, fmt)


# ---------------------------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------------------------
def _split_chars(s, sep=None):
    """String.Split(params char[]) in .NET Framework (Windows PowerShell 5.1): a string argument
    becomes char[], so each character separates; with no separator (``Split()``) each white-space
    character separates, and empty entries stay (StringSplitOptions.None: "a  b" -> a, '', b)."""
    if not sep:
        return re.split(r"\s", s)
    return re.split("[" + re.escape(sep) + "]", s)


def _net_error(message):
    """A .NET exception a string method throws; call_method turns it into PowerShell's
    MethodInvocationException ('Exception calling "<m>" with "<n>" argument(s): "<message>"')."""
    e = ValueError(message)
    e.net_message = message
    return e


def _replace(s, old, new):
    """String.Replace(string, string) (.NET Framework 4.x): an empty oldValue throws ArgumentException."""
    if old == "":
        raise _net_error("String cannot be of zero length.\r\nParameter name: oldValue")
    return s.replace(old, new)


def _substring(s, start, length=None):
    """String.Substring: an index outside the string throws ArgumentOutOfRangeException (no clamping)."""
    start = int(start)
    if start < 0 or start > len(s):
        raise _net_error("startIndex cannot be larger than length of string.\r\nParameter name: startIndex"
                         if start > len(s) else "StartIndex cannot be less than zero.\r\nParameter name: startIndex")
    if length is None:
        return s[start:]
    length = int(length)
    if length < 0 or start + length > len(s):
        raise _net_error("Index and length must refer to a location within the string.\r\nParameter name: length")
    return s[start:start + length]


_STR_METHODS = {
    "tostring": lambda s: s,
    "tolower": lambda s: s.lower(),
    "tolowerinvariant": lambda s: s.lower(),
    "toupper": lambda s: s.upper(),
    "toupperinvariant": lambda s: s.upper(),
    "trim": lambda s, chars=None: s.strip() if chars is None else s.strip(chars),
    "trimend": lambda s, chars=None: s.rstrip() if chars is None else s.rstrip(chars),
    "trimstart": lambda s, chars=None: s.lstrip() if chars is None else s.lstrip(chars),
    "startswith": lambda s, p: s.startswith(p),  # ordinal... culture-sensitive in .NET, same for ASCII
    "endswith": lambda s, p: s.endswith(p),
    "contains": lambda s, p: p in s,
    "split": _split_chars,
    "replace": _replace,
    "substring": _substring,
    "indexof": lambda s, p: s.find(p),
}


def call_method(interp, obj, name, args, node):
    low = name.lower()
    if obj is None:
        raise interp.error("You cannot call a method on a null-valued expression.", node,
                           fqid="InvokeMethodOnNull", category="InvalidOperation")
    if isinstance(obj, str):
        fn = _STR_METHODS.get(low)
        if fn is None:
            interp.unsupported("method String.%s" % name, node)
        if any(not isinstance(a, (str, int)) for a in args):
            interp.unsupported("String.%s with %s" % (name, ", ".join(type_name(a) for a in args)), node)
        try:
            return fn(obj, *[to_str(a) if isinstance(a, str) else a for a in args])
        except TypeError:
            # no overload of that name takes these arguments in .NET Framework 4.x's String
            raise interp.error('Cannot find an overload for "%s" and the argument count: "%d".' % (name, len(args)),
                               node, "System.Management.Automation.MethodException",
                               "MethodCountCouldNotFindBest", "NotSpecified") from None
        except ValueError as e:
            if not hasattr(e, "net_message"):
                raise
            raise interp.error('Exception calling "%s" with "%d" argument(s): "%s"' % (name, len(args),
                                                                                       e.net_message),
                               node, "System.Management.Automation.MethodInvocationException",
                               "ArgumentException", "NotSpecified") from None
    if low == "tostring" and not args:
        if isinstance(obj, (PSEnum, ErrorRecord, bool, int, float)):
            return to_str(obj)
    if isinstance(obj, Hashtable):
        if low == "containskey":
            return args[0] in obj
        if low == "add":
            if args[0] in obj:
                raise interp.error('Exception calling "Add" with "2" argument(s): "Item has already been added. '
                                   "Key in dictionary: '%s'  Key being added: '%s'\"" % (args[0], args[0]), node,
                                   "System.Management.Automation.MethodInvocationException")
            obj[args[0]] = args[1]
            return VOID
        if low == "remove":
            obj.remove(args[0])
            return VOID
        interp.unsupported("method Hashtable.%s" % name, node)
    if isinstance(obj, NetObject):
        m = obj.ps_method(name)
        if m is None:
            raise interp.error("Method invocation failed because [%s] does not contain a method named '%s'."
                               % (obj.type_name, name), node, fqid="MethodNotFound", category="InvalidOperation")
        return m(interp, node, *args)
    interp.unsupported("method %s.%s" % (type_name(obj), name), node)


# ---------------------------------------------------------------------------------------------
# Cmdlets
# ---------------------------------------------------------------------------------------------
COMMON = ("erroraction", "warningaction", "verbose", "debug", "informationaction")


class Cmdlet(object):
    """A cmdlet: ``params`` maps each parameter name to its kind ('value' or 'switch'),
    ``positional`` names the positional ones in order. ``fn(interp, bound, input_items, node)``
    returns the output list. Names ignore case and may be abbreviated (about_Parameters)."""

    def __init__(self, name, fn, params=(), switches=(), positional=(), changes=False):
        self.name, self.fn = name, fn
        self.params = list(params) + list(switches)
        self.switches = {s.lower() for s in switches}
        self.positional = list(positional)
        self.changes = changes

    def _canonical(self, interp, given, node):
        low = given.lower()
        names = self.params + ["ErrorAction"]
        exact = [p for p in names if p.lower() == low]
        if exact:
            return exact[0]
        cands = [p for p in names if p.lower().startswith(low)]
        if len(cands) == 1:
            return cands[0]
        if low in ("ea",):
            return "ErrorAction"
        if low in COMMON or low in ("whatif", "confirm", "errorvariable", "outvariable", "outbuffer"):
            interp.unsupported("common parameter -%s on %s" % (given, self.name), node)
        raise interp.error("A parameter cannot be found that matches parameter name '%s'." % given, node,
                           "System.Management.Automation.ParameterBindingException", "NamedParameterNotFound,"
                           + self.name, "InvalidArgument")

    def invoke(self, interp, args, input_items, node):
        from .interp import SwitchValue
        bound = {}
        positional = []
        pending = None
        for a in args:
            if a[0] == "param":
                name = self._canonical(interp, a[1], node)
                if pending is not None:
                    interp.unsupported("parameter -%s without a value" % pending, node)
                if name.lower() in self.switches:
                    bound[name] = SwitchValue(True) if a[2] is MISSING else a[2]
                elif a[2] is MISSING:
                    pending = name
                else:
                    bound[name] = a[2]
            elif a[0] == "splat":
                if not isinstance(a[1], Hashtable):
                    interp.unsupported("array splatting into %s" % self.name, node)
                for k, v in a[1].items():
                    bound[self._canonical(interp, k, node)] = v
            else:
                if pending is not None:
                    bound[pending] = a[1]
                    pending = None
                else:
                    positional.append(a[1])
        if pending is not None:
            raise interp.error("Missing an argument for parameter '%s'. Specify a parameter of type '%s' and try again."
                               % (pending, "System.Object"), node,
                               "System.Management.Automation.ParameterBindingException", "MissingArgument",
                               "InvalidArgument")
        free = [p for p in self.positional if p not in bound]
        for v in positional:
            if not free:
                raise interp.error("A positional parameter cannot be found that accepts argument '%s'." % to_str(v),
                                   node, "System.Management.Automation.ParameterBindingException",
                                   "PositionalParameterNotFound," + self.name, "InvalidArgument")
            bound[free.pop(0)] = v
        action = bound.pop("ErrorAction", None)
        if action is not None:
            action = to_str(action)
        meta = PARAMETER_METADATA.get(self.name.lower())
        if meta is not None:
            meta.validate(interp, bound, node)  # binding comes before -WhatIf and -ErrorAction: both cannot help
        if self.changes and interp.whatif:
            return []
        items = None if input_items is None else [i for i in input_items]
        saved = interp._command_action
        interp._command_action = action
        try:
            out = self.fn(interp, bound, items, node)
        finally:
            interp._command_action = saved
        return list(out) if out is not None else []


# ---------------------------------------------------------------------------------------------
# Parameter binding of the cmdlets the collection's scripts call (issue 20): what Windows PowerShell 5.1's
# parameter binder refuses before the cmdlet runs. The service cmdlets (Get/New/Set/Start/Stop-Service,
# Get-CimInstance, Invoke-CimMethod) validate their own arguments in winhost.py.
# ---------------------------------------------------------------------------------------------
_DOC = "https://learn.microsoft.com/en-us/powershell/module/%s?view=powershell-5.1"


class Param(object):
    """One parameter as the cmdlet's help page ("Parameters": Type, Position, Required, Accepted values,
    Parameter Sets) and source declare it. ``mandatory``: the parameter sets in which it is Required
    (``"*"``: all of its sets); ``sets``: the sets it belongs to (None: all). ``kind``: 'string', 'string[]',
    'int', 'uint32[]', 'object', 'switch' or an enum's (type name, accepted values)."""

    def __init__(self, kind="object", mandatory=(), sets=None, allow_null=False, allow_empty=False,
                 validate_set=None, validate_range=None, not_null_or_empty=False):
        self.kind, self.mandatory, self.sets = kind, tuple(mandatory), sets
        self.allow_null, self.allow_empty = allow_null, allow_empty
        self.validate_set, self.validate_range, self.not_null_or_empty = validate_set, validate_range, \
            not_null_or_empty


class CmdletMetadata(object):
    def __init__(self, name, module, params, default_set=None, command_type=None):
        self.name, self.params, self.default_set = name, params, default_set
        self.doc = _DOC % ("%s/%s" % (module, name.lower()))
        # the FullyQualifiedErrorId's command part: the cmdlet class, or a CDXML cmdlet's own name
        self.full = command_type or "Microsoft.PowerShell.Commands.%sCommand" % name.replace("-", "")

    def _fail(self, interp, node, message, exc, fqid, category):
        raise interp.error(message, node, "System.Management.Automation." + exc, fqid + "," + self.full, category)

    def resolve_set(self, interp, bound, node):
        """The parameter set the given names select (ParameterBinderController: a set that holds every
        named parameter; several left -> the default set; none -> AmbiguousParameterSet)."""
        all_sets = set()
        for p in self.params.values():
            if p.sets:
                all_sets.update(p.sets)
        if not all_sets:
            return None
        cands = set(all_sets)
        for name in bound:
            p = self.params.get(name)
            if p is not None and p.sets is not None:
                cands &= set(p.sets)
        if len(cands) == 1:
            return cands.pop()
        if cands and self.default_set in cands:
            return self.default_set
        self._fail(interp, node, "Parameter set cannot be resolved using the specified named parameters.",
                   "ParameterBindingException", "AmbiguousParameterSet", "InvalidArgument")

    def validate(self, interp, bound, node):
        """ParameterBinderBase.BindParameter order: type conversion (ParameterBindingException,
        CannotConvertArgumentNoMessage), then the Mandatory null/empty checks (unless [AllowNull] /
        [AllowEmptyString]: each element of a collection too), then the validation attributes
        (ParameterBindingValidationException); then the parameter set and its missing mandatory
        parameters. All are terminating errors of the command, before it does anything."""
        chosen = self.resolve_set(interp, bound, node)
        for name, value in bound.items():
            p = self.params.get(name)
            if p is None:
                continue
            self._convert(interp, name, p, value, node)
            mandatory = p.mandatory and ("*" in p.mandatory or chosen in p.mandatory or chosen is None)
            if mandatory:
                self._mandatory_value(interp, name, p, value, node)
            self._attributes(interp, name, p, value, node)
        missing = [n for n, p in self.params.items() if n not in bound and p.mandatory and (
            "*" in p.mandatory or chosen in p.mandatory)]
        if missing:
            self._fail(interp, node, "Cannot process command because of one or more missing mandatory parameters: "
                       "%s." % " ".join(missing), "ParameterBindingException", "MissingMandatoryParameter",
                       "InvalidArgument")

    def _convert(self, interp, name, p, value, node):
        from .interp import SwitchValue
        kind = p.kind
        items = value if isinstance(value, list) else [value]
        if kind in ("int", "uint32[]"):
            target = "System.Int32" if kind == "int" else "System.UInt32"
            if kind == "int" and isinstance(value, list):
                self._cannot_convert(interp, name, value, "System.Int32", node,
                                     'Cannot convert the "System.Object[]" value of type "System.Object[]" to '
                                     'type "System.Int32".')
            for v in items:
                if isinstance(v, bool) or v is None:
                    continue  # [int]$true is 1, $null 0 (LanguagePrimitives)
                try:
                    n = to_number(interp, v, node)
                except Exception:
                    self._cannot_convert(interp, name, v, target, node,
                                         'Cannot convert value "%s" to type "%s". Error: "Input string was not '
                                         'in a correct format."' % (to_str(v), target))
                if kind == "uint32[]" and n < 0:
                    self._cannot_convert(interp, name, v, target, node,
                                         'Cannot convert value "%s" to type "%s". Error: "Value was either too '
                                         'large or too small for a UInt32."' % (to_str(v), target))
        elif isinstance(kind, tuple):
            type_full, accepted = kind
            for v in items:
                if v is None or isinstance(v, PSEnum) and v.type_name == type_full:
                    continue
                text = to_str(v)
                names = [x.strip() for x in text.split(",")] if "," in text else [text]
                if isinstance(v, (int, float)) and not isinstance(v, bool):
                    continue
                for n in names:
                    if n.lower() not in [a.lower() for a in accepted]:
                        self._cannot_convert(
                            interp, name, v, type_full, node,
                            'Cannot convert value "%s" to type "%s". Error: "Unable to match the identifier name '
                            '%s to a valid enumerator name. Specify one of the following enumerator names and try '
                            'again:\r\n%s"' % (text, type_full, n, ", ".join(accepted)))
        elif kind == "switch":
            if not isinstance(value, (SwitchValue, bool)):
                self._cannot_convert(interp, name, value, "System.Management.Automation.SwitchParameter", node,
                                     'Cannot convert value "%s" to type "System.Management.Automation.SwitchParameter"'
                                     '.' % to_str(value))

    def _cannot_convert(self, interp, name, value, target, node, detail):
        self._fail(interp, node, "Cannot bind parameter '%s'. %s" % (name, detail), "ParameterBindingException",
                   "CannotConvertArgumentNoMessage", "InvalidArgument")

    def _mandatory_value(self, interp, name, p, value, node):
        def refuse(why, fqid):
            self._fail(interp, node, "Cannot bind argument to parameter '%s' because it is %s." % (name, why),
                       "ParameterBindingValidationException", fqid, "InvalidData")
        if p.kind in ("object", "switch"):
            if value is None and not p.allow_null:
                refuse("null", "ParameterArgumentValidationErrorNullNotAllowed")
            return
        if value is None:
            if not p.allow_null:
                refuse("null", "ParameterArgumentValidationErrorNullNotAllowed")
            return
        if isinstance(value, list):
            if not value and p.kind.endswith("[]"):
                refuse("an empty array", "ParameterArgumentValidationErrorEmptyArrayNotAllowed")
            for v in value:
                if v is None and not p.allow_null:
                    refuse("null", "ParameterArgumentValidationErrorNullNotAllowed")
                if isinstance(v, str) and v == "" and not p.allow_empty:
                    refuse("an empty string", "ParameterArgumentValidationErrorEmptyStringNotAllowed")
            return
        if p.kind.startswith("string") and to_str(value) == "" and not p.allow_empty:
            refuse("an empty string", "ParameterArgumentValidationErrorEmptyStringNotAllowed")

    def _attributes(self, interp, name, p, value, node):
        items = value if isinstance(value, list) else [value]
        if p.not_null_or_empty and (value is None or (isinstance(value, list) and not value) or any(
                v is None or to_str(v) == "" for v in items)):
            self._fail(interp, node, "Cannot validate argument on parameter '%s'. The argument is null or empty. "
                       "Provide an argument that is not null or empty, and then try the command again." % name,
                       "ParameterBindingValidationException", "ParameterArgumentValidationError", "InvalidData")
        if p.validate_set is not None:
            for v in items:
                if to_str(v).lower() not in [s.lower() for s in p.validate_set]:
                    self._fail(interp, node, "Cannot validate argument on parameter '%s'. The argument \"%s\" does "
                               "not belong to the set \"%s\" specified by the ValidateSet attribute. Supply an "
                               "argument that is in the set and then try the command again."
                               % (name, to_str(v), ",".join(p.validate_set)),
                               "ParameterBindingValidationException", "ParameterArgumentValidationError",
                               "InvalidData")
        if p.validate_range is not None:
            lo, hi = p.validate_range
            for v in items:
                n = to_number(interp, v, node)
                if n < lo:
                    self._fail(interp, node, "Cannot validate argument on parameter '%s'. The %s argument is less "
                               "than the minimum allowed range of %s. Supply an argument that is greater than or "
                               "equal to %s and then try the command again." % (name, to_str(v), lo, lo),
                               "ParameterBindingValidationException", "ParameterArgumentValidationError",
                               "InvalidData")
                if n > hi:
                    self._fail(interp, node, "Cannot validate argument on parameter '%s'. The %s argument is "
                               "greater than the maximum allowed range of %s. Supply an argument that is less than "
                               "or equal to %s and then try the command again." % (name, to_str(v), hi, hi),
                               "ParameterBindingValidationException", "ParameterArgumentValidationError",
                               "InvalidData")


_INT_MAX = 2147483647
_PATH = ("Path",)
_LIT = ("LiteralPath",)
_MGMT = "microsoft.powershell.management"
_UTIL = "microsoft.powershell.utility"


def _path_params(path_mandatory=True, **more):
    """-Path (Position 0, string[], Required in its set) and -LiteralPath (alias PSPath, string[], Required in
    its set) of the provider cmdlets; neither is [AllowEmptyString] in 5.1 (PowerShell 7 added that to
    Test-Path only)."""
    params = {"Path": Param("string[]", mandatory=("Path",) if path_mandatory else (), sets=_PATH),
              "LiteralPath": Param("string[]", mandatory=("LiteralPath",), sets=_LIT)}
    params.update(more)
    return params


# Each entry: the cmdlet's Windows PowerShell 5.1 help page (CmdletMetadata.doc, learn.microsoft.com
# .../<module>/<cmdlet>?view=powershell-5.1, "Parameters"), and for the attributes not on that page the
# cmdlet class in PowerShell's src/Microsoft.PowerShell.Commands.{Management,Utility}.
PARAMETER_METADATA = {m.name.lower(): m for m in (
    CmdletMetadata("Test-Path", _MGMT, _path_params(PathType=Param((
        "Microsoft.PowerShell.Commands.TestPathType", ("Any", "Container", "Leaf")))), default_set="Path"),
    CmdletMetadata("Get-Item", _MGMT, _path_params(Force=Param("switch")), default_set="Path"),
    CmdletMetadata("Get-ChildItem", _MGMT, _path_params(path_mandatory=False, Force=Param("switch")),
                   default_set="Path"),
    CmdletMetadata("Remove-Item", _MGMT, _path_params(Force=Param("switch"), Recurse=Param("switch")),
                   default_set="Path"),
    CmdletMetadata("Copy-Item", _MGMT, _path_params(Destination=Param("string"), Force=Param("switch")),
                   default_set="Path"),
    # New-Item: -Path Required in the pathSet (the one without -Name); -ItemType a string (alias Type)
    CmdletMetadata("New-Item", _MGMT, {"Path": Param("string[]", mandatory=("pathSet",), sets=("pathSet",)),
                                       "ItemType": Param("string"), "Value": Param("object"),
                                       "Force": Param("switch")}, default_set="pathSet"),
    # Split-Path: -Path Required in every set; -Parent and -Leaf belong to different sets
    CmdletMetadata("Split-Path", _MGMT, {"Path": Param("string[]", mandatory=("*",)),
                                         "Parent": Param("switch", sets=("ParentSet",)),
                                         "Leaf": Param("switch", sets=("LeafSet",))}, default_set="ParentSet"),
    CmdletMetadata("Get-Content", _MGMT, _path_params(
        Tail=Param("int"), Raw=Param("switch"),
        Encoding=Param(("Microsoft.PowerShell.Commands.FileSystemCmdletProviderEncoding", (
            "Unknown", "String", "Unicode", "BigEndianUnicode", "UTF8", "UTF7", "UTF32", "Ascii", "Default",
            "Oem", "BigEndianUTF32", "Byte")))), default_set="Path"),
    CmdletMetadata("Get-ItemProperty", _MGMT, _path_params(Name=Param("string[]")), default_set="Path"),
    # Set-ItemProperty: -Name (string, Position 1) and -Value (Position 2, [AllowNull]) Required in the
    # propertyValue sets; -Type is the registry provider's dynamic parameter (Microsoft.Win32.RegistryValueKind)
    CmdletMetadata("Set-ItemProperty", _MGMT, _path_params(
        Name=Param("string", mandatory=("*",)), Value=Param("object", mandatory=("*",), allow_null=True),
        Type=Param(("Microsoft.Win32.RegistryValueKind", (
            "String", "ExpandString", "Binary", "DWord", "MultiString", "QWord", "Unknown", "None")))),
        default_set="Path"),
    CmdletMetadata("Remove-ItemProperty", _MGMT, _path_params(Name=Param("string[]", mandatory=("*",))),
                   default_set="Path"),
    # Get-FileHash (Utility in 5.1): -Algorithm [ValidateSet] of the 5.1 help page's accepted values
    CmdletMetadata("Get-FileHash", _UTIL, _path_params(Algorithm=Param("string", validate_set=(
        "SHA1", "SHA256", "SHA384", "SHA512", "MACTripleDES", "MD5", "RIPEMD160"))), default_set="Path"),
    # Start-Sleep (5.1): -Seconds Required (Position 0) in its set, [ValidateRange(0, int.MaxValue / 1000)];
    # -Milliseconds Required in its set, [ValidateRange(0, int.MaxValue)]
    CmdletMetadata("Start-Sleep", _UTIL, {
        "Seconds": Param("int", mandatory=("Seconds",), sets=("Seconds",), validate_range=(0, _INT_MAX // 1000)),
        "Milliseconds": Param("int", mandatory=("Milliseconds",), sets=("Milliseconds",),
                              validate_range=(0, _INT_MAX))}, default_set="Seconds"),
    # New-Object: -TypeName Required (Position 0) in the Net set; -ArgumentList object[] (Position 1)
    # -ComObject Required (Position 0) in the Com set (a ProgID such as HNetCfg.FwPolicy2)
    CmdletMetadata("New-Object", _UTIL, {"TypeName": Param("string", mandatory=("Net",), sets=("Net",)),
                                         "ComObject": Param("string", mandatory=("Com",), sets=("Com",)),
                                         "ArgumentList": Param("object")}, default_set="Net"),
    # Select-Object -First: [ValidateRange(0, int.MaxValue)]
    CmdletMetadata("Select-Object", _UTIL, {"First": Param("int", validate_range=(0, _INT_MAX))}),
    # ConvertTo-Json (5.1): -Depth [ValidateRange(1, int.MaxValue)]
    CmdletMetadata("ConvertTo-Json", _UTIL, {"InputObject": Param("object", allow_null=True),
                                             "Depth": Param("int", validate_range=(1, _INT_MAX)),
                                             "Compress": Param("switch")}),
    # Get-NetIPAddress (NetTCPIP CDXML): -InterfaceIndex uint32[], -AddressFamily of {IPv4, IPv6}
    CmdletMetadata("Get-NetIPAddress", "nettcpip", {
        "InterfaceIndex": Param("uint32[]"),
        "AddressFamily": Param(("Microsoft.PowerShell.Cmdletization.GeneratedTypes.NetIPAddress.AddressFamily",
                                ("IPv4", "IPv6")))}, command_type="Get-NetIPAddress"),
)}


def cmdlet(registry, name, **kw):
    def deco(fn):
        registry[name.lower()] = Cmdlet(name, fn, **kw)
        return fn
    return deco


CORE_CMDLETS = {}


@cmdlet(CORE_CMDLETS, "ForEach-Object", params=("Process", "MemberName"), positional=("Process",))
def _foreach_object(interp, b, items, node):
    """about_ForEach-Object: a script block runs for each input object with $_; a member name gives
    that property of each (PowerShell 4.0 "operation statement")."""
    if items is None:
        items = []
    proc = b.get("Process", b.get("MemberName"))
    out = []
    for item in items:
        if isinstance(proc, ScriptBlock):
            out.extend(interp.invoke_scriptblock(proc, None, new_scope=False, current=item))
        else:
            v = interp.get_member(item, to_str(proc), node)
            if v is not None:
                out.extend(v if isinstance(v, list) else [v])
    return out


@cmdlet(CORE_CMDLETS, "Where-Object", params=("FilterScript", "Property", "Value", "EQ", "NE", "Like", "NotLike"),
        positional=("FilterScript", "Value"))
def _where_object(interp, b, items, node):
    """about_Where-Object: a script block filter, or the comparison statement `Where-Object Prop -eq Value`."""
    from .interp import is_true
    out = []
    fs = b.get("FilterScript")
    ops = [k for k in ("EQ", "NE", "Like", "NotLike") if k in b]
    for item in items or []:
        if isinstance(fs, ScriptBlock):
            keep = is_true(_collapse(interp.invoke_scriptblock(fs, None, new_scope=False, current=item)))
        else:
            prop = to_str(fs if fs is not None else b.get("Property"))
            if len(ops) != 1:
                interp.unsupported("Where-Object without one comparison operator", node)
            value = interp.get_member(item, prop, node)
            keep = is_true(binary(interp, "-" + ops[0].lower(), value, b[ops[0]], node))
        if keep:
            out.append(item)
    return out


def _collapse(out):
    from .interp import collapse
    return collapse(out)


@cmdlet(CORE_CMDLETS, "Out-Null", params=("InputObject",))
def _out_null(interp, b, items, node):
    return []


@cmdlet(CORE_CMDLETS, "Out-String", params=("InputObject",))
def _out_string(interp, b, items, node):
    """Out-String of strings: each on its own line, the text ending with a newline."""
    items = items or []
    for i in items:
        if not isinstance(i, (str, int, float, bool)):
            interp.unsupported("Out-String of %s (formatting)" % type_name(i), node)
    return ["".join(to_str(i) + "\r\n" for i in items)] if items else [""]


@cmdlet(CORE_CMDLETS, "Select-Object", params=("First",), positional=())
def _select_object(interp, b, items, node):
    if set(b) != {"First"}:
        interp.unsupported("Select-Object other than -First", node)
    return (items or [])[:int(b["First"])]


def _from_json(v):
    if isinstance(v, dict):
        return PSObject({k: _from_json(x) for k, x in v.items()})
    if isinstance(v, list):
        return [_from_json(x) for x in v]
    return v


@cmdlet(CORE_CMDLETS, "ConvertFrom-Json", params=("InputObject",), positional=("InputObject",))
def _convertfrom_json(interp, b, items, node):
    """Windows PowerShell 5.1 ConvertFrom-Json: the input lines are joined, objects become
    PSCustomObject, and a JSON array is written as one object (not enumerated: PowerShell 7.0 changed
    that, about_ConvertFrom-Json -NoEnumerate)."""
    texts = [to_str(i) for i in (items or [])] if "InputObject" not in b else [to_str(b["InputObject"])]
    if not texts:
        return []
    try:
        value = json.loads("\n".join(texts))
    except ValueError as e:
        raise interp.error("Invalid JSON primitive: %s" % e, node, "System.ArgumentException",
                           "System.ArgumentException,Microsoft.PowerShell.Commands.ConvertFromJsonCommand") from None
    return [_from_json(value)]


def _json_value(interp, v, depth, node):
    """One value for Windows PowerShell 5.1 ConvertTo-Json: beyond -Depth an object is written as
    its string form (about ConvertTo-Json, -Depth: "The default value is 2"); enums as numbers."""
    from .interp import SwitchValue
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, PSEnum):
        return v.value
    if isinstance(v, SwitchValue):
        return v.present
    if depth < 0:
        if isinstance(v, (list, GenericList)):
            interp.unsupported("ConvertTo-Json of an array deeper than -Depth", node)
        return to_str(v)
    if isinstance(v, (list, GenericList)):
        return [_json_value(interp, i, depth - 1, node) for i in (v if isinstance(v, list) else v.items)]
    if isinstance(v, Hashtable):
        return {to_str(k): _json_value(interp, x, depth - 1, node) for k, x in v.items()}
    if isinstance(v, PSObject):
        return {to_str(k): _json_value(interp, x, depth - 1, node) for k, x in v.props.items()}
    interp.unsupported("ConvertTo-Json of %s" % type_name(v), node)


@cmdlet(CORE_CMDLETS, "ConvertTo-Json", params=("InputObject", "Depth"), switches=("Compress",),
        positional=("InputObject",))
def _convertto_json(interp, b, items, node):
    """Windows PowerShell 5.1 ConvertTo-Json -Compress: several pipeline objects become one JSON array;
    JavaScriptSerializer escapes < > & and ' as \\u003c \\u003e \\u0026 \\u0027. The indented form
    (5.1's own spacing) is not modelled."""
    if "Compress" not in b:
        interp.unsupported("ConvertTo-Json without -Compress (5.1's indentation)", node)
    depth = int(b.get("Depth", 2))
    if "InputObject" in b:
        value = b["InputObject"]
    else:
        items = items or []
        value = items[0] if len(items) == 1 else list(items)
    text = json.dumps(_json_value(interp, value, depth, node), separators=(",", ":"), ensure_ascii=False)
    for ch, esc in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("'", "\\u0027")):
        text = text.replace(ch, esc)
    return [text]


def register(interp):
    interp._command_action = None
    interp.types.update(core_types())
    interp.cmdlets.update(CORE_CMDLETS)


# ---------------------------------------------------------------------------------------------
# win_powershell's Convert-OutputObject (ansible.windows win_powershell.ps1)
# ---------------------------------------------------------------------------------------------
def convert_output(v, depth):
    """$Ansible.Result as win_powershell returns it: beyond ``depth`` levels an object becomes its
    string form; strings and value types stay; lists and dictionaries recurse."""
    from .interp import SwitchValue
    if v is None or v is VOID:
        return None
    if isinstance(v, PSEnum):
        if depth >= 0:
            return {"Type": v.type_name, "String": v.name, "Value": v.value}
        return v.name
    if isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, SwitchValue):
        return v.present
    if depth < 0:
        return to_str(v)
    if isinstance(v, (list, GenericList)):
        return [convert_output(i, depth - 1) for i in (v if isinstance(v, list) else v.items)]
    if isinstance(v, Hashtable):
        return {to_str(k): convert_output(x, depth - 1) for k, x in v.items()}
    if isinstance(v, PSObject):
        return {to_str(k): convert_output(x, depth - 1) for k, x in v.props.items()}
    raise Unsupported("not supported by the lab interpreter: returning a %s in $Ansible.Result" % type_name(v))


__all__ = ["RefValue", "convert_output", "register", "binary", "call_method", "to_number", "ArrayType", "ListType"]
