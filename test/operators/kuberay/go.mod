module github.com/reconcilekit/reconcilekit/test/operators/kuberay

go 1.26.0
