r"""Writes tests/psgate/dotnet_surface.json, the .NET Framework 4.x members the ``dotnet`` rule of psgate checks
calls against, from the real assemblies of Debian's Mono packages (pinned below by version and SHA-256).

Why these and why a committed extract: the scripts run in Windows PowerShell 5.1, that is on .NET Framework 4.x.
Microsoft's reference assemblies (NuGet Microsoft.NETFramework.ReferenceAssemblies.net48) are on a registry this
project's machines do not reach; Debian's Mono 6.8 packages are, and Mono's 4.5 profile (``/usr/lib/mono/4.5``)
implements .NET Framework 4.x's public API, largely from Microsoft's own referencesource. It is an
implementation, not a reference assembly: where Mono adds a public member .NET Framework lacks, the gate
accepts it (a known gap, see CONTRIBUTING.md), but a member .NET Core added and .NET Framework lacks
(``File.WriteAllTextAsync``, ``Path.Join``, ``String.Contains(char)``) is not there, and
``Directory.CreateDirectory(string, DirectorySecurity)`` / ``FileInfo.GetAccessControl``, which .NET Core moved
away, are. The extract is committed so that ``make lint`` needs no download and no dnfile; ``make setup`` downloads the
pinned packages into .build/psgate-mono (about 2.5 MB from Debian's mirror), and
tests/unit/psgate/test_dotnet_surface.py regenerates the extract from them (dnfile, requirements-dev.txt) and
compares.

Usage:
  dotnet_surface.py --fetch DIR   apt-get download the pinned packages into DIR (checks their SHA-256)
  dotnet_surface.py DIR           write dotnet_surface.json from the .deb files in DIR
  dotnet_surface.py --check DIR   exit 1 when dotnet_surface.json differs from what DIR's packages give
"""

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE / "dotnet_surface.json"
VERSION = "6.8.0.105+dfsg-3.3+deb12u1"  # Debian 12 (bookworm)
PACKAGES = {
    "libmono-corlib4.5-dll": ("ecda3d084bb92ead24db7aabdfc854bdc19ebeda0668ab4070782c431cdb16d5",
                              "usr/lib/mono/4.5/mscorlib.dll"),
    "libmono-system4.0-cil": ("73710cff9cfd72487d331374fa63cfdd578336a0366a41efe42a5d5167edc60c",
                              "usr/lib/mono/gac/System/4.0.0.0__b77a5c561934e089/System.dll"),
    "libmono-system-core4.0-cil": ("c180273d8e81067743fd954856b8f2cbef00fe17b41382f67c4037138e99e96b",
                                   "usr/lib/mono/gac/System.Core/4.0.0.0__b77a5c561934e089/System.Core.dll"),
}
# Namespaces extracted whole. A script using a type outside them gets a finding asking to add its namespace here.
NAMESPACES = frozenset("""
System System.IO System.Collections System.Collections.Generic System.Security.AccessControl
System.Security.Principal System.Security.Cryptography System.Net System.Net.Sockets System.Diagnostics
System.Runtime.InteropServices System.Text System.Text.RegularExpressions System.Threading Microsoft.Win32
System.Linq System.ComponentModel
""".split())
# Mono 6.8's 4.5 profile also carries what .NET Core and .NET Standard 2.1 added (it builds corefx sources), which
# Windows PowerShell 5.1 on .NET Framework 4.8 does not have. Taken out here, each from the "Applies to" table of
# its Microsoft Learn page (first version given): (type, member, parameter count or None for every overload).
FRAMEWORK_LACKS = [
    # File.*Async: .NET Core 2.0, .NET Standard 2.1
] + [("System.IO.File", m, None) for m in (
    "ReadAllTextAsync", "ReadAllBytesAsync", "ReadAllLinesAsync", "WriteAllTextAsync", "WriteAllBytesAsync",
    "WriteAllLinesAsync", "AppendAllTextAsync", "AppendAllLinesAsync")] + [
    ("System.IO.Path", "Join", None),  # .NET Core 2.1
    ("System.IO.Path", "TryJoin", None),  # .NET Core 2.1
    ("System.IO.Path", "GetRelativePath", None),  # .NET Core 2.0
    ("System.IO.Path", "IsPathFullyQualified", None),  # .NET Core 2.1
    ("System.IO.Path", "GetFullPath", 2),  # GetFullPath(String, String): .NET Core 2.1
    ("System.String", "Contains", 2),  # Contains(String, StringComparison), Contains(Char, ...): .NET Core 2.1
    ("System.String", "Replace", 3),  # Replace(String, String, StringComparison): .NET Core 2.0
    ("System.String", "Replace", 4),  # Replace(String, String, Boolean, CultureInfo): .NET Core 2.0
    ("System.String", "GetHashCode", 1),  # GetHashCode(StringComparison): .NET Core 2.0
    ("System.Collections.Generic.Dictionary`2", "TryAdd", None),  # .NET Core 2.0
    ("System.Collections.Generic.Dictionary`2", "Remove", 2),  # Remove(TKey, out TValue): .NET Core 2.0
    ("System.Collections.Generic.Stack`1", "TryPop", None),  # .NET Core 2.0
    ("System.Collections.Generic.Stack`1", "TryPeek", None),  # .NET Core 2.0
    ("System.Collections.Generic.Queue`1", "TryDequeue", None),  # .NET Core 2.0
    ("System.Collections.Generic.Queue`1", "TryPeek", None),  # .NET Core 2.0
    ("System.Math", "Clamp", None),  # .NET Core 2.0
]


def deb_name(package):
    return "%s_%s_all.deb" % (package, VERSION.replace(":", "%3a"))


def fetch(directory):
    directory = Path(directory)
    directory.mkdir(parents=True, exist_ok=True)
    command = ["apt-get", "download"] + ["%s=%s" % (p, VERSION) for p in PACKAGES]
    if subprocess.run(command, cwd=directory, check=False).returncode != 0:
        if os.geteuid() != 0:
            raise SystemExit("apt-get download failed; run `apt-get update` as root, then again")
        subprocess.run(["apt-get", "update", "-qq"], check=True)  # a fresh machine has no package lists yet
        subprocess.run(command, cwd=directory, check=True)
    verify(directory)


def verify(directory):
    for package, (sha, _dll) in PACKAGES.items():
        path = Path(directory) / deb_name(package)
        got = hashlib.sha256(path.read_bytes()).hexdigest()
        if got != sha:
            raise SystemExit("%s: SHA-256 %s, expected %s" % (path, got, sha))


def _compressed(data, i):
    b = data[i]
    if b & 0x80 == 0:
        return b, i + 1
    if b & 0xC0 == 0x80:
        return ((b & 0x3F) << 8) | data[i + 1], i + 2
    return ((b & 0x1F) << 24) | (data[i + 1] << 16) | (data[i + 2] << 8) | data[i + 3], i + 4


def _param_count(signature):
    data = bytes(signature.value if hasattr(signature, "value") else signature)
    i = 1
    if data[0] & 0x10:  # generic method: number of type parameters first
        _n, i = _compressed(data, i)
    count, _i = _compressed(data, i)
    return count


def _type_name(row):
    return "%s.%s" % (row.TypeNamespace, row.TypeName) if row.TypeNamespace else str(row.TypeName)


def _extends(row):
    ext = row.Extends
    target = getattr(ext, "row", None)
    if target is None:
        return None
    return _type_name(target) if hasattr(target, "TypeName") else None


def _param_arrays(pe):
    """Param rows (by index) that carry [ParamArray]."""
    out = set()
    for ca in pe.net.mdtables.CustomAttribute or []:
        parent = ca.Parent
        if getattr(parent, "table", None) is None or parent.table.name != "Param":
            continue
        ctor = getattr(ca.Type, "row", None)
        owner = None
        if ctor is not None and hasattr(ctor, "Class"):  # MemberRef
            owner = getattr(ctor.Class, "row", None)
        elif ctor is not None:  # MethodDef in this assembly: find its type
            owner = _method_owner(pe).get(ca.Type.row_index)
        if owner is not None and getattr(owner, "TypeName", None) == "ParamArrayAttribute":
            out.add(parent.row_index)
    return out


_OWNERS = {}


def _method_owner(pe):
    if id(pe) not in _OWNERS:
        owners = {}
        for td in pe.net.mdtables.TypeDef:
            for m in td.MethodList:
                owners[m.row_index] = td
        _OWNERS[id(pe)] = owners
    return _OWNERS[id(pe)]


def extract_assembly(path):
    import dnfile
    pe = dnfile.dnPE(str(path))
    tables = pe.net.mdtables
    param_arrays = _param_arrays(pe)
    props = {}
    for pm in tables.PropertyMap or []:
        props[pm.Parent.row_index] = [p.row for p in pm.PropertyList]
    nested = {nc.NestedClass.row_index for nc in tables.NestedClass or []}
    types = {}
    for index, td in enumerate(tables.TypeDef, start=1):
        if not td.Flags.tdPublic or index in nested or str(td.TypeNamespace) not in NAMESPACES:
            continue
        methods, ctors, statics = {}, [], {}
        for m in td.MethodList:
            row = m.row
            if not row.Flags.mdPublic:
                continue
            name = str(row.Name)
            count = _param_count(row.Signature)
            params = [p for p in row.ParamList if p.row.Sequence > 0]
            optional = sum(1 for p in params if p.row.Flags.pdOptional or p.row.Flags.pdHasDefault)
            variadic = bool(params) and params[-1].row_index in param_arrays
            arity = [count - optional - (1 if variadic and not (params[-1].row.Flags.pdOptional) else 0),
                     -1 if variadic else count]
            arity[0] = max(arity[0], 0)
            if name == ".ctor":
                ctors.append(arity)
            elif name == ".cctor":
                continue
            else:
                (statics if row.Flags.mdStatic else methods).setdefault(name, []).append(arity)
        properties = sorted({str(p.Name) for p in props.get(index, [])})
        fields = sorted(str(f.row.Name) for f in td.FieldList if f.row.Flags.fdPublic)
        name = _type_name(td)
        for tname, member, count in FRAMEWORK_LACKS:
            if tname != name:
                continue
            for table in (methods, statics):
                if member in table:
                    table[member] = [a for a in table[member] if count is not None and a[1] != count]
                    if not table[member]:
                        del table[member]
        types[name] = {
            "base": _extends(td),
            "ctors": sorted(map(list, {tuple(a) for a in ctors})),
            "methods": {k: sorted(map(list, {tuple(a) for a in v})) for k, v in sorted(methods.items())},
            "static": {k: sorted(map(list, {tuple(a) for a in v})) for k, v in sorted(statics.items())},
            "properties": properties,
            "fields": fields,
            "interface": bool(td.Flags.tdInterface),
        }
    return types


def extract(directory):
    verify(directory)
    surface = {"source": "Debian %s %s" % (", ".join(sorted(PACKAGES)), VERSION), "types": {}}
    with tempfile.TemporaryDirectory() as tmp:
        for package, (_sha, dll) in PACKAGES.items():
            subprocess.run(["dpkg-deb", "-x", str(Path(directory) / deb_name(package)), tmp], check=True)
            surface["types"].update(extract_assembly(Path(tmp) / dll))
    surface["types"] = dict(sorted(surface["types"].items()))
    return surface


def render(surface):
    return json.dumps(surface, indent=0, sort_keys=True, separators=(",", ":")) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("directory")
    parser.add_argument("--fetch", action="store_true", help="download the pinned packages into DIRECTORY")
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args(argv)
    if args.fetch:
        fetch(args.directory)
        return 0
    text = render(extract(args.directory))
    if args.check:
        if OUT.read_text() != text:
            print("dotnet_surface.json differs from what %s gives: regenerate it" % args.directory)
            return 1
        return 0
    OUT.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
