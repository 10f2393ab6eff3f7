#!/usr/bin/env python3
"""Write the lab's kwok stages: kwokctl's defaults (the cached upstream files) with two changes.

1. Nodes whose kubelet is the simulator's (annotation ``winsim.kubewin.lab/kubelet``) are left out of
   kwok's node stages (node-initialize, node-heartbeat-with-lease): their kubelet posts its own status,
   Ready only when it has earned it (winsim_kubelet.py). kwok still holds their Lease
   (``--node-lease-duration-seconds``; kwok's NodeLeaseController renews it for every managed node,
   whatever the stages), which is what keeps the node lifecycle controller from marking them Unknown
   (pkg/controller/nodelifecycle: a renewed Lease counts as a heartbeat).
2. HostProcess pods whose image is not in published-images.txt do not become Running: a stage shows
   them Pending with ImagePullBackOff (the kubelet's state for an image it cannot pull,
   pkg/kubelet/images/image_manager.go: `Back-off pulling image "<image>"`).

Usage: kwok_stages.py UPSTREAM_STAGES PUBLISHED_LIST > OUT   (plain Python 3, no packages)
"""

import json
import sys

WINSIM_ANNOTATION = "winsim.kubewin.lab/kubelet"


def accepted_references(lines):
    """Every reference a pod may use for a published image: by tag, by digest, or both, with or without
    docker.io/ (Docker's reference normalisation: `sigwindowstools/x` is `docker.io/sigwindowstools/x`)."""
    refs = set()
    for line in lines:
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        tagged, digest = line.split("@", 1)
        name = tagged.rsplit(":", 1)[0]
        for n, t in ((name, tagged), (name.replace("docker.io/", "", 1), tagged.replace("docker.io/", "", 1))):
            refs.update({t, "%s@%s" % (n, digest), "%s@%s" % (t, digest)})
    return sorted(refs)


def unpublished_query(refs):
    """A jq query: true for a HostProcess pod with an image not in ``refs``."""
    return ("(.spec.securityContext.windowsOptions.hostProcess // false) and "
            "(([.spec.containers[].image] - %s) | length > 0)" % json.dumps(refs))


def _yaml_single(s):
    return "'%s'" % s.replace("'", "''")


def rewrite(upstream, refs):
    docs = upstream.split("\n---\n")
    out = []
    unpublished = _yaml_single(unpublished_query(refs))
    for doc in docs:
        name = next((ln.split(":", 1)[1].strip() for ln in doc.splitlines() if ln.startswith("  name:")), "")
        if name in ("node-initialize", "node-heartbeat-with-lease"):
            key = _yaml_single('.metadata.annotations["%s"]' % WINSIM_ANNOTATION)
            doc = doc.replace("    matchExpressions:\n",
                              "    matchExpressions:\n    - key: %s\n      operator: 'DoesNotExist'\n" % key, 1)
        elif name == "pod-ready":
            doc = doc.replace("    matchExpressions:\n", "    matchExpressions:\n    - key: %s\n"
                              "      operator: 'NotIn'\n      values:\n      - 'true'\n" % unpublished, 1)
        out.append(doc)
    out.append(BACKOFF_STAGE % {"unpublished": unpublished})
    return "\n---\n".join(d.strip("\n") for d in out if d.strip()) + "\n"


BACKOFF_STAGE = """apiVersion: kwok.x-k8s.io/v1alpha1
kind: Stage
metadata:
  name: pod-image-pull-backoff
spec:
  resourceRef:
    apiGroup: v1
    kind: Pod
  selector:
    matchExpressions:
    - key: '.metadata.deletionTimestamp'
      operator: 'DoesNotExist'
    - key: '.status.phase'
      operator: 'In'
      values:
      - 'Pending'
    - key: %(unpublished)s
      operator: 'In'
      values:
      - 'true'
    - key: '.status.containerStatuses.[].state.waiting.reason'
      operator: 'NotIn'
      values:
      - 'ImagePullBackOff'
  next:
    statusTemplate: |
      {{ $now := Now }}
      conditions:
      - lastTransitionTime: {{ $now | Quote }}
        status: "True"
        type: Initialized
      - lastTransitionTime: {{ $now | Quote }}
        message: containers with unready status
        reason: ContainersNotReady
        status: "False"
        type: Ready
      containerStatuses:
      {{ range .spec.containers }}
      - image: {{ .image | Quote }}
        name: {{ .name | Quote }}
        ready: false
        restartCount: 0
        state:
          waiting:
            message: {{ printf "Back-off pulling image %%q" .image | Quote }}
            reason: ImagePullBackOff
      {{ end }}
      phase: Pending
"""


def main(argv):
    with open(argv[1]) as f:
        upstream = f.read()
    with open(argv[2]) as f:
        refs = accepted_references(f)
    sys.stdout.write(rewrite(upstream, refs))


if __name__ == "__main__":
    main(sys.argv)
