// Prints every flag the Windows kubelet of the Kubernetes version this module requires accepts, as JSON.
// It builds the kubelet's flag set the way NewKubeletCommand does (cmd/kubelet/app/server.go: the
// KubeletFlags, the KubeletConfiguration flags, the global flags, --help on one pflag.FlagSet with
// cliflag.WordSepNormalizeFunc), hidden and deprecated flags included (--help lists neither, but the
// kubelet accepts both). Built with GOOS=windows so osflags_windows.go and globalflags_other.go apply.
// It imports what cmd/kubelet/kubelet.go imports for its flags (the json log format). Used by generate.py; not part of the collection.
package main

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/spf13/pflag"
	cliflag "k8s.io/component-base/cli/flag"
	_ "k8s.io/component-base/logs/json/register" // as cmd/kubelet/kubelet.go: the json format's flags
	"k8s.io/kubernetes/cmd/kubelet/app/options"
)

type flagInfo struct {
	Name       string `json:"name"`
	Shorthand  string `json:"shorthand,omitempty"`
	Type       string `json:"type"`
	TakesValue bool   `json:"takes_value"`
	Deprecated string `json:"deprecated,omitempty"`
	Hidden     bool   `json:"hidden,omitempty"`
}

func main() {
	fs := pflag.NewFlagSet("kubelet", pflag.ContinueOnError)
	fs.SetNormalizeFunc(cliflag.WordSepNormalizeFunc)
	kubeletFlags := options.NewKubeletFlags()
	kubeletConfig, err := options.NewKubeletConfiguration()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	kubeletFlags.AddFlags(fs)
	options.AddKubeletConfigFlags(fs, kubeletConfig)
	options.AddGlobalFlags(fs)
	fs.BoolP("help", "h", false, "help for kubelet")
	var out []flagInfo
	fs.VisitAll(func(f *pflag.Flag) {
		out = append(out, flagInfo{Name: f.Name, Shorthand: f.Shorthand, Type: f.Value.Type(),
			TakesValue: f.NoOptDefVal == "", Deprecated: f.Deprecated, Hidden: f.Hidden})
	})
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		os.Exit(1)
	}
}
