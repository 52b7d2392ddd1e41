package fakecluster

import (
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// selection is what a watch with a label selector sends, as an API
// server's watch cache decides it: an event is judged by whether the
// object matched the selector before the write and whether it matches
// after.
//
//   - matched after, not before (a create, or labels that came to
//     match): ADDED;
//   - matched before and after: MODIFIED;
//   - matched before, not after (labels that stopped matching): DELETED,
//     carrying the object as it was when it last matched, with the
//     write's resourceVersion, so the watcher's cache drops it;
//   - matched neither: nothing;
//   - a removal: DELETED when the removed object matches, else nothing.
//
// The fake clientset's lists filter by label selector (and ignore field
// selectors); with selection, its watches filter the same way. A
// selection belongs to one watcher's goroutine.
type selection struct {
	selector labels.Selector
	// last is, per namespace/name, the latest state of every object of
	// the watched resource and namespace, matching or not: what a live
	// event's object was before its write. It starts as the state when
	// the watch started (after every replayed write).
	last map[string]runtime.Object
}

// selection returns the selection of a watch of gvr in ns with selector,
// or nil when the selector selects everything. Call it with c.mu held, at
// the watch's start.
func (c *Cluster) selection(gvr schema.GroupVersionResource, ns string, selector labels.Selector) *selection {
	if selector == nil || selector.Empty() {
		return nil
	}
	s := &selection{selector: selector, last: map[string]runtime.Object{}}
	kind, ok := kindOf(gvr)
	if !ok {
		return s // a kind the scheme does not know: no prior states
	}
	list, err := c.tracker.List(gvr, kind, ns)
	if err != nil {
		return s
	}
	items, err := meta.ExtractList(list)
	if err != nil {
		return s
	}
	for _, obj := range items {
		s.last[keyOf(obj)] = obj
	}
	return s
}

// kindOf returns the kind the fake clientset's scheme serves as gvr.
func kindOf(gvr schema.GroupVersionResource) (schema.GroupVersionKind, bool) {
	for gvk := range scheme.Scheme.AllKnownTypes() {
		if gvk.GroupVersion() != gvr.GroupVersion() {
			continue
		}
		plural, _ := meta.UnsafeGuessKindToResource(gvk)
		if plural == gvr {
			return gvk, true
		}
	}
	return schema.GroupVersionKind{}, false
}

// replayed returns what the watcher receives for a replayed write, and
// whether it receives anything.
func (s *selection) replayed(e historyEvent) (watch.Event, bool) {
	return s.decide(e.typ, e.obj.DeepCopyObject(), e.prev)
}

// live returns what the watcher receives for a live event of the
// tracker's, and whether it receives anything.
func (s *selection) live(e watch.Event) (watch.Event, bool) {
	if e.Type != watch.Added && e.Type != watch.Modified && e.Type != watch.Deleted {
		return e, true // bookmarks and errors are not about one object
	}
	key := keyOf(e.Object)
	prev := s.last[key]
	if e.Type == watch.Deleted {
		delete(s.last, key)
	} else {
		s.last[key] = e.Object
	}
	return s.decide(e.Type, e.Object, prev)
}

// decide applies the rules of the type's documentation to a write of
// type typ that turned prev (nil: unknown or none) into obj.
func (s *selection) decide(typ watch.EventType, obj, prev runtime.Object) (watch.Event, bool) {
	now := s.matches(obj)
	switch typ {
	case watch.Added:
		return watch.Event{Type: watch.Added, Object: obj}, now
	case watch.Deleted:
		return watch.Event{Type: watch.Deleted, Object: obj}, now
	}
	before := prev != nil && s.matches(prev)
	switch {
	case now && before:
		return watch.Event{Type: watch.Modified, Object: obj}, true
	case now:
		return watch.Event{Type: watch.Added, Object: obj}, true
	case before:
		return watch.Event{Type: watch.Deleted, Object: leaving(prev, obj)}, true
	}
	return watch.Event{}, false
}

// matches reports whether obj's labels match the selector.
func (s *selection) matches(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	return s.selector.Matches(labels.Set(m.GetLabels()))
}

// leaving returns a copy of prev, the object as it last matched, with the
// resourceVersion of cur, the write that made it stop matching.
func leaving(prev, cur runtime.Object) runtime.Object {
	out := prev.DeepCopyObject()
	om, err := meta.Accessor(out)
	if err != nil {
		return out
	}
	if cm, err := meta.Accessor(cur); err == nil {
		om.SetResourceVersion(cm.GetResourceVersion())
	}
	return out
}

// keyOf returns obj's namespace/name.
func keyOf(obj runtime.Object) string {
	m, err := meta.Accessor(obj)
	if err != nil {
		return ""
	}
	return m.GetNamespace() + "/" + m.GetName()
}
