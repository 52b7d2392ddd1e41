package election

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"time"

	"k8s.io/apimachinery/pkg/util/uuid"
	coordinationv1client "k8s.io/client-go/kubernetes/typed/coordination/v1"
	"k8s.io/client-go/tools/leaderelection"
)

// Defaults of [Flags], those of kube-controller-manager (lease 15 s, renew
// deadline 10 s, retry 2 s, leases in kube-system).
const (
	DefaultLeaseDuration = 15 * time.Second
	DefaultRenewDeadline = 10 * time.Second
	DefaultRetryPeriod   = 2 * time.Second
	DefaultNamespace     = "kube-system"
)

// Flags are the leader-election settings, with kube-controller-manager's
// flag names (single dash, as Go's flag package prints them; two dashes work
// too). The zero Flags is not usable: call [Flags.AddFlags] and parse, or
// fill every field. A Flags is a plain value, read-only once parsed.
type Flags struct {
	// Enabled is -leader-elect. Without an explicit -leader-elect it is
	// the defaultOn given to AddFlags's caller through [Flags.Resolve].
	Enabled bool
	// LeaseDuration is -leader-elect-lease-duration: how long a replica
	// waits, after it last saw the lease change, before taking it.
	LeaseDuration time.Duration
	// RenewDeadline is -leader-elect-renew-deadline: how long the leader
	// keeps trying to renew before it gives up leading; the fence closes
	// this long after the start of the last successful renewal.
	RenewDeadline time.Duration
	// RetryPeriod is -leader-elect-retry-period: the time between tries
	// to acquire or renew.
	RetryPeriod time.Duration
	// Namespace and Name are -leader-elect-resource-namespace and
	// -leader-elect-resource-name: the Lease object.
	Namespace, Name string
	// Identity is -leader-elect-identity: this replica's name in the
	// Lease. Empty: [DefaultIdentity].
	Identity string
	// Health, when set, watches the elector [Flags.Run] starts (client-go's
	// leader-election health check): its Check fails while this replica
	// leads but has not renewed the Lease for longer than the lease
	// duration plus the adaptor's tolerance. Serve it on /healthz. Nil:
	// no check.
	Health *leaderelection.HealthzAdaptor
	// Leases, when set, is the client [Flags.Run] watches the Lease
	// through while it waits, to try at once when the leader releases it.
	// [Flags.Fence] sets it, when nil, to the Lease lock's client. Nil: no
	// watch; a standby tries only every RetryPeriod, as upstream.
	Leases coordinationv1client.LeasesGetter

	set bool // -leader-elect was given explicitly
}

// AddFlags registers the flags on fs with kube-controller-manager's
// defaults; name is the Lease's default name (-leader-elect-resource-name).
// -leader-elect's default is settled after parsing by [Flags.Resolve].
func (f *Flags) AddFlags(fs *flag.FlagSet, name string) {
	fs.Var(&boolFlag{f: f}, "leader-elect", "run leader election: only the replica holding the Lease works (default: true with -kubeconfig, false for the in-process demo)")
	fs.DurationVar(&f.LeaseDuration, "leader-elect-lease-duration", DefaultLeaseDuration, "how long a non-leader waits, after it last saw the Lease renewed, before taking it")
	fs.DurationVar(&f.RenewDeadline, "leader-elect-renew-deadline", DefaultRenewDeadline, "how long the leader tries to renew before it stops leading; the fence closes this long after the start of the last successful renewal (must be < the lease duration)")
	fs.DurationVar(&f.RetryPeriod, "leader-elect-retry-period", DefaultRetryPeriod, "time between tries to acquire or renew the Lease")
	fs.StringVar(&f.Namespace, "leader-elect-resource-namespace", DefaultNamespace, "namespace of the Lease")
	fs.StringVar(&f.Name, "leader-elect-resource-name", name, "name of the Lease")
	fs.StringVar(&f.Identity, "leader-elect-identity", "", "this replica's identity in the Lease (default: hostname + \"_\" + a unique suffix)")
}

// Resolve settles -leader-elect's default (defaultOn when it was not given),
// fills an empty Identity with [DefaultIdentity] when leader election is on,
// and checks the durations as client-go does.
func (f *Flags) Resolve(defaultOn bool) error {
	if !f.set {
		f.Enabled = defaultOn
	}
	if !f.Enabled {
		return nil
	}
	switch {
	case f.LeaseDuration <= f.RenewDeadline:
		return fmt.Errorf("-leader-elect-lease-duration (%v) must be greater than -leader-elect-renew-deadline (%v)", f.LeaseDuration, f.RenewDeadline)
	case f.RetryPeriod <= 0 || f.RenewDeadline <= f.RetryPeriod:
		return fmt.Errorf("-leader-elect-renew-deadline (%v) must be greater than -leader-elect-retry-period (%v) > 0", f.RenewDeadline, f.RetryPeriod)
	case f.Namespace == "" || f.Name == "":
		return fmt.Errorf("-leader-elect-resource-namespace and -leader-elect-resource-name must not be empty")
	}
	if f.Identity == "" {
		id, err := DefaultIdentity()
		if err != nil {
			return err
		}
		f.Identity = id
	}
	return nil
}

// Explicit reports whether -leader-elect was given on the command line.
func (f *Flags) Explicit() bool { return f.set }

// DefaultIdentity is kube-controller-manager's: the hostname, "_", and a
// random UUID, so that two replicas on one host differ.
func DefaultIdentity() (string, error) {
	host, err := os.Hostname()
	if err != nil {
		return "", fmt.Errorf("leader election identity: %w", err)
	}
	return host + "_" + string(uuid.NewUUID()), nil
}

// boolFlag is -leader-elect: a bool flag that remembers being set.
type boolFlag struct{ f *Flags }

func (b *boolFlag) String() string {
	if b == nil || b.f == nil {
		return "false"
	}
	return fmt.Sprint(b.f.Enabled)
}

func (b *boolFlag) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.f.Enabled, b.f.set = v, true
	return nil
}

// IsBoolFlag lets "-leader-elect" stand alone.
func (b *boolFlag) IsBoolFlag() bool { return true }
