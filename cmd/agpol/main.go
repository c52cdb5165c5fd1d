// Command agpol explains the access policies in front of MCP tool servers on
// Kubernetes. Installed as kubectl-agpol it runs as the kubectl plugin `kubectl agpol`.
package main

import (
	"context"
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"

	_ "github.com/agpol/agpol/internal/kubectltext" // kubectl's translations are not loaded at start
)

func main() {
	installedGC = setGCPolicy(os.Getenv)
	streams := genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}
	os.Exit(run(context.Background(), os.Args, streams))
}
