# Test-lab only: Docker's own network store on a Docker host, beside HNS (``state["docker"]["networks"]``).
"""dockerd keeps its networks in its own store (libnetwork) and learns about HNS only at daemon start, so a network
HNS has is not necessarily one Docker knows. Sources: moby/moby at b985e2313a86 (review-s6 read docker v26.1.4 and
v28.2.2 the same):

- ``docker network create -d nat NAME`` puts the network in Docker's store and, through the windows driver, in HNS
  (daemon/libnetwork/drivers/windows/windows.go CreateNetwork L326, ``HNSNetworkRequest(POST)`` L418). A name the
  store has is refused: "network with name NAME already exists" (daemon/libnetwork/error.go L22). ``docker network
  rm`` deletes it from both (windows.go DeleteNetwork, ``HNSNetworkRequest(DELETE)`` L490).
- HNS networks are discovered only at daemon start (daemon/daemon_windows.go initNetworkController L231, "discover
  and add HNS networks to windows" L318): one made in HNS while dockerd runs is NOT in Docker's store until dockerd
  starts again; then it is adopted (HNSOwned, L374) unless its type is one the driver cannot adopt (L322-327).
- At daemon start, a NAT network other than the default ``nat`` that the store has and HNS lacks is re-created in
  HNS under a new ID (L260-289, "non-default nat networks should be re-created if missing from HNS"); any other
  network HNS lacks is removed from the store (L291-297).
- On Windows NetworkMode ``host`` is not the host's stack but a user-defined network name (api/types/container/
  hostconfig_windows.go: ``IsHost`` returns false, ``IsUserDefined``), looked up in the store; cri-dockerd gives a
  hostNetwork pod's sandbox NetworkMode ``host`` and a CNI pod's ``none`` (core/helpers_windows.go
  modifyHostOptionsForSandbox, as dockershim had it), so only hostNetwork sandboxes need it. A name the store lacks
  fails: "network host not found" (daemon/libnetwork/error.go L12).
- Not modelled: Docker's default ``nat`` network and ``none`` (the lab's HNS starts empty); only the commands below
  are simulated, anything else fails.
- The daemon: docker's global option ``-H``/``--host`` (docker CLI reference, "docker": "-H, --host list  Daemon
  socket to connect to"; global options come before the command; on Windows the default daemon is
  ``npipe:////./pipe/docker_engine``, the "Docker daemon on Windows" docs). Without it the CLI would use the caller's
  DOCKER_HOST or current docker context, which the lab does not model: a network command without
  ``-H npipe:////./pipe/docker_engine`` fails here (the stricter choice), as does any other host.
- A test can make dockerd stop answering (``state["docker"]["hung"] = True``): docker.exe then never exits (Hung,
  which the interpreter's Process turns into a process that WaitForExit(ms) waits out).
"""

from __future__ import annotations

import json

from ansible_collections.ansible.windows.plugins.module_utils import winsim_hns

PIPE = r"\\.\pipe\docker_engine"
DEFAULT_NAT = "nat"  # daemon/network: networktypes.NetworkNat, never re-created by the rule above
UNADOPTABLE = ("private", "internal")  # windows.go unadoptableNetworkTypes: HNS types dockerd leaves alone
# the docker CLI when the daemon's pipe is not there (its Windows default host npipe:////./pipe/docker_engine)
HOST = "npipe:////./pipe/docker_engine"


class Hung(Exception):
    """docker.exe waiting for a dockerd that does not answer: it never exits."""


NOT_RUNNING = ("error during connect: this error may indicate that the docker daemon is not running: "
               "open //./pipe/docker_engine: The system cannot find the file specified.\n")


def networks(state):
    """Docker's store: [{Name, Id, Driver, HnsId}]."""
    return state.setdefault("docker", {"networks": []})["networks"]


def _hns_networks(state):
    return json.loads(winsim_hns.call(state, "GET", "/networks/", ""))["Output"]


def _hns_create(state, name):
    answer = json.loads(winsim_hns.call(state, "POST", "/networks/", json.dumps({"Name": name, "Type": "NAT"})))
    if not answer["Success"]:
        raise DockerFail("Error response from daemon: %s" % answer["Error"])
    return answer["Output"]["ID"]


class DockerFail(Exception):
    pass


def daemon_start(host):
    """What dockerd's initNetworkController does to its store at each start (the module docstring)."""
    st = host.state
    store = networks(st)
    live = {n["ID"].lower() for n in _hns_networks(st)}
    for net in list(store):
        if str(net.get("HnsId", "")).lower() in live:
            continue
        if net["Driver"] == "nat" and net["Name"] != DEFAULT_NAT:
            try:
                net["HnsId"] = _hns_create(st, net["Name"])
            except DockerFail:  # dockerd logs "Error occurred when creating network" and goes on
                store.remove(net)
        else:
            store.remove(net)
    known = {str(n.get("HnsId", "")).lower() for n in store}
    names = {n["Name"] for n in store}
    for hn in _hns_networks(st):
        if hn["ID"].lower() in known or str(hn["Type"]).lower() in UNADOPTABLE or hn["Name"] in names:
            continue
        store.append({"Name": hn["Name"], "Id": hn["ID"].replace("-", "").lower()[:32].ljust(64, "0"),
                      "Driver": str(hn["Type"]).lower(), "HnsId": hn["ID"], "HnsOwned": True})


def sandbox_error(host, host_network):
    """Why dockerd refuses a pod sandbox cri-dockerd asks for (None: it starts): hostNetwork pods get NetworkMode
    ``host``, a network name Docker must have in its store; CNI pods get ``none``."""
    st = host.state
    if PIPE not in (st.get("pipes") or []):
        return NOT_RUNNING.strip()
    if host_network and not any(n["Name"] == "host" for n in networks(st)):
        return "Error response from daemon: network host not found"
    return None


def cli(host, version, args):
    """docker.exe: ``network ls --format {{.Name}}``, ``network create -d|--driver nat NAME``, ``network rm NAME``."""
    st = host.state
    if args[:1] in (["--version"], ["-v"]):
        return 0, "Docker version %s, build 0000000\n" % version.lstrip("v"), ""
    daemon = None
    if args[:1] in (["-H"], ["--host"]) and len(args) > 1:
        daemon, args = args[1], args[2:]
    elif args and args[0].startswith(("-H=", "--host=")):
        daemon, args = args[0].split("=", 1)[1], args[1:]
    if daemon != HOST:
        return 1, "", ("winsim: docker %s without -H %s is not simulated (the caller's DOCKER_HOST or docker context "
                       "would choose the daemon)\n" % (" ".join(args), HOST) if daemon is None else
                       "winsim: docker -H %s is not simulated (only %s)\n" % (daemon, HOST))
    if PIPE not in (st.get("pipes") or []):
        return 1, "", NOT_RUNNING
    if (st.get("docker") or {}).get("hung"):
        raise Hung()
    store = networks(st)
    try:
        if args == ["network", "ls", "--format", "{{.Name}}"]:
            return 0, "".join(n["Name"] + "\n" for n in store), ""
        if args[:2] == ["network", "create"] and len(args) == 5 and args[2] in ("-d", "--driver") \
                and args[3] == "nat":
            name = args[4]
            if any(n["Name"] == name for n in store):
                raise DockerFail("Error response from daemon: network with name %s already exists" % name)
            hns_id = _hns_create(st, name)
            net_id = hns_id.replace("-", "").lower().ljust(64, "0")
            store.append({"Name": name, "Id": net_id, "Driver": "nat", "HnsId": hns_id})
            return 0, net_id + "\n", ""
        if args[:2] == ["network", "rm"] and len(args) == 3:
            net = next((n for n in store if n["Name"] == args[2] or n["Id"].startswith(args[2])), None)
            if net is None:
                raise DockerFail("Error response from daemon: network %s not found" % args[2])
            answer = json.loads(winsim_hns.call(st, "DELETE", "/networks/%s" % net["HnsId"], ""))
            if not answer["Success"] and "Element not found" not in answer["Error"]:
                raise DockerFail("Error response from daemon: %s" % answer["Error"])
            store.remove(net)
            return 0, args[2] + "\n", ""
    except DockerFail as e:
        return 1, "", str(e) + "\n"
    return 1, "", "winsim: docker %s is not simulated\n" % " ".join(args)
