package podtest

import (
	"encoding/binary"
	"strconv"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
)

// Decoder turns a fuzzer's bytes into objects as the API server could send
// them, deterministically: every draw consumes bytes from the front, and an
// exhausted input draws zeros, so every byte string decodes to something
// and the same bytes always decode to the same objects.
//
// Names, UIDs, kinds and labels come from small vocabularies ([OwnerNames],
// [LabelKeys], ...) so that random bytes often produce the collisions that
// matter: a pod whose ownerRef names a cached owner with the right or the
// wrong UID, an orphan whose labels match a selector. A few fields also
// draw free text ([Decoder.Text]) to reach malformed values.
//
// The zero Decoder draws only zeros. A Decoder is not safe for concurrent
// use.
type Decoder struct{ data []byte }

// NewDecoder returns a Decoder reading data (which it does not modify).
func NewDecoder(data []byte) *Decoder { return &Decoder{data: data} }

// Byte draws one byte.
func (d *Decoder) Byte() byte {
	if len(d.data) == 0 {
		return 0
	}
	b := d.data[0]
	d.data = d.data[1:]
	return b
}

// Bool draws one byte and returns its lowest bit.
func (d *Decoder) Bool() bool { return d.Byte()&1 == 1 }

// Intn draws one byte and returns it modulo n, in [0, n); 0 when n <= 0.
func (d *Decoder) Intn(n int) int {
	b := d.Byte()
	if n <= 0 {
		return 0
	}
	return int(b) % n
}

// Int64 draws eight bytes, big-endian.
func (d *Decoder) Int64() int64 {
	var buf [8]byte
	for i := range buf {
		buf[i] = d.Byte()
	}
	return int64(binary.BigEndian.Uint64(buf[:]))
}

// Pick draws one of choices; "" when there are none.
func (d *Decoder) Pick(choices ...string) string {
	if len(choices) == 0 {
		d.Byte()
		return ""
	}
	return choices[d.Intn(len(choices))]
}

// Text draws a length in [0, 16) and then that many bytes, as a string: any
// bytes at all, invalid UTF-8 included.
func (d *Decoder) Text() string {
	n := d.Intn(16)
	buf := make([]byte, 0, n)
	for range n {
		buf = append(buf, d.Byte())
	}
	return string(buf)
}

// Instant draws an instant: the zero time, [Epoch] plus or minus up to
// about two hours in whole seconds, or (rarely) an extreme instant.
func (d *Decoder) Instant() time.Time {
	switch d.Intn(8) {
	case 0:
		return time.Time{}
	case 1:
		return time.Unix(0, d.Int64()).UTC()
	default:
		return Epoch.Add(time.Duration(int(d.Byte())-128) * time.Minute)
	}
}

// The vocabularies the Decoder draws from.
var (
	// Namespaces are the namespaces of pods and owners ("default" twice as
	// likely).
	Namespaces = []string{"default", "default", "other", ""}
	// OwnerNames are the names of owners and of the owners ownerRefs name.
	OwnerNames = []string{"rs0", "rs1", "rs2"}
	// Kinds are the kinds ownerRefs name.
	Kinds = []string{"ReplicaSet", "ReplicaSet", "Deployment", "replicaset", ""}
	// LabelKeys and LabelValues make labels and selectors; "bad key!" is
	// not a valid label key.
	LabelKeys   = []string{"app", "app", "tier", "x", "bad key!"}
	LabelValues = []string{"web", "web", "db", ""}
	// Phases are the pod phases drawn, an unknown one and "" included.
	Phases = []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded,
		corev1.PodFailed, corev1.PodUnknown, "", "Bogus"}
	// SelectorOperators are the operators of drawn match expressions,
	// including one the API does not know.
	SelectorOperators = []metav1.LabelSelectorOperator{metav1.LabelSelectorOpIn, metav1.LabelSelectorOpNotIn,
		metav1.LabelSelectorOpExists, metav1.LabelSelectorOpDoesNotExist, "Bogus"}
)

// OwnerUID is the UID [Decoder.ReplicaSet] gives an owner of that name
// unless it draws another.
func OwnerUID(name string) types.UID { return types.UID("uid-" + name) }

// Labels draws a label map: nil, empty, or up to three entries.
func (d *Decoder) Labels() map[string]string {
	n := d.Intn(6)
	switch n {
	case 0:
		return nil
	case 1:
		return map[string]string{}
	}
	m := make(map[string]string, n-2)
	for range n - 2 {
		m[d.Pick(LabelKeys...)] = d.Pick(LabelValues...)
	}
	return m
}

// boolPtr draws nil, true or false.
func (d *Decoder) boolPtr() *bool {
	switch d.Intn(3) {
	case 0:
		return nil
	case 1:
		t := true
		return &t
	}
	f := false
	return &f
}

// OwnerRef draws an ownerRef: kind, name and UID from the vocabularies
// (the UID right for the name, another owner's, a stale one or empty), and
// the controller and blockOwnerDeletion flags nil, true or false.
func (d *Decoder) OwnerRef() metav1.OwnerReference {
	name := d.Pick(OwnerNames...)
	var uid types.UID
	switch d.Intn(4) {
	case 0, 1:
		uid = OwnerUID(name)
	case 2:
		uid = OwnerUID(d.Pick(OwnerNames...))
	case 3:
		uid = types.UID(d.Pick("uid-old", ""))
	}
	return metav1.OwnerReference{
		APIVersion:         d.Pick("apps/v1", "apps/v1", "v1", ""),
		Kind:               d.Pick(Kinds...),
		Name:               name,
		UID:                uid,
		Controller:         d.boolPtr(),
		BlockOwnerDeletion: d.boolPtr(),
	}
}

// Pod draws a pod: namespace, name ("p0" to "p5"), UID, resourceVersion,
// labels, a deletion-cost annotation, up to three ownerRefs, deletion and
// creation timestamps, phase, node, Ready conditions and restart counts.
func (d *Decoder) Pod() *corev1.Pod {
	name := "p" + strconv.Itoa(d.Intn(6))
	p := &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:         d.Pick(Namespaces...),
			Name:              name,
			UID:               types.UID(d.Pick("uid-"+name, "uid-"+name, "uid-p0", "")),
			ResourceVersion:   d.Pick("1", "2", "10", "", d.Text()),
			Labels:            d.Labels(),
			CreationTimestamp: metav1.NewTime(d.Instant()),
		},
		Spec:   corev1.PodSpec{NodeName: d.Pick("", "n0", "n1")},
		Status: corev1.PodStatus{Phase: Phases[d.Intn(len(Phases))]},
	}
	switch d.Intn(4) {
	case 1:
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": d.Pick("5", "-3", "2147483648", "")}
	case 2:
		p.Annotations = map[string]string{"controller.kubernetes.io/pod-deletion-cost": d.Text()}
	}
	for range d.Intn(4) {
		p.OwnerReferences = append(p.OwnerReferences, d.OwnerRef())
	}
	if d.Intn(4) == 0 {
		t := metav1.NewTime(d.Instant())
		p.DeletionTimestamp = &t
	}
	for range d.Intn(3) {
		status := corev1.ConditionTrue
		if d.Intn(3) == 0 {
			status = corev1.ConditionFalse
		}
		typ := corev1.PodReady
		if d.Intn(4) == 0 {
			typ = corev1.PodScheduled
		}
		p.Status.Conditions = append(p.Status.Conditions, corev1.PodCondition{
			Type: typ, Status: status, LastTransitionTime: metav1.NewTime(d.Instant()),
		})
	}
	for i := range d.Intn(3) {
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{
			Name: "c" + strconv.Itoa(i), RestartCount: int32(d.Intn(5)),
		})
	}
	return p
}

// Pods draws up to max pods, some of them nil when withNil is true.
func (d *Decoder) Pods(max int, withNil bool) []*corev1.Pod {
	n := d.Intn(max + 1)
	pods := make([]*corev1.Pod, 0, n)
	for range n {
		if withNil && d.Intn(8) == 0 {
			pods = append(pods, nil)
			continue
		}
		pods = append(pods, d.Pod())
	}
	return pods
}

// Selector draws a label selector: nil, empty, match labels, match
// expressions (with any operator and any number of values, so possibly
// invalid), or both.
func (d *Decoder) Selector() *metav1.LabelSelector {
	shape := d.Intn(6)
	if shape == 0 {
		return nil
	}
	s := &metav1.LabelSelector{}
	if shape == 2 || shape == 3 || shape == 5 {
		s.MatchLabels = d.Labels()
	}
	if shape == 4 || shape == 5 {
		for range 1 + d.Intn(2) {
			req := metav1.LabelSelectorRequirement{
				Key:      d.Pick(LabelKeys...),
				Operator: SelectorOperators[d.Intn(len(SelectorOperators))],
			}
			for range d.Intn(3) {
				req.Values = append(req.Values, d.Pick(LabelValues...))
			}
			s.MatchExpressions = append(s.MatchExpressions, req)
		}
	}
	return s
}

// Replicas draws a replica count: nil (the API default of 1), a small one
// from -2 to 5, or any int32.
func (d *Decoder) Replicas() *int32 {
	var r int32
	switch d.Intn(8) {
	case 0:
		return nil
	case 1:
		r = int32(d.Int64())
	default:
		r = int32(d.Intn(8)) - 2
	}
	return &r
}

// ReplicaSet draws a ReplicaSet: namespace, a name from [OwnerNames], UID
// ([OwnerUID] of the name, or another), replicas, selector, template labels,
// minReadySeconds, generation, an optional deletion timestamp, an optional
// controller ownerRef and ReplicaFailure-like conditions.
func (d *Decoder) ReplicaSet() *appsv1.ReplicaSet {
	name := d.Pick(OwnerNames...)
	uid := OwnerUID(name)
	if d.Intn(4) == 0 {
		uid = types.UID(d.Pick("uid-old", "", "uid-rs0"))
	}
	rs := &appsv1.ReplicaSet{
		ObjectMeta: metav1.ObjectMeta{
			Namespace:       d.Pick(Namespaces...),
			Name:            name,
			UID:             uid,
			ResourceVersion: d.Pick("1", "5", "", d.Text()),
			Generation:      int64(d.Intn(4)),
			Labels:          d.Labels(),
		},
		Spec: appsv1.ReplicaSetSpec{
			Replicas:        d.Replicas(),
			Selector:        d.Selector(),
			MinReadySeconds: int32(d.Intn(5)) - 1,
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: d.Labels()},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "app", Image: "app:1"}}},
			},
		},
	}
	if d.Intn(5) == 0 {
		t := metav1.NewTime(d.Instant())
		rs.DeletionTimestamp = &t
	}
	if d.Intn(3) == 0 {
		ref := d.OwnerRef()
		ref.Kind = "Deployment"
		rs.OwnerReferences = append(rs.OwnerReferences, ref)
	}
	for range d.Intn(3) {
		rs.Status.Conditions = append(rs.Status.Conditions, appsv1.ReplicaSetCondition{
			Type:    appsv1.ReplicaSetConditionType(d.Pick("ReplicaFailure", "Other")),
			Status:  corev1.ConditionTrue,
			Reason:  d.Pick("FailedCreate", ""),
			Message: d.Text(),
		})
	}
	return rs
}
