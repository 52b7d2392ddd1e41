package clientgo_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"

	"github.com/reconcilekit/reconcilekit/adapters/clientgo"
)

// failingLister is a PodLister whose every read fails with err.
type failingLister struct{ err error }

func (l failingLister) List(labels.Selector) ([]*corev1.Pod, error) { return nil, l.err }
func (l failingLister) Pods(string) corelisters.PodNamespaceLister  { return l }
func (l failingLister) Get(string) (*corev1.Pod, error)             { return nil, l.err }

func TestPodLookup(t *testing.T) {
	indexer := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	stored := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: "p"}}
	bare := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "bare"}}
	require.NoError(t, indexer.Add(stored))
	require.NoError(t, indexer.Add(bare))
	lookup := clientgo.PodLookup(corelisters.NewPodLister(indexer))

	got, err := lookup("default/p")
	require.NoError(t, err)
	assert.Same(t, stored, got, "the cache's pod")

	got, err = lookup("default/gone")
	assert.NoError(t, err, "an absent pod is no error")
	assert.Nil(t, got)

	for _, key := range []string{"/bare", "bare"} { // a pod key in an empty namespace
		got, err = lookup(key)
		require.NoError(t, err, key)
		assert.Same(t, bare, got, key)
	}

	for _, key := range []string{"", "default/", "a/b/c"} {
		got, err = lookup(key)
		assert.ErrorContains(t, err, "clientgo: malformed pod key", key)
		assert.Nil(t, got)
	}

	boom := errors.New("boom")
	got, err = clientgo.PodLookup(failingLister{boom})("default/p")
	assert.Same(t, boom, err, "the lister's error as it is")
	assert.Nil(t, got)

	_, err = clientgo.PodLookup(nil)("default/p")
	assert.ErrorContains(t, err, "clientgo: PodLookup has no PodLister")
}
