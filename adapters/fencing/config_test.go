package fencing_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	authenticationv1 "k8s.io/api/authentication/v1"
	authorizationv1 "k8s.io/api/authorization/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/reconcilekit/reconcilekit/adapters/fencing"
)

// apiServer is an httptest server on 127.0.0.1 standing in for
// kube-apiserver: it records each request's method and path and answers a
// write with its own body (what a create or update returns), a GET with an
// empty pod, a DELETE with a Success status. It validates nothing and
// stores nothing.
type apiServer struct {
	*httptest.Server
	mu   sync.Mutex
	seen []string
}

func newAPIServer(t *testing.T) *apiServer {
	t.Helper()
	s := &apiServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.seen = append(s.seen, r.Method+" "+r.URL.Path)
		s.mu.Unlock()
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "application/json")
		switch r.Method {
		case http.MethodGet:
			_, _ = io.WriteString(w, `{"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1"}}`)
		case http.MethodDelete:
			_, _ = io.WriteString(w, `{"kind":"Status","apiVersion":"v1","status":"Success"}`)
		case http.MethodPost:
			w.WriteHeader(http.StatusCreated)
			_, _ = w.Write(body)
		default:
			_, _ = w.Write(body)
		}
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *apiServer) reached() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.seen
	s.seen = nil
	return out
}

// clientCall is one call of a typed clientset.
type clientCall struct {
	name string
	call func(ctx context.Context, c kubernetes.Interface) error
}

// The calls whose requests reach the API server while fenced: the
// lease, every review kind, reads.
var passWhileFenced = []clientCall{
	{"update the lease", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoordinationV1().Leases("kube-system").Update(ctx, &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Name: "rs"}}, metav1.UpdateOptions{})
		return err
	}},
	{"TokenReview", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AuthenticationV1().TokenReviews().Create(ctx, &authenticationv1.TokenReview{}, metav1.CreateOptions{})
		return err
	}},
	{"SelfSubjectReview", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AuthenticationV1().SelfSubjectReviews().Create(ctx, &authenticationv1.SelfSubjectReview{}, metav1.CreateOptions{})
		return err
	}},
	{"SubjectAccessReview", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AuthorizationV1().SubjectAccessReviews().Create(ctx, &authorizationv1.SubjectAccessReview{}, metav1.CreateOptions{})
		return err
	}},
	{"SelfSubjectAccessReview", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AuthorizationV1().SelfSubjectAccessReviews().Create(ctx, &authorizationv1.SelfSubjectAccessReview{}, metav1.CreateOptions{})
		return err
	}},
	{"LocalSubjectAccessReview", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AuthorizationV1().LocalSubjectAccessReviews("default").Create(ctx, &authorizationv1.LocalSubjectAccessReview{}, metav1.CreateOptions{})
		return err
	}},
	{"SelfSubjectRulesReview", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.AuthorizationV1().SelfSubjectRulesReviews().Create(ctx, &authorizationv1.SelfSubjectRulesReview{}, metav1.CreateOptions{})
		return err
	}},
	{"get a pod", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Pods("default").Get(ctx, "web-1", metav1.GetOptions{})
		return err
	}},
}

// The calls refused while fenced: writes.
var refusedWhileFenced = []clientCall{
	{"create a pod", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Pods("default").Create(ctx, &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-1"}}, metav1.CreateOptions{})
		return err
	}},
	{"delete a pod", func(ctx context.Context, c kubernetes.Interface) error {
		return c.CoreV1().Pods("default").Delete(ctx, "web-1", metav1.DeleteOptions{})
	}},
	{"create an event", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().Events("default").Create(ctx, &corev1.Event{ObjectMeta: metav1.ObjectMeta{Name: "e"}}, metav1.CreateOptions{})
		return err
	}},
	{"request a service account token", func(ctx context.Context, c kubernetes.Interface) error {
		_, err := c.CoreV1().ServiceAccounts("default").CreateToken(ctx, "default", &authenticationv1.TokenRequest{}, metav1.CreateOptions{})
		return err
	}},
}

var errStandby = errors.New("standby")

func closedFence() error { return errStandby }

// through client-go: the paths client-go builds for the lease and
// for every review kind pass a closed fence, writes do not, behind a Host
// path prefix too, one with an "api" segment of its own that WrapTransport
// cannot tell from the API path; the config given is not changed.
func TestWrapConfig(t *testing.T) {
	for _, prefix := range []string{"", "/k8s/clusters/c-1", "/api/k8s"} {
		t.Run("prefix "+prefix, func(t *testing.T) {
			srv := newAPIServer(t)
			cfg := &rest.Config{Host: srv.URL + prefix, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
			fenced, err := fencing.WrapConfig(cfg, closedFence)
			require.NoError(t, err)
			require.Nil(t, cfg.WrapTransport, "cfg is not changed")
			c, err := kubernetes.NewForConfig(fenced)
			require.NoError(t, err)
			for _, call := range passWhileFenced {
				require.NoError(t, call.call(t.Context(), c), call.name)
				reached := srv.reached()
				if assert.Len(t, reached, 1, call.name) {
					assert.Regexp(t, "^[A-Z]+ "+prefix+"/apis?/", reached[0], call.name)
				}
			}
			for _, call := range refusedWhileFenced {
				err := call.call(t.Context(), c)
				assert.ErrorIs(t, err, errStandby, call.name)
				assert.Empty(t, srv.reached(), call.name)
			}

			plain, err := kubernetes.NewForConfig(cfg)
			require.NoError(t, err)
			for _, call := range refusedWhileFenced {
				require.NoError(t, call.call(t.Context(), plain), "cfg itself stays unfenced: %s", call.name)
				assert.Len(t, srv.reached(), 1, call.name)
			}
		})
	}
	t.Run("WrapTransport takes a prefix's api segment for the API path", func(t *testing.T) {
		srv := newAPIServer(t)
		cfg := &rest.Config{Host: srv.URL + "/api/k8s", ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
		cfg.Wrap(fencing.WrapTransport(closedFence))
		c, err := kubernetes.NewForConfig(cfg)
		require.NoError(t, err)
		assert.ErrorIs(t, passWhileFenced[0].call(t.Context(), c), errStandby, "the lease, read as the core group")
		assert.Empty(t, srv.reached())
	})
	t.Run("nil fence: a plain copy", func(t *testing.T) {
		srv := newAPIServer(t)
		cfg := &rest.Config{Host: srv.URL, ContentConfig: rest.ContentConfig{ContentType: "application/json"}}
		cp, err := fencing.WrapConfig(cfg, nil)
		require.NoError(t, err)
		assert.NotSame(t, cfg, cp)
		c, err := kubernetes.NewForConfig(cp)
		require.NoError(t, err)
		require.NoError(t, refusedWhileFenced[0].call(t.Context(), c))
		assert.Len(t, srv.reached(), 1)
	})
}

func TestWrapConfigRejects(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  *rest.Config
	}{
		{"nil config", nil},
		{"a host:port with a path", &rest.Config{Host: "127.0.0.1:6443/prefix"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := fencing.WrapConfig(tc.cfg, closedFence)
			assert.ErrorContains(t, err, "fencing: WrapConfig: ")
			assert.Nil(t, out)
		})
	}
}
