# -*- coding: utf-8 -*-
"""Figures of the tree's layout (issue 18's "Done means"), for the working tree or any git revision:

    .venv/core-2.19/bin/python bench/layout.py [REV ...]

- lines of Python, PowerShell, YAML and Jinja per top-level folder (and plugins/ per subfolder);
- per module, the module_utils files it ships to the host it runs on and their lines, computed by
  ansible-core's own AnsiballZ finder (as tests/unit/test_shipped_module_utils.py does);
- the largest files under plugins/;
- the public filter plugins (plugins/filter/*.yml: one documentation file per filter).

A report, not a test: nothing is asserted here (the unit tests assert the rules).
"""

import os
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = (".py", ".ps1", ".yml", ".yaml", ".j2", ".md")
FINDER = ROOT / "tests" / "unit" / "test_shipped_module_utils.py"


def lines(path):
    with open(path, "rb") as f:
        return sum(1 for dummy in f)


def files(tree):
    for dirpath, dirnames, names in os.walk(tree):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d not in ("_run", "_cache", "__pycache__")]
        for name in names:
            if name.endswith(SUFFIXES):
                yield Path(dirpath) / name


def folders(tree):
    count = Counter()
    for path in files(tree):
        rel = path.relative_to(tree).parts
        key = "/".join(rel[:2]) if rel[0] == "plugins" and len(rel) > 2 else rel[0] if len(rel) > 1 else "."
        count[key] += lines(path)
    return count


def shipped(tree):
    """{module: [(file, lines)]} through the finder script of test_shipped_module_utils.py."""
    text = FINDER.read_text()
    finder = text.split('FINDER = r"""', 1)[1].split('"""', 1)[0]
    with tempfile.TemporaryDirectory() as tmp:
        link = Path(tmp) / "ansible_collections" / "kubewin"
        link.mkdir(parents=True)
        (link / "nodes").symlink_to(tree)
        names = sorted(p.stem for p in (tree / "plugins" / "modules").glob("*.py") if p.stem != "__init__")
        out = subprocess.run([sys.executable, "-c", finder, tmp, str(tree / "plugins" / "modules")] + names,
                             capture_output=True, text=True, check=True).stdout
    import json
    mu = tree / "plugins" / "module_utils"
    return {m: [(f, lines(mu / f)) for f in fs if (mu / f).is_file()] for m, fs in json.loads(out).items()}


def report(tree, title):
    print("== %s ==" % title)
    print("lines per folder (.py .ps1 .yml .j2 .md):")
    for key, n in sorted(folders(tree).items()):
        print("  %-28s %6d" % (key, n))
    print("module_utils files shipped per module (files, lines):")
    for module, fs in sorted(shipped(tree).items()):
        total = sum(n for dummy, n in fs)
        print("  %-24s %2d %5d  %s" % (module, len(fs), total, " ".join(f for f, dummy in fs)))
    print("largest files under plugins/:")
    sizes = sorted(((lines(p), str(p.relative_to(tree))) for p in files(tree / "plugins")), reverse=True)
    for n, rel in sizes[:8]:
        print("  %5d %s" % (n, rel))
    over = [rel for n, rel in sizes if rel.endswith(".py") and n > 400]
    print("Python files under plugins/ over 400 lines: %s" % (", ".join(over) or "none"))
    filters = sorted(p.stem for p in (tree / "plugins" / "filter").glob("*.yml")) \
        if (tree / "plugins" / "filter").is_dir() else []
    print("public filters (%d): %s" % (len(filters), " ".join(filters)))
    print()


def main(revs):
    if not revs:
        report(ROOT, "working tree")
    for rev in revs:
        with tempfile.TemporaryDirectory() as tmp:
            archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev], capture_output=True, check=True)
            subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
            report(Path(tmp), rev)


if __name__ == "__main__":
    main(sys.argv[1:])
