package faultproxy

import (
	"net/http"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// heldWatch answers the pod watches that [Proxy.HoldPodWatches] refuses.
var heldWatch = status{http.StatusTooManyRequests, metav1.StatusReasonTooManyRequests,
	"faultproxy: pod watches are held, try again later"}

// CutPodWatches ends every pod watch ([IsPodWatch]) the proxy has admitted
// so far, at once, as kube-apiserver ends a watch at its timeout: the
// response ends cleanly (the last chunk on HTTP/1.1, the end of the stream
// on HTTP/2), not with an error, and the proxy closes its own request to
// the API server. Bytes the pod watch delay still holds back are dropped:
// a client resumes from the last resourceVersion it has seen, so the API
// server sends those events again. The stream is cut between two reads
// from the API server, so an event that arrived in pieces may be cut in the
// middle; client-go's decoder then ends the watch all the same.
//
// Pod watches admitted after the call are not affected; call
// [Proxy.HoldPodWatches] first to keep the client from reconnecting.
func (p *Proxy) CutPodWatches() {
	p.mu.Lock()
	defer p.mu.Unlock()
	close(p.cut)
	p.cut = make(chan struct{})
}

// HoldPodWatches sets whether new pod watch requests ([IsPodWatch]) are
// held. While they are, the proxy answers each in the API server's place,
// without forwarding it: 429 Too Many Requests with Retry-After: 1 and a
// Status of reason TooManyRequests. client-go treats that as retryable: its
// REST client tries again after the second (10 times by default), then its
// reflector backs off (800 ms, doubling, capped at 30 s, with jitter) and
// watches again from the same resourceVersion; it neither relists nor
// gives up. So the client reconnects at its next attempt after the
// release. A watch-list request (sendInitialEvents=true) is a watch and is
// held too; client-go keeps retrying it rather than falling back to a list.
//
// Only watches are held: lists and every other request pass, as a client
// that lists meanwhile gets current state from kube-apiserver anyway. Pod
// watches already open are not affected; see [Proxy.CutPodWatches].
func (p *Proxy) HoldPodWatches(hold bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holdWatches = hold
}
