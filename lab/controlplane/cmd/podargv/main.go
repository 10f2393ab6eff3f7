// Command podargv prints the command line of the first container of a static
// pod manifest (as written by `kubeadm init phase control-plane/etcd`), one
// argument per line, so the lab can run the component as a plain process
// with exactly the flags kubeadm chose.
package main

import (
	"fmt"
	"os"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: podargv MANIFEST.yaml")
		os.Exit(2)
	}
	data, err := os.ReadFile(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	var pod corev1.Pod
	if err := yaml.UnmarshalStrict(data, &pod); err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", os.Args[1], err)
		os.Exit(1)
	}
	if len(pod.Spec.Containers) == 0 {
		fmt.Fprintf(os.Stderr, "%s: no containers\n", os.Args[1])
		os.Exit(1)
	}
	c := pod.Spec.Containers[0]
	for _, a := range append(c.Command, c.Args...) {
		fmt.Println(a)
	}
}
