# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

"""The one ``main()`` of the collection's Kubernetes modules (compare kubernetes.core
``module_utils/k8s/core.py`` ``AnsibleK8SModule`` and ``module_utils/k8s/runner.py`` ``run_module``).

``run_module(argument_spec, body)`` checks the libraries, builds the API objects, runs
``body(module, apis)`` and reports its result dict; a ``K8sError`` from the body becomes ``fail_json``
with its message and extra return values (``changed`` defaults to False).
"""

from __future__ import annotations

from ansible.module_utils.basic import AnsibleModule, missing_required_lib
from ansible.module_utils.common.parameters import remove_values

from ansible_collections.kubewin.nodes.plugins.module_utils._k8s import client


class K8sModule(AnsibleModule):
    """AnsibleModule with a place for secrets a result returns on purpose (a bootstrap token)."""

    def __init__(self, *args, **kwargs):
        super(K8sModule, self).__init__(*args, **kwargs)
        self.result_secrets = set()

    def add_result_secrets(self, *values):
        """Values the result may carry in its own keys, masked everywhere else: in every failure and in
        the echoed module arguments. Ansible can only mask a value everywhere or nowhere."""
        self.result_secrets.update(v for v in values if v)


def run_module(argument_spec, body, build_apis=None, required_libs=(), **module_kwargs):
    """Run ``body(module, apis)`` as the module and exit.

    ``build_apis(params)`` makes the API objects (``client.build_apis`` by default; tests pass fakes);
    ``required_libs`` lists further ``(name, present, import_error)`` to check; ``module_kwargs`` go to
    ``AnsibleModule`` (``supports_check_mode`` is on unless given).
    """
    module_kwargs.setdefault("supports_check_mode", True)
    module = K8sModule(argument_spec=argument_spec, **module_kwargs)
    libs = [("kubernetes", client.HAS_KUBERNETES, client.K8S_IMPORT_ERROR)] + list(required_libs)
    for name, present, error in libs:
        if not present:
            module.fail_json(msg=missing_required_lib(name), exception=str(error))
    failure = None
    try:
        result = body(module, (build_apis or client.build_apis)(module.params))
    except client.K8sError as exc:
        failure = exc
    if failure is not None:
        # Fail outside the except block: no traceback in the result.
        module.no_log_values.update(module.result_secrets)
        extra = dict(failure.extra)
        extra.setdefault("changed", False)
        module.fail_json(msg=failure.msg, **extra)
    if not module._diff:
        result.pop("diff", None)
    if module.result_secrets:
        # The echoed arguments keep every secret masked (also a caller-supplied token), then the result
        # keys that carry the secrets on purpose are left readable.
        result["invocation"] = {"module_args": remove_values(module.params,
                                                             module.no_log_values | module.result_secrets)}
        module.no_log_values.difference_update(module.result_secrets)
    module.exit_json(**result)
