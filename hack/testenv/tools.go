//go:build tools

// Package testenv pins the sources of the binaries agpol's live tests run against:
// kube-apiserver from k8s.io/kubernetes and etcd from go.etcd.io/etcd/server/v3.
// ensure.sh builds them into <repo>/bin; nothing here is linked into agpol.
package testenv

import (
	_ "go.etcd.io/etcd/server/v3"
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
)
