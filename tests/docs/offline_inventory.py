"""Write the docs site's intersphinx inventories, so that `make docs` builds without network access.

Usage: python tests/docs/offline_inventory.py SITE   (SITE: the directory `antsibull-docs sphinx-init` wrote)

The generated conf.py maps python2, python3, jinja2 and ansible_devel to inventories on the web, each with a
local file beside rst/ (`../<name>.inv`) as the fallback Sphinx reads when the web one cannot be fetched.
This writes those fallbacks: python2, python3 and jinja2 empty, ansible_devel with only the labels outside
this collection that the generated pages reference and that are known here: the ansible-core pages in
CORE_LABELS and other collections' plugin pages (`ansible_collections.<ns>.<name>.<plugin>_<type>`), at
their addresses on docs.ansible.com. Any other label, this collection's own included, is left for Sphinx
to resolve, and the build, run with -W, fails on one it cannot.
"""

import glob
import os
import re
import sys
import zlib

COLLECTION = "kubewin.nodes"
# ansible-core's pages that antsibull-docs' templates link to: label -> (page and anchor, title).
CORE_LABELS = {
    "action_plugins": ("plugins/action.html#action-plugins", "Action plugins"),
    "ansible_configuration_settings": ("reference_appendices/config.html#ansible-configuration-settings",
                                       "Ansible Configuration Settings"),
    "common_return_values": ("reference_appendices/common_return_values.html#common-return-values",
                             "Return Values"),
}
PLUGIN_LABEL = re.compile(r"^ansible_collections\.([a-z0-9_]+)\.([a-z0-9_]+)\.([a-z0-9_]+)_([a-z]+)$")
REF = re.compile(r":ref:`(?:[^`<]*<([^`>]+)>|([^`<>]+))`")
EMPTY = ("python2", "python3", "jinja2")


def referenced_labels(rst_dir):
    """Every label a :ref: role names in the generated pages."""
    labels = set()
    for path in glob.glob(os.path.join(rst_dir, "**", "*.rst"), recursive=True):
        with open(path, encoding="utf-8") as f:
            for explicit, plain in REF.findall(f.read()):
                labels.add((explicit or plain).strip())
    return labels


def external_entries(labels):
    """(label, page and anchor, title) of the labels this file knows to be on docs.ansible.com."""
    entries = []
    for label in sorted(labels):
        if label in CORE_LABELS:
            entries.append((label,) + CORE_LABELS[label])
            continue
        match = PLUGIN_LABEL.match(label)
        if match and "%s.%s" % match.group(1, 2) != COLLECTION:
            namespace, name, plugin, plugin_type = match.groups()
            anchor = re.sub(r"[^a-z0-9]+", "-", label)
            page = "collections/%s/%s/%s_%s.html#%s" % (namespace, name, plugin, plugin_type, anchor)
            entries.append((label, page, "%s.%s.%s %s" % (namespace, name, plugin, plugin_type)))
    return entries


def write_inventory(path, project, entries):
    """A Sphinx objects.inv (version 2) holding std:label entries."""
    header = ("# Sphinx inventory version 2\n# Project: %s\n# Version: \n"
              "# The remainder of this file is compressed using zlib.\n" % project)
    body = "".join("%s std:label -1 %s %s\n" % entry for entry in entries)
    with open(path, "wb") as f:
        f.write(header.encode("utf-8") + zlib.compress(body.encode("utf-8")))


def main(argv):
    if len(argv) != 1:
        print(__doc__.splitlines()[2])
        return 2
    site = argv[0]
    entries = external_entries(referenced_labels(os.path.join(site, "rst")))
    write_inventory(os.path.join(site, "ansible_devel.inv"), "Ansible", entries)
    for name in EMPTY:
        write_inventory(os.path.join(site, "%s.inv" % name), name, [])
    print("ansible_devel.inv: %d labels (%s)" % (len(entries), ", ".join(e[0] for e in entries)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
