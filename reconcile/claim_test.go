package reconcile_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
)

// The exact patches upstream's ControllerRefManager sends: adoption
// adds a controller ownerRef with blockOwnerDeletion, release deletes the
// ownerRef by owner UID; both carry the pod's UID as a precondition.
const (
	wantAdoptPatch   = `{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web","uid":"uid-web","controller":true,"blockOwnerDeletion":true}],"uid":"uid-%s"}}`
	wantReleasePatch = `{"metadata":{"uid":"uid-%s","ownerReferences":[{"$patch":"delete","uid":"uid-web"}]}}`
)

func patchFor(shape, pod string) string { return strings.ReplaceAll(shape, "%s", pod) }

var podsResource = schema.GroupResource{Resource: "pods"}

// which pods a sync claims, adopts and releases.
func TestClaim(t *testing.T) {
	t0 := podtest.Epoch
	rs := recRS(5) // replicas high enough that nothing is deleted
	mine := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	other := podtest.ControlledBy(&metav1.ObjectMeta{Name: "other", UID: "uid-other"}, "ReplicaSet", "apps/v1")
	match := podtest.Labels(map[string]string{"app": "web"})
	nomatch := podtest.Labels(map[string]string{"app": "api"})
	cases := []struct {
		name         string
		pod          *corev1.Pod
		deleting     bool
		wantActive   bool
		wantTerm     bool
		wantPatch    string // "", "adopt" or "release"
		wantLiveRead bool
	}{
		{name: "R-10.5 owned and matching: kept", pod: podtest.New("p", mine, match), wantActive: true},
		{name: "R-10.5 owned and matching, owner deleting: kept", pod: podtest.New("p", mine, match), deleting: true, wantActive: true},
		{name: "R-12.2 owned, no longer matching: released", pod: podtest.New("p", mine, nomatch), wantPatch: "release"},
		{name: "R-12.2 owned, no longer matching, owner deleting: neither kept nor released",
			pod: podtest.New("p", mine, nomatch), deleting: true},
		{name: "R-9.5 matching orphan: adopted after a live read", pod: podtest.New("p", match),
			wantActive: true, wantPatch: "adopt", wantLiveRead: true},
		{name: "R-9.5 matching orphan, owner deleting: not adopted", pod: podtest.New("p", match), deleting: true},
		{name: "R-9.5 orphan not matching: ignored", pod: podtest.New("p", nomatch)},
		{name: "R-9.5 orphan without labels: ignored", pod: podtest.New("p")},
		{name: "R-10.5 terminating orphan: never adopted or counted", pod: podtest.New("p", match, podtest.Deleting(t0))},
		{name: "R-10.5 terminal orphan: ignored", pod: podtest.New("p", match, podtest.Phase(corev1.PodSucceeded))},
		{name: "R-10.5 pod of another controller: ignored", pod: podtest.New("p", other, match)},
		{name: "R-10.5 pod of another controller, not matching: never released", pod: podtest.New("p", other, nomatch)},
		{name: "R-10.5 owned terminating and matching: counted terminating", pod: podtest.New("p", mine, match, podtest.Deleting(t0)), wantTerm: true},
		{name: "R-10.5 owned terminating, not matching: neither counted nor released", pod: podtest.New("p", mine, nomatch, podtest.Deleting(t0))},
		{name: "R-10.5 owned terminal: ignored", pod: podtest.New("p", mine, match, podtest.Phase(corev1.PodFailed))},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(5)
			if tc.deleting {
				rs.DeletionTimestamp = &metav1.Time{Time: t0}
			}
			owners := newRecOwners(rs)
			before := tc.pod.DeepCopy()
			c := newRecController(t, owners, []*corev1.Pod{tc.pod}, nil)
			c.Tracker().ExpectCreations("default/web", 1) // no manage step: claiming alone
			res, err := c.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			assert.Equal(t, tc.wantActive, len(res.Active) == 1, "Active")
			assert.Equal(t, tc.wantTerm, len(res.Terminating) == 1, "Terminating")
			var want []patchCall
			switch tc.wantPatch {
			case "adopt":
				want = []patchCall{{Pod: "default/p", Data: patchFor(wantAdoptPatch, "p")}}
				require.Len(t, res.Adopted, 1)
				assert.True(t, metav1.IsControlledBy(res.Adopted[0], rs), "the patched pod")
			case "release":
				want = []patchCall{{Pod: "default/p", Data: patchFor(wantReleasePatch, "p")}}
				assert.Equal(t, []*corev1.Pod{tc.pod}, res.Released)
			}
			assert.Equal(t, want, c.patcher.recorded())
			if tc.wantPatch != "adopt" {
				assert.Empty(t, res.Adopted)
			}
			if tc.wantLiveRead {
				assert.Equal(t, 1, owners.liveReads())
			} else {
				assert.Zero(t, owners.liveReads(), "no live read without an adoption")
			}
			assert.Equal(t, before, tc.pod, "the caller's pod is never modified")
		})
	}
}

// the owner is re-read live once per sync, before the first
// adoption; a recreated owner (another UID), an owner being deleted or a
// failed read stops every adoption of that sync with one error, which ends
// the sync before the manage step and the status write. Releases still
// happen. The next sync reads again.
func TestClaimLiveRecheck(t *testing.T) {
	t0 := podtest.Epoch
	match := podtest.Labels(map[string]string{"app": "web"})
	recreated := recRS(3)
	recreated.UID = "uid-web-2"
	deleting := recRS(3)
	deleting.DeletionTimestamp = &metav1.Time{Time: t0}
	errAPI := errors.New("apiserver unavailable")
	for _, tc := range []struct {
		name     string
		live     *appsv1.ReplicaSet
		liveErr  error
		contains string
	}{
		{"owner recreated", recreated, nil, "the owner is gone (uid uid-web-2 now, uid-web cached)"},
		{"owner being deleted", deleting, nil, "the owner is being deleted"},
		{"live read fails", nil, errAPI, "re-reading the owner"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := recRS(3)
			owners := newRecOwners(rs)
			if tc.live != nil {
				owners.setLive(tc.live)
			}
			owners.liveErr = tc.liveErr
			mine := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
			pods := []*corev1.Pod{
				podtest.New("o1", match), podtest.New("o2", match),
				podtest.New("r", mine, podtest.Labels(map[string]string{"app": "api"})),
			}
			c := newRecController(t, owners, pods, nil)
			res, err := c.Sync(t.Context(), "default/web")
			require.ErrorContains(t, err, tc.contains)
			assert.Equal(t, 1, strings.Count(err.Error(), "cannot adopt"), "reported once: %v", err)
			assert.NotErrorIs(t, err, reconcile.ErrTerminal, "retried: the next sync reads again")
			if tc.liveErr != nil {
				assert.ErrorIs(t, err, tc.liveErr)
			}
			assert.Equal(t, 1, owners.liveReads(), "one live read per sync")
			assert.Equal(t, []patchCall{{Pod: "default/r", Data: patchFor(wantReleasePatch, "r")}}, c.patcher.recorded(),
				"no adoption; the release still happens")
			assert.Len(t, res.Released, 1)
			assert.False(t, res.Managed)
			assert.Empty(t, c.control.creates())
			assert.Empty(t, c.status.writes())

			_, err = c.Sync(t.Context(), "default/web")
			require.Error(t, err)
			assert.Equal(t, 2, owners.liveReads(), "memoized per sync, not across syncs")
		})
	}
}

// NotFound on adoption or release, and Invalid on release, mean the
// pod is gone or no longer ours: swallowed. Other patch errors are joined,
// every pod visited, and end the sync before the manage step.
func TestClaimPatchErrors(t *testing.T) {
	rs := recRS(2)
	mine := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	match := podtest.Labels(map[string]string{"app": "web"})
	nomatch := podtest.Labels(map[string]string{"app": "api"})
	notFound := apierrors.NewNotFound(podsResource, "x")
	invalid := apierrors.NewInvalid(schema.GroupKind{Kind: "Pod"}, "x", field.ErrorList{field.Invalid(field.NewPath("metadata"), "x", "no")})
	errA, errB := errors.New("patch a failed"), errors.New("patch b failed")
	pods := []*corev1.Pod{
		podtest.New("adopt-gone", match), podtest.New("adopt-fail", match), podtest.New("adopt-ok", match),
		podtest.New("release-gone", mine, nomatch), podtest.New("release-invalid", mine, nomatch),
		podtest.New("release-fail", mine, nomatch),
	}
	c := newRecController(t, newRecOwners(rs), pods, nil)
	c.patcher.Err = func(pod *corev1.Pod, _ []byte) error {
		switch pod.Name {
		case "adopt-gone", "release-gone":
			return notFound
		case "release-invalid":
			return invalid
		case "adopt-fail":
			return errA
		case "release-fail":
			return errB
		}
		return nil
	}
	res, err := c.Sync(t.Context(), "default/web")
	require.Error(t, err)
	assert.ErrorIs(t, err, errA)
	assert.ErrorIs(t, err, errB)
	assert.NotErrorIs(t, err, reconcile.ErrTerminal)
	assert.NotContains(t, err.Error(), "gone")
	assert.NotContains(t, err.Error(), "invalid")
	assert.Len(t, c.patcher.recorded(), 6, "every pod visited")
	assert.Equal(t, []string{"default/adopt-ok"}, recKeys(res.Adopted))
	assert.Equal(t, []string{"default/release-gone", "default/release-invalid"}, recKeys(res.Released))
	assert.False(t, res.Managed)
	assert.Empty(t, c.status.writes())
}

// Adopted pods count towards the replicas: a matching orphan
// replaces a create. The adoption's resourceVersion is recorded as the
// controller's write, for EvidenceFirst.
func TestClaimAdoptedPodsCount(t *testing.T) {
	rs := recRS(2)
	mine := podtest.ControlledBy(rs, "ReplicaSet", "apps/v1")
	match := podtest.Labels(map[string]string{"app": "web"})
	pods := []*corev1.Pod{podtest.New("a", mine, match), podtest.New("orphan", match, podtest.ResourceVersion("7"))}
	c := newRecController(t, newRecOwners(rs), pods, nil)
	c.patcher.Err = nil
	patch := c.patcher
	c.Controller = mustController(t, c, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.PodClient = withPatcher(cfg.Cluster.PodClient, patchFunc(func(ctx context.Context, pod *corev1.Pod, data []byte) (*corev1.Pod, error) {
			out, err := patch.PatchPod(ctx, pod, data)
			if out != nil {
				out.ResourceVersion = "42"
			}
			return out, err
		}))
	})
	// A pending round: the adoption is recorded into it.
	c.Tracker().ExpectCreations("default/web", 1)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	require.False(t, res.Managed)
	assert.Equal(t, []string{"default/a", "default/orphan"}, recKeys(res.Active))
	// Active holds the adopted pod as the patcher returned it, with the
	// controller reference, not the orphan as listed.
	require.Len(t, res.Adopted, 1)
	assert.Same(t, res.Adopted[0], res.Active[1])
	if ref := metav1.GetControllerOf(res.Active[1]); assert.NotNil(t, ref) {
		assert.Equal(t, rs.UID, ref.UID)
	}
	assert.Equal(t, "42", res.Active[1].ResourceVersion)
	snap, ok := c.Tracker().Snapshot("default/web")
	require.True(t, ok)
	assert.Equal(t, "42", snap.WriteRV)

	c.Tracker().CreationObserved("default/web")
	res, err = c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	require.True(t, res.Managed)
	assert.Equal(t, []string{"default/a", "default/orphan"}, recKeys(res.Active))
	assert.Equal(t, 0, res.Diff)
	assert.Empty(t, c.control.creates(), "the adopted orphan replaces a create")
}

// An orphan in another namespace than the owner's is never adopted, even
// if a Pods implementation returns it.
func TestClaimOtherNamespace(t *testing.T) {
	rs := recRS(1)
	stray := podtest.New("p", podtest.Namespace("elsewhere"), podtest.Labels(map[string]string{"app": "web"}))
	c := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Cluster.Pods = podsFunc(func(string) ([]*corev1.Pod, error) { return []*corev1.Pod{stray}, nil })
	})
	c.Tracker().ExpectCreations("default/web", 1)
	res, err := c.Sync(t.Context(), "default/web")
	require.NoError(t, err)
	assert.Empty(t, res.Active)
	assert.Empty(t, c.patcher.recorded())
}

// mustController rebuilds r's Controller with r's fakes and tune applied.
func mustController(t *testing.T, r *recController, tune func(*reconcile.Config[*appsv1.ReplicaSet])) *reconcile.Controller[*appsv1.ReplicaSet] {
	t.Helper()
	cfg := reconcile.ReplicaSets()
	cfg.Cluster.Owners, cfg.Cluster.Pods, cfg.Cluster.PodClient = r.owners, r.pods, podClient{r.control, r.patcher}
	cfg.Cluster.CachesSynced = alwaysSynced
	r.status.use(&cfg)
	tune(&cfg)
	c, err := reconcile.NewController(cfg)
	require.NoError(t, err)
	return c
}

// stampingClient is a podClient that declares stamp (a PodStamper).
type stampingClient struct {
	podClient
	stamp map[string]string
}

func (c stampingClient) PodStamp(metav1.Object) map[string]string { return c.stamp }

// with a PodStamper, an orphan that lacks a label of the stamp is
// adopted with the stamp in the same patch; one that carries it gets
// upstream's patch, byte for byte.
func TestClaimAdoptionStamps(t *testing.T) {
	stamp := map[string]string{"example.com/managed-by": "rs"}
	withStamp := strings.Replace(wantAdoptPatch, `"uid":"uid-%s"}}`, `"uid":"uid-%s","labels":{"example.com/managed-by":"rs"}}}`, 1)
	for _, tc := range []struct {
		name   string
		labels map[string]string
		want   string
	}{
		{"lacks the stamp", map[string]string{"app": "web"}, withStamp},
		{"another value of the stamp", map[string]string{"app": "web", "example.com/managed-by": "other"}, withStamp},
		{"carries the stamp", map[string]string{"app": "web", "example.com/managed-by": "rs"}, wantAdoptPatch},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pod := podtest.New("p", podtest.Labels(tc.labels))
			before := pod.DeepCopy()
			c := newRecController(t, newRecOwners(recRS(5)), []*corev1.Pod{pod}, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
				cfg.Cluster.PodClient = stampingClient{podClient: cfg.Cluster.PodClient.(podClient), stamp: stamp}
			})
			c.Tracker().ExpectCreations("default/web", 1) // no manage step: claiming alone
			res, err := c.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			require.Len(t, res.Adopted, 1)
			assert.Equal(t, []patchCall{{Pod: "default/p", Data: patchFor(tc.want, "p")}}, c.patcher.recorded())
			assert.Equal(t, before, pod, "the caller's pod is never modified")
		})
	}
}
