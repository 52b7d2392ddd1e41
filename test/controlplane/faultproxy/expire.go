package faultproxy

import (
	"fmt"
	"net/http"
	"strconv"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// expiredWatch answers the pod watches that [Proxy.ExpirePodWatchesBefore]
// refuses.
var expiredWatch = status{http.StatusGone, metav1.StatusReasonExpired,
	"faultproxy: too old resource version: the events after it are gone, as after a compaction"}

// ExpirePodWatchesBefore makes the proxy answer every pod watch request
// ([IsPodWatch]) that resumes from a resourceVersion older than
// resourceVersion in the API server's place, without forwarding it: 410
// Gone with a Status of reason Expired. That is what a client gets when it
// resumes a watch from a version the API server no longer holds the events
// after (its watch cache has moved on and etcd has compacted them): the
// events in between are lost to it for good, and it must list again.
// kube-apiserver says so in the first event of a watch stream (an ERROR
// event with the same Status) rather than in the response's status line;
// client-go's reflector treats both alike: it lists again, from its last
// resourceVersion, which returns current state, and watches from the
// list's version. The proxy answers with the status line because an event
// would have to be encoded in the content type the client negotiated.
//
// A watch resumes from a version when its resourceVersion parameter is a
// decimal number other than 0 and it does not ask for initial events
// (sendInitialEvents=true). Watches without a version, from "0" (any
// version) or asking for initial events start from current state and pass,
// as do versions that are not numbers (the API server refuses those itself).
// So once the client has listed again, its next watch, from the list's
// version, passes: the fault removes history, as a compaction does, and
// leaves no client stuck. A held watch ([Proxy.HoldPodWatches]) is held
// first; the expiry applies once the hold is released.
//
// resourceVersion "" (or "0", which no version is older than) turns the
// fault off. A resourceVersion that is not a
// decimal number is an error and changes nothing.
func (p *Proxy) ExpirePodWatchesBefore(resourceVersion string) error {
	var horizon uint64
	if resourceVersion != "" {
		v, err := strconv.ParseUint(resourceVersion, 10, 64)
		if err != nil {
			return fmt.Errorf("faultproxy: ExpirePodWatchesBefore: resourceVersion %q is not a decimal number", resourceVersion)
		}
		horizon = v
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.expireBefore = horizon
	return nil
}

// expired reports whether the pod watch r resumes from a version older than
// the horizon; p.mu is held.
func (p *Proxy) expired(r *http.Request) bool {
	if p.expireBefore == 0 {
		return false
	}
	q := r.URL.Query()
	if q.Get("sendInitialEvents") == "true" {
		return false
	}
	v, err := strconv.ParseUint(q.Get("resourceVersion"), 10, 64)
	return err == nil && v != 0 && v < p.expireBefore
}
