package controlplane

// WithPortPicker returns opts with pick choosing every port instead of the
// kernel, so that tests can hand out ports another process holds.
func WithPortPicker(opts Options, pick func(use string) (int, error)) Options {
	opts.pickPort = pick
	return opts
}

// FreePort is the launcher's own port picker.
var FreePort = freePort

// PortHolders returns the pids of the processes listening on a port.
var PortHolders = portHolders

// MaxPortAttempts bounds the starts of one component on fresh ports.
const MaxPortAttempts = maxPortAttempts
