# Test-lab only: a PowerShell interpreter for the subset kubewin.nodes' scripts use.
"""Parse with tree-sitter-powershell, evaluate the syntax tree.

Semantics follow the PowerShell Language Specification 3.0 (``spec §``) and the about_* help topics of
Windows PowerShell 5.1; each rule has a unit test in tests/unit/test_psinterp.py citing its source.
What is not implemented raises :class:`Unsupported` ("not supported by the lab interpreter: <construct>
at <script>:<line>"), which a script's try/catch never catches.

Simplifications (documented in lab/winsim/README.md): a pipeline runs each command over the
whole output of the one before (no streaming); only the cmdlets, types and members registered by
the host bindings exist.
"""

from __future__ import annotations

import fnmatch
import re

import tree_sitter
import tree_sitter_powershell

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

_PARSER = tree_sitter.Parser(tree_sitter.Language(tree_sitter_powershell.language()))

# Expression nodes that only wrap one child (the grammar's precedence levels).
_WRAPPERS = frozenset("""
logical_expression bitwise_expression comparison_expression additive_expression multiplicative_expression
format_expression range_expression array_literal_expression unary_expression argument_expression
logical_argument_expression bitwise_argument_expression comparison_argument_expression
additive_argument_expression multiplicative_argument_expression format_argument_expression
range_argument_expression pipeline_chain while_condition
""".split())

PREFERENCES = ("stop", "continue", "silentlycontinue", "ignore")


# The exception types the scripts catch or raise, each with its base class (Microsoft Learn, the class's
# "Inheritance" line).
EXCEPTION_BASES = {
    "system.systemexception": "system.exception",
    "system.management.automation.runtimeexception": "system.systemexception",
    "system.management.automation.sessionstateexception": "system.management.automation.runtimeexception",
    "system.management.automation.itemnotfoundexception": "system.management.automation.sessionstateexception",
    "system.management.automation.methodexception": "system.management.automation.runtimeexception",
    "system.management.automation.methodinvocationexception": "system.management.automation.methodexception",
    "system.management.automation.parameterbindingexception": "system.management.automation.runtimeexception",
    "system.unauthorizedaccessexception": "system.systemexception",
    "system.io.ioexception": "system.systemexception",
    "system.io.filenotfoundexception": "system.io.ioexception",
    "system.io.directorynotfoundexception": "system.io.ioexception",
    "system.argumentexception": "system.systemexception",
    "system.invalidoperationexception": "system.systemexception",
    "system.formatexception": "system.systemexception",
    "system.notsupportedexception": "system.systemexception",
    "system.security.cryptography.cryptographicexception": "system.systemexception",
    "system.runtime.interopservices.externalexception": "system.systemexception",
    "system.runtime.interopservices.comexception": "system.runtime.interopservices.externalexception",
}


class PSError(Exception):
    """A terminating error. ``script_terminating``: throw / -ErrorAction Stop (ends the script unless
    caught); otherwise statement-terminating (spec §8.3, about_Throw, about_Preference_Variables)."""

    def __init__(self, record, script_terminating=True):
        Exception.__init__(self, record.message)
        self.record = record
        self.script_terminating = script_terminating


class _Break(Exception):
    pass


class _Continue(Exception):
    pass


class _Return(Exception):
    def __init__(self, output):
        Exception.__init__(self)
        self.output = output


class Variable(object):
    __slots__ = ("value", "type")

    def __init__(self, value, vtype=None):
        self.value, self.type = value, vtype


class Scope(object):
    def __init__(self, parent=None):
        self.parent = parent
        self.vars = {}


def _name_of_var(text):
    """'$Name' / '${Name}' / '$script:Name' / '@Args' -> ('', 'name') or ('env', 'x')."""
    t = text[1:]
    if t.startswith("{") and t.endswith("}"):
        t = t[1:-1]
    if ":" in t:
        drive, _, name = t.partition(":")
        drive = drive.lower()
        if drive in ("local", "script", "global", "private"):
            return drive, name.lower()
        return drive, name
    return "", t.lower()


# ---------------------------------------------------------------------------------------------
# Conversions (spec §6 "Conversions", LanguagePrimitives)
# ---------------------------------------------------------------------------------------------
def is_true(v):
    """spec §6.2: $null, 0, '' and empty arrays are false; a one-element array is its element;
    any other object is true ('False' as a string is true)."""
    if v is None:
        return False
    if isinstance(v, bool):
        return v
    if isinstance(v, (int, float)):
        return v != 0
    if isinstance(v, str):
        return v != ""
    if isinstance(v, list):
        if not v:
            return False
        return is_true(v[0]) if len(v) == 1 else True
    if isinstance(v, SwitchValue):
        return v.present
    return True


class SwitchValue(object):
    type_name = "System.Management.Automation.SwitchParameter"

    def __init__(self, present):
        self.present = bool(present)

    def __str__(self):
        return "True" if self.present else "False"


def enumerate_value(v):
    """What a pipeline or foreach sees: arrays and other enumerables unroll, everything else
    (a hashtable too) is one object (about_Pipelines, spec §8.2, about_Foreach)."""
    if isinstance(v, list):
        return v
    enum = getattr(v, "ps_enumerate", None)
    if enum is not None:
        return enum()
    return [v]


def collapse(output):
    """Assigning a pipeline's output: nothing -> $null, one object -> it, more -> object[] (spec §7.11)."""
    if not output:
        return None
    if len(output) == 1:
        return output[0]
    return list(output)


class Interpreter(object):
    def __init__(self, script_name="script", host=None, error_action="Continue", whatif=False):
        self.script_name = script_name
        self.host = host
        self.whatif = whatif
        self.global_scope = Scope()
        self.scope = self.global_scope
        self.functions = {}
        self.cmdlets = {}
        self.types = {}
        self.try_depth = 0
        self.errors = []  # the error stream
        self.text = b""
        self.cmdlet_binding = False
        self._command_action = None
        self.in_catch = 0
        self._extra_clauses = {}
        self.set_var("ErrorActionPreference", error_action)
        self.set_var("LASTEXITCODE", None)
        self.set_var("OFS", " ")
        from . import builtins  # noqa: F401  (registers the core cmdlets and types)
        builtins.register(self)

    # -- errors ---------------------------------------------------------------------------------
    def where(self, node):
        return "%s:%d" % (self.script_name, node.start_point[0] + 1) if node is not None else self.script_name

    def unsupported(self, what, node):
        raise Unsupported("not supported by the lab interpreter: %s at %s" % (what, self.where(node)))

    def error(self, message, node=None, exception_type="System.Management.Automation.RuntimeException",
              fqid="RuntimeException", category="NotSpecified", script_terminating=False, target=None):
        return PSError(ErrorRecord(message, exception_type, fqid, category, target, self.where(node)),
                       script_terminating)

    def preference(self, override=None):
        v = override if override is not None else self.get_var("ErrorActionPreference")
        p = to_str(v).lower()
        if p not in PREFERENCES:
            raise Unsupported("not supported by the lab interpreter: $ErrorActionPreference %r" % p)
        return p

    def write_error(self, record, action=None):
        """A non-terminating error (about_Preference_Variables, $ErrorActionPreference; about_CommonParameters,
        -ErrorAction): Stop makes it terminating, Continue writes it, SilentlyContinue/Ignore drop it."""
        pref = self.preference(action if action is not None else self._command_action)
        if pref == "stop":
            raise PSError(record, script_terminating=True)
        if pref == "continue":
            self.errors.append(record)

    # -- variables -------------------------------------------------------------------------------
    def _lookup(self, name):
        s = self.scope
        while s is not None:
            if name in s.vars:
                return s.vars[name]
            s = s.parent
        return None

    def get_var(self, text_or_name, node=None):
        drive, name = _name_of_var("$" + text_or_name if not text_or_name.startswith(("$", "@")) else text_or_name)
        if drive == "env":
            return self.host.env(name) if self.host else None
        if drive in ("script", "global"):
            v = self.global_scope.vars.get(name)
            return v.value if v else None
        if drive not in ("", "local", "private"):
            self.unsupported("variable drive %s:" % drive, node)
        if name == "null":
            return None
        if name == "true":
            return True
        if name == "false":
            return False
        if name == "psitem":
            name = "_"
        v = self._lookup(name)
        return v.value if v else None

    def set_var(self, text_or_name, value, node=None, vtype=None, scope=None):
        drive, name = _name_of_var("$" + text_or_name if not text_or_name.startswith(("$", "@")) else text_or_name)
        if drive in ("script", "global"):
            scope = self.global_scope
        elif drive not in ("", "local", "private"):
            self.unsupported("assignment to variable drive %s:" % drive, node)
        if name in ("null",):
            return
        if name in ("true", "false"):
            raise self.error("Cannot overwrite variable %s because it is read-only or constant." % name, node,
                             script_terminating=False)
        scope = scope or self.scope
        existing = scope.vars.get(name)
        if vtype is not None:
            scope.vars[name] = Variable(self.convert(value, vtype, node), vtype)
        elif existing is not None and existing.type is not None:
            # spec §5.3 (constrained variables): a typed variable keeps its type on later assignment
            existing.value = self.convert(value, existing.type, node)
        else:
            scope.vars[name] = Variable(value)

    # -- types -----------------------------------------------------------------------------------
    def resolve_type(self, name, node=None):
        key = name.lower().replace(" ", "")
        if key.startswith("system.") and key not in self.types and key[7:] in self.types:
            key = key[7:]
        t = self.types.get(key)
        if t is None and key.endswith("[]") and self.types.get(key[:-2]) is not None:
            from .builtins import ArrayType
            t = ArrayType(self.types[key[:-2]])
        if t is None:
            m = re.match(r"^(?:system\.collections\.generic\.)?list\[(.+)\]$", key)
            if m:
                from .builtins import ListType
                t = ListType(self.resolve_type(m.group(1), node))
        if t is None:
            m = re.match(r"^(?:system\.collections\.generic\.)?stack\[(.+)\]$", key)
            if m:
                from .builtins import StackType
                t = StackType(self.resolve_type(m.group(1), node))
        if t is None:
            raise self.error("Unable to find type [%s]." % name, node, "System.Management.Automation.RuntimeException",
                             "TypeNotFound", "InvalidOperation")
        return t

    def convert(self, value, vtype, node=None):
        return vtype.convert(self, value, node)

    # -- running ----------------------------------------------------------------------------------
    def parse(self, text):
        self.text = text.encode("utf-8")
        tree = _PARSER.parse(self.text)
        bad = self._first_error(tree.root_node)
        if bad is not None:
            raise PSError(ErrorRecord("ParserError: unexpected token %r" % bad.text.decode("utf-8", "replace")[:40],
                                      "System.Management.Automation.ParseException", "ParseException",
                                      "ParserError", None, self.where(bad)))
        return tree.root_node

    def _first_error(self, node):
        if node.type == "ERROR" or node.is_missing:
            return node
        for c in node.children:
            e = self._first_error(c)
            if e is not None:
                return e
        return None

    def run_script(self, text, parameters=None):
        """Run a script with win_powershell's ``parameters`` bound by name. Returns the output list."""
        root = self.parse(text)
        param_block = None
        body = None
        for c in root.children:
            if c.type == "param_block":
                param_block = c
            elif c.type == "statement_list":
                body = c
            elif c.type != "comment":
                self.unsupported("top-level %s" % c.type, c)
        self.cmdlet_binding = param_block is not None and self._is_advanced(param_block)
        params = self._param_list(_child(param_block, "parameter_list") if param_block else None)
        self._bind(params, [], dict(parameters or {}), self.scope, "script", param_block)
        out = []
        try:
            if body is not None:
                out = self.exec_list(body)
        except _Return as r:
            out = r.output
        return out

    def _is_advanced(self, param_block):
        for a in self._walk_attrs(param_block):
            if a[0] in ("cmdletbinding", "parameter"):
                return True
        return False

    def _walk_attrs(self, node):
        stack = [node]
        while stack:
            n = stack.pop()
            if n.type == "attribute":
                name = n.child_by_field_name("attribute_name") or next(
                    (c for c in n.children if c.type == "attribute_name"), None)
                if name is not None:
                    yield (name.text.decode().lower(), n)
                continue
            if n.type == "script_block":
                continue
            stack.extend(n.children)

    # -- parameters (about_Functions_Advanced_Parameters, spec §8.10, §12.3) -----------------------
    def _param_list(self, plist):
        params = []
        if plist is None:
            return params
        for p in plist.children:
            if p.type != "script_parameter":
                continue
            spec = {"name": None, "type": None, "mandatory": False, "validate_set": None, "default": None,
                    "node": p, "allow_empty": False}
            for c in p.children:
                if c.type == "variable":
                    spec["name"] = c.text.decode()[1:]
                elif c.type == "attribute_list":
                    for a in c.children:
                        self._param_attribute(spec, a)
                elif c.type == "script_parameter_default":
                    spec["default"] = c.children[-1]
            params.append(spec)
        return params

    def _param_attribute(self, spec, a):
        if a.type != "attribute":
            return
        tl = next((c for c in a.children if c.type == "type_literal"), None)
        if tl is not None:
            spec["type"] = self.type_of_literal(tl)
            return
        name = next(c for c in a.children if c.type == "attribute_name").text.decode().lower()
        args = next((c for c in a.children if c.type == "attribute_arguments"), None)
        if name == "parameter":
            for arg in (args.children if args is not None else []):
                if arg.type != "attribute_argument":
                    continue
                text = arg.text.decode().replace(" ", "").lower()
                if text in ("mandatory", "mandatory=$true"):
                    spec["mandatory"] = True
                elif text not in ("mandatory=$false",):
                    self.unsupported("[Parameter(%s)]" % arg.text.decode(), arg)
        elif name == "validateset":
            values = []
            for arg in args.children:
                if arg.type == "attribute_argument":
                    values.append(to_str(self.eval(arg.children[0])))
            spec["validate_set"] = values
        elif name in ("allowemptycollection", "allowemptystring"):
            spec["allow_empty"] = True
        else:
            self.unsupported("parameter attribute [%s]" % name, a)

    def _bind(self, params, positional, named, scope, what, node):
        """Bind arguments to param() (spec §8.14): names ignore case and may be abbreviated when
        unambiguous; an unknown name is an error; values take the parameter's type; Mandatory
        refuses missing, null, empty strings and empty arrays."""
        by_name = {}
        for p in params:
            by_name[p["name"].lower()] = p
        values = {}
        for key, value in named.items():
            k = key.lower()
            p = by_name.get(k)
            if p is None:
                cands = [n for n in by_name if n.startswith(k)]
                if len(cands) == 1:
                    p = by_name[cands[0]]
                elif len(cands) > 1:
                    raise self.error("Parameter cannot be processed because the parameter name '%s' is ambiguous. "
                                     "Possible matches include: %s." % (key, ", ".join("-" + by_name[c]["name"]
                                                                                     for c in cands)), node,
                                     "System.Management.Automation.ParameterBindingException",
                                     "AmbiguousParameter", "InvalidArgument")
            if p is None:
                raise self.error("A parameter cannot be found that matches parameter name '%s'." % key, node,
                                 "System.Management.Automation.ParameterBindingException",
                                 "NamedParameterNotFound", "InvalidArgument")
            values[p["name"].lower()] = value
        rest = list(positional)
        for p in params:
            if p["name"].lower() not in values and rest:
                values[p["name"].lower()] = rest.pop(0)
        if rest:
            if self.cmdlet_binding and what == "script":
                raise self.error("A positional parameter cannot be found that accepts argument '%s'." % to_str(rest[0]),
                                 node, "System.Management.Automation.ParameterBindingException",
                                 "PositionalParameterNotFound", "InvalidArgument")
        missing = [p["name"] for p in params if p["mandatory"] and p["name"].lower() not in values]
        if missing:
            raise self.error("Cannot process command because of one or more missing mandatory parameters: %s."
                             % " ".join(missing), node, "System.Management.Automation.ParameterBindingException",
                             "MissingMandatoryParameter", "InvalidArgument")
        saved = self.scope
        self.scope = scope
        try:
            for p in params:
                low = p["name"].lower()
                if low in values:
                    v = values[low]
                    if p["type"] is not None:
                        try:
                            v = self.convert(v, p["type"], p["node"])
                        except PSError as e:
                            raise self.error("Cannot process argument transformation on parameter '%s'. %s"
                                             % (p["name"], e.record.message), node,
                                             "System.Management.Automation.ParameterBindingArgumentTransformationException",
                                             "ParameterArgumentTransformationError", "InvalidData") from None
                    if p["mandatory"] and not p["allow_empty"]:
                        if v is None:
                            why = "it is null"
                        elif isinstance(v, str) and v == "":
                            why = "it is an empty string"
                        elif isinstance(v, list) and not v:
                            why = "it is an empty array"
                        else:
                            why = None
                        if why:
                            raise self.error("Cannot bind argument to parameter '%s' because %s." % (p["name"], why),
                                             node, "System.Management.Automation.ParameterBindingValidationException",
                                             "ParameterArgumentValidationError", "InvalidData")
                    if p["validate_set"] is not None:
                        items = v if isinstance(v, list) else [v]
                        for item in items:
                            if to_str(item).lower() not in [s.lower() for s in p["validate_set"]]:
                                raise self.error(
                                    "Cannot validate argument on parameter '%s'. The argument \"%s\" does not belong "
                                    "to the set \"%s\" specified by the ValidateSet attribute. Supply an argument "
                                    "that is in the set and then try the command again."
                                    % (p["name"], to_str(item), ",".join(p["validate_set"])), node,
                                    "System.Management.Automation.ParameterBindingValidationException",
                                    "ParameterArgumentValidationError", "InvalidData")
                elif p["default"] is not None:
                    v = self.eval(p["default"])
                    if p["type"] is not None:
                        v = self.convert(v, p["type"], p["node"])
                else:
                    v = self.convert(None, p["type"], p["node"]) if p["type"] is not None else None
                scope.vars[low] = Variable(v, p["type"])
        finally:
            self.scope = saved

    # -- statements ---------------------------------------------------------------------------------
    def exec_list(self, node):
        out = []
        kids = [c for c in node.children if c.type not in ("comment", ";", "{", "}", "\n")]
        i = 0
        while i < len(kids):
            c = kids[i]
            i += 1
            head = self._trailing_if(c)
            if head is not None:
                i = self._attach_clauses(head, kids, i)
            self.exec_statement(c, out)
        return out

    # The PowerShell parser reads an elseif or else clause after new lines (spec §8.3, if-statement:
    # "new-lines_opt elseif"; the language grammar allows new lines before each clause), while
    # tree-sitter-powershell ends the if statement at the line break and reads "elseif (...) {...}" /
    # "else {...}" as a command of that name. Those commands are joined back to the if statement before them.
    def _trailing_if(self, stmt):
        if stmt.type == "if_statement":
            return stmt
        if stmt.type == "pipeline":
            kids = [k for k in stmt.children if k.type != "comment"]
            if len(kids) == 1 and kids[0].type == "assignment_expression" and kids[0].children[-1].type in \
                    ("if_statement", "try_statement"):
                return kids[0].children[-1]
        return None

    def _attach_clauses(self, head, kids, i):
        if head.type == "try_statement":
            # the same for a catch clause on the line after "$x = try {...}" (spec §8.10, try-statement)
            if _child(head, "catch_clauses") is None and _child(head, "finally_clause") is None and \
                    i < len(kids):
                cmd = self._clause_command(kids[i], ("catch",))
                if cmd is not None:
                    if len(cmd[1]) != 1 or cmd[1][0].type != "script_block_expression":
                        self.unsupported("catch clause of this form", kids[i])
                    self._extra_clauses[head.id] = cmd[1][0]
                    return i + 1
            return i
        extra = []
        has_else = head.child_by_field_name("else_clause") is not None
        while i < len(kids) and not has_else:
            cmd = self._clause_command(kids[i])
            if cmd is None:
                break
            name, elements = cmd
            clauses = self._clauses(name, elements)
            if clauses is None:
                self.unsupported("%s clause of this form" % name, kids[i])
            extra.extend(clauses)
            has_else = clauses[-1][0] is None
            i += 1
        if extra:
            self._extra_clauses[head.id] = extra
        return i

    @staticmethod
    def _clauses(name, elements):
        """'elseif (c) {b} [elseif (c) {b}]... [else {b}]' read as command arguments -> [(cond, block)]."""
        out, words = [], [name] + elements
        i = 0
        while i < len(words):
            word = words[i] if isinstance(words[i], str) else words[i].text.decode().lower()
            rest = words[i + 1:]
            if word == "elseif" and len(rest) >= 2 and rest[0].type == "parenthesized_expression" and \
                    rest[1].type == "script_block_expression":
                out.append((rest[0], rest[1]))
                i += 3
            elif word == "else" and len(rest) == 1 and rest[0].type == "script_block_expression":
                out.append((None, rest[0]))
                i += 2
            else:
                return None
        return out

    def _clause_command(self, stmt, words=("elseif", "else")):
        if stmt.type != "pipeline":
            return None
        kids = [k for k in stmt.children if k.type != "comment"]
        if len(kids) != 1 or kids[0].type != "pipeline_chain":
            return None
        chain = [k for k in kids[0].children if k.type != "comment"]
        if len(chain) != 1 or chain[0].type != "command":
            return None
        name_node = chain[0].child_by_field_name("command_name") or _child(chain[0], "command_name")
        if name_node is None or name_node.text.decode().lower() not in words:
            return None
        elements = []
        ce = _child(chain[0], "command_elements")
        for e in (ce.children if ce is not None else []):
            if e.type == "command_argument_sep" or e.type == "comment":
                continue
            while e.type in ("array_literal_expression", "unary_expression") and len(e.children) == 1:
                e = e.children[0]
            elements.append(e)
        return name_node.text.decode().lower(), elements

    def exec_statement(self, n, out):
        try:
            self._exec_statement(n, out)
        except PSError as e:
            # statement-terminating errors go on with the next statement, outside try and when the
            # preference is not Stop (about_Preference_Variables; spec §8.3)
            if e.script_terminating or self.try_depth or self.preference() == "stop":
                if not e.script_terminating and self.preference() == "stop":
                    e.script_terminating = True
                raise
            self.errors.append(e.record)

    def _exec_statement(self, n, out):
        t = n.type
        if t == "pipeline":
            out.extend(self.exec_pipeline(n))
        elif t == "if_statement":
            out.extend(self.exec_if(n))
        elif t == "foreach_statement":
            self.exec_foreach(n, out)
        elif t == "while_statement":
            self.exec_while(n, out)
        elif t == "try_statement":
            self.exec_try(n, out)
        elif t == "flow_control_statement":
            self.exec_flow(n, out)
        elif t == "function_statement":
            name = next(c for c in n.children if c.type == "function_name").text.decode()
            self.functions[name.lower()] = n
        elif t == "statement_block":
            out.extend(self.exec_list(n.child_by_field_name("statement_list")) if n.child_by_field_name(
                "statement_list") else [])
        elif t == "empty_statement":
            pass
        else:
            self.unsupported("statement %s" % t, n)

    def exec_block(self, block):
        sl = block.child_by_field_name("statement_list")
        if sl is None:
            sl = next((c for c in block.children if c.type == "statement_list"), None)
        return self.exec_list(sl) if sl is not None else []

    def exec_if(self, n):
        """about_If: the first true condition's block runs."""
        cond = n.child_by_field_name("condition")
        block = next(c for c in n.children if c.type == "statement_block")
        if is_true(collapse(self.exec_pipeline(cond))):
            return self.exec_block(block)
        elifs = n.child_by_field_name("elseif_clauses")
        for clause in (elifs.children if elifs is not None else []):
            if clause.type != "elseif_clause":
                continue
            if is_true(collapse(self.exec_pipeline(clause.child_by_field_name("condition")))):
                return self.exec_block(next(c for c in clause.children if c.type == "statement_block"))
        els = n.child_by_field_name("else_clause")
        if els is not None:
            return self.exec_block(next(c for c in els.children if c.type == "statement_block"))
        for cond, sbe in self._extra_clauses.get(n.id, ()):
            if cond is None or is_true(self.eval(cond)):
                inner = next(c for c in sbe.children if c.type == "script_block")
                return self._exec_script_block_body(inner)
        return []

    def exec_foreach(self, n, out):
        """about_Foreach: the collection is enumerated (a scalar or hashtable is one item; $null none);
        the loop variable is an ordinary variable of the enclosing scope."""
        var = next(c for c in n.children if c.type == "variable")
        source = next(c for c in n.children if c.type == "pipeline")
        block = next(c for c in n.children if c.type == "statement_block")
        for c in n.children:
            if c.type == "foreach_parameter" or c.text.decode().lower() == "-parallel":
                self.unsupported("foreach -Parallel", c)
        value = collapse(self.exec_pipeline(source))
        items = [] if value is None else enumerate_value(value)
        for item in list(items):
            self.set_var(var.text.decode(), item, var)
            try:
                out.extend(self.exec_block(block))
            except _Break:
                break
            except _Continue:
                continue

    def exec_while(self, n, out):
        cond = n.child_by_field_name("condition")
        block = next(c for c in n.children if c.type == "statement_block")
        guard = 0
        while is_true(collapse(self.exec_pipeline(cond.children[0] if cond.type == "while_condition" else cond))):
            guard += 1
            if guard > 100000:
                raise Unsupported("not supported by the lab interpreter: a loop of more than 100000 iterations "
                                  "at %s" % self.where(n))
            try:
                out.extend(self.exec_block(block))
            except _Break:
                break
            except _Continue:
                continue

    def exec_try(self, n, out):
        """about_Try_Catch_Finally: a terminating error in try runs the catch block with $_ the
        ErrorRecord; finally always runs."""
        block = next(c for c in n.children if c.type == "statement_block")
        catches = next((c for c in n.children if c.type == "catch_clauses"), None)
        fin = next((c for c in n.children if c.type == "finally_clause"), None)
        clauses = [c for c in (catches.children if catches is not None else []) if c.type == "catch_clause"]
        if n.id in self._extra_clauses:
            clauses = [self._extra_clauses[n.id]]  # a catch-all clause read as a command (see exec_list)
        try:
            self.try_depth += 1 if clauses else 0
            try:
                out.extend(self.exec_block(block))
            finally:
                self.try_depth -= 1 if clauses else 0
        except PSError as e:
            clause = next((c for c in clauses if self._catches(c, e.record)), None)
            if clause is None:
                raise
            saved = self._lookup("_")
            self.scope.vars["_"] = Variable(e.record)
            self.in_catch += 1
            try:
                if clause.type == "script_block_expression":
                    out.extend(self._exec_script_block_body(_child(clause, "script_block")))
                else:
                    out.extend(self.exec_block(next(c for c in clause.children if c.type == "statement_block")))
            finally:
                self.in_catch -= 1
                if saved is not None:
                    self.scope.vars["_"] = saved
                else:
                    self.scope.vars.pop("_", None)
        finally:
            if fin is not None:
                out.extend(self.exec_block(next(c for c in fin.children if c.type == "statement_block")))

    def _catches(self, clause, record):
        """about_Try_Catch_Finally: a catch clause with types handles an exception of one of them or of a
        type derived from one; PowerShell also tries the inner exception of a MethodInvocationException
        (a .NET method's exception; PowerShell source, ExceptionHandlingOps.FindMatchingHandler)."""
        if clause.type == "script_block_expression":
            return True
        tlist = _child(clause, "catch_type_list")
        if tlist is None:
            return True
        names = []
        for tl in tlist.children:
            if tl.type == "type_literal":
                spec = next(c for c in tl.children if c.type == "type_spec").text.decode().lower()
                spec = spec if spec.startswith("system.") else "system." + spec
                if spec not in EXCEPTION_BASES and spec != "system.exception":
                    self.unsupported("catch [%s] (an exception type the interpreter does not know)" % spec, tl)
                names.append(spec)
        for thrown in (record.exception_type, getattr(record, "inner_type", None)):
            t = (thrown or "").lower()
            while t:
                if t in names:
                    return True
                t = EXCEPTION_BASES.get(t)
        return False

    def exec_flow(self, n, out):
        kw = n.children[0].type
        arg = n.children[1] if len(n.children) > 1 else None
        if kw == "break":
            if arg is not None:
                self.unsupported("break with a label", n)
            raise _Break()
        if kw == "continue":
            raise _Continue()
        if kw == "return":
            if arg is not None:
                out.extend(self.exec_pipeline(arg))
            raise _Return(out)
        if kw == "throw":
            # about_Throw: a string becomes a RuntimeException with that message; an ErrorRecord is rethrown
            value = collapse(self.exec_pipeline(arg)) if arg is not None else None
            if arg is None and self.in_catch and isinstance(self.get_var("_"), ErrorRecord):
                value = self.get_var("_")  # about_Try_Catch_Finally: a bare throw in catch rethrows
            if isinstance(value, ErrorRecord):
                raise PSError(value, script_terminating=True)
            msg = to_str(value) if value is not None else "ScriptHalted"
            raise PSError(ErrorRecord(msg, "System.Management.Automation.RuntimeException", msg,
                                      "OperationStopped", value, self.where(n)), script_terminating=True)
        self.unsupported("flow control %s" % kw, n)

    # -- pipelines ------------------------------------------------------------------------------
    def exec_pipeline(self, n):
        """A pipeline's output as a list (about_Pipelines)."""
        if n.type == "pipeline":
            kids = [c for c in n.children if c.type not in ("comment",)]
            if len(kids) == 1:
                return self.exec_pipeline(kids[0])
            self.unsupported("pipeline of %s" % ",".join(k.type for k in kids), n)
        if n.type == "assignment_expression":
            self.exec_assignment(n)
            return []
        if n.type in ("if_statement", "foreach_statement", "while_statement", "try_statement"):
            out = []
            self._exec_statement(n, out)
            return out
        if n.type == "pipeline_chain":
            elems = [c for c in n.children if c.type not in ("|", "comment")]
            if any(c.type in ("&&", "||") for c in n.children):
                self.unsupported("pipeline chain operator (PowerShell 7)", n)
            data = None
            for i, e in enumerate(elems):
                if e.type == "command":
                    data = self.run_command(e, data)
                else:
                    if i > 0:
                        self.unsupported("expression after |", e)
                    v = self.eval(e)
                    data = self.statement_output(v, e)
            return data
        # an expression used as a statement
        return self.statement_output(self.eval(n), n)

    def statement_output(self, v, node):
        if isinstance(v, _NoOutput):
            return []
        return list(enumerate_value(v))

    def exec_assignment(self, n):
        left = next(c for c in n.children if c.type == "left_assignment_expression")
        op = next(c for c in n.children if c.type == "assignement_operator").text.decode()
        right = n.child_by_field_name("value")
        if right.type in ("pipeline", "pipeline_chain"):
            # one expression that evaluates to an array keeps it (spec §7.11: `$a = @()` is an empty array)
            single = self._single_expression(right)
            if single is not None:
                value = self.eval(single)
                if isinstance(value, _NoOutput):
                    value = None
            else:
                value = collapse(self.exec_pipeline(right))
        elif right.type == "assignment_expression":
            self.unsupported("chained assignment", right)
        else:
            value = collapse(self.exec_pipeline(right))
        target = self._unwrap(left)
        if op != "=":
            current = self.eval(target)
            ops = {"+=": "+", "-=": "-", "*=": "*", "/=": "/", "%=": "%"}
            if op not in ops:
                self.unsupported("assignment operator %s" % op, n)
            value = self.binary(ops[op], current, value, n)
        self.assign(target, value)

    def _single_expression(self, right):
        """The expression when the right side is one expression (not a command pipeline)."""
        node = right
        if node.type == "pipeline":
            kids = [c for c in node.children if c.type != "comment"]
            if len(kids) != 1:
                return None
            node = kids[0]
        if node.type == "pipeline_chain":
            kids = [c for c in node.children if c.type not in ("comment",)]
            if len(kids) != 1 or kids[0].type == "command":
                return None
            return kids[0]
        return None

    def _unwrap(self, node):
        while node.type in _WRAPPERS or node.type == "left_assignment_expression":
            kids = [c for c in node.children if c.type != "comment"]
            if len(kids) != 1:
                break
            node = kids[0]
        return node

    def assign(self, target, value):
        t = target.type
        if t == "variable":
            self.set_var(target.text.decode(), value, target)
        elif t == "expression_with_unary_operator" and target.children[0].type == "cast_expression":
            self.assign(target.children[0], value)
        elif t == "cast_expression":
            tl = next(c for c in target.children if c.type == "type_literal")
            var = self._unwrap(target.children[-1])
            if var.type != "variable":
                self.unsupported("typed assignment to %s" % var.type, target)
            self.set_var(var.text.decode(), value, var, vtype=self.type_of_literal(tl))
        elif t == "member_access":
            obj = self.eval(target.children[0])
            name = self.member_name(target.children[-1])
            self.set_member(obj, name, value, target)
        elif t == "element_access":
            obj = self.eval(target.children[0])
            key = self.eval(target.children[2])
            if isinstance(obj, Hashtable):
                obj[key] = value
            elif isinstance(obj, list):
                # spec §7.1.4.1: the index converts to int; outside the array is an error
                i = self.convert(key, self.resolve_type("int"), target)
                if not -len(obj) <= i < len(obj):
                    raise self.error("Index was outside the bounds of the array.", target,
                                     "System.IndexOutOfRangeException", "System.IndexOutOfRangeException")
                obj[i] = value
            elif obj is None:
                raise self.error("Cannot index into a null array.", target)
            else:
                setter = getattr(obj, "ps_setindex", None)
                if setter is None:
                    self.unsupported("index assignment on %s" % type_name(obj), target)
                setter(key, value)
        elif t == "array_literal_expression":
            self.unsupported("multiple assignment", target)
        else:
            self.unsupported("assignment to %s" % t, target)

    def set_member(self, obj, name, value, node):
        if isinstance(obj, Hashtable):
            obj[name] = value
        elif isinstance(obj, PSObject):
            if name not in obj.props:
                raise self.error("The property '%s' cannot be found on this object. Verify that the property exists "
                                 "and can be set." % name, node, fqid="PropertyNotFound", category="InvalidOperation")
            obj.props[name] = value
        elif isinstance(obj, NetObject) and hasattr(obj, "ps_set"):
            obj.ps_set(name, value, self, node)
        elif obj is None:
            raise self.error("The property '%s' cannot be found on this object. Verify that the property exists and "
                             "can be set." % name, node, fqid="PropertyNotFound", category="InvalidOperation")
        else:
            self.unsupported("setting property %s on %s" % (name, type_name(obj)), node)

    # -- commands -------------------------------------------------------------------------------
    def run_command(self, n, input_items):
        invoke_op = next((c for c in n.children if c.type == "command_invokation_operator"), None)
        if invoke_op is not None and invoke_op.text.decode() == ".":
            self.unsupported("dot-sourcing", n)
        name_node = n.child_by_field_name("command_name")
        elements = n.child_by_field_name("command_elements")
        args, redirect = self.command_arguments(elements)
        if name_node.type == "command_name_expr":
            inner = name_node.children[0]
            if inner.type == "script_block_expression":
                if input_items is not None:
                    self.unsupported("piping into & { }", n)
                return self.invoke_scriptblock(self.eval(inner), [], new_scope=True)
            if inner.type == "command_name":
                name = inner.text.decode()
            elif inner.type == "path_command_name":
                if len(inner.children) == 1 and inner.children[0].type == "variable":
                    name = to_str(self.eval(inner.children[0]))
                elif not inner.children:
                    name = inner.text.decode()
                else:
                    self.unsupported("command name %s" % inner.text.decode(), inner)
            else:
                name = to_str(self.eval(inner))
        else:
            name = name_node.text.decode()
        low = name.lower()
        if low in self.functions:
            if input_items is not None:
                self.unsupported("piping into a function", n)
            if redirect:
                self.unsupported("redirection of a function", n)
            return self.call_function(self.functions[low], args, n)
        if low in self.cmdlets:
            if redirect:
                self.unsupported("redirection %s of a cmdlet" % redirect, n)
            return self.cmdlets[low].invoke(self, args, input_items, n)
        if self.host is not None:
            native = self.host.resolve_native(self, name, n)
            if native is not None:
                return self.run_native(native, name, args, redirect, input_items, n)
        raise self.error("The term '%s' is not recognized as the name of a cmdlet, function, script file, or operable "
                         "program. Check the spelling of the name, or if a path was included, verify that the path "
                         "is correct and try again." % name, n,
                         "System.Management.Automation.CommandNotFoundException", "CommandNotFoundException",
                         "ObjectNotFound", target=name)

    def command_arguments(self, elements):
        """-> ([('param', name, value_or_MISSING) | ('arg', value) | ('splat', value)], redirection)."""
        args = []
        redirect = None
        if elements is None:
            return args, redirect
        kids = [c for c in elements.children if c.type not in ("command_argument_sep", "comment")]
        i = 0
        while i < len(kids):
            c = kids[i]
            if c.type == "command_parameter":
                text = c.text.decode()
                if text.endswith(":"):
                    args.append(("param", text[1:-1], self.eval(kids[i + 1])))
                    i += 2
                    continue
                args.append(("param", text[1:], MISSING))
            elif c.type == "redirection":
                r = c.text.decode().replace(" ", "")
                if r != "2>&1":
                    self.unsupported("redirection %s" % r, c)
                redirect = r
            elif c.type == "generic_token":
                args.append(("arg", c.text.decode()))
            elif c.type == "stop_parsing":
                self.unsupported("--%", c)
            elif c.type == "argument_list":
                # "New-Object T(a, b)": the parenthesized list right after a word is one array argument
                ael = c.child_by_field_name("argument_expression_list") or _child(c, "argument_expression_list")
                args.append(("arg", [self.eval(a) for a in (ael.children if ael is not None else [])
                                     if a.type == "argument_expression"]))
            else:
                inner = self._unwrap(c)
                if inner.type == "variable" and inner.text.decode().startswith("@"):
                    args.append(("splat", self.get_var("$" + inner.text.decode()[1:], inner)))
                elif inner.type == "array_literal_expression":
                    # "tool a,b": Windows PowerShell 5.1 marks the parameter ArrayIsSingleArgumentForNativeCommand
                    # and writes the elements joined by commas (NativeCommandParameterBinder.BindParameters)
                    args.append(("arg", self.eval(c), "comma"))
                else:
                    args.append(("arg", self.eval(c)))
            i += 1
        return args, redirect

    def call_function(self, fn, args, node):
        """about_Functions: a function runs in a new child scope; output is everything its
        statements write (return only ends it)."""
        decl = next((c for c in fn.children if c.type == "function_parameter_declaration"), None)
        body = next(c for c in fn.children if c.type == "script_block")
        params = []
        if decl is not None:
            params = self._param_list(next((c for c in decl.children if c.type == "parameter_list"), None))
        inner_params = next((c for c in body.children if c.type == "param_block"), None)
        if inner_params is not None:
            params = self._param_list(_child(inner_params, "parameter_list"))
        named, positional = self._split_args(args, node)
        scope = Scope(self.scope)
        scope.vars["args"] = Variable([])
        saved_adv = getattr(self, "cmdlet_binding", False)
        self._bind(params, positional, named, scope, "function", node)
        saved = self.scope
        self.scope = scope
        try:
            return self._exec_script_block_body(body)
        except _Return as r:
            return r.output
        finally:
            self.scope = saved
            self.cmdlet_binding = saved_adv

    def _split_args(self, args, node):
        named, positional = {}, []
        pending = None
        for a in args:
            if a[0] == "param":
                if pending is not None:
                    named[pending] = SwitchValue(True)
                if a[2] is MISSING:
                    pending = a[1]
                else:
                    named[a[1]] = a[2]
                    pending = None
            elif a[0] == "splat":
                if isinstance(a[1], Hashtable):
                    for k, v in a[1].items():
                        named[k] = v
                else:
                    positional.extend(enumerate_value(a[1]) if a[1] is not None else [])
            else:
                if pending is not None:
                    named[pending] = a[1]
                    pending = None
                else:
                    positional.append(a[1])
        if pending is not None:
            named[pending] = SwitchValue(True)
        return named, positional

    def _exec_script_block_body(self, sb):
        body = sb.child_by_field_name("script_block_body")
        if body is None:
            body = next((c for c in sb.children if c.type == "script_block_body"), None)
        if body is None:
            return []
        sl = body.child_by_field_name("statement_list")
        for c in body.children:
            if c.type not in ("statement_list", "comment"):
                self.unsupported("%s in a script block" % c.type, c)
        return self.exec_list(sl) if sl is not None else []

    def invoke_scriptblock(self, sb, dollar_under, new_scope=True, current=MISSING):
        """& { } runs in a new child scope (about_Scopes); ForEach-Object/Where-Object blocks run in
        the caller's scope with $_ set (about_Automatic_Variables, $_)."""
        inner = next(c for c in sb.node.children if c.type == "script_block")
        if any(c.type == "param_block" for c in inner.children):
            self.unsupported("param() in a script block", inner)
        saved = self.scope
        if new_scope:
            self.scope = Scope(self.scope)
        saved_under = self.scope.vars.get("_")
        if current is not MISSING:
            self.scope.vars["_"] = Variable(current)
        try:
            return self._exec_script_block_body(inner)
        except _Return as r:
            return r.output
        finally:
            if current is not MISSING:
                if saved_under is None:
                    self.scope.vars.pop("_", None)
                else:
                    self.scope.vars["_"] = saved_under
            self.scope = saved

    def native_arguments(self, args, node):
        r"""The ``Arguments`` string Windows PowerShell 5.1 builds for a native program
        (PowerShell's src/System.Management.Automation/engine/NativeCommandParameterBinder.cs,
        BindParameters / AppendOneNativeArgument; PowerShell 7.3+ keeps 5.1's way as
        $PSNativeCommandArgumentPassing = 'Legacy': about_Parsing, "Passing arguments that contain quote
        characters", and about_Preference_Variables; minus the later PowerShell 6 change below):

        - the parameters are joined by one space; a parameter token (``-xf``, ``-name:``) is written as typed;
        - each value is converted to text; an EMPTY string (``''``, ``$null``) is not written at all (the
          program sees no argument: ``if (!String.IsNullOrEmpty(arg))``);
        - an array is written element by element, separated by a space (a comma for a literal ``a,b`` in
          the command), empty elements dropped;
        - a value is wrapped in double quotes only when it has white space outside an even number of
          double quotes; embedded double quotes are NOT escaped, and a trailing backslash inside the
          added quotes is NOT doubled (PowerShell/PowerShell#4965, 2017, added the doubling for
          PowerShell 6; PowerShell/PowerShell#7400 shows 5.1.17134 passing ``"C:\Program Files\"`` so that
          the program reads ``C:\Program Files"``; #26432: 7.x Legacy differs from 5.1 exactly there).
          Every double quote counts (7.x's NeedQuotes skips a quote after a backslash; whether 5.1 does is
          not known here).
        """
        out = []
        first = True
        for a in args:
            if not first:
                out.append(" ")
            first = False
            if a[0] == "param":
                if a[2] is MISSING:
                    out.append("-" + a[1])
                else:
                    out.append("-%s:" % a[1])
                    self._native_value(out, a[2], " ")
            elif a[0] == "splat":
                if isinstance(a[1], Hashtable):
                    self.unsupported("splatting a hashtable into a native program", node)
                # an array splatted into a command: each element one argument
                items = enumerate_value(a[1]) if a[1] is not None else []
                for j, v in enumerate(items):
                    if j:
                        out.append(" ")
                    self._native_value(out, v, " ")
            else:
                self._native_value(out, a[1], "," if len(a) > 2 and a[2] == "comma" else " ")
        return "".join(out)

    @staticmethod
    def _native_value(out, value, separator):
        if isinstance(value, list):
            values = value
        else:
            enum = getattr(value, "ps_enumerate", None)
            values = enum() if enum is not None else [value]
        need_separator = False
        for v in values:
            text = to_str(v) if v is not None else ""
            if text == "":
                continue  # 5.1: String.IsNullOrEmpty(arg) -> nothing written
            if need_separator:
                out.append(separator)
            need_separator = True
            quotes, need_quotes = 0, False
            for ch in text:
                if ch == '"':
                    quotes += 1
                elif ch.isspace() and quotes % 2 == 0:
                    need_quotes = True
            out.append('"%s"' % text if need_quotes else text)

    def run_native(self, native, name, args, redirect, input_items, node):
        """A native program: Windows PowerShell 5.1 gives it ONE command line (native_arguments; the
        host quotes the program path in front and the program splits the line by its own rules);
        $LASTEXITCODE is its exit code; with 2>&1 each stderr line is an ErrorRecord (NativeCommandError)
        in the output, and under Windows PowerShell 5.1 an $ErrorActionPreference of Stop makes the first
        one a terminating error (about_Redirection; PowerShell 7.2 changed this, about_Preference_Variables
        $PSNativeCommandUseErrorActionPreference)."""
        if input_items is not None:
            self.unsupported("piping into a native program", node)
        if redirect != "2>&1":
            self.unsupported("a native program without 2>&1", node)
        arguments = self.native_arguments(args, node)
        rc, out, err = native(arguments)
        self.global_scope.vars["lastexitcode"] = Variable(rc)
        result = [line for line in out.splitlines()]
        for line in err.splitlines():
            rec = ErrorRecord(line, "System.Management.Automation.RemoteException", "NativeCommandError",
                              "NotSpecified", line, self.where(node))
            if self.preference() == "stop":
                raise PSError(rec, script_terminating=True)
            result.append(rec)
        return result

    # -- expressions ------------------------------------------------------------------------------
    def eval(self, n):
        t = n.type
        if t in _WRAPPERS or t == "pipeline" or t == "left_assignment_expression":
            kids = [c for c in n.children if c.type != "comment"]
            if len(kids) == 1:
                return self.eval(kids[0])
            if t == "array_literal_expression":
                return [self.eval(c) for c in kids if c.type != ","]
            if t in ("pipeline", "pipeline_chain"):
                return collapse(self.exec_pipeline(n))
            if len(kids) == 3:
                return self.binary_node(n, kids)
            self.unsupported("expression %s" % t, n)
        m = getattr(self, "ev_" + t, None)
        if m is None:
            self.unsupported("expression %s" % t, n)
        return m(n)

    def ev_variable(self, n):
        text = n.text.decode()
        if text.startswith("@"):
            self.unsupported("splatting outside a command", n)
        return self.get_var(text, n)

    def ev_integer_literal(self, n):
        text = n.text.decode().lower()
        mult = 1
        for suffix, m in (("kb", 1024), ("mb", 1024 ** 2), ("gb", 1024 ** 3)):
            if text.endswith(suffix):
                text, mult = text[:-2], m
        if text.endswith("l"):
            text = text[:-1]
        return (int(text, 16) if text.startswith("0x") else int(text)) * mult

    def ev_real_literal(self, n):
        return float(n.text.decode())

    def ev_string_literal(self, n):
        c = n.children[0]
        text = c.text.decode()
        if c.type == "verbatim_string_characters":
            return text[1:-1].replace("''", "'")
        if c.type == "verbatim_here_string_characters":
            return _here_body(text)
        if c.type in ("expandable_string_literal", "expandable_here_string_literal"):
            return self.expand(c, here=c.type == "expandable_here_string_literal")
        self.unsupported("string %s" % c.type, n)

    def expand(self, node, here=False):
        """about_Quoting_Rules: $name, ${name}, $(...) expand; backtick escapes; "" is one quote."""
        src = self.text
        start, end = node.start_byte, node.end_byte
        if here:
            raw = src[start:end].decode()
            first_nl = raw.index("\n") + 1
            body_start = start + len(raw[:first_nl].encode())
            body_end = start + len(raw[:raw.rindex("\n")].encode())
            if raw[:raw.rindex("\n")].endswith("\r"):
                body_end -= 1
        else:
            body_start, body_end = start + 1, end - 1
        parts = []
        pos = body_start
        for c in node.children:
            if c.start_byte < body_start or c.end_byte > body_end:
                continue
            parts.append(_unescape(src[pos:c.start_byte].decode(), here))
            if c.type == "variable":
                v = self.get_var(c.text.decode(), c)
            elif c.type == "sub_expression":
                v = collapse(self._sub_output(c))
            else:
                self.unsupported("%s in a string" % c.type, c)
            parts.append(to_str(v, to_str(self.get_var("OFS")) if self.get_var("OFS") is not None else " "))
            pos = c.end_byte
        parts.append(_unescape(src[pos:body_end].decode(), here))
        return "".join(parts)

    def _sub_output(self, n):
        sl = n.child_by_field_name("statements") or next((c for c in n.children if c.type == "statement_list"), None)
        return self.exec_list(sl) if sl is not None else []

    def ev_sub_expression(self, n):
        return collapse(self._sub_output(n))

    def ev_array_expression(self, n):
        """@( ... ): the statements' output, always an array (spec §7.1.7)."""
        sl = next((c for c in n.children if c.type == "statement_list"), None)
        return list(self.exec_list(sl)) if sl is not None else []

    def ev_parenthesized_expression(self, n):
        inner = next(c for c in n.children if c.type not in ("(", ")"))
        single = self._single_expression(inner) if inner.type == "pipeline" else None
        if single is not None:
            v = self.eval(single)
            return None if isinstance(v, _NoOutput) else v
        return collapse(self.exec_pipeline(inner))

    def ev_hash_literal_expression(self, n):
        h = Hashtable()
        body = next((c for c in n.children if c.type == "hash_literal_body"), None)
        for e in (body.children if body is not None else []):
            if e.type != "hash_entry":
                continue
            key_node = next(c for c in e.children if c.type == "key_expression")
            kn = key_node.children[0]
            key = kn.text.decode() if kn.type == "simple_name" else self.eval(kn)
            value_node = [c for c in e.children if c.type not in ("key_expression", "=", ";", "comment")][0]
            if key in h:
                raise self.error("Duplicate keys '%s' are not allowed in hash literals." % key, e,
                                 fqid="DuplicateKeyInHashLiteral", category="ParserError")
            if value_node.type == "pipeline":
                single = self._single_expression(value_node)
                v = self.eval(single) if single is not None else collapse(self.exec_pipeline(value_node))
            else:
                v = collapse(self.exec_pipeline(value_node)) if value_node.type in (
                    "if_statement",) else self.eval(value_node)
            h[key] = None if isinstance(v, _NoOutput) else v
        return h

    def ev_script_block_expression(self, n):
        return ScriptBlock(n, n.text.decode())

    def ev_type_literal(self, n):
        return self.type_of_literal(n)

    def type_of_literal(self, tl):
        spec = next(c for c in tl.children if c.type in ("type_spec",))
        return self.resolve_type(spec.text.decode(), tl)

    def member_name(self, node):
        c = node.children[0] if node.children else node
        if c.type == "simple_name":
            return c.text.decode()
        return to_str(self.eval(c))

    def ev_member_access(self, n):
        obj_node, op, name_node = n.children[0], n.children[1].type, n.children[2]
        name = self.member_name(name_node)
        if op == "::":
            t = self.eval(obj_node)
            return t.static_get(self, name, n)
        obj = self.eval(obj_node)
        return self.get_member(obj, name, n)

    def get_member(self, obj, name, node):
        """Property access (about_Properties): hashtable keys before its own properties; $null and a
        missing property give $null; on an array, member enumeration (PowerShell 3.0) collects the
        property of each element unless the array itself has it (Count, Length)."""
        low = name.lower()
        if obj is None:
            return None
        if isinstance(obj, Hashtable):
            if name in obj:
                return obj[name]
            if low == "count":
                return len(obj)
            if low == "keys":
                return list(obj.keys())
            if low == "values":
                return list(obj.values())
            return None
        if isinstance(obj, PSObject):
            return obj.props.get(name)
        if isinstance(obj, list):
            if low in ("count", "length"):
                return len(obj)
            out = []
            for item in obj:
                v = self.get_member(item, name, node)
                if v is not None:
                    out.extend(v if isinstance(v, list) else [v])
            return collapse(out) if len(out) != 1 else out[0]
        if isinstance(obj, str):
            if low == "length":
                return len(obj)
            if low == "count":
                return 1
            return None
        if isinstance(obj, ErrorRecord):
            if low == "exception":
                return ExceptionObject(obj)
            if low == "targetobject":
                return obj.target
            if low == "fullyqualifiederrorid":
                return obj.fqid
            return None
        if isinstance(obj, PSEnum):
            if low == "value__":
                return obj.value
            return None
        if isinstance(obj, NetObject):
            v = obj.ps_get(name)
            if v is MISSING:
                return 1 if low == "count" else None
            return v
        if low == "count":
            return 1
        return None

    def ev_element_access(self, n):
        obj = self.eval(n.children[0])
        key = self.eval(n.children[2])
        return self.index(obj, key, n)

    def index(self, obj, key, node):
        """spec §7.1.4: arrays by position (negative from the end, out of range is $null), hashtables
        by key, strings give a char."""
        if obj is None:
            raise self.error("Cannot index into a null array.", node, fqid="NullArray", category="InvalidOperation")
        if isinstance(key, list):
            return [self.index(obj, k, node) for k in key]
        if isinstance(obj, Hashtable):
            return obj.get(key)
        if isinstance(obj, PSObject):
            return obj.props.get(key)
        if isinstance(obj, (list, str)):
            i = int(self.convert(key, self.resolve_type("int"), node))
            if -len(obj) <= i < len(obj):
                return obj[i]
            return None
        getter = getattr(obj, "ps_index", None)
        if getter is not None:
            return getter(key)
        if isinstance(key, int):
            return obj if key in (0, -1) else None
        self.unsupported("indexing %s" % type_name(obj), node)

    def ev_invokation_expression(self, n):
        kids = n.children
        target, op, name_node = kids[0], kids[1].type, kids[2]
        args_node = next(c for c in kids if c.type == "argument_list")
        name = self.member_name(name_node)
        args = []
        ael = args_node.child_by_field_name("argument_expression_list")
        if ael is not None:
            for c in ael.children:
                if c.type == "argument_expression":
                    args.append(self.eval(c))
        if op == "::":
            from .builtins import VOID
            t = self.eval(target)
            result = t.static_call(self, name, args, n)
            return _NoOutput() if result is VOID else result
        obj = self.eval(target)
        return self.call_method(obj, name, args, n)

    def call_method(self, obj, name, args, node):
        """A void method writes nothing to the pipeline (spec §7.1.3: the value of a void call is
        nothing, so `$list.Add(1)` as a statement outputs nothing)."""
        from .builtins import VOID, call_method
        result = call_method(self, obj, name, args, node)
        return _NoOutput() if result is VOID else result

    def ev_cast_expression(self, n):
        tl = next(c for c in n.children if c.type == "type_literal")
        t = self.type_of_literal(tl)
        operand = n.children[-1]
        if t.name.lower() == "ref":
            var = self._unwrap(operand)
            if var.type != "variable":
                self.unsupported("[ref] of %s" % var.type, operand)
            vt = var.text.decode()
            return RefValue(lambda: self.get_var(vt, var), lambda v: self.set_var(vt, v, var))
        value = self.eval(operand)
        return self.convert(value, t, n)

    def ev_expression_with_unary_operator(self, n):
        op = n.children[0]
        if op.type == "cast_expression":
            return self.ev_cast_expression(op)
        o = op.text.decode().lower()
        if len(n.children) < 2:
            return self.eval(op)
        v = self.eval(n.children[1])
        if o in ("-not", "!"):
            return not is_true(v)
        if o == "-":
            return -self.to_number(v, n)
        if o == "+":
            return self.to_number(v, n)
        if o == ",":
            return [v]
        if o == "-join":
            return "".join(to_str(i) for i in enumerate_value(v))
        self.unsupported("unary operator %s" % o, n)

    def ev_post_increment_expression(self, n):
        var = n.children[0]
        v = self.eval(var)
        self.assign(self._unwrap(var), (self.to_number(v, n) if v is not None else 0) + 1)
        return _NoOutput()

    def ev_post_decrement_expression(self, n):
        var = n.children[0]
        v = self.eval(var)
        self.assign(self._unwrap(var), (self.to_number(v, n) if v is not None else 0) - 1)
        return _NoOutput()

    def ev_pre_increment_expression(self, n):
        self.unsupported("++$x", n)

    def ev_range_expression(self, n):
        self.unsupported("range", n)

    def ev_if_statement(self, n):
        return collapse(self.exec_if(n))

    def ev_assignment_expression(self, n):
        self.exec_assignment(n)
        return _NoOutput()

    # -- operators (about_Operators, about_Comparison_Operators, about_Arithmetic_Operators) -----
    def binary_node(self, n, kids):
        op_node = kids[1]
        op = op_node.text.decode().lower()
        if op in ("-and", "-or"):
            left = is_true(self.eval(kids[0]))
            if op == "-and":
                return left and is_true(self.eval(kids[2]))
            return left or is_true(self.eval(kids[2]))
        if op in ("-is", "-isnot", "-as"):
            left = self.eval(kids[0])
            t = self.eval(kids[2])
            if not hasattr(t, "is_instance"):
                t = self.resolve_type(to_str(t), n)
            if op == "-as":
                try:
                    return self.convert(left, t, n)
                except PSError:
                    return None
            r = t.is_instance(left)
            return r if op == "-is" else not r
        left = self.eval(kids[0])
        right = self.eval(kids[2])
        return self.binary(op, left, right, n)

    def binary(self, op, left, right, node):
        from .builtins import binary
        return binary(self, op, left, right, node)

    def to_number(self, v, node):
        from .builtins import to_number
        return to_number(self, v, node)


class _NoOutput(object):
    """What an assignment or ++ used as an expression writes: nothing."""


class ExceptionObject(NetObject):
    ps_props = ("Message",)

    def __init__(self, record):
        self.record = record
        self.Message = record.message
        self.type_name = record.exception_type


def _child(node, kind):
    return next((c for c in node.children if c.type == kind), None)


def _here_body(text):
    body = text[text.index("\n") + 1:text.rindex("\n")]
    return body[:-1] if body.endswith("\r") else body


_ESCAPES = {"0": "\0", "a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"}


def _unescape(text, here=False):
    out = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch == "`" and i + 1 < len(text):
            nxt = text[i + 1]
            out.append(_ESCAPES.get(nxt, nxt))
            i += 2
            continue
        if ch == '"' and not here and i + 1 < len(text) and text[i + 1] == '"':
            out.append('"')
            i += 2
            continue
        out.append(ch)
        i += 1
    return "".join(out)


def like_to_regex(pattern):
    """about_Wildcards: * ? [a-z]; the whole string must match."""
    return re.compile(fnmatch.translate(pattern).replace("(?s:", "(?si:", 1), re.I | re.S)
