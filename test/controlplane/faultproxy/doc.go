// Package faultproxy is a loopback HTTPS reverse proxy that sits between one
// client (a controller under test) and kube-apiserver and injects faults on
// command. The client's kubeconfig points at the proxy; everything else talks
// to kube-apiserver directly.
//
// Faults it injects, each commanded at run time by a method of [Proxy]:
//
//   - A pod watch delay ([Proxy.SetPodWatchDelay]): every byte of every pod
//     watch response (GET …/pods with watch=true, cluster-wide or in a
//     namespace) reaches the client the current delay after it arrived from
//     kube-apiserver, in order. Watch events, bookmarks included, are thus
//     delayed whatever their encoding (JSON, protobuf, CBOR), because the
//     delay is applied to the byte stream, not to decoded events. The delay
//     can change at any time and applies at once to what is still buffered:
//     lowering it to 0 releases every buffered byte.
//   - A cut pod watch ([Proxy.CutPodWatches]): every open pod watch ends at
//     once, cleanly, as when kube-apiserver ends one; bytes the delay still
//     holds back are dropped.
//   - Held pod watches ([Proxy.HoldPodWatches]): while on, new pod watch
//     requests are not forwarded but answered 429 with Retry-After: 1,
//     which client-go retries without relisting, until released. Lists
//     are not held.
//   - Expired pod watches ([Proxy.ExpirePodWatchesBefore]): a pod watch
//     that resumes from a resourceVersion older than a given one is
//     answered 410 Expired, as when the API server no longer holds the
//     events after it, so the client lists again and never sees the
//     events in between.
//   - Dropped pod create responses ([Proxy.DropPodCreateResponses]): the
//     next n pod creates the API server accepts are applied, but the client
//     gets a 504 Timeout instead of the 201.
//   - Failed writes ([Proxy.FailWrites]): a fraction of the writes (POST,
//     PUT, PATCH, DELETE) are not forwarded but answered 500 or 429, picked
//     by a deterministic counter (the first, then evenly spaced), not at
//     random, so that tests are reproducible.
//
// The proxy's own answers are Kubernetes Status objects in JSON, which
// client-go turns into the apierrors error of their reason. [Stats] counts
// each fault's victims, and the bytes of the pod watch responses and of the
// ReplicaSet watch and list responses ([IsReplicaSetWatch],
// [IsReplicaSetList]), which pass through unaltered: a sharded controller's
// owner watches carry its shards' owners alone when kube-apiserver selects
// them. Of the ReplicaSet watches it also counts those that stream a list
// first (sendInitialEvents=true) and their bytes up to the bookmark that
// ends the list, so that a list streamed again (a shard taken, an expired
// watch) shows apart from the events.
//
// Guarantees:
//
//   - Nothing else is altered: lists, other watches and the requests no
//     fault targets pass through with their bodies byte for byte and their
//     headers as sent, except the hop-by-hop headers that every proxy drops
//     (Connection, Keep-Alive, Proxy-*, TE, Trailer, Transfer-Encoding,
//     Upgrade); with every fault off, every request does. Responses are
//     flushed to the client after every write, so streams are never held
//     back by buffering; HTTP/2 and HTTP/1.1 clients are both served.
//   - Bounded goroutines: net/http's per-connection goroutines (client side
//     and API server side), one handler goroutine per request and one reader
//     goroutine per pod watch. [Proxy.Close] stops the server, ends every
//     open request, returns only when every handler and reader goroutine has
//     finished (a handler that net/http aborts with http.ErrAbortHandler, as
//     httputil.ReverseProxy does when a client leaves mid-stream, may still
//     be unwinding through net/http's recovery), and closes every
//     connection, client side and API server side, so that net/http's
//     goroutines end with them. The faults start no goroutine of their own.
//   - Time comes from [Options.Clock] (nil: real time), so tests of the
//     delay step a fake clock instead of sleeping.
//
// The proxy is test support for the e2e tests in test/controlplane; it
// is not hardened for anything else (bytes held back by a delay are buffered
// in memory without bound).
package faultproxy
