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
  ``$item.key`` in ``foreach ($item in $Param)`` that the Python never builds. The callers are found
  by scanning plugins/ for ``run_script(..., "<script>", <parameters>)``; the keys come from the real
  Python: dict literals as written, and the module_utils and plugin_utils functions that build parameters are called
  (BUILDERS below). A caller whose parameters this gate cannot compute is itself a finding.

Not shipped in the collection (galaxy.yml build_ignore). Usage:
  psgate.py                     check the checkout's scripts (plugins/plugin_utils/scripts/*.ps1)
  psgate.py --scripts DIR       check the *.ps1 scripts of another directory (e.g. from git)
  psgate.py --scripts FILE.py   check the SCRIPTS of a win_scripts.py from before the scripts were .ps1 files
"""

import argparse
import ast
import importlib.util
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
    downloads = [{"url": "http://m/kubelet.exe", "sha512": sha, "extract_dir": "", "dest": "C:\\k\\kubelet.exe"},
                 {"url": "http://m/cni.tgz", "sha512": sha, "extract_dir": "C:\\opt\\cni\\bin",
                  "dest": host_files.stamp_path({"url": "http://m/cni.tgz", "extract_dir": "C:\\opt\\cni\\bin"})}]
    files = [{"path": "C:\\etc\\a.conf", "content": "a", "restricted": False, "secret": False},
             {"path": "C:\\etc\\kube-proxy\\kubeconfig", "content": "t", "restricted": True, "secret": True}]
    return directories, downloads, files, ["C:\\old"], ["C:\\old-dir"]


def _builders():
    """'module.function' -> a call returning what that function returns, for the parameter builders
    the action plugins pass to run_script. Add one here when a plugin builds parameters a new way."""
    _collection()
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import facts as host_facts
    from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import files as host_files

    def plan():
        d, dl, f, absent, prune = _sample_inputs()
        live = {"files": {}, "dirs": {}, "paths": {absent[0]: "dir", prune[0]: "dir"}}
        return host_files.plan(d, dl, f, live, absent, prune)

    return {
        "facts.script_parameters": lambda: host_facts.script_parameters(["C:\\extra"]),
        "files.state_query": lambda: host_files.state_query(*_sample_inputs()),
        "files.plan": plan,
        "files.scan_query": lambda: host_files.scan_query(["C:\\k"]),
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


def check_contract(name, tree, callers, elements=None):
    findings = []
    params = {variable_name(v): _text(v) for v, _t in script_params(tree)}
    mine = [c for c in callers if c[0] == name]
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


def check_script(name, text, callers=None, elements=None):
    """All findings for one script; the contract is checked when ``callers`` is given."""
    tree = parse(text)
    findings = (check_syntax(name, tree) + check_overwrites(name, tree) + check_ps51(name, tree)
                + check_native(name, tree) + check_unsafe(name, tree))
    if callers is not None:
        findings += check_contract(name, tree, callers, elements)
    return findings


def check_all(scripts=None):
    if scripts is None:
        _collection()
        from ansible_collections.kubewin.nodes.plugins.plugin_utils._win_scripts import load_all
        scripts = load_all()
    callers = find_callers()
    elements = _element_builders()
    findings = []
    for script, where, _keys, error in callers:
        if script is not None and script not in scripts:
            findings.append(Finding(script, 0, "contract",
                                    "%s runs %r, which has no scripts/%s.ps1" % (where, script, script)))
        elif script is None:
            findings.append(Finding("?", 0, "contract", "%s: %s" % (where, error)))
    for name, text in sorted(scripts.items()):
        findings += check_script(name, text, callers, elements)
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


if __name__ == "__main__":
    sys.exit(main())
