# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
r"""Static gate for the PowerShell in plugins/plugin_utils/scripts/*.ps1 (run by `make lint`).

No PowerShell runs here, so every script (``win_scripts.load_all()``) is parsed with a real PowerShell
grammar (tree-sitter-powershell) and checked for what would break it on Windows PowerShell 5.1:

- ``parse``: ERROR or MISSING nodes in the syntax tree.
- ``overwrite``: an assignment, loop variable, ``++``/``--`` or ``-OutVariable``-style name that is a
  ``param()`` name of its scope (the script, or the function it is in) or an automatic variable.
  PowerShell variable names ignore case, and a typed parameter keeps its type when assigned
  (language spec 5.3 "Constrained variables"), so ``$paths = @{}`` over ``[string[]]$Paths`` turns
  the hashtable into ``@('System.Collections.Hashtable')``. A param() named like an automatic
  variable is reported too.
- ``ps51``: syntax, cmdlets, parameters and variables Windows PowerShell 5.1 lacks (``??``, ``?.``,
  ternary, ``&&``, ``||``, ``-Parallel``, ``-AsHashtable``, ``Remove-Service``, ``$IsWindows`` ...).
  The grammar accepts some of them (``&&``), so tokens are checked as well as parse errors.
- ``native``: a native program (``x.exe``, ``& $exe``) run without ``2>&1`` under an
  ``$ErrorActionPreference`` of Continue set before it in its function (or the script). Windows
  PowerShell 5.1 turns each stderr line into an error record, and the scripts' 'Stop' makes the
  first one fatal before the exit code is read (PowerShell 7.2+ no longer does this).
- ``unsafe``: what the PowerShell audit found wrong on Windows: ``Set-Acl`` (rewrites owner, group
  and SACL from a Get-Acl object), and listing ``\\.\pipe\`` (throws on pipe names .NET rejects).
- ``contract``: a ``param()`` name that no Python caller passes, a key a caller passes that no
  ``param()`` declares (both case-insensitive), a script nobody runs, and element keys read with
  ``$item.key`` in ``foreach ($item in $Param)`` that the Python never builds (a script a scheduled task runs,
  TASK_SCRIPTS, has no caller: no parameters, no $Ansible, and its role installs it). The callers are found
  by scanning plugins/ for ``run_script(..., "<script>", <parameters>)``; the keys come from the real
  Python: dict literals as written, and the module_utils and plugin_utils functions that build parameters are called
  (BUILDERS below). A caller whose parameters this gate cannot compute is itself a finding.
- ``dotnet``: .NET types, members and overloads against .NET Framework 4.x (what Windows PowerShell 5.1 runs
  on), from tests/psgate/dotnet_surface.json (made by dotnet_surface.py from the real assemblies of Debian's
  Mono 4.5 profile, less what .NET Core added that Mono carries). ``[T]::M(args)``, ``[T]::new(args)``,
  ``New-Object T(args)`` / ``-ArgumentList``: T must exist and have a static member M / a constructor taking that
  many arguments (optional and ``params`` parameters counted as C# does). ``$x.M(args)``: when the gate knows
  $x's type (a typed parameter, ``New-Object``, ``::new``, a cast, Get-Item's FileInfo/DirectoryInfo/RegistryKey,
  each branch of an ``if``), M must be a method of it or its bases with that arity; when it does not, some
  type of .NET Framework 4.x must have a method M with that arity (a misspelt or .NET Core-only method is
  still caught, a method of the wrong type is not). Instance properties are not checked (PowerShell adds its
  own: PSIsContainer, FullName ...). Add-Type -MemberDefinition methods are checked against their declaration.
- ``catch``: a typed ``catch [X]`` that cannot fire: its try body raises only non-terminating errors (cmdlets
  without -ErrorAction Stop while $ErrorActionPreference is not Stop, and no .NET call, throw, native
  program or function), a provider exception (ItemNotFoundException ...) caught around no provider cmdlet
  run with Stop, or X is not an exception type.
- ``compare``: ``$null`` on the right of -eq/-ne; -eq/-ne/-like/-match used as a condition with a left operand
  that may be a collection (an array parameter, ``@(...)``, ``.ToArray()``, output of Get-ChildItem,
  Where-Object, Get-Service ... or a member of such a variable: then the operator filters); and indexing what a
  function returns when it returns an array without ``,`` (PowerShell unrolls: $null for 0 elements, the
  element for 1).
- ``result``: every key the Python reads from a script's ``$Ansible.Result`` (``.get("k")``, ``["k"]``, followed
  into the functions the result is passed to) is set by every ``$Ansible.Result = ...`` of the script, with
  the same case and shape (object, array, scalar; command output that unrolls is not an array).

Not shipped in the collection (galaxy.yml build_ignore). Usage:
  psgate.py                     check the checkout's scripts (plugins/plugin_utils/scripts/*.ps1)
  psgate.py --scripts DIR       check the *.ps1 scripts of another directory (e.g. from git)
  psgate.py --scripts FILE.py   check the SCRIPTS of a win_scripts.py from before the scripts were .ps1 files
"""

import argparse
import ast
import importlib.util
import json
import re
import sys
from collections import namedtuple
from pathlib import Path

import tree_sitter
import tree_sitter_powershell

ROOT = Path(__file__).resolve().parents[2]
_COLLECTIONS = ROOT / ".build" / "collections"
_LINK = _COLLECTIONS / "ansible_collections" / "kubewin" / "nodes"
_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))

Finding = namedtuple("Finding", "script line rule message")

# about_Automatic_Variables (Windows PowerShell 5.1 and PowerShell 7), plus $OFS (about_Preference_Variables:
# changes how arrays become strings) and $Ansible, the variable win_powershell gives every script.
AUTOMATIC_VARIABLES = frozenset("""
$ ? ^ _ args consolefilename enabledexperimentalfeatures error event eventargs eventsubscriber executioncontext
false foreach home host input iscoreclr islinux ismacos iswindows lastexitcode matches myinvocation
nestedpromptlevel null ofs pid profile psboundparameters pscmdlet pscommandpath psculture psdebugcontext
psedition pshome psitem psscriptroot pssenderinfo psuiculture psversiontable pwd sender shellid stacktrace
switch this true ansible
""".split())

# Only in PowerShell 6/7 (about_* of PowerShell 7.x, "What's new in PowerShell" 6.0-7.5).
PS7_COMMANDS = frozenset("""
remove-service get-error test-json join-string get-uptime convertfrom-markdown show-markdown set-markdownoption
get-markdownoption remove-alias get-pssubsystem enable-experimentalfeature disable-experimentalfeature
get-experimentalfeature
""".split())
# Parameters that exist on no Windows PowerShell 5.1 cmdlet.
PS7_PARAMETERS = frozenset("""
parallel ashashtable asbytestream skipcertificatecheck skiphttperrorcheck sslprotocol enumsasstrings asarray
securitydescriptorsddl statuscodevariable responseheadersvariable noproxy skipheadervalidation
maximumretrycount retryintervalsec commandwithargs
""".split())
# Parameters 5.1 has on other cmdlets but not on this one.
PS7_PAIRS = frozenset([
    ("convertfrom-json", "depth"), ("convertfrom-json", "noenumerate"), ("get-content", "asbytestream"),
    ("test-connection", "targetname"), ("sort-object", "top"), ("sort-object", "bottom"),
    ("select-string", "raw"), ("start-process", "environment"), ("invoke-webrequest", "resume"),
    ("invoke-webrequest", "authentication"), ("invoke-restmethod", "authentication"),
])
PS7_VARIABLES = frozenset("""
iswindows islinux ismacos iscoreclr psstyle enabledexperimentalfeatures psnativecommanduseerroractionpreference
psnativecommandargumentpassing
""".split())
# Operators PowerShell 7 added; `?` alone (outside a command name, where it is the Where-Object alias)
# is the ternary operator.
PS7_TOKENS = {"??": "null-coalescing ??", "??=": "null-coalescing assignment ??=", "?.": "null-conditional ?.",
              "?[": "null-conditional ?[", "&&": "pipeline chain &&", "||": "pipeline chain ||",
              "?": "ternary ? : (or ?. / ?[)"}
VARIABLE_PARAMETERS = frozenset(["outvariable", "ov", "errorvariable", "ev", "warningvariable", "wv",
                                 "informationvariable", "iv", "pipelinevariable", "pv"])
_SCOPE_PREFIXES = ("local:", "script:", "private:", "variable:")
_STOP_TARGETS = frozenset(["member_access", "element_access", "invokation_expression", "sub_expression",
                           "script_block_expression", "parenthesized_expression"])


def parse(text):
    return _PARSER.parse(text.encode("utf-8"))


def _walk(node):
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _line(node):
    return node.start_point[0] + 1


def _text(node):
    return node.text.decode("utf-8", "replace")


def variable_name(node):
    """'$Name' / '${Name}' / '$script:Name' -> 'name'; None for drive-qualified ($env:X) or splats."""
    text = _text(node).strip()
    if not text.startswith("$"):
        return None
    text = text[1:]
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1]
    low = text.lower()
    for prefix in _SCOPE_PREFIXES:
        if low.startswith(prefix):
            return low[len(prefix):]
    if ":" in low:
        return None  # $env:X, $global:X, ${function:x}: not this scope's variable
    return low


def _param_variables(param_list_node):
    out = []
    if param_list_node is None:
        return out
    for sp in param_list_node.children:
        if sp.type == "script_parameter":
            var = next((c for c in sp.children if c.type == "variable"), None)
            if var is not None:
                out.append((var, _param_type(sp)))
    return out


def _param_type(script_parameter):
    attrs = next((c for c in script_parameter.children if c.type == "attribute_list"), None)
    types = [_text(a) for a in (attrs.children if attrs else []) for a in [a] if a.type == "attribute"
             and any(c.type == "type_literal" for c in a.children)]
    return types[-1] if types else ""


def script_params(tree):
    """[(variable node, type text)] of the script's top-level param() block."""
    block = next((c for c in tree.root_node.children if c.type == "param_block"), None)
    if block is None:
        return []
    return _param_variables(next((c for c in block.children if c.type == "parameter_list"), None))


def _function_params(fn):
    decl = next((c for c in fn.children if c.type == "function_parameter_declaration"), None)
    if decl is not None:
        return _param_variables(next((c for c in decl.children if c.type == "parameter_list"), None))
    body = next((c for c in fn.children if c.type == "script_block"), None)
    block = next((c for c in body.children if c.type == "param_block"), None) if body else None
    if block is None:
        return []
    return _param_variables(next((c for c in block.children if c.type == "parameter_list"), None))


def _assignment_targets(left):
    targets, stack = [], [left]
    while stack:
        n = stack.pop()
        if n.type == "variable":
            targets.append(n)
        elif n.type not in _STOP_TARGETS:
            stack.extend(n.children)
    return targets


def _writes(node):
    """Variable nodes this node binds: assignment targets, foreach variables, ++/--."""
    if node.type == "assignment_expression":
        left = next((c for c in node.children if c.type == "left_assignment_expression"), None)
        return _assignment_targets(left) if left is not None else []
    if node.type == "foreach_statement":
        return [c for c in node.children if c.type == "variable"][:1]
    if node.type in ("post_increment_expression", "post_decrement_expression", "pre_increment_expression",
                     "pre_decrement_expression"):
        return [c for c in node.children if c.type == "variable"][:1]
    return []


def check_syntax(name, tree):
    findings = []
    for n in _walk(tree.root_node):
        if n.is_missing:
            findings.append(Finding(name, _line(n), "parse", "missing %r" % n.type))
        elif n.type == "ERROR":
            findings.append(Finding(name, _line(n), "parse", "syntax error at %r" % _text(n)[:60]))
    return findings


def check_overwrites(name, tree):
    findings = []

    def visit(node, params, where):
        if node.type == "function_statement":
            fn_name = next((_text(c) for c in node.children if c.type == "function_name"), "?")
            fparams = _function_params(node)
            for var, _type in fparams:
                _automatic_param(var, "function %s" % fn_name)
            params = {variable_name(v): (_text(v), t) for v, t in fparams}
            where = "function %s" % fn_name
        for var in _writes(node):
            vname = variable_name(var)
            if vname is None:
                continue
            what = "foreach variable" if node.type == "foreach_statement" else "assignment to"
            if vname in params:
                decl, ptype = params[vname]
                findings.append(Finding(name, _line(var), "overwrite", "%s %s overwrites the parameter %s%s of %s "
                                        "(variable names ignore case)" % (what, _text(var), ptype, decl, where)))
            elif vname in AUTOMATIC_VARIABLES:
                findings.append(Finding(name, _line(var), "overwrite", "%s %s overwrites the automatic variable "
                                        "$%s" % (what, _text(var), vname)))
        if node.type == "command_parameter" and node.next_named_sibling is not None:
            pname = _text(node).lstrip("-").rstrip(":").lower()
            if pname in VARIABLE_PARAMETERS:
                arg = node.next_named_sibling
                while arg is not None and arg.type == "command_argument_sep":
                    arg = arg.next_named_sibling
                vname = _text(arg).strip("'\"").lstrip("+").lower() if arg is not None else ""
                if vname in params or vname in AUTOMATIC_VARIABLES:
                    findings.append(Finding(name, _line(node), "overwrite", "%s %s overwrites %s" % (
                        _text(node), vname, "a parameter of %s" % where if vname in params
                        else "an automatic variable")))
        for c in node.children:
            visit(c, params, where)

    def _automatic_param(var, where):
        vname = variable_name(var)
        if vname in AUTOMATIC_VARIABLES:
            findings.append(Finding(name, _line(var), "overwrite", "parameter %s of %s is the automatic variable "
                                    "$%s" % (_text(var), where, vname)))

    top = script_params(tree)
    for var, _type in top:
        _automatic_param(var, "the script")
    visit(tree.root_node, {variable_name(v): (_text(v), t) for v, t in top}, "the script")
    return findings


def _in_text(node):
    while node is not None:
        if node.type == "comment" or "string" in node.type:
            return True
        node = node.parent
    return False


def _command_name(command_parameter):
    node = command_parameter
    while node is not None and node.type != "command":
        node = node.parent
    if node is None:
        return ""
    cname = next((c for c in node.children if c.type == "command_name"), None)
    return _text(cname).lower() if cname is not None else ""


def check_ps51(name, tree):
    findings = []
    for n in _walk(tree.root_node):
        if n.type == "command_name":
            cname = _text(n).lower().split("\\")[-1]
            if cname in PS7_COMMANDS:
                findings.append(Finding(name, _line(n), "ps51", "%s does not exist in Windows PowerShell 5.1"
                                        % _text(n)))
            continue
        if n.type == "command_parameter":
            pname = _text(n).lstrip("-").split(":")[0].lower()
            cname = _command_name(n)
            if pname in PS7_PARAMETERS or (cname, pname) in PS7_PAIRS:
                findings.append(Finding(name, _line(n), "ps51", "%s %s needs PowerShell 6+, Windows PowerShell 5.1 "
                                        "has no such parameter" % (cname or "the command", _text(n))))
            continue
        if n.type == "variable":
            if variable_name(n) in PS7_VARIABLES:
                findings.append(Finding(name, _line(n), "ps51", "%s does not exist in Windows PowerShell 5.1 (it is "
                                        "$null there)" % _text(n)))
            continue
        if "string" in n.type and n.type.startswith("expandable") and "`u{" in _text(n):
            findings.append(Finding(name, _line(n), "ps51", "the escape `u{...} needs PowerShell 6+"))
        if n.child_count == 0 and not _in_text(n):
            token = _text(n).strip()
            if token in PS7_TOKENS and not (token == "?" and n.parent is not None
                                            and n.parent.type == "command_name"):
                findings.append(Finding(name, _line(n), "ps51", "%s needs PowerShell 7, Windows PowerShell 5.1 "
                                        "cannot run it" % PS7_TOKENS[token]))
    return findings


def _eap_assignments(tree):
    """[(start byte, value lower, enclosing function node or None)] of $ErrorActionPreference = '...'."""
    out = []
    for n in _walk(tree.root_node):
        if n.type != "assignment_expression":
            continue
        targets = [variable_name(v) for v in _writes(n)]
        if "erroractionpreference" not in targets:
            continue
        rhs = [c for c in n.children if c.type not in ("left_assignment_expression", "assignement_operator", "comment")]
        strings = [m for r in rhs for m in _walk(r) if m.type == "string_literal"]
        value = _text(strings[0]).strip("'\"").lower() if strings else (_text(rhs[0]).lower() if rhs else "")
        out.append((n.start_byte, value, _function_of(n)))
    return out


def _function_of(node):
    node = node.parent
    while node is not None and node.type != "function_statement":
        node = node.parent
    return node


def _is_native(command):
    name = next((c for c in command.children if c.type in ("command_name", "command_name_expr")), None)
    if name is None:
        return False
    text = _text(name).strip().lower()
    invoked = any(c.type == "command_invokation_operator" for c in command.children)
    return text.endswith(".exe") or (invoked and text.startswith("$"))


def check_native(name, tree):
    findings = []
    eap = _eap_assignments(tree)
    for n in _walk(tree.root_node):
        if n.type != "command" or not _is_native(n):
            continue
        fn = _function_of(n)
        before = [v for start, v, f in eap if start < n.start_byte and f == fn]
        if not before and fn is not None:
            before = [v for _s, v, f in eap if f is None]
        merged = any(c.type == "redirection" and "2>&1" in _text(c) for e in n.children if e.type == "command_elements"
                     for c in e.children)
        if not merged or not before or before[-1] not in ("continue", "silentlycontinue"):
            findings.append(Finding(name, _line(n), "native", "%s: run native programs with 2>&1 under "
                                    "$ErrorActionPreference = 'Continue' and decide on $LASTEXITCODE (Windows "
                                    "PowerShell 5.1 makes each stderr line an error record)" % _text(n)[:60]))
    return findings


def check_unsafe(name, tree):
    findings = []
    for n in _walk(tree.root_node):
        if n.type == "command_name" and _text(n).lower() == "set-acl":
            findings.append(Finding(name, _line(n), "unsafe", "Set-Acl writes owner, group and audit rules too; use "
                                    "$item.GetAccessControl('Access') and $item.SetAccessControl($acl)"))
        elif n.type == "string_literal" and _text(n).strip("'\"").lower().startswith("\\\\.\\pipe\\") and \
                _text(n).strip("'\"").rstrip("\\").lower() == "\\\\.\\pipe":
            findings.append(Finding(name, _line(n), "unsafe", "listing \\\\.\\pipe\\ throws on pipe names .NET "
                                    "rejects; probe the names needed with Test-Path"))
    return findings


# --- the contract with the Python callers --------------------------------------------------------

def _collection():
    if not _LINK.exists():
        _LINK.parent.mkdir(parents=True, exist_ok=True)
        _LINK.symlink_to(ROOT)
    if str(_COLLECTIONS) not in sys.path:
        sys.path.insert(0, str(_COLLECTIONS))


def _sample_inputs():
    """Inputs that make each builder emit every key it can."""
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files
    sha = "0" * 128
    directories = [{"path": "C:\\k", "restricted": True}, {"path": "C:\\var\\log", "restricted": False}]
    downloads = [{"url": "http://m/kubelet.exe", "sha512": sha, "extract_dir": "", "dest": "C:\\k\\kubelet.exe",
                  "service": "kubelet"},
                 {"url": "http://m/cni.tgz", "sha512": sha, "extract_dir": "C:\\opt\\cni\\bin",
                  "dest": host_files.stamp_path({"url": "http://m/cni.tgz", "extract_dir": "C:\\opt\\cni\\bin"})},
                 {"url": "http://m/containerd.tgz", "algorithm": "sha256", "sha256": "0" * 64,
                  "extract_dir": "C:\\ctr", "dest": host_files.stamp_path({"url": "http://m/containerd.tgz",
                                                                          "extract_dir": "C:\\ctr"})}]
    files = [{"path": "C:\\etc\\a.conf", "content": "a", "restricted": False, "secret": False},
             {"path": "C:\\etc\\kube-proxy\\kubeconfig", "content": "t", "restricted": True, "secret": True}]
    return directories, downloads, files, ["C:\\old"], ["C:\\old-dir"]


def _builders():
    """'module.function' -> a call returning what that function returns, for the parameter builders
    the action plugins pass to run_script. Add one here when a plugin builds parameters a new way."""
    _collection()
    from ansible_collections.kubewin.nodes.plugins.plugin_utils import _bundle as bundle
    from ansible_collections.kubewin.nodes.plugins.plugin_utils import _health as health
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as host_facts
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files

    def plan():
        d, dl, f, absent, prune = _sample_inputs()
        live = {"files": {}, "dirs": {}, "paths": {absent[0]: "dir", prune[0]: "dir"}}
        return host_files.plan(d, dl, f, live, absent, prune)

    return {
        "facts.script_parameters": lambda: host_facts.script_parameters(["C:\\extra"], None, True),
        "files.state_query": lambda: host_files.state_query(*_sample_inputs()),
        "files.plan": plan,
        "_bundle.script_parameters": lambda: bundle.script_parameters("containerd", True, 10, 1, 5),
        "_health.script_parameters": lambda: health.script_parameters("docker", True),
    }


def _element_builders():
    """(script, parameter) -> lists of the elements Python builds for it (keys read by $item.key)."""
    _collection()
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import hns
    builders = _builders()
    network = hns.desired_network("cbr0", "l2bridge", "10.244.1.0/24", "10.244.1.1", "Ethernet", None)
    live = {"networks": '{"Success":true,"Output":[{"ID":"n1","Name":"cbr0","Type":"NAT"}]}',
            "endpoints": '{"Success":true,"Output":[{"ID":"e1","VirtualNetwork":"n1"}]}',
            "policylists": '{"Success":true,"Output":[{"ID":"p1","References":["/endpoints/e1"]}]}'}
    sync = builders["files.plan"]()[0]
    return {
        ("hns_calls", "Calls"): hns.plan_network(network, "present", live, recreate=True)["calls"]
        + hns.plan_cleanup(["cbr0"], live)[0],
        ("node_sync", "Dirs"): sync["Dirs"],
        ("node_sync", "Downloads"): sync["Downloads"],
        ("node_sync", "Files"): sync["Files"],
    }


def _imports(tree):
    """alias -> module basename for `from ...module_utils import x as y` (or plugin_utils)."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            for a in node.names:
                out[a.asname or a.name] = a.name
    return out


def _call_name(call, imports):
    f = call.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name):
        return "%s.%s" % (imports.get(f.value.id, f.value.id), f.attr)
    if isinstance(f, ast.Name):
        return imports.get(f.id, f.id)
    return ast.unparse(f)


def _enclosing_function(tree, target):
    best = None
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.lineno <= target.lineno <= (
                node.end_lineno or node.lineno):
            if best is None or node.lineno > best.lineno:
                best = node
    return best


def _keys_of(expr, fn, imports, builders, where):
    """The keys of the parameters expression, computed from the real Python. Raises ValueError."""
    if expr is None or (isinstance(expr, ast.Constant) and expr.value is None):
        return set()
    if isinstance(expr, ast.Dict):
        if not all(isinstance(k, ast.Constant) and isinstance(k.value, str) for k in expr.keys):
            raise ValueError("a dict whose keys are not all string literals")
        return {k.value for k in expr.keys}
    if isinstance(expr, ast.Call):
        cname = _call_name(expr, imports)
        if cname not in builders:
            raise ValueError("the parameters come from %s(), which psgate._builders() does not know" % cname)
        value = builders[cname]()
        if not isinstance(value, dict):
            raise ValueError("%s() returned %s, not a dict" % (cname, type(value).__name__))
        return set(value)
    if isinstance(expr, ast.Name) and fn is not None:
        keys, found = set(), False
        for node in ast.walk(fn):
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
                for target in node.targets:
                    elts = target.elts if isinstance(target, ast.Tuple) else [target]
                    for i, t in enumerate(elts):
                        if isinstance(t, ast.Name) and t.id == expr.id:
                            cname = _call_name(node.value, imports)
                            if cname not in builders:
                                raise ValueError("%s comes from %s(), which psgate._builders() does not know"
                                                 % (expr.id, cname))
                            value = builders[cname]()
                            value = value[i] if isinstance(target, ast.Tuple) else value
                            keys |= set(value or {})
                            found = True
            elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Dict):
                for target in node.targets:
                    if isinstance(target, ast.Name) and target.id == expr.id:
                        keys |= _keys_of(node.value, fn, imports, builders, where)
                        found = True
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update"
                  and isinstance(node.func.value, ast.Name) and node.func.value.id == expr.id):
                keys |= {k.arg for k in node.keywords if k.arg}
            elif isinstance(node, ast.Assign):
                for target in node.targets:
                    if (isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name)
                            and target.value.id == expr.id and isinstance(target.slice, ast.Constant)):
                        keys.add(target.slice.value)
        if not found:
            raise ValueError("cannot find where %s is built" % expr.id)
        return keys
    raise ValueError("parameters given as %r" % ast.unparse(expr))


# The action plugins' base class passes its caller's script name on (WindowsAction.script): its callers
# ``self.script("<script>", <parameters>)`` are checked instead.
_FORWARDERS = {("_windows_action.py", "script")}


def _script_call(node, imports):
    """(script, parameters) expressions of a run_script(action, task_vars, name, parameters) or
    self.script(name, parameters) call, else None."""
    f = node.func
    if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) and f.value.id == "self" and f.attr == "script":
        args = list(node.args) + [None] * 2
        script, params = args[0], args[1]
    elif _call_name(node, imports).split(".")[-1] == "run_script":
        args = list(node.args) + [None] * 4
        script, params = args[2], args[3]
    else:
        return None
    for kw in node.keywords:
        if kw.arg == "name":
            script = kw.value
        elif kw.arg == "parameters":
            params = kw.value
    return script, params


def find_callers(plugin_root=None):
    """[(script, 'file:line', keys or None, error or None)] for every run_script or self.script call in
    plugins/."""
    plugin_root = Path(plugin_root or ROOT / "plugins")
    builders = _builders()
    out = []
    for path in sorted(plugin_root.rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        imports = _imports(tree)
        for node in ast.walk(tree):
            call = _script_call(node, imports) if isinstance(node, ast.Call) else None
            fn = _enclosing_function(tree, node) if call else None
            if call is None or (path.name, fn and fn.name) in _FORWARDERS:
                continue
            where = "%s:%d" % (path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, node.lineno)
            script, params = call
            if not (isinstance(script, ast.Constant) and isinstance(script.value, str)):
                out.append((None, where, None, "the script name is not a string literal"))
                continue
            try:
                keys = _keys_of(params, fn, imports, builders, where)
                out.append((script.value, where, keys, None))
            except ValueError as e:
                out.append((script.value, where, None, str(e)))
    return out


def _element_reads(tree, param):
    """{member name: line} read on the variable of `foreach ($x in $Param)`."""
    reads = {}
    for n in _walk(tree.root_node):
        if n.type != "foreach_statement":
            continue
        children = [c for c in n.children if c.type in ("variable", "pipeline")]
        if len(children) < 2 or children[0].type != "variable" or _text(children[1]).strip().lower() != (
                "$" + param.lower()):
            continue
        loop_var = variable_name(children[0])
        for m in _walk(n):
            if m.type == "member_access":
                var = m.children[0] if m.children else None
                member = next((c for c in m.children if c.type == "member_name"), None)
                if var is not None and var.type == "variable" and variable_name(var) == loop_var and member:
                    reads.setdefault(_text(member).lower(), _line(m))
    return reads


# Scripts no module runs: a scheduled task runs the file the role installs with powershell.exe -File, so they take no
# parameters and have no $Ansible (win_powershell's variable). {script: the role file that registers it (and installs
# it, or names it: win_containerd writes containerd_log_rotate)}
TASK_SCRIPTS = {"boot": "roles/network/tasks/boot.yml", "containerd_log_rotate": "roles/runtime/tasks/main.yml"}


def check_task_script(name, tree, text):
    findings = [Finding(name, 1, "contract", "param() %s: a scheduled task's script takes no parameters" % _text(v))
                for v, _t in script_params(tree)]
    if re.search(r"\$Ansible\b", "\n".join(x for x in text.split("\n") if not x.lstrip().startswith("#")), re.I):
        findings.append(Finding(name, 1, "contract",
                                "$Ansible is win_powershell's: a scheduled task's script has none"))
    role = ROOT / TASK_SCRIPTS[name]
    if not role.exists() or "scripts/%s.ps1" % name not in role.read_text():
        findings.append(Finding(name, 1, "contract", "%s does not install scripts/%s.ps1" % (TASK_SCRIPTS[name], name)))
    return findings


def check_contract(name, tree, callers, elements=None):
    findings = []
    params = {variable_name(v): _text(v) for v, _t in script_params(tree)}
    mine = [c for c in callers if c[0] == name]
    if not mine and name in TASK_SCRIPTS:
        return check_task_script(name, tree, _text(tree.root_node))
    if not mine:
        return [Finding(name, 1, "contract", "no run_script call in plugins/ runs this script")]
    passed = set()
    for _script, where, keys, error in mine:
        if error:
            findings.append(Finding(name, 1, "contract", "%s: cannot compute the keys it passes: %s" % (where, error)))
            continue
        for key in sorted(keys):
            if key.lower() not in params:
                findings.append(Finding(name, 1, "contract", "%s passes %r, which no param() of the script declares "
                                        "(declared: %s)" % (where, key, ", ".join(sorted(params.values())) or "none")))
        passed |= {k.lower() for k in keys}
    if not any(c[3] for c in mine):
        for low, decl in sorted(params.items()):
            if low not in passed:
                findings.append(Finding(name, 1, "contract", "param() %s is never passed by a Python caller (%s)"
                                        % (decl, ", ".join(c[1] for c in mine))))
    for (script, param), items in sorted((elements or {}).items()):
        if script != name:
            continue
        built = {k.lower() for item in items for k in item}
        for member, line in sorted(_element_reads(tree, param).items()):
            if member not in built:
                findings.append(Finding(name, line, "contract", "reads .%s on the elements of $%s, which Python never "
                                        "builds (it builds: %s)" % (member, param, ", ".join(sorted(built)))))
    return findings


def check_script(name, text, callers=None, elements=None, readers=None):
    """All findings for one script; the contract is checked when ``callers`` is given, the result contract when
    ``readers`` ({script: {key: [(shape, where)]}}, find_result_readers()) is."""
    tree = parse(text)
    findings = (check_syntax(name, tree) + check_overwrites(name, tree) + check_ps51(name, tree)
                + check_native(name, tree) + check_unsafe(name, tree) + check_dotnet(name, tree)
                + check_catch(name, tree) + check_compare(name, tree))
    if callers is not None:
        findings += check_contract(name, tree, callers, elements)
    if readers is not None:
        findings += check_result(name, tree, readers)
    return findings


def check_all(scripts=None):
    if scripts is None:
        _collection()
        from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import load_all
        scripts = load_all()
    callers = find_callers()
    elements = _element_builders()
    readers = find_result_readers()
    findings = []
    for script, where, _keys, error in callers:
        if script is not None and script not in scripts:
            findings.append(Finding(script, 0, "contract",
                                    "%s runs %r, which has no scripts/%s.ps1" % (where, script, script)))
        elif script is None:
            findings.append(Finding("?", 0, "contract", "%s: %s" % (where, error)))
    for name, text in sorted(scripts.items()):
        findings += check_script(name, text, callers, elements, readers)
    return findings


def _load_scripts(path):
    """{name: text} of the *.ps1 scripts in directory ``path``, or the SCRIPTS of an old win_scripts.py."""
    if Path(path).is_dir():
        _collection()
        from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import load_all
        return load_all(str(path))
    spec = importlib.util.spec_from_file_location("_psgate_win_scripts", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.SCRIPTS


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", maxsplit=1)[0])
    parser.add_argument("--scripts", help="a directory of <script>.ps1 files (or an old win_scripts.py) to check "
                                          "instead of the checkout's")
    args = parser.parse_args(argv)
    scripts = _load_scripts(args.scripts or ROOT / "plugins" / "plugin_utils" / "scripts")
    findings = check_all(scripts)
    for f in findings:
        print("win_scripts %s line %d: %s: %s" % (f.script, f.line, f.rule, f.message))
    print("psgate: %d scripts, %d findings" % (len(scripts), len(findings)))
    return 1 if findings else 0


# --- .NET members and overloads (rule ``dotnet``) ------------------------------------------------

_SURFACE_FILE = Path(__file__).resolve().parent / "dotnet_surface.json"
_SURFACE = None
# about_Type_Accelerators (Windows PowerShell 5.1: [psobject].Assembly.GetType(
# 'System.Management.Automation.TypeAccelerators')::Get), those a script may plausibly name.
ACCELERATORS = {
    "adsi": "System.DirectoryServices.DirectoryEntry", "array": "System.Array", "bool": "System.Boolean",
    "byte": "System.Byte", "char": "System.Char", "datetime": "System.DateTime", "decimal": "System.Decimal",
    "double": "System.Double", "guid": "System.Guid", "hashtable": "System.Collections.Hashtable",
    "int": "System.Int32", "int16": "System.Int16", "int32": "System.Int32", "int64": "System.Int64",
    "ipaddress": "System.Net.IPAddress", "long": "System.Int64", "regex": "System.Text.RegularExpressions.Regex",
    "sbyte": "System.SByte", "single": "System.Single", "float": "System.Single", "string": "System.String",
    "timespan": "System.TimeSpan", "uint16": "System.UInt16", "uint32": "System.UInt32",
    "uint64": "System.UInt64", "version": "System.Version", "void": "System.Void", "object": "System.Object",
    "uri": "System.Uri", "xml": "System.Xml.XmlDocument", "wmi": "System.Management.ManagementObject",
    "scriptblock": "System.Management.Automation.ScriptBlock", "psobject": "System.Management.Automation.PSObject",
    "pscustomobject": "System.Management.Automation.PSObject", "ref": "System.Management.Automation.PSReference",
    "nullstring": "System.Management.Automation.Language.NullString",
    "switch": "System.Management.Automation.SwitchParameter",
    "ordered": "System.Collections.Specialized.OrderedDictionary",
    "mailaddress": "System.Net.Mail.MailAddress", "securestring": "System.Security.SecureString",
    "pscredential": "System.Management.Automation.PSCredential", "bigint": "System.Numerics.BigInteger",
    "cimsession": "Microsoft.Management.Infrastructure.CimSession",
    "ciminstance": "Microsoft.Management.Infrastructure.CimInstance",
    "wildcardpattern": "System.Management.Automation.WildcardPattern",
}
# PowerShell's own types (System.Management.Automation.dll, Microsoft Learn's API pages): no assembly of them is
# at hand, so only the type names and the static members a script may use are listed; their instance members
# are checked as an unknown receiver's are.
POWERSHELL_TYPES = {
    "System.Management.Automation.Language.NullString": {"static": {"value": None}},
    "System.Management.Automation.PSObject": {"static": {"asPSObject": [[1, 1]]}, "ctors": [[0, 1]]},
    "System.Management.Automation.PSReference": {"ctors": [[1, 1]]},
    "System.Management.Automation.ScriptBlock": {"static": {"create": [[1, 1]]}},
    "System.Management.Automation.SwitchParameter": {"ctors": [[1, 1]], "static": {"present": None}},
    "System.Management.Automation.PSCredential": {"ctors": [[2, 2]]},
    "System.Management.Automation.ErrorRecord": {"ctors": [[2, 2], [4, 4]]},
    "System.Management.Automation.ItemNotFoundException": {"ctors": [[0, 2]], "exception": "provider"},
    "System.Management.Automation.DriveNotFoundException": {"ctors": [[0, 2]], "exception": "provider"},
    "System.Management.Automation.ProviderNotFoundException": {"ctors": [[0, 2]], "exception": "provider"},
    "System.Management.Automation.PSArgumentException": {"ctors": [[0, 2]], "exception": "provider"},
    "System.Management.Automation.ActionPreferenceStopException": {"ctors": [[0, 2]], "exception": "any"},
    "System.Management.Automation.RuntimeException": {"ctors": [[0, 3]], "exception": "any"},
    "System.Management.Automation.MethodInvocationException": {"ctors": [[0, 2]], "exception": "method"},
    "System.Management.Automation.ParameterBindingException": {"ctors": [[0, 2]], "exception": "any"},
    "System.Management.Automation.CommandNotFoundException": {"ctors": [[0, 2]], "exception": "any"},
    "System.Management.Automation.ActionPreference": {"static": {n: None for n in (
        "silentlycontinue", "stop", "continue", "inquire", "ignore", "suspend")}},
    "System.Collections.Specialized.OrderedDictionary": {"ctors": [[0, 2]]},
    "Microsoft.Management.Infrastructure.CimInstance": {"ctors": [[1, 2]]},
}
# Methods PowerShell itself gives every object (about_Intrinsic_Members, about_Arrays: .ForEach() and .Where()).
INTRINSIC_METHODS = {"foreach": [[0, -1]], "where": [[1, 2]], "psobject": None}
# What the provider cmdlets return (FileSystem and Registry providers: about_Providers).
PROVIDER_ITEMS = ("System.IO.FileInfo", "System.IO.DirectoryInfo", "Microsoft.Win32.RegistryKey")
_ITEM_CMDLETS = frozenset(["get-item", "get-childitem", "new-item", "gi", "gci", "dir", "ls"])


def surface():
    global _SURFACE
    if _SURFACE is None:
        types = json.loads(_SURFACE_FILE.read_text())["types"]
        _SURFACE = {"types": types, "lower": {k.lower(): k for k in types}, "methods": {}, "namespaces": set()}
        for name, t in types.items():
            _SURFACE["namespaces"].add(name.rsplit(".", 1)[0].lower() if "." in name else "")
            for table in ("methods", "static"):
                for m, arities in t[table].items():
                    _SURFACE["methods"].setdefault(m.lower(), []).extend(arities)
        for m, arities in INTRINSIC_METHODS.items():
            _SURFACE["methods"].setdefault(m, []).extend(arities or [])
    return _SURFACE


def _type_spec_name(type_literal):
    """'[System.Collections.Generic.List[string]]' -> ('System.Collections.Generic.List`1', False);
    '[string[]]' -> ('string', True)."""
    spec = next((c for c in type_literal.children if c.type == "type_spec"), None)
    if spec is None:
        return None, False
    text = _text(spec).strip()
    is_array = re.search(r"\[,*\]$", text) is not None
    generic = next((c for c in spec.children if c.type == "generic_type_name"), None)
    if generic is not None:
        base = _text(next(c for c in generic.children if c.type == "type_name"))
        args = next((c for c in spec.children if c.type == "generic_type_arguments"), None)
        count = sum(1 for c in (args.children if args else []) if c.type == "type_spec") or 1
        return "%s`%d" % (base, count), is_array
    name = re.sub(r"\[,*\]$", "", text).strip() if is_array else text
    return name, is_array


def resolve_type(name, added=()):
    """The full name PowerShell 5.1 binds ``name`` to, 'addtype:<name>' for an Add-Type type, or None."""
    if name is None:
        return None
    low = name.lower()
    if low in {a.lower() for a in added}:
        return "addtype:" + low
    s = surface()
    usings = [a[len("using:"):] + "." + name for a in added if a.startswith("using:")]
    for candidate in [ACCELERATORS.get(low, ""), name, "System." + name] + usings:
        cl = candidate.lower()
        if cl in s["lower"]:
            return s["lower"][cl]
        for ps in POWERSHELL_TYPES:
            if ps.lower() == cl:
                return ps
    return None


def _type_record(full):
    s = surface()
    if full in s["types"]:
        return s["types"][full]
    return POWERSHELL_TYPES.get(full)


def _chain(full):
    """The type and its base types, as far as the extract knows them."""
    out = []
    while full and full not in out:
        out.append(full)
        rec = _type_record(full)
        full = rec.get("base") if rec else None
    if "System.Object" not in out:
        out.append("System.Object")
    return out


def _arity_ok(arities, n):
    return any(lo <= n and (hi == -1 or n <= hi) for lo, hi in arities)


def _fmt_arities(arities):
    return ", ".join(sorted({("%d+" % lo) if hi == -1 else (str(lo) if lo == hi else "%d-%d" % (lo, hi))
                             for lo, hi in arities}))


def _lookup(full, member, static):
    """(kind, arities) of ``member`` on ``full`` and its bases: kind 'method', 'property' or None."""
    low = member.lower()
    for t in _chain(full):
        rec = _type_record(t)
        if rec is None:
            continue
        table = rec.get("static" if static else "methods", {}) or {}
        for name, arities in table.items():
            if name.lower() == low:
                return "method" if arities is not None else "property", arities
        names = [p.lower() for p in rec.get("properties", []) + rec.get("fields", [])]
        if low in names:
            return "property", None
    return None, None


def _args(argument_list):
    exprs = next((c for c in argument_list.children if c.type == "argument_expression_list"), None)
    return [c for c in (exprs.children if exprs else []) if c.type == "argument_expression"]


def _added_types(tree):
    """{'Namespace.Name': {method lower: arities}} of Add-Type -Namespace N -Name T -MemberDefinition '...'."""
    out = {}
    for n in _walk(tree.root_node):
        if n.type != "command" or _text(next((c for c in n.children if c.type == "command_name"), n)).lower() \
                != "add-type":
            continue
        text = _text(n)
        ns = _param_value(n, "namespace")
        tn = _param_value(n, "name")
        if not tn:
            continue
        methods = {}
        for m in re.finditer(r"public\s+static\s+(?:extern\s+)?[\w.<>\[\]]+\s+(\w+)\s*\(", text):
            depth, commas, empty, i = 1, 0, True, m.end()
            while i < len(text) and depth:
                ch = text[i]
                depth += {"(": 1, ")": -1}.get(ch, 0)
                commas += ch == "," and depth == 1
                empty = empty and (ch.isspace() or depth == 0)
                i += 1
            count = 0 if empty else commas + 1
            methods.setdefault(m.group(1).lower(), []).append([count, count])
        out[("%s.%s" % (ns, tn) if ns else tn).lower()] = methods
    return out


def _using_namespaces(tree):
    """{'using:<namespace>'} of the script's `using namespace X` statements (PowerShell 5.0+)."""
    out = set()
    for n in _walk(tree.root_node):
        if n.type == "command" and _text(next((c for c in n.children if c.type == "command_name"), n)).lower() \
                == "using":
            words = _text(n).split()
            if len(words) == 3 and words[1].lower() == "namespace":
                out.add("using:" + words[2])
    return out


def _param_value(command, pname):
    elements = next((c for c in command.children if c.type == "command_elements"), None)
    kids = [c for c in (elements.children if elements else []) if c.type != "command_argument_sep"]
    for i, c in enumerate(kids):
        if c.type == "command_parameter" and _text(c).lstrip("-").rstrip(":").lower() == pname and i + 1 < len(kids):
            return _text(kids[i + 1]).strip("'\"")
    return None


def _new_object(command):
    """(type name, argument count or None) of a New-Object command."""
    elements = next((c for c in command.children if c.type == "command_elements"), None)
    kids = [c for c in (elements.children if elements else []) if c.type != "command_argument_sep"]
    tname, count, i = None, 0, 0
    while i < len(kids):
        c = kids[i]
        if c.type == "command_parameter":
            p = _text(c).lstrip("-").rstrip(":").lower()
            value = kids[i + 1] if i + 1 < len(kids) else None
            if "typename".startswith(p) and value is not None:
                tname = _text(value).strip("'\"")
            elif ("argumentlist".startswith(p) or p == "args") and value is not None:
                count = _list_count(value)
            elif p in ("comobject", "com"):
                return None, None
            i += 2
            continue
        if tname is None and c.type in ("generic_token", "string_literal", "expandable_string_literal"):
            tname = _text(c).strip("'\"")
        elif c.type == "argument_list":
            count = len(_args(c))
        elif tname is not None:
            count = _list_count(c)
        i += 1
    return tname, count


def _list_count(node):
    """How many elements an argument like `1, 2` or `@(a, b)` or `(a, b)` passes."""
    for n in _walk(node):
        if n.type == "array_literal_expression" and any(c.type == "," for c in n.children):
            return sum(1 for c in n.children if c.type != ",")
        if n.type in ("argument_expression_list",):
            return sum(1 for c in n.children if c.type == "argument_expression")
    return 1


def _scope_of(node):
    fn = _function_of(node)
    return fn.start_byte if fn is not None else None


def _assigned_types(tree, added):
    """{(scope, variable): (mode, (full names))}; mode 'all' (every branch gives one of them) or 'any'
    (a provider item: one of them). A variable assigned anything else, or two different ways, is left out."""
    seen = {}

    def produce(value):
        value = _unwrap(value)
        if value is None:
            return None
        if value.type == "command":
            cname = _text(next((c for c in value.children if c.type == "command_name"), value)).lower()
            if cname == "new-object":
                if _param_value(value, "comobject") is not None or _param_value(value, "com") is not None:
                    return ("dynamic", ())
                tname, _count = _new_object(value)
                full = resolve_type(tname, added)
                return ("all", (full,)) if full else None
            if cname in _ITEM_CMDLETS:
                return ("any", PROVIDER_ITEMS)
            if cname in ("get-wmiobject", "gwmi"):
                return ("dynamic", ())  # WMI methods (Win32_Service.Change ...) are the class's, not .NET's
            return None
        if value.type == "invokation_expression" and value.children[0].type == "type_literal":
            member = next((c for c in value.children if c.type == "member_name"), None)
            if member is not None and _text(member).lower() == "new":
                full = resolve_type(_type_spec_name(value.children[0])[0], added)
                return ("all", (full,)) if full else None
            return None
        if value.type in ("cast_expression", "expression_with_unary_operator") and value.children[0].type == \
                "type_literal":
            name, is_array = _type_spec_name(value.children[0])
            if (name or "").lower() in ("wmi", "wmiclass", "adsi", "wmisearcher", "adsisearcher"):
                return ("dynamic", ())
            full = "System.Array" if is_array else resolve_type(name, added)
            return ("all", (full,)) if full else None
        if value.type == "if_statement":
            blocks = [c for c in _walk(value) if c.type == "statement_block" and _enclosing_if(c) == value]
            if not any(c.type == "else_clause" for c in value.children):
                return None
            kinds = [produce(_last_statement(b)) for b in blocks]
            if all(k and k[0] == "all" for k in kinds):
                return ("all", tuple(sorted({t for k in kinds for t in k[1]})))
        return None

    for n in _walk(tree.root_node):
        if n.type != "assignment_expression":
            continue
        targets = _writes(n)
        left = next((c for c in n.children if c.type == "left_assignment_expression"), None)
        if len(targets) != 1 or _unwrap(left) != targets[0]:
            continue
        vname = variable_name(targets[0])
        value = n.children[-1]
        key = (_scope_of(n), vname)
        kind = produce(value)
        if key in seen and seen[key] != kind:
            seen[key] = None
        else:
            seen[key] = kind
    for n in _walk(tree.root_node):  # foreach variables: unknown
        if n.type == "foreach_statement":
            for v in _writes(n):
                seen[(_scope_of(n), variable_name(v))] = None
    return {k: v for k, v in seen.items() if v}


def _param_types(tree, added):
    out = {}
    for fn in [None] + [n for n in _walk(tree.root_node) if n.type == "function_statement"]:
        params = script_params(tree) if fn is None else _function_params(fn)
        for var, ptype in params:
            if not ptype:
                continue
            lit = parse(ptype).root_node
            tl = next((m for m in _walk(lit) if m.type == "type_literal"), None)
            if tl is None:
                continue
            name, is_array = _type_spec_name(tl)
            full = "System.Array" if is_array else resolve_type(name, added)
            if full:
                out[(fn.start_byte if fn is not None else None, variable_name(var))] = ("all", (full,))
    return out


def _enclosing_if(node):
    node = node.parent
    while node is not None and node.type not in ("if_statement",):
        node = node.parent
    return node


def _last_statement(block):
    stmts = next((c for c in block.children if c.type == "statement_list"), None)
    named = [c for c in (stmts.children if stmts else []) if c.is_named]
    return named[-1] if named else None


_WRAPPERS = frozenset(["pipeline", "pipeline_chain", "logical_expression", "bitwise_expression",
                       "comparison_expression", "additive_expression", "multiplicative_expression",
                       "format_expression", "range_expression", "array_literal_expression", "unary_expression",
                       "left_assignment_expression", "statement_list", "argument_expression",
                       "logical_argument_expression", "bitwise_argument_expression", "comparison_argument_expression",
                       "additive_argument_expression", "multiplicative_argument_expression",
                       "format_argument_expression", "range_argument_expression"])


def _unwrap(node):
    """The one meaningful node below grammar wrappers with a single child."""
    while node is not None and (node.type in _WRAPPERS or (node.type == "expression_with_unary_operator"
                                                           and node.child_count == 1)):
        named = [c for c in node.children if c.is_named and c.type != "comment"]
        if len(named) != 1:
            return node
        node = named[0]
    return node


def check_dotnet(name, tree):
    findings = []
    added = _added_types(tree)
    added_names = set(added) | _using_namespaces(tree)
    types = _param_types(tree, added_names)
    types.update(_assigned_types(tree, added_names))
    s = surface()

    def report(node, message):
        findings.append(Finding(name, _line(node), "dotnet", message))

    def known_type(type_literal, context):
        tname, is_array = _type_spec_name(type_literal)
        if tname is None:
            return None
        full = resolve_type(tname, added_names)
        if full is None:
            ns = tname.rsplit(".", 1)[0].lower() if "." in tname else ""
            inside = ns in s["namespaces"] or ("system." + ns) in s["namespaces"] or ns == ""
            report(type_literal, "[%s]%s: no such type in .NET Framework 4.x (%s)" % (
                tname, context, "its namespace is extracted whole from the reference assemblies" if inside else
                "or its namespace is not in tests/psgate/dotnet_surface.py NAMESPACES: add it and regenerate"))
        return full

    for n in _walk(tree.root_node):
        if n.type == "type_literal" and n.parent is not None and n.parent.type not in ("attribute",) \
                and not _in_text(n):
            if n.parent.type == "invokation_expression" or n.parent.type == "member_access":
                continue  # checked with the member below
            known_type(n, "")
        elif n.type == "command" and _text(next((c for c in n.children if c.type == "command_name"), n)).lower() \
                == "new-object":
            tname, count = _new_object(n)
            if tname is None:
                continue
            full = resolve_type(tname, added_names)
            if full is None:
                report(n, "New-Object %s: no such type in .NET Framework 4.x" % tname)
                continue
            rec = _type_record(full) or {}
            ctors = rec.get("ctors")
            if ctors is not None and not _arity_ok(ctors, count):
                report(n, "New-Object %s with %d argument(s): .NET Framework 4.x has constructors of %s" % (
                    tname, count, _fmt_arities(ctors) or "no public constructor"))
        elif n.type in ("invokation_expression", "member_access"):
            first = n.children[0]
            member = next((c for c in n.children if c.type == "member_name"), None)
            if member is None:
                continue
            mname = _text(member)
            if not re.fullmatch(r"\w+", mname):
                continue
            arglist = next((c for c in n.children if c.type == "argument_list"), None)
            count = len(_args(arglist)) if arglist is not None else None
            static = any(c.type == "::" for c in n.children)
            if first.type == "type_literal" and static:
                full = known_type(first, "::%s" % mname)
                if full is None:
                    continue
                if full.startswith("addtype:"):
                    arities = added.get(full[len("addtype:"):], {}).get(mname.lower())
                    if arities is None:
                        report(n, "[%s]::%s: the Add-Type definition has no such public static member" % (
                            full[8:], mname))
                    elif count is not None and not _arity_ok(arities, count):
                        report(n, "[%s]::%s with %d argument(s): declared with %s" % (
                            full[8:], mname, count, _fmt_arities(arities)))
                    continue
                rec = _type_record(full) or {}
                if mname.lower() == "new" and count is not None:
                    ctors = rec.get("ctors")
                    if ctors is not None and not _arity_ok(ctors, count):
                        report(n, "[%s]::new with %d argument(s): .NET Framework 4.x has constructors of %s" % (
                            full, count, _fmt_arities(ctors) or "no public constructor"))
                    continue
                kind, arities = _lookup(full, mname, static=True)
                if kind is None and (full in s["types"] or "static" in (POWERSHELL_TYPES.get(full) or {})):
                    report(n, "[%s]::%s: no such static member in .NET Framework 4.x" % (full, mname))
                elif count is not None and kind == "method" and not _arity_ok(arities, count):
                    report(n, "[%s]::%s with %d argument(s): .NET Framework 4.x has overloads of %s" % (
                        full, mname, count, _fmt_arities(arities)))
                continue
            if count is None or static:
                continue  # an instance property: PowerShell adds its own (PSIsContainer, FullName ...)
            receiver = _unwrap(first)
            known = None
            if receiver is not None and receiver.type == "variable":
                vname = variable_name(receiver)
                known = types.get((_scope_of(n), vname)) or types.get((None, vname))
            low = mname.lower()
            if known and known[0] == "dynamic":
                continue  # a COM or WMI object: its methods are not .NET's
            if known:
                mode, fulls = known
                results = []
                for full in fulls:
                    kind, arities = _lookup(full, mname, static=False)
                    if kind is None and low in INTRINSIC_METHODS:
                        kind, arities = "method", INTRINSIC_METHODS[low] or [[0, -1]]
                    results.append((full, kind, arities))
                ok = [(kind == "method" and _arity_ok(arities, count)) or (kind == "property")
                      for _f, kind, arities in results]
                if (mode == "all" and not all(ok)) or (mode == "any" and not any(ok)):
                    bad = [(f, k, a) for (f, k, a), good in zip(results, ok, strict=True) if not good]
                    report(n, "%s.%s(%d argument(s)): %s" % (_text(first)[:40], mname, count, "; ".join(
                        "[%s] has %s" % (f, "no such method" if k is None else "overloads of " + _fmt_arities(a))
                        for f, k, a in bad)) + " in .NET Framework 4.x")
                continue
            arities = s["methods"].get(low)
            if arities is None:
                report(n, "%s.%s(): no type of .NET Framework 4.x has a method %s (the receiver's type is not "
                       "known here, so every type was tried)" % (_text(first)[:40], mname, mname))
            elif not _arity_ok(arities, count):
                report(n, "%s.%s with %d argument(s): no method %s of .NET Framework 4.x takes that many (%s)"
                       % (_text(first)[:40], mname, count, mname, _fmt_arities(arities)))
    return findings


# --- typed catch blocks that cannot fire (rule ``catch``) ----------------------------------------

# Exceptions a cmdlet's own terminating errors (parameter binding, a missing command) are of; a catch of one of
# these (or of their bases) can fire around any cmdlet.
_ALWAYS_CATCHABLE = frozenset(x.lower() for x in (
    "System.Exception", "System.SystemException", "System.Management.Automation.RuntimeException",
    "System.Management.Automation.ParameterBindingException", "System.Management.Automation.CommandNotFoundException",
    "System.Management.Automation.ActionPreferenceStopException"))


def _effective_eap(node, eap):
    """The $ErrorActionPreference in force at ``node`` (text order in its function, else the script's), or None."""
    fn = _function_of(node)
    before = [v for start, v, f in eap if start < node.start_byte and f == fn]
    if not before and fn is not None:
        before = [v for _s, v, f in eap if f is None]
    return before[-1] if before else None


def _error_action(command):
    value = None
    for alias in ("erroraction", "ea"):
        v = _param_value(command, alias)
        if v is not None:
            value = v.lower()
    elements = next((c for c in command.children if c.type == "command_elements"), None)
    for c in (elements.children if elements else []):
        t = _text(c).lower()
        if c.type == "command_parameter" and ":" in t and t.lstrip("-").split(":")[0] in ("erroraction", "ea"):
            value = t.split(":", 1)[1].strip("'\"")
    return value


def check_catch(name, tree):
    """A typed catch fires only on a terminating error of that type. In the try body, .NET calls, throw, user
    functions and native programs (whose stderr becomes errors) can raise one; a cmdlet raises its usual errors
    (file not found, access denied ...) as non-terminating ones unless -ErrorAction Stop or an
    $ErrorActionPreference of Stop is in force. A PowerShell provider exception (ItemNotFoundException ...)
    comes only from a cmdlet, never from a .NET method."""
    findings = []
    eap = _eap_assignments(tree)
    functions = {_text(c).lower() for n in _walk(tree.root_node) if n.type == "function_statement"
                 for c in n.children if c.type == "function_name"}
    added = set(_added_types(tree)) | _using_namespaces(tree)
    for n in _walk(tree.root_node):
        if n.type != "try_statement":
            continue
        body = next((c for c in n.children if c.type == "statement_block"), None)
        clauses = next((c for c in n.children if c.type == "catch_clauses"), None)
        if body is None or clauses is None:
            continue
        terminating, stopped_cmdlets, cmdlets, dotnet = [], [], [], []
        for m in _walk(body):
            if m.type == "flow_control_statement" and _text(m).lower().startswith("throw"):
                terminating.append("throw")
            elif m.type == "invokation_expression":
                dotnet.append(_text(m)[:40])
            elif m.type == "command":
                cname = _text(next((c for c in m.children if c.type in ("command_name", "command_name_expr")), m))
                low = cname.lower()
                if _is_native(m) or low in functions or low.startswith("$") or low in ("&", "."):
                    terminating.append(cname)
                elif _error_action(m) == "stop" or _effective_eap(m, eap) == "stop":
                    stopped_cmdlets.append(cname)
                else:
                    cmdlets.append(cname)
        for clause in clauses.children:
            types = next((c for c in clause.children if c.type == "catch_type_list"), None)
            if clause.type != "catch_clause" or types is None:
                continue
            for tl in (c for c in types.children if c.type == "type_literal"):
                tname, _arr = _type_spec_name(tl)
                full = resolve_type(tname, added) or tname
                if full.lower() in _ALWAYS_CATCHABLE:
                    continue
                rec = _type_record(full) or {}
                if full in surface()["types"] and "System.Exception" not in _chain(full):
                    findings.append(Finding(name, _line(tl), "catch", "catch [%s]: not an exception type, it "
                                            "never fires" % full))
                    continue
                provider_only = rec.get("exception") == "provider"
                if not terminating and not stopped_cmdlets and not (dotnet and not provider_only):
                    what = ", ".join(sorted(set(cmdlets))) or "nothing that throws"
                    findings.append(Finding(name, _line(tl), "catch", "catch [%s] cannot fire: the try body raises "
                                            "only non-terminating errors (%s without -ErrorAction Stop, "
                                            "$ErrorActionPreference %s)" % (
                                                full, what, _effective_eap(n, eap) or "not set (Continue)")))
                elif provider_only and not stopped_cmdlets and not terminating:
                    findings.append(Finding(name, _line(tl), "catch", "catch [%s] cannot fire: only a PowerShell "
                                            "provider cmdlet run with -ErrorAction Stop raises it, and the try body "
                                            "has none (%s)" % (full, ", ".join(dotnet + cmdlets) or "empty")))
    return findings


# --- comparison semantics (rule ``compare``) ----------------------------------------------------

_EQUALITY = frozenset(["-eq", "-ne", "-ceq", "-cne", "-ieq", "-ine"])
_FILTERING = _EQUALITY | frozenset(["-like", "-notlike", "-clike", "-ilike", "-match", "-notmatch", "-cmatch",
                                    "-imatch", "-cnotmatch", "-inotmatch", "-cnotlike", "-inotlike"])
# Cmdlets whose output is any number of objects (0 -> $null, 1 -> the object, more -> an array).
_MANY = frozenset("""get-childitem gci dir ls where-object where ? foreach-object % select-object select get-content
gc get-ciminstance get-wmiobject get-netadapter get-netipaddress get-process select-string sls get-service
get-itemproperty sort-object sort""".split())


def _operands(comparison):
    kids = [c for c in comparison.children if c.type != "comment"]
    op = next((c for c in kids if c.type == "comparison_operator"), None)
    if op is None:
        return None, None, None
    i = kids.index(op)
    return kids[i - 1] if i else None, _text(op).lower(), kids[i + 1] if i + 1 < len(kids) else None


def _collection_variables(tree):
    """{(scope, variable)} assigned something that may be a collection: @(...), a `,` list, .ToArray(), a typed
    [T[]] parameter, or the output of a cmdlet that emits any number of objects."""
    out = set()
    for fn in [None] + [n for n in _walk(tree.root_node) if n.type == "function_statement"]:
        for var, ptype in (script_params(tree) if fn is None else _function_params(fn)):
            if ptype.replace(" ", "").endswith("[]]") or ptype.lower() in ("[array]", "[object[]]"):
                out.add((fn.start_byte if fn is not None else None, variable_name(var)))
    for n in _walk(tree.root_node):
        if n.type != "assignment_expression":
            continue
        targets = _writes(n)
        if len(targets) == 1 and _maybe_collection(n.children[-1], set()):
            out.add((_scope_of(n), variable_name(targets[0])))
    return out


def _maybe_collection(node, variables, scope=None):
    node = _unwrap(node)
    if node is None:
        return False
    if node.type == "array_expression":
        return True
    if node.type == "array_literal_expression" and any(c.type == "," for c in node.children):
        return True
    if node.type == "invokation_expression":
        member = next((c for c in node.children if c.type == "member_name"), None)
        return member is not None and _text(member).lower() in ("toarray", "split", "getvaluenames", "getfiles",
                                                                "getdirectories")
    if node.type == "variable":
        v = variable_name(node)
        return (scope, v) in variables or (None, v) in variables
    if node.type == "member_access" and node.children and node.children[0].type == "variable":
        member = next((c for c in node.children if c.type == "member_name"), None)
        if member is not None and _text(member).lower() in ("count", "length", "rank"):
            return False  # the collection's own property, a number
        return _maybe_collection(node.children[0], variables, scope)  # member enumeration
    if node.type == "parenthesized_expression":
        inner = next((c for c in node.children if c.is_named), None)
        return _maybe_collection(inner, variables, scope)
    if node.type in ("pipeline", "pipeline_chain"):
        owner = node if node.type == "pipeline" else _pipeline_of(node)
        commands = [c for c in _walk(node) if c.type == "command" and _pipeline_of(c) == owner]
        if commands:
            return _emits_many(commands[-1])
    if node.type == "command":
        return _emits_many(node)
    return False


def _pipeline_of(node):
    node = node.parent
    while node is not None and node.type != "pipeline":
        node = node.parent
    return node


def _emits_many(command):
    cname = _text(next((c for c in command.children if c.type == "command_name"), command)).lower()
    if cname in ("select-object", "select") and (_param_value(command, "first") or "").strip() == "1":
        return False
    return cname in _MANY


def _boolean_context(node):
    """True when ``node``'s value is used as a condition (if/elseif/while/until, -not, -and, -or, [bool])."""
    child, parent = node, node.parent
    while parent is not None:
        if parent.type in ("if_statement", "elseif_clause", "while_statement", "do_statement"):
            return child.type == "pipeline" and any(c.type == "(" for c in parent.children)
        if parent.type == "expression_with_unary_operator" and _text(parent).lower().lstrip().startswith(("-not", "!")):
            return True
        if parent.type == "logical_expression" and any(_text(c).lower() in ("-and", "-or", "-xor")
                                                       for c in parent.children if not c.is_named):
            return True
        if parent.type == "cast_expression" and _text(parent.children[0]).lower() == "[bool]":
            return True
        if parent.type not in _WRAPPERS and parent.type not in ("parenthesized_expression",):
            return False
        child, parent = parent, parent.parent
    return False


def check_compare(name, tree):
    findings = []
    collections = _collection_variables(tree)
    for n in _walk(tree.root_node):
        if n.type == "comparison_expression":
            left, op, right = _operands(n)
            if op is None:
                continue
            if op in _EQUALITY and right is not None and _text(_unwrap(right)).lower() == "$null":
                findings.append(Finding(name, _line(n), "compare", "%s: put $null on the left ($null %s ...): with a "
                                        "collection on the left %s filters it and returns the matching elements, "
                                        "not a boolean (about_Comparison_Operators)" % (_text(n)[:60], op, op)))
            elif op in _FILTERING and left is not None and _maybe_collection(left, collections, _scope_of(n)) \
                    and _boolean_context(n):
                findings.append(Finding(name, _line(n), "compare", "%s used as a condition, with a left operand that "
                                        "may be a collection: %s then returns the matching elements (empty, so "
                                        "false, when none match; true when any does, whatever the others are). "
                                        "Compare one value, or count the matches" % (_text(n)[:60], op)))
    findings += _check_unrolling(name, tree)
    return findings


def _returns_collection(fn, variables):
    """True when function ``fn`` outputs something that may be an array without `return ,$x`."""
    body = next((c for c in fn.children if c.type == "script_block"), None)
    if body is None:
        return False
    scope = fn.start_byte
    for m in _walk(body):
        if m.type == "function_statement" and m != fn:
            continue
        if m.type == "flow_control_statement" and _text(m).lower().startswith("return"):
            value = next((c for c in m.children if c.type == "pipeline"), None)
            if value is not None and not _text(value).lstrip().startswith(",") and \
                    _maybe_collection(value, variables, scope):
                return True
    stmts = next((c for c in _walk(body) if c.type == "statement_list"), None)
    for st in (stmts.children if stmts else []):
        if st.type == "pipeline" and not any(c.type == "assignment_expression" for c in st.children) and \
                not _text(st).lstrip().startswith(",") and _maybe_collection(st, variables, scope):
            return True
    return False


def _check_unrolling(name, tree):
    """A function that returns an array gives its caller $null for 0 elements and the element itself for 1
    (PowerShell unrolls function output): `(F)[0]` is then the first character of a string, or an error on
    $null. The caller wraps the call in @(...), or the function returns `,$array`."""
    findings = []
    variables = _collection_variables(tree)
    unrolled = {}
    for fn in (n for n in _walk(tree.root_node) if n.type == "function_statement"):
        fname = next((_text(c).lower() for c in fn.children if c.type == "function_name"), None)
        if fname and _returns_collection(fn, variables):
            unrolled[fname] = fn
    if not unrolled:
        return findings
    holders = {}
    for n in _walk(tree.root_node):
        if n.type == "assignment_expression" and len(_writes(n)) == 1:
            value = _unwrap(n.children[-1])
            if value is not None and value.type == "command":
                cname = _text(next((c for c in value.children if c.type == "command_name"), value)).lower()
                if cname in unrolled:
                    holders[(_scope_of(n), variable_name(_writes(n)[0]))] = cname
    for n in _walk(tree.root_node):
        if n.type != "element_access":
            continue
        target = _unwrap(n.children[0])
        called = None
        if target is not None and target.type == "parenthesized_expression":
            inner = _unwrap(next((c for c in target.children if c.is_named), None))
            if inner is not None and inner.type == "command":
                called = _text(next((c for c in inner.children if c.type == "command_name"), inner)).lower()
        elif target is not None and target.type == "variable":
            v = variable_name(target)
            called = holders.get((_scope_of(n), v)) or holders.get((None, v))
        if called in unrolled:
            findings.append(Finding(name, _line(n), "compare", "%s indexes what %s returns, which PowerShell "
                                    "unrolls ($null for 0 elements, the element itself for 1): wrap the call in "
                                    "@(...) or return ,$array" % (_text(n)[:60], called)))
    return findings


# --- the result contract (rule ``result``) --------------------------------------------------------

_SHAPE_OF_DEFAULT = {ast.Dict: "object", ast.List: "array"}


def _parents(tree):
    out = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            out[child] = node
    return out


def _read_shape(node, parents):
    """'object', 'array', 'scalar' or None: how the Python uses the value read at ``node``."""
    parent = parents.get(node)
    if isinstance(node, ast.Call) and len(node.args) > 1:
        shape = _SHAPE_OF_DEFAULT.get(type(node.args[1]))
        if shape:
            return shape
    if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.Or) and parent.values[0] is node:
        other = parent.values[-1]
        if isinstance(other, (ast.Dict, ast.List)):
            return _SHAPE_OF_DEFAULT[type(other)]
        if isinstance(other, ast.Constant) and isinstance(other.value, str):
            return "scalar"
        node, parent = parent, parents.get(parent)
    if isinstance(parent, ast.Attribute) and parent.value is node:
        if parent.attr in ("items", "keys", "values"):
            return "object"
        if parent.attr in ("lower", "upper", "startswith", "endswith", "split", "strip", "splitlines"):
            return "scalar"
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is node:
        return "array"
    return None


class _Readers:
    """Which keys of a script's result the Python reads, and how, following the value into the module_utils and
    plugin_utils functions it is passed to (by position or keyword; a callback passed in is not followed)."""

    def __init__(self, plugin_root):
        self.modules, self.functions = {}, {}
        for path in sorted(Path(plugin_root).rglob("*.py")):
            tree = ast.parse(path.read_text(), str(path))
            self.modules[path] = (tree, _imports(tree), _parents(tree))
            for node in tree.body:
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.functions.setdefault(node.name, []).append((path, node))
        self.seen = set()

    def _where(self, path, node):
        return "%s:%d" % (path.relative_to(ROOT) if path.is_relative_to(ROOT) else path, node.lineno)

    def reads_of_value(self, path, value, fn, depth=0):
        """{key: [(shape, where)]} for a script result that is the expression ``value`` in ``fn``."""
        tree, imports, parents = self.modules[path]
        out = {}
        parent = parents.get(value)
        if isinstance(parent, ast.Attribute) and parent.attr == "get" and isinstance(parents.get(parent), ast.Call):
            self._key(out, parents[parent], path, parents)
        elif isinstance(parent, ast.Subscript) and parent.value is value:
            self._key(out, parent, path, parents)
        elif isinstance(parent, ast.Assign) and fn is not None:
            for target in parent.targets:
                if isinstance(target, ast.Name):
                    self._merge(out, self.reads_of_name(path, fn, target.id, depth))
        elif isinstance(parent, ast.Return) and fn is not None and depth < 4:
            for cpath, (ctree, cimports, _cparents) in self.modules.items():
                for call in ast.walk(ctree):
                    if isinstance(call, ast.Call) and _call_name(call, cimports).split(".")[-1] == fn.name:
                        self._merge(out, self.reads_of_value(cpath, call, _enclosing_function(ctree, call),
                                                             depth + 1))
        elif isinstance(parent, ast.Call) and parent is not value:
            self._merge(out, self._passed(path, parent, value, depth))
        return out

    def reads_of_name(self, path, fn, name, depth):
        key = (path, fn.name, fn.lineno, name)
        if key in self.seen or depth > 4:
            return {}
        self.seen.add(key)
        out = {}
        for node in ast.walk(fn):
            if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
                self._merge(out, self.reads_of_value(path, node, fn, depth + 1))
        return out

    def _passed(self, path, call, value, depth):
        tree, imports, parents = self.modules[path]
        cname = _call_name(call, imports).split(".")[-1]
        out = {}
        for fpath, fdef in self.functions.get(cname, []):
            params = [a.arg for a in fdef.args.posonlyargs + fdef.args.args]
            target = None
            if value in call.args:
                i = call.args.index(value)
                target = params[i] if i < len(params) else None
            for kw in call.keywords:
                if kw.value is value:
                    target = kw.arg
            if target:
                self._merge(out, self.reads_of_name(fpath, fdef, target, depth + 1))
        return out

    def _key(self, out, node, path, parents):
        arg = node.args[0] if isinstance(node, ast.Call) and node.args else getattr(node, "slice", None)
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            if isinstance(node, ast.Subscript) and not isinstance(node.ctx, ast.Load):
                return
            out.setdefault(arg.value, []).append((_read_shape(node, parents), self._where(path, node)))

    @staticmethod
    def _merge(out, more):
        for k, v in more.items():
            out.setdefault(k, []).extend(v)


def find_result_readers(plugin_root=None):
    """{script: {key: [(shape or None, 'file:line')]}}: every key the Python reads from a script's result."""
    readers = _Readers(plugin_root or ROOT / "plugins")
    out = {}
    for path, (tree, imports, _parents_map) in readers.modules.items():
        for node in ast.walk(tree):
            call = _script_call(node, imports) if isinstance(node, ast.Call) else None
            fn = _enclosing_function(tree, node) if call else None
            if call is None or (path.name, fn and fn.name) in _FORWARDERS:
                continue
            script = call[0]
            if isinstance(script, ast.Constant) and isinstance(script.value, str):
                readers._merge(out.setdefault(script.value, {}), readers.reads_of_value(path, node, fn))
    return out


def _value_shape(value, assigned):
    """'object', 'array', 'scalar', 'maybe' (output that unrolls: 0 -> null, 1 -> the element) or None."""
    node = _unwrap(value)
    if node is None:
        return None
    if node.type == "array_expression":
        return "array"
    if node.type == "hash_literal_expression":
        return "object"
    if node.type in ("string_literal", "expandable_string_literal", "integer_literal", "real_literal") or \
            "string" in node.type:
        return "scalar"
    if node.type == "invokation_expression":
        member = next((c for c in node.children if c.type == "member_name"), None)
        if member is not None and _text(member).lower() == "toarray":
            return "array"
        if member is not None and _text(member).lower() in ("tostring", "tolowerinvariant", "getstring",
                                                            "readalltext", "toxmlstring", "gethostname"):
            return "scalar"
        return None
    if node.type == "variable":
        v = variable_name(node)
        if v in ("true", "false", "null"):
            return "scalar"
        return assigned.get(v)
    if node.type in ("cast_expression", "expression_with_unary_operator") and node.children[0].type == "type_literal":
        name, is_array = _type_spec_name(node.children[0])
        return "array" if is_array else ("scalar" if (name or "").lower() in ("string", "int", "bool", "long")
                                         else None)
    if node.type in ("pipeline", "pipeline_chain", "command", "foreach_statement"):
        return "maybe"
    return None


def _hash_entries(node):
    """{key lower: (key, value node)} of a hashtable literal."""
    out = {}
    body = next((c for c in node.children if c.type == "hash_literal_body"), None)
    for entry in (body.children if body else []):
        if entry.type != "hash_entry":
            continue
        key = _text(entry.children[0]).strip("'\"")
        value = next((c for c in entry.children if c.type == "pipeline"), entry.children[-1])
        out[key.lower()] = (key, value)
    return out


def _returned_variables(tree):
    """{function name lower: the variable its body ends with} for the script's functions whose last statement is a
    bare variable (`function F { $x = @{...}; $x.k = ...; $x }`): what a caller assigning F's output holds."""
    out = {}
    for fn in (n for n in _walk(tree.root_node) if n.type == "function_statement"):
        fname = next((_text(c).lower() for c in fn.children if c.type == "function_name"), None)
        body = next((n for n in _walk(fn) if n.type == "statement_list"), None)
        statements = [c for c in (body.children if body else []) if c.is_named and c.type != "comment"]
        last = _unwrap(statements[-1]) if statements else None
        if fname and last is not None and last.type == "variable":
            out[fname] = variable_name(last)
    return out


def script_results(tree):
    """[(line, {key lower: (key, shape)})] for each `$Ansible.Result = ...` of the script. A variable assigned a
    function's output has the keys of the variable that function returns too (_returned_variables)."""
    assigned, tables, members, calls = {}, {}, {}, {}
    returns = _returned_variables(tree)
    for n in _walk(tree.root_node):
        if n.type != "assignment_expression":
            continue
        left = _unwrap(next((c for c in n.children if c.type == "left_assignment_expression"), None))
        value = n.children[-1]
        if left is not None and left.type == "variable":
            v = variable_name(left)
            called = _unwrap(value)
            if called is not None and called.type == "command":
                cname = _text(next((c for c in called.children if c.type == "command_name"), called)).lower()
                if cname in returns:
                    calls[v] = returns[cname]
            shape = _value_shape(value, {})
            if shape is None and _text(_unwrap(value) or value).lower().endswith("]::new()") and "list" in \
                    _text(value).lower():
                shape = "array"
            assigned[v] = shape if v not in assigned or assigned[v] == shape else None
            hv = _unwrap(value)
            if hv is not None and hv.type == "hash_literal_expression":
                tables[v] = hv
        elif left is not None and left.type in ("member_access", "element_access") and left.children and \
                left.children[0].type == "variable":
            owner = variable_name(left.children[0])
            key_node = left.children[-1] if left.type == "member_access" else next(
                (c for c in left.children if c.is_named and c is not left.children[0]), None)
            if key_node is not None:
                key = _text(key_node).strip("[]'\" ")
                members.setdefault(owner, {})[key.lower()] = (key, value)
    out = []
    for n in _walk(tree.root_node):
        if n.type != "assignment_expression":
            continue
        left = _unwrap(next((c for c in n.children if c.type == "left_assignment_expression"), None))
        if left is None or _text(left).replace(" ", "").lower() != "$ansible.result":
            continue
        value = _unwrap(n.children[-1])
        entries = {}
        if value is not None and value.type == "hash_literal_expression":
            entries = _hash_entries(value)
        elif value is not None and value.type == "variable":
            v = variable_name(value)
            entries = {}
            for holder in ([calls[v]] if v in calls else []) + [v]:
                entries.update(_hash_entries(tables[holder]) if holder in tables else {})
                entries.update(members.get(holder, {}))
        else:
            continue
        out.append((_line(n), {k: (key, _value_shape(val, assigned)) for k, (key, val) in entries.items()}))
    return out


def check_result(name, tree, readers):
    """Every key the Python reads from the script's result is set by every `$Ansible.Result =` of the script,
    with the shape the Python uses (the Python reads with .get(...) or {}, so a missing key is silently empty)."""
    findings = []
    results = script_results(tree)
    reads = (readers or {}).get(name, {})
    if reads and not results:
        return [Finding(name, 1, "result", "the Python reads %s from the result, but the script sets no "
                        "$Ansible.Result = @{...} this gate can read" % ", ".join(sorted(reads)))]
    for key, uses in sorted(reads.items()):
        for line, entries in results:
            got = entries.get(key.lower())
            if got is None:
                findings.append(Finding(name, line, "result", "the Python reads %r (%s), which this $Ansible.Result "
                                        "does not set (it sets: %s)" % (key, uses[0][1], ", ".join(
                                            sorted(k for k, _s in entries.values())) or "nothing")))
                continue
            if got[0] != key:
                findings.append(Finding(name, line, "result", "the script sets %r, the Python reads %r (%s): "
                                        "Python keys are case-sensitive" % (got[0], key, uses[0][1])))
            shape = got[1]
            for want, where in uses:
                if want is None or shape is None or want == shape or (want == "scalar" and shape == "maybe"):
                    continue
                findings.append(Finding(name, line, "result", "%r is %s here, the Python (%s) uses it as %s%s" % (
                    key, {"maybe": "command output (PowerShell unrolls it: $null for none, the element for one)"}
                    .get(shape, "an " + shape if shape in ("object", "array") else "a " + shape), where,
                    "an " + want if want in ("object", "array") else "a " + want,
                    ": wrap it in @(...)" if want == "array" else ""))
                )
    return findings


if __name__ == "__main__":
    sys.exit(main())
