package clientgo_test

import "github.com/reconcilekit/reconcilekit/status"

func statusOptions() status.Options { return status.Options{} }
