"""kube-proxy's source VIP is reserved in host-local's own store, so no pod ever gets it."""

import ipaddress
import ntpath

import pytest

from ansible_collections.kubewin.nodes.plugins.module_utils import _windows_paths as wp
from ansible_collections.kubewin.nodes.plugins.plugin_utils._host import network as nn


class HostLocal:
    """host-local's allocation over its disk store, as containernetworking/plugins v1.6.2 does it:
    allocator.go Get/GetIter (round-robin from the address after last_reserved_ip.0, the gateway .1
    skipped; the range of a plain "subnet" is network+1 .. broadcast-1) and disk/backend.go Reserve
    (a file per address, created with O_EXCL: an existing file is never handed out) and ReleaseByID
    (only files whose content is the releasing container's "<id>\\r\\n<ifname>")."""

    def __init__(self, subnet, files=None):
        net = ipaddress.ip_network(subnet)
        self.first, self.last = net.network_address + 1, net.broadcast_address - 1
        self.gateway = net.network_address + 1
        self.files = dict(files or {})  # file name -> content
        self.last_reserved = None

    def add(self, cid, ifname="eth0"):
        size = int(self.last) - int(self.first) + 1
        start = self.first if self.last_reserved is None else self.last_reserved + 1
        if start > self.last:
            start = self.first
        for i in range(size):
            ip = self.first + ((int(start) - int(self.first) + i) % size)
            if ip == self.gateway or str(ip) in self.files:
                continue
            self.files[str(ip)] = cid + "\r\n" + ifname
            self.last_reserved = ip
            return str(ip)
        raise RuntimeError("no IP addresses available in range set")

    def delete(self, cid, ifname="eth0"):
        for name, content in list(self.files.items()):
            if content.strip() == cid + "\r\n" + ifname:
                del self.files[name]


def churn(host_local, pods=600, alive=20):
    """Create pods one after the other, keeping ``alive`` of them: the addresses pods got."""
    got, running = [], []
    for n in range(pods):
        running.append("pod%d" % n)
        got.append(host_local.add(running[-1]))
        if len(running) > alive:
            host_local.delete(running.pop(0))
    return got


def test_round_robin_reaches_the_top_of_the_pod_subnet():
    """Why a VIP taken from the top of the range is not safe by itself."""
    vip = nn.source_vip("10.244.3.0/24")
    assert vip == "10.244.3.254" and vip in churn(HostLocal("10.244.3.0/24"))


def test_the_reservation_keeps_every_pod_off_the_source_vip():
    res = nn.source_vip_reservation("10.244.3.0/24", "vxlan", 4096)
    directory, name = ntpath.split(res["path"])
    # host-local's default dataDir on the C: drive, in the directory named after the CNI network
    assert directory == "C:\\var\\lib\\cni\\networks\\flannel.4096" == \
        ntpath.join(wp.HOST_LOCAL_DATA_DIR, nn.network_name("vxlan", 4096))
    assert name == nn.source_vip("10.244.3.0/24")
    host_local = HostLocal("10.244.3.0/24", {name: res["content"]})
    assert name not in churn(host_local)
    assert host_local.files[name] == "kubewin-kube-proxy-source-vip\r\nsource-vip"  # no pod's DEL removed it


def test_the_reservation_is_the_same_on_every_run():
    assert nn.source_vip_reservation("10.244.3.0/24", "vxlan", 4096) == \
        nn.source_vip_reservation("10.244.3.0/24", "vxlan", 4096)
    args = nn.kube_proxy_args("win-1", "10.244.0.0/16", "vxlan", 4096, "10.244.3.0/24", "v1.37.2")
    assert "--source-vip=10.244.3.254" in args


@pytest.mark.parametrize("cidr", ["", None, "10.244.3.0/31", "fd00::/64"])
def test_no_room_or_no_pod_subnet_is_refused(cidr):
    with pytest.raises(nn.NetworkConfigError):
        nn.source_vip_reservation(cidr, "vxlan", 4096)
