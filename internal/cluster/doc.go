// Package cluster loads objects into a snapshot.Snapshot: from files (-f file,
// directory or "-", -R), from a live cluster through the kubeconfig (discovery,
// dynamic client, paginated lists; only get and list are ever sent, Secrets are
// never read), or from files laid over the live state. It records where every
// object came from and what loading noticed; it evaluates nothing.
package cluster
