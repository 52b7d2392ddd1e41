package reconcile_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// stampWorld is a small API server and pod cache for the configuration
// defects of issue 40: the pod client stamps labels (PodStamp), a
// mutating admission may rewrite a created pod's labels, and the cache
// shows only the pods its filter admits, as a label-selected watch does —
// a pod that stops passing the filter is delivered as a deletion of its
// last visible state. The cache is otherwise healthy: it is always up to
// date, and its version is the API's latest. Events are queued by the
// writes and delivered by deliver. Safe for concurrent use.
type stampWorld struct {
	mu      sync.Mutex
	rv      int
	seq     int
	pods    map[string]*corev1.Pod // by name
	stamp   map[string]string
	admit   func(*corev1.Pod)            // mutating admission on create; nil: none
	filter  func(map[string]string) bool // the cache's label filter; nil: every pod
	creates int
	deletes int
	patches int
	events  []func(c *reconcile.Controller[*appsv1.ReplicaSet]) []reconcile.SyncRequest

	dropFinished bool              // the cache also drops finished pods
	lean         bool              // the cache holds reconcile.LeanPod copies
	bystanders   map[string]string // name → resourceVersion of pods no write may touch
}

func newStampWorld(stamp map[string]string) *stampWorld {
	return &stampWorld{pods: map[string]*corev1.Pod{}, stamp: stamp}
}

func (w *stampWorld) visible(p *corev1.Pod) bool {
	if w.dropFinished && (p.Status.Phase == corev1.PodSucceeded || p.Status.Phase == corev1.PodFailed) {
		return false
	}
	return w.filter == nil || w.filter(p.Labels)
}

// cached is the copy of p the cache holds.
func (w *stampWorld) cached(p *corev1.Pod) *corev1.Pod {
	if w.lean {
		return reconcile.LeanPod(p)
	}
	return p.DeepCopy()
}

func sortPods(pods []*corev1.Pod) {
	sort.Slice(pods, func(i, j int) bool { return pods[i].Name < pods[j].Name })
}

func (w *stampWorld) nextRV() string {
	w.rv++
	return strconv.Itoa(w.rv)
}

// client is the world's PodClient: a PodGetter and a PodStamper too.
func (w *stampWorld) client() podFuncs {
	return podFuncs{
		Stamp: w.stamp,
		Create: func(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			p := pod.DeepCopy()
			w.seq++
			if p.Name == "" {
				p.Name = p.GenerateName + strconv.Itoa(w.seq)
			}
			p.UID = types.UID("uid-" + p.Name)
			if p.Labels == nil {
				p.Labels = map[string]string{}
			}
			maps.Copy(p.Labels, w.stamp)
			if w.admit != nil {
				w.admit(p)
			}
			p.ResourceVersion = w.nextRV()
			w.pods[p.Name] = p
			w.creates++
			if w.visible(p) {
				added := w.cached(p)
				w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) []reconcile.SyncRequest { return c.PodAdded(added) })
			}
			return p.DeepCopy(), nil
		},
		Delete: func(_ context.Context, pod *corev1.Pod) error {
			w.mu.Lock()
			defer w.mu.Unlock()
			p, ok := w.pods[pod.Name]
			if !ok {
				return apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, pod.Name)
			}
			delete(w.pods, pod.Name)
			w.deletes++
			if w.visible(p) {
				gone := w.cached(p)
				now := metav1.Now()
				gone.DeletionTimestamp = &now
				gone.ResourceVersion = w.nextRV()
				w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) []reconcile.SyncRequest { return c.PodDeleted(gone) })
			}
			return nil
		},
		Patch: func(_ context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			p, ok := w.pods[pod.Name]
			if !ok {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, pod.Name)
			}
			old := p.DeepCopy()
			if err := applyOwnerPatch(p, data); err != nil {
				return nil, err
			}
			var lp struct {
				Metadata struct {
					Labels map[string]string `json:"labels"`
				} `json:"metadata"`
			}
			if err := json.Unmarshal(data, &lp); err != nil {
				return nil, err
			}
			maps.Copy(p.Labels, lp.Metadata.Labels)
			p.ResourceVersion = w.nextRV()
			w.patches++
			w.changedLocked(old, p)
			return p.DeepCopy(), nil
		},
		Get: func(_ context.Context, namespace, name string) (*corev1.Pod, error) {
			w.mu.Lock()
			defer w.mu.Unlock()
			p, ok := w.pods[name]
			if !ok || p.Namespace != namespace {
				return nil, apierrors.NewNotFound(schema.GroupResource{Resource: "pods"}, name)
			}
			return p.DeepCopy(), nil
		},
	}
}

// changedLocked queues the event the cache delivers for a pod that changed
// from old to cur.
func (w *stampWorld) changedLocked(old, cur *corev1.Pod) {
	was, is := w.visible(old), w.visible(cur)
	o, n := w.cached(old), w.cached(cur)
	switch {
	case was && is:
		w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) []reconcile.SyncRequest { return c.PodUpdated(o, n) })
	case was:
		// A label-selected watch: a deletion carrying the last visible state.
		o.ResourceVersion = n.ResourceVersion
		w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) []reconcile.SyncRequest { return c.PodDeleted(o) })
	case is:
		w.events = append(w.events, func(c *reconcile.Controller[*appsv1.ReplicaSet]) []reconcile.SyncRequest { return c.PodAdded(n) })
	}
}

// relabel is an outside actor's label change of pod name.
func (w *stampWorld) relabel(name string, edit func(map[string]string)) {
	w.mu.Lock()
	defer w.mu.Unlock()
	p := w.pods[name]
	old := p.DeepCopy()
	edit(p.Labels)
	p.ResourceVersion = w.nextRV()
	w.changedLocked(old, p)
}

// List is the cache: the pods its filter admits.
func (w *stampWorld) List(namespace string) ([]*corev1.Pod, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out []*corev1.Pod
	for _, p := range w.pods {
		if p.Namespace == namespace && w.visible(p) {
			out = append(out, w.cached(p))
		}
	}
	sortPods(out)
	return out, nil
}

func (w *stampWorld) version() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return strconv.Itoa(w.rv)
}

// deliver hands the queued events to c.
func (w *stampWorld) deliver(c *reconcile.Controller[*appsv1.ReplicaSet]) {
	w.mu.Lock()
	events := w.events
	w.events = nil
	w.mu.Unlock()
	for _, ev := range events {
		ev(c)
	}
}

func (w *stampWorld) counts() (pods, creates int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.pods), w.creates
}

// stampRS is a ReplicaSet "web" of replicas pods labeled app=web, selected
// by sel.
func stampRS(replicas int32, sel *metav1.LabelSelector) *appsv1.ReplicaSet {
	rs := recRS(replicas)
	rs.Generation = 1
	rs.Spec.Selector = sel
	return rs
}

// newStampController builds a Controller over w for rs, with Exact when
// exact (the cache's version is the world's).
func newStampController(t *testing.T, w *stampWorld, rs *appsv1.ReplicaSet, clock *fakeclock.Clock, exact bool, tunes ...func(*reconcile.Config[*appsv1.ReplicaSet])) *reconcile.Controller[*appsv1.ReplicaSet] {
	t.Helper()
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners = newRecOwners(rs)
	cfg.Cluster.CachesSynced = alwaysSynced
	cfg.Cluster.Pods = w
	cfg.Cluster.PodClient = w.client()
	(&recStatus{}).use(&cfg)
	cfg.Clock = clock
	if exact {
		cfg.Expectations.Exact = true
		cfg.Cluster.CacheVersions.Pods = w.version
	}
	for _, tune := range tunes {
		tune(&cfg)
	}
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	return c
}

const stampKey = "example.com/owned-by"

var stampLabels = map[string]string{stampKey: "web"}

// Issue 40: a selector that excludes the stamp passes validation of the
// template alone; every created pod would be released and created again
// (100 pods after 50 syncs). Sync now checks the selector against the
// template with the stamp and creates nothing.
func TestSelectorExcludingTheStampIsInvalid(t *testing.T) {
	for _, op := range []metav1.LabelSelectorOperator{metav1.LabelSelectorOpDoesNotExist, metav1.LabelSelectorOpNotIn} {
		t.Run(string(op), func(t *testing.T) {
			req := metav1.LabelSelectorRequirement{Key: stampKey, Operator: op}
			if op == metav1.LabelSelectorOpNotIn {
				req.Values = []string{"web"}
			}
			sel := &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}, MatchExpressions: []metav1.LabelSelectorRequirement{req}}
			w := newStampWorld(stampLabels)
			c := newStampController(t, w, stampRS(2, sel), fakeclock.New(time.Unix(1e9, 0)), false)
			for range 50 {
				_, err := c.Sync(t.Context(), "default/web")
				require.ErrorIs(t, err, reconcile.ErrInvalidSpec)
				require.ErrorIs(t, err, reconcile.ErrTerminal)
				assert.Contains(t, err.Error(), "spec.template.metadata.labels")
				assert.Contains(t, err.Error(), stampKey+"=web")
				w.deliver(c)
			}
			_, creates := w.counts()
			assert.Zero(t, creates)
		})
	}
}

// Issue 40: a mutating admission that rewrites the labels the selector
// needs. The first pod the API server returns is checked, deleted and the
// owner stopped: one pod made, none left, terminal.
func TestCreatedPodTheSelectorMissesStopsCreating(t *testing.T) {
	w := newStampWorld(nil)
	w.admit = func(p *corev1.Pod) { p.Labels["app"] = "rewritten" }
	rs := stampRS(2, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
	c := newStampController(t, w, rs, fakeclock.New(time.Unix(1e9, 0)), false)
	for i := range 20 {
		res, err := c.Sync(t.Context(), "default/web")
		require.ErrorIs(t, err, reconcile.ErrCreationsStopped, "sync %d", i)
		require.ErrorIs(t, err, reconcile.ErrTerminal)
		if i == 0 {
			assert.Len(t, res.Outcome.NotSelected, 1)
		}
		w.deliver(c)
	}
	pods, creates := w.counts()
	assert.Equal(t, 1, creates)
	assert.Zero(t, pods)
}

// Issue 40: an owned-only cache whose filter the stamp does not meet: the
// controller cannot see what it creates. Before: 60 pods after 20 syncs
// for replicas 3 with Exact, one wave per TTL without. Now the breaker
// stops it within 3 syncs at no more than replicas + one slow-start batch.
func TestInvisibleCreationsStopCreating(t *testing.T) {
	for _, exact := range []bool{true, false} {
		t.Run(fmt.Sprintf("exact=%v", exact), func(t *testing.T) {
			w := newStampWorld(stampLabels)
			w.filter = func(l map[string]string) bool { return l["example.com/cache"] == "web" }
			clock := fakeclock.New(time.Unix(1e9, 0))
			var stops []string
			c := newStampController(t, w, stampRS(3, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}), clock, exact,
				func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
					cfg.Hooks.CreationsStopped = func(key, reason, _ string) { stops = append(stops, key+" "+reason) }
				})
			var terminalAt int
			for i := 1; i <= 20; i++ {
				_, err := c.Sync(t.Context(), "default/web")
				w.deliver(c)
				clock.Step(6 * time.Minute) // past the TTL: counted expectations expire
				if errors.Is(err, reconcile.ErrTerminal) {
					require.ErrorIs(t, err, reconcile.ErrCreationsStopped)
					assert.Contains(t, err.Error(), "never appeared in its pod cache")
					if terminalAt == 0 {
						terminalAt = i
					}
				}
			}
			_, creates := w.counts()
			assert.LessOrEqual(t, creates, 3+1, "replicas + one slow-start batch")
			assert.NotZero(t, terminalAt)
			assert.LessOrEqual(t, terminalAt, 3)
			assert.Equal(t, []string{"default/web CreatedPodsNotObserved"}, stops, "once per opening")
		})
	}
}

// Issue 40, R-13.7: an actor keeps stripping the stamp from controlled
// pods; an owned-only cache reports each as deleted. The controller reads
// the pod live, puts the stamp back and creates no replacement.
func TestStrippedStampIsPutBack(t *testing.T) {
	w := newStampWorld(stampLabels)
	w.filter = func(l map[string]string) bool { return l[stampKey] == "web" }
	c := newStampController(t, w, stampRS(2, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}), fakeclock.New(time.Unix(1e9, 0)), true)
	sync := func() reconcile.SyncResult {
		t.Helper()
		res, err := c.Sync(t.Context(), "default/web")
		require.NoError(t, err)
		w.deliver(c)
		return res
	}
	sync()
	sync()
	_, creates := w.counts()
	require.Equal(t, 2, creates)
	restamped := 0
	for range 10 {
		list, _ := w.List("default")
		require.NotEmpty(t, list)
		w.relabel(list[0].Name, func(l map[string]string) { delete(l, stampKey) })
		w.deliver(c)
		res := sync()
		restamped += len(res.Restamped)
		sync()
	}
	pods, creates := w.counts()
	assert.Equal(t, 2, creates, "no replacement while the stripped pod exists")
	assert.Equal(t, 2, pods)
	assert.Equal(t, 10, restamped)
	list, _ := w.List("default")
	assert.Len(t, list, 2, "every pod carries the stamp again")
}

// Issue 40, R-13.7: a stripped pod the selector no longer matches is
// released, as upstream's claim would, and replaced.
func TestStrippedPodTheSelectorMissesIsReleased(t *testing.T) {
	w := newStampWorld(stampLabels)
	w.filter = func(l map[string]string) bool { return l[stampKey] == "web" }
	c := newStampController(t, w, stampRS(1, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}), fakeclock.New(time.Unix(1e9, 0)), true)
	_, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	w.deliver(c)
	list, _ := w.List("default")
	require.Len(t, list, 1)
	w.relabel(list[0].Name, func(l map[string]string) { delete(l, stampKey); l["app"] = "debug" })
	w.deliver(c)
	_, err = c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	w.deliver(c)
	w.mu.Lock()
	stripped := w.pods[list[0].Name]
	w.mu.Unlock()
	assert.Nil(t, metav1.GetControllerOf(stripped), "released")
	_, creates := w.counts()
	assert.Equal(t, 2, creates, "replaced once released")
}

// Issue 40: expiries that would stall an owner, or never wait, are
// rejected with what to use instead.
func TestExpectationDurationsThatStallAreRejected(t *testing.T) {
	cases := map[string]func(*reconcile.ExpectationOptions){
		"negative TTL":         func(e *reconcile.ExpectationOptions) { e.TTL = -1 },
		"TTL just too long":    func(e *reconcile.ExpectationOptions) { e.TTL = time.Hour + 1 },
		"TTL too long":         func(e *reconcile.ExpectationOptions) { e.TTL = 1000 * time.Hour },
		"negative SafetyLimit": func(e *reconcile.ExpectationOptions) { e.SafetyLimit = -time.Minute },
		"SafetyLimit too long": func(e *reconcile.ExpectationOptions) { e.SafetyLimit = 24 * time.Hour },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			cfg := reconcile.ReplicaSets()
			w := newStampWorld(nil)
			cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = newRecOwners(), w, w.client()
			cfg.Cluster.CachesSynced = alwaysSynced
			(&recStatus{}).use(&cfg)
			edit(&cfg.Expectations)
			_, err := reconcile.NewController(cfg)
			require.Error(t, err)
			assert.Regexp(t, `^reconcile: NewController: Config\.Expectations\.\w+ is .*; use `, err.Error())
		})
	}
	cfg := reconcile.ReplicaSets()
	w := newStampWorld(nil)
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = newRecOwners(), w, w.client()
	cfg.Cluster.CachesSynced = alwaysSynced
	(&recStatus{}).use(&cfg)
	cfg.Expectations.TTL = time.Minute
	cfg.Expectations.SafetyLimit = time.Hour
	_, err := reconcile.NewController(cfg)
	assert.NoError(t, err)
}

// Issue 40, R-14.4: as apps/v1, a template without labels is valid when
// the selector matches empty labels; and a missing template blocks
// creating, never deleting.
func TestParityWithAppsV1(t *testing.T) {
	t.Run("label-less template", func(t *testing.T) {
		w := newStampWorld(nil)
		rs := stampRS(2, &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpDoesNotExist}}})
		rs.Spec.Template.Labels = nil
		c := newStampController(t, w, rs, fakeclock.New(time.Unix(1e9, 0)), false)
		_, err := c.Sync(t.Context(), "default/web")
		require.NoError(t, err)
		w.deliver(c)
		_, creates := w.counts()
		assert.Equal(t, 2, creates)
	})
	t.Run("no template, scale to 0", func(t *testing.T) {
		w := newStampWorld(nil)
		rs := stampRS(2, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}})
		owners := newRecOwners(rs)
		cfg := reconcile.ReplicaSets()
		cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = owners, w, w.client()
		cfg.Cluster.CachesSynced = alwaysSynced
		(&recStatus{}).use(&cfg)
		// A custom resource may have no template at all: here, one whose
		// template has no containers.
		cfg.Describe = func(rs *appsv1.ReplicaSet) (reconcile.Owner, error) {
			o := reconcile.ReplicaSetOwner(rs)
			if len(rs.Spec.Template.Spec.Containers) == 0 {
				o.Template = nil
			}
			return o, nil
		}
		c, err := reconcile.NewController(cfg)
		require.NoError(t, err)
		_, err = c.Sync(t.Context(), "default/web")
		require.NoError(t, err)
		w.deliver(c)
		_, err = c.Sync(t.Context(), "default/web")
		require.NoError(t, err)

		noTemplate := rs.DeepCopy()
		noTemplate.Generation = 2
		noTemplate.Spec.Template.Spec = corev1.PodSpec{}
		*noTemplate.Spec.Replicas = 3
		owners.set(noTemplate)
		_, err = c.Sync(t.Context(), "default/web")
		require.ErrorIs(t, err, reconcile.ErrInvalidSpec, "creating needs the template")
		assert.Contains(t, err.Error(), "spec.template: Required value")

		*noTemplate.Spec.Replicas = 0
		_, err = c.Sync(t.Context(), "default/web")
		require.NoError(t, err)
		pods, creates := w.counts()
		assert.Equal(t, 2, creates)
		assert.Zero(t, pods, "deleting needs no template")
	})
}

// a pod client that may not read pods (RBAC without get) answers
// Forbidden; the pod that left the cache is then taken as gone and
// replaced, as upstream would, instead of holding the owner forever.
func TestStrippedStampWithoutGetIsReplaced(t *testing.T) {
	w := newStampWorld(stampLabels)
	w.filter = func(l map[string]string) bool { return l[stampKey] == "web" }
	c := newStampController(t, w, stampRS(1, &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}}), fakeclock.New(time.Unix(1e9, 0)), true,
		func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
			client := w.client()
			client.Get = func(_ context.Context, _, name string) (*corev1.Pod, error) {
				return nil, apierrors.NewForbidden(schema.GroupResource{Resource: "pods"}, name, errors.New("no get"))
			}
			cfg.Cluster.PodClient = client
		})
	_, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	w.deliver(c)
	list, _ := w.List("default")
	require.Len(t, list, 1)
	w.relabel(list[0].Name, func(l map[string]string) { delete(l, stampKey) })
	w.deliver(c)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Empty(t, res.Restamped)
	_, creates := w.counts()
	assert.Equal(t, 2, creates, "replaced, as upstream")
}
