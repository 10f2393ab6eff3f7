// cripipe: a stand-in CRI v1 runtime service for the real kubeadm.exe under Wine (lab/README.md,
// "Wine"). It listens on a Windows named pipe (the runtime's, \\.\pipe\containerd-containerd by default)
// and answers Version, Status and RuntimeConfig as containerd does (containerd v2
// internal/cri/server/version.go: RuntimeName "containerd", RuntimeApiVersion "v1"; status.go:
// RuntimeReady and NetworkReady conditions), ListPodSandbox (none: kubeadm reset's removeContainers on a
// drained node) and ImageFsInfo (empty); every other call is Unimplemented.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/Microsoft/go-winio"
	"google.golang.org/grpc"
	runtimeapi "k8s.io/cri-api/pkg/apis/runtime/v1"
)

type runtime struct {
	runtimeapi.UnimplementedRuntimeServiceServer
	version string
}

func (r *runtime) Version(context.Context, *runtimeapi.VersionRequest) (*runtimeapi.VersionResponse, error) {
	return &runtimeapi.VersionResponse{Version: "0.1.0", RuntimeName: "containerd",
		RuntimeVersion: r.version, RuntimeApiVersion: "v1"}, nil
}

func (r *runtime) Status(context.Context, *runtimeapi.StatusRequest) (*runtimeapi.StatusResponse, error) {
	return &runtimeapi.StatusResponse{Status: &runtimeapi.RuntimeStatus{Conditions: []*runtimeapi.RuntimeCondition{
		{Type: runtimeapi.RuntimeReady, Status: true},
		{Type: runtimeapi.NetworkReady, Status: false, Reason: "NetworkPluginNotReady",
			Message: "Network plugin returns error: cni plugin not initialized"},
	}}}, nil
}

func (r *runtime) RuntimeConfig(context.Context, *runtimeapi.RuntimeConfigRequest) (*runtimeapi.RuntimeConfigResponse, error) {
	// Windows: no cgroup driver (containerd answers with an empty Linux config there)
	return &runtimeapi.RuntimeConfigResponse{}, nil
}

// ListPodSandbox: kubeadm reset lists the pods to remove (cmd/kubeadm/app/util/runtime ListKubeContainers).
func (r *runtime) ListPodSandbox(context.Context, *runtimeapi.ListPodSandboxRequest) (*runtimeapi.ListPodSandboxResponse, error) {
	return &runtimeapi.ListPodSandboxResponse{}, nil
}

type images struct {
	runtimeapi.UnimplementedImageServiceServer
}

// ImageFsInfo: cri-client validates the image service with it (validateServiceConnection).
func (i *images) ImageFsInfo(context.Context, *runtimeapi.ImageFsInfoRequest) (*runtimeapi.ImageFsInfoResponse, error) {
	return &runtimeapi.ImageFsInfoResponse{}, nil
}

func main() {
	pipe := flag.String("pipe", `\\.\pipe\containerd-containerd`, "named pipe to listen on")
	version := flag.String("version", "v2.1.4", "containerd version to report")
	flag.Parse()
	l, err := winio.ListenPipe(*pipe, nil)
	if err != nil {
		log.Fatalf("listen %s: %v", *pipe, err)
	}
	// Under Wine the first client of a new pipe listener times out (kubeadm's CRI preflight check
	// saw DeadlineExceeded, the next check connected): connect once ourselves first.
	go func() {
		if c, err := winio.DialPipe(*pipe, nil); err == nil {
			c.Close()
		}
	}()
	s := grpc.NewServer()
	runtimeapi.RegisterRuntimeServiceServer(s, &runtime{version: *version})
	runtimeapi.RegisterImageServiceServer(s, &images{})
	log.Printf("cripipe: serving CRI v1 on %s", *pipe)
	log.Fatal(s.Serve(l))
}
