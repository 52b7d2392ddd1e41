// Package controlplane builds and runs a real Kubernetes control plane for
// tests and demos: etcd, kube-apiserver, kube-controller-manager,
// kube-scheduler and kwok (fake nodes whose pods become Running and Ready),
// all built from pinned Go modules.
//
// It is test support, in a module of its own, never imported by the library
// or the examples:
//
//   - [Build] compiles the five binaries once into a cache directory keyed by
//     version and build inputs (.cache/controlplane at the repository root);
//     later calls reuse them.
//   - [Start] runs them on 127.0.0.1 with free ports, generated certificates,
//     tokens and a data directory per instance, creates kwok nodes and returns
//     when pods can be scheduled; [ControlPlane.RESTConfig] and
//     [ControlPlane.KubeconfigPath] give access. Instances can start side by
//     side: a component is ready only once its own process listens on its
//     ports, and one whose port another process took first is started again
//     on fresh ports.
//   - [ControlPlane.RequestCounts] reads kube-apiserver's apiserver_request_total;
//     with [Options.AuditWrites], [ControlPlane.Writes] counts the writes to
//     pods, ReplicaSets and PodSets by client from its audit log, and
//     [ControlPlane.Audit] also ControllerUser's requests by verb.
//   - [ControlPlane.FaultProxy] puts a fault proxy (package faultproxy)
//     between one client and kube-apiserver: a kubeconfig that points at it,
//     and faults set at run time, such as a delayed pod watch.
//   - [ControlPlane.Stop] stops every process it started, by pid, and removes
//     the data. Children also die with the launcher (Pdeathsig), and a later
//     Start removes data left by a launcher that was killed.
//
// The command in cmd/controlplane wraps the same functions: "build", "up"
// (prints the kubeconfig path and runs until SIGINT or SIGTERM) and "demo"
// (the examples' ReplicaSet demo against the control plane).
package controlplane
