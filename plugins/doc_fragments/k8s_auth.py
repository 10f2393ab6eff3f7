# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)

from __future__ import annotations


class ModuleDocFragment(object):
    """Connection options of the modules that talk to the Kubernetes API (module_utils/k8s/client.py)."""

    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file, or a kubeconfig as a dictionary.
      - When not given, and O(host) with O(api_key) or O(client_cert) is not given either, the default
        kubeconfig (E(KUBECONFIG) or C(~/.kube/config)) is used, then the in-cluster service account.
      - Can also be set with E(K8S_AUTH_KUBECONFIG).
    type: raw
  context:
    description:
      - Context of the kubeconfig to use instead of its current context.
      - Can also be set with E(K8S_AUTH_CONTEXT).
    type: str
  host:
    description:
      - URL of the API server, for example V(https://192.0.2.10:6443). Overrides the kubeconfig.
      - Can also be set with E(K8S_AUTH_HOST).
    type: str
  api_key:
    description:
      - Bearer token to authenticate with. Overrides the kubeconfig.
      - Can also be set with E(K8S_AUTH_API_KEY).
    type: str
  validate_certs:
    description:
      - Whether to verify the API server's TLS certificate. Default is the kubeconfig's setting (verify).
      - Can also be set with E(K8S_AUTH_VERIFY_SSL).
    type: bool
    aliases: [verify_ssl]
  ca_cert:
    description:
      - Path to a CA certificate file to verify the API server with. Overrides the kubeconfig.
      - Can also be set with E(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Path to a client certificate file. Overrides the kubeconfig.
      - Can also be set with E(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Path to the client certificate's key file. Overrides the kubeconfig.
      - Can also be set with E(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
"""
