package sharding

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	clocktesting "k8s.io/utils/clock/testing"

	"github.com/reconcilekit/reconcilekit/reconcile"
)

// restampCase is a shardSafety of one owner of shard 0 of 4, with two live
// pods stamped with its bucket, a pod client that reads pods live and
// cache versions: the shard's Controller has nothing to do.
func restampCase(t *testing.T, sel safetySelector, tmpl safetyTemplate) (*shardSafety, *safetyOwner) {
	t.Helper()
	shard := Shard{Index: 0, Count: 4}
	var uid types.UID
	for i := 0; ; i++ {
		uid = types.UID("rs-uid-" + strconv.Itoa(i))
		if shard.Contains(uid) {
			break
		}
	}
	m := &shardSafety{
		ctx:   context.Background(),
		cfg:   shardSafetyCase{shard: shard, getter: true, versions: true, burst: 4},
		clock: clocktesting.NewFakeClock(time.Unix(1e9, 0)),
		w:     newShardWorld(shard, false),
	}
	o := &safetyOwner{inShard: true, selector: sel, template: tmpl}
	o.rs = safetyRS("web", uid, 2, sel, tmpl, "zz")
	selector, err := metav1.LabelSelectorAsSelector(o.rs.Spec.Selector)
	require.NoError(t, err)
	o.sel = selector
	m.owners = []*safetyOwner{o}
	m.w.setOwner(o.rs)
	if o.creates() {
		for _, name := range []string{"web-a", "web-b"} {
			m.w.seed(safetyPod(name, o.rs, map[string]string{BucketLabel: BucketValue(uid)}))
		}
	}
	m.cur = m.newHolder(t, "")
	return m, o
}

// A live pod whose bucket label an outside actor removed (no Unstamped
// lists it), changed to another shard's bucket, or garbled leaves the
// shard's pod cache as if deleted. Its owner's Controller reads it live,
// finds it controlled, matched and lacking its owner's stamp (the bucket is
// part of the sharding pod client's stamp), and puts the bucket back
// no replacement, and no creation breaker.
func TestABucketLabelAnActorMovedIsStampedBack(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(map[string]string)
	}{
		{"removed", func(l map[string]string) { delete(l, BucketLabel) }},
		{"another shard's bucket", func(l map[string]string) { l[BucketLabel] = bucketValue(Buckets - 1) }},
		{"garbled", func(l map[string]string) { l[BucketLabel] = "zz" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, o := restampCase(t, selPlain, tmplNone)
			own := BucketValue(o.rs.UID)
			res, err := m.cur.ctrl.Sync(m.ctx, o.key())
			require.NoError(t, err)
			require.Len(t, res.Active, 2)

			require.True(t, m.w.relabel("web-a", tc.edit))
			require.False(t, m.w.visible(m.w.pod("web-a")), "the pod left the shard's pod cache")
			m.w.deliver(m.cur.ctrl)

			for i := range 3 {
				res, err = m.cur.ctrl.Sync(m.ctx, o.key())
				require.NoError(t, err, "sync %d", i)
				m.w.deliver(m.cur.ctrl)
			}
			created, _ := m.w.createdBy(o.rs.UID)
			assert.Zero(t, created, "no replacement for a live pod")
			assert.Equal(t, 2, m.w.controlled(o.rs.UID))
			assert.Equal(t, own, m.w.pod("web-a").Labels[BucketLabel], "the bucket is back")
			assert.Len(t, res.Active, 2, "the pod is the shard's again")
			assert.Empty(t, m.w.violation())
		})
	}
}

// An owner whose selector excludes its own bucket, or whose template sets
// another bucket, is an invalid spec (R-14.3, the bucket being part of the
// stamp): its sync is terminal with a message that names the bucket label,
// and it creates nothing, rather than creating pods it would release (or
// have refused) round after round.
func TestASpecThatExcludesTheBucketIsInvalid(t *testing.T) {
	for _, tc := range []struct {
		name string
		sel  safetySelector
		tmpl safetyTemplate
	}{
		{"selector: bucket DoesNotExist", selBucketNone, tmplNone},
		{"selector: bucket NotIn its own", selBucketNotIn, tmplNone},
		{"selector: bucket In another, template: that bucket", selBucketOther, tmplOther},
		{"template: another bucket", selPlain, tmplOther},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, o := restampCase(t, tc.sel, tc.tmpl)
			for range 3 {
				_, err := m.cur.ctrl.Sync(m.ctx, o.key())
				require.Error(t, err)
				assert.True(t, errors.Is(err, reconcile.ErrTerminal), "terminal: %v", err)
				assert.True(t, strings.Contains(err.Error(), BucketLabel), "names the bucket label: %v", err)
				m.w.deliver(m.cur.ctrl)
			}
			created, _ := m.w.createdBy(o.rs.UID)
			assert.Zero(t, created)
		})
	}
}

// An orphan of another bucket of the shard that the owner's selector
// matches is adopted with the owner's bucket in the adoption patch
// it carries its owner's bucket as every pod the owner created
// does, so it stays with its owner when K changes.
func TestAnAdoptedOrphanTakesItsOwnersBucket(t *testing.T) {
	m, o := restampCase(t, selPlain, tmplNone)
	own := Bucket(o.rs.UID)
	other := -1
	for b := m.cfg.shard.first(); b < m.cfg.shard.end(); b++ {
		if b != own {
			other = b
			break
		}
	}
	require.GreaterOrEqual(t, other, 0, "a shard of 4 has 64 buckets")
	m.w.seed(safetyPod("orphan", nil, map[string]string{"app": o.rs.Name, BucketLabel: bucketValue(other)}))
	m.cur = m.newHolder(t, "")
	scaled := o.rs.DeepCopy()
	three := int32(3)
	scaled.Spec.Replicas = &three
	m.w.setOwner(scaled)

	res, err := m.cur.ctrl.Sync(m.ctx, o.key())
	require.NoError(t, err)
	require.Len(t, res.Adopted, 1)
	assert.Equal(t, BucketValue(o.rs.UID), m.w.pod("orphan").Labels[BucketLabel], "adopted with its owner's bucket")
	assert.Equal(t, o.rs.Name, m.w.pod("orphan").Labels["app"], "its other labels kept")
	created, adopted := m.w.createdBy(o.rs.UID)
	assert.Zero(t, created)
	assert.Equal(t, 1, adopted)
	assert.Empty(t, m.w.violation())
}
