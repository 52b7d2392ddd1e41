package controlplane

import "testing"

func TestControllerEnabled(t *testing.T) {
	for _, tc := range []struct {
		controllers []string
		want        bool
	}{
		{[]string{"*"}, true},
		{DefaultControllers, true},
		{[]string{"*", "-serviceaccount-controller"}, false},
		{[]string{"-serviceaccount-controller", "*"}, false},
		{[]string{"garbage-collector-controller"}, false},
		{[]string{"serviceaccount-controller"}, true},
		{nil, false},
	} {
		if got := controllerEnabled(tc.controllers, "serviceaccount-controller"); got != tc.want {
			t.Errorf("controllerEnabled(%q) = %v, want %v", tc.controllers, got, tc.want)
		}
	}
}
