"""Issue 20 item 2: every .NET member the lab interpreter implements exists in .NET Framework 4.x (what Windows
PowerShell 5.1 runs on) with an argument count one of its overloads takes, so the lab never runs a script
that calls a member or an overload only .NET (Core) has. The members come from tests/psgate/dotnet_surface.json
(the committed extract of Debian's Mono 4.5 profile assemblies, the static gate's "dotnet" rule; see
tests/psgate/dotnet_surface.py); the lab's implementations are the statics of its types (TypeInfo) and the
``m_<name>`` methods and ``prop_<name>`` properties of its .NET objects (NetObject subclasses)."""

import inspect
import json
import os

from winsim import core  # noqa: E402
from winsim.ps import winhost  # noqa: E402
from winsim.ps.builtins import _STR_METHODS  # noqa: E402
from winsim.ps.values import NetObject  # noqa: E402

SURFACE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "psgate",
                       "dotnet_surface.json")
# Types the lab models whose members are not in the extract's three assemblies (mscorlib, System, System.Core):
# PowerShell's own, CIM/WMI, and the few others; judged by their own sources in winhost.py / winfiles.py.
NOT_IN_SURFACE_ASSEMBLIES = ("System.Management.Automation.", "Microsoft.Management.Infrastructure.",
                             "System.ServiceProcess.", "Microsoft.PowerShell.", "System.Security.AccessControl.",
                             "Microsoft.Win32.RegistryKey")


def _surface():
    with open(SURFACE) as f:
        return {k.lower(): v for k, v in json.load(f)["types"].items()}


def _arity(fn, skip):
    """(min, max) arguments a Python implementation takes after its first ``skip`` parameters (None: any)."""
    params = list(inspect.signature(fn).parameters.values())[skip:]
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return sum(1 for p in params if p.kind == p.POSITIONAL_OR_KEYWORD and p.default is p.empty), None
    return sum(1 for p in params if p.default is p.empty), len(params)


def _accepts(overloads, lo, hi):
    """Every argument count the implementation takes is one some Framework overload takes (a maximum of -1 in
    the extract: a ``params`` array, any count from the minimum on)."""
    big = 64
    ranges = [(o[0], big if o[1] < 0 else o[1]) for o in overloads]
    hi = hi if hi is not None else big
    return all(any(a <= n <= b for a, b in ranges) for n in range(lo, hi + 1))


def _find(members, name):
    for k, v in members.items():
        if k.lower() == name.lower():
            return v
    return None


def _chain(surface, entry, key):
    """A member table of a type and of its base types (the extract lists what each type declares)."""
    out = {} if key in ("static", "methods") else []
    while entry is not None:
        part = entry[key]
        if isinstance(out, dict):
            for k, v in part.items():
                out.setdefault(k, []).extend(v)
        else:
            out.extend(part)
        entry = surface.get((entry.get("base") or "").lower())
    return out


def _all_subclasses(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _all_subclasses(sub)


def _interp(tmp_path):
    host = core.create_host(str(tmp_path), "w")
    with host.open():
        return winhost.new_interpreter(host, "t.ps1")


def _problems(surface, interp, classes):
    problems, checked = [], 0
    for t in set(interp.types.values()):
        full = getattr(t, "full", None)
        entry = surface.get((full or "").lower())
        if entry is None:
            continue
        for name, fn in t.statics.items():
            if not callable(fn) or isinstance(fn, type):
                continue
            overloads = _find(entry["static"], name)
            if overloads is None:
                if not any(f.lower() == name for f in entry["fields"]) and not any(
                        p.lower() == name for p in entry["properties"]):
                    problems.append("[%s]::%s is not a static member in .NET Framework 4.x" % (full, name))
                continue
            lo, hi = _arity(fn, 2)
            checked += 1
            if not _accepts(overloads, lo, hi):
                problems.append("[%s]::%s takes %s..%s arguments in the lab, .NET Framework overloads %s"
                                % (full, name, lo, hi, overloads))
    for cls in classes:
        full = getattr(cls, "type_name", "")
        # a class whose instances set their own type (List[T], FileSystemItem, ...) is judged by its tests
        if full.startswith(NOT_IN_SURFACE_ASSEMBLIES) or full == "System.Object":
            continue
        entry = surface.get(full.lower())
        if entry is None:
            continue
        for attr in dir(cls):
            if attr.startswith("m_"):
                name = attr[2:]
                overloads = _find(_chain(surface, entry, "methods"), name)
                if overloads is None:
                    problems.append("%s.%s() is not a method in .NET Framework 4.x" % (full, name))
                    continue
                lo, hi = _arity(getattr(cls, attr), 3)  # self, interp, node
                checked += 1
                if not _accepts(overloads, lo, hi):
                    problems.append("%s.%s takes %s..%s arguments in the lab, .NET Framework overloads %s"
                                    % (full, name, lo, hi, overloads))
            elif attr.startswith("prop_"):
                name = attr[5:]
                checked += 1
                if name.startswith("ps"):
                    continue  # PowerShell's own extended properties (PSIsContainer, ...)
                if not any(p.lower() == name for p in _chain(surface, entry, "properties") + _chain(
                        surface, entry, "fields")):
                    problems.append("%s.%s is not a property in .NET Framework 4.x" % (full, name))
    string = surface["system.string"]
    for name, fn in _STR_METHODS.items():
        overloads = _find(_chain(surface, string, "methods"), name)
        checked += 1
        if overloads is None:
            problems.append("String.%s() is not a method in .NET Framework 4.x" % name)
            continue
        lo, hi = _arity(fn, 1)
        if not _accepts(overloads, lo, hi):
            problems.append("String.%s takes %s..%s arguments in the lab, .NET Framework overloads %s"
                            % (name, lo, hi, overloads))
    return problems, checked


def test_implemented_members_exist_in_dotnet_framework(tmp_path):
    problems, checked = _problems(_surface(), _interp(tmp_path), list(_all_subclasses(NetObject)))
    assert checked > 10
    assert not problems, "\n".join(problems)


def test_planted_core_only_members_are_found(tmp_path):
    # File.WriteAllTextAsync and Path.Join exist only in .NET (Core); Stopwatch.Restart() takes no argument
    surface = _surface()
    interp = _interp(tmp_path)
    interp.types["io.file"].statics["writealltextasync"] = lambda interp, node, path, text: None
    from winsim.ps.builtins import TypeInfo
    interp.types["io.path"] = TypeInfo("Path", "System.IO.Path", statics={"Join": lambda interp, node, a, b: a})

    class _Planted(NetObject):
        type_name = "System.Diagnostics.Stopwatch"

        def m_restart(self, interp, node, extra):
            return None

    problems, _ = _problems(surface, interp, [_Planted])
    text = "\n".join(problems)
    assert "[System.IO.File]::writealltextasync is not a static member" in text
    assert "[System.IO.Path]::join is not a static member" in text
    assert "System.Diagnostics.Stopwatch.restart takes 1..1 arguments" in text, text
