// Package faultproxy is a loopback HTTPS reverse proxy that sits between one
// client (a controller under test) and kube-apiserver and injects faults on
// command. The client's kubeconfig points at the proxy; everything else talks
// to kube-apiserver directly.
//
// Faults it injects today:
//
//   - A pod watch delay ([Proxy.SetPodWatchDelay]): every byte of every pod
//     watch response (GET …/pods with watch=true, cluster-wide or in a
//     namespace) reaches the client the current delay after it arrived from
//     kube-apiserver, in order. Watch events, bookmarks included, are thus
//     delayed whatever their encoding (JSON, protobuf, CBOR), because the
//     delay is applied to the byte stream, not to decoded events. The delay
//     can change at any time and applies at once to what is still buffered:
//     lowering it to 0 releases every buffered byte.
//
// Guarantees:
//
//   - Nothing else is altered: lists, other watches and writes pass through
//     with their bodies byte for byte and their headers as sent, except the
//     hop-by-hop headers that every proxy drops (Connection, Keep-Alive,
//     Proxy-*, TE, Trailer, Transfer-Encoding, Upgrade). Responses are
//     flushed to the client after every write, so streams are never held
//     back by buffering; HTTP/2 and HTTP/1.1 clients are both served.
//   - Bounded goroutines: net/http's per-connection goroutines (client side
//     and API server side), one handler goroutine per request and one reader
//     goroutine per pod watch. [Proxy.Close] stops the server, ends every
//     open request, returns only when every handler and reader goroutine has
//     returned, and closes every connection, client side and API server
//     side, so that net/http's goroutines end with them.
//   - Time comes from [Options.Clock] (nil: real time), so tests of the
//     delay step a fake clock instead of sleeping.
//
// The proxy is test support for the e2e tests in internal/controlplane; it
// is not hardened for anything else (bytes held back by a delay are buffered
// in memory without bound).
package faultproxy
