# Test-lab only: the common runner of the ansible.windows stand-in modules.
"""Run a stand-in module with exactly the options of the real ansible.windows (or community.windows) module.

The argument spec is built at run time from the real module's DOCUMENTATION (the installed
collection, found on sys.path, skipping the stand-ins). Like on Windows, modules written with
Ansible.Basic reject unknown options ("Unsupported parameters for (x) module"), while the legacy
``Parse-Args`` modules (win_file, win_copy, win_shell, win_acl, slurp, ...) silently ignore them.
"""

from __future__ import annotations

import ast
import json
import os
import re
import sys
import traceback

import yaml
from ansible.module_utils.basic import AnsibleModule, remove_values
from ansible_collections.ansible.windows.plugins.module_utils import winsim_kubelet_status
from ansible_collections.ansible.windows.plugins.module_utils.winsim_host import Host, SimError

STANDIN_MARKER = "WINSIM_STANDIN"


def real_collection_dir(collection="ansible.windows"):
    """The installed (real) collection, never a stand-in."""
    override = os.environ.get("KUBEWIN_SIM_REAL_WINDOWS") if collection == "ansible.windows" else None
    candidates = [override] if override else []
    for entry in sys.path:
        candidates.append(os.path.join(entry, "ansible_collections", *collection.split(".")))
    for c in candidates:
        if c and os.path.isdir(os.path.join(c, "plugins", "modules")) \
                and not os.path.exists(os.path.join(c, STANDIN_MARKER)):
            return c
    raise SimError("winsim: the real %s collection is not installed in this Python (%s)" % (collection, sys.executable))


def _doc_of_py(path, name="DOCUMENTATION"):
    with open(path) as f:
        tree = ast.parse(f.read())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == name for t in node.targets):
            return yaml.safe_load(node.value.value)
        if isinstance(node, ast.ClassDef):  # doc fragments: class ModuleDocFragment
            for sub in node.body:
                if isinstance(sub, ast.Assign) and any(getattr(t, "id", None) == name for t in sub.targets):
                    return yaml.safe_load(sub.value.value)
    return None


def _fragment(real_dir, ref, collection="ansible.windows"):
    """Options of a doc fragment such as ansible.windows.web_request or web_request.OTHER."""
    ref = ref.strip()
    parts = ref.split(".")
    attr = "DOCUMENTATION"
    if len(parts) in (2, 4) and parts[-1].isupper():
        attr, parts = parts[-1], parts[:-1]
    if len(parts) == 3 and parts[:2] == collection.split("."):
        path = os.path.join(real_dir, "plugins", "doc_fragments", parts[2] + ".py")
    elif len(parts) == 3 and parts[:2] == ["ansible", "builtin"] or len(parts) == 1:
        import ansible.plugins.doc_fragments as frag
        path = os.path.join(os.path.dirname(frag.__file__), parts[-1] + ".py")
    else:
        return {}
    if not os.path.exists(path):
        return {}
    return (_doc_of_py(path, attr) or {}).get("options") or {}


def real_documentation(module, collection="ansible.windows"):
    real_dir = real_collection_dir(collection)
    base = os.path.join(real_dir, "plugins", "modules", module)
    if os.path.exists(base + ".py"):
        doc = _doc_of_py(base + ".py")
    elif os.path.exists(base + ".yml"):
        with open(base + ".yml") as f:
            doc = (yaml.safe_load(f) or {}).get("DOCUMENTATION")
            if isinstance(doc, str):
                doc = yaml.safe_load(doc)
    else:
        raise SimError("winsim: %s.%s has no documentation in %s" % (collection, module, real_dir))
    options = {}
    frags = doc.get("extends_documentation_fragment") or []
    for ref in [frags] if isinstance(frags, str) else frags:
        options.update(_fragment(real_dir, ref, collection))
    options.update(doc.get("options") or {})
    legacy = False
    if os.path.exists(base + ".ps1"):
        with open(base + ".ps1", errors="replace") as f:
            legacy = re.search(r"^\s*\$params\s*=\s*Parse-Args", f.read(), re.M | re.I) is not None
    return options, legacy


def spec_from_options(options):
    spec = {}
    for name, o in options.items():
        o = o or {}
        entry = {"type": o.get("type", "str")}
        if entry["type"] == "raw" and "elements" not in o:
            entry = {"type": "raw"}
        for key in ("required", "default", "choices", "elements", "aliases", "no_log"):
            if key in o:
                entry[key] = o[key]
        if o.get("suboptions") or o.get("options"):
            entry["options"] = spec_from_options(o.get("suboptions") or o.get("options"))
        if "password" in name and "no_log" not in entry:
            entry["no_log"] = True  # the real modules mark these no_log in their PowerShell spec
        if entry.get("type") == "path":
            entry["type"] = "str"  # Windows paths: the posix 'path' type would expand ~ and $VARS
        spec[name] = entry
    return spec


class StandIn(object):
    """What a stand-in module's body receives: params, check mode, the host, and result helpers."""

    def __init__(self, module, host):
        self.module = module
        self.params = module.params
        self.check_mode = module.check_mode
        self.host = host
        self.state = host.state
        self.result = {"changed": False}
        self.warnings = []


def run(name, body, check_mode="full", internal=None, mutually_exclusive=None, required_one_of=None, doc_module=None,
        collection="ansible.windows"):
    """Entry point of every stand-in module.

    ``body(sim)`` mutates ``sim.host.state`` / files and fills ``sim.result``; it raises SimError for a
    Windows-side failure. ``check_mode`` is the real module's support (full|partial|none);
    ``internal`` are option specs the real action plugin passes besides the documented ones;
    ``collection`` is the real collection whose documentation gives the options.
    """
    try:
        options, legacy = real_documentation(doc_module or name, collection)
        options.pop("free_form", None)  # documentation-only placeholder for _raw_params
        spec = spec_from_options(options)
    except SimError as e:
        print(json.dumps({"failed": True, "msg": str(e)}))
        sys.exit(1)
    spec.update(internal or {})
    raw_args = _raw_args()
    unknown = sorted(k for k in raw_args if not k.startswith("_ansible_") and k not in spec
                     and not any(k in (v.get("aliases") or []) for v in spec.values()))
    if unknown and not legacy:
        print(json.dumps({"failed": True, "msg": "Unsupported parameters for (%s) module: %s. Supported parameters "
                          "include: %s" % (name, ", ".join(unknown), ", ".join(sorted(spec)))}))
        sys.exit(1)
    for k in unknown:  # legacy Parse-Args ignores what it does not read
        spec[k] = {"type": "raw"}
    module = AnsibleModule(argument_spec=spec, supports_check_mode=(check_mode != "none"),
                           mutually_exclusive=mutually_exclusive, required_one_of=required_one_of)
    try:
        host = Host.from_env()
        log_module_args(host, name, module)  # also when the module then fails, as Ansible.Basic does
        with host.open():
            host.fault(name)
            sim = StandIn(module, host)
            try:
                body(sim)
            finally:
                # The kubelet posts its Ready condition when it changed (winsim_kubelet_status).
                winsim_kubelet_status.sync(host)
    except SimError as e:
        module.fail_json(msg=str(e))
    except Exception as e:  # a simulator bug: show it plainly
        module.fail_json(msg="winsim internal error in %s: %s" % (name, e), exception=traceback.format_exc())
    result = sim.result
    if sim.warnings:
        result.setdefault("warnings", []).extend(sim.warnings)
    if result.get("failed") and "msg" in result:
        module.fail_json(**result)
    module.exit_json(**result)


MODULE_ARGS_LOG = "module_args.log"


def log_module_args(host, name, module):
    """What the Windows side holds of a module's arguments where others can read it: Ansible.Basic puts
    ``invocation.module_args`` (every option after validation, no_log values replaced) into each result it
    prints, whatever the task's no_log (ansible-core module_utils/csharp/Ansible.Basic.cs, the
    AnsibleModule constructor: ``Result["invocation"] = RemoveNoLogValues(invocation, noLogValues)``), and
    writes the same options to the Application event log ("Invoked with") unless the task is no_log; the
    exec wrapper also parses them with cmdlets that PowerShell module logging (event 4103) records. One
    JSON line per module run, next to processes.log, so tests can look for secrets there."""
    record = {"module": name, "no_log": bool(module.no_log),
              "module_args": remove_values(module.params, module.no_log_values)}
    with open(os.path.join(host.dir, MODULE_ARGS_LOG), "a") as f:
        f.write(json.dumps(record, sort_keys=True) + "\n")


def module_args_records(root, name):
    """Every record log_module_args wrote for host ``name`` under the lab's ``root``."""
    path = os.path.join(root, "hosts", name, MODULE_ARGS_LOG)
    if not os.path.exists(path):
        return []
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]


def _raw_args():
    """The task's arguments as the module received them (before AnsibleModule validation)."""
    from ansible.module_utils import basic
    try:
        from ansible.module_utils.basic import _load_params
        return _load_params()
    except Exception:
        return getattr(basic, "_ANSIBLE_ARGS", None) or {}
