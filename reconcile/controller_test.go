package reconcile_test

import (
	"context"
	"reflect"
	"regexp"
	"strconv"
	"strings"
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

	"github.com/reconcilekit/reconcilekit/expectations"
	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// Issue 13: a forgotten piece of wiring is an error from NewController that
// names it — in particular there is no default owner kind.
func TestNewControllerRequiresEveryPiece(t *testing.T) {
	full := func() reconcile.Config[*appsv1.ReplicaSet] {
		cfg := reconcile.ReplicaSets()
		cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = newRecOwners(), &recPodList{}, podClient{&recPods{}, &recPatcher{}}
		cfg.Cluster.CachesSynced = alwaysSynced
		(&recStatus{}).use(&cfg)
		return cfg
	}
	_, err := reconcile.NewController(full())
	require.NoError(t, err)
	for _, tc := range []struct {
		field string
		unset func(*reconcile.Config[*appsv1.ReplicaSet])
	}{
		{"Kind", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Kind = schema.GroupVersionKind{} }},
		{"Kind", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Kind.Version = "" }},
		{"Describe", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Describe = nil }},
		{"Status", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Status = nil }},
		{"Cluster.Owners", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.Owners = nil }},
		{"Cluster.Owners", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.Owners = (*recOwners)(nil) }},
		{"Cluster.Pods", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.Pods = nil }},
		{"Cluster.Pods", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.Pods = podsFunc(nil) }},
		{"Cluster.PodClient", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.PodClient = nil }},
		{"Cluster.PodClient", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.PodClient = (*podClient)(nil) }},
		{"Cluster.StatusWriter", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.StatusWriter = nil }},
		{"Cluster.StatusWriter", func(c *reconcile.Config[*appsv1.ReplicaSet]) {
			c.Cluster.StatusWriter = statusFunc[*appsv1.ReplicaSet](nil)
		}},
		{"Cluster.CachesSynced", func(c *reconcile.Config[*appsv1.ReplicaSet]) { c.Cluster.CachesSynced = nil }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			cfg := full()
			tc.unset(&cfg)
			c, err := reconcile.NewController(cfg)
			require.Error(t, err)
			assert.Nil(t, c)
			assert.Contains(t, err.Error(), "reconcile: NewController: Config."+tc.field+" is required")
		})
	}
	var zero reconcile.Config[*appsv1.ReplicaSet]
	_, err = reconcile.NewController(zero)
	assert.ErrorContains(t, err, "use ReplicaSets()", "the zero Config has no default kind")
}

// The Config is copied: a field changed after NewController (the Clock of
// the trap in issue 13) cannot be silently half-applied.
func TestNewControllerCopiesConfig(t *testing.T) {
	clock := fakeclock.New(podtest.Epoch)
	r := &recController{owners: newRecOwners(recRS(1)), pods: &recPodList{}, control: &recPods{}, patcher: &recPatcher{}, status: &recStatus{}}
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = r.owners, r.pods, podClient{r.control, r.patcher}
	cfg.Cluster.CachesSynced = alwaysSynced
	r.status.use(&cfg)
	cfg.Clock = clock
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	cfg.Clock = fakeclock.New(time.Time{})
	cfg.Cluster.PodClient = withControl(cfg.Cluster.PodClient, nil)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Equal(t, podtest.Epoch, res.Now)
	assert.Len(t, r.control.creates(), 1)
}

// Issue 13 trap: client-go's fake clientset ignores GenerateName, so in the
// counted mode every pod after the first would meet AlreadyExists. A create
// that comes back without a name is an error naming the cause and the fix,
// and the round is lowered; with TrackCreations all pods are made.
func TestTrapCreateIgnoresGenerateName(t *testing.T) {
	// ignoring stores by Name only, like the fake clientset's tracker.
	ignoring := func() reconcile.PodControl {
		var mu sync.Mutex
		stored := map[string]bool{}
		return podFuncs{
			Create: func(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) {
				mu.Lock()
				defer mu.Unlock()
				if stored[pod.Name] {
					return nil, apierrors.NewAlreadyExists(schema.GroupResource{Resource: "pods"}, pod.Name)
				}
				stored[pod.Name] = true
				return pod.DeepCopy(), nil
			},
			Delete: func(context.Context, *corev1.Pod) error { return nil },
		}
	}
	c := newRecController(t, newRecOwners(recRS(5)), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.PodClient = withControl(cfg.Cluster.PodClient, ignoring())
	})
	res, err := c.Sync(t.Context(), "default/web")
	require.Error(t, err)
	assert.ErrorContains(t, err, "CreatePod returned a pod without a name")
	assert.ErrorContains(t, err, "GenerateName")
	assert.ErrorContains(t, err, "Config.Expectations.Exact")
	assert.Equal(t, 1, res.Outcome.CreateFailed)
	assert.Equal(t, 4, res.Outcome.Skipped, "slow start stops after the failing batch")
	assert.True(t, c.Tracker().Satisfied("default/web"), "the round was lowered: no wait for the expiry")

	c = newRecController(t, newRecOwners(recRS(5)), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.PodClient = withControl(cfg.Cluster.PodClient, ignoring())
		cfg.SetTrackCreations(true)
	})
	res, err = c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Len(t, res.Outcome.Created, 5)
}

// The primitive Manager keeps upstream's behaviour (DESIGN fixed entry
// point): it does not look at the pod CreatePod returns, so a PodControl
// that returns the pod it was given counts as a success.
func TestManagerAcceptsUnnamedCreatedPods(t *testing.T) {
	m := &reconcile.Manager{Pods: podFuncs{
		Create: func(_ context.Context, pod *corev1.Pod) (*corev1.Pod, error) { return pod, nil },
	}}
	out, err := m.ManageReplicas(t.Context(), reconcile.ReplicaSetOwner(recRS(3)), nil, nil)
	require.NoError(t, err)
	assert.Len(t, out.Created, 3)
}

// Issue 13 trap: a Manager's Clock set after the first Tracker() call was
// silently ignored by the private Tracker. It now reads the Clock at each
// call: a round expires after the TTL on the clock set later.
func TestTrapManagerClockSetLate(t *testing.T) {
	m := &reconcile.Manager{Pods: &recPods{}}
	tracker := m.Tracker() // the private Tracker exists before the Clock is set
	clock := fakeclock.New(podtest.Epoch)
	m.Clock = clock
	_, err := m.ManageReplicas(t.Context(), reconcile.ReplicaSetOwner(recRS(1)), nil, nil)
	require.NoError(t, err)
	require.False(t, tracker.Satisfied("default/web"))
	snap, ok := tracker.Snapshot("default/web")
	require.True(t, ok)
	assert.Equal(t, podtest.Epoch, snap.Since, "the round started on the Manager's clock")
	clock.Step(expectations.DefaultTTL + time.Nanosecond)
	assert.True(t, tracker.Satisfied("default/web"), "expired on the Manager's clock")
}

// the default related pods are the pods, by selector, of every owner
// sharing the owner's controller (itself included), de-duplicated; owners
// with another controller and invalid selectors are skipped; a bare owner
// has none. Seen through the deletion rank: b shares its node with the
// sibling's pods, so it goes first although a is newer.
func TestDefaultRelated(t *testing.T) {
	t0 := podtest.Epoch
	dep := metav1.OwnerReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "d", UID: "uid-d", Controller: ptrTrue()}
	otherDep := dep
	otherDep.UID = "uid-other"
	withController := func(rs *appsv1.ReplicaSet, ref metav1.OwnerReference) *appsv1.ReplicaSet {
		rs.OwnerReferences = []metav1.OwnerReference{ref}
		return rs
	}
	web := withController(eventRS("web", 0), dep)
	web.Spec.Replicas = ptrInt32(1)
	sibling := withController(eventRS("sib", 0), dep)
	badSibling := withController(eventRS("bad", 0), dep)
	badSibling.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	stranger := withController(eventRS("stranger", 0), otherDep)

	mine := podtest.ControlledBy(web, "ReplicaSet", "apps/v1")
	webL := podtest.Labels(map[string]string{"app": "web"})
	pods := []*corev1.Pod{
		podtest.New("a", mine, webL, podtest.Node("n1"), podtest.Created(t0.Add(time.Hour))),
		podtest.New("b", mine, webL, podtest.Node("n2")),
	}
	for i := range 2 {
		pods = append(pods, podtest.New("sib-"+strconv.Itoa(i), podtest.Labels(map[string]string{"app": "sib"}), podtest.Node("n2")))
	}
	for i := range 5 {
		pods = append(pods, podtest.New("stranger-"+strconv.Itoa(i), podtest.Labels(map[string]string{"app": "stranger"}), podtest.Node("n1")))
	}
	victim := func(t *testing.T, rss ...*appsv1.ReplicaSet) string {
		t.Helper()
		c := newRecController(t, newRecOwners(rss...), pods, nil)
		res, err := c.Sync(t.Context(), "default/web")
		require.NoError(t, err)
		require.Len(t, res.Outcome.Victims, 1)
		return res.Outcome.Victims[0].Name
	}
	assert.Equal(t, "b", victim(t, web, sibling, badSibling, stranger), "ranked by the sibling's pods on n2, not the stranger's on n1")
	bare := web.DeepCopy()
	bare.OwnerReferences = nil
	assert.Equal(t, "a", victim(t, bare, sibling, stranger), "a bare owner has no related pods: the newer pod goes")
}

func ptrTrue() *bool          { b := true; return &b }
func ptrInt32(v int32) *int32 { return &v }

// Issue 33's goal for the Config a controller author fills: at most 15
// fields, at most 5 of them required (Kind, Describe, Status and the
// adapters' Cluster), and none that must be left zero.
func TestConfigShape(t *testing.T) {
	typ := reflect.TypeFor[reconcile.Config[*appsv1.ReplicaSet]]()
	var exported []string
	for i := range typ.NumField() {
		if f := typ.Field(i); f.IsExported() {
			exported = append(exported, f.Name)
		}
	}
	assert.LessOrEqual(t, len(exported), 15, "Config's fields: %v", exported)

	// Required: the zero Config's errors name them, one at a time.
	var required []string
	cfg := reconcile.Config[*appsv1.ReplicaSet]{}
	full := reconcile.ReplicaSets()
	full.Cluster.Owners, full.Cluster.Pods, full.Cluster.PodClient = newRecOwners(), &recPodList{}, podClient{&recPods{}, &recPatcher{}}
	full.Cluster.CachesSynced = alwaysSynced
	(&recStatus{}).use(&full)
	fill := map[string]func(){
		"Kind":                 func() { cfg.Kind = full.Kind },
		"Describe":             func() { cfg.Describe = full.Describe },
		"Status":               func() { cfg.Status = full.Status },
		"Cluster.Owners":       func() { cfg.Cluster.Owners = full.Cluster.Owners },
		"Cluster.Pods":         func() { cfg.Cluster.Pods = full.Cluster.Pods },
		"Cluster.PodClient":    func() { cfg.Cluster.PodClient = full.Cluster.PodClient },
		"Cluster.StatusWriter": func() { cfg.Cluster.StatusWriter = full.Cluster.StatusWriter },
		"Cluster.CachesSynced": func() { cfg.Cluster.CachesSynced = full.Cluster.CachesSynced },
	}
	for range len(fill) + 1 {
		_, err := reconcile.NewController(cfg)
		if err == nil {
			break
		}
		m := regexp.MustCompile(`Config\.([\w.]+) is required`).FindStringSubmatch(err.Error())
		require.NotNil(t, m, "an error that names no missing field: %v", err)
		required = append(required, m[1])
		require.Contains(t, fill, m[1])
		fill[m[1]]()
	}
	top := map[string]bool{}
	for _, r := range required {
		top[strings.Split(r, ".")[0]] = true
	}
	assert.LessOrEqual(t, len(top), 5, "required Config fields: %v", required)
	assert.Equal(t, []string{"Kind", "Describe", "Status", "Cluster.Owners", "Cluster.Pods", "Cluster.PodClient", "Cluster.StatusWriter", "Cluster.CachesSynced"}, required)
}
