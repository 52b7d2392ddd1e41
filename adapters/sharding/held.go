package sharding

import (
	"errors"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"
)

// ErrNotHeld is wrapped by the refusals of [Held.Fence]: this replica may
// not hold the shard's Lease. Test with errors.Is.
var ErrNotHeld = errors.New("sharding: this replica may not hold the shard")

// Held is a shard this replica holds, as the [Coordinator] hands it to the
// function that runs the shard's controller. Its Fence answers, before
// each write, whether the replica may still write for the shard; Wrote
// records the resourceVersions of the shard's writes, which the replica
// leaves in the shard's Lease for the next holder; Resume is what the
// previous holder left there. A Held is safe for concurrent use. It is made
// by the Coordinator only.
type Held struct {
	shard  Shard
	lease  string
	resume string
	clock  clock.PassiveClock
	window time.Duration // RenewDeadline: how long after a renewal's start the fence stays open

	mu      sync.Mutex
	open    bool      // acquired, and nothing since says otherwise
	renewed time.Time // start of the last successful acquisition or renewal
	why     string    // why the fence is closed, once closed
	wrote   string    // the newest resourceVersion Wrote was given
	// stamped are the pods Unstamped.Stamp patched that the shard's pod
	// cache may not show yet, by UID.
	stamped map[types.UID]*corev1.Pod
}

func newHeld(shard Shard, lease, resume string, clk clock.PassiveClock, window time.Duration, acquiredAt time.Time) *Held {
	return &Held{
		shard:   shard,
		lease:   lease,
		resume:  resume,
		clock:   clk,
		window:  window,
		open:    true,
		renewed: acquiredAt,
		wrote:   resume,
	}
}

// Shard returns the shard held.
func (h *Held) Shard() Shard { return h.shard }

// Resume returns the resourceVersion the shard's previous holder recorded
// in the Lease, the newest of its writes it knew of ("" when there is none,
// e.g. the shard's first holder): the caches of this holder must have
// reached it before the shard's first sync ([WrapCluster] holds the syncs
// until they have).
func (h *Held) Resume() string { return h.resume }

// Fence returns nil while this replica may write for the shard: the last
// successful renewal of the shard's Lease started less than RenewDeadline
// ago and the shard is neither lost nor given back. Otherwise it returns an
// error wrapping [ErrNotHeld] that says why. Its method value is a
// reconcile.Config.Fence and a fencing.WrapConfig fence.
func (h *Held) Fence() error {
	now := h.clock.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.open {
		return fmt.Errorf("%w: shard %v (lease %s): %s", ErrNotHeld, h.shard, h.lease, h.why)
	}
	if since := now.Sub(h.renewed); since >= h.window {
		return fmt.Errorf("%w: shard %v (lease %s): the last successful renewal started %v ago; writes stop %v after it",
			ErrNotHeld, h.shard, h.lease, since.Round(time.Millisecond), h.window)
	}
	return nil
}

// Wrote records the resourceVersion of a write made for the shard (a pod
// create, patch or delete's answer, a status write); "" and versions older
// than one already recorded are ignored. [WrapCluster] calls it for every
// write of a Controller.
func (h *Held) Wrote(resourceVersion string) {
	if resourceVersion == "" {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if newer(resourceVersion, h.wrote) {
		h.wrote = resourceVersion
	}
}

// restamped records pod, just stamped with the bucket label, until the
// shard's pod cache shows it.
func (h *Held) restamped(pod *corev1.Pod) {
	if pod == nil {
		return
	}
	h.Wrote(pod.ResourceVersion)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.stamped == nil {
		h.stamped = map[types.UID]*corev1.Pod{}
	}
	h.stamped[pod.UID] = pod
}

// inFlight returns the stamped pods the pod cache may not show yet,
// controlled by uid in namespace ("" for any), forgetting those it has
// passed: all of them once the cache's version cacheRV has reached the
// patch, and, with no cache version (""), each one that cached (the
// cache's list) shows at the patched version or a newer one. Until then a
// stamped pod stays listed; listing a pod twice counts it twice (fewer
// creations, never more), so the merge keeps the cache's copy.
func (h *Held) inFlight(cacheRV, namespace string, uid types.UID, cached []*corev1.Pod) []*corev1.Pod {
	h.mu.Lock()
	defer h.mu.Unlock()
	if len(h.stamped) == 0 {
		return nil
	}
	var shown map[types.UID]string
	if cacheRV == "" {
		shown = make(map[types.UID]string, len(cached))
		for _, p := range cached {
			if p != nil {
				shown[p.UID] = p.ResourceVersion
			}
		}
	}
	var out []*corev1.Pod
	for id, p := range h.stamped {
		if cacheRV != "" && !newer(p.ResourceVersion, cacheRV) {
			delete(h.stamped, id)
			continue
		}
		if rv, ok := shown[id]; ok && !newer(p.ResourceVersion, rv) {
			delete(h.stamped, id)
			continue
		}
		if namespace != "" && p.Namespace != namespace {
			continue
		}
		if uid != "" {
			if ref := metav1.GetControllerOf(p); ref == nil || ref.UID != uid {
				continue
			}
		}
		out = append(out, p)
	}
	return out
}

// written returns the newest version Wrote recorded (or Resume).
func (h *Held) written() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wrote
}

// renew records a successful renewal that started at start.
func (h *Held) renew(start time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open && start.After(h.renewed) {
		h.renewed = start
	}
}

// close closes the fence for good.
func (h *Held) close(why string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.open {
		h.open = false
		h.why = why
	}
}

// newer reports whether resourceVersion a is newer than b in the order of
// k8s.io/apimachinery's resourceversion.CompareResourceVersion: both are
// decimal integers without leading zeros. "" is older than any version; a
// malformed a is never newer, a malformed b is older than a well-formed a.
func newer(a, b string) bool {
	if !wellFormed(a) {
		return false
	}
	if !wellFormed(b) {
		return true
	}
	if len(a) != len(b) {
		return len(a) > len(b)
	}
	return a > b
}

func wellFormed(v string) bool {
	if v == "" || v[0] == '0' {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return true
}
