package fencing

import (
	"errors"
	"fmt"
	"path"

	"k8s.io/client-go/rest"
)

// WrapConfig returns a copy of cfg whose clients go through
// [WrapTransport]'s check, and leaves cfg unchanged: build the
// controller's clients from the copy and keep cfg, unfenced, for the rest
// of the process. Unlike WrapTransport it knows the path prefix of
// cfg.Host and reads the API group right after it. A nil fence returns a
// plain copy. fence is called from the clients' goroutines, so it must be
// safe for concurrent use, as [Lock.Fence] is.
//
// A client built from the copy must use the copy's transport: with
// controller-runtime, leave client.Options.HTTPClient nil (the manager's
// own HTTP client is unfenced). The manager's event recorder is built from
// the manager's configuration, so its events are not fenced; build the
// controller's recorder from the copy if they must be.
//
// It returns an error for a nil cfg or a Host client-go cannot parse.
func WrapConfig(cfg *rest.Config, fence func() error) (*rest.Config, error) {
	if cfg == nil {
		return nil, errors.New("fencing: WrapConfig: nil config")
	}
	host, _, err := rest.DefaultServerUrlFor(cfg)
	if err != nil {
		return nil, fmt.Errorf("fencing: WrapConfig: %w", err)
	}
	out := rest.CopyConfig(cfg)
	prefix := path.Clean("/" + host.Path)
	if prefix == "/" {
		prefix = ""
	}
	out.Wrap(wrapper(fence, prefix, true))
	return out, nil
}
