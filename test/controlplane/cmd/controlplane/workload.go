package main

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// The workload's shape, from the flags: one owner (-owners 1, the default:
// a ReplicaSet scaled 0 → -pods, -disrupt pods deleted, scaled to -final)
// or a fleet (-owners N > 1: N owners created at 0, all scaled to -pods,
// -disrupt of their pods deleted, all scaled to -final; every owner in one
// namespace).
type workload struct {
	owners, pods, final, disrupt int
	lostEvent                    bool // -fault lost-event: a last phase loses one pod's events (one owner only)
}

// total is the most live pods the workload asks for.
func (wl workload) total() int { return wl.owners * wl.pods }

// fleet tells a many-owners workload from the single-owner one.
func (wl workload) fleet() bool { return wl.owners > 1 }

// ownerNames are the owners' names: "web" for one, web-0001… for many.
func (wl workload) ownerNames() []string {
	if !wl.fleet() {
		return []string{"web"}
	}
	width := len(fmt.Sprint(wl.owners))
	names := make([]string, wl.owners)
	for i := range names {
		names[i] = fmt.Sprintf("web-%0*d", width, i+1)
	}
	return names
}

// phases are the measured steps. With one owner, creating it at 0 is the
// run's warm-up (the controller is up once it has written its status), not
// a phase, as make compare has always had it; with many, creating them is
// the first phase (a status write per owner).
func (wl workload) phases() []phase {
	var ps []phase
	if wl.fleet() {
		ps = append(ps,
			phase{name: fmt.Sprintf("create %d at 0", wl.owners), desired: 0, create: true},
			phase{name: fmt.Sprintf("%d × 0 → %d", wl.owners, wl.pods), desired: wl.pods},
			phase{name: fmt.Sprintf("delete %d", wl.disrupt), desired: wl.pods, disrupt: wl.disrupt},
			phase{name: fmt.Sprintf("%d × %d → %d", wl.owners, wl.pods, wl.final), desired: wl.final})
	} else {
		ps = append(ps,
			phase{name: fmt.Sprintf("0 → %d", wl.pods), desired: wl.pods},
			phase{name: fmt.Sprintf("delete %d", wl.disrupt), desired: wl.pods, disrupt: wl.disrupt},
			phase{name: fmt.Sprintf("%d → %d", wl.pods, wl.final), desired: wl.final})
	}
	if wl.lostEvent {
		ps = append(ps, phase{name: fmt.Sprintf("lost event, %d → %d", wl.final, wl.final+1), desired: wl.final + 1, lostEvent: true})
	}
	return ps
}

// nodes is the kwok node count for the workload: one per 500 pods plus
// one, at least 3 (each takes 1000 pods).
func (wl workload) nodes() int { return max(3, wl.total()/500+1) }

// phaseTimeout is the default bound of a phase: 5 minutes, or 40 ms per
// pod (half the 50 pods a second kube-scheduler's client binds at) when
// that is longer.
func (wl workload) phaseTimeout() time.Duration {
	return max(5*time.Minute, time.Duration(wl.total())*40*time.Millisecond)
}

// maxPods bounds the workload by kwok's pod CIDR (a /16).
const maxPods = 60000

// applyFleetDefaults sets, for a fleet, the defaults of the flags the
// user did not set: 10% of the pods deleted, all scaled to 1.
func (wl *workload) applyFleetDefaults(set map[string]bool) {
	if !wl.fleet() {
		return
	}
	if !set["disrupt"] {
		wl.disrupt = wl.total() / 10
	}
	if !set["final"] {
		wl.final = 1
	}
}

// validate checks the workload's flags.
func (wl workload) validate() error {
	switch {
	case wl.owners < 1 || wl.pods < 1:
		return fmt.Errorf("want -owners ≥ 1 and -pods ≥ 1")
	case wl.total() > maxPods:
		return fmt.Errorf("-owners × -pods = %d: at most %d (kwok's pod CIDR)", wl.total(), maxPods)
	case wl.final < 0 || wl.final > wl.pods:
		return fmt.Errorf("want 0 ≤ -final ≤ -pods")
	case wl.disrupt < 0 || wl.disrupt > wl.total():
		return fmt.Errorf("want 0 ≤ -disrupt ≤ -owners × -pods")
	case wl.lostEvent && wl.fleet():
		return fmt.Errorf("-fault lost-event needs -owners 1")
	}
	return nil
}

// spreadPick returns n of names (sorted, as liveWatch.livePods returns
// them), spread evenly over the list: with names grouped by owner, the
// victims of a disruption are spread over the owners.
func spreadPick(names []string, n int) []string {
	if n <= 0 || len(names) == 0 {
		return nil
	}
	n = min(n, len(names))
	out := make([]string, n)
	for i := range n {
		out[i] = names[i*len(names)/n]
	}
	return out
}

// verbOrder is the order of the verbs in the table: writes, then reads.
var verbOrder = []string{"create", "update", "patch", "delete", "deletecollection", "get", "list", "watch"}

// formatVerbs formats per-verb request counts, one map per run, as the
// median of each key over the runs; verbs whose median is 0 are left out.
// A key is a verb, or a verb, a space and a resource (as
// controlplane.AuditCounts.ResourceRequests has them): ordered by the
// verb's place in verbOrder (other verbs after them), then by the key.
func formatVerbs(runs []map[string]int) string {
	seen := map[string]bool{}
	for _, r := range runs {
		for v := range r {
			seen[v] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for v := range seen {
		keys = append(keys, v)
	}
	rank := func(key string) int {
		verb, _, _ := strings.Cut(key, " ")
		if i := slices.Index(verbOrder, verb); i >= 0 {
			return i
		}
		return len(verbOrder)
	}
	slices.SortFunc(keys, func(a, b string) int {
		if ra, rb := rank(a), rank(b); ra != rb {
			return ra - rb
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, v := range keys {
		vals := make([]float64, len(runs))
		for i, r := range runs {
			vals[i] = float64(r[v])
		}
		if m := median(vals); m != 0 {
			parts = append(parts, fmt.Sprintf("%s %.0f", v, m))
		}
	}
	return strings.Join(parts, " · ")
}

// median of v (not empty); v is not modified.
func median(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// flagsInUsage returns which of names a Go program's -h output lists as
// flags ("  -name" at the start of a line).
func flagsInUsage(usage string, names ...string) map[string]bool {
	out := map[string]bool{}
	for _, line := range strings.Split(usage, "\n") {
		f, ok := strings.CutPrefix(line, "  -")
		if !ok {
			continue
		}
		f, _, _ = strings.Cut(f, " ")
		f, _, _ = strings.Cut(f, "\t")
		if slices.Contains(names, f) {
			out[f] = true
		}
	}
	return out
}
