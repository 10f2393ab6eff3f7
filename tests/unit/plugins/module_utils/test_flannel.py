# Copyright: kubewin.nodes contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
"""flannel's Windows rules, shared by k8s_join_info (the cluster's net-conf.json) and preflight."""

from __future__ import annotations

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _flannel as flannel


@pytest.mark.parametrize("given, runs", [
    # kubespray's flannel defaults leave VNI and Port out: Linux flannel then runs VNI 1 on the kernel's port 8472
    (("vxlan", None, None), ("vxlan", 1, 8472)),
    (("vxlan", None, 0), ("vxlan", 1, 8472)),
    (("vxlan", 4096, 4789), ("vxlan", 4096, 4789)),
    (("host-gw", None, None), ("host-gw", None, None)),
])
def test_linux_defaults_fill_what_net_conf_leaves_out(given, runs):
    assert flannel.with_linux_defaults(*given) == runs


@pytest.mark.parametrize("vni, usable", [(None, False), (1, False), (4095, False), (4096, True),
                                         (16777215, True), (16777216, False)])
def test_windows_vni_range(vni, usable):
    assert flannel.vni_usable(vni) is usable


def test_kubespray_default_vxlan_cannot_take_windows_nodes_and_each_fix_is_named():
    problems = flannel.windows_problems(*flannel.with_linux_defaults("vxlan"))
    assert len(problems) == 2
    assert "4096" in problems[0] and "flannel_vxlan_vni" in problems[0]
    assert "4789" in problems[1] and "flannel_vxlan_port" in problems[1]


def test_windows_ready_networks_have_no_problems():
    assert flannel.windows_problems("vxlan", 4096, 4789, False) == []
    assert flannel.windows_problems("host-gw") == []


@pytest.mark.parametrize("backend, words", [(None, "without a Type"), ("udp", "not supported on Windows"),
                                            ("wireguard", "flannel_backend_type")])
def test_backends_windows_flannel_lacks(backend, words):
    problems = flannel.windows_problems(backend, 4096, 4789)
    assert len(problems) == 1 and words in problems[0]


def test_direct_routing_is_refused():
    assert "DirectRouting" in flannel.windows_problems("vxlan", 4096, 4789, True)[0]
