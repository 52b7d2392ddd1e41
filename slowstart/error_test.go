package slowstart_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/reconcilekit/reconcilekit/slowstart"
)

func TestBatchErrorMessage(t *testing.T) {
	e1, e2, e3 := errors.New("quota exceeded"), errors.New("forbidden"), errors.New("timeout")
	cases := []struct {
		name string
		err  *slowstart.BatchError
		want string
	}{
		{"one failure", &slowstart.BatchError{Start: 3, Size: 4, Indices: []int{5}, Errs: []error{e1}},
			"slowstart: call 5: quota exceeded"},
		{"first failure and how many more", &slowstart.BatchError{Start: 3, Size: 4, Indices: []int{3, 4, 6}, Errs: []error{e1, e2, e3}},
			"slowstart: call 3: quota exceeded (and 2 more)"},
		{"zero value", &slowstart.BatchError{}, "slowstart: batch failed"},
		{"nil pointer", nil, "slowstart: batch failed"},
		{"hand-built without indices", &slowstart.BatchError{Errs: []error{e1, e2}}, "slowstart: quota exceeded (and 1 more)"},
		{"hand-built nil failure", &slowstart.BatchError{Indices: []int{0}, Errs: []error{nil}}, "slowstart: call 0: <nil>"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, c.want, c.err.Error())
		})
	}
}

func TestBatchErrorUnwrapAndFirst(t *testing.T) {
	e1, e2 := errors.New("one"), errors.New("two")
	var err error = &slowstart.BatchError{Start: 0, Size: 2, Indices: []int{0, 1}, Errs: []error{e1, e2}}

	assert.ErrorIs(t, err, e1)
	assert.ErrorIs(t, err, e2)
	var be *slowstart.BatchError
	if assert.ErrorAs(t, err, &be) {
		assert.Same(t, e1, be.First())
		assert.Equal(t, []error{e1, e2}, be.Unwrap())
	}

	assert.NoError(t, (&slowstart.BatchError{}).First())
	assert.NoError(t, (*slowstart.BatchError)(nil).First())
	assert.Nil(t, (*slowstart.BatchError)(nil).Unwrap())
}
