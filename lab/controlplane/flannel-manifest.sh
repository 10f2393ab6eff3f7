#!/usr/bin/env bash
# Print the flannel objects a cluster installed from flannel's kube-flannel.yml
# has, written for the lab (modeled on upstream, not copied). The Windows roles
# read kube-flannel-cfg's net-conf.json, so its Backend must be one Windows
# flannel accepts: vxlan needs VNI >= 4096 and UDP port 4789.
#   LAB_FLANNEL_BACKEND  vxlan (default) | host-gw
#   LAB_POD_SUBNET       default 10.244.0.0/16
#   LAB_FLANNEL_VERSION  image tag, default v0.27.4 (images are never pulled in the lab)
set -euo pipefail
backend=${LAB_FLANNEL_BACKEND:-vxlan}
net=${LAB_POD_SUBNET:-10.244.0.0/16}
ver=${LAB_FLANNEL_VERSION:-v0.27.4}
cni_ver=${LAB_FLANNEL_CNI_PLUGIN_VERSION:-v1.7.1-flannel1}
case $backend in
  vxlan)   backend_json='{ "Type": "vxlan", "VNI": 4096, "Port": 4789 }' ;;
  host-gw) backend_json='{ "Type": "host-gw" }' ;;
  *) echo "flannel-manifest: LAB_FLANNEL_BACKEND must be vxlan or host-gw, not '$backend'" >&2; exit 2 ;;
esac
cat <<YAML
apiVersion: v1
kind: Namespace
metadata:
  name: kube-flannel
  labels:
    k8s-app: flannel
    pod-security.kubernetes.io/enforce: privileged
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: flannel
  namespace: kube-flannel
  labels:
    k8s-app: flannel
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata:
  name: flannel
  labels:
    k8s-app: flannel
rules:
- apiGroups: [""]
  resources: [pods]
  verbs: [get]
- apiGroups: [""]
  resources: [nodes]
  verbs: [get, list, watch]
- apiGroups: [""]
  resources: [nodes/status]
  verbs: [patch]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: flannel
  labels:
    k8s-app: flannel
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: flannel
subjects:
- kind: ServiceAccount
  name: flannel
  namespace: kube-flannel
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kube-flannel-cfg
  namespace: kube-flannel
  labels:
    app: flannel
    k8s-app: flannel
    tier: node
data:
  cni-conf.json: |
    {
      "name": "cbr0",
      "cniVersion": "0.3.1",
      "plugins": [
        { "type": "flannel", "delegate": { "hairpinMode": true, "isDefaultGateway": true } },
        { "type": "portmap", "capabilities": { "portMappings": true } }
      ]
    }
  net-conf.json: |
    {
      "Network": "${net}",
      "EnableNFTables": false,
      "Backend": ${backend_json}
    }
---
apiVersion: apps/v1
kind: DaemonSet
metadata:
  name: kube-flannel-ds
  namespace: kube-flannel
  labels:
    app: flannel
    k8s-app: flannel
    tier: node
spec:
  selector:
    matchLabels:
      app: flannel
  template:
    metadata:
      labels:
        app: flannel
        tier: node
    spec:
      # Linux only: flannel tolerates every NoSchedule taint, so this affinity
      # is what keeps it off Windows nodes.
      affinity:
        nodeAffinity:
          requiredDuringSchedulingIgnoredDuringExecution:
            nodeSelectorTerms:
            - matchExpressions:
              - key: kubernetes.io/os
                operator: In
                values: [linux]
      hostNetwork: true
      priorityClassName: system-node-critical
      serviceAccountName: flannel
      tolerations:
      - operator: Exists
        effect: NoSchedule
      initContainers:
      - name: install-cni-plugin
        image: ghcr.io/flannel-io/flannel-cni-plugin:${cni_ver}
        command: [cp]
        args: [-f, /flannel, /opt/cni/bin/flannel]
        volumeMounts:
        - name: cni-plugin
          mountPath: /opt/cni/bin
      - name: install-cni
        image: ghcr.io/flannel-io/flannel:${ver}
        command: [cp]
        args: [-f, /etc/kube-flannel/cni-conf.json, /etc/cni/net.d/10-flannel.conflist]
        volumeMounts:
        - name: cni
          mountPath: /etc/cni/net.d
        - name: flannel-cfg
          mountPath: /etc/kube-flannel/
      containers:
      - name: kube-flannel
        image: ghcr.io/flannel-io/flannel:${ver}
        command: [/opt/bin/flanneld]
        args: [--ip-masq, --kube-subnet-mgr]
        resources:
          requests:
            cpu: 100m
            memory: 50Mi
        securityContext:
          privileged: false
          capabilities:
            add: [NET_ADMIN, NET_RAW]
        env:
        - name: POD_NAME
          valueFrom:
            fieldRef:
              fieldPath: metadata.name
        - name: POD_NAMESPACE
          valueFrom:
            fieldRef:
              fieldPath: metadata.namespace
        - name: EVENT_QUEUE_DEPTH
          value: "5000"
        volumeMounts:
        - name: run
          mountPath: /run/flannel
        - name: flannel-cfg
          mountPath: /etc/kube-flannel/
        - name: xtables-lock
          mountPath: /run/xtables.lock
      volumes:
      - name: run
        hostPath:
          path: /run/flannel
      - name: cni-plugin
        hostPath:
          path: /opt/cni/bin
      - name: cni
        hostPath:
          path: /etc/cni/net.d
      - name: flannel-cfg
        configMap:
          name: kube-flannel-cfg
      - name: xtables-lock
        hostPath:
          path: /run/xtables.lock
          type: FileOrCreate
YAML
