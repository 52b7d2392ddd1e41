package reconcile_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/reconcilekit/reconcilekit/internal/fakeclock"
	"github.com/reconcilekit/reconcilekit/internal/podtest"
	"github.com/reconcilekit/reconcilekit/reconcile"
	"github.com/reconcilekit/reconcilekit/status"
)

// invalidSpecs are owner specs apps/v1 validation rejects for a
// ReplicaSet, each with the field path and message of its first failure.
// Each edits recRS(replicas).
var invalidSpecs = []struct {
	name    string
	rule    string
	edit    func(rs *appsv1.ReplicaSet)
	path    string
	message string
}{
	{name: "negative replicas", rule: "R-14.1", edit: func(rs *appsv1.ReplicaSet) { *rs.Spec.Replicas = -1 },
		path: "spec.replicas", message: "must be greater than or equal to 0"},
	{name: "negative minReadySeconds", rule: "R-14.1", edit: func(rs *appsv1.ReplicaSet) { rs.Spec.MinReadySeconds = -5 },
		path: "spec.minReadySeconds", message: "must be greater than or equal to 0"},
	{name: "nil selector", rule: "R-14.2", edit: func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = nil },
		path: "spec.selector", message: "Required value"},
	{name: "empty selector", rule: "R-14.2", edit: func(rs *appsv1.ReplicaSet) { rs.Spec.Selector = &metav1.LabelSelector{} },
		path: "spec.selector", message: "empty selector is invalid for deployment"},
	{name: "invalid operator", rule: "R-14.2", edit: func(rs *appsv1.ReplicaSet) {
		rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
	}, path: "spec.selector.matchExpressions[0].operator", message: "not a valid selector operator"},
	{name: "invalid label value in selector", rule: "R-14.2", edit: func(rs *appsv1.ReplicaSet) {
		rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "not valid!"}}
	}, path: "spec.selector.matchLabels", message: "Invalid value"},
	{name: "selector does not match template", rule: "R-14.3", edit: func(rs *appsv1.ReplicaSet) {
		rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "wbe"}}
	}, path: "spec.template.metadata.labels", message: "`selector` does not match template `labels`"},
	{name: "template without labels, selector needing one", rule: "R-14.3", edit: func(rs *appsv1.ReplicaSet) {
		rs.Spec.Template.Labels = nil
	}, path: "spec.template.metadata.labels", message: "`selector` does not match template `labels`"},
	{name: "restartPolicy Never", rule: "R-14.5", edit: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyNever },
		path: "spec.template.spec.restartPolicy", message: `Unsupported value: "Never": supported values: "Always"`},
	{name: "restartPolicy OnFailure", rule: "R-14.5", edit: func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyOnFailure },
		path: "spec.template.spec.restartPolicy", message: `Unsupported value: "OnFailure"`},
	{name: "activeDeadlineSeconds", rule: "R-14.6", edit: func(rs *appsv1.ReplicaSet) {
		d := int64(30)
		rs.Spec.Template.Spec.ActiveDeadlineSeconds = &d
	}, path: "spec.template.spec.activeDeadlineSeconds", message: "activeDeadlineSeconds in ReplicaSet is not Supported"},
}

// Owner.Validate reports apps/v1's field path and message
// for each invalid spec, and nothing for the specs apps/v1 accepts.
func TestOwnerValidate(t *testing.T) {
	for _, tc := range invalidSpecs {
		t.Run(tc.rule+" "+tc.name, func(t *testing.T) {
			rs := recRS(2)
			tc.edit(rs)
			o := reconcile.ReplicaSetOwner(rs)
			errs := o.Validate()
			require.NotEmpty(t, errs)
			assert.Equal(t, tc.path, errs[0].Field, "%v", errs)
			assert.Contains(t, errs[0].Error(), tc.message)
		})
	}
	valid := map[string]func(rs *appsv1.ReplicaSet){
		"as built":             func(*appsv1.ReplicaSet) {},
		"zero replicas":        func(rs *appsv1.ReplicaSet) { *rs.Spec.Replicas = 0 },
		"restartPolicy Always": func(rs *appsv1.ReplicaSet) { rs.Spec.Template.Spec.RestartPolicy = corev1.RestartPolicyAlways },
		"a selector of expressions": func(rs *appsv1.ReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{"web", "db"}}}}
		},
		"template labels a superset": func(rs *appsv1.ReplicaSet) {
			rs.Spec.Template.Labels = map[string]string{"app": "web", "tier": "front"}
		},
		// as apps/v1, a label-less template whose selector matches
		// empty labels.
		"template without labels, selector matching none": func(rs *appsv1.ReplicaSet) {
			rs.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: metav1.LabelSelectorOpDoesNotExist}}}
			rs.Spec.Template.Labels = nil
		},
	}
	for name, edit := range valid {
		t.Run("valid "+name, func(t *testing.T) {
			rs := recRS(2)
			edit(rs)
			o := reconcile.ReplicaSetOwner(rs)
			assert.Empty(t, o.Validate())
		})
	}
	// the two messages in which apps/v1 names a kind
	// ("deployment", "ReplicaSet") name Owner.Kind's kind for another owner
	// kind, and keep apps/v1's words for a ReplicaSet or an Owner without a
	// Kind.
	podSet := schema.GroupVersionKind{Group: "demo.reconcilekit.dev", Version: "v1alpha1", Kind: "PodSet"}
	for _, tc := range []struct {
		name               string
		kind               *schema.GroupVersionKind // nil: ReplicaSetOwner's
		selector, deadline string
	}{
		{name: "ReplicaSet", selector: "empty selector is invalid for deployment", deadline: "activeDeadlineSeconds in ReplicaSet is not Supported"},
		{name: "no Kind", kind: &schema.GroupVersionKind{}, selector: "empty selector is invalid for deployment", deadline: "activeDeadlineSeconds in ReplicaSet is not Supported"},
		{name: "PodSet", kind: &podSet, selector: "empty selector is invalid for PodSet", deadline: "activeDeadlineSeconds in PodSet is not Supported"},
	} {
		t.Run("kind in the messages of "+tc.name, func(t *testing.T) {
			rs := recRS(2)
			rs.Spec.Selector = &metav1.LabelSelector{}
			d := int64(30)
			rs.Spec.Template.Spec.ActiveDeadlineSeconds = &d
			o := reconcile.ReplicaSetOwner(rs)
			if tc.kind != nil {
				o.Kind = *tc.kind
			}
			errs := o.Validate()
			require.Len(t, errs, 2, "%v", errs)
			assert.Equal(t, "spec.selector", errs[0].Field)
			assert.Equal(t, tc.selector, errs[0].Detail)
			assert.Equal(t, "spec.template.spec.activeDeadlineSeconds", errs[1].Field)
			assert.Equal(t, tc.deadline, errs[1].Detail)
		})
	}
}

// a sync of an owner whose spec fails Owner.Validate touches no
// pod — no create, no delete, no adoption of a matching orphan, no release
// of its own pod that its selector no longer matches — is terminal, and
// writes the status once, with the error as ManageErr, so that the
// ReplicaFailure condition says what is wrong; the pods it controls are
// counted. Fixed, the owner syncs normally.
func TestSyncInvalidSpec(t *testing.T) {
	for _, tc := range invalidSpecs {
		t.Run(tc.rule+" "+tc.name, func(t *testing.T) {
			t0 := podtest.Epoch
			rs := recRS(3)
			owned := recOwned(rs, 1)
			orphan := podtest.New("stray", podtest.Labels(map[string]string{"app": "web"}))
			owners := newRecOwners(rs)
			c := newRecController(t, owners, append(owned, orphan), withClock(fakeclock.New(t0)))
			bad := rs.DeepCopy()
			tc.edit(bad)
			owners.set(bad)

			for range 3 { // the same answer every time: nothing piles up
				res, err := c.Sync(t.Context(), "default/web")
				require.Error(t, err)
				assert.ErrorIs(t, err, reconcile.ErrTerminal)
				assert.ErrorIs(t, err, reconcile.ErrInvalidSpec)
				var fe *field.Error
				require.ErrorAs(t, err, &fe)
				assert.Equal(t, tc.path, fe.Field)
				assert.Contains(t, err.Error(), tc.message)
				assert.Regexp(t, "^reconcile: owner default/web: invalid spec: ", err.Error())
				assert.NotContains(t, err.Error()[len("reconcile: "):], "reconcile: ", "the prefix once")
				assert.False(t, res.Managed)
				assert.ErrorIs(t, res.ManageErr, reconcile.ErrInvalidSpec)
				assert.Len(t, res.Active, 1, "the pod it controls is counted")
				assert.Empty(t, res.Adopted)
				assert.Empty(t, res.Released)
			}
			assert.Empty(t, c.control.creates())
			assert.Empty(t, c.control.deletes())
			assert.Empty(t, c.patcher.recorded(), "no adoption, no release")
			writes := c.status.writes()
			require.Len(t, writes, 3, "the status step ran in every sync")
			st := status.Calculate(bad, writes[0].Active, writes[0].Terminating, writes[0].ManageErr, writes[0].Now, status.Options{})
			require.Len(t, st.Conditions, 1, "the ReplicaFailure condition")
			assert.Equal(t, appsv1.ReplicaSetReplicaFailure, st.Conditions[0].Type)
			assert.Contains(t, st.Conditions[0].Message, tc.path)
			_, _, pending := c.Tracker().Pending("default/web")
			assert.False(t, pending, "no expectations set")

			owners.set(rs) // fixed: the next sync creates what is missing
			_, err := c.Sync(t.Context(), "default/web")
			require.NoError(t, err)
			assert.Len(t, c.control.creates(), 1)
		})
	}
}

// a custom resource gets the condition through status.SetReplicaFailure
// in the same sync, with the field path in its message.
func TestSyncInvalidSpecCondition(t *testing.T) {
	rs := recRS(2)
	rs.Spec.Selector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": "typo"}}
	c := newRecController(t, newRecOwners(rs), nil, withClock(fakeclock.New(podtest.Epoch)))
	res, err := c.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, reconcile.ErrInvalidSpec)
	conds, changed := status.SetReplicaFailure(nil, res.ManageErr, res.Diff, 1, res.Now)
	require.True(t, changed)
	require.Len(t, conds, 1)
	assert.Equal(t, metav1.ConditionTrue, conds[0].Status)
	assert.Contains(t, conds[0].Message, "spec.template.metadata.labels")
}

// the status write of an invalid owner is still fenced, and a
// failed status write is retried (not terminal), so that the condition is
// written eventually.
func TestSyncInvalidSpecStatusWrite(t *testing.T) {
	rs := recRS(2)
	rs.Spec.Selector = nil
	errWrite := errors.New("conflict")
	c := newRecController(t, newRecOwners(rs), nil, nil)
	c.status.err = errWrite
	_, err := c.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, errWrite)
	assert.NotErrorIs(t, err, reconcile.ErrTerminal, "retried until the condition is written")

	errFence := errors.New("lease lost")
	f := newRecController(t, newRecOwners(rs), nil, func(cfg *reconcile.Config[*appsv1.ReplicaSet]) {
		cfg.Fence = func() error { return errFence }
	})
	f.status.ret = func(rs *appsv1.ReplicaSet) *appsv1.ReplicaSet { return rs }
	_, err = f.Sync(t.Context(), "default/web")
	require.ErrorIs(t, err, reconcile.ErrFenced)
	assert.Zero(t, f.status.sentWrites())
}

// ManageReplicas refuses to create pods from
// a template whose pods may finish, or from no template, with no call made.
// (A template without labels is one to create from, as in apps/v1:
// TestManageReplicasTemplateWithoutLabels.)
func TestManageReplicasRefusesFinishingTemplates(t *testing.T) {
	refuses := func(t *testing.T, o reconcile.Owner, path string) {
		t.Helper()
		pods := &recPods{}
		m := &reconcile.Manager{Pods: pods}
		_, err := m.ManageReplicas(t.Context(), o, nil, nil)
		require.ErrorIs(t, err, reconcile.ErrInvalidSpec)
		assert.Contains(t, err.Error(), path)
		assert.Empty(t, pods.creates())
		_, _, ok := m.Tracker().Pending("default/web")
		assert.False(t, ok)
	}
	for _, tc := range invalidSpecs {
		if tc.rule != "R-14.5" && tc.rule != "R-14.6" {
			continue
		}
		t.Run(tc.rule+" "+tc.name, func(t *testing.T) {
			rs := recRS(2)
			tc.edit(rs)
			refuses(t, reconcile.ReplicaSetOwner(rs), tc.path)
		})
	}
	t.Run("R-14.4 no template", func(t *testing.T) {
		o := reconcile.ReplicaSetOwner(recRS(2))
		o.Template = nil
		refuses(t, o, "spec.template: Required value")
	})
}
